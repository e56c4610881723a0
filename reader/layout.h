/*
 * layout.h - the reader's table of layouts (layouts.c).
 *
 * Each layout is one file (flat.c, tree.c, rambo.c, plain.c) that keeps
 * its own view of its section in snap->view[row] and registers what it
 * does in one row of bfi__layouts. Everything else (opening, the query
 * calls, bfi_info, verification, the catalog's fill ratios) walks the
 * table. A new layout is a new file here, a new row, and its writer.
 */
#ifndef BFI_READER_LAYOUT_H
#define BFI_READER_LAYOUT_H

#include "expr.h"
#include "layouts.h"

struct bfi_want;
struct bfi_scan_io;

/*
 * A layout's row here is its row in the format's table (format/layouts.h),
 * which holds its flag, section kind, name and fill rank.
 */
struct bfi_layout_ops {
	int own_k;        /* sizes its own filters, so its k need not be the others' (RAMBO) */
	size_t view_size; /* bytes of its view, allocated zeroed for open, freed after close */
	/*
	 * Check the descriptor of its section, size bytes at sec (O(1), or
	 * O(entries) for tables), and fill the view, s->view[row]. 0, or a
	 * BFI_E_* code with *at the structure at fault, or -ENOMEM.
	 */
	int (*open)(bfi_snapshot *s, const uint8_t *sec, uint64_t size, struct bfi_where *at);
	void (*close)(bfi_snapshot *s); /* what the view holds besides itself; may be NULL */
	/*
	 * Answer e (never a term list) into res, which bfi__prepare reset. NULL
	 * for layouts that answer through conj.
	 */
	int (*expr)(const bfi_snapshot *s, const struct bfi_expr *e, bfi_result *res);
	/*
	 * Or a layout that answers a conjunction of keys with a sorted list of
	 * sets (tree, RAMBO): conj writes the sets matching conjunction node n,
	 * ascending, to out (room for N), and returns their count or a negative
	 * error; lists.c evaluates AND, OR and thresholds over such lists.
	 * scratch tells what conj needs in res: row pointers per key, and
	 * 64-bit words of bit vectors per query.
	 */
	long (*conj)(const bfi_snapshot *s, const struct bfi_expr *e, const struct bfi_enode *n,
	             bfi_result *res, uint32_t *out);
	void (*scratch)(const bfi_snapshot *s, size_t *rows_per_key, size_t *words);
	/* Answer n checked queries together; NULL: one after another through expr. */
	int (*batch)(const bfi_snapshot *s, const struct bfi_expr *const *qs, size_t n,
	             bfi_result *const *res);
	/* bfi_query_keys on res, which is reset; NULL: one key at a time through expr. */
	int (*keys)(const bfi_snapshot *s, const bfi_keyhash *keys, size_t n, bfi_result *res,
	            size_t *ends);
	/* Every set holding at least need of term list e's terms, with scores, unranked (NULL: conj). */
	int (*threshold)(const bfi_snapshot *s, const struct bfi_expr *e, uint32_t need,
	                 bfi_result *res);
	/* The layout's facts (bfi_layout_info), into out zeroed and tagged: n_sets, hashes and more. */
	void (*info)(const bfi_snapshot *s, struct bfi_layout_info *out);
	/* bfi_verify's deep checks of the data: padding bits and tables. 0 or BFI_E_BAD_LAYOUT. */
	int (*verify)(const bfi_snapshot *s, struct bfi_bad *bad);
	/*
	 * Width in bits of set ord's filter in this layout. The catalog's fill
	 * ratios (bits_set) are of the present layout of lowest fill rank
	 * (format/layouts.h).
	 */
	uint64_t (*set_bits)(const bfi_snapshot *s, uint32_t ord);
	/*
	 * bfi_layout_fpr where a set's filter is not its own (RAMBO's cells);
	 * NULL: the mean of (fill)^k over the sets, from the catalog.
	 */
	int (*fpr)(const bfi_snapshot *s, struct bfi_fpr_model *out);
	/* Set ord's filter whole, in place (ord < n_sets); NULL: not kept whole. */
	void (*set_filter)(const bfi_snapshot *s, uint32_t ord, const uint8_t **bits, uint64_t *m);
	/* Its own parameters, up to cap into out: how many it has. NULL: none. */
	int (*params)(const bfi_snapshot *s, struct bfi_layout_param *out, size_t cap);
	/*
	 * Scan (scan.c): a pass takes the layout part by part, each answered
	 * alone. A part is items [first, first + n) (blocks, sets; one item
	 * for a layout scanned whole). scan_part gives n for the part from
	 * item first in a pass that may hold budget bytes, 0 past the end.
	 * scan_bytes hands bfi__want every range of index bytes query e may
	 * read in the part (e NULL: those every query there reads, such as
	 * tables), a superset the answer must not read beyond. scan_view
	 * fills v->view[row] (zeroed, view_size bytes) with a view of just the
	 * part, reading from shadow, a copy of the index at the same offsets
	 * in which only the bytes wanted are filled; *ord0 is added to the
	 * ordinals its answers give. close, if any, frees what it holds.
	 */
	uint64_t (*scan_part)(const bfi_snapshot *s, uint64_t first, uint64_t budget);
	int (*scan_bytes)(const bfi_snapshot *s, uint64_t first, uint64_t n, const struct bfi_expr *e,
	                  struct bfi_want *w);
	int (*scan_view)(const bfi_snapshot *s, uint64_t first, uint64_t n, const uint8_t *shadow,
	                 bfi_snapshot *v, uint32_t *ord0);
	/*
	 * Optional: a part whose pages the batch needs pass the budget,
	 * answered in one pass over them range by range, each query's state
	 * kept between ranges, so that each page is still read once
	 * (bfi_scan_io). 0 with every answer of the part appended
	 * (io->append), BFI_SCAN_DECLINE if the state would not fit the
	 * budget with room for a range (the scan then answers the part in
	 * rounds of queries), or an error.
	 */
	int (*scan_rows)(const bfi_snapshot *s, uint64_t first, uint64_t n,
	                 const struct bfi_expr *const *qs, size_t nq, double theta,
	                 bfi_result *const *res, struct bfi_scan_io *io);
	/*
	 * With scan_rows: the bytes its pass keeps for each key of the batch
	 * in the part that keeps the most (a row, its probes, its key), so
	 * that a caller can size batches whose state fits (bfi_scan_cost).
	 */
	uint64_t (*scan_key_state)(const bfi_snapshot *s);
};

