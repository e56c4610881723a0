/*
 * filter.c - single Bloom filters in their own file (spec/format.md,
 * "Filter file"), the federated case: a site builds its filter with bfi
 * filter create (or this API) and ships it; bfi build --from-filters
 * indexes many such files. Positions are the snapshot's own (pos_i(m)), so
 * a filter's bit r is row r of a flat or tree layout of the same width.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "bfi_hash.h"
#include "internal.h"

struct bfi_filter {
	uint64_t m, keys;
	uint32_t k;
	int level;     /* saved as a zstd frame at this level (file version 2), or 0: as they are */
	uint8_t *bits; /* ceil(m / 8) bytes */
};

/* Every double here is range-checked before it becomes an integer. */
uint32_t filter_k(double fpr, int *capped)
{
	double kd = ceil(-log2(fpr));
	if (capped)
		*capped = kd > BFI_MAX_K;
	return kd < 1 ? 1 : kd > BFI_MAX_K ? BFI_MAX_K : (uint32_t)kd;
}

uint64_t filter_m(uint64_t n, uint32_t k, double fpr)
{
	/*
	 * The width at which n keys give rate q = max(fpr, 2^-k) exactly:
	 * (1 - e^(-k n / m))^k = q. At q = 2^-k it is n k / ln 2, the filter
	 * half full; with k rounded up from log2(1/fpr) it is narrower.
	 */
	double q = fpr > ldexp(1.0, -(int)k) && fpr < 1 ? fpr : ldexp(1.0, -(int)k);
	double md = ceil(-(double)(n ? n : 1) * k / log1p(-exp(log(q) / k)));
	if (!(md <= (double)BFI_MAX_BITS))
		return 0;
	return md < 64 ? 64 : (uint64_t)md;
}

/*
 * m for a filter holding n distinct keys at rate o->fpr (filter_m), at
 * least 64; 0 if that passes BFI_MAX_BITS.
 */
uint64_t width_for(const struct bfi_build_options *o, uint64_t n, uint32_t k)
{
	if (o->bits)
		return o->bits;
	return filter_m(o->expected_keys ? o->expected_keys : n, k, o->fpr);
}

int bfi_filter_size(uint64_t n, double fpr, uint64_t *m, uint32_t *k)
{
	if (m == NULL || k == NULL || !(fpr > 0 && fpr < 1))
		return BFI_E_INVALID;
	int capped;
	*k = filter_k(fpr, &capped);
	*m = filter_m(n, *k, fpr);
	return *m == 0 ? BFI_E_LIMIT : capped;
}

int bfi_filter_size_k(uint64_t n, uint32_t k, double fpr, uint64_t *m)
{
	if (m == NULL || k == 0 || k > BFI_MAX_K || !(fpr > 0 && fpr < 1))
		return BFI_E_INVALID;
	/* (1 - e^(-k n / m))^k = fpr, for any k: fewer hashes than log2(1/fpr) make it sparse */
	double md = ceil(-(double)(n ? n : 1) * k / log1p(-exp(log(fpr) / k)));
	if (!(md <= (double)BFI_MAX_BITS))
		return BFI_E_LIMIT;
	*m = md < 64 ? 64 : (uint64_t)md;
	return 0;
}

int bfi_filter_create(uint64_t m, uint32_t k, bfi_filter **out)
{
	if (out == NULL)
		return BFI_E_INVALID;
	*out = NULL;
	if (m == 0 || m > BFI_MAX_BITS || k == 0 || k > BFI_MAX_K)
		return BFI_E_INVALID;
	bfi_filter *f = calloc(1, sizeof *f);
	if (f == NULL || (f->bits = calloc(1, (size_t)((m + 7) / 8))) == NULL) {
		free(f);
		return -ENOMEM;
	}
	f->m = m;
	f->k = k;
	*out = f;
	return 0;
}

void bfi_filter_destroy(bfi_filter **f)
{
	if (f && *f) {
		free((*f)->bits);
		free(*f);
		*f = NULL;
	}
}

