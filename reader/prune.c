/*
 * prune.c - whether threshold queries prune (internal.h, bfi__pruning):
 * the switch the tests turn to compare both paths, read once from
 * BFI_PRUNE.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* 1: prune, 0: count every term on every set, -1: not yet read from BFI_PRUNE */
static int pruning = -1;

int bfi__pruning(void)
{
	int on = __atomic_load_n(&pruning, __ATOMIC_RELAXED);
	if (on < 0) {
		const char *v = getenv("BFI_PRUNE");
		on = !(v && strcmp(v, "off") == 0);
		__atomic_store_n(&pruning, on, __ATOMIC_RELAXED);
	}
	return on;
}

void bfi__use_pruning(int on)
{
	__atomic_store_n(&pruning, on, __ATOMIC_RELAXED);
}
