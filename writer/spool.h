/*
 * spool.h - the writer's records, and their bounded-memory sort
 * (spool.c): what bfi_writer holds of the keys read.
 */
#ifndef BFI_WRITER_SPOOL_H
#define BFI_WRITER_SPOOL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* One key of one set, hashed; the unit the writer sorts and lays out. */
struct rec {
	uint64_t h1, h2;
	uint32_t ord;
	uint32_t pad; /* zero, so records compare and spill byte-for-byte */
};

/*
 * Bounded-memory sort and de-duplication of records (spool.c): a buffer of
 * cap records; when full, sorted and appended to one unlinked spill file
 * in dir as a run of groups, one group per set.
 */
struct spool_group {
	uint32_t ord;
	uint64_t off, n; /* records [off, off + n) of the spill file */
};
struct spool {
	struct rec *buf; /* mapped: buf_bytes */
	size_t n, cap, buf_bytes;
	int fd;                /* the spill file, or -1 before the first spill */
	uint64_t spilled;      /* records in it */
	struct spool_group *groups;
	size_t n_groups, cap_groups;
	char dir[4096];
	uint64_t added;
	unsigned threads; /* sorting a full buffer, one set per item */
	pthread_mutex_t lock; /* spool_add_many's, for readers on several threads */
	pthread_cond_t idle;  /* signalled when no copy into buf is under way */
	unsigned copying;     /* copies into buf under way, outside the lock */
};
int spool_init(struct spool *sp, size_t cap, unsigned threads);
int spool_add(struct spool *sp, const struct rec *r);
/* Add n records; safe to call from several threads at once (not with spool_add). */
int spool_add_many(struct spool *sp, const struct rec *r, size_t n);
/* Sort what is buffered; after this only iteration is allowed. */
int spool_seal(struct spool *sp);
/*
 * The spool's buffered records spilled, sorted as spool_seal sorts them,
 * and the buffer unmapped, so that its half of the budget goes to the
 * sketches or the rows; reading back then reads them all from the spill
 * file, and nothing more may be added.
 */
int spool_release(struct spool *sp);
void spool_free(struct spool *sp);

/* Sort n records of one set by (h1, h2), as the spool sorts them. */
void recs_sort(struct rec *r, size_t n);

/* Iterates the de-duplicated records in (ord, h1, h2) order, set by set. */
struct spool_src;
struct spool_iter {
	struct spool *sp;
	size_t pos;   /* next buffered record of a set not yet reached */
	size_t group; /* next spilled group of a set not yet reached */
	struct spool_src *srcs; /* the groups of the set being merged */
	size_t n_srcs, cap_srcs;
	struct rec last;
	int have_last;
	int one; /* spool_iter_set: this set only */
};
int spool_iter_begin(struct spool_iter *it, struct spool *sp);
/* Iterate set ord's records only (after spool_seal); 0 or -errno. */
int spool_iter_set(struct spool_iter *it, struct spool *sp, uint32_t ord);
/* 1 with *r set, 0 at the end, or -errno. */
int spool_iter_next(struct spool_iter *it, struct rec *r);
void spool_iter_end(struct spool_iter *it);

#endif
