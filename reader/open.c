/* open.c - map an index and validate it in O(1) (spec/format.md, "Conformance"). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#define BAD(code, off, len, msg)                                                        \
	do {                                                                            \
		bad->offset = (off);                                                    \
		bad->length = (len);                                                    \
		bad->what = (msg);                                                      \
		return (code);                                                          \
	} while (0)

static uint64_t entry_off(uint32_t i)
{
	return BFI_HEADER_SIZE + (uint64_t)i * BFI_ENTRY_SIZE;
}

static int check_entries(const uint8_t *map, uint64_t size, struct bfi_layout *lay,
                         struct bfi_bad *bad)
{
	uint64_t data_end = size - BFI_TRAILER_SIZE;
	uint64_t prev_end = BFI_SECTION_ALIGN;
	lay->flat_idx = lay->plain_idx = lay->rambo_idx = lay->tree_idx = lay->sums_idx = -1;
	for (uint32_t i = 0; i < lay->n_sec; i++) {
		struct bfi_section *s = &lay->sec[i];
		int rc = bfi_section_decode(map + entry_off(i), s);
		if (rc)
			BAD(rc, entry_off(i), BFI_ENTRY_SIZE, "section entry");
		if (s->offset < prev_end || !bfi_range_ok(s->offset, s->stored_size, data_end))
			BAD(BFI_E_BAD_SECTION, entry_off(i), BFI_ENTRY_SIZE,
			    "section out of bounds or overlapping the one before");
		prev_end = s->offset + s->stored_size;
		int *slot;
		switch (s->kind) {
		case BFI_SEC_FLAT: slot = &lay->flat_idx; break;
		case BFI_SEC_PLAIN: slot = &lay->plain_idx; break;
		case BFI_SEC_RAMBO: slot = &lay->rambo_idx; break;
		case BFI_SEC_TREE: slot = &lay->tree_idx; break;
		case BFI_SEC_CHUNKSUMS: slot = &lay->sums_idx; break;
		default:
			if (s->flags & BFI_SECF_REQUIRED)
				BAD(BFI_E_UNKNOWN_SECTION, entry_off(i), BFI_ENTRY_SIZE,
				    "required section of unknown kind");
			continue;
		}
		if (*slot >= 0)
			BAD(BFI_E_BAD_SECTION, entry_off(i), BFI_ENTRY_SIZE,
			    "second section of the same kind");
		*slot = (int)i;
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
	if (lay->flat_idx < 0 && lay->plain_idx < 0 && lay->rambo_idx < 0 && lay->tree_idx < 0)
		BAD(BFI_E_NO_LAYOUT, BFI_HEADER_SIZE, (uint64_t)lay->n_sec * BFI_ENTRY_SIZE,
		    "no flat, plain, rambo or tree section");
	return 0;
}

/* Descriptors of the layouts, and their agreement on N and k. */
static int check_layouts(const uint8_t *map, struct bfi_layout *lay, struct bfi_bad *bad)
{
	int rc;
	lay->n_sets = 0;
	if (lay->flat_idx >= 0) {
		const struct bfi_section *f = &lay->sec[lay->flat_idx];
		uint64_t at;
		rc = bfi_flat_decode(map + f->offset, f->size, &lay->flat, NULL, &at);
		if (rc)
			BAD(rc, f->offset + at, at ? BFI_BLOCK_ENTRY_SIZE : BFI_FLAT_DESC_SIZE,
			    at ? "flat block entry" : "flat descriptor");
		lay->n_sets = lay->flat.n_sets;
		lay->k = lay->flat.k;
	}
	if (lay->plain_idx >= 0) {
		const struct bfi_section *p = &lay->sec[lay->plain_idx];
		rc = bfi_plain_decode(map + p->offset, p->size, &lay->plain);
		if (rc)
			BAD(rc, p->offset, BFI_PLAIN_DESC_SIZE, "plain descriptor");
		if (lay->n_sets && (lay->plain.n_sets != lay->n_sets || lay->plain.k != lay->k))
			BAD(BFI_E_BAD_LAYOUT, p->offset, BFI_PLAIN_DESC_SIZE,
			    "plain and flat layouts disagree on the sets or k");
		lay->n_sets = lay->plain.n_sets;
		lay->k = lay->plain.k;
	}
	if (lay->rambo_idx >= 0) {
		const struct bfi_section *r = &lay->sec[lay->rambo_idx];
		uint64_t at;
		rc = bfi_rambo_decode(map + r->offset, r->size, &lay->rambo, NULL, &at);
		if (rc)
			BAD(rc, r->offset + at, at ? BFI_REP_ENTRY_SIZE : BFI_RAMBO_DESC_SIZE,
			    at ? "rambo repetition entry" : "rambo descriptor");
		if (lay->n_sets && lay->rambo.n_sets != lay->n_sets)
			BAD(BFI_E_BAD_LAYOUT, r->offset, BFI_RAMBO_DESC_SIZE,
			    "rambo and another layout disagree on the sets");
		if (lay->n_sets == 0)
			lay->k = lay->rambo.k; /* k of the first layout; rambo keeps its own */
		lay->n_sets = lay->rambo.n_sets;
	}
	if (lay->tree_idx >= 0) {
		const struct bfi_section *t = &lay->sec[lay->tree_idx];
		uint64_t at;
		rc = bfi_tree_decode(map + t->offset, t->size, &lay->tree, NULL, &at);
		if (rc)
			BAD(rc, t->offset + at, at ? BFI_LEVEL_ENTRY_SIZE : BFI_TREE_DESC_SIZE,
			    at ? "tree level entry" : "tree descriptor");
		if (lay->n_sets && (lay->tree.n_sets != lay->n_sets ||
		                    ((lay->flat_idx >= 0 || lay->plain_idx >= 0) && lay->tree.k != lay->k)))
			BAD(BFI_E_BAD_LAYOUT, t->offset, BFI_TREE_DESC_SIZE,
			    "tree and another layout disagree on the sets or k");
		if (lay->n_sets == 0)
			lay->k = lay->tree.k;
		lay->n_sets = lay->tree.n_sets;
	}
	return 0;
}

