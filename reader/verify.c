/*
 * verify.c - deep verification: every checksum, every padding bit, and
 * the catalog. Reports the first bad region rather than stopping at "bad".
 */
#include <stdio.h>

#include "layout.h"

static void report(struct bfi_verify_report *rep, const char *file, const struct bfi_bad *bad)
{
	rep->file = file;
	rep->offset = bad->offset;
	rep->length = bad->length;
	snprintf(rep->what, sizeof rep->what, "%s", bad->what ? bad->what : "");
}

#define BAD(code, off, len, msg) return bfi__bad(bad, code, off, len, msg)

static int check_data(const bfi_snapshot *s, struct bfi_bad *bad,
                      void (*progress)(void *, uint64_t, uint64_t), void *ctx)
{
	const struct bfi_layout *lay = &s->lay;
	const struct bfi_section *sums = &lay->sec[lay->sums_idx];
	/* The chunk checksums vouch for everything else, so check them first. */
	if (bfi_checksum64(s->map + sums->offset, sums->stored_size) != sums->checksum)
		BAD(BFI_E_DATA_CHECKSUM, sums->offset, sums->stored_size,
		    "chunk-checksum section does not match its checksum");
	const uint8_t *table = s->map + sums->offset + BFI_CHUNKSUMS_DESC_SIZE;
	uint64_t total = lay->sums_covered - BFI_SECTION_ALIGN;
	for (uint64_t off = BFI_SECTION_ALIGN, c = 0; off < lay->sums_covered;
	     off += BFI_CHUNK_SIZE, c++) {
		uint64_t len = lay->sums_covered - off;
		if (len > BFI_CHUNK_SIZE)
			len = BFI_CHUNK_SIZE;
		if (bfi_checksum64(s->map + off, len) != bfi_get64(table + c * 8))
			BAD(BFI_E_DATA_CHECKSUM, off, len, "data chunk does not match its checksum");
		if (progress && (c & 1023) == 1023)
			progress(ctx, off + len - BFI_SECTION_ALIGN, total);
	}
	for (uint32_t i = 0; i < lay->n_sec; i++) {
		const struct bfi_section *e = &lay->sec[i];
		if (bfi_checksum64(s->map + e->offset, e->stored_size) != e->checksum)
			BAD(BFI_E_DATA_CHECKSUM, e->offset, e->stored_size,
			    "section does not match its checksum");
	}
	/* Set padding bits would be ordinals or positions that do not exist. */
	for (int r = 0; r < BFI_ROWS; r++) {
		int rc = s->view[r] ? bfi__layouts[r]->verify(s, bad) : 0;
		if (rc)
			return rc;
	}
	if (progress)
		progress(ctx, total, total);
	return 0;
}

int bfi_verify(const char *path, struct bfi_verify_report *rep,
               void (*progress)(void *ctx, uint64_t done, uint64_t total), void *ctx)
{
	struct bfi_bad bad = {0, 0, NULL};
	bfi_snapshot *s = NULL;
	if (rep == NULL)
		return BFI_E_INVALID;
	memset(rep, 0, sizeof *rep);
	int rc = bfi__open(path, BFI_OPEN_NO_CATALOG, &s, &bad);
	if (rc) {
		report(rep, BFI_INDEX_NAME, &bad);
		return rc;
	}
	rc = check_data(s, &bad, progress, ctx);
	if (rc) {
		report(rep, BFI_INDEX_NAME, &bad);
		goto out;
	}
	rc = bfi__catalog_open(s, 0, &bad);
	if (rc == 0)
		rc = bfi__catalog_check_all(s, &bad);
	if (rc) {
		report(rep, BFI_CATALOG_NAME, &bad);
		goto out;
	}
	/* a file changed while it was read may have checked good in parts */
	rc = bfi_check_files(s);
	if (rc) {
		bad.offset = bad.length = 0;
		bad.what = "a file of the snapshot changed while it was verified";
		report(rep, BFI_INDEX_NAME, &bad);
	}
out:
	bfi_close(&s);
	return rc;
}
