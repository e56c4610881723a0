/*
 * test_concurrency.c - readers and a writer on one snapshot path at once.
 * Two threads each answer a million queries (BFI_CONC_QUERIES overrides),
 * reopening the snapshot at the path every few hundred, while a third
 * thread atomically replaces it again and again with a new generation.
 * Generation g's sets are named g<g>-s<i>, and set i holds the keys
 * "g<g>-k<i>-<j>". Every answer must come from one snapshot: a key of the
 * generation the reader opened is found in its own set, whose name carries
 * that generation, and a key of another generation is found in no set
 * (beyond false positives, which are counted). Run under ASan in ninja
 * test and under TSan with ./configure --mode=tsan.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

enum { SETS = 64, KEYS = 8, GENERATIONS = 24 };

static char path[4200];
static atomic_int generation, stop, replaced;
static long queries_per_thread = 1000000;

static int build(int g)
{
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	o.memory = 16u << 20;
	bfi_writer *w;
	int rc = bfi_writer_create(&o, &w);
	for (int i = 0; rc == 0 && i < SETS; i++) {
		char name[32], key[48];
		uint32_t ord;
		snprintf(name, sizeof name, "g%d-s%d", g, i);
		rc = bfi_writer_set(w, name, strlen(name), &ord);
		for (int j = 0; rc == 0 && j < KEYS; j++)
			rc = bfi_writer_key(w, ord, key, (size_t)snprintf(key, sizeof key, "g%d-k%d-%d", g, i, j));
	}
	if (rc == 0)
		rc = bfi_writer_finish(w, path, NULL);
	bfi_writer_destroy(&w);
	return rc;
}

/* The generation of an open snapshot, read from its first set's name. */
static int gen_of(const bfi_snapshot *s)
{
	const char *name;
	size_t len;
	if (bfi_set_name(s, 0, &name, &len) != 0 || len < 2 || name[0] != 'g')
		return -1;
	return atoi(name + 1);
}

struct stats {
	long answered, wrong, reopen_failed, opens, stale_hits;
};

static void *reader(void *arg)
{
	struct stats *st = arg;
	uint64_t seed = (uint64_t)(uintptr_t)arg;
	bfi_result *r;
	if (bfi_result_create(&r) != 0)
		return NULL;
	bfi_snapshot *s = NULL;
	int g = -1;
	for (long q = 0; q < queries_per_thread; q++) {
		if (s == NULL || q % 500 == 0) { /* reopen: the path may hold a newer snapshot */
			bfi_snapshot *n;
			if (bfi_open(path, 0, &n) != 0) {
				/* bfi_open itself retries when a swap removed the files
				 * of the snapshot it started on, so this never happens */
				st->reopen_failed++;
				if (s == NULL)
					continue;
			} else {
				bfi_close(&s);
				s = n;
				g = gen_of(s);
				st->opens++;
			}
		}
		int i = (int)(test_rand(&seed) % SETS), j = (int)(test_rand(&seed) % KEYS);
		int other = q % 7 == 0; /* now and then, a key of another generation */
		char key[48];
		int kg = other ? (g + 1) % GENERATIONS : g;
		int n = snprintf(key, sizeof key, "g%d-k%d-%d", kg, i, j);
		if (bfi_query_key(s, key, (size_t)n, r) != 0) {
			st->wrong++;
			continue;
		}
		int found = 0;
		for (size_t x = 0; x < bfi_result_count(r); x++) {
			const char *name;
			size_t len;
			char want[32];
			snprintf(want, sizeof want, "g%d-s%d", g, i);
			if (bfi_set_name(s, bfi_result_ordinals(r)[x], &name, &len) != 0 ||
			    name[0] != 'g' || atoi(name + 1) != g)
				st->wrong++; /* a name from another generation: a mixed snapshot */
			else if (len == strlen(want) && memcmp(name, want, len) == 0)
				found = 1;
		}
		if (!other && !found)
			st->wrong++; /* its own key, not found: a false negative */
		if (other && bfi_result_count(r))
			st->stale_hits++; /* false positives of the filters */
		st->answered++;
	}
	bfi_close(&s);
	bfi_result_destroy(&r);
	atomic_store(&stop, 1);
	return NULL;
}

static void *writer(void *arg)
{
	int *fails = arg;
	for (int g = 1; !atomic_load(&stop); g = (g + 1) % GENERATIONS) {
		if (build(g) != 0)
			(*fails)++;
		atomic_store(&generation, g);
		atomic_fetch_add(&replaced, 1);
	}
	return NULL;
}

static void test_readers_and_writer(void)
{
	snprintf(path, sizeof path, "%s/live", test_tmpdir());
	const char *env = getenv("BFI_CONC_QUERIES");
	if (env)
		queries_per_thread = atol(env);
	EXPECT_RC(build(0), 0);
	pthread_t rt[2], wt;
	struct stats st[2];
	memset(st, 0, sizeof st);
	int wfails = 0;
	EXPECT(pthread_create(&wt, NULL, writer, &wfails) == 0);
	for (int t = 0; t < 2; t++)
		EXPECT(pthread_create(&rt[t], NULL, reader, &st[t]) == 0);
	for (int t = 0; t < 2; t++)
		pthread_join(rt[t], NULL);
	atomic_store(&stop, 1);
	pthread_join(wt, NULL);
	long answered = st[0].answered + st[1].answered, wrong = st[0].wrong + st[1].wrong;
	printf("%ld queries on 2 threads, %ld opens (%ld failed), the snapshot replaced %d times "
	       "over; %ld inconsistent answers, %ld false positives on another generation's keys\n",
	       answered, st[0].opens + st[1].opens, st[0].reopen_failed + st[1].reopen_failed,
	       atomic_load(&replaced), wrong, st[0].stale_hits + st[1].stale_hits);
	EXPECT(wrong == 0);
	EXPECT(st[0].reopen_failed + st[1].reopen_failed == 0);
	EXPECT(wfails == 0);
	EXPECT(answered >= queries_per_thread); /* both threads got going */
	EXPECT(st[0].opens + st[1].opens > 2);
}

int main(void)
{
	test_run("concurrency: two readers and a replacing writer see whole snapshots",
	         test_readers_and_writer);
	test_cleanup();
	return test_exit();
}
