/* cmd_query.c - bfi query: which sets may contain each key, expression or sequence. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bfi.h"
#include "bfi_seq.h"
#include "query.h"
#include "opts.h"
#include "tools.h"

#define SNAPS_MAX 64 /* --snap, as bfi serve's names a request */

/* What the options ask. */
struct query_args {
	struct ask o;
	const char *fasta;
	int keys, expr, path, text, trusted, small_pages, no_scan, batch_size_given, memory_given;
	uint64_t threads;
	const char *snaps[SNAPS_MAX]; /* --snap, in order */
	int n_snaps;
	int alphabet; /* --alphabet: 0 the snapshot's, 1 dna, 2 protein */
};

static int take_alphabet(void *ctx, const char *arg)
{
	struct query_args *a = ctx;
	a->alphabet = !strcmp(arg, "dna") ? 1 : !strcmp(arg, "protein") ? 2 : 0;
	if (a->alphabet)
		return 0;
	fprintf(stderr, "bfi query: --alphabet takes dna or protein\n");
	return EXIT_USAGE;
}

static int take_snap(void *ctx, const char *arg)
{
	struct query_args *a = ctx;
	if (a->n_snaps == SNAPS_MAX) {
		fprintf(stderr, "bfi query: at most %d --snap\n", SNAPS_MAX);
		return EXIT_USAGE;
	}
	a->snaps[a->n_snaps++] = arg;
	return 0;
}

static int take_threshold(void *ctx, const char *arg)
{
	struct query_args *a = ctx;
	char *end;
	a->o.theta = strtod(arg, &end);
	if (end != arg && !*end && a->o.theta == 0) {
		a->o.theta = BFI_THETA_EVERY; /* every set, with its score */
		return 0;
	}
	if (end != arg && !*end && a->o.theta > 0 && a->o.theta <= 1)
		return 0;
	fprintf(stderr, "bfi query: --threshold must be in [0, 1]\n");
	return EXIT_USAGE;
}

static int take_errors(void *ctx, const char *arg)
{
	struct query_args *a = ctx;
	uint64_t v;
	if (parse_size(arg, &v) || v > 1000) {
		fprintf(stderr, "bfi query: --errors must be 0..1000\n");
		return EXIT_USAGE;
	}
	a->o.errors = (unsigned)v;
	a->o.errors_given = 1;
	return 0;
}

static int take_findere(void *ctx, const char *arg)
{
	struct query_args *a = ctx;
	uint64_t v;
	if (parse_size(arg, &v) || v > 64) {
		fprintf(stderr, "bfi query: --findere must be 0..64\n");
		return EXIT_USAGE;
	}
	a->o.findere = (unsigned)v;
	a->o.findere_given = 1;
	return 0;
}

static int take_batch_size(void *ctx, const char *arg)
{
	struct query_args *a = ctx;
	uint64_t v;
	if (parse_size(arg, &v) || v < 1 || v > 1000000) {
		fprintf(stderr, "bfi query: --batch-size must be 1..1000000\n");
		return EXIT_USAGE;
	}
	a->o.batch_size = (size_t)v;
	a->batch_size_given = 1;
	return 0;
}

static int take_memory(void *ctx, const char *arg)
{
	struct query_args *a = ctx;
	if (parse_size(arg, &a->o.memory) || a->o.memory == 0) {
		fprintf(stderr, "bfi query: --memory: not a size: %s\n", arg);
		return EXIT_USAGE;
	}
	a->memory_given = 1;
	return 0;
}

static int take_layout(void *ctx, const char *arg)
{
	struct query_args *a = ctx;
	return (a->o.layout = layout_arg("query", arg)) == 0 ? EXIT_USAGE : 0;
}

static int take_format(void *ctx, const char *arg)
{
	struct query_args *a = ctx;
	if (!strcmp(arg, "tsv") || !strcmp(arg, "matrix")) {
		a->o.table = arg[0] == 't' ? TABLE_TSV : TABLE_MATRIX;
		return 0;
	}
	const char *why = check_format(arg);
	if (why) {
		fprintf(stderr, "bfi query: --format '%s': %s\n", arg, why);
		return EXIT_USAGE;
	}
	a->o.format = arg;
	return 0;
}

