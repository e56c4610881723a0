/* testutil.c - the harness behind test.h. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format.h"
#include "test.h"

int test_failures;
static int cases_failed;
static char tmpdir[4096];

int test_run(const char *name, void (*fn)(void))
{
	int before = test_failures;
	fn();
	int failed = test_failures != before;
	printf("%s %s\n", failed ? "FAIL" : "PASS", name);
	fflush(stdout);
	cases_failed += failed;
	return failed;
}

int test_exit(void)
{
	test_cleanup();
	return cases_failed ? 1 : 0;
}

const char *test_tmpdir(void)
{
	if (!tmpdir[0]) {
		const char *t = getenv("TMPDIR");
		snprintf(tmpdir, sizeof tmpdir, "%s/bfi-test-XXXXXX", t && *t ? t : "/tmp");
		if (mkdtemp(tmpdir) == NULL) {
			perror("mkdtemp");
			exit(2);
		}
	}
	return tmpdir;
}

void test_rm_rf(const char *path)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return;
	if (S_ISDIR(st.st_mode)) {
		DIR *d = opendir(path);
		struct dirent *e;
		while (d && (e = readdir(d)) != NULL) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			char p[8192];
			snprintf(p, sizeof p, "%s/%s", path, e->d_name);
			test_rm_rf(p);
		}
		if (d)
			closedir(d);
		rmdir(path);
	} else {
		unlink(path);
	}
}

void test_cleanup(void)
{
	if (tmpdir[0] && !getenv("BFI_TEST_KEEP"))
		test_rm_rf(tmpdir);
	tmpdir[0] = 0;
}

uint64_t test_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint64_t test_resident(void)
{
	unsigned long size = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "re");
	if (f) {
		if (fscanf(f, "%lu %lu", &size, &resident) != 2)
			resident = 0;
		fclose(f);
	}
	return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

uint8_t *test_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *p = malloc(n > 0 ? (size_t)n : 1);
	if (p && fread(p, 1, (size_t)n, f) != (size_t)n) {
		free(p);
		p = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return p;
}

int test_write_file(const char *path, const void *p, size_t len)
{
	/* a snapshot's files are published read-only: tests that damage one
	 * make it writable first, as only a user who means to would */
	(void)chmod(path, 0644);
	FILE *f = fopen(path, "wb");
	if (f == NULL)
		return -errno;
	size_t w = fwrite(p, 1, len, f);
	int rc = fclose(f);
	return w == len && rc == 0 ? 0 : -EIO;
}

int test_build_sets(const struct bfi_build_options *o, const char *path, uint32_t n, uint32_t per,
                    test_key_fn key)
{
	bfi_writer *w;
	int rc = bfi_writer_create(o, &w);
	char name[32], buf[64];
	for (uint32_t j = 0; j < n && rc == 0; j++) {
		uint32_t ord;
		rc = bfi_writer_set(w, name, (size_t)snprintf(name, sizeof name, "s%u", j), &ord);
		for (uint32_t i = 0; i < per && rc == 0; i++)
			rc = bfi_writer_key(w, ord, buf, key(j, i, buf, sizeof buf));
	}
	if (rc == 0)
		rc = bfi_writer_finish(w, path, NULL);
	bfi_writer_destroy(&w);
	return rc;
}

/* Make every checksum of an index image match its bytes again. */
void test_reseal_index(uint8_t *p, size_t size)
{
	if (size < BFI_SECTION_ALIGN + BFI_TRAILER_SIZE)
		return;
	bfi_put64(p + BFI_H_FILE_SIZE, size);
	uint32_t n = bfi_get32(p + BFI_H_SECTION_COUNT);
	if (n > BFI_MAX_SECTIONS)
		n = BFI_MAX_SECTIONS;
	/* chunk checksums first: the chunk-checksum section's own checksum covers them */
	for (uint32_t i = 0; i < n; i++) {
		uint8_t *e = p + BFI_HEADER_SIZE + (size_t)i * BFI_ENTRY_SIZE;
		uint64_t off = bfi_get64(e + 8), len = bfi_get64(e + 16);
		if (bfi_get32(e) != BFI_SEC_CHUNKSUMS || off > size || size - off < BFI_CHUNKSUMS_DESC_SIZE)
			continue;
		uint64_t covered = bfi_get64(p + off + 8);
		if (covered < BFI_SECTION_ALIGN || covered > size)
			continue;
		uint64_t chunks = (covered - BFI_SECTION_ALIGN + BFI_CHUNK_SIZE - 1) / BFI_CHUNK_SIZE;
		if (chunks > (size - off - BFI_CHUNKSUMS_DESC_SIZE) / 8 || len < BFI_CHUNKSUMS_DESC_SIZE)
			continue;
		for (uint64_t c = 0; c < chunks; c++) {
			uint64_t at = BFI_SECTION_ALIGN + c * BFI_CHUNK_SIZE;
			uint64_t l = covered - at < BFI_CHUNK_SIZE ? covered - at : BFI_CHUNK_SIZE;
			bfi_put64(p + off + BFI_CHUNKSUMS_DESC_SIZE + c * 8, bfi_checksum64(p + at, (size_t)l));
		}
	}
	for (uint32_t i = 0; i < n; i++) {
		uint8_t *e = p + BFI_HEADER_SIZE + (size_t)i * BFI_ENTRY_SIZE;
		uint64_t off = bfi_get64(e + 8), len = bfi_get64(e + 16);
		if (off <= size && len <= size - off)
			bfi_put64(e + 32, bfi_checksum64(p + off, (size_t)len));
	}
	bfi_put64(p + BFI_H_TABLE_CHECKSUM, bfi_checksum64(p + BFI_HEADER_SIZE, (size_t)n * BFI_ENTRY_SIZE));
	bfi_put64(p + BFI_H_CHECKSUM, bfi_checksum64(p, BFI_H_CHECKSUM));
}

int test_build_genomes(const struct bfi_build_options *o, const char *snap, int n, size_t len,
                       unsigned k, uint64_t *seed, char *g, uint32_t *ord)
{
	static unsigned made;
	char dir[4200], path[4300];
	snprintf(dir, sizeof dir, "%s/genomes%u", test_tmpdir(), made++);
	struct bfi_build_options dflt;
	if (o == NULL) {
		bfi_build_options_init(&dflt);
		o = &dflt;
	}
	bfi_writer *w = NULL;
	int rc = mkdir(dir, 0755) != 0 ? -errno : bfi_writer_create(o, &w);
	for (int i = 0; i < n && rc == 0; i++) {
		char *gi = g + (size_t)i * (len + 1);
		for (size_t x = 0; x < len; x++)
			gi[x] = "ACGT"[test_rand(seed) % 4];
		gi[len] = 0;
		snprintf(path, sizeof path, "%s/g%02d.fa", dir, i);
		FILE *f = fopen(path, "w");
		if (f == NULL)
			rc = -errno;
		else if (fprintf(f, ">g%02d\n%s\n", i, gi) < 0 || fclose(f) != 0)
			rc = -EIO;
		if (rc == 0)
			rc = bfi_writer_add_fasta(w, path, k, 0);
	}
	if (rc == 0)
		rc = bfi_writer_finish(w, snap, NULL);
	bfi_writer_destroy(&w);
	bfi_snapshot *s = NULL;
	if (rc == 0)
		rc = bfi_open(snap, 0, &s);
	for (int i = 0; i < n && rc == 0; i++) {
		char name[16];
		snprintf(name, sizeof name, "g%02d", i);
		rc = bfi_set_find(s, name, strlen(name), &ord[i]);
	}
	bfi_close(&s);
	return rc;
}
