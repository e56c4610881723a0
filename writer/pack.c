/*
 * pack.c - bfi pack: a snapshot or a collection as one file (spec/format.md,
 * "Packs"). The files go into a tar stream (libarchive, ustar), the
 * stream is cut into frames of 4 MiB, each compressed on its own (zstd,
 * content checksum on) so that the frames of a batch compress on all
 * threads at once and a reader can skip or seek by frame; a seek table in
 * a skippable frame ends the file (zstd's seekable format). The same
 * files, level and frame size give the same bytes at any thread count.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>
#include <zstd.h>

#include "archive_dl.h"
#include "bfi_manifest.h"
#include "bfi_pack.h"
#include "format.h"
#include "internal.h"

#define COPY_BUF (1u << 20) /* a source file is read in pieces of this */

struct packer {
	const struct bfi_pack_options *o;
	int out;              /* the staged pack file */
	unsigned threads;     /* frames compressed at once */
	uint32_t frame;       /* decompressed bytes a frame */
	uint8_t *in;          /* threads frames of the tar stream */
	size_t fill;          /* bytes in in[] */
	uint8_t **zout;       /* each frame's compressed bytes */
	size_t *zlen;         /* and their count */
	size_t zcap;
	ZSTD_CCtx **cctx;
	struct bfi_pack_table t;
	uint32_t cap;         /* entries allocated in t.f */
	uint64_t written;     /* bytes of the pack so far */
	uint64_t done, total; /* bytes of the source files packed, for progress */
	double *cpu;          /* stats: each frame's compression CPU seconds, or NULL */
	size_t cpu_cap;
	double pooled;        /* stats: the main thread's wall seconds inside pool_run */
	int rc;
	char *err;
	size_t errlen;
};

static int pfail(struct packer *k, int rc, const char *fmt, const char *a, const char *b)
{
	if (k->rc == 0) {
		snprintf(k->err, k->errlen, fmt, a, b);
		k->rc = rc;
	}
	return rc;
}

struct batch {
	struct packer *k;
	uint32_t n;
};

/* Compress frame i of the batch on a thread of its own. */
static int compress_one(void *ctx, uint64_t i, unsigned thread)
{
	struct batch *b = ctx;
	struct packer *k = b->k;
	size_t from = (size_t)i * k->frame;
	size_t len = k->fill - from < k->frame ? k->fill - from : k->frame;
	double t0 = k->o->stats ? stats_thread_cpu() : 0;
	size_t r = ZSTD_compress2(k->cctx[thread], k->zout[i], k->zcap, k->in + from, len);
	if (ZSTD_isError(r))
		return BFI_E_INVALID;
	k->zlen[i] = r;
	if (k->o->stats)
		k->cpu[k->t.n + i] = stats_thread_cpu() - t0;
	return 0;
}

/* Compress what is in k->in as frames, append them, note them in the table. */
static int flush(struct packer *k)
{
	if (k->fill == 0 || k->rc)
		return k->rc;
	uint32_t n = (uint32_t)((k->fill + k->frame - 1) / k->frame);
	if (k->t.n + n > BFI_PACK_FRAMES_MAX)
		return pfail(k, BFI_E_LIMIT, "the pack would need more than 2^27 frames%s%s", "", "");
	if (k->t.n + n > k->cap) {
		uint32_t cap = k->cap ? k->cap * 2 : 1024;
		while (cap < k->t.n + n)
			cap *= 2;
		void *f = realloc(k->t.f, (size_t)cap * sizeof *k->t.f);
		if (f == NULL)
			return pfail(k, -ENOMEM, "out of memory%s%s", "", "");
		k->t.f = f;
		k->cap = cap;
	}
	if (k->o->stats && k->cpu_cap < k->t.n + n) {
		size_t cap = k->cpu_cap ? k->cpu_cap * 2 : 1024;
		while (cap < k->t.n + n)
			cap *= 2;
		double *c = realloc(k->cpu, cap * sizeof *c);
		if (c == NULL)
			return pfail(k, -ENOMEM, "out of memory%s%s", "", "");
		k->cpu = c;
		k->cpu_cap = cap;
	}
	struct batch b = {k, n};
	double w0 = k->o->stats ? stats_thread_cpu() : 0;
	int rc = pool_run(k->threads < n ? k->threads : n, n, compress_one, &b);
	if (k->o->stats)
		k->pooled += stats_thread_cpu() - w0;
	if (rc)
		return pfail(k, rc, "zstd could not compress a frame%s%s", "", "");
	for (uint32_t i = 0; i < n; i++) {
		size_t from = (size_t)i * k->frame;
		size_t len = k->fill - from < k->frame ? k->fill - from : k->frame;
		rc = pwrite_all(k->out, k->zout[i], k->zlen[i], k->written);
		if (rc)
			return pfail(k, rc, "writing the pack: %s%s", strerror(-rc), "");
		struct bfi_pack_frame *f = &k->t.f[k->t.n++];
		f->at = k->written;
		f->from = k->t.tar_size;
		f->csize = (uint32_t)k->zlen[i];
		f->dsize = (uint32_t)len;
		f->checksum = (uint32_t)XXH64(k->in + from, len, 0);
		k->written += k->zlen[i];
		k->t.tar_size += len;
	}
	k->fill = 0;
	return 0;
}

