/*
 * paths.c - path queries over JSON/XML snapshots (spec/format.md, "Path
 * keys"), rewritten into AND/OR expressions over the keys the writer made,
 * following Koloniari and Pitoura's lookups:
 *   breadth: every name at any level ("@a:"), and, OR-ed over every way the
 *            path can sit on the levels, each name at its level ("@bL:");
 *   depth:   every sub-path of each run of names between wildcards
 *            ("@dN:"), and for a path from the root, its first run from
 *            the root ("@r:/").
 * A true match always has every key asked for, so nothing is missed; the
 * false positives are the paper's (see the spec).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bfi_paths.h"
#include "expr.h"

#define MAX_NAMES 64
#define MAX_PLACEMENTS 4096

struct pq {
	int root;                   /* starts with '/' */
	size_t n;                   /* names */
	char *name[MAX_NAMES];      /* unescaped */
	size_t len[MAX_NAMES];
	unsigned stars_before[MAX_NAMES + 1]; /* wildcards before name i; [n]: after the last */
};

struct sbuf {
	char *p;
	size_t n, cap;
	int oom;
};

static void sb_add(struct sbuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->n + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->n + n + 1)
			cap *= 2;
		char *np = realloc(b->p, cap);
		if (np == NULL) {
			b->oom = 1;
			return;
		}
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = '\0';
}

static void sb_str(struct sbuf *b, const char *s)
{
	sb_add(b, s, strlen(s));
}

/* A key, quoted for the expression parser. */
static void sb_key(struct sbuf *b, char kind, unsigned num, const char *const *names,
                   const size_t *lens, size_t n)
{
	size_t need = bfi_path_key(NULL, 0, kind, num, names, lens, n);
	char *k = malloc(need + 1);
	if (k == NULL) {
		b->oom = 1;
		return;
	}
	bfi_path_key(k, need + 1, kind, num, names, lens, n);
	sb_add(b, " \"", 2);
	for (size_t i = 0; i < need; i++) {
		if (k[i] == '"' || k[i] == '\\')
			sb_add(b, "\\", 1);
		sb_add(b, k + i, 1);
	}
	sb_add(b, "\" ", 2);
	free(k);
}

static int parse(const char *t, size_t len, struct pq *q)
{
	memset(q, 0, sizeof *q);
	size_t i = 0;
	if (i < len && t[i] == '/') {
		q->root = 1;
		i++;
	}
	if (i == len)
		return BFI_E_SYNTAX;
	for (;;) {
		/* one segment: a name, or '*' */
		size_t start = i;
		char *nm = malloc(len - i + 1);
		size_t nl = 0;
		if (nm == NULL)
			return -ENOMEM;
		while (i < len && t[i] != '/') {
			if (t[i] == '\\' && i + 1 < len)
				i++;
			nm[nl++] = t[i++];
		}
		if (nl == 0) { /* an empty segment: "a//b", "a/" */
			free(nm);
			return BFI_E_SYNTAX;
		}
		if (nl == 1 && nm[0] == '*' && t[start] == '*') {
			free(nm);
			q->stars_before[q->n]++;
		} else {
			if (q->n == MAX_NAMES) {
				free(nm);
				return BFI_E_LIMIT;
			}
			q->name[q->n] = nm;
			q->len[q->n++] = nl;
		}
		if (i == len)
			break;
		i++; /* the '/' */
		if (i == len)
			return BFI_E_SYNTAX;
	}
	return q->n ? 0 : BFI_E_SYNTAX; /* "*" alone asks for nothing */
}

/* Runs of names between wildcards: [first[r], first[r] + run[r]). */
static size_t runs(const struct pq *q, size_t *first, size_t *run)
{
	size_t r = 0;
	for (size_t i = 0; i < q->n; i++) {
		if (i == 0 || q->stars_before[i]) {
			first[r] = i;
			run[r++] = 0;
		}
		run[r - 1]++;
	}
	return r;
}

