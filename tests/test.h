/*
 * test.h - a tiny test harness: EXPECT() records a failure with file and
 * line and carries on; TEST() runs one named case and prints PASS or FAIL,
 * which tests/run.sh counts.
 */
#ifndef BFI_TEST_H
#define BFI_TEST_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "bfi.h"
#include "bfi_writer.h"

extern int test_failures;

#define EXPECT(cond)                                                                    \
	do {                                                                            \
		if (!(cond)) {                                                          \
			test_failures++;                                                \
			fprintf(stderr, "%s:%d: EXPECT(%s) failed\n", __FILE__, __LINE__, #cond); \
		}                                                                       \
	} while (0)

#define EXPECT_RC(expr, want)                                                           \
	do {                                                                            \
		int rc_ = (expr);                                                       \
		if (rc_ != (want)) {                                                    \
			test_failures++;                                                \
			fprintf(stderr, "%s:%d: %s returned %d (%s), want %d (%s)\n", __FILE__, \
			        __LINE__, #expr, rc_, bfi_strerror(rc_), (want), bfi_strerror(want)); \
		}                                                                       \
	} while (0)

/* Run fn as one case; returns nonzero if it failed. */
int test_run(const char *name, void (*fn)(void));
/* Exit status for main: 0 if every case passed. */
int test_exit(void);

/* A fresh empty directory under $TMPDIR, removed by test_cleanup(). */
const char *test_tmpdir(void);
void test_cleanup(void);
/* rm -r of a path made by the tests. */
void test_rm_rf(const char *path);

/*
 * The process's resident bytes now. A build's --memory bounds the whole
 * process, so a test that means "a budget of B for the build" under a
 * sanitizer, whose shadow pages are resident, asks for this plus B.
 */
uint64_t test_resident(void);

/* A deterministic PRNG (splitmix64) so failures reproduce. */
uint64_t test_rand(uint64_t *state);

/* Read a whole file; returns malloc'd bytes or NULL. */
uint8_t *test_read_file(const char *path, size_t *len);
int test_write_file(const char *path, const void *p, size_t len);

/*
 * Build a snapshot at path with options o (NULL: the defaults): sets named
 * s0 .. s<n - 1>, set j holding the per keys key(j, 0) .. key(j, per - 1),
 * each written to buf (cap bytes) with its length returned. Returns 0 or
 * the writer's error.
 */
typedef size_t (*test_key_fn)(uint32_t set, uint32_t i, char *buf, size_t cap);
int test_build_sets(const struct bfi_build_options *o, const char *path, uint32_t n, uint32_t per,
                    test_key_fn key);
/*
 * n random genomes of len bases (from *seed), each NUL-terminated at
 * g + i * (len + 1), written as FASTA files gNN.fa (set gNN) in a new
 * directory under the test's and built into the snapshot at snap as
 * k-mers of length k, with options o (NULL: the defaults); the genomes'
 * ordinals by number into ord (n of them). Returns 0 or the first error.
 */
int test_build_genomes(const struct bfi_build_options *o, const char *snap, int n, size_t len,
                       unsigned k, uint64_t *seed, char *g, uint32_t *ord);

/*
 * Make every checksum of the index image p (size bytes) match its bytes:
 * chunk checksums, section checksums, table and header, with file_size
 * set to size. For damage that must be caught by a check behind them.
 */
void test_reseal_index(uint8_t *p, size_t size);

/* The facts of one layout of s (bfi_layout_info), zero if s lacks it. */
static inline struct bfi_layout_info test_layout(const bfi_snapshot *s, unsigned layout)
{
	struct bfi_layout_info li;
	if (bfi_layout_info(s, layout, &li) != 0)
		memset(&li, 0, sizeof li);
	return li;
}

#endif
