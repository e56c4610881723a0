/*
 * pack.c - bfi pack: a snapshot or a collection as one file (spec/format.md,
 * "Packs"). The files go into a tar stream (libarchive, ustar), the
 * stream is cut into frames of 64 KiB, each compressed on its own (zstd,
 * content checksum on) so that the frames of a batch compress on all
 * threads at once and a reader can skip or seek by frame; a seek table in
 * a skippable frame ends the file (zstd's seekable format). The same
 * files, level and frame size give the same bytes at any thread count.
 *
 * Two batches of frames take turns: while a flusher thread compresses
 * one on the pool's threads and writes it, the calling thread reads the
 * files into the other, so reading is not a serial part on many cores.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
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
#include "publish.h"

#define COPY_BUF (1u << 20) /* a source file is read in pieces of this */

/* A batch of frames: filled by the calling thread, compressed and written by the flusher. */
struct side {
	uint8_t *in;     /* threads frames of the tar stream */
	size_t fill;     /* bytes in in[] */
	uint8_t **zout;  /* each frame's compressed bytes */
	size_t *zlen;    /* and their count */
	uint32_t *sum;   /* and the low 32 bits of XXH64 of its bytes */
};

struct packer {
	const struct bfi_pack_options *o;
	int out;              /* the staged pack file */
	unsigned threads;     /* frames compressed at once */
	uint32_t frame;       /* decompressed bytes a frame */
	struct side side[2];
	int cur;              /* the side being filled */
	pthread_t flusher;    /* compressing and writing the other side, if flushing */
	int flushing, fside;
	int frc;              /* what the flusher found wrong, said in ferr */
	char ferr[256];
	size_t zcap;
	ZSTD_CCtx **cctx;
	struct bfi_pack_table t;
	uint32_t cap;         /* entries allocated in t.f */
	uint64_t written;     /* bytes of the pack so far */
	uint64_t done, total; /* bytes of the source files packed, for progress */
	double *cpu;          /* stats: each frame's compression CPU seconds, or NULL */
	double *wcpu;         /* stats: the flusher's CPU writing each frame */
	size_t cpu_cap;
	double *rcpu;         /* stats: the calling thread's CPU filling each frame */
	size_t rcpu_cap, rframes;
	double rmark;         /* stats: its CPU when the last frame was filled */
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
	struct side *sd;
	uint32_t n;
};

/* Compress frame i of the batch on a thread of its own, and checksum it. */
static int compress_one(void *ctx, uint64_t i, unsigned thread)
{
	struct batch *b = ctx;
	struct packer *k = b->k;
	struct side *sd = b->sd;
	size_t from = (size_t)i * k->frame;
	size_t len = sd->fill - from < k->frame ? sd->fill - from : k->frame;
	double t0 = k->o->stats ? stats_thread_cpu() : 0;
	size_t r = ZSTD_compress2(k->cctx[thread], sd->zout[i], k->zcap, sd->in + from, len);
	if (ZSTD_isError(r))
		return BFI_E_INVALID;
	sd->zlen[i] = r;
	sd->sum[i] = (uint32_t)XXH64(sd->in + from, len, 0);
	if (k->o->stats)
		k->cpu[k->t.n + i] = stats_thread_cpu() - t0;
	return 0;
}

/* The flusher's own failure, said once the calling thread waits for it: what, then detail. */
static int ffail(struct packer *k, int rc, const char *what, const char *detail)
{
	k->frc = rc;
	snprintf(k->ferr, sizeof k->ferr, "%s%s", what, detail);
	return rc;
}

