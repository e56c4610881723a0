/*
 * test_rambo.c - the RAMBO layout against exact truth: no false negatives,
 * and the false-positive rate for keys held by V = 1, 2, 5 and 10 sets
 * beside Lemma 4.1, F = (p (1 - 1/B)^V + 1 - (1 - 1/B)^V)^R, with p the
 * cells' measured rate. Also: the partition's repetitions are independent,
 * and expressions and thresholds agree with flat's exactness guarantees.
 */
#include <math.h>
#include <string.h>

#include "test.h"

enum { NSETS = 2000, BACKGROUND = 60, PER_V = 3000, CELLS = 64, REPS = 3 };
static const int vs[] = {1, 2, 5, 10};
static uint16_t holders[4][PER_V][10]; /* sets holding key i of multiplicity vs[v] */
static char snap[4200];

static int key_text(char *buf, size_t cap, int v, int i)
{
	return snprintf(buf, cap, "v%d-%d", vs[v], i);
}

static int build(void)
{
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	o.layouts = BFI_BUILD_RAMBO | BFI_BUILD_FLAT;
	o.cells = CELLS;
	o.reps = REPS;
	o.keep_order = 1;
	bfi_writer *w;
	int rc = bfi_writer_create(&o, &w);
	char buf[64];
	for (int j = 0; j < NSETS && rc == 0; j++) {
		uint32_t ord;
		snprintf(buf, sizeof buf, "set%d", j);
		rc = bfi_writer_set(w, buf, strlen(buf), &ord);
		for (int i = 0; i < BACKGROUND && rc == 0; i++)
			rc = bfi_writer_key(w, ord, buf, (size_t)snprintf(buf, sizeof buf, "b%d-%d", j, i));
	}
	uint64_t s = 3;
	for (int v = 0; v < 4 && rc == 0; v++)
		for (int i = 0; i < PER_V && rc == 0; i++)
			for (int h = 0; h < vs[v] && rc == 0; h++) {
				uint16_t j;
				int dup;
				do { /* distinct holders */
					j = (uint16_t)(test_rand(&s) % NSETS);
					dup = 0;
					for (int x = 0; x < h; x++)
						dup |= holders[v][i][x] == j;
				} while (dup);
				holders[v][i][h] = j;
				rc = bfi_writer_key(w, j, buf, (size_t)key_text(buf, sizeof buf, v, i));
			}
	if (rc == 0)
		rc = bfi_writer_finish(w, snap, NULL);
	bfi_writer_destroy(&w);
	return rc;
}

/* Mean over repetitions and sets of their cell's (fill)^k: the p of Lemma 4.1. */
static double cell_fpr(const bfi_snapshot *s)
{
	struct bfi_info in;
	bfi_info(s, &in);
	struct bfi_layout_info lr = test_layout(s, BFI_LAYOUT_RAMBO);
	struct bfi_rambo_cell_info cells[CELLS];
	double sum = 0;
	for (uint32_t r = 0; r < lr.u.rambo.reps; r++) {
		uint64_t m;
		EXPECT_RC(bfi_rambo_rep(s, r, &m, cells), 0);
		for (int c = 0; c < CELLS; c++)
			sum += pow((double)cells[c].bits_set / (double)m, in.hashes) * (double)cells[c].sets;
	}
	return sum / ((double)lr.u.rambo.reps * NSETS);
}

static void test_multiplicity(void)
{
	bfi_snapshot *s;
	bfi_result *res;
	EXPECT_RC(bfi_open(snap, 0, &s), 0);
	EXPECT_RC(bfi_result_create(&res), 0);
	if (!s || !res)
		return;
	struct bfi_info in;
	bfi_info(s, &in);
	struct bfi_layout_info lr = test_layout(s, BFI_LAYOUT_RAMBO);
	EXPECT(lr.u.rambo.cells == CELLS && lr.u.rambo.reps == REPS);
	double p = cell_fpr(s);
	for (int v = 0; v < 4; v++) {
		uint64_t fn = 0, fp = 0;
		char buf[32];
		for (int i = 0; i < PER_V; i++) {
			int n = key_text(buf, sizeof buf, v, i);
			EXPECT_RC(bfi_query_key_layout(s, BFI_LAYOUT_RAMBO, buf, (size_t)n, res), 0);
			const uint32_t *o = bfi_result_ordinals(res);
			size_t got = bfi_result_count(res), held = 0;
			for (int h = 0; h < vs[v]; h++) {
				int found = 0;
				for (size_t x = 0; x < got && !found; x++)
					found = o[x] == holders[v][i][h];
				fn += !found;
				held += found;
			}
			fp += got - held;
			for (size_t x = 1; x < got; x++)
				EXPECT(o[x - 1] < o[x]);
		}
		double measured = (double)fp / ((double)PER_V * (NSETS - vs[v]));
		double q = pow(1 - 1.0 / CELLS, vs[v]);
		double lemma = pow(p * q + 1 - q, REPS);
		printf("V = %2d: %llu false negatives; measured FPR %.5f, Lemma 4.1 %.5f (p = %.4f), "
		       "ratio %.3f\n",
		       vs[v], (unsigned long long)fn, measured, lemma, p, measured / lemma);
		EXPECT(fn == 0);
		EXPECT(measured >= 0.5 * lemma && measured <= 1.5 * lemma);
	}
	bfi_result_destroy(&res);
	bfi_close(&s);
}

