/*
 * pipe.c - the flat layout's pipeline over blocks of short rows: batches
 * of queries, bare keys (bfi_query_keys) and a threshold query's terms.
 *
 * A query of one key on a row of a few lines is a handful of cache misses
 * and little work; asked one after another, a batch's misses would each
 * wait in turn, and every instruction of the loop adds to the time. So
 * there is one pass a block, in one loop (pipeline), in
 * which each item (a query, a key, a term) has three stages:
 *   - ask: if the block has a pre-filter, ask for the line of it that the
 *     item's key tests (STAGE_AHEAD steps before locate);
 *   - locate: hash the key, test the pre-filter, locate the k rows in a
 *     slot of a small ring on the stack and ask for every line of them;
 *   - answer: STAGE_AHEAD steps later, when the lines have arrived, AND
 *     the slot's rows and append the sets left.
 * The loop is written once and built, always inlined, for each job (what
 * an item is and where its answer goes) and each kernel: AVX2 with the
 * line AND inlined (line.h), AVX2 for one block of one-line rows without
 * a pre-filter (line), and portable. A call per item (to locate, or to
 * the kernel) would cost a batch more than the work it calls, which is
 * why nothing here is one.
 */
#include <errno.h>
#include <stdlib.h>

#include "flat.h"

#define STAGE_AHEAD 16   /* steps from locating an item to answering it */
#define RING 32          /* > STAGE_AHEAD: row sets in flight */
#define ANSWERS_FIRST 64 /* a batch's result holds this many sets before it grows */

/* The k rows of an item in one block, located and asked for. */
struct slot {
	const uint8_t *rows[BFI_MAX_K]; /* packed rows: the byte of each row's first bit */
	uint8_t shift[BFI_MAX_K];       /* packed rows: that bit within its byte */
	int state; /* -1: not one key (answered by the block engine); 0: not in the block; 1: located */
};

/* Which key each answer of block-by-block passes belongs to. */
struct key_tags {
	size_t *key;
	size_t cap;
};

enum job {
	JOB_QUERIES, /* a batch of expressions, each into its own result */
	JOB_KEYS,    /* bare key hashes, all into one result, closed by ends or tagged */
	JOB_TERMS,   /* a threshold query's terms, counted per set of one block */
};

/* One run of the pipeline over blocks [0, nb) (one block for JOB_TERMS). */
struct pipe {
	const bfi_snapshot *s;
	const struct bfi_rblock *blocks;
	uint32_t nb, k;
	size_t n;                               /* items */
	const struct bfi_expr *const *qs;       /* JOB_QUERIES: the queries */
	bfi_result *const *res;                 /*   and their results */
	const bfi_keyhash *keys;                /* JOB_KEYS: the keys */
	const uint64_t *zt;                     /* the items' k probes each, or NULL: hashed here */
	bfi_result *out;                        /* JOB_KEYS, JOB_TERMS: the one result */
	size_t *ends;                           /* JOB_KEYS, one block: where key i's sets end */
	struct key_tags *tags;                  /* JOB_KEYS, several blocks: each answer's key */
	uint32_t *hits;                         /* JOB_TERMS: one term's sets */
	bfi_and_fn and_rows;
};

/*
 * Locate row r of block b as slot's row i and ask for its first line
 * (line: the caller knows b has no pre-filter and rows of one line).
 */
static inline __attribute__((always_inline)) void
place(const struct bfi_rblock *b, struct slot *slot, uint32_t i, uint64_t r, uint64_t row_bytes,
      int line)
{
	if (!line && b->packed) {
		uint64_t bit = bfi__row_bit(b, r);
		slot->rows[i] = b->rows + bit / 8;
		slot->shift[i] = (uint8_t)(bit % 8);
		/* a packed row may end on the next line */
		bfi__prefetch(slot->rows[i] + (b->n + 7) / 8);
	} else {
		slot->rows[i] = b->rows + r * row_bytes;
	}
	bfi__prefetch(slot->rows[i]);
}

/*
 * Key h in block b: test the pre-filter (counting its bytes in r) and, if
 * it may hold the key, locate its k rows in slot and ask for every line
 * of them (slot->state 1, else 0). z holds the key's probes, or is NULL
 * to hash them here: a block without a pre-filter hashes, locates and
 * asks in one loop.
 */
