/*
 * split.c - one large FASTA or FASTQ file read on every thread.
 *
 * A set a file reads each file on one thread (sources.c), which leaves
 * the other cores idle when one file is most of the input: a raw
 * metagenome, or a genome collection in one FASTA. Such a file is read
 * here instead. The calling thread reads it (decompressing if need be)
 * and cuts the stream into parts at line starts (format/seqcut.h); the
 * threads parse, cut into k-mers and hash a part each, in rounds of as
 * many parts as threads, while the calling thread reads the next round.
 *
 * The first reading counts the set's distinct keys (and with --min-count
 * how often each occurs), which needs every occurrence of a key in one
 * place: each thread sorts its hashes by partition (bits of the hash the
 * tables do not index by), and after each round thread t counts partition
 * t's hashes from every thread in a table of its own (count.c), which
 * spills to a scratch file of its own when its share of --memory is full.
 * Each partition's keys then go to the set's summary or, with
 * --min-count, those seen often enough to the spool.
 *
 * The fill reads the file again the same way, each thread handing its
 * hashes to the filter; the filter sets its bits with atomic ORs, so the
 * bytes are the same whatever the threads, the parts or the order.
 *
 * Each part's parse and each partition's counting is the same work on
 * any thread, so the output never depends on the thread count, and the
 * first part in the file with an error is the one reported.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bfi_hash.h"
#include "count.h"
#include "internal.h"
#include "parts.h"
#include "sources.h"

/* ---- the first reading: the set's keys counted, partitioned by hash ---- */

/*
 * What each thread writes for every key lies in cache lines of its own:
 * two threads' counts in one line would pass it to and fro at every key.
 */
#define LINE 64

/* n zeroed items of size bytes (a multiple of LINE), at a line's start; free() frees them. */
static void *lines_calloc(size_t n, size_t size)
{
	if (n == 0 || size > SIZE_MAX / n)
		return NULL;
	void *p = aligned_alloc(LINE, n * size);
	if (p)
		memset(p, 0, n * size);
	return p;
}

struct hashes {
	_Alignas(LINE) bfi_keyhash *h;
	size_t n, cap;
};

struct reader {
	_Alignas(LINE) uint64_t keys, check;
	struct hashes *out; /* threads: this thread's hashes of each partition */
	unsigned threads;
};

/* A partition's counts, in lines of its own. */
struct part_count {
	_Alignas(LINE) struct counter c;
};

struct first {
	bfi_writer *w;
	const char *path;
	unsigned k, threads;
	uint32_t ord;
	int to_spool;        /* kept keys to the spool */
	int sums;            /* kept keys into the set's summary */
	struct held_keys *held; /* kept keys held for the fill, or NULL */
	struct part_count *cnt; /* threads: partition t's counts */
	struct reader *rd;   /* threads */
	uint64_t distinct, kept; /* atomic */
	uint8_t **hll, **all; /* per partition: the summary's sketches, or NULL */
	uint64_t **minhash;
};

static unsigned partition_of(bfi_keyhash h, unsigned n)
{
	/* h2's low half: the tables index by h1's top bits, which must stay spread */
	return (unsigned)(((h.h2 & 0xffffffffu) * (uint64_t)n) >> 32);
}

static int first_key(void *ctx, const char *key, size_t len)
{
	struct reader *rd = ctx;
	bfi_keyhash h = bfi_hash_key(key, len);
	rd->keys++;
	rd->check += h.h1;
	struct hashes *o = &rd->out[partition_of(h, rd->threads)];
	if (o->n == o->cap) {
		size_t cap = o->cap ? 2 * o->cap : 4096;
		bfi_keyhash *x = realloc(o->h, cap * sizeof *x);
		if (x == NULL)
			return -ENOMEM;
		o->h = x;
		o->cap = cap;
	}
	o->h[o->n++] = h;
	return 0;
}

static int first_work(void *ctx, unsigned t, struct part *p, char *err, size_t errlen)
{
	struct first *f = ctx;
	struct parse_to to = {f->k, first_key, &f->rd[t], writer_seq_keys(f->w)};
	int rc = parse(p, f->path, &to, err, errlen);
	if (rc == -ENOMEM && !err[0])
		snprintf(err, errlen, "%.200s: %s", f->path, strerror(ENOMEM));
	return rc;
}

/* Partition t's hashes from every thread into its table. */
static int first_count(void *ctx, unsigned t)
{
	struct first *f = ctx;
	int rc = 0;
	for (unsigned s = 0; s < f->threads; s++) {
		struct hashes *o = &f->rd[s].out[t];
		for (size_t i = 0; i < o->n && rc == 0; i++)
			rc = counter_add(&f->cnt[t].c, o->h[i]);
		o->n = 0;
	}
	return rc;
}

