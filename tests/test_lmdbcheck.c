/*
 * test_lmdbcheck.c - the catalog's page check (reader/lmdbcheck.c), which
 * must refuse every LMDB file whose reachable pages LMDB would misread, and
 * give the catalog's digest in the same pass.
 *
 * An LMDB file is made here with LMDB itself: named databases of many keys
 * (so branch pages, and more pages than the check takes in one run) and a
 * value large enough for overflow pages. Each case damages one reachable
 * page as a hostile writer could and expects the message that names it;
 * pages no tree reaches may hold anything. Then random damage to page
 * headers and nodes: whatever the check lets through, LMDB must read
 * through every database without a fault (ASan in the sanitize build).
 */
#include <lmdb.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "test.h"

#define HDR 16u
#define P_BRANCH 0x01u
#define P_LEAF 0x02u
#define P_OVERFLOW 0x04u
#define F_BIGDATA 0x01u
#define F_SUBDATA 0x02u
#define F_DUPDATA 0x04u
#define BIG_VALUE 20000u

static uint8_t *good;
static size_t good_len, psize;
static char path[4200];

static int make_catalog(void)
{
	snprintf(path, sizeof path, "%s/catalog.mdb", test_tmpdir());
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi meta, sets, names;
	if (mdb_env_create(&env) || mdb_env_set_mapsize(env, 64u << 20) || mdb_env_set_maxdbs(env, 4) ||
	    mdb_env_open(env, path, MDB_NOSUBDIR | MDB_NOLOCK, 0644) || mdb_txn_begin(env, NULL, 0, &txn) ||
	    mdb_dbi_open(txn, "meta", MDB_CREATE, &meta) || mdb_dbi_open(txn, "sets", MDB_CREATE, &sets) ||
	    mdb_dbi_open(txn, "names", MDB_CREATE, &names))
		return -1;
	char *big = malloc(BIG_VALUE);
	memset(big, 'x', BIG_VALUE);
	MDB_val k = {3, "big"}, v = {BIG_VALUE, big};
	int rc = mdb_put(txn, meta, &k, &v, 0);
	free(big);
	for (uint32_t i = 0; i < 20000 && rc == 0; i++) {
		char name[32];
		uint8_t be[4] = {(uint8_t)(i >> 24), (uint8_t)(i >> 16), (uint8_t)(i >> 8), (uint8_t)i};
		int len = snprintf(name, sizeof name, "set-%08u", i);
		MDB_val a = {4, be}, b = {(size_t)len, name};
		rc = mdb_put(txn, sets, &a, &b, MDB_APPEND) || mdb_put(txn, names, &b, &a, MDB_APPEND);
	}
	rc = rc || mdb_txn_commit(txn);
	mdb_env_close(env);
	good = test_read_file(path, &good_len);
	return rc || good == NULL ? -1 : 0;
}

static uint8_t *page(uint8_t *b, uint64_t pgno)
{
	return b + pgno * psize;
}

static uint16_t nkeys(const uint8_t *p)
{
	return (uint16_t)((bfi_get16(p + 12) - HDR) / 2);
}

static uint8_t *node(uint8_t *p, unsigned i)
{
	return p + bfi_get16(p + HDR + 2 * i);
}

/* The main database's root, from the meta page of the later transaction. */
static uint64_t main_root(const uint8_t *b)
{
	const uint8_t *m0 = b + HDR, *m1 = b + psize + HDR;
	const uint8_t *m = bfi_get64(m1 + 128) > bfi_get64(m0 + 128) ? m1 : m0;
	return bfi_get64(m + 24 + 48 + 40);
}

/* The root of named database name (its record in the main database's one leaf). */
static uint64_t db_root(uint8_t *b, const char *name)
{
	uint8_t *p = page(b, main_root(b));
	for (unsigned i = 0; i < nkeys(p); i++) {
		uint8_t *n = node(p, i);
		if (bfi_get16(n + 6) == strlen(name) && !memcmp(n + 8, name, strlen(name)))
			return bfi_get64(n + 8 + bfi_get16(n + 6) + 40);
	}
	return 0;
}

