/*
 * publish.h - what binds a snapshot and puts it in place: its
 * checksums, digest and id (seal.c), its catalog (catalog.c), and the
 * staging directory it is written in and published from (publish.c).
 */
#ifndef BFI_WRITER_PUBLISH_H
#define BFI_WRITER_PUBLISH_H

#include "internal.h"

/*
 * Sealing (seal.c): the chunk checksums of
 * [4096, sums_at) into table and each section's checksum, read back from
 * fd; a file's XXH3-128 digest and size; the snapshot id.
 */
int checksum_back(bfi_writer *w, int fd, uint64_t sums_at, struct bfi_section *sec,
                  uint32_t n_sec, uint8_t *table);
int digest_file(const char *path, uint8_t digest[16], uint64_t *size);
void snapshot_id(const struct names *names, const uint32_t *old_of_new, const uint8_t *sums,
                 size_t sums_len, uint32_t k, uint8_t id[16]);

/* Write the LMDB catalog file at path (spec/format.md, "Catalog"). */
/* Set j of the snapshot is input set old_of_new[j]; distinct is by input
 * ordinal, ones by snapshot ordinal; seen (--min-count, by input ordinal,
 * set_sums': 1 + the distinct keys its files gave, 0 not counted) or NULL. */
int catalog_write(const char *path, const struct names *names, const struct meta_kv *extra,
                  int n_extra, const uint32_t *old_of_new, const uint64_t *distinct,
                  const uint64_t *seen, const uint64_t *ones, uint32_t k, double fpr,
                  const uint8_t snapshot_id[16], char *err, size_t errlen);

/*
 * Staging (publish.c): a snapshot is written into a directory beside its
 * path, proven bfi's by a marker file that stays locked while the build
 * runs, then swapped into place atomically.
 */
struct staging {
	char dir[4300]; /* PATH.tmp-XXXXXX, or "" once it is gone or published */
	int dfd;        /* the directory, or -1 */
	int mark;       /* the marker, locked, or -1 */
};
/* Make and mark a staging directory beside path. */
int staging_begin(struct staging *st, const char *path, char *err, size_t errlen);
/*
 * Swap the staged directory and the directory at path at once
 * (RENAME_EXCHANGE), made durable: path is then what was staged, and old
 * (oldlen bytes) names where path's directory went, for the caller to
 * remove. st is done with.
 */
int staging_exchange(struct staging *st, const char *path, char *old, size_t oldlen, char *err,
                     size_t errlen);
/*
 * Replace the collection at path by the one staged in st (bfi unpack;
 * collection.c), holding path's lock so that no writer commits into it
 * meanwhile. 0, or BFI_E_BUSY, BFI_E_EXISTS (path is not a collection, or
 * holds what a collection's writer does not make), -errno; err says why,
 * warn (else "") what of the old collection could not be removed.
 */
int collection_replace(struct staging *st, const char *path, char *err, size_t errlen, char *warn,
                       size_t warnlen);
/*
 * Swap the staged snapshot in at path. *warn is set (else "") when the
 * snapshot replaced held a file bfi did not write, and so was kept.
 */
int staging_publish(struct staging *st, const char *path, char *err, size_t errlen, char *warn,
                    size_t warnlen);
/* fsync the directory path is in, so that a rename into it lasts: 0 or -errno. */
int fsync_parent(const char *path);
/*
 * path's directory and last component, each at most len bytes ("." when
 * it has no directory; "a/b/" names b): 0, or BFI_E_INVALID for "/", an
 * empty or too long path, or a last component "." or "..".
 */
int split_path(const char *path, char *parent, char *base, size_t len);
/* Publish it at path, which must not exist (BFI_E_EXISTS): a collection unpacked whole. */
int staging_rename(struct staging *st, const char *path, char *err, size_t errlen);
/* Remove what is left of the staging directory (bfi's files only); unlock. */
void staging_end(struct staging *st);
/* Remove the staging directories beside path that killed builds left. */
void staging_sweep(const char *path);
/*
 * Remove the published snapshot name in directory pfd: bfi's own files in
 * it (and a stray marker), then the directory, which fails if anything
 * else is there. 0 or -errno, or BFI_E_EXISTS if it is not our directory.
 */
int snapshot_remove(int pfd, const char *name);

#endif