/* What a scan's round wants (scan.c): a bit a page of the index. */
#define BFI_SCAN_PAGE 4096u
struct bfi_want {
	uint64_t size;   /* of the index */
	uint64_t *want;  /* a bit a page: needed by the round being gathered */
	uint64_t lo, hi; /* pages [lo, hi) hold every bit set in want */
	uint64_t *fresh; /* the pages the query being added is the first of its round to want */
	size_t n_fresh, fresh_cap;
};
/* Mark index bytes [from, to) needed by the round being gathered. 0 or -ENOMEM. */
static inline int bfi__want(struct bfi_want *w, uint64_t from, uint64_t to)
{
	if (to > w->size)
		to = w->size;
	for (uint64_t p = from / BFI_SCAN_PAGE; from < to && p <= (to - 1) / BFI_SCAN_PAGE; p++)
		if (!((w->want[p / 64] >> (p % 64)) & 1)) {
			w->want[p / 64] |= UINT64_C(1) << (p % 64);
			w->lo = p < w->lo ? p : w->lo;
			w->hi = p >= w->hi ? p + 1 : w->hi;
			int rc = bfi__grow(&w->fresh, &w->fresh_cap, w->n_fresh + 1, sizeof *w->fresh);
			if (rc)
				return rc;
			w->fresh[w->n_fresh++] = p;
		}
	return 0;
}
/* Unmark the pages the last bfi__want marked first (w->fresh): they wait for the next round. */
static inline void bfi__unwant_fresh(struct bfi_want *w)
{
	for (size_t x = 0; x < w->n_fresh; x++)
		w->want[w->fresh[x] / 64] &= ~(UINT64_C(1) << (w->fresh[x] % 64));
}
/*
 * A layout's pass over one part's pages range by range (scan_rows): it
 * marks a range's pages in w with bfi__want, adding w->n_fresh to n_want,
 * until the next would take n_want past pages; then fill reads them into
 * shadow (at their own offsets), lets go of those the range before held
 * and this one does not, and clears w for the next. append adds a
 * query's answer in the part (its ordinals from ord0) to its result:
 * 0, or BFI_E_LIMIT once the batch's answers pass the scan's memory.
 * (The scan's functions come through here, so that no layout calls
 * scan.c, which calls the layouts.)
 */
