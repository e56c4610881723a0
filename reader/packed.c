/*
 * packed.c - a pack (spec/format.md, "Packs") opened as the snapshot or
 * collection it holds, without unpacking it to disk: its frames read and
 * checked in turn, each snapshot's catalog and index copied into memory
 * (memfd: anonymous pages, which the kernel may swap, never files), and
 * opened from those descriptors as from a directory's files. The index
 * is then as fast to query as a mapped one, at the cost of memory for all
 * of it.
 *
 * With BFI_OPEN_SCAN, for a packed index larger than memory, only what
 * opening reads (header, section table, trailer, each section's
 * descriptor and tables; bfi_section_head) is copied into a sparse memfd
 * as large as the index; bfi_scan then reads the rest through
 * bfi__lazy_read, the frames its queries need decompressed and checked
 * as it goes, and nothing else may read the rows (BFI_E_SCAN_ONLY).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bfi_manifest.h"
#include "bfi_pack.h"
#include "internal.h"

#define COPY_BUF (1u << 20)

static int pack_bad(struct bfi_bad *bad, int rc, const struct bfi_pack_error *e)
{
	bad->what = e->what ? e->what : "the pack cannot be read";
	bad->offset = e->offset;
	bad->length = 0;
	return rc;
}

/* Copy index bytes [off, off + len) (clipped to size) from the pack into memfd fd. */
static int fill(struct bfi_lazy *lz, int fd, uint64_t size, uint64_t off, uint64_t len,
                uint8_t *buf, struct bfi_bad *bad)
{
	if (off >= size)
		return 0;
	if (len > size - off)
		len = size - off;
	while (len) {
		uint64_t n = len < COPY_BUF ? len : COPY_BUF;
		int rc = bfi__lazy_read(lz, buf, off, n);
		if (rc)
			return bfi__bad(bad, rc, 0, 0, "a frame of the packed index cannot be read");
		for (uint64_t w = 0; w < n;) {
			ssize_t r = pwrite(fd, buf + w, (size_t)(n - w), (off_t)(off + w));
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				return bfi__bad(bad, r < 0 ? -errno : -EIO, 0, 0, "cannot write to memory (memfd)");
			w += (uint64_t)r;
		}
		off += n;
		len -= n;
	}
	return 0;
}

/*
 * The current member m, the index, left in the pack: a sparse memfd of its
 * size in *fd holding what opening reads, and in *out what reads the rest.
 * Its first bytes are read both through the tar stream and at the offset
 * its header gives, which must agree.
 */
