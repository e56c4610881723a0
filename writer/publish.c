/*
 * publish.c - swap a finished snapshot directory into place atomically.
 *
 * New path: rename(tmp, path). Existing snapshot: renameat2 with
 * RENAME_EXCHANGE swaps both directories in one step, so a reader sees
 * the old pair or the new pair, never a mix; then the old pair is removed.
 * Readers that already opened the old snapshot keep their descriptors and
 * maps. The parent directory is fsynced so the swap survives a crash.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

int fsync_path(const char *path, int dir)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | (dir ? O_DIRECTORY : 0));
	if (fd < 0)
		return -errno;
	int rc = fsync(fd) == 0 ? 0 : -errno;
	close(fd);
	return rc;
}

static int is_snapshot(const char *path)
{
	char p[4300];
	struct stat st;
	snprintf(p, sizeof p, "%s/%s", path, BFI_INDEX_NAME);
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

int publish_dir(const char *tmpdir, const char *path, char *err, size_t errlen)
{
	struct stat st;
	int rc;
	char parent[4200];
	snprintf(parent, sizeof parent, "%s", path);
	char *pd = dirname(parent);
	if (lstat(path, &st) != 0) {
		if (errno != ENOENT)
			goto syserr;
		if (rename(tmpdir, path) != 0)
			goto syserr;
	} else {
		if (!S_ISDIR(st.st_mode) || !is_snapshot(path)) {
			snprintf(err, errlen, "%s exists and is not a bfi snapshot; not replacing it",
			         path);
			return BFI_E_EXISTS;
		}
		if (renameat2(AT_FDCWD, tmpdir, AT_FDCWD, path, RENAME_EXCHANGE) != 0)
			goto syserr;
		/* tmpdir now holds the old snapshot. */
		char p[4300];
		snprintf(p, sizeof p, "%s/%s", tmpdir, BFI_INDEX_NAME);
		unlink(p);
		snprintf(p, sizeof p, "%s/%s", tmpdir, BFI_CATALOG_NAME);
		unlink(p);
		/* Left behind only if someone added files to the old snapshot. */
		(void)rmdir(tmpdir);
	}
	rc = fsync_path(pd, 1);
	if (rc) {
		snprintf(err, errlen, "fsync %s: %s", pd, strerror(-rc));
		return rc;
	}
	return 0;
syserr:
	rc = -errno;
	snprintf(err, errlen, "publishing %s: %s", path, strerror(errno));
	return rc;
}
