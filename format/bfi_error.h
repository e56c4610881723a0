/*
 * bfi_error.h - error codes shared by every part of libbfi.
 *
 * Every fallible bfi call returns 0 on success or a negative code. Codes in
 * [BFI_E_FIRST, BFI_E_LAST] are bfi's own and are grouped by range: usage,
 * format (the file is not a bfi snapshot this reader can use, or it is
 * damaged), catalog, and writer input. Any other negative value is a negated
 * errno from the operating system (for example -ENOENT, -ENOMEM).
 * bfi_strerror() describes both, like mdb_strerror() does for LMDB.
 */
#ifndef BFI_ERROR_H
#define BFI_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define BFI_API __attribute__((visibility("default")))
#define BFI_MUST_CHECK __attribute__((warn_unused_result))
#else
#define BFI_API
#define BFI_MUST_CHECK
#endif

enum {
	BFI_E_FIRST = -31999,

	/* usage: the caller asked for something impossible (-31999..-31900) */
	BFI_E_INVALID = -31999,   /* an argument is out of range or NULL */
	BFI_E_LIMIT = -31998,     /* a documented limit (spec/format.md, Limits) */
	BFI_E_NOT_FOUND = -31997, /* no such set name or ordinal */
	BFI_E_SYNTAX = -31996,    /* a query expression does not parse */
	BFI_E_KEY_FORM = -31995,  /* a query made otherwise than the snapshot's keys were */
	BFI_E_TIMEOUT = -31994,   /* a query ran past the deadline set on its result */

	/* format: the index file (-31899..-31800) */
	BFI_E_TRUNCATED = -31899,       /* shorter than its header says */
	BFI_E_BAD_MAGIC = -31898,       /* leading magic wrong: not a bfi index */
	BFI_E_BAD_TRAILER = -31897,     /* trailing magic wrong */
	BFI_E_VERSION = -31896,         /* major, or minor newer than known */
	BFI_E_INCOMPAT = -31895,        /* an incompatible feature flag unknown here */
	BFI_E_RESERVED = -31894,        /* a reserved field is not zero */
	BFI_E_HEADER_CHECKSUM = -31893, /* header checksum mismatch */
	BFI_E_TABLE_CHECKSUM = -31892,  /* section table checksum mismatch */
	BFI_E_BAD_SECTION = -31891,     /* a section entry is out of bounds, misaligned or overlapping */
	BFI_E_ENCODING = -31890,        /* a section uses an encoding not supported here */
	BFI_E_BAD_LAYOUT = -31889,      /* a layout descriptor is inconsistent */
	BFI_E_NO_LAYOUT = -31888,       /* no section this reader can query */
	BFI_E_DATA_CHECKSUM = -31887,   /* deep verify: a data region's checksum mismatch */
	BFI_E_SIZE = -31886,            /* longer than its header says */
	BFI_E_UNKNOWN_SECTION = -31885, /* a required section kind unknown here */
	BFI_E_NOT_REGULAR = -31884,     /* a directory, FIFO, device or socket where a file belongs */
	BFI_E_CHANGED = -31883,         /* a mapped file was changed in place since it was opened */
	BFI_E_MANIFEST = -31882,        /* a collection's manifest is damaged: checksum, sizes or tables */
	BFI_E_PACK = -31881,            /* not a bfi pack, or its seek table or tar members are wrong */
	BFI_E_PACK_TRUNCATED = -31880,  /* a pack ends before its seek table says */
	BFI_E_PACK_FRAME = -31879,      /* a pack's zstd frame is damaged: it does not decompress to its size and checksum */
	BFI_E_SCAN_ONLY = -31878,       /* a pack opened with BFI_OPEN_SCAN answers bfi_scan only */

	/* catalog (-31799..-31700) */
	BFI_E_CATALOG_MISMATCH = -31799, /* catalog does not belong to this index */
	BFI_E_CATALOG = -31798,          /* catalog is malformed */
	BFI_E_NO_CATALOG = -31797,       /* snapshot opened without its catalog */
	BFI_E_LMDB = -31796,             /* LMDB reported an error */

	/* writer input (-31699..-31600) */
	BFI_E_INPUT = -31699,     /* malformed input line or file */
	BFI_E_NO_SETS = -31698,   /* the input holds no sets */
	BFI_E_DUP_SET = -31697,   /* two inputs give the same set name */
	BFI_E_EXISTS = -31696,    /* output exists and is not a snapshot */
	BFI_E_FILTER_MISMATCH = -31695, /* filters to index differ in width, k or hash */
	BFI_E_BUSY = -31694,      /* another writer holds the collection's lock */
	BFI_E_JOIN = -31693,      /* snapshots to join differ in how their keys were made, or cannot be */

	BFI_E_LAST = -31600
};

/*
 * Describe an error code. Never returns NULL. For bfi's own codes the text
 * is static; for negated errno values it is strerror(-code). Like
 * strerror(3), the text may be overwritten by a later call for errno values.
 */
BFI_API const char *bfi_strerror(int code);

#ifdef __cplusplus
}
#endif
#endif