/* A partition's counted keys out: to the spool, a chunk at a time, or into its sketches. */
struct emit_to {
	struct first *f;
	unsigned part;
	uint64_t kept;
	size_t cap; /* of the held keys' array */
	struct rec chunk[1024];
	size_t n;
};

static int emit_key(void *ctx, bfi_keyhash h)
{
	struct emit_to *e = ctx;
	struct first *f = e->f;
	e->kept++;
	if (f->sums) {
		struct set_sums one = {.hll = f->hll ? f->hll[e->part] : NULL,
		                       .minhash = f->minhash ? f->minhash[e->part] : NULL};
		sums_add(&one, 0, h.h1, f->all ? f->all[e->part] : NULL);
	}
	if (f->held) {
		struct held_keys *k = f->held;
		if (k->n[e->part] == e->cap) {
			size_t cap = e->cap ? 2 * e->cap : 4096;
			bfi_keyhash *x = realloc(k->h[e->part], cap * sizeof *x);
			if (x == NULL)
				return -ENOMEM;
			k->h[e->part] = x;
			e->cap = cap;
		}
		k->h[e->part][k->n[e->part]++] = h;
		return 0;
	}
	if (!f->to_spool)
		return 0;
	e->chunk[e->n++] = (struct rec){h.h1, h.h2, f->ord, 0};
	if (e->n < sizeof e->chunk / sizeof *e->chunk)
		return 0;
	e->n = 0;
	return spool_add_many(&f->w->spool, e->chunk, sizeof e->chunk / sizeof *e->chunk);
}

static int first_emit(void *ctx, uint64_t part, unsigned thread)
{
	struct first *f = ctx;
	struct emit_to *e = malloc(sizeof *e);
	(void)thread;
	if (e == NULL)
		return -ENOMEM;
	e->f = f;
	e->part = (unsigned)part;
	e->n = 0;
	e->kept = 0;
	e->cap = 0;
	struct counter *c = &f->cnt[part].c;
	if (f->held && c->least <= 1) { /* every key is kept: its array at its size */
		e->cap = c->used ? c->used : 1;
		f->held->h[part] = malloc(e->cap * sizeof *f->held->h[part]);
		if (f->held->h[part] == NULL) {
			free(e);
			return -ENOMEM;
		}
	}
	int rc = counter_emit(c, emit_key, e);
	if (rc == 0 && e->n)
		rc = spool_add_many(&f->w->spool, e->chunk, e->n);
	__atomic_fetch_add(&f->distinct, c->distinct, __ATOMIC_RELAXED);
	__atomic_fetch_add(&f->kept, e->kept, __ATOMIC_RELAXED);
	counter_free(c); /* its memory back before the next partition's keys are held */
	free(e);
	return rc;
}

void held_free(struct held_keys *k)
{
	if (k == NULL)
		return;
	for (unsigned p = 0; p < k->parts; p++)
		free(k->h[p]);
	free(k->h);
	free(k->n);
	free(k);
}

static struct held_keys *held_new(unsigned parts)
{
	struct held_keys *k = calloc(1, sizeof *k);
	if (k == NULL)
		return NULL;
	k->parts = parts;
	k->h = calloc(parts, sizeof *k->h);
	k->n = calloc(parts, sizeof *k->n);
	if (k->h == NULL || k->n == NULL) {
		held_free(k);
		return NULL;
	}
	return k;
}

/*
 * Held keys, HELD_ITEM of a part an item (so that threads share them out
 * evenly whatever the parts), to the ctx of the thread taking them.
 */
#define HELD_ITEM (1u << 16)

struct held_run {
	const struct held_keys *k;
	int (*fn)(void *ctx, const bfi_keyhash *h, size_t n);
	void *const *ctxs;
	uint64_t *first; /* parts + 1: part p's first item */
};

static int held_item(void *ctx, uint64_t item, unsigned thread)
{
	const struct held_run *r = ctx;
	unsigned p = 0;
	while (r->first[p + 1] <= item)
		p++;
	size_t from = (size_t)(item - r->first[p]) * HELD_ITEM, n = r->k->n[p] - from;
	n = n < HELD_ITEM ? n : HELD_ITEM;
	int rc = 0;
	for (size_t i = from; i < from + n && rc == 0; i += 64)
		rc = r->fn(r->ctxs[thread], r->k->h[p] + i, from + n - i < 64 ? from + n - i : 64);
	return rc;
}

