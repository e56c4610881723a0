/*
 * bloofi_sim.c - an independent re-implementation of the Bloofi paper's
 * insertion build and search (Crainiceanu and Lemire, Algorithms 1-3, with
 * section 5.4's rule that a node whose bits are all ones never splits), to
 * check writer/bloofi.c against it and to see how the hash function moves
 * bf-cost on the paper's synthetic workload.
 *
 * Set i holds the integers [100 i, 100 i + 99]; every node has m = 100,989
 * bits and k = 7 hashes; the order d is 2. Two hashes:
 *   random  a 64-bit mix of (key, probe, seed), which behaves like the
 *           random hash that bfi's XXH3 probes are;
 *   java    the authors' Hasher.java: ((key * r_i) & 0x7fffffff) % m, 32-bit
 *           wrapping product, r_i = (nextInt() >>> 2) * 2 + 1 drawn from
 *           java.util.Random(seed), as their code does when given a seed.
 * Two rules for the child an insertion descends into:
 *   authors  as the authors' code picks it: each child after the first
 *            replaces the best so far when nearer or, failing that, with
 *            probability 1 / (number of children) (the default);
 *   nearest  strictly the nearest, first of equals, as the paper's text reads.
 * bf-cost is the number of node filters tested per search (their
 * findMatches counts one per call), averaged over present keys drawn
 * uniformly from [0, 100 N).
 *
 * Usage: bloofi_sim N random|java SEED [QUERIES [authors|nearest]]
 * (tests/bench/bloofi_hash.sh)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define M 100989u
#define K 7
#define WORDS ((M + 63) / 64)
#define ORDER 2

struct node {
	int parent, leaf, nchild, cap;
	int *child;
	uint64_t ones, *bits;
};

static struct node *nodes;
static int n_nodes, cap_nodes, root;
static int java, strict;
static uint64_t coin_state;

/* A coin that comes up with probability 1 / n. */
static int coin(int n)
{
	coin_state ^= coin_state << 13;
	coin_state ^= coin_state >> 7;
	coin_state ^= coin_state << 17;
	return (double)(coin_state >> 11) / 9007199254740992.0 < 1.0 / n;
}
static uint32_t java_keys[K];
static uint64_t salt;

static void *must(void *p)
{
	if (p == NULL) {
		fprintf(stderr, "bloofi_sim: out of memory\n");
		exit(1);
	}
	return p;
}

static uint32_t probe(uint32_t key, int i)
{
	if (java)
		return (uint32_t)((key * java_keys[i]) & 0x7fffffffu) % M;
	uint64_t z = key * 0x9E3779B97F4A7C15ull + salt + (uint64_t)(i + 1) * 0xD1B54A32D192ED03ull;
	z = (z ^ z >> 30) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ z >> 27) * 0x94D049BB133111EBull;
	z ^= z >> 31;
	return (uint32_t)(((unsigned __int128)z * M) >> 64);
}

static int new_node(int leaf)
{
	if (n_nodes == cap_nodes) {
		cap_nodes = cap_nodes ? 2 * cap_nodes : 1024;
		nodes = must(realloc(nodes, (size_t)cap_nodes * sizeof *nodes));
	}
	nodes[n_nodes] = (struct node){-1, leaf, 0, 0, NULL, 0, must(calloc(WORDS, 8))};
	return n_nodes++;
}

static void add_child(int p, int c, int at)
{
	struct node *P = &nodes[p];
	if (P->nchild == P->cap) {
		P->cap = P->cap ? 2 * P->cap : 2 * ORDER + 2;
		P->child = must(realloc(P->child, (size_t)P->cap * sizeof *P->child));
	}
	memmove(P->child + at + 1, P->child + at, (size_t)(P->nchild - at) * sizeof *P->child);
	P->child[at] = c;
	P->nchild++;
	nodes[c].parent = p;
}

static void or_into(int dst, const uint64_t *src)
{
	uint64_t ones = 0;
	for (unsigned w = 0; w < WORDS; w++)
		ones += (uint64_t)__builtin_popcountll(nodes[dst].bits[w] |= src[w]);
	nodes[dst].ones = ones;
}

static void recompute(int id)
{
	memset(nodes[id].bits, 0, WORDS * 8);
	nodes[id].ones = 0;
	for (int i = 0; i < nodes[id].nchild; i++)
		or_into(id, nodes[nodes[id].child[i]].bits);
}

