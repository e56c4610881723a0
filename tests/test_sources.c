/*
 * test_sources.c - the writer's reading of files: sets read from their
 * files twice give the bytes the spool gives, and --min-count's counts
 * are exact in memory and through merged runs on disk.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../writer/count.h"
#include "../writer/layout.h"
#include "../writer/sources.h"
#include "test.h"

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

/*
 * A group's input kind is one of the kinds a group reads (writer/group.c's
 * table): another is refused with the kinds named, and a group of key
 * files after a group of FASTA files is refused, as key files after FASTA
 * files are: one snapshot's keys are made one way.
 */
static void test_group_kinds(void)
{
	char fa[4096], keys[4096];
	snprintf(fa, sizeof fa, "%s/g.fa", test_tmpdir());
	snprintf(keys, sizeof keys, "%s/g.keys", test_tmpdir());
	FILE *f = fopen(fa, "w");
	fputs(">r\nACGTACGTACGTACGTACGTAAACCCGGGTTT\n", f);
	fclose(f);
	f = fopen(keys, "w");
	fputs("apple\nplum\n", f);
	fclose(f);
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	bfi_writer *w = NULL;
	EXPECT_RC(bfi_writer_create(&o, &w), 0);
	const char *const one[] = {fa}, *const other[] = {keys};
	EXPECT_RC(bfi_writer_add_group(w, "t", 1, other, 1, "text", 0), BFI_E_INVALID);
	EXPECT(strstr(bfi_writer_errmsg(w), "takes fasta, protein or keys input, not text") != NULL);
	EXPECT_RC(bfi_writer_add_group(w, "a", 1, one, 1, "fasta", 7), 0);
	EXPECT_RC(bfi_writer_add_group(w, "b", 1, other, 1, "keys", 0), BFI_E_INPUT);
	EXPECT(strstr(bfi_writer_errmsg(w), "disagree on the input kind") != NULL);
	bfi_writer_destroy(&w);
}

int main(void)
{
	test_run("writer: key files read twice, as spooled, in every layout; a change stops the build",
	         test_sources);
	test_run("writer: --min-count's counts exact in memory and through dozens of merged runs",
	         test_min_count);
	test_run("writer: a group reads the kinds its table names, and one kind a snapshot",
	         test_group_kinds);
	return test_exit();
}
