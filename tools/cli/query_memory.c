/*
 * query_memory.c - what bfi query may hold, and whether it maps the index
 * or scans it. --memory (default: three quarters of what the process may
 * really hold, bfi_memory_limits) bounds the whole query: an index
 * larger than it is scanned without being asked, since its mapping would
 * fault the same pages in again and again, or be killed with no answer;
 * a scan's batches are then cut so that their state and answers fit it
 * beside the pages (batcher_scan_add).
 */
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>

#include "query.h"
#include "tools.h"

/* MiB, rounded up, for messages. */
static unsigned long long mib(uint64_t b)
{
	return (unsigned long long)((b + (1u << 20) - 1) >> 20);
}

/*
 * An index no larger than this is mapped whatever the limits say, and its
 * queries skip reading them (/proc and the cgroup's files: most of a
 * one-key query's start). Scanning it would pay only where the process
 * may hold under about 21 MiB, its own few MiB included; there a mapping
 * of read-only pages, which the kernel may always drop and read again, is
 * slower, never wrong.
 */
#define ALWAYS_MAPPED (16u << 20)

int query_memory(const bfi_snapshot *s, struct ask *o, int memory_given, int no_scan,
                 const char *path)
{
	struct bfi_info info;
	bfi_info(s, &info);
	if (!memory_given && !o->scan && info.file_size <= ALWAYS_MAPPED)
		return 0; /* o->memory bounds scans alone */
	struct bfi_memory_limits lim;
	bfi_memory_limits(&lim);
	if (!memory_given)
		o->memory = lim.query;
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
	if (!o->scan)
		return 0;
	int rc = bfi_scan_cost(s, o->layout, &o->cost);
	if (rc) {
		fprintf(stderr, "bfi query: %s: %s\n", path, bfi_strerror(rc));
		return SAID;
	}
	return 0;
}

void query_open_failed(const char *path, int rc)
{
	struct bfi_memory_limits lim;
	bfi_memory_limits(&lim);
	char index[4200];
	struct stat st;
	snprintf(index, sizeof index, "%s/index.bfi", path);
	/* a mapping needs address space as large as the index, whatever memory it takes */
	if (rc == -ENOMEM && lim.address && stat(index, &st) == 0 && (uint64_t)st.st_size > lim.address) {
		fprintf(stderr, "bfi query: %s: its index (%llu MiB) cannot be mapped within ulimit -v "
		        "(%llu MiB of address space left): bfi query maps the index, and a scan keeps a "
		        "sparse copy of it at its own offsets, which take address space, not memory; "
		        "raise ulimit -v past %llu MiB, or bound the memory with a cgroup instead\n",
		        path, mib((uint64_t)st.st_size), mib(lim.address), mib(2 * (uint64_t)st.st_size));
		return;
	}
	fprintf(stderr, "bfi query: %s: %s\n", path, bfi_strerror(rc));
}
