/* open.c - map an index and validate it in O(1) (spec/format.md, "Conformance"). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "layout.h"

#define BAD(code, off, len, msg) return bfi__bad(bad, code, off, len, msg)

static uint64_t entry_off(uint32_t i)
{
	return BFI_HEADER_SIZE + (uint64_t)i * BFI_ENTRY_SIZE;
}

/* The row of the table whose layout is in sections of kind, or -1. */
static int check_entries(const uint8_t *map, uint64_t size, struct bfi_layout *lay,
                         struct bfi_bad *bad)
{
	uint64_t data_end = size - BFI_TRAILER_SIZE;
	uint64_t prev_end = BFI_SECTION_ALIGN;
	int layouts = 0;
	lay->sums_idx = -1;
	for (int r = 0; r < BFI_MAX_LAYOUTS; r++)
		lay->sec_of[r] = -1;
	for (uint32_t i = 0; i < lay->n_sec; i++) {
		struct bfi_section *s = &lay->sec[i];
		int rc = bfi_section_decode(map + entry_off(i), s);
		if (rc)
			BAD(rc, entry_off(i), BFI_ENTRY_SIZE, "section entry");
		if (s->offset < prev_end || !bfi_range_ok(s->offset, s->stored_size, data_end))
			BAD(BFI_E_BAD_SECTION, entry_off(i), BFI_ENTRY_SIZE,
			    "section out of bounds or overlapping the one before");
		prev_end = s->offset + s->stored_size;
		int row = bfi_layout_row_of_kind(s->kind);
		int *slot = s->kind == BFI_SEC_CHUNKSUMS ? &lay->sums_idx
		            : row >= 0                   ? &lay->sec_of[row]
		                                         : NULL;
		if (slot == NULL && (s->flags & BFI_SECF_REQUIRED))
			BAD(BFI_E_UNKNOWN_SECTION, entry_off(i), BFI_ENTRY_SIZE,
			    "required section of unknown kind");
		if (slot == NULL)
			continue;
		if (*slot >= 0)
			BAD(BFI_E_BAD_SECTION, entry_off(i), BFI_ENTRY_SIZE,
			    "second section of the same kind");
		*slot = (int)i;
		layouts += row >= 0;
		/* Known kinds are mapped and read in place, so they must be raw. */
		if (s->encoding != BFI_ENC_RAW)
			BAD(BFI_E_ENCODING, entry_off(i), BFI_ENTRY_SIZE,
			    "section encoding not supported for this kind");
	}
	if (lay->sums_idx < 0 || lay->sums_idx != (int)lay->n_sec - 1)
		BAD(BFI_E_BAD_SECTION, BFI_HEADER_SIZE, (uint64_t)lay->n_sec * BFI_ENTRY_SIZE,
		    "chunk-checksum section missing or not last");
	if (prev_end != data_end)
		BAD(BFI_E_BAD_SECTION, entry_off(lay->n_sec - 1), BFI_ENTRY_SIZE,
		    "last section does not end at the trailer");
	if (layouts == 0)
		BAD(BFI_E_NO_LAYOUT, BFI_HEADER_SIZE, (uint64_t)lay->n_sec * BFI_ENTRY_SIZE,
		    "no flat, plain, rambo or tree section");
	return 0;
}

static int check_sums(const uint8_t *map, struct bfi_layout *lay, struct bfi_bad *bad)
{
	const struct bfi_section *s = &lay->sec[lay->sums_idx];
	struct bfi_chunksums_desc d;
	int rc = bfi_chunksums_decode(map + s->offset, s->size, s->offset, &d);
	if (rc)
		BAD(rc, s->offset, BFI_CHUNKSUMS_DESC_SIZE, "chunk-checksum descriptor");
	lay->sums_covered = d.covered;
	return 0;
}

