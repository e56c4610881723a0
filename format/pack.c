/*
 * pack.c - a pack's seek table (spec/format.md, "Packs"): zstd's seekable
 * format, a skippable frame that lists each frame's compressed and
 * decompressed sizes and checksum, ending the file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>
#include <xxhash.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "archive_dl.h"
#include "bfi_error.h"
#include "bfi_pack.h"
#include "format.h"

void bfi_pack_table_encode(uint8_t *out, const struct bfi_pack_table *t)
{
	uint64_t size = bfi_pack_table_size(t->n);
	bfi_put32(out, BFI_PACK_TABLE_MAGIC);
	bfi_put32(out + 4, (uint32_t)(size - 8));
	uint8_t *p = out + 8;
	for (uint32_t i = 0; i < t->n; i++, p += BFI_PACK_ENTRY) {
		bfi_put32(p, t->f[i].csize);
		bfi_put32(p + 4, t->f[i].dsize);
		bfi_put32(p + 8, t->f[i].checksum);
	}
	bfi_put32(p, t->n);
	p[4] = BFI_PACK_CHECKSUMS;
	bfi_put32(p + 5, BFI_PACK_FOOTER_MAGIC);
}

#define FAIL(code, text) return (*what = (text), (code))

int bfi_pack_table_decode(const uint8_t *tail, uint64_t tail_len, uint64_t file_size,
                          struct bfi_pack_table *t, uint64_t *need, const char **what)
{
	t->n = 0;
	t->f = NULL;
	*need = 0;
	if (file_size < BFI_PACK_FOOTER + 8 || tail_len < BFI_PACK_FOOTER)
		FAIL(BFI_E_PACK, "too short to end in a seek table");
	const uint8_t *foot = tail + tail_len - BFI_PACK_FOOTER;
	if (bfi_get32(foot + 5) != BFI_PACK_FOOTER_MAGIC)
		FAIL(BFI_E_PACK, "no seek table at its end (not a bfi pack)");
	uint32_t n = bfi_get32(foot);
	if (foot[4] != BFI_PACK_CHECKSUMS)
		FAIL(BFI_E_PACK, "the seek table's descriptor is not 0x80 (checksums, no reserved bits)");
	if (n == 0 || n > BFI_PACK_FRAMES_MAX)
		FAIL(BFI_E_PACK, "the seek table lists no frames, or more than 2^27");
	uint64_t size = bfi_pack_table_size(n);
	if (size > file_size)
		FAIL(BFI_E_PACK_TRUNCATED, "the file is shorter than its seek table");
	if (tail_len < size) {
		*need = size;
		return 0;
	}
	const uint8_t *tab = tail + tail_len - size;
	if (bfi_get32(tab) != BFI_PACK_TABLE_MAGIC || bfi_get32(tab + 4) != size - 8)
		FAIL(BFI_E_PACK, "the seek table's skippable frame header is wrong");
	t->f = malloc((size_t)n * sizeof *t->f);
	if (t->f == NULL)
		return -ENOMEM;
	uint64_t at = 0, from = 0;
	const uint8_t *p = tab + 8;
	for (uint32_t i = 0; i < n; i++, p += BFI_PACK_ENTRY) {
		struct bfi_pack_frame *f = &t->f[i];
		f->csize = bfi_get32(p);
		f->dsize = bfi_get32(p + 4);
		f->checksum = bfi_get32(p + 8);
		f->at = at;
		f->from = from;
		/* a zstd frame: 4 bytes of magic, 2 of header, 3 of a block, 4 of checksum */
		if (f->csize < 13 || f->csize > ZSTD_COMPRESSBOUND(BFI_PACK_FRAME_MAX) || f->dsize == 0 ||
		    f->dsize > BFI_PACK_FRAME_MAX) {
			free(t->f);
			t->f = NULL;
			FAIL(BFI_E_PACK, "a frame's sizes in the seek table are out of range");
		}
		at += f->csize; /* at most 2^27 * 2^32: no overflow */
		from += f->dsize;
	}
	if (at + size != file_size) {
		free(t->f);
		t->f = NULL;
		if (at + size > file_size)
			FAIL(BFI_E_PACK_TRUNCATED, "the frames the seek table lists end past the file");
		FAIL(BFI_E_PACK, "bytes between the frames the seek table lists and the table");
	}
	t->n = n;
	t->tar_size = from;
	t->table_at = at;
	return 0;
}

