/*
 * test_writer.c - the writer's inputs, errors, publishing and memory
 * bound: bad input is refused with a message naming where, existing
 * files are never clobbered, a snapshot is replaced atomically while a
 * reader holds the old one, and row stripes give the same bytes
 * (test_blocks.c: the flat blocks' plan).
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <string.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>

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
	return test_exit();
}