int bfi__check_index(const uint8_t *map, uint64_t size, struct bfi_layout *lay,
                     struct bfi_bad *bad)
{
	int rc;
	if (size < BFI_MAGIC_LEN || (size >= BFI_MAGIC_LEN && size < BFI_HEADER_SIZE &&
	                             memcmp(map, BFI_MAGIC, BFI_MAGIC_LEN) == 0))
		BAD(BFI_E_TRUNCATED, size, 0, "file ends inside the header");
	if (size < BFI_HEADER_SIZE)
		BAD(BFI_E_BAD_MAGIC, 0, BFI_MAGIC_LEN, "magic");
	rc = bfi_header_decode(map, &lay->hdr);
	if (rc)
		BAD(rc, 0, BFI_HEADER_SIZE, "header");
	if (size < lay->hdr.file_size)
		BAD(BFI_E_TRUNCATED, size, lay->hdr.file_size - size,
		    "file is shorter than its header says");
	if (size > lay->hdr.file_size)
		BAD(BFI_E_SIZE, lay->hdr.file_size, size - lay->hdr.file_size,
		    "file is longer than its header says");
	if (size < BFI_SECTION_ALIGN + BFI_TRAILER_SIZE || size % 8 != 0)
		BAD(BFI_E_BAD_SECTION, BFI_H_FILE_SIZE, 8, "file size impossible for any snapshot");
	if (memcmp(map + size - BFI_TRAILER_SIZE, BFI_MAGIC, BFI_MAGIC_LEN) != 0)
		BAD(BFI_E_BAD_TRAILER, size - BFI_TRAILER_SIZE, BFI_TRAILER_SIZE, "trailing magic");
	lay->n_sec = lay->hdr.section_count;
	uint64_t table_len = (uint64_t)lay->n_sec * BFI_ENTRY_SIZE;
	if (bfi_checksum64(map + BFI_HEADER_SIZE, table_len) != lay->hdr.table_checksum)
		BAD(BFI_E_TABLE_CHECKSUM, BFI_HEADER_SIZE, table_len, "section table");
	/* The bytes between table and first section are covered by no checksum. */
	for (uint64_t i = BFI_HEADER_SIZE + table_len; i < BFI_SECTION_ALIGN; i++)
		if (map[i])
			BAD(BFI_E_RESERVED, i, 1, "padding after the section table is not zero");
	rc = check_entries(map, size, lay, bad);
	if (rc)
		return rc;
	return check_sums(map, lay, bad);
}

/*
 * Open each layout's view, in the order of its section in the file, and
 * check that they agree on the sets, and on k but for layouts that keep
 * their own (the snapshot's k is the first of the others', else the
 * first's).
 */
static int open_layouts(bfi_snapshot *s, struct bfi_bad *bad)
{
	struct bfi_layout *lay = &s->lay;
	int have_k = 0;
	lay->n_sets = 0;
	for (uint32_t i = 0; i < lay->n_sec; i++) {
		int r = bfi_layout_row_of_kind(lay->sec[i].kind);
		if (r < 0 || lay->sec_of[r] != (int)i)
			continue;
		const struct bfi_layout_ops *ops = bfi__layouts[r];
		const struct bfi_section *e = &lay->sec[i];
		struct bfi_where at = {0, 0, NULL};
		struct bfi_layout_info f = {.layout = bfi_layout_rows[r].flag};
		s->view[r] = calloc(1, ops->view_size);
		if (s->view[r] == NULL)
			return -ENOMEM;
		int rc = ops->open(s, s->map + e->offset, e->size, &at);
		if (rc)
			BAD(rc, e->offset + at.offset, at.length, at.what);
		ops->info(s, &f);
		if (lay->n_sets && f.n_sets != lay->n_sets)
			BAD(BFI_E_BAD_LAYOUT, lay->sec[i].offset, 8,
			    "two layouts disagree on the number of sets");
		if (have_k && !ops->own_k && f.hashes != lay->k)
			BAD(BFI_E_BAD_LAYOUT, lay->sec[i].offset, 8, "two layouts disagree on k");
		if (lay->n_sets == 0 || (!have_k && !ops->own_k))
			lay->k = f.hashes;
		have_k |= !ops->own_k;
		lay->n_sets = f.n_sets;
	}
	return 0;
}



static int open_once(const char *path, unsigned flags, bfi_snapshot **out, struct bfi_bad *bad,
                     int *held);

#define OPEN_TRIES 16 /* swaps in a row that bfi_open() rides out (bfi.h) */

/*
 * Did a writer swap another snapshot in at path after dirfd was opened?
 * Then the files that dirfd no longer holds were the old snapshot's,
 * removed under us, and opening again finds the new one whole.
 */
static int replaced(const char *path, int dirfd)
{
	struct stat now, held;
	if (dirfd < 0 || stat(path, &now) != 0 || fstat(dirfd, &held) != 0)
		return 0;
	return now.st_dev != held.st_dev || now.st_ino != held.st_ino;
}

