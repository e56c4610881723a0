/*
 * memory.c - the memory this process may use (bfi_memory.h): a default
 * sized from the machine alone fails under the limits a process really
 * runs in, a batch job's cgroup or a login's ulimit -v, at once (an
 * allocation refused) or later (the OOM killer, with no answer written).
 *
 * The cgroup is found as the kernel tells it: /proc/self/cgroup names the
 * process's cgroup in each hierarchy, /proc/self/mountinfo where each
 * hierarchy is mounted and which of its cgroups the mount shows as its
 * root (a container's). Version 1's memory controller gives the least
 * limit of the cgroup and its parents as memory.stat's
 * hierarchical_memory_limit; version 2's is the least memory.max from
 * the cgroup up to the mount's root.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bfi_memory.h"
#include "format.h"

/* A limit this large or larger is no limit (v1 writes 2^63 - a page for none). */
#define NO_LIMIT (UINT64_C(1) << 60)

static FILE *open_at(const char *root, const char *path)
{
	char full[4096];
	if ((size_t)snprintf(full, sizeof full, "%s%s", root, path) >= sizeof full)
		return NULL;
	return fopen(full, "re");
}

/* The number after "name" (a whole word) at a line's start in file path, times unit; 0 if none. */
/* Fields names[0 .. n) of one file read once, into v (0 for each absent), as field() reads one. */
static void fields(const char *root, const char *path, const char *const *names, size_t n,
                   uint64_t unit, uint64_t *v)
{
	memset(v, 0, n * sizeof *v);
	FILE *f = open_at(root, path);
	if (f == NULL)
		return;
	char line[256];
	size_t left = n;
	while (left && fgets(line, sizeof line, f))
		for (size_t i = 0; i < n; i++) {
			size_t len = strlen(names[i]);
			if (v[i] || strncmp(line, names[i], len) ||
			    (line[len] != ' ' && line[len] != ':' && line[len] != '\t'))
				continue;
			char *p = line + len + (line[len] == ':'), *end;
			unsigned long long x = strtoull(p, &end, 10);
			if (end != p && x <= UINT64_MAX / unit)
				v[i] = (uint64_t)x * unit;
			left--;
			break;
		}
	fclose(f);
}

static uint64_t field(const char *root, const char *path, const char *name, uint64_t unit)
{
	uint64_t v;
	fields(root, path, &name, 1, unit, &v);
	return v;
}

/* A file holding one number, or "max": the number, or 0 for "max" or anything unreadable. */
static uint64_t number(const char *root, const char *path)
{
	FILE *f = open_at(root, path);
	if (f == NULL)
		return 0;
	char line[64], *end;
	uint64_t v = 0;
	if (fgets(line, sizeof line, f)) {
		unsigned long long x = strtoull(line, &end, 10);
		if (end != line && (*end == '\n' || *end == 0))
			v = (uint64_t)x;
	}
	fclose(f);
	return v >= NO_LIMIT ? 0 : v;
}

static uint64_t least(uint64_t a, uint64_t b)
{
	return a == 0 ? b : b == 0 ? a : a < b ? a : b;
}

/*
 * Where the process's cgroup of one hierarchy is, as a directory: the
 * mount of that hierarchy (fstype cgroup with option memory for v1,
 * cgroup2 for v2), and the cgroup's path below the mount's root. v2
 * also gives the mount point in top, for the walk up. 0 if found.
 */
static int cgroup_dir(const char *root, int v2, const char *cg, char *dir, size_t cap, char *top,
                      size_t top_cap)
{
	FILE *f = open_at(root, "/proc/self/mountinfo");
	if (f == NULL)
		return -1;
	char line[4096];
	int found = -1;
	while (found && fgets(line, sizeof line, f)) {
		/* id parent dev root mountpoint options [optional...] - fstype source superoptions */
		char *sep = strstr(line, " - ");
		if (sep == NULL)
			continue;
		char fstype[32], mroot[1024], mpoint[1024], super[1024] = "";
		if (sscanf(sep + 3, "%31s %*s %1023s", fstype, super) < 1 ||
		    sscanf(line, "%*s %*s %*s %1023s %1023s", mroot, mpoint) != 2)
			continue;
		if (v2 ? strcmp(fstype, "cgroup2") != 0
		       : strcmp(fstype, "cgroup") != 0 || !strstr(super, "memory"))
			continue;
		/* the cgroup's path, relative to what the mount shows */
		size_t rl = strlen(mroot);
		const char *rel = cg;
		if (strcmp(mroot, "/") != 0) {
			if (strncmp(cg, mroot, rl) != 0 || (cg[rl] != '/' && cg[rl] != 0))
				continue;
			rel = cg + rl;
		}
		if ((size_t)snprintf(dir, cap, "%s%s", mpoint, rel) >= cap ||
		    (size_t)snprintf(top, top_cap, "%s", mpoint) >= top_cap)
			continue;
		found = 0;
	}
	fclose(f);
	return found;
}