static const char head[] =
	"Usage: bfi query [OPTIONS] SNAP [QUERY...]\n"
	"\n"
	"SNAP is a snapshot or a collection of them (bfi append --help), or a\n"
	"pack of either (bfi pack --help), read into memory without unpacking.\n"
	"\n"
	"Print the sets of SNAP that may answer each QUERY: never misses a set\n"
	"that holds the keys, and may list a few that do not (false positives).\n"
	"With no QUERY, each line of standard input is one query (a trailing CR\n"
	"is dropped). A query is one key, taken byte for byte, or split as the\n"
	"snapshot's keys were made (see Query forms).\n"
	"\n"
	"Answers come in input order, one line per query, sets in ordinal order:\n"
	"  text:    the query, then a TAB before each matching set name\n"
	"  --json:  {\"query\": \"Q\", \"matches\": [\"name\", ...]}\n"
	"  --count: the query, a TAB, and the number of matching sets\n"
	"Threshold queries rank sets by score, highest first, and add it:\n"
	"  text:    the query, then TAB name TAB score for each set\n"
	"  --json:  {\"query\": \"Q\", \"terms\": T, \"matches\": [\"name\", ...],\n"
	"            \"scores\": [S, ...]}\n"
	"JSON strings hold bytes that are not UTF-8 as \\udcXX (XX the byte).\n"
	"Every answer made is written before bfi query waits for more input.\n"
	"\n"
	"Query forms. By default, the snapshot's: a snapshot built from keys takes\n"
	"each query as one key, byte for byte; one built from text splits it as\n"
	"--text, from FASTA as --kmer K with its K, from JSON/XML as --path. A\n"
	"form that contradicts how the snapshot's keys were made is refused.\n";

static const char tail[] =
	"\n"
	"Exit status: 0, or 2 for a usage error, a query that does not parse, an\n"
	"unreadable input or output, or a snapshot that cannot be read or was\n"
	"changed under this reader (its answers so far are written whole).\n";

