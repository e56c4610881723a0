/*
 * outfile.c - the files bfi writes by name (inspect --html, synth's
 * files, bench --results): never through a name someone else planted,
 * and never over something that is not a plain file of the user's.
 *
 * A file replaced whole is made new beside its target by mkstemp (so
 * with O_CREAT|O_EXCL and a random name: no planted name is followed),
 * written, fsynced, and renamed over the target, whose directory is then
 * fsynced. The target may be absent, or a regular file that is not one
 * of bfi's own (a snapshot's or collection's file, or anything that
 * starts with one of bfi's magic numbers). A symbolic link, a device, a
 * FIFO, a socket or a directory there is refused: rename would replace
 * the node itself, which for /dev/null or a link to elsewhere is never
 * what was meant.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bfi_manifest.h"
#include "format.h"
#include "tools.h"

/* What bfi writes inside a snapshot or collection directory. */
static const char *const own_names[] = {BFI_INDEX_NAME,    BFI_CATALOG_NAME,
                                        BFI_CATALOG_NAME "-lock", BFI_MANIFEST_NAME,
                                        BFI_COLLECTION_LOCK, ".bfi-staging"};
/* The first bytes of bfi's own files: index, filter, manifest. */
static const char *const magics[] = {BFI_MAGIC, BFI_FILTER_MAGIC, BFI_MANIFEST_MAGIC};

/* path's directory (into dir, size len) and the offset of its last component. */
static int split(const char *path, char *dir, size_t len, size_t *base)
{
	size_t n = strlen(path);
	if (n == 0 || path[n - 1] == '/' || n >= len)
		return -1;
	const char *slash = strrchr(path, '/');
	*base = slash ? (size_t)(slash - path) + 1 : 0;
	if (slash == NULL)
		snprintf(dir, len, ".");
	else if (slash == path)
		snprintf(dir, len, "/");
	else
		snprintf(dir, len, "%.*s", (int)(slash - path), path);
	return 0;
}

/* Is dir a snapshot's or a collection's directory? */
static int bfi_dir(const char *dir)
{
	char p[4400];
	struct stat st;
	snprintf(p, sizeof p, "%s/" BFI_INDEX_NAME, dir);
	if (lstat(p, &st) == 0)
		return 1;
	snprintf(p, sizeof p, "%s/" BFI_MANIFEST_NAME, dir);
	return lstat(p, &st) == 0;
}

int outfile_check(const char *cmd, const char *path)
{
	char dir[4200];
	size_t base;
	if (split(path, dir, sizeof dir, &base) != 0) {
		fprintf(stderr, "bfi %s: '%s' does not name a file\n", cmd, path);
		return EXIT_USAGE;
	}
	struct stat st;
	if (lstat(path, &st) != 0) {
		if (errno == ENOENT)
			return 0;
		fprintf(stderr, "bfi %s: %s: %s\n", cmd, path, strerror(errno));
		return EXIT_USAGE;
	}
	if (S_ISLNK(st.st_mode)) {
		fprintf(stderr, "bfi %s: %s is a symbolic link; bfi replaces only a regular file, so "
		                "give the path it points to\n", cmd, path);
		return EXIT_USAGE;
	}
	if (!S_ISREG(st.st_mode)) {
		fprintf(stderr, "bfi %s: %s exists and is not a regular file (%s); not replacing it\n",
		        cmd, path, S_ISDIR(st.st_mode) ? "a directory" : "a device, FIFO or socket");
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < sizeof own_names / sizeof *own_names; i++)
		if (!strcmp(path + base, own_names[i]) && bfi_dir(dir)) {
			fprintf(stderr, "bfi %s: %s is a file of the snapshot or collection in %s; not "
			                "replacing it\n", cmd, path, dir);
			return EXIT_USAGE;
		}
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	char head[8] = {0};
	ssize_t got = fd >= 0 ? pread(fd, head, sizeof head, 0) : -1;
	if (fd >= 0)
		close(fd);
	for (size_t i = 0; got == (ssize_t)sizeof head && i < sizeof magics / sizeof *magics; i++)
		if (!memcmp(head, magics[i], sizeof head)) {
			fprintf(stderr, "bfi %s: %s is one of bfi's own files (an index, filter or "
			                "manifest); not replacing it\n", cmd, path);
			return EXIT_USAGE;
		}
	return 0;
}

