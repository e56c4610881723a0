/*
 * rambo.c - the RAMBO layout's plan (spec/format.md, "Choosing the RAMBO
 * parameters") and its cell tables.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bfi.h"
#include "bfi_hash.h"
#include "layout.h"

/* The plan: the descriptor and repetitions, each set's cells, the cells' ones. */
struct rambo_plan {
	struct bfi_rambo_desc d;
	struct bfi_rep reps[BFI_MAX_REPS];
	uint32_t *cell_of; /* reps x n: the cell of ordinal j in repetition r */
	uint64_t size;
	uint64_t *cell_ones; /* ones of each cell of repetition 0 */
};
static struct rambo_plan *rambo_of(const struct plan *p)
{
	return p->own[BFI_ROW_RAMBO];
}


/*
 * RAMBO parameters (spec/format.md, "Choosing the RAMBO parameters"):
 * B, the cells per repetition, is the power of two at or above sqrt(N);
 * R, the repetitions, the least (at least 2) that brings Lemma 4.1's rate
 * for a key of one set, (p (1 - 1/B) + 1/B)^R, down to p. Each repetition's
 * filters are as wide as its largest cell union needs (HyperLogLog with
 * 2^8 registers, plus 15%).
 */
static int plan_rambo(bfi_writer *w, struct plan *p)
{
	if (plan_own(p, BFI_ROW_RAMBO, sizeof(struct rambo_plan)) == NULL)
		return -ENOMEM;
	struct rambo_plan *ra = rambo_of(p);
	const struct bfi_build_options *o = &w->opt;
	uint64_t cells = w->raw ? w->raw->cells : o->cells;
	uint64_t shards = w->raw ? w->raw->shards : o->shards ? o->shards : 1;
	if (cells == 0) { /* the even number at or above sqrt(N), a multiple of S */
		cells = ceil_u64(sqrt((double)p->n));
		cells += cells % 2;
		cells = cells < 2 ? 2 : cells;
		cells = (cells + shards - 1) / shards * shards;
	}
	/* cells at rate min(p, 1/B): a key then matches about one wrong cell per
	 * repetition, so candidates grow as N/B, not as N p */
	double pc = o->fpr < 1.0 / (double)cells ? o->fpr : 1.0 / (double)cells;
	double base = pc * (1 - 1.0 / (double)cells) + 1.0 / (double)cells;
	uint32_t kr = w->raw ? w->raw->k : o->hashes ? o->hashes : filter_k(pc, NULL);
	uint32_t reps = w->raw ? w->raw->reps : o->reps;
	if (reps == 0) {
		double rd = ceil(log(o->fpr) / log(base));
		reps = !(rd >= 2) ? 2 : rd > BFI_MAX_REPS ? BFI_MAX_REPS : (uint32_t)rd;
	}
	if (cells > BFI_MAX_CELLS || cells % shards || reps > BFI_MAX_REPS)
		return writer_fail(w, BFI_E_INVALID,
		                   "rambo: %llu cells, %llu shards, %u repetitions: cells must be at most "
		                   "2^24 and a multiple of the shards, repetitions at most 64",
		                   (unsigned long long)cells, (unsigned long long)shards, reps);
	/* prebuilt filters hold probes 0 .. k - 1 only: every repetition tests those */
	uint32_t shared = w->n_filt || (w->raw && w->raw->shared_probes) ? BFI_RAMBO_SHARED_PROBES : 0;
	struct bfi_rambo_desc d = {p->n,  kr,    BFI_HASH_XXH3_MIX, reps, BFI_PARTITION_XXH3,
	                           cells, (uint32_t)shards, BFI_RAMBO_DESC_SIZE, shared};
	ra->d = d;
	ra->cell_of = malloc((size_t)reps * p->n * sizeof *ra->cell_of);
	ra->cell_ones = calloc((size_t)cells, sizeof *ra->cell_ones);
	size_t regs = SET_HLL_REGS;
	int sized = o->bits || w->raw; /* widths given: no need to estimate unions */
	uint8_t *reg = sized ? NULL : calloc((size_t)reps * cells, regs);
	if (!ra->cell_of || !ra->cell_ones || (!sized && !reg)) {
		free(reg);
		return -ENOMEM;
	}
	for (uint32_t r = 0; r < reps; r++)
		for (uint32_t j = 0; j < p->n; j++) {
			size_t len;
			const char *name = names_get(&w->names, p->old_of_new[j], &len);
			ra->cell_of[(size_t)r * p->n + j] = bfi_rambo_cell(name, len, r, cells, (uint32_t)shards);
		}
	int rc = 0;
	for (uint32_t in = 0; reg && in < p->n; in++) {
		uint32_t j = p->new_of_old[in];
		for (uint32_t r = 0; r < reps; r++) {
			uint64_t c = ra->cell_of[(size_t)r * p->n + j];
			hll_merge(reg + ((size_t)r * cells + c) * regs, w->sums.hll + (size_t)in * regs, regs);
		}
	}
	for (uint32_t r = 0; r < reps && rc == 0; r++) {
		double widest = 0;
		for (uint64_t c = 0; reg && c < cells; c++) {
			double u = hll_count_bits(reg + ((size_t)r * cells + c) * regs, SET_HLL_BITS);
			widest = u > widest ? u : widest;
		}
		ra->reps[r].m = w->raw ? w->raw->m[r]
		                      : width_for(&(struct bfi_build_options){.fpr = pc, .bits = o->bits},
		                                  ceil_u64(widest * 1.15), kr);
		if (ra->reps[r].m == 0)
			rc = writer_fail(w, BFI_E_LIMIT,
			                 "rambo: a cell of about %.0f keys needs a filter wider than 2^40 "
			                 "bits; use more --cells",
			                 widest);
	}
	free(reg);
	if (rc)
		return rc;
	/* rows narrower than 3.0's whole words, for B <= 32, are a 3.1 feature */
	if (bfi_cell_row_bytes(cells, 1) != bfi_rambo_row_bytes(cells))
		p->minor = 1;
	ra->size = bfi_rambo_layout(ra->reps, reps, p->n, cells, p->minor);
	if (!(o->layouts & (BFI_BUILD_FLAT | BFI_BUILD_PLAIN)))
		p->k = ra->d.k; /* the catalog's k: that of the first layout */
	return ra->size ? 0 : BFI_E_LIMIT;
}