/* ---- reading ---- */

#define MANIFEST_MAX (256ull << 20) /* a manifest a reader reads whole (spec: "Limits") */

enum { WANT_FIRST, WANT_CATALOG, WANT_INDEX, WANT_MANIFEST_DONE, WANT_SEG_DIR, WANT_SEG_CATALOG,
       WANT_SEG_INDEX, WANT_END, AT_END };

/* A frame's compressed and decompressed bytes. */
struct fbuf {
	uint8_t *cbuf, *dbuf;
	size_t ccap, dcap;
};

struct bfi_pack_in {
	int fd;
	struct bfi_pack_table t;
	ZSTD_DCtx *dctx;
	struct fbuf b;  /* the frame libarchive reads */
	uint32_t next;  /* the next frame to hand to libarchive */
	uint64_t read;  /* compressed bytes read */
	struct archive *a;
	struct bfi_pack_error cb; /* what a callback found wrong */
	int cb_rc;
	int state, collection;
	uint32_t seg;   /* the segment whose members come next */
	struct bfi_manifest m;
	int have_m;
	uint8_t *mbuf;  /* the manifest's bytes, served to bfi_pack_in_read */
	uint64_t mlen, mpos;
	int in_manifest;
	char member[64];       /* the current member's name */
	uint64_t member_size;  /* and its bytes */
};

static int fail(struct bfi_pack_error *e, int rc, const char *what, uint64_t offset)
{
	e->what = what;
	e->offset = offset;
	return rc;
}

