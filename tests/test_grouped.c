/*
 * test_grouped.c - grouped flat blocks (spec/format.md, "Grouped blocks"):
 * sets of widths far apart become a run whose blocks share their rows'
 * lines. Every key is found, the false-positive rate is the target's,
 * threshold scores (answered a run at a time) equal the per-key answers
 * tallied, the rows copied out are those the queries read, each broken
 * field of the run is refused, its padding caught by verify, and a run's
 * AVX2 lanes answer as its rows, read by the spec's formula, say.
 */
#include <stdlib.h>
#include <string.h>

#include "flat.h"
#include "format.h"
#include "internal.h"
#include "test.h"

#define SETS 12
#define SHARED 20 /* keys every set holds, beside its own */

static char snap[4200], work[4200], work_index[4300];
static uint8_t *index_bytes;
static size_t index_len;

/*
 * Set j: SHARED common keys, then 2,000 * 4^(j / 3) of its own (2,000 to
 * 128,000): one block would take 1.8 MB, a run 0.6 MB, a saving past the
 * 1 MiB a run must make.
 */
static uint32_t own_keys(int j)
{
	return 2000u << (2 * (j / 3));
}

static int build(const char *path)
{
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	bfi_writer *w;
	int rc = bfi_writer_create(&o, &w);
	char buf[64];
	for (int j = 0; j < SETS && rc == 0; j++) {
		uint32_t ord;
		snprintf(buf, sizeof buf, "s%02d", j);
		rc = bfi_writer_set(w, buf, strlen(buf), &ord);
		for (uint32_t i = 0; i < SHARED + own_keys(j) && rc == 0; i++) {
			int n = i < SHARED ? snprintf(buf, sizeof buf, "common%u", i)
			                   : snprintf(buf, sizeof buf, "s%02d-%u", j, i);
			rc = bfi_writer_key(w, ord, buf, (size_t)n);
		}
	}
	if (rc == 0)
		rc = bfi_writer_finish(w, path, NULL);
	bfi_writer_destroy(&w);
	return rc;
}

/* The flat section's offset in index.bfi, and its block entry i. */
static uint64_t flat_at(void)
{
	return bfi_get64(index_bytes + BFI_HEADER_SIZE + 8);
}

static size_t entry(uint32_t i)
{
	return (size_t)(flat_at() + BFI_FLAT_DESC_SIZE + (uint64_t)i * BFI_BLOCK_ENTRY_SIZE);
}

/* The set name of ordinal o's own key i. */
static int name_of(const bfi_snapshot *s, uint32_t o, char *out, size_t cap)
{
	const char *name;
	size_t len;
	if (bfi_set_name(s, o, &name, &len) != 0 || len + 1 > cap)
		return -1;
	memcpy(out, name, len);
	out[len] = '\0';
	return 0;
}

static void test_run_made(void)
{
	bfi_snapshot *s = NULL;
	EXPECT_RC(bfi_open(snap, 0, &s), 0);
	if (s == NULL)
		return;
	struct bfi_info in;
	bfi_info(s, &in);
	struct bfi_layout_info lf = test_layout(s, BFI_LAYOUT_FLAT);
	/* minor 2 for the run; more than one block, the first of them grouped */
	EXPECT(in.major == 3 && in.minor == 2 && lf.u.flat.blocks >= 2);
	uint64_t run = bfi_get64(index_bytes + entry(0) + 56);
	EXPECT((run >> 63) == 1 && (run & 0xffffffffu) >= 1);
	for (uint32_t b = 1; b < lf.u.flat.blocks; b++)
		EXPECT(bfi_get64(index_bytes + entry(b) + 56) != 0 &&
		       (bfi_get64(index_bytes + entry(b) + 56) >> 63) == 0);
	/* each block as wide as its widest set needs, not the widest of all */
	struct bfi_block_info b0, bl;
	EXPECT_RC(bfi_block(s, 0, &b0), 0);
	EXPECT_RC(bfi_block(s, lf.u.flat.blocks - 1, &bl), 0);
	EXPECT(b0.bits * 8 < bl.bits);
	struct bfi_verify_report rep;
	EXPECT_RC(bfi_verify(snap, &rep, NULL, NULL), 0);
	bfi_close(&s);
}