static inline __attribute__((always_inline)) void
locate(const struct bfi_rblock *b, bfi_keyhash h, const uint64_t *z, uint32_t k, bfi_result *r,
       struct slot *slot, int line)
{
	uint64_t zbuf[BFI_MAX_K];
	slot->state = 1;
	if (z == NULL && (line || b->pre == NULL)) {
		/* probe i mixes h1 + i * (h2 | 1) (bfi_hash_probe): one add a probe */
		uint64_t x = h.h1, step = h.h2 | 1, m = b->m, row_bytes = line ? 64 : b->row_bytes;
		for (uint32_t i = 0; i < k; i++, x += step)
			place(b, slot, i, bfi_reduce(bfi_hash_mix(x), m), row_bytes, line);
	} else {
		for (uint32_t i = 0; z == NULL && i < k; i++)
			zbuf[i] = bfi_hash_probe(h, i);
		z = z ? z : zbuf;
		slot->state = bfi__pre_pass(b, z, k, r);
		if (slot->state == 0)
			return;
		for (uint32_t i = 0; i < k; i++)
			place(b, slot, i, bfi_reduce(z[i], b->m), b->row_bytes, 0);
	}
	for (uint64_t at = 64; !line && at < b->row_bytes; at += 64) /* at most BFI_SHORT_ROW / 64 lines */
		for (uint32_t i = 0; i < k; i++)
			bfi__prefetch(slot->rows[i] + at);
}

/*
 * The words of the last line of block b's rows that may hold sets
 * (bfi__line_mask): the whole row's, for rows of one line.
 */
static void last_line_mask(const struct bfi_rblock *b, uint64_t mask[BFI_LINE_WORDS])
{
	uint64_t before = b->row_bytes > 64 ? (b->row_bytes / 64 - 1) * 512 : 0; /* sets */
	bfi__line_mask(b->n > before ? (uint32_t)(b->n - before) : 0, mask);
}

/*
 * Packed rows, where their lines have arrived: ANDed a 64-bit word at a
 * time as each row's word is shifted out, in registers, not copied out to
 * whole lines first. A call of its own: inlined into the pipeline, which
 * holds many values live, its inner loop spilled registers to the stack.
 */
__attribute__((noinline)) static size_t and_packed(const struct slot *slot, uint32_t k,
                                                   const struct bfi_rblock *b, uint32_t base,
                                                   uint32_t *out, size_t n)
{
	const uint8_t *const *rows = slot->rows;
	size_t words = (b->n + 63) / 64;
	for (size_t w = 0; w < words; w++) {
		uint64_t acc = ~UINT64_C(0);
		for (uint32_t i = 0; i < k; i++)
			acc &= bfi__packed_word(rows[i] + 8 * w, slot->shift[i]);
		if (w + 1 == words && b->n % 64)
			acc &= (UINT64_C(1) << (b->n % 64)) - 1;
		for (; acc; acc &= acc - 1)
			out[n++] = base + (uint32_t)(w * 64) + (uint32_t)__builtin_ctzll(acc);
	}
	return n;
}

/*
 * AND a slot's k rows of block b and append the sets left to out from n,
 * numbered from base (b->first, or 0 for the block's own numbers). last:
 * last_line_mask(b).
 */
static inline __attribute__((always_inline)) size_t
and_slot(const struct slot *slot, uint32_t k, const struct bfi_rblock *b, uint32_t base,
         const uint64_t *last, uint32_t *out, size_t n, uint64_t *touched, bfi_and_fn and_rows,
         int avx2, int line)
{
	const uint8_t *const *rows = slot->rows;
#if defined(__x86_64__) && BFI_HAVE_AVX2
	if (line && touched == NULL) /* the line's AND itself, inlined here */
		return bfi__and_line_avx2(rows, k, 0, base, last, out, n);
#endif
	if (b->packed && touched == NULL)
		return and_packed(slot, k, b, base, out, n);
	/* packed rows, counting bytes: copied out to whole lines */
	_Alignas(64) uint8_t lines[BFI_MAX_K * BFI_SHORT_ROW];
	const uint8_t *copied[BFI_MAX_K];
	if (b->packed) {
		for (uint32_t i = 0; i < k; i++) {
			copied[i] = lines + i * b->row_bytes;
			bfi__unpack_row(slot->rows[i], slot->shift[i], b->n,
			                (uint64_t *)(void *)(lines + i * b->row_bytes), b->row_bytes);
		}
		rows = copied;
	}
#if defined(__x86_64__) && BFI_HAVE_AVX2
	if (avx2 && touched == NULL && b->row_bytes == 64)
		return bfi__and_line_avx2(rows, k, 0, base, last, out, n);
	if (avx2 && touched == NULL)
		return bfi__and_short_all_avx2(rows, k, b->row_bytes, base, last, out, n);
	if (avx2)
		return bfi__and_short_avx2(rows, k, b->row_bytes, base, b->n, out, n, touched);
#endif
	(void)avx2;
	(void)last;
	return n + and_rows(rows, k, b->row_bytes / 8, base, b->n, out + n, touched);
}

