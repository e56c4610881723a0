/*
 * test_compile.c - queries compiled through the public API answer exactly
 * as `bfi query` does: text (all terms, and a threshold), DNA sequences
 * (k-mers from the catalog's k, a threshold) and paths, each over a
 * snapshot built from that kind of input, and each formed by the
 * catalog's rules alone (bfi_query_text, bfi_query_many's queries). The
 * library's answers are printed as `bfi query --ordinals` prints its own,
 * and compared line for line. Runs ./bfi from the source root.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "test.h"

/* The query, then each set: its ordinal, and its score for a threshold query. */
static void answer_line(FILE *out, const char *q, const bfi_result *res, int scored)
{
	fprintf(out, "%s", q);
	const uint32_t *ords = bfi_result_ordinals(res), *sc = bfi_result_scores(res);
	for (size_t i = 0; i < bfi_result_count(res); i++) {
		fprintf(out, "\t%u", ords[i]);
		if (scored)
			fprintf(out, "\t%u", sc[i]);
	}
	fputc('\n', out);
}

enum kind { TEXT_ALL, TEXT_THRESHOLD, KMERS, PATH };

/* The library's answers to each line of queries, as bfi query prints them, into want. */
static void library_answers(const char *snap, enum kind kind, const char *queries,
                            const char *want, int rules)
{
	bfi_snapshot *s = NULL;
	bfi_result *res = NULL;
	EXPECT_RC(bfi_open(snap, 0, &s), 0);
	EXPECT_RC(bfi_result_create(&res), 0);
	FILE *in = fopen(queries, "r"), *out = fopen(want, "w");
	EXPECT(s && res && in && out);
	char line[4096];
	while (s && res && in && out && fgets(line, sizeof line, in)) {
		size_t len = strcspn(line, "\n");
		line[len] = '\0';
		if (rules) { /* formed as the catalog says, by bfi_query_text */
			double theta = kind == KMERS ? 0.8 : kind == TEXT_THRESHOLD ? 0.5 : 0;
			EXPECT_RC(bfi_query_text(s, 0, line, len, theta, res), 0);
			answer_line(out, line, res, kind == KMERS || kind == TEXT_THRESHOLD);
			continue;
		}
		bfi_expr *e = NULL;
		int rc = kind == TEXT_ALL       ? bfi_expr_text(s, line, len, BFI_TEXT_ALL, &e)
		         : kind == TEXT_THRESHOLD ? bfi_expr_text(s, line, len, BFI_TEXT_TERMS, &e)
		         : kind == KMERS          ? bfi_expr_kmers(s, line, len, 0, &e)
		                                  : bfi_expr_path(s, line, len, &e);
		EXPECT_RC(rc, 0);
		if (e == NULL || bfi_expr_keys(e) == 0) { /* no term or k-mer: no set */
			fprintf(out, "%s\n", line);
			bfi_expr_free(&e);
			continue;
		}
		if (kind == TEXT_THRESHOLD || kind == KMERS)
			EXPECT_RC(bfi_query_threshold(s, 0, e, kind == KMERS ? 0.8 : 0.5, res), 0);
		else
			EXPECT_RC(bfi_query_expr(s, 0, e, res), 0);
		answer_line(out, line, res, kind == TEXT_THRESHOLD || kind == KMERS);
		bfi_expr_free(&e);
	}
	if (in)
		fclose(in);
	if (out)
		fclose(out);
	bfi_result_destroy(&res);
	bfi_close(&s);
}

/*
 * The same answers through bfi_query_many: every line in one call (texts
 * or sequences end to end), each answer cut from the one result at its
 * end. The lines are those of library_answers, so the files must match.
 */
