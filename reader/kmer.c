/*
 * kmer.c - the distinct k-mer keys of a query sequence, made by
 * format/kmer.c as the writer makes them from FASTA, so that queries meet
 * the keys genome sets were built from (spec/format.md, "k-mer keys").
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bfi.h"

/* Distinct keys, in order of first appearance: an open-addressing set of offsets. */
struct distinct {
	char *out;
	size_t n, cap, klen;
	size_t *slot; /* offset + 1 into out, 0 for empty */
	size_t slots;
};

static int grow(struct distinct *d)
{
	size_t slots = d->slots ? d->slots * 2 : 64;
	size_t *ns = calloc(slots, sizeof *ns);
	if (ns == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < d->n; i++) {
		const char *key = d->out + i * d->klen;
		size_t h = (size_t)bfi_hash_key(key, d->klen).h1 & (slots - 1);
		while (ns[h])
			h = (h + 1) & (slots - 1);
		ns[h] = i * d->klen + 1;
	}
	free(d->slot);
	d->slot = ns;
	d->slots = slots;
	return 0;
}

static int add_distinct(void *ctx, const char *key, size_t len)
{
	struct distinct *d = ctx;
	if (2 * (d->n + 1) > d->slots && grow(d))
		return -ENOMEM;
	size_t h = (size_t)bfi_hash_key(key, len).h1 & (d->slots - 1);
	for (; d->slot[h]; h = (h + 1) & (d->slots - 1))
		if (memcmp(d->out + d->slot[h] - 1, key, len) == 0)
			return 0;
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 64;
		char *no = realloc(d->out, cap * d->klen);
		if (no == NULL)
			return -ENOMEM;
		d->out = no;
		d->cap = cap;
	}
	memcpy(d->out + d->n * d->klen, key, len);
	d->slot[h] = d->n * d->klen + 1;
	d->n++;
	return 0;
}

int bfi_kmers(const char *seq, size_t len, unsigned k, char **out, size_t *count)
{
	if (out == NULL || count == NULL || k < 1 || k > BFI_KMER_MAX || (seq == NULL && len))
		return BFI_E_INVALID;
	*out = NULL;
	*count = 0;
	struct distinct d = {NULL, 0, 0, bfi_kmer_key_len(k), NULL, 0};
	int rc = bfi_kmer_keys(seq, len, k, add_distinct, &d);
	free(d.slot);
	if (rc == 0 && d.out == NULL && (d.out = malloc(1)) == NULL)
		rc = -ENOMEM;
	if (rc) {
		free(d.out);
		return rc;
	}
	*out = d.out;
	*count = d.n;
	return 0;
}