/*
 * Key t's sets are res's from before on: close them in ends, or, with
 * tags, tag each with t. 0 or -ENOMEM.
 */
static inline __attribute__((always_inline)) int
key_answered(bfi_result *res, size_t before, size_t t, size_t *ends, struct key_tags *tags)
{
	if (tags == NULL) {
		ends[t] = res->n;
		return 0;
	}
	if (tags->cap < res->cap && bfi__grow(&tags->key, &tags->cap, res->cap, sizeof *tags->key))
		return -ENOMEM;
	for (size_t x = before; x < res->n; x++)
		tags->key[x] = t;
	return 0;
}

/* Stage ask: item i's line of block b's pre-filter. */
static inline __attribute__((always_inline)) void
stage_ask(const struct pipe *p, const struct bfi_rblock *b, uint32_t bi, size_t i, int job,
          int table)
{
	uint32_t k = p->k;
	const uint64_t *zt = table ? p->zt : NULL;
	if (job == JOB_QUERIES) {
		const struct bfi_expr *e = p->qs[i];
		if (e != NULL && e->single) /* from block 1 on, its probes are in the table */
			bfi__prefetch(bfi__pre_line_of(b, zt && bi ? zt[i * k]
			                                         : bfi_hash_probe(e->keys[0], 0)));
		return;
	}
	bfi__prefetch(bfi__pre_line_of(b, zt ? zt[i * k] : bfi_hash_probe(p->keys[i], 0)));
}

/*
 * Query i of a batch, in its first block: checked, its result reset, and
 * a one-key query's probes hashed into zq (its row of the table, or NULL
 * when there is none), kept for the other blocks.
 */
static inline __attribute__((always_inline)) int query_begin(const struct pipe *p, size_t i,
                                                               uint64_t *zq)
{
	const struct bfi_expr *e = p->qs[i];
	bfi_result *r = p->res[i];
	int rc = bfi__check_query(e, r);
	if (rc == 0 && e->single) {
		/* the answer array grows by blocks (at the answer), not to every
		 * set of the snapshot in each of a batch's results */
		bfi__reset_result(r, 0);
		rc = bfi__room(r, ANSWERS_FIRST);
	} else if (rc == 0) {
		rc = bfi__flat_prepare(p->s, e, r, 0);
	}
	for (uint32_t j = 0; rc == 0 && zq && e->single && j < p->k; j++)
		zq[j] = bfi_hash_probe(e->keys[0], j);
	return rc;
}

/*
 * Stage locate: item i's rows in block b. For queries, in block 0, check
 * the query and reset its result first; its probes, if there is a table,
 * are hashed there and kept for the other blocks.
 */
static inline __attribute__((always_inline)) int
stage_locate(const struct pipe *p, const struct bfi_rblock *b, uint32_t bi, size_t i,
             struct slot *slot, int job, int line, int table)
{
	uint32_t k = p->k;
	const bfi_keyhash none = {0, 0}; /* locate hashes nothing when given probes */
	uint64_t *zq = table ? (uint64_t *)p->zt + i * k : NULL;
	if (job != JOB_QUERIES) {
		locate(b, zq ? none : p->keys[i], zq, k, p->out, slot, line);
		return 0;
	}
	const struct bfi_expr *e = p->qs[i];
	if (bi == 0) {
		int rc = query_begin(p, i, zq);
		if (rc)
			return rc;
	}
	slot->state = -1;
	if (!e->single)
		return 0;
	locate(b, e->keys[0], zq, k, p->res[i], slot, line);
	return 0;
}

