/*
 * zin.c - read an input file that may be gzip-compressed.
 *
 * A file that starts with gzip's magic (1f 8b) is decompressed, member
 * after member as gzip(1) does; anything else is read as it is. Unlike
 * zlib's gzread, which stops quietly at bytes after the last member, this
 * refuses them, as gzip -t does: trailing bytes mean a damaged or
 * mis-concatenated file, and indexing part of it would drop keys without
 * a word. A stream that ends inside a member is refused too.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bfi_error.h"
#include "zin.h"

#define ZIN_BUF (1u << 17)

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

ssize_t zin_read(struct zin *r, void *buf, size_t n, char *err, size_t errlen)
{
	int rc;
	if (r->state == ZIN_FAILED)
		return BFI_E_INPUT;
	if (r->state == ZIN_START) {
		if ((rc = need(r, 2, err, errlen)) != 0)
			return rc;
		r->state = r->have >= 2 && r->in[0] == 0x1f && r->in[1] == 0x8b ? ZIN_MEMBER : ZIN_PLAIN;
		if (r->state == ZIN_MEMBER) {
			if (inflateInit2(&r->z, 16 + MAX_WBITS) != Z_OK)
				return bad(r, err, errlen, "cannot start gzip decompression");
			r->z_live = 1;
		}
	}
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
	if (r->fd >= 0)
		close(r->fd);
	free(r->in);
	r->in = NULL;
	r->fd = -1;
	r->z_live = 0;
}
