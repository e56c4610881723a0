/*
 * collection.c - a writer's hold on a collection (spec/format.md,
 * "Collections"): its lock, its manifest read and changed in memory, the
 * commit (a new manifest file renamed over the old), and the sweep of what
 * no manifest names and only a writer made.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bfi_manifest.h"
#include "internal.h"
#include "publish.h"

struct bfi_collection {
	char path[4096];
	int dfd, lock;
	int held;              /* the lock is ours and the manifest read: only then may we sweep */
	struct bfi_manifest m; /* as it will be committed */
	char (*done)[BFI_SEGMENT_NAME_MAX + 1]; /* the segments the committed manifest lists */
	uint32_t n_done;
	int changed;           /* segments replaced since the commit: no more may be added */
	int created;           /* this writer made the directory: removed at the end if never committed */
	int lock_made;         /* and the lock file, likewise */
	uint32_t added;        /* segments added since: removed at the end unless committed */
	uint64_t ordinals;
	char seg[4200];        /* bfi_collection_segment_path's answer */
	char err[4400];
};

static int fail(bfi_collection *c, char *err, size_t errlen, int rc, const char *fmt, const char *a)
{
	snprintf(err, errlen, fmt, a, rc < 0 && rc > -4096 ? strerror(-rc) : bfi_strerror(rc));
	(void)c;
	return rc;
}

