/*
 * test_every.c - every ratio (BFI_THETA_EVERY): a threshold query of no
 * terms returns every live set once, with its score, 0 included, ranked
 * (score, then ordinal), on every layout, mapped and scanned, one query at
 * a time and through bfi_query_many. Each set's score is checked against
 * an oracle built from single-key queries on the same layout (the terms
 * whose answer holds the set), and against the sets' true contents (no
 * term a set holds goes uncounted).
 */
#include <stdlib.h>
#include <string.h>

#include "test.h"

#define SETS 700 /* over 512: two flat blocks */
#define OWN 30

static size_t key_of(uint32_t j, uint32_t i, char *buf, size_t cap)
{
	return (size_t)snprintf(buf, cap, "own-%u-%u", j, i);
}

/* Is "own-j-i" in set s? */
static int holds(uint32_t s, const char *key)
{
	unsigned a, b;
	return sscanf(key, "own-%u-%u", &a, &b) == 2 && a == s && b < OWN;
}

#define TERMS 24
struct query {
	char key[TERMS][32];
	const void *kp[TERMS];
	size_t len[TERMS];
	size_t n; /* distinct terms */
};

/* Terms of a few sets' own keys, some absent: distinct, so terms = n. */
static void make_query(struct query *q, uint64_t *seed)
{
	q->n = 0;
	uint32_t a = (uint32_t)(test_rand(seed) % SETS), b = (uint32_t)(test_rand(seed) % SETS);
	for (size_t i = 0; i < TERMS; i++) {
		uint64_t r = test_rand(seed) % 4;
		if (r == 0)
			snprintf(q->key[q->n], sizeof q->key[0], "absent-%zu", i);
		else
			snprintf(q->key[q->n], sizeof q->key[0], "own-%u-%zu", r == 1 ? b : a, i);
		q->kp[q->n] = q->key[q->n];
		q->len[q->n] = strlen(q->key[q->n]);
		q->n++;
	}
}

/*
 * res, the every-ratio answer of q on layout: every set once, ranked, each
 * score the terms whose own answer (bfi_query_key_layout) holds the set.
 */
static void check_every(const bfi_snapshot *s, unsigned layout, const struct query *q,
                        const bfi_result *res)
{
	uint32_t *want = calloc(SETS, sizeof *want), *truth = calloc(SETS, sizeof *truth);
	bfi_result *one = NULL;
	EXPECT_RC(bfi_result_create(&one), 0);
	for (size_t t = 0; t < q->n; t++) {
		EXPECT_RC(bfi_query_key_layout(s, layout, q->kp[t], q->len[t], one), 0);
		const uint32_t *o = bfi_result_ordinals(one);
		for (size_t i = 0; i < bfi_result_count(one); i++)
			want[o[i]]++;
		for (uint32_t j = 0; j < SETS; j++)
			truth[j] += (uint32_t)holds(j, q->key[t]);
	}
	bfi_result_destroy(&one);
	size_t n = bfi_result_count(res);
	const uint32_t *ords = bfi_result_ordinals(res), *scores = bfi_result_scores(res);
	EXPECT(n == SETS && scores != NULL);
	uint8_t *seen = calloc(SETS, 1);
	size_t bad = 0, twice = 0, order = 0, missed = 0;
	for (size_t i = 0; scores && i < n; i++) {
		uint32_t o = ords[i];
		if (o >= SETS) {
			bad++;
			continue;
		}
		twice += seen[o]++;
		bad += scores[i] != want[o];
		missed += scores[i] < truth[o];
		if (i && (scores[i] > scores[i - 1] || (scores[i] == scores[i - 1] && o < ords[i - 1])))
			order++;
	}
	EXPECT(bad == 0 && twice == 0 && order == 0 && missed == 0);
	if (bad || twice || order || missed)
		fprintf(stderr, "  layout %u: %zu wrong scores, %zu twice, %zu out of order, %zu below truth\n",
		        layout, bad, twice, order, missed);
	free(seen);
	free(want);
	free(truth);
}

