/*
 * answer.h - queries formed by the library, answered and written as bfi's
 * tools write answers: bfi query (tools/cli) and bfi serve (tools/serve)
 * share this room. struct ask is what an answer needs to know.
 */
#ifndef BFI_TOOLS_ANSWER_H
#define BFI_TOOLS_ANSWER_H

#include <stddef.h>
#include <stdint.h>
#include <stdatomic.h>
#include <time.h>

#include "bfi.h"

struct ask {
	int json, count, ordinals;
	const char *format; /* --format template, or NULL */
	int table;          /* --format tsv or matrix (TABLE_*), or 0 */
	uint32_t *cols;     /* matrix: the live sets' ordinals, the columns (table_head) */
	size_t n_cols;
	const bfi_snapshot *snap; /* for --path, which reads the encoding from the catalog */
	int asked;     /* the form the options ask (BFI_FORM_*; AUTO: none); form once settled */
	double theta;  /* --threshold as given; once formed, form.theta */
	unsigned errors; /* --errors E: each read's threshold by the k-mer lemma (errors_given) */
	int errors_given;
	unsigned findere; /* --findere Z: a read's (k+Z)-mers from the k-mer index (findere_given) */
	int findere_given;
	int whole; /* --whole: a query's records as one query of all their k-mers (bfi_query_whole) */
	/* several snapshots asked at once: this one's name, before each answer (or NULL) */
	const char *tag;
	int head_said; /* the tsv header went out already (an earlier snapshot's) */
	unsigned kmer; /* --kmer as given (0: none) */
	struct bfi_form form; /* the form, once settled (query_form) */
	unsigned layout;
	int batch;
	size_t batch_size;
	int scan;            /* --scan: each batch through bfi_scan_parallel */
	unsigned scan_threads; /* --threads, for a scan: its reads split over them */
	int stats;           /* --stats: what the scans read, on stderr at the end */
	uint64_t memory;     /* --memory, or its default: what a query may hold (query_memory.c) */
	struct bfi_scan_cost cost; /* a scan's: what it holds beside the pages (bfi_scan_cost) */
	struct names *names; /* set names looked up so far, or NULL */
	uint64_t limit;      /* at most this many sets an answer (0: all); JSON adds "more" */
	char *why;           /* what is wrong with a query goes here, not to stderr, if set */
	size_t why_cap;
	uint64_t *keys_seen; /* if set, counts the keys (terms) of each query answered */
	atomic_ullong *no_terms; /* if set, counts the queries left with no term (threads: shared) */
};

/*
 * Set names by ordinal, each looked up in the catalog once: a lookup (an
 * LMDB read transaction) for every matching set cost more than a batch's
 * queries. The names point into the catalog's map, valid until bfi_close.
 */
struct names {
	struct name_ref {
		const char *p; /* NULL: not looked up yet */
		size_t len;
	} *at; /* NULL: no cache (too many sets, or no memory) */
	uint64_t n;
	/*
	 * Optional (bfi serve fills it once per snapshot): every name as JSON
	 * prints it after the first, `, "name"`, set ord's from json_at[ord] to
	 * json_at[ord + 1]; an empty one (a removed set) is looked up instead.
	 */
	char *json;          /* with JSON_SLACK bytes after the last */
	uint32_t *json_at;
	uint32_t json_max;   /* the longest */
};
#define JSON_SLACK 32 /* names this long or shorter are copied as 32 bytes */

#define NAMES_CACHED (1u << 22) /* above this many sets, 64 MB or more: no cache */

/* One query: its text and, once compiled, its expression. */
struct query {
	char *text;
	size_t len;
	bfi_expr *e;
	const char *label; /* what the output calls it (a FASTA record's id), or NULL: text */
	size_t label_len;
	size_t terms; /* --findere: its (k+z)-mers, as it has no expression */
};
/* The terms q's scores are out of: its expression's, or findere's (k+z)-mers. */
static inline size_t query_terms(const struct query *q)
{
	return q->e ? bfi_expr_keys(q->e) : q->terms;
}

/*
 * The query form, settled by the library from o->asked, the options and
 * the snapshot's key rules (bfi_query_form), into o->form; then the
 * options that need a form checked. 0, or -1 with why (cap bytes).
 */
int query_form(const bfi_snapshot *s, struct ask *o, int fasta, const char *path, char *why,
               size_t cap);
