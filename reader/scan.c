/*
 * scan.c - a batch of queries answered in a pass over the index, not from
 * its mapping (bfi_scan, bfi query --scan): for an index larger than
 * memory, where random faults into a mapping evict and read the same
 * pages again and again.
 *
 * The pass takes the layout part by part (layout.h: a flat block or
 * grouped run, a run of plain filters, a tree or RAMBO whole). For each,
 * the layout names the bytes each query of the batch may read there; the
 * pages holding them are read once, in file order, into a shadow of the
 * index, each at its own offset: a mapping of the index of the scan's own
 * whose wanted pages are faulted in run by run (file_shadow), or else a
 * private anonymous mapping filled with pread; the reads of a round or
 * range may be shared out over threads (read_split). Every query is
 * answered by the usual query code on a view of just that part pointing
 * there; the answers are appended; and the pages go, from the shadow and
 * from the page cache. A pack opened with BFI_OPEN_SCAN is read the same
 * way, its pages decompressed from the frames that hold them into the
 * anonymous shadow. Pages no query
 * needs are never touched, so they take no memory. A part whose needed
 * pages pass the memory given is read range by range, each query's state
 * kept between ranges, if its layout can (a flat block: scan_pass.c; RAMBO
 * and the tree: rambo.c, tree.c) and that state fits; else it is
 * answered in several rounds of queries, each reading only its own
 * pages, which reads again the pages rounds share. A part's answers are
 * independent of the others', so the answers appended in part order are
 * the mapped path's (threshold answers ranked once all parts are in).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "layout.h"

#define PAGE BFI_SCAN_PAGE
#define READ_MAX (8u << 20) /* bytes a pread asks for at most */
#define AROUND 16u          /* pages a fault may map on either side of its own */

struct scan {
	const bfi_snapshot *s;
	const struct bfi_layout_ops *ops;
	int row;
	uint8_t *shadow;       /* as large as the index; pages filled as a pass needs them */
	int file_backed;       /* the shadow is a mapping of the index of the scan's own */
	uint64_t pages;        /* of the index */
	struct bfi_want w;
	uint64_t *loaded;      /* a bit a page: in the shadow now */
	uint64_t ld_lo, ld_hi; /* pages [ld_lo, ld_hi) hold every bit set in loaded */
	uint64_t n_want;       /* pages set in want */
	uint64_t budget;       /* pages a pass may hold */
	uint64_t first, n;     /* the part being scanned */
	struct bfi_scan_stats *st;
	int fd;                /* the index, opened again for the scan's own reads; or the snapshot's */
	bfi_result *w_res;     /* each query's scratch, its answer copied out */
	struct bfi_scan_io io; /* a layout's pass over a part range by range */
	uint64_t memory;       /* what the scan may hold in all (0: no bound); a part, io.budget */
	uint64_t answers;      /* bytes the batch's answers have grown by */
	uint64_t results_base; /* bytes the results held when the scan began: the caller's */
	uint64_t ahead_left;   /* pages scan_ahead may still ask for before the next range */
	unsigned threads;      /* a round's or range's reads split over at most this many */
};

static int bit(const uint64_t *v, uint64_t p)
{
	return (v[p / 64] >> (p % 64)) & 1;
}

/* No page wanted. */
static void clear_want(struct scan *c)
{
	if (c->w.hi > c->w.lo)
		memset(c->w.want + c->w.lo / 64, 0, (size_t)((c->w.hi + 63) / 64 - c->w.lo / 64) * 8);
	c->w.lo = UINT64_MAX;
	c->w.hi = 0;
}

/* Mark the pages query e (NULL: every query) needs in the part; the round's new ones in w.fresh. */
static int query_pages(struct scan *c, const struct bfi_expr *e)
{
	c->w.n_fresh = 0;
	return c->ops->scan_bytes(c->s, c->first, c->n, e, &c->w);
}

/*
 * Index bytes [off, off + len) into the shadow at the same offset: from
 * the pack's frames for a pack scanned in place, else with pread, then
 * dropped from the page cache (read once: it need not keep them).
 */