int bfi__open(const char *path, unsigned flags, bfi_snapshot **out, struct bfi_bad *bad)
{
	if (path == NULL || out == NULL ||
	    (flags & ~(unsigned)(BFI_OPEN_TRUSTED | BFI_OPEN_NO_CATALOG | BFI_OPEN_SMALL_PAGES |
	                         BFI_OPEN_WARM | BFI_OPEN_SCAN)))
		return BFI_E_INVALID;
	int rc;
	for (int tries = 0;; tries++) {
		int dirfd = -1;
		rc = open_once(path, flags, out, bad, &dirfd);
		int again = rc == -ENOENT && tries < OPEN_TRIES && replaced(path, dirfd);
		if (dirfd >= 0)
			close(dirfd);
		if (!again)
			return rc;
	}
}

/* The rest of an open, once s->index_fd is open: map, check, layouts, catalog. */
static int open_files(bfi_snapshot *s, unsigned flags, struct bfi_bad *bad)
{
	int rc = bfi__map_file(s->index_fd, &s->map, &s->size, !(flags & BFI_OPEN_SMALL_PAGES),
	                       &s->index_id);
	if (rc == BFI_E_NOT_REGULAR)
		bad->what = BFI_INDEX_NAME " is not a regular file";
	if (rc)
		return rc;
	rc = bfi__check_index(s->map, s->size, &s->lay, bad);
	if (rc)
		return rc;
	if ((flags & BFI_OPEN_WARM) && s->size) /* only a hint: the reads run in the background */
		(void)madvise((void *)s->map, (size_t)s->size, MADV_WILLNEED);
	memcpy(s->head, s->map, BFI_HEADER_SIZE); /* for bfi_check_files, which must not touch the map */
	rc = open_layouts(s, bad);
	if (rc)
		return rc;
	if (!(flags & BFI_OPEN_NO_CATALOG))
		rc = bfi__catalog_open(s, (flags & BFI_OPEN_TRUSTED) != 0, bad);
	return rc;
}

static bfi_snapshot *new_snapshot(struct bfi_bad *bad)
{
	bad->what = NULL;
	bad->offset = bad->length = 0;
	bfi_snapshot *s = calloc(1, sizeof *s);
	if (s)
		s->index_fd = s->dirfd = s->catalog_fd = -1;
	return s;
}

/* One attempt; on failure *held keeps the directory it opened, if any. */
static int open_once(const char *path, unsigned flags, bfi_snapshot **out, struct bfi_bad *bad,
                     int *held)
{
	*out = NULL;
	bfi_snapshot *s = new_snapshot(bad);
	if (s == NULL)
		return -ENOMEM;
	int rc;
	/*
	 * Hold the directory itself, so that both files come from the same
	 * snapshot even if a writer swaps a new one in while we open.
	 */
	s->dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->dirfd < 0) {
		rc = -errno;
		bad->what = "cannot open the snapshot directory";
		goto fail;
	}
	/* O_NONBLOCK: a FIFO put in its place must not hang the open */
	s->index_fd = openat(s->dirfd, BFI_INDEX_NAME, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (s->index_fd < 0) {
		rc = -errno;
		bad->what = "cannot open " BFI_INDEX_NAME;
		goto fail;
	}
	rc = open_files(s, flags, bad);
	if (rc)
		goto fail;
	*out = s;
	return 0;
fail:
	*held = s->dirfd;
	s->dirfd = -1;
	bfi_close(&s);
	return rc;
}

int bfi__open_fds(int index_fd, int catalog_fd, unsigned flags, bfi_snapshot **out,
                  struct bfi_bad *bad)
{
	*out = NULL;
	bfi_snapshot *s = new_snapshot(bad);
	if (s == NULL) {
		close(index_fd);
		close(catalog_fd);
		return -ENOMEM;
	}
	s->index_fd = index_fd;
	s->catalog_fd = catalog_fd;
	int rc = open_files(s, flags, bad);
	if (rc)
		bfi_close(&s);
	*out = s;
	return rc;
}

/* Does fd still hold the file id describes, unchanged? */
static int same_file(int fd, const struct bfi_file_id *id)
{
	struct stat st;
	struct bfi_file_id now;
	if (fstat(fd, &st) != 0)
		return 0;
	bfi__file_id(&st, &now);
	return now.dev == id->dev && now.ino == id->ino && now.size == id->size &&
	       now.mtime_sec == id->mtime_sec && now.mtime_nsec == id->mtime_nsec;
}

