/*
 * tree_walk.c - the tree's threshold query: every node of the top stored
 * level tested with whole rows, then a descent (tree.c says how), or the
 * leaves' rows read whole where a descent cannot prune.
 */
#include <errno.h>
#include <stdlib.h>

#include "tree.h"

/*
 * A threshold query as one walk (the hierarchical IBF's search): a node's
 * filter holds every key of the sets below it, so the terms a node holds,
 * among those its ancestors hold, bound the score of every set below it,
 * and a node holding fewer than need of them is skipped with its subtree.
 * A set's score is then the terms its leaf and every stored ancestor hold,
 * which is what a walk a term gives (bfi__list_threshold, the unpruned
 * path): with a level as wide as the one below, a bit of a child is a bit
 * of its parent, and with wider levels above a term the parent rejects is
 * rejected at the leaf by both.
 *
 * Depth first, a level at a time: walk->list[l] holds the terms the node
 * being tested at level l may hold (its parent's that passed), and
 * walk->mask[l][x] the word of level l's nodes list[l][x] holds, for the
 * child group's word being tested.
 */
struct walk {
	const struct bfi_tree *t;
	uint32_t k, need;
	const uint8_t **rows; /* rows[(l * terms + term) * k + i]: term's row i at level l */
	uint32_t terms;
	uint32_t *list[BFI_MAX_LEVELS];
	uint64_t *mask[BFI_MAX_LEVELS];
	bfi_result *res;
	uint64_t lines, visited;
	/*
	 * Reading the leaves' rows whole (tree_leaves): bit j of word
	 * parent[x * parent_words + j / 64], the level above's node j holds
	 * term list[x], as do its ancestors; else NULL.
	 */
	const uint64_t *parent;
	size_t parent_words;
};

/* The nodes of a level of nodes nodes that word wd holds, as bits. */
static inline uint64_t word_nodes(uint64_t nodes, size_t wd)
{
	return (wd + 1) * 64 <= nodes ? ~UINT64_C(0) : (UINT64_C(1) << (nodes % 64)) - 1;
}

/* The children of node at level l + 1: [*first, *end) of level l; BFI_E_BAD_LAYOUT if out of range. */
static int children(const struct bfi_tree *t, uint32_t l, uint64_t node, uint64_t *first,
                    uint64_t *end)
{
	const uint8_t *g = t->levels[l + 1].groups;
	uint64_t below = t->levels[l].nodes;
	if (g) {
		if (node >= t->levels[l + 1].nodes)
			return BFI_E_BAD_LAYOUT;
		*first = bfi_get32(g + node * 4);
		*end = bfi_get32(g + node * 4 + 4);
		if (*first >= *end || *end > below)
			return BFI_E_BAD_LAYOUT;
		return 0;
	}
	*first = node * t->d.fanout;
	if (*first >= below)
		return BFI_E_BAD_LAYOUT;
	*end = below - *first < t->d.fanout ? below : *first + t->d.fanout;
	return 0;
}

/* Ask for the word of node's child group in each row of the terms of list whose bit b is in mask. */
static void ask_group(const struct walk *w, uint32_t l, uint64_t node, const uint32_t *list,
                      const uint64_t *mask, size_t n, unsigned b)
{
	uint64_t first, end;
	if (children(w->t, l - 1, node, &first, &end))
		return;
	for (size_t x = 0; x < n; x++)
		if (mask[x] >> b & 1)
			for (uint32_t i = 0; i < w->k; i++)
				bfi__prefetch(w->rows[((size_t)(l - 1) * w->terms + list[x]) * w->k + i] +
				              first / 64 * 8);
}

/*
 * Test nodes [first, end) of level l on the n terms in w->list[l], and
 * descend from each that holds at least need of them; at level 0 those
 * are the answer. 0, BFI_E_BAD_LAYOUT or BFI_E_TIMEOUT.
 */
static int walk_group(struct walk *w, uint32_t l, uint64_t first, uint64_t end, size_t n);

/*
 * The nodes pass (of word wd of level l), which hold at least need of the
 * n terms of list: at level 0 the answer, with their counts, else the
 * walk goes on into each one's child group with the terms whose bit
 * mask[x] has.
 */