static const struct opt_row rows[] = {
	{"keys", 300, NULL,
	 "a query is one key, byte for byte",
	 OPT_FLAG, offsetof(struct query_args, keys), 0, 0, NULL, NULL},
	{"expr", 'e', NULL,
	 "a query is an expression: keys combined with AND, OR\n"
	 "and parentheses; keys side by side are ANDed, so\n"
	 "`a b` is `a AND b`; \"quoted keys\" may hold blanks;\n"
	 "a query that does not parse stops bfi query with\n"
	 "status 2 after the answers before it, naming the byte",
	 OPT_FLAG, offsetof(struct query_args, expr), 0, 0, NULL, NULL},
	{"threshold", 't', "T",
	 "a query is a list of terms (blank-separated words, or\n"
	 "k-mers with --kmer); sets holding at least\n"
	 "ceil(T x terms) of them are returned, T in [0, 1];\n"
	 "0 returns every set with its score, none held\n"
	 "included (every ratio)",
	 OPT_FN, 0, 0, 0, NULL, take_threshold},
	{"errors", 318, "E",
	 "each read's threshold from its own k-mers by the\n"
	 "k-mer lemma: E errors (substitutions, insertions or\n"
	 "deletions) touch at most E x K of them, so a set\n"
	 "must hold all of its distinct K-mers but E x K (every\n"
	 "set, with its score, when that leaves none); k-mer\n"
	 "queries only, not with --threshold. --json and tsv\n"
	 "add each read's \"needed\" k-mers",
	 OPT_FN, 0, 0, 0, NULL, take_errors},
	{"findere", 319, "Z",
	 "findere: a read's terms are its distinct (K+Z)-mers,\n"
	 "each found where all Z+1 of its K-mers are: far\n"
	 "fewer false answers from the same k-mer index (Z\n"
	 "0..64; 0 is the plain query); k-mer queries only",
	 OPT_FN, 0, 0, 0, NULL, take_findere},
	{"kmer", 'k', "K",
	 "a query is a DNA sequence; its terms are its distinct\n"
	 "canonical K-mers (K 1..255; letters other than ACGT\n"
	 "break k-mers). Without --threshold, all must match\n"
	 "(T = 1), and the answer is still a threshold query's,\n"
	 "each set with its score (the k-mers it holds), as\n"
	 "k-mer tools print it",
	 OPT_U32, offsetof(struct query_args, o.kmer), 1, BFI_KMER_MAX, "--kmer must be 1..255", NULL},
	{"alphabet", 322, "A",
	 "a query is a sequence of A, dna or protein (its\n"
	 "amino-acid k-mers); without it, as the snapshot's\n"
	 "were made: a DNA query of proteins is refused",
	 OPT_FN, 0, 0, 0, NULL, take_alphabet},
	{"path", 301, NULL,
	 "a query is a path over JSON/XML documents (bfi build\n"
	 "--input json|xml): /a/b from the root, a/b anywhere,\n"
	 "* for one or more elements (a/*/b)",
	 OPT_FLAG, offsetof(struct query_args, path), 0, 0, NULL, NULL},
	{"fasta", 302, "FILE",
	 "k-mers (the snapshot's K, or --kmer K): the queries\n"
	 "are the records of FILE\n"
	 "(FASTA or FASTQ, plain or gzip, xz, bzip2, zstd;\n"
	 "'-' for stdin),\n"
	 "each answered under its record's id",
	 OPT_STR, offsetof(struct query_args, fasta), 0, 0, NULL, NULL},
	{"snap", 321, "SNAP",
	 "ask SNAP (repeatable; then every argument is a\n"
	 "query): each snapshot answers all the queries in\n"
	 "turn, as asking it alone would, each answer led by\n"
	 "its snapshot (a first field; in JSON \"snapshot\")",
	 OPT_FN, 0, 0, 0, NULL, take_snap},
	{"whole", 320, NULL,
	 "with --fasta: all the records of FILE as one query of\n"
	 "all their distinct k-mers (however many), named by\n"
	 "FILE: which sets hold this assembly or sample?\n"
	 "(kmindex's --single-query)",
	 OPT_FLAG, offsetof(struct query_args, o.whole), 0, 0, NULL, NULL},
	{"text", 303, NULL,
	 "a query is text: its terms are its distinct words as\n"
	 "documents were split (bfi build --input text: ASCII\n"
	 "letters and digits, lower-cased, with the snapshot's\n"
	 "term limit and stop words). Without --threshold, all\n"
	 "must match, and sets are listed as for keys.",
	 OPT_FLAG, offsetof(struct query_args, text), 0, 0, NULL, NULL},
	{NULL, 0, NULL, "\nOptions:\n", OPT_FN, 0, 0, 0, NULL, NULL},
	{"batch", 304, NULL,
	 "answer the queries in batches of --batch-size\n"
	 "(default 1000), each read and answered before the\n"
	 "next, whose memory waits overlap; same answers,\n"
	 "more throughput on short rows (keys:\n"
	 "bfi_query_keys; expressions: bfi_query_batch)",
	 OPT_FLAG, offsetof(struct query_args, o.batch), 0, 0, NULL, NULL},
	{"batch-size", 305, "N",
	 "\n"
	 "queries per batch (default 1000; with --scan 100000,\n"
	 "and fewer where --memory holds fewer)",
	 OPT_FN, 0, 0, 0, NULL, take_batch_size},
	{"memory", 306, "SIZE",
	 "what the query may hold in all (K, M, G suffixes):\n"
	 "index pages, each key's state, the batch's answers.\n"
	 "Default: three quarters of what this process may\n"
	 "hold, the least of MemAvailable, its memory cgroup's\n"
	 "limit (v1 or v2) and ulimit -v. An index larger than\n"
	 "it is scanned (--scan), saying so once on stderr",
	 OPT_FN, 0, 0, 0, NULL, take_memory},
	{"scan", 307, NULL,
	 "answer each batch in passes over the index, not from\n"
	 "its mapping, for an index larger than memory: a pass\n"
	 "reads the pages its queries need once, in file order\n"
	 "(bfi_scan); same answers, on any layout; a collection\n"
	 "is scanned segment by segment, and a pack in place,\n"
	 "frame by frame, never unpacked. A batch is cut where\n"
	 "its keys' state and expected answers would pass half\n"
	 "of --memory, so that each pass reads each byte of the\n"
	 "index at most once; a query too large to fit alone is\n"
	 "refused before anything is read, naming the --memory\n"
	 "it needs. If a pass still cannot hold a block's rows\n"
	 "with a row of state a key, rounds read pages again,\n"
	 "and a warning says so",
	 OPT_FLAG, offsetof(struct query_args, o.scan), 0, 0, NULL, NULL},
	{"no-scan", 308, NULL,
	 "map the index even if it is larger than --memory",
	 OPT_FLAG, offsetof(struct query_args, no_scan), 0, 0, NULL, NULL},
	{"stats", 309, NULL,
	 "after a scan, on stderr: passes, bytes and reads, the\n"
	 "most held, and how the reads spread over --threads\n"
	 "(a scan splits each range's reads over them)",
	 OPT_FLAG, offsetof(struct query_args, o.stats), 0, 0, NULL, NULL},
	{"layout", 310, "L",
	 "flat, plain, rambo or tree: answer from this layout\n"
	 "(default: flat, else tree, else rambo, else plain)",
	 OPT_FN, 0, 0, 0, NULL, take_layout},
	{"json", 311, NULL,
	 "one JSON object per query",
	 OPT_FLAG, offsetof(struct query_args, o.json), 0, 0, NULL, NULL},
	{"threads", 312, "N",
	 "answer on N threads (default: one per online core),\n"
	 "the answers in input order, byte for byte those of\n"
	 "one thread; one thread answers queries given as\n"
	 "arguments, and answers going to a terminal",
	 OPT_U64, offsetof(struct query_args, threads), 1, 256, "--threads must be 1..256", NULL},
	{"limit", 313, "N",
	 "at most N sets an answer (a threshold's N best); with\n"
	 "--json, \"more\": M says how many more there were",
	 OPT_U64, offsetof(struct query_args, o.limit), 1, UINT64_MAX, "--limit must be a positive count", NULL},
	{"count", 'c', NULL,
	 "counts instead of names (with --json: \"count\": N)",
	 OPT_FLAG, offsetof(struct query_args, o.count), 0, 0, NULL, NULL},
	{"ordinals", 314, NULL,
	 "set ordinals instead of names (no catalog needed;\n"
	 "with --keys or --expr it is not read at all)",
	 OPT_FLAG, offsetof(struct query_args, o.ordinals), 0, 0, NULL, NULL},
	{"format", 315, "T",
	 "print T for each matching set instead, with {name},\n"
	 "{ordinal}, {score} (0 without one) and {query}\n"
	 "replaced, \\n and \\t as newline and tab, {{ and }}\n"
	 "as braces; e.g. 'https://example.org/{name}\\n'",
	 OPT_FN, 0, 0, 0, NULL, take_format},
	{"format", 315, "tsv",
	 "a table with a header, #query set score ratio: a row\n"
	 "a matching set, the best first (then by name), and\n"
	 "a row with no set for a query that matches none;\n"
	 "ratio is the share of a term list's terms held",
	 OPT_DOC, 0, 0, 0, NULL, NULL},
	{"format", 315, "matrix",
	 "a table: #query and every set's name, then a row\n"
	 "a query, each cell its ratio (1 or 0 for keys);\n"
	 "'-' for a set below T, its ratio not computed\n"
	 "(-t 0: every cell its ratio)",
	 OPT_DOC, 0, 0, 0, NULL, NULL},
	{"trusted", 316, NULL,
	 "skip the catalog digest check (trusted files only)",
	 OPT_FLAG, offsetof(struct query_args, trusted), 0, 0, NULL, NULL},
	{"small-pages", 317, NULL,
	 "map the index without asking for 2 MiB pages, for\n"
	 "snapshots much larger than memory",
	 OPT_FLAG, offsetof(struct query_args, small_pages), 0, 0, NULL, NULL},
	{"help", 'h', NULL,
	 "show this help",
	 OPT_HELP, 0, 0, 0, NULL, NULL},
	{NULL, 0, NULL, NULL, OPT_FN, 0, 0, 0, NULL, NULL},
};