struct bfi_scan_io {
	struct bfi_want *w;
	const uint8_t *shadow;
	uint64_t n_want; /* pages marked for the range being gathered */
	uint64_t pages;  /* pages a range may hold: the budget less state */
	uint64_t budget; /* bytes the part may hold, pages and state */
	uint64_t state;  /* bytes the layout holds for the queries, set before the first fill */
	/* the most bytes a pass needed for its keys' state, held or declined (bfi_scan_stats) */
	uint64_t key_state;
	void *keep;      /* the layout's buffers, kept from part to part of a scan */
	void (*drop)(void *keep); /* frees keep at the scan's end */
	int (*fill)(struct bfi_scan_io *io);
	/* index bytes [off, off + len) will be read next: ask the disk for them now (may be NULL) */
	void (*ahead)(struct bfi_scan_io *io, uint64_t off, uint64_t len);
	int (*append)(struct bfi_scan_io *io, const bfi_result *w, uint32_t ord0, bfi_result *res);
};
#define BFI_SCAN_DECLINE 1

/* a * b + c, or UINT64_MAX past it. */
static inline uint64_t bfi__mul_add(uint64_t a, uint64_t b, uint64_t c)
{
	if (b && a > (UINT64_MAX - c) / b)
		return UINT64_MAX;
	return a * b + c;
}

/*
 * Does a pass holding state bytes, and reading tables pages at its end,
 * fit io's budget with room for a range of probes of span bytes? If so,
 * io's state and pages are set, and 0 returned; else BFI_SCAN_DECLINE.
 */
int bfi__pass_fits(struct bfi_scan_io *io, uint64_t state, uint64_t tables, uint64_t span,
                   uint64_t n_probes);
/* The batch's keys, query after query, into key (room for them all). */
void bfi__pass_keys(const struct bfi_expr *const *qs, size_t nq, const bfi_keyhash **key);
/*
 * Queries [from, to) answered as mapped on a view of part [first, first +
 * n), in view row row, reading the shadow (ops->scan_view), w their
 * scratch, each answer appended to its result (io->append), unranked.
 * With attach, attach(ctx, view) points the view at a pass's state and
 * gives where the view keeps the first key of the query being answered.
 */
int bfi__view_answer(struct bfi_scan_io *io, const bfi_snapshot *s,
                     const struct bfi_layout_ops *ops, int row, uint64_t first, uint64_t n,
                     size_t *(*attach)(void *ctx, void *view), void *ctx,
                     const struct bfi_expr *const *qs, size_t from, size_t to, double theta,
                     bfi_result *w, bfi_result *const *res);
/*
 * A pass's end, for a layout scanned whole (tree, RAMBO): the pages every
 * query reads (ops->scan_bytes of no query: its tables) read, then every
 * query answered on the view with the pass's state (bfi__view_answer).
 */
int bfi__pass_answer(struct bfi_scan_io *io, const bfi_snapshot *s,
                     const struct bfi_layout_ops *ops, int row,
                     size_t *(*attach)(void *ctx, void *view), void *ctx,
                     const struct bfi_expr *const *qs, size_t nq, double theta,
                     bfi_result *const *res);

