/*
 * publish.c - stage a snapshot beside its path, then swap it into place
 * atomically; and remove only what bfi itself staged.
 *
 * A build stages its files in PATH.tmp-XXXXXX, a directory made by
 * mkdtemp that holds a marker file (MARK_NAME: MARK_TEXT, then the
 * directory's own name and a newline) which the build keeps locked with
 * flock() for as long as it runs. A staging directory is bfi's, and
 * abandoned, only when all of this holds: it is a real directory (not a
 * symlink) owned by this user, it holds the marker as a regular file
 * whose text names the very directory it is found in, and the marker's
 * lock can be taken. The name is what keeps a copy safe: a published
 * snapshot may carry a marker a killed build left, and a copy of it made
 * under a staging-like name (a backup, PATH.tmp-old) is not the directory
 * its marker names. A lock dies with the process that held it, in any pid namespace
 * and, through NFS's lock manager, on any host; a pid proves nothing
 * across either. Every step works relative to directory descriptors with
 * O_NOFOLLOW, so a symlink planted under a staging name leads nowhere.
 *
 * New path: rename(staging, path). Existing snapshot: renameat2 with
 * RENAME_EXCHANGE swaps both directories in one step, so a reader sees the
 * old pair or the new pair, never a mix; then the old pair, now under the
 * staging name, is removed. Readers that already opened the old snapshot
 * keep their descriptors and maps. The parent directory is fsynced so the
 * swap survives a crash.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "publish.h"

#define MARK_NAME ".bfi-staging"
#define MARK_TEXT "bfi staging directory: a build in progress, or what a killed one left\n"
#define STAGE_INFIX ".tmp-"

/* The files bfi puts in a snapshot, and so the only ones it removes. */
static const char *const own_files[] = {BFI_INDEX_NAME, BFI_CATALOG_NAME, BFI_CATALOG_NAME "-lock"};

static int is_own_file(const char *name)
{
	for (size_t i = 0; i < sizeof own_files / sizeof *own_files; i++)
		if (strcmp(name, own_files[i]) == 0)
			return 1;
	return 0;
}

static int fsync_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_DIRECTORY);
	if (fd < 0)
		return -errno;
	int rc = fsync(fd) == 0 ? 0 : -errno;
	close(fd);
	return rc;
}

/* path's parent directory and last component, in buffers of size len. */
int split_path(const char *path, char *parent, char *base, size_t len)
{
	size_t n = strlen(path);
	while (n > 1 && path[n - 1] == '/') /* "a/b/" names b */
		n--;
	if (n == 0 || n >= len)
		return BFI_E_INVALID;
	size_t slash = n;
	while (slash > 0 && path[slash - 1] != '/')
		slash--;
	if (slash == n) /* "/" alone */
		return BFI_E_INVALID;
	memcpy(base, path + slash, n - slash);
	base[n - slash] = 0;
	if (!strcmp(base, ".") || !strcmp(base, ".."))
		return BFI_E_INVALID;
	if (slash == 0) {
		snprintf(parent, len, ".");
	} else {
		size_t pl = slash;
		while (pl > 1 && path[pl - 1] == '/')
			pl--;
		memcpy(parent, path, pl);
		parent[pl] = 0;
	}
	return 0;
}

int fsync_parent(const char *path)
{
	char parent[4200], base[4200];
	int rc = split_path(path, parent, base, sizeof parent);
	return rc ? rc : fsync_dir(parent);
}

/*
 * The names in snapshot directory dfd that bfi did not write: the first
 * into *other (size len), and 1; 0 if there are none; -errno.
 */
static int foreign_file(int dfd, char *other, size_t len)
{
	int fd = dup(dfd);
	if (fd < 0)
		return -errno;
	DIR *d = fdopendir(fd);
	if (d == NULL) {
		int e = -errno;
		close(fd);
		return e;
	}
	rewinddir(d);
	struct dirent *e;
	int found = 0;
	while ((e = readdir(d)) != NULL) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || is_own_file(e->d_name) ||
		    !strcmp(e->d_name, MARK_NAME))
			continue;
		snprintf(other, len, "%s", e->d_name);
		found = 1;
		break;
	}
	closedir(d);
	return found;
}