/* The least memory limit over the process's cgroup and its parents, 0 if none. */
static uint64_t cgroup_limit(const char *root)
{
	FILE *f = open_at(root, "/proc/self/cgroup");
	if (f == NULL)
		return 0;
	char line[4096], dir[4096], top[1024], file[4200];
	uint64_t lim = 0;
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = 0;
		/* hierarchy-id:controllers:path */
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (c2 == NULL)
			continue;
		*c2 = 0;
		const char *ctl = c1 + 1, *path = c2 + 1;
		int v2 = *ctl == 0;
		if (!v2) {
			/* the controllers, a comma-separated list: is memory one of them? */
			int mem = 0;
			for (const char *p = ctl; *p; p += strcspn(p, ","), p += *p == ',')
				mem |= strcspn(p, ",") == 6 && !strncmp(p, "memory", 6);
			if (!mem)
				continue;
		}
		if (cgroup_dir(root, v2, path, dir, sizeof dir, top, sizeof top))
			continue;
		if (!v2) {
			snprintf(file, sizeof file, "%s/memory.stat", dir);
			uint64_t l = field(root, file, "hierarchical_memory_limit", 1);
			if (l == 0 || l >= NO_LIMIT) {
				snprintf(file, sizeof file, "%s/memory.limit_in_bytes", dir);
				l = number(root, file);
			}
			lim = least(lim, l >= NO_LIMIT ? 0 : l);
			continue;
		}
		/* v2: memory.max of the cgroup and of each parent below the mount */
		size_t tl = strlen(top);
		for (;;) {
			snprintf(file, sizeof file, "%s/memory.max", dir);
			lim = least(lim, number(root, file));
			char *slash = strrchr(dir, '/');
			if (slash == NULL || (size_t)(slash - dir) < tl)
				break;
			*slash = 0;
		}
	}
	fclose(f);
	return lim;
}

/* bfi_memory_limits reading /proc and /sys under root, rlimit_as given (0: none): for tests. */
void bfi__memory_limits_at(const char *root, uint64_t rlimit_as, struct bfi_memory_limits *out)
{
	memset(out, 0, sizeof *out);
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	static const char *const mem[] = {"MemTotal", "MemAvailable"};
	uint64_t v[2];
	fields(root, "/proc/meminfo", mem, 2, 1024, v);
	out->physical = v[0];
	if (out->physical == 0)
		out->physical = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : UINT64_C(1) << 30;
	out->available = v[1];
	out->cgroup = cgroup_limit(root);
	if (rlimit_as) {
		uint64_t used = field(root, "/proc/self/status", "VmSize", 1024);
		out->address = rlimit_as > used ? rlimit_as - used : 1;
	}
	out->usable = out->physical;
	out->bound = BFI_BOUND_PHYSICAL;
	const struct {
		uint64_t v;
		enum bfi_memory_bound b;
	} each[] = {{out->available, BFI_BOUND_AVAILABLE},
	            {out->cgroup, BFI_BOUND_CGROUP},
	            {out->address, BFI_BOUND_ADDRESS}};
	for (size_t i = 0; i < sizeof each / sizeof *each; i++)
		if (each[i].v && each[i].v < out->usable) {
			out->usable = each[i].v;
			out->bound = each[i].b;
		}
	out->query = out->usable / 4 * 3;
}

void bfi_memory_limits(struct bfi_memory_limits *out)
{
	struct rlimit rl;
	uint64_t as = 0;
	if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		as = (uint64_t)rl.rlim_cur;
	bfi__memory_limits_at("", as, out);
}

const char *bfi_memory_bound_name(enum bfi_memory_bound bound)
{
	switch (bound) {
	case BFI_BOUND_AVAILABLE: return "MemAvailable";
	case BFI_BOUND_CGROUP: return "cgroup memory limit";
	case BFI_BOUND_ADDRESS: return "ulimit -v";
	case BFI_BOUND_PHYSICAL: break;
	}
	return "physical memory";
}
