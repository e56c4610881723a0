/*
 * expr.c - query expressions: parse "a AND (b OR c)" into a small tree
 * whose leaves are conjunctions of keys, hashed once at parse time.
 *
 * Grammar (see bfi.h):
 *   or    := and ("OR" and)*
 *   and   := unary (["AND"] unary)*
 *   unary := "(" or ")" | key
 * Normal form: nested ANDs and ORs are flattened, and the key children of
 * an AND become one conjunction leaf, evaluated first since it costs one
 * pass of ANDed rows.
 */
#include <errno.h>
#include <stdlib.h>

#include "expr.h"

#define MAX_DEPTH 64

struct parser {
	const char *p, *end, *start;
	struct bfi_expr *e;
	size_t err_at;
	int depth;
};

/* Make room for one more element in *p (n used of *cap, each size bytes). */
static int room(void *p, uint32_t n, uint32_t *cap, size_t size)
{
	if (n < *cap)
		return 0;
	uint32_t c = *cap ? 2 * *cap : 16;
	void *q = realloc(*(void **)p, c * size);
	if (q == NULL)
		return -ENOMEM;
	*(void **)p = q;
	*cap = c;
	return 0;
}

static int add_node(struct bfi_expr *e, int type, uint32_t *id)
{
	if (room(&e->nodes, e->n_nodes, &e->cap_nodes, sizeof *e->nodes))
		return -ENOMEM;
	memset(&e->nodes[e->n_nodes], 0, sizeof e->nodes[0]);
	e->nodes[e->n_nodes].type = type;
	*id = e->n_nodes++;
	return 0;
}

static int push_kidx(struct bfi_expr *e, uint32_t k)
{
	if (room(&e->kidx, e->n_kidx, &e->cap_kidx, sizeof *e->kidx))
		return -ENOMEM;
	e->kidx[e->n_kidx++] = k;
	return 0;
}

/* A leaf of one key: the key's hash, and its index in the leaf's key list. */
static int add_leaf(struct bfi_expr *e, const void *key, size_t len, uint32_t *id);

static int add_key(struct bfi_expr *e, const void *key, size_t len)
{
	if (e->n_keys >= BFI__MAX_KEYS)
		return BFI_E_LIMIT;
	if (room(&e->keys, e->n_keys, &e->cap_keys, sizeof *e->keys))
		return -ENOMEM;
	e->keys[e->n_keys++] = bfi_hash_key(key, len);
	return 0;
}

/* A child list under construction: node ids. */
struct ids {
	uint32_t *v;
	uint32_t n, cap;
};

static int ids_push(struct ids *l, uint32_t id)
{
	if (room(&l->v, l->n, &l->cap, sizeof *l->v))
		return -ENOMEM;
	l->v[l->n++] = id;
	return 0;
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static void skip_blanks(struct parser *ps)
{
	while (ps->p < ps->end && is_blank(*ps->p))
		ps->p++;
}

/* Is the next token the bare word w (not quoted)? */
static int at_word(struct parser *ps, const char *w)
{
	size_t n = strlen(w);
	if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, w, n) != 0)
		return 0;
	const char *q = ps->p + n;
	return q == ps->end || is_blank(*q) || *q == '(' || *q == ')' || *q == '"';
}

static int syntax(struct parser *ps)
{
	ps->err_at = (size_t)(ps->p - ps->start);
	return BFI_E_SYNTAX;
}

static int parse_run(struct parser *ps, int op, uint32_t *id);