static int descend(struct walk *w, uint32_t l, uint64_t wd, uint64_t pass, const uint32_t *count,
                   const uint32_t *list, const uint64_t *mask, size_t n)
{
	if (l == 0) {
		for (; pass; pass &= pass - 1) {
			unsigned b = (unsigned)__builtin_ctzll(pass);
			bfi_result *r = w->res;
			/* child groups that overlap (a broken file) would repeat sets */
			if (r->n && r->ords[r->n - 1] >= wd * 64 + b)
				return BFI_E_BAD_LAYOUT;
			r->ords[r->n] = (uint32_t)(wd * 64 + b);
			r->scores[r->n++] = count[b];
		}
		return 0;
	}
	for (uint64_t p = pass; p; p &= p - 1)
		ask_group(w, l, wd * 64 + (uint64_t)__builtin_ctzll(p), list, mask, n,
		          (unsigned)__builtin_ctzll(p));
	for (; pass; pass &= pass - 1) {
		unsigned b = (unsigned)__builtin_ctzll(pass);
		uint64_t cf, ce;
		int rc = children(w->t, l - 1, wd * 64 + b, &cf, &ce);
		if (rc)
			return rc;
		size_t c = 0;
		for (size_t x = 0; x < n; x++)
			if (mask[x] >> b & 1)
				w->list[l - 1][c++] = list[x];
		if ((rc = walk_group(w, l - 1, cf, ce, c)) != 0)
			return rc;
	}
	return 0;
}

/*
 * acc ANDed with word wd of the k rows r, stopping once it is zero; the
 * rows read added to *lines when their word starts a line not read yet
 * (fresh: the word before it read was in another line).
 */
static inline uint64_t and_words(const uint8_t *const *r, uint32_t k, uint64_t wd, uint64_t acc,
                                 int fresh, uint64_t *lines)
{
	uint32_t i = 0;
	for (; i < k && acc; i++)
		acc &= le64toh(((const uint64_t *)r[i])[wd]);
	*lines += fresh ? i : 0;
	return acc;
}

/*
 * Test nodes [first, end) of level l on the n terms in w->list[l], and
 * descend from each that holds at least need of them; at level 0 those
 * are the answer. A word of nodes at a time, term after term, dropping the
 * nodes that can no longer reach need, as in a flat block (flat_survivors.c).
 * 0, BFI_E_BAD_LAYOUT or BFI_E_TIMEOUT.
 */
static int walk_group(struct walk *w, uint32_t l, uint64_t first, uint64_t end, size_t n)
{
	const uint32_t *list = w->list[l];
	uint64_t *mask = w->mask[l];
	uint32_t k = w->k;
	for (uint64_t wd = first / 64; wd * 64 < end; wd++) {
		if (++w->visited % 1024 == 0 && bfi__late(w->res))
			return BFI_E_TIMEOUT;
		uint64_t lo = wd * 64 > first ? 0 : first % 64;
		uint64_t hi = (wd + 1) * 64 < end ? 64 : end - wd * 64;
		uint64_t group = (hi == 64 ? ~UINT64_C(0) : (UINT64_C(1) << hi) - 1) & (~UINT64_C(0) << lo);
		uint32_t count[64] = {0};
		w->res->tests += (uint64_t)__builtin_popcountll(group);
		/* after the last term (n >= need), only the nodes at need or over are left */
		uint64_t alive = group;
		for (size_t x = 0; x < n && alive; x++) {
			const uint8_t *const *r = w->rows + ((size_t)l * w->terms + list[x]) * k;
			uint64_t acc = and_words(r, k, wd, alive, 1, &w->lines);
			mask[x] = acc;
			bfi__count_bits(count, acc);
			alive = bfi__still_alive64(alive, count, n - x - 1, w->need);
		}
		int rc = descend(w, l, wd, alive, count, list, mask, n);
		if (rc)
			return rc;
	}
	return 0;
}

