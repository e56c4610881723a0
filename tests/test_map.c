/*
 * test_map.c - bfi_open maps the index asking the kernel for 2 MiB
 * page-cache folios (MADV_HUGEPAGE) when it is at least 2 MiB long, and
 * not with BFI_OPEN_SMALL_PAGES or on smaller files.
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

#define HUGE_MIN_BYTES ((uint64_t)2 << 20)

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

/* Check the VmFlags of the mapping at map: readable, not writable, and
 * huge-page advised exactly when want_huge. */
static void check_flags(const void *map, int want_huge)
{
	char flags[512];
	vm_flags_of(map, flags, sizeof flags);
	EXPECT(has_flag(flags, "rd")); /* found the mapping, and it is readable */
	EXPECT(!has_flag(flags, "wr"));
	if (thp_available())
		EXPECT(has_flag(flags, "hg") == want_huge);
	else
		fprintf(stderr, "note: no transparent huge pages here; MADV_HUGEPAGE not checked\n");
}

static void map_one(size_t len, int huge, int want_huge)
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
	EXPECT_RC(bfi__map_file(fd, &map, &size, huge, NULL), 0);
	close(fd);
	EXPECT(size == len && map != NULL);
	if (map == NULL) {
		free(data);
		return;
	}
	EXPECT(memcmp(map, data, len) == 0);
	check_flags(map, want_huge);
	munmap((void *)map, len);
	free(data);
}

static void test_huge_hint(void)
{
	map_one((size_t)4 << 20, 1, 1);
	map_one((size_t)4 << 20, 0, 0);
	map_one((size_t)64 << 10, 1, 0);
}

/* A snapshot whose index is over 2 MiB: one set, 24 Mbit filters. */
static void test_open_flag(void)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/snap", test_tmpdir());
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	o.bits = (uint64_t)24 << 20;
	o.layouts = BFI_BUILD_PLAIN;
	bfi_writer *w;
	int rc = bfi_writer_create(&o, &w);
	uint32_t ord = 0;
	if (rc == 0)
		rc = bfi_writer_set(w, "s", 1, &ord);
	if (rc == 0)
		rc = bfi_writer_key(w, ord, "k", 1);
	if (rc == 0)
		rc = bfi_writer_finish(w, path, NULL);
	bfi_writer_destroy(&w);
	EXPECT_RC(rc, 0);
	for (int small = 0; small < 2; small++) {
		bfi_snapshot *s = NULL;
		EXPECT_RC(bfi_open(path, small ? BFI_OPEN_SMALL_PAGES : 0, &s), 0);
		if (s == NULL)
			continue;
		EXPECT(s->size >= HUGE_MIN_BYTES);
		check_flags(s->map, !small);
		bfi_close(&s);
	}
	bfi_snapshot *s = NULL;
	EXPECT_RC(bfi_open(path, 1u << 30, &s), BFI_E_INVALID); /* unknown flag */
	EXPECT(s == NULL);
}

int main(void)
{
	test_run("map: files of 2 MiB or more are mapped with MADV_HUGEPAGE", test_huge_hint);
	test_run("map: bfi_open asks for huge pages unless BFI_OPEN_SMALL_PAGES, refuses unknown flags",
	         test_open_flag);
	test_cleanup();
	return test_exit();
}
