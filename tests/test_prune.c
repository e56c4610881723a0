/*
 * test_prune.c - threshold queries that prune (a set dropped once it
 * cannot reach the threshold; on the tree, a subtree whose node holds too
 * few terms) answer exactly what counting every term on every set
 * answers: the same sets, ranked the same, with the same scores, on every
 * layout and shape of flat block, at thresholds from 0.3 to 1; on a tree,
 * by its walk, by its leaves' rows read whole, and by the default's choice
 * between them. And no set holding enough of the terms is missed, by the
 * sets' true contents.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "test.h"

#define SETS 1300    /* over 512: the default cuts blocks of 512 sets */
#define OWN 40       /* each set's own keys */
#define FAMILY 10    /* sets j and j + FAMILY * x share keys: many candidates a term */
#define SHARED 30
#define WIDE_SETS 4200 /* rows over 512 bytes: the long-row path */

static char dir[4096];

/* Set j's key i: its own, or its family's (sets of one residue mod FAMILY). */
static size_t key_of(uint32_t j, uint32_t i, char *buf, size_t cap)
{
	if (i < OWN)
		return (size_t)snprintf(buf, cap, "own-%u-%u", j, i);
	return (size_t)snprintf(buf, cap, "fam-%u-%u", j % FAMILY, i - OWN);
}

static size_t wide_key(uint32_t j, uint32_t i, char *buf, size_t cap)
{
	return (size_t)snprintf(buf, cap, "w-%u-%u", j, i);
}

/* Is key "own-j-i" / "fam-f-i" (as made by key_of) in set s? */
static int holds(uint32_t s, const char *key)
{
	unsigned a, b;
	if (sscanf(key, "own-%u-%u", &a, &b) == 2)
		return a == s && b < OWN;
	if (sscanf(key, "fam-%u-%u", &a, &b) == 2)
		return a == s % FAMILY && b < SHARED;
	if (sscanf(key, "w-%u-%u", &a, &b) == 2)
		return a == s;
	return 0;
}

struct snap {
	const char *name;
	unsigned layout;
	uint32_t sets;
	int wide;
};

/* The same sets, in the same order, with the same scores. */
static int same_answers(const bfi_result *a, const bfi_result *b)
{
	size_t n = bfi_result_count(a);
	return n == bfi_result_count(b) &&
	       (n == 0 || (memcmp(bfi_result_ordinals(a), bfi_result_ordinals(b), n * sizeof(uint32_t)) == 0 &&
	                   memcmp(bfi_result_scores(a), bfi_result_scores(b), n * sizeof(uint32_t)) == 0));
}

