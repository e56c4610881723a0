/*
 * stats.c - what each phase of a build took: its wall time, the CPU time
 * of all its threads, and the CPU time of its busiest thread. Work over
 * the busiest thread is the speed-up the phase allows on that many cores
 * (memory bandwidth aside), which a machine with fewer cores than threads
 * can still measure: the threads' shares of the work do not depend on how
 * many cores run them.
 *
 * Threads are counted by their index in pool_run: index 0 is the thread
 * that calls the writer, which also does every serial step; a pool's
 * index t adds its CPU time to the phase's slot t, however many pools the
 * phase runs. The busiest slot is the phase's critical path.
 */
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "internal.h"

/* Where this thread's pools add their threads' CPU time: the running phase's slots, or NULL. */
_Thread_local double *stats_slots;

static double clock_s(clockid_t id)
{
	struct timespec t;
	clock_gettime(id, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double process_cpu(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

void stats_end(bfi_writer *w)
{
	struct stats *s = &w->stats;
	if (!s->running)
		return;
	struct bfi_phase_stats *p = &s->phase[s->n - 1];
	p->wall += clock_s(CLOCK_MONOTONIC) - s->wall0;
	p->cpu += process_cpu() - s->cpu0;
	s->slot[0] += clock_s(CLOCK_THREAD_CPUTIME_ID) - s->main0;
	double busiest = 0;
	for (unsigned t = 0; t < POOL_MAX_THREADS; t++)
		busiest = s->slot[t] > busiest ? s->slot[t] : busiest;
	p->busiest = busiest;
	s->running = 0;
	stats_slots = NULL;
}

void stats_begin(bfi_writer *w, const char *name)
{
	struct stats *s = &w->stats;
	stats_end(w);
	/* a phase met again (files read at each add) goes on adding to its entry */
	unsigned i = 0;
	while (i < s->n && strcmp(s->phase[i].name, name))
		i++;
	if (i == s->n) {
		if (s->n == STATS_PHASES)
			return;
		s->phase[s->n++] = (struct bfi_phase_stats){name, 0, 0, 0};
		memset(s->slot, 0, sizeof s->slot);
	} else if (i != s->n - 1) {
		return; /* an earlier phase again, out of order: not timed rather than mixed */
	}
	s->running = 1;
	s->wall0 = clock_s(CLOCK_MONOTONIC);
	s->cpu0 = process_cpu();
	s->main0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
	stats_slots = s->slot;
}

double stats_thread_cpu(void)
{
	return clock_s(CLOCK_THREAD_CPUTIME_ID);
}

int bfi_writer_phase(const bfi_writer *w, unsigned i, struct bfi_phase_stats *out)
{
	if (w == NULL || out == NULL)
		return BFI_E_INVALID;
	if (i >= w->stats.n)
		return BFI_E_NOT_FOUND;
	*out = w->stats.phase[i];
	return 0;
}