int held_keys_on(const struct held_keys *k, unsigned threads,
                 int (*fn)(void *ctx, const bfi_keyhash *h, size_t n), void *const *ctxs)
{
	struct held_run r = {k, fn, ctxs, calloc(k->parts + 1, sizeof *r.first)};
	if (r.first == NULL)
		return -ENOMEM;
	for (unsigned p = 0; p < k->parts; p++)
		r.first[p + 1] = r.first[p] + (k->n[p] + HELD_ITEM - 1) / HELD_ITEM;
	int rc = pool_run(threads, r.first[k->parts], held_item, &r);
	free(r.first);
	return rc;
}

int split_wanted(const bfi_writer *w, const char *file, uint64_t share)
{
	(void)w;
	struct stat st;
	if (file[0] == '\n' || stat(file, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	uint64_t size = (uint64_t)st.st_size;
	if (zin_suffix(file, strlen(file)))
		size *= 4;
	return size >= SPLIT_LEAST && size >= share;
}

/* The partitions' own sketches, for the set's summary: 0 or -ENOMEM. */
static int first_sketches(struct first *f)
{
	const struct set_sums *su = &f->w->sums;
	unsigned T = f->threads;
	f->hll = su->hll ? calloc(T, sizeof *f->hll) : NULL;
	f->minhash = su->minhash ? calloc(T, sizeof *f->minhash) : NULL;
	f->all = su->all ? calloc(T, sizeof *f->all) : NULL;
	if ((su->hll && !f->hll) || (su->minhash && !f->minhash) || (su->all && !f->all))
		return -ENOMEM;
	for (unsigned t = 0; t < T; t++) {
		if (f->hll && (f->hll[t] = calloc(1, SET_HLL_REGS)) == NULL)
			return -ENOMEM;
		if (f->all && (f->all[t] = calloc(1, HLL_REGS)) == NULL)
			return -ENOMEM;
		if (f->minhash && (f->minhash[t] = malloc(MINHASHES * sizeof **f->minhash)) == NULL)
			return -ENOMEM;
		if (f->minhash)
			memset(f->minhash[t], 0xff, MINHASHES * sizeof **f->minhash);
	}
	return 0;
}

/* The partitions' sketches into set ord's summary, and freed. */
static void first_sums_merge(struct first *f, int merge)
{
	struct set_sums *su = &f->w->sums;
	for (unsigned t = 0; t < f->threads; t++) {
		if (merge && f->hll)
			hll_merge(su->hll + (size_t)f->ord * SET_HLL_REGS, f->hll[t], SET_HLL_REGS);
		if (merge && f->all)
			hll_merge(su->all, f->all[t], HLL_REGS);
		for (int i = 0; merge && f->minhash && i < MINHASHES; i++) {
			uint64_t *m = su->minhash + (size_t)f->ord * MINHASHES;
			m[i] = f->minhash[t][i] < m[i] ? f->minhash[t][i] : m[i];
		}
		if (f->hll)
			free(f->hll[t]);
		if (f->all)
			free(f->all[t]);
		if (f->minhash)
			free(f->minhash[t]);
	}
	free(f->hll);
	free(f->all);
	free(f->minhash);
}

int split_first(bfi_writer *w, const char *path, uint32_t ord, unsigned k, unsigned threads,
                struct split_result *res, char *err, size_t errlen)
{
	uint32_t least = w->opt.min_count > 1 ? w->opt.min_count : 1;
	struct first f = {.w = w, .path = path, .k = k, .threads = threads, .ord = ord};
	memset(res, 0, sizeof *res);
	f.cnt = lines_calloc(threads, sizeof *f.cnt);
	f.rd = lines_calloc(threads, sizeof *f.rd);
	int rc = f.cnt && f.rd ? 0 : -ENOMEM;
	uint64_t most = writer_budget(w) / 4 / threads;
	for (unsigned t = 0; rc == 0 && t < threads; t++) {
		counter_init(&f.cnt[t].c, least, most, w->spool.dir);
		f.rd[t].threads = threads;
		if ((f.rd[t].out = lines_calloc(threads, sizeof *f.rd[t].out)) == NULL)
			rc = -ENOMEM;
	}
	if (rc)
		snprintf(err, errlen, "%.200s: %s", path, strerror(ENOMEM));
	struct cutting cu;
	int opened = 0;
	if (rc == 0) {
		rc = cutting_open(&cu, w, path, k, threads, err, errlen);
		opened = rc == 0;
	}
	if (rc == 0) {
		struct rounds r = {.threads = threads, .work = first_work, .after = first_count, .ctx = &f};
		rc = rounds_run(&r, &cu, err, errlen);
	}
	if (opened)
		cutting_close(&cu);
	for (unsigned t = 0; f.rd && t < threads; t++) {
		for (unsigned p = 0; f.rd[t].out && p < threads; p++)
			free(f.rd[t].out[p].h);
		free(f.rd[t].out);
	}
	/*
	 * Where the kept keys go: held for the fill when the counts stayed in
	 * memory, which is far less work than reading the file again, or
	 * sorting them in the spool; else to the spool when --min-count
	 * dropped some (or a layout reads every set's keys in one pass), or
	 * nowhere: the fill reads the file again.
	 */
	uint64_t spilled = 0;
	for (unsigned t = 0; f.cnt && t < threads; t++)
		spilled += f.cnt[t].c.spilled + f.cnt[t].c.used * (f.cnt[t].c.fd >= 0);
	if (rc == 0 && spilled == 0 && (f.held = held_new(threads)) == NULL)
		rc = -ENOMEM;
	f.to_spool = f.held == NULL && (least > 1 || !w->direct);
	f.sums = !f.to_spool;
	if (rc == 0 && f.sums && (rc = first_sketches(&f)) != 0)
		snprintf(err, errlen, "%.200s: %s", path, strerror(ENOMEM));
	if (rc == 0) {
		rc = pool_run(threads, threads, first_emit, &f);
		if (rc)
			snprintf(err, errlen, "%.100s: counting its keys in %.60s: %s", path, w->spool.dir,
			         bfi_strerror(rc));
	}
	for (unsigned t = 0; f.cnt && t < threads; t++)
		counter_free(&f.cnt[t].c);
	__atomic_fetch_add(&w->count_spilled, spilled * sizeof(struct count_rec), __ATOMIC_RELAXED);
	for (unsigned t = 0; f.rd && t < threads; t++) {
		res->keys += f.rd[t].keys;
		res->check += f.rd[t].check;
	}
	if (rc == 0 && least > 1 && w->sums.seen)
		w->sums.seen[ord] = f.distinct + 1;
	if (rc == 0 && f.sums)
		w->sums.distinct[ord] = f.kept;
	first_sums_merge(&f, rc == 0 && f.sums);
	if (rc == 0 && f.held) {
		for (unsigned p = 0; p < threads; p++)
			f.held->bytes += f.held->n[p] * sizeof **f.held->h;
		res->held = f.held;
	} else {
		held_free(f.held);
	}
	res->reread = rc == 0 && !f.held && !f.to_spool;
	free(f.cnt);
	free(f.rd);
	return rc;
}

/* ---- the fill: the file read again, every thread's hashes to fn ---- */

#define FILL_BATCH 64

struct filler {
	_Alignas(LINE) uint64_t keys, check;
	int (*fn)(void *ctx, const bfi_keyhash *h, size_t n);
	void *ctx;
	size_t n;
	bfi_keyhash h[FILL_BATCH];
};

struct again {
	const char *path;
	unsigned k;
	struct filler *fl; /* threads */
	writer_seq_fn keys_of;
};

static int again_key(void *ctx, const char *key, size_t len)
{
	struct filler *fl = ctx;
	bfi_keyhash h = bfi_hash_key(key, len);
	fl->keys++;
	fl->check += h.h1;
	fl->h[fl->n++] = h;
	if (fl->n < FILL_BATCH)
		return 0;
	fl->n = 0;
	return fl->fn(fl->ctx, fl->h, FILL_BATCH);
}

static int again_work(void *ctx, unsigned t, struct part *p, char *err, size_t errlen)
{
	struct again *a = ctx;
	struct filler *fl = &a->fl[t];
	struct parse_to to = {a->k, again_key, fl, a->keys_of};
	int rc = parse(p, a->path, &to, err, errlen);
	if (rc == 0 && fl->n) {
		rc = fl->fn(fl->ctx, fl->h, fl->n);
		fl->n = 0;
	}
	return rc;
}

int split_again(bfi_writer *w, const char *path, unsigned k, unsigned threads,
                int (*fn)(void *ctx, const bfi_keyhash *h, size_t n), void *const *ctxs,
                uint64_t *keys, uint64_t *check, char *err, size_t errlen)
{
	struct again a = {path, k, lines_calloc(threads, sizeof *a.fl), writer_seq_keys(w)};
	if (a.fl == NULL) {
		snprintf(err, errlen, "%.200s: %s", path, strerror(ENOMEM));
		return -ENOMEM;
	}
	for (unsigned t = 0; t < threads; t++) {
		a.fl[t].fn = fn;
		a.fl[t].ctx = ctxs[t];
	}
	struct cutting cu;
	int rc = cutting_open(&cu, w, path, k, threads, err, errlen);
	if (rc == 0) {
		struct rounds r = {.threads = threads, .work = again_work, .ctx = &a};
		rc = rounds_run(&r, &cu, err, errlen);
		cutting_close(&cu);
	}
	*keys = *check = 0;
	for (unsigned t = 0; t < threads; t++) {
		*keys += a.fl[t].keys;
		*check += a.fl[t].check;
	}
	free(a.fl);
	return rc;
}
