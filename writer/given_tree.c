/*
 * given_tree.c - a tree layout over given flat columns, without keys (bfi
 * compact, bfi merge; spec/format.md, "Compaction and merge"). The leaves
 * are the sets' filters, all of one width m, so row r of level 0 is every
 * kept column's bit r in set order, and row r of level l + 1 ORs the bits
 * of each node's children in row r of level l: the tree a build from the
 * same filters makes (bfi build --from-filters), level by level, row by
 * row. The tree is implicit (node i's parent is i / d).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "flat.h"
#include "tree.h"

#define TREE_BATCH (4u << 20) /* bytes of rows, all levels, made before they are written */

/* Any of bits [a, e) of w? */
static int any_bits(const uint64_t *w, uint64_t a, uint64_t e)
{
	while (a < e) {
		uint64_t x = w[a / 64] >> (a % 64);
		unsigned span = 64 - (unsigned)(a % 64);
		if (e - a < span) {
			x &= (UINT64_C(1) << (e - a)) - 1;
			span = (unsigned)(e - a);
		}
		if (x)
			return 1;
		a += span;
	}
	return 0;
}

/* Level l + 1's row (up, zeroed: nodes / d bits) from level l's (below, nodes bits). */
static void row_up(const uint64_t *below, uint64_t nodes, uint32_t d, uint64_t *up)
{
	for (uint64_t i = 0; i * d < nodes; i++) {
		uint64_t e = (i + 1) * d < nodes ? (i + 1) * d : nodes;
		if (any_bits(below, i * d, e))
			up[i / 64] |= UINT64_C(1) << (i % 64);
	}
}

/* Every given block has one width: the tree's leaves are rows of one filter width. */
static int one_width(bfi_writer *w, uint64_t *m)
{
	const struct bfi_flat_given *g = w->given;
	*m = g->blocks[0].m;
	for (uint32_t b = 1; b < g->n_blocks; b++)
		if (g->blocks[b].m != *m)
			return writer_fail(w, BFI_E_INVALID, "a tree over given columns needs one width, "
			                                     "not %llu and %llu bits",
			                   (unsigned long long)*m, (unsigned long long)g->blocks[b].m);
	return 0;
}

/* Level l's row r, and each level below it, in rows[0 .. l] (zeroed by the caller). */
static void rows_up_to(const struct given_cols *c, const struct plan *p, uint32_t l, uint64_t r,
                       uint64_t *const *rows, const uint64_t *nodes)
{
	given_cols_row(c, r, rows[0]);
	for (uint32_t a = 0; a < l; a++)
		row_up(rows[a], nodes[a], tree_of(p)->d.fanout, rows[a + 1]);
}

int given_level_ones(bfi_writer *w, const struct plan *p, uint32_t l, uint64_t nodes,
                     uint64_t *ones)
{
	uint64_t m, counts[BFI_MAX_LEVELS];
	int rc = one_width(w, &m);
	if (rc)
		return rc;
	/* the nodes of each level up to l: ceil(below / d) */
	counts[0] = p->n;
	for (uint32_t a = 1; a <= l; a++)
		counts[a] = (counts[a - 1] + tree_of(p)->d.fanout - 1) / tree_of(p)->d.fanout;
	if (counts[l] != nodes)
		return writer_fail(w, BFI_E_INVALID, "a tree over given columns is implicit");
	struct given_cols c;
	uint64_t *rows[BFI_MAX_LEVELS] = {0};
	rc = given_cols_open(w->given, p->n, &c);
	for (uint32_t a = 0; rc == 0 && a <= l; a++)
		if ((rows[a] = malloc((size_t)(counts[a] + 63) / 64 * 8)) == NULL)
			rc = -ENOMEM;
	for (uint64_t r = 0; rc == 0 && r < m; r++) {
		for (uint32_t a = 0; a <= l; a++)
			memset(rows[a], 0, (size_t)(counts[a] + 63) / 64 * 8);
		rows_up_to(&c, p, l, r, rows, counts);
		for (uint64_t x = 0; x < (nodes + 63) / 64; x++)
			for (uint64_t b = rows[l][x]; b; b &= b - 1)
				ones[x * 64 + (uint64_t)__builtin_ctzll(b)]++;
	}
	given_cols_close(&c);
	for (uint32_t a = 0; a <= l; a++)
		free(rows[a]);
	return rc ? writer_fail(w, rc, "counting a joined tree's nodes: %s", bfi_strerror(rc)) : 0;
}

int fill_given_tree(bfi_writer *w, const struct plan *p, int fd, uint64_t sec_off, uint64_t budget)
{
	struct tree_plan *tr = tree_of(p);
	uint32_t levels = tr->d.levels;
	uint64_t m, all = 0, nodes[BFI_MAX_LEVELS];
	int rc = one_width(w, &m);
	if (rc)
		return rc;
	for (uint32_t l = 0; l < levels; l++) {
		if (tr->levels[l].m != m || tr->levels[l].row_bytes % 8)
			return writer_fail(w, BFI_E_INVALID, "a joined tree's levels are all %llu bits wide",
			                   (unsigned long long)m);
		nodes[l] = tr->levels[l].nodes;
		all += tr->levels[l].row_bytes;
	}
	uint64_t most = budget / 2 < TREE_BATCH ? budget / 2 : TREE_BATCH;
	uint64_t batch = most / all;
	batch = batch < 1 ? 1 : batch > m ? m : batch;
	struct given_cols c;
	uint64_t *buf[BFI_MAX_LEVELS] = {0}, *row[BFI_MAX_LEVELS];
	rc = given_cols_open(w->given, p->n, &c);
	for (uint32_t l = 0; rc == 0 && l < levels; l++)
		if ((buf[l] = malloc((size_t)(batch * tr->levels[l].row_bytes))) == NULL)
			rc = -ENOMEM;
	for (uint64_t r0 = 0; rc == 0 && r0 < m; r0 += batch) {
		uint64_t r1 = r0 + batch < m ? r0 + batch : m;
		for (uint32_t l = 0; l < levels; l++)
			memset(buf[l], 0, (size_t)((r1 - r0) * tr->levels[l].row_bytes));
		for (uint64_t r = r0; r < r1; r++) {
			for (uint32_t l = 0; l < levels; l++)
				row[l] = buf[l] + (r - r0) * (tr->levels[l].row_bytes / 8);
			rows_up_to(&c, p, levels - 1, r, row, nodes);
		}
		for (uint32_t l = 0; rc == 0 && l < levels; l++) {
			const struct bfi_level *lv = &tr->levels[l];
			uint64_t words = (r1 - r0) * lv->row_bytes / 8;
			for (uint64_t x = 0; x < words; x++)
				buf[l][x] = htole64(buf[l][x]);
			rc = pwrite_all(fd, buf[l], (size_t)(words * 8),
			                sec_off + lv->rows_offset + r0 * lv->row_bytes);
		}
		progress(w, "tree levels", r1, m);
	}
	given_cols_close(&c);
	for (uint32_t l = 0; l < levels; l++)
		free(buf[l]);
	return rc ? writer_fail(w, rc, "writing a joined tree: %s", bfi_strerror(rc)) : 0;
}