/* Compare pruned and unpruned answers of random term lists on snapshot path. */
static void compare(const char *path, const struct snap *sp)
{
	bfi_snapshot *s = NULL;
	EXPECT_RC(bfi_open(path, 0, &s), 0);
	if (s == NULL)
		return;
	bfi_result *a = NULL, *b = NULL;
	EXPECT_RC(bfi_result_create(&a), 0);
	EXPECT_RC(bfi_result_create(&b), 0);
	uint64_t seed = 31 + sp->sets + sp->layout;
	static const double thetas[] = {0.3, 0.5, 0.7, 0.8, 0.9, 1.0};
	char keybuf[80][48];
	const void *kp[80];
	size_t lens[80];
	unsigned answered = 0, missed = 0;
	for (int q = 0; q < 60; q++) {
		uint32_t target = (uint32_t)(test_rand(&seed) % sp->sets);
		size_t n = 20 + test_rand(&seed) % 60;
		for (size_t i = 0; i < n; i++) {
			uint64_t r = test_rand(&seed) % 10;
			uint32_t x = (uint32_t)(test_rand(&seed) % 1000);
			if (sp->wide)
				snprintf(keybuf[i], sizeof keybuf[i], "w-%u-%u", r < 8 ? target : x % sp->sets,
				         x % 8);
			else if (r < 5) /* the target's own */
				snprintf(keybuf[i], sizeof keybuf[i], "own-%u-%u", target, x % OWN);
			else if (r < 8) /* its family's */
				snprintf(keybuf[i], sizeof keybuf[i], "fam-%u-%u", target % FAMILY, x % SHARED);
			else if (r < 9) /* another set's */
				snprintf(keybuf[i], sizeof keybuf[i], "own-%u-%u", x % sp->sets, x % OWN);
			else /* in no set */
				snprintf(keybuf[i], sizeof keybuf[i], "absent-%u", x);
			kp[i] = keybuf[i];
			lens[i] = strlen(keybuf[i]);
		}
		bfi_expr *e = NULL;
		EXPECT_RC(bfi_expr_terms(kp, lens, n, &e), 0);
		if (e == NULL)
			continue;
		for (size_t t = 0; t < sizeof thetas / sizeof *thetas; t++) {
			bfi__use_pruning(BFI_PRUNE_OFF);
			EXPECT_RC(bfi_query_threshold(s, sp->layout, e, thetas[t], a), 0);
			/* a tree's walk, its leaves read whole, and the default's choice between them */
			if (sp->layout == BFI_LAYOUT_TREE) {
				bfi__use_pruning(BFI_PRUNE_WALK);
				EXPECT_RC(bfi_query_threshold(s, sp->layout, e, thetas[t], b), 0);
				EXPECT(same_answers(a, b));
				bfi__use_pruning(BFI_PRUNE_LEAVES);
				EXPECT_RC(bfi_query_threshold(s, sp->layout, e, thetas[t], b), 0);
				EXPECT(same_answers(a, b));
			}
			bfi__use_pruning(BFI_PRUNE_AUTO);
			EXPECT_RC(bfi_query_threshold(s, sp->layout, e, thetas[t], b), 0);
			size_t na = bfi_result_count(a), nb = bfi_result_count(b);
			EXPECT(na == nb);
			if (na != nb)
				continue;
			EXPECT(na == 0 || memcmp(bfi_result_ordinals(a), bfi_result_ordinals(b),
			                         na * sizeof(uint32_t)) == 0);
			EXPECT(na == 0 || memcmp(bfi_result_scores(a), bfi_result_scores(b),
			                         na * sizeof(uint32_t)) == 0);
			answered += na > 0;
			/* the target, by its true contents: in the answer with at least its true score */
			uint32_t terms = 0, truth = 0;
			for (size_t i = 0; i < n; i++) {
				int seen = 0;
				for (size_t y = 0; y < i && !seen; y++)
					seen = strcmp(keybuf[y], keybuf[i]) == 0;
				if (!seen) {
					terms++;
					truth += (uint32_t)holds(target, keybuf[i]);
				}
			}
			if ((double)truth >= thetas[t] * terms) {
				const char *nm = NULL;
				size_t nl = 0;
				char want[32];
				snprintf(want, sizeof want, "s%u", target);
				int found = 0;
				for (size_t x = 0; x < nb && !found; x++)
					found = bfi_set_name(s, bfi_result_ordinals(b)[x], &nm, &nl) == 0 &&
					        nl == strlen(want) && memcmp(nm, want, nl) == 0 &&
					        bfi_result_scores(b)[x] >= truth;
				missed += !found;
			}
		}
		bfi_expr_free(&e);
	}
	bfi__use_pruning(-1);
	printf("prune %s: %u of %u answers not empty, %u targets missed\n", sp->name, answered,
	       60u * 6u, missed);
	EXPECT(missed == 0);
	EXPECT(answered > 60); /* the lists reach their targets: the comparison is not of empties */
	bfi_result_destroy(&a);
	bfi_result_destroy(&b);
	bfi_close(&s);
}

static void run(const struct snap *sp, struct bfi_build_options *o)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/%s", dir, sp->name);
	EXPECT_RC(test_build_sets(o, path, sp->sets, sp->wide ? 8 : OWN + SHARED,
	                          sp->wide ? wide_key : key_of),
	          0);
	compare(path, sp);
}

static void test_flat_default(void)
{
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	o.keep_order = 1;
	struct snap sp = {"flat", BFI_LAYOUT_FLAT, SETS, 0};
	run(&sp, &o);
	/* the default cut the block of packed rows into blocks of 512 sets, and one of the rest */
	char path[4200];
	snprintf(path, sizeof path, "%s/flat", dir);
	bfi_snapshot *s = NULL;
	EXPECT_RC(bfi_open(path, 0, &s), 0);
	struct bfi_block_info bi;
	EXPECT(s && test_layout(s, BFI_LAYOUT_FLAT).u.flat.blocks == 3);
	EXPECT(s && bfi_block(s, 0, &bi) == 0 && bi.n_sets == 512 && bi.row_bits == 512);
	EXPECT(s && bfi_block(s, 2, &bi) == 0 && bi.n_sets == SETS - 1024);
	bfi_close(&s);
}

static void test_flat_shapes(void)
{
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	o.keep_order = 1;
	o.max_block_sets = 4608; /* one block of packed rows */
	struct snap one = {"flat-packed", BFI_LAYOUT_FLAT, SETS, 0};
	run(&one, &o);
	bfi_build_options_init(&o);
	o.keep_order = 1;
	o.max_block_sets = 256;
	o.prefilter = BFI_PREFILTER_ALWAYS; /* terms the pre-filters rule out */
	struct snap pre = {"flat-pre", BFI_LAYOUT_FLAT, SETS, 0};
	run(&pre, &o);
	bfi_build_options_init(&o);
	o.keep_order = 1;
	o.max_block_sets = 4608; /* rows over 512 bytes */
	struct snap wide = {"flat-long", BFI_LAYOUT_FLAT, WIDE_SETS, 1};
	run(&wide, &o);
}

