/*
 * map.c - a snapshot's files mapped read-only, and what identifies a file's
 * state (device, inode, size, mtime) for the cheap change check.
 */
#include <errno.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "internal.h"

#define HUGE_MIN (2u << 20) /* files at least one 2 MiB folio long get MADV_HUGEPAGE */

void bfi__file_id(const struct stat *st, struct bfi_file_id *id)
{
	id->dev = (uint64_t)st->st_dev;
	id->ino = (uint64_t)st->st_ino;
	id->size = (uint64_t)st->st_size;
	id->mtime_sec = (int64_t)st->st_mtim.tv_sec;
	id->mtime_nsec = (int64_t)st->st_mtim.tv_nsec;
}

int bfi__map_file(int fd, const uint8_t **map, uint64_t *size, int huge, struct bfi_file_id *id)
{
	struct stat st;
	if (fstat(fd, &st) != 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return BFI_E_NOT_REGULAR;
	if (id)
		bfi__file_id(&st, id);
	*size = (uint64_t)st.st_size;
	*map = NULL;
	if (*size == 0)
		return 0;
	if ((uint64_t)(size_t)*size != *size)
		return -EFBIG;
	void *p = mmap(NULL, (size_t)*size, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
#ifdef MADV_HUGEPAGE
	/*
	 * Ask for 2 MiB page-cache folios. Pages that are not cached yet are
	 * then read in as 2 MiB folios, which a fresh process maps with one
	 * fault each instead of one per 4-64 KB. Only a hint: a kernel
	 * without file THP refuses it, and the mapping works as before.
	 */
	if (huge && *size >= HUGE_MIN)
		(void)madvise(p, (size_t)*size, MADV_HUGEPAGE);
#endif
	*map = p;
	return 0;
}
