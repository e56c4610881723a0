/*
 * stats.h - threads (pool.c) and the time each phase of a build
 * takes on them (stats.c).
 */
#ifndef BFI_WRITER_STATS_H
#define BFI_WRITER_STATS_H

#include "bfi_writer.h"

#define POOL_MAX_THREADS 256u /* pool_run's threads at most */

/*
 * stats.c: each phase's wall, CPU and busiest thread (bfi_writer_phase).
 * stats_begin ends the running phase and starts name (a static string);
 * stats_end ends it. While a phase runs, stats_now is its stats on the
 * thread that runs it, and each pool_run it calls there adds the busiest
 * thread of its items' schedule (stats_pool).
 */
#define STATS_PHASES 12
struct stats {
	struct bfi_phase_stats phase[STATS_PHASES];
	unsigned n;
	int running;
	double wall0, cpu0, main0;
	double in_pools; /* the calling thread's CPU time inside pool_run */
	double critical; /* the pools' busiest threads, summed */
	double side;     /* background writes (bg_write): where their lane ends, each begun
	                  * where the main thread's lane stood when it was handed the write */
};
extern _Thread_local struct stats *stats_now;
/*
 * Within a pool's item: the critical path of threads the item ran beside
 * its own (split.c) less its own part, added to the item's time.
 */
extern _Thread_local double stats_nested;
extern _Thread_local int stats_timed; /* running an item of a pool that times its items */
void stats_begin(bfi_writer *w, const char *name);
void stats_end(bfi_writer *w);
double stats_thread_cpu(void);
/* Where the running phase's critical path stands now: serial CPU so far and its pools'. */
double stats_lane_now(void);
/*
 * The threads a library starts on its own (liblzma's decoders), told
 * from ours by being new since stats_tasks: their CPU time, read from
 * /proc before the library ends them. stats_tasks_new: the busiest's
 * seconds (0 when /proc cannot say); it frees before's list.
 */
struct stats_tasks {
	unsigned n;
	long *tid;
};
void stats_tasks(struct stats_tasks *t);
double stats_tasks_new(struct stats_tasks *before);

/*
 * Threads (pool.c). pool_run calls fn(ctx, item, thread) for items 0 .. n - 1
 * on up to threads threads (thread < threads), and returns the first
 * nonzero return, after which no new item starts. pool_threads: the count
 * to use when asked for `asked` (0: the online cores).
 */
int pool_run(unsigned threads, uint64_t n, int (*fn)(void *ctx, uint64_t item, unsigned thread),
             void *ctx);
unsigned pool_threads(unsigned asked);

#endif