static int lazy_index(struct bfi_pack_in *p, const struct bfi_pack_member *m, const char *path,
                      uint8_t *buf, int *fd, struct bfi_lazy **out, struct bfi_bad *bad)
{
	struct bfi_pack_error e;
	struct bfi_lazy *lz = calloc(1, sizeof *lz);
	if (lz == NULL)
		return -ENOMEM;
	*out = lz;
	lz->data_at = m->data_at;
	int pfd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (pfd < 0)
		return bfi__bad(bad, -errno, 0, 0, "cannot open the pack");
	int rc = bfi_pack_frames_open(pfd, &lz->f, &e);
	if (rc)
		return pack_bad(bad, rc, &e);
	*fd = memfd_create(m->file, MFD_CLOEXEC);
	if (*fd < 0)
		return bfi__bad(bad, -errno, 0, 0, "memfd_create");
	if (ftruncate(*fd, (off_t)m->size) != 0)
		return bfi__bad(bad, -errno, 0, 0, "cannot size the memfd");
	uint64_t head = m->size < BFI_SECTION_ALIGN ? m->size : BFI_SECTION_ALIGN;
	for (uint64_t got = 0; got < head;) {
		int64_t r = bfi_pack_in_read(p, buf + COPY_BUF + got, (size_t)(head - got), &e);
		if (r <= 0)
			return r < 0 ? pack_bad(bad, (int)r, &e)
			             : bfi__bad(bad, BFI_E_PACK, 0, 0, "the index member ends early");
		got += (uint64_t)r;
	}
	/*
	 * The data follows the member's ustar header, and a pax extended
	 * header before it for a member of 8 GiB or more: the first 512-byte
	 * block after the header's position holding the same bytes as the
	 * stream gave (a tar header never starts with the index's magic).
	 */
	for (int j = 0;; j++, lz->data_at += 512) {
		if (j == 16)
			return bfi__bad(bad, BFI_E_PACK, 0, 0,
			                "the index's data is not where its tar header says it is");
		rc = bfi_pack_frames_read(lz->f, buf, head, lz->data_at, &e);
		if (rc && rc != BFI_E_PACK) /* a damaged frame; BFI_E_PACK: past the stream's end */
			return pack_bad(bad, rc, &e);
		if (rc == 0 && memcmp(buf, buf + COPY_BUF, (size_t)head) == 0)
			break;
	}
	rc = fill(lz, *fd, m->size, 0, head, buf, bad);
	if (rc)
		return rc;
	if (m->size >= BFI_TRAILER_SIZE)
		rc = fill(lz, *fd, m->size, m->size - BFI_TRAILER_SIZE, BFI_TRAILER_SIZE, buf, bad);
	/* each section's descriptor, then as much of its start as opening it reads */
	struct bfi_header h;
	const uint8_t *table = buf + COPY_BUF; /* the first 4 KiB, which fill leaves alone */
	if (rc || head < BFI_SECTION_ALIGN || bfi_header_decode(table, &h) != 0)
		return rc; /* opening tells what is wrong with the header */
	for (uint32_t i = 0; i < h.section_count && i < BFI_MAX_SECTIONS && rc == 0; i++) {
		struct bfi_section sec;
		if (bfi_section_decode(table + BFI_HEADER_SIZE + (size_t)i * BFI_ENTRY_SIZE, &sec) != 0 ||
		    !bfi_range_ok(sec.offset, sec.stored_size, m->size))
			continue;
		uint8_t desc[64] = {0};
		uint64_t n = sec.stored_size < 64 ? sec.stored_size : 64;
		rc = fill(lz, *fd, m->size, sec.offset, n, buf, bad);
		if (rc == 0 && (rc = bfi__lazy_read(lz, desc, sec.offset, n)) != 0)
			rc = bfi__bad(bad, rc, 0, 0, "a frame of the packed index cannot be read");
		if (rc == 0)
			rc = fill(lz, *fd, m->size, sec.offset, bfi_section_head(sec.kind, desc, sec.stored_size),
			          buf, bad);
	}
	return rc;
}

