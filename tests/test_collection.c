/*
 * test_collection.c - a collection opened as one snapshot (spec/format.md,
 * "Collections"): three segments and a manifest made here, some sets
 * removed, against one snapshot built from the surviving sets alone.
 * Every filter has the same width and k (--bits, --hashes), so each set's
 * filter is the same bits in either, and every answer must be the same
 * names, exactly. Then: a reader keeps its view while a later generation
 * drops a segment and deletes it; a damaged manifest, a missing segment
 * and a segment that is not the one listed are refused.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>

#include "bfi_manifest.h"
#include "format.h"
#include "internal.h"
#include "test.h"

#define SEGS 3
#define PER_SEG 40 /* sets a segment */
#define KEYS 30    /* keys a set */

static char coll[512], fresh[512];
static const char *seg_names[SEGS] = {"seg-0000000000000001-0000", "seg-0000000000000002-0000",
                                      "seg-0000000000000003-0001"};

/* Set g (global, 0 .. SEGS * PER_SEG - 1) holds keys "k<g + i>" for i < KEYS, and "all". */
static int removed_set(uint32_t g)
{
	return g % 7 == 3 || g == PER_SEG; /* a few in every segment, the second's first too */
}

static struct bfi_build_options opts(void)
{
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	o.bits = 4096;
	o.hashes = 5;
	o.keep_order = 1;
	o.prefilter = BFI_PREFILTER_NEVER;
	o.layouts = BFI_BUILD_FLAT | BFI_BUILD_PLAIN | BFI_BUILD_TREE;
	return o;
}

/* Build sets [from, to) at path, less the removed ones if live_only. */
static int build(const char *path, uint32_t from, uint32_t to, int live_only)
{
	struct bfi_build_options o = opts();
	bfi_writer *w = NULL;
	int rc = bfi_writer_create(&o, &w);
	for (uint32_t g = from; rc == 0 && g < to; g++) {
		if (live_only && removed_set(g))
			continue;
		char name[32], key[32];
		uint32_t ord;
		rc = bfi_writer_set(w, name, (size_t)snprintf(name, sizeof name, "set%04u", g), &ord);
		for (uint32_t i = 0; rc == 0 && i < KEYS; i++)
			rc = bfi_writer_key(w, ord, key, (size_t)snprintf(key, sizeof key, "k%u", g + i));
		if (rc == 0)
			rc = bfi_writer_key(w, ord, "all", 3);
	}
	if (rc == 0)
		rc = bfi_writer_finish(w, path, NULL);
	bfi_writer_destroy(&w);
	return rc;
}

/* Write the manifest of generation gen listing segments [0, n) at dir, the removed sets out. */
static int write_manifest(const char *dir, uint64_t gen, uint32_t n)
{
	struct bfi_segment segs[SEGS];
	uint64_t rm[SEGS * PER_SEG];
	struct bfi_manifest m = {BFI_MANIFEST_MAJOR, BFI_MANIFEST_MINOR, gen, 0, {7}, n, 0, segs, rm};
	for (uint32_t i = 0; i < n; i++) {
		char p[600];
		snprintf(p, sizeof p, "%s/%s", dir, seg_names[i]);
		bfi_snapshot *s = NULL;
		int rc = bfi_open(p, BFI_OPEN_NO_CATALOG, &s);
		if (rc)
			return rc;
		struct bfi_info in;
		bfi_info(s, &in);
		bfi_close(&s);
		snprintf(segs[i].name, sizeof segs[i].name, "%s", seg_names[i]);
		segs[i].n_sets = in.n_sets;
		segs[i].first = (uint64_t)i * PER_SEG;
		memcpy(segs[i].snapshot_id, in.snapshot_id, 16);
		for (uint32_t j = 0; j < PER_SEG; j++)
			if (removed_set(i * PER_SEG + j))
				rm[m.n_removed++] = (uint64_t)i << 32 | j;
	}
	m.n_sets = (uint64_t)n * PER_SEG - m.n_removed;
	uint64_t size = bfi_manifest_size(&m);
	uint8_t *b = malloc((size_t)size);
	if (b == NULL)
		return -ENOMEM;
	bfi_manifest_encode(b, &m);
	char tmp[600], to[600];
	snprintf(tmp, sizeof tmp, "%s/MANIFEST.tmp-1", dir);
	snprintf(to, sizeof to, "%s/%s", dir, BFI_MANIFEST_NAME);
	int rc = test_write_file(tmp, b, (size_t)size);
	if (rc == 0 && rename(tmp, to) != 0)
		rc = -errno;
	free(b);
	return rc;
}

