/*
 * parts.c - one FASTA or FASTQ stream cut into parts and worked on in
 * rounds (parts.h): the calling thread reads the stream (decompressing if
 * need be) and cuts it at line starts (format/seqcut.h) while the threads
 * work on the round before.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bfi_hash.h"
#include "parts.h"
#include "sources.h"

static int part_room(struct part *p, size_t need)
{
	if (need <= p->cap)
		return 0;
	size_t cap = p->cap ? p->cap : need;
	while (cap < need)
		cap *= 2;
	char *b = realloc(p->buf, cap);
	if (b == NULL)
		return -ENOMEM;
	p->buf = b;
	p->cap = cap;
	return 0;
}

/* The next part: 1, 0 when the stream has ended, or an error with cu->err set. */
static int next_part(struct cutting *cu, struct part *p)
{
	if (cu->done)
		return 0;
	int rc = part_room(p, (cu->carry_n > cu->target ? cu->carry_n : cu->target) + READ_STEP);
	if (rc)
		return rc;
	if (cu->carry_n)
		memcpy(p->buf, cu->carry, cu->carry_n);
	p->n = cu->carry_n;
	cu->carry_n = 0;
	p->at = cu->at;
	p->seq = cu->seq++;
	p->last = p->broken = 0;
	size_t scanned = 0;
	for (;;) {
		while (scanned < p->n) {
			if (scanned >= cu->target && seq_cutter_may_cut(&cu->c))
				goto cut;
			const char *nl = memchr(p->buf + scanned, '\n', p->n - scanned);
			if (nl == NULL)
				break;
			size_t len = (size_t)(nl + 1 - (p->buf + scanned));
			if (seq_cutter_line(&cu->c, p->buf + scanned, len)) {
				scanned += len; /* the parse fails here: nothing after it is read */
				p->broken = 1;
				cu->done = 1;
				p->n = scanned;
				return 1;
			}
			scanned += len;
		}
		if (cu->eof) {
			p->last = 1;
			cu->done = 1;
			return 1;
		}
		if ((rc = part_room(p, p->n + READ_STEP)) != 0)
			return rc;
		ssize_t got = cu->fr ? frames_read(cu->fr, p->buf + p->n, READ_STEP, cu->err, sizeof cu->err)
		                     : zin_read(&cu->z, p->buf + p->n, READ_STEP, cu->err, sizeof cu->err);
		if (got < 0)
			return (int)got;
		if (got == 0)
			cu->eof = 1;
		p->n += (size_t)got;
	}
cut:;
	struct seq_at next;
	seq_cutter_at(&cu->c, p->buf, scanned, &p->at, &next);
	cu->at = next;
	size_t rest = p->n - scanned;
	if (rest > cu->carry_cap) {
		char *c = realloc(cu->carry, rest);
		if (c == NULL)
			return -ENOMEM;
		cu->carry = c;
		cu->carry_cap = rest;
	}
	if (rest)
		memcpy(cu->carry, p->buf + scanned, rest);
	cu->carry_n = rest;
	p->n = scanned;
	return 1;
}


/* Note rc, for part seq; the earliest part's error is kept. */
static void rounds_fail(struct rounds *r, int rc, uint64_t seq, const char *err)
{
	pthread_mutex_lock(&r->mu);
	if (r->rc == 0 || seq < r->rc_seq) {
		r->rc = rc;
		r->rc_seq = seq;
		snprintf(r->err, sizeof r->err, "%s", err ? err : "");
	}
	r->stop = 1;
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
}

struct rounds_arg {
	struct rounds *r;
	unsigned t;
	char err[512];
};

static double busiest(const double *cpu, unsigned n)
{
	double most = 0;
	for (unsigned t = 0; t < n; t++)
		most = cpu[t] > most ? cpu[t] : most;
	return most;
}

static void *rounds_thread(void *arg)
{
	struct rounds_arg *a = arg;
	struct rounds *r = a->r;
	unsigned t = a->t;
	for (uint64_t round = 0;; round++) {
		pthread_mutex_lock(&r->mu);
		while (r->produced <= round)
			pthread_cond_wait(&r->cv, &r->mu);
		unsigned n = r->n_parts[round % 2];
		int stop = r->stop;
		pthread_mutex_unlock(&r->mu);
		if (n == 0)
			break; /* every thread sees the same round end the stream */
		double t0 = stats_thread_cpu();
		if (t < n && !stop) {
			struct part *p = &r->parts[round % 2][t];
			a->err[0] = '\0';
			int rc = r->work(r->ctx, t, p, a->err, sizeof a->err);
			if (rc)
				rounds_fail(r, rc, p->seq, a->err);
		}
		r->work_cpu[t] = stats_thread_cpu() - t0;
		pthread_barrier_wait(&r->bar);
		if (t == 0) {
			r->span += busiest(r->work_cpu, r->threads);
			pthread_mutex_lock(&r->mu);
			r->consumed = round + 1;
			pthread_cond_broadcast(&r->cv);
			pthread_mutex_unlock(&r->mu);
		}
		if (r->after) {
			t0 = stats_thread_cpu();
			if (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
				int rc = r->after(r->ctx, t);
				if (rc)
					rounds_fail(r, rc, UINT64_MAX, NULL);
			}
			r->after_cpu[t] = stats_thread_cpu() - t0;
			pthread_barrier_wait(&r->bar);
			if (t == 0)
				r->span += busiest(r->after_cpu, r->threads);
		}
	}
	return NULL;
}

