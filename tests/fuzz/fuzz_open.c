/*
 * fuzz_open.c - any bytes as index.bfi: open (without a catalog), then
 * everything inspect reads: the info, each tree level's fill, each rambo
 * repetition, and a deep verify. Nothing may crash or read out of bounds.
 */
#include <stdlib.h>

#include "bfi.h"
#include "fuzz.h"

const char *fuzz_name = "open";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *snap = fuzz_index(data, size);
	if (snap == NULL)
		return 0;
	bfi_snapshot *s;
	if (bfi_open(snap, BFI_OPEN_NO_CATALOG, &s) == 0) {
		struct bfi_info in;
		bfi_info(s, &in);
		for (uint32_t l = 0; l < in.tree_levels; l++) {
			uint64_t nodes, m;
			double fill, fpr;
			TRY(bfi_tree_level(s, l, &nodes, &m, &fill, &fpr));
		}
		struct bfi_rambo_cell *cells = calloc(in.rambo_cells ? in.rambo_cells : 1, sizeof *cells);
		for (uint32_t r = 0; cells && r < in.rambo_reps; r++) {
			uint64_t m;
			TRY(bfi_rambo_rep(s, r, &m, cells));
		}
		free(cells);
		for (uint32_t b = 0; b < in.n_blocks; b++) {
			struct bfi_block_info bi;
			TRY(bfi_block(s, b, &bi));
		}
		bfi_close(&s);
	}
	struct bfi_verify_report rep;
	TRY(bfi_verify(snap, &rep, NULL, NULL));
	return 0;
}
