/*
 * verify.c - deep verification: every checksum, every padding bit, and
 * the catalog. Reports the first bad region rather than stopping at "bad".
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "bfi_manifest.h"

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

/*
 * A collection at path (dirfd): its manifest, then each segment as a
 * snapshot, and that each is the one the manifest lists.
 */
static int verify_collection(const char *path, int dirfd, struct bfi_verify_report *rep,
                             void (*progress)(void *ctx, uint64_t done, uint64_t total),
                             void *ctx)
{
	struct bfi_manifest m;
	struct bfi_bad bad = {0, 0, NULL};
	int rc = bfi__read_manifest(dirfd, &m, &bad);
	if (rc) {
		report(rep, BFI_MANIFEST_NAME, &bad);
		return rc;
	}
	char p[4200];
	for (uint32_t i = 0; i < m.n_segments && rc == 0; i++) {
		snprintf(p, sizeof p, "%s/%s", path, m.segs[i].name);
		rc = bfi_verify(p, rep, progress, ctx);
		bfi_snapshot *s = NULL;
		if (rc == 0 && (rc = bfi__open(p, BFI_OPEN_NO_CATALOG, &s, &bad)) != 0)
			report(rep, BFI_INDEX_NAME, &bad);
		if (rc == 0 && (s->lay.n_sets != m.segs[i].n_sets ||
		                memcmp(s->lay.hdr.snapshot_id, m.segs[i].snapshot_id, 16) != 0)) {
			rc = BFI_E_CATALOG_MISMATCH;
			bad = (struct bfi_bad){0, BFI_HEADER_SIZE, "not the snapshot the manifest lists"};
			report(rep, BFI_INDEX_NAME, &bad);
		}
		bfi_close(&s);
		if (rc)
			snprintf(rep->segment, sizeof rep->segment, "%s", m.segs[i].name);
	}
	bfi_manifest_free(&m);
	return rc;
}

struct pack_verify {
	struct bfi_verify_report *rep;
	void (*progress)(void *ctx, uint64_t done, uint64_t total);
	void *ctx;
};

/* Each snapshot of a pack, as it is opened from memory: its data, then its catalog. */
static int verify_packed(void *c, const char *segment, bfi_snapshot *s)
{
	struct pack_verify *v = c;
	struct bfi_bad bad = {0, 0, NULL};
	int rc = check_data(s, &bad, v->progress, v->ctx);
	if (rc) {
		report(v->rep, BFI_INDEX_NAME, &bad);
	} else {
		rc = bfi__catalog_open(s, 0, &bad);
		if (rc == 0)
			rc = bfi__catalog_check_all(s, &bad);
		if (rc)
			report(v->rep, BFI_CATALOG_NAME, &bad);
	}
	if (rc)
		snprintf(v->rep->segment, sizeof v->rep->segment, "%s", segment);
	return rc;
}

/*
 * A pack: every frame and member (packed.c), and each snapshot in it as
 * a snapshot on disk is verified, from its files in memory; a
 * collection's segments against its manifest.
 */
static int verify_pack(const char *path, struct bfi_verify_report *rep,
                       void (*progress)(void *ctx, uint64_t done, uint64_t total), void *ctx)
{
	struct pack_verify v = {rep, progress, ctx};
	struct bfi_bad bad = {0, 0, NULL};
	bfi_snapshot *s = NULL;
	int rc = bfi__open_packed(path, BFI_OPEN_NO_CATALOG, &s, &bad, verify_packed, &v);
	if (rc && rep->file == NULL)
		report(rep, "pack", &bad);
	bfi_close(&s);
	return rc;
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
	if (rc == -ENOTDIR && bfi__is_pack(path))
		return verify_pack(path, rep, progress, ctx);
	int dirfd = rc == -ENOENT ? open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	if (dirfd >= 0 && bfi__is_collection(dirfd)) {
		rc = verify_collection(path, dirfd, rep, progress, ctx);
		close(dirfd);
		return rc;
	}
	if (dirfd >= 0)
		close(dirfd);
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