/* Breadth: OR over placements of the runs on levels 1 .. levels. */
static void place(struct sbuf *b, const struct pq *q, const size_t *first, const size_t *run,
                  size_t r, size_t nr, unsigned at, unsigned levels, unsigned *lvl, size_t *count)
{
	if (r == nr) {
		if (at - 1 + q->stars_before[q->n] > levels || ++*count > MAX_PLACEMENTS)
			return;
		sb_str(b, *count > 1 ? " OR (" : " (");
		for (size_t x = 0; x < nr; x++)
			for (size_t j = 0; j < run[x]; j++) {
				size_t i = first[x] + j;
				const char *nm = q->name[i];
				sb_key(b, 'b', lvl[x] + (unsigned)j, &nm, &q->len[i], 1);
			}
		sb_str(b, ")");
		return;
	}
	unsigned lo = at + q->stars_before[first[r]];
	/* from the root, and no wildcard first: the first run starts at level 1 */
	unsigned hi = r == 0 && q->root && q->stars_before[0] == 0 ? lo : levels;
	for (unsigned s = lo; s <= hi && s + run[r] - 1 <= levels && *count <= MAX_PLACEMENTS; s++) {
		lvl[r] = s;
		place(b, q, first, run, r + 1, nr, s + (unsigned)run[r], levels, lvl, count);
	}
}

int bfi_expr_path(const bfi_snapshot *s, const char *text, size_t len, bfi_expr **out)
{
	if (s == NULL || out == NULL || (text == NULL && len))
		return BFI_E_INVALID;
	*out = NULL;
	const void *ev;
	size_t el;
	int rc = bfi_catalog_meta(s, BFI_META_PATHS, &ev, &el);
	if (rc)
		return rc == BFI_E_NOT_FOUND ? BFI_E_INVALID : rc; /* not a JSON/XML snapshot */
	unsigned enc = 0;
	if (el >= 7 && !memcmp(ev, "breadth", 7))
		enc |= BFI_PATHS_BREADTH;
	if ((el == 5 && !memcmp(ev, "depth", 5)) || (el == 13 && !memcmp(ev, "breadth+depth", 13)))
		enc |= BFI_PATHS_DEPTH;
	unsigned path_max = bfi__meta_uint(s, BFI_META_PATH_MAX, BFI_PATH_MAX_DEFAULT);
	unsigned levels = bfi__meta_uint(s, BFI_META_PATH_LEVELS, 0);
	struct pq q;
	rc = parse(text, len, &q);
	struct sbuf b = {NULL, 0, 0, 0};
	size_t first[MAX_NAMES], run[MAX_NAMES], nr = rc ? 0 : runs(&q, first, run);
	if (rc == 0 && (enc & BFI_PATHS_BREADTH)) {
		for (size_t i = 0; i < q.n; i++) {
			const char *nm = q.name[i];
			sb_key(&b, 'a', 0, &nm, &q.len[i], 1);
		}
		unsigned lvl[MAX_NAMES];
		size_t count = 0;
		struct sbuf alt = {NULL, 0, 0, 0};
		place(&alt, &q, first, run, 0, nr, 1, levels > BFI_PATH_LEVELS_MAX ? BFI_PATH_LEVELS_MAX : levels,
		      lvl, &count);
		if (count == 0) {
			sb_str(&b, " \"@no placement\" "); /* deeper than any document: no set */
		} else if (count <= MAX_PLACEMENTS && !alt.oom) {
			sb_str(&b, " (");
			sb_add(&b, alt.p, alt.n);
			sb_str(&b, ")");
		} /* too many placements: the names alone, which miss nothing */
		b.oom |= alt.oom;
		free(alt.p);
	}
	if (rc == 0 && (enc & BFI_PATHS_DEPTH)) {
		for (size_t r = 0; r < nr; r++)
			for (size_t n = 1; n <= run[r] && n <= path_max; n++)
				for (size_t i = first[r]; i + n <= first[r] + run[r]; i++)
					sb_key(&b, 'd', (unsigned)n, (const char *const *)&q.name[i], &q.len[i], n);
		if (q.root && q.stars_before[0] == 0 && run[0] <= path_max)
			sb_key(&b, 'r', 0, (const char *const *)&q.name[0], &q.len[0], run[0]);
	}
	for (size_t i = 0; i < q.n; i++)
		free(q.name[i]);
	if (rc == 0 && b.oom)
		rc = -ENOMEM;
	if (rc == 0)
		rc = bfi_expr_parse(b.p, b.n, out, NULL);
	free(b.p);
	return rc;
}
