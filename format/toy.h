/*
 * toy.h - a layout for the test build only (BFI_TOY_LAYOUT), which shows
 * what a new layout takes: this codec (toy.c), reader/toy.c, writer/toy.c
 * and a row in each floor's table. Every set's filter, one after another
 * as in the plain layout, but the last set first; its section kind is
 * in the range spec/format.md keeps for tests, so no release reader or
 * writer ever meets one.
 *
 * Descriptor, 64 bytes, little-endian: n_sets u64 at 0, m u64 at 8, k u32
 * at 16, hash_id u32 at 20 (1), filter_bytes u64 at 24 (m rounded up to
 * 8-byte words), filters_offset u64 at 32 (64), scale u32 at 40 (1 to
 * BFI_TOY_MAX_SCALE: its own parameter, the filters this many times as
 * wide as the largest set needs); the rest zero. Then the filters: set
 * j's at filters_offset + (n_sets - 1 - j) * filter_bytes.
 */
#ifndef BFI_FORMAT_TOY_H
#define BFI_FORMAT_TOY_H

#ifdef BFI_TOY_LAYOUT
#include <stdint.h>

#include "format.h"

#define BFI_SEC_TOY 0x7f00u /* spec: "Section table", kinds kept for tests */
#define BFI_LAYOUT_TOY (1u << 4)
#define BFI_TOY_DESC_SIZE 64u
#define BFI_TOY_MAX_SCALE 16u

struct bfi_toy_desc {
	uint64_t n_sets, m;
	uint32_t k, hash_id;
	uint64_t filter_bytes, filters_offset;
	uint32_t scale;
};
void bfi_toy_desc_encode(uint8_t out[BFI_TOY_DESC_SIZE], const struct bfi_toy_desc *d);
/* Check a toy section of size bytes at in: 0, or a BFI_E_* code with *where at fault. */
int bfi_toy_decode(const uint8_t *in, uint64_t size, struct bfi_toy_desc *d,
                   struct bfi_where *where);
/* Its descriptor: 64 bytes. */
uint64_t bfi_toy_head(const uint8_t desc[64]);
#endif

#endif