/* The flusher: compress side sd's frames, append them, note them in the table. */
static int flush_side(struct packer *k, struct side *sd)
{
	uint32_t n = (uint32_t)((sd->fill + k->frame - 1) / k->frame);
	if (k->t.n + n > BFI_PACK_FRAMES_MAX)
		return ffail(k, BFI_E_LIMIT, "the pack would need more than 2^27 frames", "");
	if (k->t.n + n > k->cap) {
		uint32_t cap = k->cap ? k->cap * 2 : 1024;
		while (cap < k->t.n + n)
			cap *= 2;
		void *f = realloc(k->t.f, (size_t)cap * sizeof *k->t.f);
		if (f == NULL)
			return ffail(k, -ENOMEM, "out of memory", "");
		k->t.f = f;
		k->cap = cap;
	}
	if (k->o->stats && k->cpu_cap < k->t.n + n) {
		size_t cap = k->cpu_cap ? k->cpu_cap * 2 : 1024;
		while (cap < k->t.n + n)
			cap *= 2;
		double *c = realloc(k->cpu, cap * sizeof *c), *w = c ? realloc(k->wcpu, cap * sizeof *w) : NULL;
		if (c)
			k->cpu = c;
		if (w)
			k->wcpu = w;
		if (c == NULL || w == NULL)
			return ffail(k, -ENOMEM, "out of memory", "");
		k->cpu_cap = cap;
	}
	struct batch b = {k, sd, n};
	int rc = pool_run(k->threads < n ? k->threads : n, n, compress_one, &b);
	if (rc)
		return ffail(k, rc, "zstd could not compress a frame", "");
	for (uint32_t i = 0; i < n; i++) {
		double t0 = k->o->stats ? stats_thread_cpu() : 0;
		size_t from = (size_t)i * k->frame;
		size_t len = sd->fill - from < k->frame ? sd->fill - from : k->frame;
		rc = pwrite_all(k->out, sd->zout[i], sd->zlen[i], k->written);
		if (rc)
			return ffail(k, rc, "writing the pack: ", strerror(-rc));
		struct bfi_pack_frame *f = &k->t.f[k->t.n];
		f->at = k->written;
		f->from = k->t.tar_size;
		f->csize = (uint32_t)sd->zlen[i];
		f->dsize = (uint32_t)len;
		f->checksum = sd->sum[i];
		k->written += sd->zlen[i];
		k->t.tar_size += len;
		if (k->o->stats)
			k->wcpu[k->t.n] = stats_thread_cpu() - t0;
		k->t.n++;
	}
	return 0;
}

static void *flusher(void *p)
{
	struct packer *k = p;
	(void)flush_side(k, &k->side[k->fside]);
	return NULL;
}

/* Wait for the flusher, if it runs: 0, or what it found wrong (now k->rc). */
static int wait_flusher(struct packer *k)
{
	if (k->flushing) {
		pthread_join(k->flusher, NULL);
		k->flushing = 0;
	}
	if (k->frc)
		pfail(k, k->frc, "%s%s", k->ferr, "");
	return k->rc;
}

/*
 * Hand the side being filled to the flusher, once it is done with the
 * other, and fill that one next. Without a thread for it, flushed here.
 */
static int flush(struct packer *k)
{
	if (wait_flusher(k))
		return k->rc;
	struct side *sd = &k->side[k->cur];
	if (sd->fill == 0)
		return 0;
	k->fside = k->cur;
	k->flushing = pthread_create(&k->flusher, NULL, flusher, k) == 0;
	if (!k->flushing && flush_side(k, sd))
		return wait_flusher(k);
	k->cur ^= 1;
	k->side[k->cur].fill = 0;
	return 0;
}

/* Stats: the calling thread's CPU since the last frame filled, for the frame just filled. */
static int note_read(struct packer *k)
{
	if (k->rframes == k->rcpu_cap) {
		size_t cap = k->rcpu_cap ? 2 * k->rcpu_cap : 1024;
		double *r = realloc(k->rcpu, cap * sizeof *r);
		if (r == NULL)
			return pfail(k, -ENOMEM, "out of memory%s%s", "", "");
		k->rcpu = r;
		k->rcpu_cap = cap;
	}
	double now = stats_thread_cpu();
	k->rcpu[k->rframes++] = now - k->rmark;
	k->rmark = now;
	return 0;
}

