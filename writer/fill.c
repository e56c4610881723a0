/*
 * fill.c - a flat block built from its sets' own filters (spec/format.md,
 * "Flat section"). Each set's keys set its k bits in a filter of the
 * block's width, which for the widths bfi picks stays in cache while it
 * fills; 64 finished filters are then transposed into the block's rows a
 * 64 x 64 tile at a time (transpose.c). The rows and the pre-filter are
 * held in memory and written once, in order. The alternative, setting
 * each key's bits straight into the rows, touches a random line of the
 * whole block per bit.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bfi_hash.h"
#include "flat.h"
#include "sources.h"

/*
 * A set's filter being filled: m bits at filt, and the block's pre-filter;
 * shared: by several threads at once (one large file read on them,
 * split.c), so its bits are set with atomic ORs, which give the same
 * bytes in any order.
 */
struct fill_one {
	const struct plan *p;
	const struct bfi_block *b;
	uint64_t *filt;
	uint8_t *pre;
	int shared;
};

#define FILL_AHEAD 16 /* keys whose words are fetched before their bits are set */

/* OR bit into *w, atomically when other threads fill the same filter. */
static inline void or_word(uint64_t *w, uint64_t bit, int shared)
{
	if (shared)
		__atomic_fetch_or(w, bit, __ATOMIC_RELAXED);
	else
		*w |= bit;
}

static inline void or_byte(uint8_t *w, uint8_t bit, int shared)
{
	if (shared)
		__atomic_fetch_or(w, bit, __ATOMIC_RELAXED);
	else
		*w |= bit;
}

static int fill_keys(void *ctx, const bfi_keyhash *h, size_t n)
{
	const struct fill_one *f = ctx;
	const struct bfi_block *b = f->b;
	/* in locals: a store to filt may alias any of these, so the compiler would reload them */
	uint64_t m = b->m, pre_m = b->pre_m, *filt = f->filt;
	uint32_t k = f->p->k;
	int shared = f->shared;
	if (pre_m == 0) {
		/*
		 * The bits of FILL_AHEAD keys at a time: their words fetched
		 * first, then set, so that the misses of a filter larger than the
		 * cache overlap rather than follow one another (threads filling
		 * filters side by side share the cache, and theirs are missed).
		 */
		uint64_t rows[FILL_AHEAD * BFI_MAX_K];
		for (size_t x0 = 0; x0 < n; x0 += FILL_AHEAD) {
			size_t nx = n - x0 < FILL_AHEAD ? n - x0 : FILL_AHEAD, r = 0;
			for (size_t x = x0; x < x0 + nx; x++)
				for (uint32_t i = 0; i < k; i++) {
					rows[r] = bfi_reduce(bfi_hash_probe(h[x], i), m);
					__builtin_prefetch(&filt[rows[r] / 64], 1);
					r++;
				}
			for (size_t i = 0; i < r; i++)
				or_word(&filt[rows[i] / 64], UINT64_C(1) << (rows[i] % 64), shared);
		}
		return 0;
	}
	int line_pre = flat_of(f->p)->line_pre;
	uint8_t *pre = f->pre;
	for (size_t x = 0; x < n; x++) {
		uint64_t line = line_pre ? bfi_pre_line(bfi_hash_probe(h[x], 0), pre_m) : 0;
		for (uint32_t i = 0; i < k; i++) {
			uint64_t z = bfi_hash_probe(h[x], i), row = bfi_reduce(z, m);
			or_word(&filt[row / 64], UINT64_C(1) << (row % 64), shared);
			uint64_t pos = line_pre ? line + bfi_pre_bit(z) : bfi_reduce(z, pre_m);
			or_byte(&pre[pos / 8], (uint8_t)(1u << (pos % 8)), shared);
		}
	}
	return 0;
}