static void many_answers(const char *snap, enum kind kind, const char *queries, const char *want,
                         int what)
{
	size_t len = 0;
	char *text = (char *)test_read_file(queries, &len);
	EXPECT(text != NULL);
	if (text == NULL)
		return;
	size_t n = 0, ends[64];
	const char *line[64];
	for (size_t at = 0; at < len && n < 64; n++) { /* the lines, their newlines cut out */
		char *nl = memchr(text + at, '\n', len - at);
		size_t end = nl ? (size_t)(nl - text) : len;
		line[n] = text + at;
		text[end] = '\0';
		at = end + 1;
	}
	/* end to end: the lines in order, the NULs between them left out */
	char *buf = malloc(len + 1);
	size_t used = 0;
	for (size_t i = 0; buf && i < n; i++) {
		memcpy(buf + used, line[i], strlen(line[i]));
		used += strlen(line[i]);
		ends[i] = used;
	}
	bfi_snapshot *s = NULL;
	bfi_result *res = NULL;
	EXPECT_RC(bfi_open(snap, 0, &s), 0);
	EXPECT_RC(bfi_result_create(&res), 0);
	size_t answer_ends[64], done = 99;
	int scored = kind != TEXT_ALL && kind != PATH;
	double theta = kind == KMERS ? 0.8 : kind == TEXT_THRESHOLD ? 0.5 : 0;
	EXPECT_RC(bfi_query_many(s, 0, what, 0, theta, buf, ends, n, res, answer_ends, &done), 0);
	EXPECT(done == n);
	FILE *out = fopen(want, "w");
	EXPECT(out != NULL);
	const uint32_t *ords = bfi_result_ordinals(res), *sc = bfi_result_scores(res);
	for (size_t i = 0, from = 0; out && done == n && i < n; from = answer_ends[i++]) {
		fprintf(out, "%s", line[i]);
		for (size_t j = from; j < answer_ends[i]; j++) {
			fprintf(out, "\t%u", ords[j]);
			if (scored)
				fprintf(out, "\t%u", sc[j]);
		}
		fputc('\n', out);
	}
	if (out)
		fclose(out);
	bfi_result_destroy(&res);
	bfi_close(&s);
	free(buf);
	free(text);
}

/* bfi query's answers (with extra options) against the library's. */
static void same_as_cli(const char *snap, enum kind kind, const char *queries, const char *opts)
{
	char want[4400], got[4400], cmd[14000];
	snprintf(want, sizeof want, "%s.want", queries);
	snprintf(got, sizeof got, "%s.got", queries);
	library_answers(snap, kind, queries, want, 0);
	snprintf(cmd, sizeof cmd, "./bfi query --ordinals %s '%s' <'%s' >'%s'", opts, snap, queries,
	         got);
	EXPECT(system(cmd) == 0);
	size_t a, b;
	uint8_t *x = test_read_file(want, &a), *y = test_read_file(got, &b);
	EXPECT(x && y && a == b && memcmp(x, y, a) == 0);
	if (x && y && (a != b || memcmp(x, y, a)))
		fprintf(stderr, "library:\n%.*s\nbfi query:\n%.*s\n", (int)a, (const char *)x, (int)b,
		        (const char *)y);
	/* a test that compares nothing passes nothing */
	EXPECT(a > 0 && memchr(x, '\t', a) != NULL);
	/* bfi_query_many, by kind and by the catalog's rules, and bfi_query_text: the same lines */
	for (int way = 0; way < 3; way++) {
		if (way == 0 && kind == PATH)
			continue;
		char other[4400];
		snprintf(other, sizeof other, "%s.way%d", queries, way);
		if (way == 2)
			library_answers(snap, kind, queries, other, 1);
		else
			many_answers(snap, kind, queries, other,
			             way == 1     ? BFI_MANY_QUERIES
			             : kind == KMERS ? BFI_MANY_SEQUENCES
			                             : BFI_MANY_TEXTS);
		size_t c;
		uint8_t *z = test_read_file(other, &c);
		EXPECT(z && c == b && memcmp(z, y, b) == 0);
		if (z && y && (c != b || memcmp(z, y, b)))
			fprintf(stderr, "%s:\n%.*s\nbfi query:\n%.*s\n",
			        way == 2 ? "bfi_query_text" : "bfi_query_many", (int)c, (const char *)z,
			        (int)b, (const char *)y);
		free(z);
	}
	free(x);
	free(y);
}

