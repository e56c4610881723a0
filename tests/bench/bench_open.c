/*
 * bench_open.c - how long bfi_open()+bfi_close() take on a snapshot, beside
 * the floor the OS sets (open+fstat+mmap+munmap+close of the same index
 * file), and beside what the catalog's check cannot go below (its file
 * mapped and its digest taken, which reads every byte), measured in one run.
 * Usage: build/tests/bench/bench_open SNAP [ITERATIONS]
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bfi.h"
#include "format.h"

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static const char *snap_path;
static char index_path[4200], catalog_path[4300];

static int os_floor(void)
{
	int fd = open(index_path, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0)
		return -1;
	void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -1;
	/* touch the header page, as any reader must */
	volatile unsigned char c = *(unsigned char *)p;
	(void)c;
	munmap(p, (size_t)st.st_size);
	close(fd);
	return 0;
}

/* The catalog mapped and its digest taken: a checked open reads it all once. */
static int catalog_floor(unsigned flags)
{
	(void)flags;
	int fd = open(catalog_path, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0)
		return -1;
	void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -1;
	uint8_t d[16];
	bfi_digest128(p, (size_t)st.st_size, d);
	munmap(p, (size_t)st.st_size);
	close(fd);
	return 0;
}

static int open_with(unsigned flags)
{
	bfi_snapshot *s;
	int rc = bfi_open(snap_path, flags, &s);
	bfi_close(&s);
	return rc;
}

static void measure(const char *label, int (*fn)(unsigned), unsigned flags, int iters,
                    double *median_out)
{
	double *t = malloc((size_t)iters * sizeof *t);
	for (int i = 0; i < iters; i++) {
		double a = now_us();
		if (fn(flags) != 0) {
			fprintf(stderr, "%s failed\n", label);
			exit(2);
		}
		t[i] = now_us() - a;
	}
	qsort(t, (size_t)iters, sizeof *t, cmp);
	*median_out = t[iters / 2];
	printf("%-44s median %8.1f us   p99 %8.1f us   max %8.1f us\n", label, t[iters / 2],
	       t[iters * 99 / 100], t[iters - 1]);
	free(t);
}

static int floor_fn(unsigned flags)
{
	(void)flags;
	return os_floor();
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s SNAP [ITERATIONS]\n", argv[0]);
		return 2;
	}
	snap_path = argv[1];
	int iters = argc > 2 ? atoi(argv[2]) : 2000;
	snprintf(index_path, sizeof index_path, "%s/index.bfi", snap_path);
	struct stat st, cs;
	snprintf(catalog_path, sizeof catalog_path, "%s/catalog.mdb", snap_path);
	if (stat(index_path, &st) != 0 || stat(catalog_path, &cs) != 0) {
		perror(snap_path);
		return 2;
	}
	printf("snapshot %s: index.bfi %.3f GB, catalog.mdb %.1f MB, %d iterations each\n",
	       snap_path, (double)st.st_size / 1e9, (double)cs.st_size / 1e6, iters);
	double floor_us, idx, small, trusted, full, cat_floor;
	for (int round = 0; round < 2; round++) { /* first round warms the page cache */
		if (round)
			printf("--\n");
		measure("OS floor: open+fstat+mmap+munmap+close", floor_fn, 0, iters, &floor_us);
		measure("bfi_open(BFI_OPEN_NO_CATALOG) + close", open_with, BFI_OPEN_NO_CATALOG, iters, &idx);
		measure("bfi_open(NO_CATALOG | SMALL_PAGES) + close", open_with,
		        BFI_OPEN_NO_CATALOG | BFI_OPEN_SMALL_PAGES, iters, &small);
		measure("bfi_open(BFI_OPEN_TRUSTED) + close", open_with, BFI_OPEN_TRUSTED, iters, &trusted);
		measure("bfi_open(0) + close (catalog digest checked)", open_with, 0, iters, &full);
		measure("catalog floor: mmap + digest of catalog.mdb", catalog_floor, 0, iters, &cat_floor);
	}
	printf("ratios to the OS floor: index only %.2fx (%.2fx without the 2 MiB page hint), trusted %.2fx, "
	       "full %.2fx\n",
	       idx / floor_us, small / floor_us, trusted / floor_us, full / floor_us);
	printf("checked open over the trusted open plus the catalog floor: %.2fx\n",
	       full / (trusted + cat_floor));
	return 0;
}