static void setup(void)
{
	const char *t = test_tmpdir();
	snprintf(coll, sizeof coll, "%s/coll", t);
	snprintf(fresh, sizeof fresh, "%s/fresh", t);
	EXPECT(mkdir(coll, 0755) == 0);
	for (uint32_t i = 0; i < SEGS; i++) {
		char p[600];
		snprintf(p, sizeof p, "%s/%s", coll, seg_names[i]);
		EXPECT_RC(build(p, i * PER_SEG, (i + 1) * PER_SEG, 0), 0);
	}
	EXPECT_RC(write_manifest(coll, 1, SEGS), 0);
	EXPECT_RC(build(fresh, 0, SEGS * PER_SEG, 1), 0);
}

/* The names of res's answers, each line "name" in answer order, into out. */
static void names(const bfi_snapshot *s, const bfi_result *res, char *out, size_t cap)
{
	size_t at = 0;
	out[0] = 0;
	for (size_t i = 0; i < bfi_result_count(res); i++) {
		const char *n;
		size_t len;
		if (bfi_set_name(s, bfi_result_ordinals(res)[i], &n, &len) != 0) {
			at += (size_t)snprintf(out + at, cap - at, "?");
			continue;
		}
		if (at + len + 2 < cap)
			at += (size_t)snprintf(out + at, cap - at, "%.*s,", (int)len, n);
	}
}

static char a[1 << 16], b[1 << 16];

static void test_same_answers(void)
{
	bfi_snapshot *c = NULL, *f = NULL;
	EXPECT_RC(bfi_open(coll, 0, &c), 0);
	EXPECT_RC(bfi_open(fresh, 0, &f), 0);
	if (c == NULL || f == NULL)
		goto out;
	struct bfi_info ci, fi;
	bfi_info(c, &ci);
	bfi_info(f, &fi);
	EXPECT(ci.n_sets == fi.n_sets && ci.segments == SEGS && ci.generation == 1 &&
	       ci.ordinals == SEGS * PER_SEG && fi.segments == 0 && fi.ordinals == fi.n_sets);
	bfi_result *rcl = NULL, *rf = NULL;
	EXPECT_RC(bfi_result_create(&rcl), 0);
	EXPECT_RC(bfi_result_create(&rf), 0);
	int differ = 0, holes = 0;
	static const unsigned layouts[] = {0, BFI_LAYOUT_FLAT, BFI_LAYOUT_PLAIN, BFI_LAYOUT_TREE};
	for (size_t l = 0; l < sizeof layouts / sizeof *layouts; l++)
		for (uint32_t x = 0; x < SEGS * PER_SEG + KEYS + 50; x++) {
			char key[32];
			size_t len = (size_t)snprintf(key, sizeof key, "k%u", x);
			EXPECT_RC(bfi_query_key_layout(c, layouts[l], key, len, rcl), 0);
			EXPECT_RC(bfi_query_key_layout(f, layouts[l], key, len, rf), 0);
			names(c, rcl, a, sizeof a);
			names(f, rf, b, sizeof b);
			differ += strcmp(a, b) != 0;
			for (size_t i = 0; i < bfi_result_count(rcl); i++)
				holes += removed_set(bfi_result_ordinals(rcl)[i]);
		}
	EXPECT(differ == 0 && holes == 0);
	/* an expression, a threshold, keys in one call and a batch */
	bfi_expr *e = NULL;
	EXPECT_RC(bfi_expr_parse("k45 OR (all AND k100)", 21, &e, NULL), 0);
	EXPECT_RC(bfi_query_expr(c, 0, e, rcl), 0);
	EXPECT_RC(bfi_query_expr(f, 0, e, rf), 0);
	names(c, rcl, a, sizeof a);
	names(f, rf, b, sizeof b);
	EXPECT(strcmp(a, b) == 0 && bfi_result_count(rcl) > 0);
	const void *tk[3] = {"k50", "k51", "k9999"};
	size_t tl[3] = {3, 3, 5};
	bfi_expr *t = NULL;
	EXPECT_RC(bfi_expr_terms(tk, tl, 3, &t), 0);
	EXPECT_RC(bfi_query_threshold(c, 0, t, 0.6, rcl), 0);
	EXPECT_RC(bfi_query_threshold(f, 0, t, 0.6, rf), 0);
	names(c, rcl, a, sizeof a);
	names(f, rf, b, sizeof b);
	EXPECT(strcmp(a, b) == 0 && bfi_result_scores(rcl) != NULL);
	bfi_keyhash hs[3] = {bfi_hash_key("k1", 2), bfi_hash_key("k60", 3), bfi_hash_key("all", 3)};
	size_t ends[3];
	EXPECT_RC(bfi_query_keys(c, 0, hs, 3, rcl, ends), 0);
	EXPECT(ends[2] - ends[1] == ci.n_sets); /* "all" is in every live set, once */
	bfi_expr_free(&e);
	bfi_expr_free(&t);
	bfi_result_destroy(&rcl);
	bfi_result_destroy(&rf);
out:
	bfi_close(&c);
	bfi_close(&f);
}