static void test_other_layouts(void)
{
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	o.keep_order = 1;
	o.layouts = BFI_BUILD_PLAIN | BFI_BUILD_RAMBO | BFI_BUILD_TREE;
	o.fanout = 8;
	o.all_levels = 1; /* four levels, each sized for its unions */
	struct snap sp = {"others", BFI_LAYOUT_PLAIN, SETS, 0};
	run(&sp, &o);
	sp.layout = BFI_LAYOUT_RAMBO;
	char path[4200];
	snprintf(path, sizeof path, "%s/others", dir);
	compare(path, &sp);
	sp.layout = BFI_LAYOUT_TREE;
	compare(path, &sp);
	bfi_snapshot *s = NULL;
	EXPECT_RC(bfi_open(path, 0, &s), 0);
	EXPECT(s && test_layout(s, BFI_LAYOUT_TREE).u.tree.levels == 4);
	bfi_close(&s);
}

static void test_tree_shapes(void)
{
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	o.keep_order = 1;
	o.layouts = BFI_BUILD_TREE;
	o.bits = 2048; /* every level one width: a child's bits are its parent's */
	o.fanout = 4;
	o.all_levels = 1;
	o.prefilter = BFI_PREFILTER_ALWAYS;
	struct snap sp = {"tree-bits", BFI_LAYOUT_TREE, SETS, 0};
	run(&sp, &o);
	bfi_build_options_init(&o);
	o.keep_order = 1;
	o.layouts = BFI_BUILD_TREE;
	o.bloofi_incremental = 1; /* explicit child groups */
	o.bits = 4096;
	struct snap ex = {"tree-explicit", BFI_LAYOUT_TREE, 300, 0};
	run(&ex, &o);
	bfi_build_options_init(&o);
	o.keep_order = 1;
	o.layouts = BFI_BUILD_TREE; /* the writer's own levels */
	struct snap def = {"tree", BFI_LAYOUT_TREE, SETS, 0};
	run(&def, &o);
	/* a top level of several words of nodes (walked term after term), leaves below */
	struct snap wide = {"tree-wide", BFI_LAYOUT_TREE, 5000, 0};
	run(&wide, &o);
	char path[4200];
	snprintf(path, sizeof path, "%s/tree-wide", dir);
	bfi_snapshot *s = NULL;
	EXPECT_RC(bfi_open(path, 0, &s), 0);
	struct bfi_layout_info lt = s ? test_layout(s, BFI_LAYOUT_TREE) : (struct bfi_layout_info){0};
	uint64_t nodes = 0, m = 0;
	EXPECT(s && bfi_tree_level(s, lt.u.tree.levels - 1, &nodes, &m, NULL, NULL) == 0);
	printf("tree-wide: %u levels, %llu nodes at the top\n", lt.u.tree.levels, (unsigned long long)nodes);
	EXPECT(lt.u.tree.levels >= 2 && nodes > 64);
	bfi_close(&s);
}

/*
 * Strains with a mobile element: GROUPS groups of PER sets, each set its
 * group's core and keys of its own; every third set (across all groups)
 * also holds the element's keys. A group sits under one or two nodes, so
 * a read of a core descends to one node's leaves; a read of the element
 * leaves every top node standing, and the default reads the leaves' rows
 * whole. Both ways, and the walk and counting every term, give the same
 * answers, and every carrier is found.
 */
enum { GROUPS = 100, PER = 30, CORE = 40, MINE = 20, MOBILE = 40 };

static size_t strain_key(uint32_t j, uint32_t i, char *buf, size_t cap)
{
	if (i < CORE)
		return (size_t)snprintf(buf, cap, "core-%u-%u", j / PER, i);
	if (i < CORE + MINE || j % 3)
		return (size_t)snprintf(buf, cap, "mine-%u-%u", j, i);
	return (size_t)snprintf(buf, cap, "mobile-%u", i - CORE - MINE);
}

