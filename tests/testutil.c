/* testutil.c - the harness behind test.h. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
