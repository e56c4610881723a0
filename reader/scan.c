/*
 * scan.c - a batch of queries answered in passes over the index, not from
 * its mapping (bfi_scan, bfi query --scan): for an index larger than
 * memory, where random faults into a mapping would read the same pages
 * again and again.
 *
 * A pass takes as many queries, in order, as the pages their rows need
 * fit in the memory given; reads those pages once, in file order, with
 * pread (coalesced runs, dropped from the page cache behind it), into a
 * private anonymous mapping as large as the index, each at its own
 * offset; and answers the queries with the usual query code on a view of
 * the flat layout whose blocks point there. Pages no query needs are
 * never touched, so they take no memory. A block's pre-filter bytes are
 * read with its rows: they are part of the answer.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "flat.h"

#define PAGE 4096u
#define READ_MAX (8u << 20) /* bytes a pread asks for at most */

struct scan {
	const bfi_snapshot *s;
	const struct bfi_flat *f;
	uint8_t *shadow;       /* as large as the index; pages filled as a pass needs them */
	uint64_t pages;        /* of the index */
	uint64_t *want;        /* a bit a page: needed by the pass being gathered */
	uint64_t n_want;       /* pages set in want */
	uint64_t budget;       /* pages a pass may hold */
	bfi_snapshot view;     /* s, its flat layout pointing into shadow */
	struct bfi_flat flat;
	struct bfi_rblock *blocks;
	struct bfi_scan_stats *st;
};

static int wanted(const struct scan *c, uint64_t p)
{
	return (c->want[p / 64] >> (p % 64)) & 1;
}

/* Mark the pages of index bytes [from, to) wanted; count those new to the pass. */
static void want_bytes(struct scan *c, uint64_t from, uint64_t to, int mark, uint64_t *fresh)
{
	if (to > c->s->size)
		to = c->s->size;
	for (uint64_t p = from / PAGE; from < to && p <= (to - 1) / PAGE; p++)
		if (!wanted(c, p)) {
			(*fresh)++;
			if (mark)
				c->want[p / 64] |= UINT64_C(1) << (p % 64);
		}
}

/*
 * The index bytes the query code may read of block b's row for probe z:
 * a row in whole lines, a packed row and the 9 bytes its last word load
 * may reach, or a grouped run's whole group line and the line after.
 */
static void row_bytes(const struct scan *c, const struct bfi_rblock *b, uint64_t z, uint64_t *from,
                      uint64_t *to)
{
	uint64_t base = (uint64_t)(b->rows - c->s->map);
	if (b->q) {
		uint64_t groups = b->m / b->q, gbytes = b->group_bits / 8, g = bfi_reduce(z, groups);
		*from = base + g * gbytes;
		*to = base + (g + 1) * gbytes + 64;
	} else if (b->packed) {
		uint64_t bit = bfi_reduce(z, b->m) * b->row_bits;
		*from = base + bit / 8;
		*to = base + (bit + b->row_bits + 7) / 8 + 9;
	} else {
		uint64_t r = bfi_reduce(z, b->m);
		*from = base + r * b->row_bytes;
		*to = *from + b->row_bytes;
	}
}

/*
 * The pages query e needs, marked (mark) or only counted: how many are
 * new to the pass. Every block's rows for every probe, and its
 * pre-filter's line or bytes: a pre-filter is part of the answer (a key
 * it rules out is no false positive of the block's rows).
 */
static uint64_t query_pages(struct scan *c, const struct bfi_expr *e, int mark)
{
	uint64_t fresh = 0;
	for (uint32_t i = 0; i < e->n_keys; i++)
		for (uint32_t j = 0; j < c->f->k; j++) {
			uint64_t z = bfi_hash_probe(e->keys[i], j);
			for (uint32_t b = 0; b < c->f->n_blocks; b++) {
				const struct bfi_rblock *blk = &c->f->blocks[b];
				uint64_t from, to;
				row_bytes(c, blk, z, &from, &to);
				want_bytes(c, from, to, mark, &fresh);
				if (blk->pre == NULL || (blk->line_pre && j))
					continue;
				from = (uint64_t)(blk->pre - c->s->map) +
				       (blk->line_pre ? bfi_pre_line(z, blk->pre_m) : bfi_reduce(z, blk->pre_m)) /
				               8;
				want_bytes(c, from, from + 64, mark, &fresh);
			}
		}
	return fresh;
}