static int check_sums(const uint8_t *map, struct bfi_layout *lay, struct bfi_bad *bad)
{
	const struct bfi_section *s = &lay->sec[lay->sums_idx];
	const uint8_t *p = map + s->offset;
	if (s->size < BFI_CHUNKSUMS_DESC_SIZE)
		BAD(BFI_E_BAD_LAYOUT, s->offset, s->size, "chunk-checksum descriptor");
	uint32_t log2 = bfi_get32(p);
	uint32_t reserved = bfi_get32(p + 4);
	uint64_t covered = bfi_get64(p + 8);
	if (reserved != 0)
		BAD(BFI_E_RESERVED, s->offset, BFI_CHUNKSUMS_DESC_SIZE, "chunk-checksum descriptor");
	if (log2 != BFI_CHUNK_LOG2 || covered != s->offset)
		BAD(BFI_E_BAD_LAYOUT, s->offset, BFI_CHUNKSUMS_DESC_SIZE,
		    "chunk-checksum descriptor");
	uint64_t chunks = (covered - BFI_SECTION_ALIGN + BFI_CHUNK_SIZE - 1) / BFI_CHUNK_SIZE;
	if (s->size != BFI_CHUNKSUMS_DESC_SIZE + chunks * 8)
		BAD(BFI_E_BAD_LAYOUT, s->offset, BFI_CHUNKSUMS_DESC_SIZE,
		    "chunk-checksum count does not match the data it covers");
	lay->sums_covered = covered;
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
	rc = check_sums(map, lay, bad);
	if (rc)
		return rc;
	return check_layouts(map, lay, bad);
}

/* What bfi_check_files compares, from one fstat. */
/* Decode the (validated) block table into ready-to-query form. */
static int load_blocks(bfi_snapshot *s)
{
	if (s->lay.flat_idx < 0)
		return 0;
	const uint8_t *sec = s->map + s->lay.sec[s->lay.flat_idx].offset;
	uint32_t nb = s->lay.flat.n_blocks;
	s->blocks = calloc(nb, sizeof *s->blocks);
	if (s->blocks == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < nb; i++) {
		const uint8_t *e = sec + BFI_FLAT_DESC_SIZE + (uint64_t)i * BFI_BLOCK_ENTRY_SIZE;
		struct bfi_rblock *b = &s->blocks[i];
		b->first = (uint32_t)bfi_get64(e);
		b->n = (uint32_t)bfi_get64(e + 8);
		b->m = bfi_get64(e + 16);
		b->row_bits = bfi_get64(e + 24);
		b->row_bytes = bfi_bits_bytes(b->n);
		b->packed = !bfi_rows_lined(b->row_bits);
		if (b->packed && b->row_bytes > s->max_packed_bytes)
			s->max_packed_bytes = b->row_bytes;
		b->rows = sec + bfi_get64(e + 32);
		b->pre_m = bfi_get64(e + 40);
		b->pre = b->pre_m ? sec + bfi_get64(e + 48) : NULL;
		b->line_pre = (s->lay.flat.flags & BFI_FLATF_LINE_PRE) != 0;
		if (b->row_bytes > s->max_row_bytes)
			s->max_row_bytes = b->row_bytes;
		if (b->n > s->max_block_sets)
			s->max_block_sets = b->n;
	}
	return 0;
}

