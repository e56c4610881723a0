/*
 * test_toy.c - a layout added as a module on every floor: the test
 * build's toy layout (format/toy.h, reader/toy.c, writer/toy.c and their
 * table rows, nothing else) is written, read, verified, inspected and
 * joined by the same code as every other layout. Its answers are checked
 * against an exact oracle: no false negatives, false positives near the
 * target rate. Runs ./bfi from the source root for inspect and merge.
 */
#include <stdlib.h>
#include <string.h>

#include "test.h"

enum { SETS = 40, PER = 200 };

/* Set s holds keys k<s * 37 + i>: neighbours share keys, so answers hold several sets. */
static size_t toy_key(uint32_t set, uint32_t i, char *buf, size_t cap)
{
	return (size_t)snprintf(buf, cap, "k%u", set * 37 + i);
}

/* Does set s hold key k<x>? */
static int holds(uint32_t s, uint32_t x)
{
	return x >= s * 37 && x < s * 37 + PER;
}

static unsigned toy(void)
{
	return bfi_layout_parse("toy", 3);
}

static void build(const char *path, unsigned layouts)
{
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	o.layouts = layouts;
	o.fpr = 0.01;
	EXPECT_RC(test_build_sets(&o, path, SETS, PER, toy_key), 0);
}

static void test_known(void)
{
	unsigned t = toy();
	EXPECT(t != 0 && !strcmp(bfi_layout_name(t), "toy"));
	EXPECT(bfi_layout_join(t) == BFI_JOIN_KEPT);
	int listed = 0;
	for (unsigned i = 0; bfi_layout_at(i); i++)
		listed += bfi_layout_at(i) == t;
	EXPECT(listed == 1);
}

static void test_answers(void)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/toy", test_tmpdir());
	build(path, BFI_LAYOUT_FLAT | toy());
	bfi_snapshot *s = NULL;
	bfi_result *res = NULL;
	EXPECT_RC(bfi_open(path, 0, &s), 0);
	EXPECT_RC(bfi_result_create(&res), 0);
	if (s == NULL || res == NULL)
		return;
	struct bfi_info in;
	bfi_info(s, &in);
	EXPECT(in.layouts == (BFI_LAYOUT_FLAT | toy()));
	struct bfi_layout_info li = test_layout(s, toy());
	EXPECT(li.n_sets == SETS && li.name && !strcmp(li.name, "toy") && li.hashes == in.hashes);
	/* every key of every set: no false negatives; absent keys: a rate near 1% */
	uint64_t fp = 0, asked = 0;
	for (uint32_t x = 0; x < SETS * 37 + PER + 2000; x++) {
		char key[32];
		int len = snprintf(key, sizeof key, "k%u", x);
		EXPECT_RC(bfi_query_key_layout(s, toy(), key, (size_t)len, res), 0);
		const uint32_t *ords = bfi_result_ordinals(res);
		size_t n = bfi_result_count(res), at = 0;
		for (uint32_t set = 0; set < SETS; set++) {
			int got = at < n && ords[at] == set;
			at += got;
			if (holds(set, x))
				EXPECT(got);
			else {
				fp += got;
				asked++;
			}
		}
		EXPECT(at == n); /* ascending, each once */
	}
	double rate = (double)fp / (double)asked;
	EXPECT(rate < 0.03);
	/* an expression and a threshold query, through the same dispatch as any layout */
	bfi_expr *e = NULL;
	EXPECT_RC(bfi_expr_parse("k40 AND k200", 12, &e, NULL), 0);
	EXPECT_RC(bfi_query_expr(s, toy(), e, res), 0);
	int set1 = 0;
	for (size_t i = 0; i < bfi_result_count(res); i++)
		set1 |= bfi_result_ordinals(res)[i] == 1;
	EXPECT(set1); /* set 1 holds k37 .. k236 */
	bfi_expr_free(&e);
	EXPECT_RC(bfi_expr_words("k40 k41 k42 k9999", 17, &e), 0);
	EXPECT_RC(bfi_query_threshold(s, toy(), e, 0.75, res), 0);
	EXPECT(bfi_result_count(res) >= 1 && bfi_result_scores(res) != NULL);
	bfi_expr_free(&e);
	/* verify reads it; a padding bit past a filter's width is found */
	struct bfi_verify_report rep;
	bfi_result_destroy(&res);
	bfi_close(&s);
	EXPECT_RC(bfi_verify(path, &rep, NULL, NULL), 0);
	char index[4300];
	snprintf(index, sizeof index, "%s/index.bfi", path);
	size_t size;
	uint8_t *img = test_read_file(index, &size);
	uint64_t fb = (li.bits + 63) / 64 * 8;
	EXPECT(img && li.bits % 64 != 0 && li.offset + 64 + fb <= size);
	if (img == NULL || li.bits % 64 == 0)
		return;
	img[li.offset + 64 + fb - 1] |= 0x80; /* the last padding bit of the first filter stored */
	test_reseal_index(img, size);
	EXPECT(test_write_file(index, img, size) == 0);
	free(img);
	EXPECT_RC(bfi_verify(path, &rep, NULL, NULL), BFI_E_BAD_LAYOUT);
	EXPECT(rep.offset == li.offset + 64 + fb - 1);
}

