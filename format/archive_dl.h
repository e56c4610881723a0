/*
 * archive_dl.h - libarchive, loaded the first time a pack is read or
 * written (archive_dl.c) instead of linked: libarchive and the libraries
 * it needs (ICU, XML, ACLs, nettle and more) are loaded and relocated at
 * the start of every process that links them, and most bfi processes
 * never touch a pack. Files that use libarchive include this after <archive.h>: each
 * call below goes through a pointer that bfi_archive_load() fills (the
 * tests' hostile tar streams use set_symlink, which bfi does not).
 */
#ifndef BFI_ARCHIVE_DL_H
#define BFI_ARCHIVE_DL_H

#include <archive.h>
#include <archive_entry.h>

#define BFI_ARCHIVE_CALLS(X)                                                                      \
	X(archive_entry_filetype) X(archive_entry_free) X(archive_entry_hardlink)                      \
	X(archive_entry_new) X(archive_entry_pathname) X(archive_entry_set_filetype)                   \
	X(archive_entry_set_mtime) X(archive_entry_set_pathname) X(archive_entry_set_perm)             \
	X(archive_entry_set_size) X(archive_entry_set_symlink) X(archive_entry_size)                   \
	X(archive_entry_symlink)                                                                       \
	X(archive_error_string) X(archive_read_data) X(archive_read_free)                              \
	X(archive_read_header_position) X(archive_read_new) X(archive_read_next_header)                \
	X(archive_read_open2) X(archive_read_support_format_tar) X(archive_set_error)                  \
	X(archive_write_close) X(archive_write_data) X(archive_write_finish_entry)                     \
	X(archive_write_free) X(archive_write_header) X(archive_write_new) X(archive_write_open)        \
	X(archive_write_set_bytes_in_last_block) X(archive_write_set_bytes_per_block)                 \
	X(archive_write_set_format_pax_restricted)

struct bfi_archive_calls {
#define BFI_ARCHIVE_PTR(f) __typeof__(f) *f;
	BFI_ARCHIVE_CALLS(BFI_ARCHIVE_PTR)
#undef BFI_ARCHIVE_PTR
};
extern struct bfi_archive_calls bfi__archive;

/*
 * Load libarchive once (thread-safe). 0, or -ENOSYS with *why (if not
 * NULL) saying what is missing, for an error message.
 */
int bfi_archive_load(const char **why);

#ifndef BFI_ARCHIVE_DL_SELF
#define archive_entry_filetype bfi__archive.archive_entry_filetype
#define archive_entry_free bfi__archive.archive_entry_free
#define archive_entry_hardlink bfi__archive.archive_entry_hardlink
#define archive_entry_new bfi__archive.archive_entry_new
#define archive_entry_pathname bfi__archive.archive_entry_pathname
#define archive_entry_set_filetype bfi__archive.archive_entry_set_filetype
#define archive_entry_set_mtime bfi__archive.archive_entry_set_mtime
#define archive_entry_set_pathname bfi__archive.archive_entry_set_pathname
#define archive_entry_set_perm bfi__archive.archive_entry_set_perm
#define archive_entry_set_size bfi__archive.archive_entry_set_size
#define archive_entry_size bfi__archive.archive_entry_size
#define archive_entry_set_symlink bfi__archive.archive_entry_set_symlink
#define archive_entry_symlink bfi__archive.archive_entry_symlink
#define archive_error_string bfi__archive.archive_error_string
#define archive_read_data bfi__archive.archive_read_data
#define archive_read_free bfi__archive.archive_read_free
#define archive_read_header_position bfi__archive.archive_read_header_position
#define archive_read_new bfi__archive.archive_read_new
#define archive_read_next_header bfi__archive.archive_read_next_header
#define archive_read_open2 bfi__archive.archive_read_open2
#define archive_read_support_format_tar bfi__archive.archive_read_support_format_tar
#define archive_set_error bfi__archive.archive_set_error
#define archive_write_close bfi__archive.archive_write_close
#define archive_write_data bfi__archive.archive_write_data
#define archive_write_finish_entry bfi__archive.archive_write_finish_entry
#define archive_write_free bfi__archive.archive_write_free
#define archive_write_header bfi__archive.archive_write_header
#define archive_write_new bfi__archive.archive_write_new
#define archive_write_open bfi__archive.archive_write_open
#define archive_write_set_bytes_in_last_block bfi__archive.archive_write_set_bytes_in_last_block
#define archive_write_set_bytes_per_block bfi__archive.archive_write_set_bytes_per_block
#define archive_write_set_format_pax_restricted bfi__archive.archive_write_set_format_pax_restricted
#endif

#endif
