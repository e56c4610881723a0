/*
 * count.h - --min-count's counting of each key of one set (count.c).
 */
#ifndef BFI_WRITER_COUNT_H
#define BFI_WRITER_COUNT_H

#include "internal.h"

/*
 * How often each key of one set occurs (count.c), for --min-count: keys
 * given to counter_key (an emit callback), then counter_emit gives each
 * distinct key hash seen least times or more, in no set order. The table
 * stays within most bytes: when full there, its counts go to a scratch
 * file in dir as a sorted run, and counter_emit merges the runs.
 */
struct count_rec { /* a counted hash in a run of the scratch file */
	uint64_t h1, h2, n;
};
#define COUNT_BATCH 32      /* keys hashed and fetched ahead before any is probed */
#define COUNT_FIRST_BITS 12 /* the table starts with 2^12 slots */
struct counter {
	bfi_keyhash *t; /* 2^bits slots; a slot is empty while its count is 0 */
	uint32_t *n;    /* each slot's count, up to least */
	unsigned bits, most_bits; /* most_bits: the most the table may have */
	uint64_t most;            /* bytes the counting may hold */
	size_t used;
	uint32_t least;
	uint64_t keys; /* given, repeats and all */
	uint64_t distinct; /* keys counted, by counter_emit, of any count */
	bfi_keyhash batch[COUNT_BATCH];
	size_t n_batch;
	const char *dir; /* for the scratch file */
	int fd;          /* the scratch file, or -1 */
	int scratch_rc;  /* why writing or reading it failed, or 0 */
	uint64_t spilled; /* records in it */
	uint64_t *runs;   /* where each run starts in it, in records */
	size_t n_runs, cap_runs;
};
void counter_init(struct counter *c, uint32_t least, uint64_t most, const char *dir);
int counter_key(void *ctx, const char *key, size_t len);
int counter_add(struct counter *c, bfi_keyhash h); /* a key already hashed */
int counter_emit(struct counter *c, int (*emit)(void *ctx, bfi_keyhash h), void *ctx);
void counter_free(struct counter *c);

#endif
