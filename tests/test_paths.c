/*
 * test_paths.c - JSON and XML documents as path keys, and path queries,
 * against exact path matching over the documents: 1,200 generated
 * documents of 4 to 6 levels, half XML and half JSON, indexed with the
 * breadth encoding, the depth encoding and both. Every true match must be
 * returned; the false-positive rate of each encoding is measured, and the
 * false positives Koloniari and Pitoura describe are reproduced.
 */
#include <string.h>
#include <sys/stat.h>

#include "bfi_paths.h"
#include "test.h"

enum { DOCS = 1200, NAMES = 10, MAXP = 512, MAXD = 6 };
static const char *vocab[NAMES] = {"a", "b", "c", "d", "e", "k", "f", "m", "n", "x"};

/* Each document: its element paths from the root, as name indexes. */
struct doc {
	int npaths;
	unsigned char len[MAXP];
	unsigned char name[MAXP][MAXD];
};
static struct doc docs[DOCS];
static char dir[4200];

struct out {
	char *p;
	size_t n, cap;
};
static void emit(struct out *o, const char *s)
{
	size_t l = strlen(s);
	if (o->n + l + 1 > o->cap) {
		o->cap = (o->n + l + 1) * 2;
		o->p = realloc(o->p, o->cap);
	}
	memcpy(o->p + o->n, s, l + 1);
	o->n += l;
}

/* A random element and its children, written as XML or JSON, paths recorded. */
static void gen(uint64_t *st, struct doc *d, unsigned char *path, int depth, int max, int xml,
                struct out *o)
{
	int name = (int)(test_rand(st) % NAMES);
	path[depth] = (unsigned char)name;
	if (d->npaths < MAXP) {
		d->len[d->npaths] = (unsigned char)(depth + 1);
		memcpy(d->name[d->npaths], path, (size_t)depth + 1);
		d->npaths++;
	}
	int kids = depth + 1 < max ? (int)(test_rand(st) % 3) + (depth < 3) : 0;
	char buf[64];
	if (xml) {
		snprintf(buf, sizeof buf, "<%s>", vocab[name]);
		emit(o, buf);
		for (int i = 0; i < kids; i++)
			gen(st, d, path, depth + 1, max, xml, o);
		snprintf(buf, sizeof buf, "</%s>", vocab[name]);
		emit(o, buf);
	} else {
		/* "name": {children as one object each, in an array} or a scalar */
		snprintf(buf, sizeof buf, "{\"%s\": ", vocab[name]);
		emit(o, buf);
		if (kids == 0) {
			emit(o, "1");
		} else {
			emit(o, "[");
			for (int i = 0; i < kids; i++) {
				if (i)
					emit(o, ", ");
				gen(st, d, path, depth + 1, max, xml, o);
			}
			emit(o, "]");
		}
		emit(o, "}");
	}
}

static void write_corpus(void)
{
	snprintf(dir, sizeof dir, "%s/docs", test_tmpdir());
	mkdir(dir, 0755);
	uint64_t st = 17;
	for (int i = 0; i < DOCS; i++) {
		struct out o = {NULL, 0, 0};
		unsigned char path[MAXD];
		int xml = i % 2;
		gen(&st, &docs[i], path, 0, 4 + (int)(test_rand(&st) % 3), xml, &o);
		char p[4300];
		snprintf(p, sizeof p, "%s/doc%04d.%s", dir, i, xml ? "xml" : "json");
		EXPECT_RC(test_write_file(p, o.p, o.n), 0);
		free(o.p);
	}
}

/* Query: names (index, or -1 for '*'), root-anchored or not. */
struct q {
	int root, n;
	int t[8];
};

/* Does path p[0..len) match q from position at (query index qi)? '*' is one or more. */
static int match_from(const struct q *q, int qi, const unsigned char *p, int len, int at)
{
	if (qi == q->n)
		return 1; /* the query may end anywhere */
	if (at >= len)
		return 0;
	if (q->t[qi] < 0) {
		for (int skip = 1; at + skip <= len; skip++) /* '*' takes p[at .. at + skip) */
			if (match_from(q, qi + 1, p, len, at + skip))
				return 1;
		return 0;
	}
	return p[at] == q->t[qi] && match_from(q, qi + 1, p, len, at + 1);
}

static int doc_matches(const struct doc *d, const struct q *q)
{
	for (int i = 0; i < d->npaths; i++)
		for (int s = 0; s < (q->root ? 1 : d->len[i]); s++)
			if (match_from(q, 0, d->name[i], d->len[i], s))
				return 1;
	return 0;
}

static void q_text(const struct q *q, char *buf, size_t cap)
{
	size_t at = 0;
	buf[0] = '\0';
	for (int i = 0; i < q->n; i++)
		at += (size_t)snprintf(buf + at, cap - at, "%s%s", i || q->root ? "/" : "",
		                       q->t[i] < 0 ? "*" : vocab[q->t[i]]);
}

