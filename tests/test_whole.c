/*
 * test_whole.c - bfi_query_whole: a whole file of records as one query.
 * Against an oracle built from single-k-mer answers (bfi_query_keys on
 * the file's distinct k-mers, each set's score how many of them name it):
 * every set's score matches exactly, past 65,536 k-mers too (where the
 * query is asked a list at a time), on every layout; below that, it is
 * the one threshold query of the joined records; k-mers do not span two
 * records.
 */
#include <stdlib.h>
#include <string.h>

#include "bfi_hash.h"
#include "test.h"

enum { GENOMES = 8, GLEN = 60000, K = 21 };

static char genome[GENOMES][GLEN + 1];

struct hs {
	bfi_keyhash *h;
	size_t n, cap;
};

static int take(void *ctx, const char *key, size_t len)
{
	struct hs *s = ctx;
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 1024;
		s->h = realloc(s->h, s->cap * sizeof *s->h);
	}
	s->h[s->n++] = bfi_hash_key(key, len);
	return 0;
}

static int cmp_h(const void *pa, const void *pb)
{
	const bfi_keyhash *a = pa, *b = pb;
	if (a->h1 != b->h1)
		return a->h1 < b->h1 ? -1 : 1;
	return (a->h2 > b->h2) - (a->h2 < b->h2);
}

/* Each genome's score in want (by ordinal, n of them): the oracle. Returns the distinct k-mers. */
static size_t oracle(const bfi_snapshot *s, unsigned layout, const char *seq, size_t len,
                     uint32_t *want, size_t n)
{
	struct hs h = {0};
	EXPECT_RC(bfi_kmer_keys(seq, len, K, take, &h), 0);
	qsort(h.h, h.n, sizeof *h.h, cmp_h);
	size_t d = 0;
	for (size_t i = 0; i < h.n; i++)
		if (d == 0 || cmp_h(&h.h[d - 1], &h.h[i]) != 0)
			h.h[d++] = h.h[i];
	bfi_result *r = NULL;
	EXPECT_RC(bfi_result_create(&r), 0);
	size_t *ends = malloc((d ? d : 1) * sizeof *ends);
	EXPECT_RC(bfi_query_keys(s, layout, h.h, d, r, ends), 0);
	memset(want, 0, n * sizeof *want);
	const uint32_t *o = bfi_result_ordinals(r);
	for (size_t i = 0; i < bfi_result_count(r); i++)
		if (o[i] < n)
			want[o[i]]++;
	free(ends);
	free(h.h);
	bfi_result_destroy(&r);
	return d;
}

static void test_whole(void)
{
	uint64_t seed = 5;
	char snap[4300];
	snprintf(snap, sizeof snap, "%s/snap", test_tmpdir());
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	o.fpr = 0.05;
	o.layouts = BFI_BUILD_FLAT | BFI_BUILD_TREE | BFI_BUILD_PLAIN;
	uint32_t ord_of[GENOMES];
	EXPECT_RC(test_build_genomes(&o, snap, GENOMES, GLEN, K, &seed, &genome[0][0], ord_of), 0);
	bfi_snapshot *s = NULL;
	EXPECT_RC(bfi_open(snap, 0, &s), 0);
	if (s == NULL)
		return;
	bfi_result *res = NULL, *one = NULL;
	EXPECT_RC(bfi_result_create(&res), 0);
	EXPECT_RC(bfi_result_create(&one), 0);
	/* a large file: 50 kb of genome 0 and 30 kb of genome 3 as records, joined by newlines */
	size_t big_len = 50000 + 1 + 30000;
	char *big = malloc(big_len + 1);
	memcpy(big, genome[0] + 1000, 50000);
	big[50000] = '\n';
	memcpy(big + 50001, genome[3] + 7, 30000);
	big[big_len] = 0;
	/* a small one: three reads of genome 5, and one of genome 6 */
	char small[700];
	size_t sl = 0;
	for (int r = 0; r < 4; r++) {
		memcpy(small + sl, genome[r < 3 ? 5 : 6] + 100 + 2000 * r, 150);
		sl += 150;
		small[sl++] = '\n';
	}
	static const unsigned layouts[] = {BFI_LAYOUT_FLAT, BFI_LAYOUT_TREE, BFI_LAYOUT_PLAIN};
	uint32_t want[GENOMES];
	size_t wrong = 0;
	for (size_t l = 0; l < 3; l++) {
		for (int which = 0; which < 2; which++) {
			const char *q = which ? big : small;
			size_t ql = which ? big_len : sl, terms = 0;
			size_t d = oracle(s, layouts[l], q, ql, want, GENOMES);
			EXPECT_RC(bfi_query_whole(s, layouts[l], q, ql, 0, BFI_THETA_EVERY, res, &terms), 0);
			EXPECT(terms == d && bfi_result_count(res) == GENOMES);
			const uint32_t *ords = bfi_result_ordinals(res), *sc = bfi_result_scores(res);
			for (size_t i = 0; sc && i < bfi_result_count(res); i++)
				wrong += ords[i] >= GENOMES || sc[i] != want[ords[i]];
			if (which) /* past a term list's 65,536: the file's own genomes hold theirs whole */
				EXPECT(d > 65536 && want[ord_of[0]] >= 50000 - K + 1 && want[ord_of[3]] >= 30000 - K + 1);
		}
	}
	EXPECT(wrong == 0);
	/* below 65,536 k-mers: the threshold query of the joined records, set for set */
	size_t terms = 0;
	EXPECT_RC(bfi_query_whole(s, 0, small, sl, 0, 0.7, res, &terms), 0);
	bfi_expr *e = NULL;
	EXPECT_RC(bfi_expr_kmers(s, small, sl, 0, &e), 0);
	EXPECT_RC(bfi_query_threshold(s, 0, e, 0.7, one), 0);
	size_t n = bfi_result_count(one);
	EXPECT(n == bfi_result_count(res) && n >= 1 && terms == bfi_expr_keys(e));
	EXPECT(n == 0 || (memcmp(bfi_result_ordinals(res), bfi_result_ordinals(one), n * 4) == 0 &&
	                  memcmp(bfi_result_scores(res), bfi_result_scores(one), n * 4) == 0));
	bfi_expr_free(&e);
	/* at 0.5 the big file is answered by genome 0 alone (5/8 of its k-mers; genome 3 holds 3/8) */
	EXPECT_RC(bfi_query_whole(s, 0, big, big_len, 0, 0.5, res, &terms), 0);
	EXPECT(bfi_result_count(res) == 1 && bfi_result_ordinals(res)[0] == ord_of[0]);
	bfi_result_destroy(&res);
	bfi_result_destroy(&one);
	bfi_close(&s);
	free(big);
}

int main(void)
{
	test_run("whole: a file of records as one query, every score as its single k-mers say, past "
	         "65,536 k-mers too, on every layout; below, the threshold query",
	         test_whole);
	test_cleanup();
	return test_exit();
}
