/* group.c - bfi_writer_add_group: one set of several files (a sample's read files), by input kind. */
#include <string.h>

#include "internal.h"
#include "sources.h"

/* The input kinds whose files a group reads as one set. */
static const struct source_kind *(*const group_kinds[])(void) = {
    writer_fasta_source, writer_protein_source, writer_key_source};
#define N_GROUP_KINDS (sizeof group_kinds / sizeof group_kinds[0])

int bfi_writer_add_group(bfi_writer *w, const char *name, size_t len, const char *const *paths,
                         size_t n, const char *input, unsigned k)
{
	if (w == NULL || name == NULL || len == 0 || paths == NULL || n == 0 || input == NULL ||
	    memchr(name, '\n', len))
		return BFI_E_INVALID;
	char names[64] = "";
	for (size_t i = 0; i < N_GROUP_KINDS; i++) {
		const struct source_kind *how = group_kinds[i]();
		if (!strcmp(input, how->name)) {
			int rc = how->setup ? how->setup(w, k) : 0;
			return rc ? rc : sources_add_group(w, name, len, paths, n, how, k);
		}
		size_t at = strlen(names);
		const char *sep = i == 0 ? "" : i + 1 < N_GROUP_KINDS ? ", " : " or ";
		snprintf(names + at, sizeof names - at, "%s%s", sep, how->name);
	}
	return writer_fail(w, BFI_E_INVALID, "a group of files takes %s input, not %s", names, input);
}
