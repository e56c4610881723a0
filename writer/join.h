/* join.h - one snapshot from the live sets of other snapshots' segments (join.c). */
#ifndef BFI_WRITER_JOIN_H
#define BFI_WRITER_JOIN_H

#include <stdint.h>

#include "bfi.h"
#include "bfi_writer.h"

#define JOIN_MAX_BLOCKS 65536u /* a flat section's most blocks (spec, "Flat section") */

/* Segments [seg_lo, seg_hi) of snap (a snapshot: 0 .. 1), named label in messages. */
struct join_input {
	const bfi_snapshot *snap;
	uint32_t seg_lo, seg_hi;
	const char *label;
};
/*
 * Write at out one snapshot of the live sets of the inputs' segments, in
 * their order, from their flat layouts' columns; notes and progress go
 * to o's callbacks. *n_sets gets the sets (0: nothing was written), id
 * the snapshot id. 0, BFI_E_JOIN (the inputs cannot be joined), or an
 * error of reading or writing; err (errlen bytes) says why.
 */
int join_write(const struct join_input *in, int n, const char *out,
               const struct bfi_join_options *o, uint64_t *n_sets, uint8_t id[16], char *err,
               size_t errlen);

#endif
