/* manifest.c - encode and check a collection's manifest (spec/format.md, "Collections"). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bfi_error.h"
#include "bfi_manifest.h"
#include "format.h"

/* Field offsets of the manifest's head and of a segment entry. */
enum {
	M_MAGIC = 0,
	M_MAJOR = 8,
	M_MINOR = 10,
	M_RESERVED = 12,
	M_FILE_SIZE = 16,
	M_GENERATION = 24,
	M_N_SEGMENTS = 32,
	M_N_REMOVED = 36,
	M_N_SETS = 40,
	M_ID = 48,
	S_NAME = 0,
	S_N_SETS = 32,
	S_FIRST = 40,
	S_ID = 48,
};

int bfi_segment_name_ok(const char *name)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = strlen(name);
	if (n != 4 + 16 + 1 + 4 || memcmp(name, "seg-", 4) != 0 || name[20] != '-')
		return 0;
	for (size_t i = 4; i < n; i++)
		if (i != 20 && (name[i] == 0 || strchr(hex, name[i]) == NULL))
			return 0;
	return 1;
}

uint64_t bfi_manifest_size(const struct bfi_manifest *m)
{
	if (m->n_segments > BFI_MAX_SEGMENTS)
		return 0;
	return BFI_MANIFEST_HEAD + (uint64_t)m->n_segments * BFI_SEGMENT_ENTRY +
	       (uint64_t)m->n_removed * 8 + 8;
}

void bfi_manifest_encode(uint8_t *out, const struct bfi_manifest *m)
{
	uint64_t size = bfi_manifest_size(m);
	memset(out, 0, (size_t)size);
	memcpy(out + M_MAGIC, BFI_MANIFEST_MAGIC, 8);
	bfi_put16(out + M_MAJOR, BFI_MANIFEST_MAJOR);
	bfi_put16(out + M_MINOR, BFI_MANIFEST_MINOR);
	bfi_put64(out + M_FILE_SIZE, size);
	bfi_put64(out + M_GENERATION, m->generation);
	bfi_put32(out + M_N_SEGMENTS, m->n_segments);
	bfi_put32(out + M_N_REMOVED, m->n_removed);
	bfi_put64(out + M_N_SETS, m->n_sets);
	memcpy(out + M_ID, m->collection_id, 16);
	uint8_t *e = out + BFI_MANIFEST_HEAD;
	for (uint32_t i = 0; i < m->n_segments; i++, e += BFI_SEGMENT_ENTRY) {
		memcpy(e + S_NAME, m->segs[i].name, strlen(m->segs[i].name));
		bfi_put64(e + S_N_SETS, m->segs[i].n_sets);
		bfi_put64(e + S_FIRST, m->segs[i].first);
		memcpy(e + S_ID, m->segs[i].snapshot_id, 16);
	}
	for (uint32_t i = 0; i < m->n_removed; i++, e += 8) {
		bfi_put32(e, (uint32_t)(m->removed[i] >> 32));
		bfi_put32(e + 4, (uint32_t)m->removed[i]);
	}
	bfi_put64(e, bfi_checksum64(out, (size_t)(size - 8)));
}

void bfi_manifest_free(struct bfi_manifest *m)
{
	free(m->segs);
	free(m->removed);
	m->segs = NULL;
	m->removed = NULL;
}

#define FAIL(code, why)                                                                            \
	do {                                                                                       \
		if (what)                                                                          \
			*what = (why);                                                             \
		bfi_manifest_free(m);                                                              \
		return (code);                                                                     \
	} while (0)

/* The segment entries, after the checksum: names, set counts, firsts. */
static int decode_segments(const uint8_t *in, struct bfi_manifest *m, uint64_t *total,
                           const char **what)
{
	const uint8_t *e = in + BFI_MANIFEST_HEAD;
	uint64_t next = 0;
	for (uint32_t i = 0; i < m->n_segments; i++, e += BFI_SEGMENT_ENTRY) {
		struct bfi_segment *g = &m->segs[i];
		memcpy(g->name, e + S_NAME, BFI_SEGMENT_NAME_MAX);
		g->name[BFI_SEGMENT_NAME_MAX] = 0;
		size_t len = strlen(g->name);
		for (size_t j = len; j < BFI_SEGMENT_NAME_MAX; j++)
			if (e[S_NAME + j] != 0)
				FAIL(BFI_E_MANIFEST, "a segment name is not NUL-padded");
		if (!bfi_segment_name_ok(g->name))
			FAIL(BFI_E_MANIFEST, "a segment name is not seg-GGGGGGGGGGGGGGGG-IIII");
		for (uint32_t j = 0; j < i; j++)
			if (strcmp(m->segs[j].name, g->name) == 0)
				FAIL(BFI_E_MANIFEST, "a segment is listed twice");
		g->n_sets = bfi_get64(e + S_N_SETS);
		g->first = bfi_get64(e + S_FIRST);
		memcpy(g->snapshot_id, e + S_ID, 16);
		if (g->n_sets == 0 || g->n_sets > UINT32_MAX)
			FAIL(BFI_E_MANIFEST, "a segment's set count is out of range");
		if (g->first != next || next + g->n_sets > (uint64_t)UINT32_MAX + 1)
			FAIL(BFI_E_MANIFEST, "a segment's first ordinal does not follow the one before");
		next += g->n_sets;
	}
	*total = next;
	return 0;
}