/* A pass's probe (ranges.c): the bytes one key reads at off, its j-th. */
struct bfi_probe {
	uint64_t off;
	uint32_t key, j;
};
struct bfi_probes {
	struct bfi_probe *pr;
	size_t cap, n;
	uint32_t *at; /* probes a page, then where the next of the page goes */
	size_t at_cap;
};
/*
 * The probes of keys [0, keys), up to per a key, into p in the order of
 * the pages they start on (from page base, pages of them): probe(ctx, g,
 * j, &off) gives key g's j-th, or 0 to leave the key's rest out. 0,
 * -ENOMEM, or BFI_E_BAD_LAYOUT for an offset outside the pages.
 */
int bfi__probes_by_page(struct bfi_probes *p, uint64_t base, size_t pages, size_t keys,
                        uint32_t per, int (*probe)(void *ctx, size_t g, uint32_t j, uint64_t *off),
                        void *ctx);
/*
 * Read p's probes range by range, within io, and apply each once its
 * range is in: each reads span bytes, or, with len, len(ctx, j) for a
 * probe j. With all, if one range holds every probe, all(ctx) is called
 * in place of apply, and 1 returned; else 0, or an error.
 */
int bfi__probe_ranges(struct bfi_scan_io *io, const struct bfi_probes *p, uint64_t span,
                      uint64_t (*len)(void *ctx, uint32_t j),
                      void (*apply)(void *ctx, const struct bfi_probe *pr), void (*all)(void *ctx),
                      void *ctx);
/*
 * The terms a threshold query at theta needs: ceil(theta * terms), at
 * least one. BFI_THETA_EVERY is answered as one, and the sets holding
 * none then join with 0 (bfi__every).
 */
static inline uint32_t bfi__need(const struct bfi_expr *e, double theta)
{
	if (e->has_need) /* its own (bfi_expr_set_need); 0 answered as BFI_THETA_EVERY is */
		return e->need ? e->need : 1;
	return theta < 0 ? 1 : bfi__share(e->n_keys, theta);
}
/* Where p, a pointer into s's map, lies in shadow, a copy at the same offsets; NULL stays NULL. */
static inline const uint8_t *bfi__in_shadow(const bfi_snapshot *s, const uint8_t *p,
                                            const uint8_t *shadow)
{
	return p ? shadow + (p - s->map) : NULL;
}
/* A layout scanned whole: one part, of one item. */
static inline uint64_t bfi__scan_whole(const bfi_snapshot *s, uint64_t first, uint64_t budget)
{
	(void)s;
	(void)budget;
	return first == 0;
}

/* The table, in the order the default layout is chosen: flat, tree, RAMBO, plain. */
extern const struct bfi_layout_ops *const bfi__layouts[BFI_ROWS];

/* The view of snapshot s that layout row keeps, as a type. */
#define BFI_VIEW(s, row, type) ((const type *)(s)->view[row])

/*
 * The row answering on layout (0: the first the snapshot holds, in table
 * order), into *out: 0, BFI_E_INVALID or BFI_E_NO_LAYOUT.
 */
int bfi__row_of(const bfi_snapshot *s, unsigned layout, const struct bfi_layout_ops **out);

/*
 * Scratch every query needs (answers for every set; scores and their
 * ranking keys if scores), and res reset to no answer.
 */
static inline void bfi__reset_result(bfi_result *res, int scores)
{
	res->n = 0;
	res->touched = 0;
	res->tests = 0;
	res->have_scores = scores;
}

static inline int bfi__prepare(const bfi_snapshot *s, bfi_result *res, int scores)
{
	size_t n = s->lay.n_sets;
	int rc = bfi__grow(&res->ords, &res->cap, n, sizeof *res->ords);
	if (rc == 0 && scores)
		rc = bfi__grow(&res->scores, &res->scores_cap, n, sizeof *res->scores);
	if (rc == 0)
		bfi__reset_result(res, scores);
	return rc;
}
/* Room in res for more sets after its n. */
static inline int bfi__room(bfi_result *res, size_t more)
{
	if (res->cap - res->n >= more)
		return 0;
	size_t want = res->n + more > 2 * res->cap ? res->n + more : 2 * res->cap;
	return bfi__grow(&res->ords, &res->cap, want, sizeof *res->ords);
}