/* Stage answer: AND item t's rows in block b and put its sets where they go. */
static inline __attribute__((always_inline)) int
stage_answer(const struct pipe *p, const struct bfi_rblock *b, size_t t, const struct slot *slot,
             const uint64_t *mask, int job, int avx2, int line, int table)
{
	uint32_t k = p->k;
	if (job == JOB_TERMS) {
		if (slot->state == 0)
			return 0;
		uint64_t *touched = p->out->count_bytes ? &p->out->touched : NULL;
		/* hits are the block's own set numbers, from 0 */
		size_t h = and_slot(slot, k, b, 0, mask, p->hits, 0, touched, p->and_rows, avx2, line);
		for (size_t j = 0; j < h; j++)
			p->out->counts[p->hits[j]]++;
		return 0;
	}
	bfi_result *r = job == JOB_KEYS ? p->out : p->res[t];
	size_t before = r->n;
	if (job == JOB_QUERIES && slot->state < 0) {
		bfi__flat_block(p->s, p->qs[t], b, r, p->and_rows);
	} else if (slot->state > 0) {
		if (bfi__room(r, b->n))
			return -ENOMEM;
		/* keys on one-line rows come here only with bytes not counted (line_job) */
		uint64_t *touched = r->count_bytes && !(job == JOB_KEYS && line) ? &r->touched : NULL;
		r->n = and_slot(slot, k, b, b->first, mask, r->ords, r->n, touched, p->and_rows, avx2,
		                line);
	}
	return job == JOB_KEYS ? key_answered(r, before, t, p->ends, table ? p->tags : NULL) : 0;
}

#define RUN_AHEAD 8 /* keys whose lines are asked for before a grouped run answers them */

/* Does any query of the batch count the bytes it reads? Runs do not count them. */
static int counting(const struct pipe *p)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->res[i]->count_bytes)
			return 1;
	return 0;
}

/*
 * Bare keys over a grouped run (group.c): each key's sets in all the
 * run's blocks from its k lines, the lines of the key RUN_AHEAD on asked
 * for first; its answers closed, or tagged, as the pipeline's are.
 */
static int run_keys(const struct pipe *p, const struct bfi_rblock *b0, int table)
{
	bfi_result *r = p->out;
	uint32_t sets = bfi__run_sets(b0), k = p->k;
	uint64_t zbuf[BFI_MAX_K];
	for (size_t i = 0; table && i < p->n && i < RUN_AHEAD; i++)
		bfi__group_ask(b0, p->zt + i * k, k);
	for (size_t i = 0; i < p->n; i++) {
		if (table && i + RUN_AHEAD < p->n)
			bfi__group_ask(b0, p->zt + (i + RUN_AHEAD) * k, k);
		const uint64_t *z = table ? p->zt + i * k : zbuf;
		for (uint32_t j = 0; !table && j < k; j++)
			zbuf[j] = bfi_hash_probe(p->keys[i], j);
		if (!table) /* its k lines at once, before the probes are read one by one */
			bfi__group_ask(b0, z, k);
		size_t before = r->n;
		int rc = bfi__room(r, sets);
		if (rc == 0) {
			r->n += bfi__group_key(b0, z, k, r->ords + r->n);
			rc = key_answered(r, before, i, p->ends, table ? p->tags : NULL);
		}
		if (rc)
			return rc;
	}
	return 0;
}

/*
 * A batch of queries over a grouped run: a one-key query's sets in all
 * the run's blocks from its k lines; any other query block by block. If
 * the run is the first block (first), each query begins here
 * (query_begin), as stage_locate begins it in block 0.
 */
static int run_queries(const struct pipe *p, const struct bfi_rblock *b0, int first)
{
	uint32_t sets = bfi__run_sets(b0), k = p->k;
	for (size_t i = 0; first && i < p->n; i++) {
		int rc = query_begin(p, i, (uint64_t *)p->zt + i * k);
		if (rc)
			return rc;
	}
	for (size_t i = 0; i < p->n && i < RUN_AHEAD; i++)
		if (p->qs[i]->single)
			bfi__group_ask(b0, p->zt + i * k, k);
	for (size_t i = 0; i < p->n; i++) {
		if (i + RUN_AHEAD < p->n && p->qs[i + RUN_AHEAD]->single)
			bfi__group_ask(b0, p->zt + (i + RUN_AHEAD) * k, k);
		const struct bfi_expr *e = p->qs[i];
		bfi_result *r = p->res[i];
		if (!e->single) {
			for (uint32_t x = 0; x < b0->run_n; x++)
				bfi__flat_block(p->s, e, &b0[x], r, p->and_rows);
			continue;
		}
		if (bfi__room(r, sets))
			return -ENOMEM;
		r->n += bfi__group_key(b0, p->zt + i * k, k, r->ords + r->n);
	}
	return 0;
}