/* Every key found; absent keys found at about the target rate. */
static void test_keys(void)
{
	bfi_snapshot *s = NULL;
	bfi_result *r = NULL;
	EXPECT_RC(bfi_open(snap, 0, &s), 0);
	EXPECT_RC(bfi_result_create(&r), 0);
	if (s == NULL || r == NULL)
		return;
	char key[64], name[64];
	uint64_t missed = 0, fp = 0, absent = 200000;
	for (uint32_t o = 0; o < SETS; o++) {
		EXPECT(name_of(s, o, name, sizeof name) == 0);
		int j = atoi(name + 1);
		for (uint32_t i = 0; i < SHARED + own_keys(j); i++) {
			int n = i < SHARED ? snprintf(key, sizeof key, "common%u", i)
			                   : snprintf(key, sizeof key, "s%02d-%u", j, i);
			EXPECT_RC(bfi_query_key(s, key, (size_t)n, r), 0);
			int hit = 0;
			for (size_t x = 0; x < bfi_result_count(r); x++)
				hit |= bfi_result_ordinals(r)[x] == o;
			missed += !hit;
		}
	}
	for (uint64_t i = 0; i < absent; i++) {
		int n = snprintf(key, sizeof key, "absent%llu", (unsigned long long)i);
		EXPECT_RC(bfi_query_key(s, key, (size_t)n, r), 0);
		fp += bfi_result_count(r);
	}
	double rate = (double)fp / (double)(absent * SETS);
	EXPECT(missed == 0);
	/* each filter is at least as wide as p = 0.01 asks for its keys */
	EXPECT(rate > 0.002 && rate < 0.015);
	if (missed || !(rate > 0.002 && rate < 0.015))
		fprintf(stderr, "missed %llu, false-positive rate %.4f\n", (unsigned long long)missed, rate);
	bfi_result_destroy(&r);
	bfi_close(&s);
}

/*
 * Threshold scores, counted a run at a time, against the per-key answers
 * tallied: the same sets, each with its count, for lists of every size.
 */
static void test_thresholds(void)
{
	bfi_snapshot *s = NULL;
	bfi_result *r = NULL;
	EXPECT_RC(bfi_open(snap, 0, &s), 0);
	EXPECT_RC(bfi_result_create(&r), 0);
	if (s == NULL || r == NULL)
		return;
	uint64_t seed = 5;
	unsigned reached = 0;
	char keys[300][32];
	const void *kp[300];
	size_t lens[300];
	for (int round = 0; round < 40; round++) {
		size_t n = 1 + test_rand(&seed) % 300;
		uint32_t want[SETS] = {0};
		int target = (int)(test_rand(&seed) % SETS);
		for (size_t i = 0; i < n; i++) {
			/* keys of the sets, half of them one set's, common ones and absent ones, mixed */
			uint64_t x = test_rand(&seed);
			int j = x % 2 ? target : (int)(x % SETS), len;
			if (x % 7 == 0)
				len = snprintf(keys[i], sizeof keys[i], "common%u", (unsigned)(x >> 8) % SHARED);
			else if (x % 5 == 0)
				len = snprintf(keys[i], sizeof keys[i], "nowhere%llu", (unsigned long long)(x >> 8));
			else
				len = snprintf(keys[i], sizeof keys[i], "s%02d-%u", j,
				               SHARED + (unsigned)(x >> 8) % own_keys(j));
			kp[i] = keys[i];
			lens[i] = (size_t)len;
		}
		/* repeated keys count once: tally the distinct ones */
		uint32_t distinct = 0;
		for (size_t i = 0; i < n; i++) {
			int seen = 0;
			for (size_t y = 0; y < i && !seen; y++)
				seen = lens[y] == lens[i] && memcmp(keys[y], keys[i], lens[i]) == 0;
			if (seen)
				continue;
			distinct++;
			EXPECT_RC(bfi_query_key(s, keys[i], lens[i], r), 0);
			for (size_t x = 0; x < bfi_result_count(r); x++)
				want[bfi_result_ordinals(r)[x]]++;
		}
		bfi_expr *e = NULL;
		EXPECT_RC(bfi_expr_terms(kp, lens, n, &e), 0);
		EXPECT_RC(bfi_query_threshold(s, 0, e, 1e-9, r), 0);
		uint32_t got[SETS] = {0};
		const uint32_t *o = bfi_result_ordinals(r), *sc = bfi_result_scores(r);
		for (size_t x = 0; x < bfi_result_count(r); x++)
			got[o[x]] = sc[x];
		EXPECT(memcmp(got, want, sizeof got) == 0);
		/* higher thresholds, pruned (a run's sets dropped once they cannot reach
		 * need) and not: the sets whose tally reaches need, with that tally */
		static const double thetas[] = {0.2, 0.45, 0.7, 1.0};
		for (size_t t = 0; t < sizeof thetas / sizeof *thetas; t++)
			for (int prune = 0; prune < 2; prune++) {
				uint32_t terms = distinct, need = 0;
				while (need < terms && need < thetas[t] * terms)
					need++;
				need = need ? need : 1;
				bfi__use_pruning(prune);
				EXPECT_RC(bfi_query_threshold(s, 0, e, thetas[t], r), 0);
				uint32_t at[SETS] = {0}, expect[SETS] = {0};
				for (size_t x = 0; x < bfi_result_count(r); x++)
					at[bfi_result_ordinals(r)[x]] = bfi_result_scores(r)[x];
				for (int j = 0; j < SETS; j++)
					expect[j] = want[j] >= need ? want[j] : 0;
				EXPECT(memcmp(at, expect, sizeof at) == 0);
				reached += bfi_result_count(r) > 0;
			}
		bfi__use_pruning(-1);
		bfi_expr_free(&e);
	}
	EXPECT(reached > 40); /* the higher thresholds found sets */
	bfi_result_destroy(&r);
	bfi_close(&s);
}