/*
 * The members of each cell of repetition r, by cell and in ordinal order:
 * cell c's at members[starts[c] .. starts[c + 1]) (cells + 1 starts, n
 * members).
 */
static void cell_members(const struct plan *p, uint32_t r, uint32_t *starts, uint32_t *members)
{
	struct rambo_plan *ra = rambo_of(p);
	uint64_t cells = ra->d.cells;
	const uint32_t *co = ra->cell_of + (size_t)r * p->n;
	memset(starts, 0, ((size_t)cells + 1) * sizeof *starts);
	for (uint32_t j = 0; j < p->n; j++)
		starts[co[j] + 1]++;
	for (uint64_t c = 0; c < cells; c++)
		starts[c + 1] += starts[c];
	for (uint32_t j = 0; j < p->n; j++) /* ascending j: members sorted within a cell */
		members[starts[co[j]]++] = j;
	for (uint64_t c = cells; c > 0; c--) /* each cell's start again */
		starts[c] = starts[c - 1];
	starts[0] = 0;
}

/*
 * The repetitions from their cells' own filters (unions.c), written at
 * sec_off: 0, 1 if they would not fit in budget bytes or the rows are
 * given (nothing done), or an error.
 */
static int fill_rambo_reps(bfi_writer *w, const struct plan *p, int fd, uint64_t sec_off, uint64_t budget)
{
	struct rambo_plan *ra = rambo_of(p);
	if (w->raw)
		return 1; /* rows given: copied */
	uint64_t cells = ra->d.cells;
	for (uint32_t r = 0; r < ra->d.reps; r++) {
		const struct bfi_rep *rp = &ra->reps[r];
		uint64_t filt = 64 * ((rp->m + 63) / 64) * 8;
		if (rp->m * rp->row_bytes > budget || filt > budget - rp->m * rp->row_bytes)
			return 1;
	}
	uint32_t *starts = malloc((size_t)(cells + 1) * sizeof *starts);
	uint32_t *list = malloc((size_t)p->n * sizeof *list);
	int rc = starts && list ? 0 : -ENOMEM;
	for (uint32_t r = 0; rc == 0 && r < ra->d.reps; r++) {
		cell_members(p, r, starts, list); /* each cell's members, as the file's tables hold them */
		const struct bfi_rep *rp = &ra->reps[r];
		struct columns c = {.w = w, .p = p, .m = rp->m, .row_bytes = rp->row_bytes, .n = cells,
		                    .k = ra->d.k, .first_probe = r * ra->d.k,
		                    .list = list, .starts = starts,
		                    .ones = r == 0 ? ra->cell_ones : NULL};
		rc = fill_columns(&c, fd, sec_off + rp->rows_offset, budget);
		progress(w, "rambo rows", r + 1, ra->d.reps);
	}
	free(starts);
	free(list);
	return rc;
}

