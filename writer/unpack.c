/*
 * unpack.c - bfi unpack: a pack's files written back byte for byte
 * (spec/format.md, "Packs"), every frame checked on the way, into a
 * staging directory beside the output, then published: a snapshot as a
 * build publishes one (swapped in atomically, so a reader of the path
 * sees the old snapshot or the new one), a collection by a rename to a
 * path that does not exist yet, or swapped at once with the collection
 * there, under its lock, the old one then removed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bfi_pack.h"
#include "format.h"
#include "internal.h"
#include "publish.h"

#define COPY_BUF (1u << 20)

struct unpacker {
	struct bfi_pack_in *in;
	struct staging st;
	const struct bfi_pack_options *o;
	uint64_t pack_size;
	uint8_t *buf;
	char segs_made; /* a collection: segment directories were made in the staging directory */
	char *err;
	size_t errlen;
};

static int pack_err(struct unpacker *u, const char *path, int rc, const struct bfi_pack_error *e)
{
	if (rc <= BFI_E_FIRST + 999 && rc >= BFI_E_FIRST)
		snprintf(u->err, u->errlen, "%s: %s%s%s (at byte %llu of the pack)", path,
		         e->member[0] ? e->member : "", e->member[0] ? ": " : "",
		         e->what ? e->what : bfi_strerror(rc), (unsigned long long)e->offset);
	else
		snprintf(u->err, u->errlen, "%s: %s%s%s", path, e->what ? e->what : "",
		         e->what ? ": " : "", strerror(-rc));
	return rc;
}

static void on_read(void *ctx, uint64_t read)
{
	const struct unpacker *u = ctx;
	u->o->progress(u->o->progress_ctx, read, u->pack_size);
}

/* Write the current member, m, as the file name in directory dfd. */
static int write_member(struct unpacker *u, const char *path, int dfd, const char *name,
                        const struct bfi_pack_member *m)
{
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		int e = errno;
		snprintf(u->err, u->errlen, "creating %s/%s: %s", u->st.dir, m->name, strerror(e));
		return -e;
	}
	struct bfi_pack_error e;
	int rc = bfi_pack_in_copy(u->in, fd, u->buf, COPY_BUF, u->o && u->o->progress ? on_read : NULL,
	                          u, &e);
	if (rc)
		pack_err(u, path, rc, &e);
	/* published read-only, as a build's files are */
	if (rc == 0 && (fchmod(fd, 0444) != 0 || fsync(fd) != 0)) {
		rc = -errno;
		snprintf(u->err, u->errlen, "%s/%s: %s", u->st.dir, m->name, strerror(errno));
	}
	close(fd);
	return rc;
}

/* A collection's staging directory: the segments made in it, and its MANIFEST, removed. */
static void remove_collection(struct unpacker *u)
{
	const struct bfi_manifest *m = bfi_pack_in_manifest(u->in);
	if (u->st.dfd < 0 || m == NULL)
		return;
	for (uint32_t i = 0; i < m->n_segments; i++)
		(void)snapshot_remove(u->st.dfd, m->segs[i].name);
	(void)unlinkat(u->st.dfd, BFI_MANIFEST_NAME, 0);
}