/*
 * Threshold pruning (flat_survivors.c, tree.c): of the sets or nodes in alive,
 * bit b having count[b] hits so far, those that can still reach need
 * with left terms to come.
 */
static inline uint64_t bfi__still_alive(uint64_t alive, const uint32_t *count, uint64_t left,
                                        uint32_t need)
{
	if (left >= need)
		return alive;
	for (uint64_t a = alive; a; a &= a - 1) {
		unsigned b = (unsigned)__builtin_ctzll(a);
		if (count[b] < need - left)
			alive &= ~(UINT64_C(1) << b);
	}
	return alive;
}

/*
 * Dense words (count.c): add acc's bits to count[0 .. 63], and the mask of
 * count[0 .. 63] below floor, a lane a count; all 64 counts must be there.
 */
void bfi__count_word(uint32_t *count, uint64_t acc);
uint64_t bfi__count_below(const uint32_t *count, uint32_t floor);
/*
 * A level's ones a node (count.c): bfi__count_planes adds a row of words
 * words into planes (BFI_PLANES * words, plane i of word w at
 * planes[i * words + w]), at most BFI_PLANES_ROWS rows between readouts;
 * bfi__planes_out adds them to ones (64 a word) and clears them.
 */
#define BFI_PLANES 8
#define BFI_PLANES_ROWS 255
void bfi__count_planes(uint64_t *planes, const uint8_t *row, size_t words);
void bfi__planes_out(uint64_t *planes, size_t words, uint64_t *ones);
/* Words with fewer bits than this are counted a bit at a time. */
#define BFI_DENSE_BITS 8

/* Add acc's bits to count[0 .. 63], all 64 of which are there. */
static inline void bfi__count_bits(uint32_t *count, uint64_t acc)
{
	if (__builtin_popcountll(acc) >= BFI_DENSE_BITS) {
		bfi__count_word(count, acc);
		return;
	}
	for (; acc; acc &= acc - 1)
		count[__builtin_ctzll(acc)]++;
}

/* bfi__still_alive, where all 64 counts are there. */
static inline uint64_t bfi__still_alive64(uint64_t alive, const uint32_t *count, uint64_t left,
                                          uint32_t need)
{
	if (left >= need || __builtin_popcountll(alive) < BFI_DENSE_BITS)
		return bfi__still_alive(alive, count, left, need);
	return alive & ~bfi__count_below(count, (uint32_t)(need - left));
}

/* Answer e on ops's layout into res, which bfi__prepare reset (result.c). */
int bfi__answer(const bfi_snapshot *s, const struct bfi_layout_ops *ops, const struct bfi_expr *e,
                bfi_result *res);
/* Sets holding need of term list e's terms, with scores, unranked, on ops's layout (result.c). */
int bfi__threshold(const bfi_snapshot *s, const struct bfi_layout_ops *ops,
                   const struct bfi_expr *e, uint32_t need, bfi_result *res);
/* Rank res's answers: highest score first, then by ordinal; grows its own scratch. 0 or -ENOMEM. */
int bfi__rank(bfi_result *res);
/* Bytes results res[0..n) hold, answers and scratch (scan.c). */
uint64_t bfi__results_bytes(bfi_result *const *res, size_t n);
/* Can e be answered into res by bfi_query_expr (keys, not a term list)? 0 or BFI_E_INVALID. */
int bfi__check_query(const struct bfi_expr *e, const bfi_result *res);
/* bfi_query_keys one key at a time, each answered as bfi_query_expr answers it (result.c). */
int bfi__keys_each(const bfi_snapshot *s, const struct bfi_layout_ops *ops,
                   const bfi_keyhash *keys, size_t n, bfi_result *res, size_t *ends);

/* Through ops->conj (lists.c): bfi_query_expr's answer, and a threshold query's. */
int bfi__list_expr(const bfi_snapshot *s, const struct bfi_layout_ops *ops,
                   const struct bfi_expr *e, bfi_result *res);
int bfi__list_threshold(const bfi_snapshot *s, const struct bfi_layout_ops *ops,
                        const struct bfi_expr *e, uint32_t need, bfi_result *res);

#endif
