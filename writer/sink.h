/*
 * sink.h - where one thread's first reading of a set's file puts its keys
 * (sink.c), for sources.c.
 */
#ifndef BFI_WRITER_SINK_H
#define BFI_WRITER_SINK_H

#include "internal.h"

#define SPOOL_CHUNK 4096u /* records a thread hands the spool at a time */

/*
 * One thread's first reading of one set's file. Its distinct key hashes go
 * to an open-addressing table (linear probing, at most half full) while
 * the table fits in a core's cache, 2^TABLE_BITS slots; (0, 0) marks an
 * empty slot, and a key hashing to it is noted apart. A file with more
 * keys than that is sorted instead: its keys are appended to a buffer,
 * sorted by radix once the file ends and counted, which costs a few
 * sequential passes where the table would cost a cache miss a key. A file
 * whose keys pass the thread's share of the budget goes to the spool.
 */
#define TABLE_BITS 16 /* 1 MiB of slots */

struct sink {
	bfi_writer *w;
	uint32_t ord;
	bfi_keyhash *t; /* the thread's table: 2^bits slots */
	unsigned bits;
	size_t n;       /* distinct keys in t */
	int zero;       /* the key hash (0, 0) was seen */
	struct rec *buf; /* sorting: every key, repeats too, n_buf of cap_buf */
	size_t n_buf, cap_buf, most; /* most: keys the thread may hold */
	int sorting;
	int direct;   /* still collecting: else the keys go to the spool */
	uint8_t *all; /* the thread's sketch of the union, or NULL */
	unsigned deepest; /* JSON/XML: the deepest document the thread read */
	uint64_t keys, check;
	struct rec chunk[SPOOL_CHUNK]; /* spooled keys on their way */
	size_t chunked;
};
/* The keys on their way to the spool, handed over. */
int sink_flush(struct sink *s);
/* A counted key hash to the spool (counter_emit's callback). */
int sink_spool(void *ctx, bfi_keyhash h);
/* A key of the set (an emit callback). */
int sink_key(void *ctx, const char *key, size_t len);
/* The set's distinct keys, each added to its sketches, once its file is read. */
uint64_t sink_finish(struct sink *s);

#endif
