/*
 * test_map.c - bfi__map_file asks the kernel for 2 MiB page-cache folios
 * (MADV_HUGEPAGE) on files of at least 2 MiB, and not on smaller ones.
 * A fresh process maps 2 MiB folios with one fault each, which is what
 * keeps a one-shot `bfi query` on a large snapshot fast (RESULTS.md,
 * issue 5). Where the kernel has no transparent huge pages the hint is
 * refused; the test then checks only that the mapping reads back.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"
#include "test.h"

/* Does the kernel offer THP at all (enabled is "always" or "madvise")? */
static int thp_available(void)
{
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
	if (f == NULL)
		return 0;
	char line[128] = "";
	int ok = fgets(line, sizeof line, f) != NULL && strstr(line, "[never]") == NULL;
	fclose(f);
	return ok;
}

/* The VmFlags line of the mapping that starts at addr, or "" if none. */
static void vm_flags_of(const void *addr, char *out, size_t cap)
{
	out[0] = 0;
	FILE *f = fopen("/proc/self/smaps", "r");
	if (f == NULL)
		return;
	char line[512];
	int in = 0;
	while (fgets(line, sizeof line, f)) {
		uintptr_t lo, hi;
		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " ", &lo, &hi) == 2) {
			in = lo == (uintptr_t)addr;
			continue;
		}
		if (in && strncmp(line, "VmFlags:", 8) == 0) {
			snprintf(out, cap, "%s", line + 8);
			break;
		}
	}
	fclose(f);
}

static int has_flag(const char *flags, const char *flag)
{
	size_t n = strlen(flag);
	for (const char *p = flags; (p = strstr(p, flag)) != NULL; p += n)
		if ((p == flags || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\n' || p[n] == 0))
			return 1;
	return 0;
}

static void map_one(size_t len, int want_huge)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/f%zu", test_tmpdir(), len);
	uint8_t *data = malloc(len);
	EXPECT(data != NULL);
	if (data == NULL)
		return;
	for (size_t i = 0; i < len; i++)
		data[i] = (uint8_t)(i * 131 + 7);
	EXPECT(test_write_file(path, data, len) == 0);
	int fd = open(path, O_RDONLY);
	EXPECT(fd >= 0);
	const uint8_t *map = NULL;
	uint64_t size = 0;
	EXPECT_RC(bfi__map_file(fd, &map, &size), 0);
	close(fd);
	EXPECT(size == len && map != NULL);
	if (map == NULL) {
		free(data);
		return;
	}
	EXPECT(memcmp(map, data, len) == 0);
	char flags[512];
	vm_flags_of(map, flags, sizeof flags);
	EXPECT(has_flag(flags, "rd")); /* found the mapping, and it is readable */
	EXPECT(!has_flag(flags, "wr"));
	if (thp_available())
		EXPECT(has_flag(flags, "hg") == want_huge);
	else
		fprintf(stderr, "note: no transparent huge pages here; MADV_HUGEPAGE not checked\n");
	munmap((void *)map, len);
	free(data);
}

static void test_huge_hint(void)
{
	map_one((size_t)4 << 20, 1);
	map_one((size_t)64 << 10, 0);
}

int main(void)
{
	test_run("map: files of 2 MiB or more are mapped with MADV_HUGEPAGE", test_huge_hint);
	test_cleanup();
	return test_exit();
}
