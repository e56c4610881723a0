/*
 * test_text.c - the text tokenizer (format/bfi_text.h) and text documents
 * as input (bfi_writer_add_text), against an oracle written here: a term is
 * a maximal run of ASCII letters and digits, lower-cased, kept when it has
 * at most max_term bytes. A build from documents must write the same index,
 * byte for byte, as a build from set<TAB>term lines of the oracle's terms,
 * and stop words and a term limit must reach the catalog for queries.
 */
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "bfi_text.h"
#include "test.h"

struct got {
	char t[64][BFI_TERM_MAX + 1];
	int n;
};

static int collect(void *ctx, const char *term, size_t len)
{
	struct got *g = ctx;
	if (g->n < 64) {
		memcpy(g->t[g->n], term, len);
		g->t[g->n++][len] = '\0';
	}
	return 0;
}

static void check_terms(const char *text, unsigned max, const char *want)
{
	struct got g = {.n = 0};
	struct bfi_tokenizer t;
	bfi_tokenizer_init(&t, max);
	EXPECT_RC(bfi_tokenize(&t, text, strlen(text), collect, &g), 0);
	EXPECT_RC(bfi_tokenize_end(&t, collect, &g), 0);
	char joined[1024] = "";
	for (int i = 0; i < g.n; i++) {
		strcat(joined, i ? " " : "");
		strcat(joined, g.t[i]);
	}
	if (strcmp(joined, want) != 0)
		fprintf(stderr, "tokenize(\"%s\", %u) gave \"%s\", want \"%s\"\n", text, max, joined, want);
	EXPECT(strcmp(joined, want) == 0);
	/* fed one byte at a time, the same terms */
	struct got g1 = {.n = 0};
	bfi_tokenizer_init(&t, max);
	for (size_t i = 0; text[i]; i++)
		EXPECT_RC(bfi_tokenize(&t, text + i, 1, collect, &g1), 0);
	EXPECT_RC(bfi_tokenize_end(&t, collect, &g1), 0);
	EXPECT(g1.n == g.n);
	for (int i = 0; i < g.n && i < g1.n; i++)
		EXPECT(strcmp(g.t[i], g1.t[i]) == 0);
}

/* The examples of spec/format.md, "Text keys", and the edges. */
static void test_tokenizer(void)
{
	check_terms("Hello, World! 2026-11-22 e-mail", 32, "hello world 2026 11 22 e mail");
	check_terms("caf\xc3\xa9 na\xc3\xafve", 32, "caf na ve"); /* UTF-8 bytes separate */
	check_terms("abcdefgh abcdefghi ab", 8, "abcdefgh ab");     /* longer runs are dropped */
	check_terms("  MiXeD123case\t\r\nx", 32, "mixed123case x");
	check_terms("", 32, "");
	check_terms("...", 32, "");
	check_terms("end", 3, "end");
	check_terms("ends", 3, "");
}

enum { DOCS = 40 };
static char dir[4200];

/* Write random documents and the oracle's set<TAB>term lines for them. */
static void write_docs(const char *tsv_path)
{
	uint64_t st = 5;
	static const char *words[] = {"Alpha", "beta", "GAMMA", "delta42", "x", "tenletters",
	                              "elevenchars", "la-la", "caf\xc3\xa9", "2026", "z9"};
	FILE *tsv = fopen(tsv_path, "w");
	for (int d = 0; d < DOCS; d++) {
		char name[32], path[4300];
		snprintf(name, sizeof name, "doc%02d%s", d, d % 5 == 0 ? ".txt.gz" : ".txt");
		snprintf(path, sizeof path, "%s/%s", dir, name);
		char text[8192] = "";
		size_t nw = 5 + test_rand(&st) % 60;
		for (size_t i = 0; i < nw; i++) {
			strcat(text, words[test_rand(&st) % (sizeof words / sizeof *words)]);
			strcat(text, test_rand(&st) % 4 ? " " : ",\n");
		}
		if (d % 5 == 0) {
			gzFile gz = gzopen(path, "wb");
			gzputs(gz, text);
			gzclose(gz);
		} else {
			EXPECT_RC(test_write_file(path, text, strlen(text)), 0);
		}
		/* the oracle: its own scan, at most 10 bytes a term, distinct, in order */
		char seen[4096] = " ";
		for (size_t i = 0; text[i];) {
			size_t j = i;
			char term[64];
			size_t n = 0;
			while (text[j] && ((text[j] >= 'a' && text[j] <= 'z') || (text[j] >= 'A' && text[j] <= 'Z') ||
			                   (text[j] >= '0' && text[j] <= '9'))) {
				if (n < sizeof term - 1)
					term[n++] = (char)(text[j] >= 'A' && text[j] <= 'Z' ? text[j] + 32 : text[j]);
				j++;
			}
			term[n] = '\0';
			char key[80];
			snprintf(key, sizeof key, " %s ", term);
			if (n && n <= 10 && !strstr(seen, key)) {
				strcat(seen, term);
				strcat(seen, " ");
				fprintf(tsv, "doc%02d%s\t%s\n", d, d % 5 == 0 ? ".txt" : ".txt", term);
			}
			i = j > i ? j : i + 1;
		}
	}
	fclose(tsv);
}

