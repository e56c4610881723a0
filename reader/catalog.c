/*
 * catalog.c - the LMDB catalog, read side (spec/format.md, "Catalog").
 *
 * The catalog file is checked against the size and digest that the index
 * records before LMDB ever sees it, and it is handed to LMDB through
 * /proc/self/fd so that LMDB opens the very inode that was checked.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "layout.h"

/* Note where the catalog is bad, and leave through out (which cleans up). */
#define BAD_OUT(code, off, len, msg)                                                    \
	do {                                                                            \
		bad->offset = (off);                                                    \
		bad->length = (len);                                                    \
		bad->what = (msg);                                                      \
		rc = (code);                                                            \
		goto out;                                                               \
	} while (0)

static int lmdb_rc(int rc)
{
	if (rc == 0)
		return 0;
	if (rc == MDB_NOTFOUND)
		return BFI_E_NOT_FOUND;
	if (rc == MDB_CORRUPTED || rc == MDB_INVALID || rc == MDB_PAGE_NOTFOUND ||
	    rc == MDB_INCOMPATIBLE || rc == MDB_VERSION_MISMATCH || rc == MDB_BAD_DBI)
		return BFI_E_CATALOG;
	if (rc > 0)
		return -rc;
	return BFI_E_LMDB;
}

/* At most this many meta entries are kept (bfi writes about a dozen). */
#define META_KEPT 256

/* Every meta entry, as pointers into the map (struct bfi_snapshot, meta). */
static int load_meta(bfi_snapshot *s, MDB_txn *txn)
{
	MDB_cursor *cur;
	int rc = lmdb_rc(mdb_cursor_open(txn, s->dbi_meta, &cur));
	if (rc)
		return rc;
	s->meta = calloc(META_KEPT, sizeof *s->meta);
	if (s->meta == NULL) {
		mdb_cursor_close(cur);
		return -ENOMEM;
	}
	MDB_val k, v;
	int op = MDB_FIRST;
	s->meta_all = 1;
	while ((rc = mdb_cursor_get(cur, &k, &v, (MDB_cursor_op)op)) == 0) {
		op = MDB_NEXT;
		if (s->n_meta == META_KEPT) {
			s->meta_all = 0;
			break;
		}
		s->meta[s->n_meta++] = (struct bfi_meta_kv){k.mv_data, v.mv_data, k.mv_size, v.mv_size};
	}
	mdb_cursor_close(cur);
	return rc == MDB_NOTFOUND || rc == 0 ? 0 : lmdb_rc(rc);
}

static int get_meta(MDB_txn *txn, MDB_dbi dbi, const char *key, MDB_val *val)
{
	MDB_val k = {strlen(key), (void *)key};
	int rc = mdb_get(txn, dbi, &k, val);
	return rc == MDB_NOTFOUND ? BFI_E_CATALOG : lmdb_rc(rc);
}

/*
 * Where LMDB mapped the catalog, for bfi_mapped_file: LMDB does not say
 * (mdb_env_info's me_mapaddr is the address stored in the file, not the
 * map's). A value LMDB gave, in_map, lies in a page that begins with its
 * own page number, and the map begins that many pages before it: when
 * LMDB's pages are the system's (so the page's start is in_map rounded
 * down), that is the map's start, and mdb_env_info its length. Else the
 * mapping of the catalog's inode at offset 0 is looked for in
 * /proc/self/maps. Not found: catalog_map stays NULL, and a SIGBUS there
 * is not placed.
 */
static void find_lmdb_map(bfi_snapshot *s, const uint8_t *ours, const uint8_t *in_map)
{
	MDB_stat st;
	MDB_envinfo ei;
	long sys = sysconf(_SC_PAGESIZE);
	if (sys > 0 && mdb_env_stat(s->env, &st) == 0 && mdb_env_info(s->env, &ei) == 0 &&
	    st.ms_psize == (unsigned)sys) {
		uintptr_t at = (uintptr_t)in_map, page = at - at % (uintptr_t)sys;
		uint64_t pgno = bfi_get64((const uint8_t *)page);
		if (pgno < s->lay.hdr.catalog_size / (uint64_t)sys && pgno * (uint64_t)sys <= page) {
			s->catalog_map = (const uint8_t *)(page - (uintptr_t)(pgno * (uint64_t)sys));
			s->catalog_map_size = ei.me_mapsize > s->lay.hdr.catalog_size ? ei.me_mapsize
			                                                              : s->lay.hdr.catalog_size;
			return;
		}
	}
	FILE *f = fopen("/proc/self/maps", "re");
	if (f == NULL)
		return;
	char line[512];
	while (fgets(line, sizeof line, f)) {
		unsigned long lo, hi, off, ino;
		unsigned maj, mnr;
		if (sscanf(line, "%lx-%lx %*s %lx %x:%x %lu", &lo, &hi, &off, &maj, &mnr, &ino) != 6)
			continue;
		/* not the map this file made for the digest: LMDB's (or another handle's
		 * of the same file, which a change faults alike) */
		if (off == 0 && ino == s->catalog_id.ino && makedev(maj, mnr) == s->catalog_id.dev &&
		    (const uint8_t *)lo != ours) {
			s->catalog_map = (const uint8_t *)lo;
			s->catalog_map_size = hi - lo;
		}
	}
	fclose(f);
}