int bfi_open(const char *path, unsigned flags, bfi_snapshot **out)
{
	struct bfi_bad bad;
	return bfi__open(path, flags, out, &bad);
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
	    (flags & ~(unsigned)(BFI_OPEN_TRUSTED | BFI_OPEN_NO_CATALOG | BFI_OPEN_SMALL_PAGES)))
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

/* One attempt; on failure *held keeps the directory it opened, if any. */
static int open_once(const char *path, unsigned flags, bfi_snapshot **out, struct bfi_bad *bad,
                     int *held)
{
	*out = NULL;
	bad->what = NULL;
	bad->offset = bad->length = 0;
	bfi_snapshot *s = calloc(1, sizeof *s);
	if (s == NULL)
		return -ENOMEM;
	s->index_fd = s->dirfd = -1;
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
	rc = bfi__map_file(s->index_fd, &s->map, &s->size, !(flags & BFI_OPEN_SMALL_PAGES),
	                   &s->index_id);
	if (rc == BFI_E_NOT_REGULAR)
		bad->what = BFI_INDEX_NAME " is not a regular file";
	if (rc)
		goto fail;
	rc = bfi__check_index(s->map, s->size, &s->lay, bad);
	if (rc)
		goto fail;
	memcpy(s->head, s->map, BFI_HEADER_SIZE); /* for bfi_check_files, which must not touch the map */
	rc = load_blocks(s);
	if (rc)
		goto fail;
	if (s->lay.plain_idx >= 0)
		s->plain = s->map + s->lay.sec[s->lay.plain_idx].offset + s->lay.plain.filters_offset;
	if (s->lay.tree_idx >= 0) {
		const uint8_t *sec = s->map + s->lay.sec[s->lay.tree_idx].offset;
		struct bfi_level lv[BFI_MAX_LEVELS];
		uint64_t at;
		rc = bfi_tree_decode(sec, s->lay.sec[s->lay.tree_idx].size, &s->lay.tree, lv, &at);
		for (uint32_t l = 0; rc == 0 && l < s->lay.tree.levels; l++) {
			s->levels[l].rows = sec + lv[l].rows_offset;
			s->levels[l].nodes = lv[l].nodes;
			s->levels[l].m = lv[l].m;
			s->levels[l].row_bytes = lv[l].row_bytes;
			s->levels[l].groups = lv[l].groups_offset ? sec + lv[l].groups_offset : NULL;
		}
		s->tree_pre = rc == 0 && s->lay.tree.pre_m ? sec + s->lay.tree.pre_offset : NULL;
		if (rc)
			goto fail;
	}
	if (s->lay.rambo_idx >= 0) {
		const uint8_t *sec = s->map + s->lay.sec[s->lay.rambo_idx].offset;
		struct bfi_rep reps[BFI_MAX_REPS];
		uint64_t at;
		rc = bfi_rambo_decode(sec, s->lay.sec[s->lay.rambo_idx].size, &s->lay.rambo, reps, &at);
		for (uint32_t r = 0; rc == 0 && r < s->lay.rambo.reps; r++) {
			struct bfi_rrep *rr = &s->reps[r];
			rr->rows = sec + reps[r].rows_offset;
			rr->m = reps[r].m;
			rr->row_bytes = reps[r].row_bytes;
			rr->starts = sec + reps[r].starts_offset;
			rr->members = sec + reps[r].members_offset;
			rr->cell_of = sec + reps[r].cell_of_offset;
		}
		if (rc)
			goto fail;
	}
	if (!(flags & BFI_OPEN_NO_CATALOG)) {
		rc = bfi__catalog_open(s, (flags & BFI_OPEN_TRUSTED) != 0, bad);
		if (rc)
			goto fail;
	}
	*out = s;
	return 0;
fail:
	*held = s->dirfd;
	s->dirfd = -1;
	bfi_close(&s);
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
	bfi__catalog_close(s);
	if (s->map)
		munmap((void *)s->map, (size_t)s->size);
	free(s->blocks);
	if (s->index_fd >= 0)
		close(s->index_fd);
	if (s->dirfd >= 0)
		close(s->dirfd);
	free(s);
	*snap = NULL;
}