/* Read the wanted pages into the shadow, run by run, in file order. */
static int gather(struct scan *c)
{
	int fd = c->s->index_fd;
	for (uint64_t p = 0; p < c->pages;) {
		if (!wanted(c, p)) {
			p++;
			continue;
		}
		uint64_t q = p;
		while (q < c->pages && wanted(c, q) && (q - p) * PAGE < READ_MAX)
			q++;
		uint64_t off = p * PAGE, len = (q - p) * PAGE;
		if (off + len > c->s->size)
			len = c->s->size - off;
		for (uint64_t got = 0; got < len;) {
			ssize_t r = pread(fd, c->shadow + off + got, (size_t)(len - got), (off_t)(off + got));
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) /* the file shrank under the scan */
				return r < 0 ? -errno : BFI_E_CHANGED;
			got += (uint64_t)r;
		}
		/* read once: the page cache need not keep it for this batch */
		(void)posix_fadvise(fd, (off_t)off, (off_t)len, POSIX_FADV_DONTNEED);
		if (c->st) {
			c->st->bytes_read += len;
			c->st->reads++;
		}
		p = q;
	}
	if (c->st && c->n_want * PAGE > c->st->peak)
		c->st->peak = c->n_want * PAGE;
	return 0;
}

/* Answer queries [from, to) on the view, then let the pass's pages go. */
static int answer(struct scan *c, const bfi_expr *const *qs, size_t from, size_t to, double theta,
                  bfi_result *const *res)
{
	int rc = gather(c);
	for (size_t i = from; i < to && rc == 0; i++)
		rc = qs[i]->nodes[qs[i]->root].type == BFI_EXPR_TERMS
		             ? bfi_query_threshold(&c->view, BFI_LAYOUT_FLAT, qs[i], theta, res[i])
		             : bfi_query_expr(&c->view, BFI_LAYOUT_FLAT, qs[i], res[i]);
	(void)madvise(c->shadow, (size_t)c->s->size, MADV_DONTNEED);
	memset(c->want, 0, (size_t)((c->pages + 63) / 64) * 8);
	c->n_want = 0;
	if (c->st)
		c->st->passes++;
	return rc;
}

int bfi_scan(const bfi_snapshot *s, const bfi_expr *const *qs, size_t n, double theta,
             bfi_result *const *res, uint64_t memory, struct bfi_scan_stats *st)
{
	if (s == NULL || (n && (qs == NULL || res == NULL)))
		return BFI_E_INVALID;
	if (st)
		memset(st, 0, sizeof *st);
	for (size_t i = 0; i < n; i++) {
		if (qs[i] == NULL || res[i] == NULL || qs[i]->n_keys == 0)
			return BFI_E_INVALID;
		if (qs[i]->nodes[qs[i]->root].type == BFI_EXPR_TERMS && !(theta > 0 && theta <= 1))
			return BFI_E_INVALID;
	}
	if (s->cops) /* a collection: each segment is an index of its own */
		return BFI_E_INVALID;
	const struct bfi_flat *f = bfi__flat(s);
	if (f == NULL)
		return BFI_E_NO_LAYOUT;
	if (n == 0)
		return 0;
	struct scan c = {.s = s, .f = f, .st = st};
	c.pages = (s->size + PAGE - 1) / PAGE;
	c.budget = memory ? memory / PAGE : UINT64_MAX;
	if (c.budget == 0)
		c.budget = 1;
	int rc = 0;
	c.shadow = mmap(NULL, (size_t)s->size, PROT_READ | PROT_WRITE,
	                MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	c.want = calloc((size_t)((c.pages + 63) / 64), 8);
	c.blocks = malloc(f->n_blocks * sizeof *c.blocks);
	if (c.shadow == MAP_FAILED || c.want == NULL || c.blocks == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	/* the view: the snapshot as it is, but its flat layout's rows and pre-filters in the shadow */
	c.view = *s;
	memset(c.view.view, 0, sizeof c.view.view);
	c.flat = *f;
	c.flat.blocks = c.blocks;
	for (uint32_t b = 0; b < f->n_blocks; b++) {
		c.blocks[b] = f->blocks[b];
		c.blocks[b].rows = c.shadow + (f->blocks[b].rows - s->map);
		if (f->blocks[b].pre)
			c.blocks[b].pre = c.shadow + (f->blocks[b].pre - s->map);
	}
	c.view.view[BFI_ROW_FLAT] = &c.flat;
	size_t from = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		uint64_t fresh = query_pages(&c, qs[i], 0);
		if (i > from && c.n_want + fresh > c.budget) {
			/* the pass is full: answer it, and start the next with this query */
			rc = answer(&c, qs, from, i, theta, res);
			from = i;
			fresh = query_pages(&c, qs[i], 0);
		}
		(void)query_pages(&c, qs[i], 1);
		c.n_want += fresh;
	}
	if (rc == 0)
		rc = answer(&c, qs, from, n, theta, res);
out:
	if (c.shadow != MAP_FAILED && c.shadow)
		munmap(c.shadow, (size_t)s->size);
	free(c.want);
	free(c.blocks);
	return rc;
}
