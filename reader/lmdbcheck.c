/*
 * lmdbcheck.c - check an LMDB file's pages before LMDB reads it.
 *
 * LMDB trusts its file: a page number read from a page is followed without
 * checking it against the file's end, so a crafted catalog crashes the
 * reader (SIGBUS past the end of the map; found by tests/fuzz/fuzz_catalog).
 * So before handing a catalog to LMDB, every page reachable from the two
 * meta pages is checked, as LMDB 0.9 lays them out (lmdb.h's on-disk
 * format, little-endian, 64-bit page numbers), and the file is refused
 * [BFI_E_CATALOG] unless every page number is inside it, every page is
 * reached once, every node lies inside its page and every overflow run
 * inside the file. Only what bfi's writer makes is accepted: plain B-trees
 * of named databases, no duplicate-sorted data.
 *
 * A catalog of a million sets is 61 MB, more than a cache holds, so the
 * file is read once, in order: each run of pages is hashed for the
 * catalog's digest and, while it is in cache, each of its pages is checked
 * on its own and given a class (a branch, a leaf, a leaf that names other
 * pages, an overflow run's head, or what is wrong with it). The walk from
 * the meta pages then reads only branch pages and the few leaves that name
 * other pages; a plain leaf it reaches is done by its class.
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
#define MDB_MAGIC 0xBEEFC0DEu
#define P_INVALID UINT64_MAX
#define MAX_DEPTH 32
#define DB_SIZE 48u /* MDB_db: pad, flags, depth, branch, leaf, overflow, entries, root */
#define RUN_PAGES 32u /* pages hashed and classed while in cache */

/* A page's class; from C_WRONG on, what is wrong with it. */
enum {
	C_BRANCH,
	C_LEAF,
	C_LEAF_REFS, /* holds a sub-database record or data on overflow pages */
	C_OVERFLOW,
	C_WRONG,
	C_OTHER_PGNO = C_WRONG,
	C_KIND,
	C_BOUNDS,
	C_NO_CHILD,
	C_NODE,
	C_KEY,
	C_NODE_KIND,
	C_DATA,
	C_DB_SIZE,
};
static const char *const wrong[] = {
	[C_OTHER_PGNO] = "catalog page holds another page number",
	[C_KIND] = "catalog page of an unexpected kind",
	[C_BOUNDS] = "catalog page bounds out of range",
	[C_NO_CHILD] = "catalog branch page without children",
	[C_NODE] = "catalog node outside its page",
	[C_KEY] = "catalog key outside its page",
	[C_NODE_KIND] = "catalog node of an unexpected kind",
	[C_DATA] = "catalog data outside its page",
	[C_DB_SIZE] = "catalog database record of the wrong size",
};

struct walk {
	const uint8_t *map;
	uint64_t psize, npages;
	uint8_t *class; /* a byte per page */
	uint8_t *seen;  /* a bit per page */
	const char *what;
};

static int bad(struct walk *w, const char *what)
{
	w->what = what;
	return BFI_E_CATALOG;
}

