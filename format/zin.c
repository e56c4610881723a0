/*
 * zin.c - read an input file that may be compressed.
 *
 * A file that starts with the magic of gzip (1f 8b), xz (fd 37 7a 58 5a
 * 00), bzip2 ("BZh" and a digit) or zstd (28 b5 2f fd, or a skippable
 * frame's) is decompressed, stream after stream as gzip(1), xz(1),
 * bzip2(1) and zstd(1) do, through zlib, liblzma, libbz2 and libzstd;
 * anything else is read as it is.
 * Unlike the libraries' file readers, which stop quietly at bytes after
 * the last stream, this refuses them, as gzip -t does: trailing bytes mean
 * a damaged or mis-concatenated file, and indexing part of it would drop
 * keys without a word. A stream that ends early is refused too.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bzlib.h>
#include <lzma.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "bfi_error.h"
#include "zin.h"

#define ZIN_BUF (1u << 17)

static const char ZSTD_AFTER[] = "bytes after the end of the zstd data";

int zin_open(struct zin *r, const char *path, char *err, size_t errlen)
{
	memset(r, 0, sizeof *r);
	r->label = strcmp(path, "-") ? path : "(stdin)";
	r->fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : dup(STDIN_FILENO);
	if (r->fd < 0) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", r->label, strerror(e));
		return -e;
	}
	struct stat st;
	if (fstat(r->fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s: %s", r->label, strerror(EISDIR));
		close(r->fd);
		r->fd = -1;
		return -EISDIR;
	}
	r->in = malloc(ZIN_BUF);
	if (r->in == NULL) {
		close(r->fd);
		r->fd = -1;
		snprintf(err, errlen, "%s: %s", r->label, strerror(ENOMEM));
		return -ENOMEM;
	}
	r->state = ZIN_START;
	return 0;
}

void zin_threads(struct zin *r, unsigned threads, uint64_t memory)
{
	r->threads = threads;
	r->mt_memory = memory;
}

/* More input after the unread part: 1 if some came, 0 at the end, -errno. */
static int fill(struct zin *r)
{
	r->offset += r->pos;
	if (r->pos && r->pos < r->have)
		memmove(r->in, r->in + r->pos, r->have - r->pos);
	r->have -= r->pos;
	r->pos = 0;
	for (;;) {
		ssize_t got = read(r->fd, r->in + r->have, ZIN_BUF - r->have);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -errno;
		r->have += (size_t)got;
		return got > 0;
	}
}

/* At least want unread bytes, unless the file ends first: 0, or -errno with err set. */
static int need(struct zin *r, size_t want, char *err, size_t errlen)
{
	int rc = 0;
	while (r->have - r->pos < want && (rc = fill(r)) > 0)
		;
	if (rc < 0)
		snprintf(err, errlen, "%s: %s", r->label, strerror(-rc));
	return rc < 0 ? rc : 0;
}

static int bad(struct zin *r, char *err, size_t errlen, const char *what)
{
	snprintf(err, errlen, "%s: %s (at byte %llu of the file)", r->label, what,
	         (unsigned long long)(r->offset + r->pos));
	r->state = ZIN_FAILED;
	return BFI_E_INPUT;
}

/* The compression a file's first bytes name, or 0 (plain). */
int zin_codec_of(const unsigned char *p, size_t n)
{
	if (n >= 2 && p[0] == 0x1f && p[1] == 0x8b)
		return ZIN_GZIP;
	if (n >= 6 && !memcmp(p, "\xfd" "7zXZ\0", 6))
		return ZIN_XZ;
	if (n >= 4 && !memcmp(p, "BZh", 3) && p[3] >= '1' && p[3] <= '9')
		return ZIN_BZIP2;
	if (n >= 4 && !memcmp(p, "\x28\xb5\x2f\xfd", 4))
		return ZIN_ZSTD;
	/* a skippable frame (pzstd's files begin with one) */
	if (n >= 4 && (p[0] & 0xf0) == 0x50 && !memcmp(p + 1, "\x2a\x4d\x18", 3))
		return ZIN_ZSTD;
	return 0;
}

size_t zin_suffix(const char *name, size_t len)
{
	static const char *const sfx[] = {".gz", ".xz", ".bz2", ".zst"};
	for (size_t i = 0; i < sizeof sfx / sizeof *sfx; i++) {
		size_t n = strlen(sfx[i]);
		if (len > n && !strncasecmp(name + len - n, sfx[i], n))
			return n;
	}
	return 0;
}

