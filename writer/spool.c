/*
 * spool.c - sort and de-duplicate (ord, key hash) records in bounded
 * memory, read back set by set.
 *
 * Records go to a buffer. A full buffer is sorted (by set, then hash) and
 * appended to one spill file as a run, whose groups (one per set) are
 * noted. Reading back walks the sets in order and merges only the groups
 * of the set at hand: one group when the set's keys came in together,
 * which is the usual case, a few when they straddled a spill or were
 * interleaved with other sets' keys. So a spill costs one sequential write
 * and a read per pass, one file stays open however many runs there are,
 * and the merge's work per record does not grow with the number of runs.
 * Reading back can be repeated, which the row-stripe pass uses when the
 * rows do not fit in memory at once.
 */
#include <errno.h>
#include <stddef.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

#define PULL 256 /* records read from the spill file at a time, per group being merged */
#define SORT_THREAD_MIN 65536 /* records a buffer holds before its sets are sorted on threads */

static int rec_cmp(const struct rec *a, const struct rec *b)
{
	if (a->ord != b->ord)
		return a->ord < b->ord ? -1 : 1;
	if (a->h1 != b->h1)
		return a->h1 < b->h1 ? -1 : 1;
	if (a->h2 != b->h2)
		return a->h2 < b->h2 ? -1 : 1;
	return 0;
}

static int rec_qcmp(const void *a, const void *b)
{
	return rec_cmp(a, b);
}

static inline unsigned digit(const struct rec *x, int by_ord, unsigned shift)
{
	return (unsigned)((by_ord ? x->ord : x->h1) >> shift & 0xff);
}

/*
 * Sort r[0, n) in place, by ord (by_ord) or else by (h1, h2), from the
 * digit at shift down: MSD radix a byte at a time, each bucket permuted in
 * place (American flag sort), so no scratch memory; small runs by
 * insertion, and records of one h1 (a key repeated, most likely) by h2.
 */
static void radix_sort(struct rec *r, size_t n, int by_ord, unsigned shift)
{
	if (n < 48) {
		for (size_t i = 1; i < n; i++) {
			struct rec t = r[i];
			size_t j = i;
			for (; j > 0 && (by_ord ? r[j - 1].ord > t.ord : rec_cmp(&r[j - 1], &t) > 0); j--)
				r[j] = r[j - 1];
			r[j] = t;
		}
		return;
	}
	size_t count[256] = {0}, next[256], end[256];
	for (size_t i = 0; i < n; i++)
		count[digit(&r[i], by_ord, shift)]++;
	for (size_t d = 0, at = 0; d < 256; d++) {
		next[d] = at;
		at += count[d];
		end[d] = at;
	}
	if (count[digit(&r[0], by_ord, shift)] < n)
		for (unsigned d = 0; d < 256; d++)
			while (next[d] < end[d]) {
				struct rec x = r[next[d]];
				unsigned b;
				while ((b = digit(&x, by_ord, shift)) != d) {
					struct rec t = r[next[b]];
					r[next[b]++] = x;
					x = t;
				}
				r[next[d]++] = x;
			}
	for (size_t d = 0, a = 0; d < 256; a += count[d], d++) {
		if (count[d] < 2)
			continue;
		if (shift)
			radix_sort(r + a, count[d], by_ord, shift - 8);
		else if (!by_ord)
			qsort(r + a, count[d], sizeof *r, rec_qcmp);
	}
}

void recs_sort(struct rec *r, size_t n)
{
	radix_sort(r, n, 0, 56);
}

/* The sets of a buffer, sorted by hash one per item (pool_run). */
struct sort_job {
	struct rec *r;
	size_t *ends; /* set x's records end at ends[x] (and start at the end of x - 1) */
	size_t n_sets;
};

static int sort_set(void *ctx, uint64_t x, unsigned thread)
{
	struct sort_job *j = ctx;
	size_t a = x ? j->ends[x - 1] : 0;
	(void)thread;
	radix_sort(j->r + a, j->ends[x] - a, 0, 56);
	return 0;
}

/*
 * Sort the buffer by (ord, h1, h2) and drop repeats; returns the new
 * count. A stable counting pass by set (skipped when the records are in
 * set order already, as grouped input leaves them), then each set's
 * records by hash.
 */