/* Take the lock, or say who holds it: its pid, from the file. */
static int take_lock(bfi_collection *c, unsigned flags, char *err, size_t errlen)
{
	c->lock = openat(c->dfd, BFI_COLLECTION_LOCK,
	                 O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	c->lock_made = c->lock >= 0;
	if (c->lock < 0 && errno == EEXIST)
		c->lock = openat(c->dfd, BFI_COLLECTION_LOCK, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (c->lock < 0)
		return fail(c, err, errlen, -errno, "%s/" BFI_COLLECTION_LOCK ": %s", c->path);
	/* the pid is written into it: never through a hard link to someone's file */
	struct stat ls;
	if (fstat(c->lock, &ls) != 0)
		return fail(c, err, errlen, -errno, "%s/" BFI_COLLECTION_LOCK ": %s", c->path);
	if (!S_ISREG(ls.st_mode) || ls.st_nlink != 1) {
		snprintf(err, errlen, "%s/" BFI_COLLECTION_LOCK " is not bfi's lock file (%s); not "
		         "writing to it", c->path, S_ISREG(ls.st_mode) ? "it has other hard links"
		                                                     : "not a regular file");
		return BFI_E_EXISTS;
	}
	int rc;
	while ((rc = flock(c->lock, LOCK_EX | (flags & BFI_COLL_WAIT ? 0 : LOCK_NB))) != 0 &&
	       errno == EINTR)
		;
	if (rc != 0 && errno == EWOULDBLOCK) {
		char pid[24] = "";
		ssize_t n = pread(c->lock, pid, sizeof pid - 1, 0);
		pid[n > 0 ? n : 0] = 0;
		pid[strcspn(pid, "\n")] = 0;
		snprintf(err, errlen, "%s: another writer holds the collection's lock (pid %s)", c->path,
		         pid[0] ? pid : "unknown");
		return BFI_E_BUSY;
	}
	if (rc != 0)
		return fail(c, err, errlen, -errno, "%s/" BFI_COLLECTION_LOCK ": %s", c->path);
	char pid[24];
	int len = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
	if (ftruncate(c->lock, 0) != 0 || pwrite(c->lock, pid, (size_t)len, 0) != len)
		return fail(c, err, errlen, -errno, "%s/" BFI_COLLECTION_LOCK ": %s", c->path);
	return 0;
}

/* What the committed manifest lists: what the sweep keeps. */
static int remember(bfi_collection *c)
{
	void *d = realloc(c->done, (c->m.n_segments ? c->m.n_segments : 1) * sizeof *c->done);
	if (d == NULL)
		return -ENOMEM;
	c->done = d;
	c->n_done = c->m.n_segments;
	for (uint32_t i = 0; i < c->m.n_segments; i++)
		memcpy(c->done[i], c->m.segs[i].name, sizeof c->done[i]);
	return 0;
}

/*
 * Is name one that a collection's writer makes in its directory: the
 * lock, a segment or a segment's staging directory, a manifest or a
 * manifest not yet committed?
 */
static int own_name(const char *name)
{
	return !strcmp(name, ".") || !strcmp(name, "..") || !strcmp(name, BFI_COLLECTION_LOCK) ||
	       !strcmp(name, BFI_MANIFEST_NAME) || !strncmp(name, "seg-", 4) ||
	       !strncmp(name, BFI_MANIFEST_NAME ".tmp-", sizeof BFI_MANIFEST_NAME + 4);
}

/*
 * Does the collection's directory hold only what collection writers make?
 * 0; or BFI_E_EXISTS with err from fmt (the path, then the first other
 * name); or -errno.
 */
static int only_own(bfi_collection *c, const char *fmt, char *err, size_t errlen)
{
	int fd = dup(c->dfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (d == NULL) {
		if (fd >= 0)
			close(fd);
		return fail(c, err, errlen, -errno, "%s: %s", c->path);
	}
	rewinddir(d); /* the dup shares dfd's offset */
	struct dirent *e;
	int rc = 0;
	while (rc == 0 && (e = readdir(d)) != NULL)
		if (!own_name(e->d_name)) {
			snprintf(err, errlen, fmt, c->path, e->d_name);
			rc = BFI_E_EXISTS;
		}
	closedir(d);
	return rc;
}

/*
 * May a collection be started in dfd, which has no manifest? Only if it
 * holds nothing but what a collection's writer makes (an empty directory,
 * or what a first append killed before its commit left): a directory of
 * the user's is not adopted, written into, or swept. 0, or BFI_E_EXISTS
 * with why.
 */
static int may_start(bfi_collection *c, char *err, size_t errlen)
{
	struct stat st;
	if (fstatat(c->dfd, BFI_INDEX_NAME, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		snprintf(err, errlen, "%s is a snapshot, not a collection (no %s)", c->path,
		         BFI_MANIFEST_NAME);
		return BFI_E_EXISTS;
	}
	return only_own(c, "%s exists and is not a collection (no " BFI_MANIFEST_NAME ", and it holds "
	                   "'%.200s'); give a new or empty directory", err, errlen);
}

/* The manifest, or an empty one (generation 0) if there is none and create allows it. */
static int read_manifest(bfi_collection *c, unsigned flags, char *err, size_t errlen)
{
	int fd = openat(c->dfd, BFI_MANIFEST_NAME, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd < 0 && errno == ENOENT) {
		if (!(flags & BFI_COLL_CREATE)) {
			snprintf(err, errlen, "%s: not a collection (no %s)", c->path, BFI_MANIFEST_NAME);
			return BFI_E_INVALID;
		}
		int rc = may_start(c, err, errlen);
		if (rc)
			return rc;
		memset(&c->m, 0, sizeof c->m);
		c->m.major = BFI_MANIFEST_MAJOR;
		if (getrandom(c->m.collection_id, 16, 0) != 16)
			return fail(c, err, errlen, -errno, "%s: collection id: %s", c->path);
		return 0;
	}
	if (fd < 0)
		return fail(c, err, errlen, -errno, "%s/" BFI_MANIFEST_NAME ": %s", c->path);
	int rc = fstat(fd, &st) == 0 ? 0 : -errno;
	uint64_t size = rc == 0 ? (uint64_t)st.st_size : 0;
	uint8_t *b = rc == 0 && size <= (256u << 20) ? malloc(size ? (size_t)size : 1) : NULL;
	if (rc == 0 && b == NULL)
		rc = size > (256u << 20) ? BFI_E_LIMIT : -ENOMEM;
	if (rc == 0 && pread_all(fd, b, (size_t)size, 0) != 0)
		rc = -EIO;
	const char *what = NULL;
	if (rc == 0)
		rc = bfi_manifest_decode(b, size, &c->m, &what);
	free(b);
	close(fd);
	if (rc && what) {
		snprintf(err, errlen, "%s/" BFI_MANIFEST_NAME ": %s (%s)", c->path, bfi_strerror(rc), what);
		return rc;
	}
	if (rc)
		return fail(c, err, errlen, rc, "%s/" BFI_MANIFEST_NAME ": %s", c->path);
	if (remember(c) != 0)
		return fail(c, err, errlen, -ENOMEM, "%s: %s", c->path);
	if (c->m.n_segments)
		c->ordinals = c->m.segs[c->m.n_segments - 1].first + c->m.segs[c->m.n_segments - 1].n_sets;
	return 0;
}

/* Is name a segment the committed manifest lists? */
static int listed(const bfi_collection *c, const char *name)
{
	for (uint32_t i = 0; i < c->n_done; i++)
		if (strcmp(c->done[i], name) == 0)
			return 1;
	return 0;
}

/*
 * What no manifest names and only a writer made: segments not listed,
 * staging directories of segments, and manifests never committed.
 */
static void sweep(bfi_collection *c)
{
	int lfd = dup(c->dfd);
	DIR *d = lfd >= 0 ? fdopendir(lfd) : NULL;
	if (d == NULL) {
		if (lfd >= 0)
			close(lfd);
		return;
	}
	rewinddir(d); /* the dup shares dfd's offset, which an earlier sweep left at the end */
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		char name[256];
		snprintf(name, sizeof name, "%s", e->d_name);
		const char *tmp = strstr(name, ".tmp-");
		if (strncmp(name, "seg-", 4) == 0 && tmp) { /* a segment's staging: publish.c's rules */
			char target[4400];
			snprintf(target, sizeof target, "%s/%.*s", c->path, (int)(tmp - name), name);
			staging_sweep(target);
		} else if (bfi_segment_name_ok(name) && !listed(c, name)) {
			(void)snapshot_remove(c->dfd, name);
		} else if (strncmp(name, BFI_MANIFEST_NAME ".tmp-", sizeof BFI_MANIFEST_NAME + 4) == 0) {
			struct stat st;
			if (fstatat(c->dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
				(void)unlinkat(c->dfd, name, 0);
		}
	}
	closedir(d);
}

/* Is path still the directory dfd is, or was it replaced (bfi unpack) while a lock was awaited? */
static int still_there(const char *path, int dfd)
{
	struct stat a, b;
	return stat(path, &a) == 0 && fstat(dfd, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

static int begin_once(const char *path, unsigned flags, bfi_collection **out, char *err,
                      size_t errlen);

int bfi_collection_begin(const char *path, unsigned flags, bfi_collection **out, char *err,
                         size_t errlen)
{
	if (path == NULL || out == NULL || err == NULL || strlen(path) >= 4000 ||
	    (flags & ~(BFI_COLL_CREATE | BFI_COLL_WAIT)))
		return BFI_E_INVALID;
	/* a collection swapped out under a writer waiting for its lock: the one now at path */
	for (int tries = 0;; tries++) {
		int rc = begin_once(path, flags, out, err, errlen);
		if (rc != -EAGAIN || tries == 15)
			return rc == -EAGAIN ? BFI_E_BUSY : rc;
	}
}

static int begin_once(const char *path, unsigned flags, bfi_collection **out, char *err,
                      size_t errlen)
{
	*out = NULL;
	err[0] = 0;
	bfi_collection *c = calloc(1, sizeof *c);
	if (c == NULL)
		return -ENOMEM;
	snprintf(c->path, sizeof c->path, "%s", path);
	c->lock = -1;
	int made = (flags & BFI_COLL_CREATE) ? mkdir(path, 0755) : -1;
	if (made != 0 && (flags & BFI_COLL_CREATE) && errno != EEXIST) {
		int rc = fail(c, err, errlen, -errno, "%s: %s", path);
		free(c);
		return rc;
	}
	c->created = made == 0;
	c->dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc = c->dfd < 0 ? fail(c, err, errlen, -errno, "%s: %s", path) : 0;
	struct stat ms;
	/* a directory that is not a collection gets no lock file either (checked again once locked) */
	if (rc == 0 && !c->created && (flags & BFI_COLL_CREATE) &&
	    fstatat(c->dfd, BFI_MANIFEST_NAME, &ms, AT_SYMLINK_NOFOLLOW) != 0)
		rc = may_start(c, err, errlen);
	if (rc == 0)
		rc = take_lock(c, flags, err, errlen);
	if (rc == 0 && !still_there(path, c->dfd)) {
		snprintf(err, errlen, "%s was replaced while its lock was awaited", path);
		rc = -EAGAIN;
	}
	if (rc == 0)
		rc = read_manifest(c, flags, err, errlen);
	if (rc) {
		bfi_collection_end(&c);
		return rc;
	}
	c->held = 1;
	sweep(c);
	*out = c;
	return 0;
}

uint64_t bfi_collection_generation(const bfi_collection *c)
{
	return c->m.generation;
}

const char *bfi_collection_segment_path(bfi_collection *c)
{
	snprintf(c->seg, sizeof c->seg, "%s/seg-%016llx-%04x", c->path,
	         (unsigned long long)(c->m.generation + 1), c->added);
	return c->seg;
}

int bfi_collection_add(bfi_collection *c, uint64_t n_sets, const uint8_t snapshot_id[16])
{
	if (c == NULL || n_sets == 0 || n_sets > UINT32_MAX ||
	    c->ordinals + n_sets > (uint64_t)UINT32_MAX + 1 || c->m.n_segments >= BFI_MAX_SEGMENTS)
		return BFI_E_LIMIT;
	struct bfi_segment *g = realloc(c->m.segs, (c->m.n_segments + 1) * sizeof *g);
	if (g == NULL)
		return -ENOMEM;
	c->m.segs = g;
	g = &c->m.segs[c->m.n_segments++];
	memset(g, 0, sizeof *g);
	snprintf(g->name, sizeof g->name, "seg-%016llx-%04x",
	         (unsigned long long)(c->m.generation + 1), c->added++);
	g->n_sets = n_sets;
	g->first = c->ordinals;
	memcpy(g->snapshot_id, snapshot_id, 16);
	c->ordinals += n_sets;
	c->m.n_sets += n_sets;
	return 0;
}

int bfi_collection_remove(bfi_collection *c, uint64_t g)
{
	uint32_t ord;
	int lo = bfi_manifest_segment_of(&c->m, g, &ord);
	if (lo < 0)
		return BFI_E_NOT_FOUND;
	uint64_t key = (uint64_t)lo << 32 | ord;
	uint32_t at = 0;
	while (at < c->m.n_removed && c->m.removed[at] < key)
		at++;
	if (at < c->m.n_removed && c->m.removed[at] == key)
		return BFI_E_NOT_FOUND; /* removed already */
	uint64_t *r = realloc(c->m.removed, (c->m.n_removed + 1) * sizeof *r);
	if (r == NULL)
		return -ENOMEM;
	c->m.removed = r;
	memmove(r + at + 1, r + at, (c->m.n_removed - at) * sizeof *r);
	r[at] = key;
	c->m.n_removed++;
	c->m.n_sets--;
	return 0;
}

int bfi_collection_replace(bfi_collection *c, uint32_t first, uint32_t count, uint64_t n_sets,
                           const uint8_t snapshot_id[16])
{
	if (c == NULL || count == 0 || c->added || c->changed || first > c->m.n_segments ||
	    count > c->m.n_segments - first || n_sets > UINT32_MAX || (n_sets && snapshot_id == NULL))
		return BFI_E_INVALID; /* segments of the committed manifest, one run a commit */
	struct bfi_manifest *m = &c->m;
	uint64_t live = 0;
	for (uint32_t i = first; i < first + count; i++)
		live += m->segs[i].n_sets;
	for (uint32_t x = 0; x < m->n_removed; x++)
		live -= (m->removed[x] >> 32) >= first && (m->removed[x] >> 32) < first + count;
	if (live != n_sets)
		return BFI_E_INVALID; /* the new segment holds exactly the run's live sets */
	/* the removed sets of the run go with it; later segments move down */
	uint32_t out = 0;
	for (uint32_t x = 0; x < m->n_removed; x++) {
		uint32_t seg = (uint32_t)(m->removed[x] >> 32);
		if (seg >= first && seg < first + count)
			continue;
		if (seg >= first + count)
			m->removed[x] -= (uint64_t)(count - (n_sets ? 1 : 0)) << 32;
		m->removed[out++] = m->removed[x];
	}
	m->n_removed = out;
	uint32_t keep = n_sets ? 1 : 0;
	memmove(m->segs + first + keep, m->segs + first + count,
	        (m->n_segments - first - count) * sizeof *m->segs);
	m->n_segments -= count - keep;
	if (keep) {
		struct bfi_segment *g = &m->segs[first];
		memset(g, 0, sizeof *g);
		snprintf(g->name, sizeof g->name, "seg-%016llx-%04x",
		         (unsigned long long)(m->generation + 1), c->added++);
		g->n_sets = n_sets;
		memcpy(g->snapshot_id, snapshot_id, 16);
	}
	c->changed = 1;
	/* global ordinals run on from segment to segment */
	uint64_t at = 0;
	for (uint32_t i = 0; i < m->n_segments; i++) {
		m->segs[i].first = at;
		at += m->segs[i].n_sets;
	}
	c->ordinals = at;
	return 0;
}

int bfi_collection_commit(bfi_collection *c)
{
	c->m.generation++;
	uint64_t size = bfi_manifest_size(&c->m);
	uint8_t *b = size ? malloc((size_t)size) : NULL;
	if (b == NULL) {
		c->m.generation--;
		return size ? -ENOMEM : BFI_E_LIMIT;
	}
	bfi_manifest_encode(b, &c->m);
	char tmp[64];
	snprintf(tmp, sizeof tmp, BFI_MANIFEST_NAME ".tmp-%ld", (long)getpid());
	(void)unlinkat(c->dfd, tmp, 0);
	int fd = openat(c->dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
	int rc = fd < 0 ? -errno : pwrite_all(fd, b, (size_t)size, 0);
	if (rc == 0 && fsync(fd) != 0)
		rc = -errno;
	if (fd >= 0)
		close(fd);
	/* the commit: readers that open the manifest from now on see this generation */
	if (rc == 0 && renameat(c->dfd, tmp, c->dfd, BFI_MANIFEST_NAME) != 0)
		rc = -errno;
	free(b);
	c->err[0] = 0;
	if (rc == 0 && fsync(c->dfd) != 0) /* committed all the same: say so, but go on as committed */
		snprintf(c->err, sizeof c->err, "%s: generation %llu is committed, but syncing the "
		         "directory failed (%s): a power loss may undo it", c->path,
		         (unsigned long long)c->m.generation, strerror(errno));
	if (rc) {
		(void)unlinkat(c->dfd, tmp, 0);
		c->m.generation--;
		snprintf(c->err, sizeof c->err, "%s/%s: %s", c->path, BFI_MANIFEST_NAME,
		         rc < 0 ? strerror(-rc) : bfi_strerror(rc));
		return rc;
	}
	c->added = 0;
	c->changed = 0;
	if (remember(c) != 0)
		c->held = 0; /* without the list, sweep nothing rather than something live */
	sweep(c);
	return 0;
}

const char *bfi_collection_errmsg(const bfi_collection *c)
{
	return c ? c->err : "";
}

void bfi_collection_end(bfi_collection **cp)
{
	if (cp == NULL || *cp == NULL)
		return;
	bfi_collection *c = *cp;
	/* segments built or added but not committed: no manifest names them */
	if (c->held)
		sweep(c);
	/* a collection this writer made and never committed: what it made goes (rmdir fails on more) */
	int never = c->held && c->m.generation == 0, unmake = never && c->created;
	bfi_manifest_free(&c->m);
	free(c->done);
	if (never && c->lock_made)
		(void)unlinkat(c->dfd, BFI_COLLECTION_LOCK, 0);
	if (c->lock >= 0)
		close(c->lock); /* and with it the lock */
	if (c->dfd >= 0)
		close(c->dfd);
	if (unmake)
		(void)rmdir(c->path);
	free(c);
	*cp = NULL;
}

int collection_replace(struct staging *st, const char *path, char *err, size_t errlen, char *warn,
                       size_t warnlen)
{
	bfi_collection *c = NULL;
	char old[4400] = "";
	warn[0] = 0;
	int rc = bfi_collection_begin(path, 0, &c, err, errlen);
	if (rc == 0)
		rc = only_own(c, "%s holds %.200s, which no collection's writer makes; not replacing it",
		              err, errlen);
	if (rc == 0)
		rc = staging_exchange(st, path, old, sizeof old, err, errlen);
	if (rc == 0) { /* the old collection, now at old, goes: its lock last, with its handle */
		c->n_done = 0; /* no segment listed: the sweep takes them all */
		sweep(c);
		(void)unlinkat(c->dfd, BFI_MANIFEST_NAME, 0);
		(void)unlinkat(c->dfd, BFI_COLLECTION_LOCK, 0);
		c->held = 0;
	}
	bfi_collection_end(&c);
	if (rc == 0 && rmdir(old) != 0)
		snprintf(warn, warnlen, "the collection replaced, moved to %s, still holds files bfi did "
		         "not write; kept there", old);
	return rc;
}