/* Account threads' work that ran beside the calling thread (stats.c). */
static void account(double own, double span)
{
	if (stats_now) {
		stats_now->in_pools += own;
		stats_now->critical += span;
	} else {
		stats_nested += span > own ? span - own : 0;
	}
}

/*
 * Cut the file cu reads into parts, and run r's steps on its threads.
 * 0, or the first error in the stream, with err set.
 */
static void progress_bytes(struct cutting *cu, uint64_t *read_at)
{
	uint64_t at = cu->fr ? frames_offset(cu->fr)
	              : cu->z.state == ZIN_PLAIN ? cu->z.offset : cu->z.offset + cu->z.pos;
	if (cu->w->opt.progress && at - *read_at >= (64u << 20)) {
		*read_at = at;
		cu->w->opt.progress(cu->w->opt.progress_ctx, "bytes", at, cu->size);
	}
}

/* One thread: each part cut, then worked on, in turn. */
static int rounds_inline(struct rounds *r, struct cutting *cu, char *err, size_t errlen)
{
	struct part p;
	memset(&p, 0, sizeof p);
	uint64_t read_at = 0;
	int rc = 0;
	err[0] = '\0';
	for (;;) {
		int got = next_part(cu, &p);
		if (got < 0) {
			rc = got;
			snprintf(err, errlen, "%s", cu->err);
			break;
		}
		if (got == 0)
			break;
		rc = r->work(r->ctx, 0, &p, err, errlen);
		if (rc == 0 && r->after)
			rc = r->after(r->ctx, 0);
		if (rc || p.last || p.broken)
			break;
		progress_bytes(cu, &read_at);
	}
	free(p.buf);
	if (rc && !err[0])
		snprintf(err, errlen, "%s: %s", cu->path, bfi_strerror(rc));
	return rc;
}