/* The cell tables of each repetition: starts, members by cell, cell of each set. */
static int write_rambo_tables(int fd, const struct plan *p, uint64_t sec_off)
{
	struct rambo_plan *ra = rambo_of(p);
	uint64_t cells = ra->d.cells;
	uint8_t *starts = malloc((size_t)(cells + 1) * 4), *members = malloc((size_t)p->n * 4),
	        *cell_of = malloc((size_t)p->n * 4);
	uint32_t *st = malloc(((size_t)cells + 1) * sizeof *st), *mem = malloc((size_t)p->n * sizeof *mem);
	int rc = starts && members && cell_of && st && mem ? 0 : -ENOMEM;
	for (uint32_t r = 0; r < ra->d.reps && rc == 0; r++) {
		const uint32_t *co = ra->cell_of + (size_t)r * p->n;
		cell_members(p, r, st, mem);
		for (uint64_t c = 0; c <= cells; c++)
			bfi_put32(starts + c * 4, st[c]);
		for (uint32_t j = 0; j < p->n; j++) {
			bfi_put32(members + (size_t)j * 4, mem[j]);
			bfi_put32(cell_of + (size_t)j * 4, co[j]);
		}
		const struct bfi_rep *rp = &ra->reps[r];
		rc = pwrite_all(fd, starts, (size_t)(cells + 1) * 4, sec_off + rp->starts_offset);
		if (rc == 0)
			rc = pwrite_all(fd, members, (size_t)p->n * 4, sec_off + rp->members_offset);
		if (rc == 0)
			rc = pwrite_all(fd, cell_of, (size_t)p->n * 4, sec_off + rp->cell_of_offset);
	}
	free(starts);
	free(members);
	free(cell_of);
	free(st);
	free(mem);
	return rc;
}

/* ---- RAMBO's rows a stripe at a time (stripes.c) ---- */

/* Each cell: the OR of its sets' filters, in every repetition. */
static void rambo_filter_bit(const struct stripe_ctx *c, uint64_t lo, uint64_t hi, uint32_t j,
                             uint64_t row)
{
	const struct plan *p = c->p;
	for (uint32_t rep = 0; rep < rambo_of(p)->d.reps; rep++) {
		const struct bfi_rep *rp = &rambo_of(p)->reps[rep];
		uint64_t cell = rambo_of(p)->cell_of[(size_t)rep * p->n + j];
		stripe_bit(c->buf, lo, hi, rp->rows_offset + row * rp->row_bytes + cell / 8, cell % 8);
	}
}

static void rambo_key(const struct stripe_ctx *c, uint64_t lo, uint64_t hi, uint32_t j,
                      bfi_keyhash h)
{
	const struct plan *p = c->p;
	for (uint32_t rep = 0; rep < rambo_of(p)->d.reps; rep++) {
		const struct bfi_rep *rp = &rambo_of(p)->reps[rep];
		uint64_t cell = rambo_of(p)->cell_of[(size_t)rep * p->n + j];
		/* repetition rep takes probes rep k .. rep k + k - 1: independent filters */
		uint32_t kr = rambo_of(p)->d.k;
		for (uint32_t i = 0; i < kr; i++) {
			uint64_t row = bfi_hash_pos(h, rep * kr + i, rp->m);
			stripe_bit(c->buf, lo, hi, rp->rows_offset + row * rp->row_bytes + cell / 8, cell % 8);
		}
	}
}