static int build(const char *out, int from_text, const char *tsv, const char *stops)
{
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	bfi_writer *w;
	int rc = bfi_writer_create(&o, &w);
	if (rc == 0 && from_text)
		rc = bfi_writer_add_text(w, dir, 10, stops);
	if (rc == 0 && !from_text) {
		FILE *f = fopen(tsv, "r");
		rc = f ? bfi_writer_add_tsv(w, f, tsv) : -1;
		if (f)
			fclose(f);
	}
	if (rc == 0)
		rc = bfi_writer_finish(w, out, NULL);
	bfi_writer_destroy(&w);
	return rc;
}

static void test_documents(void)
{
	snprintf(dir, sizeof dir, "%s/docs", test_tmpdir());
	mkdir(dir, 0755);
	char tsv[4300], a[4300], b[4300];
	snprintf(tsv, sizeof tsv, "%s/terms.tsv", test_tmpdir());
	snprintf(a, sizeof a, "%s/from-text", test_tmpdir());
	snprintf(b, sizeof b, "%s/from-tsv", test_tmpdir());
	write_docs(tsv);
	EXPECT_RC(build(a, 1, NULL, NULL), 0);
	EXPECT_RC(build(b, 0, tsv, NULL), 0);
	/* the term limit (10) is not the default, so the text build records it in
	 * the catalog: compare the index past its header, which binds the catalog */
	char ia[4400], ib[4400];
	snprintf(ia, sizeof ia, "%s/index.bfi", a);
	snprintf(ib, sizeof ib, "%s/index.bfi", b);
	size_t la, lb;
	uint8_t *ba = test_read_file(ia, &la), *bb = test_read_file(ib, &lb);
	EXPECT(ba && bb && la == lb && la > 128 && memcmp(ba + 128, bb + 128, la - 128) == 0);
	free(ba);
	free(bb);
	bfi_snapshot *s;
	EXPECT_RC(bfi_open(a, 0, &s), 0);
	if (!s)
		return;
	const void *v;
	size_t vl;
	EXPECT_RC(bfi_catalog_meta(s, "text_max_term", &v, &vl), 0);
	EXPECT(vl == 2 && memcmp(v, "10", 2) == 0);
	EXPECT_RC(bfi_catalog_meta(s, "text_stop_words", &v, &vl), BFI_E_NOT_FOUND);
	uint32_t ord;
	EXPECT_RC(bfi_set_find(s, "doc00.txt", 9, &ord), 0); /* ".gz" is not part of the name */
	bfi_close(&s);
}

/* Stop words: left out of every set, and recorded for queries. */
static void test_stop_words(void)
{
	char stops[4300], snap[4300];
	snprintf(stops, sizeof stops, "%s/stops", test_tmpdir());
	snprintf(snap, sizeof snap, "%s/stopped", test_tmpdir());
	EXPECT_RC(test_write_file(stops, "GAMMA x\nbeta\n", 13), 0);
	EXPECT_RC(build(snap, 1, NULL, stops), 0);
	bfi_snapshot *s;
	bfi_result *r;
	EXPECT_RC(bfi_open(snap, 0, &s), 0);
	EXPECT_RC(bfi_result_create(&r), 0);
	if (!s || !r)
		return;
	const void *v;
	size_t vl;
	EXPECT_RC(bfi_catalog_meta(s, "text_stop_words", &v, &vl), 0);
	EXPECT(vl == 13 && memcmp(v, "beta\ngamma\nx\n", 13) == 0);
	int hits = 0;
	for (int i = 0; i < 3; i++) {
		static const char *const sw[] = {"gamma", "x", "beta"};
		EXPECT_RC(bfi_query_key(s, sw[i], strlen(sw[i]), r), 0);
		hits += (int)bfi_result_count(r);
	}
	EXPECT(hits < 3); /* at most false positives, not the 40 documents */
	EXPECT_RC(bfi_query_key(s, "alpha", 5, r), 0);
	EXPECT(bfi_result_count(r) > 10);
	bfi_result_destroy(&r);
	bfi_close(&s);
	/* a second input that disagrees on the tokenizer is refused */
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	bfi_writer *w;
	EXPECT_RC(bfi_writer_create(&o, &w), 0);
	EXPECT_RC(bfi_writer_add_text(w, dir, 10, stops), 0);
	char other[4300];
	snprintf(other, sizeof other, "%s/other", test_tmpdir());
	mkdir(other, 0755);
	char path[4400];
	snprintf(path, sizeof path, "%s/one", other);
	EXPECT_RC(test_write_file(path, "word", 4), 0);
	EXPECT_RC(bfi_writer_add_text(w, other, 12, stops), BFI_E_INPUT);
	EXPECT(strstr(bfi_writer_errmsg(w), "term length") != NULL);
	EXPECT_RC(bfi_writer_add_text(w, other, 0, NULL), BFI_E_INPUT);
	EXPECT_RC(bfi_writer_add_text(w, other, 300, NULL), BFI_E_INVALID);
	bfi_writer_destroy(&w);
}

int main(void)
{
	test_run("text: the tokenizer, whole and a byte at a time", test_tokenizer);
	test_run("text: documents give the oracle's terms, as their TSV does", test_documents);
	test_run("text: stop words are left out and recorded for queries", test_stop_words);
	test_cleanup();
	return test_exit();
}
