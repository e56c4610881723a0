/*
 * frames.c - a compressed file made of independent members decompressed
 * on threads and read in order, for a large FASTA or FASTQ file read on
 * every thread (split.c).
 *
 * Two formats cut themselves so, each described by a row of the table
 * below:
 * - BGZF (bgzip's, and many sequencers'): gzip in members of at most
 *   64 KiB, each naming its own size in a header field.
 * - zstd in many frames (pzstd's, zstd's of concatenated files, seekable
 *   zstd), each found by walking its blocks' headers, and decompressed
 *   whole when it names its size, as a stream up to a job's share of
 *   memory when it does not (pzstd's); skippable frames are passed over.
 * A decoding thread in turn takes the next whole members from the file
 * into a job of about a MiB, then decompresses the job while the others
 * fill and decompress theirs; the reading thread takes the jobs' output
 * back in the file's order. Single-stream gzip, and zstd in one frame
 * larger than a job may hold, cannot be cut so, and are read by zin.c on
 * one thread.
 *
 * A file is taken for BGZF only when its first member names its size and
 * it ends with BGZF's end-of-file member; for zstd, when its first frame
 * (after any skippable ones) names a size a job may hold, or names none
 * and ends within what a job may read. From a member that cannot be
 * decompressed apart (a gzip member that names no size, a zstd frame too
 * large for a job, or one that fails to decompress) zin.c reads the rest on the reading thread, after the
 * output of the members before it, and reports any damage as it does. A
 * BGZF member cut short, or one that claims more than 64 KiB, is an error
 * [BFI_E_INPUT] with its offset, after the output of the members before
 * it.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "internal.h"
#include "sources.h"
#include "zin.h"

#define BGZF_MAX 65536u          /* BGZF's largest member, in and out */
#define ZSTD_FRAME_MOST (64u << 20) /* a zstd frame's output decoded whole, at most */
#define ZSTD_HEAD 18             /* a zstd frame header's largest size */

/* A member found at the start of some bytes. */
enum { M_MORE = -1, M_BAD = -2, M_APART = 0 };
#define OUT_UNKNOWN SIZE_MAX /* a member that does not name its output's size */
#define DAMAGED 1

static int grow(unsigned char **p, size_t *cap, size_t need)
{
	if (need <= *cap)
		return 0;
	unsigned char *q = realloc(*p, need);
	if (q == NULL)
		return -ENOMEM;
	*p = q;
	*cap = need;
	return 0;
}

struct codec {
	/*
	 * The member at p (n bytes there): its size (> 0), with its output's
	 * size in *out; M_MORE when more bytes are needed to tell; M_APART when
	 * it is not one to decompress apart (zin.c reads on from it); M_BAD
	 * with *why when it is damaged. out_most: the largest output taken.
	 */
	long long (*member)(const unsigned char *p, size_t n, size_t out_most, size_t *out,
	                    const char **why);
	void *(*dec_new)(void);
	void (*dec_free)(void *d);
	/*
	 * Decompress one member whole into *out at at, growing it (*cap): want
	 * bytes, or when want is OUT_UNKNOWN, up to most. 0 with *made; DAMAGED
	 * with *why and *used (the input taken when it stopped), or -ENOMEM.
	 */
	int (*decode)(void *d, const unsigned char *in, size_t n, unsigned char **out, size_t *cap,
	              size_t at, size_t want, size_t most, size_t *made, size_t *used,
	              const char **why);
	int apart_on_damage; /* a member that fails to decompress: zin.c reads on from it (else an error) */
};

/* BGZF */

static long long bgzf_member(const unsigned char *p, size_t n, size_t out_most, size_t *out,
                             const char **why)
{
	(void)out_most;
	if (n < 18)
		return M_MORE;
	if (p[0] != 0x1f || p[1] != 0x8b || p[2] != 8 || !(p[3] & 4))
		return M_APART;
	size_t xlen = bfi_get16(p + 10);
	if (n < 12 + xlen)
		return M_MORE;
	long long size = 0;
	for (size_t at = 12; at + 4 <= 12 + xlen;) {
		size_t slen = bfi_get16(p + at + 2);
		if (p[at] == 'B' && p[at + 1] == 'C' && slen == 2 && at + 6 <= 12 + xlen) {
			size = (long long)bfi_get16(p + at + 4) + 1;
			break;
		}
		at += 4 + slen;
	}
	if (size == 0)
		return M_APART; /* gzip that names no size */
	if (size < 28) {
		*why = "a BGZF member too short to be one";
		return M_BAD;
	}
	if (n < (size_t)size)
		return M_MORE;
	*out = bfi_get32(p + size - 4); /* ISIZE */
	if (*out > BGZF_MAX) {
		*why = "a BGZF member that claims more than 64 KiB";
		return M_BAD;
	}
	return size;
}

