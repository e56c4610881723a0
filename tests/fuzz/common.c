/* common.c - scratch files for fuzz targets (fuzz.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"

volatile int fuzz_sink;

const char *fuzz_dir(void)
{
	static char dir[512];
	if (!dir[0]) {
		const char *t = getenv("TMPDIR");
		snprintf(dir, sizeof dir, "%s/bfi-fuzz-%s-XXXXXX", t && *t ? t : "/tmp", fuzz_name);
		if (mkdtemp(dir) == NULL)
			abort();
	}
	return dir;
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
