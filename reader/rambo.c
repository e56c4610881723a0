/*
 * rambo.c - queries on the RAMBO layout (spec/format.md, "RAMBO section").
 *
 * For a conjunction of keys, each repetition ANDs all the keys' rows into
 * a bitmap of matching cells. A set is a candidate when its cell matches
 * in every repetition: start from the repetition whose matching cells hold
 * the fewest members, and test each of them against the other bitmaps
 * through the cell-of tables. ANDing rows of several keys is exact here
 * too: a set holds a and b as far as RAMBO can tell exactly when its cell
 * holds both in every repetition.
 *
 * The cell tables are checked where they are used (a member below N, a
 * cell below B, starts in order), so a damaged table gives
 * BFI_E_BAD_LAYOUT, never a read outside the map.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "layout.h"

/* This file's own ops, defined at its end: the table (layouts.c) holds them. */
extern const struct bfi_layout_ops bfi__rambo_ops;

/* A RAMBO repetition, ready to query (spec/format.md, "RAMBO section"). */
struct bfi_rrep {
	const uint8_t *rows; /* row r at rows + r * row_bytes; bit c is cell c */
	uint64_t m, row_bytes;
	const uint8_t *starts;  /* cells + 1 u32 */
	const uint8_t *members; /* n_sets u32 */
	const uint8_t *cell_of; /* n_sets u32 */
};

struct bfi_rambo {
	struct bfi_rambo_desc d;
	struct bfi_rrep reps[BFI_MAX_REPS];
	/*
	 * A scan's pass (rambo_scan_rows): each key's cells in each
	 * repetition, its rows there ANDed already, row_words a bitmap, key g
	 * of the batch's repetition r at acc + (g R + r) words; the query
	 * being answered has its keys from acc_key0. NULL: read the rows.
	 */
	const uint64_t *acc;
	size_t acc_key0;
};

#define rambo_of(s) BFI_VIEW(s, BFI_ROW_RAMBO, struct bfi_rambo)

static int rambo_open(bfi_snapshot *s, const uint8_t *sec, uint64_t size, struct bfi_where *at)
{
	struct bfi_rep reps[BFI_MAX_REPS];
	struct bfi_rambo *v = s->view[BFI_ROW_RAMBO];
	int rc = bfi_rambo_decode(sec, size, s->lay.hdr.minor, &v->d, reps, at);
	for (uint32_t r = 0; rc == 0 && r < v->d.reps; r++)
		v->reps[r] = (struct bfi_rrep){sec + reps[r].rows_offset, reps[r].m, reps[r].row_bytes,
		                               sec + reps[r].starts_offset, sec + reps[r].members_offset,
		                               sec + reps[r].cell_of_offset};
	return rc;
}

#define LOOKAHEAD 16 /* members ahead whose cell-of entries are prefetched */

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

/*
 * Word w of a row of row_bytes bytes, in file order: RAMBO rows are whole
 * 64-bit words, or, of 64 cells or fewer, 1, 2, 4 or 8 bytes (format 3.1),
 * read as the low bytes of one word.
 */
static inline uint64_t row_word(const uint8_t *row, size_t w, uint64_t row_bytes)
{
	uint64_t v = 0;
	memcpy(&v, row + 8 * w, row_bytes < 8 ? (size_t)row_bytes : 8);
	return v;
}

/* 64-bit words of a bitmap of a row's cells. */
static size_t row_words(uint64_t row_bytes)
{
	return (size_t)((row_bytes + 7) / 8);
}

/*
 * map = AND of the n rows of row_bytes each, a word at a time, dropping a
 * word as soon as it is zero.
 */
static void and_words(const uint8_t *const *rows, size_t n, uint64_t row_bytes, uint64_t *map,
                      uint64_t *touched)
{
	uint64_t loads = 0;
	for (size_t w = 0; w < row_words(row_bytes); w++) {
		uint64_t acc = ~0ull;
		for (size_t i = 0; i < n && acc; i++, loads++)
			acc &= row_word(rows[i], w, row_bytes);
		map[w] = acc;
	}
	if (touched)
		*touched += loads * 8;
}

