/*
 * group_files.c - a group's files: several files read one after another
 * as one set (bfi_writer_add_group), queued as one string.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "sources.h"

int is_group(const char *file)
{
	return file[0] == '\n';
}

size_t group_name(const char *file, const char **name)
{
	*name = file + 1;
	return strcspn(file + 1, "\n");
}

int file_or_group(const struct source_kind *how, const bfi_writer *w, const char *file,
                  unsigned k, int (*emit)(void *ctx, const char *key, size_t len), void *ctx,
                  unsigned *deepest, char *err, size_t errlen)
{
	if (!is_group(file))
		return how->file_keys(w, file, k, emit, ctx, deepest, err, errlen);
	int rc = 0;
	for (const char *p = strchr(file + 1, '\n'); rc == 0 && p; p = strchr(p + 1, '\n')) {
		size_t n = strcspn(p + 1, "\n");
		char *path = strndup(p + 1, n);
		rc = path ? how->file_keys(w, path, k, emit, ctx, deepest, err, errlen) : -ENOMEM;
		free(path);
	}
	return rc;
}

