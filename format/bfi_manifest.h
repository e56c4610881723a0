/*
 * bfi_manifest.h - a collection's manifest (spec/format.md, "Collections"):
 * the live segments, each a snapshot, and the sets removed from them.
 * Shared by the writer, which commits manifests, and the reader.
 */
#ifndef BFI_MANIFEST_H
#define BFI_MANIFEST_H

#include <stddef.h>
#include <stdint.h>

#define BFI_MANIFEST_NAME "MANIFEST"
#define BFI_COLLECTION_LOCK "LOCK"
#define BFI_MANIFEST_MAGIC "\x89" "BFC\r\n\x1a\n"
#define BFI_MANIFEST_MAJOR 1u
#define BFI_MANIFEST_MINOR 0u
#define BFI_MANIFEST_HEAD 64u
#define BFI_SEGMENT_ENTRY 64u
#define BFI_SEGMENT_NAME_MAX 32u /* bytes of the name field, NUL-padded */
#define BFI_MAX_SEGMENTS 65536u

struct bfi_segment {
	char name[BFI_SEGMENT_NAME_MAX + 1]; /* "seg-" 16 hex digits "-" 4 hex digits */
	uint64_t n_sets;
	uint64_t first; /* global ordinal of its set 0 */
	uint8_t snapshot_id[16];
};

struct bfi_manifest {
	uint16_t major, minor;
	uint64_t generation;
	uint64_t n_sets; /* live sets */
	uint8_t collection_id[16];
	uint32_t n_segments, n_removed;
	struct bfi_segment *segs;
	uint64_t *removed; /* segment index << 32 | ordinal, ascending */
};

/* Bytes of m's encoding, or 0 if it would pass the limits. */
uint64_t bfi_manifest_size(const struct bfi_manifest *m);
/* Encode m into out (bfi_manifest_size bytes), checksum included. */
void bfi_manifest_encode(uint8_t *out, const struct bfi_manifest *m);
/*
 * Check and decode size bytes at in: magic, version, size, checksum, then
 * names, firsts, the removed list and the live count. 0, or a BFI_E_* code
 * with *what (if not NULL) saying which check failed. On success m owns
 * arrays that bfi_manifest_free releases.
 */
int bfi_manifest_decode(const uint8_t *in, uint64_t size, struct bfi_manifest *m,
                        const char **what);
void bfi_manifest_free(struct bfi_manifest *m);
/* The segment holding global ordinal g, and g's ordinal in it; -1 if none does. */
int bfi_manifest_segment_of(const struct bfi_manifest *m, uint64_t g, uint32_t *ord);
/* Is name a well-formed segment directory name (spec: "seg-" 16 hex "-" 4 hex)? */
int bfi_segment_name_ok(const char *name);

#endif
