/*
 * fuzz_open.c - any bytes as index.bfi: open (without a catalog), then
 * everything inspect reads: the info, each tree level's fill, each rambo
 * repetition, and a deep verify. Nothing may crash or read out of bounds.
 */
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
		fuzz_inspect(s);
		bfi_close(&s);
	}
	struct bfi_verify_report rep;
	TRY(bfi_verify(snap, &rep, NULL, NULL));
	return 0;
}