static void test_toy_only(void)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/toyonly", test_tmpdir());
	build(path, toy());
	bfi_snapshot *s = NULL;
	EXPECT_RC(bfi_open(path, 0, &s), 0);
	if (s == NULL)
		return;
	/* the catalog's fill ratios come from the toy's own filters */
	struct bfi_set_stats st;
	EXPECT_RC(bfi_set_stats(s, 3, &st), 0);
	EXPECT(st.bits_set > 0 && st.bits_set <= (uint64_t)PER * test_layout(s, toy()).hashes);
	bfi_close(&s);
}

/*
 * Its own parameter: toy.scale, chosen at build, written in its
 * descriptor, read back by bfi_layout_params and shown by bfi inspect
 * (text, JSON, HTML); its filters that many times as wide; a name or a
 * value it does not take refused, naming what it takes.
 */
static void test_param(void)
{
	char one[4200], three[4200], cmd[13000], err[512];
	const char *d = test_tmpdir();
	snprintf(one, sizeof one, "%s/toyscale1", d);
	snprintf(three, sizeof three, "%s/toyscale3", d);
	build(one, BFI_LAYOUT_FLAT | toy());
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	o.layouts = BFI_LAYOUT_FLAT | toy();
	o.fpr = 0.01;
	o.layout_options = "toy.scale=3";
	EXPECT_RC(test_build_sets(&o, three, SETS, PER, toy_key), 0);
	bfi_snapshot *a = NULL, *b = NULL;
	EXPECT_RC(bfi_open(one, 0, &a), 0);
	EXPECT_RC(bfi_open(three, 0, &b), 0);
	if (a == NULL || b == NULL)
		return;
	struct bfi_layout_param p[4];
	EXPECT(bfi_layout_params(a, toy(), p, 4) == 1 && !strcmp(p[0].name, "scale") && p[0].value == 1);
	EXPECT(bfi_layout_params(b, toy(), p, 4) == 1 && !strcmp(p[0].name, "scale") && p[0].value == 3);
	EXPECT(bfi_layout_params(b, BFI_LAYOUT_FLAT, p, 4) == 0);
	EXPECT(bfi_layout_params(b, BFI_LAYOUT_RAMBO, p, 4) == BFI_E_NO_LAYOUT);
	EXPECT(test_layout(b, toy()).bits == 3 * test_layout(a, toy()).bits);
	/* every key still finds its sets at three times the width */
	bfi_result *res = NULL;
	EXPECT_RC(bfi_result_create(&res), 0);
	for (uint32_t i = 0; res && i < PER; i += 7) {
		char key[32];
		int len = snprintf(key, sizeof key, "k%u", i);
		EXPECT_RC(bfi_query_key_layout(b, toy(), key, (size_t)len, res), 0);
		EXPECT(bfi_result_count(res) >= 1);
	}
	bfi_result_destroy(&res);
	bfi_close(&a);
	bfi_close(&b);
	snprintf(cmd, sizeof cmd, "./bfi inspect '%s' | grep -q '^toy  *scale=3$' && "
	                          "./bfi inspect --json '%s' | grep -q '\"layout_params\": {\"toy\": {\"scale\": 3}}' && "
	                          "./bfi inspect --html '%s/page.html' '%s' && grep -q 'toy (scale=3)' '%s/page.html' && "
	                          "printf 's1\\tk1\\ns2\\tk2\\n' >'%s/in.tsv' && "
	                          "./bfi build -q --layout flat,toy --layout-option toy.scale=2 -o '%s/cli2' --tsv '%s/in.tsv' && "
	                          "./bfi inspect '%s/cli2' | grep -q '^toy  *scale=2$'",
	         three, three, d, three, d, d, d, d, d);
	EXPECT(system(cmd) == 0);
	/* refused, naming what the toy takes */
	EXPECT(bfi_layout_options_check("toy.size=2", 0, err, sizeof err) == BFI_E_INVALID &&
	       strstr(err, "toy.size=2") && strstr(err, "scale"));
	EXPECT(bfi_layout_options_check("toy.scale=17", 0, err, sizeof err) == BFI_E_INVALID &&
	       strstr(err, "1 to 16"));
	EXPECT(bfi_layout_options_check("toy.scale=3", BFI_LAYOUT_FLAT, err, sizeof err) ==
	           BFI_E_INVALID && strstr(err, "no toy layout"));
	EXPECT(bfi_layout_options_check("toy.scale=3,toy.scale=4", 0, err, sizeof err) == 0);
	/* a set's filter in place, as the layouts that keep it whole (toy, plain) hold it */
	char pl[4200];
	snprintf(pl, sizeof pl, "%s/plainfilters", d);
	build(pl, BFI_LAYOUT_PLAIN | toy());
	bfi_snapshot *ps = NULL;
	EXPECT_RC(bfi_open(pl, 0, &ps), 0);
	for (unsigned lay = 0; ps && lay < 2; lay++) {
		unsigned f = lay ? toy() : BFI_LAYOUT_PLAIN;
		uint32_t k = test_layout(ps, f).hashes, set = 5;
		const uint8_t *bits;
		uint64_t m;
		EXPECT_RC(bfi_layout_set_filter(ps, f, set, &bits, &m), 0);
		for (uint32_t i = 0; i < PER; i++) {
			char key[32];
			bfi_keyhash h = bfi_hash_key(key, toy_key(set, i, key, sizeof key));
			for (uint32_t x = 0; x < k; x++) {
				uint64_t pos = bfi_hash_pos(h, x, m);
				EXPECT(bits[pos / 8] >> (pos % 8) & 1);
			}
		}
		EXPECT(bfi_layout_set_filter(ps, f, SETS, &bits, &m) == BFI_E_NOT_FOUND);
	}
	const uint8_t *nb;
	uint64_t nm;
	EXPECT(ps && bfi_layout_set_filter(ps, BFI_LAYOUT_FLAT, 0, &nb, &nm) == BFI_E_NO_LAYOUT);
	bfi_close(&ps);
	o.layout_options = "toy.scale=0";
	bfi_writer *w = NULL;
	EXPECT(bfi_writer_create(&o, &w) == BFI_E_INVALID && w == NULL);
}