int bfi_check_files(const bfi_snapshot *s)
{
	if (s == NULL)
		return BFI_E_INVALID;
	if (s->cops)
		return s->cops->check_files(s);
	if (!same_file(s->index_fd, &s->index_id))
		return BFI_E_CHANGED;
	/*
	 * Timestamps are coarse (a few ms): another snapshot's index copied
	 * over this one in the same tick keeps the size and time, but not the
	 * header, which names the snapshot. Read through the descriptor, not
	 * the map, which a shrunk file would fault on.
	 */
	uint8_t head[BFI_HEADER_SIZE];
	if (pread(s->index_fd, head, sizeof head, 0) != (ssize_t)sizeof head ||
	    memcmp(head, s->head, sizeof head) != 0)
		return BFI_E_CHANGED;
	if (s->env) {
		int cfd;
		if (mdb_env_get_fd(s->env, &cfd) != 0 || !same_file(cfd, &s->catalog_id))
			return BFI_E_CHANGED;
	}
	return 0;
}

const char *bfi_mapped_file(const bfi_snapshot *s, const void *addr)
{
	const uint8_t *a = addr;
	if (s == NULL)
		return NULL;
	if (s->cops)
		return s->cops->mapped_file(s, addr);
	if (s->map && a >= s->map && (uint64_t)(a - s->map) < s->size)
		return BFI_INDEX_NAME;
	if (s->catalog_map && a >= s->catalog_map &&
	    (uint64_t)(a - s->catalog_map) < s->catalog_map_size)
		return BFI_CATALOG_NAME;
	return NULL;
}

void bfi_close(bfi_snapshot **snap)
{
	if (snap == NULL || *snap == NULL)
		return;
	bfi_snapshot *s = *snap;
	if (s->cops)
		s->cops->close(s);
	bfi__catalog_close(s);
	for (int r = 0; r < BFI_ROWS; r++) {
		if (s->view[r] && bfi__layouts[r]->close)
			bfi__layouts[r]->close(s);
		free(s->view[r]);
	}
	if (s->map)
		munmap((void *)s->map, (size_t)s->size);
	bfi__lazy_free(&s->lazy);
	if (s->index_fd >= 0)
		close(s->index_fd);
	if (s->catalog_fd >= 0)
		close(s->catalog_fd);
	if (s->dirfd >= 0)
		close(s->dirfd);
	free(s);
	*snap = NULL;
}

void bfi_info(const bfi_snapshot *s, struct bfi_info *info)
{
	if (s->cops) {
		s->cops->info(s, info);
		return;
	}
	memset(info, 0, sizeof *info);
	info->major = s->lay.hdr.major;
	info->minor = s->lay.hdr.minor;
	info->compat_flags = s->lay.hdr.compat;
	info->file_size = s->size;
	info->catalog_size = s->lay.hdr.catalog_size;
	memcpy(info->snapshot_id, s->lay.hdr.snapshot_id, 16);
	memcpy(info->catalog_digest, s->lay.hdr.catalog_digest, 16);
	info->n_sets = info->ordinals = s->lay.n_sets;
	info->hashes = s->lay.k;
	info->n_sections = s->lay.n_sec;
	info->has_catalog = s->env != NULL;
	for (int r = 0; r < BFI_ROWS; r++) {
		struct bfi_layout_info li;
		if (s->view[r] == NULL || bfi_layout_info(s, bfi_layout_rows[r].flag, &li) != 0)
			continue;
		info->layouts |= li.layout;
		if (li.bits > info->bits)
			info->bits = li.bits;
	}
}

int bfi_section(const bfi_snapshot *s, uint32_t i, struct bfi_section_info *out)
{
	if (s == NULL || out == NULL || i >= s->lay.n_sec)
		return BFI_E_INVALID;
	const struct bfi_section *e = &s->lay.sec[i];
	out->kind = e->kind;
	out->encoding = e->encoding;
	out->flags = e->flags;
	out->offset = e->offset;
	out->stored_size = e->stored_size;
	out->size = e->size;
	out->checksum = e->checksum;
	return 0;
}

const char *bfi_section_kind_name(uint32_t kind)
{
	if (kind == BFI_SEC_CHUNKSUMS)
		return "chunksums";
	int r = bfi_layout_row_of_kind(kind);
	return r >= 0 ? bfi_layout_rows[r].name : "unknown";
}

const char *bfi_version(unsigned *format_major, unsigned *format_minor)
{
	if (format_major)
		*format_major = BFI_VERSION_MAJOR;
	if (format_minor)
		*format_minor = BFI_VERSION_MINOR;
	return BFI_VERSION_STRING;
}