int prebuilt_into(bfi_writer *w, uint32_t ord, uint64_t m, uint64_t *filt)
{
	struct bfi_filter_stats fs;
	bfi_filter_stats(w->filt[ord], &fs);
	if (fs.m != m) /* the plan gives every filter its own width (--bits is m) */
		return writer_fail_shared(w, BFI_E_FILTER_MISMATCH, "a filter of %llu bits for rows of %llu",
		                          (unsigned long long)fs.m, (unsigned long long)m);
	const uint8_t *bits = bfi_filter_bits(w->filt[ord]);
	uint64_t bytes = (m + 7) / 8;
	for (uint64_t x = 0; x < bytes; x++)
		filt[x / 8] |= (uint64_t)bits[x] << (8 * (x % 8));
	return 0;
}

/* A filter's ones, counted in ONES_RUNS runs of its words on threads. */
#define ONES_RUNS 64u

struct ones_job {
	const uint64_t *filt;
	uint64_t words;
	uint64_t ones; /* atomic */
};

static int ones_run(void *ctx, uint64_t r, unsigned thread)
{
	struct ones_job *j = ctx;
	(void)thread;
	uint64_t w0 = j->words * r / ONES_RUNS, w1 = j->words * (r + 1) / ONES_RUNS;
	__atomic_fetch_add(&j->ones, filter_ones(j->filt + w0, w1 - w0), __ATOMIC_RELAXED);
	return 0;
}

/*
 * Set the k bits of every key of input set ord in filt (m bits), and in
 * the pre-filter, and count the filter's ones. Sets fewer than the
 * threads leave helpers threads (split.c) to each: its keys are then
 * read on them all at once, each setting the filter's bits with atomic
 * ORs, which give the same bytes in any order.
 */
static int fill_filter(bfi_writer *w, const struct plan *p, const struct bfi_block *b, uint32_t ord,
                       uint64_t *filt, uint8_t *pre, unsigned helpers, uint64_t *ones)
{
	uint64_t words = (b->m + 63) / 64;
	int rc;
	if (w->n_filt) { /* a prebuilt filter, as wide as the block (its m is --bits) */
		rc = prebuilt_into(w, ord, b->m, filt);
	} else if (helpers < 2) {
		struct fill_one f = {p, b, filt, pre, 0};
		rc = set_keys(w, ord, fill_keys, &f);
	} else {
		struct fill_one f = {p, b, filt, pre, 1};
		void **ctxs = malloc(helpers * sizeof *ctxs);
		if (ctxs == NULL)
			return writer_fail_shared(w, -ENOMEM, "%s", strerror(ENOMEM));
		for (unsigned t = 0; t < helpers; t++)
			ctxs[t] = &f;
		rc = set_keys_on(w, ord, helpers, fill_keys, ctxs);
		free(ctxs);
	}
	if (rc == 0 && helpers > 1) {
		struct ones_job oj = {filt, words, 0};
		rc = pool_run(helpers, ONES_RUNS, ones_run, &oj);
		*ones = oj.ones;
	} else if (rc == 0) {
		*ones = filter_ones(filt, words);
	}
	return rc;
}

/*
 * The filters of the up to 64 sets of block b from its set first on, at
 * filt (words 64-bit words each), their bits also set in pre; each set's
 * ones noted for the catalog. Returns how many sets, or an error.
 */
static int group_filters(bfi_writer *w, const struct plan *p, const struct bfi_block *b,
                         uint64_t first, uint64_t words, uint64_t *filt, uint8_t *pre,
                         unsigned helpers)
{
	uint32_t n = b->n_sets - first < 64 ? (uint32_t)(b->n_sets - first) : 64;
	memset(filt, 0, (size_t)(n * words * 8));
	for (uint32_t c = 0; c < n; c++) {
		uint64_t set = b->first_set + first + c, *f = filt + (uint64_t)c * words;
		int rc = fill_filter(w, p, b, p->old_of_new[set], f, pre, helpers, &p->ones[set]);
		if (rc)
			return rc;
	}
	return (int)n;
}