int rounds_run(struct rounds *r, struct cutting *cu, char *err, size_t errlen)
{
	unsigned T = r->threads;
	if (T == 1)
		return rounds_inline(r, cu, err, errlen);
	pthread_t tid[POOL_MAX_THREADS];
	struct rounds_arg *arg = calloc(T, sizeof *arg);
	r->parts[0] = calloc(T, sizeof *r->parts[0]);
	r->parts[1] = calloc(T, sizeof *r->parts[1]);
	r->work_cpu = calloc(T, sizeof *r->work_cpu);
	r->after_cpu = calloc(T, sizeof *r->after_cpu);
	if (!arg || !r->parts[0] || !r->parts[1] || !r->work_cpu || !r->after_cpu) {
		free(arg);
		free(r->parts[0]);
		free(r->parts[1]);
		free(r->work_cpu);
		free(r->after_cpu);
		snprintf(err, errlen, "%s: %s", cu->path, strerror(ENOMEM));
		return -ENOMEM;
	}
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, NULL);
	double own0 = stats_thread_cpu(), cut_cpu = 0;
	unsigned started = 0;
	int rc = 0;
	/* all or none: a barrier counts the threads it waits for */
	if (pthread_barrier_init(&r->bar, NULL, T) != 0)
		rc = -ENOMEM;
	for (; rc == 0 && started < T; started++) {
		arg[started] = (struct rounds_arg){r, started, ""};
		if (pthread_create(&tid[started], NULL, rounds_thread, &arg[started]) != 0)
			break;
	}
	if (rc == 0 && started < T) { /* no threads to be had: end the ones started */
		rc = -EAGAIN;
		r->stop = 1;
	}
	/* an xz file's decoders are liblzma's threads, started from here on */
	struct stats_tasks before = {0, NULL};
	if (cu->z.threads > 1)
		stats_tasks(&before);
	uint64_t read_at = 0;
	for (uint64_t round = 0;; round++) {
		pthread_mutex_lock(&r->mu);
		while (round >= r->consumed + 2 && !r->stop)
			pthread_cond_wait(&r->cv, &r->mu);
		int stop = r->stop;
		pthread_mutex_unlock(&r->mu);
		double c0 = stats_thread_cpu();
		unsigned n = 0;
		while (!stop && n < T) {
			struct part *p = &r->parts[round % 2][n];
			int got = next_part(cu, p);
			if (got < 0) {
				rounds_fail(r, got, cu->seq, cu->err[0] ? cu->err : NULL);
				break;
			}
			if (got == 0)
				break;
			n++;
			if (p->last || p->broken)
				break;
		}
		cut_cpu += stats_thread_cpu() - c0;
		pthread_mutex_lock(&r->mu);
		r->n_parts[round % 2] = n;
		r->produced = round + 1;
		pthread_cond_broadcast(&r->cv);
		pthread_mutex_unlock(&r->mu);
		if (n == 0)
			break;
		progress_bytes(cu, &read_at);
	}
	for (unsigned t = 0; t < started; t++)
		pthread_join(tid[t], NULL);
	if (started == T)
		pthread_barrier_destroy(&r->bar);
	double own = stats_thread_cpu() - own0;
	/* the cutting runs beside the threads, and the decoders' lanes (frames.c's, or xz's, the
	 * only threads new since before) beside them: whichever lane is longest */
	double dec = cu->fr ? frames_close(cu->fr) : cu->z.threads > 1 ? stats_tasks_new(&before) : 0;
	cu->fr = NULL;
	cut_cpu = cut_cpu > dec ? cut_cpu : dec;
	account(own, r->span > cut_cpu ? r->span : cut_cpu);
	for (int b = 0; b < 2; b++) {
		for (unsigned t = 0; t < T; t++)
			free(r->parts[b][t].buf);
		free(r->parts[b]);
	}
	free(r->work_cpu);
	free(r->after_cpu);
	free(arg);
	pthread_cond_destroy(&r->cv);
	pthread_mutex_destroy(&r->mu);
	if (rc == 0 && r->rc) {
		rc = r->rc;
		snprintf(err, errlen, "%s", r->err[0] ? r->err : bfi_strerror(rc));
		if (!r->err[0] && rc != BFI_E_INPUT)
			snprintf(err, errlen, "%s: %s", cu->path, bfi_strerror(rc));
	} else if (rc) {
		snprintf(err, errlen, "%s: %s", cu->path, strerror(-rc));
	}
	return rc;
}

/* Each part's target bytes: a round's parts and hashes (16 bytes a base at most) in an eighth of --memory. */
static size_t part_target(const bfi_writer *w, unsigned threads)
{
	uint64_t t = writer_budget(w) / 8 / 18 / threads;
	return t < PART_LEAST ? PART_LEAST : t > PART_MOST ? PART_MOST : (size_t)t;
}

int cutting_open(struct cutting *cu, bfi_writer *w, const char *path, unsigned k,
                        unsigned threads, char *err, size_t errlen)
{
	memset(cu, 0, sizeof *cu);
	cu->w = w;
	cu->path = path;
	cu->target = part_target(w, threads);
	struct stat st;
	cu->size = stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
	seq_cutter_init(&cu->c, k, &cu->at);
	/* BGZF, zstd in frames: decoded on a thread for every four that parse, and at least two */
	int rc = frames_open(&cu->fr, path, threads < 2 ? 0 : threads < 8 ? 2 : threads / 4,
	                   writer_budget(w) / 8, err, errlen);
	if (rc < 0)
		return rc;
	rc = zin_open(&cu->z, path, err, errlen);
	/* xz -T's blocks on liblzma's threads: one for every three that parse (xz is slower than zstd or gzip) */
	if (rc == 0 && cu->fr == NULL && threads > 1)
		zin_threads(&cu->z, threads < 6 ? 2 : threads / 3, writer_budget(w) / 8);
	if (rc && cu->fr) {
		frames_close(cu->fr);
		cu->fr = NULL;
	}
	return rc;
}

void cutting_close(struct cutting *cu)
{
	if (cu->fr)
		frames_close(cu->fr);
	zin_close(&cu->z);
	free(cu->carry);
}


static int part_record(void *ctx, const char *id, size_t id_len, const char *seq, size_t len)
{
	const struct parse_to *to = ctx;
	(void)id, (void)id_len;
	return to->keys_of(seq, len, to->k, to->key, to->ctx);
}

int parse(const struct part *p, const char *path, const struct parse_to *to, char *err,
                 size_t errlen)
{
	int rc = seq_parse_part(&p->at, p->buf, p->n, p->last, path, part_record, (void *)to, err,
	                        errlen);
	if (rc == 0 && p->broken) { /* the parse agrees with the cutter; this is belt and braces */
		snprintf(err, errlen, "%s:%llu: not FASTA or FASTQ", path,
		         (unsigned long long)p->at.line + 1);
		rc = BFI_E_INPUT;
	}
	return rc;
}
