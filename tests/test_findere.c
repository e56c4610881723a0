/*
 * test_findere.c - bfi_query_findere against its definition, built here
 * with plain strings: a read's distinct canonical (k+z)-mers, each
 * counted for a genome when every one of its z+1 k-mers is in that
 * genome's answer to the k-mer alone (bfi_query_key_layout). Filters at a
 * 20% rate make false k-mers common, so the definition is tested where it
 * matters: the scores match it exactly at z = 0, 3 and 6 on every layout,
 * z = 0 is the plain threshold query, a read's source is always found
 * (no (k+z)-mer of a true read is lost), and false answers to random reads
 * fall as z grows.
 */
#include <stdlib.h>
#include <string.h>

#include "test.h"

enum { GENOMES = 16, GLEN = 4000, K = 15, RLEN = 100, READS = 40 };

static char genome[GENOMES][GLEN + 1];

static char comp(char c)
{
	return c == 'A' ? 'T' : c == 'C' ? 'G' : c == 'G' ? 'C' : 'A';
}

/* The canonical spelling of the len bases at p into out (len + 1 bytes). */
static void canonical(const char *p, size_t len, char *out)
{
	int rc = 0;
	for (size_t i = 0; i < len; i++) {
		char f = p[i], r = comp(p[len - 1 - i]);
		if (f != r) {
			rc = r < f;
			break;
		}
	}
	for (size_t i = 0; i < len; i++)
		out[i] = rc ? comp(p[len - 1 - i]) : p[i];
	out[len] = 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The definition: each genome's score, the distinct (k+z)-mers of read
 * whose every k-mer's own answer on layout holds it; returns the terms.
 */
static size_t oracle(const bfi_snapshot *s, unsigned layout, const char *read, size_t len,
                     unsigned z, const uint32_t *ord_of, uint32_t *score)
{
	size_t nk = len - K + 1, nw = len >= K + z ? len - K - z + 1 : 0;
	/* in[i][g]: k-mer i answered with genome g */
	uint8_t(*in)[GENOMES] = calloc(nk, sizeof *in);
	bfi_result *r = NULL;
	EXPECT_RC(bfi_result_create(&r), 0);
	for (size_t i = 0; i < nk; i++) {
		char key[K + 1];
		canonical(read + i, K, key);
		EXPECT_RC(bfi_query_key_layout(s, layout, key, K, r), 0);
		const uint32_t *o = bfi_result_ordinals(r);
		for (size_t x = 0; x < bfi_result_count(r); x++)
			for (int g = 0; g < GENOMES; g++)
				in[i][g] |= o[x] == ord_of[g];
	}
	bfi_result_destroy(&r);
	/* the distinct windows, each at its first place */
	char **spell = malloc((nw ? nw : 1) * sizeof *spell);
	for (size_t i = 0; i < nw; i++) {
		spell[i] = malloc(K + z + 1 + 24);
		canonical(read + i, K + z, spell[i]);
		snprintf(spell[i] + K + z, 24, "%010zu", i); /* ties by place */
	}
	qsort(spell, nw, sizeof *spell, cmp_str);
	size_t terms = 0;
	memset(score, 0, GENOMES * sizeof *score);
	for (size_t i = 0; i < nw; i++) {
		if (i && strncmp(spell[i - 1], spell[i], K + z) == 0)
			continue;
		terms++;
		size_t at = (size_t)strtoul(spell[i] + K + z, NULL, 10);
		for (int g = 0; g < GENOMES; g++) {
			int all = 1;
			for (size_t j = at; j <= at + z && all; j++)
				all = in[j][g];
			score[g] += (uint32_t)all;
		}
	}
	for (size_t i = 0; i < nw; i++)
		free(spell[i]);
	free(spell);
	free(in);
	return terms;
}

static void test_findere(void)
{
	uint64_t seed = 77;
	char snap[4300];
	snprintf(snap, sizeof snap, "%s/snap", test_tmpdir());
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	o.fpr = 0.2;
	o.layouts = BFI_BUILD_FLAT | BFI_BUILD_TREE | BFI_BUILD_PLAIN;
	uint32_t ord_of[GENOMES];
	EXPECT_RC(test_build_genomes(&o, snap, GENOMES, GLEN, K, &seed, &genome[0][0], ord_of), 0);
	bfi_snapshot *s = NULL;
	EXPECT_RC(bfi_open(snap, 0, &s), 0);
	if (s == NULL)
		return;
	bfi_result *res = NULL, *plain = NULL;
	EXPECT_RC(bfi_result_create(&res), 0);
	EXPECT_RC(bfi_result_create(&plain), 0);
	static const unsigned layouts[] = {BFI_LAYOUT_FLAT, BFI_LAYOUT_TREE, BFI_LAYOUT_PLAIN};
	static const unsigned zs[] = {0, 3, 6};
	size_t wrong = 0, lost = 0, false_hits[3] = {0};
	for (int q = 0; q < READS; q++) {
		char read[RLEN + 1];
		int src = q % 2 ? -1 : (int)(test_rand(&seed) % GENOMES);
		if (src >= 0)
			memcpy(read, genome[src] + test_rand(&seed) % (GLEN - RLEN), RLEN);
		else
			for (int i = 0; i < RLEN; i++)
				read[i] = "ACGT"[test_rand(&seed) % 4];
		read[RLEN] = 0;
		for (size_t zi = 0; zi < 3; zi++) {
			unsigned z = zs[zi];
			for (size_t l = 0; l < (q < 8 ? 3u : 1u); l++) {
				uint32_t want[GENOMES];
				size_t terms = oracle(s, layouts[l], read, RLEN, z, ord_of, want), got_terms = 0;
				EXPECT_RC(bfi_query_findere(s, layouts[l], read, RLEN, 0, z, BFI_THETA_EVERY, res,
				                            &got_terms),
				          0);
				EXPECT(got_terms == terms && bfi_result_count(res) == GENOMES);
				const uint32_t *ords = bfi_result_ordinals(res), *sc = bfi_result_scores(res);
				for (size_t i = 0; sc && i < bfi_result_count(res); i++)
					for (int g = 0; g < GENOMES; g++)
						wrong += ords[i] == ord_of[g] && sc[i] != want[g];
			}
			/*
			 * at 0.15, below the share of a read's k-mers a 20% filter
			 * answers falsely: the source of a true read always, false
			 * answers to random ones counted
			 */
			size_t terms = 0;
			EXPECT_RC(bfi_query_findere(s, 0, read, RLEN, K, z, 0.15, res, &terms), 0);
			int found = 0;
			for (size_t i = 0; i < bfi_result_count(res); i++)
				found |= src >= 0 && bfi_result_ordinals(res)[i] == ord_of[src];
			lost += src >= 0 && !found;
			false_hits[zi] += bfi_result_count(res) - (size_t)found;
			if (z == 0) { /* the plain threshold query, set for set and score for score */
				bfi_expr *e = NULL;
				EXPECT_RC(bfi_expr_kmers(s, read, RLEN, 0, &e), 0);
				EXPECT_RC(bfi_query_threshold(s, 0, e, 0.15, plain), 0);
				size_t n = bfi_result_count(plain);
				EXPECT(n == bfi_result_count(res) && terms == bfi_expr_keys(e));
				EXPECT(n == 0 || (memcmp(bfi_result_ordinals(plain), bfi_result_ordinals(res), n * 4) == 0 &&
				                  memcmp(bfi_result_scores(plain), bfi_result_scores(res), n * 4) == 0));
				bfi_expr_free(&e);
			}
		}
	}
	EXPECT(wrong == 0 && lost == 0);
	printf("  false answers at 0.15 by z = 0, 3, 6: %zu, %zu, %zu\n", false_hits[0],
	       false_hits[1], false_hits[2]);
	EXPECT(false_hits[0] > 0 && false_hits[1] < false_hits[0] && false_hits[2] <= false_hits[1]);
	/* a read shorter than k + z has no terms and no answer; bad arguments refused */
	size_t terms = 1;
	EXPECT_RC(bfi_query_findere(s, 0, genome[0], K + 2, 0, 3, 0.5, res, &terms), 0);
	EXPECT(terms == 0 && bfi_result_count(res) == 0);
	EXPECT_RC(bfi_query_findere(s, 0, genome[0], 50, 0, 65, 0.5, res, &terms), BFI_E_INVALID);
	EXPECT_RC(bfi_query_findere(s, 0, genome[0], 50, K + 1, 3, 0.5, res, &terms), BFI_E_KEY_FORM);
	bfi_result_destroy(&res);
	bfi_result_destroy(&plain);
	bfi_close(&s);
}

int main(void)
{
	test_run("findere: each (k+z)-mer scored by its definition at z = 0, 3, 6 on every layout; "
	         "z = 0 the threshold query; no true read lost; fewer false answers as z grows",
	         test_findere);
	test_cleanup();
	return test_exit();
}