/*
 * Threshold queries on the collection, pruned and counting every term on
 * every set (bfi__use_pruning), on each layout: the same sets, scores and
 * names, and those of the fresh build.
 */
static void test_thresholds_pruned(void)
{
	bfi_snapshot *c = NULL, *f = NULL;
	EXPECT_RC(bfi_open(coll, 0, &c), 0);
	EXPECT_RC(bfi_open(fresh, 0, &f), 0);
	bfi_result *r = NULL, *u = NULL;
	EXPECT_RC(bfi_result_create(&r), 0);
	EXPECT_RC(bfi_result_create(&u), 0);
	static const unsigned layouts[] = {BFI_LAYOUT_FLAT, BFI_LAYOUT_PLAIN, BFI_LAYOUT_TREE};
	static const double thetas[] = {0.4, 0.75, 1.0};
	int differ = 0, answered = 0;
	char keys[20][16];
	const void *kp[20];
	size_t kl[20];
	for (uint32_t from = 0; c && f && from < SEGS * PER_SEG; from += 7) {
		/* twenty consecutive keys: the sets about from hold many of them */
		for (uint32_t i = 0; i < 20; i++) {
			kl[i] = (size_t)snprintf(keys[i], sizeof keys[i], "k%u", from + i * (i % 3 + 1));
			kp[i] = keys[i];
		}
		bfi_expr *t = NULL;
		EXPECT_RC(bfi_expr_terms(kp, kl, 20, &t), 0);
		for (size_t l = 0; t && l < sizeof layouts / sizeof *layouts; l++)
			for (size_t x = 0; x < sizeof thetas / sizeof *thetas; x++) {
				bfi__use_pruning(1);
				EXPECT_RC(bfi_query_threshold(c, layouts[l], t, thetas[x], r), 0);
				bfi__use_pruning(0);
				EXPECT_RC(bfi_query_threshold(c, layouts[l], t, thetas[x], u), 0);
				names(c, r, a, sizeof a);
				names(c, u, b, sizeof b);
				differ += strcmp(a, b) != 0 || bfi_result_count(r) != bfi_result_count(u) ||
				          (bfi_result_count(r) &&
				           memcmp(bfi_result_scores(r), bfi_result_scores(u),
				                  bfi_result_count(r) * sizeof(uint32_t)) != 0);
				bfi__use_pruning(1);
				EXPECT_RC(bfi_query_threshold(f, layouts[l], t, thetas[x], u), 0);
				names(f, u, b, sizeof b);
				differ += strcmp(a, b) != 0;
				answered += bfi_result_count(r) > 0;
			}
		bfi_expr_free(&t);
	}
	bfi__use_pruning(-1);
	EXPECT(differ == 0);
	EXPECT(answered > 20);
	bfi_result_destroy(&r);
	bfi_result_destroy(&u);
	bfi_close(&c);
	bfi_close(&f);
}

