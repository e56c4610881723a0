/*
 * rambo.c - the RAMBO layout's plan (spec/format.md, "Choosing the RAMBO
 * parameters") and its cell tables.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/*
 * RAMBO parameters (spec/format.md, "Choosing the RAMBO parameters"):
 * B, the cells per repetition, is the power of two at or above sqrt(N);
 * R, the repetitions, the least (at least 2) that brings Lemma 4.1's rate
 * for a key of one set, (p (1 - 1/B) + 1/B)^R, down to p. Each repetition's
 * filters are as wide as its largest cell union needs (HyperLogLog with
 * 2^8 registers, plus 15%).
 */
int plan_rambo(bfi_writer *w, struct plan *p)
{
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
	p->rambo = d;
	p->cell_of = malloc((size_t)reps * p->n * sizeof *p->cell_of);
	p->cell_ones = calloc((size_t)cells, sizeof *p->cell_ones);
	size_t regs = SET_HLL_REGS;
	int sized = o->bits || w->raw; /* widths given: no need to estimate unions */
	uint8_t *reg = sized ? NULL : calloc((size_t)reps * cells, regs);
	if (!p->cell_of || !p->cell_ones || (!sized && !reg)) {
		free(reg);
		return -ENOMEM;
	}
	for (uint32_t r = 0; r < reps; r++)
		for (uint32_t j = 0; j < p->n; j++) {
			size_t len;
			const char *name = names_get(&w->names, p->old_of_new[j], &len);
			p->cell_of[(size_t)r * p->n + j] = bfi_rambo_cell(name, len, r, cells, (uint32_t)shards);
		}
	int rc = 0;
	for (uint32_t in = 0; reg && in < p->n; in++) {
		uint32_t j = p->new_of_old[in];
		for (uint32_t r = 0; r < reps; r++) {
			uint64_t c = p->cell_of[(size_t)r * p->n + j];
			hll_merge(reg + ((size_t)r * cells + c) * regs, w->sums.hll + (size_t)in * regs, regs);
		}
	}
	for (uint32_t r = 0; r < reps && rc == 0; r++) {
		double widest = 0;
		for (uint64_t c = 0; reg && c < cells; c++) {
			double u = hll_count_bits(reg + ((size_t)r * cells + c) * regs, SET_HLL_BITS);
			widest = u > widest ? u : widest;
		}
		p->reps[r].m = w->raw ? w->raw->m[r]
		                      : width_for(&(struct bfi_build_options){.fpr = pc, .bits = o->bits},
		                                  ceil_u64(widest * 1.15), kr);
		if (p->reps[r].m == 0)
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
	p->rambo_size = bfi_rambo_layout(p->reps, reps, p->n, cells, p->minor);
	if (!(o->layouts & (BFI_BUILD_FLAT | BFI_BUILD_PLAIN)))
		p->k = p->rambo.k; /* the catalog's k: that of the first layout */
	return p->rambo_size ? 0 : BFI_E_LIMIT;
}
/* The cell tables of each repetition: starts, members by cell, cell of each set. */
void cell_members(const struct plan *p, uint32_t r, uint32_t *starts, uint32_t *members)
{
	uint64_t cells = p->rambo.cells;
	const uint32_t *co = p->cell_of + (size_t)r * p->n;
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

int write_rambo_tables(int fd, const struct plan *p, uint64_t sec_off)
{
	uint64_t cells = p->rambo.cells;
	uint8_t *starts = malloc((size_t)(cells + 1) * 4), *members = malloc((size_t)p->n * 4),
	        *cell_of = malloc((size_t)p->n * 4);
	uint32_t *st = malloc(((size_t)cells + 1) * sizeof *st), *mem = malloc((size_t)p->n * sizeof *mem);
	int rc = starts && members && cell_of && st && mem ? 0 : -ENOMEM;
	for (uint32_t r = 0; r < p->rambo.reps && rc == 0; r++) {
		const uint32_t *co = p->cell_of + (size_t)r * p->n;
		cell_members(p, r, st, mem);
		for (uint64_t c = 0; c <= cells; c++)
			bfi_put32(starts + c * 4, st[c]);
		for (uint32_t j = 0; j < p->n; j++) {
			bfi_put32(members + (size_t)j * 4, mem[j]);
			bfi_put32(cell_of + (size_t)j * 4, co[j]);
		}
		const struct bfi_rep *rp = &p->reps[r];
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
