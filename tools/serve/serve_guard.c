/*
 * serve_guard.c - one snapshot's SIGBUS is one request's 503, not the
 * server's death.
 *
 * A served file that shrinks under its map (truncated, or copied over in
 * place) makes the next read of a page past its new end raise SIGBUS in
 * the thread that read it. While a worker answers from a generation it
 * holds that generation's snapshot in a thread-local guard; the handler
 * asks bfi_mapped_file whether the faulting address lies in that
 * snapshot's maps, and if so jumps back to the request (queries hold no
 * locks while they read the map, bfi.h), which marks the generation
 * changed and answers 503. A fault anywhere else is not a snapshot's: the
 * default action, and the process ends as it would have. While a
 * generation is opened (the main thread) its snapshot is not yet known:
 * any SIGBUS there is taken for its files', which are then left.
 */
#include <signal.h>
#include <string.h>

#include "serve.h"

static _Thread_local struct {
	sigjmp_buf *env;
	const bfi_snapshot *snap;
} guard;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (guard.env && (guard.snap == NULL || bfi_mapped_file(guard.snap, si->si_addr))) {
		sigjmp_buf *env = guard.env;
		guard.env = NULL;
		guard.snap = NULL;
		siglongjmp(*env, 1);
	}
	signal(sig, SIG_DFL); /* not a snapshot's map: raised again, as if unhandled */
}

void serve_guard_install(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_sigbus;
	/* SA_NODEFER: SIGBUS stays unblocked in the handler, so that a jump out
	 * of it need not restore the signal mask: sigsetjmp(env, 0), no system
	 * call a request */
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	(void)sigaction(SIGBUS, &sa, NULL);
}

void serve_guard_enter(sigjmp_buf *env, const bfi_snapshot *snap)
{
	guard.snap = snap;
	guard.env = env;
}

void serve_guard_leave(void)
{
	guard.env = NULL;
	guard.snap = NULL;
}
