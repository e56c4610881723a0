/*
 * stats.c - what each phase of a build took: its wall time, the CPU time
 * of all its threads, and its critical path: the CPU time of the thread
 * that would finish last were each thread on a core of its own. Work over
 * that is the speed-up the phase allows on that many cores (memory
 * bandwidth aside), which a machine with fewer cores than threads can
 * still measure.
 *
 * The critical path is the calling thread's serial work plus, for each
 * pool_run, the busiest thread of the schedule its items get when every
 * thread runs at once: each item's CPU time is measured, and the items are
 * dealt in turn to the thread that is free first, as the pool's shared
 * counter deals them. The threads' own CPU times would not do: with more
 * threads than cores, a thread the system runs more often takes more
 * items, and looks busier than it would be on a core of its own.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <time.h>

#include "internal.h"

/* The running phase's stats, on the thread that runs it, or NULL. */
_Thread_local struct stats *stats_now;
_Thread_local double stats_nested;
_Thread_local int stats_timed;

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

double stats_lane_now(void)
{
	struct stats *s = stats_now;
	if (s == NULL)
		return 0;
	double serial = clock_s(CLOCK_THREAD_CPUTIME_ID) - s->main0 - s->in_pools;
	return (serial > 0 ? serial : 0) + s->critical;
}

void stats_end(bfi_writer *w)
{
	struct stats *s = &w->stats;
	if (!s->running)
		return;
	struct bfi_phase_stats *p = &s->phase[s->n - 1];
	p->wall += clock_s(CLOCK_MONOTONIC) - s->wall0;
	p->cpu += process_cpu() - s->cpu0;
	double serial = clock_s(CLOCK_THREAD_CPUTIME_ID) - s->main0 - s->in_pools;
	/* background writes run beside the main thread's lane: the later to end */
	double lane = (serial > 0 ? serial : 0) + s->critical;
	p->busiest += lane > s->side ? lane : s->side;
	s->running = 0;
	stats_now = NULL;
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
	} else if (i != s->n - 1) {
		return; /* an earlier phase again, out of order: not timed rather than mixed */
	}
	s->running = 1;
	s->wall0 = clock_s(CLOCK_MONOTONIC);
	s->cpu0 = process_cpu();
	s->main0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
	s->in_pools = s->critical = s->side = 0;
	stats_now = s;
}

/* The ids of this process's threads into t (none when /proc cannot say). */
void stats_tasks(struct stats_tasks *t)
{
	t->n = 0;
	t->tid = NULL;
	DIR *d = opendir("/proc/self/task");
	if (d == NULL)
		return;
	unsigned cap = 0;
	for (struct dirent *e; (e = readdir(d)) != NULL;) {
		char *end;
		long id = strtol(e->d_name, &end, 10);
		if (*end || id <= 0)
			continue;
		if (t->n == cap) {
			long *p = realloc(t->tid, (cap ? 2 * cap : 64) * sizeof *p);
			if (p == NULL)
				break;
			t->tid = p;
			cap = cap ? 2 * cap : 64;
		}
		t->tid[t->n++] = id;
	}
	closedir(d);
}

/* Thread id's CPU seconds (user and system), or -1. */
static double task_cpu(long id)
{
	char path[64], line[1024];
	snprintf(path, sizeof path, "/proc/self/task/%ld/stat", id);
	FILE *f = fopen(path, "re");
	if (f == NULL)
		return -1;
	size_t n = fread(line, 1, sizeof line - 1, f);
	fclose(f);
	line[n] = '\0';
	char *p = strrchr(line, ')'); /* the name may hold spaces and parentheses */
	unsigned long long ut, st;
	/* after the name: state, then 10 fields before utime and stime */
	if (p == NULL || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut,
	                        &st) != 2)
		return -1;
	long hz = sysconf(_SC_CLK_TCK);
	return hz > 0 ? (double)(ut + st) / (double)hz : -1;
}

double stats_tasks_new(struct stats_tasks *before)
{
	struct stats_tasks now;
	stats_tasks(&now);
	double most = 0;
	for (unsigned i = 0; i < now.n; i++) {
		unsigned j = 0;
		while (j < before->n && before->tid[j] != now.tid[i])
			j++;
		double c = j < before->n ? -1 : task_cpu(now.tid[i]);
		most = c > most ? c : most;
	}
	free(now.tid);
	free(before->tid);
	before->tid = NULL;
	before->n = 0;
	return most;
}

double stats_thread_cpu(void)
{
	return clock_s(CLOCK_THREAD_CPUTIME_ID);
}

int bfi_writer_counted(const bfi_writer *w, uint64_t i, const char **name, size_t *name_len,
                       uint64_t *seen, uint64_t *kept)
{
	if (w == NULL || name == NULL || name_len == NULL || seen == NULL || kept == NULL)
		return BFI_E_INVALID;
	if (!w->finished || w->opt.min_count < 2 || i >= w->names.n || w->sums.distinct == NULL)
		return BFI_E_NOT_FOUND;
	*name = names_get(&w->names, (uint32_t)i, name_len);
	*kept = w->sums.distinct[i];
	/* seen holds the count plus one, 0 for a set not counted */
	*seen = w->sums.seen && w->sums.seen[i] ? w->sums.seen[i] - 1 : *kept;
	return 0;
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