/* The decoder of r's codec (xz, bzip2, zstd): 0, or -ENOMEM / -EINVAL. */
static int start(struct zin *r)
{
	if (r->codec == ZIN_XZ) {
		lzma_stream *x = calloc(1, sizeof *x);
		if (x == NULL)
			return -ENOMEM;
		*x = (lzma_stream)LZMA_STREAM_INIT;
		r->dec = x;
		/* every stream of the file in turn, as xz -d does; no memory limit but the input's */
		if (r->threads > 1) {
			lzma_mt mt = {.flags = LZMA_CONCATENATED,
			              .threads = r->threads,
			              .memlimit_threading = r->mt_memory,
			              .memlimit_stop = UINT64_MAX};
			return lzma_stream_decoder_mt(x, &mt) == LZMA_OK ? 0 : -EINVAL;
		}
		return lzma_stream_decoder(x, UINT64_MAX, LZMA_CONCATENATED) == LZMA_OK ? 0 : -EINVAL;
	}
	if (r->codec == ZIN_BZIP2) {
		bz_stream *b = calloc(1, sizeof *b);
		if (b == NULL)
			return -ENOMEM;
		r->dec = b;
		return BZ2_bzDecompressInit(b, 0, 0) == BZ_OK ? 0 : -EINVAL;
	}
	ZSTD_DStream *z = ZSTD_createDStream();
	if (z == NULL)
		return -ENOMEM;
	r->dec = z;
	return ZSTD_isError(ZSTD_initDStream(z)) ? -EINVAL : 0;
}

static void stop(struct zin *r)
{
	if (r->dec == NULL)
		return;
	if (r->codec == ZIN_ZSTD) {
		ZSTD_freeDStream(r->dec);
	} else { /* xz's and bzip2's streams are ours: the library's state, then the struct */
		if (r->codec == ZIN_XZ)
			lzma_end(r->dec);
		else
			BZ2_bzDecompressEnd(r->dec);
		free(r->dec);
	}
	r->dec = NULL;
}

/*
 * One step of r's xz, bzip2 or zstd decoder: input from r->in at r->pos
 * (none, at the file's end: eof), output into buf. Bytes made into *made;
 * 1 if the data ended there (xz: the last stream; bzip2: a stream), 0 to
 * go on, or -1 with *why on damage.
 */
static int step(struct zin *r, int eof, void *buf, size_t n, size_t *made, const char **why)
{
	size_t avail = r->have - r->pos;
	*made = 0;
	if (r->codec == ZIN_XZ) {
		lzma_stream *x = r->dec;
		x->next_in = r->in + r->pos;
		x->avail_in = avail;
		x->next_out = buf;
		x->avail_out = n;
		lzma_ret e = lzma_code(x, eof ? LZMA_FINISH : LZMA_RUN);
		r->pos += avail - x->avail_in;
		*made = n - x->avail_out;
		if (e == LZMA_STREAM_END)
			return 1;
		if (e == LZMA_OK || (e == LZMA_BUF_ERROR && !eof))
			return 0;
		/* streams run on into one another (xz -d's way): bytes after the last start another */
		*why = e == LZMA_BUF_ERROR    ? "the xz data ends early (a truncated file, or bytes after "
		                                "the end of the xz data)"
		       : e == LZMA_FORMAT_ERROR ? "bytes after the end of the xz data, or not xz"
		       : e == LZMA_MEM_ERROR    ? "out of memory"
		                               : "corrupt xz data";
		return -1;
	}
	if (r->codec == ZIN_BZIP2) {
		bz_stream *b = r->dec;
		unsigned in_max = avail > (1u << 30) ? 1u << 30 : (unsigned)avail;
		unsigned out_max = n > (1u << 30) ? 1u << 30 : (unsigned)n;
		b->next_in = (char *)(r->in + r->pos);
		b->avail_in = in_max;
		b->next_out = buf;
		b->avail_out = out_max;
		int e = BZ2_bzDecompress(b);
		r->pos += in_max - b->avail_in;
		*made = out_max - b->avail_out;
		if (e == BZ_STREAM_END)
			return 1;
		if (e == BZ_OK) {
			if (eof && *made == 0) {
				*why = "the bzip2 data ends early (truncated file)";
				return -1;
			}
			return 0;
		}
		*why = e == BZ_MEM_ERROR ? "out of memory" : "corrupt bzip2 data";
		return -1;
	}
	if (!r->frame_open) /* between frames: the next begins here */
		r->frame_at = r->offset + r->pos;
	ZSTD_inBuffer in = {r->in + r->pos, avail, 0};
	ZSTD_outBuffer out = {buf, n, 0};
	size_t hint = ZSTD_decompressStream(r->dec, &out, &in);
	r->pos += in.pos;
	*made = out.pos;
	if (ZSTD_isError(hint)) {
		*why = ZSTD_getErrorCode(hint) == ZSTD_error_prefix_unknown ? ZSTD_AFTER
		                                                            : ZSTD_getErrorName(hint);
		return -1;
	}
	/* a call that took and made nothing says nothing of the frame (between frames it asks for a header) */
	if (in.pos || out.pos)
		r->frame_open = hint != 0;
	if (eof && out.pos == 0 && in.pos == 0 && r->frame_open) {
		*why = "the zstd data ends early (truncated file)";
		return -1;
	}
	return eof && !r->frame_open && out.pos == 0 ? 1 : 0;
}

