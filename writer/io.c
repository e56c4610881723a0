/*
 * io.c - whole reads and writes at an offset, through short transfers and
 * EINTR; part of the output mapped to be written in place; scratch files.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

int pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
	const uint8_t *p = buf;
	while (len) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

int out_map(int fd, uint64_t off, size_t len, uint8_t **map)
{
	*map = NULL;
	long page = sysconf(_SC_PAGESIZE);
	if (len == 0 || page <= 0 || off > (uint64_t)INT64_MAX - len)
		return 1;
	/* fallocate, not posix_fallocate: glibc's stand-in writes a byte a block */
	if (fallocate(fd, 0, (off_t)off, (off_t)len) != 0)
		return errno == EOPNOTSUPP || errno == ENOSYS || errno == EINVAL ? 1 : -errno;
	uint64_t skew = off % (uint64_t)page;
	void *m = mmap(NULL, len + (size_t)skew, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
	               (off_t)(off - skew));
	if (m == MAP_FAILED)
		return 1;
	*map = (uint8_t *)m + skew;
	return 0;
}

void out_unmap(uint8_t *map, size_t len, uint64_t off)
{
	long page = sysconf(_SC_PAGESIZE);
	uint64_t skew = off % (uint64_t)(page > 0 ? page : 1);
	if (map)
		munmap(map - skew, len + (size_t)skew);
}

int pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	uint8_t *p = buf;
	while (len) {
		ssize_t n = pread(fd, p, len, (off_t)off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

int scratch_open(const char *dir, const char *name)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/bfi-%s-XXXXXX", dir, name);
	int fd = mkstemp(path);
	if (fd < 0)
		return -errno;
	unlink(path); /* it lives as long as the descriptor, and no crash leaves it behind */
	return fd;
}