static void test_tools(void)
{
	char path[4200], cmd[13000];
	const char *d = test_tmpdir();
	snprintf(path, sizeof path, "%s/toytools", d);
	build(path, BFI_LAYOUT_FLAT | toy());
	/* inspect names it and its section */
	snprintf(cmd, sizeof cmd, "./bfi inspect '%s' | grep -q '^layouts .* toy' && "
	                          "./bfi inspect --json '%s' | grep -q '\"toy\"' && "
	                          "./bfi verify '%s' >/dev/null", path, path, path);
	EXPECT(system(cmd) == 0);
	/* query --layout toy answers as the flat layout for keys every set holds or none does */
	snprintf(cmd, sizeof cmd, "printf 'k40\\nk500\\nk1700\\n' | ./bfi query --keys --layout toy '%s' >'%s/t.out' && "
	                          "printf 'k40\\nk500\\nk1700\\n' | ./bfi query --keys --layout flat '%s' >'%s/f.out' && "
	                          "grep -c s '%s/t.out' >/dev/null",
	         path, d, path, d, d);
	EXPECT(system(cmd) == 0);
	/* a merge keeps it, filter for filter, and so does a compaction that removes a set */
	snprintf(cmd, sizeof cmd, "./bfi merge -q -o '%s/merged' '%s' 2>'%s/merge.err' && "
	                          "! grep -q 'toy' '%s/merge.err' && "
	                          "./bfi inspect '%s/merged' | grep -q '^layouts .* toy' && "
	                          "printf 'k40\\nk500\\nk1700\\n' | ./bfi query --keys --layout toy '%s/merged' | cmp -s - '%s/t.out'",
	         d, path, d, d, d, d, d);
	EXPECT(system(cmd) == 0);
	/* kept only while every input's toy filters are of one width: else a note says why */
	snprintf(cmd, sizeof cmd,
	         "printf 's1\\tk1\\ns2\\tk2\\n' >'%s/a.tsv' && printf 't1\\tk1\\nt2\\tk3\\n' >'%s/b.tsv' && "
	         "./bfi build -q --layout flat,toy -o '%s/a' --tsv '%s/a.tsv' && "
	         "./bfi build -q --layout flat,toy -o '%s/b1' --tsv '%s/b.tsv' && "
	         "./bfi build -q --layout flat,toy --layout-option toy.scale=2 -o '%s/b2' --tsv '%s/b.tsv' && "
	         "./bfi merge -q -o '%s/ab1' '%s/a' '%s/b1' 2>'%s/ab1.err' && ! grep -q toy '%s/ab1.err' && "
	         "printf 'k1\\nk3\\n' | ./bfi query --keys --layout toy '%s/ab1' | grep -c . | grep -qx 2 && "
	         "printf 'k1\\n' | ./bfi query --json --keys --layout toy '%s/ab1' | grep -q 't1' && "
	         "./bfi merge -o '%s/ab2' '%s/a' '%s/b2' >/dev/null 2>'%s/ab2.err' && "
	         "grep -q 'note: the toy layout is not kept: .*b2 holds toy filters of .* at scale 2' '%s/ab2.err' && "
	         "! ./bfi inspect '%s/ab2' | grep -q '^layouts .* toy' && "
	         /* a collection: two segments at scale 2, one set removed, compacted: the toy kept */
	         "./bfi append -q '%s/coll' --layout flat,toy --layout-option toy.scale=2 --tsv '%s/a.tsv' && "
	         "./bfi append -q '%s/coll' --layout flat,toy --layout-option toy.scale=2 --tsv '%s/b.tsv' && "
	         "./bfi remove '%s/coll' s2 && ./bfi compact -q --full '%s/coll' 2>'%s/c.err' && "
	         "! grep -q toy '%s/c.err' && ./bfi inspect '%s/coll' | grep -q '^toy  *scale=2$' && "
	         "printf 'k1\\nk2\\n' | ./bfi query --keys --layout toy '%s/coll' >'%s/c.out' && "
	         "grep -q s1 '%s/c.out' && ! grep -q s2 '%s/c.out'",
	         d, d, d, d, d, d, d, d, d, d, d, d, d, d, d, d, d, d, d, d, d, d, d, d, d, d, d, d, d, d, d, d, d, d);
	EXPECT(system(cmd) == 0);
}

int main(void)
{
	test_run("toy layout: one row in each floor's table, listed and parsed by the library", test_known);
	test_run("toy layout: written and read, no false negatives, expressions and thresholds, verified", test_answers);
	test_run("toy layout alone: the catalog's fill from its filters", test_toy_only);
	test_run("toy layout: inspected, queried by name, kept by a merge of one width, noted when not", test_tools);
	test_run("toy layout: its own parameter chosen at build, in its descriptor, shown by inspect",
	         test_param);
	return test_exit();
}