/* libarchive's output: the tar stream, gathered into frames. */
static la_ssize_t on_write(struct archive *a, void *data, const void *buf, size_t len)
{
	struct packer *k = data;
	const uint8_t *p = buf;
	size_t cap = (size_t)k->threads * k->frame;
	for (size_t left = len; left;) {
		struct side *sd = &k->side[k->cur];
		/* up to the end of the frame being filled */
		size_t room = k->frame - sd->fill % k->frame;
		size_t n = room < left ? room : left;
		memcpy(sd->in + sd->fill, p, n);
		sd->fill += n;
		p += n;
		left -= n;
		if (sd->fill % k->frame == 0 && k->o->stats && note_read(k)) {
			archive_set_error(a, ENOMEM, "out of memory");
			return -1;
		}
		if (sd->fill == cap && flush(k)) {
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
	o->size = sizeof *o;
	o->level = 3;
	o->frame = BFI_PACK_FRAME_DEFAULT;
}

int bfi__pack_options(const struct bfi_pack_options *o, struct bfi_pack_options *out)
{
	bfi_pack_options_init(out);
	return bfi__sized(o, out, sizeof *out, offsetof(struct bfi_pack_options, level) + sizeof o->level);
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
	/* two batches of frames, one filling while the other compresses */
	return 2 * COPY_BUF +
	       (uint64_t)threads * (2 * (o->frame + ZSTD_compressBound(o->frame)) + *cctx);
}

/*
 * Where the CPU went (bfi pack --stats), and the least time 16 threads
 * could take: batches of 16 frames, each filled by the calling thread
 * (its CPU on the frames' bytes) into one of two buffers, then compressed
 * (its slowest frame) and written by the flusher, the next filling
 * meanwhile: batch b fills once b - 1 is filled and b - 2's buffer is
 * written; it is flushed once filled and b - 1 is flushed. main is the
 * calling thread's CPU: the rest of it (files opened, the table, fsync)
 * is serial besides.
 */
static void pack_stats(const struct packer *k, struct bfi_pack_stats *ps, double main)
{
	double read = 0, write = 0;
	for (size_t i = 0; i < k->rframes; i++)
		read += k->rcpu[i];
	ps->frames = k->t.n;
	ps->compress = 0;
	double filled = 0, flushed = 0, flushed_before = 0;
	for (uint32_t b0 = 0; b0 < k->t.n; b0 += 16) {
		double r = 0, most = 0, w = 0;
		for (uint32_t i = b0; i < k->t.n && i < b0 + 16; i++) {
			r += i < k->rframes ? k->rcpu[i] : 0;
			most = k->cpu[i] > most ? k->cpu[i] : most;
			w += k->wcpu[i];
			ps->compress += k->cpu[i];
			write += k->wcpu[i];
		}
		double start = filled > flushed_before ? filled : flushed_before;
		flushed_before = flushed;
		filled = start + r;
		flushed = (filled > flushed ? filled : flushed) + most + w;
	}
	double rest = main > read ? main - read : 0;
	ps->serial = main + write; /* outside the frames' compression: reading, tar, writes */
	ps->critical16 = rest + flushed;
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
	struct bfi_pack_options own;
	o = o && bfi__pack_options(o, &own) == 0 ? &own : NULL;
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
	k.cctx = calloc(k.threads, sizeof *k.cctx);
	k.zcap = ZSTD_compressBound(k.frame);
	buf = malloc(COPY_BUF);
	int short_of = !k.cctx || !buf;
	for (int h = 0; h < 2 && !short_of; h++) {
		struct side *sd = &k.side[h];
		sd->in = malloc((size_t)k.threads * k.frame);
		sd->zout = calloc(k.threads, sizeof *sd->zout);
		sd->zlen = calloc(k.threads, sizeof *sd->zlen);
		sd->sum = calloc(k.threads, sizeof *sd->sum);
		short_of = !sd->in || !sd->zout || !sd->zlen || !sd->sum;
		for (unsigned i = 0; i < k.threads && !short_of; i++)
			short_of = (sd->zout[i] = malloc(k.zcap)) == NULL;
	}
	if (short_of) {
		pfail(&k, -ENOMEM, "out of memory%s%s", "", "");
		goto out;
	}
	for (unsigned i = 0; i < k.threads; i++)
		if ((k.cctx[i] = make_cctx(o)) == NULL) {
			pfail(&k, -ENOMEM, "cannot set up zstd%s%s", "", "");
			goto out;
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
	char dir[4200], base[4200];
	if (access("/proc/self/fd", X_OK) == 0 && split_path(out, dir, base, sizeof dir) == 0) {
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
	k.rmark = o->stats ? stats_thread_cpu() : 0;
	for (uint32_t i = 0; i < n && k.rc == 0; i++)
		add_member(&k, a, s[i].name, s[i].fd, s[i].size, buf);
	if (k.rc == 0 && archive_write_close(a) != ARCHIVE_OK)
		pfail(&k, -EIO, "ending the tar stream: %s%s", archive_error_string(a), "");
	/* the last frames, then the flusher done with them: the table is whole */
	if (k.rc == 0 && k.o->stats && k.side[k.cur].fill % k.frame)
		(void)note_read(&k);
	if (k.rc == 0)
		(void)flush(&k);
	if (wait_flusher(&k) == 0) {
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
	if (k.rc == 0 && o->stats)
		pack_stats(&k, o->stats, stats_thread_cpu() - main_cpu0);
out:
	(void)wait_flusher(&k); /* on every way out: it writes into k's buffers */
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
	for (int h = 0; h < 2; h++) {
		for (unsigned i = 0; k.side[h].zout && i < k.threads; i++)
			free(k.side[h].zout[i]);
		free(k.side[h].zout);
		free(k.side[h].zlen);
		free(k.side[h].sum);
		free(k.side[h].in);
	}
	for (unsigned i = 0; k.cctx && i < k.threads; i++)
		ZSTD_freeCCtx(k.cctx[i]);
	free(k.cctx);
	free(k.t.f);
	free(k.cpu);
	free(k.wcpu);
	free(k.rcpu);
	free(buf);
	close(dfd);
	return k.rc;
}
