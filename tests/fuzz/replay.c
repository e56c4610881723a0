/*
 * replay.c - the main of a fuzz target outside --mode=fuzz: run it over
 * every file of tests/fuzz/corpus/NAME (or the files and directories given)
 * and print one PASS line, as tests/run.sh counts. A file that crashes the
 * target takes the process down, which run.sh counts as a failure; an empty
 * or missing corpus is a failure too, since it would test nothing.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static long run_path(const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return -1;
	if (S_ISDIR(st.st_mode)) {
		DIR *d = opendir(path);
		if (d == NULL)
			return -1;
		long n = 0;
		struct dirent *e;
		while ((e = readdir(d)) != NULL) {
			if (e->d_name[0] == '.')
				continue;
			char sub[4096];
			snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
			long r = run_path(sub);
			if (r < 0) {
				closedir(d);
				return -1;
			}
			n += r;
		}
		closedir(d);
		return n;
	}
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		return -1;
	uint8_t *buf = malloc((size_t)st.st_size + 1);
	size_t got = buf ? fread(buf, 1, (size_t)st.st_size, f) : 0;
	fclose(f);
	if (buf == NULL || got != (size_t)st.st_size) {
		free(buf);
		return -1;
	}
	LLVMFuzzerTestOneInput(buf, got);
	free(buf);
	return 1;
}

int main(int argc, char **argv)
{
	char dflt[512];
	snprintf(dflt, sizeof dflt, "tests/fuzz/corpus/%s", fuzz_name);
	long n = 0;
	if (argc < 2)
		n = run_path(dflt);
	for (int i = 1; i < argc && n >= 0; i++) {
		long r = run_path(argv[i]);
		n = r < 0 ? -1 : n + r;
	}
	if (n <= 0) {
		printf("FAIL fuzz %s: no corpus to replay (%s)\n", fuzz_name, argc < 2 ? dflt : argv[1]);
		return 1;
	}
	printf("PASS fuzz %s: %ld corpus files replayed without a crash\n", fuzz_name, n);
	return 0;
}