/*
 * The pipeline, block after block: step i asks for item i, locates item
 * i - a (a: STAGE_AHEAD if the block has a pre-filter, else 0) and
 * answers item i - a - STAGE_AHEAD.
 */
static inline __attribute__((always_inline)) int
pipeline(const struct pipe *run, int job, int avx2, int line, int table)
{
	/* a copy the loop keeps in registers: its answers' stores cannot change it */
	const struct pipe here = *run, *p = &here;
	struct slot ring[RING];
	const size_t n = p->n, d = STAGE_AHEAD;
	int rc = 0;
	for (uint32_t bi = 0; bi < p->nb && rc == 0; bi++) {
		const struct bfi_rblock *b = &p->blocks[bi];
		if (job == JOB_KEYS && !p->out->count_bytes && bfi__group_fast(b)) {
			rc = run_keys(p, b, table); /* a grouped run, its blocks at once */
			bi += b->run_n - 1;
			continue;
		}
		/* queries, bytes not counted */
		if (job == JOB_QUERIES && table && bfi__group_fast(b) && !counting(p)) {
			rc = run_queries(p, b, bi == 0);
			bi += b->run_n - 1;
			continue;
		}
		const size_t a = !line && b->pre ? STAGE_AHEAD : 0;
		uint64_t mask[BFI_LINE_WORDS];
		last_line_mask(b, mask);
		for (size_t i = 0; i < n + a + d && rc == 0; i++) {
			if (a && i < n)
				stage_ask(p, b, bi, i, job, table);
			if (i >= a && i - a < n)
				rc = stage_locate(p, b, bi, i - a, &ring[(i - a) % RING], job, line, table);
			if (rc == 0 && i >= a + d && i - a - d < n)
				rc = stage_answer(p, b, i - a - d, &ring[(i - a - d) % RING], mask, job, avx2,
				                  line, table);
		}
	}
	return rc;
}

/*
 * One block, without a pre-filter, of one-line rows (at most 512 sets),
 * bytes not counted: the AVX2 build with nothing left to decide per item.
 */
static int line_job(const struct pipe *p, int job)
{
	const struct bfi_rblock *b = &p->blocks[0];
	const bfi_result *r = job == JOB_QUERIES ? NULL : p->out;
	return p->nb == 1 && b->pre == NULL && b->row_bytes == 64 && !b->packed &&
	       (r == NULL || !r->count_bytes);
}

#if defined(__x86_64__) && BFI_HAVE_AVX2
__attribute__((target("avx2,bmi"))) static int run_avx2(const struct pipe *p, int job)
{
	if (job != JOB_TERMS && line_job(p, job))
		return job == JOB_QUERIES ? pipeline(p, JOB_QUERIES, 1, 1, 0)
		                          : pipeline(p, JOB_KEYS, 1, 1, 0);
	switch (job) {
	case JOB_QUERIES:
		return p->zt ? pipeline(p, JOB_QUERIES, 1, 0, 1) : pipeline(p, JOB_QUERIES, 1, 0, 0);
	case JOB_KEYS:
		return p->zt ? pipeline(p, JOB_KEYS, 1, 0, 1) : pipeline(p, JOB_KEYS, 1, 0, 0);
	default:
		return pipeline(p, JOB_TERMS, 1, 0, 1);
	}
}
#endif

/*
 * Run job, built for the kernel chosen, and with the probe table (and for
 * keys the tags) or without them, so that a single block's loop carries
 * no checks for them.
 */
