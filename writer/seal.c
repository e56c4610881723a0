/*
 * seal.c - what binds a snapshot's bytes: the layouts' descriptors, the
 * chunk and section checksums read back from the written index, the
 * catalog's digest and the content-derived snapshot id.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "internal.h"
#include "publish.h"

/* Read the index back: checksums of chunks [4096, sums_at) and of each section. */
int checksum_back(bfi_writer *w, int fd, uint64_t sums_at, struct bfi_section *sec,
                         uint32_t n_sec, uint8_t *table)
{
	/* whole chunks, up to 64, in a quarter of the budget */
	uint64_t chunks = writer_budget(w) / 4 / BFI_CHUNK_SIZE;
	size_t blen = (size_t)(chunks < 1 ? 1 : chunks > 64 ? 64 : chunks) * BFI_CHUNK_SIZE;
	uint8_t *buf = malloc(blen);
	XXH3_state_t *st[BFI_MAX_SECTIONS] = {0};
	int rc = 0;
	for (uint32_t i = 0; i < n_sec && rc == 0; i++)
		if ((st[i] = XXH3_createState()) == NULL || XXH3_64bits_reset(st[i]) != XXH_OK)
			rc = -ENOMEM;
	if (buf == NULL)
		rc = -ENOMEM;
	uint64_t c = 0;
	for (uint64_t off = BFI_SECTION_ALIGN; off < sums_at && rc == 0; off += blen) {
		size_t len = sums_at - off < blen ? (size_t)(sums_at - off) : blen;
		rc = pread_all(fd, buf, len, off);
		for (size_t o = 0; rc == 0 && o < len; o += BFI_CHUNK_SIZE, c++) {
			size_t cl = len - o < BFI_CHUNK_SIZE ? len - o : BFI_CHUNK_SIZE;
			bfi_put64(table + c * 8, bfi_checksum64(buf + o, cl));
		}
		/* Each section is one contiguous span inside the covered bytes. */
		for (uint32_t i = 0; i < n_sec && rc == 0; i++) {
			uint64_t a = off > sec[i].offset ? off : sec[i].offset;
			uint64_t e = sec[i].offset + sec[i].size, b = off + len < e ? off + len : e;
			if (a < b)
				XXH3_64bits_update(st[i], buf + (a - off), (size_t)(b - a));
		}
		progress(w, "checksums", off + len - BFI_SECTION_ALIGN, sums_at - BFI_SECTION_ALIGN);
	}
	for (uint32_t i = 0; i < n_sec; i++) {
		if (rc == 0)
			sec[i].checksum = XXH3_64bits_digest(st[i]);
		XXH3_freeState(st[i]);
	}
	free(buf);
	return rc;
}

int digest_file(const char *path, uint8_t digest[16], uint64_t *size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	XXH3_state_t *st = XXH3_createState();
	uint8_t *buf = malloc(1 << 20);
	int rc = 0;
	if (st == NULL || buf == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	XXH3_128bits_reset(st);
	*size = 0;
	for (;;) {
		ssize_t n = read(fd, buf, 1 << 20);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			goto out;
		}
		if (n == 0)
			break;
		XXH3_128bits_update(st, buf, (size_t)n);
		*size += (uint64_t)n;
	}
	XXH128_hash_t h = XXH3_128bits_digest(st);
	bfi_put64(digest, h.low64);
	bfi_put64(digest + 8, h.high64);
out:
	free(buf);
	XXH3_freeState(st);
	close(fd);
	return rc;
}

/* Content-derived id: the same input gives the same id, any change a new one. */
void snapshot_id(const struct names *names, const uint32_t *old_of_new, const uint8_t *sums,
                        size_t sums_len, uint32_t k, uint8_t id[16])
{
	XXH3_state_t *st = XXH3_createState();
	uint8_t params[4];
	bfi_put32(params, k);
	XXH3_128bits_reset(st);
	XXH3_128bits_update(st, "bfi snapshot id", 15);
	XXH3_128bits_update(st, params, sizeof params);
	XXH3_128bits_update(st, sums, sums_len);
	for (uint32_t o = 0; o < names->n; o++) {
		size_t len;
		const char *p = names_get(names, old_of_new[o], &len);
		uint8_t l[2];
		bfi_put16(l, (uint16_t)len);
		XXH3_128bits_update(st, l, 2);
		XXH3_128bits_update(st, p, len);
	}
	XXH128_hash_t h = XXH3_128bits_digest(st);
	bfi_put64(id, h.low64);
	bfi_put64(id + 8, h.high64);
	XXH3_freeState(st);
}
