/*
 * build.c - lay out and write a snapshot (spec/format.md, "File layout").
 *
 * 1. Sort and de-duplicate the (ord, key hash) records; count distinct
 *    keys per set and choose m and k.
 * 2. Fill the flat rows a stripe at a time (as many rows as half the
 *    memory budget holds), one pass over the records per stripe, and
 *    write each stripe in place. Count each set's ones as we go.
 * 3. Read the index back to compute the chunk and section checksums.
 * 4. Derive the snapshot id from the content, write the catalog, then the
 *    header that binds them, fsync, and publish.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "bfi_hash.h"
#include "internal.h"

static int pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
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

static int pread_all(int fd, void *buf, size_t len, uint64_t off)
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

/*
 * m and k (spec/format.md, "Choosing m and k"): k = ceil(log2(1/p)) and
 * m = ceil(n k / ln 2) for the largest set's n distinct keys, as in the
 * Bloofi paper; explicit values override either.
 */
static void choose_params(const struct bfi_build_options *o, uint64_t n, uint64_t *m,
                          uint32_t *k)
{
	double dn = n ? (double)n : 1.0;
	*k = o->hashes;
	*m = o->bits;
	if (*k == 0 && *m == 0)
		*k = (uint32_t)ceil(-log2(o->fpr));
	if (*k == 0)
		*k = (uint32_t)lround((double)*m / dn * M_LN2);
	if (*k < 1)
		*k = 1;
	if (*k > BFI_MAX_K)
		*k = BFI_MAX_K;
	if (*m == 0)
		*m = (uint64_t)ceil(dn * *k / M_LN2);
	if (*m < 64)
		*m = 64;
}

static void progress(bfi_writer *w, const char *phase, uint64_t done, uint64_t total)
{
	if (w->opt.progress)
		w->opt.progress(w->opt.progress_ctx, phase, done, total);
}

/* Pass 1: distinct keys per set. */
static int count_distinct(bfi_writer *w, uint64_t *distinct, uint64_t *pairs)
{
	struct spool_iter it;
	struct rec r;
	int rc = spool_iter_begin(&it, &w->spool);
	*pairs = 0;
	while (rc == 0 && (rc = spool_iter_next(&it, &r)) == 1) {
		distinct[r.ord]++;
		if ((++*pairs & 0xfffff) == 0)
			progress(w, "counting", *pairs, w->spool.added);
		rc = 0;
	}
	spool_iter_end(&it);
	return rc;
}

/* Pass 2: the rows, a stripe [r0, r1) at a time. */
static int write_rows(bfi_writer *w, int fd, uint64_t rows_at, uint64_t m, uint32_t k,
                      uint64_t row_bytes, uint64_t *ones)
{
	uint64_t stripe_rows = w->opt.memory / 2 / row_bytes;
	if (stripe_rows == 0)
		stripe_rows = 1;
	if (stripe_rows > m)
		stripe_rows = m;
	uint8_t *buf = malloc((size_t)(stripe_rows * row_bytes));
	if (buf == NULL)
		return writer_fail(w, -ENOMEM, "cannot allocate a %llu-byte row stripe",
		                   (unsigned long long)(stripe_rows * row_bytes));
	int rc = 0;
	for (uint64_t r0 = 0; r0 < m && rc == 0; r0 += stripe_rows) {
		uint64_t r1 = r0 + stripe_rows < m ? r0 + stripe_rows : m;
		memset(buf, 0, (size_t)((r1 - r0) * row_bytes));
		struct spool_iter it;
		struct rec r;
		rc = spool_iter_begin(&it, &w->spool);
		while (rc == 0 && (rc = spool_iter_next(&it, &r)) == 1) {
			bfi_keyhash h = {r.h1, r.h2};
			for (uint32_t i = 0; i < k; i++) {
				uint64_t p = bfi_hash_pos(h, i, m);
				if (p >= r0 && p < r1)
					buf[(p - r0) * row_bytes + r.ord / 8] |= (uint8_t)(1u << (r.ord % 8));
			}
			rc = 0;
		}
		spool_iter_end(&it);
		if (rc)
			break;
		for (uint64_t i = 0; i < (r1 - r0) * row_bytes / 8; i++) {
			uint64_t word = bfi_get64(buf + i * 8);
			uint64_t base = (i % (row_bytes / 8)) * 64;
			for (; word; word &= word - 1)
				ones[base + (uint64_t)__builtin_ctzll(word)]++;
		}
		rc = pwrite_all(fd, buf, (size_t)((r1 - r0) * row_bytes), rows_at + r0 * row_bytes);
		progress(w, "rows", r1, m);
	}
	free(buf);
	return rc;
}