int outfile_open(struct outfile *o, const char *cmd, const char *path)
{
	memset(o, 0, sizeof *o);
	o->fd = -1;
	o->cmd = cmd;
	o->path = path;
	if (!strcmp(path, "-")) {
		o->f = stdout;
		return 0;
	}
	if (outfile_check(cmd, path) != 0)
		return EXIT_USAGE;
	char dir[4200];
	size_t base;
	(void)split(path, dir, sizeof dir, &base);
	/* a dotted name in the same directory, so the rename stays on one file system */
	if (snprintf(o->tmp, sizeof o->tmp, "%s/.%s.tmp-XXXXXX", dir, path + base) >=
	    (int)sizeof o->tmp) {
		fprintf(stderr, "bfi %s: %s: name too long\n", cmd, path);
		return EXIT_USAGE;
	}
	o->fd = mkstemp(o->tmp);
	if (o->fd < 0) {
		fprintf(stderr, "bfi %s: cannot create a file beside %s: %s\n", cmd, path,
		        strerror(errno));
		o->tmp[0] = 0;
		return EXIT_USAGE;
	}
	mode_t mask = umask(0); /* mkstemp makes 0600: the file is as any the user writes */
	umask(mask);
	(void)fchmod(o->fd, 0666 & ~mask);
	o->f = fdopen(o->fd, "w");
	if (o->f == NULL) {
		fprintf(stderr, "bfi %s: %s: %s\n", cmd, o->tmp, strerror(errno));
		close(o->fd);
		unlink(o->tmp);
		o->tmp[0] = 0;
		return EXIT_USAGE;
	}
	return 0;
}

int outfile_close(struct outfile *o, int ok)
{
	if (o->f == NULL)
		return EXIT_USAGE;
	if (o->f == stdout) {
		o->f = NULL;
		return ok ? 0 : EXIT_USAGE; /* standard output is checked at exit (bfi.c) */
	}
	int e = ferror(o->f) ? (errno ? errno : EIO) : 0;
	if (e == 0 && (fflush(o->f) != 0 || fsync(o->fd) != 0))
		e = errno;
	if (fclose(o->f) != 0 && e == 0)
		e = errno;
	o->f = NULL;
	/* the target checked again: what was planted since is refused, not replaced */
	if (ok && e == 0 && outfile_check(o->cmd, o->path) != 0)
		ok = 0;
	if (ok && e == 0 && rename(o->tmp, o->path) != 0)
		e = errno;
	if (ok && e == 0) {
		char dir[4200];
		size_t base;
		(void)split(o->path, dir, sizeof dir, &base);
		int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd >= 0) {
			(void)fsync(dfd);
			close(dfd);
		}
		return 0;
	}
	(void)unlink(o->tmp);
	if (e)
		fprintf(stderr, "bfi %s: %s: %s\n", o->cmd, o->path, strerror(e));
	return EXIT_USAGE;
}

FILE *outfile_append(const char *cmd, const char *path)
{
	if (outfile_check(cmd, path) != 0)
		return NULL;
	/* O_NOFOLLOW and no O_TRUNC: nothing there is lost, and no link is followed */
	int fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0666);
	struct stat st;
	if (fd < 0) {
		if (errno == ELOOP)
			fprintf(stderr, "bfi %s: %s is a symbolic link; give the path it points to\n", cmd,
			        path);
		else
			fprintf(stderr, "bfi %s: %s: %s\n", cmd, path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		fprintf(stderr, "bfi %s: %s is not a regular file; not writing to it\n", cmd, path);
		close(fd);
		return NULL;
	}
	(void)fcntl(fd, F_SETFL, O_APPEND); /* blocking again: it is a regular file */
	FILE *f = fdopen(fd, "a+");
	if (f == NULL) {
		fprintf(stderr, "bfi %s: %s: %s\n", cmd, path, strerror(errno));
		close(fd);
	}
	return f;
}