static int test_bit(const uint64_t *v, uint64_t i)
{
	return (int)(le64toh(v[i / 64]) >> (i % 64) & 1);
}

/*
 * Sets whose cells match the conjunction node n in every repetition, into
 * out (room for N), ascending. Returns the count, or a negative error.
 */
static long rambo_conj(const bfi_snapshot *s, const struct bfi_expr *e, const struct bfi_enode *n,
                 bfi_result *res, uint32_t *out)
{
	const struct bfi_rambo *v = rambo_of(s);
	const struct bfi_rambo_desc *d = &v->d;
	uint32_t k = d->k; /* rambo sizes its own cells, so its k is its own */
	size_t words = row_words(v->reps[0].row_bytes);
	uint64_t *touched = res->count_bytes ? &res->touched : NULL;
	uint64_t best = UINT64_MAX;
	uint32_t best_r = 0;
	for (uint32_t r = 0; r < d->reps; r++) {
		const struct bfi_rrep *rp = &v->reps[r];
		/* repetition r takes the key's probes r k .. r k + k - 1, unless all share 0 .. k - 1 */
		uint32_t base = d->flags & BFI_RAMBO_SHARED_PROBES ? 0 : r * k;
		uint64_t *map = res->vec + (size_t)r * words;
		if (v->acc) { /* a scan's pass: the keys' cells, their rows ANDed already */
			memset(map, 0xff, words * 8);
			for (uint32_t j = 0; j < n->n_keys; j++) {
				const uint64_t *a =
				        v->acc + ((v->acc_key0 + e->kidx[n->first_key + j]) * d->reps + r) * words;
				for (size_t w = 0; w < words; w++)
					map[w] &= a[w];
			}
		} else {
			size_t nr = bfi__conj_rows(e, n, k, base, rp->rows, rp->m, rp->row_bytes, res->rows);
			and_words(res->rows, nr, rp->row_bytes, map, touched);
		}
		uint64_t cand = 0;
		for (size_t w = 0; w < words; w++)
			for (uint64_t x = le64toh(map[w]); x; x &= x - 1) {
				uint64_t c = w * 64 + (uint64_t)__builtin_ctzll(x);
				if (c >= d->cells)
					return BFI_E_BAD_LAYOUT; /* padding bit set */
				uint32_t a = bfi_get32(rp->starts + c * 4), b = bfi_get32(rp->starts + c * 4 + 4);
				if (a > b || b > d->n_sets)
					return BFI_E_BAD_LAYOUT;
				cand += b - a;
			}
		if (cand < best) {
			best = cand;
			best_r = r;
		}
		if (cand == 0)
			return 0; /* no cell matches in this repetition: no set can */
	}
	const struct bfi_rrep *rb = &v->reps[best_r];
	const uint64_t *mb = res->vec + (size_t)best_r * words;
	long count = 0;
	for (size_t w = 0; w < words; w++)
		for (uint64_t x = le64toh(mb[w]); x; x &= x - 1) {
			uint64_t c = w * 64 + (uint64_t)__builtin_ctzll(x);
			uint32_t a = bfi_get32(rb->starts + c * 4), b = bfi_get32(rb->starts + c * 4 + 4);
			for (uint32_t at = a; at < b; at++) {
				/* the cell-of lookups are random: start those of a later member now */
				if (at + LOOKAHEAD < b) {
					uint32_t ahead = bfi_get32(rb->members + (size_t)(at + LOOKAHEAD) * 4);
					if (ahead < d->n_sets)
						for (uint32_t r = 0; r < d->reps; r++)
							if (r != best_r)
								bfi__prefetch(v->reps[r].cell_of + (size_t)ahead * 4);
				}
				uint32_t set = bfi_get32(rb->members + (size_t)at * 4);
				if (set >= d->n_sets)
					return BFI_E_BAD_LAYOUT;
				uint32_t r = 0;
				for (; r < d->reps; r++) {
					if (r == best_r)
						continue;
					uint32_t cell = bfi_get32(v->reps[r].cell_of + (size_t)set * 4);
					if (cell >= d->cells)
						return BFI_E_BAD_LAYOUT;
					if (!test_bit(res->vec + (size_t)r * words, cell))
						break;
				}
				if (r == d->reps)
					out[count++] = set;
			}
		}
	if (touched)
		*touched += (uint64_t)best * 4; /* the members read, at least */
	if (count > 1)
		qsort(out, (size_t)count, sizeof *out, cmp_u32);
	return count;
}