static uint64_t child(uint8_t *branch, unsigned i)
{
	uint8_t *n = node(branch, i);
	return bfi_get16(n) | (uint64_t)bfi_get16(n + 2) << 16 | (uint64_t)bfi_get16(n + 4) << 32;
}

static void set_child(uint8_t *branch, unsigned i, uint64_t pgno)
{
	uint8_t *n = node(branch, i);
	bfi_put16(n, (uint16_t)pgno);
	bfi_put16(n + 2, (uint16_t)(pgno >> 16));
	bfi_put16(n + 4, (uint16_t)(pgno >> 32));
}

/* The first leaf under page pgno. */
static uint64_t first_leaf(uint8_t *b, uint64_t pgno)
{
	while (bfi_get16(page(b, pgno) + 10) & P_BRANCH)
		pgno = child(page(b, pgno), 0);
	return pgno;
}

/* The node of meta's big value, and the first page of its overflow run. */
static uint8_t *big_node(uint8_t *b, uint64_t *first)
{
	uint8_t *p = page(b, first_leaf(b, db_root(b, "meta")));
	for (unsigned i = 0; i < nkeys(p); i++) {
		uint8_t *n = node(p, i);
		if (bfi_get16(n + 4) & F_BIGDATA) {
			*first = bfi_get64(n + 8 + bfi_get16(n + 6));
			return n;
		}
	}
	return NULL;
}

/* Check bytes b: the code, the message (NULL: none wanted) and the digest of every outcome. */
static void expect(uint8_t *b, size_t len, int want, const char *what)
{
	uint8_t d[16], ref[16];
	const char *why = NULL;
	int rc = bfi__lmdb_check(b, len, d, &why);
	EXPECT_RC(rc, want);
	if (what && (why == NULL || strcmp(why, what))) {
		fprintf(stderr, "  said \"%s\", want \"%s\"\n", why ? why : "(nothing)", what);
		EXPECT(0);
	}
	bfi_digest128(b, len, ref);
	EXPECT(memcmp(d, ref, 16) == 0);
}

static void test_good(void)
{
	EXPECT(good_len / psize > 64); /* more pages than one run of the check */
	uint8_t *b = malloc(good_len);
	memcpy(b, good, good_len);
	EXPECT(bfi_get16(page(b, db_root(b, "sets")) + 10) & P_BRANCH);
	uint64_t first = 0;
	EXPECT(big_node(b, &first) != NULL && (bfi_get16(page(b, first) + 10) & P_OVERFLOW));
	expect(b, good_len, 0, NULL);
	/* a page no tree reaches may hold anything */
	uint8_t *more = realloc(b, good_len + psize);
	memset(more + good_len, 0xA5, psize);
	bfi_put64(more + good_len, good_len / psize); /* even its own page number */
	bfi_put16(more + good_len + 10, P_LEAF);
	expect(more, good_len + psize, 0, NULL);
	free(more);
}

/* One kind of damage: f changes a copy of the good file; its expected message. */
static void damaged(void (*f)(uint8_t *b), const char *what)
{
	uint8_t *b = malloc(good_len);
	memcpy(b, good, good_len);
	f(b);
	expect(b, good_len, BFI_E_CATALOG, what);
	free(b);
}

static uint8_t *sets_branch(uint8_t *b)
{
	return page(b, db_root(b, "sets"));
}