/* libarchive's output: the tar stream, gathered into frames. */
static la_ssize_t on_write(struct archive *a, void *data, const void *buf, size_t len)
{
	struct packer *k = data;
	const uint8_t *p = buf;
	size_t cap = (size_t)k->threads * k->frame;
	for (size_t left = len; left;) {
		size_t n = cap - k->fill < left ? cap - k->fill : left;
		memcpy(k->in + k->fill, p, n);
		k->fill += n;
		p += n;
		left -= n;
		if (k->fill == cap && flush(k)) {
			archive_set_error(a, EIO, "%s", k->err);
			return -1;
		}
	}
	return (la_ssize_t)len;
}

/* One member: a directory (fd < 0) or a file's bytes from fd. */
static int add_member(struct packer *k, struct archive *a, const char *name, int fd, uint64_t size,
                      uint8_t *buf)
{
	struct archive_entry *e = archive_entry_new();
	if (e == NULL)
		return pfail(k, -ENOMEM, "out of memory%s%s", "", "");
	/* fixed owner, time and modes: a pack depends on the files' bytes alone */
	archive_entry_set_pathname(e, name);
	archive_entry_set_filetype(e, fd < 0 ? AE_IFDIR : AE_IFREG);
	archive_entry_set_perm(e, fd < 0 ? 0755 : 0444);
	archive_entry_set_size(e, fd < 0 ? 0 : (la_int64_t)size);
	archive_entry_set_mtime(e, 0, 0);
	int r = archive_write_header(a, e);
	archive_entry_free(e);
	if (r != ARCHIVE_OK)
		return pfail(k, k->rc ? k->rc : BFI_E_INVALID, "tar header of %s: %s", name,
		             archive_error_string(a));
	for (uint64_t off = 0; fd >= 0 && off < size;) {
		size_t want = size - off < COPY_BUF ? (size_t)(size - off) : COPY_BUF;
		int rc = pread_all(fd, buf, want, off);
		if (rc)
			return pfail(k, rc, "reading %s: %s", name, strerror(-rc));
		if (archive_write_data(a, buf, want) != (la_ssize_t)want)
			return pfail(k, k->rc ? k->rc : -EIO, "packing %s: %s", name,
			             archive_error_string(a));
		off += want;
		k->done += want;
		if (k->o->progress)
			k->o->progress(k->o->progress_ctx, k->done, k->total);
	}
	if (archive_write_finish_entry(a) != ARCHIVE_OK)
		return pfail(k, k->rc ? k->rc : -EIO, "packing %s: %s", name, archive_error_string(a));
	return 0;
}

/* A source file held open, with its size; the snapshot's or a segment's. */
struct src {
	char name[64]; /* its member name */
	int fd;        /* -1: a directory member */
	uint64_t size;
};