/* The rows copied out (bfi_block_unpack) hold each key's bits where bfi_block_rows would. */
static void test_unpack(void)
{
	bfi_snapshot *s = NULL;
	EXPECT_RC(bfi_open(snap, 0, &s), 0);
	if (s == NULL)
		return;
	struct bfi_layout_info lf = test_layout(s, BFI_LAYOUT_FLAT);
	char key[64], name[64];
	for (uint32_t b = 0; b < lf.u.flat.blocks; b++) {
		struct bfi_block_info bi;
		const uint8_t *rows, *pre;
		uint64_t bytes = 0;
		EXPECT_RC(bfi_block(s, b, &bi), 0);
		EXPECT_RC(bfi_block_rows(s, b, &rows, &bytes, &pre), BFI_E_INVALID); /* shared lines */
		bytes = (bi.bits * bi.row_bits + 64 + 511) / 512 * 64;
		uint8_t *out = malloc(bytes);
		EXPECT_RC(bfi_block_unpack(s, b, out, bytes - 1), BFI_E_INVALID);
		EXPECT_RC(bfi_block_unpack(s, b, out, bytes), 0);
		/* every key of the block's sets: its k bits in its column */
		uint64_t bad = 0;
		for (uint32_t c = 0; out && c < bi.n_sets; c++) {
			EXPECT(name_of(s, (uint32_t)bi.first_set + c, name, sizeof name) == 0);
			int j = atoi(name + 1);
			for (uint32_t i = SHARED; i < SHARED + own_keys(j); i++) {
				int n = snprintf(key, sizeof key, "s%02d-%u", j, i);
				bfi_keyhash h = bfi_hash_key(key, (size_t)n);
				for (uint32_t x = 0; x < lf.hashes; x++) {
					uint64_t bit = bfi_hash_pos(h, x, bi.bits) * bi.row_bits + c;
					bad += !(out[bit / 8] >> (bit % 8) & 1);
				}
			}
		}
		EXPECT(bad == 0);
		free(out);
	}
	bfi_close(&s);
}

/*
 * One key, a batch of keys and a batch of one-key expressions (with a
 * two-key one among them), answered a run at a time, against the rows
 * copied out: the sets whose column has the key's k bits.
 */
