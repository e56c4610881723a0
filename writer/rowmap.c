/*
 * rowmap.c - where each flat block's rows go (struct rowmap), for the
 * planner's blocks (flat.c) and the given ones of compaction (flat_copy.c):
 * row r at r * row_bits, or, in a grouped run (spec/format.md, "Grouped
 * blocks"), at its place in the run's groups.
 */
#include <errno.h>
#include <stdlib.h>

#include "flat.h"

/* Each block's rowmap (struct rowmap): its row stride, or its grouped run's geometry. */
int flat_rowmaps(struct plan *p)
{
	struct flat_plan *fl = flat_of(p);
	free(fl->rowmap);
	fl->rowmap = calloc(fl->n_blocks, sizeof *fl->rowmap);
	if (fl->rowmap == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < fl->n_blocks;) {
		const struct bfi_block *b = &fl->blocks[i];
		if (b->group == 0) {
			fl->rowmap[i++] = (struct rowmap){b->row_bits, 0, 0, 0, 0, 0};
			continue;
		}
		uint32_t n;
		uint64_t groups, group_bits, bytes, seg = 0;
		if (bfi_group_run(fl->blocks, fl->n_blocks, i, &n, &groups, &group_bits, &bytes))
			return BFI_E_LIMIT;
		for (uint32_t e = i + n, first = i; i < e; i++) {
			uint64_t q = fl->blocks[i].group & BFI_GROUP_Q_MASK;
			fl->rowmap[i] = (struct rowmap){fl->blocks[i].row_bits, q, group_bits, seg,
			                               i == first ? bytes : 0, i == first ? n : 0};
			seg += q * fl->blocks[i].row_bits;
		}
	}
	return 0;
}