#define TOP_ASK_WORDS 8 /* live words of the top level whose next terms' words are asked for */
/*
 * A walk whose top level leaves more than TREE_SCAN_NUM / TREE_SCAN_DEN of
 * its nodes to descend from reads the leaves' rows whole instead, as a flat
 * block is read (tree_leaves): descending from many nodes reads most of the
 * same words, a child group at a time. On strains with a mobile element in
 * a share of their groups (tests/bench/strains.sh), descending was cheaper
 * with 8% of the top nodes left, the rows whole from 20% on.
 */
#define TREE_SCAN_NUM 1
#define TREE_SCAN_DEN 8
#define TREE_SCAN_LEAVES 1
#define TOP_TERMS_AHEAD 8
#define TOP_MASKS (4u << 20) /* bytes of masks of the top level's words a walk keeps at once */

/*
 * Words [w0, w1) of the top stored level (of nodes nodes): term after
 * term over all of them, as a flat block's rows are read, rather than
 * word after word: each term's rows stream once, and once the nodes that
 * can still reach need are in a few words, each term reads only those.
 * Word wd's mask of term x stays in top_mask[(wd - w0) * n + x] until its
 * survivors descend; its counts in top_count[(wd - w0) * 64 ...].
 */
static int walk_top(struct walk *w, uint32_t l, uint64_t nodes, size_t w0, size_t w1, size_t n,
                    int may_scan, uint64_t *top_mask, uint32_t *top_count, uint64_t *alive,
                    uint32_t *live)
{
	const uint32_t *list = w->list[l];
	uint32_t k = w->k;
	size_t nw = 0;
	for (size_t wd = w0; wd < w1; wd++) {
		alive[wd - w0] = word_nodes(nodes, wd);
		live[nw++] = (uint32_t)wd;
		w->res->tests += (uint64_t)__builtin_popcountll(alive[wd - w0]);
	}
	memset(top_count, 0, (w1 - w0) * 64 * sizeof *top_count);
	for (size_t x = 0; x < n && nw; x++) {
		if (x % 64 == 63 && bfi__late(w->res))
			return BFI_E_TIMEOUT;
		if (nw <= TOP_ASK_WORDS && x + TOP_TERMS_AHEAD < n) {
			const uint8_t *const *ra =
			    w->rows + ((size_t)l * w->terms + list[x + TOP_TERMS_AHEAD]) * k;
			for (size_t y = 0; y < nw; y++)
				for (uint32_t i = 0; i < k; i++)
					bfi__prefetch(ra[i] + (size_t)live[y] * 8);
		}
		const uint8_t *const *r = w->rows + ((size_t)l * w->terms + list[x]) * k;
		size_t kept = 0;
		for (size_t y = 0; y < nw; y++) {
			size_t wd = live[y], at = wd - w0;
			/* the live words ascend: a line of each row counts once */
			int fresh = y == 0 || live[y - 1] / 8 != wd / 8;
			/* leaves read whole: a term counts where their parent holds it, as in the walk */
			uint64_t from = alive[at];
			if (w->parent && !(w->parent[x * w->parent_words + wd / 64] >> (wd % 64) & 1))
				from = 0;
			uint64_t acc = from ? and_words(r, k, wd, from, fresh, &w->lines) : 0;
			top_mask[at * n + x] = acc;
			uint32_t *count = top_count + at * 64;
			bfi__count_bits(count, acc);
			if ((alive[at] = bfi__still_alive64(alive[at], count, n - x - 1, w->need)) != 0)
				live[kept++] = (uint32_t)wd;
		}
		nw = kept;
	}
	if (may_scan) { /* so many nodes left that the leaves are cheaper read as rows */
		uint64_t left = 0;
		for (size_t y = 0; y < nw; y++)
			left += (uint64_t)__builtin_popcountll(alive[live[y] - w0]);
		if (left * TREE_SCAN_DEN > nodes * TREE_SCAN_NUM)
			return TREE_SCAN_LEAVES;
	}
	/* the words left, in order: after the last term, their nodes at need or over */
	for (size_t y = 0; y < nw; y++) {
		size_t wd = live[y], at = wd - w0;
		int rc = descend(w, l, wd, alive[at], top_count + at * 64, list, top_mask + at * n, n);
		if (rc)
			return rc;
	}
	return 0;
}

