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
	uint64_t next;   /* atomic: the next item to take */
	int rc;          /* atomic: the first error, which stops the others taking items */
	double *item_cpu; /* --stats: each item's CPU time, or NULL */
};

struct pool_arg {
	struct pool_job *job;
	unsigned thread;
	double cpu; /* --stats: this thread's CPU time on items */
};

static void *worker(void *p)
{
	struct pool_arg *a = p;
	struct pool_job *j = a->job;
	for (;;) {
		if (__atomic_load_n(&j->rc, __ATOMIC_RELAXED))
			break;
		uint64_t i = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
		if (i >= j->n)
			break;
		double t0 = j->item_cpu ? stats_thread_cpu() : 0;
		stats_nested = 0;
		stats_timed = j->item_cpu != NULL;
		int rc = j->fn(j->ctx, i, a->thread);
		stats_timed = 0;
		if (j->item_cpu) {
			double t = stats_thread_cpu() - t0 + stats_nested;
			j->item_cpu[i] = t;
			a->cpu += t;
		}
		if (rc) {
			int none = 0;
			__atomic_compare_exchange_n(&j->rc, &none, rc, 0, __ATOMIC_RELAXED,
			                            __ATOMIC_RELAXED);
		}
	}
	return NULL;
}

unsigned pool_threads(unsigned asked)
{
	if (asked)
		return asked > POOL_MAX_THREADS ? POOL_MAX_THREADS : asked;
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > POOL_MAX_THREADS ? POOL_MAX_THREADS : (unsigned)n;
}

/* Make the heap of free times h[0..n) hold its least at h[0] again after h[0] grew. */
static void sift_down(double *h, unsigned n)
{
	for (unsigned i = 0;;) {
		unsigned l = 2 * i + 1, r = l + 1, m = i;
		if (l < n && h[l] < h[m])
			m = l;
		if (r < n && h[r] < h[m])
			m = r;
		if (m == i)
			return;
		double x = h[i];
		h[i] = h[m];
		h[m] = x;
		i = m;
	}
}

/*
 * The CPU time of the thread that finishes last when threads threads, each
 * on a core of its own, take the n items in turn, each as soon as it is
 * free: the pool's schedule, whatever cores ran it (stats.c).
 */
static double schedule_span(const double *item_cpu, uint64_t n, unsigned threads)
{
	double free_at[POOL_MAX_THREADS] = {0}, span = 0;
	for (uint64_t i = 0; i < n; i++) {
		free_at[0] += item_cpu[i]; /* the thread free first takes it */
		span = free_at[0] > span ? free_at[0] : span;
		sift_down(free_at, threads);
	}
	return span;
}

int pool_run(unsigned threads, uint64_t n, int (*fn)(void *ctx, uint64_t item, unsigned thread),
             void *ctx)
{
	struct stats *st = stats_now;
	/* a pool an item of a timed pool runs: its span counts in that item's time */
	int nested = st == NULL && stats_timed;
	struct pool_job job = {fn, ctx, n, 0, 0, NULL};
	pthread_t tid[POOL_MAX_THREADS];
	struct pool_arg arg[POOL_MAX_THREADS];
	if (threads > n)
		threads = n ? (unsigned)n : 1;
	if (threads > POOL_MAX_THREADS)
		threads = POOL_MAX_THREADS;
	if ((st || nested) && n)
		job.item_cpu = calloc(n, sizeof *job.item_cpu); /* NULL: timed by thread below */
	double main0 = st || nested ? stats_thread_cpu() : 0;
	unsigned started = 1;
	for (unsigned t = 1; t < threads; t++) {
		arg[t] = (struct pool_arg){&job, t, 0};
		if (pthread_create(&tid[t], NULL, worker, &arg[t]) != 0)
			break; /* fewer threads: the same work, slower */
		started++;
	}
	arg[0] = (struct pool_arg){&job, 0, 0};
	stats_now = NULL; /* a pool an item runs is part of that item's time */
	double outer_nested = stats_nested; /* the item this pool runs in, if any */
	int outer_timed = stats_timed;
	worker(&arg[0]);
	stats_nested = outer_nested;
	stats_timed = outer_timed;
	stats_now = st;
	for (unsigned t = 1; t < started; t++)
		pthread_join(tid[t], NULL);
	if (nested) {
		double span = job.item_cpu ? schedule_span(job.item_cpu, n, threads) : 0;
		for (unsigned t = 0; !job.item_cpu && t < started; t++)
			span = arg[t].cpu > span ? arg[t].cpu : span;
		double own = stats_thread_cpu() - main0;
		stats_nested += span > own ? span - own : 0;
		free(job.item_cpu);
	}
	if (st) {
		st->in_pools += stats_thread_cpu() - main0;
		if (job.item_cpu) {
			st->critical += schedule_span(job.item_cpu, n, threads);
		} else { /* no room for the items' times: the busiest thread as it ran */
			double busiest = 0;
			for (unsigned t = 0; t < started; t++)
				busiest = arg[t].cpu > busiest ? arg[t].cpu : busiest;
			st->critical += busiest;
		}
		free(job.item_cpu);
	}
	return job.rc;
}
