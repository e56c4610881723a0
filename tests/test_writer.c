/*
 * test_writer.c - the writer's inputs, errors, publishing and memory
 * bound: bad input is refused with a message naming where, existing
 * files are never clobbered, a snapshot is replaced atomically while a
 * reader holds the old one, row stripes give the same bytes, and sets of
 * one width are cut into blocks with pre-filters when that pays queries.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <string.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "../writer/count.h"
#include "../writer/sources.h"
#include "../writer/layout.h"
#include "test.h"

static char *path_in(const char *name)
{
	static char buf[8][4300];
	static int i;
	char *p = buf[i++ % 8];
	snprintf(p, 4300, "%s/%s", test_tmpdir(), name);
	return p;
}

static int build_tsv(const char *tsv_text, const char *out, bfi_writer **wp)
{
	bfi_writer *w;
	int rc = bfi_writer_create(NULL, &w);
	if (rc)
		return rc;
	FILE *f = fmemopen((void *)tsv_text, strlen(tsv_text), "r");
	rc = bfi_writer_add_tsv(w, f, "input.tsv");
	fclose(f);
	if (rc == 0)
		rc = bfi_writer_finish(w, out, NULL);
	if (wp)
		*wp = w;
	else
		bfi_writer_destroy(&w);
	return rc;
}

static void test_bad_input(void)
{
	bfi_writer *w;
	EXPECT_RC(build_tsv("a\tx\nb\ty\nno tab here\n", path_in("bad1"), &w), BFI_E_INPUT);
	EXPECT(strstr(bfi_writer_errmsg(w), "input.tsv:3") != NULL);
	bfi_writer_destroy(&w);
	char longname[700];
	memset(longname, 'n', 600);
	strcpy(longname + 600, "\tkey\n");
	EXPECT_RC(build_tsv(longname, path_in("bad2"), &w), BFI_E_INPUT);
	EXPECT(strstr(bfi_writer_errmsg(w), "input.tsv:1") != NULL);
	bfi_writer_destroy(&w);
	EXPECT_RC(build_tsv("\tkey\n", path_in("bad3"), NULL), BFI_E_INPUT);
	EXPECT_RC(build_tsv("", path_in("bad4"), NULL), BFI_E_NO_SETS);
	EXPECT_RC(build_tsv("\n\n\r\n", path_in("bad5"), NULL), BFI_E_NO_SETS);
	struct stat st;
	EXPECT(stat(path_in("bad1"), &st) != 0); /* nothing published on failure */

	EXPECT_RC(bfi_writer_create(NULL, &w), 0);
	uint32_t ord;
	EXPECT_RC(bfi_writer_key(w, 0, "k", 1), BFI_E_INVALID); /* no such set yet */
	EXPECT_RC(bfi_writer_set(w, "a\nb", 3, &ord), BFI_E_INPUT);
	EXPECT_RC(bfi_writer_set(w, "ok", 2, &ord), 0);
	EXPECT_RC(bfi_writer_key(w, ord, "k", 1), 0);
	EXPECT_RC(bfi_writer_finish(w, path_in("once"), NULL), 0);
	EXPECT_RC(bfi_writer_finish(w, path_in("twice"), NULL), BFI_E_INVALID);
	bfi_writer_destroy(&w);
	EXPECT(w == NULL);

	struct bfi_build_options o;
	bfi_build_options_init(&o);
	o.fpr = 1.5;
	EXPECT_RC(bfi_writer_create(&o, &w), BFI_E_INVALID);
	o.fpr = 0.01;
	o.hashes = 33;
	EXPECT_RC(bfi_writer_create(&o, &w), BFI_E_INVALID);
}

/*
 * Options from a caller built against an older, shorter header: the
 * library reads the first o.size bytes and takes its defaults for the
 * rest, whatever lies past them; options never initialised, or from a
 * longer header than the library's, are refused.
 */
static void test_options_size(void)
{
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	EXPECT(o.size == sizeof o);
	o.prefilter = BFI_PREFILTER_ALWAYS;
	o.max_block_sets = 512;
	o.classic_prefilters = 1; /* past the older header's end: not read */
	o.size = offsetof(struct bfi_build_options, classic_prefilters);
	bfi_writer *w = NULL;
	EXPECT_RC(bfi_writer_create(&o, &w), 0);
	uint32_t ord;
	for (int s = 0; w && s < 600; s++) {
		char name[16], key[16];
		snprintf(name, sizeof name, "s%d", s);
		EXPECT_RC(bfi_writer_set(w, name, strlen(name), &ord), 0);
		for (int i = 0; i < 20; i++) {
			int len = snprintf(key, sizeof key, "k%d", s * 7 + i);
			EXPECT_RC(bfi_writer_key(w, ord, key, (size_t)len), 0);
		}
	}
	EXPECT_RC(bfi_writer_finish(w, path_in("oldopts"), NULL), 0);
	bfi_writer_destroy(&w);
	bfi_snapshot *s = NULL;
	EXPECT_RC(bfi_open(path_in("oldopts"), 0, &s), 0);
	if (s) {
		struct bfi_layout_info lf = test_layout(s, BFI_LAYOUT_FLAT);
		EXPECT(lf.u.flat.blocks >= 2 && lf.u.flat.line_prefilters); /* classic ignored */
		bfi_close(&s);
	}
	memset(&o, 0, sizeof o); /* never initialised */
	o.fpr = 0.01;
	o.layouts = BFI_BUILD_FLAT;
	EXPECT_RC(bfi_writer_create(&o, &w), BFI_E_INVALID);
	bfi_build_options_init(&o);
	o.size = sizeof o + 8; /* a later header's: fields this library cannot honour */
	EXPECT_RC(bfi_writer_create(&o, &w), BFI_E_INVALID);
	struct bfi_pack_options po;
	bfi_pack_options_init(&po);
	EXPECT(po.size == sizeof po);
	po.size = 0;
	char err[200];
	EXPECT_RC(bfi_pack(path_in("oldopts"), path_in("oldopts.pack"), &po, err, sizeof err),
	          BFI_E_INVALID);
}

