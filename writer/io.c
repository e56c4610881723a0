/*
 * io.c - whole reads and writes at an offset, through short transfers and
 * EINTR; scratch files.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
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
