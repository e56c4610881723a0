/*
 * shim.c - an LD_PRELOAD library that makes one write, fsync or rename
 * fail, for tests/faults.sh. BFI_FAULT_AT=N fails the Nth such call of the
 * process (ENOSPC for writes, fallocate and truncation, EIO for syncs, and the rename
 * itself for renames); BFI_FAULT_COUNT=FILE writes how many calls there
 * were to FILE at exit, so the script knows how many trials to run. Calls
 * are counted in the order the process makes them, LMDB's included.
 * BFI_RENAME_DELAY_MS=N sleeps N ms before each rename, renameat and renameat2,
 * which opens the window in which another build publishes at the same
 * new path, or a file appears in the snapshot being replaced.
 * BFI_FLOCK_DELAY_MS=N sleeps N ms before each blocking flock, which opens
 * the window between a build creating its staging marker and locking it.
 * BFI_KILL_AFTER_PUBLISH=1 sends the process SIGKILL as soon as a rename
 * or exchange of a staging directory (a name holding ".tmp-") into place
 * succeeds: a build killed the moment it has published, before it tidies.
 * BFI_DLOPEN_FAIL=TEXT makes dlopen of a name holding TEXT fail: a
 * library loaded when needed (format/dl.c) that the machine lacks.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static long calls, fail_at = -1;
static int ready;

static void setup(void)
{
	if (ready)
		return;
	ready = 1;
	const char *a = getenv("BFI_FAULT_AT");
	if (a)
		fail_at = atol(a);
}

/* 1 if this call is the one to fail (errno set). */
static int hit(int err)
{
	setup();
	if (++calls == fail_at) {
		errno = err;
		return 1;
	}
	return 0;
}

__attribute__((destructor)) static void report(void)
{
	const char *f = getenv("BFI_FAULT_COUNT");
	if (f) {
		FILE *o = fopen(f, "w");
		if (o) {
			fprintf(o, "%ld\n", calls);
			fclose(o);
		}
	}
}

#define REAL(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

ssize_t write(int fd, const void *b, size_t n)
{
	return hit(ENOSPC) ? -1 : REAL(write)(fd, b, n);
}
ssize_t pwrite(int fd, const void *b, size_t n, off_t o)
{
	return hit(ENOSPC) ? -1 : REAL(pwrite)(fd, b, n, o);
}
ssize_t pwrite64(int fd, const void *b, size_t n, off_t o)
{
	return hit(ENOSPC) ? -1 : REAL(pwrite64)(fd, b, n, o);
}
ssize_t writev(int fd, const struct iovec *v, int n)
{
	return hit(ENOSPC) ? -1 : REAL(writev)(fd, v, n);
}
ssize_t pwritev(int fd, const struct iovec *v, int n, off_t o)
{
	return hit(ENOSPC) ? -1 : REAL(pwritev)(fd, v, n, o);
}
int ftruncate(int fd, off_t len)
{
	return hit(ENOSPC) ? -1 : REAL(ftruncate)(fd, len);
}
int fallocate(int fd, int mode, off_t off, off_t len)
{
	return hit(ENOSPC) ? -1 : REAL(fallocate)(fd, mode, off, len);
}
int fsync(int fd)
{
	return hit(EIO) ? -1 : REAL(fsync)(fd);
}
int fdatasync(int fd)
{
	return hit(EIO) ? -1 : REAL(fdatasync)(fd);
}
static void delay(void)
{
	const char *d = getenv("BFI_RENAME_DELAY_MS");
	if (d) {
		long ms = atol(d);
		struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
		nanosleep(&ts, NULL);
	}
}

static void flock_delay(void)
{
	const char *d = getenv("BFI_FLOCK_DELAY_MS");
	if (d) {
		long ms = atol(d);
		struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
		nanosleep(&t, NULL);
	}
}

int flock(int fd, int op)
{
	if (!(op & LOCK_NB) && (op & LOCK_EX))
		flock_delay();
	return REAL(flock)(fd, op);
}

static int published(int rc, const char *from)
{
	if (rc == 0 && getenv("BFI_KILL_AFTER_PUBLISH") && strstr(from, ".tmp-"))
		kill(getpid(), SIGKILL);
	return rc;
}

int rename(const char *a, const char *b)
{
	delay();
	return hit(EIO) ? -1 : published(REAL(rename)(a, b), a);
}
int renameat2(int da, const char *a, int db, const char *b, unsigned flags)
{
	delay();
	return hit(EIO) ? -1 : published(REAL(renameat2)(da, a, db, b, flags), a);
}
int renameat(int da, const char *a, int db, const char *b)
{
	delay();
	return hit(EIO) ? -1 : REAL(renameat)(da, a, db, b);
}

void *dlopen(const char *name, int flags)
{
	static void *(*real)(const char *, int);
	const char *no = getenv("BFI_DLOPEN_FAIL");
	if (no && *no && name && strstr(name, no))
		return NULL;
	if (real == NULL)
		*(void **)&real = dlsym(RTLD_NEXT, "dlopen");
	return real ? real(name, flags) : NULL;
}