/* Page pgno on its own: its header, and every node inside it. */
static uint8_t classify(const struct walk *w, uint64_t pgno)
{
	const uint8_t *p = w->map + pgno * w->psize;
	uint16_t flags = bfi_get16(p + 10), lower = bfi_get16(p + 12), upper = bfi_get16(p + 14);
	if (bfi_get64(p) != pgno)
		return C_OTHER_PGNO;
	if (flags & P_OVERFLOW)
		return C_OVERFLOW; /* its run is checked from the node that names it */
	if ((flags & (P_BRANCH | P_LEAF)) == 0 || (flags & (P_BRANCH | P_LEAF)) == (P_BRANCH | P_LEAF) ||
	    (flags & ~(P_BRANCH | P_LEAF)))
		return C_KIND;
	if (lower < PAGEHDRSZ || (lower - PAGEHDRSZ) % 2 || lower > upper || upper > w->psize)
		return C_BOUNDS;
	unsigned n = (lower - PAGEHDRSZ) / 2;
	if (flags & P_BRANCH)
		return n == 0 ? C_NO_CHILD : C_BRANCH;
	uint8_t c = C_LEAF;
	for (unsigned i = 0; i < n; i++) {
		uint64_t off = bfi_get16(p + PAGEHDRSZ + 2 * i);
		if (off < upper || off + 8 > w->psize)
			return C_NODE;
		const uint8_t *node = p + off;
		uint64_t dsize = bfi_get16(node) | (uint64_t)bfi_get16(node + 2) << 16;
		uint64_t nf = bfi_get16(node + 4), at = off + 8 + bfi_get16(node + 6);
		if (at > w->psize)
			return C_KEY;
		if (nf & ~(uint64_t)(F_BIGDATA | F_SUBDATA)) /* duplicate data too: bfi never makes it */
			return C_NODE_KIND;
		if (nf & F_BIGDATA) {
			if (at + 8 > w->psize)
				return C_NODE;
			c = C_LEAF_REFS;
		} else if (at + dsize > w->psize) {
			return C_DATA;
		} else if (nf & F_SUBDATA) {
			if (dsize != DB_SIZE)
				return C_DB_SIZE;
			c = C_LEAF_REFS;
		}
	}
	return c;
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

/* The overflow run whose first page a leaf's node names, for dsize bytes of data. */
static int overflow(struct walk *w, uint64_t first, uint64_t dsize)
{
	if (first < 2 || first >= w->npages)
		return bad(w, "catalog page number outside the file");
	uint64_t pages = bfi_get32(w->map + first * w->psize + 12);
	if (w->class[first] != C_OVERFLOW || pages == 0 || pages > w->npages - first ||
	    dsize + PAGEHDRSZ > pages * w->psize)
		return bad(w, "catalog overflow pages out of range");
	for (uint64_t x = 0; x < pages; x++) {
		int rc = visit(w, first + x);
		if (rc)
			return rc;
	}
	return 0;
}

static int tree(struct walk *w, uint64_t pgno, int depth)
{
	if (depth > MAX_DEPTH)
		return bad(w, "catalog tree too deep");
	int rc = visit(w, pgno);
	if (rc)
		return rc;
	uint8_t c = w->class[pgno];
	if (c >= C_WRONG)
		return bad(w, wrong[c]);
	if (c == C_OVERFLOW)
		return bad(w, wrong[C_KIND]);
	if (c == C_LEAF)
		return 0;
	const uint8_t *p = w->map + pgno * w->psize;
	unsigned n = (bfi_get16(p + 12) - PAGEHDRSZ) / 2;
	for (unsigned i = 0; i < n && rc == 0; i++) {
		const uint8_t *node = p + bfi_get16(p + PAGEHDRSZ + 2 * i);
		uint64_t lo = bfi_get16(node), hi = bfi_get16(node + 2), nf = bfi_get16(node + 4);
		const uint8_t *data = node + 8 + bfi_get16(node + 6);
		if (c == C_BRANCH)
			rc = tree(w, lo | hi << 16 | nf << 32, depth + 1);
		else if (nf & F_BIGDATA)
			rc = overflow(w, bfi_get64(data), lo | hi << 16);
		else if (nf & F_SUBDATA)
			rc = subdb(w, data);
	}
	return rc;
}

int bfi__lmdb_check(const uint8_t *map, uint64_t size, uint8_t digest[16], const char **what)
{
	*what = NULL;
	/* the page size is recorded in the first meta page (its free database's pad) */
	uint64_t psize = size < 2 * 4096 ? 0 : bfi_get32(map + PAGEHDRSZ + 24);
	if (size < 2 * 4096 || psize < 4096 || psize > 65536 || (psize & (psize - 1)) || size % psize ||
	    size < 2 * psize) {
		bfi_digest128(map, (size_t)size, digest);
		*what = size < 2 * 4096 ? "catalog shorter than its two meta pages"
		                        : "catalog page size or file size out of range";
		return BFI_E_CATALOG;
	}
	struct walk w = {map, psize, size / psize, NULL, NULL, NULL};
	w.class = malloc((size_t)w.npages);
	w.seen = malloc((size_t)(w.npages / 8 + 1));
	int rc = w.class && w.seen ? 0 : -ENOMEM;
	if (rc == 0) {
		struct bfi_digest *d = bfi_digest_begin();
		if (d == NULL)
			rc = -ENOMEM;
		for (uint64_t at = 0; d && at < w.npages; at += RUN_PAGES) {
			uint64_t end = w.npages - at < RUN_PAGES ? w.npages : at + RUN_PAGES;
			bfi_digest_add(d, map + at * psize, (size_t)((end - at) * psize));
			for (uint64_t pg = at < 2 ? 2 : at; pg < end; pg++)
				w.class[pg] = classify(&w, pg);
		}
		if (d)
			bfi_digest_end(d, digest);
	}
	for (uint64_t m = 0; m < 2 && rc == 0; m++) {
		const uint8_t *p = map + m * psize, *meta = p + PAGEHDRSZ;
		if (bfi_get64(p) != m || !(bfi_get16(p + 10) & P_META) || bfi_get32(meta) != MDB_MAGIC ||
		    bfi_get32(meta + 4) != 1 || bfi_get32(meta + 24) != psize) {
			rc = bad(&w, "catalog meta page is not LMDB's");
			break;
		}
		if (bfi_get64(meta + 120) >= w.npages) {
			rc = bad(&w, "catalog's last page is outside the file");
			break;
		}
		/* each meta's trees, with a fresh record of pages reached */
		memset(w.seen, 0, (size_t)(w.npages / 8 + 1));
		const uint8_t *fdb = meta + 24, *mdb = meta + 24 + DB_SIZE;
		if (bfi_get64(fdb + 40) != P_INVALID)
			rc = tree(&w, bfi_get64(fdb + 40), 0);
		if (rc == 0)
			rc = subdb(&w, mdb);
	}
	free(w.class);
	free(w.seen);
	*what = w.what;
	return rc;
}