static int run(const struct pipe *p, int job)
{
#if defined(__x86_64__) && BFI_HAVE_AVX2
	if (p->and_rows == bfi__and_rows_avx2)
		return run_avx2(p, job);
#endif
	switch (job) {
	case JOB_QUERIES:
		return p->zt ? pipeline(p, JOB_QUERIES, 0, 0, 1) : pipeline(p, JOB_QUERIES, 0, 0, 0);
	case JOB_KEYS:
		return p->zt ? pipeline(p, JOB_KEYS, 0, 0, 1) : pipeline(p, JOB_KEYS, 0, 0, 0);
	default:
		return pipeline(p, JOB_TERMS, 0, 0, 1);
	}
}

/* The items' k probes each, hashed once for every block rather than once a block. */
static uint64_t *probe_table(size_t n, uint32_t k)
{
	return n && n <= SIZE_MAX / k / sizeof(uint64_t) ? malloc(n * k * sizeof(uint64_t)) : NULL;
}

int bfi__pipe_batch(const bfi_snapshot *s, const struct bfi_expr *const *qs, size_t n,
                    bfi_result *const *res)
{
	const struct bfi_flat *f = bfi__flat(s);
	struct pipe p = {.s = s, .blocks = f->blocks, .nb = f->n_blocks, .k = f->k, .n = n,
	                 .qs = qs, .res = res, .and_rows = bfi__and_rows()};
	uint64_t *zt = f->n_blocks > 1 ? probe_table(n, f->k) : NULL;
	if (f->n_blocks > 1 && n && zt == NULL)
		return -ENOMEM;
	p.zt = zt;
	int rc = run(&p, JOB_QUERIES);
	free(zt);
	return rc;
}

/*
 * Several blocks: each block's pass appends its answers tagged with their
 * keys, and a counting sort by key then puts every key's sets together,
 * in block order.
 */
static int keys_by_block(struct pipe *p, size_t *ends)
{
	struct key_tags tags = {NULL, 0};
	size_t n = p->n;
	bfi_result *res = p->out;
	uint64_t *zt = probe_table(n, p->k);
	int rc = n && zt == NULL ? -ENOMEM : 0;
	for (size_t i = 0; i < n && rc == 0; i++)
		for (uint32_t j = 0; j < p->k; j++)
			zt[i * p->k + j] = bfi_hash_probe(p->keys[i], j);
	p->zt = zt;
	p->tags = &tags;
	if (rc == 0)
		rc = run(p, JOB_KEYS);
	free(zt);
	uint32_t *out = rc == 0 && res->n ? malloc(res->n * sizeof *out) : NULL;
	if (rc == 0 && res->n && out == NULL)
		rc = -ENOMEM;
	if (rc == 0 && n) { /* n == 0: ends may be NULL, and there is nothing to sort */
		memset(ends, 0, n * sizeof *ends);
		for (size_t x = 0; x < res->n; x++)
			ends[tags.key[x]]++;
		for (size_t i = 0, at = 0; i < n; i++) {
			size_t c = ends[i];
			ends[i] = at;
			at += c;
		}
		for (size_t x = 0; x < res->n; x++)
			out[ends[tags.key[x]]++] = res->ords[x];
		if (out) {
			free(res->ords);
			res->ords = out;
			res->cap = res->n;
		}
	}
	free(tags.key);
	return rc;
}

/*
 * Reading the keys from one array and writing the answers one after
 * another spares the batch of expressions and results the line of each
 * query's expression and of its result.
 */
int bfi__pipe_keys(const bfi_snapshot *s, const bfi_keyhash *keys, size_t n, bfi_result *res,
                   size_t *ends)
{
	const struct bfi_flat *f = bfi__flat(s);
	struct pipe p = {.s = s, .blocks = f->blocks, .nb = f->n_blocks, .k = f->k, .n = n,
	                 .keys = keys, .out = res, .ends = ends, .and_rows = bfi__and_rows()};
	return f->n_blocks > 1 ? keys_by_block(&p, ends) : run(&p, JOB_KEYS);
}

void bfi__pipe_terms(const struct bfi_rblock *b, const uint64_t *z, uint32_t terms, uint32_t k,
                     bfi_result *res, uint32_t *hits)
{
	struct pipe p = {.blocks = b, .nb = 1, .k = k, .n = terms, .zt = z, .out = res,
	                 .hits = hits, .and_rows = bfi__and_rows()};
	(void)run(&p, JOB_TERMS); /* terms allocate nothing: never an error */
}
