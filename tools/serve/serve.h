/*
 * serve.h - bfi serve's pieces: the snapshots served and their generations
 * (serve_gen.c), requests answered (routes.c, params.c, answer.c, reply.c),
 * the metrics (serve_metrics.c), the HTTP (http.c) and the main thread
 * (watch.c). tools/cli/cmd_serve.c starts them; the fuzz target calls
 * serve_answer() directly.
 */
#ifndef BFI_TOOLS_SERVE_H
#define BFI_TOOLS_SERVE_H

#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "bfi.h"
#include "answer.h"

/*
 * One opened generation of a served path: the snapshot, every set's name
 * (looked up once, then only read), and its bfi inspect --json. Counted:
 * the slot holds one reference while it is current, and each request in
 * flight one more; the last release closes it, so a request that began on
 * it ends on it, whatever was swapped in meanwhile.
 */
struct gen {
	bfi_snapshot *snap;
	struct names names;
	char *inspect; /* bfi inspect --json, less its newline */
	size_t inspect_len;
	uint64_t generation; /* a collection's manifest generation; a snapshot: its opens, from 1 */
	double opened;       /* Unix time */
	uint64_t mapped;     /* bytes of its files */
	uint8_t id[16];      /* snapshot (or collection) id */
	unsigned kmer;       /* the k-mer length its keys were made with, or 0 */
	atomic_uint refs;
	atomic_int dead; /* its files were found changed in place: every request gets 503 */
	atomic_llong checked; /* when its files were last found unchanged (CLOCK_MONOTONIC ns) */
};

/* A name served and the path it maps. */
struct slot {
	char *name, *path;
	pthread_mutex_t mu;
	struct gen *cur; /* NULL until opened */
	uint64_t opens;
	atomic_ullong reload_failures;
	atomic_ullong changed; /* generations found changed in place */
	atomic_int dirty; /* an event says the path changed: reopen it */
};

/* The endpoints, as the metrics name them. */
enum endpoint { EP_QUERY, EP_INFO, EP_LIST, EP_HEALTH, EP_METRICS, EP_OTHER, N_ENDPOINTS };
#define N_BUCKETS 16 /* latency histogram bounds, in seconds: serve_metrics.c */
#define N_CODES 13   /* the status codes counted: serve_metrics.c */

struct metrics {
	atomic_ullong requests[N_ENDPOINTS][N_CODES];
	atomic_ullong buckets[N_ENDPOINTS][N_BUCKETS + 1]; /* the last: above every bound */
	atomic_ullong micros[N_ENDPOINTS];                  /* latency sum */
	atomic_ullong queries, keys;
	atomic_llong mapped; /* bytes of every generation open, the old ones still in use too */
	atomic_llong held;   /* bytes of replies made and not yet taken by their clients */
	atomic_ullong cut;   /* connections cut for taking longer than --timeout */
	atomic_ullong faults; /* SIGBUS in a snapshot's map, caught: the request got 503 */
};

struct server {
	struct slot *slots;
	size_t n_slots;
	size_t max_body, max_keys;
	size_t max_reply;     /* the largest reply: past it, 413 */
	long long max_held;   /* replies waiting for their clients, in bytes at most: past it, 503 */
	double timeout; /* seconds a request may take */
	int warm;       /* open new generations with BFI_OPEN_WARM */
	const char *cors; /* --cors: the origin browsers may read answers from, or NULL */
	atomic_int trim; /* a request needed much memory: give back what is free (malloc_trim) */
	atomic_int ready; /* every slot opened once */
	struct metrics m;
};

/* serve_gen.c */
/* The slot's current generation, counted for the caller (NULL: not open yet). */
struct gen *gen_acquire(struct slot *sl);
void gen_release(struct server *sv, struct gen *g);
/*
 * Open the slot's path and swap it in if it differs from the current one
 * (id or generation): 1 swapped, 0 the same, or an error with why (the
 * current one is kept). note says what was decided of memory (a
 * snapshot larger than the process may hold: mapped, not warmed), or is
 * empty; a pack whose index passes it is refused, BFI_E_LIMIT.
 */
int slot_reload(struct server *sv, struct slot *sl, char *why, size_t cap, char *note,
                size_t note_cap);