static int read_pages(struct scan *c, uint64_t off, uint64_t len)
{
	if (c->s->lazy)
		return bfi__lazy_read(c->s->lazy, c->shadow + off, off, len);
	if (c->file_backed) { /* the page cache holds them; they go when the round lets them go */
		if (madvise(c->shadow + off, (size_t)len, MADV_POPULATE_READ) == 0)
			return 0;
		return errno == EFAULT || errno == EIO ? BFI_E_CHANGED : -errno;
	}
	int fd = c->fd;
	for (uint64_t got = 0; got < len;) {
		ssize_t r = pread(fd, c->shadow + off + got, (size_t)(len - got), (off_t)(off + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) /* the file shrank under the scan */
			return r < 0 ? -errno : BFI_E_CHANGED;
		got += (uint64_t)r;
	}
	(void)posix_fadvise(fd, (off_t)off, (off_t)len, POSIX_FADV_DONTNEED);
	return 0;
}

/*
 * The index opened again, for reads of the scan's own that the kernel
 * should not read ahead of: a scan asks for exactly the pages it needs,
 * and pages it skips, read ahead, would be read for nothing (a pass over
 * a block's rows in ranges read about an eighth more from the disk than
 * it asked for). A descriptor of its own keeps the hint off the
 * snapshot's. If the index cannot be opened again, the snapshot's.
 */
static int scan_fd(const bfi_snapshot *s, int *own)
{
	char path[64];
	struct stat a, b;
	snprintf(path, sizeof path, "/proc/self/fd/%d", s->index_fd);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && (fstat(fd, &a) || fstat(s->index_fd, &b) || a.st_dev != b.st_dev ||
	                a.st_ino != b.st_ino)) {
		close(fd);
		fd = -1;
	}
	*own = fd >= 0;
	if (fd < 0)
		return s->index_fd;
	(void)posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	return fd;
}

/*
 * The shadow for a snapshot's index: the index mapped again, apart from
 * the snapshot's mapping (whose hints, such as 2 MiB folios, would read
 * far more than a page a fault). A round's pages are faulted in there
 * (MADV_POPULATE_READ), which reads them into the page cache and maps
 * them where the answers read them: no copy into private pages, each
 * zeroed first. They leave the page cache when the round lets them go.
 * MAP_FAILED on a kernel without MADV_POPULATE_READ (before Linux
 * 5.14), or a pack: a private anonymous shadow, filled with pread.
 */