static int open_src(struct packer *k, int dfd, const char *dir, const char *file, struct src *s)
{
	char path[64];
	snprintf(path, sizeof path, "%s%s%s", dir, dir[0] ? "/" : "", file);
	snprintf(s->name, sizeof s->name, "%s", path);
	s->fd = openat(dfd, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	if (s->fd < 0 || fstat(s->fd, &st) != 0)
		return pfail(k, -errno, "%s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return pfail(k, BFI_E_NOT_REGULAR, "%s: %s", path, "not a regular file");
	s->size = (uint64_t)st.st_size;
	k->total += s->size;
	return 0;
}

/*
 * The members of src: a snapshot's catalog.mdb and index.bfi, or a
 * collection's MANIFEST and each live segment's directory, catalog.mdb
 * and index.bfi, in the manifest's order. All are opened before any is
 * packed, so that a commit during the pack cannot mix two generations.
 */
static int gather(struct packer *k, int dfd, struct src **out, uint32_t *n)
{
	*out = NULL;
	*n = 0;
	struct stat st;
	if (fstatat(dfd, BFI_MANIFEST_NAME, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		struct src *s = calloc(2, sizeof *s);
		if (s == NULL)
			return pfail(k, -ENOMEM, "out of memory%s%s", "", "");
		s[0].fd = s[1].fd = -1;
		*out = s;
		*n = 2;
		if (open_src(k, dfd, "", BFI_CATALOG_NAME, &s[0]) ||
		    open_src(k, dfd, "", BFI_INDEX_NAME, &s[1]))
			return k->rc;
		return 0;
	}
	struct src man = {.fd = -1};
	if (open_src(k, dfd, "", BFI_MANIFEST_NAME, &man))
		return k->rc;
	uint8_t *buf = man.size <= (256ull << 20) ? malloc(man.size ? man.size : 1) : NULL;
	int rc = buf ? pread_all(man.fd, buf, (size_t)man.size, 0) : -ENOMEM;
	struct bfi_manifest m;
	const char *what = "out of memory";
	if (rc == 0)
		rc = bfi_manifest_decode(buf, man.size, &m, &what);
	free(buf);
	if (rc) {
		close(man.fd);
		return pfail(k, rc, "MANIFEST: %s%s", rc == -ENOMEM ? "out of memory" : what, "");
	}
	struct src *s = calloc(1 + 3 * (size_t)m.n_segments, sizeof *s);
	if (s == NULL) {
		close(man.fd);
		bfi_manifest_free(&m);
		return pfail(k, -ENOMEM, "out of memory%s%s", "", "");
	}
	s[0] = man;
	uint32_t j = 1;
	for (uint32_t i = 0; i < 1 + 3 * m.n_segments; i++)
		if (i)
			s[i].fd = -1;
	for (uint32_t i = 0; i < m.n_segments && k->rc == 0; i++) {
		snprintf(s[j].name, sizeof s[j].name, "%s/", m.segs[i].name);
		j++;
		if (open_src(k, dfd, m.segs[i].name, BFI_CATALOG_NAME, &s[j++]) == 0)
			open_src(k, dfd, m.segs[i].name, BFI_INDEX_NAME, &s[j++]);
	}
	bfi_manifest_free(&m);
	*out = s;
	*n = 1 + 3 * m.n_segments;
	return k->rc;
}

void bfi_pack_options_init(struct bfi_pack_options *o)
{
	memset(o, 0, sizeof *o);
	o->level = 3;
	o->frame = BFI_PACK_FRAME_DEFAULT;
}

static unsigned log2_up(uint32_t v)
{
	unsigned l = 10;
	while (l < 26 && (1u << l) < v)
		l++;
	return l;
}

/* A compression context for o's level and frame size. */
static ZSTD_CCtx *make_cctx(const struct bfi_pack_options *o)
{
	ZSTD_CCtx *c = ZSTD_createCCtx();
	if (c && (ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, o->level)) ||
	          ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1)) ||
	          ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_windowLog, (int)log2_up(o->frame))))) {
		ZSTD_freeCCtx(c);
		c = NULL;
	}
	return c;
}

/*
 * Bytes a packer takes at threads threads: frames in and out, each
 * thread's context, and the copy buffer. A context's size is measured,
 * not estimated (zstd's estimates are not in its stable API): one frame
 * of zeros compressed, which allocates all it will use.
 */
static uint64_t pack_memory(const struct bfi_pack_options *o, unsigned threads, uint64_t *cctx)
{
	if (*cctx == 0) {
		ZSTD_CCtx *c = make_cctx(o);
		void *zero = calloc(1, o->frame), *out = malloc(ZSTD_compressBound(o->frame));
		if (c && zero && out &&
		    !ZSTD_isError(ZSTD_compress2(c, out, ZSTD_compressBound(o->frame), zero, o->frame)))
			*cctx = ZSTD_sizeof_CCtx(c);
		ZSTD_freeCCtx(c);
		free(zero);
		free(out);
	}
	return 2 * COPY_BUF + (uint64_t)threads * (o->frame + ZSTD_compressBound(o->frame) + *cctx);
}

