/*
 * test_protein.c - protein k-mer keys (bfi_writer_add_protein,
 * bfi_expr_protein): random proteins against an oracle written here with
 * plain strings, every window of k of the twenty amino-acid letters inside
 * one run, in upper case. Each set holds exactly the oracle's distinct
 * k-mers and answers every one of them (no false negatives), absent ones
 * at about the filter's rate; a query's k-mers are the oracle's; the
 * snapshot is of format minor 4 and its key rules refuse DNA k-mer
 * queries (and a DNA snapshot protein ones); the spec's example holds.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bfi_hash.h"
#include "test.h"

enum { SETS = 6, PLEN = 5000, K = 8 };
static const char AMINO[] = "ACDEFGHIKLMNPQRSTVWY";

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The oracle: the distinct upper-case k-mers of seq's runs of amino acids, sorted. */
static size_t oracle(const char *seq, char ***out)
{
	size_t n = strlen(seq), m = 0;
	char **k = malloc((n + 1) * sizeof *k);
	for (size_t i = 0; i + K <= n; i++) {
		char w[K + 1];
		int ok = 1;
		for (unsigned j = 0; j < K && ok; j++) {
			char c = seq[i + j];
			c = (char)(c >= 'a' && c <= 'z' ? c - 32 : c);
			ok = strchr(AMINO, c) != NULL && c != 0;
			w[j] = c;
		}
		w[K] = 0;
		if (ok)
			k[m++] = strdup(w);
	}
	qsort(k, m, sizeof *k, cmp_str);
	size_t d = 0;
	for (size_t i = 0; i < m; i++)
		if (d == 0 || strcmp(k[d - 1], k[i]))
			k[d++] = k[i];
		else
			free(k[i]);
	*out = k;
	return d;
}

static int count_key(void *ctx, const char *key, size_t len)
{
	(void)key;
	*(size_t *)ctx += len == 3;
	return 0;
}

static int first_key(void *ctx, const char *key, size_t len)
{
	memcpy(ctx, key, len);
	return 0;
}