/* A test's files in the scratch directory: STEM's documents, snapshot and queries. */
struct files {
	char dir[4300], snap[4300], q[4300];
};

static void files_for(const char *stem, struct files *f)
{
	snprintf(f->dir, sizeof f->dir, "%s/%s", test_tmpdir(), stem);
	snprintf(f->snap, sizeof f->snap, "%s/%s.snap", test_tmpdir(), stem);
	snprintf(f->q, sizeof f->q, "%s/%s.q", test_tmpdir(), stem);
}

/* A directory of n documents, named prefix0, prefix1 ... plus suffix. */
static void write_docs(const char *dir, const char *prefix, const char *suffix,
                       const char *const *docs, size_t n)
{
	EXPECT(mkdir(dir, 0700) == 0);
	for (size_t i = 0; i < n; i++) {
		char p[4400];
		snprintf(p, sizeof p, "%s/%s%zu%s", dir, prefix, i, suffix);
		EXPECT(test_write_file(p, docs[i], strlen(docs[i])) == 0);
	}
}

static void test_text(void)
{
	struct files fs;
	files_for("text", &fs);
	char *dir = fs.dir, *snap = fs.snap, *q = fs.q, stops[4300];
	snprintf(stops, sizeof stops, "%s/stops", test_tmpdir());
	static const char *const docs[] = {
	    "The quick brown fox jumps over the lazy dog",
	    "A lazy afternoon: the dog sleeps, the fox waits",
	    "Compression tools for archives: gzip, bzip2 and xz",
	    "The web server answers requests; a proxy caches them",
	    "Brown bread and quick recipes for a lazy cook",
	};
	write_docs(dir, "doc", "", docs, sizeof docs / sizeof *docs);
	EXPECT(test_write_file(stops, "the a and for\n", 14) == 0);
	char cmd[14000];
	/* a term limit and stop words other than the defaults: they must come from the catalog */
	snprintf(cmd, sizeof cmd, "./bfi build -q -o '%s' --input text --max-term 5 --stop-words '%s' '%s'",
	         snap, stops, dir);
	EXPECT(system(cmd) == 0);
	const char *queries = "the lazy dog\nQuick Brown\ncompression\nthe and a\nlazy fox waits\n"
	                      "afternoons\nweb server proxy\n";
	EXPECT(test_write_file(q, queries, strlen(queries)) == 0);
	same_as_cli(snap, TEXT_ALL, q, "");
	same_as_cli(snap, TEXT_THRESHOLD, q, "-t 0.5");
}