static int build(const char *out, unsigned enc)
{
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	o.keep_order = 1;
	bfi_writer *w;
	int rc = bfi_writer_create(&o, &w);
	/* the XML and the JSON documents: one call each, the other files refused by the parser */
	char x[4300];
	snprintf(x, sizeof x, "%s", dir);
	for (int i = 0; rc == 0 && i < DOCS; i++) {
		char p[4400];
		snprintf(p, sizeof p, "%s/doc%04d.%s", x, i, i % 2 ? "xml" : "json");
		rc = bfi_writer_add_paths(w, p, i % 2, enc, 0);
	}
	if (rc == 0)
		rc = bfi_writer_finish(w, out, NULL);
	bfi_writer_destroy(&w);
	return rc;
}

static void test_corpus(void)
{
	write_corpus();
	static const unsigned encs[3] = {BFI_PATHS_BREADTH, BFI_PATHS_DEPTH,
	                                 BFI_PATHS_BREADTH | BFI_PATHS_DEPTH};
	static const char *enames[3] = {"breadth", "depth", "both"};
	uint64_t st = 5;
	enum { QUERIES = 300 };
	static struct q qs[QUERIES];
	for (int i = 0; i < QUERIES; i++) {
		struct q *q = &qs[i];
		q->root = (int)(test_rand(&st) % 3 == 0);
		q->n = 2 + (int)(test_rand(&st) % 3);
		if (i % 2) { /* half from a real path, so that some match */
			const struct doc *d = &docs[test_rand(&st) % DOCS];
			int pi = (int)(test_rand(&st) % (uint64_t)d->npaths), len = d->len[pi];
			if (len < q->n)
				q->n = len;
			int start = q->root ? 0 : (int)(test_rand(&st) % (uint64_t)(len - q->n + 1));
			for (int j = 0; j < q->n; j++)
				q->t[j] = d->name[pi][start + j];
		} else {
			for (int j = 0; j < q->n; j++)
				q->t[j] = (int)(test_rand(&st) % NAMES);
		}
		if (q->n >= 3 && test_rand(&st) % 3 == 0)
			q->t[1] = -1; /* a wildcard in the middle */
	}
	for (int e = 0; e < 3; e++) {
		char snap[4300];
		snprintf(snap, sizeof snap, "%s/paths-%s", test_tmpdir(), enames[e]);
		EXPECT_RC(build(snap, encs[e]), 0);
		bfi_snapshot *s;
		bfi_result *r;
		EXPECT_RC(bfi_open(snap, 0, &s), 0);
		EXPECT_RC(bfi_result_create(&r), 0);
		if (!s || !r)
			return;
		uint64_t fn = 0, fp = 0, negatives = 0, positives = 0;
		for (int i = 0; i < QUERIES; i++) {
			char text[128];
			q_text(&qs[i], text, sizeof text);
			bfi_expr *ex;
			EXPECT_RC(bfi_expr_path(s, text, strlen(text), &ex), 0);
			if (!ex)
				continue;
			EXPECT_RC(bfi_query_expr(s, BFI_LAYOUT_FLAT, ex, r), 0);
			bfi_expr_free(&ex);
			static unsigned char got[DOCS];
			memset(got, 0, sizeof got);
			for (size_t x = 0; x < bfi_result_count(r); x++)
				got[bfi_result_ordinals(r)[x]] = 1; /* keep_order: ordinal = doc */
			for (int d = 0; d < DOCS; d++) {
				int truth = doc_matches(&docs[d], &qs[i]);
				positives += truth;
				negatives += !truth;
				fn += truth && !got[d];
				fp += !truth && got[d];
			}
		}
		printf("%-7s: %d documents, %d path queries: %llu true matches, %llu false negatives, "
		       "FPR %.4f (%llu of %llu)\n",
		       enames[e], DOCS, QUERIES, (unsigned long long)positives, (unsigned long long)fn,
		       (double)fp / (double)negatives, (unsigned long long)fp,
		       (unsigned long long)negatives);
		EXPECT(fn == 0);
		EXPECT(positives > 1000);
		EXPECT((double)fp / (double)negatives < 0.25);
		bfi_result_destroy(&r);
		bfi_close(&s);
	}
}

/* One document, one query: returned or not, with each encoding. */
static int answers(const char *json, const char *query, unsigned enc)
{
	char path[4300], snap[4300];
	snprintf(path, sizeof path, "%s/one.json", test_tmpdir());
	snprintf(snap, sizeof snap, "%s/one-%u", test_tmpdir(), enc);
	EXPECT_RC(test_write_file(path, json, strlen(json)), 0);
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	bfi_writer *w;
	int rc = bfi_writer_create(&o, &w);
	if (rc == 0)
		rc = bfi_writer_add_paths(w, path, 0, enc, 0);
	if (rc == 0)
		rc = bfi_writer_finish(w, snap, NULL);
	bfi_writer_destroy(&w);
	EXPECT_RC(rc, 0);
	bfi_snapshot *s;
	bfi_result *r;
	bfi_expr *e;
	EXPECT_RC(bfi_open(snap, 0, &s), 0);
	EXPECT_RC(bfi_result_create(&r), 0);
	EXPECT_RC(bfi_expr_path(s, query, strlen(query), &e), 0);
	int hit = -1;
	if (s && r && e && bfi_query_expr(s, BFI_LAYOUT_FLAT, e, r) == 0)
		hit = bfi_result_count(r) == 1;
	bfi_expr_free(&e);
	bfi_result_destroy(&r);
	bfi_close(&s);
	return hit;
}

