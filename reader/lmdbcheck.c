/*
 * lmdbcheck.c - walk an LMDB file's pages before LMDB reads it.
 *
 * LMDB trusts its file: a page number read from a page is followed without
 * checking it against the file's end, so a crafted catalog crashes the
 * reader (SIGBUS past the end of the map; found by tests/fuzz/fuzz_catalog).
 * bfi's catalogs are small and read once at open, so before handing one to
 * LMDB we walk every page reachable from the two meta pages, as LMDB 0.9
 * lays them out (lmdb.h's on-disk format, little-endian, 64-bit page
 * numbers), and refuse the file [BFI_E_CATALOG] unless every page number
 * is inside it, every page is visited once, every node lies inside its page
 * and every overflow run inside the file. Only what bfi's writer makes is
 * accepted: plain B-trees of named databases, no duplicate-sorted data.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define PAGEHDRSZ 16u
#define P_BRANCH 0x01u
#define P_LEAF 0x02u
#define P_OVERFLOW 0x04u
#define P_META 0x08u
#define F_BIGDATA 0x01u
#define F_SUBDATA 0x02u
#define F_DUPDATA 0x04u
#define MDB_MAGIC 0xBEEFC0DEu
#define P_INVALID UINT64_MAX
#define MAX_DEPTH 32
#define DB_SIZE 48u /* MDB_db: pad, flags, depth, branch, leaf, overflow, entries, root */

struct walk {
	const uint8_t *map;
	uint64_t psize, npages;
	uint8_t *seen; /* a bit per page */
	const char *what;
};

static int bad(struct walk *w, const char *what)
{
	w->what = what;
	return BFI_E_CATALOG;
}

static int visit(struct walk *w, uint64_t pgno)
{
	if (pgno < 2 || pgno >= w->npages)
		return bad(w, "catalog page number outside the file");
	if (w->seen[pgno / 8] >> (pgno % 8) & 1)
		return bad(w, "catalog page reached twice");
	w->seen[pgno / 8] |= (uint8_t)(1u << (pgno % 8));
	return 0;
}

static int tree(struct walk *w, uint64_t pgno, int depth);

/* A sub-database record (MDB_db) found in a leaf: walk its tree. */
static int subdb(struct walk *w, const uint8_t *db)
{
	if (bfi_get16(db + 4) & 0x04u) /* MDB_DUPSORT: bfi never makes it */
		return bad(w, "catalog database with duplicate keys");
	uint64_t root = bfi_get64(db + 40);
	return root == P_INVALID ? 0 : tree(w, root, 0);
}