int bfi__catalog_open(bfi_snapshot *s, int trusted, struct bfi_bad *bad)
{
	int rc, fd;
	const uint8_t *map = NULL;
	uint64_t size = 0;
	MDB_txn *txn = NULL;
	char procpath[64];

	fd = s->catalog_fd >= 0 ? fcntl(s->catalog_fd, F_DUPFD_CLOEXEC, 0)
	                        : openat(s->dirfd, BFI_CATALOG_NAME, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		bad->what = "cannot open catalog";
		bad->offset = bad->length = 0;
		return rc;
	}
	rc = bfi__map_file(fd, &map, &size, 0, &s->catalog_id);
	if (rc == BFI_E_NOT_REGULAR)
		BAD_OUT(rc, 0, 0, BFI_CATALOG_NAME " is not a regular file");
	if (rc)
		BAD_OUT(rc, 0, 0, "cannot map catalog");
	if (size != s->lay.hdr.catalog_size)
		BAD_OUT(BFI_E_CATALOG_MISMATCH, 0, size, "catalog size differs from the index's record");
	if (!trusted) {
		/* the digest, and the pages' check in the same pass: a catalog made to
		 * match a resealed header, LMDB must not meet a bad page */
		uint8_t digest[16];
		const char *why;
		rc = bfi__lmdb_check(map, size, digest, &why);
		if (rc == -ENOMEM)
			BAD_OUT(rc, 0, 0, "no memory to check the catalog");
		if (memcmp(digest, s->lay.hdr.catalog_digest, 16) != 0)
			BAD_OUT(BFI_E_CATALOG_MISMATCH, 0, size,
			    "catalog digest differs from the index's record");
		if (rc)
			BAD_OUT(rc, 0, size, why ? why : "catalog pages out of range");
	}
	rc = lmdb_rc(mdb_env_create(&s->env));
	if (rc)
		BAD_OUT(rc, 0, 0, "mdb_env_create");
	mdb_env_set_maxdbs(s->env, 4);
	snprintf(procpath, sizeof procpath, "/proc/self/fd/%d", fd);
	rc = mdb_env_open(s->env, procpath,
	                  MDB_RDONLY | MDB_NOLOCK | MDB_NOSUBDIR | MDB_NOTLS | MDB_NORDAHEAD, 0);
	if (rc) {
		rc = lmdb_rc(rc);
		BAD_OUT(rc == -ENOENT ? BFI_E_CATALOG : rc, 0, size, "LMDB cannot open the catalog");
	}
	rc = lmdb_rc(mdb_txn_begin(s->env, NULL, MDB_RDONLY, &txn));
	if (rc)
		BAD_OUT(rc, 0, 0, "mdb_txn_begin");
	if (mdb_dbi_open(txn, "meta", 0, &s->dbi_meta) || mdb_dbi_open(txn, "sets", 0, &s->dbi_sets) ||
	    mdb_dbi_open(txn, "names", 0, &s->dbi_names))
		BAD_OUT(BFI_E_CATALOG, 0, size, "catalog lacks the meta, sets or names database");
	/* optional: a build with --min-count records what each set's files gave */
	s->has_seen = mdb_dbi_open(txn, "seen", 0, &s->dbi_seen) == 0;
	MDB_val v;
	rc = get_meta(txn, s->dbi_meta, "format", &v);
	if (rc || v.mv_size != strlen(BFI_CATALOG_FORMAT) ||
	    memcmp(v.mv_data, BFI_CATALOG_FORMAT, v.mv_size) != 0)
		BAD_OUT(BFI_E_CATALOG, 0, size, "catalog format tag missing or unknown");
	rc = get_meta(txn, s->dbi_meta, "snapshot_id", &v);
	if (rc || v.mv_size != 16 || memcmp(v.mv_data, s->lay.hdr.snapshot_id, 16) != 0)
		BAD_OUT(BFI_E_CATALOG_MISMATCH, 0, size, "catalog snapshot id differs from the index's");
	rc = get_meta(txn, s->dbi_meta, "n_sets", &v);
	if (rc || v.mv_size != 8 || bfi_get64(v.mv_data) != s->lay.n_sets)
		BAD_OUT(BFI_E_CATALOG, 0, size, "catalog set count differs from the index's");
	const uint8_t *in_map = v.mv_data; /* a value in LMDB's map, to find where it begins */
	rc = load_meta(s, txn);
	if (rc)
		BAD_OUT(rc, 0, size, "catalog meta unreadable");
	/* Committing a read-only txn keeps the DBI handles for later txns. */
	rc = lmdb_rc(mdb_txn_commit(txn));
	txn = NULL;
	if (rc == 0)
		find_lmdb_map(s, map, in_map);
out:
	if (txn)
		mdb_txn_abort(txn);
	if (map)
		munmap((void *)map, (size_t)size);
	close(fd); /* LMDB holds its own descriptor of the same inode */
	if (rc && s->env) {
		mdb_env_close(s->env);
		s->env = NULL;
		s->catalog_map = NULL;
		free(s->meta);
		s->meta = NULL;
		s->n_meta = 0;
	}
	return rc;
}