static const struct opt_cmd query_cmd = {
    .me = "bfi query",
    .head = head,
    .tail = tail,
    .rows = rows,
    .column = 21,
};



/* The options that exclude one another, and SNAP given: 0, or the exit status after saying why. */
static int check_query_args(const struct query_args *a, const struct ask *o, int argc)
{
	const char *bad = NULL;
	if (a->text + (o->kmer > 0 || a->alphabet) + a->keys + a->expr + a->path > 1)
		bad = "give one query form: --keys, --expr, --text, --kmer or --path";
	else if (a->path && (a->text || o->kmer || o->theta != 0))
		bad = "--path does not combine with --text, --kmer or --threshold";
	else if (a->n_snaps && (o->format || o->table == TABLE_MATRIX))
		bad = "several snapshots' answers take no --format template nor matrix (each "
		      "snapshot has its own sets): ask each alone";
	else if (o->errors_given && o->theta != 0)
		bad = "--errors sets each read's threshold: it does not combine with --threshold";
	else if ((o->format || o->table) && (o->json || o->count || o->ordinals))
		bad = "--format does not combine with --json, --count or --ordinals";
	else if (o->scan && a->no_scan)
		bad = "--scan and --no-scan contradict each other";
	if (bad) {
		fprintf(stderr, "bfi query: %s\n", bad);
		return EXIT_USAGE;
	}
	if (optind >= argc && a->n_snaps == 0) {
		fprintf(stderr, "bfi query: need SNAP\n");
		return usage_try("query");
	}
	return 0;
}

