/*
 * query_pool.c - bfi query --threads: queries answered on N threads over
 * one mapping, their answers written in input order, byte for byte what
 * one thread writes.
 *
 * The caller's thread reads the queries and copies them into chunks
 * (CHUNK_QUERIES queries or CHUNK_BYTES bytes at most); each chunk is answered
 * whole by one worker into that worker's own answer buffer (out.c keeps
 * one per thread), and handed back; the caller writes the chunks' answers
 * in the order the chunks were made. At most 2 N chunks are in flight, so
 * memory is bounded whatever the input. A chunk whose query fails stops
 * the run there: the answers before that query are written, the error is
 * said as one thread says it, and nothing after it is written. Each worker
 * has its own result and its own cache of set names.
 *
 * The input's length is not known until it ends, so a chunk holds at most
 * an eighth of a thread's share of the queries read before it: a short
 * input (1,000 reads) is shared out in chunks of a few queries, and the
 * last chunk, which one thread answers while the others may have none,
 * is a small part of the whole; chunks reach their largest after some
 * 16 thousand queries a thread, where a chunk's hand-over costs nothing
 * beside its answers.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "query.h"
#include "tools.h"

#define CHUNK_QUERIES 1024
#define CHUNK_LEAST 4
#define CHUNK_BYTES (1u << 20)

struct chunk {
	char *text;      /* the queries' texts and labels, end to end */
	size_t len, cap;
	size_t *at;      /* query i: text at[4i] (length at[4i+1]), label at[4i+2] (at[4i+3]) */
	size_t n, at_cap;
	int has_labels;
	/* the answer, once done */
	char *out;
	size_t out_len;
	int rc;          /* 0, SAID (a bad query), or an error code */
	size_t failed;   /* the query that failed */
	char why[600];
	int done;
};

struct qpool {
	const bfi_snapshot *s;
	const struct ask *o;
	unsigned threads;
	pthread_t *tid;
	unsigned started;
	pthread_mutex_t mu;
	pthread_cond_t work, finished;
	struct chunk *ring; /* window chunks: made (head) .. written (tail) */
	size_t window, head, given, tail; /* counters: chunk c is ring[c % window] */
	size_t queued; /* queries in the chunks made so far */
	int stop;
	int tty;
	int err; /* the first failure met while writing, or 0 */
};

static void chunk_reset(struct chunk *c)
{
	c->len = c->n = 0;
	c->has_labels = 0;
	free(c->out);
	c->out = NULL;
	c->out_len = 0;
	c->rc = 0;
	c->done = 0;
	c->why[0] = 0;
}

/* Answer chunk c on this worker: wo is the worker's own copy of the options. */
static void answer_chunk(struct qpool *qp, struct chunk *c, struct ask *wo, bfi_result *res,
                         struct batcher *bt)
{
	out_hold();
	answers.tty = qp->tty; /* held, but formatted as the terminal it goes to wants */
	int rc = 0;
	size_t i = 0;
	wo->why = c->why;
	wo->why_cap = sizeof c->why;
	for (; i < c->n && rc == 0; i++) {
		struct query q = {c->text + c->at[4 * i], c->at[4 * i + 1], NULL,
		                  c->has_labels ? c->text + c->at[4 * i + 2] : NULL, c->at[4 * i + 3], 0};
		if (!wo->batch) {
			rc = query_run_one(qp->s, res, wo, &q);
			continue;
		}
		rc = batcher_add(bt, q.text, q.len);
		if (rc == 0 && bt->n == wo->batch_size)
			rc = run_batch(qp->s, wo, bt);
	}
	if (rc == 0 && wo->batch && bt->n)
		rc = run_batch(qp->s, wo, bt);
	if (rc == 0 && answers.err)
		rc = -answers.err;
	if (rc == SAID) { /* the bad query is the first one unanswered */
		size_t lines = 0;
		for (size_t a = 0; a < answers.len; a++)
			lines += answers.buf[a] == '\n';
		c->failed = lines;
	} else {
		c->failed = i ? i - 1 : 0;
	}
	c->rc = rc;
	c->out = out_take(&c->out_len);
}

