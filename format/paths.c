/* paths.c - path keys (bfi_paths.h, spec/format.md "Path keys"). */
#include <stdio.h>

#include "bfi_paths.h"

static size_t put(char *out, size_t cap, size_t at, char c)
{
	if (at + 1 < cap)
		out[at] = c;
	return at + 1;
}

size_t bfi_path_key(char *out, size_t cap, char kind, unsigned num, const char *const *names,
                    const size_t *lens, size_t n)
{
	char head[24];
	int h = kind == 'a' ? snprintf(head, sizeof head, "@a:")
	        : kind == 'b' ? snprintf(head, sizeof head, "@b%u:", num)
	        : kind == 'd' ? snprintf(head, sizeof head, "@d%u:", num)
	                      : snprintf(head, sizeof head, "@r:/");
	size_t at = 0;
	for (int i = 0; i < h; i++)
		at = put(out, cap, at, head[i]);
	for (size_t i = 0; i < n; i++) {
		if (i)
			at = put(out, cap, at, '/');
		for (size_t j = 0; j < lens[i]; j++) {
			char c = names[i][j];
			if (c == '/' || c == '\\')
				at = put(out, cap, at, '\\');
			at = put(out, cap, at, c);
		}
	}
	if (cap)
		out[at < cap ? at : cap - 1] = '\0';
	return at;
}