/* The ones of repetition 0's cells: the catalog's, when RAMBO is the only layout. */
static void rambo_count(const struct stripe_ctx *c, uint64_t lo, uint64_t hi)
{
	const struct bfi_rep *rp = &rambo_of(c->p)->reps[0];
	count_columns(c->buf, lo, hi, rp->rows_offset, rp->m, rp->row_bytes, rambo_of(c->p)->cell_ones);
}

/* Repetition 0's ones of n rows of given bytes each, by cell. */
static void count_cells(const struct plan *p, const uint8_t *rows, uint64_t n, uint64_t given)
{
	for (uint64_t i = 0; i < n * given / 8; i++)
		for (uint64_t x = bfi_get64(rows + i * 8); x; x &= x - 1)
			rambo_of(p)->cell_ones[(i % (given / 8)) * 64 + (uint64_t)__builtin_ctzll(x)]++;
}

/*
 * Repetition r of rows made as they are written (bfi_writer_rambo_rows_made):
 * as many at a time as half the budget holds, narrowed in place for the
 * file's row width, written, and let go.
 */
static int made_rows(bfi_writer *w, const struct plan *p, uint32_t r, int fd, uint64_t sec_off,
                     uint64_t budget)
{
	const struct bfi_rep *rp = &rambo_of(p)->reps[r];
	uint64_t given = bfi_rambo_row_bytes(rambo_of(p)->d.cells), rb = rp->row_bytes;
	uint64_t per = budget / 2 / given ? budget / 2 / given : 1;
	if (per > rp->m)
		per = rp->m;
	uint8_t *buf = malloc((size_t)(per * given));
	if (buf == NULL)
		return -ENOMEM;
	int rc = 0;
	for (uint64_t first = 0; first < rp->m && rc == 0; first += per) {
		uint64_t n = rp->m - first < per ? rp->m - first : per;
		memset(buf, 0, (size_t)(n * given));
		rc = w->raw_row(w->raw_ctx, r, first, n, buf);
		if (rc) {
			rc = writer_fail(w, rc, "the rows of repetition %u: %s", r, bfi_strerror(rc));
			break;
		}
		if (r == 0)
			count_cells(p, buf, n, given);
		for (uint64_t i = 1; rb != given && i < n; i++) /* narrower rows: packed in place */
			memmove(buf + i * rb, buf + i * given, (size_t)rb);
		rc = pwrite_all(fd, buf, (size_t)(n * rb), sec_off + rp->rows_offset + first * rb);
	}
	free(buf);
	return rc;
}

/*
 * Repetition r of rows given whole (bfi_writer_rambo_rows: ceil(B / 64)
 * words each) as the file's rows, narrower for small B (format 3.1);
 * repetition 0's ones counted per cell.
 */
static int write_raw_rows(bfi_writer *w, const struct plan *p, uint32_t r, int fd, uint64_t sec_off,
                          uint64_t budget)
{
	const struct bfi_rep *rp = &rambo_of(p)->reps[r];
	uint64_t given = bfi_rambo_row_bytes(rambo_of(p)->d.cells), rb = rp->row_bytes;
	const uint8_t *in = w->raw->rows[r];
	if (in == NULL)
		return made_rows(w, p, r, fd, sec_off, budget);
	uint8_t *out = rb == given ? NULL : malloc((size_t)(rp->m * rb));
	if (rb != given && out == NULL)
		return -ENOMEM;
	for (uint64_t i = 0; out && i < rp->m; i++)
		memcpy(out + i * rb, in + i * given, (size_t)rb);
	int rc = pwrite_all(fd, out ? out : in, (size_t)(rp->m * rb), sec_off + rp->rows_offset);
	if (r == 0)
		count_cells(p, in, rp->m, given);
	free(out);
	return rc;
}