void bfi_info(const bfi_snapshot *s, struct bfi_info *info)
{
	memset(info, 0, sizeof *info);
	info->major = s->lay.hdr.major;
	info->minor = s->lay.hdr.minor;
	info->compat_flags = s->lay.hdr.compat;
	info->file_size = s->size;
	info->catalog_size = s->lay.hdr.catalog_size;
	memcpy(info->snapshot_id, s->lay.hdr.snapshot_id, 16);
	memcpy(info->catalog_digest, s->lay.hdr.catalog_digest, 16);
	info->n_sets = s->lay.n_sets;
	info->hashes = s->lay.k;
	info->n_sections = s->lay.n_sec;
	info->has_catalog = s->env != NULL;
	info->layouts = (s->lay.flat_idx >= 0 ? BFI_LAYOUT_FLAT : 0) |
	                (s->lay.plain_idx >= 0 ? BFI_LAYOUT_PLAIN : 0) |
	                (s->lay.rambo_idx >= 0 ? BFI_LAYOUT_RAMBO : 0) |
	                (s->lay.tree_idx >= 0 ? BFI_LAYOUT_TREE : 0);
	if (s->lay.tree_idx >= 0) {
		info->tree_levels = s->lay.tree.levels;
		info->tree_fanout = s->lay.tree.fanout;
		info->tree_prefilter_bits = s->lay.tree.pre_m;
		info->tree_explicit = (s->lay.tree.flags & BFI_TREE_EXPLICIT) != 0;
		info->tree_dropped_levels = s->lay.tree.dropped_levels;
		info->tree_dropped_nodes = s->lay.tree.dropped_nodes;
		if (!info->tree_explicit) { /* the shape rule tells what was above */
			uint64_t shape[BFI_MAX_LEVELS];
			uint32_t all = bfi_tree_shape(s->lay.tree.n_sets, s->lay.tree.fanout, shape);
			for (uint32_t l = s->lay.tree.levels; l < all; l++) {
				info->tree_dropped_levels++;
				info->tree_dropped_nodes += shape[l];
			}
		}
		for (uint32_t l = 0; l < s->lay.tree.levels; l++)
			if (s->levels[l].m > info->bits)
				info->bits = s->levels[l].m;
	}
	if (s->lay.rambo_idx >= 0) {
		info->rambo_reps = s->lay.rambo.reps;
		info->rambo_cells = s->lay.rambo.cells;
		info->rambo_shards = s->lay.rambo.shards;
		info->rambo_shared_probes = (s->lay.rambo.flags & BFI_RAMBO_SHARED_PROBES) != 0;
		for (uint32_t r = 0; r < s->lay.rambo.reps; r++)
			if (s->reps[r].m > info->bits)
				info->bits = s->reps[r].m;
	}
	if (s->lay.flat_idx >= 0) {
		info->n_blocks = s->lay.flat.n_blocks;
		info->size_ordered = (s->lay.flat.flags & BFI_FLATF_SIZE_ORDER) != 0;
		info->line_prefilters = (s->lay.flat.flags & BFI_FLATF_LINE_PRE) != 0;
		for (uint32_t i = 0; i < s->lay.flat.n_blocks; i++)
			if (s->blocks[i].m > info->bits)
				info->bits = s->blocks[i].m;
	}
	if (s->lay.plain_idx >= 0 && s->lay.plain.m > info->bits)
		info->bits = s->lay.plain.m;
}

int bfi_block(const bfi_snapshot *s, uint32_t i, struct bfi_block_info *out)
{
	if (s == NULL || out == NULL || s->lay.flat_idx < 0 || i >= s->lay.flat.n_blocks)
		return BFI_E_INVALID;
	const struct bfi_rblock *b = &s->blocks[i];
	out->first_set = b->first;
	out->n_sets = b->n;
	out->bits = b->m;
	out->row_bits = b->row_bits;
	out->prefilter_bits = b->pre_m;
	out->offset = (uint64_t)(b->rows - s->map);
	return 0;
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
	switch (kind) {
	case BFI_SEC_FLAT:
		return "flat";
	case BFI_SEC_CHUNKSUMS:
		return "chunksums";
	case BFI_SEC_PLAIN:
		return "plain";
	case BFI_SEC_RAMBO:
		return "rambo";
	case BFI_SEC_TREE:
		return "tree";
	default:
		return "unknown";
	}
}

const char *bfi_version(unsigned *format_major, unsigned *format_minor)
{
	if (format_major)
		*format_major = BFI_VERSION_MAJOR;
	if (format_minor)
		*format_minor = BFI_VERSION_MINOR;
	return BFI_VERSION_STRING;
}