static void test_names(void)
{
	bfi_snapshot *c = NULL;
	EXPECT_RC(bfi_open(coll, 0, &c), 0);
	if (c == NULL)
		return;
	uint32_t ord;
	const char *n;
	size_t len;
	EXPECT_RC(bfi_set_find(c, "set0046", 7, &ord), 0);
	EXPECT(ord == 46);
	EXPECT_RC(bfi_set_name(c, 46, &n, &len), 0);
	EXPECT(len == 7 && memcmp(n, "set0046", 7) == 0);
	EXPECT_RC(bfi_set_find(c, "set0003", 7, &ord), BFI_E_NOT_FOUND); /* removed */
	EXPECT_RC(bfi_set_name(c, 3, &n, &len), BFI_E_NOT_FOUND);
	EXPECT_RC(bfi_set_name(c, SEGS * PER_SEG, &n, &len), BFI_E_NOT_FOUND);
	struct bfi_set_stats st;
	EXPECT_RC(bfi_set_stats(c, 46, &st), 0);
	EXPECT(st.distinct_keys == KEYS + 1 && st.bits == 4096);
	const void *v;
	EXPECT_RC(bfi_catalog_meta(c, "fpr", &v, &len), 0);
	bfi_close(&c);
}

/* A reader keeps what it opened while a later generation drops a segment and deletes it. */
static void test_reader_keeps_its_generation(void)
{
	bfi_snapshot *c = NULL;
	EXPECT_RC(bfi_open(coll, 0, &c), 0);
	bfi_result *r = NULL;
	EXPECT_RC(bfi_result_create(&r), 0);
	EXPECT_RC(bfi_query_key(c, "all", 3, r), 0);
	size_t before = bfi_result_count(r);
	EXPECT_RC(write_manifest(coll, 2, SEGS - 1), 0);
	char p[600];
	snprintf(p, sizeof p, "%s/%s", coll, seg_names[SEGS - 1]);
	test_rm_rf(p);
	EXPECT_RC(bfi_query_key(c, "all", 3, r), 0);
	EXPECT(bfi_result_count(r) == before && before > 0);
	bfi_close(&c);
	/* a new reader sees generation 2 */
	EXPECT_RC(bfi_open(coll, 0, &c), 0);
	if (c) {
		struct bfi_info in;
		bfi_info(c, &in);
		EXPECT(in.generation == 2 && in.segments == SEGS - 1);
		EXPECT_RC(bfi_query_key(c, "all", 3, r), 0);
		EXPECT(bfi_result_count(r) < before);
	}
	bfi_close(&c);
	bfi_result_destroy(&r);
}

static void test_refused(void)
{
	char m[600];
	snprintf(m, sizeof m, "%s/%s", coll, BFI_MANIFEST_NAME);
	size_t len;
	uint8_t *good = test_read_file(m, &len);
	EXPECT(good != NULL);
	if (good == NULL)
		return;
	bfi_snapshot *c = NULL;
	uint8_t *bad = malloc(len);
	memcpy(bad, good, len);
	bad[70] ^= 1; /* a segment's name: the checksum fails */
	EXPECT(test_write_file(m, bad, len) == 0);
	EXPECT_RC(bfi_open(coll, 0, &c), BFI_E_MANIFEST);
	EXPECT(test_write_file(m, good, len - 1) == 0);
	EXPECT_RC(bfi_open(coll, 0, &c), BFI_E_TRUNCATED);
	/* a segment listed that is not there */
	EXPECT_RC(write_manifest(coll, 3, SEGS - 1), 0);
	char p[600], q[600];
	snprintf(p, sizeof p, "%s/%s", coll, seg_names[1]);
	snprintf(q, sizeof q, "%s/elsewhere", coll);
	EXPECT(rename(p, q) == 0);
	EXPECT_RC(bfi_open(coll, 0, &c), -ENOENT);
	/* another snapshot in a listed segment's place: same count, other sets */
	EXPECT(rename(q, p) == 0);
	snprintf(p, sizeof p, "%s/%s", coll, seg_names[0]);
	test_rm_rf(p);
	EXPECT_RC(build(p, 1, PER_SEG + 1, 0), 0);
	EXPECT_RC(bfi_open(coll, 0, &c), BFI_E_CATALOG_MISMATCH);
	EXPECT(c == NULL);
	free(bad);
	free(good);
}


/*
 * Readers during commits: two threads open the collection and count the
 * sets holding "all" (every set holds it) while this thread commits 24
 * generations, appending segments and removing sets. Each reader must
 * count exactly the live sets of the generation it opened: never a mix.
 */
#define COMMITS 24
static char live_dir[512];
static int committing = 1; /* read and written with __atomic builtins */

