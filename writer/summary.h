/*
 * summary.h - what the planner knows of each set (summary.c): its
 * distinct keys and the sketches the layouts' plans read.
 */
#ifndef BFI_WRITER_SUMMARY_H
#define BFI_WRITER_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

#include "bfi_writer.h"

/*
 * HyperLogLog sketches (summary.c): register i of 2^bits takes the
 * greatest rank of the hashes whose top bits are i.
 */
#define HLL_BITS 12 /* the union of all keys: about 1.6% error */
#define HLL_REGS (1u << HLL_BITS)
#define SET_HLL_BITS 8 /* each set's, and so any union of sets: about 6.5% */
#define SET_HLL_REGS (1u << SET_HLL_BITS)
#define MINHASHES 4
void hll_add_bits(uint8_t *reg, uint64_t h, unsigned bits);
double hll_count_bits(const uint8_t *reg, unsigned bits);
void hll_merge(uint8_t *into, const uint8_t *from, size_t regs);

/*
 * What the planner knows of each set, by input ordinal (summary.c),
 * gathered from its distinct keys once: the sketches are kept only when a
 * layout asked for them will use them.
 */
struct set_sums {
	uint64_t *distinct;
	uint64_t *seen;    /* --min-count: 1 + the distinct keys its files gave; 0 not counted; or NULL */
	uint8_t *hll;      /* SET_HLL_REGS a set, or NULL */
	uint64_t *minhash; /* MINHASHES a set (clustered order), or NULL */
	uint8_t *all;      /* HLL_REGS: the union of every set (the tree's pre-filter), or NULL */
	size_t cap;
	int want_hll, want_minhash, want_seen;
};
/* The summaries of the sets a layout's plan reads (layout.h, wants), as bits. */
#define WANT_HLL 1u     /* each set's HyperLogLog */
#define WANT_MINHASH 2u /* each set's MinHashes: the sets are clustered */
#define WANT_ALL 4u     /* the union's HyperLogLog */

/* wants: what the layouts' plans read (WANT_*, wlayouts_wants). */
int sums_init(struct set_sums *s, const struct bfi_build_options *o, unsigned wants);
/*
 * Is there room in the budget for the counts and sketches of n sets?
 * finishing: no key comes any more, so the spool's buffer may be spilled
 * to make it. 0, or BFI_E_LIMIT saying what --memory would do.
 */
int writer_room_for_sets(bfi_writer *w, size_t n, int finishing);
/* The per-set sketches, which only planning reads, freed: the rows get their memory. */
void sums_drop_sketches(struct set_sums *s);
/* Room for sets 0 .. n - 1, the new ones empty. */
int sums_grow(struct set_sums *s, size_t n);
/*
 * One distinct key of set ord into its sketches, h1 its hash's low half;
 * all: the union's sketch to add it to, or NULL. The caller counts it in
 * distinct[ord] (threads reading neighbouring sets would share its line).
 */
void sums_add(struct set_sums *s, uint32_t ord, uint64_t h1, uint8_t *all);
/* Forget set ord's keys (they will be added again). */
void sums_reset(struct set_sums *s, uint32_t ord);
void sums_free(struct set_sums *s);
/*
 * A join's sets' distinct keys before a --min-count cut (set_sums' seen:
 * 1 + the count, 0 not recorded), n of them by input ordinal, for the
 * catalog: 0 or -ENOMEM.
 */
int writer_carry_seen(bfi_writer *w, const uint64_t *seen, size_t n);
/* The summaries of the sets whose keys were spooled (summary.c): one pass over them. */
int sums_from_spool(bfi_writer *w);

#endif
