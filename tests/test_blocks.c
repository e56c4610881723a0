/*
 * test_blocks.c - the writer's flat blocks: sets of one width cut into
 * blocks with pre-filters when that pays queries, mixed sizes kept near
 * their own filters' bits, and line pre-filters at their theoretical rate.
 */
#include <math.h>
#include <string.h>
#include <sys/stat.h>

#include "../writer/layout.h"
#include "test.h"

static char *path_in(const char *name)
{
	static char buf[8][4300];
	static int i;
	char *p = buf[i++ % 8];
	snprintf(p, 4300, "%s/%s", test_tmpdir(), name);
	return p;
}

/*
 * 20,480 sets of 5 keys of their own, all of one width: plan_blocks alone
 * keeps them in one block, where a key held by one set reads two rows of
 * 2,560 bytes. The planner's query model cuts it into blocks that each get
 * a pre-filter; with pre-filters off, or a cap on the block size, it does
 * not. Every key still finds its set.
 */
enum { CUT_SETS = 20480, CUT_KEYS = 5 };

static size_t cut_key(uint32_t set, uint32_t i, char *buf, size_t cap)
{
	return (size_t)snprintf(buf, cap, "k%u_%u", set, i);
}

static int build_cut(const char *out, int prefilter, uint32_t max_block_sets)
{
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	o.keep_order = 1;
	o.prefilter = prefilter;
	o.max_block_sets = max_block_sets;
	return test_build_sets(&o, out, CUT_SETS, CUT_KEYS, cut_key);
}


static size_t space_key(uint32_t set, uint32_t i, char *buf, size_t cap)
{
	return (size_t)snprintf(buf, cap, "s%u-key%u", set, i);
}

/*
 * Rows sized to N (spec/format.md, "Flat section"): at N = 1, 65 and 512
 * index.bfi is at most 1.10 times the bits of its filters (every set's
 * block width, and the pre-filters) plus 64 KiB, where rows padded to 512
 * sets made N = 1 512 times its filter. Every key is found.
 */
/*
 * Sets of mixed sizes, as 4 viruses beside 16 bacteria: 4 sets of 500
 * keys, 8 of 150,000 and 8 of 400,000. Blocks may end between any two of
 * 20 sets. By default the 4 small sets get a block of their own, whose
 * lines a cache keeps, while the two large widths are not cut apart (a
 * block of its own for the 150,000s would save less than half the index):
 * the block of the 400,000s holds some of them. At a block cost of 64 KiB
 * each width gets its block and the index is within 1.10x of every set's
 * own filter.
 */
static int build_mixed(const char *out, uint64_t block_cost)
{
	static const uint32_t sizes[] = {500, 150000, 400000};
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	o.block_cost = block_cost;
	bfi_writer *w;
	int rc = bfi_writer_create(&o, &w);
	char key[32];
	for (uint32_t j = 0; j < 20 && rc == 0; j++) {
		uint32_t ord, n = sizes[j < 4 ? 0 : j < 12 ? 1 : 2];
		int len = snprintf(key, sizeof key, "set%02u", j);
		rc = bfi_writer_set(w, key, (size_t)len, &ord);
		for (uint32_t i = 0; i < n && rc == 0; i++) {
			len = snprintf(key, sizeof key, "%u/%u", j, i);
			rc = bfi_writer_key(w, ord, key, (size_t)len);
		}
	}
	if (rc == 0)
		rc = bfi_writer_finish(w, out, NULL);
	bfi_writer_destroy(&w);
	return rc;
}