int bfi_rambo_rep(const bfi_snapshot *s, uint32_t rep, uint64_t *m, struct bfi_rambo_cell_info *cells)
{
	const struct bfi_rambo *v = s ? rambo_of(s) : NULL;
	if (v && s->lazy)
		return BFI_E_SCAN_ONLY;
	if (v == NULL || m == NULL || rep >= v->d.reps)
		return BFI_E_INVALID;
	const struct bfi_rrep *rp = &v->reps[rep];
	*m = rp->m;
	if (cells == NULL)
		return 0;
	uint64_t B = v->d.cells;
	for (uint64_t c = 0; c < B; c++) {
		uint32_t a = bfi_get32(rp->starts + c * 4), b = bfi_get32(rp->starts + c * 4 + 4);
		if (a > b || b > v->d.n_sets)
			return BFI_E_BAD_LAYOUT;
		cells[c].sets = b - a;
		cells[c].bits_set = 0;
	}
	for (uint64_t r = 0; r < rp->m; r++) {
		const uint8_t *row = rp->rows + r * rp->row_bytes;
		for (uint64_t w = 0; w < row_words(rp->row_bytes); w++)
			for (uint64_t x = le64toh(row_word(row, w, rp->row_bytes)); x; x &= x - 1) {
				uint64_t c = w * 64 + (uint64_t)__builtin_ctzll(x);
				if (c < B)
					cells[c].bits_set++;
			}
	}
	return 0;
}

int bfi_rambo_rows(const bfi_snapshot *s, uint32_t rep, const uint8_t **rows, uint64_t *m,
                   uint64_t *row_bytes)
{
	const struct bfi_rambo *v = s ? rambo_of(s) : NULL;
	if (v && s->lazy)
		return BFI_E_SCAN_ONLY;
	if (v == NULL || rows == NULL || m == NULL || row_bytes == NULL || rep >= v->d.reps)
		return BFI_E_INVALID;
	*rows = v->reps[rep].rows;
	*m = v->reps[rep].m;
	*row_bytes = v->reps[rep].row_bytes;
	return 0;
}


/* Each key's rows, and one bitmap of cells per repetition. */
static void rambo_scratch(const bfi_snapshot *s, size_t *rows, size_t *words)
{
	const struct bfi_rambo *v = rambo_of(s);
	*rows = v->d.k;
	*words = (size_t)v->d.reps * row_words(v->reps[0].row_bytes);
}

static void rambo_info(const bfi_snapshot *s, struct bfi_layout_info *out)
{
	const struct bfi_rambo *v = rambo_of(s);
	out->hashes = v->d.k;
	out->n_sets = v->d.n_sets;
	out->u.rambo = (struct bfi_rambo_info){v->d.reps, v->d.cells, v->d.shards,
	                                       (v->d.flags & BFI_RAMBO_SHARED_PROBES) != 0};
	for (uint32_t r = 0; r < v->d.reps; r++)
		if (v->reps[r].m > out->bits)
			out->bits = v->reps[r].m;
}

