/*
 * query_memory.c - what bfi query may hold, and whether it maps the index
 * or scans it. --memory (default: three quarters of what the process may
 * really hold, bfi_memory_limits) bounds the whole query: an index
 * larger than it is scanned without being asked, since its mapping would
 * fault the same pages in again and again, or be killed with no answer;
 * a scan's batches are then cut so that their state and answers fit it
 * beside the pages (batcher_scan_add).
 */
#include <stdio.h>

#include "query.h"
#include "tools.h"

/* MiB, rounded up, for messages. */
static unsigned long long mib(uint64_t b)
{
	return (unsigned long long)((b + (1u << 20) - 1) >> 20);
}

int query_memory(const bfi_snapshot *s, struct opts *o, int memory_given, int no_scan,
                 const char *path, int *mapped)
{
	struct bfi_memory_limits lim;
	bfi_memory_limits(&lim);
	if (!memory_given)
		o->memory = lim.usable / 4 * 3;
	struct bfi_info info;
	bfi_info(s, &info);
	o->n_sets = info.n_sets;
	if (!o->scan && !no_scan && info.file_size > o->memory) {
		o->scan = 1;
		char why[160];
		if (memory_given)
			snprintf(why, sizeof why, "--memory");
		else
			snprintf(why, sizeof why, "three quarters of the %s, %llu MiB",
			         bfi_memory_bound_name(lim.bound), mib(lim.usable));
		fprintf(stderr, "bfi query: note: the index of %s (%llu MiB) is larger than the %llu MiB "
		        "this query may hold (%s): answering in passes over it (--scan); --no-scan maps "
		        "it instead\n", path, mib(info.file_size), mib(o->memory), why);
	}
	*mapped = !o->scan;
	if (!o->scan)
		return 0;
	int rc = bfi_scan_cost(s, o->layout, &o->cost);
	if (rc) {
		fprintf(stderr, "bfi query: %s: %s\n", path, bfi_strerror(rc));
		return SAID;
	}
	return 0;
}