static size_t sort_unique(struct spool *sp)
{
	struct rec *r = sp->buf;
	size_t n = sp->n;
	if (n == 0)
		return 0;
	int ordered = 1;
	for (size_t i = 1; i < n && ordered; i++)
		ordered = r[i - 1].ord <= r[i].ord;
	if (!ordered) /* input interleaved sets: group them */
		radix_sort(r, n, 1, 24);
	/* each set's records by hash, sets on as many threads as there are */
	struct sort_job job = {r, NULL, 0};
	for (size_t a = 0; a < n; job.n_sets++) {
		size_t e = a + 1;
		while (e < n && r[e].ord == r[a].ord)
			e++;
		a = e;
	}
	job.ends = malloc(job.n_sets * sizeof *job.ends);
	for (size_t a = 0, x = 0; job.ends && a < n; x++) {
		size_t e = a + 1;
		while (e < n && r[e].ord == r[a].ord)
			e++;
		job.ends[x] = e;
		a = e;
	}
	/* threads only for a buffer worth them: each costs a stack and, under ASan, much more */
	unsigned threads = n >= SORT_THREAD_MIN ? sp->threads : 1;
	if (job.ends == NULL || pool_run(threads, job.n_sets, sort_set, &job) != 0)
		for (size_t a = 0, e; a < n; a = e) { /* no room for the list: one set at a time */
			for (e = a + 1; e < n && r[e].ord == r[a].ord; e++)
				;
			radix_sort(r + a, e - a, 0, 56);
		}
	free(job.ends);
	size_t o = 1;
	for (size_t i = 1; i < n; i++)
		if (rec_cmp(&r[i], &r[o - 1]) != 0)
			r[o++] = r[i];
	return o;
}