/* zin_read for xz, bzip2 and zstd. */
static ssize_t other_read(struct zin *r, void *buf, size_t n, char *err, size_t errlen)
{
	while (r->state == ZIN_MEMBER || r->state == ZIN_BETWEEN) {
		int rc;
		if (r->state == ZIN_BETWEEN) { /* bzip2, after a stream: another, or the end */
			if ((rc = need(r, 4, err, errlen)) != 0)
				return rc;
			if (r->have == r->pos) {
				r->state = ZIN_END;
				break;
			}
			if (zin_codec_of(r->in + r->pos, r->have - r->pos) != ZIN_BZIP2)
				return bad(r, err, errlen, "bytes after the end of the bzip2 data");
			stop(r);
			if ((rc = start(r)) != 0)
				return bad(r, err, errlen, "cannot restart bzip2 decompression");
			r->state = ZIN_MEMBER;
		}
		if ((rc = need(r, 1, err, errlen)) != 0)
			return rc;
		size_t made;
		const char *why = NULL;
		int end = step(r, r->pos == r->have, buf, n, &made, &why);
		if (end < 0 && r->codec == ZIN_ZSTD && why != ZSTD_AFTER) {
			/* where zstd stops in a damaged frame depends on how its input came: say the frame */
			snprintf(err, errlen, "%s: %s (in the zstd frame at byte %llu of the file)", r->label,
			         why ? why : "corrupt data", (unsigned long long)r->frame_at);
			r->state = ZIN_FAILED;
			return BFI_E_INPUT;
		}
		if (end < 0) {
			char what[160];
			snprintf(what, sizeof what, "%s", why ? why : "corrupt data");
			return bad(r, err, errlen, what);
		}
		if (end > 0)
			r->state = r->codec == ZIN_BZIP2 ? ZIN_BETWEEN : ZIN_END;
		if (made)
			return (ssize_t)made;
	}
	return 0;
}

ssize_t zin_read(struct zin *r, void *buf, size_t n, char *err, size_t errlen)
{
	int rc;
	if (r->state == ZIN_FAILED)
		return BFI_E_INPUT;
	if (r->state == ZIN_START) {
		if ((rc = need(r, 6, err, errlen)) != 0)
			return rc;
		r->codec = zin_codec_of(r->in, r->have);
		r->state = r->codec ? ZIN_MEMBER : ZIN_PLAIN;
		if (r->codec == ZIN_GZIP) {
			if (inflateInit2(&r->z, 16 + MAX_WBITS) != Z_OK)
				return bad(r, err, errlen, "cannot start gzip decompression");
			r->z_live = 1;
		} else if (r->codec && (rc = start(r)) != 0) {
			return rc == -ENOMEM ? bad(r, err, errlen, "out of memory")
			                     : bad(r, err, errlen, "cannot start decompression");
		}
	}
	if (r->codec && r->codec != ZIN_GZIP)
		return other_read(r, buf, n, err, errlen);
	if (r->state == ZIN_PLAIN) {
		if ((rc = need(r, 1, err, errlen)) != 0)
			return rc;
		size_t k = r->have - r->pos < n ? r->have - r->pos : n;
		memcpy(buf, r->in + r->pos, k);
		r->pos += k;
		return (ssize_t)k;
	}
	while (r->state == ZIN_MEMBER || r->state == ZIN_BETWEEN) {
		if (r->state == ZIN_BETWEEN) { /* after a member: another, or the end */
			if ((rc = need(r, 2, err, errlen)) != 0)
				return rc;
			if (r->have == r->pos) {
				r->state = ZIN_END;
				break;
			}
			if (r->have - r->pos < 2 || r->in[r->pos] != 0x1f || r->in[r->pos + 1] != 0x8b)
				return bad(r, err, errlen, "bytes after the end of the gzip data");
			if (inflateReset(&r->z) != Z_OK)
				return bad(r, err, errlen, "cannot restart gzip decompression");
			r->state = ZIN_MEMBER;
		}
		if ((rc = need(r, 1, err, errlen)) != 0)
			return rc;
		if (r->pos == r->have)
			return bad(r, err, errlen, "the gzip data ends early (truncated file)");
		r->z.next_in = r->in + r->pos;
		r->z.avail_in = (uInt)(r->have - r->pos);
		r->z.next_out = buf;
		r->z.avail_out = (uInt)(n > (1u << 30) ? (1u << 30) : n);
		int z = inflate(&r->z, Z_NO_FLUSH);
		size_t used = (size_t)(r->z.next_in - (r->in + r->pos));
		size_t made = (size_t)((unsigned char *)r->z.next_out - (unsigned char *)buf);
		r->pos += used;
		if (z == Z_STREAM_END)
			r->state = ZIN_BETWEEN;
		else if (z != Z_OK && z != Z_BUF_ERROR)
			return bad(r, err, errlen, r->z.msg ? r->z.msg : "corrupt gzip data");
		if (made)
			return (ssize_t)made;
	}
	return 0;
}

void zin_close(struct zin *r)
{
	if (r->z_live)
		inflateEnd(&r->z);
	stop(r);
	if (r->fd >= 0)
		close(r->fd);
	free(r->in);
	r->in = NULL;
	r->fd = -1;
	r->z_live = 0;
}