static void child_past_end(uint8_t *b)
{
	set_child(sets_branch(b), 1, good_len / psize + 3);
}
static void child_twice(uint8_t *b)
{
	set_child(sets_branch(b), 1, child(sets_branch(b), 0));
}
static void child_is_meta(uint8_t *b)
{
	set_child(sets_branch(b), 1, 1);
}
static void child_is_overflow(uint8_t *b)
{
	uint64_t first = 0;
	big_node(b, &first);
	set_child(sets_branch(b), 1, first);
}
static void leaf_is_overflow(uint8_t *b)
{
	bfi_put16(page(b, first_leaf(b, db_root(b, "names"))) + 10, P_LEAF | P_OVERFLOW);
}
static void leaf_other_pgno(uint8_t *b)
{
	uint64_t l = first_leaf(b, db_root(b, "names"));
	bfi_put64(page(b, l), l + 1);
}
static void leaf_upper(uint8_t *b)
{
	bfi_put16(page(b, first_leaf(b, db_root(b, "names"))) + 14, (uint16_t)(psize + 2));
}
static void leaf_kind(uint8_t *b)
{
	bfi_put16(page(b, first_leaf(b, db_root(b, "names"))) + 10, P_LEAF | P_BRANCH);
}
static void branch_empty(uint8_t *b)
{
	bfi_put16(sets_branch(b) + 12, HDR);
}
static void node_before_upper(uint8_t *b)
{
	uint8_t *p = page(b, first_leaf(b, db_root(b, "sets")));
	bfi_put16(p + HDR + 2, (uint16_t)(bfi_get16(p + 14) - 2));
}
static void node_key(uint8_t *b)
{
	uint8_t *p = page(b, child(sets_branch(b), 1));
	bfi_put16(node(p, nkeys(p) - 1) + 6, 0xFFFF);
}
static void node_data(uint8_t *b)
{
	uint8_t *p = page(b, child(sets_branch(b), 1));
	bfi_put16(node(p, 0), 0xFFF0);
}
static void node_dupdata(uint8_t *b)
{
	uint8_t *p = page(b, child(sets_branch(b), 1));
	bfi_put16(node(p, 0) + 4, F_DUPDATA);
}
static void db_record_size(uint8_t *b)
{
	uint8_t *p = page(b, main_root(b));
	bfi_put16(node(p, 0), 40); /* a sub-database record of 40 bytes, not 48 */
}
static void db_root_past_end(uint8_t *b)
{
	uint8_t *p = page(b, main_root(b));
	uint8_t *n = node(p, 0);
	bfi_put64(n + 8 + bfi_get16(n + 6) + 40, good_len / psize);
}
static void overflow_count(uint8_t *b)
{
	uint64_t first = 0;
	big_node(b, &first);
	bfi_put32(page(b, first) + 12, 0xFFFFFFFFu);
}
static void overflow_short(uint8_t *b)
{
	uint64_t first = 0;
	big_node(b, &first);
	bfi_put32(page(b, first) + 12, 1); /* 20,000 bytes in one page */
}
static void overflow_at_leaf(uint8_t *b)
{
	uint64_t first = 0;
	uint8_t *n = big_node(b, &first);
	bfi_put64(n + 8 + bfi_get16(n + 6), first_leaf(b, db_root(b, "names")));
}
static void overflow_over_leaf(uint8_t *b)
{
	/* the run made long enough to take in a page a tree reaches */
	uint64_t first = 0, leaf = first_leaf(b, db_root(b, "names"));
	big_node(b, &first);
	if (leaf > first)
		bfi_put32(page(b, first) + 12, (uint32_t)(leaf - first + 1));
	else
		set_child(sets_branch(b), 1, first + 1);
}