void bfi__catalog_close(bfi_snapshot *s)
{
	if (s->env)
		mdb_env_close(s->env);
	s->env = NULL;
	free(s->meta);
	s->meta = NULL;
	s->n_meta = 0;
}

/* Width of the filter that set ord's recorded fill ratio is of (format/layouts.h, fill_rank). */
static uint64_t set_width(const bfi_snapshot *s, uint32_t ord)
{
	int best = -1;
	for (int r = 0; r < BFI_ROWS; r++)
		if (s->view[r] && (best < 0 || bfi_layout_rows[r].fill_rank < bfi_layout_rows[best].fill_rank))
			best = r;
	return best >= 0 ? bfi__layouts[best]->set_bits(s, ord) : 0;
}

/*
 * Look up one set record. The catalog file never changes while mapped (it
 * is immutable and LMDB maps it read-only), so the pointers stay valid
 * after the read transaction ends, until mdb_env_close().
 */
static int get_set(const bfi_snapshot *s, uint32_t ord, MDB_val *val)
{
	if (s == NULL)
		return BFI_E_INVALID;
	if (s->env == NULL)
		return BFI_E_NO_CATALOG;
	if (ord >= s->lay.n_sets)
		return BFI_E_NOT_FOUND;
	uint32_t be = htobe32(ord);
	MDB_val k = {sizeof be, &be};
	MDB_txn *txn;
	int rc = lmdb_rc(mdb_txn_begin(s->env, NULL, MDB_RDONLY, &txn));
	if (rc)
		return rc;
	rc = mdb_get(txn, s->dbi_sets, &k, val);
	mdb_txn_abort(txn);
	if (rc == MDB_NOTFOUND)
		return BFI_E_CATALOG; /* every ordinal below n_sets must be there */
	if (rc)
		return lmdb_rc(rc);
	return val->mv_size > 16 ? 0 : BFI_E_CATALOG;
}

int bfi_set_name(const bfi_snapshot *s, uint32_t ord, const char **name, size_t *len)
{
	MDB_val v;
	if (name == NULL || len == NULL)
		return BFI_E_INVALID;
	if (s && s->cops)
		return s->cops->set_name(s, ord, name, len);
	int rc = get_set(s, ord, &v);
	if (rc)
		return rc;
	*name = (const char *)v.mv_data + 16;
	*len = v.mv_size - 16;
	return 0;
}

int bfi_set_stats(const bfi_snapshot *s, uint32_t ord, struct bfi_set_stats *out)
{
	MDB_val v;
	if (out == NULL)
		return BFI_E_INVALID;
	if (s && s->cops)
		return s->cops->set_stats(s, ord, out);
	int rc = get_set(s, ord, &v);
	if (rc)
		return rc;
	out->distinct_keys = bfi_get64(v.mv_data);
	out->bits_set = bfi_get64((const uint8_t *)v.mv_data + 8);
	out->bits = set_width(s, ord);
	return out->bits_set <= out->bits ? 0 : BFI_E_CATALOG;
}