/* Algorithm 2 then 3: down the nearest children (Hamming), leaf as sibling. */
static void insert(int leaf, const uint32_t *pos, int npos)
{
	int p = root, at = 0;
	or_into(p, nodes[leaf].bits);
	if (nodes[p].nchild == 0) {
		add_child(p, leaf, 0);
		return;
	}
	for (;;) {
		uint64_t best = UINT64_MAX;
		for (int i = 0; i < nodes[p].nchild; i++) {
			const struct node *C = &nodes[nodes[p].child[i]];
			uint64_t both = 0;
			for (int j = 0; j < npos; j++)
				both += C->bits[pos[j] / 64] >> (pos[j] % 64) & 1;
			uint64_t ham = C->ones + (uint64_t)npos - 2 * both;
			if (ham < best || (!strict && i > 0 && coin(nodes[p].nchild))) {
				best = ham;
				at = i;
			}
		}
		int c = nodes[p].child[at];
		if (nodes[c].leaf)
			break;
		or_into(c, nodes[leaf].bits);
		p = c;
	}
	add_child(p, leaf, at + 1);
	while (nodes[p].nchild > 2 * ORDER && nodes[p].ones < M) {
		int q = new_node(0);
		for (int i = ORDER + 1; i < nodes[p].nchild; i++)
			add_child(q, nodes[p].child[i], nodes[q].nchild);
		nodes[p].nchild = ORDER + 1;
		recompute(p);
		recompute(q);
		int up = nodes[p].parent;
		if (up < 0) {
			int r = new_node(0);
			add_child(r, p, 0);
			add_child(r, q, 1);
			or_into(r, nodes[p].bits);
			or_into(r, nodes[q].bits);
			root = r;
			return;
		}
		int i = 0;
		while (nodes[up].child[i] != p)
			i++;
		add_child(up, q, i + 1);
		p = up;
	}
}

static long tests;

static void search(int id, const uint32_t *pos)
{
	tests++;
	for (int i = 0; i < K; i++)
		if (!(nodes[id].bits[pos[i] / 64] >> (pos[i] % 64) & 1))
			return;
	for (int i = 0; !nodes[id].leaf && i < nodes[id].nchild; i++)
		search(nodes[id].child[i], pos);
}

int main(int argc, char **argv)
{
	if (argc < 4 || (strcmp(argv[2], "random") && strcmp(argv[2], "java")) ||
	    (argc > 5 && strcmp(argv[5], "authors") && strcmp(argv[5], "nearest"))) {
		fprintf(stderr, "usage: bloofi_sim N random|java SEED [QUERIES [authors|nearest]]\n");
		return 2;
	}
	strict = argc > 5 && strcmp(argv[5], "nearest") == 0;
	long n = atol(argv[1]), seed = atol(argv[3]), queries = argc > 4 ? atol(argv[4]) : 10000;
	if (n < 1 || n > 1000000 || queries < 1) {
		fprintf(stderr, "bloofi_sim: N must be 1..1000000, QUERIES positive\n");
		return 2;
	}
	java = strcmp(argv[2], "java") == 0;
	uint64_t s = ((uint64_t)seed ^ 0x5DEECE66Dull) & ((1ull << 48) - 1); /* java.util.Random */
	for (int i = 0; i < K; i++) {
		s = (s * 0x5DEECE66Dull + 0xB) & ((1ull << 48) - 1);
		java_keys[i] = ((uint32_t)(s >> 16) >> 2) * 2 + 1;
	}
	salt = (uint64_t)seed * 0x632BE59BD9B4E019ull;
	coin_state = salt | 1;
	root = new_node(0);
	uint32_t pos[100 * K];
	for (long i = 0; i < n; i++) {
		int leaf = new_node(1), npos = 0;
		for (uint32_t x = 100u * (uint32_t)i; x < 100u * (uint32_t)i + 100; x++)
			for (int j = 0; j < K; j++) {
				uint32_t p = probe(x, j);
				uint64_t *w = &nodes[leaf].bits[p / 64];
				if (!(*w >> (p % 64) & 1)) {
					*w |= 1ull << (p % 64);
					pos[npos++] = p;
				}
			}
		nodes[leaf].ones = (uint64_t)npos;
		insert(leaf, pos, npos);
	}
	uint64_t r = 0x9E3779B97F4A7C15ull ^ (uint64_t)seed;
	for (long q = 0; q < queries; q++) {
		r ^= r << 13, r ^= r >> 7, r ^= r << 17;
		uint32_t key = (uint32_t)(r % (100ull * (uint64_t)n)), p[K];
		for (int j = 0; j < K; j++)
			p[j] = probe(key, j);
		search(root, p);
	}
	int height = 0;
	for (int x = root; !nodes[x].leaf; x = nodes[x].child[0])
		height++;
	printf("N=%ld hash=%s rule=%s seed=%ld bf-cost=%.2f height=%d root-children=%d "
	       "root-all-ones=%d\n",
	       n, argv[2], strict ? "nearest" : "authors", seed, (double)tests / (double)queries,
	       height, nodes[root].nchild, nodes[root].ones == M);
	return 0;
}