/* Make node id hold the children in l, flattening children of the same type. */
static int make_group(struct bfi_expr *e, int type, struct ids *l, uint32_t *id)
{
	if (l->n == 1) {
		*id = l->v[0];
		return 0;
	}
	struct ids flat = {0};
	int rc = 0;
	for (uint32_t i = 0; i < l->n && rc == 0; i++) {
		struct bfi_enode *c = &e->nodes[l->v[i]];
		if (c->type == type) {
			for (uint32_t j = 0; j < c->n_kids && rc == 0; j++)
				rc = ids_push(&flat, e->kids[c->first_kid + j]);
		} else {
			rc = ids_push(&flat, l->v[i]);
		}
	}
	/* AND: fold every key leaf into one conjunction, evaluated first. */
	if (rc == 0 && type == BFI_EXPR_AND) {
		struct ids leaves = {0}, rest = {0};
		for (uint32_t i = 0; i < flat.n && rc == 0; i++)
			rc = ids_push(e->nodes[flat.v[i]].type == BFI_EXPR_KEYS ? &leaves : &rest, flat.v[i]);
		if (rc == 0 && leaves.n > 1) {
			uint32_t leaf;
			rc = add_node(e, BFI_EXPR_KEYS, &leaf);
			uint32_t first = e->n_kidx;
			for (uint32_t i = 0; i < leaves.n && rc == 0; i++) {
				const struct bfi_enode *c = &e->nodes[leaves.v[i]];
				for (uint32_t j = 0; j < c->n_keys && rc == 0; j++)
					rc = push_kidx(e, e->kidx[c->first_key + j]);
			}
			if (rc == 0) {
				e->nodes[leaf].first_key = first;
				e->nodes[leaf].n_keys = e->n_kidx - first;
				leaves.v[0] = leaf;
				leaves.n = 1;
			}
		}
		if (rc == 0 && leaves.n == 1) {
			flat.n = 0;
			rc = ids_push(&flat, leaves.v[0]);
			for (uint32_t i = 0; i < rest.n && rc == 0; i++)
				rc = ids_push(&flat, rest.v[i]);
		}
		free(leaves.v);
		free(rest.v);
		if (rc == 0 && flat.n == 1) {
			*id = flat.v[0];
			free(flat.v);
			return 0;
		}
	}
	if (rc == 0)
		rc = add_node(e, type, id);
	if (rc == 0) {
		struct bfi_enode *g = &e->nodes[*id];
		g->first_kid = e->n_kids;
		g->n_kids = flat.n;
		for (uint32_t i = 0; i < flat.n && rc == 0; i++) {
			rc = room(&e->kids, e->n_kids, &e->cap_kids, sizeof *e->kids);
			if (rc == 0)
				e->kids[e->n_kids++] = flat.v[i];
		}
	}
	free(flat.v);
	return rc;
}

static int parse_key(struct parser *ps, uint32_t *id)
{
	char *buf = NULL;
	size_t n = 0;
	int rc;
	ps->err_at = (size_t)(ps->p - ps->start); /* where a key past the limit starts */
	if (*ps->p == '"') {
		const char *q = ++ps->p;
		buf = malloc((size_t)(ps->end - q) + 1);
		if (buf == NULL)
			return -ENOMEM;
		for (; q < ps->end && *q != '"'; q++) {
			if (*q == '\\' && q + 1 < ps->end && (q[1] == '"' || q[1] == '\\'))
				q++;
			buf[n++] = *q;
		}
		if (q == ps->end) {
			free(buf);
			ps->p--;
			return syntax(ps); /* unterminated quote */
		}
		ps->p = q + 1;
		rc = add_leaf(ps->e, buf, n, id);
	} else {
		const char *q = ps->p;
		while (q < ps->end && !is_blank(*q) && *q != '(' && *q != ')' && *q != '"')
			q++;
		rc = add_leaf(ps->e, ps->p, (size_t)(q - ps->p), id);
		ps->p = q;
	}
	free(buf);
	return rc;
}

static int add_leaf(struct bfi_expr *e, const void *key, size_t len, uint32_t *id)
{
	int rc = add_key(e, key, len);
	if (rc == 0)
		rc = add_node(e, BFI_EXPR_KEYS, id);
	if (rc == 0)
		rc = push_kidx(e, e->n_keys - 1);
	if (rc == 0) {
		e->nodes[*id].first_key = e->n_kidx - 1;
		e->nodes[*id].n_keys = 1;
	}
	return rc;
}

static int parse_unary(struct parser *ps, uint32_t *id)
{
	skip_blanks(ps);
	if (ps->p == ps->end || *ps->p == ')' || at_word(ps, "AND") || at_word(ps, "OR"))
		return syntax(ps); /* a key or '(' was expected */
	if (*ps->p != '(')
		return parse_key(ps, id);
	if (++ps->depth > MAX_DEPTH) { /* a limit, not a mistake: say so */
		ps->err_at = (size_t)(ps->p - ps->start);
		return BFI_E_LIMIT;
	}
	ps->p++;
	int rc = parse_run(ps, BFI_EXPR_OR, id);
	if (rc)
		return rc;
	skip_blanks(ps);
	if (ps->p == ps->end || *ps->p != ')')
		return syntax(ps);
	ps->p++;
	ps->depth--;
	return 0;
}

/*
 * A run of operands joined by op (BFI_EXPR_OR: terms joined by OR;
 * BFI_EXPR_AND: factors joined by AND or side by side), made one node.
 */
