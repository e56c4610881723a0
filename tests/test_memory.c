/*
 * test_memory.c - bfi_memory_limits: the memory a process may hold, read
 * from a /proc and /sys laid out in a temporary directory as a cgroup v1
 * machine, a cgroup v2 one, a container (a mount whose root is the
 * process's own cgroup) and a machine with no limit show them; and from
 * this machine's own, where it must never exceed its memory.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "format.h"
#include "test.h"

static char root[4096];

/* Write text to root/path, making its directories. */
static void put(const char *path, const char *text)
{
	char full[8192];
	snprintf(full, sizeof full, "%s%s", root, path);
	for (char *p = full + strlen(root) + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			mkdir(full, 0755);
			*p = '/';
		}
	EXPECT(test_write_file(full, text, strlen(text)) == 0);
}

/* A machine of 16 GiB with 10 GiB available, the process at 100 MiB of address space. */
static void machine(const char *name)
{
	snprintf(root, sizeof root, "%s/%s", test_tmpdir(), name);
	mkdir(root, 0755);
	put("/proc/meminfo", "MemTotal:       16777216 kB\nMemFree:  1 kB\n"
	                     "MemAvailable:   10485760 kB\nBuffers: 0 kB\n");
	put("/proc/self/status", "Name:\tbfi\nVmPeak:\t  204800 kB\nVmSize:\t  102400 kB\n");
}

#define MIB (UINT64_C(1) << 20)

static void test_none(void)
{
	machine("none");
	put("/proc/self/cgroup", "0::/user.slice\n");
	put("/proc/self/mountinfo", "25 1 0:22 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
	put("/sys/fs/cgroup/user.slice/memory.max", "max\n");
	struct bfi_memory_limits l;
	bfi__memory_limits_at(root, 0, &l);
	EXPECT(l.physical == 16384 * MIB);
	EXPECT(l.available == 10240 * MIB);
	EXPECT(l.cgroup == 0 && l.address == 0);
	EXPECT(l.usable == 10240 * MIB && l.bound == BFI_BOUND_AVAILABLE);
}

static void test_v1(void)
{
	machine("v1");
	put("/proc/self/cgroup", "12:pids:/job\n11:cpuacct,cpu:/job\n4:memory:/slurm/job42\n");
	put("/proc/self/mountinfo",
	    "30 25 0:26 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
	    "31 25 0:27 / /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory\n");
	/* the parent's limit is the least: hierarchical_memory_limit says so */
	put("/sys/fs/cgroup/memory/slurm/job42/memory.limit_in_bytes", "9223372036854771712\n");
	put("/sys/fs/cgroup/memory/slurm/job42/memory.stat",
	    "cache 0\nrss 0\nhierarchical_memory_limit 314572800\nhierarchical_memsw_limit 1\n");
	struct bfi_memory_limits l;
	bfi__memory_limits_at(root, 0, &l);
	EXPECT(l.cgroup == 300 * MIB);
	EXPECT(l.usable == 300 * MIB && l.bound == BFI_BOUND_CGROUP);
	EXPECT(!strcmp(bfi_memory_bound_name(l.bound), "cgroup memory limit"));
	/* without memory.stat, the cgroup's own limit */
	put("/sys/fs/cgroup/memory/slurm/job42/memory.stat", "cache 0\n");
	put("/sys/fs/cgroup/memory/slurm/job42/memory.limit_in_bytes", "262144000\n");
	bfi__memory_limits_at(root, 0, &l);
	EXPECT(l.cgroup == 250 * MIB);
	/* ulimit -v below it: the address space left, less VmSize, bounds */
	bfi__memory_limits_at(root, 300 * MIB, &l);
	EXPECT(l.address == 200 * MIB);
	EXPECT(l.usable == 200 * MIB && l.bound == BFI_BOUND_ADDRESS);
	EXPECT(!strcmp(bfi_memory_bound_name(l.bound), "ulimit -v"));
}

static void test_v2(void)
{
	machine("v2");
	put("/proc/self/cgroup", "0::/system.slice/bfi.service/query\n");
	put("/proc/self/mountinfo", "25 1 0:22 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw\n");
	/* the least memory.max up the tree: the service's, not its child's */
	put("/sys/fs/cgroup/system.slice/bfi.service/query/memory.max", "max\n");
	put("/sys/fs/cgroup/system.slice/bfi.service/memory.max", "536870912\n");
	put("/sys/fs/cgroup/system.slice/memory.max", "1073741824\n");
	struct bfi_memory_limits l;
	bfi__memory_limits_at(root, 0, &l);
	EXPECT(l.cgroup == 512 * MIB);
	EXPECT(l.usable == 512 * MIB && l.bound == BFI_BOUND_CGROUP);
}

static void test_container(void)
{
	/* a container sees its own cgroup as the mount's root; /proc/self/cgroup names it whole */
	machine("container");
	put("/proc/self/cgroup", "0::/docker/abc\n");
	put("/proc/self/mountinfo", "99 90 0:22 /docker/abc /sys/fs/cgroup ro - cgroup2 cgroup2 rw\n");
	put("/sys/fs/cgroup/memory.max", "209715200\n");
	struct bfi_memory_limits l;
	bfi__memory_limits_at(root, 0, &l);
	EXPECT(l.cgroup == 200 * MIB && l.usable == 200 * MIB);
	/* and the hybrid layout of v1 and v2 both mounted: v1's memory controller holds the limit */
	machine("hybrid");
	put("/proc/self/cgroup", "5:memory:/bench\n0::/bench\n");
	put("/proc/self/mountinfo",
	    "31 25 0:27 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
	    "32 25 0:28 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n");
	put("/sys/fs/cgroup/memory/bench/memory.limit_in_bytes", "157286400\n");
	bfi__memory_limits_at(root, 0, &l);
	EXPECT(l.cgroup == 150 * MIB && l.usable == 150 * MIB);
}

static void test_unreadable(void)
{
	/* nothing to read: the machine's memory from sysconf, and no limit */
	snprintf(root, sizeof root, "%s/empty", test_tmpdir());
	mkdir(root, 0755);
	struct bfi_memory_limits l;
	bfi__memory_limits_at(root, 0, &l);
	EXPECT(l.physical > 0 && l.cgroup == 0 && l.available == 0);
	EXPECT(l.usable == l.physical && l.bound == BFI_BOUND_PHYSICAL);
	/* this machine's own: never above its memory, and never 0 */
	bfi_memory_limits(&l);
	EXPECT(l.usable > 0 && l.usable <= l.physical);
	/* bfi build's default: at most half of it, at least 8 MiB */
	uint64_t d = bfi_default_memory();
	EXPECT(d >= 8 * MIB && (d <= l.usable / 2 || d == 8 * MIB));
}

int main(void)
{
	test_run("memory: no limit but MemAvailable", test_none);
	test_run("memory: cgroup v1, its parents' least limit, and ulimit -v", test_v1);
	test_run("memory: cgroup v2, the least memory.max up the tree", test_v2);
	test_run("memory: a container's cgroup, and v1 and v2 mounted together", test_container);
	test_run("memory: nothing readable, and this machine's own", test_unreadable);
	test_cleanup();
	return test_exit();
}