int bfi_output_check(const char *path, char *err, size_t errlen)
{
	char parent[4200], base[4200];
	if (path == NULL || split_path(path, parent, base, sizeof parent) != 0) {
		snprintf(err, errlen, "'%s' cannot name a snapshot directory", path ? path : "");
		return BFI_E_INVALID;
	}
	struct stat st;
	if (stat(parent, &st) != 0) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", parent, strerror(e));
		return -e;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s is not a directory", parent);
		return -ENOTDIR;
	}
	if (access(parent, W_OK | X_OK) != 0) {
		int e = errno;
		snprintf(err, errlen, "cannot write in %s: %s", parent, strerror(e));
		return -e;
	}
	if (lstat(path, &st) != 0) {
		if (errno == ENOENT)
			return 0;
		int e = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		return -e;
	}
	if (S_ISLNK(st.st_mode)) {
		snprintf(err, errlen,
		         "%s is a symbolic link; bfi replaces only a snapshot directory itself, "
		         "so give the path it points to",
		         path);
		return BFI_E_EXISTS;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s exists and is not a bfi snapshot; not replacing it", path);
		return BFI_E_EXISTS;
	}
	int dfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		return -e;
	}
	struct stat ist;
	int rc = 0;
	if (fstatat(dfd, BFI_INDEX_NAME, &ist, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(ist.st_mode)) {
		snprintf(err, errlen, "%s exists and is not a bfi snapshot (no %s); not replacing it", path,
		         BFI_INDEX_NAME);
		rc = BFI_E_EXISTS;
	} else {
		char other[256];
		int f = foreign_file(dfd, other, sizeof other);
		if (f < 0) {
			snprintf(err, errlen, "%s: %s", path, strerror(-f));
			rc = f;
		} else if (f) {
			snprintf(err, errlen,
			         "%s holds '%s', which bfi did not write; not replacing the snapshot "
			         "(move that file out first)",
			         path, other);
			rc = BFI_E_EXISTS;
		}
	}
	close(dfd);
	return rc;
}

/* The whole text of the marker of the staging directory called name, into buf: its length. */
static size_t mark_text(const char *name, char *buf, size_t cap)
{
	int n = snprintf(buf, cap, "%s%s\n", MARK_TEXT, name);
	return n < 0 || (size_t)n >= cap ? 0 : (size_t)n;
}

/*
 * The marker in dfd, for a directory called name: absent, held by a live
 * build, not a marker, another directory's marker (its first line whole,
 * naming another), a proper prefix of name's text (the empty file
 * included: a build killed as it wrote it), or whole. For the last three,
 * no live build holding it, its fd (opened with flags, O_RDONLY or
 * O_RDWR), locked, and in *len its bytes; else -1.
 */
enum mark_state { MARK_ABSENT, MARK_HELD, MARK_OTHER, MARK_STRAY, MARK_PART, MARK_WHOLE };