/* What the threads of one block share (fill_group, fill_set, transpose_group). */
struct fill_job {
	bfi_writer *w;
	const struct plan *p;
	const struct bfi_block *b;
	uint64_t words, rows_bytes, pre_bytes;
	uint8_t *out;     /* the rows, then the pre-filter */
	uint64_t **filt;  /* per thread: 64 filters */
	uint8_t **pre;    /* per thread: its own pre-filter, ORed into out's at the end */
	int shared_words; /* packed rows: a row word may hold two groups' columns */
	uint64_t *every;  /* or every set's filter at once (few groups: a set an item) */
	const struct rowmap *rm; /* where the block's rows go in out */
	unsigned helpers; /* threads each set is read on: more than one when sets are fewer than threads */
	uint64_t parts; /* transpose_group's runs a group: TRANSPOSE_PARTS, or more for fewer groups than threads */
};

/* Set s of the block into its place in every. */
static int fill_set(void *ctx, uint64_t s, unsigned thread)
{
	struct fill_job *j = ctx;
	const struct bfi_block *b = j->b;
	uint64_t set = b->first_set + s, *f = j->every + s * j->words;
	return fill_filter(j->w, j->p, b, j->p->old_of_new[set], f, j->pre[thread], j->helpers,
	                   &j->p->ones[set]);
}

/*
 * Part of group g's filters, filled by fill_set, into the rows: a group's
 * words in TRANSPOSE_PARTS runs, so that a few groups still share out
 * evenly (200 sets are 4 groups).
 */
#define TRANSPOSE_PARTS 8u

static int transpose_group(void *ctx, uint64_t item, unsigned thread)
{
	struct fill_job *j = ctx;
	const struct bfi_block *b = j->b;
	uint64_t g = item / j->parts, part = item % j->parts;
	uint32_t n = b->n_sets - g * 64 < 64 ? (uint32_t)(b->n_sets - g * 64) : 64;
	(void)thread;
	transpose_filters_part(j->every + g * 64 * j->words, j->words, n, b->m, j->out, j->rm,
	                       g * 64, j->shared_words, j->words * part / j->parts,
	                       j->words * (part + 1) / j->parts);
	return 0;
}

/* Group g of the block: its up to 64 sets' filters, transposed into the rows. */
static int fill_group(void *ctx, uint64_t g, unsigned thread)
{
	struct fill_job *j = ctx;
	const struct bfi_block *b = j->b;
	uint64_t first = g * 64, *filt = j->filt[thread];
	int n = group_filters(j->w, j->p, b, first, j->words, filt, j->pre[thread], j->helpers);
	if (n < 0)
		return n;
	transpose_filters(filt, j->words, (uint32_t)n, b->m, j->out, j->rm, first,
	                  j->shared_words);
	return 0;
}

static void *bg_run(void *arg)
{
	struct bg_write *g = arg;
	double t0 = stats_thread_cpu();
	g->rc = pwrite_all(g->fd, g->buf, g->len, g->off);
	free(g->buf);
	g->buf = NULL;
	g->cpu = stats_thread_cpu() - t0;
	return NULL;
}

uint64_t bg_held(const struct bg_write *g)
{
	return g->active ? g->len : 0;
}

int bg_wait(struct bg_write *g)
{
	if (!g->active)
		return 0;
	pthread_join(g->t, NULL);
	g->active = 0;
	if (stats_now)
		stats_now->side = (stats_now->side > g->start ? stats_now->side : g->start) + g->cpu;
	return g->rc;
}

int bg_start(struct bg_write *g, int fd, uint8_t *buf, size_t len, uint64_t off)
{
	int rc = bg_wait(g);
	if (rc) {
		free(buf);
		return rc;
	}
	*g = (struct bg_write){.fd = fd, .buf = buf, .len = len, .off = off, .start = stats_lane_now()};
	if (pthread_create(&g->t, NULL, bg_run, g) == 0) {
		g->active = 1;
		return 0;
	}
	rc = pwrite_all(fd, buf, len, off);
	free(buf);
	return rc;
}