static void *worker(void *p)
{
	struct qpool *qp = p;
	struct ask wo = *qp->o;
	struct names names = {.n = qp->o->names ? qp->o->names->n : 0};
	/* calloc'd pages are touched only as names are kept, as one thread's cache is */
	if (qp->o->names && qp->o->names->at)
		names.at = calloc(names.n ? names.n : 1, sizeof *names.at);
	wo.names = qp->o->names ? &names : NULL;
	bfi_result *res = NULL;
	struct batcher bt;
	memset(&bt, 0, sizeof bt);
	int ok = bfi_result_create(&res) == 0 && (!wo.batch || batcher_init(&bt, &wo) == 0);
	for (;;) {
		pthread_mutex_lock(&qp->mu);
		while (!qp->stop && qp->given == qp->head)
			pthread_cond_wait(&qp->work, &qp->mu);
		if (qp->given == qp->head) { /* stopped, and nothing left */
			pthread_mutex_unlock(&qp->mu);
			break;
		}
		struct chunk *c = &qp->ring[qp->given++ % qp->window];
		pthread_mutex_unlock(&qp->mu);
		if (ok)
			answer_chunk(qp, c, &wo, res, &bt);
		else
			c->rc = -ENOMEM;
		pthread_mutex_lock(&qp->mu);
		c->done = 1;
		pthread_cond_broadcast(&qp->finished);
		pthread_mutex_unlock(&qp->mu);
	}
	if (wo.batch)
		batcher_free(&bt);
	bfi_result_destroy(&res);
	free(names.at);
	out_free();
	return NULL;
}

int qpool_start(struct qpool **out, unsigned threads, const bfi_snapshot *s, const struct ask *o)
{
	struct qpool *qp = calloc(1, sizeof *qp);
	if (qp == NULL)
		return -ENOMEM;
	qp->s = s;
	qp->o = o;
	qp->threads = threads;
	qp->window = 2 * (size_t)threads;
	qp->tty = answers.tty;
	qp->ring = calloc(qp->window, sizeof *qp->ring);
	qp->tid = calloc(threads, sizeof *qp->tid);
	pthread_mutex_init(&qp->mu, NULL);
	pthread_cond_init(&qp->work, NULL);
	pthread_cond_init(&qp->finished, NULL);
	*out = qp;
	if (qp->ring == NULL || qp->tid == NULL)
		return -ENOMEM;
	for (unsigned t = 0; t < threads && pthread_create(&qp->tid[t], NULL, worker, qp) == 0; t++)
		qp->started++;
	return qp->started ? 0 : -EAGAIN;
}

/* Write the finished chunks from the oldest on (waiting for the oldest if wait): 0 or an error. */
static int write_done(struct qpool *qp, int wait)
{
	for (;;) {
		pthread_mutex_lock(&qp->mu);
		while (wait && qp->tail < qp->head && !qp->ring[qp->tail % qp->window].done)
			pthread_cond_wait(&qp->finished, &qp->mu);
		struct chunk *c = qp->tail < qp->head ? &qp->ring[qp->tail % qp->window] : NULL;
		int ready = c && c->done;
		pthread_mutex_unlock(&qp->mu);
		if (!ready)
			return qp->err;
		if (qp->err == 0) {
			out_put(c->out, c->out_len);
			out_end_line();
			if (out_flush() != 0)
				qp->err = -answers.err;
		}
		if (qp->err == 0 && c->rc) {
			qp->err = c->rc;
			if (c->rc == SAID) { /* said as one thread says it: the query shown */
				char qb[200];
				const char *t = c->text + c->at[4 * c->failed];
				size_t tl = c->at[4 * c->failed + 1];
				fprintf(stderr, "bfi query: %s%s %s\n", c->why,
				        qp->o->form.form == BFI_FORM_EXPR ? " of:" : ":", shown(t, tl, qb, sizeof qb));
			}
		}
		chunk_reset(c);
		pthread_mutex_lock(&qp->mu);
		qp->tail++;
		pthread_mutex_unlock(&qp->mu);
		wait = 0; /* after the one waited for, only those already done */
	}
}