static void test_kmers(void)
{
	struct files fs;
	files_for("fa", &fs);
	char *dir = fs.dir, *snap = fs.snap, *q = fs.q;
	EXPECT(mkdir(dir, 0700) == 0);
	uint64_t st = 42;
	char seq[8][2001];
	for (int g = 0; g < 8; g++) {
		for (int i = 0; i < 2000; i++)
			seq[g][i] = "ACGT"[test_rand(&st) % 4];
		seq[g][2000] = '\0';
		char p[4400], body[2100];
		snprintf(p, sizeof p, "%s/g%d.fa", dir, g);
		int n = snprintf(body, sizeof body, ">g%d\n%s\n", g, seq[g]);
		EXPECT(test_write_file(p, body, (size_t)n) == 0);
	}
	char cmd[14000];
	snprintf(cmd, sizeof cmd, "./bfi build -q -o '%s' --input fasta --kmer 21 '%s'", snap, dir);
	EXPECT(system(cmd) == 0);
	/* reads from the genomes, one mutated past 0.8, one absent, one short */
	FILE *f = fopen(q, "w");
	EXPECT(f != NULL);
	for (int g = 0; f && g < 8; g++) {
		char read[151];
		memcpy(read, seq[g] + 100 * g, 150);
		read[150] = '\0';
		if (g == 3)
			for (int i = 0; i < 150; i += 10)
				read[i] = read[i] == 'A' ? 'C' : 'A';
		fprintf(f, "%s\n", read);
	}
	if (f) {
		fprintf(f, "ACGTTGCAACGTTGCAACGTTGCAACGT\nACGT\n");
		fclose(f);
	}
	same_as_cli(snap, KMERS, q, "-t 0.8");

	/* bfi_query_many refuses what it cannot answer, and names the query that failed */
	bfi_snapshot *s = NULL;
	bfi_result *res = NULL;
	EXPECT_RC(bfi_open(snap, 0, &s), 0);
	EXPECT_RC(bfi_result_create(&res), 0);
	enum { BIG = 70000 }; /* more distinct 21-mers than one query takes */
	char *buf = malloc(2 * 150 + BIG);
	EXPECT(buf != NULL);
	if (s && res && buf) {
		memcpy(buf, seq[0], 150);
		memcpy(buf + 150, seq[1], 150);
		for (int i = 0; i < BIG; i++)
			buf[300 + i] = "ACGT"[test_rand(&st) % 4];
		size_t ends[3] = {150, 300, 300 + BIG}, aends[3], done = 99;
		EXPECT_RC(bfi_query_many(s, 0, BFI_MANY_SEQUENCES, 0, 0.8, buf, ends, 3, res, aends,
		                         &done),
		          BFI_E_LIMIT);
		EXPECT(done == 2 && aends[0] > 0 && aends[1] > aends[0]);
		size_t back[2] = {300, 150};
		EXPECT_RC(bfi_query_many(s, 0, BFI_MANY_SEQUENCES, 0, 0.8, buf, back, 2, res, aends,
		                         &done),
		          BFI_E_INVALID);
		EXPECT(done == 1);
		EXPECT_RC(bfi_query_many(s, 0, BFI_MANY_SEQUENCES, 0, 0, buf, ends, 2, res, aends,
		                         &done),
		          BFI_E_INVALID);
		EXPECT_RC(bfi_query_many(s, 0, BFI_MANY_SEQUENCES, 0, 1.5, buf, ends, 2, res, aends,
		                         &done),
		          BFI_E_INVALID);
		EXPECT_RC(bfi_query_many(s, 0, BFI_MANY_TEXTS, 0, 0.5, buf, ends, 2, res, aends, &done),
		          BFI_E_KEY_FORM);
		EXPECT(done == 0);
		EXPECT_RC(bfi_query_many(s, 0, BFI_MANY_SEQUENCES, 31, 0.8, buf, ends, 2, res, aends,
		                         &done),
		          BFI_E_KEY_FORM);
		EXPECT_RC(bfi_query_many(s, 0, 4, 0, 0.8, buf, ends, 2, res, aends, &done),
		          BFI_E_INVALID);
		/* the forms: the catalog's choice, and refusals of what would match nothing */
		struct bfi_form fm;
		EXPECT_RC(bfi_query_form(s, BFI_FORM_AUTO, 0, 0, &fm), 0);
		EXPECT(fm.form == BFI_FORM_KMERS && fm.k == 21 && fm.theta == 1.0);
		EXPECT_RC(bfi_query_form(s, BFI_FORM_AUTO, 0, 0.8, &fm), 0);
		EXPECT(fm.form == BFI_FORM_KMERS && fm.theta == 0.8);
		EXPECT_RC(bfi_query_form(s, BFI_FORM_KMERS, 21, 0, &fm), 0);
		EXPECT_RC(bfi_query_form(s, BFI_FORM_KMERS, 31, 0, &fm), BFI_E_KEY_FORM);
		EXPECT_RC(bfi_query_form(s, BFI_FORM_TEXT, 0, 0, &fm), BFI_E_KEY_FORM);
		EXPECT_RC(bfi_query_form(s, BFI_FORM_PATH, 0, 0, &fm), BFI_E_KEY_FORM);
		EXPECT_RC(bfi_query_form(s, BFI_FORM_KEY, 0, 0, &fm), 0);
		EXPECT(fm.form == BFI_FORM_KEY && fm.theta == 0);
		EXPECT_RC(bfi_query_form(s, BFI_FORM_KEY, 0, 0.5, &fm), 0);
		EXPECT(fm.form == BFI_FORM_WORDS && fm.theta == 0.5);
		EXPECT_RC(bfi_query_form(s, BFI_FORM_EXPR, 0, 0.5, &fm), BFI_E_INVALID);
		EXPECT_RC(bfi_query_form(s, BFI_FORM_PROTEIN + 1, 0, 0, &fm), BFI_E_INVALID);
		EXPECT_RC(bfi_query_form(s, BFI_FORM_AUTO, 0, 1.5, &fm), BFI_E_INVALID);
		/* a refusal said by the library, from the catalog's rules; what it allows, not */
		char why[200];
		EXPECT_RC(bfi_form_refused(s, BFI_FORM_KMERS, 31, why, sizeof why), 0);
		EXPECT(strstr(why, "21-mers") && strstr(why, "31-mers would match nothing"));
		EXPECT_RC(bfi_form_refused(s, BFI_FORM_TEXT, 0, why, sizeof why), 0);
		EXPECT(strstr(why, "fasta input") && strstr(why, "text queries would match nothing"));
		EXPECT_RC(bfi_form_refused(s, BFI_FORM_KMERS, 21, why, sizeof why), BFI_E_INVALID);
		EXPECT_RC(bfi_form_refused(s, BFI_FORM_KEY, 0, why, sizeof why), BFI_E_INVALID);
		/* each form's name, and back */
		for (int form = BFI_FORM_AUTO; form <= BFI_FORM_WORDS; form++) {
			const char *n = bfi_form_name(form);
			EXPECT(n && bfi_form_parse(n, strlen(n)) == form);
		}
		EXPECT(bfi_form_name(BFI_FORM_PROTEIN + 1) == NULL && bfi_form_name(-1) == NULL);
		EXPECT(bfi_form_parse("kmer", 4) == -1 && bfi_form_parse("expr", 4) == BFI_FORM_EXPR);
		/* a read shorter than k: no set, with scores, as bfi_query_as answers it */
		EXPECT_RC(bfi_query_form(s, BFI_FORM_AUTO, 0, 0.8, &fm), 0);
		EXPECT_RC(bfi_query_as(s, 0, &fm, "ACGT", 4, res), 0);
		EXPECT(bfi_result_count(res) == 0 && bfi_result_scores(res) != NULL);
		/* none at all: an empty answer */
		EXPECT_RC(bfi_query_many(s, 0, BFI_MANY_SEQUENCES, 0, 0.8, buf, ends, 0, res, aends,
		                         &done),
		          0);
		EXPECT(done == 0 && bfi_result_count(res) == 0);
	}
	free(buf);
	bfi_result_destroy(&res);
	bfi_close(&s);
}

static void test_paths(void)
{
	struct files fs;
	files_for("json", &fs);
	char *dir = fs.dir, *snap = fs.snap, *q = fs.q;
	static const char *const docs[] = {
	    "{\"a\": {\"b\": {\"c\": 1}}}",
	    "{\"a\": [{\"x\": {\"c\": 2}}, {\"b\": 3}]}",
	    "{\"root\": {\"a\": {\"b\": {\"d\": {}}}}}",
	};
	write_docs(dir, "d", ".json", docs, sizeof docs / sizeof *docs);
	char cmd[14000];
	snprintf(cmd, sizeof cmd, "./bfi build -q -o '%s' --input json '%s'", snap, dir);
	EXPECT(system(cmd) == 0);
	const char *queries = "/a/b\na/b\n/a/*/c\nb/d\n/root/a\nx/c\n";
	EXPECT(test_write_file(q, queries, strlen(queries)) == 0);
	same_as_cli(snap, PATH, q, "");
}

int main(void)
{
	test_run("compile: text, all terms and a threshold, as bfi query answers", test_text);
	test_run("compile: DNA reads as k-mers at the catalog's k, as bfi query answers", test_kmers);
	test_run("compile: paths over JSON documents, as bfi query answers", test_paths);
	return test_exit();
}
