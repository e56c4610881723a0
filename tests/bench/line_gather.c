/*
 * line_gather.c - the memory bound of a query that must read L random cache
 * lines: map FILE read-only as the reader does (2 MiB folios asked for),
 * fault every page in first, then load one byte from each of N lines
 * chosen at random, as independent loads the CPU may overlap (the best
 * case: a real walk has to wait for some loads before it knows the next
 * address). Prints the time per line; times L it is the least time a
 * query of L random lines over this file can take on this machine.
 *
 * Usage: build/tests/bench/line_gather FILE N
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* MADV_HUGEPAGE */
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
		fprintf(stderr, "usage: line_gather FILE N\n");
		return 2;
	}
	int fd = open(argv[1], O_RDONLY);
	off_t size = fd < 0 ? -1 : lseek(fd, 0, SEEK_END);
	long n = atol(argv[2]);
	if (size < 4096 || n < 1) {
		fprintf(stderr, "line_gather: need a readable file of at least one page and N >= 1\n");
		return 2;
	}
	const volatile uint8_t *p = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		perror("line_gather: mmap");
		return 2;
	}
#ifdef MADV_HUGEPAGE
	(void)madvise((void *)p, (size_t)size, MADV_HUGEPAGE);
#endif
	uint64_t sum = 0, lines = (uint64_t)size / 64;
	double t = now();
	for (off_t o = 0; o < size; o += 4096) /* every page faulted in: only the loads are timed */
		sum += p[o];
	printf("faulting in %lld bytes: %.3f s\n", (long long)size, now() - t);
	uint64_t x = 0x9E3779B97F4A7C15ull;
	t = now();
	for (long i = 0; i < n; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		sum += p[(x % lines) * 64];
	}
	printf("%ld random lines: %.1f ns each (%llu)\n", n, (now() - t) * 1e9 / (double)n,
	       (unsigned long long)(sum & 1));
	return 0;
}
