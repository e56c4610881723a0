/*
 * reread.c - the second reading of a set's keys, for the fill: from the
 * spool, held in memory, or from its file again (split on every thread
 * for one large FASTA or FASTQ file), each hashed key counted against the
 * first reading's.
 */
#include <stdlib.h>

#include "bfi_hash.h"
#include "internal.h"
#include "sources.h"

/* The second reading: keys hashed, to fn KEY_BATCH at a time, and counted against the first. */
#define KEY_BATCH 64

struct rekey {
	int (*fn)(void *ctx, const bfi_keyhash *h, size_t n);
	void *ctx;
	uint64_t keys, check;
	size_t n;
	bfi_keyhash h[KEY_BATCH];
};

/* h into the batch, which goes to fn when full. */
static int batch_push(struct rekey *r, bfi_keyhash h)
{
	r->h[r->n++] = h;
	if (r->n < KEY_BATCH)
		return 0;
	r->n = 0;
	return r->fn(r->ctx, r->h, KEY_BATCH);
}

static int rekey(void *ctx, const char *key, size_t len)
{
	struct rekey *r = ctx;
	bfi_keyhash h = bfi_hash_key(key, len);
	r->keys++;
	r->check += h.h1;
	return batch_push(r, h);
}

int set_keys(bfi_writer *w, uint32_t ord, int (*fn)(void *ctx, const bfi_keyhash *h, size_t n),
             void *ctx)
{
	const struct set_src *s = ord < w->cap_src ? &w->src[ord] : NULL;
	struct rekey r = {fn, ctx, 0, 0, 0, {{0, 0}}};
	if (s && s->held)
		return held_keys_on(s->held, 1, fn, &ctx);
	if (s == NULL || s->how == NULL) {
		struct spool_iter it;
		struct rec x;
		int rc = spool_iter_set(&it, &w->spool, ord);
		while (rc == 0 && (rc = spool_iter_next(&it, &x)) == 1)
			rc = batch_push(&r, (bfi_keyhash){x.h1, x.h2});
		spool_iter_end(&it);
		if (rc == 0 && r.n)
			rc = fn(ctx, r.h, r.n);
		return rc ? writer_fail_shared(w, rc, "reading spilled keys: %s", bfi_strerror(rc)) : 0;
	}
	char err[512] = "";
	int rc = file_or_group(s->how, w, s->path, w->kmer, rekey, &r, NULL, err, sizeof err);
	if (rc == 0 && r.n)
		rc = fn(ctx, r.h, r.n);
	if (rc)
		return writer_fail_shared(w, rc, "%s", err[0] ? err : bfi_strerror(rc));
	if (r.keys != s->keys || r.check != s->check)
		return writer_fail_shared(w, BFI_E_INPUT,
		                          "%s: changed while the snapshot was being built; build again",
		                          s->path);
	return 0;
}

int set_keys_on(bfi_writer *w, uint32_t ord, unsigned threads,
                int (*fn)(void *ctx, const bfi_keyhash *h, size_t n), void *const *ctxs)
{
	const struct set_src *s = ord < w->cap_src ? &w->src[ord] : NULL;
	if (threads > 1 && s && s->held)
		return held_keys_on(s->held, threads, fn, ctxs);
	if (threads < 2 || s == NULL || s->how == NULL || !s->how->splits ||
	    !split_wanted(w, s->path, 0))
		return set_keys(w, ord, fn, ctxs[0]);
	char err[512] = "";
	uint64_t keys, check;
	int rc = split_again(w, s->path, w->kmer, threads, fn, ctxs, &keys, &check, err, sizeof err);
	if (rc)
		return writer_fail_shared(w, rc, "%s", err[0] ? err : bfi_strerror(rc));
	if (keys != s->keys || check != s->check)
		return writer_fail_shared(w, BFI_E_INPUT,
		                          "%s: changed while the snapshot was being built; build again",
		                          s->path);
	return 0;
}

/* each_source_key's call for the keys of one set read from its file */
struct with_ord {
	int (*fn)(void *ctx, uint32_t ord, bfi_keyhash h);
	void *ctx;
	uint32_t ord;
};

static int call_with_ord(void *ctx, const bfi_keyhash *h, size_t n)
{
	struct with_ord *x = ctx;
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = x->fn(x->ctx, x->ord, h[i]);
	return rc;
}

int each_source_key(bfi_writer *w, int (*fn)(void *ctx, uint32_t ord, bfi_keyhash h), void *ctx)
{
	struct spool_iter it;
	struct rec r;
	int rc = spool_iter_begin(&it, &w->spool);
	while (rc == 0 && (rc = spool_iter_next(&it, &r)) == 1)
		rc = fn(ctx, r.ord, (bfi_keyhash){r.h1, r.h2});
	spool_iter_end(&it);
	if (rc)
		return writer_fail_shared(w, rc, "reading spilled keys: %s", bfi_strerror(rc));
	for (uint32_t o = 0; o < w->cap_src && o < w->names.n && rc == 0; o++) {
		struct with_ord x = {fn, ctx, o};
		if (w->src[o].how != NULL || w->src[o].held != NULL)
			rc = set_keys(w, o, call_with_ord, &x);
	}
	return rc;
}
