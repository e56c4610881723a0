/*
 * scan.c - a batch of queries answered in a pass over the index, not from
 * its mapping (bfi_scan, bfi query --scan): for an index larger than
 * memory, where random faults into a mapping evict and read the same
 * pages again and again.
 *
 * The pass goes block by block in file order (a grouped run's blocks
 * together). For each, it finds the pages of rows and pre-filter that the
 * batch's queries need there, reads them once, in file order, with pread
 * (coalesced runs, dropped from the page cache behind it) into a private
 * anonymous mapping as large as the index, each at its own offset; answers
 * every query on that block alone, with the usual query code on a view of
 * the flat layout that holds just that block and points there; appends
 * the answers; and lets the pages go. Pages no query needs are never
 * touched, so they take no memory; a block whose needed pages pass the
 * memory given is answered in several rounds of queries, each reading only
 * its own pages. A block's answers are independent of the others', so
 * the answers appended in block order are the mapped path's (threshold
 * answers ranked again once all blocks are in).
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
	uint64_t *want;        /* a bit a page: needed by the round being gathered */
	uint64_t *loaded;      /* a bit a page: in the shadow now */
	uint64_t n_want;       /* pages set in want */
	uint64_t budget;       /* pages a pass may hold */
	bfi_snapshot view;     /* s, its flat layout pointing into shadow */
	struct bfi_flat flat;
	struct bfi_rblock *blocks;
	struct bfi_scan_stats *st;
	bfi_result *w;         /* each query's scratch, its answer copied out */
	uint64_t *fresh;       /* the pages the query being added is the first of its round to want */
	size_t n_fresh, fresh_cap;
};

static int wanted(const struct scan *c, uint64_t p)
{
	return (c->want[p / 64] >> (p % 64)) & 1;
}

static int is_loaded(const struct scan *c, uint64_t p)
{
	return (c->loaded[p / 64] >> (p % 64)) & 1;
}