/* Is path a file bfi may replace: a bfi pack (a zstd frame first, the seek table's magic last)? */
static int is_pack_file(const char *path)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return 0;
	struct stat st;
	uint8_t head[4], foot[4];
	int yes = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= 17 &&
	          pread(fd, head, 4, 0) == 4 && pread(fd, foot, 4, st.st_size - 4) == 4 &&
	          bfi_get32(head) == BFI_ZSTD_MAGIC && bfi_get32(foot) == BFI_PACK_FOOTER_MAGIC;
	close(fd);
	return yes;
}

/* A name beside out of its own, out.tmp-XXXXXXXX, for try number tries. */
static void temp_name(char *tmp, size_t cap, const char *out, int tries)
{
	uint32_t r = 0;
	if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r)
		r = (uint32_t)getpid() * 2654435761u + (uint32_t)tries;
	snprintf(tmp, cap, "%s.tmp-%08x", out, r);
}

/*
 * Give the finished unnamed file fd a name beside out (into tmp), for
 * rename to put it in place at once. 0 or -errno.
 */
static int name_it(int fd, const char *out, char *tmp, size_t cap)
{
	char proc[64];
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
	for (int tries = 0; tries < 16; tries++) {
		temp_name(tmp, cap, out, tries);
		if (linkat(AT_FDCWD, proc, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW) == 0)
			return 0;
		if (errno != EEXIST)
			break;
	}
	int e = errno;
	tmp[0] = 0;
	return -e;
}

