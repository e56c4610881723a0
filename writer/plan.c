/*
 * plan.c - everything decided before a byte is written: k, the sets'
 * order (by size, input order, or MinHash clusters), and each layout's
 * plan from the table below (spec/format.md, "Choosing m, k, blocks and
 * pre-filters"), all from the sets' summaries (summary.c).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"

/*
 * k (spec/format.md, "Choosing m and k"): ceil(log2(1/p)) unless given,
 * or m/n ln 2 from --bits; at most BFI_MAX_K (bfi_writer_create warns).
 */
static uint32_t choose_k(const struct bfi_build_options *o, uint64_t n)
{
	if (o->hashes)
		return o->hashes;
	if (!o->bits)
		return filter_k(o->fpr, NULL);
	double dn = o->expected_keys ? (double)o->expected_keys : n ? (double)n : 1.0;
	double kd = round((double)o->bits / dn * M_LN2);
	return kd < 1 ? 1 : kd > BFI_MAX_K ? BFI_MAX_K : (uint32_t)kd;
}

static int cmp_by_size(const void *a, const void *b, void *ctx)
{
	const uint64_t *sizes = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	if (sizes[x] != sizes[y])
		return sizes[x] < sizes[y] ? -1 : 1;
	return (x > y) - (x < y); /* stable: input order among equals */
}
/*
 * Clustered order (spec/format.md, "Ordering sets"): each set's MinHash
 * sketch, the least of MINHASHES independent hashes of its keys. Two sets
 * agree on a MinHash with probability their Jaccard similarity, so sets
 * that agree on any of them are joined into one group (union-find over
 * each MinHash's equal values), and the groups are laid out one after
 * another, each in the order of its members' sketches. Sorting by the
 * sketches alone split a family wherever its members' first MinHash
 * differed: strains sharing a third of their keys kept only a third of
 * them side by side, and a read of their shared part then walked a path
 * to each of the others. O(keys + MINHASHES N log N).
 */
struct cluster {
	const uint64_t *sk;
	const uint32_t *group; /* each set's group: its least member */
	int i;                 /* the MinHash sorted by */
};

static int cmp_one(const void *a, const void *b, void *ctx)
{
	const struct cluster *c = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint64_t u = c->sk[(size_t)x * MINHASHES + c->i], v = c->sk[(size_t)y * MINHASHES + c->i];
	return u != v ? (u < v ? -1 : 1) : (x > y) - (x < y);
}

static int cmp_grouped(const void *a, const void *b, void *ctx)
{
	const struct cluster *c = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	if (c->group[x] != c->group[y])
		return c->group[x] < c->group[y] ? -1 : 1;
	for (int i = 0; i < MINHASHES; i++) {
		uint64_t u = c->sk[(size_t)x * MINHASHES + i], v = c->sk[(size_t)y * MINHASHES + i];
		if (u != v)
			return u < v ? -1 : 1;
	}
	return (x > y) - (x < y);
}

static uint32_t root_of(uint32_t *parent, uint32_t x)
{
	while (parent[x] != x) {
		parent[x] = parent[parent[x]];
		x = parent[x];
	}
	return x;
}

static int cluster_order(bfi_writer *w, struct plan *p)
{
	uint32_t n = p->n, *parent = malloc((n ? n : 1) * sizeof *parent);
	uint32_t *by = malloc((n ? n : 1) * sizeof *by);
	if (parent == NULL || by == NULL) {
		free(parent);
		free(by);
		return -ENOMEM;
	}
	struct cluster c = {w->sums.minhash, parent, 0};
	for (uint32_t j = 0; j < n; j++)
		parent[j] = j;
	for (c.i = 0; c.i < MINHASHES; c.i++) {
		for (uint32_t j = 0; j < n; j++)
			by[j] = j;
		qsort_r(by, n, sizeof *by, cmp_one, &c);
		for (uint32_t j = 1; j < n; j++) {
			uint64_t v = c.sk[(size_t)by[j] * MINHASHES + c.i];
			if (v == UINT64_MAX || v != c.sk[(size_t)by[j - 1] * MINHASHES + c.i])
				continue; /* a set without keys has no MinHash to share */
			uint32_t a = root_of(parent, by[j - 1]), b = root_of(parent, by[j]);
			if (a != b) /* the least member is the root: the same groups in any run */
				parent[a > b ? a : b] = a < b ? a : b;
		}
	}
	for (uint32_t j = 0; j < n; j++)
		parent[j] = root_of(parent, j);
	qsort_r(p->old_of_new, n, sizeof *p->old_of_new, cmp_grouped, &c);
	free(parent);
	free(by);
	return 0;
}


