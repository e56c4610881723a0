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
#include <stdlib.h>
#include <unistd.h>

#include "internal.h"

#define PULL 256 /* records read from the spill file at a time, per group being merged */

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

/*
 * Sort r[0, n) by (h1, h2), tmp holding n records of scratch: LSD radix
 * sort on h1, a byte a pass, passes whose byte is the same throughout
 * skipped; then records of equal h1 (rare) by h2.
 */
static void sort_hashes(struct rec *r, struct rec *tmp, size_t n)
{
	if (n < 64) {
		for (size_t i = 1; i < n; i++)
			for (size_t j = i; j > 0 && rec_cmp(&r[j], &r[j - 1]) < 0; j--) {
				struct rec t = r[j];
				r[j] = r[j - 1];
				r[j - 1] = t;
			}
		return;
	}
	struct rec *src = r, *dst = tmp;
	for (unsigned shift = 0; shift < 64; shift += 8) {
		size_t count[256] = {0};
		for (size_t i = 0; i < n; i++)
			count[src[i].h1 >> shift & 0xff]++;
		if (count[src[0].h1 >> shift & 0xff] == n)
			continue;
		for (size_t d = 0, at = 0; d < 256; d++) {
			size_t c = count[d];
			count[d] = at;
			at += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[count[src[i].h1 >> shift & 0xff]++] = src[i];
		struct rec *t = src;
		src = dst;
		dst = t;
	}
	if (src != r)
		memcpy(r, src, n * sizeof *r);
	for (size_t i = 0; i + 1 < n; i++) {
		size_t e = i + 1;
		while (e < n && r[e].h1 == r[i].h1)
			e++;
		if (e - i > 1)
			sort_hashes(r + i, tmp, e - i); /* all of one h1: insertion sorts by h2 */
		i = e - 1;
	}
}

/*
 * Sort the buffer by (ord, h1, h2) and drop repeats; returns the new
 * count. A stable counting pass by set (skipped when the records are in
 * set order already, as grouped input leaves them), then each set's
 * records by hash.
 */
static size_t sort_unique(struct spool *sp)
{
	struct rec *r = sp->buf, *tmp = sp->tmp;
	size_t n = sp->n;
	if (n == 0)
		return 0;
	int ordered = 1;
	for (size_t i = 1; i < n && ordered; i++)
		ordered = r[i - 1].ord <= r[i].ord;
	/* stable LSD radix by set, a byte a pass, when input interleaved sets */
	struct rec *src = r, *dst = tmp;
	for (unsigned shift = 0; !ordered && shift < 32; shift += 8) {
		size_t count[256] = {0};
		for (size_t i = 0; i < n; i++)
			count[src[i].ord >> shift & 0xff]++;
		if (count[src[0].ord >> shift & 0xff] == n)
			continue;
		for (size_t d = 0, at = 0; d < 256; d++) {
			size_t c = count[d];
			count[d] = at;
			at += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[count[src[i].ord >> shift & 0xff]++] = src[i];
		struct rec *t = src;
		src = dst;
		dst = t;
	}
	if (src != r)
		memcpy(r, src, n * sizeof *r);
	size_t o = 0;
	for (size_t a = 0; a < n;) {
		size_t e = a + 1;
		while (e < n && r[e].ord == r[a].ord)
			e++;
		sort_hashes(r + a, tmp, e - a);
		for (size_t i = a; i < e; i++)
			if (o == 0 || rec_cmp(&r[i], &r[o - 1]) != 0)
				r[o++] = r[i];
		a = e;
	}
	return o;
}

int spool_init(struct spool *sp, size_t cap)
{
	memset(sp, 0, sizeof *sp);
	sp->fd = -1;
	sp->cap = cap < 1024 ? 1024 : cap;
	sp->buf = malloc(sp->cap * sizeof *sp->buf);
	sp->tmp = malloc(sp->cap * sizeof *sp->tmp);
	if (sp->buf == NULL || sp->tmp == NULL)
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

static int write_all(int fd, const void *p, size_t len, uint64_t off)
{
	const uint8_t *b = p;
	while (len) {
		ssize_t w = pwrite(fd, b, len, (off_t)off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		b += w;
		len -= (size_t)w;
		off += (uint64_t)w;
	}
	return 0;
}

/* Append the sorted buffer to the spill file as one run. */
static int spill(struct spool *sp)
{
	if (sp->fd < 0) {
		char path[4200];
		snprintf(path, sizeof path, "%s/bfi-spool-XXXXXX", sp->dir);
		sp->fd = mkstemp(path);
		if (sp->fd < 0)
			return -errno;
		unlink(path); /* the spill lives only as long as this writer */
	}
	size_t n = sort_unique(sp);
	int rc = write_all(sp->fd, sp->buf, n * sizeof *sp->buf, sp->spilled * sizeof *sp->buf);
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
	free(sp->tmp);
	sp->tmp = NULL;
	return 0;
}

void spool_free(struct spool *sp)
{
	if (sp->fd >= 0)
		close(sp->fd);
	free(sp->groups);
	free(sp->buf);
	free(sp->tmp);
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
	size_t want = s->left < PULL ? (size_t)s->left : PULL, bytes = want * sizeof *s->pull;
	uint8_t *b = (uint8_t *)s->pull;
	for (size_t got = 0; got < bytes;) {
		ssize_t r = pread(sp->fd, b + got, bytes - got, (off_t)(s->off * sizeof *s->pull + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		got += (size_t)r;
	}
	s->at = s->pull;
	s->end = s->pull + want;
	s->off += want;
	s->left -= want;
	return 1;
}

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

void spool_iter_end(struct spool_iter *it)
{
	free(it->srcs);
	memset(it, 0, sizeof *it);
}