int bfi_filter_add(bfi_filter *f, const void *key, size_t len)
{
	if (f == NULL || (key == NULL && len))
		return BFI_E_INVALID;
	bfi_keyhash h = bfi_hash_key(key, len);
	for (uint32_t i = 0; i < f->k; i++) {
		uint64_t p = bfi_hash_pos(h, i, f->m);
		f->bits[p / 8] |= (uint8_t)(1u << (p % 8));
	}
	f->keys++;
	return 0;
}

int bfi_filter_contains(const bfi_filter *f, const void *key, size_t len)
{
	if (f == NULL || (key == NULL && len))
		return BFI_E_INVALID;
	bfi_keyhash h = bfi_hash_key(key, len);
	for (uint32_t i = 0; i < f->k; i++) {
		uint64_t p = bfi_hash_pos(h, i, f->m);
		if (!(f->bits[p / 8] >> (p % 8) & 1))
			return 0;
	}
	return 1;
}

static uint64_t ones(const bfi_filter *f)
{
	uint64_t n = 0, bytes = (f->m + 7) / 8;
	for (uint64_t i = 0; i < bytes; i++)
		n += (uint64_t)__builtin_popcount(f->bits[i]);
	return n;
}

void bfi_filter_stats(const bfi_filter *f, struct bfi_filter_stats *st)
{
	memset(st, 0, sizeof *st);
	if (f == NULL)
		return;
	st->m = f->m;
	st->k = f->k;
	st->keys = f->keys;
	st->bits_set = ones(f);
}

const uint8_t *bfi_filter_bits(const bfi_filter *f)
{
	return f ? f->bits : NULL;
}

/*
 * Where a save of path writes: path itself, or, if it is a symbolic link,
 * the file it names (a filter reached through a link is updated there, not
 * replaced by a file in the link's place). A malloc'd path, or NULL with
 * *rc set.
 */
static char *save_target(const char *path, int *rc)
{
	struct stat st;
	char *t = NULL;
	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
		t = realpath(path, NULL); /* a dangling link: the file it names does not exist */
		if (t == NULL)
			*rc = -errno;
	} else {
		t = strdup(path);
		if (t == NULL)
			*rc = -ENOMEM;
	}
	return t;
}

/* A temporary file's name beside target: "TARGET.tmp" and mkstemp's six letters. */
#define TMP_SUFFIX ".tmp"

/*
 * The temporary files that killed saves of target left beside it: named
 * as bfi_filter_save names them, regular, this user's, holding the start
 * of a filter file (or nothing yet), and with no live save holding their
 * lock. Only those are removed.
 */
static void sweep_temps(const char *target)
{
	const char *slash = strrchr(target, '/');
	char dir[4200];
	const char *base = slash ? slash + 1 : target;
	if (slash == NULL)
		snprintf(dir, sizeof dir, ".");
	else if (slash == target)
		snprintf(dir, sizeof dir, "/");
	else if ((size_t)(slash - target) < sizeof dir)
		snprintf(dir, sizeof dir, "%.*s", (int)(slash - target), target);
	else
		return;
	size_t bl = strlen(base), sl = strlen(TMP_SUFFIX);
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (d == NULL) {
		if (dfd >= 0)
			close(dfd);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (strlen(e->d_name) != bl + sl + 6 || strncmp(e->d_name, base, bl) ||
		    strncmp(e->d_name + bl, TMP_SUFFIX, sl))
			continue;
		int fd = openat(dfd, e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		struct stat st;
		char head[8];
		if (fd < 0)
			continue;
		ssize_t got = -1;
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
		    st.st_nlink == 1 && flock(fd, LOCK_EX | LOCK_NB) == 0)
			got = pread(fd, head, sizeof head, 0);
		if (got >= 0 && memcmp(head, BFI_FILTER_MAGIC, (size_t)got) == 0)
			(void)unlinkat(dfd, e->d_name, 0);
		close(fd); /* and its lock */
	}
	closedir(d);
}