int fill_block(bfi_writer *w, const struct plan *p, uint32_t bi, int fd, uint64_t sec_off,
               uint64_t budget, struct bg_write *bg, uint8_t *run)
{
	const struct bfi_block *b = &flat_of(p)->blocks[bi];
	struct fill_job j = {w,
	                     p,
	                     b,
	                     (b->m + 63) / 64,
	                     bfi_block_rows_bytes(b->m, b->row_bits),
	                     b->pre_m ? bfi_bits_bytes(b->pre_m) : 0,
	                     NULL,
	                     NULL,
	                     NULL,
	                     !bfi_rows_lined(b->row_bits),
	                     NULL,
	                     &flat_of(p)->rowmap[bi],
	                     1,
	                     TRANSPOSE_PARTS};
	/* a grouped run's block: into the run's rows, which the caller holds, writes and frees */
	uint64_t shared = run ? 0 : j.rows_bytes + j.pre_bytes;
	/* a thread's filters: a group's 64, or the block's sets when fewer */
	uint64_t filt_bytes = (b->n_sets < 64 ? b->n_sets : 64) * j.words * 8;
	uint64_t groups = (b->n_sets + 63) / 64;
	/* the rows and pre-filter lie together (pre_offset follows the rows); each
	 * thread has 64 filters and, past the first, its own pre-filter */
	if (shared > budget || shared > SIZE_MAX || filt_bytes > budget - shared)
		return 1;
	unsigned avail = pool_threads(w->opt.threads);
	unsigned threads = groups < avail ? (unsigned)groups : avail;
	while (threads > 1 && (filt_bytes + j.pre_bytes) * (threads - 1) > budget - shared - filt_bytes)
		threads--;
	/*
	 * Fewer groups than four a thread share out unevenly (200 sets: groups
	 * of 64, 64, 64 and 8), and fewer groups than threads leave threads
	 * idle: then, room allowing, every set's filter is filled at once, a
	 * set an item on as many threads as there are sets, and transposed
	 * after. The threads are counted for this way apart: capped at the
	 * groups, 160 sets would get 3.
	 */
	uint64_t every_bytes = (uint64_t)b->n_sets * j.words * 8;
	unsigned every_threads = b->n_sets < avail ? (unsigned)b->n_sets : avail;
	while (every_threads > 1 && (every_bytes > budget - shared ||
	                             j.pre_bytes * (every_threads - 1) > budget - shared - every_bytes))
		every_threads--;
	/* one set alone: its filter filled on helpers, and its transposition shared out */
	int one = b->n_sets == 1 && avail > 1 && every_bytes <= budget - shared;
	int every = (every_threads > 1 || one) && groups < 4 * (uint64_t)avail &&
	            every_threads > threads / 2;
	if (every)
		threads = every_threads;
	/* the threads the sets leave idle help read them */
	uint64_t items = every ? b->n_sets : groups;
	j.helpers = items < avail ? avail / threads : 1;
	/*
	 * A set alone has no next block for its rows' write to run beside: its
	 * rows are written in place in the output, by every thread at once,
	 * rather than after by one.
	 */
	uint8_t *mapped = NULL;
	int rc = one && !run ? out_map(fd, sec_off + b->rows_offset, (size_t)shared, &mapped) : 1;
	if (rc < 0)
		return rc;
	j.out = run ? run : mapped ? mapped : writer_zalloc((size_t)shared); /* ORed into */
	j.filt = calloc(threads, sizeof *j.filt);
	j.pre = calloc(threads, sizeof *j.pre);
	rc = j.out && j.filt && j.pre ? 0 : -ENOMEM;
	if (rc == 0 && every && (j.every = writer_zalloc_on((size_t)every_bytes, avail)) == NULL)
		rc = -ENOMEM;
	for (unsigned t = 0; rc == 0 && t < threads; t++) {
		j.filt[t] = every ? NULL : malloc((size_t)filt_bytes);
		j.pre[t] = t == 0 || !j.pre_bytes ? j.out + (j.pre_bytes ? j.rows_bytes : 0)
		                                  : calloc((size_t)j.pre_bytes, 1);
		if ((!every && j.filt[t] == NULL) || j.pre[t] == NULL)
			rc = -ENOMEM;
	}
	if (rc == 0 && every) {
		rc = pool_run(threads, b->n_sets, fill_set, &j);
		if (rc == 0) {
			/* no memory of its own: every thread, in runs enough for them to share evenly */
			if (groups * j.parts < 4 * (uint64_t)avail)
				j.parts = (4 * (uint64_t)avail + groups - 1) / groups;
			rc = pool_run(avail, groups * j.parts, transpose_group, &j);
		}
	} else if (rc == 0) {
		rc = pool_run(threads, groups, fill_group, &j);
	}
	for (unsigned t = 1; rc == 0 && j.pre_bytes && t < threads; t++)
		for (uint64_t x = 0; x < j.pre_bytes; x++)
			j.out[j.rows_bytes + x] |= j.pre[t][x];
	for (unsigned t = 0; j.filt && t < threads; t++) {
		free(j.filt[t]);
		if (t > 0 && j.pre_bytes && j.pre)
			free(j.pre[t]);
	}
	free(j.filt);
	free(j.pre);
	if (run) {
		free(j.every);
		return rc;
	}
	/* the rows handed to the write before every set's filters are unmapped: the two overlap */
	if (mapped) {
		out_unmap(mapped, (size_t)shared, sec_off + b->rows_offset);
		j.out = NULL;
	} else if (rc == 0 && bg) {
		rc = bg_start(bg, fd, j.out, (size_t)shared, sec_off + b->rows_offset);
		j.out = NULL;
	} else if (rc == 0) {
		rc = pwrite_all(fd, j.out, (size_t)shared, sec_off + b->rows_offset);
	}
	free(j.every);
	free(j.out);
	return rc;
}