/*
 * Open path as the options ask (a pack scanned if it does not fit), its
 * query form settled and its layout checked: 0 and *out, or the exit
 * status after saying why.
 */
static int open_snap(const struct query_args *a, struct ask *o, const char *path,
                     unsigned flags, uint64_t *threads, bfi_snapshot **out)
{
	bfi_snapshot *s = NULL;
	guard_during(path, EXIT_USAGE);
	/* a pack is opened to be scanned until its index's size says whether it fits */
	struct stat path_st;
	if (!a->no_scan && stat(path, &path_st) == 0 && S_ISREG(path_st.st_mode))
		flags |= BFI_OPEN_SCAN;
	int rc = bfi_open(path, flags, &s);
	if (rc == -ENOENT && (o->ordinals || o->count) && !(flags & BFI_OPEN_NO_CATALOG)) {
		/* no catalog to read the key rules from: ordinals and counts do without */
		flags |= BFI_OPEN_NO_CATALOG;
		rc = bfi_open(path, flags, &s);
	}
	if (rc == 0 && (rc = query_memory(s, o, a->memory_given, a->no_scan, path)) != 0) {
		guard_during(NULL, 0);
		bfi_close(&s);
		return EXIT_USAGE;
	}
	if (rc == 0 && !o->scan && (flags & BFI_OPEN_SCAN)) {
		/* a pack that fits: read into memory, for the mapped path */
		bfi_close(&s);
		flags &= ~BFI_OPEN_SCAN;
		rc = bfi_open(path, flags, &s);
	}
	guard_during(NULL, 0);
	if (rc == 0 && o->scan) {
		o->batch = 1; /* the batch is what a pass answers, its reads split over the threads */
		o->scan_threads = (unsigned)(*threads < BFI_SCAN_THREADS_MAX ? *threads
		                                                             : BFI_SCAN_THREADS_MAX);
		*threads = 1;
		if (!a->batch_size_given)
			o->batch_size = 100000;
	}
	if (rc) {
		query_open_failed(path, rc);
		return EXIT_USAGE;
	}
	guard_watch(s, path);
	char why[600];
	struct bfi_info info;
	bfi_info(s, &info);
	if (query_form(s, o, a->fasta != NULL, path, why, sizeof why) != 0) {
		fprintf(stderr, "bfi query: %s\n", why);
		rc = EXIT_USAGE;
	} else if (o->layout && !(info.layouts & o->layout)) {
		char held[200];
		fprintf(stderr, "bfi query: %s has no %s layout (it holds %s)\n", path,
		        bfi_layout_name(o->layout), layout_names(info.layouts, ", ", held, sizeof held));
		rc = EXIT_USAGE;
	}
	if (rc) {
		guard_unwatch(s);
		bfi_close(&s);
		return rc;
	}
	o->snap = *out = s;
	return 0;
}

/*
 * The queries given as arguments from argv[optind] on, or else a line of
 * standard input each, answered: 0 or an error (*status set to
 * EXIT_USAGE when standard input fails after some were answered).
 */