/* Set ord's record in the seen table, in txn: at least distinct, the keys it kept. */
static int seen_in(const bfi_snapshot *s, MDB_txn *txn, uint32_t ord, uint64_t distinct,
                   uint64_t *seen)
{
	uint32_t be = htobe32(ord);
	MDB_val k = {sizeof be, &be}, v;
	int rc = mdb_get(txn, s->dbi_seen, &k, &v);
	if (rc && rc != MDB_NOTFOUND)
		return lmdb_rc(rc);
	/* every set is there, and kept no more than it saw */
	if (rc == MDB_NOTFOUND || v.mv_size != 8 || bfi_get64(v.mv_data) < distinct)
		return BFI_E_CATALOG;
	*seen = bfi_get64(v.mv_data);
	return 0;
}

int bfi_set_seen(const bfi_snapshot *s, uint32_t ord, uint64_t *seen)
{
	if (seen == NULL || s == NULL)
		return BFI_E_INVALID;
	if (s->cops)
		return s->cops->set_seen(s, ord, seen);
	MDB_val v;
	int rc = get_set(s, ord, &v);
	if (rc)
		return rc;
	if (!s->has_seen)
		return BFI_E_NOT_FOUND;
	MDB_txn *txn;
	if ((rc = lmdb_rc(mdb_txn_begin(s->env, NULL, MDB_RDONLY, &txn))) != 0)
		return rc;
	rc = seen_in(s, txn, ord, bfi_get64(v.mv_data), seen);
	mdb_txn_abort(txn);
	return rc;
}

int bfi_set_fpr(const bfi_snapshot *s, uint32_t ord, double *fpr)
{
	struct bfi_set_stats st;
	if (fpr == NULL)
		return BFI_E_INVALID;
	if (s && s->cops)
		return s->cops->set_fpr(s, ord, fpr);
	int rc = bfi_set_stats(s, ord, &st);
	if (rc)
		return rc;
	double fill = (double)st.bits_set / (double)st.bits, p = 1;
	for (uint32_t i = 0; i < s->lay.k; i++)
		p *= fill;
	*fpr = p;
	return 0;
}

unsigned bfi__meta_uint(const bfi_snapshot *s, const char *key, unsigned dflt)
{
	const void *v;
	size_t len;
	if (bfi_catalog_meta(s, key, &v, &len) != 0 || len == 0 || len > 9)
		return dflt;
	unsigned n = 0;
	for (size_t i = 0; i < len; i++) {
		char c = ((const char *)v)[i];
		if (c < '0' || c > '9')
			return dflt;
		n = n * 10 + (unsigned)(c - '0');
	}
	return n;
}

const char *bfi_key_rules_differ(const bfi_snapshot *a, const bfi_snapshot *b)
{
	static const char *const rules[] = BFI_META_KEY_RULES;
	for (size_t i = 0; i < sizeof rules / sizeof *rules; i++) {
		const void *va, *vb;
		size_t la, lb;
		int ra = bfi_catalog_meta(a, rules[i], &va, &la);
		int rb = bfi_catalog_meta(b, rules[i], &vb, &lb);
		if (ra != rb || (ra == 0 && (la != lb || memcmp(va, vb, la) != 0)))
			return rules[i];
	}
	return NULL;
}

int bfi_catalog_meta(const bfi_snapshot *s, const char *key, const void **val, size_t *len)
{
	s = bfi__catalog_snap(s);
	if (s == NULL || key == NULL || val == NULL || len == NULL)
		return BFI_E_INVALID;
	if (s->env == NULL)
		return BFI_E_NO_CATALOG;
	size_t kl = strlen(key);
	for (size_t i = 0; i < s->n_meta; i++)
		if (s->meta[i].kl == kl && memcmp(s->meta[i].k, key, kl) == 0) {
			*val = s->meta[i].v;
			*len = s->meta[i].vl;
			return 0;
		}
	if (s->meta_all || kl == 0)
		return BFI_E_NOT_FOUND;
	MDB_txn *txn;
	MDB_val k = {kl, (void *)key}, v;
	int rc = lmdb_rc(mdb_txn_begin(s->env, NULL, MDB_RDONLY, &txn));
	if (rc)
		return rc;
	rc = k.mv_size ? lmdb_rc(mdb_get(txn, s->dbi_meta, &k, &v)) : BFI_E_NOT_FOUND;
	mdb_txn_abort(txn);
	if (rc == 0) {
		*val = v.mv_data;
		*len = v.mv_size;
	}
	return rc;
}