/* Padding bits of the rows; cell starts ascend from 0 to N; members sit in their cells. */
static int rambo_verify(const bfi_snapshot *s, struct bfi_bad *bad)
{
	const struct bfi_rambo *v = rambo_of(s);
	uint64_t cells = v->d.cells, n_sets = v->d.n_sets;
	for (uint32_t r = 0; r < v->d.reps; r++) {
		const struct bfi_rrep *rp = &v->reps[r];
		if (bfi__rows_padding(s, rp->rows, rp->m, rp->row_bytes, cells, bad))
			return bfi__bad(bad, BFI_E_BAD_LAYOUT, bad->offset, 1,
			                "padding bit past the last rambo cell is not zero");
		uint64_t prev = 0;
		for (uint64_t c = 0; c <= cells; c++) {
			uint32_t a = bfi_get32(rp->starts + c * 4);
			if (a < prev || a > n_sets || (c == 0 && a != 0) || (c == cells && a != n_sets))
				return bfi__bad(bad, BFI_E_BAD_LAYOUT, (uint64_t)(rp->starts - s->map) + c * 4, 4,
				                "rambo cell starts out of order or out of range");
			for (uint32_t at = a; c < cells && at < bfi_get32(rp->starts + c * 4 + 4) && at < n_sets;
			     at++) {
				uint32_t set = bfi_get32(rp->members + (uint64_t)at * 4);
				if (set >= n_sets || bfi_get32(rp->cell_of + (uint64_t)set * 4) != c ||
				    (at > a && bfi_get32(rp->members + (uint64_t)at * 4 - 4) >= set))
					return bfi__bad(bad, BFI_E_BAD_LAYOUT,
					                (uint64_t)(rp->members - s->map) + (uint64_t)at * 4, 4,
					                "rambo members disagree with the cell-of table");
			}
			prev = a;
		}
	}
	return 0;
}

/* Rambo's fill ratios are of the set's cell in repetition 0. */
static uint64_t rambo_set_bits(const bfi_snapshot *s, uint32_t ord)
{
	(void)ord;
	return rambo_of(s)->reps[0].m;
}

/*
 * Scan (scan.c): RAMBO is scanned whole. Every repetition's cell tables,
 * and for each key each of its probes' rows in every repetition, with
 * the word a narrow row is read as.
 */
static int rambo_scan_bytes(const bfi_snapshot *s, uint64_t first, uint64_t n,
                            const struct bfi_expr *e, struct bfi_want *w)
{
	const struct bfi_rambo *v = rambo_of(s);
	int rc = 0;
	(void)first;
	(void)n;
	for (uint32_t r = 0; r < v->d.reps && rc == 0; r++) {
		const struct bfi_rrep *rp = &v->reps[r];
		if (e == NULL) {
			uint64_t at = (uint64_t)(rp->starts - s->map);
			rc = bfi__want(w, at, at + 4 * (v->d.cells + 1));
			at = (uint64_t)(rp->members - s->map);
			if (rc == 0)
				rc = bfi__want(w, at, at + 4 * v->d.n_sets);
			at = (uint64_t)(rp->cell_of - s->map);
			if (rc == 0)
				rc = bfi__want(w, at, at + 4 * v->d.n_sets);
			continue;
		}
		uint32_t base = v->d.flags & BFI_RAMBO_SHARED_PROBES ? 0 : r * v->d.k;
		for (uint32_t x = 0; x < e->n_keys && rc == 0; x++)
			for (uint32_t i = 0; i < v->d.k && rc == 0; i++) {
				uint64_t at = (uint64_t)(rp->rows - s->map) +
				              bfi_hash_pos(e->keys[x], base + i, rp->m) * rp->row_bytes;
				rc = bfi__want(w, at, at + rp->row_bytes + 8);
			}
	}
	return rc;
}

static int rambo_scan_view(const bfi_snapshot *s, uint64_t first, uint64_t n, const uint8_t *shadow,
                           bfi_snapshot *v, uint32_t *ord0)
{
	const struct bfi_rambo *r = rambo_of(s);
	struct bfi_rambo *part = v->view[BFI_ROW_RAMBO];
	(void)first;
	(void)n;
	*part = *r;
	for (uint32_t i = 0; i < r->d.reps; i++) {
		part->reps[i].rows = bfi__in_shadow(s, r->reps[i].rows, shadow);
		part->reps[i].starts = bfi__in_shadow(s, r->reps[i].starts, shadow);
		part->reps[i].members = bfi__in_shadow(s, r->reps[i].members, shadow);
		part->reps[i].cell_of = bfi__in_shadow(s, r->reps[i].cell_of, shadow);
	}
	*ord0 = 0;
	return 0;
}

