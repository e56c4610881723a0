/*
 * guard.c - the bfi command's answer to SIGBUS on a mapped snapshot.
 *
 * A snapshot's files are mapped; if one shrinks under the reader (it was
 * truncated, or copied over in place), reading a page past its new end
 * raises SIGBUS. The handler looks the faulting address up among the
 * watched snapshots' maps (bfi_mapped_file, which only compares
 * addresses), writes the answers already committed (out_emergency), then
 * a message naming the file, and exits. Everything it calls is
 * async-signal-safe: the messages are made when a snapshot is watched.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tools.h"

/* what bfi_mapped_file names, in the order of watch.msg */
static const char *const files[2] = {"index.bfi", "catalog.mdb"};

static struct watch {
	const bfi_snapshot *snap;
	char msg[2][600]; /* index.bfi, catalog.mdb */
} watched[GUARD_MAX];
static volatile sig_atomic_t n_watched;
static char during_msg[600];
static volatile sig_atomic_t during_status;
static char cmd_name[32] = "bfi";

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	const char *msg = NULL;
	int status = EXIT_USAGE;
	for (int i = 0; i < n_watched && msg == NULL; i++) {
		const char *f = watched[i].snap ? bfi_mapped_file(watched[i].snap, si->si_addr) : NULL;
		if (f)
			msg = watched[i].msg[strcmp(f, files[1]) == 0];
	}
	if (msg == NULL && during_msg[0]) {
		msg = during_msg;
		status = during_status;
	}
	if (msg == NULL) { /* not a snapshot's map: the default action, on return */
		signal(sig, SIG_DFL);
		return;
	}
	out_emergency();
	ssize_t w = write(STDERR_FILENO, msg, strlen(msg));
	(void)w;
	_exit(status);
}

void guard_install(const char *cmd)
{
	snprintf(cmd_name, sizeof cmd_name, "%s", cmd);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	(void)sigaction(SIGBUS, &sa, NULL);
}

void guard_watch(const bfi_snapshot *snap, const char *path)
{
	int i = 0;
	while (i < n_watched && watched[i].snap)
		i++;
	if (i == GUARD_MAX)
		return; /* unnamed: the default action */
	for (int f = 0; f < 2; f++)
		snprintf(watched[i].msg[f], sizeof watched[i].msg[f],
		         "%s: %s/%s changed or shrank under this reader; a snapshot is replaced by "
		         "publishing a new one, never edited in place\n",
		         cmd_name, path, files[f]);
	watched[i].snap = snap;
	if (i == n_watched)
		n_watched = i + 1;
}

void guard_unwatch(const bfi_snapshot *snap)
{
	for (int i = 0; i < n_watched; i++)
		if (watched[i].snap == snap)
			watched[i].snap = NULL;
}

void guard_during(const char *path, int status)
{
	during_msg[0] = 0; /* never a half-made message */
	if (path == NULL)
		return;
	during_status = status;
	char m[sizeof during_msg];
	snprintf(m, sizeof m, "%s: a file of %s changed or shrank while it was read\n", cmd_name,
	         path);
	memcpy(during_msg + 1, m + 1, sizeof m - 1);
	during_msg[0] = m[0];
}
