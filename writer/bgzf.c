/*
 * bgzf.c - a BGZF file decompressed on threads and read in order, for a
 * large FASTA or FASTQ file read on every thread (split.c).
 *
 * BGZF (bgzip's, and many sequencers') is gzip cut into members of at
 * most 64 KiB, each naming its own size in a header field, so members can
 * be found without decompressing and decompressed apart. The reading
 * thread gathers whole members into jobs of about a MiB; decoding threads
 * inflate the jobs (zlib, which checks each member's CRC and length); the
 * reading thread takes their output back in the file's order. Single-
 * stream gzip cannot be cut so, and is read by zin.c on one thread.
 *
 * A file is taken for BGZF only when its first member names its size and
 * it ends with BGZF's end-of-file member: then a member that names no
 * size (gzip allows one) is read on from there by zin.c on the reading
 * thread, and one cut short, or one that claims more than 64 KiB, is an
 * error [BFI_E_INPUT] with its offset, after the output of the members
 * before it.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "internal.h"
#include "zin.h"

#define MEMBER_MAX 65536u /* BGZF's largest member */

enum { FREE, TAKEN, DONE };

struct job {
	unsigned char *in;
	size_t in_n, in_cap;
	unsigned char *out;
	size_t out_n, out_cap, out_pos;
	uint64_t at; /* the file offset of in[0] */
	int state, rc;
	int bad;       /* the reading stopped at a bad member after in[in_n): its error, after the output */
	int plain_gzip; /* or at a gzip member that names no size: zin.c reads from there, */
	uint64_t resume; /* its offset */
	char err[256];
};