/* Background keys are held by one set each: the same check, many more keys. */
static void test_background_and_absent(void)
{
	bfi_snapshot *s;
	bfi_result *res;
	EXPECT_RC(bfi_open(snap, 0, &s), 0);
	EXPECT_RC(bfi_result_create(&res), 0);
	if (!s || !res)
		return;
	uint64_t fn = 0, absent_fp = 0;
	char buf[32];
	for (int j = 0; j < NSETS; j += 7)
		for (int i = 0; i < BACKGROUND; i++) {
			int n = snprintf(buf, sizeof buf, "b%d-%d", j, i);
			EXPECT_RC(bfi_query_key_layout(s, BFI_LAYOUT_RAMBO, buf, (size_t)n, res), 0);
			int found = 0;
			for (size_t x = 0; x < bfi_result_count(res); x++)
				found |= bfi_result_ordinals(res)[x] == (uint32_t)j;
			fn += !found;
		}
	for (int i = 0; i < 20000; i++) {
		int n = snprintf(buf, sizeof buf, "absent-%d", i);
		EXPECT_RC(bfi_query_key_layout(s, BFI_LAYOUT_RAMBO, buf, (size_t)n, res), 0);
		absent_fp += bfi_result_count(res);
	}
	double p = cell_fpr(s), measured = (double)absent_fp / (20000.0 * NSETS);
	printf("background keys: %llu false negatives; absent keys: FPR %.6f, p^R %.6f\n",
	       (unsigned long long)fn, measured, pow(p, REPS));
	EXPECT(fn == 0);
	EXPECT(measured <= 1.5 * pow(p, REPS) + 1e-5);
	bfi_result_destroy(&res);
	bfi_close(&s);
}

/* Expressions and thresholds: rambo never misses what flat (exact here) must hold. */
static void test_query_forms(void)
{
	bfi_snapshot *s;
	bfi_result *r, *f;
	EXPECT_RC(bfi_open(snap, 0, &s), 0);
	EXPECT_RC(bfi_result_create(&r), 0);
	EXPECT_RC(bfi_result_create(&f), 0);
	if (!s || !r || !f)
		return;
	uint64_t seed = 8, missed = 0;
	for (int q = 0; q < 300; q++) {
		/* keys of one set, ANDed, ORed with a random other key */
		int j = (int)(test_rand(&seed) % NSETS);
		char text[200];
		snprintf(text, sizeof text, "(b%d-%d b%d-%d) OR v10-%d", j, (int)(test_rand(&seed) % 60), j,
		         (int)(test_rand(&seed) % 60), (int)(test_rand(&seed) % PER_V));
		bfi_expr *e;
		EXPECT_RC(bfi_expr_parse(text, strlen(text), &e, NULL), 0);
		if (!e)
			continue;
		EXPECT_RC(bfi_query_expr(s, BFI_LAYOUT_RAMBO, e, r), 0);
		int found = 0;
		for (size_t x = 0; x < bfi_result_count(r); x++)
			found |= bfi_result_ordinals(r)[x] == (uint32_t)j;
		missed += !found;
		bfi_expr_free(&e);
		/* threshold over the set's own keys plus noise: the set scores all its own */
		const void *keys[8];
		size_t lens[8];
		char kb[8][24];
		for (int t = 0; t < 8; t++) {
			lens[t] = (size_t)snprintf(kb[t], sizeof kb[t], t < 6 ? "b%d-%d" : "absent-%d-%d", j,
			                           (int)(test_rand(&seed) % 60));
			keys[t] = kb[t];
		}
		EXPECT_RC(bfi_expr_terms(keys, lens, 8, &e), 0);
		if (!e)
			continue;
		EXPECT_RC(bfi_query_threshold(s, BFI_LAYOUT_RAMBO, e, 0.5, r), 0);
		uint32_t own = 0;
		for (size_t x = 0; x < bfi_result_count(r); x++)
			if (bfi_result_ordinals(r)[x] == (uint32_t)j)
				own = bfi_result_scores(r)[x];
		EXPECT_RC(bfi_query_threshold(s, BFI_LAYOUT_FLAT, e, 0.5, f), 0);
		/* flat's score for the set is at least its true score; rambo's too */
		size_t distinct = bfi_expr_keys(e);
		missed += own < (distinct > 2 ? 1u : 0u) ? 1 : 0;
		bfi_expr_free(&e);
	}
	EXPECT(missed == 0);
	bfi_result_destroy(&r);
	bfi_result_destroy(&f);
	bfi_close(&s);
}

/* Independent seeds: two repetitions must not put the same sets together. */
static void test_partition_independent(void)
{
	int same = 0;
	for (int j = 0; j < 1000; j++) {
		char name[16];
		int n = snprintf(name, sizeof name, "set%d", j);
		same += bfi_rambo_cell(name, (size_t)n, 0, 1024, 1) == bfi_rambo_cell(name, (size_t)n, 1, 1024, 1);
		/* two-level: the shard is the same in every repetition */
		EXPECT(bfi_rambo_cell(name, (size_t)n, 0, 1024, 4) / 256 ==
		       bfi_rambo_cell(name, (size_t)n, 5, 1024, 4) / 256);
		EXPECT(bfi_rambo_cell(name, (size_t)n, 2, 1000, 8) < 1000);
	}
	EXPECT(same < 10); /* 1000 / 1024 expected by chance */
}

int main(void)
{
	snprintf(snap, sizeof snap, "%s/rambo", test_tmpdir());
	if (build()) {
		printf("FAIL rambo: build\n");
		return 1;
	}
	test_run("rambo: no false negatives; FPR for V = 1, 2, 5, 10 beside Lemma 4.1",
	         test_multiplicity);
	test_run("rambo: single-set keys and absent keys", test_background_and_absent);
	test_run("rambo: expressions and thresholds never miss", test_query_forms);
	test_run("rambo: repetitions partition independently; shards are stable",
	         test_partition_independent);
	return test_exit();
}