int bfi_pack(const char *src, const char *out, const struct bfi_pack_options *o, char *err,
             size_t errlen)
{
	struct packer k = {.o = o, .out = -1, .err = err, .errlen = errlen};
	double main_cpu0 = stats_thread_cpu();
	err[0] = 0;
	if (src == NULL || out == NULL || o == NULL || o->level < 1 || o->level > ZSTD_maxCLevel() ||
	    o->frame < 4096 || o->frame > BFI_PACK_FRAME_MAX) {
		snprintf(err, errlen, "invalid arguments (level 1..%d, frame 4 KiB..64 MiB)",
		         ZSTD_maxCLevel());
		return BFI_E_INVALID;
	}
	const char *why = NULL;
	if (bfi_archive_load(&why)) {
		snprintf(err, errlen, "%s", why);
		return -ENOSYS;
	}
	k.frame = o->frame;
	k.threads = pool_threads(o->threads);
	uint64_t cctx = 0;
	while (o->memory && k.threads > 1 && pack_memory(o, k.threads, &cctx) > o->memory)
		k.threads--;
	if (o->memory && pack_memory(o, 1, &cctx) > o->memory) {
		snprintf(err, errlen,
		         "--memory %llu bytes is below the %llu that packing at level %d takes on one "
		         "thread",
		         (unsigned long long)o->memory, (unsigned long long)pack_memory(o, 1, &cctx),
		         o->level);
		return BFI_E_LIMIT;
	}
	struct stat st;
	if (lstat(out, &st) == 0 && !is_pack_file(out)) {
		snprintf(err, errlen, "%s exists and is not a bfi pack; not replacing it", out);
		return BFI_E_EXISTS;
	}
	int dfd = open(src, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", src, strerror(e));
		return -e;
	}
	struct src *s = NULL;
	uint32_t n = 0;
	struct archive *a = NULL;
	uint8_t *buf = NULL;
	char tmp[4200] = "";
	if (gather(&k, dfd, &s, &n))
		goto out;
	k.in = malloc((size_t)k.threads * k.frame);
	k.zout = calloc(k.threads, sizeof *k.zout);
	k.zlen = calloc(k.threads, sizeof *k.zlen);
	k.cctx = calloc(k.threads, sizeof *k.cctx);
	k.zcap = ZSTD_compressBound(k.frame);
	buf = malloc(COPY_BUF);
	if (!k.in || !k.zout || !k.zlen || !k.cctx || !buf) {
		pfail(&k, -ENOMEM, "out of memory%s%s", "", "");
		goto out;
	}
	for (unsigned i = 0; i < k.threads; i++) {
		k.zout[i] = malloc(k.zcap);
		k.cctx[i] = make_cctx(o);
		if (!k.zout[i] || !k.cctx[i]) {
			pfail(&k, -ENOMEM, "cannot set up zstd%s%s", "", "");
			goto out;
		}
	}
	if (strlen(out) > sizeof tmp - 16) {
		pfail(&k, BFI_E_INVALID, "output path too long%s%s", "", "");
		goto out;
	}
	/*
	 * An unnamed file in out's directory (O_TMPFILE), named only once it
	 * is whole: a pack killed midway leaves nothing behind. Where the file
	 * system cannot, or /proc is not there to name it, a file beside out
	 * under a name of its own, removed on failure. Either is created as
	 * any file is (umask), unlike mkstemp's 0600.
	 */
	int unnamed = 0;
	if (access("/proc/self/fd", X_OK) == 0) {
		char dir[4200];
		snprintf(dir, sizeof dir, "%s", out);
		char *slash = strrchr(dir, '/');
		if (slash == NULL)
			snprintf(dir, sizeof dir, ".");
		else
			slash[slash == dir] = 0; /* "/x" keeps its "/" */
		k.out = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
		unnamed = k.out >= 0;
	}
	for (int tries = 0; !unnamed && tries < 16; tries++) {
		temp_name(tmp, sizeof tmp, out, tries);
		k.out = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
		if (k.out >= 0 || errno != EEXIST)
			break;
	}
	if (k.out < 0) {
		pfail(&k, -errno, "cannot create %s: %s", tmp, strerror(errno));
		tmp[0] = 0;
		goto out;
	}
	a = archive_write_new();
	if (a == NULL || archive_write_set_format_pax_restricted(a) != ARCHIVE_OK ||
	    archive_write_set_bytes_per_block(a, 512) != ARCHIVE_OK ||
	    archive_write_set_bytes_in_last_block(a, 1) != ARCHIVE_OK ||
	    archive_write_open(a, &k, NULL, on_write, NULL) != ARCHIVE_OK) {
		pfail(&k, -ENOMEM, "cannot start the tar stream: %s%s",
		      a ? archive_error_string(a) : "out of memory", "");
		goto out;
	}
	for (uint32_t i = 0; i < n && k.rc == 0; i++)
		add_member(&k, a, s[i].name, s[i].fd, s[i].size, buf);
	if (k.rc == 0 && archive_write_close(a) != ARCHIVE_OK)
		pfail(&k, -EIO, "ending the tar stream: %s%s", archive_error_string(a), "");
	if (k.rc == 0 && flush(&k) == 0) {
		uint64_t ts = bfi_pack_table_size(k.t.n);
		uint8_t *tab = malloc(ts);
		int rc = tab ? 0 : -ENOMEM;
		if (tab) {
			bfi_pack_table_encode(tab, &k.t);
			rc = pwrite_all(k.out, tab, ts, k.written);
			free(tab);
		}
		if (rc == 0 && fsync(k.out) != 0)
			rc = -errno;
		if (rc == 0 && unnamed)
			rc = name_it(k.out, out, tmp, sizeof tmp);
		if (rc == 0 && rename(tmp, out) != 0)
			rc = -errno;
		if (rc)
			pfail(&k, rc, "writing %s: %s", out, strerror(-rc));
		else
			tmp[0] = 0;
		if (rc == 0)
			(void)fsync_parent(out); /* the rename made durable, as far as the disk allows */
	}
	if (k.rc == 0 && o->stats) {
		/*
		 * The main thread's CPU outside the pools is the serial part
		 * (reading the files, the tar stream, writing the frames); the
		 * frames' CPU the parallel part. At T threads a batch of T frames
		 * takes its slowest frame, so the critical path at 16 threads is
		 * the serial part and the slowest frame of each 16 in a row.
		 */
		struct bfi_pack_stats *ps = o->stats;
		ps->serial = stats_thread_cpu() - main_cpu0 - k.pooled;
		ps->frames = k.t.n;
		ps->compress = 0;
		double path = 0, most = 0;
		for (uint32_t i = 0; i < k.t.n; i++) {
			ps->compress += k.cpu[i];
			most = k.cpu[i] > most ? k.cpu[i] : most;
			if (i % 16 == 15 || i + 1 == k.t.n) {
				path += most;
				most = 0;
			}
		}
		ps->critical16 = ps->serial + path;
	}
out:
	if (a)
		archive_write_free(a);
	if (k.out >= 0)
		close(k.out);
	if (tmp[0])
		(void)unlink(tmp); /* our own temporary file, never finished */
	for (uint32_t i = 0; s && i < n; i++)
		if (s[i].fd >= 0)
			close(s[i].fd);
	free(s);
	for (unsigned i = 0; k.zout && i < k.threads; i++)
		free(k.zout[i]);
	for (unsigned i = 0; k.cctx && i < k.threads; i++)
		ZSTD_freeCCtx(k.cctx[i]);
	free(k.zout);
	free(k.zlen);
	free(k.cctx);
	free(k.in);
	free(k.t.f);
	free(k.cpu);
	free(buf);
	close(dfd);
	return k.rc;
}