/*
 * Scan, a pass over the rows (layout.h, scan_rows; ranges.c): when the
 * rows a batch needs pass the budget, each key keeps a bitmap of cells a
 * repetition, all ones ANDed with its k rows there as the pass reaches
 * them in file order; then the cell tables are read, and every query is
 * answered as mapped, its conjunctions ANDing those bitmaps where they
 * would AND rows (rambo_conj, acc). The state is R bitmaps of B cells a
 * key; a batch whose state does not fit beside a few rows is declined.
 */
struct rpass {
	const bfi_snapshot *s;
	const struct bfi_rambo *v;
	const uint8_t *shadow;
	const bfi_keyhash **key;
	uint64_t *acc;
	size_t words;
};

/* Key g's probe j: repetition j / k, its (j % k)-th position there. */
static int rambo_probe(void *ctx, size_t g, uint32_t j, uint64_t *off)
{
	const struct rpass *p = ctx;
	const struct bfi_rambo *v = p->v;
	uint32_t k = v->d.k, r = j / k;
	const struct bfi_rrep *rp = &v->reps[r];
	uint32_t base = v->d.flags & BFI_RAMBO_SHARED_PROBES ? 0 : r * k;
	*off = (uint64_t)(rp->rows - p->s->map) +
	       bfi_hash_pos(*p->key[g], base + j % k, rp->m) * rp->row_bytes;
	return 1;
}

/* The row probe pr: its key's cells in the repetition ANDed with the row. */
static void rambo_apply(void *ctx, const struct bfi_probe *pr)
{
	const struct rpass *p = ctx;
	uint32_t r = pr->j / p->v->d.k;
	uint64_t rb = p->v->reps[r].row_bytes;
	uint64_t *a = p->acc + ((size_t)pr->key * p->v->d.reps + r) * p->words;
	for (size_t w = 0; w < p->words; w++)
		a[w] &= row_word(p->shadow + pr->off, w, rb);
}

/* The pass's bitmaps, for the view's queries (bfi__pass_answer). */
static size_t *rambo_attach(void *ctx, void *view)
{
	struct bfi_rambo *part = view;
	part->acc = ((const struct rpass *)ctx)->acc;
	return &part->acc_key0;
}

/* The state a pass keeps for a key: a bitmap of cells a repetition, its key, its probes. */
static uint64_t rambo_key_state(const bfi_snapshot *s)
{
	const struct bfi_rambo *v = rambo_of(s);
	return v->d.reps * row_words(v->reps[0].row_bytes) * 8 + sizeof(bfi_keyhash *) +
	       (uint64_t)v->d.reps * v->d.k * sizeof(struct bfi_probe);
}

static int rambo_scan_rows(const bfi_snapshot *s, uint64_t first, uint64_t n,
                           const struct bfi_expr *const *qs, size_t nq, double theta,
                           bfi_result *const *res, struct bfi_scan_io *io)
{
	const struct bfi_rambo *v = rambo_of(s);
	const struct bfi_rambo_desc *d = &v->d;
	struct rpass p = {.s = s, .v = v, .shadow = io->shadow,
	                  .words = row_words(v->reps[0].row_bytes)};
	(void)first;
	(void)n;
	uint64_t keys = 0, lo = UINT64_MAX, hi = 0, span = 0, tables = 0;
	for (size_t q = 0; q < nq; q++)
		keys += qs[q]->n_keys;
	for (uint32_t r = 0; r < d->reps; r++) {
		const struct bfi_rrep *rp = &v->reps[r];
		uint64_t at = (uint64_t)(rp->rows - s->map);
		lo = at < lo ? at : lo;
		hi = at + rp->m * rp->row_bytes > hi ? at + rp->m * rp->row_bytes : hi;
		span = rp->row_bytes + 8 > span ? rp->row_bytes + 8 : span;
		if (row_words(rp->row_bytes) != p.words)
			return BFI_SCAN_DECLINE; /* never: a repetition's rows hold the B cells */
		/* the cell tables' pages, read once the rows are in */
		tables += 4 * (d->cells + 1) / BFI_SCAN_PAGE + 2 +
		          2 * (4 * (uint64_t)d->n_sets / BFI_SCAN_PAGE + 2);
	}
	size_t pages = (size_t)(hi / BFI_SCAN_PAGE - lo / BFI_SCAN_PAGE + 2);
	uint64_t n_probes = keys * d->reps * d->k;
	/* the state: the bitmaps, the keys, the probes and their count a page */
	uint64_t state = bfi__mul_add(keys, rambo_key_state(s), 0);
	state = bfi__mul_add(pages + 1, sizeof(uint32_t), state);
	if (bfi__pass_fits(io, state, tables, span, n_probes))
		return BFI_SCAN_DECLINE;
	struct bfi_probes pb = {0};
	int rc = (p.key = malloc((size_t)(keys ? keys : 1) * sizeof *p.key)) ? 0 : -ENOMEM;
	if (rc == 0)
		bfi__pass_keys(qs, nq, p.key);
	if (rc == 0 && (p.acc = malloc((size_t)(keys ? keys : 1) * d->reps * p.words * 8)) == NULL)
		rc = -ENOMEM;
	if (rc == 0) {
		memset(p.acc, 0xff, (size_t)keys * d->reps * p.words * 8);
		rc = bfi__probes_by_page(&pb, lo / BFI_SCAN_PAGE, pages, (size_t)keys, d->reps * d->k,
		                         rambo_probe, &p);
	}
	if (rc == 0)
		rc = bfi__probe_ranges(io, &pb, span, NULL, rambo_apply, NULL, &p);
	if (rc == 0)
		rc = bfi__pass_answer(io, s, &bfi__rambo_ops, BFI_ROW_RAMBO, rambo_attach, &p, qs, nq,
		                      theta, res);
	free(pb.pr);
	free(pb.at);
	free(p.key);
	free(p.acc);
	return rc;
}