static void test_dir_input(void)
{
	char *dir = path_in("sets");
	char p[4400];
	EXPECT(mkdir(dir, 0755) == 0);
	snprintf(p, sizeof p, "%s/beta", dir);
	EXPECT(test_write_file(p, "x\ny\n", 4) == 0);
	snprintf(p, sizeof p, "%s/alpha", dir);
	EXPECT(test_write_file(p, "y\r\nz", 4) == 0); /* CRLF and no final newline */
	snprintf(p, sizeof p, "%s/.hidden", dir);
	EXPECT(test_write_file(p, "secret\n", 7) == 0);
	snprintf(p, sizeof p, "%s/empty", dir);
	EXPECT(test_write_file(p, "", 0) == 0);
	bfi_writer *w;
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	o.keep_order = 1; /* ordinals in input order: file names in byte order */
	EXPECT_RC(bfi_writer_create(&o, &w), 0);
	EXPECT_RC(bfi_writer_add_dir(w, dir), 0);
	EXPECT_RC(bfi_writer_finish(w, path_in("dirsnap"), NULL), 0);
	bfi_writer_destroy(&w);
	/* By default, ordinals follow set size: the empty set comes first. */
	EXPECT_RC(bfi_writer_create(NULL, &w), 0);
	EXPECT_RC(bfi_writer_add_dir(w, dir), 0);
	EXPECT_RC(bfi_writer_finish(w, path_in("dirsnap-sized"), NULL), 0);
	bfi_writer_destroy(&w);
	bfi_snapshot *sized;
	EXPECT_RC(bfi_open(path_in("dirsnap-sized"), 0, &sized), 0);
	if (sized) {
		const char *name;
		size_t len;
		EXPECT_RC(bfi_set_name(sized, 0, &name, &len), 0);
		EXPECT(len == 5 && memcmp(name, "empty", 5) == 0);
		struct bfi_info in;
		bfi_info(sized, &in);
		struct bfi_layout_info lf = test_layout(sized, BFI_LAYOUT_FLAT);
		EXPECT(lf.u.flat.size_ordered);
	}
	bfi_close(&sized);
	bfi_snapshot *s;
	bfi_result *r;
	EXPECT_RC(bfi_open(path_in("dirsnap"), 0, &s), 0);
	EXPECT_RC(bfi_result_create(&r), 0);
	if (s && r) {
		struct bfi_info in;
		bfi_info(s, &in);
		EXPECT(in.n_sets == 3); /* alpha, beta, empty: byte order of names */
		const char *name;
		size_t len;
		EXPECT_RC(bfi_set_name(s, 0, &name, &len), 0);
		EXPECT(len == 5 && memcmp(name, "alpha", 5) == 0);
		EXPECT_RC(bfi_query_key(s, "y", 1, r), 0);
		EXPECT(bfi_result_count(r) >= 2);
		EXPECT(bfi_result_ordinals(r)[0] == 0 && bfi_result_ordinals(r)[1] == 1);
		EXPECT_RC(bfi_query_key(s, "z", 1, r), 0);
		EXPECT(bfi_result_count(r) >= 1 && bfi_result_ordinals(r)[0] == 0);
		struct bfi_set_stats st;
		EXPECT_RC(bfi_set_stats(s, 2, &st), 0);
		EXPECT(st.distinct_keys == 0 && st.bits_set == 0);
		uint32_t ord;
		EXPECT_RC(bfi_set_find(s, ".hidden", 7, &ord), BFI_E_NOT_FOUND);
	}
	bfi_result_destroy(&r);
	bfi_close(&s);
	/* A sub-directory is not silently skipped. */
	snprintf(p, sizeof p, "%s/subdir", dir);
	EXPECT(mkdir(p, 0755) == 0);
	EXPECT_RC(bfi_writer_create(NULL, &w), 0);
	EXPECT_RC(bfi_writer_add_dir(w, dir), BFI_E_INPUT);
	EXPECT(strstr(bfi_writer_errmsg(w), "subdir") != NULL);
	bfi_writer_destroy(&w);
	EXPECT_RC(bfi_writer_create(NULL, &w), 0);
	EXPECT_RC(bfi_writer_add_dir(w, path_in("no-such-dir")), -ENOENT);
	bfi_writer_destroy(&w);
}

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	int n = 0;
	struct dirent *e;
	while (d && (e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

static void test_publish(void)
{
	char *file = path_in("regular-file");
	EXPECT(test_write_file(file, "keep me", 7) == 0);
	EXPECT_RC(build_tsv("a\tx\n", file, NULL), BFI_E_EXISTS);
	size_t len;
	uint8_t *c = test_read_file(file, &len);
	EXPECT(c && len == 7 && memcmp(c, "keep me", 7) == 0);
	free(c);
	char *other = path_in("other-dir");
	EXPECT(mkdir(other, 0755) == 0);
	EXPECT_RC(build_tsv("a\tx\n", other, NULL), BFI_E_EXISTS);

	/* Replace a snapshot while a reader holds the old one open. */
	char *snap = path_in("live");
	EXPECT_RC(build_tsv("old\tk1\n", snap, NULL), 0);
	bfi_snapshot *old, *fresh;
	bfi_result *r;
	EXPECT_RC(bfi_open(snap, 0, &old), 0);
	EXPECT_RC(bfi_result_create(&r), 0);
	int before = count_entries(test_tmpdir());
	EXPECT_RC(build_tsv("new\tk2\nnew2\tk2\n", snap, NULL), 0);
	EXPECT(count_entries(test_tmpdir()) == before); /* no temporary left behind */
	EXPECT_RC(bfi_open(snap, 0, &fresh), 0);
	if (old && fresh && r) {
		const char *name;
		size_t nl;
		EXPECT_RC(bfi_query_key(old, "k1", 2, r), 0);
		EXPECT(bfi_result_count(r) == 1);
		EXPECT_RC(bfi_set_name(old, 0, &name, &nl), 0);
		EXPECT(nl == 3 && memcmp(name, "old", 3) == 0);
		EXPECT_RC(bfi_query_key(fresh, "k2", 2, r), 0);
		EXPECT(bfi_result_count(r) == 2);
		EXPECT_RC(bfi_set_name(fresh, 1, &name, &nl), 0);
		EXPECT(nl == 4 && memcmp(name, "new2", 4) == 0);
	}
	bfi_result_destroy(&r);
	bfi_close(&old);
	bfi_close(&fresh);
}

/* More rows than half of a 16 MiB budget: rows are filled in stripes. */
/* Which ways the flat rows were filled: 1 in memory, 2 from slices, 4 in stripes. */
static void note_phase(void *ctx, const char *phase, uint64_t done, uint64_t total)
{
	unsigned *seen = ctx;
	(void)done, (void)total;
	*seen |= !strcmp(phase, "rows") ? 1u : !strcmp(phase, "rows from slices") ? 2u
	                                     : !strcmp(phase, "row stripes")      ? 4u
	                                                                          : 0u;
}

static size_t wide_key(uint32_t set, uint32_t i, char *buf, size_t cap)
{
	return (size_t)snprintf(buf, cap, "%u-%u", set, i);
}

static void test_stripes(void)
{
	unsigned seen[4] = {0};
	char a[4300], b[4300];
	snprintf(a, sizeof a, "%s/wide-a", test_tmpdir());
	snprintf(b, sizeof b, "%s/wide-b", test_tmpdir());
	for (int pass = 0; pass < 2; pass++) {
		struct bfi_build_options o;
		bfi_build_options_init(&o);
		o.bits = 300000; /* 300,000 rows x 600 bits = 22 MB > 16 MiB */
		o.max_block_sets = 4096; /* one block of 600 packed rows, not 512 and 88 */
		o.memory = pass ? test_resident() + (16u << 20) : 1u << 30;
		o.progress = note_phase;
		o.progress_ctx = &seen[pass];
		bfi_writer *w;
		EXPECT_RC(bfi_writer_create(&o, &w), 0);
		for (uint32_t j = 0; j < 600; j++) {
			char name[16], key[32];
			uint32_t ord;
			snprintf(name, sizeof name, "s%u", j);
			EXPECT_RC(bfi_writer_set(w, name, strlen(name), &ord), 0);
			for (uint32_t i = 0; i < 50; i++) {
				int n = snprintf(key, sizeof key, "%u", i * 7919 + j);
				EXPECT_RC(bfi_writer_key(w, ord, key, (size_t)n), 0);
			}
		}
		struct bfi_build_summary sum;
		EXPECT_RC(bfi_writer_finish(w, pass ? b : a, &sum), 0);
		EXPECT(sum.bits == 300000 && sum.n_sets == 600 && sum.keys_in == 30000);
		bfi_writer_destroy(&w);
	}
	char pa[4400], pb[4400];
	snprintf(pa, sizeof pa, "%s/index.bfi", a);
	snprintf(pb, sizeof pb, "%s/index.bfi", b);
	size_t la, lb;
	uint8_t *x = test_read_file(pa, &la), *y = test_read_file(pb, &lb);
	EXPECT(x && y && la == lb && memcmp(x, y, la) == 0);
	free(x);
	free(y);
	struct bfi_verify_report rep;
	EXPECT_RC(bfi_verify(b, &rep, NULL, NULL), 0);
	/*
	 * Filters too wide for 64 of them in a 16 MiB budget: 65 sets of
	 * 2,200,000 bits go to row stripes at 16 MiB, and in memory at 1 GiB.
	 */
	for (int pass = 0; pass < 2; pass++) {
		struct bfi_build_options o;
		bfi_build_options_init(&o);
		o.bits = 2200000;
		o.memory = pass ? test_resident() + (16u << 20) : 1u << 30;
		o.progress = note_phase;
		o.progress_ctx = &seen[2 + pass];
		char *out = pass ? b : a;
		snprintf(out, 4300, "%s/wide65-%d", test_tmpdir(), pass);
		EXPECT_RC(test_build_sets(&o, out, 65, 300, wide_key), 0);
	}
	snprintf(pa, sizeof pa, "%s/index.bfi", a);
	snprintf(pb, sizeof pb, "%s/index.bfi", b);
	x = test_read_file(pa, &la);
	y = test_read_file(pb, &lb);
	EXPECT(x && y && la == lb && memcmp(x, y, la) == 0);
	free(x);
	free(y);
	EXPECT_RC(bfi_verify(b, &rep, NULL, NULL), 0);
	EXPECT(seen[0] == 1 && seen[1] == 2 && seen[2] == 1 && seen[3] == 4);
}


/*
 * 20,480 sets of 5 keys of their own, all of one width: plan_blocks alone
 * keeps them in one block, where a key held by one set reads two rows of
 * 2,560 bytes. The planner's query model cuts it into blocks that each get
 * a pre-filter; with pre-filters off, or a cap on the block size, it does
 * not. Every key still finds its set.
 */
enum { CUT_SETS = 20480, CUT_KEYS = 5 };

static size_t cut_key(uint32_t set, uint32_t i, char *buf, size_t cap)
{
	return (size_t)snprintf(buf, cap, "k%u_%u", set, i);
}

static int build_cut(const char *out, int prefilter, uint32_t max_block_sets)
{
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	o.keep_order = 1;
	o.prefilter = prefilter;
	o.max_block_sets = max_block_sets;
	return test_build_sets(&o, out, CUT_SETS, CUT_KEYS, cut_key);
}

/*
 * A line pre-filter holding n keys in L lines of 512 bits passes an absent
 * key with probability sum_x Poisson(x; n / L) (1 - (1 - 1/512)^(k x))^k
 * (spec/format.md, "Flat section"). One block of the 20,480 sets above
 * (102,400 distinct keys) and 200,000 absent keys: a key the pre-filter
 * rejects touches its one line, 64 bytes, and nothing else. The measured
 * rate must sit within four standard deviations of the formula, and each
 * probe must be one line.
 */
/*
 * Keys that overflow a 16 MiB budget several times over, each set's keys
 * spread over every spill (added round-robin, with repeats), build under a
 * limit of open files that one spill file meets and one file per spilled
 * run would not; the index is byte for byte the one built in memory.
 */
static void test_spill(void)
{
	enum { SETS = 40, PER = 60000 };
	char out[2][4300];
	struct rlimit was;
	EXPECT(getrlimit(RLIMIT_NOFILE, &was) == 0);
	for (int pass = 0; pass < 2; pass++) {
		snprintf(out[pass], sizeof out[pass], "%s/spill-%d", test_tmpdir(), pass);
		struct bfi_build_options o;
		bfi_build_options_init(&o);
		o.memory = pass ? 16u << 20 : 1u << 30; /* 16 MiB: runs of about 260,000 records */
		bfi_writer *w;
		EXPECT_RC(bfi_writer_create(&o, &w), 0);
		uint32_t ord[SETS];
		for (uint32_t j = 0; j < SETS; j++) {
			char name[16];
			snprintf(name, sizeof name, "s%u", j);
			EXPECT_RC(bfi_writer_set(w, name, strlen(name), &ord[j]), 0);
		}
		/* the fds now open, and room for the spill, the output and the catalog's */
		int open_fds = 0;
		for (int fd = 0; fd < 1024; fd++)
			open_fds += fcntl(fd, F_GETFD) != -1;
		struct rlimit tight = {(rlim_t)open_fds + 6, was.rlim_max};
		EXPECT(pass == 0 || setrlimit(RLIMIT_NOFILE, &tight) == 0);
		for (uint32_t i = 0; i < PER; i++)
			for (uint32_t j = 0; j < SETS; j++) {
				char key[32];
				/* every fourth key again: repeats across runs */
				int n = snprintf(key, sizeof key, "%u-%u", j, i % 4 == 3 ? i - 3 : i);
				EXPECT_RC(bfi_writer_key(w, ord[j], key, (size_t)n), 0);
			}
		struct bfi_build_summary sum;
		EXPECT_RC(bfi_writer_finish(w, out[pass], &sum), 0);
		EXPECT(setrlimit(RLIMIT_NOFILE, &was) == 0);
		EXPECT(sum.keys_in == (uint64_t)SETS * PER);
		bfi_writer_destroy(&w);
	}
	char pa[4400], pb[4400];
	snprintf(pa, sizeof pa, "%s/index.bfi", out[0]);
	snprintf(pb, sizeof pb, "%s/index.bfi", out[1]);
	size_t la, lb;
	uint8_t *x = test_read_file(pa, &la), *y = test_read_file(pb, &lb);
	EXPECT(x && y && la == lb && memcmp(x, y, la) == 0);
	free(x);
	free(y);
	bfi_snapshot *s = NULL;
	EXPECT_RC(bfi_open(out[1], 0, &s), 0);
	struct bfi_set_stats st;
	EXPECT(s && bfi_set_stats(s, 0, &st) == 0 && st.distinct_keys == PER - PER / 4);
	bfi_close(&s);
}

/*
 * The transpose (writer/transpose.c) against the bit-by-bit definition:
 * random 64 x 64 tiles, and filters of odd widths into packed and lined
 * rows at a column that does not start a word.
 */
static void test_transpose(void)
{
	uint64_t seed = 99, a[64], t[64];
	for (int round = 0; round < 20; round++) {
		for (int r = 0; r < 64; r++)
			a[r] = t[r] = test_rand(&seed) & (round % 2 ? test_rand(&seed) : ~0ull);
		transpose64(t);
		int bad = 0;
		for (int r = 0; r < 64; r++)
			for (int c = 0; c < 64; c++)
				bad += (int)(t[c] >> r & 1) != (int)(a[r] >> c & 1);
		EXPECT(bad == 0);
	}
	/* strides, then rows of a grouped run: 8 rows a group of 1,024 bits, from bit 200 of it */
	static const uint64_t strides[] = {1, 65, 100, 512, 1024, 40, 100};
	for (size_t x = 0; x < sizeof strides / sizeof *strides; x++) {
		uint64_t m = 1000, words = (m + 63) / 64, row_bits = strides[x];
		struct rowmap rm = {row_bits, x >= 5 ? 8 : 0, 1024, 200, 0, 0};
		uint32_t n = row_bits < 40 ? (uint32_t)row_bits : 40;
		uint64_t col = row_bits > 64 ? 19 : 0, bytes = (m * row_bits + 64 + 511) / 512 * 64;
		if (rm.q)
			bytes = m / rm.q * rm.group_bits / 8 + 64;
		uint64_t *filt = calloc(n * words, 8);
		uint8_t *rows = calloc(bytes, 1), *want = calloc(bytes, 1);
		for (uint32_t c = 0; filt && c < n; c++)
			for (uint64_t r = 0; r < m; r++)
				if (test_rand(&seed) % 3 == 0) {
					filt[c * words + r / 64] |= 1ull << (r % 64);
					uint64_t bit = (rm.q ? r / 8 * 1024 + 200 + r % 8 * row_bits : r * row_bits) +
					               col + c;
					want[bit / 8] |= (uint8_t)(1u << (bit % 8));
				}
		if (filt && rows && want) {
			transpose_filters(filt, words, n, m, rows, &rm, col, (int)(x % 2));
			EXPECT(memcmp(rows, want, bytes) == 0);
		}
		free(filt);
		free(rows);
		free(want);
	}
}

/* One key a thousand times among others, in one set and over a spill: counted once. */
static void test_repeats(void)
{
	for (int pass = 0; pass < 2; pass++) {
		struct bfi_build_options o;
		bfi_build_options_init(&o);
		o.memory = 16u << 20;
		bfi_writer *w;
		uint32_t ord;
		EXPECT_RC(bfi_writer_create(&o, &w), 0);
		EXPECT_RC(bfi_writer_set(w, "s", 1, &ord), 0);
		/* pass 1: enough other keys between the repeats to spill several runs */
		uint32_t others = pass ? 400000 : 100;
		for (uint32_t i = 0; i < others; i++) {
			char key[16];
			EXPECT_RC(bfi_writer_key(w, ord, key, (size_t)snprintf(key, sizeof key, "k%u", i)), 0);
			if (i % (others / 100 ? others / 100 : 1) == 0)
				for (int r = 0; r < 10; r++)
					EXPECT_RC(bfi_writer_key(w, ord, "again", 5), 0);
		}
		char out[4300];
		snprintf(out, sizeof out, "%s/repeats-%d", test_tmpdir(), pass);
		EXPECT_RC(bfi_writer_finish(w, out, NULL), 0);
		bfi_writer_destroy(&w);
		bfi_snapshot *s = NULL;
		struct bfi_set_stats st;
		EXPECT_RC(bfi_open(out, 0, &s), 0);
		EXPECT(s && bfi_set_stats(s, 0, &st) == 0 && st.distinct_keys == others + 1);
		bfi_close(&s);
	}
}

static size_t thread_key(uint32_t set, uint32_t i, char *buf, size_t cap)
{
	/* overlapping sets, with repeats: key i of set j is a number below 5,000 */
	uint64_t st = (uint64_t)set * 0x9E3779B97F4A7C15ull + i;
	return (size_t)snprintf(buf, cap, "k%u", (uint32_t)(test_rand(&st) % 5000));
}

/*
 * The same keys at 1, 2 and 5 threads, and at 16 MiB and 1 GiB, give the
 * same bytes: 700 sets in a block of lined rows and one of packed, with
 * pre-filters, so that threads share row words and merge pre-filters.
 */
static void test_threads_identical(void)
{
	static const struct {
		unsigned threads;
		uint64_t memory;
	} runs[] = {{1, 1u << 30}, {2, 1u << 30}, {5, 1u << 30}, {2, 16u << 20}};
	uint8_t *first = NULL;
	size_t first_len = 0;
	for (size_t x = 0; x < sizeof runs / sizeof *runs; x++) {
		struct bfi_build_options o;
		bfi_build_options_init(&o);
		o.threads = runs[x].threads;
		o.memory = runs[x].memory;
		o.max_block_sets = 512; /* the fewest blocks of at most 512 sets: two */
		o.block_cost = 1ull << 40;
		o.prefilter = BFI_PREFILTER_ALWAYS;
		char out[4300], idx[4400];
		snprintf(out, sizeof out, "%s/threads-%zu", test_tmpdir(), x);
		EXPECT_RC(test_build_sets(&o, out, 700, 400, thread_key), 0);
		snprintf(idx, sizeof idx, "%s/index.bfi", out);
		size_t len;
		uint8_t *b = test_read_file(idx, &len);
		EXPECT(b != NULL);
		if (x == 0) {
			first = b;
			first_len = len;
			bfi_snapshot *s = NULL;
			struct bfi_info in;
			struct bfi_block_info b0, b1;
			EXPECT_RC(bfi_open(out, 0, &s), 0);
			if (s) {
				bfi_info(s, &in);
				struct bfi_layout_info lf = test_layout(s, BFI_LAYOUT_FLAT);
				EXPECT(lf.u.flat.blocks == 2 && bfi_block(s, 0, &b0) == 0 && bfi_block(s, 1, &b1) == 0 &&
				       b0.n_sets <= 512 && b1.n_sets <= 512 && b1.row_bits == b1.n_sets &&
				       b0.prefilter_bits > 0 && b1.prefilter_bits > 0);
			}
			bfi_close(&s);
			struct bfi_verify_report rep;
			EXPECT_RC(bfi_verify(out, &rep, NULL, NULL), 0);
			continue;
		}
		EXPECT(b && first && len == first_len && memcmp(b, first, len) == 0);
		free(b);
	}
	free(first);
}

static size_t space_key(uint32_t set, uint32_t i, char *buf, size_t cap)
{
	return (size_t)snprintf(buf, cap, "s%u-key%u", set, i);
}

/*
 * Rows sized to N (spec/format.md, "Flat section"): at N = 1, 65 and 512
 * index.bfi is at most 1.10 times the bits of its filters (every set's
 * block width, and the pre-filters) plus 64 KiB, where rows padded to 512
 * sets made N = 1 512 times its filter. Every key is found.
 */
/*
 * Sets of mixed sizes, as 4 viruses beside 16 bacteria: 4 sets of 500
 * keys, 8 of 150,000 and 8 of 400,000. Blocks may end between any two of
 * 20 sets. By default the 4 small sets get a block of their own, whose
 * lines a cache keeps, while the two large widths are not cut apart (a
 * block of its own for the 150,000s would save less than half the index):
 * the block of the 400,000s holds some of them. At a block cost of 64 KiB
 * each width gets its block and the index is within 1.10x of every set's
 * own filter.
 */
static int build_mixed(const char *out, uint64_t block_cost)
{
	static const uint32_t sizes[] = {500, 150000, 400000};
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	o.block_cost = block_cost;
	bfi_writer *w;
	int rc = bfi_writer_create(&o, &w);
	char key[32];
	for (uint32_t j = 0; j < 20 && rc == 0; j++) {
		uint32_t ord, n = sizes[j < 4 ? 0 : j < 12 ? 1 : 2];
		int len = snprintf(key, sizeof key, "set%02u", j);
		rc = bfi_writer_set(w, key, (size_t)len, &ord);
		for (uint32_t i = 0; i < n && rc == 0; i++) {
			len = snprintf(key, sizeof key, "%u/%u", j, i);
			rc = bfi_writer_key(w, ord, key, (size_t)len);
		}
	}
	if (rc == 0)
		rc = bfi_writer_finish(w, out, NULL);
	bfi_writer_destroy(&w);
	return rc;
}

static void test_mixed_sizes(void)
{
	static const uint32_t sizes[] = {500, 150000, 400000};
	uint64_t own = 0; /* bytes of each set's own filter */
	for (uint32_t j = 0; j < 20; j++) {
		uint64_t m;
		uint32_t k;
		EXPECT(bfi_filter_size(sizes[j < 4 ? 0 : j < 12 ? 1 : 2], 0.01, &m, &k) >= 0);
		own += (m + 7) / 8;
	}
	for (int x = 0; x < 2; x++) {
		char out[4300], ipath[4400];
		snprintf(out, sizeof out, "%s/mixed-%d", test_tmpdir(), x);
		EXPECT_RC(build_mixed(out, x ? 1u << 16 : 0), 0);
		bfi_snapshot *s;
		EXPECT_RC(bfi_open(out, 0, &s), 0);
		if (s == NULL)
			return;
		struct bfi_layout_info lf = test_layout(s, BFI_LAYOUT_FLAT);
		struct bfi_block_info b0, last;
		EXPECT_RC(bfi_block(s, 0, &b0), 0);
		EXPECT_RC(bfi_block(s, lf.u.flat.blocks - 1, &last), 0);
		snprintf(ipath, sizeof ipath, "%s/index.bfi", out);
		struct stat st;
		EXPECT(stat(ipath, &st) == 0);
		printf("mixed sizes, block cost %s: %u blocks, index.bfi %lld bytes, %.3fx the sets' own "
		       "filters\n", x ? "64 KiB" : "by default", lf.u.flat.blocks, (long long)st.st_size,
		       (double)st.st_size / (double)own);
		EXPECT(b0.n_sets == 4); /* the small sets apart, in every case */
		if (x)
			EXPECT(lf.u.flat.blocks == 3 && last.first_set == 12 &&
			       (double)st.st_size <= 1.10 * (double)own);
		else
			EXPECT(last.first_set < 12 && last.first_set + last.n_sets == 20);
		/* every key of every set still finds it */
		bfi_result *r;
		EXPECT_RC(bfi_result_create(&r), 0);
		char key[32];
		for (uint32_t j = 0; r && j < 20; j++)
			for (uint32_t i = 0; i < 50; i++) {
				int len = snprintf(key, sizeof key, "%u/%u", j, i * 7);
				EXPECT_RC(bfi_query_key(s, key, (size_t)len, r), 0);
				const uint32_t *ords = bfi_result_ordinals(r);
				int found = 0;
				for (size_t q = 0; q < bfi_result_count(r); q++) {
					const char *name;
					size_t nl;
					EXPECT_RC(bfi_set_name(s, ords[q], &name, &nl), 0);
					char want[16];
					found |= nl == (size_t)snprintf(want, sizeof want, "set%02u", j) &&
					         memcmp(name, want, nl) == 0;
				}
				EXPECT(found);
			}
		bfi_result_destroy(&r);
		bfi_close(&s);
	}
}

static void test_space_bound(void)
{
	static const uint32_t ns[] = {1, 65, 512};
	for (size_t x = 0; x < sizeof ns / sizeof *ns; x++) {
		uint32_t n = ns[x], per = n == 512 ? 2000 : 20000;
		char name[32];
		snprintf(name, sizeof name, "space-%u", n);
		const char *out = path_in(name);
		EXPECT_RC(test_build_sets(NULL, out, n, per, space_key), 0);
		bfi_snapshot *s = NULL;
		EXPECT_RC(bfi_open(out, 0, &s), 0);
		if (s == NULL)
			return;
		struct bfi_info in;
		bfi_info(s, &in);
		struct bfi_layout_info lf = test_layout(s, BFI_LAYOUT_FLAT);
		uint64_t bits = 0;
		for (uint32_t b = 0; b < lf.u.flat.blocks; b++) {
			struct bfi_block_info bi;
			EXPECT_RC(bfi_block(s, b, &bi), 0);
			bits += bi.bits * bi.n_sets + bi.prefilter_bits;
		}
		char idx[4400];
		snprintf(idx, sizeof idx, "%s/index.bfi", out);
		struct stat st;
		EXPECT(stat(idx, &st) == 0);
		double ratio = ((double)st.st_size - 65536) / ((double)bits / 8);
		printf("N = %u: index.bfi %lld bytes, filters %llu bits: (size - 64 KiB) / filters %.3f\n",
		       n, (long long)st.st_size, (unsigned long long)bits, ratio);
		EXPECT((double)st.st_size <= 1.10 * (double)bits / 8 + 65536);
		/* no key missed, in the first set and the last */
		bfi_result *r = NULL;
		EXPECT_RC(bfi_result_create(&r), 0);
		uint64_t missed = 0;
		for (uint32_t j = 0; r && j < n; j += n > 1 ? n - 1 : 1)
			for (uint32_t i = 0; i < per; i++) {
				char key[64];
				uint32_t ord, hit = 0;
				snprintf(name, sizeof name, "s%u", j);
				EXPECT_RC(bfi_set_find(s, name, strlen(name), &ord), 0);
				EXPECT_RC(bfi_query_key(s, key, space_key(j, i, key, sizeof key), r), 0);
				for (size_t a = 0; a < bfi_result_count(r); a++)
					hit |= bfi_result_ordinals(r)[a] == ord;
				missed += !hit;
			}
		EXPECT(missed == 0);
		bfi_result_destroy(&r);
		bfi_close(&s);
	}
}

static double line_fpr(double n, double lines, uint32_t k)
{
	double lambda = n / lines, term = exp(-lambda), sum = 0;
	for (int x = 0; x < (int)(lambda * 4 + 200); x++) {
		sum += term * pow(1 - pow(1 - 1.0 / 512, (double)k * x), k);
		term *= lambda / (x + 1);
	}
	return sum;
}

static void test_line_prefilter_rate(void)
{
	const char *out = path_in("cutrate");
	EXPECT_RC(build_cut(out, BFI_PREFILTER_AUTO, CUT_SETS), 0);
	bfi_snapshot *s = NULL;
	EXPECT_RC(bfi_open(out, 0, &s), 0);
	if (s == NULL)
		return;
	struct bfi_info in;
	struct bfi_block_info bi;
	bfi_info(s, &in);
	struct bfi_layout_info lf = test_layout(s, BFI_LAYOUT_FLAT);
	EXPECT(lf.u.flat.blocks == 1 && lf.u.flat.line_prefilters);
	EXPECT_RC(bfi_block(s, 0, &bi), 0);
	EXPECT(bi.prefilter_bits > 0 && bi.prefilter_bits % 512 == 0);
	bfi_result *res = NULL;
	EXPECT_RC(bfi_result_create(&res), 0);
	const uint32_t tries = 200000;
	uint32_t passed = 0, odd = 0;
	char key[32];
	for (uint32_t q = 0; q < tries && res; q++) {
		bfi_result_count_bytes(res, 1);
		EXPECT_RC(bfi_query_key(s, key, (size_t)snprintf(key, sizeof key, "absent%u", q), res), 0);
		uint64_t t = bfi_result_touched(res);
		passed += t > 64;
		odd += t < 64;
	}
	double p = line_fpr((double)CUT_SETS * CUT_KEYS, (double)bi.prefilter_bits / 512, in.hashes);
	double want = p * tries, sd = sqrt(want * (1 - p));
	printf("line pre-filter: %u of %u absent keys passed, theory %.1f (rate %.5f)\n", passed,
	       tries, want, p);
	EXPECT(odd == 0);
	EXPECT(fabs(passed - want) <= 4 * sd);
	bfi_result_destroy(&res);
	bfi_close(&s);
}

static void test_query_cuts(void)
{
	const struct {
		int prefilter;
		uint32_t cap;
		int want_cut;
	} cases[] = {{BFI_PREFILTER_AUTO, 0, 1}, {BFI_PREFILTER_NEVER, 0, 0}, {BFI_PREFILTER_AUTO, 20480, 0}};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		const char *out = path_in(c == 0 ? "cut0" : c == 1 ? "cut1" : "cut2");
		EXPECT_RC(build_cut(out, cases[c].prefilter, cases[c].cap), 0);
		bfi_snapshot *s = NULL;
		EXPECT_RC(bfi_open(out, 0, &s), 0);
		if (s == NULL)
			continue;
		struct bfi_info in;
		bfi_info(s, &in);
		struct bfi_layout_info lf = test_layout(s, BFI_LAYOUT_FLAT);
		if (cases[c].want_cut) {
			EXPECT(lf.u.flat.blocks > 1 && lf.u.flat.blocks <= 32);
			uint64_t next = 0;
			for (uint32_t b = 0; b < lf.u.flat.blocks; b++) {
				struct bfi_block_info bi;
				EXPECT_RC(bfi_block(s, b, &bi), 0);
				EXPECT(bi.first_set == next && bi.first_set % 512 == 0);
				EXPECT(bi.prefilter_bits > 0);
				next = bi.first_set + bi.n_sets;
			}
			EXPECT(next == CUT_SETS);
		} else {
			EXPECT(lf.u.flat.blocks == 1);
		}
		bfi_result *res = NULL;
		EXPECT_RC(bfi_result_create(&res), 0);
		uint64_t fn = 0;
		char key[32];
		for (uint32_t j = 0; j < CUT_SETS && res; j += 7) {
			uint32_t ord;
			char name[32];
			EXPECT_RC(bfi_set_find(s, name, (size_t)snprintf(name, sizeof name, "s%u", j), &ord), 0);
			int found = 0;
			if (bfi_query_key(s, key, (size_t)snprintf(key, sizeof key, "k%u_%u", j, j % CUT_KEYS), res) == 0)
				for (size_t i = 0; i < bfi_result_count(res); i++)
					found |= bfi_result_ordinals(res)[i] == ord;
			fn += !found;
		}
		EXPECT(fn == 0);
		bfi_result_destroy(&res);
		bfi_close(&s);
	}
}

/*
 * Sets read from files twice (writer/sources.c) give the bytes the spool
 * gives for the same keys: 600 key files of 30 to 430 keys, with repeats,
 * and one of 300,000 distinct keys, which at --memory 16M passes a
 * thread's share and so is spooled, in every layout (flat from per-set
 * filters, the others from stripes that read every file again). A file
 * changed between the two readings stops the build, and nothing is
 * published.
 */
#define SRC_FILES 600
#define SRC_BIG 300000u

static size_t src_key(uint32_t set, uint32_t i, char *buf, size_t cap)
{
	/* repeats within a set (i mod its size), and keys shared across sets */
	uint32_t n = set == SRC_FILES ? SRC_BIG : 30 + set * 2 / 3;
	return (size_t)snprintf(buf, cap, "key%u", (i % n) * 7 + set % 50);
}

static uint32_t src_count(uint32_t set)
{
	return set == SRC_FILES ? SRC_BIG : 40 + set * 2 / 3;
}

static int src_build(const char *dir, const char *out, int from_files, unsigned threads,
                     uint64_t memory, unsigned layouts, int *spooled)
{
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	o.threads = threads;
	o.memory = memory;
	o.layouts = layouts;
	o.prefilter = BFI_PREFILTER_ALWAYS;
	bfi_writer *w = NULL;
	int rc = bfi_writer_create(&o, &w);
	if (rc == 0 && from_files) {
		rc = bfi_writer_add_dir(w, dir);
		*spooled = 0;
		for (size_t x = 0; rc == 0 && x < w->names.n; x++)
			*spooled += w->src[x].how == NULL; /* read from the spool */
	}
	for (uint32_t set = 0; rc == 0 && !from_files && set <= SRC_FILES; set++) {
		char name[32], key[64];
		uint32_t ord;
		rc = bfi_writer_set(w, name, (size_t)snprintf(name, sizeof name, "f%04u", set), &ord);
		for (uint32_t i = 0; rc == 0 && i < src_count(set); i++)
			rc = bfi_writer_key(w, ord, key, src_key(set, i, key, sizeof key));
	}
	if (rc == 0)
		rc = bfi_writer_finish(w, out, NULL);
	bfi_writer_destroy(&w);
	return rc;
}

/* Is snap's index.bfi the one at *first? The first call keeps it there. */
static int same_index(const char *snap, uint8_t **first, size_t *first_len)
{
	char idx[4500];
	snprintf(idx, sizeof idx, "%s/index.bfi", snap);
	size_t len;
	uint8_t *b = test_read_file(idx, &len);
	if (b == NULL || *first == NULL) {
		*first = b;
		*first_len = len;
		return b != NULL;
	}
	int same = len == *first_len && memcmp(b, *first, len) == 0;
	free(b);
	return same;
}

static void test_sources(void)
{
	char dir[4300], path[4400], out[4400];
	snprintf(dir, sizeof dir, "%s/src-keys", test_tmpdir());
	EXPECT(mkdir(dir, 0700) == 0);
	for (uint32_t set = 0; set <= SRC_FILES; set++) {
		snprintf(path, sizeof path, "%s/f%04u", dir, set);
		FILE *f = fopen(path, "w");
		EXPECT(f != NULL);
		char key[64];
		for (uint32_t i = 0; f && i < src_count(set); i++) {
			src_key(set, i, key, sizeof key);
			fprintf(f, "%s\n", key);
		}
		if (f)
			fclose(f);
	}
	static const unsigned layouts[] = {BFI_BUILD_FLAT,
	                                   BFI_BUILD_PLAIN | BFI_BUILD_TREE | BFI_BUILD_RAMBO};
	for (size_t l = 0; l < 2; l++) {
		uint8_t *first = NULL;
		size_t first_len = 0;
		static const struct {
			int files;
			unsigned threads;
			uint64_t memory;
		} runs[] = {{0, 1, 1u << 30}, {1, 2, 1u << 30}, {1, 1, 16u << 20}};
		for (size_t x = 0; x < 3; x++) {
			int spooled = -1;
			snprintf(out, sizeof out, "%s/src-%zu-%zu", test_tmpdir(), l, x);
			EXPECT_RC(src_build(dir, out, runs[x].files, runs[x].threads, runs[x].memory,
			                    layouts[l], &spooled),
			          0);
			/* files read twice, but the big one spooled under the small budget */
			EXPECT(!runs[x].files || spooled == (runs[x].memory < (1u << 30) ? 1 : 0));
			EXPECT(same_index(out, &first, &first_len));
		}
		free(first);
	}

	/* a file changed after its first reading */
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	bfi_writer *w = NULL;
	EXPECT_RC(bfi_writer_create(&o, &w), 0);
	EXPECT_RC(bfi_writer_add_dir(w, dir), 0);
	snprintf(path, sizeof path, "%s/f0123", dir);
	FILE *f = fopen(path, "a");
	EXPECT(f != NULL);
	if (f) {
		fputs("one more key\n", f);
		fclose(f);
	}
	snprintf(out, sizeof out, "%s/src-changed", test_tmpdir());
	EXPECT_RC(bfi_writer_finish(w, out, NULL), BFI_E_INPUT);
	EXPECT(strstr(bfi_writer_errmsg(w), "f0123: changed while the snapshot was being built") != NULL);
	struct stat st;
	EXPECT(stat(out, &st) != 0 && errno == ENOENT);
	bfi_writer_destroy(&w);
}

/*
 * --min-count's counter (writer/count.c) against an exact count: 60,000
 * distinct keys seen 1 to 5 times in a shuffled order, counted in memory
 * and in a table of 4,096 slots, whose counts go through dozens of
 * sorted runs merged by a heap. Both must keep exactly the keys seen at
 * least 3 times.
 */
struct kept {
	uint8_t *seen;             /* by key number */
	const bfi_keyhash *hashes; /* by key number */
	const uint32_t *by_h1;     /* key numbers in h1 order, to look a hash up */
	size_t n, emitted, wrong;
};

static const bfi_keyhash *sort_hashes;

static int by_h1(const void *a, const void *b)
{
	uint64_t x = sort_hashes[*(const uint32_t *)a].h1, y = sort_hashes[*(const uint32_t *)b].h1;
	return (x > y) - (x < y);
}

static int kept_one(void *ctx, bfi_keyhash h)
{
	struct kept *k = ctx;
	k->emitted++;
	size_t lo = 0, hi = k->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (k->hashes[k->by_h1[mid]].h1 < h.h1)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < k->n && k->hashes[k->by_h1[lo]].h1 == h.h1; lo++)
		if (k->hashes[k->by_h1[lo]].h2 == h.h2) {
			k->wrong += k->seen[k->by_h1[lo]] != 0; /* emitted twice */
			k->seen[k->by_h1[lo]] = 1;
			return 0;
		}
	k->wrong++; /* a hash never given */
	return 0;
}

