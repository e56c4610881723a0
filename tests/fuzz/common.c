/* common.c - scratch files for fuzz targets (fuzz.h). */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"

volatile int fuzz_sink;

static char dir[512];

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	remove(path);
	return 0;
}

/* The scratch directory goes when the process exits, so runs leave no litter. */
static void remove_dir(void)
{
	nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

const char *fuzz_dir(void)
{
	if (!dir[0]) {
		const char *t = getenv("TMPDIR");
		snprintf(dir, sizeof dir, "%s/bfi-fuzz-%s-XXXXXX", t && *t ? t : "/tmp", fuzz_name);
		if (mkdtemp(dir) == NULL)
			abort();
		atexit(remove_dir);
	}
	return dir;
}

const char *fuzz_index(const uint8_t *data, size_t size)
{
	static char snap[600];
	if (fuzz_file("snap/index.bfi", data, size) == NULL)
		return NULL;
	snprintf(snap, sizeof snap, "%s/snap", fuzz_dir());
	return snap;
}

const char *fuzz_file(const char *name, const uint8_t *data, size_t size)
{
	static char path[1024];
	snprintf(path, sizeof path, "%s/%s", fuzz_dir(), name);
	char *slash = strrchr(path, '/');
	if (slash && slash > path + strlen(fuzz_dir())) { /* a sub-directory: make it */
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
	FILE *f = fopen(path, "wb");
	if (f == NULL)
		return NULL;
	int ok = fwrite(data, 1, size, f) == size;
	if (fclose(f) != 0 || !ok)
		return NULL;
	return path;
}