static void *bgzf_new(void)
{
	z_stream *z = calloc(1, sizeof *z);
	if (z && inflateInit2(z, 15 + 16) != Z_OK) {
		free(z);
		z = NULL;
	}
	return z;
}

static void bgzf_free(void *d)
{
	inflateEnd(d);
	free(d);
}

static int bgzf_decode(void *d, const unsigned char *in, size_t n, unsigned char **out,
                       size_t *cap, size_t at, size_t want, size_t most, size_t *made,
                       size_t *used, const char **why)
{
	z_stream *z = d;
	(void)most;
	if (grow(out, cap, at + want))
		return -ENOMEM;
	inflateReset(z);
	z->next_in = (unsigned char *)in;
	z->avail_in = (uInt)n;
	z->next_out = *out + at;
	z->avail_out = (uInt)want;
	int rc = inflate(z, Z_FINISH);
	*made = want;
	if (rc == Z_STREAM_END && z->avail_in == 0 && z->avail_out == 0)
		return 0;
	*used = (size_t)(z->next_in - in); /* the input zlib had taken when it stopped, as zin.c counts it */
	*why = z->msg ? z->msg : "corrupt gzip data";
	return DAMAGED;
}

/* zstd */

static int zstd_skippable(const unsigned char *p)
{
	return (p[0] & 0xf0) == 0x50 && p[1] == 0x2a && p[2] == 0x4d && p[3] == 0x18;
}

static long long zstd_member(const unsigned char *p, size_t n, size_t out_most, size_t *out,
                             const char **why)
{
	(void)why;
	if (n < 8)
		return M_MORE;
	if (zstd_skippable(p)) {
		uint64_t size = 8 + (uint64_t)bfi_get32(p + 4);
		if (size > (uint64_t)out_most)
			return M_APART;
		*out = 0;
		return n < size ? M_MORE : (long long)size;
	}
	if (memcmp(p, "\x28\xb5\x2f\xfd", 4))
		return M_APART;
	if (n < ZSTD_HEAD)
		return M_MORE; /* a frame header is shorter, but its frame is longer than this */
	/* pzstd's frames name no size: decompressed as a stream, up to out_most */
	unsigned long long content = ZSTD_getFrameContentSize(p, n);
	if (content == ZSTD_CONTENTSIZE_ERROR ||
	    (content != ZSTD_CONTENTSIZE_UNKNOWN && content > out_most))
		return M_APART;
	size_t size = ZSTD_findFrameCompressedSize(p, n);
	if (ZSTD_isError(size))
		return n < ZSTD_compressBound(out_most) + ZSTD_HEAD ? M_MORE : M_APART;
	*out = content == ZSTD_CONTENTSIZE_UNKNOWN ? OUT_UNKNOWN : (size_t)content;
	return (long long)size;
}

static void *zstd_new(void)
{
	return ZSTD_createDCtx();
}

static void zstd_free(void *d)
{
	ZSTD_freeDCtx(d);
}

static int zstd_decode(void *d, const unsigned char *in, size_t n, unsigned char **out,
                       size_t *cap, size_t at, size_t want, size_t most, size_t *made,
                       size_t *used, const char **why)
{
	*used = 0;
	if (want != OUT_UNKNOWN) {
		if (grow(out, cap, at + want))
			return -ENOMEM;
		size_t got = ZSTD_decompressDCtx(d, *out + at, want, in, n);
		*made = want;
		if (!ZSTD_isError(got) && got == want)
			return 0;
		*why = ZSTD_isError(got) ? ZSTD_getErrorName(got) : "a zstd frame shorter than it claims";
		return DAMAGED;
	}
	/* as a stream, the output grown as it comes, up to most */
	ZSTD_DCtx_reset(d, ZSTD_reset_session_only);
	ZSTD_inBuffer ib = {in, n, 0};
	size_t got = 0;
	for (;;) {
		if (got == (*cap - at < most ? *cap - at : most)) { /* no room left */
			if (got >= most) {
				*why = "a zstd frame larger than a job holds";
				return DAMAGED;
			}
			size_t room = got < (1u << 20) ? (1u << 20) : got;
			if (grow(out, cap, at + got + (room < most - got ? room : most - got)))
				return -ENOMEM;
		}
		ZSTD_outBuffer ob = {*out + at, *cap - at < most ? *cap - at : most, got};
		size_t r = ZSTD_decompressStream(d, &ob, &ib);
		got = ob.pos;
		if (ZSTD_isError(r)) {
			*why = ZSTD_getErrorName(r);
			return DAMAGED;
		}
		if (r == 0 && ib.pos == n) {
			*made = got;
			return 0;
		}
		if (r == 0 || (ib.pos == n && ob.pos < ob.size)) {
			*why = "a zstd frame that ends where it should not";
			return DAMAGED;
		}
	}
}

