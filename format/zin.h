/* zin.h - reading input files that may be gzip-compressed (zin.c); not installed. */
#ifndef BFI_ZIN_H
#define BFI_ZIN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <zlib.h>

/*
 * An input file, gzip-compressed or not (zin.c): gzip members are
 * decompressed in turn, and bytes after the last one, or a member cut
 * short, are an error [BFI_E_INPUT] where zlib's gzread would stop quietly.
 */
enum { ZIN_START, ZIN_PLAIN, ZIN_MEMBER, ZIN_BETWEEN, ZIN_END, ZIN_FAILED };
struct zin {
	int fd, state, z_live;
	z_stream z;
	unsigned char *in;
	size_t have, pos; /* bytes in in[], and how many of them are used */
	uint64_t offset;  /* of in[0] in the file */
	const char *label;
};
/* Open path ("-": standard input); 0, or -errno with err set. */
int zin_open(struct zin *r, const char *path, char *err, size_t errlen);
/* Up to n bytes into buf: how many (0 at the end), or BFI_E_INPUT / -errno with err set. */
ssize_t zin_read(struct zin *r, void *buf, size_t n, char *err, size_t errlen);
void zin_close(struct zin *r);

#endif