/*
 * A block too large to hold: each group's 64 filters become a slice, the
 * group's 64 columns of every row (a 64-bit word a row), written to a
 * scratch file; rows are then assembled a stripe at a time from every
 * group's part of the stripe. Each byte of input and output is read or
 * written once or twice, whatever the budget, and one scratch file is
 * open.
 */
#define SLICE_CHUNK 8192u /* slice rows written at a time (64 KiB) */

struct slice_job {
	bfi_writer *w;
	const struct plan *p;
	const struct bfi_block *b;
	uint64_t words;
	int fd;          /* scratch: group g's slice at g * m * 8 */
	uint64_t **filt; /* per thread: 64 filters */
	uint64_t **chunk; /* per thread: SLICE_CHUNK rows of a slice */
	uint8_t **pre;   /* per thread: a pre-filter */
};

static int slice_group(void *ctx, uint64_t g, unsigned thread)
{
	struct slice_job *j = ctx;
	const struct bfi_block *b = j->b;
	uint64_t words = j->words, *filt = j->filt[thread], *chunk = j->chunk[thread];
	int n = group_filters(j->w, j->p, b, g * 64, words, filt, j->pre[thread], 1);
	if (n < 0)
		return n;
	uint64_t at = 0;
	for (uint64_t w = 0; w < words; w++) {
		transpose_slice(filt, words, (uint32_t)n, w, chunk + at);
		for (uint64_t x = at; x < at + 64; x++)
			chunk[x] = htole64(chunk[x]);
		at += 64;
		if (at == SLICE_CHUNK || w + 1 == words) {
			uint64_t row0 = (w + 1) * 64 - at, count = b->m - row0 < at ? b->m - row0 : at;
			int rc = pwrite_all(j->fd, chunk, (size_t)(count * 8), (g * b->m + row0) * 8);
			if (rc)
				return rc;
			at = 0;
		}
	}
	return 0;
}