struct reader_stats {
	int opens, wrong, failed;
};

static void *reader(void *arg)
{
	struct reader_stats *st = arg;
	bfi_result *r = NULL;
	if (bfi_result_create(&r) != 0)
		return NULL;
	while (__atomic_load_n(&committing, __ATOMIC_ACQUIRE)) {
		bfi_snapshot *s = NULL;
		int rc = bfi_open(live_dir, 0, &s);
		if (rc == BFI_E_NOT_FOUND || rc == -ENOENT) /* no manifest yet */
			continue;
		if (rc) {
			st->failed++;
			continue;
		}
		st->opens++;
		struct bfi_info in;
		bfi_info(s, &in);
		for (int q = 0; q < 5; q++)
			if (bfi_query_key(s, "all", 3, r) != 0 || bfi_result_count(r) != in.n_sets)
				st->wrong++;
		bfi_close(&s);
	}
	bfi_result_destroy(&r);
	return NULL;
}

static void test_readers_during_commits(void)
{
	snprintf(live_dir, sizeof live_dir, "%s/live", test_tmpdir());
	pthread_t rt[2];
	struct reader_stats st[2] = {{0, 0, 0}, {0, 0, 0}};
	__atomic_store_n(&committing, 1, __ATOMIC_RELEASE);
	for (int t = 0; t < 2; t++)
		EXPECT(pthread_create(&rt[t], NULL, reader, &st[t]) == 0);
	uint64_t live = 0;
	for (int g = 0; g < COMMITS; g++) {
		char err[4400];
		bfi_collection *c = NULL;
		EXPECT_RC(bfi_collection_begin(live_dir, BFI_COLL_CREATE, &c, err, sizeof err), 0);
		if (c == NULL)
			break;
		int rc = 0;
		if (g % 4 == 3 && live) { /* remove the first live set */
			for (uint64_t o = 0; rc == 0; o++)
				if ((rc = bfi_collection_remove(c, o)) == 0)
					break;
				else if (rc == BFI_E_NOT_FOUND)
					rc = 0;
			live--;
		} else {
			const char *p = bfi_collection_segment_path(c);
			uint32_t from = (uint32_t)g * 10;
			rc = build(p, from, from + 10, 0);
			bfi_snapshot *s = NULL;
			if (rc == 0)
				rc = bfi_open(p, BFI_OPEN_NO_CATALOG, &s);
			struct bfi_info in;
			if (rc == 0) {
				bfi_info(s, &in);
				rc = bfi_collection_add(c, in.n_sets, in.snapshot_id);
			}
			bfi_close(&s);
			live += 10;
		}
		EXPECT_RC(rc, 0);
		EXPECT_RC(bfi_collection_commit(c), 0);
		bfi_collection_end(&c);
	}
	__atomic_store_n(&committing, 0, __ATOMIC_RELEASE);
	for (int t = 0; t < 2; t++)
		pthread_join(rt[t], NULL);
	printf("readers during %d commits: %d and %d opens, %d wrong counts, %d failed opens\n",
	       COMMITS, st[0].opens, st[1].opens, st[0].wrong + st[1].wrong,
	       st[0].failed + st[1].failed);
	EXPECT(st[0].wrong + st[1].wrong == 0 && st[0].failed + st[1].failed == 0);
	EXPECT(st[0].opens + st[1].opens > 0);
	bfi_snapshot *s = NULL;
	EXPECT_RC(bfi_open(live_dir, 0, &s), 0);
	if (s) {
		struct bfi_info in;
		bfi_info(s, &in);
		EXPECT(in.n_sets == live && in.generation == COMMITS);
	}
	bfi_close(&s);
}

int main(void)
{
	setup();
	test_run("collection: answers equal a fresh build of the live sets", test_same_answers);
	test_run("collection: thresholds pruned and counting every term answer the same",
	         test_thresholds_pruned);
	test_run("collection: names, stats and meta in global ordinals; removed sets gone",
	         test_names);
	test_run("collection: a reader keeps its generation while the next deletes a segment",
	         test_reader_keeps_its_generation);
	test_run("collection: damaged manifest, missing or foreign segment refused", test_refused);
	test_run("collection: readers during commits each see one whole generation",
	         test_readers_during_commits);
	test_cleanup();
	return test_exit();
}