/* A new temporary file beside target, locked for as long as it is open: its fd, or -errno. */
static int make_temp(const char *target, char *tmp, size_t len)
{
	for (int tries = 0; tries < 4; tries++) {
		snprintf(tmp, len, "%s" TMP_SUFFIX "XXXXXX", target);
		int fd = mkstemp(tmp);
		if (fd < 0)
			return -errno;
		/* a sweep may take it in the moment before it is locked: then make another */
		struct stat st;
		if (flock(fd, LOCK_EX) == 0 && fstat(fd, &st) == 0 && st.st_nlink == 1)
			return fd;
		close(fd);
	}
	return -EAGAIN;
}

int bfi_filter_set_compression(bfi_filter *f, int level)
{
	if (f == NULL || level < 0 || level > ZSTD_maxCLevel())
		return BFI_E_INVALID;
	f->level = level;
	return 0;
}

int bfi_filter_compression(const bfi_filter *f)
{
	return f ? f->level : 0;
}

/*
 * A reader decompresses a filter's frame into memory it allocates for the
 * header's m, so it refuses a frame that would expand more than this: a
 * small file must not make it allocate and fill gigabytes. The writer
 * saves such a filter (nearly empty, and wide) as it is instead.
 */
#define MAX_EXPANSION(csize) (1024 * (uint64_t)(csize) + (1u << 20))

/* The bits as one zstd frame at level: malloc'd into *out, its length in *len. */
static int compress_bits(const bfi_filter *f, int level, uint8_t **out, size_t *len)
{
	size_t bytes = (size_t)((f->m + 7) / 8), cap = ZSTD_compressBound(bytes);
	*out = malloc(cap);
	ZSTD_CCtx *c = ZSTD_createCCtx();
	int rc = *out && c ? 0 : -ENOMEM;
	if (rc == 0 && (ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level)) ||
	                ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1))))
		rc = BFI_E_INVALID;
	size_t r = rc == 0 ? ZSTD_compress2(c, *out, cap, f->bits, bytes) : 0;
	if (rc == 0 && ZSTD_isError(r))
		rc = -ENOMEM;
	ZSTD_freeCCtx(c);
	if (rc) {
		free(*out);
		*out = NULL;
		return rc;
	}
	*len = r;
	return 0;
}

int bfi_filter_file_size(const bfi_filter *f, int level, uint64_t *bytes)
{
	if (f == NULL || bytes == NULL || level < 0 || level > ZSTD_maxCLevel())
		return BFI_E_INVALID;
	if (level == 0) {
		*bytes = BFI_FILTER_HEADER_SIZE + (f->m + 7) / 8;
		return 0;
	}
	uint8_t *z;
	size_t len;
	int rc = compress_bits(f, level, &z, &len);
	if (rc == 0)
		*bytes = BFI_FILTER_HEADER_SIZE + len;
	free(z);
	return rc;
}

