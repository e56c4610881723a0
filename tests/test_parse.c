/*
 * test_parse.c - the query language's parser (it accepts, refuses and
 * locates errors) and canonical k-mers against a naive extractor.
 */
#include <string.h>

#include "test.h"

static void test_parser(void)
{
	struct {
		const char *text;
		int rc;
		size_t at, keys;
	} cases[] = {
		{"a", 0, 0, 1},
		{"a b c", 0, 0, 3},
		{"a AND b OR c", 0, 0, 3},
		{"(a OR b) AND \"c d\" e", 0, 0, 4},
		{"\"AND\"", 0, 0, 1},
		{"\"a \\\" b\"", 0, 0, 1},
		{"ANDroid ORacle", 0, 0, 2},
		{"", BFI_E_SYNTAX, 0, 0},
		{"   ", BFI_E_SYNTAX, 3, 0},
		{"AND", BFI_E_SYNTAX, 0, 0},
		{"a AND", BFI_E_SYNTAX, 5, 0},
		{"a OR OR b", BFI_E_SYNTAX, 5, 0},
		{"(a", BFI_E_SYNTAX, 2, 0},
		{"a)", BFI_E_SYNTAX, 1, 0},
		{"()", BFI_E_SYNTAX, 1, 0},
		{"\"open", BFI_E_SYNTAX, 0, 0},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		bfi_expr *e = NULL;
		size_t at = 999;
		int rc = bfi_expr_parse(cases[i].text, strlen(cases[i].text), &e, &at);
		EXPECT_RC(rc, cases[i].rc);
		if (rc == 0)
			EXPECT(bfi_expr_keys(e) == cases[i].keys);
		else if (at != cases[i].at) {
			fprintf(stderr, "'%s': error at %zu, want %zu\n", cases[i].text, at, cases[i].at);
			EXPECT(at == cases[i].at);
		}
		bfi_expr_free(&e);
	}
	/* Nesting deeper than 64 is refused as a limit, at the '(' too many, not a stack overflow. */
	char deep[300];
	memset(deep, '(', 100);
	deep[100] = 'a';
	memset(deep + 101, ')', 100);
	bfi_expr *e = NULL;
	size_t at = 0;
	EXPECT_RC(bfi_expr_parse(deep, 201, &e, &at), BFI_E_LIMIT);
	EXPECT(at == 64);
	memset(deep, '(', 64);
	deep[64] = 'a';
	memset(deep + 65, ')', 64);
	EXPECT_RC(bfi_expr_parse(deep, 129, &e, NULL), 0);
	bfi_expr_free(&e);
}

/* Precedence and quoting, checked by answers on the demo-like truth. */

/* The canonical k-mer rule, done the slow way. */
static void naive_canonical(const char *s, unsigned k, char *out)
{
	char rc[33];
	for (unsigned i = 0; i < k; i++) {
		char c = s[k - 1 - i] & ~0x20;
		rc[i] = c == 'A' ? 'T' : c == 'C' ? 'G' : c == 'G' ? 'C' : 'A';
	}
	char fw[33];
	for (unsigned i = 0; i < k; i++)
		fw[i] = s[i] & ~0x20;
	memcpy(out, memcmp(fw, rc, k) <= 0 ? fw : rc, k);
}

static void test_kmers(void)
{
	uint64_t s = 4;
	const char alphabet[] = "ACGTacgtN-";
	for (int t = 0; t < 500; t++) {
		unsigned k = t % 5 == 0 ? 32 : t % 5 == 1 ? 1 : 1 + (unsigned)(test_rand(&s) % 32);
		size_t len = (size_t)(test_rand(&s) % 200);
		char seq[200];
		for (size_t i = 0; i < len; i++)
			seq[i] = alphabet[test_rand(&s) % (t % 2 ? 8 : 10)];
		char *got;
		size_t n;
		EXPECT_RC(bfi_kmers(seq, len, k, &got, &n), 0);
		/* naive: every window of ACGT letters, canonical, first appearance */
		char want[200 * 32];
		size_t m = 0;
		for (size_t i = 0; i + k <= len; i++) {
			int ok = 1;
			for (unsigned j = 0; j < k && ok; j++)
				ok = strchr("ACGTacgt", seq[i + j]) != NULL;
			if (!ok)
				continue;
			char c[32];
			naive_canonical(seq + i, k, c);
			int dup = 0;
			for (size_t x = 0; x < m && !dup; x++)
				dup = memcmp(want + x * k, c, k) == 0;
			if (!dup)
				memcpy(want + k * m++, c, k);
		}
		EXPECT(n == m);
		if (n == m)
			EXPECT(memcmp(got, want, n * k) == 0);
		free(got);
	}
	char *o;
	size_t n;
	EXPECT_RC(bfi_kmers("ACGT", 4, 0, &o, &n), BFI_E_INVALID);
	EXPECT_RC(bfi_kmers("ACGT", 4, 256, &o, &n), BFI_E_INVALID);
	EXPECT_RC(bfi_kmers("ACGTNACG", 8, 4, &o, &n), 0);
	EXPECT(n == 1 && memcmp(o, "ACGT", 4) == 0); /* N breaks; ACG is too short */
	free(o);
	EXPECT_RC(bfi_kmers("TTTT", 4, 4, &o, &n), 0);
	EXPECT(n == 1 && memcmp(o, "AAAA", 4) == 0); /* reverse complement is smaller */
	free(o);
}

int main(void)
{
	test_run("query: parser accepts, refuses and locates errors", test_parser);
	test_run("query: canonical k-mers against a naive extractor", test_kmers);
	return test_exit();
}
