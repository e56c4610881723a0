/*
 * bfi_memory.h - the memory this process may really use: the least of
 * the machine's available memory, its memory cgroup's limit (v1 or v2)
 * and its address-space limit (RLIMIT_AS, ulimit -v). Writer and reader
 * both size their defaults from it (bfi build's --memory; bfi query's
 * --memory and its choice of the scan), so it lives in format/.
 */
#ifndef BFI_MEMORY_H
#define BFI_MEMORY_H

#include <stdint.h>

#include "bfi_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Which limit is the least: bfi_memory_limits' bound. */
enum bfi_memory_bound {
	BFI_BOUND_PHYSICAL = 0, /* the machine's memory (MemAvailable unknown) */
	BFI_BOUND_AVAILABLE,    /* MemAvailable in /proc/meminfo */
	BFI_BOUND_CGROUP,       /* the memory cgroup's limit */
	BFI_BOUND_ADDRESS,      /* RLIMIT_AS, less what the process maps already */
};

struct bfi_memory_limits {
	uint64_t physical;  /* the machine's memory */
	uint64_t available; /* MemAvailable, or 0: unknown */
	uint64_t cgroup;    /* the least memory limit of the process's cgroup and its parents, 0: none */
	uint64_t address;   /* RLIMIT_AS less VmSize now, 0: no limit */
	uint64_t usable;    /* the least of those known: what this process may hold */
	enum bfi_memory_bound bound;
	/*
	 * What a reader may hold by default (bfi query's --memory, the Python
	 * module's, what bfi serve measures a snapshot by): three quarters of
	 * usable, the rest for the page cache, libraries and the unforeseen.
	 */
	uint64_t query;
};

/*
 * Fill *out from /proc and /sys. A limit that cannot be read is left 0
 * (none): usable is then the least of the others, and at worst the
 * machine's memory. Never fails.
 */
BFI_API void bfi_memory_limits(struct bfi_memory_limits *out);
/* What bound names: "cgroup memory limit", "ulimit -v", "MemAvailable", "physical memory". */
BFI_API const char *bfi_memory_bound_name(enum bfi_memory_bound bound);

#ifdef __cplusplus
}
#endif

#endif
