/*
 * fields.h - the fixed structures' codec, shared by format.c (the
 * framing) and each layout's own file (flat.c, plain.c, rambo.c, tree.c):
 * a structure is a table of its little-endian fields, and its encoder and
 * decoder both read that table.
 */
#ifndef BFI_FORMAT_FIELDS_H
#define BFI_FORMAT_FIELDS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * One little-endian field of a fixed structure: its byte offset there,
 * and the struct member holding it, which is as wide as the field. Each
 * structure's offsets are written once, in its table, and both its
 * encoder and its decoder read them from there.
 */
struct field {
	uint8_t at, width;
	uint16_t member;
};
#define FIELD(type, name, offset) {offset, sizeof(((type *)0)->name), offsetof(type, name)}
#define N_FIELDS(t) (sizeof(t) / sizeof(t)[0])

/* Write the fields of the struct at from into out, whose other bytes the caller zeroed. */
void bfi__put_fields(uint8_t *out, const struct field *f, size_t n, const void *from);
/* Read the fields at in into the struct at to. */
void bfi__get_fields(const uint8_t *in, const struct field *f, size_t n, void *to);
/* Are the bytes of [from, to) of in that no field holds zero (reserved)? */
int bfi__unused_zero(const uint8_t *in, size_t from, size_t to, const struct field *f, size_t n);

/* Encode the struct at from as size bytes at out, by its field table. */
#define ENCODE(out, size, fields, from)                                                            \
	do {                                                                                       \
		memset(out, 0, size);                                                              \
		bfi__put_fields(out, fields, N_FIELDS(fields), from);                              \
	} while (0)
/* Decode into the struct at to, by its field table; 1 if the reserved bytes are zero. */
#define DECODE(in, size, fields, to)                                                               \
	(bfi__get_fields(in, fields, N_FIELDS(fields), to),                                        \
	 bfi__unused_zero(in, 0, size, fields, N_FIELDS(fields)))

#endif