static void test_key_paths(void)
{
	bfi_snapshot *s = NULL;
	bfi_result *r = NULL, *rk = NULL;
	EXPECT_RC(bfi_open(snap, 0, &s), 0);
	EXPECT_RC(bfi_result_create(&r), 0);
	EXPECT_RC(bfi_result_create(&rk), 0);
	if (s == NULL || r == NULL || rk == NULL)
		return;
	struct bfi_layout_info lf = test_layout(s, BFI_LAYOUT_FLAT);
	uint32_t nb = lf.u.flat.blocks;
	uint8_t *rows[16] = {0};
	struct bfi_block_info bi[16];
	for (uint32_t b = 0; b < nb && b < 16; b++) {
		EXPECT_RC(bfi_block(s, b, &bi[b]), 0);
		uint64_t bytes = (bi[b].bits * bi[b].row_bits + 64 + 511) / 512 * 64;
		rows[b] = malloc(bytes);
		EXPECT(rows[b] && bfi_block_unpack(s, b, rows[b], bytes) == 0);
	}
	enum { N = 3000 };
	static char keys[N][32];
	static bfi_keyhash hashes[N];
	static size_t ends[N];
	uint64_t seed = 11, bad = 0, found = 0;
	for (size_t i = 0; i < N; i++) {
		uint64_t x = test_rand(&seed);
		int j = (int)(x % SETS);
		int n = x % 3 ? snprintf(keys[i], sizeof keys[i], "s%02d-%u", j,
		                         SHARED + (unsigned)(x >> 8) % own_keys(j))
		              : snprintf(keys[i], sizeof keys[i], "no%llu", (unsigned long long)x);
		hashes[i] = bfi_hash_key(keys[i], (size_t)n);
	}
	EXPECT_RC(bfi_query_keys(s, 0, hashes, N, rk, ends), 0);
	/* the same keys as one-key expressions, a batch of them, and one of two keys among them */
	static bfi_expr *qs[N];
	static bfi_result *rs[N];
	for (size_t i = 0; i < N; i++) {
		EXPECT_RC(i == 7 ? bfi_expr_parse("s00-20 OR s11-40000", 19, &qs[i], NULL)
		                 : bfi_expr_key(keys[i], strlen(keys[i]), &qs[i]),
		          0);
		EXPECT_RC(bfi_result_create(&rs[i]), 0);
	}
	EXPECT_RC(bfi_query_batch(s, 0, (const bfi_expr *const *)qs, N, rs), 0);
	bfi_result *two = NULL;
	EXPECT_RC(bfi_result_create(&two), 0);
	EXPECT_RC(bfi_query_expr(s, 0, qs[7], two), 0);
	EXPECT(two && bfi_result_count(rs[7]) == bfi_result_count(two) && bfi_result_count(two) >= 2 &&
	       memcmp(bfi_result_ordinals(rs[7]), bfi_result_ordinals(two),
	              bfi_result_count(two) * sizeof(uint32_t)) == 0);
	bfi_result_destroy(&two);
	for (size_t i = 0; i < N && nb <= 16; i++) {
		uint32_t want[SETS], n_want = 0;
		for (uint32_t b = 0; b < nb; b++)
			for (uint32_t c = 0; rows[b] && c < bi[b].n_sets; c++) {
				int all = 1;
				for (uint32_t x = 0; x < lf.hashes && all; x++) {
					uint64_t bit = bfi_hash_pos(hashes[i], x, bi[b].bits) * bi[b].row_bits + c;
					all = rows[b][bit / 8] >> (bit % 8) & 1;
				}
				if (all)
					want[n_want++] = (uint32_t)bi[b].first_set + c;
			}
		found += n_want;
		EXPECT_RC(bfi_query_key(s, keys[i], strlen(keys[i]), r), 0);
		bad += bfi_result_count(r) != n_want ||
		       memcmp(bfi_result_ordinals(r), want, n_want * sizeof *want) != 0;
		size_t from = i ? ends[i - 1] : 0;
		bad += ends[i] - from != n_want ||
		       memcmp(bfi_result_ordinals(rk) + from, want, n_want * sizeof *want) != 0;
		bad += i != 7 && (bfi_result_count(rs[i]) != n_want ||
		                  memcmp(bfi_result_ordinals(rs[i]), want, n_want * sizeof *want) != 0);
	}
	for (size_t i = 0; i < N; i++) {
		bfi_expr_free(&qs[i]);
		bfi_result_destroy(&rs[i]);
	}
	EXPECT(bad == 0 && found > N / 2);
	for (uint32_t b = 0; b < nb && b < 16; b++)
		free(rows[b]);
	bfi_result_destroy(&r);
	bfi_result_destroy(&rk);
	bfi_close(&s);
}