/* Is form f's query a sequence, whose terms are its k-mers (DNA's or a protein's)? */
static inline int form_seq(const struct bfi_form *f)
{
	return f->form == BFI_FORM_KMERS || f->form == BFI_FORM_PROTEIN;
}
/* Is form f's query a list of terms or a text (TEXT, KMERS, WORDS), whose terms are counted? */
static inline int form_terms(const struct bfi_form *f)
{
	return f->form == BFI_FORM_TEXT || form_seq(f) || f->form == BFI_FORM_WORDS;
}

/* compile()'s return after it has told what is wrong with the query itself */
#define SAID 1
/* Make q's expression: 0, SAID (a bad query, reported), or an error code (run.c). */
int query_compile(const struct ask *o, struct query *q);
/* Answer q into res and print the answer (run.c). */
int query_run_one(const bfi_snapshot *s, bfi_result *res, const struct ask *o, struct query *q);

/* --format tsv and matrix (table.c): the header, then each query's rows. */
enum { TABLE_TSV = 1, TABLE_MATRIX = 2 };
int table_head(const bfi_snapshot *s, struct ask *o);
int table_rows(const bfi_snapshot *s, const uint32_t *ords, const uint32_t *scores, size_t n,
               const struct ask *o, const struct query *q);
/* Set ord's name, through o's name cache when there is one (names.c). */
int set_name(const bfi_snapshot *s, const struct ask *o, uint32_t ord, const char **name,
             size_t *len);

/* The query as the output names it: its text, or its record's id. */
void print_query(const struct query *q, int json);
/* A line's first field, when several snapshots are asked: the snapshot's name and a tab. */
void print_tag(const struct ask *o);
/*
 * With --errors: the k-mers a set must hold of q (its own need); in JSON
 * as `, "needed": N, "threshold": R`, N and its share of the terms.
 */
void print_needed(const struct query *q, const struct ask *o, int json);
/* Check a --format template: NULL if good, else what is wrong. */
const char *check_format(const char *t);
/* Print query q's answer: the n sets ords (with scores, for thresholds). */
int print_sets(const bfi_snapshot *s, const uint32_t *ords, const uint32_t *scores, size_t n,
               const struct ask *o, const struct query *q);
int print_answer(const bfi_snapshot *s, const bfi_result *res, const struct ask *o,
                 const struct query *q);

/* --batch (batch.c): queries read and answered together. */
struct batcher {
	struct query *qs;
	size_t n, *starts;
	char *text;
	size_t len, cap;
	bfi_keyhash *hs; /* bare keys: their hashes through bfi_query_keys */
	size_t *ends;
	bfi_result *all;
	const bfi_expr **es; /* expressions: through bfi_query_batch */
	bfi_result **rs;
	size_t *label_lens;  /* each query's label (a FASTA id), kept after its text, or 0 */
	size_t slots;        /* room in qs, starts, label_lens, es and rs */
	uint64_t cost;       /* a scan's batch: the memory its queries are expected to hold */
	uint64_t own;        /* of which bfi query's own: texts, slots, expressions */
	/*
	 * a scan's cost (bfi_scan_cost), its keys' matches and state set to
	 * what batches matched and passes held (the most seen, once one has
	 * said), its term lists' answers raised to what they matched
	 */
	struct bfi_scan_cost seen;
	int matches_seen, state_seen;
};
int batcher_init(struct batcher *b, const struct ask *o);
void batcher_free(struct batcher *b);
int batcher_add(struct batcher *b, const char *t, size_t len);
/* The same, answered under label (label_len bytes; a FASTA record's id). */
int batcher_add_labeled(struct batcher *b, const char *t, size_t len, const char *label,
                        size_t label_len);
int run_batch(const bfi_snapshot *s, const struct ask *o, struct batcher *b);
/*
 * A query for a scan's batch (--scan): the batch is answered first if
 * the query's expected memory would take it past half of what --memory
 * leaves beside the scan's fixed cost (the rest is for the index's
 * pages), and after, once it holds batch_size. A query that cannot fit
 * alone is refused, saying the memory it needs (SAID).
 */
int batcher_scan_add(const bfi_snapshot *s, const struct ask *o, struct batcher *b, const char *t,
                     size_t len, const char *label, size_t label_len);
/* After the last batch: a note if the batches' passes read the index more than 1.5 times over. */
void scan_summary(const bfi_snapshot *s, const struct ask *o);

#endif