/* Mark the pages of index bytes [from, to) wanted, noting in c->fresh those new to the round. */
static int want_bytes(struct scan *c, uint64_t from, uint64_t to)
{
	if (to > c->s->size)
		to = c->s->size;
	for (uint64_t p = from / PAGE; from < to && p <= (to - 1) / PAGE; p++)
		if (!wanted(c, p)) {
			c->want[p / 64] |= UINT64_C(1) << (p % 64);
			int rc = bfi__grow(&c->fresh, &c->fresh_cap, c->n_fresh + 1, sizeof *c->fresh);
			if (rc)
				return rc;
			c->fresh[c->n_fresh++] = p;
		}
	return 0;
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
 * Mark the pages query e needs on blocks b0 .. b0 + nb - 1: every probe's
 * rows, and each block's pre-filter line or bytes, for a pre-filter is
 * part of the answer (a key it rules out is no false positive of the
 * block's rows). The pages new to the round are in c->fresh.
 */
static int query_pages(struct scan *c, const struct bfi_expr *e, uint32_t b0, uint32_t nb)
{
	int rc = 0;
	c->n_fresh = 0;
	for (uint32_t i = 0; i < e->n_keys && rc == 0; i++)
		for (uint32_t j = 0; j < c->f->k && rc == 0; j++) {
			uint64_t z = bfi_hash_probe(e->keys[i], j);
			for (uint32_t b = b0; b < b0 + nb && rc == 0; b++) {
				const struct bfi_rblock *blk = &c->f->blocks[b];
				uint64_t from, to;
				row_bytes(c, blk, z, &from, &to);
				rc = want_bytes(c, from, to);
				if (rc || blk->pre == NULL || (blk->line_pre && j))
					continue;
				from = (uint64_t)(blk->pre - c->s->map) +
				       (blk->line_pre ? bfi_pre_line(z, blk->pre_m) : bfi_reduce(z, blk->pre_m)) /
				               8;
				rc = want_bytes(c, from, from + 64);
			}
		}
	return rc;
}

/*
 * Make the shadow hold the wanted pages: first let go of those loaded for
 * the round before that this one does not want, then read those it wants
 * and has not, run by run, in file order. A page two blocks share is so
 * read once.
 */
static int gather(struct scan *c)
{
	int fd = c->s->index_fd;
	for (uint64_t p = 0; p < c->pages;) {
		if (!is_loaded(c, p) || wanted(c, p)) {
			p++;
			continue;
		}
		uint64_t q = p;
		while (q < c->pages && is_loaded(c, q) && !wanted(c, q)) {
			c->loaded[q / 64] &= ~(UINT64_C(1) << (q % 64));
			q++;
		}
		(void)madvise(c->shadow + p * PAGE, (size_t)((q - p) * PAGE), MADV_DONTNEED);
		p = q;
	}
	for (uint64_t p = 0; p < c->pages;) {
		if (!wanted(c, p) || is_loaded(c, p)) {
			p++;
			continue;
		}
		uint64_t q = p;
		while (q < c->pages && wanted(c, q) && !is_loaded(c, q) && (q - p) * PAGE < READ_MAX) {
			c->loaded[q / 64] |= UINT64_C(1) << (q % 64);
			q++;
		}
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

/*
 * Append the answer in scratch w (one block's) to res: a batch's results
 * hold their answers only, not each a query's scratch (counts and
 * ordinals sized for every set), which for 10^5 queries over 10^5 sets
 * would dwarf the pass.
 */
static int append_answer(const bfi_result *w, bfi_result *res)
{
	size_t n = res->n + w->n ? res->n + w->n : 1; /* never a null pointer */
	int rc = bfi__grow(&res->ords, &res->cap, n, sizeof *res->ords);
	if (rc == 0 && w->have_scores)
		rc = bfi__grow(&res->scores, &res->scores_cap, n, sizeof *res->scores);
	if (rc)
		return rc;
	if (w->n) {
		memcpy(res->ords + res->n, w->ords, w->n * sizeof *res->ords);
		if (w->have_scores)
			memcpy(res->scores + res->n, w->scores, w->n * sizeof *res->scores);
	}
	res->n += w->n;
	res->have_scores = w->have_scores;
	res->touched += w->touched;
	res->tests += w->tests;
	return 0;
}

/* Answer queries [from, to) on the view of one block (or run), then let the pages go. */
static int answer(struct scan *c, const bfi_expr *const *qs, size_t from, size_t to, double theta,
                  bfi_result *const *res)
{
	int rc = gather(c);
	if (rc == 0 && c->w == NULL)
		rc = bfi_result_create(&c->w);
	for (size_t i = from; i < to && rc == 0; i++) {
		bfi_result_count_bytes(c->w, res[i]->count_bytes);
		c->w->deadline = res[i]->deadline;
		rc = qs[i]->nodes[qs[i]->root].type == BFI_EXPR_TERMS
		             ? bfi_query_threshold(&c->view, BFI_LAYOUT_FLAT, qs[i], theta, c->w)
		             : bfi_query_expr(&c->view, BFI_LAYOUT_FLAT, qs[i], c->w);
		if (rc == 0)
			rc = append_answer(c->w, res[i]);
	}
	/* the pages stay until the next round knows which of them it wants */
	memset(c->want, 0, (size_t)((c->pages + 63) / 64) * 8);
	c->n_want = 0;
	if (c->st)
		c->st->rounds++;
	return rc;
}

/* Blocks b0 .. b0 + nb - 1 (a block, or a grouped run), for every query, in rounds within the budget. */
static int scan_unit(struct scan *c, uint32_t b0, uint32_t nb, const bfi_expr *const *qs, size_t n,
                     double theta, bfi_result *const *res)
{
	c->flat.blocks = c->blocks + b0;
	c->flat.n_blocks = nb;
	size_t from = 0;
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		rc = query_pages(c, qs[i], b0, nb);
		if (rc == 0 && i > from && c->n_want + c->n_fresh > c->budget) {
			/* the round is full: this query waits for the next */
			for (size_t x = 0; x < c->n_fresh; x++)
				c->want[c->fresh[x] / 64] &= ~(UINT64_C(1) << (c->fresh[x] % 64));
			rc = answer(c, qs, from, i, theta, res);
			from = i;
			if (rc == 0)
				rc = query_pages(c, qs[i], b0, nb);
		}
		c->n_want += c->n_fresh;
	}
	return rc ? rc : answer(c, qs, from, n, theta, res);
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
	if (s->cops) /* a collection: each segment is an index of its own, scanned in turn */
		return s->cops->scan(s, qs, n, theta, res, memory, st);
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
	c.loaded = calloc((size_t)((c.pages + 63) / 64), 8);
	c.blocks = malloc(f->n_blocks * sizeof *c.blocks);
	if (c.shadow == MAP_FAILED || c.want == NULL || c.loaded == NULL || c.blocks == NULL) {
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
	for (size_t i = 0; i < n; i++)
		bfi__reset_result(res[i], 0);
	for (uint32_t b = 0; b < f->n_blocks && rc == 0;) {
		uint32_t nb = f->blocks[b].run_n > 1 ? f->blocks[b].run_n : 1;
		rc = scan_unit(&c, b, nb, qs, n, theta, res);
		b += nb;
	}
	/* each block's answer came ranked; the whole is ranked as one query's */
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = bfi__rank(res[i]);
	if (st)
		st->passes = 1;
out:
	if (c.shadow != MAP_FAILED && c.shadow)
		munmap(c.shadow, (size_t)s->size);
	free(c.want);
	free(c.loaded);
	free(c.fresh);
	free(c.blocks);
	bfi_result_destroy(&c.w);
	return rc;
}