/* The spec's example ("Grouped blocks"): a run's geometry and where its rows start. */
static void test_spec_example(void)
{
	struct bfi_block run[2] = {
	    {0, 3, 12000, 3, 0, 0, 0, BFI_GROUP_FIRST | 12},
	    {3, 2, 40000, 2, 0, 0, 0, 40},
	};
	uint32_t n = 0;
	uint64_t groups = 0, group_bits = 0, bytes = 0;
	EXPECT(bfi_group_run(run, 2, 0, &n, &groups, &group_bits, &bytes) == 0);
	EXPECT(n == 2 && groups == 1000 && group_bits == 512 && bytes == 64064);
	EXPECT(bfi_group_row_bit(25, 12, 512, 0, 3) == 1027);
	EXPECT(bfi_group_row_bit(77, 40, 512, 36, 2) == 622);
	EXPECT(bfi_group_row_bit(999, 40, 512, 36, 2) == 12402);
	/* and what breaks a run: a second G, padded rows, a pre-filter, 512 sets */
	struct bfi_block bad = run[1];
	bad.m = 40040;
	EXPECT(bfi_group_run((struct bfi_block[]){run[0], bad}, 2, 0, &n, &groups, &group_bits,
	                     &bytes) != 0);
	bad = run[1], bad.row_bits = 3;
	EXPECT(bfi_group_run((struct bfi_block[]){run[0], bad}, 2, 0, &n, &groups, &group_bits,
	                     &bytes) != 0);
	bad = run[1], bad.pre_m = 512;
	EXPECT(bfi_group_run((struct bfi_block[]){run[0], bad}, 2, 0, &n, &groups, &group_bits,
	                     &bytes) != 0);
	bad = run[0], bad.n_sets = bad.row_bits = 512, bad.m = 12000;
	EXPECT(bfi_group_run(&bad, 1, 0, &n, &groups, &group_bits, &bytes) != 0);
	/* a run of one block ends where the next one begins another */
	struct bfi_block two[2] = {run[0], run[1]};
	two[1].group |= BFI_GROUP_FIRST;
	EXPECT(bfi_group_run(two, 2, 0, &n, &groups, &group_bits, &bytes) == 0 && n == 1);
}

static int open_rc(void)
{
	bfi_snapshot *s = NULL;
	int rc = bfi_open(work, 0, &s);
	bfi_close(&s);
	return rc;
}