/* From the cells' own filters where they fit; given rows copied; else in stripes. */
static int rambo_fill(struct stripe_ctx *c)
{
	const struct plan *p = c->p;
	struct rambo_plan *ra = rambo_of(p);
	int rc = fill_rambo_reps(c->w, p, c->fd, c->sec_off, c->budget);
	if (rc != 1)
		return rc;
	rc = 0;
	for (uint32_t r = 0; r < ra->d.reps && rc == 0; r++) {
		const struct bfi_rep *rp = &ra->reps[r];
		rc = c->w->raw ? write_raw_rows(c->w, p, r, c->fd, c->sec_off, c->budget)
		               : stripe_units(c, rp->rows_offset, rp->rows_offset + rp->m * rp->row_bytes,
		                              rp->row_bytes);
	}
	return rc;
}

static uint64_t rambo_size(const struct plan *p)
{
	return rambo_of(p)->size;
}

static uint64_t rambo_data(const struct plan *p)
{
	return rambo_of(p)->reps[0].rows_offset;
}

static int rambo_descriptor(int fd, const struct plan *p, uint64_t off)
{
	struct rambo_plan *ra = rambo_of(p);
	uint64_t len = BFI_RAMBO_DESC_SIZE + (uint64_t)ra->d.reps * BFI_REP_ENTRY_SIZE;
	uint8_t d[BFI_RAMBO_DESC_SIZE + BFI_MAX_REPS * BFI_REP_ENTRY_SIZE];
	bfi_rambo_desc_encode(d, &ra->d);
	for (uint32_t r = 0; r < ra->d.reps; r++)
		bfi_rep_encode(d + BFI_RAMBO_DESC_SIZE + (uint64_t)r * BFI_REP_ENTRY_SIZE, &ra->reps[r]);
	return pwrite_all(fd, d, (size_t)len, off);
}

/* The catalog's ones of a set: its cell's filter in repetition 0. */
static void rambo_ones(struct plan *p)
{
	struct rambo_plan *ra = rambo_of(p);
	for (uint32_t j = 0; j < p->n; j++)
		p->ones[j] = ra->cell_ones[ra->cell_of[j]];
}

static uint64_t rambo_widest(const struct plan *p)
{
	struct rambo_plan *ra = rambo_of(p);
	uint64_t m = 0;
	for (uint32_t r = 0; r < ra->d.reps; r++)
		m = ra->reps[r].m > m ? ra->reps[r].m : m;
	return m;
}

static unsigned rambo_wants(const struct bfi_build_options *o, int alone)
{
	(void)alone;
	return o->bits ? 0 : WANT_HLL; /* each cell's width, from its union's count */
}

static void rambo_free(void *own)
{
	struct rambo_plan *r = own;
	free(r->cell_of);
	free(r->cell_ones);
}

/* Each set's cells, by repetition. */
static uint64_t rambo_held(const struct plan *p)
{
	struct rambo_plan *ra = rambo_of(p);
	return ra->cell_of ? (uint64_t)ra->d.reps * p->n * sizeof(uint32_t) : 0;
}

/* Rows given (bfi_writer_rambo_rows). */
static int rambo_given(const bfi_writer *w)
{
	return w->raw != NULL;
}

/*
 * A join (join.c) keeps RAMBO, as bfi stack does, by ORing each cell's
 * rows, when every segment has one of the same parameters, so that a set's
 * cells are the same in all (the partition hash of its name).
 */
struct rambo_carry {
	struct bfi_rambo_rows rr;
	uint8_t *rows[BFI_RAMBO_MAX_REPS];
};

