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

const char *fuzz_name = "resealed";

/* Make every checksum of the index p (size bytes) match its bytes, as far as its fields allow. */
static void reseal(uint8_t *p, size_t size)
{
	if (size < BFI_SECTION_ALIGN + BFI_TRAILER_SIZE)
		return;
	bfi_put64(p + BFI_H_FILE_SIZE, size);
	uint32_t n = bfi_get32(p + BFI_H_SECTION_COUNT);
	if (n > BFI_MAX_SECTIONS)
		n = BFI_MAX_SECTIONS;
	/* chunk checksums first: the chunk-checksum section's own checksum covers them */
	for (uint32_t i = 0; i < n; i++) {
		uint8_t *e = p + BFI_HEADER_SIZE + (size_t)i * BFI_ENTRY_SIZE;
		uint64_t off = bfi_get64(e + 8), len = bfi_get64(e + 16);
		if (bfi_get32(e) != BFI_SEC_CHUNKSUMS || off > size || size - off < BFI_CHUNKSUMS_DESC_SIZE)
			continue;
		uint64_t covered = bfi_get64(p + off + 8);
		if (covered < BFI_SECTION_ALIGN || covered > size)
			continue;
		uint64_t chunks = (covered - BFI_SECTION_ALIGN + BFI_CHUNK_SIZE - 1) / BFI_CHUNK_SIZE;
		if (chunks > (size - off - BFI_CHUNKSUMS_DESC_SIZE) / 8 || len < BFI_CHUNKSUMS_DESC_SIZE)
			continue;
		for (uint64_t c = 0; c < chunks; c++) {
			uint64_t at = BFI_SECTION_ALIGN + c * BFI_CHUNK_SIZE;
			uint64_t l = covered - at < BFI_CHUNK_SIZE ? covered - at : BFI_CHUNK_SIZE;
			bfi_put64(p + off + BFI_CHUNKSUMS_DESC_SIZE + c * 8, bfi_checksum64(p + at, (size_t)l));
		}
	}
	for (uint32_t i = 0; i < n; i++) {
		uint8_t *e = p + BFI_HEADER_SIZE + (size_t)i * BFI_ENTRY_SIZE;
		uint64_t off = bfi_get64(e + 8), len = bfi_get64(e + 16);
		if (off <= size && len <= size - off)
			bfi_put64(e + 32, bfi_checksum64(p + off, (size_t)len));
	}
	bfi_put64(p + BFI_H_TABLE_CHECKSUM, bfi_checksum64(p + BFI_HEADER_SIZE, (size_t)n * BFI_ENTRY_SIZE));
	bfi_put64(p + BFI_H_CHECKSUM, bfi_checksum64(p, BFI_H_CHECKSUM));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *p = malloc(size ? size : 1);
	if (p == NULL)
		return 0;
	if (size)
		memcpy(p, data, size);
	reseal(p, size);
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