/* Read, check and decompress frame i of table t in fd into b->dbuf; *read counts the bytes read. */
static int load_into(int fd, const struct bfi_pack_table *t, ZSTD_DCtx *dctx, struct fbuf *b,
                     uint32_t i, uint64_t *read, struct bfi_pack_error *e)
{
	const struct bfi_pack_frame *f = &t->f[i];
	if (f->csize > b->ccap) {
		uint8_t *n = realloc(b->cbuf, f->csize);
		if (n == NULL)
			return fail(e, -ENOMEM, "out of memory for a frame", f->at);
		b->cbuf = n;
		b->ccap = f->csize;
	}
	if (f->dsize > b->dcap) {
		uint8_t *n = realloc(b->dbuf, f->dsize);
		if (n == NULL)
			return fail(e, -ENOMEM, "out of memory for a frame", f->at);
		b->dbuf = n;
		b->dcap = f->dsize;
	}
	for (uint32_t got = 0; got < f->csize;) {
		ssize_t r = pread(fd, b->cbuf + got, f->csize - got, (off_t)(f->at + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return fail(e, -errno, "cannot read the pack", f->at + got);
		if (r == 0)
			return fail(e, BFI_E_PACK_TRUNCATED, "the pack ends inside a frame", f->at + got);
		got += (uint32_t)r;
	}
	*read += f->csize;
	/* the frame header's descriptor (RFC 8878 3.1.1.1.1): bit 2 is Content_Checksum_flag */
	if (bfi_get32(b->cbuf) != BFI_ZSTD_MAGIC)
		return fail(e, BFI_E_PACK_FRAME, "not a zstd frame where the seek table puts one", f->at);
	if (!(b->cbuf[4] & 0x04))
		return fail(e, BFI_E_PACK_FRAME, "a frame without its content checksum", f->at);
	if (ZSTD_getFrameContentSize(b->cbuf, f->csize) != f->dsize)
		return fail(e, BFI_E_PACK_FRAME, "a frame's content size is not the seek table's", f->at);
	if (ZSTD_findFrameCompressedSize(b->cbuf, f->csize) != f->csize)
		return fail(e, BFI_E_PACK_FRAME, "a frame's compressed size is not the seek table's",
		            f->at);
	size_t r = ZSTD_decompressDCtx(dctx, b->dbuf, f->dsize, b->cbuf, f->csize);
	if (ZSTD_isError(r))
		return fail(e, BFI_E_PACK_FRAME,
		            ZSTD_getErrorCode(r) == ZSTD_error_checksum_wrong
		                    ? "a frame's content checksum does not match"
		                    : "a frame does not decompress",
		            f->at);
	if (r != f->dsize)
		return fail(e, BFI_E_PACK_FRAME, "a frame decompresses to other than its size", f->at);
	if ((uint32_t)XXH64(b->dbuf, f->dsize, 0) != f->checksum)
		return fail(e, BFI_E_PACK_FRAME, "a frame's checksum in the seek table does not match",
		            f->at);
	return 0;
}

/* Frame i into p->b, for libarchive's stream. */
static int load_frame(struct bfi_pack_in *p, uint32_t i, struct bfi_pack_error *e)
{
	return load_into(p->fd, &p->t, p->dctx, &p->b, i, &p->read, e);
}

static la_ssize_t on_read(struct archive *a, void *data, const void **buf)
{
	struct bfi_pack_in *p = data;
	if (p->next >= p->t.n)
		return 0;
	int rc = load_frame(p, p->next, &p->cb);
	if (rc) {
		p->cb_rc = rc;
		archive_set_error(a, EIO, "%s", p->cb.what);
		return -1;
	}
	*buf = p->b.dbuf;
	return p->t.f[p->next++].dsize;
}

/* Skip whole frames, unread; libarchive reads and drops the rest. */
static la_int64_t on_skip(struct archive *a, void *data, la_int64_t request)
{
	(void)a;
	struct bfi_pack_in *p = data;
	la_int64_t done = 0;
	while (p->next < p->t.n && (la_int64_t)p->t.f[p->next].dsize <= request - done)
		done += p->t.f[p->next++].dsize;
	return done;
}

/*
 * Does the zstd stream of fd begin as a pack's does, a ustar header in its
 * first frame? Then a pack without its seek table was cut short, not some
 * other file.
 */
static int starts_as_pack(int fd)
{
	enum { IN = 256 << 10 }; /* a block of zstd is 128 KiB at most: the first one whole */
	uint8_t *in = malloc(IN), out[512];
	ssize_t got = in ? pread(fd, in, IN, 0) : -1;
	ZSTD_DStream *ds = ZSTD_createDStream();
	if (got <= 0 || ds == NULL) {
		ZSTD_freeDStream(ds);
		free(in);
		return 0;
	}
	ZSTD_inBuffer ib = {in, (size_t)got, 0};
	ZSTD_outBuffer ob = {out, sizeof out, 0};
	while (ob.pos < ob.size && ib.pos < ib.size && !ZSTD_isError(ZSTD_decompressStream(ds, &ob, &ib)))
		;
	ZSTD_freeDStream(ds);
	free(in);
	return ob.pos == sizeof out && memcmp(out + 257, "ustar", 5) == 0;
}

/*
 * Does a seek table of n frames end the file of size bytes in fd, its
 * skippable frame's header in place, whatever its last magic says? Then
 * the file was damaged there, not cut short.
 */
static int table_there(int fd, uint64_t size, uint32_t n)
{
	uint8_t head[8];
	if (n == 0 || n > BFI_PACK_FRAMES_MAX || bfi_pack_table_size(n) > size)
		return 0;
	uint64_t tsize = bfi_pack_table_size(n);
	return pread(fd, head, 8, (off_t)(size - tsize)) == 8 &&
	       bfi_get32(head) == BFI_PACK_TABLE_MAGIC && bfi_get32(head + 4) == tsize - 8;
}

/* The seek table of the pack of size bytes in fd, checked, into *t. */
static int read_table(int fd, uint64_t size, struct bfi_pack_table *t, struct bfi_pack_error *e)
{
	uint64_t need = 4096;
	int rc = 0;
	uint8_t head[4];
	if (size < 4 || pread(fd, head, 4, 0) != 4 || bfi_get32(head) != BFI_ZSTD_MAGIC)
		return fail(e, BFI_E_PACK, "not a bfi pack: it does not start with a zstd frame", 0);
	/* the seek table: the last 4 KiB, then as much as it says it takes */
	for (int pass = 0; pass < 2; pass++) {
		uint64_t len = need < size ? need : size;
		uint8_t *tail = malloc(len);
		if (tail == NULL)
			return -ENOMEM;
		ssize_t r = pread(fd, tail, len, (off_t)(size - len));
		if (r != (ssize_t)len) {
			free(tail);
			return fail(e, r < 0 ? -errno : BFI_E_PACK_TRUNCATED, "cannot read the seek table",
			            size - len);
		}
		const char *what = NULL;
		rc = bfi_pack_table_decode(tail, len, size, t, &need, &what);
		/* no last magic: a pack cut short, if no table stands there and it begins as one */
		const uint8_t *foot = len >= BFI_PACK_FOOTER ? tail + len - BFI_PACK_FOOTER : NULL;
		int cut = rc == BFI_E_PACK && foot && bfi_get32(foot + 5) != BFI_PACK_FOOTER_MAGIC &&
		          !table_there(fd, size, bfi_get32(foot));
		free(tail);
		if (cut && starts_as_pack(fd))
			return fail(e, BFI_E_PACK_TRUNCATED, "the pack ends before its seek table: it begins "
			            "as a bfi pack does (a tar stream in zstd frames), so it was cut short",
			            size);
		if (rc)
			return fail(e, rc, what, size > len ? size - len : 0);
		if (t->n)
			return 0;
	}
	return fail(e, BFI_E_PACK, "the seek table could not be read", 0);
}

int bfi_pack_in_open(int fd, struct bfi_pack_in **out, struct bfi_pack_error *e)
{
	*out = NULL;
	memset(e, 0, sizeof *e);
	off_t end = lseek(fd, 0, SEEK_END);
	if (end < 0)
		return fail(e, -errno, "cannot seek in the pack", 0);
	const char *why = NULL;
	if (bfi_archive_load(&why))
		return fail(e, -ENOSYS, why, 0);
	struct bfi_pack_in *p = calloc(1, sizeof *p);
	if (p == NULL)
		return -ENOMEM;
	p->fd = fd;
	int rc = read_table(fd, (uint64_t)end, &p->t, e);
	if (rc)
		goto out;
	p->dctx = ZSTD_createDCtx();
	p->a = archive_read_new();
	if (p->dctx == NULL || p->a == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	/* the frames' windows are bounded by their sizes, which the table bounds */
	(void)ZSTD_DCtx_setParameter(p->dctx, ZSTD_d_windowLogMax, 26);
	if (archive_read_support_format_tar(p->a) != ARCHIVE_OK ||
	    archive_read_open2(p->a, p, NULL, on_read, on_skip, NULL) != ARCHIVE_OK) {
		rc = p->cb_rc ? p->cb_rc : BFI_E_PACK;
		if (!p->cb_rc)
			fail(e, rc, "its frames do not hold a tar stream", 0);
		else
			*e = p->cb;
		goto out;
	}
out:
	if (rc) {
		bfi_pack_in_close(&p);
		return rc;
	}
	*out = p;
	return 0;
}

const struct bfi_pack_table *bfi_pack_in_table(const struct bfi_pack_in *p)
{
	return &p->t;
}

int bfi_pack_in_is_collection(const struct bfi_pack_in *p)
{
	return p->collection;
}

const struct bfi_manifest *bfi_pack_in_manifest(const struct bfi_pack_in *p)
{
	return p->have_m ? &p->m : NULL;
}

uint64_t bfi_pack_in_progress(const struct bfi_pack_in *p)
{
	return p->read;
}

/* A libarchive failure: the callback's own finding, or libarchive's word on the tar stream. */
static int tar_fail(struct bfi_pack_in *p, struct bfi_pack_error *e, const char *what)
{
	if (p->cb_rc) {
		*e = p->cb;
		return p->cb_rc;
	}
	return fail(e, BFI_E_PACK, what, p->next < p->t.n ? p->t.f[p->next].at : p->t.table_at);
}

/* After the tar stream's end: what is left of it must be zeros (tar's padding). */
static int check_rest(struct bfi_pack_in *p, struct bfi_pack_error *e)
{
	while (p->next < p->t.n) {
		int rc = load_frame(p, p->next, e);
		if (rc)
			return rc;
		const struct bfi_pack_frame *f = &p->t.f[p->next++];
		for (uint32_t i = 0; i < f->dsize; i++)
			if (p->b.dbuf[i])
				return fail(e, BFI_E_PACK, "bytes after the tar stream's end", f->at);
	}
	return 0;
}

/* Read the whole manifest member, decode it, keep it for bfi_pack_in_read. */
static int take_manifest(struct bfi_pack_in *p, uint64_t size, struct bfi_pack_error *e)
{
	if (size > MANIFEST_MAX)
		return fail(e, BFI_E_PACK, "the MANIFEST member is larger than a manifest can be", 0);
	p->mbuf = malloc(size ? size : 1);
	if (p->mbuf == NULL)
		return -ENOMEM;
	for (uint64_t got = 0; got < size;) {
		la_ssize_t r = archive_read_data(p->a, p->mbuf + got, size - got);
		if (r <= 0)
			return tar_fail(p, e, "the MANIFEST member ends early");
		got += (uint64_t)r;
	}
	p->mlen = size;
	p->mpos = 0;
	const char *what = NULL;
	int rc = bfi_manifest_decode(p->mbuf, size, &p->m, &what);
	if (rc)
		return fail(e, rc, what ? what : "the MANIFEST member is not a manifest", 0);
	p->have_m = 1;
	return 0;
}

int bfi_pack_in_next(struct bfi_pack_in *p, struct bfi_pack_member *m, struct bfi_pack_error *e)
{
	memset(m, 0, sizeof *m);
	memset(e, 0, sizeof *e);
	p->in_manifest = 0;
	if (p->state == AT_END)
		return 1;
	struct archive_entry *ent;
	int r = archive_read_next_header(p->a, &ent);
	if (r == ARCHIVE_EOF) {
		if (p->state != WANT_END)
			return tar_fail(p, e, p->state == WANT_FIRST ? "the pack holds no members"
			                                             : "the pack ends before every member "
			                                               "a pack must hold");
		int rc = check_rest(p, e);
		if (rc)
			return rc;
		p->state = AT_END;
		return 1;
	}
	if (r != ARCHIVE_OK)
		return tar_fail(p, e, "the tar stream is damaged");
	const char *name = archive_entry_pathname(ent);
	if (name == NULL || strlen(name) >= sizeof m->name)
		return tar_fail(p, e, "a member's name is not one a pack holds");
	snprintf(m->name, sizeof m->name, "%s", name);
	snprintf(e->member, sizeof e->member, "%s", name);
	mode_t type = archive_entry_filetype(ent);
	int64_t size = archive_entry_size(ent);
	if (archive_entry_hardlink(ent) || archive_entry_symlink(ent) ||
	    (type != AE_IFREG && type != AE_IFDIR) || size < 0 || (type == AE_IFDIR && size != 0))
		return tar_fail(p, e, "a member is not a regular file or a directory");
	m->size = (uint64_t)size;
	/* a ustar member's data follows its 512-byte header, and a pax header's if it has one */
	m->data_at = (uint64_t)archive_read_header_position(p->a) + 512;
	p->member_size = m->size;
	snprintf(p->member, sizeof p->member, "%s", name);
	const char *seg = p->have_m && p->seg < p->m.n_segments ? p->m.segs[p->seg].name : "";
	char want[64];
	switch (p->state) {
	case WANT_FIRST:
		if (type == AE_IFREG && strcmp(name, BFI_CATALOG_NAME) == 0) {
			m->file = BFI_CATALOG_NAME;
			p->state = WANT_INDEX;
			return 0;
		}
		if (type == AE_IFREG && strcmp(name, BFI_MANIFEST_NAME) == 0) {
			m->file = BFI_MANIFEST_NAME;
			p->collection = 1;
			int rc = take_manifest(p, m->size, e);
			if (rc)
				return rc;
			p->in_manifest = 1;
			p->state = p->m.n_segments ? WANT_SEG_DIR : WANT_END;
			return 0;
		}
		return tar_fail(p, e, "the first member is neither catalog.mdb (a snapshot) nor "
		                      "MANIFEST (a collection)");
	case WANT_INDEX:
		if (type != AE_IFREG || strcmp(name, BFI_INDEX_NAME) != 0)
			return tar_fail(p, e, "catalog.mdb is not followed by index.bfi");
		m->file = BFI_INDEX_NAME;
		p->state = WANT_END;
		return 0;
	case WANT_SEG_DIR:
		snprintf(want, sizeof want, "%s/", seg);
		if (type != AE_IFDIR || (strcmp(name, want) != 0 && strcmp(name, seg) != 0))
			return tar_fail(p, e, "a member is not the directory of the next segment the "
			                      "manifest lists");
		snprintf(m->segment, sizeof m->segment, "%s", seg);
		p->state = WANT_SEG_CATALOG;
		return 0;
	case WANT_SEG_CATALOG:
	case WANT_SEG_INDEX: {
		const char *file = p->state == WANT_SEG_CATALOG ? BFI_CATALOG_NAME : BFI_INDEX_NAME;
		snprintf(want, sizeof want, "%s/%s", seg, file);
		if (type != AE_IFREG || strcmp(name, want) != 0)
			return tar_fail(p, e, p->state == WANT_SEG_CATALOG
			                              ? "a segment's directory is not followed by its "
			                                "catalog.mdb"
			                              : "a segment's catalog.mdb is not followed by its "
			                                "index.bfi");
		snprintf(m->segment, sizeof m->segment, "%s", seg);
		m->file = file;
		if (p->state == WANT_SEG_CATALOG)
			p->state = WANT_SEG_INDEX;
		else
			p->state = ++p->seg < p->m.n_segments ? WANT_SEG_DIR : WANT_END;
		return 0;
	}
	default:
		return tar_fail(p, e, "a member after every member a pack holds");
	}
}

int64_t bfi_pack_in_read(struct bfi_pack_in *p, void *buf, size_t len, struct bfi_pack_error *e)
{
	if (p->in_manifest) {
		uint64_t n = p->mlen - p->mpos < len ? p->mlen - p->mpos : len;
		memcpy(buf, p->mbuf + p->mpos, (size_t)n);
		p->mpos += n;
		return (int64_t)n;
	}
	la_ssize_t r = archive_read_data(p->a, buf, len);
	if (r < 0)
		return tar_fail(p, e, "a member's data ends early");
	return r;
}

int bfi_pack_in_copy(struct bfi_pack_in *p, int fd, uint8_t *buf, size_t cap,
                     void (*progress)(void *ctx, uint64_t read), void *ctx,
                     struct bfi_pack_error *e)
{
	memset(e, 0, sizeof *e);
	snprintf(e->member, sizeof e->member, "%s", p->member);
	uint64_t done = 0;
	for (;;) {
		int64_t r = bfi_pack_in_read(p, buf, cap, e);
		if (r < 0)
			return (int)r;
		if (r == 0)
			break;
		for (int64_t w = 0; w < r;) {
			ssize_t n = write(fd, buf + w, (size_t)(r - w));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				return fail(e, n < 0 ? -errno : -EIO, "cannot write the member out", 0);
			w += n;
		}
		done += (uint64_t)r;
		if (progress)
			progress(ctx, p->read);
	}
	/* libarchive ends a member at its header's size; a pack's reader checks it all the same */
	if (done != p->member_size)
		return fail(e, BFI_E_PACK, "a member holds other than its header's size", 0);
	return 0;
}

void bfi_pack_in_close(struct bfi_pack_in **pp)
{
	struct bfi_pack_in *p = *pp;
	if (p == NULL)
		return;
	if (p->a)
		archive_read_free(p->a);
	ZSTD_freeDCtx(p->dctx);
	free(p->b.cbuf);
	free(p->b.dbuf);
	free(p->t.f);
	free(p->mbuf);
	if (p->have_m)
		bfi_manifest_free(&p->m);
	free(p);
	*pp = NULL;
}

/*
 * The frames last decompressed, kept: a scan comes back to a frame when a
 * pass turns from a block's pre-filter to its rows, from one range to
 * the next, or to a layout's tables, and would decompress it again. Four
 * of frames up to 1 MiB (the default is 64 KiB), else one.
 */
#define FRAME_SLOTS 4
struct bfi_pack_frames {
	int fd;
	struct bfi_pack_table t;
	ZSTD_DCtx *dctx;
	struct fbuf b[FRAME_SLOTS];
	int64_t cached[FRAME_SLOTS]; /* the frame in b[s].dbuf, or -1 */
	uint64_t used[FRAME_SLOTS];  /* when each was last read from, for the least recent */
	uint64_t clock;
	unsigned slots;
	uint64_t read; /* compressed bytes read (load_into counts them) */
};

int bfi_pack_frames_open(int fd, struct bfi_pack_frames **out, struct bfi_pack_error *e)
{
	*out = NULL;
	memset(e, 0, sizeof *e);
	off_t end = lseek(fd, 0, SEEK_END);
	struct bfi_pack_frames *f = end < 0 ? NULL : calloc(1, sizeof *f);
	if (f == NULL) { /* the fd is closed on failure too */
		int rc = end < 0 ? fail(e, -errno, "cannot seek in the pack", 0) : -ENOMEM;
		close(fd);
		return rc;
	}
	f->fd = fd;
	for (unsigned i = 0; i < FRAME_SLOTS; i++)
		f->cached[i] = -1;
	int rc = read_table(fd, (uint64_t)end, &f->t, e);
	uint32_t widest = 0;
	for (uint32_t i = 0; rc == 0 && i < f->t.n; i++)
		widest = f->t.f[i].dsize > widest ? f->t.f[i].dsize : widest;
	f->slots = widest <= (1u << 20) ? FRAME_SLOTS : 1;
	if (rc == 0 && (f->dctx = ZSTD_createDCtx()) == NULL)
		rc = -ENOMEM;
	if (rc) {
		bfi_pack_frames_close(&f);
		return rc;
	}
	(void)ZSTD_DCtx_setParameter(f->dctx, ZSTD_d_windowLogMax, 26);
	*out = f;
	return 0;
}

int bfi_pack_frames_read(struct bfi_pack_frames *f, void *buf, uint64_t len, uint64_t at,
                         struct bfi_pack_error *e)
{
	memset(e, 0, sizeof *e);
	if (at > f->t.tar_size || len > f->t.tar_size - at)
		return fail(e, BFI_E_PACK, "a read past the end of the pack's tar stream", 0);
	uint8_t *out = buf;
	while (len) {
		/* the last frame starting at or before at */
		uint32_t lo = 0, hi = f->t.n;
		while (hi - lo > 1) {
			uint32_t mid = lo + (hi - lo) / 2;
			if (f->t.f[mid].from <= at)
				lo = mid;
			else
				hi = mid;
		}
		unsigned slot = 0;
		while (slot < f->slots && f->cached[slot] != (int64_t)lo)
			slot++;
		if (slot == f->slots) { /* not kept: into the least recently read slot */
			slot = 0;
			for (unsigned x = 1; x < f->slots; x++)
				slot = f->used[x] < f->used[slot] ? x : slot;
			f->cached[slot] = -1;
			int rc = load_into(f->fd, &f->t, f->dctx, &f->b[slot], lo, &f->read, e);
			if (rc)
				return rc;
			f->cached[slot] = lo;
		}
		f->used[slot] = ++f->clock;
		const struct bfi_pack_frame *fr = &f->t.f[lo];
		uint64_t in = at - fr->from, n = fr->dsize - in < len ? fr->dsize - in : len;
		if (fr->dsize <= in) /* an empty frame: the table's sums rule it out, but never loop */
			return fail(e, BFI_E_PACK, "the seek table leaves a gap in the tar stream", fr->at);
		memcpy(out, f->b[slot].dbuf + in, (size_t)n);
		out += n;
		at += n;
		len -= n;
	}
	return 0;
}

uint64_t bfi_pack_frames_bytes(const struct bfi_pack_frames *f)
{
	return f->read;
}

void bfi_pack_frames_close(struct bfi_pack_frames **pf)
{
	struct bfi_pack_frames *f = *pf;
	if (f == NULL)
		return;
	if (f->fd >= 0)
		close(f->fd);
	ZSTD_freeDCtx(f->dctx);
	for (unsigned i = 0; i < FRAME_SLOTS; i++) {
		free(f->b[i].cbuf);
		free(f->b[i].dbuf);
	}
	free(f->t.f);
	free(f);
	*pf = NULL;
}