int spool_init(struct spool *sp, size_t cap, unsigned threads)
{
	memset(sp, 0, sizeof *sp);
	pthread_mutex_init(&sp->lock, NULL);
	pthread_cond_init(&sp->idle, NULL);
	sp->threads = threads;
	sp->fd = -1;
	sp->cap = cap < 1024 ? 1024 : cap;
	/*
	 * Mapped, and in 2 MiB pages where the kernel allows: every record is
	 * written once into memory never touched before, and with 4 KiB pages
	 * the page faults would be a large part of a build.
	 */
	sp->buf_bytes = sp->cap * sizeof *sp->buf;
	void *m = mmap(NULL, sp->buf_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	sp->buf = m == MAP_FAILED ? NULL : m;
#ifdef MADV_HUGEPAGE
	if (sp->buf)
		(void)madvise(sp->buf, sp->buf_bytes, MADV_HUGEPAGE);
#endif
	if (sp->buf == NULL)
		return -ENOMEM;
	const char *t = getenv("TMPDIR");
	snprintf(sp->dir, sizeof sp->dir, "%s", t && *t ? t : "/tmp");
	return 0;
}

/* Note a group of n records of set ord at off in the spill file. */
static int add_group(struct spool *sp, uint32_t ord, uint64_t off, uint64_t n)
{
	if (sp->n_groups == sp->cap_groups) {
		size_t cap = sp->cap_groups ? 2 * sp->cap_groups : 256;
		struct spool_group *g = realloc(sp->groups, cap * sizeof *g);
		if (g == NULL)
			return -ENOMEM;
		sp->groups = g;
		sp->cap_groups = cap;
	}
	sp->groups[sp->n_groups++] = (struct spool_group){ord, off, n};
	return 0;
}

/* Append the sorted buffer to the spill file as one run. */
static int spill(struct spool *sp)
{
	if (sp->fd < 0 && (sp->fd = scratch_open(sp->dir, "spool")) < 0) {
		int rc = sp->fd;
		sp->fd = -1;
		return rc;
	}
	size_t n = sort_unique(sp);
	int rc = pwrite_all(sp->fd, sp->buf, n * sizeof *sp->buf, sp->spilled * sizeof *sp->buf);
	for (size_t a = 0; rc == 0 && a < n;) {
		size_t e = a + 1;
		while (e < n && sp->buf[e].ord == sp->buf[a].ord)
			e++;
		rc = add_group(sp, sp->buf[a].ord, sp->spilled + a, e - a);
		a = e;
	}
	sp->spilled += n;
	sp->n = 0;
	return rc;
}

int spool_add(struct spool *sp, const struct rec *r)
{
	if (sp->n == sp->cap) {
		int rc = spill(sp);
		if (rc)
			return rc;
	}
	sp->buf[sp->n++] = *r;
	sp->added++;
	return 0;
}

int spool_add_many(struct spool *sp, const struct rec *r, size_t n)
{
	int rc = 0;
	while (rc == 0 && n) {
		/*
		 * Reserve room under the lock and copy outside it, so that threads
		 * copy (and fault in the buffer's fresh pages) at once; a spill
		 * waits for the copies into the buffer to end.
		 */
		pthread_mutex_lock(&sp->lock);
		while (rc == 0 && sp->n == sp->cap) {
			if (sp->copying)
				pthread_cond_wait(&sp->idle, &sp->lock);
			else
				rc = spill(sp);
		}
		size_t at = sp->n, take = sp->cap - sp->n < n ? sp->cap - sp->n : n;
		if (rc == 0) {
			sp->n += take;
			sp->added += take;
			sp->copying++;
		}
		pthread_mutex_unlock(&sp->lock);
		if (rc)
			break;
		memcpy(sp->buf + at, r, take * sizeof *r);
		pthread_mutex_lock(&sp->lock);
		if (--sp->copying == 0)
			pthread_cond_broadcast(&sp->idle);
		pthread_mutex_unlock(&sp->lock);
		r += take;
		n -= take;
	}
	return rc;
}

static int group_cmp(const void *a, const void *b)
{
	const struct spool_group *x = a, *y = b;
	if (x->ord != y->ord)
		return x->ord < y->ord ? -1 : 1;
	return (x->off > y->off) - (x->off < y->off);
}

int spool_seal(struct spool *sp)
{
	sp->n = sort_unique(sp);
	/* the spilled groups by set, each set's in the order they were written */
	if (sp->n_groups > 1)
		qsort(sp->groups, sp->n_groups, sizeof *sp->groups, group_cmp);
	return 0;
}

int spool_release(struct spool *sp)
{
	if (sp->buf == NULL)
		return 0;
	int rc = sp->n ? spill(sp) : 0;
	if (rc)
		return rc;
	if (sp->n_groups > 1)
		qsort(sp->groups, sp->n_groups, sizeof *sp->groups, group_cmp);
	munmap(sp->buf, sp->buf_bytes);
	sp->buf = NULL;
	sp->buf_bytes = 0;
	sp->n = sp->cap = 0;
	return 0;
}

void spool_free(struct spool *sp)
{
	if (sp->fd >= 0)
		close(sp->fd);
	free(sp->groups);
	if (sp->buf)
		munmap(sp->buf, sp->buf_bytes);
	pthread_mutex_destroy(&sp->lock);
	pthread_cond_destroy(&sp->idle);
	memset(sp, 0, sizeof *sp);
	sp->fd = -1;
}

/*
 * One source of the set being merged: a spilled group (read PULL records
 * at a time) or the buffer's records of that set.
 */
struct spool_src {
	const struct rec *at, *end; /* records in hand */
	uint64_t off, left;         /* spilled: next record's index in the file, and how many remain */
	struct rec pull[PULL];
};

int spool_iter_begin(struct spool_iter *it, struct spool *sp)
{
	memset(it, 0, sizeof *it);
	it->sp = sp;
	return 0;
}

/* Records in hand for source s: 1, 0 when it is done, or -errno. */
static int refill(const struct spool *sp, struct spool_src *s)
{
	if (s->at < s->end)
		return 1;
	if (s->left == 0)
		return 0;
	size_t want = s->left < PULL ? (size_t)s->left : PULL;
	int rc = pread_all(sp->fd, s->pull, want * sizeof *s->pull, s->off * sizeof *s->pull);
	if (rc)
		return rc;
	s->at = s->pull;
	s->end = s->pull + want;
	s->off += want;
	s->left -= want;
	return 1;
}

static int open_set(struct spool_iter *it, uint32_t ord);

/* Gather the sources of the next set with records; 1, 0 at the end, or -errno. */
static int next_set(struct spool_iter *it)
{
	struct spool *sp = it->sp;
	uint32_t ord = UINT32_MAX;
	int any = 0;
	if (it->group < sp->n_groups) {
		ord = sp->groups[it->group].ord;
		any = 1;
	}
	if (it->pos < sp->n && (!any || sp->buf[it->pos].ord < ord)) {
		ord = sp->buf[it->pos].ord;
		any = 1;
	}
	if (!any)
		return 0;
	return open_set(it, ord);
}

/* Take set ord's groups from it->group and its buffered records from it->pos as the sources. */
static int open_set(struct spool_iter *it, uint32_t ord)
{
	struct spool *sp = it->sp;
	size_t g = it->group, ng = 0;
	while (g + ng < sp->n_groups && sp->groups[g + ng].ord == ord)
		ng++;
	int in_buf = it->pos < sp->n && sp->buf[it->pos].ord == ord;
	size_t want = ng + (size_t)in_buf;
	if (want > it->cap_srcs) {
		struct spool_src *s = realloc(it->srcs, want * sizeof *s);
		if (s == NULL)
			return -ENOMEM;
		it->srcs = s;
		it->cap_srcs = want;
	}
	it->n_srcs = 0;
	for (size_t i = 0; i < ng; i++) {
		struct spool_src *s = &it->srcs[it->n_srcs++];
		s->at = s->end = NULL;
		s->off = sp->groups[g + i].off;
		s->left = sp->groups[g + i].n;
	}
	it->group = g + ng;
	if (in_buf) {
		size_t e = it->pos;
		while (e < sp->n && sp->buf[e].ord == ord)
			e++;
		struct spool_src *s = &it->srcs[it->n_srcs++];
		s->at = sp->buf + it->pos;
		s->end = sp->buf + e;
		s->left = 0;
		it->pos = e;
	}
	for (size_t i = 0; i < it->n_srcs; i++) {
		int rc = refill(sp, &it->srcs[i]);
		if (rc < 0)
			return rc;
	}
	it->have_last = 0;
	return 1;
}

int spool_iter_next(struct spool_iter *it, struct rec *r)
{
	for (;;) {
		struct spool_src *best = NULL;
		for (size_t i = 0; i < it->n_srcs; i++) {
			struct spool_src *s = &it->srcs[i];
			if (s->at < s->end && (best == NULL || rec_cmp(s->at, best->at) < 0))
				best = s;
		}
		if (best == NULL) {
			if (it->one)
				return 0;
			int rc = next_set(it);
			if (rc <= 0)
				return rc;
			continue;
		}
		*r = *best->at++;
		int rc = refill(it->sp, best);
		if (rc < 0)
			return rc;
		/* each source is unique on its own; repeats come from different ones */
		if (it->have_last && rec_cmp(r, &it->last) == 0)
			continue;
		it->last = *r;
		it->have_last = 1;
		return 1;
	}
}

/* The first of n items (size bytes each, sorted by a u32 ord at ord_at) whose ord is at least ord. */
static size_t first_of(const void *items, size_t n, size_t size, size_t ord_at, uint32_t ord)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint32_t at;
		memcpy(&at, (const char *)items + mid * size + ord_at, sizeof at);
		if (at < ord)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int spool_iter_set(struct spool_iter *it, struct spool *sp, uint32_t ord)
{
	memset(it, 0, sizeof *it);
	it->sp = sp;
	it->one = 1;
	/* the first group and the first buffered record of set ord or after */
	it->group = first_of(sp->groups, sp->n_groups, sizeof *sp->groups,
	                     offsetof(struct spool_group, ord), ord);
	it->pos = first_of(sp->buf, sp->n, sizeof *sp->buf, offsetof(struct rec, ord), ord);
	int rc = open_set(it, ord);
	return rc < 0 ? rc : 0;
}

void spool_iter_end(struct spool_iter *it)
{
	free(it->srcs);
	memset(it, 0, sizeof *it);
}
