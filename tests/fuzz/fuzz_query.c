/*
 * fuzz_query.c - any bytes as index.bfi, opened without a catalog, then
 * queried on every layout it holds: single keys, an expression, a
 * threshold query and a batch. A query may fail with an error code; it
 * may not crash or read outside the file.
 */
#include "bfi.h"
#include "fuzz.h"

const char *fuzz_name = "query";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *snap = fuzz_index(data, size);
	if (snap == NULL)
		return 0;
	bfi_snapshot *s;
	if (bfi_open(snap, BFI_OPEN_NO_CATALOG, &s) != 0)
		return 0;
	fuzz_queries(s);
	bfi_close(&s);
	return 0;
}
