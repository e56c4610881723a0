/* zin.h - reading input files that may be compressed (zin.c); not installed. */
#ifndef BFI_ZIN_H
#define BFI_ZIN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <zlib.h>

/*
 * An input file, plain or compressed by gzip, xz, bzip2 or zstd (zin.c),
 * told by its first bytes: the streams (members, frames) are decompressed
 * in turn, and bytes after the last one, or a stream cut short, are an
 * error [BFI_E_INPUT] where the libraries' own file readers would stop
 * quietly.
 */
enum { ZIN_START, ZIN_PLAIN, ZIN_MEMBER, ZIN_BETWEEN, ZIN_END, ZIN_FAILED };
enum { ZIN_GZIP = 1, ZIN_XZ, ZIN_BZIP2, ZIN_ZSTD };
struct zin {
	int fd, state, z_live;
	int codec;  /* ZIN_* of a compressed file, 0 plain */
	z_stream z; /* gzip */
	void *dec;  /* xz, bzip2 or zstd: the library's stream (zin.c) */
	int frame_open; /* zstd: a frame begun and not yet ended, */
	uint64_t frame_at; /* which begins at this offset */
	unsigned char *in;
	size_t have, pos; /* bytes in in[], and how many of them are used */
	uint64_t offset;  /* of in[0] in the file */
	const char *label;
	unsigned threads;    /* xz: blocks decompressed on up to this many of liblzma's threads, */
	uint64_t mt_memory;  /* within about this much memory (zin_threads) */
};
/* Open path ("-": standard input); 0, or -errno with err set. */
int zin_open(struct zin *r, const char *path, char *err, size_t errlen);
/* Up to n bytes into buf: how many (0 at the end), or BFI_E_INPUT / -errno with err set. */
ssize_t zin_read(struct zin *r, void *buf, size_t n, char *err, size_t errlen);
void zin_close(struct zin *r);
/*
 * Before the first zin_read: an xz file's blocks decompressed on up to
 * threads of liblzma's own threads within about memory bytes (xz -T's
 * files; a file in one block is read on the calling thread). Where a
 * damaged file's error is found then depends on the threads.
 */
void zin_threads(struct zin *r, unsigned threads, uint64_t memory);
/* The compression (ZIN_*) a file's first n bytes at p name, or 0: plain. */
int zin_codec_of(const unsigned char *p, size_t n);
/* The length of name's compression suffix (".gz", ".xz", ".bz2", ".zst", any case), or 0. */
size_t zin_suffix(const char *name, size_t len);

#endif