static int tree(struct walk *w, uint64_t pgno, int depth)
{
	if (depth > MAX_DEPTH)
		return bad(w, "catalog tree too deep");
	int rc = visit(w, pgno);
	if (rc)
		return rc;
	const uint8_t *p = w->map + pgno * w->psize;
	uint16_t flags = bfi_get16(p + 10), lower = bfi_get16(p + 12), upper = bfi_get16(p + 14);
	if (bfi_get64(p) != pgno)
		return bad(w, "catalog page holds another page number");
	if ((flags & (P_BRANCH | P_LEAF)) == 0 || (flags & (P_BRANCH | P_LEAF)) == (P_BRANCH | P_LEAF) ||
	    (flags & ~(P_BRANCH | P_LEAF)))
		return bad(w, "catalog page of an unexpected kind");
	if (lower < PAGEHDRSZ || (lower - PAGEHDRSZ) % 2 || lower > upper || upper > w->psize)
		return bad(w, "catalog page bounds out of range");
	unsigned n = (lower - PAGEHDRSZ) / 2;
	if ((flags & P_BRANCH) && n == 0)
		return bad(w, "catalog branch page without children");
	for (unsigned i = 0; i < n; i++) {
		uint64_t off = bfi_get16(p + PAGEHDRSZ + 2 * i);
		if (off < upper || off + 8 > w->psize)
			return bad(w, "catalog node outside its page");
		const uint8_t *node = p + off;
		uint64_t lo = bfi_get16(node), hi = bfi_get16(node + 2), nf = bfi_get16(node + 4);
		uint64_t ksize = bfi_get16(node + 6);
		if (off + 8 + ksize > w->psize)
			return bad(w, "catalog key outside its page");
		if (flags & P_BRANCH) {
			if ((rc = tree(w, lo | hi << 16 | nf << 32, depth + 1)))
				return rc;
			continue;
		}
		uint64_t dsize = lo | hi << 16, at = off + 8 + ksize;
		if (nf & ~(uint64_t)(F_BIGDATA | F_SUBDATA | F_DUPDATA) || (nf & F_DUPDATA))
			return bad(w, "catalog node of an unexpected kind");
		if (nf & F_BIGDATA) { /* the data is on overflow pages */
			if (at + 8 > w->psize)
				return bad(w, "catalog node outside its page");
			uint64_t first = bfi_get64(p + at);
			if (first < 2 || first >= w->npages)
				return bad(w, "catalog page number outside the file");
			const uint8_t *o = w->map + first * w->psize;
			uint64_t pages = bfi_get32(o + 12);
			if (bfi_get64(o) != first || !(bfi_get16(o + 10) & P_OVERFLOW) || pages == 0 ||
			    pages > w->npages - first || dsize + PAGEHDRSZ > pages * w->psize)
				return bad(w, "catalog overflow pages out of range");
			for (uint64_t x = 0; x < pages; x++)
				if ((rc = visit(w, first + x)))
					return rc;
			continue;
		}
		if (at + dsize > w->psize)
			return bad(w, "catalog data outside its page");
		if (nf & F_SUBDATA) {
			if (dsize != DB_SIZE)
				return bad(w, "catalog database record of the wrong size");
			if ((rc = subdb(w, p + at)))
				return rc;
		}
	}
	return 0;
}

int bfi__lmdb_check(const uint8_t *map, uint64_t size, const char **what)
{
	*what = NULL;
	if (size < 2 * 4096)
		return (*what = "catalog shorter than its two meta pages"), BFI_E_CATALOG;
	/* the page size is recorded in the first meta page (its free database's pad) */
	uint64_t psize = bfi_get32(map + PAGEHDRSZ + 24);
	if (psize < 4096 || psize > 65536 || (psize & (psize - 1)) || size % psize || size < 2 * psize)
		return (*what = "catalog page size or file size out of range"), BFI_E_CATALOG;
	struct walk w = {map, psize, size / psize, NULL, NULL};
	int rc = 0;
	for (uint64_t m = 0; m < 2 && rc == 0; m++) {
		const uint8_t *p = map + m * psize, *meta = p + PAGEHDRSZ;
		if (bfi_get64(p) != m || !(bfi_get16(p + 10) & P_META) || bfi_get32(meta) != MDB_MAGIC ||
		    bfi_get32(meta + 4) != 1 || bfi_get32(meta + 24) != psize)
			return (*what = "catalog meta page is not LMDB's"), BFI_E_CATALOG;
		if (bfi_get64(meta + 120) >= w.npages)
			return (*what = "catalog's last page is outside the file"), BFI_E_CATALOG;
		/* each meta's trees, with a fresh record of pages seen */
		w.seen = calloc((size_t)(w.npages / 8 + 1), 1);
		if (w.seen == NULL)
			return -ENOMEM;
		const uint8_t *fdb = meta + 24, *mdb = meta + 24 + DB_SIZE;
		if (bfi_get64(fdb + 40) != P_INVALID)
			rc = tree(&w, bfi_get64(fdb + 40), 0);
		if (rc == 0)
			rc = subdb(&w, mdb);
		free(w.seen);
		w.seen = NULL;
	}
	*what = w.what;
	return rc;
}