struct bgzf {
	int fd;
	const char *label;
	unsigned threads, jobs;
	size_t job_in; /* compressed bytes a job, about: whole members */
	struct job *job;
	uint64_t filled, read; /* jobs filled (and so taken by a decoder), and read back, in order */
	int filling, ended;    /* a decoder is reading the file; the file has no more jobs */
	uint64_t offset;              /* of the next byte to read from the file */
	unsigned char *carry;         /* a member cut by the last read */
	size_t carry_n;
	int eof, stop;
	int whole;    /* past a member that names no size, the rest read by zin.c on this thread */
	struct zin z;
	pthread_t tid[POOL_MAX_THREADS];
	unsigned started;
	double cpu[POOL_MAX_THREADS]; /* each decoder's CPU time */
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

static const unsigned char BGZF_EOF[28] = {0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 0xff, 6, 0, 0x42, 0x43,
                                           2,    0,    0x1b, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0};

/* The size of the member at p (n bytes there), 0 if it names none, or -1 if p is too short to tell. */
static long member_size(const unsigned char *p, size_t n)
{
	if (n < 18)
		return -1;
	if (p[0] != 0x1f || p[1] != 0x8b || p[2] != 8 || !(p[3] & 4))
		return 0;
	size_t xlen = (size_t)p[10] | (size_t)p[11] << 8;
	if (n < 12 + xlen)
		return -1;
	for (size_t at = 12; at + 4 <= 12 + xlen;) {
		size_t slen = (size_t)p[at + 2] | (size_t)p[at + 3] << 8;
		if (p[at] == 'B' && p[at + 1] == 'C' && slen == 2 && at + 6 <= 12 + xlen)
			return ((long)p[at + 4] | (long)p[at + 5] << 8) + 1;
		at += 4 + slen;
	}
	return 0;
}

static void *decoder(void *arg);

struct dec_arg {
	struct bgzf *g;
	unsigned t;
};

int bgzf_open(struct bgzf **out, const char *path, unsigned threads, uint64_t memory, char *err,
              size_t errlen)
{
	*out = NULL;
	if (threads < 2)
		return 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0; /* zin.c says why */
	unsigned char head[18], tail[28];
	struct stat st;
	int is = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= 46 &&
	         pread(fd, head, sizeof head, 0) == (ssize_t)sizeof head && member_size(head, 18) > 0 &&
	         pread(fd, tail, sizeof tail, st.st_size - 28) == (ssize_t)sizeof tail &&
	         memcmp(tail, BGZF_EOF, sizeof tail) == 0;
	if (!is) {
		close(fd);
		return 0;
	}
	struct bgzf *g = calloc(1, sizeof *g);
	if (g == NULL) {
		close(fd);
		snprintf(err, errlen, "%s: %s", path, strerror(ENOMEM));
		return -ENOMEM;
	}
	g->fd = fd;
	g->label = path;
	g->threads = threads > POOL_MAX_THREADS ? POOL_MAX_THREADS : threads;
	g->jobs = 2 * g->threads;
	/* the jobs' input (job_in), output (at most 4 job_in) and the carry within memory */
	uint64_t job = memory / (6 * (uint64_t)g->jobs + 2);
	g->job_in = job < 2 * MEMBER_MAX ? 2 * MEMBER_MAX : job > (1u << 20) ? (1u << 20) : (size_t)job;
	g->job = calloc(g->jobs, sizeof *g->job);
	g->carry = malloc(g->job_in + MEMBER_MAX);
	pthread_mutex_init(&g->mu, NULL);
	pthread_cond_init(&g->cv, NULL);
	if (g->job == NULL || g->carry == NULL) {
		bgzf_close(g, NULL);
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
		bgzf_close(g, NULL);
		return 0;
	}
	*out = g;
	return 1;
}

/* Fill job j with whole members from the file: 0, or an error in the job. */
static int fill_job(struct bgzf *g, struct job *j)
{
	if (j->in_cap < g->job_in + MEMBER_MAX) {
		unsigned char *p = realloc(j->in, g->job_in + MEMBER_MAX);
		if (p == NULL)
			return -ENOMEM;
		j->in = p;
		j->in_cap = g->job_in + MEMBER_MAX;
	}
	memcpy(j->in, g->carry, g->carry_n);
	j->in_n = g->carry_n;
	j->at = g->offset - g->carry_n;
	g->carry_n = 0;
	while (j->in_n < g->job_in && !g->eof) { /* a carry as large as a job reads no more */
		ssize_t got = read(g->fd, j->in + j->in_n, g->job_in - j->in_n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -errno;
		if (got == 0)
			g->eof = 1;
		j->in_n += (size_t)got;
		__atomic_fetch_add(&g->offset, (uint64_t)got, __ATOMIC_RELAXED); /* progress reads it */
	}
	/* whole members only; the one cut by the read waits for the next job */
	size_t at = 0, out = 0;
	j->rc = j->bad = j->plain_gzip = 0;
	while (at < j->in_n) {
		long size = member_size(j->in + at, j->in_n - at);
		const char *what = NULL;
		if (size < 0 || (size > 0 && at + (size_t)size > j->in_n)) {
			if (!g->eof)
				break; /* cut by the read */
			what = "the gzip data ends early (truncated file)";
		} else if (size == 0) { /* gzip, not BGZF: read on from here as zin.c reads gzip */
			j->plain_gzip = 1;
			j->bad = 1; /* nothing after it for the decoders */
			j->resume = j->at + at;
			j->in_n = at;
			break;
		} else if (size < 28) {
			what = "a BGZF member too short to be one";
		} else {
			const unsigned char *t = j->in + at + size - 4; /* ISIZE */
			size_t isize = (size_t)t[0] | (size_t)t[1] << 8 | (size_t)t[2] << 16 |
			               (size_t)t[3] << 24;
			if (isize > MEMBER_MAX)
				what = "a BGZF member that claims more than 64 KiB";
			else if (at > 0 && out + isize > 4 * g->job_in)
				break; /* output enough: the members that compress most wait for the next job */
			else
				out += isize;
		}
		if (what) { /* the members before it are read first, then this error */
			snprintf(j->err, sizeof j->err, "%s: %s (at byte %llu of the file)", g->label, what,
			         (unsigned long long)(j->at + at));
			j->bad = BFI_E_INPUT;
			break;
		}
		at += (size_t)size;
	}
	g->carry_n = j->bad ? 0 : j->in_n - at; /* the rest for the next job (none after a bad member) */
	memcpy(g->carry, j->in + at, g->carry_n);
	j->in_n = at;
	if (out > j->out_cap) {
		unsigned char *p = realloc(j->out, out);
		if (p == NULL)
			return -ENOMEM;
		j->out = p;
		j->out_cap = out;
	}
	j->out_n = out;
	j->out_pos = 0;
	return 0;
}

/* Inflate job j's members into its output: 0, or BFI_E_INPUT with its message. */
static int inflate_job(z_stream *z, struct job *j, const char *label)
{
	size_t at = 0, out = 0;
	while (at < j->in_n) {
		long size = member_size(j->in + at, j->in_n - at);
		const unsigned char *t = j->in + at + size - 4;
		size_t isize = (size_t)t[0] | (size_t)t[1] << 8 | (size_t)t[2] << 16 | (size_t)t[3] << 24;
		inflateReset(z);
		z->next_in = j->in + at;
		z->avail_in = (uInt)size;
		z->next_out = j->out + out;
		z->avail_out = (uInt)isize;
		int rc = inflate(z, Z_FINISH);
		if (rc != Z_STREAM_END || z->avail_in != 0 || z->avail_out != 0) {
			/* the input zlib had taken when it stopped, as zin.c counts it */
			snprintf(j->err, sizeof j->err, "%s: %s (at byte %llu of the file)", label,
			         z->msg ? z->msg : "corrupt gzip data",
			         (unsigned long long)(j->at + (size_t)(z->next_in - j->in)));
			return BFI_E_INPUT;
		}
		at += (size_t)size;
		out += isize;
	}
	return 0;
}

/*
 * A decoder: the next job filled from the file, in turn with the other
 * decoders (the file is read in order), then inflated, while the reader
 * takes the jobs before it; as many jobs in hand as slots, so the decoding
 * runs ahead of the reader, not at its call.
 */
static void *decoder(void *arg)
{
	struct dec_arg *a = arg;
	struct bgzf *g = a->g;
	unsigned t = a->t;
	free(a);
	double t0 = stats_thread_cpu();
	z_stream z;
	memset(&z, 0, sizeof z);
	int ok = inflateInit2(&z, 15 + 16) == Z_OK;
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
		if (rc || j->bad) /* nothing after a bad member, or a failed read */
			g->eof = 1, g->carry_n = 0;
		j->state = TAKEN;
		pthread_cond_broadcast(&g->cv);
		pthread_mutex_unlock(&g->mu);
		if (rc == 0)
			rc = ok ? inflate_job(&z, j, g->label) : -ENOMEM;
		pthread_mutex_lock(&g->mu);
		j->rc = rc;
		j->state = DONE;
		pthread_cond_broadcast(&g->cv);
	}
	pthread_mutex_unlock(&g->mu);
	if (ok)
		inflateEnd(&z);
	g->cpu[t] = stats_thread_cpu() - t0;
	return NULL;
}

ssize_t bgzf_read(struct bgzf *g, void *buf, size_t n, char *err, size_t errlen)
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
		if (j->rc && j->rc != BFI_E_INPUT) {
			snprintf(err, errlen, "%s: %s", g->label, strerror(-j->rc));
			return j->rc;
		}
		if (j->rc) {
			snprintf(err, errlen, "%s", j->err[0] ? j->err : "corrupt gzip data");
			return j->rc;
		}
		if (j->out_pos < j->out_n) {
			size_t take = j->out_n - j->out_pos < n ? j->out_n - j->out_pos : n;
			memcpy(buf, j->out + j->out_pos, take);
			j->out_pos += take;
			return (ssize_t)take;
		}
		if (j->plain_gzip) { /* the rest as zin.c reads gzip, from the member on */
			uint64_t from = j->resume;
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

uint64_t bgzf_offset(const struct bgzf *g)
{
	return g->whole ? g->z.offset + g->z.pos : __atomic_load_n(&g->offset, __ATOMIC_RELAXED);
}

double bgzf_close(struct bgzf *g, double *total)
{
	double most = 0, all = 0;
	if (g == NULL)
		return 0;
	pthread_mutex_lock(&g->mu);
	g->stop = 1;
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->mu);
	for (unsigned t = 0; t < g->started; t++) {
		pthread_join(g->tid[t], NULL);
		most = g->cpu[t] > most ? g->cpu[t] : most;
		all += g->cpu[t];
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
	if (total)
		*total = all;
	return most;
}