int bfi_unpack(const char *path, const char *out, const struct bfi_pack_options *o, char *err,
               size_t errlen, char *warn, size_t warnlen)
{
	struct bfi_pack_options own;
	int orc = o ? bfi__pack_options(o, &own) : 0;
	struct unpacker u = {.o = o ? &own : NULL, .err = err, .errlen = errlen,
	                     .st = {.dfd = -1, .mark = -1}};
	err[0] = warn[0] = 0;
	if (path == NULL || out == NULL || orc) {
		snprintf(err, errlen, "invalid arguments");
		return BFI_E_INVALID;
	}
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		if (fd >= 0)
			close(fd);
		return -e;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		snprintf(err, errlen, "%s: not a regular file", path);
		return BFI_E_NOT_REGULAR;
	}
	u.pack_size = (uint64_t)st.st_size;
	struct bfi_pack_error e;
	int rc = bfi_pack_in_open(fd, &u.in, &e);
	if (rc) {
		close(fd);
		return pack_err(&u, path, rc, &e);
	}
	const struct bfi_pack_table *t = bfi_pack_in_table(u.in);
	uint32_t most = 0;
	for (uint32_t i = 0; i < t->n; i++)
		if (t->f[i].dsize > most)
			most = t->f[i].dsize;
	uint64_t need = 2ull * most + 2 * COPY_BUF;
	if (o && o->memory && need > o->memory) {
		snprintf(err, errlen, "--memory %llu bytes is below the %llu that unpacking this pack "
		         "takes (its largest frame twice, and buffers)",
		         (unsigned long long)o->memory, (unsigned long long)need);
		rc = BFI_E_LIMIT;
		goto out;
	}
	u.buf = malloc(COPY_BUF);
	if (u.buf == NULL) {
		rc = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	struct bfi_pack_member m;
	rc = bfi_pack_in_next(u.in, &m, &e);
	if (rc) {
		rc = rc == 1 ? BFI_E_PACK : rc;
		pack_err(&u, path, rc, &e);
		goto out;
	}
	int collection = bfi_pack_in_is_collection(u.in), replace = 0;
	if (collection) {
		/* over a collection only: swapped in whole under its lock (collection_replace) */
		struct stat os, ms;
		replace = lstat(out, &os) == 0;
		char man[4400];
		snprintf(man, sizeof man, "%s/%s", out, BFI_MANIFEST_NAME);
		if (replace && (!S_ISDIR(os.st_mode) || lstat(man, &ms) != 0 || !S_ISREG(ms.st_mode))) {
			snprintf(err, errlen, "%s exists and is not a collection; not replacing it", out);
			rc = BFI_E_EXISTS;
			goto out;
		}
	} else {
		rc = bfi_output_check(out, err, errlen);
		if (rc)
			goto out;
	}
	staging_sweep(out);
	rc = staging_begin(&u.st, out, err, errlen);
	if (rc)
		goto out;
	int segfd = -1;
	do {
		if (m.file == NULL) { /* a segment's directory */
			if (segfd >= 0)
				close(segfd);
			segfd = -1;
			if (mkdirat(u.st.dfd, m.segment, 0755) != 0 ||
			    (segfd = openat(u.st.dfd, m.segment,
			                    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
				rc = -errno;
				snprintf(err, errlen, "%s/%s: %s", u.st.dir, m.segment, strerror(errno));
				break;
			}
			u.segs_made = 1;
			continue;
		}
		rc = write_member(&u, path, m.segment[0] ? segfd : u.st.dfd, m.file, &m);
		if (rc == 0 && m.segment[0] && strcmp(m.file, BFI_INDEX_NAME) == 0 && fsync(segfd) != 0) {
			rc = -errno;
			snprintf(err, errlen, "%s/%s: %s", u.st.dir, m.segment, strerror(errno));
		}
	} while (rc == 0 && (rc = bfi_pack_in_next(u.in, &m, &e)) == 0);
	if (segfd >= 0)
		close(segfd);
	if (rc < 0) {
		if (err[0] == 0)
			pack_err(&u, path, rc, &e);
		goto out;
	}
	rc = 0; /* 1: the pack's end, every member read */
	if (fsync(u.st.dfd) != 0) {
		rc = -errno;
		snprintf(err, errlen, "fsync %s: %s", u.st.dir, strerror(errno));
		goto out;
	}
	if (!collection) {
		rc = staging_publish(&u.st, out, err, errlen, warn, warnlen);
		goto out;
	}
	rc = replace ? collection_replace(&u.st, out, err, errlen, warn, warnlen)
	             : staging_rename(&u.st, out, err, errlen);
out:
	if (u.st.dir[0] && u.segs_made)
		remove_collection(&u);
	staging_end(&u.st);
	bfi_pack_in_close(&u.in);
	free(u.buf);
	close(fd);
	return rc;
}