/* Close every slot's generation (at exit, once no request is in flight). */
void slots_close(struct server *sv);
/*
 * Has g's snapshot been changed in place (bfi_check_files)? Then it is
 * marked dead, so that every request on it gets 503, and its slot dirty,
 * so that the path is opened again: 1; else 0.
 */
int gen_changed(struct slot *sl, struct gen *g);
/*
 * gen_changed after a request's queries: the check (three system calls)
 * is skipped if another found the files unchanged less than CHECK_EVERY
 * ns ago, so that a busy generation is checked some 20,000 times a second
 * rather than at every request. Any change is also checked at once when
 * inotify tells of it (watch.c).
 */
#define CHECK_EVERY 50000
int gen_changed_since(struct slot *sl, struct gen *g, long long now_ns);
/* Mark g dead (its files changed), and its slot dirty the first time. */
void gen_kill(struct slot *sl, struct gen *g);

/* serve_guard.c: a SIGBUS in a snapshot's map jumps back to its request */
void serve_guard_install(void);
/*
 * Until serve_guard_leave, a SIGBUS in snap's maps (on this thread; any
 * SIGBUS, for snap NULL: a snapshot being opened) longjmps to env.
 */
void serve_guard_enter(sigjmp_buf *env, const bfi_snapshot *snap);
void serve_guard_leave(void);

/* routes.c */
struct request {
	const char *method, *url;
	/* GET: the query string's arguments, in order; binary-safe */
	const char **arg_names, **arg_values;
	size_t *arg_lens;
	size_t n_args;
	char *body; /* POST: the caller's, which serve_answer may rewrite in place */
	size_t body_len;
	int body_too_large; /* more than max_body arrived: the rest was dropped */
	int url_nul;        /* the request line held a NUL byte */
	int too_many_args;  /* the URL held more arguments than the server keeps */
	int length_twice;   /* two Content-Length headers that differ */
};
struct reply {
	int status;
	char *body; /* malloc'd JSON or text, the caller frees */
	size_t len;
	const char *type;
	enum endpoint endpoint;
	uint64_t queries, keys;
	int preflight; /* a CORS preflight's 204: the methods and headers allowed go with it */
};
/* Answer one request; never fails (a reply of 500 at worst). */
void serve_answer(struct server *sv, const struct request *rq, struct reply *rp);
/* Free what serve_answer keeps per thread (at a thread's exit). */
void serve_thread_done(void);

/* http.c: serve_answer behind libmicrohttpd */
struct MHD_Daemon;
/* Load libmicrohttpd (mhd_dl.c): 0, or -ENOSYS with *why saying what is missing. */
int bfi_mhd_load(const char **why);
struct sockaddr_storage;
/*
 * Listen on addr for sv's requests on threads worker threads, at most
 * max_conn connections at once; a line per request on standard error
 * unless no_log. NULL if it cannot listen.
 */
struct MHD_Daemon *http_start(struct server *sv, const struct sockaddr_storage *addr,
                              unsigned threads, unsigned max_conn, int no_log);
unsigned http_port(struct MHD_Daemon *d); /* the port bound (port 0 asked: the one chosen) */
/* The main thread, now and then: cut the connections past their deadline. */
void http_cut_late(void);
/*
 * Stop accepting and let the requests in flight end, for --timeout and a
 * second at most: 0 once stopped, or how many still run (the caller then
 * ends the process without them).
 */
int http_stop(struct MHD_Daemon *d);

/* watch.c: the main thread's opens, inotify and signals */
struct watch;
struct watches {
	int fd; /* inotify, or -1 */
	struct watch *w;
	size_t n, cap;
};
/* Open every slot's path and watch it: 0, or -1 after saying which could not be opened. */
int watch_open(struct server *sv, struct watches *ws);
/*
 * Until SIGTERM or SIGINT on sfd: reopen changed paths (a moment after
 * their last event), all on SIGHUP; every tick cut late connections and
 * check the files served.
 */
void watch_loop(struct server *sv, int sfd, struct watches *ws);
void watch_close(struct watches *ws);

/* serve_metrics.c */
void metrics_count(struct metrics *m, enum endpoint e, int status, double seconds);
/* The Prometheus text page (a malloc'd string) of m and sv's slots, each endpoint by its label. */
char *metrics_page(struct server *sv, const char *(*endpoint_name)(enum endpoint), size_t *len);

#endif
