/*
 * verify.c - deep verification: every checksum, every padding bit, and
 * the catalog. Reports the first bad region rather than stopping at "bad".
 */
#include <stdio.h>

#include "internal.h"

static void report(struct bfi_verify_report *rep, const char *file, const struct bfi_bad *bad)
{
	rep->file = file;
	rep->offset = bad->offset;
	rep->length = bad->length;
	snprintf(rep->what, sizeof rep->what, "%s", bad->what ? bad->what : "");
}

#define BAD(code, off, len, msg)                                                        \
	do {                                                                            \
		bad->offset = (off);                                                    \
		bad->length = (len);                                                    \
		bad->what = (msg);                                                      \
		return (code);                                                          \
	} while (0)

/* The first set bit in [from, to) of p, or UINT64_MAX. */
static uint64_t first_set_bit(const uint8_t *p, uint64_t from, uint64_t to)
{
	for (uint64_t b = from; b < to; b++) {
		if (b % 64 == 0 && to - b >= 64 && bfi_get64(p + b / 8) == 0) {
			b += 63;
			continue;
		}
		if (p[b / 8] >> (b % 8) & 1)
			return b;
	}
	return UINT64_MAX;
}

/* Is a bit at or past valid set in any of m rows? If so, *bad->offset is where. */
static int rows_padding(const bfi_snapshot *s, const uint8_t *rows, uint64_t m,
                        uint64_t row_bytes, uint64_t valid, struct bfi_bad *bad)
{
	for (uint64_t r = 0; r < m; r++) {
		const uint8_t *row = rows + r * row_bytes;
		uint64_t at = first_set_bit(row, valid, row_bytes * 8);
		if (at != UINT64_MAX) {
			bad->offset = (uint64_t)(row - s->map) + at / 8;
			return 1;
		}
	}
	return 0;
}

/*
 * Packed flat rows: is a bit set between a row's last set and the next
 * row, or in the zeros after the last row? If so, *bad->offset is where.
 */
static int packed_padding(const bfi_snapshot *s, const struct bfi_rblock *b, struct bfi_bad *bad)
{
	uint64_t end = bfi_block_rows_bytes(b->m, b->row_bits) * 8, at = UINT64_MAX;
	for (uint64_t r = 0; b->row_bits > b->n && r < b->m && at == UINT64_MAX; r++)
		at = first_set_bit(b->rows, r * b->row_bits + b->n, (r + 1) * b->row_bits);
	if (at == UINT64_MAX)
		at = first_set_bit(b->rows, b->m * b->row_bits, end);
	if (at == UINT64_MAX)
		return 0;
	bad->offset = (uint64_t)(b->rows - s->map) + at / 8;
	return 1;
}

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
	for (uint32_t b = 0; b < (lay->flat_idx >= 0 ? lay->flat.n_blocks : 0); b++) {
		const struct bfi_rblock *blk = &s->blocks[b];
		if (blk->packed ? packed_padding(s, blk, bad)
		                : rows_padding(s, blk->rows, blk->m, blk->row_bytes, blk->n, bad))
			BAD(BFI_E_BAD_LAYOUT, bad->offset, 1,
			    "padding bit past the block's last set is not zero");
		if (blk->pre) {
			uint64_t at = first_set_bit(blk->pre, blk->pre_m, bfi_bits_bytes(blk->pre_m) * 8);
			if (at != UINT64_MAX)
				BAD(BFI_E_BAD_LAYOUT, (uint64_t)(blk->pre - s->map) + at / 8, 1,
				    "padding bit past the pre-filter's width is not zero");
		}
	}
	for (uint32_t r = 0; r < (lay->rambo_idx >= 0 ? lay->rambo.reps : 0); r++) {
		const struct bfi_rrep *rp = &s->reps[r];
		if (rows_padding(s, rp->rows, rp->m, rp->row_bytes, lay->rambo.cells, bad))
			BAD(BFI_E_BAD_LAYOUT, bad->offset, 1,
			    "padding bit past the last rambo cell is not zero");
		/* starts ascend from 0 to N; members list each set once, in its cell */
		uint64_t prev = 0;
		for (uint64_t c = 0; c <= lay->rambo.cells; c++) {
			uint32_t v = bfi_get32(rp->starts + c * 4);
			if (v < prev || v > lay->n_sets || (c == 0 && v != 0) ||
			    (c == lay->rambo.cells && v != lay->n_sets))
				BAD(BFI_E_BAD_LAYOUT, (uint64_t)(rp->starts - s->map) + c * 4, 4,
				    "rambo cell starts out of order or out of range");
			if (c < lay->rambo.cells)
				for (uint32_t at = v; at < bfi_get32(rp->starts + c * 4 + 4) && at < lay->n_sets;
				     at++) {
					uint32_t set = bfi_get32(rp->members + (uint64_t)at * 4);
					if (set >= lay->n_sets || bfi_get32(rp->cell_of + (uint64_t)set * 4) != c ||
					    (at > v && bfi_get32(rp->members + (uint64_t)at * 4 - 4) >= set))
						BAD(BFI_E_BAD_LAYOUT, (uint64_t)(rp->members - s->map) + (uint64_t)at * 4,
						    4, "rambo members disagree with the cell-of table");
				}
			prev = v;
		}
	}
	for (uint32_t l = 0; l < (lay->tree_idx >= 0 ? lay->tree.levels : 0); l++) {
		const struct bfi_rlevel *lv = &s->levels[l];
		if (rows_padding(s, lv->rows, lv->m, lv->row_bytes, lv->nodes, bad))
			BAD(BFI_E_BAD_LAYOUT, bad->offset, 1,
			    "padding bit past a tree level's last node is not zero");
		/* explicit child groups: from 0, rising, ending at the level below's count */
		for (uint64_t i = 0; lv->groups && i <= lv->nodes; i++) {
			uint32_t g = bfi_get32(lv->groups + i * 4);
			if ((i == 0 && g != 0) || (i > 0 && g <= bfi_get32(lv->groups + i * 4 - 4)) ||
			    (i == lv->nodes && g != s->levels[l - 1].nodes))
				BAD(BFI_E_BAD_LAYOUT, (uint64_t)(lv->groups - s->map) + i * 4, 4,
				    "tree child groups out of order or out of range");
		}
	}
	if (s->tree_pre) {
		uint64_t at = first_set_bit(s->tree_pre, lay->tree.pre_m, bfi_bits_bytes(lay->tree.pre_m) * 8);
		if (at != UINT64_MAX)
			BAD(BFI_E_BAD_LAYOUT, (uint64_t)(s->tree_pre - s->map) + at / 8, 1,
			    "padding bit past the tree pre-filter's width is not zero");
	}
	for (uint64_t j = 0; j < (lay->plain_idx >= 0 ? lay->plain.n_sets : 0); j++) {
		const uint8_t *f = s->plain + j * lay->plain.filter_bytes;
		uint64_t at = first_set_bit(f, lay->plain.m, lay->plain.filter_bytes * 8);
		if (at != UINT64_MAX)
			BAD(BFI_E_BAD_LAYOUT, (uint64_t)(f - s->map) + at / 8, 1,
			    "padding bit past a plain filter's width is not zero");
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
