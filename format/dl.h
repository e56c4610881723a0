/*
 * dl.h - a library loaded when first needed (dlopen) instead of linked,
 * its calls reached through a struct of pointers: libarchive for packs
 * (archive_dl.c), libmicrohttpd for bfi serve (tools/serve/mhd_dl.c).
 */
#ifndef BFI_DL_H
#define BFI_DL_H

#include <stddef.h>

/*
 * Open soname and fill the n pointers slots[i] (each a function pointer
 * of the caller's struct, seen as an object pointer, as dlsym gives it)
 * with its symbols names[i]. 0, or -ENOSYS with why (cap bytes) saying
 * what is missing, need (what needs the library, and its package) first.
 */
int bfi__dl_fill(const char *soname, const char *need, const char *const *names,
                 void **const *slots, size_t n, char *why, size_t cap);

#endif
