/* join.h - one snapshot from the live sets of other snapshots' segments (join.c). */
#ifndef BFI_JOIN_H
#define BFI_JOIN_H

#include <stdint.h>

#include "bfi.h"

#define JOIN_MAX_BLOCKS 65536u /* a flat section's most blocks (spec, "Flat section") */

/* Segments [seg_lo, seg_hi) of snap (a snapshot: 0 .. 1), named label in messages. */
struct join_input {
	const bfi_snapshot *snap;
	uint32_t seg_lo, seg_hi;
	const char *label;
};
/*
 * Write at out one snapshot of the live sets of the inputs' segments, in
 * their order, from their flat layouts' columns. *n_sets gets the sets
 * (0: nothing was written), id the snapshot id. EXIT_OK, or EXIT_USAGE
 * after a message "bfi CMD: ..." naming the input and what differs.
 */
int join_write(const char *cmd, const struct join_input *in, int n, const char *out, int quiet,
               uint64_t memory, uint64_t *n_sets, uint8_t id[16]);
/* The key rule (catalog field) in which snapshots a and b differ, or NULL. */
const char *key_rule_differs(const bfi_snapshot *a, const bfi_snapshot *b);

#endif