static int rambo_join_check(void **state, const struct join_view *v, char *why, size_t whylen)
{
	const bfi_snapshot *seg = v->seg;
	const char *label = v->label;
	struct bfi_layout_info ri;
	int has = bfi_layout_info(seg, BFI_LAYOUT_RAMBO, &ri) == 0;
	struct rambo_carry *jc = *state;
	why[0] = 0;
	if (jc == NULL) { /* the first segment: its parameters, or quietly none */
		if (!has || ri.u.rambo.reps > BFI_RAMBO_MAX_REPS ||
		    (jc = *state = calloc(1, sizeof *jc)) == NULL)
			return 0;
		jc->rr = (struct bfi_rambo_rows){.cells = ri.u.rambo.cells,
		                                 .reps = ri.u.rambo.reps,
		                                 .shards = ri.u.rambo.shards,
		                                 .k = ri.hashes,
		                                 .shared_probes = ri.u.rambo.shared_probes};
		int ok = 1;
		for (uint32_t r = 0; r < ri.u.rambo.reps; r++) {
			const uint8_t *rows;
			uint64_t rb;
			ok &= bfi_rambo_rows(seg, r, &rows, &jc->rr.m[r], &rb) == 0;
		}
		return ok;
	}
	const char *what = NULL;
	if (!has)
		what = "has no rambo layout";
	else if (ri.u.rambo.cells != jc->rr.cells)
		what = "differs in the rambo layout's cells (B)";
	else if (ri.u.rambo.reps != jc->rr.reps)
		what = "differs in the rambo layout's repetitions (R)";
	else if (ri.u.rambo.shards != jc->rr.shards)
		what = "differs in the rambo layout's shards (S)";
	else if (ri.hashes != jc->rr.k || ri.u.rambo.shared_probes != jc->rr.shared_probes)
		what = "differs in the rambo layout's probes (k, or built from filters)";
	for (uint32_t r = 0; what == NULL && r < jc->rr.reps; r++) {
		const uint8_t *rows;
		uint64_t m, rb;
		if (bfi_rambo_rows(seg, r, &rows, &m, &rb) != 0 || m != jc->rr.m[r])
			what = "differs in the rambo layout's filter widths";
	}
	if (what)
		snprintf(why, whylen, "%s %s", label, what);
	return what == NULL;
}

/* Each segment's rows ORed into the join's, row by row (a 3.1 row may be narrower). */
static int rambo_join_segment(void *state, const bfi_snapshot *seg)
{
	struct rambo_carry *jc = state;
	uint64_t want = (jc->rr.cells + 63) / 64 * 8;
	for (uint32_t r = 0; r < jc->rr.reps; r++) {
		const uint8_t *rows;
		uint64_t m, rb;
		if (bfi_rambo_rows(seg, r, &rows, &m, &rb) != 0 || m != jc->rr.m[r] || rb > want)
			return BFI_E_INVALID;
		if (jc->rows[r] == NULL && (jc->rows[r] = calloc((size_t)m, (size_t)want)) == NULL)
			return -ENOMEM;
		for (uint64_t i = 0; i < m; i++)
			for (uint64_t b = 0; b < rb; b++)
				jc->rows[r][i * want + b] |= rows[i * rb + b];
		jc->rr.rows[r] = jc->rows[r];
	}
	return 0;
}

/* The ORed rows, as bfi_writer_rambo_rows takes rows given. */
static int rambo_join_give(void *state, bfi_writer *w, const uint64_t *distinct)
{
	struct rambo_carry *jc = state;
	jc->rr.distinct = distinct;
	return bfi_writer_rambo_rows(w, &jc->rr);
}

static void rambo_join_free(void *state)
{
	struct rambo_carry *jc = state;
	for (uint32_t r = 0; r < BFI_RAMBO_MAX_REPS; r++)
		free(jc->rows[r]);
	free(jc);
}

const struct wlayout rambo_layout = {
    .row = BFI_ROW_RAMBO,
    .plan_rank = 1,
    .what = "rambo rows",
    .wants = rambo_wants,
    .plan = plan_rambo,
    .free = rambo_free,
    .held = rambo_held,
    .size = rambo_size,
    .data = rambo_data,
    .filter_bit = rambo_filter_bit,
    .key = rambo_key,
    .count = rambo_count,
    .fill = rambo_fill,
    .descriptor = rambo_descriptor,
    .after = write_rambo_tables,
    .ones = rambo_ones,
    .widest = rambo_widest,
    .given = rambo_given,
    .join_check = rambo_join_check,
    .join_segment = rambo_join_segment,
    .join_give = rambo_join_give,
    .join_free = rambo_join_free,
};
