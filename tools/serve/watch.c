/*
 * watch.c - bfi serve's main thread: every path opened, then inotify and
 * signals (signalfd) waited on, to reopen a path that changed (or all of
 * them on SIGHUP) and to return on SIGTERM or SIGINT; and every tick the
 * connections past their deadline cut and the files served checked.
 */
#include <errno.h>
#include <libgen.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "serve.h"
#include "tools.h"

static double mono(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

struct watch {
	int wd;
	size_t slot;
	int dir_of; /* 1: the path's parent (events name the path); 0: the path itself */
};


static void watch_add(struct watches *ws, const char *p, size_t slot, int dir_of)
{
	int wd = inotify_add_watch(ws->fd, p,
	                           dir_of ? IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE |
	                                        IN_CLOSE_WRITE
	                                  : IN_MOVED_TO | IN_CREATE | IN_CLOSE_WRITE | IN_MODIFY |
	                                        IN_DELETE_SELF | IN_MOVE_SELF);
	if (wd < 0)
		return; /* not there (yet): a parent event or SIGHUP finds it */
	for (size_t i = 0; i < ws->n; i++)
		if (ws->w[i].wd == wd && ws->w[i].slot == slot && ws->w[i].dir_of == dir_of)
			return;
	if (ws->n == ws->cap) {
		size_t cap = ws->cap ? ws->cap * 2 : 16;
		struct watch *w = realloc(ws->w, cap * sizeof *w);
		if (w == NULL)
			return;
		ws->w = w;
		ws->cap = cap;
	}
	ws->w[ws->n++] = (struct watch){wd, slot, dir_of};
}

/* Watch the slot's path (a collection's MANIFEST is renamed inside it) and its parent. */
static void watch_slot(struct server *sv, struct watches *ws, size_t i)
{
	char *copy = strdup(sv->slots[i].path);
	if (copy == NULL)
		return;
	watch_add(ws, dirname(copy), i, 1);
	free(copy);
	watch_add(ws, sv->slots[i].path, i, 0);
}

static int reload(struct server *sv, size_t i, int first)
{
	struct slot *sl = &sv->slots[i];
	char why[600], note[400];
	double t = mono();
	int rc = slot_reload(sv, sl, why, sizeof why, note, sizeof note);
	if (rc < 0) {
		fprintf(stderr, "bfi serve: %s: %s: %s\n", sl->name, sl->path,
		        first && !(rc == BFI_E_LIMIT && note[0]) ? bfi_strerror(rc) : why);
		return rc;
	}
	if (rc > 0) {
		struct gen *g = gen_acquire(sl);
		fprintf(stderr, "bfi serve: %s: %s: generation %llu open in %.3f s\n", sl->name,
		        sl->path, (unsigned long long)(g ? g->generation : 0), mono() - t);
		gen_release(sv, g);
		if (note[0])
			fprintf(stderr, "bfi serve: %s: note: %s\n", sl->name, note);
	}
	return 0;
}

/* Does event ev (on watch w) concern its slot's path? */
static int concerns(const struct server *sv, const struct watch *w, const struct inotify_event *ev)
{
	if (!w->dir_of)
		return 1;
	if (ev->len == 0)
		return 0;
	char *copy = strdup(sv->slots[w->slot].path);
	if (copy == NULL)
		return 1;
	int yes = !strcmp(ev->name, basename(copy));
	free(copy);
	return yes;
}

#define TICK 0.25 /* seconds between the main thread's rounds: deadlines, file checks */

/*
 * Until SIGTERM or SIGINT: reopen changed paths (a moment after their last
 * event), all on SIGHUP; and every TICK cut the connections past their
 * deadline and check the files of what is served (a change in place that
 * no event told of, as on NFS).
 */
void watch_loop(struct server *sv, int sfd, struct watches *ws)
{
	double due = 0, tick = mono() + TICK; /* due: when the dirty slots are reopened, or 0 */
	for (;;) {
		struct pollfd p[2] = {{sfd, POLLIN, 0}, {ws->fd, POLLIN, 0}};
		double next = due && due < tick ? due : tick;
		int wait_ms = (int)((next - mono()) * 1000) + 1;
		if (wait_ms < 0)
			wait_ms = 0;
		int n = poll(p, ws->fd >= 0 ? 2 : 1, wait_ms);
		if (n < 0 && errno != EINTR)
			return;
		if (n > 0 && (p[0].revents & POLLIN)) {
			struct signalfd_siginfo si;
			if (read(sfd, &si, sizeof si) == (ssize_t)sizeof si) {
				if (si.ssi_signo == SIGHUP) {
					for (size_t i = 0; i < sv->n_slots; i++)
						atomic_store(&sv->slots[i].dirty, 1);
					due = mono();
				} else {
					return;
				}
			}
		}
		if (n > 0 && ws->fd >= 0 && (p[1].revents & POLLIN)) {
			char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
			ssize_t got = read(ws->fd, buf, sizeof buf);
			for (ssize_t off = 0; got > 0 && off < got;) {
				const struct inotify_event *ev = (const void *)(buf + off);
				for (size_t i = 0; i < ws->n; i++)
					if (ws->w[i].wd == ev->wd && concerns(sv, &ws->w[i], ev)) {
						struct slot *sl = &sv->slots[ws->w[i].slot];
						/* a file written in place: its generation stops answering now */
						struct gen *g = gen_acquire(sl);
						if (g)
							(void)gen_changed(sl, g);
						gen_release(sv, g);
						atomic_store(&sl->dirty, 1);
						due = mono() + 0.1; /* a publish is several events: wait for the last */
					}
				off += (ssize_t)(sizeof *ev + ev->len);
			}
		}
		if (mono() >= tick) {
			tick = mono() + TICK;
			http_cut_late();
			/*
			 * After a request that needed much memory, what is free in
			 * glibc's heaps goes back to the system: here, once its reply
			 * is gone, and a few times a second at most.
			 */
			if (atomic_exchange(&sv->trim, 0))
				malloc_trim(0);
			for (size_t i = 0; i < sv->n_slots; i++) {
				struct gen *g = gen_acquire(&sv->slots[i]);
				if (g && gen_changed(&sv->slots[i], g) && !due)
					due = mono();
				gen_release(sv, g);
				if (atomic_load(&sv->slots[i].dirty) && !due)
					due = mono() + 0.1; /* a request found it changed */
			}
		}
		if (due && mono() >= due) {
			due = 0;
			for (size_t i = 0; i < sv->n_slots; i++)
				if (atomic_exchange(&sv->slots[i].dirty, 0)) {
					reload(sv, i, 0);
					watch_slot(sv, ws, i); /* the path may be a new directory now */
				}
		}
	}
}

int watch_open(struct server *sv, struct watches *ws)
{
	*ws = (struct watches){inotify_init1(IN_NONBLOCK | IN_CLOEXEC), NULL, 0, 0};
	for (size_t i = 0; i < sv->n_slots; i++) {
		if (ws->fd >= 0)
			watch_slot(sv, ws, i);
		if (reload(sv, i, 1) != 0)
			return -1;
	}
	return 0;
}

void watch_close(struct watches *ws)
{
	free(ws->w);
	ws->w = NULL;
	if (ws->fd >= 0)
		close(ws->fd);
	ws->fd = -1;
}
