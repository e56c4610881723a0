/*
 * stripes.c - a layout's bytes filled in memory a stripe at a time, from
 * every key of every set, and written in place: the way left when a flat
 * block cannot be built from its sets' own filters (fill.c), nor a tree's
 * levels or RAMBO's repetitions from their columns' (unions.c). What a
 * key or a prebuilt filter sets, and how a section is cut, each layout
 * says in its own file (struct wlayout, layout.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bfi_hash.h"
#include "layout.h"
#include "sources.h"

/*
 * Add the ones of each column of the m rows of row_bytes at rows_off that
 * lie in [lo, hi), whose bytes are at buf, to ones[column]. A stripe may
 * begin or end inside a row; every bound is a multiple of 8 bytes, or of
 * a narrow row's 1, 2 or 4.
 */
void count_columns(const uint8_t *buf, uint64_t lo, uint64_t hi, uint64_t rows_off,
                          uint64_t m, uint64_t row_bytes, uint64_t *ones)
{
	uint64_t end = rows_off + m * row_bytes;
	uint64_t a = rows_off > lo ? rows_off : lo, z = end < hi ? end : hi;
	if (a >= z)
		return;
	for (uint64_t ro = rows_off + (a - rows_off) / row_bytes * row_bytes; ro < z; ro += row_bytes) {
		uint64_t from = ro > a ? ro : a, to = ro + row_bytes < z ? ro + row_bytes : z;
		/* a narrow RAMBO row (format 3.1) is fewer than 8 bytes: read it whole */
		for (uint64_t at = from; at < to; at += 8) {
			uint64_t x = 0;
			memcpy(&x, buf + (at - lo), to - at < 8 ? (size_t)(to - at) : 8);
			for (x = le64toh(x); x; x &= x - 1)
				ones[(at - ro) * 8 + (uint64_t)__builtin_ctzll(x)]++;
		}
	}
}

/* Prebuilt filters: filter j's bit r is row r of its column, in every layout. */
static void fill_filters(struct stripe_ctx *c, uint64_t lo, uint64_t hi)
{
	const struct plan *p = c->p;
	for (uint32_t j = 0; j < p->n; j++) {
		const bfi_filter *f = c->w->filt[p->old_of_new[j]];
		struct bfi_filter_stats fs;
		bfi_filter_stats(f, &fs);
		const uint8_t *bits = bfi_filter_bits(f);
		for (uint64_t byte = 0; byte < (fs.m + 7) / 8; byte++)
			for (unsigned x = bits[byte]; x; x &= x - 1)
				c->l->filter_bit(c, lo, hi, j, byte * 8 + (uint64_t)__builtin_ctz(x));
	}
}

/* One key of input set ord: its bits that fall in the stripe. */
struct stripe_key {
	struct stripe_ctx *c;
	uint64_t lo, hi;
};

static int stripe_key(void *ctx, uint32_t ord, bfi_keyhash h)
{
	const struct stripe_key *sk = ctx;
	sk->c->l->key(sk->c, sk->lo, sk->hi, sk->c->p->new_of_old[ord], h);
	return 0;
}

static int fill_stripe(struct stripe_ctx *c, uint64_t lo, uint64_t hi)
{
	if (c->buf == NULL && (c->buf = malloc((size_t)(c->budget < c->total ? c->budget
	                                                                       : c->total))) == NULL)
		return writer_fail(c->w, -ENOMEM, "cannot allocate a row stripe");
	memset(c->buf, 0, (size_t)(hi - lo));
	if (c->w->n_filt)
		fill_filters(c, lo, hi);
	struct stripe_key sk = {c, lo, hi};
	int rc = each_source_key(c->w, stripe_key, &sk);
	if (rc)
		return rc;
	if (c->l->count) /* each set's ones, for the catalog */
		c->l->count(c, lo, hi);
	c->done += hi - lo;
	progress(c->w, c->l->what, c->done, c->total);
	return pwrite_all(c->fd, c->buf, (size_t)(hi - lo), c->sec_off + lo);
}

int stripe_flush(struct stripe_ctx *c)
{
	int rc = c->end > c->start ? fill_stripe(c, c->start, c->end) : 0;
	c->start = c->end;
	return rc;
}

/*
 * Cut [lo, hi) of a section into stripes at unit boundaries (rows of
 * unit bytes from lo) that fit the budget, and fill each.
 */
int stripe_units(struct stripe_ctx *c, uint64_t lo, uint64_t hi, uint64_t unit)
{
	/* a unit larger than the budget (a long row, a wide filter) goes in several stripes */
	uint64_t most = c->budget / 64 * 64;
	if (unit > most)
		unit = most;
	for (uint64_t at = lo; at < hi; at += unit) {
		uint64_t to = hi - at < unit ? hi : at + unit;
		/* the stripe would run to `to`, gaps between regions included */
		if (c->end > c->start && to - c->start > c->budget) {
			int rc = fill_stripe(c, c->start, c->end);
			if (rc)
				return rc;
			c->start = at;
		}
		if (c->end == c->start)
			c->start = at;
		c->end = to;
	}
	return 0;
}

int write_layout(bfi_writer *w, const struct plan *p, int fd, uint64_t sec_off,
                 const struct wlayout *l)
{
	/*
	 * The rows get what the process does not hold yet: the spool's half,
	 * where sets read from files left it untouched, included.
	 * stripe_units cuts units larger than this.
	 */
	uint64_t size = l->size(p), data = l->data(p);
	struct stripe_ctx c = {w, p, fd, sec_off, l, NULL, writer_budget(w), 0, size - data, data, data};
	int rc = l->fill(&c);
	if (rc == 0)
		rc = stripe_flush(&c);
	free(c.buf);
	return rc;
}