/*
 * The leaves' rows read whole, for the n terms of w->list[levels - 1]: on a
 * tree of fanout 64 and implied groups, where node j's children are word j
 * of the level below. A term counts at a leaf only if every ancestor holds
 * it too, as in the walk, so the answers are the walk's: level by level
 * from the top, each term's nodes whose ancestors hold it go into above
 * (the top's first, each level's after), then the leaves are counted as
 * the top level is walked (walk_top), each term's word of leaves read only
 * where their parent holds it. masks: room for walk_top's.
 */
static int tree_leaves(struct walk *w, size_t n, uint64_t *above, size_t words0, size_t chunk0,
                       uint64_t *masks)
{
	const struct bfi_tree *t = w->t;
	uint32_t levels = t->d.levels, k = w->k;
	const uint64_t *over = NULL; /* the level above's, or NULL at the top */
	size_t over_words = 0;
	for (uint32_t l = levels - 1; l >= 1; l--) {
		const struct bfi_rlevel *lv = &t->levels[l];
		size_t words = (size_t)((lv->nodes + 63) / 64);
		for (size_t x = 0; x < n; x++) {
			const uint8_t *const *r = w->rows + ((size_t)l * w->terms + w->list[levels - 1][x]) * k;
			for (size_t wd = 0; wd < words; wd++) {
				uint64_t acc = word_nodes(lv->nodes, wd);
				if (over && !(over[x * over_words + wd / 64] >> (wd % 64) & 1))
					acc = 0;
				above[x * words + wd] = acc ? and_words(r, k, wd, acc, wd % 8 == 0, &w->lines) : 0;
			}
		}
		w->res->tests += lv->nodes;
		if (bfi__late(w->res))
			return BFI_E_TIMEOUT;
		over = above;
		over_words = words;
		above += n * words;
	}
	memcpy(w->list[0], w->list[levels - 1], n * sizeof *w->list[0]);
	w->parent = over;
	w->parent_words = over_words;
	int rc = 0;
	for (size_t w0 = 0; rc == 0 && w0 < words0; w0 += chunk0)
		rc = walk_top(w, 0, t->levels[0].nodes, w0, w0 + chunk0 < words0 ? w0 + chunk0 : words0, n, 0,
		              masks, w->res->counts, w->res->alive, w->res->live_words);
	w->parent = NULL;
	return rc;
}

#define TOP_AHEAD 512 /* bytes of each top-level row asked for before the walk */