static void test_mixed_sizes(void)
{
	static const uint32_t sizes[] = {500, 150000, 400000};
	uint64_t own = 0; /* bytes of each set's own filter */
	for (uint32_t j = 0; j < 20; j++) {
		uint64_t m;
		uint32_t k;
		EXPECT(bfi_filter_size(sizes[j < 4 ? 0 : j < 12 ? 1 : 2], 0.01, &m, &k) >= 0);
		own += (m + 7) / 8;
	}
	for (int x = 0; x < 2; x++) {
		char out[4300], ipath[4400];
		snprintf(out, sizeof out, "%s/mixed-%d", test_tmpdir(), x);
		EXPECT_RC(build_mixed(out, x ? 1u << 16 : 0), 0);
		bfi_snapshot *s;
		EXPECT_RC(bfi_open(out, 0, &s), 0);
		if (s == NULL)
			return;
		struct bfi_layout_info lf = test_layout(s, BFI_LAYOUT_FLAT);
		struct bfi_block_info b0, last;
		EXPECT_RC(bfi_block(s, 0, &b0), 0);
		EXPECT_RC(bfi_block(s, lf.u.flat.blocks - 1, &last), 0);
		snprintf(ipath, sizeof ipath, "%s/index.bfi", out);
		struct stat st;
		EXPECT(stat(ipath, &st) == 0);
		printf("mixed sizes, block cost %s: %u blocks, index.bfi %lld bytes, %.3fx the sets' own "
		       "filters\n", x ? "64 KiB" : "by default", lf.u.flat.blocks, (long long)st.st_size,
		       (double)st.st_size / (double)own);
		EXPECT(b0.n_sets == 4); /* the small sets apart, in every case */
		if (x)
			EXPECT(lf.u.flat.blocks == 3 && last.first_set == 12 &&
			       (double)st.st_size <= 1.10 * (double)own);
		else
			EXPECT(last.first_set < 12 && last.first_set + last.n_sets == 20);
		/* every key of every set still finds it */
		bfi_result *r;
		EXPECT_RC(bfi_result_create(&r), 0);
		char key[32];
		for (uint32_t j = 0; r && j < 20; j++)
			for (uint32_t i = 0; i < 50; i++) {
				int len = snprintf(key, sizeof key, "%u/%u", j, i * 7);
				EXPECT_RC(bfi_query_key(s, key, (size_t)len, r), 0);
				const uint32_t *ords = bfi_result_ordinals(r);
				int found = 0;
				for (size_t q = 0; q < bfi_result_count(r); q++) {
					const char *name;
					size_t nl;
					EXPECT_RC(bfi_set_name(s, ords[q], &name, &nl), 0);
					char want[16];
					found |= nl == (size_t)snprintf(want, sizeof want, "set%02u", j) &&
					         memcmp(name, want, nl) == 0;
				}
				EXPECT(found);
			}
		bfi_result_destroy(&r);
		bfi_close(&s);
	}
}

static void test_space_bound(void)
{
	static const uint32_t ns[] = {1, 65, 512};
	for (size_t x = 0; x < sizeof ns / sizeof *ns; x++) {
		uint32_t n = ns[x], per = n == 512 ? 2000 : 20000;
		char name[32];
		snprintf(name, sizeof name, "space-%u", n);
		const char *out = path_in(name);
		EXPECT_RC(test_build_sets(NULL, out, n, per, space_key), 0);
		bfi_snapshot *s = NULL;
		EXPECT_RC(bfi_open(out, 0, &s), 0);
		if (s == NULL)
			return;
		struct bfi_info in;
		bfi_info(s, &in);
		struct bfi_layout_info lf = test_layout(s, BFI_LAYOUT_FLAT);
		uint64_t bits = 0;
		for (uint32_t b = 0; b < lf.u.flat.blocks; b++) {
			struct bfi_block_info bi;
			EXPECT_RC(bfi_block(s, b, &bi), 0);
			bits += bi.bits * bi.n_sets + bi.prefilter_bits;
		}
		char idx[4400];
		snprintf(idx, sizeof idx, "%s/index.bfi", out);
		struct stat st;
		EXPECT(stat(idx, &st) == 0);
		double ratio = ((double)st.st_size - 65536) / ((double)bits / 8);
		printf("N = %u: index.bfi %lld bytes, filters %llu bits: (size - 64 KiB) / filters %.3f\n",
		       n, (long long)st.st_size, (unsigned long long)bits, ratio);
		EXPECT((double)st.st_size <= 1.10 * (double)bits / 8 + 65536);
		/* no key missed, in the first set and the last */
		bfi_result *r = NULL;
		EXPECT_RC(bfi_result_create(&r), 0);
		uint64_t missed = 0;
		for (uint32_t j = 0; r && j < n; j += n > 1 ? n - 1 : 1)
			for (uint32_t i = 0; i < per; i++) {
				char key[64];
				uint32_t ord, hit = 0;
				snprintf(name, sizeof name, "s%u", j);
				EXPECT_RC(bfi_set_find(s, name, strlen(name), &ord), 0);
				EXPECT_RC(bfi_query_key(s, key, space_key(j, i, key, sizeof key), r), 0);
				for (size_t a = 0; a < bfi_result_count(r); a++)
					hit |= bfi_result_ordinals(r)[a] == ord;
				missed += !hit;
			}
		EXPECT(missed == 0);
		bfi_result_destroy(&r);
		bfi_close(&s);
	}
}

static double line_fpr(double n, double lines, uint32_t k)
{
	double lambda = n / lines, term = exp(-lambda), sum = 0;
	for (int x = 0; x < (int)(lambda * 4 + 200); x++) {
		sum += term * pow(1 - pow(1 - 1.0 / 512, (double)k * x), k);
		term *= lambda / (x + 1);
	}
	return sum;
}

