/*
 * padding.c - padding checks for bfi_verify: the bits past a row's or a
 * filter's last valid one must be zero (spec/format.md), or they would be
 * sets or positions that do not exist. Each layout's verify uses these.
 */
#include "internal.h"

uint64_t bfi__first_set_bit(const uint8_t *p, uint64_t from, uint64_t to)
{
	for (uint64_t b = from; b < to; b++) {
		if (b % 64 == 0 && to - b >= 64 && bfi_get64(p + b / 8) == 0) {
			b += 63;
			continue;
		}
		if (p[b / 8] >> (b % 8) & 1)
			return b;
	}
	return UINT64_MAX;
}

int bfi__rows_padding(const bfi_snapshot *s, const uint8_t *rows, uint64_t m, uint64_t row_bytes,
                      uint64_t valid, struct bfi_bad *bad)
{
	for (uint64_t r = 0; r < m; r++) {
		const uint8_t *row = rows + r * row_bytes;
		uint64_t at = bfi__first_set_bit(row, valid, row_bytes * 8);
		if (at != UINT64_MAX) {
			bad->offset = (uint64_t)(row - s->map) + at / 8;
			return 1;
		}
	}
	return 0;
}
