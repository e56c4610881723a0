/*
 * fuzz_resealed.c - an index whose every checksum is made to match after
 * the fuzzer's mutation, as a hostile writer would: the header's file size
 * and checksum, the section table's checksum, each section's checksum and
 * each 64 KiB chunk's. Raw bytes (fuzz_open, fuzz_query) nearly always
 * die at a checksum; here a mutated field of the header, the section table
 * or a layout descriptor reaches the checks behind them, the queries and
 * the deep verify, which must refuse it with an error or answer without
 * reading outside the file. Seeds: the valid indexes of every layout.
 */
#include <stdlib.h>
#include <string.h>

#include "bfi.h"
#include "format.h"
#include "fuzz.h"
#include "../test.h"

const char *fuzz_name = "resealed";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *p = malloc(size ? size : 1);
	if (p == NULL)
		return 0;
	if (size)
		memcpy(p, data, size);
	test_reseal_index(p, size);
	const char *snap = fuzz_index(p, size);
	free(p);
	if (snap == NULL)
		return 0;
	bfi_snapshot *s;
	if (bfi_open(snap, BFI_OPEN_NO_CATALOG, &s) == 0) {
		fuzz_queries(s);
		fuzz_inspect(s);
		bfi_close(&s);
	}
	struct bfi_verify_report rep;
	TRY(bfi_verify(snap, &rep, NULL, NULL));
	return 0;
}