int bfi__is_pack(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The current member m, copied into a new memfd: its descriptor in *fd. */
static int to_memory(struct bfi_pack_in *p, const struct bfi_pack_member *m, uint8_t *buf, int *fd,
                     struct bfi_bad *bad)
{
	*fd = memfd_create(m->file, MFD_CLOEXEC);
	if (*fd < 0)
		return bfi__bad(bad, -errno, 0, 0, "memfd_create");
	struct bfi_pack_error e;
	int rc = bfi_pack_in_copy(p, *fd, buf, COPY_BUF, NULL, NULL, &e);
	return rc ? pack_bad(bad, rc, &e) : 0;
}

/* The next member, which must be there. */
static int next(struct bfi_pack_in *p, struct bfi_pack_member *m, struct bfi_bad *bad)
{
	struct bfi_pack_error e;
	int rc = bfi_pack_in_next(p, m, &e);
	if (rc == 1)
		return bfi__bad(bad, BFI_E_PACK, 0, 0, "the pack ends early");
	return rc ? pack_bad(bad, rc, &e) : 0;
}

/*
 * The snapshot whose catalog.mdb is the current member m: both files read
 * (with BFI_OPEN_SCAN, the index's head only), then opened.
 */
static int open_one(struct bfi_pack_in *p, struct bfi_pack_member *m, const char *path,
                    unsigned flags, uint8_t *buf, bfi_snapshot **out, struct bfi_bad *bad)
{
	int cat = -1, idx = -1;
	struct bfi_lazy *lz = NULL;
	int rc = to_memory(p, m, buf, &cat, bad);
	if (rc == 0)
		rc = next(p, m, bad);
	if (rc == 0)
		rc = flags & BFI_OPEN_SCAN ? lazy_index(p, m, path, buf, &idx, &lz, bad)
		                           : to_memory(p, m, buf, &idx, bad);
	if (rc) {
		if (cat >= 0)
			close(cat);
		if (idx >= 0)
			close(idx);
		bfi__lazy_free(&lz);
		return rc;
	}
	rc = bfi__open_fds(idx, cat, flags & ~(unsigned)BFI_OPEN_WARM, out, bad);
	if (rc == 0)
		(*out)->lazy = lz;
	else
		bfi__lazy_free(&lz);
	return rc;
}

int bfi__open_pack(const char *path, unsigned flags, struct bfi_packed *pk, struct bfi_bad *bad,
                   int (*each)(void *ctx, const char *segment, bfi_snapshot *s), void *ctx)
{
	memset(pk, 0, sizeof *pk);
	bfi_snapshot **out = &pk->snap;
	bad->what = NULL;
	bad->offset = bad->length = 0;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return bfi__bad(bad, -errno, 0, 0, "cannot open the pack");
	struct bfi_pack_in *p = NULL;
	struct bfi_pack_error e;
	int rc = bfi_pack_in_open(fd, &p, &e);
	uint8_t *buf = rc == 0 ? malloc(COPY_BUF + BFI_SECTION_ALIGN) : NULL;
	struct bfi_pack_member m;
	struct bfi_manifest man;
	bfi_snapshot **segs = NULL;
	uint32_t n_segs = 0;
	if (rc) {
		pack_bad(bad, rc, &e);
		goto out;
	}
	if (buf == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	rc = next(p, &m, bad);
	if (rc)
		goto out;
	if (!bfi_pack_in_is_collection(p)) {
		rc = open_one(p, &m, path, flags, buf, out, bad);
		if (rc == 0 && each)
			rc = each(ctx, "", *out);
	} else {
		const struct bfi_manifest *pm = bfi_pack_in_manifest(p);
		segs = calloc(pm->n_segments ? pm->n_segments : 1, sizeof *segs);
		if (segs == NULL) {
			rc = -ENOMEM;
			goto out;
		}
		for (; n_segs < pm->n_segments; n_segs++) {
			if ((rc = next(p, &m, bad)) != 0 || (rc = next(p, &m, bad)) != 0 ||
			    (rc = open_one(p, &m, path, flags, buf, &segs[n_segs], bad)) != 0)
				goto out;
			if (each && (rc = each(ctx, pm->segs[n_segs].name, segs[n_segs])) != 0) {
				n_segs++;
				goto out;
			}
		}
	}
	if (rc)
		goto out;
	rc = bfi_pack_in_next(p, &m, &e); /* the end: nothing after, the tail zero */
	if (rc != 1) {
		rc = rc ? pack_bad(bad, rc, &e) : bfi__bad(bad, BFI_E_PACK, 0, 0, "a member too many");
		goto out;
	}
	rc = 0;
	if (segs) {
		/* the manifest is copied: the pack reader owns its own */
		const struct bfi_manifest *pm = bfi_pack_in_manifest(p);
		man = *pm;
		man.segs = malloc((pm->n_segments ? pm->n_segments : 1) * sizeof *man.segs);
		man.removed = malloc((pm->n_removed ? pm->n_removed : 1) * sizeof *man.removed);
		if (man.segs == NULL || man.removed == NULL) {
			free(man.segs);
			free(man.removed);
			rc = -ENOMEM;
			goto out;
		}
		memcpy(man.segs, pm->segs, pm->n_segments * sizeof *man.segs);
		memcpy(man.removed, pm->removed, pm->n_removed * sizeof *man.removed);
		pk->m = man; /* the caller makes the collection of them (bfi__collection_of) */
		pk->segs = segs;
		pk->collection = 1;
		segs = NULL;
		n_segs = 0;
	}
out:
	for (uint32_t i = 0; i < n_segs; i++)
		bfi_close(&segs[i]);
	free(segs);
	if (rc)
		bfi_close(out);
	free(buf);
	bfi_pack_in_close(&p);
	close(fd);
	return rc;
}
