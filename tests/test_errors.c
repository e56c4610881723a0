/*
 * test_errors.c - thresholds from the k-mer lemma (bfi_expr_set_errors):
 * reads cut from random genomes and given exactly E errors (substitutions,
 * insertions, deletions) are answered with their source, always. The
 * oracle is built here with plain strings: each read's distinct canonical
 * k-mers and how many of them each genome truly holds. The lemma's need
 * (terms - E k, or every set) never exceeds the source's true count; every
 * genome whose true count reaches the need is in the answer; and the
 * need is the same whether a read is answered alone, through
 * bfi_query_many (BFI_MANY_ERRORS) or in a scan of reads of other needs.
 */
#include <stdlib.h>
#include <string.h>

#include "test.h"

enum { GENOMES = 12, GLEN = 20000, K = 21, READS = 120, RLEN = 150 };

static char genome[GENOMES][GLEN + 1];

/* The 2-bit code of a canonical k-mer (k <= 32): the lesser of it and its reverse complement. */
static int canon(const char *s, unsigned k, uint64_t *out)
{
	uint64_t fw = 0, rc = 0;
	for (unsigned i = 0; i < k; i++) {
		int c = s[i] == 'A' ? 0 : s[i] == 'C' ? 1 : s[i] == 'G' ? 2 : s[i] == 'T' ? 3 : -1;
		if (c < 0)
			return 0;
		fw = fw << 2 | (uint64_t)c;
		rc |= (uint64_t)(3 - c) << (2 * i);
	}
	*out = fw < rc ? fw : rc;
	return 1;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* The distinct canonical k-mers of s (len bases), sorted, into out; their count. */
static size_t kmers(const char *s, size_t len, uint64_t *out)
{
	size_t n = 0;
	for (size_t i = 0; i + K <= len; i++)
		n += (size_t)canon(s + i, K, &out[n]);
	qsort(out, n, sizeof *out, cmp_u64);
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (m == 0 || out[m - 1] != out[i])
			out[m++] = out[i];
	return m;
}

static uint64_t *gk[GENOMES];
static size_t gn[GENOMES];

static int holds(int g, uint64_t x)
{
	return bsearch(&x, gk[g], gn[g], sizeof x, cmp_u64) != NULL;
}

/* Read r: a cut of a genome with e errors of every kind; its source. */
static size_t make_read(uint64_t *seed, unsigned e, char *out, int *src)
{
	static const char base[] = "ACGT";
	*src = (int)(test_rand(seed) % GENOMES);
	size_t at = test_rand(seed) % (GLEN - RLEN - 8), n = RLEN;
	memcpy(out, genome[*src] + at, n);
	for (unsigned x = 0; x < e; x++) {
		size_t p = 1 + test_rand(seed) % (n - 2);
		int kind = (int)(test_rand(seed) % 3);
		if (kind == 0) { /* a substitution: another base */
			out[p] = base[(strchr(base, out[p]) - base + 1 + (int)(test_rand(seed) % 3)) % 4];
		} else if (kind == 1) { /* an insertion */
			memmove(out + p + 1, out + p, n - p);
			out[p] = base[test_rand(seed) % 4];
			n++;
		} else { /* a deletion */
			memmove(out + p, out + p + 1, n - p - 1);
			n--;
		}
	}
	out[n] = 0;
	return n;
}

static void test_lemma(void)
{
	uint64_t seed = 2024;
	char snap[4300];
	snprintf(snap, sizeof snap, "%s/snap", test_tmpdir());
	uint32_t ord_of[GENOMES];
	EXPECT_RC(test_build_genomes(NULL, snap, GENOMES, GLEN, K, &seed, &genome[0][0], ord_of), 0);
	for (int g = 0; g < GENOMES; g++) {
		gk[g] = malloc(GLEN * sizeof *gk[g]);
		gn[g] = kmers(genome[g], GLEN, gk[g]);
	}
	bfi_snapshot *s = NULL;
	EXPECT_RC(bfi_open(snap, 0, &s), 0);
	if (s == NULL)
		return;
	bfi_result *res = NULL, *all = NULL;
	EXPECT_RC(bfi_result_create(&res), 0);
	EXPECT_RC(bfi_result_create(&all), 0);
	static char reads[READS][RLEN + 16];
	size_t lens[READS], needs[READS], missed = 0, below = 0, every = 0;
	bfi_expr *es[READS];
	uint64_t rk[RLEN];
	char buf[READS * (RLEN + 16)];
	size_t ends[READS], at = 0;
	for (int r = 0; r < READS; r++) {
		unsigned e = (unsigned)(r % 8); /* 0 to 7 errors: at 6 and more, 6 x 21 > 130 k-mers */
		int src;
		lens[r] = make_read(&seed, e, reads[r], &src);
		memcpy(buf + at, reads[r], lens[r]);
		ends[r] = at += lens[r];
		size_t terms = kmers(reads[r], lens[r], rk);
		size_t truth[GENOMES];
		for (int g = 0; g < GENOMES; g++) {
			truth[g] = 0;
			for (size_t i = 0; i < terms; i++)
				truth[g] += (size_t)holds(g, rk[i]);
		}
		es[r] = NULL;
		EXPECT_RC(bfi_expr_kmers(s, reads[r], lens[r], 0, &es[r]), 0);
		EXPECT(bfi_expr_keys(es[r]) == terms);
		EXPECT_RC(bfi_expr_set_errors(es[r], K, e), 0);
		needs[r] = terms > (size_t)e * K ? terms - (size_t)e * K : 0;
		EXPECT(bfi_expr_need(es[r], 0.9) == needs[r]);
		below += truth[src] < needs[r]; /* the lemma itself, on the read's true k-mers */
		every += needs[r] == 0;
		EXPECT_RC(bfi_query_threshold(s, 0, es[r], 1.0, res), 0);
		const uint32_t *got = bfi_result_ordinals(res);
		size_t n = bfi_result_count(res);
		if (needs[r] == 0)
			EXPECT(n == GENOMES);
		for (int g = 0; g < GENOMES; g++) {
			if (truth[g] < needs[r])
				continue;
			int in = 0;
			for (size_t i = 0; i < n; i++)
				in |= got[i] == ord_of[g];
			missed += !in;
		}
	}
	EXPECT(below == 0 && missed == 0);
	EXPECT(every > 0 && every < READS); /* both kinds of need were met */
	/* bfi_query_many: the same answers as one by one */
	size_t answer_ends[READS], done = 0;
	EXPECT_RC(bfi_query_many(s, 0, BFI_MANY_SEQUENCES | BFI_MANY_ERRORS(3), 0, 1.0, buf, ends,
	                         READS, all, answer_ends, &done),
	          0);
	EXPECT(done == READS);
	size_t from = 0, differ = 0;
	for (int r = 0; r < READS && done == READS; r++) {
		bfi_expr *e = NULL;
		EXPECT_RC(bfi_expr_kmers(s, reads[r], lens[r], 0, &e), 0);
		EXPECT_RC(bfi_expr_set_errors(e, K, 3), 0);
		EXPECT_RC(bfi_query_threshold(s, 0, e, 1.0, res), 0);
		size_t n = answer_ends[r] - from;
		differ += n != bfi_result_count(res) ||
		          memcmp(bfi_result_ordinals(all) + from, bfi_result_ordinals(res), n * 4) != 0;
		from = answer_ends[r];
		bfi_expr_free(&e);
	}
	EXPECT(differ == 0);
	/* other kinds than sequences take no errors */
	EXPECT_RC(bfi_query_many(s, 0, BFI_MANY_TEXTS | BFI_MANY_ERRORS(3), 0, 1.0, buf, ends, 1, all,
	                         answer_ends, &done),
	          BFI_E_INVALID);
	/* a scan of reads whose needs all differ: each answered by its own */
	bfi_result *rs[READS];
	for (int r = 0; r < READS; r++)
		EXPECT_RC(bfi_result_create(&rs[r]), 0);
	EXPECT_RC(bfi_scan(s, 0, (const bfi_expr *const *)es, READS, 1.0, rs, 64 << 20, NULL), 0);
	differ = 0;
	for (int r = 0; r < READS; r++) {
		EXPECT_RC(bfi_query_threshold(s, 0, es[r], 1.0, res), 0);
		size_t n = bfi_result_count(res);
		differ += n != bfi_result_count(rs[r]) ||
		          memcmp(bfi_result_ordinals(rs[r]), bfi_result_ordinals(res), n * 4) != 0;
		bfi_result_destroy(&rs[r]);
		bfi_expr_free(&es[r]);
	}
	EXPECT(differ == 0);
	bfi_expr *key = NULL;
	EXPECT_RC(bfi_expr_key("x", 1, &key), 0);
	EXPECT_RC(bfi_expr_set_need(key, 0), BFI_E_INVALID); /* not a term list */
	bfi_expr_free(&key);
	bfi_result_destroy(&res);
	bfi_result_destroy(&all);
	bfi_close(&s);
	for (int g = 0; g < GENOMES; g++)
		free(gk[g]);
}

int main(void)
{
	test_run("errors: the k-mer lemma's threshold keeps every read's source and every genome "
	         "truly above it, alone, in bfi_query_many and in a scan",
	         test_lemma);
	test_cleanup();
	return test_exit();
}
