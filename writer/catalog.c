/*
 * catalog.c - write the LMDB catalog (spec/format.md, "Catalog").
 *
 * One write transaction, keys appended in sorted order, no lock file:
 * LMDB then lays out the same pages for the same content, which keeps the
 * snapshot deterministic byte for byte.
 */
#include <errno.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"
#include "publish.h"

struct by_name {
	const struct names *names;
	const uint32_t *old_of_new;
};

static int cmp_ord_by_name(const void *a, const void *b, void *ctx)
{
	const struct by_name *bn = ctx;
	size_t la, lb;
	const char *pa = names_get(bn->names, bn->old_of_new[*(const uint32_t *)a], &la);
	const char *pb = names_get(bn->names, bn->old_of_new[*(const uint32_t *)b], &lb);
	int c = memcmp(pa, pb, la < lb ? la : lb);
	return c ? c : (la > lb) - (la < lb);
}

static int put(MDB_txn *txn, MDB_dbi dbi, const void *k, size_t kl, const void *v, size_t vl,
               unsigned flags)
{
	MDB_val key = {kl, (void *)k}, val = {vl, (void *)v};
	return mdb_put(txn, dbi, &key, &val, flags);
}

static int put_meta(MDB_txn *txn, MDB_dbi dbi, const char *k, const void *v, size_t vl)
{
	return put(txn, dbi, k, strlen(k), v, vl, 0);
}

int catalog_write(const char *path, const struct names *names, const struct meta_kv *extra,
                  int n_extra, const uint32_t *old_of_new, const uint64_t *distinct,
                  const uint64_t *seen, const uint64_t *ones, uint32_t k, double fpr,
                  const uint8_t snapshot_id[16], char *err, size_t errlen)
{
	MDB_env *env = NULL;
	MDB_txn *txn = NULL;
	MDB_dbi meta, sets, byname, counted;
	uint32_t *order = NULL;
	uint8_t *val = NULL;
	const char *step = "mdb_env_create";
	int rc = mdb_env_create(&env);
	if (rc)
		goto out;
	/* Room for every record several times over; only pages used are written. */
	size_t mapsize = ((size_t)64 << 20) + (size_t)names->n * 2048 + names->arena_len * 4;
	mapsize = (mapsize + (1 << 20) - 1) & ~(size_t)((1 << 20) - 1);
	step = "mdb_env_set_mapsize";
	if ((rc = mdb_env_set_mapsize(env, mapsize)) || (rc = mdb_env_set_maxdbs(env, 4)))
		goto out;
	step = "mdb_env_open";
	rc = mdb_env_open(env, path, MDB_NOSUBDIR | MDB_NOLOCK, 0644);
	if (rc)
		goto out;
	step = "mdb_txn_begin";
	if ((rc = mdb_txn_begin(env, NULL, 0, &txn)))
		goto out;
	step = "mdb_dbi_open";
	if ((rc = mdb_dbi_open(txn, "meta", MDB_CREATE, &meta)) ||
	    (rc = mdb_dbi_open(txn, "sets", MDB_CREATE, &sets)) ||
	    (rc = mdb_dbi_open(txn, "names", MDB_CREATE, &byname)) ||
	    (seen && (rc = mdb_dbi_open(txn, "seen", MDB_CREATE, &counted))))
		goto out;

	step = "writing meta";
	uint8_t b8[8], b4[4];
	char fprs[32];
	bfi_put64(b8, names->n);
	if ((rc = put_meta(txn, meta, "format", BFI_CATALOG_FORMAT, strlen(BFI_CATALOG_FORMAT))) ||
	    (rc = put_meta(txn, meta, "snapshot_id", snapshot_id, 16)) ||
	    (rc = put_meta(txn, meta, "n_sets", b8, 8)))
		goto out;
	bfi_put32(b4, k);
	if (fpr > 0)
		snprintf(fprs, sizeof fprs, "%.17g", fpr);
	else
		snprintf(fprs, sizeof fprs, "explicit");
	if ((rc = put_meta(txn, meta, "hashes", b4, 4)) ||
	    (rc = put_meta(txn, meta, "fpr", fprs, strlen(fprs))) ||
	    (rc = put_meta(txn, meta, "writer", "bfi " BFI_VERSION_STRING,
	                   strlen("bfi " BFI_VERSION_STRING))))
		goto out;
	for (int i = 0; i < n_extra; i++)
		if ((rc = put_meta(txn, meta, extra[i].key, extra[i].val, extra[i].len)))
			goto out;

	step = "writing sets";
	val = malloc(16 + 512);
	order = malloc((size_t)names->n * sizeof *order);
	if (val == NULL || order == NULL) {
		rc = ENOMEM;
		goto out;
	}
	for (uint32_t o = 0; o < names->n; o++) {
		size_t len;
		const char *p = names_get(names, old_of_new[o], &len);
		uint32_t be = htobe32(o);
		bfi_put64(val, distinct[old_of_new[o]]);
		bfi_put64(val + 8, ones[o]);
		memcpy(val + 16, p, len);
		if ((rc = put(txn, sets, &be, 4, val, 16 + len, MDB_APPEND)))
			goto out;
		if (seen) { /* a set not counted (its keys given as they are) kept all it saw */
			uint64_t had = seen[old_of_new[o]];
			bfi_put64(b8, had ? had - 1 : distinct[old_of_new[o]]);
			if ((rc = put(txn, counted, &be, 4, b8, 8, MDB_APPEND)))
				goto out;
		}
		order[o] = o;
	}
	step = "writing names";
	struct by_name ctx = {names, old_of_new};
	qsort_r(order, names->n, sizeof *order, cmp_ord_by_name, &ctx);
	for (uint32_t i = 0; i < names->n; i++) {
		size_t len;
		const char *p = names_get(names, old_of_new[order[i]], &len);
		bfi_put32(b4, order[i]);
		if ((rc = put(txn, byname, p, len, b4, 4, MDB_APPEND)))
			goto out;
	}
	step = "mdb_txn_commit";
	rc = mdb_txn_commit(txn); /* also fsyncs: the env was opened without MDB_NOSYNC */
	txn = NULL;
out:
	if (txn)
		mdb_txn_abort(txn);
	if (env)
		mdb_env_close(env);
	free(order);
	free(val);
	if (rc) {
		snprintf(err, errlen, "catalog %s: %s: %s", path, step, mdb_strerror(rc));
		return rc > 0 ? -rc : BFI_E_LMDB;
	}
	return 0;
}