/* Give the chunk being made to the workers, once the window has room for the next. */
static int submit(struct qpool *qp)
{
	struct chunk *c = &qp->ring[qp->head % qp->window];
	if (c->n == 0)
		return qp->err;
	qp->queued += c->n;
	pthread_mutex_lock(&qp->mu);
	qp->head++;
	pthread_cond_signal(&qp->work);
	pthread_mutex_unlock(&qp->mu);
	int rc = write_done(qp, 0);
	while (rc == 0 && qp->head - qp->tail >= qp->window)
		rc = write_done(qp, 1);
	return rc;
}

static int put(struct chunk *c, const char *p, size_t n, size_t *at)
{
	if (c->cap - c->len < n) {
		size_t cap = c->cap ? c->cap : 1u << 16;
		while (cap - c->len < n)
			cap *= 2;
		char *b = realloc(c->text, cap);
		if (b == NULL)
			return -ENOMEM;
		c->text = b;
		c->cap = cap;
	}
	*at = c->len;
	if (n)
		memcpy(c->text + c->len, p, n);
	c->len += n;
	return 0;
}

int qpool_add(struct qpool *qp, const char *text, size_t len, const char *label, size_t label_len)
{
	if (qp->err)
		return qp->err;
	struct chunk *c = &qp->ring[qp->head % qp->window];
	if (c->n == c->at_cap) {
		size_t cap = c->at_cap ? c->at_cap * 2 : 256;
		size_t *a = realloc(c->at, cap * 4 * sizeof *a);
		if (a == NULL)
			return -ENOMEM;
		c->at = a;
		c->at_cap = cap;
	}
	size_t *at = c->at + 4 * c->n;
	int rc = put(c, text, len, &at[0]);
	at[1] = len;
	if (rc == 0)
		rc = put(c, label ? label : "", label ? label_len : 0, &at[2]);
	at[3] = label ? label_len : 0;
	c->has_labels |= label != NULL;
	if (rc)
		return rc;
	c->n++;
	size_t most = qp->queued / (8 * (size_t)qp->threads);
	most = most < CHUNK_LEAST ? CHUNK_LEAST : most > CHUNK_QUERIES ? CHUNK_QUERIES : most;
	return c->n >= most || c->len >= CHUNK_BYTES ? submit(qp) : 0;
}

int qpool_drain(struct qpool *qp)
{
	int rc = submit(qp);
	while (rc == 0 && qp->tail < qp->head)
		rc = write_done(qp, 1);
	return rc;
}

int qpool_end(struct qpool **qpp)
{
	struct qpool *qp = *qpp;
	if (qp == NULL)
		return 0;
	int rc = qp->err ? qp->err : qpool_drain(qp);
	pthread_mutex_lock(&qp->mu);
	qp->stop = 1;
	qp->head = qp->given; /* what was not taken is not answered */
	pthread_cond_broadcast(&qp->work);
	pthread_mutex_unlock(&qp->mu);
	for (unsigned t = 0; t < qp->started; t++)
		pthread_join(qp->tid[t], NULL);
	for (size_t i = 0; qp->ring && i < qp->window; i++) {
		chunk_reset(&qp->ring[i]);
		free(qp->ring[i].text);
		free(qp->ring[i].at);
	}
	free(qp->ring);
	free(qp->tid);
	pthread_mutex_destroy(&qp->mu);
	pthread_cond_destroy(&qp->work);
	pthread_cond_destroy(&qp->finished);
	free(qp);
	*qpp = NULL;
	return rc;
}
