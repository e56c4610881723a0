/* fields.c - the fixed structures' codec (fields.h): fields written and read by their tables. */
#include "fields.h"
#include "format.h"

void bfi__put_fields(uint8_t *out, const struct field *f, size_t n, const void *from)
{
	const uint8_t *src = from;
	for (size_t i = 0; i < n; i++) {
		uint64_t v64 = 0;
		uint32_t v32 = 0;
		uint16_t v16 = 0;
		if (f[i].width == 8)
			memcpy(&v64, src + f[i].member, 8), bfi_put64(out + f[i].at, v64);
		else if (f[i].width == 4)
			memcpy(&v32, src + f[i].member, 4), bfi_put32(out + f[i].at, v32);
		else
			memcpy(&v16, src + f[i].member, 2), bfi_put16(out + f[i].at, v16);
	}
}

void bfi__get_fields(const uint8_t *in, const struct field *f, size_t n, void *to)
{
	uint8_t *dst = to;
	for (size_t i = 0; i < n; i++) {
		uint64_t v64 = f[i].width == 8 ? bfi_get64(in + f[i].at) : 0;
		uint32_t v32 = f[i].width == 4 ? bfi_get32(in + f[i].at) : 0;
		uint16_t v16 = f[i].width == 2 ? bfi_get16(in + f[i].at) : 0;
		if (f[i].width == 8)
			memcpy(dst + f[i].member, &v64, 8);
		else if (f[i].width == 4)
			memcpy(dst + f[i].member, &v32, 4);
		else
			memcpy(dst + f[i].member, &v16, 2);
	}
}

int bfi__unused_zero(const uint8_t *in, size_t from, size_t to, const struct field *f, size_t n)
{
	for (size_t at = from; at < to; at++) {
		int used = 0;
		for (size_t i = 0; i < n && !used; i++)
			used = at >= f[i].at && at < (size_t)f[i].at + f[i].width;
		if (!used && in[at])
			return 0;
	}
	return 1;
}
