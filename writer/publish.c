/*
 * publish.c - swap a finished snapshot directory into place atomically.
 *
 * New path: rename(tmp, path). Existing snapshot: renameat2 with
 * RENAME_EXCHANGE swaps both directories in one step, so a reader sees
 * the old pair or the new pair, never a mix; then the old pair is removed.
 * Readers that already opened the old snapshot keep their descriptors and
 * maps. The parent directory is fsynced so the swap survives a crash.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
	int swapped;
	if (lstat(path, &st) != 0) {
		if (errno != ENOENT)
			goto syserr;
		if (rename(tmpdir, path) != 0)
			goto syserr;
		swapped = 0;
	} else {
		if (!S_ISDIR(st.st_mode) || !is_snapshot(path)) {
			snprintf(err, errlen, "%s exists and is not a bfi snapshot; not replacing it",
			         path);
			return BFI_E_EXISTS;
		}
		if (renameat2(AT_FDCWD, tmpdir, AT_FDCWD, path, RENAME_EXCHANGE) != 0)
			goto syserr;
		swapped = 1; /* tmpdir now holds the old snapshot, still whole */
	}
	/*
	 * Make the swap durable before the old snapshot is deleted. If that
	 * fails, the build fails, so undo the swap: the path goes back to what
	 * it held (the old snapshot, or nothing).
	 */
	rc = fsync_path(pd, 1);
	if (rc) {
		snprintf(err, errlen, "fsync %s: %s", pd, strerror(-rc));
		if (swapped)
			(void)renameat2(AT_FDCWD, tmpdir, AT_FDCWD, path, RENAME_EXCHANGE);
		else
			(void)rename(path, tmpdir);
		return rc;
	}
	if (swapped) /* left behind only if someone added files to the old snapshot */
		publish_remove_dir(tmpdir);
	return 0;
syserr:
	rc = -errno;
	snprintf(err, errlen, "publishing %s: %s", path, strerror(errno));
	return rc;
}

void publish_remove_dir(const char *dir)
{
	static const char *const files[] = {BFI_INDEX_NAME, BFI_CATALOG_NAME, BFI_CATALOG_NAME "-lock"};
	char p[4400];
	for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
		snprintf(p, sizeof p, "%s/%s", dir, files[i]);
		unlink(p);
	}
	(void)rmdir(dir);
}

/*
 * A build stages its snapshot in PATH.tmp-PID-XXXXXX beside PATH. One that
 * was killed leaves that directory behind; the next build at PATH removes
 * every such directory whose process is gone (kill(pid, 0) says ESRCH), and
 * leaves alone those of builds still running.
 */
void publish_clean_stale(const char *path)
{
	char parent[4200], base[4200];
	snprintf(parent, sizeof parent, "%s", path);
	snprintf(base, sizeof base, "%s", path);
	const char *pd = dirname(parent), *bn = basename(base);
	size_t bl = strlen(bn);
	DIR *d = opendir(pd);
	if (d == NULL)
		return;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, bn, bl) != 0 || strncmp(e->d_name + bl, ".tmp-", 5) != 0)
			continue;
		char *end;
		long pid = strtol(e->d_name + bl + 5, &end, 10);
		if (end == e->d_name + bl + 5 || *end != '-' || pid <= 0 || pid == (long)getpid() ||
		    kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		char dir[4300];
		snprintf(dir, sizeof dir, "%s/%s", pd, e->d_name);
		publish_remove_dir(dir);
	}
	closedir(d);
}