static void test_every_layout(void)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/every", test_tmpdir());
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	o.layouts = BFI_BUILD_FLAT | BFI_BUILD_TREE | BFI_BUILD_RAMBO | BFI_BUILD_PLAIN;
	EXPECT_RC(test_build_sets(&o, path, SETS, OWN, key_of), 0);
	bfi_snapshot *s = NULL;
	EXPECT_RC(bfi_open(path, 0, &s), 0);
	if (s == NULL)
		return;
	static const unsigned layouts[] = {BFI_LAYOUT_FLAT, BFI_LAYOUT_TREE, BFI_LAYOUT_RAMBO,
	                                   BFI_LAYOUT_PLAIN};
	uint64_t seed = 7;
	bfi_result *res = NULL;
	EXPECT_RC(bfi_result_create(&res), 0);
	for (int x = 0; x < 12; x++) {
		struct query q;
		make_query(&q, &seed);
		bfi_expr *e = NULL;
		EXPECT_RC(bfi_expr_terms(q.kp, q.len, q.n, &e), 0);
		for (size_t l = 0; e && l < sizeof layouts / sizeof *layouts; l++) {
			EXPECT_RC(bfi_query_threshold(s, layouts[l], e, BFI_THETA_EVERY, res), 0);
			check_every(s, layouts[l], &q, res);
			/* the same through bfi_query_compiled, and scanned */
			EXPECT_RC(bfi_query_compiled(s, layouts[l], e, BFI_THETA_EVERY, res), 0);
			check_every(s, layouts[l], &q, res);
			const bfi_expr *qs[1] = {e};
			bfi_result *rs[1] = {res};
			EXPECT_RC(bfi_scan(s, layouts[l], qs, 1, BFI_THETA_EVERY, rs, 64 << 20, NULL), 0);
			check_every(s, layouts[l], &q, res);
		}
		bfi_expr_free(&e);
	}
	/* a theta that is neither in (0, 1] nor BFI_THETA_EVERY is refused */
	struct query q;
	make_query(&q, &seed);
	bfi_expr *e = NULL;
	EXPECT_RC(bfi_expr_terms(q.kp, q.len, q.n, &e), 0);
	EXPECT_RC(bfi_query_threshold(s, 0, e, -0.5, res), BFI_E_INVALID);
	EXPECT_RC(bfi_query_threshold(s, 0, e, 0, res), BFI_E_INVALID);
	bfi_expr_free(&e);
	bfi_result_destroy(&res);
	bfi_close(&s);
}

/* bfi_query_many's queries at BFI_THETA_EVERY: each answer every set, as one query's. */
static void test_every_many(void)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/many", test_tmpdir());
	EXPECT_RC(test_build_sets(NULL, path, SETS, OWN, key_of), 0);
	bfi_snapshot *s = NULL;
	EXPECT_RC(bfi_open(path, 0, &s), 0);
	if (s == NULL)
		return;
	uint64_t seed = 99;
	struct query q[3];
	char buf[3 * TERMS * 33];
	size_t ends[3], at = 0, answer_ends[3], done = 0;
	for (int i = 0; i < 3; i++) {
		make_query(&q[i], &seed);
		for (size_t t = 0; t < q[i].n; t++)
			at += (size_t)snprintf(buf + at, sizeof buf - at, "%s%s", t ? " " : "", q[i].key[t]);
		ends[i] = at;
	}
	bfi_result *all = NULL, *one = NULL;
	EXPECT_RC(bfi_result_create(&all), 0);
	EXPECT_RC(bfi_result_create(&one), 0);
	EXPECT_RC(bfi_query_many(s, 0, BFI_MANY_QUERIES, 0, BFI_THETA_EVERY, buf, ends, 3, all,
	                         answer_ends, &done),
	          0);
	EXPECT(done == 3);
	size_t from = 0;
	for (int i = 0; i < 3 && done == 3; i++) {
		bfi_expr *e = NULL;
		EXPECT_RC(bfi_expr_terms(q[i].kp, q[i].len, q[i].n, &e), 0);
		EXPECT_RC(bfi_query_threshold(s, 0, e, BFI_THETA_EVERY, one), 0);
		check_every(s, 0, &q[i], one);
		size_t n = answer_ends[i] - from;
		EXPECT(n == bfi_result_count(one));
		EXPECT(n == bfi_result_count(one) &&
		       memcmp(bfi_result_ordinals(all) + from, bfi_result_ordinals(one), n * 4) == 0 &&
		       memcmp(bfi_result_scores(all) + from, bfi_result_scores(one), n * 4) == 0);
		from = answer_ends[i];
		bfi_expr_free(&e);
	}
	bfi_result_destroy(&all);
	bfi_result_destroy(&one);
	bfi_close(&s);
}

int main(void)
{
	test_run("every ratio: each set once with its exact score, 0 included, ranked, on every "
	         "layout, mapped and scanned",
	         test_every_layout);
	test_run("every ratio: bfi_query_many answers each query as bfi_query_threshold does",
	         test_every_many);
	test_cleanup();
	return test_exit();
}