static int take_mark(int dfd, int flags, const char *name, enum mark_state *state, size_t *len)
{
	int fd = openat(dfd, MARK_NAME, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		*state = errno == ENOENT ? MARK_ABSENT : MARK_OTHER;
		return -1;
	}
	char want[sizeof MARK_TEXT + 300], text[sizeof want + 1];
	size_t wl = mark_text(name, want, sizeof want), tl = strlen(MARK_TEXT);
	struct stat st;
	ssize_t got = -1;
	if (wl == 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		*state = MARK_OTHER;
	else if (flock(fd, LOCK_EX | LOCK_NB) != 0)
		*state = MARK_HELD;
	else if ((got = pread(fd, text, sizeof text, 0)) == (ssize_t)wl && !memcmp(text, want, wl))
		*state = MARK_WHOLE;
	else if (got >= 0 && (size_t)got < wl && !memcmp(text, want, (size_t)got))
		*state = MARK_PART;
	else if (got > (ssize_t)tl && !memcmp(text, MARK_TEXT, tl) && text[got - 1] == '\n')
		*state = MARK_STRAY;
	else
		*state = MARK_OTHER;
	if (*state < MARK_STRAY) {
		close(fd);
		return -1;
	}
	*len = (size_t)got;
	return fd;
}

/* Write name's marker text to a fresh marker in dfd and lock it: the lock's fd, or -errno. */
static int make_mark(int dfd, const char *name)
{
	char text[sizeof MARK_TEXT + 300];
	size_t len = mark_text(name, text, sizeof text);
	if (len == 0)
		return -ENAMETOOLONG;
	int fd = openat(dfd, MARK_NAME, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	/* locked before its text is written: a marker without the text is never swept */
	int rc = 0;
	while (flock(fd, LOCK_EX) != 0)
		if (errno != EINTR) {
			rc = -errno;
			break;
		}
	/*
	 * Until the lock was ours, the marker was an empty file in a 0700
	 * directory, which another build's sweep takes for what a build killed
	 * as it began left, and removes with the directory. If it did, the
	 * file is no longer linked: -ENOENT, and staging_begin makes another.
	 */
	struct stat fs;
	if (rc == 0 && fstat(fd, &fs) != 0)
		rc = -errno;
	else if (rc == 0 && fs.st_nlink == 0)
		rc = -ENOENT;
	if (rc == 0 && write(fd, text, len) != (ssize_t)len)
		rc = errno ? -errno : -EIO;
	if (rc) {
		close(fd);
		(void)unlinkat(dfd, MARK_NAME, 0);
		return rc;
	}
	return fd;
}

/* The last component of a path bfi made (no trailing slash). */
static const char *last_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* Remove bfi's own files from dfd: regular files of the known names only. */
static void remove_own_files(int dfd)
{
	for (size_t i = 0; i < sizeof own_files / sizeof *own_files; i++) {
		struct stat st;
		if (fstatat(dfd, own_files[i], &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
			(void)unlinkat(dfd, own_files[i], 0);
	}
}

int staging_begin(struct staging *st, const char *path, char *err, size_t errlen)
{
	st->dir[0] = 0;
	st->dfd = st->mark = -1;
	if (strlen(path) > sizeof st->dir - 32) {
		snprintf(err, errlen, "output path too long");
		return BFI_E_INVALID;
	}
	int rc = -ENOENT;
	/* another build's sweep may take a directory not yet marked (abandoned()): make another */
	for (int tries = 0; tries < 4 && rc == -ENOENT; tries++) {
		if (st->dfd >= 0)
			close(st->dfd);
		snprintf(st->dir, sizeof st->dir, "%s" STAGE_INFIX "XXXXXX", path);
		if (mkdtemp(st->dir) == NULL) {
			int e = errno;
			snprintf(err, errlen, "cannot create a staging directory beside %s: %s", path,
			         strerror(e));
			st->dir[0] = 0;
			st->dfd = -1;
			return -e;
		}
		st->dfd = open(st->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		rc = st->dfd < 0 ? -errno : 0;
		if (rc == 0) {
			st->mark = make_mark(st->dfd, last_name(st->dir));
			rc = st->mark < 0 ? st->mark : 0;
		}
	}
	/* mkdtemp makes it 0700; a published snapshot is as readable as its files */
	if (rc == 0 && fchmod(st->dfd, 0755) != 0)
		rc = -errno;
	if (rc) {
		snprintf(err, errlen, "%s: %s", st->dir, strerror(-rc));
		staging_end(st);
	}
	return rc;
}

/*
 * Publish the staged snapshot at path. Two builds may race to a new path:
 * the loser's rename finds a directory there, and goes the exchange way.
 *
 * No moment may leave the staging name unmarked while it holds a
 * snapshot. Before an exchange the snapshot to be replaced gets a marker
 * of its own, naming the staging directory and locked by this build
 * (old_mark), so that the exchange brings it to the staging name already
 * marked; the marker that went with the staged directory into place is
 * then removed. After a plain rename the marker is removed once the
 * rename is durable. A build killed in between leaves a stray marker in
 * the published snapshot; it names the staging directory, not the
 * snapshot, so no sweep honours it there or in a copy, and the next
 * replacement carries it away.
 */
#define PUBLISH_TRIES 8

/*
 * A marker for the snapshot at path, naming the staging directory name it
 * is to be exchanged to, locked: a new one, or a stray one a killed build
 * left there, rewritten, if no live build holds it. Its fd, or -1.
 */
static int old_mark(const char *path, const char *name)
{
	int dfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return -1;
	int fd = make_mark(dfd, name);
	if (fd == -EEXIST) { /* a killed build's: made to name this exchange's directory */
		enum mark_state ms;
		size_t got;
		char text[sizeof MARK_TEXT + 300];
		size_t want = mark_text(name, text, sizeof text);
		fd = take_mark(dfd, O_RDWR, name, &ms, &got);
		if (fd >= 0 && ms != MARK_WHOLE &&
		    (ftruncate(fd, 0) != 0 || pwrite(fd, text, want, 0) != (ssize_t)want)) {
			close(fd);
			fd = -1;
		}
	}
	close(dfd);
	return fd < 0 ? -1 : fd;
}

int staging_publish(struct staging *st, const char *path, char *err, size_t errlen,
                    char *warn, size_t warnlen)
{
	char parent[4200], base[4200];
	int rc = split_path(path, parent, base, sizeof parent);
	warn[0] = 0;
	if (rc) {
		snprintf(err, errlen, "'%s' cannot name a snapshot directory", path);
		return rc;
	}
	int swapped = -1, sys = 0;
	for (int tries = 0; tries < PUBLISH_TRIES && swapped < 0 && rc == 0 && sys == 0; tries++) {
		struct stat s;
		if (lstat(path, &s) != 0) {
			if (errno != ENOENT)
				sys = errno;
			else if (rename(st->dir, path) == 0)
				swapped = 0;
			else if (errno != ENOTEMPTY && errno != EEXIST)
				sys = errno;
			continue; /* else another build published there first: exchange with it */
		}
		rc = bfi_output_check(path, err, errlen);
		if (rc)
			break;
		int omark = old_mark(path, last_name(st->dir));
		if (renameat2(AT_FDCWD, st->dir, AT_FDCWD, path, RENAME_EXCHANGE) == 0) {
			swapped = 1; /* st->dir now holds the old snapshot, still whole, and marked */
			if (omark >= 0) {
				close(st->mark);
				st->mark = omark;
			}
		} else {
			if (omark >= 0)
				close(omark); /* a stray marker in the snapshot there: harmless */
			if (errno != ENOENT)
				sys = errno;
		}
	}
	if (swapped < 0) {
		if (sys) {
			rc = -sys;
			snprintf(err, errlen, "publishing %s: %s", path, strerror(sys));
		} else if (rc == 0) {
			rc = -EBUSY;
			snprintf(err, errlen, "publishing %s: other builds kept changing it", path);
		}
		return rc; /* still staged, still marked */
	}
	/* st->dfd is the published directory now, odfd the replaced one's */
	int odfd = -1;
	if (swapped) {
		odfd = open(st->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		/* marked before the exchange (old_mark), or, if that failed, now */
		struct stat ms;
		if (odfd >= 0 && fstatat(odfd, MARK_NAME, &ms, AT_SYMLINK_NOFOLLOW) != 0)
			(void)renameat(st->dfd, MARK_NAME, odfd, MARK_NAME);
		else
			(void)unlinkat(st->dfd, MARK_NAME, 0); /* the published snapshot: bfi's files only */
	}
	/*
	 * Make the swap durable before the old snapshot is deleted. If that
	 * fails, the build fails, so undo the swap: the path goes back to what
	 * it held (the old snapshot, or nothing), and the marker with the
	 * staged directory.
	 */
	rc = fsync_dir(parent);
	if (rc) {
		snprintf(err, errlen, "fsync %s: %s", parent, strerror(-rc));
		if (swapped) {
			(void)renameat2(AT_FDCWD, st->dir, AT_FDCWD, path, RENAME_EXCHANGE);
			if (odfd >= 0)
				(void)renameat(odfd, MARK_NAME, st->dfd, MARK_NAME);
		} else {
			(void)rename(path, st->dir);
		}
		if (odfd >= 0)
			close(odfd);
		return rc;
	}
	if (!swapped) {
		(void)unlinkat(st->dfd, MARK_NAME, 0); /* published: bfi's files only */
		close(st->dfd);
		st->dfd = -1;
		st->dir[0] = 0; /* it is the snapshot now */
		return 0;
	}
	close(st->dfd);
	st->dfd = odfd;
	char other[256];
	if (st->dfd >= 0 && foreign_file(st->dfd, other, sizeof other) == 1) {
		snprintf(warn, warnlen,
		         "the old snapshot held '%s', which bfi did not write; it is kept, with the old "
		         "snapshot, in %s",
		         other, st->dir);
		/* keep all of it, unmarked: it holds the user's file */
		(void)unlinkat(st->dfd, MARK_NAME, 0);
		close(st->dfd);
		st->dfd = -1;
		st->dir[0] = 0;
	}
	return 0;
}

/*
 * Publish the staged directory at path, which must not exist: a rename,
 * made durable, then the marker goes (a collection unpacked whole).
 */
/*
 * Move the staged directory to path with renameat2's how: RENAME_NOREPLACE
 * (path must not exist, and an empty directory made there meanwhile is
 * not replaced) or RENAME_EXCHANGE (path's directory goes where the staged
 * one was, named then in old). Made durable, or undone.
 */
static int staging_move(struct staging *st, const char *path, unsigned how, char *old,
                        size_t oldlen, char *err, size_t errlen)
{
	char parent[4200], base[4200];
	if (split_path(path, parent, base, sizeof parent) != 0) {
		snprintf(err, errlen, "'%s' cannot name a directory", path);
		return BFI_E_INVALID;
	}
	if (renameat2(AT_FDCWD, st->dir, AT_FDCWD, path, how) != 0) {
		int e = errno;
		snprintf(err, errlen, "publishing %s: %s", path, strerror(e));
		return e == EEXIST ? BFI_E_EXISTS : -e;
	}
	int rc = fsync_dir(parent);
	if (rc) { /* the move never made durable is undone */
		snprintf(err, errlen, "fsync %s: %s", parent, strerror(-rc));
		(void)renameat2(AT_FDCWD, path, AT_FDCWD, st->dir, how & RENAME_EXCHANGE);
		return rc;
	}
	/* st's directory, and so its marker, is path's now */
	(void)unlinkat(st->dfd, MARK_NAME, 0);
	close(st->dfd);
	st->dfd = -1;
	if (old)
		snprintf(old, oldlen, "%s", st->dir);
	st->dir[0] = 0;
	return 0;
}

int staging_rename(struct staging *st, const char *path, char *err, size_t errlen)
{
	return staging_move(st, path, RENAME_NOREPLACE, NULL, 0, err, errlen);
}

int staging_exchange(struct staging *st, const char *path, char *old, size_t oldlen, char *err,
                     size_t errlen)
{
	return staging_move(st, path, RENAME_EXCHANGE, old, oldlen, err, errlen);
}

void staging_end(struct staging *st)
{
	if (st->dir[0] && st->dfd >= 0) {
		remove_own_files(st->dfd);
		(void)unlinkat(st->dfd, MARK_NAME, 0);
		(void)rmdir(st->dir); /* only if empty: anything else there is not ours */
	}
	if (st->dfd >= 0)
		close(st->dfd);
	if (st->mark >= 0)
		close(st->mark); /* releases the lock */
	st->dir[0] = 0;
	st->dfd = st->mark = -1;
}

/*
 * Is dfd/name an abandoned staging directory of this user's? Then its
 * marker's fd, locked; else -1. mkdtemp_len: the length of a name mkdtemp
 * made beside the path.
 */
static int abandoned(int pfd, const char *name, size_t mkdtemp_len, int *dirfd)
{
	struct stat st, held;
	*dirfd = -1;
	if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode) ||
	    st.st_uid != geteuid())
		return -1;
	int dfd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return -1;
	if (fstat(dfd, &held) != 0 || held.st_dev != st.st_dev || held.st_ino != st.st_ino) {
		close(dfd);
		return -1;
	}
	enum mark_state ms;
	size_t len;
	int mfd = take_mark(dfd, O_RDONLY, name, &ms, &len);
	if (ms == MARK_WHOLE) {
		*dirfd = dfd;
		return mfd;
	}
	/*
	 * A build killed as it began: mkdtemp's mode 0700 (a build makes its
	 * directory 0755 only once the marker is whole), nothing in it but
	 * perhaps the start of an unlocked marker. Then it is emptied of that
	 * marker and removed, which rmdir allows only if nothing else is there.
	 */
	if ((held.st_mode & 07777) == 0700 && (ms == MARK_ABSENT || ms == MARK_PART)) {
		if (mfd >= 0)
			(void)unlinkat(dfd, MARK_NAME, 0);
		(void)unlinkat(pfd, name, AT_REMOVEDIR);
	} else if (ms == MARK_ABSENT && strlen(name) == mkdtemp_len) {
		/*
		 * A build killed as it ended, between removing its marker and its
		 * directory, leaves it empty, whatever its mode. rmdir takes a
		 * directory only if it is empty: nothing else can go with it.
		 */
		(void)unlinkat(pfd, name, AT_REMOVEDIR);
	}
	if (mfd >= 0)
		close(mfd);
	close(dfd);
	return -1;
}

void staging_sweep(const char *path)
{
	char parent[4200], base[4200];
	if (split_path(path, parent, base, sizeof parent) != 0)
		return;
	size_t bl = strlen(base), il = strlen(STAGE_INFIX);
	int pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0)
		return;
	int lfd = dup(pfd);
	DIR *d = lfd >= 0 ? fdopendir(lfd) : NULL;
	if (d == NULL) {
		if (lfd >= 0)
			close(lfd);
		close(pfd);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, base, bl) != 0 || strncmp(e->d_name + bl, STAGE_INFIX, il) != 0)
			continue;
		int dfd, mfd = abandoned(pfd, e->d_name, bl + il + 6, &dfd); /* mkdtemp's 6 letters */
		if (mfd < 0)
			continue;
		remove_own_files(dfd);
		(void)unlinkat(dfd, MARK_NAME, 0);
		(void)unlinkat(pfd, e->d_name, AT_REMOVEDIR); /* only if empty */
		close(mfd);
		close(dfd);
	}
	closedir(d);
	close(pfd);
}

int snapshot_remove(int pfd, const char *name)
{
	struct stat st;
	if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid())
		return BFI_E_EXISTS;
	int dfd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	remove_own_files(dfd);
	/* a stray marker, as a crash may leave one in a published snapshot */
	if (fstatat(dfd, MARK_NAME, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
		(void)unlinkat(dfd, MARK_NAME, 0);
	close(dfd);
	return unlinkat(pfd, name, AT_REMOVEDIR) == 0 ? 0 : -errno; /* only if now empty */
}