static const struct codec BGZF = {bgzf_member, bgzf_new, bgzf_free, bgzf_decode, 0};
static const struct codec ZSTD = {zstd_member, zstd_new, zstd_free, zstd_decode, 1};

/* The engine */

enum { FREE, TAKEN, DONE };

struct job {
	unsigned char *in;
	size_t in_n, in_cap;
	unsigned char *out;
	size_t out_n, out_cap, out_pos;
	size_t members;   /* whole members in in[0, in_n) */
	uint64_t at;      /* the file offset of in[0] */
	int state, rc;    /* rc: a failed read or allocation (-errno) */
	int bad;          /* after the output: an error [BFI_E_INPUT] with err, */
	int apart;        /* or zin.c reads on from */
	uint64_t resume;  /* this offset */
	char err[256];
};

struct frames {
	const struct codec *codec;
	int fd;
	const char *label;
	unsigned threads, jobs;
	size_t job_in;   /* compressed bytes a job, about: whole members */
	size_t out_most; /* the largest member output taken */
	size_t in_most;  /* the most bytes read to find one member's end */
	struct job *job;
	uint64_t filled, read; /* jobs filled (and so taken by a decoder), and read back, in order */
	int filling, ended;    /* a decoder is reading the file; the file has no more jobs */
	uint64_t offset;       /* of the next byte to read from the file */
	unsigned char *carry;  /* the members cut by the last read */
	size_t carry_n, carry_cap;
	int eof, stop;
	int whole; /* past a member that is not decompressed apart, the rest read by zin.c here */
	struct zin z;
	pthread_t tid[POOL_MAX_THREADS];
	unsigned started;
	double cpu[POOL_MAX_THREADS]; /* each decoder's CPU time */
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

static const unsigned char BGZF_EOF[28] = {0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 0xff, 6, 0, 0x42, 0x43,
                                           2,    0,    0x1b, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0};

/* The codec that decompresses fd's file apart, or NULL (zin.c reads it whole). */
static const struct codec *codec_of(int fd, uint64_t size, size_t out_most)
{
	unsigned char head[ZSTD_HEAD], tail[28];
	size_t out;
	const char *why;
	if (size < 46 || pread(fd, head, sizeof head, 0) != (ssize_t)sizeof head)
		return NULL;
	if (bgzf_member(head, sizeof head, BGZF_MAX, &out, &why) == M_MORE && head[0] == 0x1f &&
	    pread(fd, tail, sizeof tail, (off_t)(size - 28)) == (ssize_t)sizeof tail &&
	    memcmp(tail, BGZF_EOF, sizeof tail) == 0)
		return &BGZF; /* a BGZF header: its member is longer than the bytes looked at */
	/* zstd: the first frame after any skippable ones, its size named and not too large */
	uint64_t at = 0;
	for (int i = 0; i < 64 && at + ZSTD_HEAD <= size; i++) {
		if (pread(fd, head, sizeof head, (off_t)at) != (ssize_t)sizeof head)
			return NULL;
		if (zstd_skippable(head)) {
			at += 8 + (uint64_t)bfi_get32(head + 4);
			continue;
		}
		if (memcmp(head, "\x28\xb5\x2f\xfd", 4))
			return NULL;
		unsigned long long content = ZSTD_getFrameContentSize(head, sizeof head);
		if (content <= out_most)
			return &ZSTD;
		if (content != ZSTD_CONTENTSIZE_UNKNOWN)
			return NULL;
		/* a frame that names no size (pzstd's): taken when it ends within what a job may read */
		size_t in_most = ZSTD_compressBound(out_most) + ZSTD_HEAD;
		size_t n = size - at < in_most ? (size_t)(size - at) : in_most;
		unsigned char *buf = malloc(n);
		int ok = buf && pread(fd, buf, n, (off_t)at) == (ssize_t)n &&
		         !ZSTD_isError(ZSTD_findFrameCompressedSize(buf, n));
		free(buf);
		return ok ? &ZSTD : NULL;
	}
	return NULL;
}

static void *decoder(void *arg);

struct dec_arg {
	struct frames *g;
	unsigned t;
};

int frames_open(struct frames **out, const char *path, unsigned threads, uint64_t memory,
                char *err, size_t errlen)
{
	*out = NULL;
	if (threads < 2)
		return 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0; /* zin.c says why */
	struct stat st;
	if (threads > POOL_MAX_THREADS)
		threads = POOL_MAX_THREADS;
	unsigned jobs = 2 * threads;
	/* zstd frames as large as a job's share of memory, half of it output */
	uint64_t most = memory / (2 * (uint64_t)jobs);
	size_t out_most = most > ZSTD_FRAME_MOST ? ZSTD_FRAME_MOST : (size_t)most;
	const struct codec *c = fstat(fd, &st) == 0 && S_ISREG(st.st_mode)
	                                ? codec_of(fd, (uint64_t)st.st_size, out_most)
	                                : NULL;
	if (c == NULL) {
		close(fd);
		return 0;
	}
	struct frames *g = calloc(1, sizeof *g);
	if (g == NULL) {
		close(fd);
		snprintf(err, errlen, "%s: %s", path, strerror(ENOMEM));
		return -ENOMEM;
	}
	g->codec = c;
	g->fd = fd;
	g->label = path;
	g->threads = threads;
	g->jobs = jobs;
	g->out_most = c == &BGZF ? BGZF_MAX : out_most;
	g->in_most = c == &BGZF ? BGZF_MAX : ZSTD_compressBound(out_most) + ZSTD_HEAD;
	/* the jobs' input (job_in), output (at most 4 job_in) and the carry within memory */
	uint64_t job = memory / (6 * (uint64_t)g->jobs + 2);
	g->job_in = job < 2 * BGZF_MAX ? 2 * BGZF_MAX : job > (1u << 20) ? (1u << 20) : (size_t)job;
	g->job = calloc(g->jobs, sizeof *g->job);
	pthread_mutex_init(&g->mu, NULL);
	pthread_cond_init(&g->cv, NULL);
	if (g->job == NULL) {
		frames_close(g);
		snprintf(err, errlen, "%s: %s", path, strerror(ENOMEM));
		return -ENOMEM;
	}
	for (; g->started < g->threads; g->started++) {
		/* each decoder's argument lives as long as the reader: one reader at a time */
		struct dec_arg *a = malloc(sizeof *a);
		if (a == NULL)
			break;
		*a = (struct dec_arg){g, g->started};
		if (pthread_create(&g->tid[g->started], NULL, decoder, a) != 0) {
			free(a);
			break;
		}
	}
	if (g->started == 0) { /* no threads to be had: zin.c reads it on this one */
		frames_close(g);
		return 0;
	}
	*out = g;
	return 1;
}

/* Read into j until it holds want bytes or the file ends: 0, or -errno. */
static int read_into(struct frames *g, struct job *j, size_t want)
{
	int rc = grow(&j->in, &j->in_cap, want);
	while (rc == 0 && j->in_n < want && !g->eof) {
		ssize_t got = read(g->fd, j->in + j->in_n, want - j->in_n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -errno;
		if (got == 0)
			g->eof = 1;
		j->in_n += (size_t)got;
		__atomic_fetch_add(&g->offset, (uint64_t)got, __ATOMIC_RELAXED); /* progress reads it */
	}
	return rc;
}

/* Fill job j with whole members from the file: 0, or -errno. */
static int fill_job(struct frames *g, struct job *j)
{
	int rc = grow(&j->in, &j->in_cap, g->carry_n > g->job_in ? g->carry_n : g->job_in);
	if (rc)
		return rc;
	if (g->carry_n)
		memcpy(j->in, g->carry, g->carry_n);
	j->in_n = g->carry_n;
	j->at = g->offset - g->carry_n;
	g->carry_n = 0;
	if ((rc = read_into(g, j, g->job_in)) != 0)
		return rc;
	/* whole members only; the one cut by the read waits for the next job */
	size_t at = 0, out = 0, expect = 0, members = 0;
	j->bad = j->apart = 0;
	while (at < j->in_n) {
		size_t mout = 0;
		const char *why = NULL;
		long long size = g->codec->member(j->in + at, j->in_n - at, g->out_most, &mout, &why);
		if (size == M_MORE && at == 0 && !g->eof && j->in_n < g->in_most) {
			/* a member longer than a job: read on until it ends */
			size_t want = 2 * j->in_n < g->in_most ? 2 * j->in_n : g->in_most;
			if ((rc = read_into(g, j, want)) != 0)
				return rc;
			continue;
		}
		if (size == M_MORE && !g->eof && at > 0)
			break; /* cut by the read */
		if (size == M_MORE && g->codec == &BGZF) {
			why = "the gzip data ends early (truncated file)";
			size = M_BAD;
		}
		if (size == M_MORE || size == M_APART) { /* zin.c reads on from here */
			j->apart = 1;
			j->resume = j->at + at;
			break;
		}
		if (size == M_BAD) { /* the members before it are read first, then this error */
			snprintf(j->err, sizeof j->err, "%s: %s (at byte %llu of the file)", g->label, why,
			         (unsigned long long)(j->at + at));
			j->bad = BFI_E_INPUT;
			break;
		}
		/* a member that names no size counted as four times its input, for the break */
		size_t count = mout == OUT_UNKNOWN ? 4 * (size_t)size : mout;
		if (members > 0 && expect + count > 4 * g->job_in)
			break; /* output enough: the members that compress most wait for the next job */
		expect += count;
		out += mout == OUT_UNKNOWN ? 0 : mout;
		at += (size_t)size;
		members++;
	}
	/* the rest for the next job (none after a member not decompressed here) */
	size_t rest = j->bad || j->apart ? 0 : j->in_n - at;
	if ((rc = grow(&g->carry, &g->carry_cap, rest)) != 0)
		return rc;
	if (rest)
		memcpy(g->carry, j->in + at, rest);
	g->carry_n = rest;
	j->in_n = at;
	j->members = members;
	j->out_pos = 0;
	return grow(&j->out, &j->out_cap, out); /* what the members name; the decoder grows it */
}

/*
 * Decompress job j's members into its output; at a damaged one, the
 * output before it and its error. 0, or -ENOMEM.
 */
static int decode_job(struct frames *g, void *dec, struct job *j)
{
	size_t at = 0, out = 0;
	j->out_n = 0;
	for (size_t m = 0; m < j->members; m++) {
		size_t mout = 0, used = 0, made = 0;
		const char *why = NULL;
		long long size = g->codec->member(j->in + at, j->in_n - at, g->out_most, &mout, &why);
		int rc = g->codec->decode(dec, j->in + at, (size_t)size, &j->out, &j->out_cap, out, mout,
		                          g->out_most, &made, &used, &why);
		if (rc < 0)
			return rc;
		if (rc) {
			j->out_n = out;
			if (g->codec->apart_on_damage) { /* zin.c reads it again, and says what is wrong */
				j->apart = 1;
				j->resume = j->at + at;
			} else {
				snprintf(j->err, sizeof j->err, "%s: %s (at byte %llu of the file)", g->label,
				         why, (unsigned long long)(j->at + at + used));
				j->bad = BFI_E_INPUT;
				j->apart = 0;
			}
			return 0;
		}
		at += (size_t)size;
		out += made;
	}
	j->out_n = out;
	return 0;
}

/*
 * A decoder: the next job filled from the file, in turn with the other
 * decoders (the file is read in order), then decompressed, while the
 * reader takes the jobs before it; as many jobs in hand as slots, so the
 * decoding runs ahead of the reader, not at its call.
 */
static void *decoder(void *arg)
{
	struct dec_arg *a = arg;
	struct frames *g = a->g;
	unsigned t = a->t;
	free(a);
	double t0 = stats_thread_cpu();
	void *dec = g->codec->dec_new();
	pthread_mutex_lock(&g->mu);
	for (;;) {
		while (!g->stop && !g->ended && (g->filling || g->filled >= g->read + g->jobs))
			pthread_cond_wait(&g->cv, &g->mu);
		if (g->stop || g->ended)
			break;
		if (g->eof && g->carry_n == 0) { /* nothing more to fill */
			g->ended = 1;
			pthread_cond_broadcast(&g->cv);
			break;
		}
		struct job *j = &g->job[g->filled % g->jobs];
		g->filling = 1;
		pthread_mutex_unlock(&g->mu);
		int rc = fill_job(g, j);
		pthread_mutex_lock(&g->mu);
		g->filled++;
		g->filling = 0;
		if (rc || j->bad || j->apart) /* nothing after it from here, or a failed read */
			g->eof = 1, g->carry_n = 0;
		j->state = TAKEN;
		pthread_cond_broadcast(&g->cv);
		pthread_mutex_unlock(&g->mu);
		if (rc == 0 && dec == NULL)
			rc = -ENOMEM;
		if (rc == 0)
			rc = decode_job(g, dec, j);
		pthread_mutex_lock(&g->mu);
		j->rc = rc;
		j->state = DONE;
		pthread_cond_broadcast(&g->cv);
	}
	pthread_mutex_unlock(&g->mu);
	if (dec)
		g->codec->dec_free(dec);
	g->cpu[t] = stats_thread_cpu() - t0;
	return NULL;
}

/* The rest of the file from offset from, as zin.c reads it, on this thread. */
static ssize_t read_whole(struct frames *g, uint64_t from, void *buf, size_t n, char *err,
                          size_t errlen)
{
	int rc = zin_open(&g->z, g->label, err, errlen);
	if (rc == 0 && lseek(g->z.fd, (off_t)from, SEEK_SET) < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", g->label, strerror(errno));
		zin_close(&g->z);
	}
	if (rc)
		return rc;
	g->z.offset = from; /* its messages count from the file's start */
	g->whole = 1;
	return zin_read(&g->z, buf, n, err, errlen);
}

ssize_t frames_read(struct frames *g, void *buf, size_t n, char *err, size_t errlen)
{
	if (g->whole)
		return zin_read(&g->z, buf, n, err, errlen);
	for (;;) {
		pthread_mutex_lock(&g->mu);
		struct job *j = &g->job[g->read % g->jobs];
		while (!(g->read < g->filled && j->state == DONE) && !(g->ended && g->read == g->filled))
			pthread_cond_wait(&g->cv, &g->mu);
		int end = g->read == g->filled;
		pthread_mutex_unlock(&g->mu);
		if (end)
			return 0;
		if (j->rc) {
			snprintf(err, errlen, "%s: %s", g->label, strerror(-j->rc));
			return j->rc;
		}
		if (j->out_pos < j->out_n) {
			size_t take = j->out_n - j->out_pos < n ? j->out_n - j->out_pos : n;
			memcpy(buf, j->out + j->out_pos, take);
			j->out_pos += take;
			return (ssize_t)take;
		}
		if (j->apart) {
			/* no job after this one: the decoders stop, and zin.c reads on from it */
			pthread_mutex_lock(&g->mu);
			g->stop = 1;
			pthread_cond_broadcast(&g->cv);
			pthread_mutex_unlock(&g->mu);
			return read_whole(g, j->resume, buf, n, err, errlen);
		}
		if (j->bad) {
			snprintf(err, errlen, "%s", j->err);
			return j->bad;
		}
		pthread_mutex_lock(&g->mu);
		j->state = FREE;
		g->read++;
		pthread_cond_broadcast(&g->cv); /* a slot for the decoders to fill */
		pthread_mutex_unlock(&g->mu);
	}
}

uint64_t frames_offset(const struct frames *g)
{
	return g->whole ? g->z.offset + g->z.pos : __atomic_load_n(&g->offset, __ATOMIC_RELAXED);
}

double frames_close(struct frames *g)
{
	double most = 0;
	if (g == NULL)
		return 0;
	pthread_mutex_lock(&g->mu);
	g->stop = 1;
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->mu);
	for (unsigned t = 0; t < g->started; t++) {
		pthread_join(g->tid[t], NULL);
		most = g->cpu[t] > most ? g->cpu[t] : most;
	}
	for (unsigned i = 0; g->job && i < g->jobs; i++) {
		free(g->job[i].in);
		free(g->job[i].out);
	}
	free(g->job);
	free(g->carry);
	if (g->whole)
		zin_close(&g->z);
	close(g->fd);
	pthread_cond_destroy(&g->cv);
	pthread_mutex_destroy(&g->mu);
	free(g);
	return most;
}