int bfi_manifest_decode(const uint8_t *in, uint64_t size, struct bfi_manifest *m,
                        const char **what)
{
	memset(m, 0, sizeof *m);
	if (size < 8 || memcmp(in + M_MAGIC, BFI_MANIFEST_MAGIC, 8) != 0)
		FAIL(size < 8 && memcmp(in, BFI_MANIFEST_MAGIC, (size_t)size) == 0 ? BFI_E_TRUNCATED
		                                                                      : BFI_E_BAD_MAGIC,
		     "the manifest's magic");
	if (size < BFI_MANIFEST_HEAD + 8)
		FAIL(BFI_E_TRUNCATED, "the manifest ends inside its head");
	/* the version before the checksum: another version may checksum otherwise */
	m->major = bfi_get16(in + M_MAJOR);
	m->minor = bfi_get16(in + M_MINOR);
	if (m->major != BFI_MANIFEST_MAJOR || m->minor > BFI_MANIFEST_MINOR)
		FAIL(BFI_E_VERSION, "the manifest's version is not one this reader reads");
	uint64_t file_size = bfi_get64(in + M_FILE_SIZE);
	if (size < file_size)
		FAIL(BFI_E_TRUNCATED, "the manifest is shorter than its size field says");
	if (size > file_size)
		FAIL(BFI_E_SIZE, "the manifest is longer than its size field says");
	if (bfi_get64(in + size - 8) != bfi_checksum64(in, (size_t)(size - 8)))
		FAIL(BFI_E_MANIFEST, "the manifest's checksum does not match");
	if (bfi_get32(in + M_RESERVED) != 0)
		FAIL(BFI_E_RESERVED, "the manifest's reserved field is not zero");
	m->generation = bfi_get64(in + M_GENERATION);
	m->n_segments = bfi_get32(in + M_N_SEGMENTS);
	m->n_removed = bfi_get32(in + M_N_REMOVED);
	m->n_sets = bfi_get64(in + M_N_SETS);
	memcpy(m->collection_id, in + M_ID, 16);
	if (m->generation == 0 || m->n_segments > BFI_MAX_SEGMENTS ||
	    bfi_manifest_size(m) != size)
		FAIL(BFI_E_MANIFEST, "the manifest's generation, counts and size disagree");
	m->segs = calloc(m->n_segments ? m->n_segments : 1, sizeof *m->segs);
	m->removed = calloc(m->n_removed ? m->n_removed : 1, sizeof *m->removed);
	if (m->segs == NULL || m->removed == NULL)
		FAIL(-ENOMEM, "out of memory");
	uint64_t total;
	int rc = decode_segments(in, m, &total, what);
	if (rc)
		return rc; /* freed, and said */
	const uint8_t *r = in + BFI_MANIFEST_HEAD + (uint64_t)m->n_segments * BFI_SEGMENT_ENTRY;
	for (uint32_t i = 0; i < m->n_removed; i++, r += 8) {
		uint32_t seg = bfi_get32(r), ord = bfi_get32(r + 4);
		m->removed[i] = (uint64_t)seg << 32 | ord;
		if (seg >= m->n_segments || ord >= m->segs[seg].n_sets ||
		    (i && m->removed[i] <= m->removed[i - 1]))
			FAIL(BFI_E_MANIFEST, "a removed set is out of range or out of order");
	}
	if (m->n_removed > total || total - m->n_removed != m->n_sets)
		FAIL(BFI_E_MANIFEST, "the live set count does not add up");
	return 0;
}

int bfi_manifest_segment_of(const struct bfi_manifest *m, uint64_t g, uint32_t *ord)
{
	uint32_t lo = 0, hi = m->n_segments;
	if (m->n_segments == 0)
		return -1;
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (m->segs[mid].first <= g)
			lo = mid;
		else
			hi = mid;
	}
	if (g < m->segs[lo].first || g - m->segs[lo].first >= m->segs[lo].n_sets)
		return -1;
	*ord = (uint32_t)(g - m->segs[lo].first);
	return (int)lo;
}