unsigned auto_layout(const bfi_writer *w, uint64_t n, uint64_t max_n)
{
	const struct bfi_build_options *o = &w->opt;
	/* options of flat's blocks ask for flat */
	if (n < BFI_AUTO_TREE_SETS || o->block_cost || o->fixed_width || w->given || w->raw)
		return BFI_BUILD_FLAT;
	uint32_t k = choose_k(o, max_n);
	double own = 0, leaves = (double)n * (double)width_for(o, max_n, k);
	for (uint64_t j = 0; j < n; j++)
		own += (double)width_for(o, w->sums.distinct[j], k);
	return leaves <= BFI_AUTO_TREE_SPREAD * own ? BFI_BUILD_TREE : BFI_BUILD_FLAT;
}

int make_plan(bfi_writer *w, struct plan *p, uint64_t max_n)
{
	const struct bfi_build_options *o = &w->opt;
	p->k = w->given ? w->given->k : w->raw ? w->raw->k : choose_k(o, max_n);
	if (!w->raw && !w->given && !w->n_filt && width_for(o, max_n, p->k) == 0)
		return writer_fail(w, BFI_E_LIMIT,
		                   "a filter for %llu keys at %u hashes needs more than 2^40 bits",
		                   (unsigned long long)(o->expected_keys ? o->expected_keys : max_n),
		                   p->k);
	p->max_n = max_n;
	p->new_of_old = malloc(p->n * sizeof *p->new_of_old);
	p->old_of_new = malloc(p->n * sizeof *p->old_of_new);
	p->ones = calloc(p->n, sizeof *p->ones);
	if (!p->new_of_old || !p->old_of_new || !p->ones)
		return -ENOMEM;
	for (uint32_t j = 0; j < p->n; j++)
		p->old_of_new[j] = j;
	/* clustered when asked, or when a layout alone asks for it (a tree: similar sets prune together) */
	int rc = 0;
	if (o->cluster || (wlayouts_wants(o, 0) & WANT_MINHASH))
		rc = cluster_order(w, p);
	else if (!o->keep_order)
		qsort_r(p->old_of_new, p->n, sizeof *p->old_of_new, cmp_by_size, (void *)p->distinct);
	for (const struct wlayout *const *l = wlayouts; rc == 0 && *l; l++)
		if (wlayout_on(*l, o->layouts) && (*l)->order)
			rc = (*l)->order(w, p);
	if (rc)
		return rc;
	for (uint32_t j = 0; j < p->n; j++)
		p->new_of_old[p->old_of_new[j]] = j;
	/* each layout asked for, in plan_rank order: rambo's k may stand in for the catalog's */
	for (int rank = 0; rc == 0 && rank < BFI_ROWS; rank++)
		for (const struct wlayout *const *l = wlayouts; rc == 0 && *l; l++)
			if ((*l)->plan_rank == rank && wlayout_on(*l, o->layouts))
				rc = (*l)->plan(w, p);
	return rc;
}

void plan_free(struct plan *p)
{
	for (const struct wlayout *const *l = wlayouts; *l; l++)
		if (p->own[(*l)->row] && (*l)->free)
			(*l)->free(p->own[(*l)->row]);
	for (int r = 0; r < BFI_ROWS; r++)
		free(p->own[r]);
	free(p->new_of_old);
	free(p->old_of_new);
	free(p->ones);
}