/* Assemble the block's rows from the slices, a stripe of stripe_rows rows at a time. */
static int assemble(const struct slice_job *j, uint64_t stripe_rows, int fd, uint64_t sec_off)
{
	const struct bfi_block *b = j->b;
	uint64_t rb = b->row_bits, groups = (b->n_sets + 63) / 64;
	uint8_t *stripe = malloc((size_t)(stripe_rows * rb / 8 + 16));
	uint64_t *part = malloc((size_t)(stripe_rows * 8));
	int rc = stripe && part ? 0 : -ENOMEM;
	for (uint64_t r0 = 0; rc == 0 && r0 < b->m; r0 += stripe_rows) {
		uint64_t count = b->m - r0 < stripe_rows ? b->m - r0 : stripe_rows;
		uint64_t bytes = (count * rb + 7) / 8; /* r0 * rb is a multiple of 64 */
		memset(stripe, 0, (size_t)(bytes + 16));
		for (uint64_t g = 0; rc == 0 && g < groups; g++) {
			rc = pread_all(j->fd, part, (size_t)(count * 8), (g * b->m + r0) * 8);
			if (rc == 0)
				slice_into_rows(part, count, stripe, rb, g * 64);
		}
		if (rc == 0)
			rc = pwrite_all(fd, stripe, (size_t)bytes, sec_off + b->rows_offset + r0 * rb / 8);
	}
	free(stripe);
	free(part);
	return rc;
}

int fill_block_sliced(bfi_writer *w, const struct plan *p, uint32_t bi, int fd, uint64_t sec_off,
                      uint64_t budget)
{
	const struct bfi_block *b = &flat_of(p)->blocks[bi];
	struct slice_job j = {w, p, b, (b->m + 63) / 64, -1, NULL, NULL, NULL};
	uint64_t pre_bytes = b->pre_m ? bfi_bits_bytes(b->pre_m) : 0;
	uint64_t thread_bytes = 64 * j.words * 8 + SLICE_CHUNK * 8, groups = (b->n_sets + 63) / 64;
	/* a stripe of 64 rows and its parts at the least; one thread's filters and the pre-filter */
	if (64 * (b->row_bits / 8 + 8) + 16 > budget || pre_bytes > budget ||
	    thread_bytes > budget - pre_bytes)
		return 1;
	unsigned threads = pool_threads(w->opt.threads);
	threads = groups < threads ? (unsigned)groups : threads;
	while (threads > 1 && (thread_bytes + pre_bytes) * threads > budget)
		threads--;
	j.fd = scratch_open(w->spool.dir, "slices"); /* lives only as long as this block's fill */
	if (j.fd < 0)
		return j.fd;
	j.filt = calloc(threads, sizeof *j.filt);
	j.chunk = calloc(threads, sizeof *j.chunk);
	j.pre = calloc(threads, sizeof *j.pre);
	int rc = j.filt && j.chunk && j.pre ? 0 : -ENOMEM;
	for (unsigned t = 0; rc == 0 && t < threads; t++) {
		j.filt[t] = malloc((size_t)(64 * j.words * 8));
		j.chunk[t] = malloc(SLICE_CHUNK * 8);
		j.pre[t] = pre_bytes ? calloc((size_t)pre_bytes, 1) : NULL;
		if (!j.filt[t] || !j.chunk[t] || (pre_bytes && !j.pre[t]))
			rc = -ENOMEM;
	}
	if (rc == 0)
		rc = pool_run(threads, groups, slice_group, &j);
	for (unsigned t = 1; rc == 0 && pre_bytes && t < threads; t++)
		for (uint64_t x = 0; x < pre_bytes; x++)
			j.pre[0][x] |= j.pre[t][x];
	if (rc == 0 && pre_bytes)
		rc = pwrite_all(fd, j.pre[0], (size_t)pre_bytes, sec_off + b->pre_offset);
	for (unsigned t = 0; j.filt && j.chunk && j.pre && t < threads; t++) {
		free(j.filt[t]);
		free(j.chunk[t]);
		free(j.pre[t]);
	}
	free(j.filt);
	free(j.chunk);
	free(j.pre);
	/* stripes of whole 64-row steps, so each starts on a 64-bit boundary of the rows */
	uint64_t stripe_rows = budget / (b->row_bits / 8 + 8 + 1) / 64 * 64;
	if (rc == 0)
		rc = assemble(&j, stripe_rows < 64 ? 64 : stripe_rows, fd, sec_off);
	close(j.fd);
	return rc;
}