static int parse_run(struct parser *ps, int op, uint32_t *id)
{
	struct ids l = {0};
	int rc = 0;
	for (int first = 1; rc == 0; first = 0) {
		skip_blanks(ps);
		if (!first && op == BFI_EXPR_OR && !at_word(ps, "OR"))
			break;
		if (!first && op == BFI_EXPR_AND &&
		    (ps->p == ps->end || *ps->p == ')' || at_word(ps, "OR")))
			break;
		if (!first)
			ps->p += op == BFI_EXPR_OR ? 2 : at_word(ps, "AND") ? 3 : 0;
		uint32_t c;
		rc = op == BFI_EXPR_OR ? parse_run(ps, BFI_EXPR_AND, &c) : parse_unary(ps, &c);
		if (rc == 0)
			rc = ids_push(&l, c);
	}
	if (rc == 0)
		rc = make_group(ps->e, op, &l, id);
	free(l.v);
	return rc;
}

int bfi_expr_parse(const char *text, size_t len, bfi_expr **out, size_t *err_at)
{
	if (out == NULL || (text == NULL && len))
		return BFI_E_INVALID;
	*out = NULL;
	struct bfi_expr *e = calloc(1, sizeof *e);
	if (e == NULL)
		return -ENOMEM;
	struct parser ps = {text, text + len, text, e, 0, 0};
	int rc = parse_run(&ps, BFI_EXPR_OR, &e->root);
	if (rc == 0) {
		skip_blanks(&ps);
		if (ps.p != ps.end)
			rc = syntax(&ps); /* a stray ')' */
	}
	if (rc) {
		if (err_at)
			*err_at = ps.err_at;
		bfi_expr_free(&e);
		return rc;
	}
	e->single = e->nodes[e->root].type == BFI_EXPR_KEYS && e->nodes[e->root].n_keys == 1;
	*out = e;
	return 0;
}

void bfi__expr_one_key(struct bfi_expr *e, bfi_keyhash h)
{
	memset(e, 0, sizeof *e);
	/* As add_leaf would build it, in the expression's own storage. */
	e->key1 = h;
	e->keys = &e->key1;
	e->n_keys = e->cap_keys = 1;
	e->node1.type = BFI_EXPR_KEYS;
	e->node1.first_key = 0;
	e->node1.n_keys = 1;
	e->nodes = &e->node1;
	e->n_nodes = e->cap_nodes = 1;
	e->root = 0;
	e->kidx1 = 0;
	e->kidx = &e->kidx1;
	e->n_kidx = e->cap_kidx = 1;
	e->single = 1;
}

int bfi_expr_key(const void *key, size_t len, bfi_expr **out)
{
	if (out == NULL || (key == NULL && len))
		return BFI_E_INVALID;
	/* On a cache line of its own: a batch then reads one line of it. */
	size_t size = (sizeof(struct bfi_expr) + 63) / 64 * 64;
	struct bfi_expr *e = aligned_alloc(64, size);
	if (e == NULL)
		return -ENOMEM;
	bfi__expr_one_key(e, bfi_hash_key(key, len));
	*out = e;
	return 0;
}

/*
 * Repeated terms count once: keep the first of each hash, in order,
 * through an open-addressing set of the kept ones' places. Sorting the
 * hashes with qsort took a fifth of the time of threshold queries of
 * 150-bp reads (120 terms each).
 */
static int drop_repeats(struct bfi_expr *e)
{
	uint32_t n = e->n_keys, slots = 64, m = 0;
	while (slots < 2 * n) /* n <= BFI__MAX_KEYS */
		slots *= 2;
	uint32_t small[256], *slot = slots <= 256 ? small : malloc(slots * sizeof *slot);
	if (slot == NULL)
		return -ENOMEM;
	memset(slot, 0, slots * sizeof *slot); /* kept place + 1; 0: empty */
	for (uint32_t i = 0; i < n; i++) {
		bfi_keyhash h = e->keys[i];
		uint32_t at = (uint32_t)h.h1 & (slots - 1);
		int seen = 0;
		for (; slot[at] && !seen; at = (at + 1) & (slots - 1)) {
			const bfi_keyhash *kept = &e->keys[slot[at] - 1];
			seen = kept->h1 == h.h1 && kept->h2 == h.h2;
		}
		if (seen)
			continue;
		e->keys[m] = h; /* m <= i: only places already read are written */
		slot[at] = ++m;
	}
	e->n_keys = m;
	if (slot != small)
		free(slot);
	return 0;
}

