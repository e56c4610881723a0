/*
 * test_many_blocks.c - queries on many flat blocks with pre-filters
 * against exact truth, with line and classic pre-filters.
 */
#include <string.h>

#include "test.h"

/* A number from the pair (a, b), the same every run. */
static uint64_t pick(uint64_t a, uint64_t b)
{
	uint64_t st = a * 0x9E3779B97F4A7C15ull + b;
	return test_rand(&st);
}

/*
 * More than four blocks with pre-filters, where a query asks for every
 * block's pre-filter line before testing any, and a single key tests all
 * blocks' lines against one mask: zero false negatives against exact
 * truth, with line and with classic pre-filters, and every block's
 * pre-filter counted in the bytes touched.
 */
enum { MB_SETS = 3000, MB_UNIVERSE = 4000 };
static uint8_t mb_member[MB_SETS][MB_UNIVERSE / 8];

/* Key i of set j (5 to 64 keys, repeated up to 64), noted in mb_member. */
static size_t mb_key(uint32_t j, uint32_t i, char *buf, size_t cap)
{
	uint32_t u = (uint32_t)(pick(j, i % (5 + pick(j, 777) % 60)) % MB_UNIVERSE);
	mb_member[j][u / 8] |= (uint8_t)(1u << (u % 8));
	return (size_t)snprintf(buf, cap, "k%u", u);
}

static int build_many_blocks(const char *path, int classic)
{
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	o.keep_order = 1;
	o.max_block_sets = 512; /* 6 blocks */
	o.prefilter = BFI_PREFILTER_ALWAYS;
	o.classic_prefilters = classic;
	return test_build_sets(&o, path, MB_SETS, 64, mb_key);
}

static void test_many_blocks(void)
{
	for (int classic = 0; classic < 2; classic++) {
		char path[4200];
		snprintf(path, sizeof path, "%s/many-blocks-%d", test_tmpdir(), classic);
		memset(mb_member, 0, sizeof mb_member);
		EXPECT_RC(build_many_blocks(path, classic), 0);
		bfi_snapshot *s;
		bfi_result *r;
		EXPECT_RC(bfi_open(path, 0, &s), 0);
		EXPECT_RC(bfi_result_create(&r), 0);
		if (!s || !r)
			return;
		struct bfi_info in;
		bfi_info(s, &in);
		struct bfi_layout_info lf = test_layout(s, BFI_LAYOUT_FLAT);
		EXPECT(lf.u.flat.blocks > 4);
		EXPECT(lf.u.flat.line_prefilters == !classic);
		bfi_result_count_bytes(r, 1);
		uint64_t fn = 0, fp = 0, truths = 0, short_count = 0;
		for (uint32_t u = 0; u < MB_UNIVERSE; u++) {
			char key[16];
			bfi_expr *e;
			EXPECT_RC(bfi_expr_key(key, (size_t)snprintf(key, sizeof key, "k%u", u), &e), 0);
			EXPECT_RC(bfi_query_expr(s, BFI_LAYOUT_FLAT, e, r), 0);
			uint8_t got[MB_SETS] = {0};
			for (size_t i = 0; i < bfi_result_count(r); i++)
				got[bfi_result_ordinals(r)[i]] = 1;
			for (int j = 0; j < MB_SETS; j++) {
				int want = mb_member[j][u / 8] >> (u % 8) & 1;
				truths += want;
				fn += want && !got[j];
				fp += !want && got[j];
			}
			short_count += bfi_result_touched(r) < 64ull * lf.u.flat.blocks;
			bfi_expr_free(&e);
		}
		/* keys in no set: every block's pre-filter is read, and counted */
		for (uint32_t u = 0; u < 2000; u++) {
			char key[16];
			bfi_expr *e;
			EXPECT_RC(bfi_expr_key(key, (size_t)snprintf(key, sizeof key, "absent%u", u), &e), 0);
			EXPECT_RC(bfi_query_expr(s, BFI_LAYOUT_FLAT, e, r), 0);
			short_count += bfi_result_touched(r) < 64ull * lf.u.flat.blocks;
			bfi_expr_free(&e);
		}
		printf("%s pre-filters, %u blocks: %llu true pairs, %llu false negatives, %llu false "
		       "positives\n",
		       classic ? "classic" : "line", lf.u.flat.blocks, (unsigned long long)truths,
		       (unsigned long long)fn, (unsigned long long)fp);
		EXPECT(truths > 50000);
		EXPECT(fn == 0);
		/* at most the target rate (0.01) over all absent (set, key) pairs */
		EXPECT(fp < ((uint64_t)MB_SETS * MB_UNIVERSE - truths) / 100);
		EXPECT(short_count == 0);
		bfi_result_destroy(&r);
		bfi_close(&s);
	}
}

/* One block (of 700 sets: packed rows, two lines copied out) with no (0), line (1) or classic (2) pre-filter. */

int main(void)
{
	test_run("query: many blocks with pre-filters against exact truth", test_many_blocks);
	return test_exit();
}