/* The run's fields broken one at a time (the index resealed): each refused, at open and verify. */
static void test_fields(void)
{
	uint8_t *b = malloc(index_len);
	if (b == NULL)
		return;
	uint64_t g0 = bfi_get64(index_bytes + entry(0) + 56), g1 = bfi_get64(index_bytes + entry(1) + 56);
	uint64_t m1 = bfi_get64(index_bytes + entry(1) + 16);
	struct {
		uint32_t block;
		size_t off;
		uint64_t value;
		int want;
	} cases[] = {
		{0, 56, g0 & ~(1ull << 63), BFI_E_BAD_LAYOUT}, /* the run has no first block */
		{1, 56, g1 | 1ull << 63, BFI_E_BAD_LAYOUT},    /* a second run at the first's rows */
		{1, 56, 0, BFI_E_BAD_LAYOUT},                  /* out of the run, at its rows */
		{1, 56, g1 + 1, BFI_E_BAD_LAYOUT},             /* q: m no longer G q */
		{1, 56, g1 | 1ull << 40, BFI_E_RESERVED},
		{1, 16, m1 + (g1 & 0xffffffffu), BFI_E_BAD_LAYOUT}, /* m: another G */
		{1, 24, bfi_get64(index_bytes + entry(1) + 24) + 1, BFI_E_BAD_LAYOUT}, /* padded rows */
		{1, 40, 512, BFI_E_BAD_LAYOUT},                /* a pre-filter */
		{1, 32, bfi_get64(index_bytes + entry(1) + 32) + 64, BFI_E_BAD_LAYOUT},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		memcpy(b, index_bytes, index_len);
		bfi_put64(b + entry(cases[i].block) + cases[i].off, cases[i].value);
		test_reseal_index(b, index_len);
		EXPECT(test_write_file(work_index, b, index_len) == 0);
		int rc = open_rc();
		EXPECT_RC(rc, cases[i].want);
		struct bfi_verify_report rep;
		EXPECT_RC(bfi_verify(work, &rep, NULL, NULL), cases[i].want);
	}
	/* padding: the line after the groups, then a group's bits past its blocks' */
	bfi_snapshot *s = NULL;
	EXPECT_RC(bfi_open(snap, 0, &s), 0);
	struct bfi_layout_info lf = s ? test_layout(s, BFI_LAYOUT_FLAT) : (struct bfi_layout_info){0};
	uint64_t used = 0, rows = flat_at() + bfi_get64(index_bytes + entry(0) + 32);
	for (uint32_t x = 0; x < lf.u.flat.blocks; x++)
		used += (bfi_get64(index_bytes + entry(x) + 56) & 0xffffffffu) *
		        bfi_get64(index_bytes + entry(x) + 24);
	uint64_t group_bits = (used + 511) / 512 * 512;
	uint64_t groups = bfi_get64(index_bytes + entry(0) + 16) / (g0 & 0xffffffffu);
	uint64_t bits[2] = {groups * group_bits + 7, used < group_bits ? 3 * group_bits + used : 0};
	for (int i = 0; i < 2; i++) {
		if (bits[i] == 0)
			continue;
		memcpy(b, index_bytes, index_len);
		b[rows + bits[i] / 8] |= (uint8_t)(1u << (bits[i] % 8));
		test_reseal_index(b, index_len);
		EXPECT(test_write_file(work_index, b, index_len) == 0);
		EXPECT_RC(open_rc(), 0); /* open checks no row's bits */
		struct bfi_verify_report rep;
		EXPECT_RC(bfi_verify(work, &rep, NULL, NULL), BFI_E_BAD_LAYOUT);
		EXPECT(rep.offset == rows + bits[i] / 8);
	}
	bfi_close(&s);
	EXPECT(test_write_file(work_index, index_bytes, index_len) == 0);
	free(b);
}

/*
 * Runs made in memory, of random geometry within struct bfi_gvec's limits
 * (2 to 8 blocks of 1 to 32 sets, a group one line) over random bits: a
 * key's sets and a list's counts, with lanes, without them, and from the
 * spec's formula for where a row starts, bit by bit, must agree.
 */
