/* names.c - the writer's table of set names (ordinal order = input order). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static uint64_t name_hash(const char *p, size_t len)
{
	return bfi_checksum64(p, len);
}

static int grow_slots(struct names *t)
{
	uint64_t ns = t->nslots ? t->nslots * 2 : 1024;
	uint32_t *s = calloc(ns, sizeof *s);
	if (s == NULL)
		return -ENOMEM;
	for (uint32_t o = 0; o < t->n; o++) {
		uint64_t i = name_hash(t->arena + t->off[o], t->len[o]) & (ns - 1);
		while (s[i])
			i = (i + 1) & (ns - 1);
		s[i] = o + 1;
	}
	free(t->slots);
	t->slots = s;
	t->nslots = ns;
	return 0;
}

int names_intern(struct names *t, const char *name, size_t len, uint32_t *ord, int *is_new)
{
	*is_new = 0;
	if (t->nslots == 0 || (uint64_t)t->n * 2 >= t->nslots) {
		int rc = grow_slots(t);
		if (rc)
			return rc;
	}
	uint64_t i = name_hash(name, len) & (t->nslots - 1);
	for (; t->slots[i]; i = (i + 1) & (t->nslots - 1)) {
		uint32_t o = t->slots[i] - 1;
		if (t->len[o] == len && memcmp(t->arena + t->off[o], name, len) == 0) {
			*ord = o;
			return 0;
		}
	}
	if ((uint64_t)t->n >= BFI_MAX_SETS)
		return BFI_E_LIMIT;
	if (t->n == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 256;
		uint64_t *off = realloc(t->off, cap * sizeof *off);
		if (off == NULL)
			return -ENOMEM;
		t->off = off;
		uint16_t *l = realloc(t->len, cap * sizeof *l);
		if (l == NULL)
			return -ENOMEM;
		t->len = l;
		t->cap = cap;
	}
	if (t->arena_len + len > t->arena_cap) {
		size_t cap = t->arena_cap ? t->arena_cap : 4096;
		while (cap < t->arena_len + len)
			cap *= 2;
		char *a = realloc(t->arena, cap);
		if (a == NULL)
			return -ENOMEM;
		t->arena = a;
		t->arena_cap = cap;
	}
	memcpy(t->arena + t->arena_len, name, len);
	t->off[t->n] = t->arena_len;
	t->len[t->n] = (uint16_t)len;
	t->arena_len += len;
	t->slots[i] = t->n + 1;
	*ord = t->n++;
	*is_new = 1;
	return 0;
}

const char *names_get(const struct names *t, uint32_t ord, size_t *len)
{
	*len = t->len[ord];
	return t->arena + t->off[ord];
}

void names_free(struct names *t)
{
	free(t->arena);
	free(t->off);
	free(t->len);
	free(t->slots);
	memset(t, 0, sizeof *t);
}