static void test_protein(void)
{
	/* the spec's example: >p / MKvXAC*W at k = 3 gives MKV alone */
	size_t n3 = 0;
	char got[4] = "";
	EXPECT_RC(bfi_protein_keys("MKvXAC*W", 8, 3, count_key, &n3), 0);
	EXPECT_RC(bfi_protein_keys("MKvXAC*W", 8, 3, first_key, got), 0);
	EXPECT(n3 == 1 && memcmp(got, "MKV", 3) == 0);
	uint64_t seed = 42;
	char dir[4200], path[4300], snap[4300], dna[4300];
	snprintf(dir, sizeof dir, "%s/p", test_tmpdir());
	snprintf(snap, sizeof snap, "%s/snap", test_tmpdir());
	snprintf(dna, sizeof dna, "%s/dna", test_tmpdir());
	EXPECT(mkdir(dir, 0755) == 0);
	static char prot[SETS][PLEN + 1];
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	bfi_writer *w = NULL;
	EXPECT_RC(bfi_writer_create(&o, &w), 0);
	for (int s = 0; s < SETS; s++) {
		for (int i = 0; i < PLEN; i++) { /* lower case, and now and then a letter that breaks a run */
			uint64_t r = test_rand(&seed) % 100;
			prot[s][i] = r == 0 ? 'X' : r == 1 ? '*' : r < 20 ? (char)(AMINO[r % 20] + 32) : AMINO[r % 20];
		}
		snprintf(path, sizeof path, "%s/s%d.faa", dir, s);
		FILE *f = fopen(path, "w");
		fprintf(f, ">s%d\n%.2500s\n%s\n", s, prot[s], prot[s] + 2500);
		fclose(f);
		EXPECT_RC(bfi_writer_add_protein(w, path, K, 0), 0);
	}
	EXPECT_RC(bfi_writer_add_fasta(w, path, 21, 0), BFI_E_INPUT); /* one kind of keys a snapshot */
	bfi_writer_destroy(&w);
	/* again, without the refused call */
	EXPECT_RC(bfi_writer_create(&o, &w), 0);
	for (int s = 0; s < SETS; s++) {
		snprintf(path, sizeof path, "%s/s%d.faa", dir, s);
		EXPECT_RC(bfi_writer_add_protein(w, path, K, 0), 0);
	}
	EXPECT_RC(bfi_writer_finish(w, snap, NULL), 0);
	bfi_writer_destroy(&w);
	bfi_snapshot *s = NULL;
	EXPECT_RC(bfi_open(snap, 0, &s), 0);
	if (s == NULL)
		return;
	struct bfi_info in;
	bfi_info(s, &in);
	EXPECT(in.minor == 4);
	bfi_result *res = NULL;
	EXPECT_RC(bfi_result_create(&res), 0);
	size_t missed = 0, tested = 0, false_hits = 0, absent = 0;
	for (int x = 0; x < SETS; x++) {
		char name[16];
		snprintf(name, sizeof name, "s%d", x);
		uint32_t ord;
		EXPECT_RC(bfi_set_find(s, name, strlen(name), &ord), 0);
		/* the record's two lines are one sequence: k-mers run across the line end */
		char **k;
		size_t d = oracle(prot[x], &k);
		struct bfi_set_stats st;
		EXPECT_RC(bfi_set_stats(s, ord, &st), 0);
		EXPECT(st.distinct_keys == d);
		for (size_t i = 0; i < d; i++) {
			EXPECT_RC(bfi_query_key(s, k[i], K, res), 0);
			int in_it = 0;
			for (size_t j = 0; j < bfi_result_count(res); j++)
				in_it |= bfi_result_ordinals(res)[j] == ord;
			missed += !in_it;
			tested++;
			free(k[i]);
		}
		free(k);
	}
	for (int i = 0; i < 20000; i++) { /* random k-mers: in no set but by chance */
		char key[K];
		for (int j = 0; j < K; j++)
			key[j] = AMINO[test_rand(&seed) % 20];
		EXPECT_RC(bfi_query_key(s, key, K, res), 0);
		false_hits += bfi_result_count(res);
		absent += SETS;
	}
	double fpr = (double)false_hits / (double)absent;
	printf("  %zu k-mers, %zu missed; false positive rate %.4f (target 0.01)\n", tested,
	       missed, fpr);
	EXPECT(missed == 0 && tested > 20000 && fpr < 0.02);
	/* a query's terms are the oracle's k-mers; DNA k-mers are refused, and protein on DNA */
	const char *q = prot[2] + 100;
	char qs[61];
	memcpy(qs, q, 60);
	qs[60] = 0;
	char **k;
	size_t d = oracle(qs, &k);
	for (size_t i = 0; i < d; i++)
		free(k[i]);
	free(k);
	bfi_expr *e = NULL;
	EXPECT_RC(bfi_expr_protein(s, qs, 60, 0, &e), 0);
	EXPECT(bfi_expr_keys(e) == d);
	EXPECT_RC(bfi_query_threshold(s, 0, e, 1.0, res), 0);
	uint32_t o2;
	EXPECT_RC(bfi_set_find(s, "s2", 2, &o2), 0);
	EXPECT(bfi_result_count(res) >= 1 && bfi_result_ordinals(res)[0] == o2);
	/* findere on proteins: z = 0 is that query, set for set and score for score; at z = 4
	 * the terms are the read's (8+4)-mers, and its protein holds them all */
	bfi_result *fz = NULL;
	EXPECT_RC(bfi_result_create(&fz), 0);
	size_t terms = 0;
	EXPECT_RC(bfi_query_findere(s, 0, qs, 60, 0, 0, 1.0, fz, &terms), 0);
	size_t nz = bfi_result_count(fz);
	EXPECT(terms == d && nz == bfi_result_count(res) &&
	       memcmp(bfi_result_ordinals(fz), bfi_result_ordinals(res), nz * 4) == 0 &&
	       memcmp(bfi_result_scores(fz), bfi_result_scores(res), nz * 4) == 0);
	size_t windows = 0; /* the (8+4)-mers of amino acids alone: a run-breaking letter ends one */
	for (size_t i = 0; i + K + 4 <= 60; i++) {
		int all = 1;
		for (size_t j = i; j < i + K + 4 && all; j++)
			all = qs[j] != 'X' && qs[j] != '*';
		windows += (size_t)all;
	}
	EXPECT_RC(bfi_query_findere(s, 0, qs, 60, 0, 4, 1.0, fz, &terms), 0);
	EXPECT(terms == windows && terms > 20 && bfi_result_count(fz) >= 1 &&
	       bfi_result_ordinals(fz)[0] == o2 && bfi_result_scores(fz)[0] == terms);
	bfi_result_destroy(&fz);
	bfi_expr_free(&e);
	struct bfi_form f;
	EXPECT_RC(bfi_query_form(s, BFI_FORM_AUTO, 0, 0, &f), 0);
	EXPECT(f.form == BFI_FORM_PROTEIN && f.k == K);
	EXPECT_RC(bfi_query_form(s, BFI_FORM_KMERS, 0, 0, &f), BFI_E_KEY_FORM);
	EXPECT_RC(bfi_expr_kmers(s, "ACGTACGTACGT", 12, 0, &e), BFI_E_KEY_FORM);
	char why[200];
	EXPECT_RC(bfi_form_refused(s, BFI_FORM_KMERS, 0, why, sizeof why), 0);
	EXPECT(strstr(why, "protein 8-mers") != NULL);
	EXPECT(strcmp(bfi_form_name(BFI_FORM_PROTEIN), "protein") == 0);
	bfi_close(&s);
	/* a DNA snapshot refuses protein queries */
	snprintf(path, sizeof path, "%s/dna.fa", dir);
	FILE *fd = fopen(path, "w");
	fputs(">d\nACGTACGTTTGACCA\n", fd);
	fclose(fd);
	EXPECT_RC(bfi_writer_create(&o, &w), 0);
	EXPECT_RC(bfi_writer_add_fasta(w, path, 5, 0), 0);
	EXPECT_RC(bfi_writer_finish(w, dna, NULL), 0);
	bfi_writer_destroy(&w);
	EXPECT_RC(bfi_open(dna, 0, &s), 0);
	if (s) {
		bfi_info(s, &in);
		EXPECT(in.minor < 4);
		EXPECT_RC(bfi_expr_protein(s, "MKVLA", 5, 0, &e), BFI_E_KEY_FORM);
		EXPECT_RC(bfi_query_form(s, BFI_FORM_PROTEIN, 0, 0, &f), BFI_E_KEY_FORM);
		bfi_close(&s);
	}
	bfi_result_destroy(&res);
}

int main(void)
{
	test_run("protein: amino-acid k-mers exact against the oracle, none missed, the rate near "
	         "its target; findere over them; minor 4; DNA and protein queries refused on each "
	         "other's snapshots",
	         test_protein);
	test_cleanup();
	return test_exit();
}