int bfi__tree_walk(const bfi_snapshot *s, const struct bfi_expr *e, uint32_t need,
                   bfi_result *res)
{
	const struct bfi_tree *t = tree_of(s);
	uint32_t k = t->d.k, levels = t->d.levels, terms = e->n_keys;
	size_t cells = (size_t)levels * terms;
	const struct bfi_rlevel *top = &t->levels[levels - 1];
	/* the top level's words walked at once: their masks of every term in TOP_MASKS */
	size_t words = (size_t)((top->nodes + 63) / 64), chunk = TOP_MASKS / 8 / terms;
	chunk = chunk < 1 ? 1 : chunk > words ? words : chunk;
	/* the same for the leaves, should the walk read their rows whole */
	size_t words0 = (size_t)((t->levels[0].nodes + 63) / 64), chunk0 = TOP_MASKS / 8 / terms;
	chunk0 = chunk0 < 1 ? 1 : chunk0 > words0 ? words0 : chunk0;
	size_t most = chunk > chunk0 ? chunk : chunk0;
	/*
	 * The top level, every node; if it leaves most of them (and was walked
	 * in one go, nothing answered yet), the leaves' rows whole instead, on
	 * a tree whose every node's children fill one word of the level below.
	 */
	int mode = bfi__prune_mode(), rc = 0;
	int may_scan = levels > 1 && chunk == words && t->d.fanout == 64 &&
	               !(t->d.flags & BFI_TREE_EXPLICIT) && mode != BFI_PRUNE_WALK;
	size_t above = 0; /* words of the levels over the leaves: each term's nodes there */
	for (uint32_t l = 1; may_scan && l < levels; l++)
		above += (size_t)((t->levels[l].nodes + 63) / 64);
	/* vec: each level's masks, the chunk's words' masks of each term, the levels' above */
	if (bfi__grow(&res->rows, &res->rows_cap, cells * k, sizeof *res->rows) ||
	    bfi__grow(&res->terms, &res->terms_cap, cells, sizeof *res->terms) ||
	    bfi__grow(&res->vec, &res->vec_cap, cells + (most + above) * terms, sizeof *res->vec) ||
	    bfi__grow(&res->counts, &res->counts_cap, most * 64, sizeof *res->counts) ||
	    bfi__grow(&res->alive, &res->alive_cap, most, sizeof *res->alive) ||
	    bfi__grow(&res->live_words, &res->live_words_cap, most, sizeof *res->live_words))
		return -ENOMEM;
	struct walk w = {.t = t, .k = t->acc ? 1 : k, .need = need, .rows = res->rows, .terms = terms,
	                 .res = res};
	for (uint32_t l = 0; l < levels; l++) {
		w.list[l] = res->terms + (size_t)l * terms;
		w.mask[l] = res->vec + (size_t)l * terms;
	}
	/*
	 * The terms the union pre-filter does not rule out, and their rows at
	 * every level. Every probe's line, and every line of the top level's
	 * rows, is asked for first: a read's terms are mostly in the index, so
	 * the probes pass and each would otherwise wait on memory in turn.
	 */
	for (uint32_t x = 0; x < terms && !t->acc; x++) {
		bfi_keyhash h = e->keys[e->kidx[x]];
		/*
		 * every word of the top level reads the first terms - need + 1 terms' rows; only
		 * the words left after them read the later terms', which the walk asks for
		 * itself a few terms ahead (TOP_TERMS_AHEAD): asked for here, a read that
		 * matches nothing would wait on every term's lines in the queue of misses
		 */
		uint64_t ahead = x <= terms - need + 2 ? TOP_AHEAD : 0;
		for (uint32_t i = 0; i < k; i++) {
			if (t->pre && (i == 0 || !t->line_pre))
				bfi__prefetch(t->pre + bfi_pre_pos(h, i, t->d.pre_m, t->line_pre) / 8);
			const uint8_t *row = top->rows + bfi_hash_pos(h, i, top->m) * top->row_bytes;
			for (uint64_t at = 0; at < top->row_bytes && at < ahead; at += 64)
				bfi__prefetch(row + at);
		}
	}
	size_t n = 0;
	uint64_t pre_lines = 0;
	for (uint32_t x = 0; x < terms && n + (terms - x) >= need; x++) { /* else none can reach need */
		if (!key_in(t, e, e->kidx[x], &pre_lines))
			continue;
		/* each probe hashed once, reduced to every level's width */
		for (uint32_t i = 0; i < k && !t->acc; i++) {
			uint64_t z = bfi_hash_probe(e->keys[e->kidx[x]], i);
			for (uint32_t l = 0; l < levels; l++) {
				const struct bfi_rlevel *lv = &t->levels[l];
				res->rows[((size_t)l * terms + x) * k + i] =
				    lv->rows + bfi_reduce(z, lv->m) * lv->row_bytes;
			}
		}
		for (uint32_t l = 0; l < levels && t->acc; l++) /* a scan's pass: its rows, ANDed */
			key_rows(t, e, e->kidx[x], l, res->rows + (size_t)l * terms + x);
		w.list[levels - 1][n++] = x;
	}
	if (may_scan && mode == BFI_PRUNE_LEAVES)
		rc = n >= need ? TREE_SCAN_LEAVES : 0;
	for (size_t w0 = 0; n >= need && rc == 0 && w0 < words; w0 += chunk)
		rc = walk_top(&w, levels - 1, top->nodes, w0, w0 + chunk < words ? w0 + chunk : words, n,
		              may_scan, res->vec + cells, res->counts, res->alive, res->live_words);
	if (rc == TREE_SCAN_LEAVES)
		rc = tree_leaves(&w, n, res->vec + cells + most * terms, words0, chunk0,
		                 res->vec + cells);
	if (res->count_bytes)
		res->touched += (pre_lines + w.lines) * 64;
	return rc;
}
