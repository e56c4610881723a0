/*
 * pool.c - run a job's items on the writer's threads. Items are taken in
 * turn from a shared counter, so a thread that finishes early takes more;
 * each item's work must not depend on which thread runs it, which keeps
 * the output the same whatever the thread count.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "internal.h"

struct pool_job {
	int (*fn)(void *ctx, uint64_t item, unsigned thread);
	void *ctx;
	uint64_t n;
	uint64_t next; /* atomic: the next item to take */
	int rc;        /* atomic: the first error, which stops the others taking items */
	double *slots; /* the running phase's CPU time by thread (stats.c), or NULL */
};

struct pool_arg {
	struct pool_job *job;
	unsigned thread;
};

static void *worker(void *p)
{
	struct pool_arg *a = p;
	struct pool_job *j = a->job;
	/* the calling thread (0) is timed by the phase itself */
	double cpu0 = j->slots && a->thread ? stats_thread_cpu() : 0;
	for (;;) {
		if (__atomic_load_n(&j->rc, __ATOMIC_RELAXED))
			break;
		uint64_t i = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
		if (i >= j->n)
			break;
		int rc = j->fn(j->ctx, i, a->thread);
		if (rc) {
			int none = 0;
			__atomic_compare_exchange_n(&j->rc, &none, rc, 0, __ATOMIC_RELAXED,
			                            __ATOMIC_RELAXED);
		}
	}
	if (j->slots && a->thread) /* its own slot: joined before the caller reads it */
		j->slots[a->thread] += stats_thread_cpu() - cpu0;
	return NULL;
}

unsigned pool_threads(unsigned asked)
{
	if (asked)
		return asked > POOL_MAX_THREADS ? POOL_MAX_THREADS : asked;
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > POOL_MAX_THREADS ? POOL_MAX_THREADS : (unsigned)n;
}

int pool_run(unsigned threads, uint64_t n, int (*fn)(void *ctx, uint64_t item, unsigned thread),
             void *ctx)
{
	struct pool_job job = {fn, ctx, n, 0, 0, stats_slots};
	pthread_t tid[POOL_MAX_THREADS];
	struct pool_arg arg[POOL_MAX_THREADS];
	if (threads > n)
		threads = n ? (unsigned)n : 1;
	if (threads > POOL_MAX_THREADS)
		threads = POOL_MAX_THREADS;
	unsigned started = 1;
	for (unsigned t = 1; t < threads; t++) {
		arg[t] = (struct pool_arg){&job, t};
		if (pthread_create(&tid[t], NULL, worker, &arg[t]) != 0)
			break; /* fewer threads: the same work, slower */
		started++;
	}
	arg[0] = (struct pool_arg){&job, 0};
	worker(&arg[0]);
	for (unsigned t = 1; t < started; t++)
		pthread_join(tid[t], NULL);
	return job.rc;
}