/* The end of a term list: its keys in place, its root over them all. */
static int finish_terms(struct bfi_expr *e)
{
	int rc = add_node(e, BFI_EXPR_TERMS, &e->root);
	for (uint32_t i = 0; i < e->n_keys && rc == 0; i++)
		rc = push_kidx(e, i);
	if (rc == 0) {
		e->nodes[e->root].first_key = 0;
		e->nodes[e->root].n_keys = e->n_keys;
	}
	return rc;
}

int bfi__expr_hashes(const bfi_keyhash *h, uint32_t n, bfi_expr **out)
{
	*out = NULL;
	if (n > BFI__MAX_KEYS)
		return BFI_E_LIMIT;
	struct bfi_expr *e = calloc(1, sizeof *e);
	if (e == NULL)
		return -ENOMEM;
	int rc = 0;
	if (n) {
		e->keys = malloc(n * sizeof *e->keys);
		rc = e->keys ? 0 : -ENOMEM;
		if (rc == 0) {
			memcpy(e->keys, h, n * sizeof *h);
			e->n_keys = e->cap_keys = n;
		}
	}
	if (rc == 0)
		rc = finish_terms(e);
	if (rc) {
		bfi_expr_free(&e);
		return rc;
	}
	*out = e;
	return 0;
}

int bfi_expr_terms(const void *const *keys, const size_t *lens, size_t n, bfi_expr **out)
{
	if (out == NULL || (n && (keys == NULL || lens == NULL)))
		return BFI_E_INVALID;
	*out = NULL;
	if (n > BFI__MAX_KEYS)
		return BFI_E_LIMIT;
	struct bfi_expr *e = calloc(1, sizeof *e);
	if (e == NULL)
		return -ENOMEM;
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = add_key(e, keys[i], lens[i]);
	if (rc == 0 && e->n_keys)
		rc = drop_repeats(e);
	if (rc == 0)
		rc = finish_terms(e);
	if (rc) {
		bfi_expr_free(&e);
		return rc;
	}
	*out = e;
	return 0;
}

size_t bfi_expr_keys(const bfi_expr *e)
{
	return e ? e->n_keys : 0;
}

int bfi_expr_set_need(bfi_expr *e, uint32_t need)
{
	if (e == NULL || e->nodes[e->root].type != BFI_EXPR_TERMS || need > e->n_keys)
		return BFI_E_INVALID;
	e->need = need;
	e->has_need = 1;
	return 0;
}

int bfi_expr_set_errors(bfi_expr *e, unsigned k, unsigned errors)
{
	if (e != NULL && k == 0)
		k = e->kmer; /* the k its k-mers were made with */
	if (e == NULL || k < 1 || k > BFI_KMER_MAX)
		return BFI_E_INVALID;
	uint64_t lost = (uint64_t)errors * k;
	return bfi_expr_set_need(e, e->n_keys > lost ? (uint32_t)(e->n_keys - lost) : 0);
}

uint32_t bfi_expr_need(const bfi_expr *e, double theta)
{
	if (e == NULL || e->n_keys == 0 || e->nodes[e->root].type != BFI_EXPR_TERMS)
		return 0;
	if (e->has_need)
		return e->need;
	return theta > 0 && theta <= 1 ? bfi__share(e->n_keys, theta) : 0;
}

void bfi_expr_free(bfi_expr **e)
{
	if (e == NULL || *e == NULL)
		return;
	struct bfi_expr *x = *e;
	if (x->nodes != &x->node1)
		free(x->nodes);
	free(x->kids);
	if (x->keys != &x->key1)
		free(x->keys);
	if (x->kidx != &x->kidx1)
		free(x->kidx);
	free(x);
	*e = NULL;
}

uint32_t bfi__expr_depth(const struct bfi_expr *e, uint32_t id)
{
	const struct bfi_enode *n = &e->nodes[id];
	uint32_t d = 0;
	for (uint32_t i = 0; i < n->n_kids; i++) {
		uint32_t c = bfi__expr_depth(e, e->kids[n->first_kid + i]);
		d = c > d ? c : d;
	}
	return d + 1;
}

int bfi__grow_to(void *pp, size_t *cap, size_t want, size_t sz)
{
	if (want > SIZE_MAX / sz) /* want * sz would wrap to a small block */
		return -ENOMEM;
	void *q = realloc(*(void **)pp, want * sz);
	if (q == NULL)
		return -ENOMEM;
	*(void **)pp = q;
	*cap = want;
	return 0;
}