static void test_line_prefilter_rate(void)
{
	const char *out = path_in("cutrate");
	EXPECT_RC(build_cut(out, BFI_PREFILTER_AUTO, CUT_SETS), 0);
	bfi_snapshot *s = NULL;
	EXPECT_RC(bfi_open(out, 0, &s), 0);
	if (s == NULL)
		return;
	struct bfi_info in;
	struct bfi_block_info bi;
	bfi_info(s, &in);
	struct bfi_layout_info lf = test_layout(s, BFI_LAYOUT_FLAT);
	EXPECT(lf.u.flat.blocks == 1 && lf.u.flat.line_prefilters);
	EXPECT_RC(bfi_block(s, 0, &bi), 0);
	EXPECT(bi.prefilter_bits > 0 && bi.prefilter_bits % 512 == 0);
	bfi_result *res = NULL;
	EXPECT_RC(bfi_result_create(&res), 0);
	const uint32_t tries = 200000;
	uint32_t passed = 0, odd = 0;
	char key[32];
	for (uint32_t q = 0; q < tries && res; q++) {
		bfi_result_count_bytes(res, 1);
		EXPECT_RC(bfi_query_key(s, key, (size_t)snprintf(key, sizeof key, "absent%u", q), res), 0);
		uint64_t t = bfi_result_touched(res);
		passed += t > 64;
		odd += t < 64;
	}
	double p = line_fpr((double)CUT_SETS * CUT_KEYS, (double)bi.prefilter_bits / 512, in.hashes);
	double want = p * tries, sd = sqrt(want * (1 - p));
	printf("line pre-filter: %u of %u absent keys passed, theory %.1f (rate %.5f)\n", passed,
	       tries, want, p);
	EXPECT(odd == 0);
	EXPECT(fabs(passed - want) <= 4 * sd);
	bfi_result_destroy(&res);
	bfi_close(&s);
}

static void test_query_cuts(void)
{
	const struct {
		int prefilter;
		uint32_t cap;
		int want_cut;
	} cases[] = {{BFI_PREFILTER_AUTO, 0, 1}, {BFI_PREFILTER_NEVER, 0, 0}, {BFI_PREFILTER_AUTO, 20480, 0}};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		const char *out = path_in(c == 0 ? "cut0" : c == 1 ? "cut1" : "cut2");
		EXPECT_RC(build_cut(out, cases[c].prefilter, cases[c].cap), 0);
		bfi_snapshot *s = NULL;
		EXPECT_RC(bfi_open(out, 0, &s), 0);
		if (s == NULL)
			continue;
		struct bfi_info in;
		bfi_info(s, &in);
		struct bfi_layout_info lf = test_layout(s, BFI_LAYOUT_FLAT);
		if (cases[c].want_cut) {
			EXPECT(lf.u.flat.blocks > 1 && lf.u.flat.blocks <= 32);
			uint64_t next = 0;
			for (uint32_t b = 0; b < lf.u.flat.blocks; b++) {
				struct bfi_block_info bi;
				EXPECT_RC(bfi_block(s, b, &bi), 0);
				EXPECT(bi.first_set == next && bi.first_set % 512 == 0);
				EXPECT(bi.prefilter_bits > 0);
				next = bi.first_set + bi.n_sets;
			}
			EXPECT(next == CUT_SETS);
		} else {
			EXPECT(lf.u.flat.blocks == 1);
		}
		bfi_result *res = NULL;
		EXPECT_RC(bfi_result_create(&res), 0);
		uint64_t fn = 0;
		char key[32];
		for (uint32_t j = 0; j < CUT_SETS && res; j += 7) {
			uint32_t ord;
			char name[32];
			EXPECT_RC(bfi_set_find(s, name, (size_t)snprintf(name, sizeof name, "s%u", j), &ord), 0);
			int found = 0;
			if (bfi_query_key(s, key, (size_t)snprintf(key, sizeof key, "k%u_%u", j, j % CUT_KEYS), res) == 0)
				for (size_t i = 0; i < bfi_result_count(res); i++)
					found |= bfi_result_ordinals(res)[i] == ord;
			fn += !found;
		}
		EXPECT(fn == 0);
		bfi_result_destroy(&res);
		bfi_close(&s);
	}
}

int main(void)
{
	test_run("writer: sets of one width cut into blocks that pay queries", test_query_cuts);
	test_run("writer: mixed sizes: small sets in a block of their own; at 64 KiB a block, 1.10x "
	         "their own filters",
	         test_mixed_sizes);
	test_run("writer: index.bfi within 1.10x its filters' bits + 64 KiB at N = 1, 65, 512",
	         test_space_bound);
	test_run("writer: line pre-filters reject absent keys at their theoretical rate",
	         test_line_prefilter_rate);
	return test_exit();
}
