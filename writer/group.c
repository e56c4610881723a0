/* group.c - bfi_writer_add_group: one set of several files (a sample's read files), by input kind. */
#include <string.h>

#include "internal.h"
#include "sources.h"

int bfi_writer_add_group(bfi_writer *w, const char *name, size_t len, const char *const *paths,
                         size_t n, const char *input, unsigned k)
{
	if (w == NULL || name == NULL || len == 0 || paths == NULL || n == 0 || input == NULL ||
	    memchr(name, '\n', len))
		return BFI_E_INVALID;
	if (!strcmp(input, "fasta")) {
		int rc = writer_fasta_setup(w, k);
		return rc ? rc : sources_add_group(w, name, len, paths, n, writer_fasta_source(), k);
	}
	if (!strcmp(input, "keys"))
		return sources_add_group(w, name, len, paths, n, writer_key_source(), 0);
	return writer_fail(w, BFI_E_INVALID, "a group of files takes fasta or keys input, not %s",
	                   input);
}
