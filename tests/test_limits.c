/*
 * test_limits.c - the edges spec/format.md "Limits" defines: no sets and
 * one set; empty keys, 1 MiB keys and keys holding NUL; set names that are
 * not UTF-8, and the same name twice; the largest m the format allows.
 */
#include <string.h>
#include <sys/stat.h>

#include "format.h"
#include "test.h"

static char snap[4300];

static bfi_writer *writer(void)
{
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	o.memory = 16u << 20;
	o.layouts = BFI_BUILD_FLAT | BFI_BUILD_TREE | BFI_BUILD_RAMBO;
	bfi_writer *w = NULL;
	EXPECT_RC(bfi_writer_create(&o, &w), 0);
	return w;
}

/* Query key on every layout: 1 if set ord is among the answers on all. */
static int holds(bfi_snapshot *s, const void *key, size_t len, uint32_t ord)
{
	bfi_result *r;
	if (bfi_result_create(&r) != 0)
		return 0;
	static const unsigned lay[3] = {BFI_LAYOUT_FLAT, BFI_LAYOUT_TREE, BFI_LAYOUT_RAMBO};
	int all = 1;
	for (int l = 0; l < 3; l++) {
		int found = 0;
		if (bfi_query_key_layout(s, lay[l], key, len, r) == 0)
			for (size_t x = 0; x < bfi_result_count(r); x++)
				found |= bfi_result_ordinals(r)[x] == ord;
		all &= found;
	}
	bfi_result_destroy(&r);
	return all;
}

static void test_sets(void)
{
	snprintf(snap, sizeof snap, "%s/s", test_tmpdir());
	/* no sets: refused, nothing written */
	bfi_writer *w = writer();
	EXPECT_RC(bfi_writer_finish(w, snap, NULL), BFI_E_NO_SETS);
	bfi_writer_destroy(&w);
	struct stat st;
	EXPECT(stat(snap, &st) != 0);
	/* one set, and a set with no keys: both fine */
	w = writer();
	uint32_t a, b;
	EXPECT_RC(bfi_writer_set(w, "only", 4, &a), 0);
	EXPECT_RC(bfi_writer_key(w, a, "x", 1), 0);
	EXPECT_RC(bfi_writer_set(w, "empty", 5, &b), 0);
	EXPECT_RC(bfi_writer_finish(w, snap, NULL), 0);
	bfi_writer_destroy(&w);
	bfi_snapshot *s;
	EXPECT_RC(bfi_open(snap, 0, &s), 0);
	if (s) {
		uint32_t oa, ob;
		EXPECT_RC(bfi_set_find(s, "only", 4, &oa), 0);
		EXPECT_RC(bfi_set_find(s, "empty", 5, &ob), 0);
		EXPECT(holds(s, "x", 1, oa));
		EXPECT(!holds(s, "x", 1, ob));
		bfi_close(&s);
	}
}

static void test_keys(void)
{
	bfi_writer *w = writer();
	uint32_t o;
	EXPECT_RC(bfi_writer_set(w, "k", 1, &o), 0);
	size_t big = 1u << 20;
	char *huge = malloc(big);
	for (size_t i = 0; huge && i < big; i++)
		huge[i] = (char)('a' + i % 26);
	static const char nul[5] = {'a', 0, 'b', 0, 'c'};
	EXPECT_RC(bfi_writer_key(w, o, "", 0), 0);          /* the empty key */
	EXPECT_RC(bfi_writer_key(w, o, huge, big), 0);      /* 1 MiB */
	EXPECT_RC(bfi_writer_key(w, o, nul, sizeof nul), 0); /* NUL inside */
	EXPECT_RC(bfi_writer_finish(w, snap, NULL), 0);
	bfi_writer_destroy(&w);
	bfi_snapshot *s;
	EXPECT_RC(bfi_open(snap, 0, &s), 0);
	if (s) {
		EXPECT(holds(s, "", 0, 0));
		EXPECT(holds(s, huge, big, 0));
		EXPECT(holds(s, nul, sizeof nul, 0));
		/* the key up to its first NUL is another key */
		struct bfi_set_stats st;
		EXPECT_RC(bfi_set_stats(s, 0, &st), 0);
		EXPECT(st.distinct_keys == 3);
		bfi_close(&s);
	}
	free(huge);
}

static void test_names(void)
{
	bfi_writer *w = writer();
	uint32_t a, b, c;
	static const char latin1[] = {'c', 'a', 'f', (char)0xe9}; /* not UTF-8 */
	EXPECT_RC(bfi_writer_set(w, latin1, sizeof latin1, &a), 0);
	EXPECT_RC(bfi_writer_key(w, a, "x", 1), 0);
	/* the same name again is the same set: keys add up */
	EXPECT_RC(bfi_writer_set(w, "dup", 3, &b), 0);
	EXPECT_RC(bfi_writer_key(w, b, "one", 3), 0);
	EXPECT_RC(bfi_writer_set(w, "dup", 3, &c), 0);
	EXPECT(c == b);
	EXPECT_RC(bfi_writer_key(w, c, "two", 3), 0);
	/* names that cannot be printed one per field, or are too long, are refused */
	EXPECT_RC(bfi_writer_set(w, "a\tb", 3, &c), BFI_E_INPUT);
	EXPECT_RC(bfi_writer_set(w, "a\nb", 3, &c), BFI_E_INPUT);
	EXPECT_RC(bfi_writer_set(w, "", 0, &c), BFI_E_INPUT);
	char longname[600];
	memset(longname, 'n', sizeof longname);
	EXPECT_RC(bfi_writer_set(w, longname, 512, &c), BFI_E_INPUT);
	EXPECT_RC(bfi_writer_set(w, longname, 511, &c), 0);
	EXPECT_RC(bfi_writer_finish(w, snap, NULL), 0);
	bfi_writer_destroy(&w);
	bfi_snapshot *s;
	EXPECT_RC(bfi_open(snap, 0, &s), 0);
	if (s) {
		uint32_t o;
		EXPECT_RC(bfi_set_find(s, latin1, sizeof latin1, &o), 0);
		EXPECT(holds(s, "x", 1, o));
		EXPECT_RC(bfi_set_find(s, "dup", 3, &o), 0);
		EXPECT(holds(s, "one", 3, o) && holds(s, "two", 3, o));
		struct bfi_info in;
		bfi_info(s, &in);
		EXPECT(in.n_sets == 3);
		bfi_close(&s);
	}
}

static void test_widths(void)
{
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	o.bits = BFI_MAX_BITS + 1;
	bfi_writer *w = NULL;
	EXPECT_RC(bfi_writer_create(&o, &w), BFI_E_INVALID); /* m beyond 2^40 */
	o.bits = 0;
	o.hashes = BFI_MAX_K + 1;
	EXPECT_RC(bfi_writer_create(&o, &w), BFI_E_INVALID); /* k beyond 32 */
	EXPECT(w == NULL);
}

int main(void)
{
	test_run("limits: no sets is refused; one set, and a set without keys, are fine", test_sets);
	test_run("limits: the empty key, a 1 MiB key and keys holding NUL", test_keys);
	test_run("limits: names that are not UTF-8, the same name twice, bad names", test_names);
	test_run("limits: m beyond 2^40 and k beyond 32 are refused", test_widths);
	test_cleanup();
	return test_exit();
}
