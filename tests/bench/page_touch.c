/*
 * page_touch.c - what a fresh process pays to touch pages of a mapped file
 * for the first time: map FILE read-only, read one byte from each of N
 * pages chosen at random, and print the time per touch. Run it under
 * /usr/bin/time to see the faults and the whole process, exit included.
 * With POPULATE set in the environment it first asks the kernel to map the
 * whole file (MADV_POPULATE_READ) and prints how long that took.
 *
 * With LINES set it measures the memory bound of a query that must read
 * N random cache lines instead: the file mapped as the reader maps it (2
 * MiB folios asked for), every page faulted in first, then one byte of
 * each of N random lines loaded, as independent loads the CPU may overlap
 * (the best case: a real walk waits for some loads before it knows the
 * next address). Times L, its time a line is the least a query of L
 * random lines over this file can take on this machine.
 *
 * Usage: page_touch FILE N     (cc -O2 -o page_touch tests/bench/page_touch.c)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* MADV_POPULATE_READ, MADV_HUGEPAGE */
#endif
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: page_touch FILE N\n");
		return 2;
	}
	int fd = open(argv[1], O_RDONLY);
	off_t size = fd < 0 ? -1 : lseek(fd, 0, SEEK_END);
	long n = atol(argv[2]);
	if (size < 4096 || n < 1) {
		fprintf(stderr, "page_touch: need a readable file of at least one page and N >= 1\n");
		return 2;
	}
	const volatile uint8_t *p = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		perror("page_touch: mmap");
		return 2;
	}
#ifdef MADV_POPULATE_READ
	if (getenv("POPULATE")) {
		double t = now();
		int rc = madvise((void *)p, (size_t)size, MADV_POPULATE_READ);
		printf("MADV_POPULATE_READ of %lld bytes: %.3f s (rc %d)\n", (long long)size, now() - t, rc);
	}
#endif
	uint64_t x = 0x9E3779B97F4A7C15ull, pages = (uint64_t)size / 4096, sum = 0;
	if (getenv("LINES")) {
#ifdef MADV_HUGEPAGE
		(void)madvise((void *)p, (size_t)size, MADV_HUGEPAGE);
#endif
		double t = now();
		for (off_t o = 0; o < size; o += 4096) /* every page faulted in: only the loads are timed */
			sum += p[o];
		printf("faulting in %lld bytes: %.3f s\n", (long long)size, now() - t);
		uint64_t lines = (uint64_t)size / 64;
		t = now();
		for (long i = 0; i < n; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			sum += p[(x % lines) * 64];
		}
		printf("%ld random lines: %.1f ns each (%llu)\n", n, (now() - t) * 1e9 / (double)n,
		       (unsigned long long)(sum & 1));
		return 0;
	}
	double t = now();
	for (long i = 0; i < n; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		sum += p[(x % pages) * 4096];
	}
	printf("%ld random page touches: %.2f us each (%llu)\n", n, (now() - t) * 1e6 / (double)n,
	       (unsigned long long)(sum & 1));
	return 0;
}