int bfi_filter_save(const bfi_filter *f, const char *path)
{
	if (f == NULL || path == NULL)
		return BFI_E_INVALID;
	uint64_t bytes = (f->m + 7) / 8;
	struct bfi_filter_header h = {f->level ? BFI_FILTER_VERSION_ZSTD : BFI_FILTER_VERSION,
	                              BFI_HASH_XXH3_MIX, f->m, f->k, f->keys,
	                              ones(f), bfi_checksum64(f->bits, (size_t)bytes)};
	uint8_t head[BFI_FILTER_HEADER_SIZE];
	bfi_filter_header_encode(head, &h);
	int rc = 0;
	uint8_t *z = NULL; /* the bits as a zstd frame, when saved so */
	size_t zlen = 0;
	if (f->level && (rc = compress_bits(f, f->level, &z, &zlen)) != 0)
		return rc;
	if (z && bytes > MAX_EXPANSION(zlen)) { /* a reader would refuse it: as they are */
		free(z);
		z = NULL;
		h.version = BFI_FILTER_VERSION;
		bfi_filter_header_encode(head, &h);
	}
	char *target = save_target(path, &rc);
	if (target == NULL) {
		free(z);
		return rc;
	}
	struct stat st;
	if (lstat(target, &st) == 0 && !S_ISREG(st.st_mode)) {
		free(target);
		free(z);
		return BFI_E_NOT_REGULAR;
	}
	sweep_temps(target);
	/* write beside the target, then rename over it: never a half-written filter */
	size_t plen = strlen(target);
	char *tmp = malloc(plen + sizeof TMP_SUFFIX + 8);
	if (tmp == NULL) {
		free(target);
		free(z);
		return -ENOMEM;
	}
	int fd = make_temp(target, tmp, plen + sizeof TMP_SUFFIX + 8);
	if (fd < 0) {
		free(tmp);
		free(target);
		free(z);
		return fd;
	}
	const uint8_t *parts[2] = {head, z ? z : f->bits};
	uint64_t lens[2] = {sizeof head, z ? zlen : bytes};
	for (int i = 0; i < 2 && rc == 0; i++)
		for (uint64_t done = 0; done < lens[i] && rc == 0;) {
			ssize_t w = write(fd, parts[i] + done, (size_t)(lens[i] - done));
			if (w < 0 && errno != EINTR)
				rc = -errno;
			else if (w == 0)
				rc = -EIO;
			else if (w > 0)
				done += (uint64_t)w;
		}
	if (rc == 0 && fchmod(fd, 0644) != 0)
		rc = -errno;
	if (rc == 0 && fsync(fd) != 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, target) != 0)
		rc = -errno;
	if (rc)
		unlink(tmp);
	close(fd); /* the temporary file's lock goes with it, once it is renamed or removed */
	if (rc == 0) { /* the rename made durable */
		char *slash = strrchr(target, '/');
		if (slash == target)
			slash[1] = 0;
		else if (slash)
			*slash = 0;
		int dfd = open(slash ? target : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd >= 0 && fsync(dfd) != 0)
			rc = -errno;
		if (dfd >= 0)
			close(dfd);
	}
	free(tmp);
	free(target);
	free(z);
	return rc;
}

int bfi_filter_lock(const char *path, int wait, int *lock)
{
	if (path == NULL || lock == NULL)
		return BFI_E_INVALID;
	*lock = -1;
	int rc = 0;
	char *target = save_target(path, &rc);
	if (target == NULL)
		return rc;
	/*
	 * The lock is on the file itself. A save replaces it with a new file,
	 * so a lock taken on the one a save has just replaced holds nothing:
	 * then the new one is locked instead.
	 */
	for (;;) {
		int fd = open(target, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0) {
			rc = -errno;
			break;
		}
		struct stat held, now;
		if (fstat(fd, &held) != 0 || !S_ISREG(held.st_mode)) {
			rc = fstat(fd, &held) != 0 ? -errno : BFI_E_NOT_REGULAR;
			close(fd);
			break;
		}
		while ((rc = flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB))) != 0 && errno == EINTR)
			;
		if (rc != 0) {
			rc = errno == EWOULDBLOCK ? BFI_E_BUSY : -errno;
			close(fd);
			break;
		}
		if (stat(target, &now) == 0 && now.st_dev == held.st_dev && now.st_ino == held.st_ino) {
			*lock = fd;
			break;
		}
		close(fd);
	}
	free(target);
	return rc;
}

void bfi_filter_unlock(int *lock)
{
	if (lock && *lock >= 0) {
		close(*lock);
		*lock = -1;
	}
}