static int each_query(bfi_snapshot *s, bfi_result *res, struct ask *o, struct qpool *qp,
                      struct batcher *bt, int argc, char **argv, int *status)
{
	int rc = 0;
	struct lines in = {NULL, 0, 0, 0, 0, s, NULL};
	/* before a read of a pipe or terminal, which may wait for the next
	 * query, every answer so far is made and written */
	struct stat stdin_st;
	if (qp && (fstat(STDIN_FILENO, &stdin_st) != 0 || !S_ISREG(stdin_st.st_mode)))
		in.drain = qp;
	for (int i = optind;; i++) {
		struct query q = {NULL, 0, NULL, NULL, 0, 0};
		if (rc || answers.err) /* an answer could not be written: stop */
			break;
		if (optind < argc) {
			if (i >= argc)
				break;
			q.text = argv[i];
			q.len = strlen(argv[i]);
		} else {
			int got = next_line(&in, STDIN_FILENO, &q.text, &q.len);
			if (got == BFI_E_CHANGED) {
				rc = got;
				break;
			}
			if (got < 0) { /* the queries read so far are still answered */
				fprintf(stderr, "bfi query: standard input: %s\n", strerror(-got));
				*status = EXIT_USAGE;
			}
			if (got <= 0)
				break;
		}
		if (qp) {
			rc = qpool_add(qp, q.text, q.len, NULL, 0);
			continue;
		}
		if (!o->batch) {
			rc = query_run_one(s, res, o, &q);
			continue;
		}
		if (o->scan) {
			rc = batcher_scan_add(s, o, bt, q.text, q.len, NULL, 0);
			continue;
		}
		rc = batcher_add(bt, q.text, q.len);
		if (rc == 0 && bt->n == o->batch_size)
			rc = run_batch(s, o, bt);
	}
	free(in.buf);
	return rc;
}

/* Queries that could match nothing, answered so: said once, not as if they had matched. */
static void say_no_terms(const struct ask *o, unsigned long long none)
{
	if (none && form_seq(&o->form))
		fprintf(stderr, "bfi query: note: %llu quer%s shorter than k = %u, so with no k-mer: "
		        "no set can match %s\n", none, none == 1 ? "y is" : "ies are", o->form.k,
		        none == 1 ? "it" : "them");
	else if (none)
		fprintf(stderr, "bfi query: note: %llu quer%s no term once split (stop words or no "
		        "letters), so no set can match %s\n", none, none == 1 ? "y has" : "ies have",
		        none == 1 ? "it" : "them");
}

/*
 * The queries (arguments from optind, standard input, or --fasta) answered
 * on the snapshot at path: the exit status.
 */
static int query_snap(const struct query_args *a, struct ask o, const char *path, unsigned flags,
                      uint64_t threads, int argc, char **argv)
{
	const char *fasta = a->fasta;
	int status = EXIT_OK;
	bfi_snapshot *s = NULL;
	bfi_result *res = NULL;
	int rc = open_snap(a, &o, path, flags, &threads, &s);
	if (rc)
		return rc;
	/*
	 * Answers go out in 64 KiB writes, and all of them before each read of
	 * input (next_line); one at a time to a terminal, and for records of a
	 * FASTA file that is not a regular file, which are read inside zlib.
	 */
	struct stat in_st;
	int waited = isatty(STDOUT_FILENO) ||
	             (fasta && (stat(strcmp(fasta, "-") ? fasta : "/dev/stdin", &in_st) != 0 ||
	                        !S_ISREG(in_st.st_mode)));
	out_init(waited);
	answers.tty = isatty(STDOUT_FILENO);
	struct bfi_info info;
	bfi_info(s, &info);
	/* calloc'd pages are not touched until a name is kept: no cost unless names are printed */
	struct names names = {.n = info.n_sets};
	if (info.n_sets <= NAMES_CACHED)
		names.at = calloc(info.n_sets ? info.n_sets : 1, sizeof *names.at);
	o.names = &names;
	rc = bfi_result_create(&res);
	if (rc == 0 && o.table)
		rc = table_head(s, &o);
	/*
	 * On threads, but for answers that must go out one by one (to a
	 * terminal, or for records read from a pipe inside zlib), and for the
	 * few queries given as arguments.
	 */
	struct qpool *qp = NULL;
	atomic_ullong no_terms = 0;
	o.no_terms = &no_terms;
	if (rc == 0 && threads > 1 && !waited && !o.whole && (fasta || optind >= argc))
		rc = qpool_start(&qp, (unsigned)threads, s, &o);
	struct batcher bt;
	memset(&bt, 0, sizeof bt);
	if (rc == 0 && o.batch)
		rc = batcher_init(&bt, &o);
	if (rc == 0 && fasta && o.whole) { /* the file's records together, one query */
		rc = whole_query(s, res, &o, fasta, &status);
		optind = argc;
	} else if (rc == 0 && fasta) { /* each record of the file is one query, named by its id */
		struct fasta_ctx fc = {s, res, &o, {0, 0}, qp, o.scan ? &bt : NULL};
		clock_gettime(CLOCK_MONOTONIC, &fc.checked);
		char err[512];
		rc = bfi_seq_read(fasta, on_fasta_query, &fc, err, sizeof err);
		if (rc && err[0]) {
			fprintf(stderr, "bfi query: %s\n", err);
			rc = 0;
			status = EXIT_USAGE;
		}
		optind = argc; /* no queries from arguments or stdin */
	}
	if (!fasta)
		rc = rc ? rc : each_query(s, res, &o, qp, &bt, argc, argv, &status);
	if (qp) { /* the pool's first failure, if any, came first in the input */
		int prc = qpool_end(&qp);
		if (prc)
			rc = prc;
	}
	if (rc == 0 && o.batch && bt.n)
		rc = run_batch(s, &o, &bt);
	if (o.batch)
		batcher_free(&bt);
	if (rc == 0 && o.scan)
		scan_summary(s, &o);
	/* answers given since the last check may be wrong if a file changed: say so */
	if (rc == 0)
		rc = bfi_check_files(s);
	if (rc == 0)
		say_no_terms(&o, atomic_load(&no_terms));
	(void)out_flush();
	out_free();
	bfi_result_destroy(&res);
	free(names.at);
	free(o.cols);
	guard_unwatch(s);
	bfi_close(&s);
	if (rc == BFI_E_CHANGED) {
		fprintf(stderr, "bfi query: %s: a file of the snapshot was changed in place under this "
		                "reader; answers since then may be wrong. A snapshot is replaced by "
		                "publishing a new one, never edited in place\n",
		        path);
		return EXIT_USAGE;
	}
	if (rc == SAID) /* a bad query, reported when it was read */
		return EXIT_USAGE;
	if (rc) {
		fprintf(stderr, "bfi query: %s: %s\n", path, bfi_strerror(rc));
		return EXIT_USAGE;
	}
	return status;
}