static void test_damage(void)
{
	damaged(child_past_end, "catalog page number outside the file");
	damaged(child_twice, "catalog page reached twice");
	damaged(child_is_meta, "catalog page number outside the file");
	damaged(child_is_overflow, "catalog page reached twice"); /* the run is reached from meta */
	damaged(leaf_is_overflow, "catalog page of an unexpected kind");
	damaged(leaf_other_pgno, "catalog page holds another page number");
	damaged(leaf_upper, "catalog page bounds out of range");
	damaged(leaf_kind, "catalog page of an unexpected kind");
	damaged(branch_empty, "catalog branch page without children");
	damaged(node_before_upper, "catalog node outside its page");
	damaged(node_key, "catalog key outside its page");
	damaged(node_data, "catalog data outside its page");
	damaged(node_dupdata, "catalog node of an unexpected kind");
	damaged(db_record_size, "catalog database record of the wrong size");
	damaged(db_root_past_end, "catalog page number outside the file");
	damaged(overflow_count, "catalog overflow pages out of range");
	damaged(overflow_short, "catalog overflow pages out of range");
	damaged(overflow_at_leaf, "catalog overflow pages out of range");
	damaged(overflow_over_leaf, NULL);
	/* too short, and a page size not LMDB's: the digest all the same */
	expect(good, 4096, BFI_E_CATALOG, "catalog shorter than its two meta pages");
	expect(good, good_len - 1, BFI_E_CATALOG, "catalog page size or file size out of range");
}

/* Read every record of every database of the file at path through LMDB. */
static void read_all(const char *p)
{
	MDB_env *env;
	MDB_txn *txn;
	if (mdb_env_create(&env))
		return;
	mdb_env_set_maxdbs(env, 4);
	if (mdb_env_open(env, p, MDB_RDONLY | MDB_NOLOCK | MDB_NOSUBDIR, 0) == 0 &&
	    mdb_txn_begin(env, NULL, MDB_RDONLY, &txn) == 0) {
		static const char *const dbs[] = {"meta", "sets", "names"};
		for (int d = 0; d < 3; d++) {
			MDB_dbi dbi;
			MDB_cursor *c;
			MDB_val k, v;
			if (mdb_dbi_open(txn, dbs[d], 0, &dbi) || mdb_cursor_open(txn, dbi, &c))
				continue;
			size_t sum = 0;
			for (int op = MDB_FIRST; mdb_cursor_get(c, &k, &v, op) == 0; op = MDB_NEXT)
				sum += k.mv_size + v.mv_size + (v.mv_size ? ((const uint8_t *)v.mv_data)[v.mv_size - 1] : 0);
			EXPECT(sum > 0);
			mdb_cursor_close(c);
		}
		mdb_txn_abort(txn);
	}
	mdb_env_close(env);
}

static void test_random_damage(void)
{
	uint64_t seed = 48;
	char p[4300];
	snprintf(p, sizeof p, "%s/damaged.mdb", test_tmpdir());
	uint8_t *b = malloc(good_len);
	int passed = 0, refused = 0;
	for (int round = 0; round < 400; round++) {
		memcpy(b, good, good_len);
		/* a few bytes of page headers and node offsets, where LMDB takes its page numbers */
		for (int i = 0; i < 1 + round % 3; i++) {
			uint64_t pg = 2 + test_rand(&seed) % (good_len / psize - 2);
			uint64_t at = test_rand(&seed) % (round % 2 ? 64 : psize);
			b[pg * psize + at] ^= (uint8_t)(1u << test_rand(&seed) % 8);
		}
		uint8_t d[16];
		const char *why;
		int rc = bfi__lmdb_check(b, good_len, d, &why);
		EXPECT(rc == 0 || (rc == BFI_E_CATALOG && why != NULL));
		if (rc == 0) {
			passed++;
			test_write_file(p, b, good_len);
			read_all(p);
		} else {
			refused++;
		}
	}
	EXPECT(passed > 0 && refused > 0);
	free(b);
}

int main(void)
{
	if (make_catalog() != 0) {
		fprintf(stderr, "cannot make an LMDB file\n");
		return 1;
	}
	psize = bfi_get32(good + HDR + 24);
	test_run("lmdbcheck: an LMDB file of many pages passes, with its digest", test_good);
	test_run("lmdbcheck: each damage to a reachable page is refused by name", test_damage);
	test_run("lmdbcheck: what passes random damage, LMDB reads without a fault", test_random_damage);
	free(good);
	test_cleanup();
	return test_exit();
}