static void test_min_count(void)
{
	enum { KEYS = 60000, LEAST = 3 };
	uint32_t *times = malloc(KEYS * sizeof *times);
	bfi_keyhash *hashes = malloc(KEYS * sizeof *hashes);
	size_t total = 0;
	uint64_t x = 88172645463325252ull;
	for (uint32_t i = 0; i < KEYS; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		times[i] = 1 + (uint32_t)(x % 5);
		total += times[i];
		char key[16];
		int n = snprintf(key, sizeof key, "k%u", i);
		hashes[i] = bfi_hash_key(key, (size_t)n);
	}
	uint32_t *order = malloc(total * sizeof *order);
	size_t at = 0;
	for (uint32_t i = 0; i < KEYS; i++)
		for (uint32_t t = 0; t < times[i]; t++)
			order[at++] = i;
	for (size_t i = total - 1; i > 0; i--) { /* shuffled: a key's repeats fall in different runs */
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		size_t j = (size_t)(x % (i + 1));
		uint32_t t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	size_t want = 0;
	uint32_t *sorted = malloc(KEYS * sizeof *sorted);
	for (uint32_t i = 0; i < KEYS; i++) {
		want += times[i] >= LEAST;
		sorted[i] = i;
	}
	sort_hashes = hashes;
	qsort(sorted, KEYS, sizeof *sorted, by_h1);
	for (int small = 0; small < 2; small++) {
		struct counter c;
		counter_init(&c, LEAST, small ? 0 : UINT64_C(1) << 30, test_tmpdir());
		for (size_t i = 0; i < total; i++) {
			char key[16];
			int n = snprintf(key, sizeof key, "k%u", order[i]);
			EXPECT_RC(counter_key(&c, key, (size_t)n), 0);
		}
		EXPECT(c.keys == total);
		struct kept k = {calloc(KEYS, 1), hashes, sorted, KEYS, 0, 0};
		EXPECT_RC(counter_emit(&c, kept_one, &k), 0);
		EXPECT(small ? c.n_runs > 40 : c.fd < 0);
		if (small)
			printf("  %zu runs merged\n", c.n_runs);
		EXPECT(k.emitted == want && k.wrong == 0);
		EXPECT(c.distinct == KEYS); /* every key counted once, of any count */
		size_t bad = 0;
		for (uint32_t i = 0; i < KEYS; i++)
			bad += k.seen[i] != (times[i] >= LEAST);
		EXPECT(bad == 0);
		free(k.seen);
		counter_free(&c);
	}
	free(sorted);
	free(order);
	free(hashes);
	free(times);
}

int main(void)
{
	test_run("writer: malformed input refused with its location", test_bad_input);
	test_run("writer: options sized by the caller's header: older ones take the defaults past it",
	         test_options_size);
	test_run("writer: directory input (order, CRLF, hidden, empty, subdir)", test_dir_input);
	test_run("writer: atomic publish, never clobbers, replaces under a reader", test_publish);
	test_run("writer: filters transposed into rows, as the bit-by-bit definition", test_transpose);
	test_run("writer: a key repeated a thousand times, in memory and spilled, counts once",
	         test_repeats);
	test_run("writer: byte-identical at 1, 2 and 5 threads and at 16 MiB and 1 GiB",
	         test_threads_identical);
	test_run("writer: slices and row stripes under a small memory budget, as in memory",
	         test_stripes);
	test_run("writer: keys spilled to one file, sets across runs, as built in memory", test_spill);
	test_run("writer: sets of one width cut into blocks that pay queries", test_query_cuts);
	test_run("writer: mixed sizes: small sets in a block of their own; at 64 KiB a block, 1.10x "
	         "their own filters",
	         test_mixed_sizes);
	test_run("writer: index.bfi within 1.10x its filters' bits + 64 KiB at N = 1, 65, 512",
	         test_space_bound);
	test_run("writer: line pre-filters reject absent keys at their theoretical rate",
	         test_line_prefilter_rate);
	test_run("writer: key files read twice, as spooled, in every layout; a change stops the build",
	         test_sources);
	test_run("writer: --min-count's counts exact in memory and through dozens of merged runs",
	         test_min_count);
	return test_exit();
}