int cmd_query(int argc, char **argv)
{
	static struct query_args a; /* its strings point into argv */
	memset(&a, 0, sizeof a);
	a.o.batch_size = 1000;
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	a.threads = cores > 0 ? (uint64_t)cores : 1;
	int status = opts_parse(&query_cmd, argc, argv, &a);
	if (status)
		return status - 1;
	struct ask o = a.o;
	o.asked = a.keys ? BFI_FORM_KEY : a.expr ? BFI_FORM_EXPR : a.path ? BFI_FORM_PATH
	          : a.text ? BFI_FORM_TEXT : a.alphabet == 2 ? BFI_FORM_PROTEIN
	          : o.kmer || a.alphabet == 1 ? BFI_FORM_KMERS : BFI_FORM_AUTO;
	unsigned flags = (a.trusted ? BFI_OPEN_TRUSTED : 0) | (a.small_pages ? BFI_OPEN_SMALL_PAGES : 0);
	const char *fasta = a.fasta;
	int keys = a.keys;
	uint64_t threads = a.threads;
	if ((status = check_query_args(&a, &o, argc)) != 0)
		return status;
	/* SNAP, or every --snap in turn, each answer led by its name */
	int several = a.n_snaps > 0;
	if (!several)
		a.snaps[a.n_snaps++] = argv[optind++];
	/* the catalog holds the key rules, the tokenizer and the path encoding:
	 * only names, and a query form given outright, do without it */
	if ((o.ordinals || o.count) && (keys || a.expr))
		flags |= BFI_OPEN_NO_CATALOG;
	int from_stdin = optind >= argc && !fasta;
	if ((from_stdin || (fasta && !strcmp(fasta, "-"))) && stdin_closed) {
		fprintf(stderr, "bfi query: standard input is closed; give queries as arguments\n");
		return EXIT_USAGE;
	}
	/* standard input read once, each snapshot reading it again from the start */
	int again = -1;
	if (a.n_snaps > 1 && (from_stdin || (fasta && !strcmp(fasta, "-"))) &&
	    (again = stdin_again()) < 0)
		return EXIT_USAGE;
	int first = optind;
	for (int i = 0; i < a.n_snaps && status == EXIT_OK; i++) {
		optind = first;
		if (again >= 0 && (dup2(again, STDIN_FILENO) < 0 || lseek(again, 0, SEEK_SET) != 0)) {
			perror("bfi query: standard input");
			status = EXIT_USAGE;
			break;
		}
		o.tag = several ? a.snaps[i] : NULL;
		o.head_said = i > 0;
		status = query_snap(&a, o, a.snaps[i], flags, threads, argc, argv);
	}
	if (again >= 0)
		close(again);
	return status;
}