int bfi_filter_load(const char *path, bfi_filter **out)
{
	if (path == NULL || out == NULL)
		return BFI_E_INVALID;
	*out = NULL;
	/* O_NONBLOCK: a FIFO there must not hang the load */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat st;
	uint8_t head[BFI_FILTER_HEADER_SIZE];
	struct bfi_filter_header h;
	int rc = fstat(fd, &st) != 0 ? -errno : 0;
	if (rc == 0 && !S_ISREG(st.st_mode))
		rc = BFI_E_NOT_REGULAR;
	/* the magic first: a short file that is not a filter is not a truncated one */
	ssize_t hgot = rc == 0 ? pread(fd, head, sizeof head, 0) : 0;
	if (rc == 0 && hgot < 0)
		rc = -errno;
	if (rc == 0 && memcmp(head, BFI_FILTER_MAGIC, hgot < 8 ? (size_t)hgot : 8) != 0)
		rc = BFI_E_BAD_MAGIC;
	if (rc == 0 && (hgot < (ssize_t)sizeof head || (uint64_t)st.st_size < BFI_FILTER_HEADER_SIZE))
		rc = hgot == 0 ? BFI_E_BAD_MAGIC : BFI_E_TRUNCATED;
	if (rc == 0)
		rc = bfi_filter_header_decode(head, &h);
	uint64_t bytes = rc == 0 ? (h.m + 7) / 8 : 0;
	bfi_filter *f = NULL;
	if (rc == 0 && h.version == BFI_FILTER_VERSION_ZSTD) {
		/* the rest of the file is one zstd frame of exactly the bits' bytes */
		uint64_t csize = (uint64_t)st.st_size - BFI_FILTER_HEADER_SIZE;
		uint8_t *z = NULL;
		if (csize > ZSTD_compressBound((size_t)bytes))
			rc = BFI_E_SIZE;
		else if (bytes > MAX_EXPANSION(csize))
			rc = BFI_E_LIMIT;
		else if ((z = malloc(csize ? csize : 1)) == NULL)
			rc = -ENOMEM;
		if (rc == 0)
			rc = pread_all(fd, z, (size_t)csize, BFI_FILTER_HEADER_SIZE);
		if (rc == -EIO)
			rc = BFI_E_TRUNCATED;
		size_t span = rc == 0 ? ZSTD_findFrameCompressedSize(z, csize) : 0;
		if (rc == 0 && ZSTD_isError(span))
			rc = BFI_E_TRUNCATED; /* the frame runs past the file, or is no frame */
		else if (rc == 0 && span != csize)
			rc = BFI_E_SIZE;
		else if (rc == 0 && ZSTD_getFrameContentSize(z, csize) != bytes)
			rc = BFI_E_BAD_LAYOUT;
		if (rc == 0)
			rc = bfi_filter_create(h.m, h.k, &f);
		if (rc == 0) {
			size_t r = ZSTD_decompress(f->bits, (size_t)bytes, z, csize);
			if (ZSTD_isError(r) || r != bytes)
				rc = BFI_E_DATA_CHECKSUM;
			f->level = ZSTD_maxCLevel() < 19 ? ZSTD_maxCLevel() : 19;
		}
		free(z);
	} else {
		/* m <= 2^40 was checked, so this cannot overflow */
		if (rc == 0 && (uint64_t)st.st_size < BFI_FILTER_HEADER_SIZE + bytes)
			rc = BFI_E_TRUNCATED;
		if (rc == 0 && (uint64_t)st.st_size > BFI_FILTER_HEADER_SIZE + bytes)
			rc = BFI_E_SIZE;
		if (rc == 0)
			rc = bfi_filter_create(h.m, h.k, &f);
		for (uint64_t done = 0; rc == 0 && done < bytes;) {
			ssize_t got = pread(fd, f->bits + done, (size_t)(bytes - done),
			                    (off_t)(BFI_FILTER_HEADER_SIZE + done));
			if (got < 0 && errno != EINTR)
				rc = -errno;
			else if (got == 0)
				rc = BFI_E_TRUNCATED;
			else if (got > 0)
				done += (uint64_t)got;
		}
	}
	close(fd);
	if (rc == 0 && bfi_checksum64(f->bits, (size_t)bytes) != h.bits_checksum)
		rc = BFI_E_DATA_CHECKSUM;
	/* bits past m are padding and must be zero; the count must be right */
	if (rc == 0 && (h.m % 8) && (f->bits[bytes - 1] >> (h.m % 8)))
		rc = BFI_E_BAD_LAYOUT;
	if (rc == 0 && ones(f) != h.bits_set)
		rc = BFI_E_BAD_LAYOUT;
	if (rc) {
		bfi_filter_destroy(&f);
		return rc;
	}
	f->keys = h.keys;
	*out = f;
	return 0;
}