static uint8_t *file_shadow(const bfi_snapshot *s, int fd)
{
#ifdef MADV_POPULATE_READ
	if (s->lazy || fd < 0)
		return MAP_FAILED;
	void *p = mmap(NULL, (size_t)s->size, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return MAP_FAILED;
	(void)madvise(p, (size_t)s->size, MADV_RANDOM); /* no page a fault did not ask for */
	if (madvise(p, s->size < PAGE ? (size_t)s->size : PAGE, MADV_POPULATE_READ) != 0) {
		munmap(p, (size_t)s->size);
		return MAP_FAILED;
	}
	(void)madvise(p, PAGE, MADV_DONTNEED);
	return p;
#else
	(void)s;
	(void)fd;
	return MAP_FAILED;
#endif
}

/*
 * How far ahead of the read a scan asks the disk for the pages it wants
 * (POSIX_FADV_WILLNEED): the reads then queue together, not one at a
 * time, and the disk works while the answers are computed. Within an
 * eighth of the budget and 16 MiB, so that what is asked for ahead, in
 * the page cache (which a memory cgroup counts), is not evicted before
 * it is read.
 */
static uint64_t ahead_window(const struct scan *c)
{
	uint64_t w = (16u << 20) / PAGE;
	return c->budget / 8 < w ? (c->budget / 8 ? c->budget / 8 : 1) : w;
}

/* Ask the disk for the wanted pages not yet loaded in [from, to), to at most end; returns to. */
static uint64_t advise(struct scan *c, uint64_t from, uint64_t to, uint64_t end)
{
	if (to > end)
		to = end;
	for (uint64_t p = from; p < to;) {
		if (!bit(c->w.want, p) || bit(c->loaded, p)) {
			p++;
			continue;
		}
		uint64_t q = p;
		while (q < to && bit(c->w.want, q) && !bit(c->loaded, q))
			q++;
		(void)posix_fadvise(c->fd, (off_t)(p * PAGE), (off_t)((q - p) * PAGE), POSIX_FADV_WILLNEED);
		p = q;
	}
	return to;
}

/* A thread's share of a round's or range's pages, and what it read of them. */
struct share {
	struct scan *c;
	uint64_t from, to; /* its pages: whole words of the bit maps, so no word is another's */
	uint64_t window;   /* pages it asks the disk for ahead of its reads */
	uint64_t bytes, reads;
	int rc;
};

/*
 * Read the share's wanted pages not loaded, run by run, in file order,
 * asking the disk a window ahead; mark them loaded.
 */
static void *read_share(void *arg)
{
	struct share *sh = arg;
	struct scan *c = sh->c;
	uint64_t adv = sh->from;
	for (uint64_t p = sh->from; p < sh->to;) {
		if (!bit(c->w.want, p) || bit(c->loaded, p)) {
			p++;
			continue;
		}
		if (c->fd >= 0 && adv < p + sh->window)
			adv = advise(c, adv > p ? adv : p, p + sh->window, sh->to);
		uint64_t q = p;
		while (q < sh->to && bit(c->w.want, q) && !bit(c->loaded, q) && (q - p) * PAGE < READ_MAX) {
			c->loaded[q / 64] |= UINT64_C(1) << (q % 64);
			q++;
		}
		uint64_t off = p * PAGE, len = (q - p) * PAGE;
		if (off + len > c->s->size)
			len = c->s->size - off;
		if ((sh->rc = read_pages(c, off, len)) != 0)
			return NULL;
		sh->bytes += len;
		sh->reads++;
		p = q;
	}
	return NULL;
}

/* Pages wanted and not loaded in the bit map's word i. */
static unsigned to_read(const struct scan *c, uint64_t i)
{
	return (unsigned)__builtin_popcountll(c->w.want[i] & ~c->loaded[i]);
}

/*
 * Read the wanted pages on up to c->threads threads, each its share of
 * them in file order: the reads' work in the kernel (the page cache's
 * pages, the requests, the faults) is most of a scan's, and spreads over
 * cores. Shares are cut on whole words of the bit maps, of about as many
 * pages each; fewer than SHARE_MIN pages a thread are read on fewer. A
 * pack's frames are read on one (its cache of frames is not shared).
 * The threads' read-ahead windows together are one thread's.
 */
#define SHARE_MIN 256u
static int read_wanted(struct scan *c)
{
	uint64_t lo = c->w.lo / 64, hi = (c->w.hi + 63) / 64, total = 0;
	unsigned t = c->s->lazy ? 1 : c->threads;
	for (uint64_t i = lo; t > 1 && i < hi; i++)
		total += to_read(c, i);
	uint64_t fit = total / SHARE_MIN;
	if (t > fit)
		t = fit > 1 ? (unsigned)fit : 1;
	struct share sh[BFI_SCAN_THREADS_MAX];
	pthread_t tid[BFI_SCAN_THREADS_MAX];
	uint64_t window = ahead_window(c) / t ? ahead_window(c) / t : 1;
	if (t == 1)
		sh[0] = (struct share){.c = c, .from = c->w.lo, .to = c->w.hi, .window = window};
	for (uint64_t k = 0, i = lo, got = 0; t > 1 && k < t; k++) {
		sh[k] = (struct share){.c = c, .from = i * 64, .window = window};
		for (uint64_t goal = total * (k + 1) / t; i < hi && (k == t - 1 || got < goal); i++)
			got += to_read(c, i);
		sh[k].to = i * 64 < c->pages ? i * 64 : c->pages;
	}
	unsigned started = 1;
	for (; started < t; started++)
		if (pthread_create(&tid[started], NULL, read_share, &sh[started]) != 0)
			break;
	for (unsigned k = started; k < t; k++) /* no thread: read here */
		read_share(&sh[k]);
	read_share(&sh[0]);
	int rc = 0;
	uint64_t most = 0;
	for (unsigned k = 0; k < t; k++) {
		if (k && k < started)
			pthread_join(tid[k], NULL);
		rc = rc ? rc : sh[k].rc;
		if (c->st) {
			c->st->bytes_read += sh[k].bytes;
			c->st->reads += sh[k].reads;
		}
		most = sh[k].bytes > most ? sh[k].bytes : most;
	}
	if (c->st)
		c->st->busiest += most;
	return rc;
}

/* Let go of page p, unless this round wants it: in the shadow now, or (file_backed) maybe mapped. */
static int to_drop(const struct scan *c, uint64_t p)
{
	return !bit(c->w.want, p) && (c->file_backed || bit(c->loaded, p));
}

/*
 * Make the shadow hold the wanted pages: first let go of those loaded for
 * the round before that this one does not want, then read those it wants
 * and has not, run by run, in file order. A page two parts share is so
 * read once.
 */
static int gather(struct scan *c)
{
	/* what the last round held lies in [ld_lo, ld_hi); first, what this round does not want goes */
	uint64_t lo = c->ld_lo, hi = c->ld_hi;
	if (c->file_backed && hi > lo) {
		/*
		 * A fault maps the pages around it that the page cache holds
		 * (fault-around), wanted or not: every page of the last span
		 * and its edges that this round does not want goes.
		 */
		lo = lo > AROUND ? lo - AROUND : 0;
		hi = hi + AROUND < c->pages ? hi + AROUND : c->pages;
	}
	for (uint64_t p = lo; p < hi;) {
		if (!to_drop(c, p)) {
			p++;
			continue;
		}
		uint64_t q = p;
		for (; q < hi && to_drop(c, q); q++)
			c->loaded[q / 64] &= ~(UINT64_C(1) << (q % 64));
		(void)madvise(c->shadow + p * PAGE, (size_t)((q - p) * PAGE), MADV_DONTNEED);
		if (c->file_backed) /* read once: the page cache need not keep them */
			(void)posix_fadvise(c->fd, (off_t)(p * PAGE), (off_t)((q - p) * PAGE),
			                    POSIX_FADV_DONTNEED);
		p = q;
	}
	int rc = read_wanted(c);
	if (rc)
		return rc;
	/* what is loaded now is what is wanted */
	c->ld_lo = c->w.lo;
	c->ld_hi = c->w.hi;
	if (c->st && c->n_want * PAGE > c->st->peak)
		c->st->peak = c->n_want * PAGE;
	return 0;
}

/* A pass's next range, asked of the disk while this one is applied (a pack's frames: not). */
static void scan_ahead(struct bfi_scan_io *io, uint64_t off, uint64_t len)
{
	struct scan *c = (struct scan *)(void *)((char *)io - offsetof(struct scan, io));
	if (c->fd >= 0 && c->ahead_left) {
		if (len > c->ahead_left * PAGE)
			len = c->ahead_left * PAGE;
		c->ahead_left -= (len + PAGE - 1) / PAGE;
		(void)posix_fadvise(c->fd, (off_t)off, (off_t)len, POSIX_FADV_WILLNEED);
	}
}

/* The range of a layout's pass (io, in c) marked: read it, and clear the marks for the next. */
static int scan_fill(struct bfi_scan_io *io)
{
	struct scan *c = (struct scan *)(void *)((char *)io - offsetof(struct scan, io));
	c->n_want = io->n_want;
	int rc = gather(c);
	c->ahead_left = ahead_window(c); /* for the next range's first pages (scan_ahead) */
	if (c->st && c->n_want * PAGE + io->state > c->st->peak)
		c->st->peak = c->n_want * PAGE + io->state;
	if (c->st)
		c->st->ranges++;
	clear_want(c);
	c->n_want = io->n_want = 0;
	return rc;
}

/*
 * Append the answer in scratch w (one part's, its ordinals from ord0) to
 * res: a batch's results hold their answers only, not each a query's
 * scratch (counts and ordinals sized for every set), which for 10^5
 * queries over 10^5 sets would dwarf the pass.
 */
static int scan_append(struct bfi_scan_io *io, const bfi_result *w, uint32_t ord0, bfi_result *res)
{
	struct scan *c = (struct scan *)(void *)((char *)io - offsetof(struct scan, io));
	size_t n = res->n + w->n ? res->n + w->n : 1; /* never a null pointer */
	uint64_t was = (uint64_t)res->cap * sizeof *res->ords + res->scores_cap * sizeof *res->scores;
	int rc = bfi__grow(&res->ords, &res->cap, n, sizeof *res->ords);
	if (rc == 0 && w->have_scores)
		rc = bfi__grow(&res->scores, &res->scores_cap, n, sizeof *res->scores);
	if (rc)
		return rc;
	/* the answers are held until the batch ends: past the memory, the caller splits the batch */
	c->answers += (uint64_t)res->cap * sizeof *res->ords + res->scores_cap * sizeof *res->scores - was;
	if (c->memory && c->answers > c->memory - c->memory / 8)
		return BFI_E_LIMIT;
	for (size_t i = 0; i < w->n; i++)
		res->ords[res->n + i] = w->ords[i] + ord0;
	if (w->n && w->have_scores)
		memcpy(res->scores + res->n, w->scores, w->n * sizeof *res->scores);
	res->n += w->n;
	res->have_scores = w->have_scores;
	res->touched += w->touched;
	res->tests += w->tests;
	return 0;
}

/* Answer queries [from, to) on a view of the part, then let the round's wants go. */
static int answer(struct scan *c, const bfi_expr *const *qs, size_t from, size_t to, double theta,
                  bfi_result *const *res)
{
	int rc = gather(c);
	if (rc == 0 && c->w_res == NULL)
		rc = bfi_result_create(&c->w_res);
	if (rc == 0)
		rc = bfi__view_answer(&c->io, c->s, c->ops, c->row, c->first, c->n, NULL, NULL, qs, from,
		                      to, theta, c->w_res, res);
	/* the pages stay until the next round knows which of them it wants */
	clear_want(c);
	c->n_want = 0;
	if (c->st)
		c->st->rounds++;
	return rc;
}

/* Start a round: the pages every query of the part needs. */
static int round_start(struct scan *c)
{
	int rc = query_pages(c, NULL);
	c->n_want += c->w.n_fresh;
	return rc;
}

/*
 * Do the pages every query needs in the part fit the budget? Then they are
 * marked, and one round answers all. If not, none is marked.
 */
static int all_fit(struct scan *c, const bfi_expr *const *qs, size_t n, int *fit)
{
	int rc = round_start(c);
	for (size_t i = 0; i < n && rc == 0 && c->n_want <= c->budget; i++) {
		rc = query_pages(c, qs[i]);
		c->n_want += c->w.n_fresh;
	}
	*fit = c->n_want <= c->budget;
	if (!*fit) {
		clear_want(c);
		c->n_want = 0;
	}
	return rc;
}

/* The row of the layouts' table that ops is. */
static int row_index(const struct bfi_layout_ops *ops)
{
	int row = 0;
	while (bfi__layouts[row] != ops)
		row++;
	return row;
}

/* Bytes result r holds: its answer, and the scratch a query grew in it. */
static uint64_t result_bytes(const bfi_result *r)
{
	return (uint64_t)r->cap * sizeof *r->ords + (uint64_t)r->scores_cap * sizeof *r->scores +
	       (uint64_t)r->z_cap * sizeof *r->z + (uint64_t)r->rows_cap * sizeof *r->rows +
	       (uint64_t)r->vec_cap * sizeof *r->vec + (uint64_t)r->counts_cap * sizeof *r->counts +
	       (uint64_t)r->rank_cap * sizeof *r->rank + (uint64_t)r->frontier_cap * sizeof *r->frontier;
}

uint64_t bfi__results_bytes(bfi_result *const *res, size_t n)
{
	uint64_t b = 0;
	for (size_t i = 0; i < n; i++)
		b += result_bytes(res[i]);
	return b;
}

/*
 * What a part may hold of memory: the whole, less what the answers have
 * grown by so far and the query scratch (memory bounds them too, and
 * they grow from part to part; what the results held before is the
 * caller's). Never less than an eighth: answers past the rest still get
 * pages to be read with, in more, smaller ranges.
 */
static void part_budget(struct scan *c, bfi_result *const *res, size_t n)
{
	if (c->memory == 0)
		return;
	uint64_t held = bfi__results_bytes(res, n) - c->results_base +
	                (c->w_res ? result_bytes(c->w_res) : 0);
	uint64_t left = c->memory > held ? c->memory - held : 0;
	if (left < c->memory / 8)
		left = c->memory / 8;
	c->io.budget = left;
	c->budget = left / PAGE ? left / PAGE : 1;
	if (c->st && held > c->st->answers)
		c->st->answers = held;
}

/*
 * The part [c->first, + c->n), for every query: in one round if its pages
 * fit the budget; else in one pass over them range by range, if the
 * layout has one and its state fits; else in rounds of queries, each
 * within the budget.
 */
static int scan_part(struct scan *c, const bfi_expr *const *qs, size_t n, double theta,
                     bfi_result *const *res)
{
	size_t from = 0;
	int rc, fit;
	if (c->ops->scan_rows && c->budget != UINT64_MAX) {
		if ((rc = all_fit(c, qs, n, &fit)) != 0 || fit)
			return rc ? rc : answer(c, qs, 0, n, theta, res);
		rc = c->ops->scan_rows(c->s, c->first, c->n, qs, n, theta, res, &c->io);
		if (rc != BFI_SCAN_DECLINE)
			return rc;
	}
	rc = round_start(c);
	for (size_t i = 0; i < n && rc == 0; i++) {
		rc = query_pages(c, qs[i]);
		if (rc == 0 && i > from && c->n_want + c->w.n_fresh > c->budget) {
			bfi__unwant_fresh(&c->w); /* the round is full: this query waits for the next */
			rc = answer(c, qs, from, i, theta, res);
			from = i;
			if (rc == 0)
				rc = round_start(c);
			if (rc == 0)
				rc = query_pages(c, qs[i]);
		}
		c->n_want += c->w.n_fresh;
	}
	return rc ? rc : answer(c, qs, from, n, theta, res);
}

int bfi_scan(const bfi_snapshot *s, unsigned layout, const bfi_expr *const *qs, size_t n,
             double theta, bfi_result *const *res, uint64_t memory, struct bfi_scan_stats *st)
{
	/* the stats as they were before busiest: a caller built then has room for no more */
	struct bfi_scan_stats all = {0};
	int rc = bfi_scan_parallel(s, layout, qs, n, theta, res, memory, 1, st ? &all : NULL);
	if (st)
		memcpy(st, &all, offsetof(struct bfi_scan_stats, busiest));
	return rc;
}

int bfi_scan_parallel(const bfi_snapshot *s, unsigned layout, const bfi_expr *const *qs, size_t n,
                      double theta, bfi_result *const *res, uint64_t memory, unsigned threads,
                      struct bfi_scan_stats *st)
{
	if (s == NULL || (n && (qs == NULL || res == NULL)) || threads < 1 ||
	    threads > BFI_SCAN_THREADS_MAX)
		return BFI_E_INVALID;
	if (st)
		memset(st, 0, sizeof *st);
	for (size_t i = 0; i < n; i++) {
		if (qs[i] == NULL || res[i] == NULL || qs[i]->n_keys == 0)
			return BFI_E_INVALID;
		if (qs[i]->nodes[qs[i]->root].type == BFI_EXPR_TERMS && !bfi__theta_ok(theta))
			return BFI_E_INVALID;
	}
	if (s->cops) /* a collection: each segment is an index of its own, scanned in turn */
		return s->cops->scan(s, layout, qs, n, theta, res, memory, threads, st);
	struct scan c = {.s = s, .st = st, .fd = -1, .threads = threads};
	int own_fd = 0;
	int rc = bfi__row_of(s, layout, &c.ops);
	if (rc)
		return rc;
	if (n == 0)
		return 0;
	c.row = row_index(c.ops);
	c.pages = (s->size + PAGE - 1) / PAGE;
	c.budget = memory ? memory / PAGE : UINT64_MAX;
	if (c.budget == 0)
		c.budget = 1;
	c.w.size = s->size;
	c.w.lo = c.ld_lo = UINT64_MAX;
	c.io = (struct bfi_scan_io){.w = &c.w, .budget = memory, .fill = scan_fill,
	                            .append = scan_append, .ahead = scan_ahead};
	if (!s->lazy)
		c.fd = scan_fd(s, &own_fd);
	c.shadow = file_shadow(s, c.fd);
	c.file_backed = c.shadow != MAP_FAILED;
	if (!c.file_backed)
		c.shadow = mmap(NULL, (size_t)s->size, PROT_READ | PROT_WRITE,
		                MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	c.w.want = calloc((size_t)((c.pages + 63) / 64), 8);
	c.loaded = calloc((size_t)((c.pages + 63) / 64), 8);
	if (c.shadow == MAP_FAILED || c.w.want == NULL || c.loaded == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	c.io.shadow = c.shadow;
	for (size_t i = 0; i < n; i++)
		bfi__reset_result(res[i], 0);
	uint64_t packed0 = s->lazy ? bfi_pack_frames_bytes(s->lazy->f) : 0;
	c.memory = memory;
	c.results_base = memory ? bfi__results_bytes(res, n) : 0;
	for (c.first = 0; rc == 0; c.first += c.n) {
		part_budget(&c, res, n);
		if ((c.n = c.ops->scan_part(s, c.first, memory ? c.io.budget : UINT64_MAX)) == 0)
			break;
		rc = scan_part(&c, qs, n, theta, res);
	}
	if (st && s->lazy)
		st->packed = bfi_pack_frames_bytes(s->lazy->f) - packed0;
	if (c.io.drop) /* before the ranking, which takes memory of its own */
		c.io.drop(c.io.keep);
	c.io.drop = NULL;
	/* the parts' threshold answers, appended unranked, ranked as one query's */
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = qs[i]->nodes[qs[i]->root].type == BFI_EXPR_TERMS && bfi__every_set(qs[i], theta)
		         ? bfi__every(s, res[i])
		         : bfi__rank(res[i]);
	if (st) {
		st->passes = 1;
		uint64_t keys = 0;
		for (size_t i = 0; i < n; i++)
			keys += qs[i]->n_keys;
		st->key_state = c.io.key_state ? c.io.key_state / keys + (c.io.key_state % keys != 0) : 0;
	}
out:
	if (c.shadow != MAP_FAILED && c.shadow) {
		munmap(c.shadow, (size_t)s->size);
		/* the last round's pages, unmapped now, out of the page cache (a mapped page stays) */
		if (c.file_backed && c.ld_hi > c.ld_lo)
			(void)posix_fadvise(c.fd, (off_t)(c.ld_lo * PAGE), (off_t)((c.ld_hi - c.ld_lo) * PAGE),
			                    POSIX_FADV_DONTNEED);
	}
	if (own_fd)
		close(c.fd);
	if (c.io.drop)
		c.io.drop(c.io.keep);
	free(c.w.want);
	free(c.loaded);
	free(c.w.fresh);
	bfi_result_destroy(&c.w_res);
	return rc;
}

int bfi_scan_cost(const bfi_snapshot *s, unsigned layout, struct bfi_scan_cost *out)
{
	if (s == NULL || out == NULL)
		return BFI_E_INVALID;
	memset(out, 0, sizeof *out);
	out->answer_sets = 64;
	if (s->cops)
		return s->cops->scan_cost(s, layout, out);
	const struct bfi_layout_ops *ops;
	int rc = bfi__row_of(s, layout, &ops);
	if (rc)
		return rc;
	struct bfi_info info;
	bfi_info(s, &info);
	out->sets = info.n_sets;
	struct bfi_fpr_model m;
	if (bfi_layout_fpr(s, bfi_layout_rows[row_index(ops)].flag, &m) == 0)
		out->key_matches = m.expected * (double)info.n_sets;
	out->key_state = ops->scan_rows && ops->scan_key_state ? ops->scan_key_state(s) : 0;
	/*
	 * A query's scratch, sized for the sets: its ordinals, scores, counts
	 * and ranking keys (20 bytes a set), a pass's vectors and counts
	 * (about 40 bytes a set); and the least range of rows, eight of the
	 * pages a key's state spans (a row of the widest part's).
	 */
	out->fixed = bfi__mul_add(info.n_sets ? info.n_sets : 1, 60,
	                          bfi__mul_add(out->key_state / PAGE + 3, 8 * PAGE, 0));
	return 0;
}

uint64_t bfi_scan_query_bytes(const struct bfi_scan_cost *c, uint64_t keys, int term_list)
{
	double sets = term_list && keys > 2 ? c->answer_sets : (double)(keys ? keys : 1) * c->key_matches;
	if (c->sets && sets > (double)c->sets)
		sets = (double)c->sets;
	return 320 + keys * (48 + c->key_state) + (uint64_t)(sets * (term_list ? 12 : 6));
}