static void strain_query(bfi_snapshot *s, const char *what, uint32_t n, uint64_t *seed, bfi_result *a,
                         bfi_result *b, uint64_t *tests)
{
	char keybuf[60][32];
	const void *kp[60];
	size_t lens[60];
	for (uint32_t i = 0; i < n; i++) {
		uint32_t x = (uint32_t)(test_rand(seed) % 100);
		if (!strcmp(what, "mobile"))
			snprintf(keybuf[i], sizeof keybuf[i], "mobile-%u", i % MOBILE);
		else
			snprintf(keybuf[i], sizeof keybuf[i], x < 90 ? "core-%s-%u" : "absent-%s-%u", what,
			         x < 90 ? i % CORE : x);
		kp[i] = keybuf[i];
		lens[i] = strlen(keybuf[i]);
	}
	bfi_expr *e = NULL;
	EXPECT_RC(bfi_expr_terms(kp, lens, n, &e), 0);
	if (e == NULL)
		return;
	bfi__use_pruning(BFI_PRUNE_OFF);
	EXPECT_RC(bfi_query_threshold(s, BFI_LAYOUT_TREE, e, 0.8, a), 0);
	for (int mode = BFI_PRUNE_AUTO; mode <= BFI_PRUNE_LEAVES; mode++) {
		bfi__use_pruning(mode);
		EXPECT_RC(bfi_query_threshold(s, BFI_LAYOUT_TREE, e, 0.8, b), 0);
		EXPECT(same_answers(a, b));
		if (mode == BFI_PRUNE_AUTO)
			*tests = bfi_result_filter_tests(b);
	}
	bfi__use_pruning(-1);
	bfi_expr_free(&e);
}

static void test_tree_strains(void)
{
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	o.layouts = BFI_BUILD_TREE;
	o.keep_order = 1; /* a group's sets side by side, under one or two nodes */
	o.all_levels = 1; /* fanout 64: 3,000 leaves under 47 nodes */
	char path[4200];
	snprintf(path, sizeof path, "%s/tree-strains", dir);
	EXPECT_RC(test_build_sets(&o, path, GROUPS * PER, CORE + MINE + MOBILE, strain_key), 0);
	bfi_snapshot *s = NULL;
	EXPECT_RC(bfi_open(path, 0, &s), 0);
	if (s == NULL)
		return;
	struct bfi_layout_info lt = test_layout(s, BFI_LAYOUT_TREE);
	uint64_t top = 0, m = 0, tests = 0, above = 0;
	EXPECT(lt.u.tree.levels >= 2 &&
	       bfi_tree_level(s, lt.u.tree.levels - 1, &top, &m, NULL, NULL) == 0 && top > 1);
	for (uint32_t l = 1; l < lt.u.tree.levels; l++) {
		uint64_t nodes = 0;
		EXPECT(bfi_tree_level(s, l, &nodes, &m, NULL, NULL) == 0);
		above += nodes;
	}
	bfi_result *a = NULL, *b = NULL;
	EXPECT_RC(bfi_result_create(&a), 0);
	EXPECT_RC(bfi_result_create(&b), 0);
	uint64_t seed = 48;
	/* the element: every carrier answers, and the walk gave way to the leaves' rows */
	strain_query(s, "mobile", 50, &seed, a, b, &tests);
	uint32_t carriers = 0;
	for (size_t x = 0; x < bfi_result_count(a); x++) {
		const char *nm;
		size_t nl;
		EXPECT_RC(bfi_set_name(s, bfi_result_ordinals(a)[x], &nm, &nl), 0);
		carriers += (uint32_t)atoi(nm + 1) % 3 == 0;
	}
	printf("tree-strains: %u levels, %llu top nodes; mobile read: %zu sets (%u carriers of %u), "
	       "%llu filters tested\n", lt.u.tree.levels, (unsigned long long)top, bfi_result_count(a),
	       carriers, GROUPS * PER / 3, (unsigned long long)tests);
	EXPECT(carriers == GROUPS * PER / 3);
	/* the top level walked, then each level over the leaves and the leaves whole */
	EXPECT(tests == top + above + GROUPS * PER);
	/* a core: its group answers, and the walk stays under few nodes */
	for (uint32_t g = 0; g < 5; g++) {
		char what[16];
		snprintf(what, sizeof what, "%u", g * 7);
		strain_query(s, what, 45, &seed, a, b, &tests);
		EXPECT(bfi_result_count(a) >= PER);
		EXPECT(tests < GROUPS * PER / 2);
	}
	bfi_result_destroy(&a);
	bfi_result_destroy(&b);
	bfi_close(&s);
}

int main(void)
{
	snprintf(dir, sizeof dir, "%s", test_tmpdir());
	test_run("prune: flat, default blocks (512 sets, lined rows, and the rest)", test_flat_default);
	test_run("prune: flat, one packed block, pre-filters, long rows", test_flat_shapes);
	test_run("prune: plain, rambo and a tree of four levels of their own widths",
	         test_other_layouts);
	test_run("prune: trees of one width with a pre-filter, explicit groups, default levels",
	         test_tree_shapes);
	test_run("prune: a tree of strains answers alike by its walk and by its leaves' rows",
	         test_tree_strains);
	test_cleanup();
	return test_exit();
}