/*
 * Each set's chance of a false answer: the product over repetitions of
 * its cell's (fill)^k; and Lemma 4.1's p, a cell's (fill)^k weighted by
 * the sets it merges, averaged over the repetitions.
 */
static int rambo_fpr(const bfi_snapshot *s, struct bfi_fpr_model *out)
{
	const struct bfi_rambo *v = rambo_of(s);
	uint64_t B = v->d.cells, n = v->d.n_sets;
	uint32_t R = v->d.reps;
	struct bfi_rambo_cell_info *cells = malloc(B * sizeof *cells);
	double *pass = malloc(B * R * sizeof *pass), *set = malloc(n * sizeof *set);
	int rc = cells && pass && set ? 0 : -ENOMEM;
	double psum = 0;
	for (uint64_t j = 0; rc == 0 && j < n; j++)
		set[j] = 1;
	for (uint32_t r = 0; r < R && rc == 0; r++) {
		uint64_t m;
		if ((rc = bfi_rambo_rep(s, r, &m, cells)) != 0)
			break;
		double p = 0;
		for (uint64_t c = 0; c < B; c++) {
			pass[r * B + c] = pow(m ? (double)cells[c].bits_set / (double)m : 0, v->d.k);
			p += pass[r * B + c] * (double)cells[c].sets;
		}
		psum += p / (double)n;
		for (uint64_t j = 0; j < n; j++) {
			uint32_t c = bfi_get32(v->reps[r].cell_of + j * 4);
			if (c >= B) {
				rc = BFI_E_BAD_LAYOUT;
				break;
			}
			set[j] *= pass[r * B + c];
		}
	}
	double sum = 0;
	for (uint64_t j = 0; rc == 0 && j < n; j++)
		sum += set[j];
	if (rc == 0)
		*out = (struct bfi_fpr_model){n ? sum / (double)n : 0, R ? psum / R : 0};
	free(cells);
	free(pass);
	free(set);
	return rc;
}

const struct bfi_layout_ops bfi__rambo_ops = {
	.own_k = 1, .fpr = rambo_fpr,
	.view_size = sizeof(struct bfi_rambo), .open = rambo_open,
	.info = rambo_info, .verify = rambo_verify, .set_bits = rambo_set_bits,
	.conj = rambo_conj, .scratch = rambo_scratch,
	.scan_part = bfi__scan_whole, .scan_bytes = rambo_scan_bytes, .scan_view = rambo_scan_view,
	.scan_rows = rambo_scan_rows, .scan_key_state = rambo_key_state,
};