/* The paper's false positives, and the ones its fixes remove. */
static void test_paper_cases(void)
{
	unsigned B = BFI_PATHS_BREADTH, D = BFI_PATHS_DEPTH;
	/* a/b/c/d/e and a/k/f/m/n in one document: a/b/ * /m/n is split at the
	 * wildcard into a/b and m/n, both present: a false positive of depth */
	const char *two = "{\"a\": [{\"b\": {\"c\": {\"d\": {\"e\": 1}}}}, {\"k\": {\"f\": {\"m\": {\"n\": 1}}}}]}";
	EXPECT(answers(two, "a/b/*/m/n", D) == 1);
	EXPECT(answers(two, "a/b/*/m/n", B) == 1); /* breadth too: b at 2, m at 4, n at 5 */
	EXPECT(answers(two, "a/b/*/e", D) == 1);    /* a true match */
	EXPECT(answers(two, "b/f", D) == 0);        /* no such sub-path */
	/* a/b/c and a/x/d: /a/b/d has each name at its level (breadth says yes),
	 * but no sub-path b/d (depth says no) */
	const char *lv = "{\"a\": {\"b\": {\"c\": 1}, \"x\": {\"d\": 1}}}";
	EXPECT(answers(lv, "/a/b/d", B) == 1);
	EXPECT(answers(lv, "/a/b/d", D) == 0);
	EXPECT(answers(lv, "/a/b/d", B | D) == 0);
	/* a partial path is not a path from the root: x/a/b has a/b, not /a/b */
	const char *deep = "{\"x\": {\"a\": {\"b\": 1}}}";
	EXPECT(answers(deep, "a/b", D) == 1);
	EXPECT(answers(deep, "/a/b", D) == 0);
	EXPECT(answers(deep, "/a/b", B) == 0);
	EXPECT(answers(deep, "/x/*", D) == 1);
	EXPECT(answers(deep, "/*/b", B) == 1);
	EXPECT(answers(deep, "/*/*/*/b", B) == 0); /* deeper than the document */
}

static void test_bad_input(void)
{
	char path[4300], snap[4300];
	snprintf(snap, sizeof snap, "%s/bad", test_tmpdir());
	static const struct {
		const char *text;
		int xml;
	} bad[] = {{"{\"a\": ", 0}, {"{\"a\": 1} x", 0}, {"<a><b></a>", 1}, {"", 1}};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		snprintf(path, sizeof path, "%s/bad%zu", test_tmpdir(), i);
		EXPECT_RC(test_write_file(path, bad[i].text, strlen(bad[i].text)), 0);
		struct bfi_build_options o;
		bfi_build_options_init(&o);
		bfi_writer *w;
		EXPECT_RC(bfi_writer_create(&o, &w), 0);
		/* a file named on its own is read with those after it: the error
		 * comes from the add or, at the latest, from finish */
		int rc = bfi_writer_add_paths(w, path, bad[i].xml, BFI_PATHS_DEPTH, 0);
		if (rc == 0)
			rc = bfi_writer_finish(w, snap, NULL);
		EXPECT_RC(rc, BFI_E_INPUT);
		EXPECT(strstr(bfi_writer_errmsg(w), "bad") != NULL);
		bfi_writer_destroy(&w);
	}
	/* 70 levels: past the limit, refused rather than cut */
	char deep[1024] = "";
	for (int i = 0; i < 70; i++)
		strcat(deep, "<a>");
	for (int i = 0; i < 70; i++)
		strcat(deep, "</a>");
	snprintf(path, sizeof path, "%s/deep.xml", test_tmpdir());
	EXPECT_RC(test_write_file(path, deep, strlen(deep)), 0);
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	bfi_writer *w;
	EXPECT_RC(bfi_writer_create(&o, &w), 0);
	int rc = bfi_writer_add_paths(w, path, 1, BFI_PATHS_DEPTH, 0);
	if (rc == 0)
		rc = bfi_writer_finish(w, snap, NULL);
	EXPECT_RC(rc, BFI_E_LIMIT);
	bfi_writer_destroy(&w);
	struct stat st;
	EXPECT(stat(snap, &st) != 0);
}

int main(void)
{
	test_run("paths: 1,200 JSON/XML documents against exact path matching", test_corpus);
	test_run("paths: the paper's false positives, and what removes them", test_paper_cases);
	test_run("paths: malformed and too deep documents are refused", test_bad_input);
	test_cleanup();
	return test_exit();
}