static void test_lanes(void)
{
	uint64_t seed = 5, bad = 0, found = 0;
	for (int trial = 0; trial < 300; trial++) {
		struct bfi_rblock b[BFI_GVEC_LANES];
		memset(b, 0, sizeof b);
		uint32_t nb = 2 + (uint32_t)(test_rand(&seed) % 7), sets = 0;
		uint64_t used = 0, groups = 1 + test_rand(&seed) % 3000;
		for (uint32_t i = 0; i < nb; i++) {
			uint32_t room = 64 - sets - (nb - 1 - i); /* a set for each block left */
			uint32_t n = 1 + (uint32_t)(test_rand(&seed) % (room < 32 ? room : 32));
			uint64_t left = 512 - used - (nb - 1 - i) * 32; /* room for the blocks left */
			uint64_t q = left / n > 1 ? 1 + test_rand(&seed) % (left / n) : 1;
			b[i] = (struct bfi_rblock){.first = sets, .n = n, .q = q, .m = groups * q,
			                           .group_bits = 512, .groups = groups, .seg = used,
			                           .row_bits = n, .packed = 1};
			sets += n;
			used += q * n;
		}
		b[0].run_n = nb;
		b[0].run_used = used;
		size_t bytes = (size_t)groups * 64 + 64;
		uint8_t *rows = malloc(bytes);
		if (rows == NULL || used > 512 || sets > 64) {
			bad++;
			free(rows);
			break;
		}
		for (size_t i = 0; i < bytes; i++) /* dense enough that keys are found */
			rows[i] = (uint8_t)(test_rand(&seed) | test_rand(&seed) | test_rand(&seed));
		for (uint32_t i = 0; i < nb; i++)
			b[i].rows = rows;
		struct bfi_gvec v;
		EXPECT(bfi__group_lanes_fit(b));
		bfi__group_lanes(b, &v);
		uint32_t k = 1 + (uint32_t)(test_rand(&seed) % 7), terms = 1 + (uint32_t)(test_rand(&seed) % 20);
		uint64_t z[20 * 7];
		for (uint32_t i = 0; i < terms * k; i++)
			z[i] = test_rand(&seed);
		uint32_t want[20][64] = {{0}}, out[2][64], counts[2][64];
		size_t n_want[20] = {0};
		for (uint32_t t = 0; t < terms; t++)
			for (uint32_t i = 0; i < nb; i++)
				for (uint32_t c = 0; c < b[i].n; c++) {
					int all = 1;
					for (uint32_t x = 0; x < k && all; x++) {
						uint64_t r = bfi_reduce(z[t * k + x], b[i].m);
						uint64_t bit = r / b[i].q * 512 + b[i].seg + r % b[i].q * b[i].n + c;
						all = rows[bit / 8] >> (bit % 8) & 1;
					}
					if (all)
						want[t][n_want[t]++] = b[i].first + c;
				}
		uint32_t tally[64] = {0};
		for (uint32_t t = 0; t < terms; t++)
			for (size_t i = 0; i < n_want[t]; i++)
				tally[want[t][i]]++;
		for (int with = 0; with < 2; with++) {
			b[0].vec = with ? &v : NULL;
			memset(counts[with], 0, sizeof counts[with]);
			bfi__group_terms(b, z, terms, k, counts[with]);
			bad += memcmp(tally, counts[with], sets * sizeof *tally) != 0;
			for (uint32_t t = 0; t < terms; t++) {
				size_t n = bfi__group_key(b, z + t * k, k, out[with]);
				bad += n != n_want[t] || memcmp(out[with], want[t], n * sizeof *out[with]) != 0;
				found += with ? n : 0;
			}
		}
		free(rows);
	}
	EXPECT(bad == 0 && found > 1000);
	if (bad || found <= 1000)
		fprintf(stderr, "lanes: %llu disagreements, %llu sets found\n", (unsigned long long)bad,
		        (unsigned long long)found);
#if defined(__x86_64__) && BFI_HAVE_AVX2
	/* built with AVX2 and on a CPU that has it, the lanes were the ones asked */
	__builtin_cpu_init();
	EXPECT(bfi__and_rows() == bfi__and_rows_avx2 || !__builtin_cpu_supports("avx2") ||
	       getenv("BFI_KERNEL"));
#endif
}

int main(void)
{
	snprintf(snap, sizeof snap, "%s/grouped", test_tmpdir());
	snprintf(work, sizeof work, "%s/work", test_tmpdir());
	snprintf(work_index, sizeof work_index, "%s/index.bfi", work);
	EXPECT_RC(build(snap), 0);
	EXPECT_RC(build(work), 0);
	char path[4400];
	snprintf(path, sizeof path, "%s/index.bfi", snap);
	index_bytes = test_read_file(path, &index_len);
	EXPECT(index_bytes != NULL);
	if (index_bytes) {
		test_run("grouped: the spec's example: a run's geometry, its rows' places, its rules",
		         test_spec_example);
		test_run("grouped: sets of widths far apart make a run, minor 2, each block its own width",
		         test_run_made);
		test_run("grouped: every key found, absent keys at the target's rate", test_keys);
		test_run("grouped: threshold scores a run at a time equal the per-key answers tallied",
		         test_thresholds);
		test_run("grouped: rows copied out hold every key's bits where a view would", test_unpack);
		test_run("grouped: one key and a batch of keys, a run at a time, as the rows copied out say",
		         test_key_paths);
		test_run("grouped: each broken field of a run refused; its padding caught by verify",
		         test_fields);
	}
	test_run("grouped: a run's AVX2 lanes answer as the spec's rows say, keys and counts",
	         test_lanes);
	free(index_bytes);
	return test_exit();
}