/* Pass 3: checksums of chunks [4096, sums_at) and of the flat section. */
static int checksum_back(bfi_writer *w, int fd, uint64_t sums_at, const struct bfi_section *flat,
                         uint8_t *table, uint64_t *flat_sum)
{
	size_t blen = 64 * BFI_CHUNK_SIZE;
	uint8_t *buf = malloc(blen);
	XXH3_state_t *st = XXH3_createState();
	int rc = 0;
	if (buf == NULL || st == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	XXH3_64bits_reset(st);
	uint64_t c = 0;
	for (uint64_t off = BFI_SECTION_ALIGN; off < sums_at && rc == 0; off += blen) {
		size_t len = sums_at - off < blen ? (size_t)(sums_at - off) : blen;
		rc = pread_all(fd, buf, len, off);
		for (size_t o = 0; rc == 0 && o < len; o += BFI_CHUNK_SIZE, c++) {
			size_t cl = len - o < BFI_CHUNK_SIZE ? len - o : BFI_CHUNK_SIZE;
			bfi_put64(table + c * 8, bfi_checksum64(buf + o, cl));
		}
		/* The flat section is one contiguous span inside the covered bytes. */
		uint64_t a = off > flat->offset ? off : flat->offset;
		uint64_t b = off + len < flat->offset + flat->size ? off + len : flat->offset + flat->size;
		if (rc == 0 && a < b)
			XXH3_64bits_update(st, buf + (a - off), (size_t)(b - a));
		progress(w, "checksums", off + len - BFI_SECTION_ALIGN, sums_at - BFI_SECTION_ALIGN);
	}
	*flat_sum = XXH3_64bits_digest(st);
out:
	XXH3_freeState(st);
	free(buf);
	return rc;
}

static int digest_file(const char *path, uint8_t digest[16], uint64_t *size)
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
static void snapshot_id(const struct names *names, const uint8_t *sums, size_t sums_len,
                        uint64_t m, uint32_t k, uint8_t id[16])
{
	XXH3_state_t *st = XXH3_createState();
	uint8_t params[12];
	bfi_put64(params, m);
	bfi_put32(params + 8, k);
	XXH3_128bits_reset(st);
	XXH3_128bits_update(st, "bfi snapshot id", 15);
	XXH3_128bits_update(st, params, sizeof params);
	XXH3_128bits_update(st, sums, sums_len);
	for (uint32_t o = 0; o < names->n; o++) {
		size_t len;
		const char *p = names_get(names, o, &len);
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

static void remove_tmpdir(const char *dir)
{
	char p[4300];
	snprintf(p, sizeof p, "%s/%s", dir, BFI_INDEX_NAME);
	unlink(p);
	snprintf(p, sizeof p, "%s/%s", dir, BFI_CATALOG_NAME);
	unlink(p);
	snprintf(p, sizeof p, "%s/%s-lock", dir, BFI_CATALOG_NAME);
	unlink(p);
	rmdir(dir);
}

int bfi_writer_finish(bfi_writer *w, const char *path, struct bfi_build_summary *sum)
{
	if (w == NULL || path == NULL || w->finished)
		return BFI_E_INVALID;
	w->finished = 1;
	uint64_t n = w->names.n;
	if (n == 0)
		return writer_fail(w, BFI_E_NO_SETS, "the input holds no sets");
	int rc = 0, fd = -1;
	uint64_t *distinct = calloc(n, sizeof *distinct);
	uint64_t *ones = calloc(bfi_flat_row_bytes(n) * 8, sizeof *ones);
	uint8_t *sums = NULL;
	char tmpdir[4200], ipath[4300], cpath[4300];
	tmpdir[0] = 0;
	if (distinct == NULL || ones == NULL) {
		rc = writer_fail(w, -ENOMEM, "out of memory for per-set counts");
		goto out;
	}
	if (strlen(path) > 4000) {
		rc = writer_fail(w, BFI_E_INVALID, "output path too long");
		goto out;
	}

	progress(w, "sorting", 0, 0);
	spool_seal(&w->spool);
	uint64_t pairs, max_n = 0;
	rc = count_distinct(w, distinct, &pairs);
	if (rc) {
		rc = writer_fail(w, rc, "reading spilled keys: %s", bfi_strerror(rc));
		goto out;
	}
	for (uint64_t o = 0; o < n; o++)
		if (distinct[o] > max_n)
			max_n = distinct[o];
	uint64_t m;
	uint32_t k;
	choose_params(&w->opt, max_n, &m, &k);
	if (m > BFI_MAX_BITS) {
		rc = writer_fail(w, BFI_E_LIMIT, "m = %llu bits exceeds the limit of 2^40",
		                 (unsigned long long)m);
		goto out;
	}

	struct bfi_flat_desc fd_ = {n, m, k, BFI_HASH_XXH3_DOUBLE, bfi_flat_row_bytes(n),
	                            BFI_FLAT_DESC_SIZE};
	struct bfi_section sec[2];
	memset(sec, 0, sizeof sec);
	sec[0].kind = BFI_SEC_FLAT;
	sec[0].flags = BFI_SECF_REQUIRED;
	sec[0].offset = BFI_SECTION_ALIGN;
	sec[0].size = sec[0].stored_size = BFI_FLAT_DESC_SIZE + m * fd_.row_bytes;
	uint64_t sums_at = bfi_align_up(sec[0].offset + sec[0].size, BFI_SECTION_ALIGN);
	uint64_t chunks = (sums_at - BFI_SECTION_ALIGN + BFI_CHUNK_SIZE - 1) / BFI_CHUNK_SIZE;
	sec[1].kind = BFI_SEC_CHUNKSUMS;
	sec[1].flags = BFI_SECF_REQUIRED;
	sec[1].offset = sums_at;
	sec[1].size = sec[1].stored_size = BFI_CHUNKSUMS_DESC_SIZE + chunks * 8;
	uint64_t file_size = sums_at + sec[1].size + BFI_TRAILER_SIZE;

	snprintf(tmpdir, sizeof tmpdir, "%s.tmp-XXXXXX", path);
	if (mkdtemp(tmpdir) == NULL) {
		rc = writer_fail(w, -errno, "cannot create a temporary directory beside %s: %s", path,
		                 strerror(errno));
		tmpdir[0] = 0;
		goto out;
	}
	/* mkdtemp makes it 0700; a published snapshot is as readable as its files. */
	(void)chmod(tmpdir, 0755);
	snprintf(ipath, sizeof ipath, "%s/%s", tmpdir, BFI_INDEX_NAME);
	snprintf(cpath, sizeof cpath, "%s/%s", tmpdir, BFI_CATALOG_NAME);
	fd = open(ipath, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0 || ftruncate(fd, (off_t)file_size) != 0) {
		rc = writer_fail(w, -errno, "%s: %s", ipath, strerror(errno));
		goto out;
	}
	uint8_t desc[BFI_FLAT_DESC_SIZE];
	bfi_flat_desc_encode(desc, &fd_);
	rc = pwrite_all(fd, desc, sizeof desc, sec[0].offset);
	if (rc == 0)
		rc = write_rows(w, fd, sec[0].offset + BFI_FLAT_DESC_SIZE, m, k, fd_.row_bytes, ones);
	if (rc) {
		if (!w->errmsg[0])
			writer_fail(w, rc, "%s: %s", ipath, bfi_strerror(rc));
		goto out;
	}

	sums = calloc(1, (size_t)sec[1].size);
	if (sums == NULL) {
		rc = writer_fail(w, -ENOMEM, "out of memory for chunk checksums");
		goto out;
	}
	bfi_put32(sums, BFI_CHUNK_LOG2);
	bfi_put64(sums + 8, sums_at);
	rc = checksum_back(w, fd, sums_at, &sec[0], sums + BFI_CHUNKSUMS_DESC_SIZE, &sec[0].checksum);
	if (rc) {
		rc = writer_fail(w, rc, "%s: %s", ipath, bfi_strerror(rc));
		goto out;
	}
	sec[1].checksum = bfi_checksum64(sums, (size_t)sec[1].size);
	rc = pwrite_all(fd, sums, (size_t)sec[1].size, sums_at);
	if (rc == 0)
		rc = pwrite_all(fd, BFI_MAGIC, BFI_MAGIC_LEN, file_size - BFI_TRAILER_SIZE);
	if (rc) {
		rc = writer_fail(w, rc, "%s: %s", ipath, bfi_strerror(rc));
		goto out;
	}

	struct bfi_header h;
	memset(&h, 0, sizeof h);
	snapshot_id(&w->names, sums, (size_t)sec[1].size, m, k, h.snapshot_id);
	progress(w, "catalog", 0, 0);
	rc = catalog_write(cpath, &w->names, distinct, ones, m, k,
	                   w->opt.bits ? 0.0 : w->opt.fpr, h.snapshot_id, w->errmsg,
	                   sizeof w->errmsg);
	if (rc)
		goto out;
	rc = digest_file(cpath, h.catalog_digest, &h.catalog_size);
	if (rc) {
		rc = writer_fail(w, rc, "%s: %s", cpath, bfi_strerror(rc));
		goto out;
	}

	uint8_t head[BFI_SECTION_ALIGN];
	memset(head, 0, sizeof head);
	for (int i = 0; i < 2; i++)
		bfi_section_encode(head + BFI_HEADER_SIZE + i * BFI_ENTRY_SIZE, &sec[i]);
	h.major = BFI_VERSION_MAJOR;
	h.minor = BFI_VERSION_MINOR;
	h.file_size = file_size;
	h.table_offset = BFI_HEADER_SIZE;
	h.section_count = 2;
	h.table_checksum = bfi_checksum64(head + BFI_HEADER_SIZE, 2 * BFI_ENTRY_SIZE);
	bfi_header_encode(head, &h);
	rc = pwrite_all(fd, head, sizeof head, 0);
	if (rc == 0 && fsync(fd) != 0)
		rc = -errno;
	if (rc == 0 && close(fd) != 0)
		rc = -errno;
	fd = -1;
	if (rc) {
		rc = writer_fail(w, rc, "%s: %s", ipath, bfi_strerror(rc));
		goto out;
	}
	rc = fsync_path(tmpdir, 1);
	if (rc == 0)
		rc = publish_dir(tmpdir, path, w->errmsg, sizeof w->errmsg);
	else
		writer_fail(w, rc, "fsync %s: %s", tmpdir, bfi_strerror(rc));
	if (rc)
		goto out;
	tmpdir[0] = 0; /* published: nothing to clean up */
	if (sum) {
		sum->n_sets = n;
		sum->keys_in = w->keys_in;
		sum->distinct_pairs = pairs;
		sum->max_set_keys = max_n;
		sum->bits = m;
		sum->hashes = k;
		sum->index_bytes = file_size;
		sum->catalog_bytes = h.catalog_size;
	}
out:
	if (fd >= 0)
		close(fd);
	if (tmpdir[0])
		remove_tmpdir(tmpdir);
	free(sums);
	free(distinct);
	free(ones);
	return rc;
}
