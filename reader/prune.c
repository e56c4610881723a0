/*
 * prune.c - whether threshold queries prune (internal.h, bfi__pruning),
 * and how a tree's walk chooses between descending and reading its
 * leaves' rows whole (bfi__prune_mode): the switches the tests turn to
 * compare the paths, read once from BFI_PRUNE ("off", "walk", "leaves";
 * anything else, the default).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* a BFI_PRUNE_* mode, or -1: not yet read from BFI_PRUNE */
static int pruning = -1;

int bfi__prune_mode(void)
{
	int mode = __atomic_load_n(&pruning, __ATOMIC_RELAXED);
	if (mode < 0) {
		const char *v = getenv("BFI_PRUNE");
		mode = v && !strcmp(v, "off")      ? BFI_PRUNE_OFF
		     : v && !strcmp(v, "walk")     ? BFI_PRUNE_WALK
		     : v && !strcmp(v, "leaves")   ? BFI_PRUNE_LEAVES
		                                   : BFI_PRUNE_AUTO;
		__atomic_store_n(&pruning, mode, __ATOMIC_RELAXED);
	}
	return mode;
}

int bfi__pruning(void)
{
	return bfi__prune_mode() != BFI_PRUNE_OFF;
}

void bfi__use_pruning(int mode)
{
	__atomic_store_n(&pruning, mode, __ATOMIC_RELAXED);
}