int bfi_set_find(const bfi_snapshot *s, const char *name, size_t len, uint32_t *ord)
{
	if (s == NULL || ord == NULL || (name == NULL && len))
		return BFI_E_INVALID;
	if (s->cops)
		return s->cops->set_find(s, name, len, ord);
	if (s->env == NULL)
		return BFI_E_NO_CATALOG;
	if (len == 0 || len > BFI_MAX_NAME)
		return BFI_E_NOT_FOUND;
	MDB_val k = {len, (void *)name}, v;
	MDB_txn *txn;
	int rc = lmdb_rc(mdb_txn_begin(s->env, NULL, MDB_RDONLY, &txn));
	if (rc)
		return rc;
	rc = lmdb_rc(mdb_get(txn, s->dbi_names, &k, &v));
	mdb_txn_abort(txn);
	if (rc)
		return rc;
	if (v.mv_size != 4 || bfi_get32(v.mv_data) >= s->lay.n_sets)
		return BFI_E_CATALOG;
	*ord = bfi_get32(v.mv_data);
	return 0;
}

int bfi__catalog_check_all(bfi_snapshot *s, struct bfi_bad *bad)
{
	MDB_txn *txn = NULL;
	MDB_cursor *cur = NULL;
	MDB_val k, v;
	uint64_t expect = 0;
	int rc = lmdb_rc(mdb_txn_begin(s->env, NULL, MDB_RDONLY, &txn));
	if (rc)
		BAD_OUT(rc, 0, 0, "mdb_txn_begin");
	rc = get_meta(txn, s->dbi_meta, "hashes", &v);
	if (rc || v.mv_size != 4 || bfi_get32(v.mv_data) != s->lay.k)
		BAD_OUT(BFI_E_CATALOG, 0, s->lay.hdr.catalog_size, "catalog 'hashes' differs from the index");
	rc = lmdb_rc(mdb_cursor_open(txn, s->dbi_sets, &cur));
	if (rc)
		BAD_OUT(rc, 0, 0, "mdb_cursor_open");
	for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0;
	     rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT), expect++) {
		uint32_t be;
		if (k.mv_size != 4)
			BAD_OUT(BFI_E_CATALOG, 0, s->lay.hdr.catalog_size, "set key is not 4 bytes");
		memcpy(&be, k.mv_data, 4);
		if (be32toh(be) != expect || v.mv_size <= 16 || v.mv_size - 16 > BFI_MAX_NAME)
			BAD_OUT(BFI_E_CATALOG, 0, s->lay.hdr.catalog_size,
			    "set ordinals are not 0..n-1 or a record is malformed");
		if (bfi_get64((const uint8_t *)v.mv_data + 8) > set_width(s, (uint32_t)expect))
			BAD_OUT(BFI_E_CATALOG, 0, s->lay.hdr.catalog_size, "set bit count exceeds m");
		uint64_t seen;
		if (s->has_seen && seen_in(s, txn, (uint32_t)expect, bfi_get64(v.mv_data), &seen) != 0)
			BAD_OUT(BFI_E_CATALOG, 0, s->lay.hdr.catalog_size,
			    "a set's seen record is missing or malformed, or below the keys it kept");
		MDB_val nk = {v.mv_size - 16, (uint8_t *)v.mv_data + 16}, nv;
		if (mdb_get(txn, s->dbi_names, &nk, &nv) != 0 || nv.mv_size != 4 ||
		    bfi_get32(nv.mv_data) != expect)
			BAD_OUT(BFI_E_CATALOG, 0, s->lay.hdr.catalog_size,
			    "name and ordinal tables disagree");
	}
	if (rc != MDB_NOTFOUND)
		BAD_OUT(lmdb_rc(rc), 0, s->lay.hdr.catalog_size, "reading the sets table");
	if (expect != s->lay.n_sets)
		BAD_OUT(BFI_E_CATALOG, 0, s->lay.hdr.catalog_size, "catalog holds the wrong number of sets");
	MDB_stat st;
	if (mdb_stat(txn, s->dbi_names, &st) != 0 || st.ms_entries != expect)
		BAD_OUT(BFI_E_CATALOG, 0, s->lay.hdr.catalog_size, "names table has extra entries");
	if (s->has_seen && (mdb_stat(txn, s->dbi_seen, &st) != 0 || st.ms_entries != expect))
		BAD_OUT(BFI_E_CATALOG, 0, s->lay.hdr.catalog_size, "seen table has extra entries");
	rc = 0;
out:
	if (cur)
		mdb_cursor_close(cur);
	if (txn)
		mdb_txn_abort(txn);
	return rc;
}
