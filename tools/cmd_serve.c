/*
 * cmd_serve.c - bfi serve: a read-only HTTP query server over snapshots
 * and collections, on libmicrohttpd's thread pool (epoll). Requests are
 * answered by serve_answer(); this file is the HTTP around it, the
 * options, the log, and the main thread's loop: it opens every path, then
 * waits on inotify and signals (signalfd) to reopen a path that changed
 * (or all of them on SIGHUP) and to stop gracefully on SIGTERM or SIGINT.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <malloc.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "serve.h"
#include "tools.h"

static const char help[] =
	"Usage: bfi serve [OPTIONS] NAME=PATH...\n"
	"\n"
	"Serve the snapshots or collections at each PATH, read-only, over HTTP\n"
	"under NAME (letters, digits, '.', '_' and '-'). Endpoints, JSON in and out:\n"
	"  GET  /v1/NAME/query?key=K[&key=K...]   answer keys (also format=,\n"
	"                                         limit=, layout=)\n"
	"  GET  /v1/NAME/query?q=Q[&q=Q...]       answer queries formed as the\n"
	"                  snapshot's keys were made, as bfi query does with no\n"
	"                  query options (also threshold=)\n"
	"  POST /v1/NAME/query   a JSON object with one of\n"
	"         {\"queries\": [\"q\", ...]} (formed as q=Q are)  {\"keys\": [\"k\", ...]}\n"
	"         {\"text\": \"...\"}  {\"expr\": \"a AND (b OR c)\"}  {\"path\": \"/a/b\"}\n"
	"         {\"sequences\": [{\"id\": \"r1\", \"seq\": \"ACGT...\"}]}\n"
	"         (queries, text, expr and path also take a string), and optionally\n"
	"         \"threshold\": T (queries, text, sequences), \"format\": \"names\",\n"
	"         \"ordinals\" or \"count\", \"limit\": N, \"layout\": \"flat\"...\n"
	"       answers {\"snapshot\": NAME, \"generation\": G, \"results\": [...]},\n"
	"       each result the object bfi query --json prints for that query\n"
	"  GET  /v1/NAME   what bfi inspect --json says of it (its \"path\" null)\n"
	"  GET  /v1        the names served\n"
	"  GET  /healthz   200 once every PATH is open and sound, else 503 and\n"
	"                  which are not: opening, changed (in place), or gone\n"
	"  GET  /metrics   Prometheus text: requests, errors and latency by\n"
	"                  endpoint, queries and keys, generations, bytes mapped\n"
	"A bad request gets a 4xx (or 503, 504) with {\"error\": ..., \"code\": ...}.\n"
	"\n"
	"A PATH republished (bfi build, append, compact... publish by rename) is\n"
	"noticed through inotify, or on SIGHUP, opened in the background and\n"
	"swapped in; requests in flight finish on the old one, which is unmapped\n"
	"when the last of them ends. One that fails to open is logged, and the\n"
	"old one goes on serving. A file changed in place (overwritten, truncated)\n"
	"is found by a check after each request's queries and on each event: no\n"
	"answer from it is sent, and that NAME answers 503 until a whole snapshot\n"
	"is published there, while the others go on. SIGTERM or SIGINT: stop\n"
	"accepting, finish the requests in flight (for --timeout and a second at\n"
	"most; past that they are abandoned), exit 0.\n"
	"\n"
	"Options:\n"
	"      --listen ADDR:PORT  address to listen on (default 127.0.0.1:8080;\n"
	"                          port 0 picks a free one; [::1]:PORT for IPv6)\n"
	"      --threads N         worker threads (default: the cores)\n"
	"      --warm              read each new generation into memory before it\n"
	"                          is swapped in (MADV_WILLNEED)\n"
	"      --max-body SIZE     largest request body (default 8M)\n"
	"      --max-keys N        most queries in one request (default 100000)\n"
	"      --max-reply SIZE    largest reply (default 64M): a request whose\n"
	"                          answers pass it gets 413\n"
	"      --reply-memory SIZE replies made and waiting for their clients hold\n"
	"                          this much at most (default 1G): past it, new\n"
	"                          queries get 503\n"
	"      --timeout SECONDS   longest a request may take: to arrive whole from\n"
	"                          its first byte, to be answered (checked inside\n"
	"                          long queries too), and for its reply to be taken;\n"
	"                          also how long a connection may stay idle\n"
	"                          (default 30)\n"
	"      --max-connections N\n"
	"                          open connections at most (default 1000)\n"
	"  -q, --quiet             no line per request on standard error\n"
	"  -h, --help              show this help\n"
	"\n"
	"Every PATH is opened before it listens; the first line on standard error\n"
	"then says where it listens.\n"
	"\n"
	"Exit status: 0 after SIGTERM or SIGINT, or 2 for a usage error or a\n"
	"PATH that cannot be opened at start.\n";

static struct server sv;
static int quiet;
static atomic_int inflight;
static pthread_key_t thread_key; /* its destructor frees a worker thread's scratch */

/*
 * Each connection's memory pool in libmicrohttpd, which holds a request's
 * headers and URL and a GET argument's record (about 56 bytes) each.
 * libmicrohttpd clears the whole pool between the requests of a
 * connection, so its size is paid on every request: 128 KiB answers
 * single-key GETs more than twice as fast as 1 MiB (tests/bench/RESULTS.md,
 * "Server"), and holds a GET of some 900 keys; more go in a POST.
 */
#define POOL_SIZE ((size_t)128 << 10)

/* One request's state across the handler's calls. */
struct conn_req {
	double t0;
	char method[8];
	char *url;
	char *body;
	size_t len, cap;
	int begun, too_large, answered, status;
	int url_nul, too_many_args, length_twice;
	enum endpoint endpoint;
	size_t sent;
};

static double mono(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/*
 * ---- Connections and their deadlines ----
 *
 * libmicrohttpd's timeout is an idle time: a client that sends a byte
 * now and then holds its connection for ever. So each connection is
 * tracked from its first byte: while a request arrives, and while its
 * reply is taken, it may last --timeout, after which the main thread
 * shuts its socket down (libmicrohttpd then closes it as a client that
 * went away). The time the request is answered is bounded by the query
 * deadline instead. An entry is removed, under the lock, before
 * libmicrohttpd closes the socket (MHD_CONNECTION_NOTIFY_CLOSED), so a
 * socket shut down is always the tracked connection's own.
 */
enum phase { ARRIVING, ANSWERING, SENDING };
struct track {
	MHD_socket fd;
	atomic_int phase;
	_Atomic double since; /* when the phase began (mono) */
	int cut;
	struct track *prev, *next;
};
static pthread_mutex_t track_mu = PTHREAD_MUTEX_INITIALIZER;
static struct track *tracked;

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
	(void)cls;
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci =
		    MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		struct track *t = ci ? calloc(1, sizeof *t) : NULL;
		if (t == NULL)
			return; /* untracked: only the idle timeout applies */
		t->fd = ci->connect_fd;
		atomic_init(&t->phase, ARRIVING);
		atomic_init(&t->since, mono());
		pthread_mutex_lock(&track_mu);
		t->next = tracked;
		if (tracked)
			tracked->prev = t;
		tracked = t;
		pthread_mutex_unlock(&track_mu);
		*socket_context = t;
	} else if (toe == MHD_CONNECTION_NOTIFY_CLOSED && *socket_context) {
		struct track *t = *socket_context;
		pthread_mutex_lock(&track_mu);
		if (t->prev)
			t->prev->next = t->next;
		else
			tracked = t->next;
		if (t->next)
			t->next->prev = t->prev;
		pthread_mutex_unlock(&track_mu);
		free(t);
		*socket_context = NULL;
	}
}

static void set_phase(struct MHD_Connection *c, enum phase ph)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct track *t = ci ? ci->socket_context : NULL;
	if (t) {
		atomic_store(&t->since, mono());
		atomic_store(&t->phase, ph);
	}
}

/* The main thread, now and then: cut the connections past their deadline. */
static void cut_late(void)
{
	double now = mono();
	pthread_mutex_lock(&track_mu);
	for (struct track *t = tracked; t; t = t->next)
		if (!t->cut && atomic_load(&t->phase) != ANSWERING &&
		    now - atomic_load(&t->since) > sv.timeout) {
			(void)shutdown(t->fd, SHUT_RDWR);
			t->cut = 1;
			atomic_fetch_add(&sv.m.cut, 1);
		}
	pthread_mutex_unlock(&track_mu);
}

/*
 * The request line is in, before libmicrohttpd splits its arguments: the
 * request's state begins here (it is the handler's con_cls). A NUL byte in
 * the line, which would cut the URL short unseen, is noted; so are more
 * arguments than the connection's pool can hold, for which libmicrohttpd
 * could not even answer: their separators are made plain bytes, so that it
 * keeps one argument, and the handler answers 414.
 */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
	(void)cls;
	(void)c;
	struct conn_req *r = calloc(1, sizeof *r);
	if (r == NULL || uri == NULL)
		return r;
	r->t0 = mono();
	size_t len = strlen(uri);
	/* the URI ends at a NUL that libmicrohttpd put before " HTTP/x.y" */
	r->url_nul = strncmp(uri + len + 1, "HTTP/", 5) != 0;
	const char *q = memchr(uri, '?', len);
	size_t args = 0;
	for (const char *a = q; a; a = memchr(a + 1, '&', len - (size_t)(a + 1 - uri)))
		args++;
	/* each argument's record, the URL itself, and room for the headers and the reply */
	if (q && (args > (POOL_SIZE / 2 - len) / 64 || len > POOL_SIZE / 2)) {
		r->too_many_args = 1;
		for (char *a = (char *)q; (a = memchr(a, '&', len - (size_t)(a - uri))) != NULL;)
			*a = '_';
	}
	return r;
}

struct args {
	const char **names, **values;
	size_t *lens;
	size_t n, cap;
	int err;
};

static enum MHD_Result on_arg(void *cls, enum MHD_ValueKind kind, const char *key, size_t key_size,
                              const char *value, size_t value_size)
{
	(void)kind;
	(void)key_size;
	struct args *a = cls;
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 16;
		const char **n = realloc(a->names, cap * sizeof *n);
		if (n)
			a->names = n;
		const char **v = n ? realloc(a->values, cap * sizeof *v) : NULL;
		if (v)
			a->values = v;
		size_t *l = v ? realloc(a->lens, cap * sizeof *l) : NULL;
		if (l)
			a->lens = l;
		if (l == NULL) {
			a->err = 1;
			return MHD_NO;
		}
		a->cap = cap;
	}
	a->names[a->n] = key;
	a->values[a->n] = value ? value : "";
	a->lens[a->n++] = value ? value_size : 0;
	return MHD_YES;
}

/* Content-Length headers: their count, and whether two differ. */
struct lengths {
	const char *first;
	int n, differ;
};

static enum MHD_Result on_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                 const char *value)
{
	(void)kind;
	struct lengths *l = cls;
	if (key && value && !strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH)) {
		if (l->n++ && strcmp(l->first, value))
			l->differ = 1;
		else
			l->first = value;
	}
	return MHD_YES;
}

static enum MHD_Result respond(struct MHD_Connection *c, struct conn_req *r, struct reply *rp,
                               int close)
{
	struct MHD_Response *resp =
	    MHD_create_response_from_buffer(rp->len, rp->body, MHD_RESPMEM_MUST_FREE);
	if (resp == NULL) {
		free(rp->body);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, rp->type);
	if (close) /* the request's framing is in doubt: nothing more is read from it */
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
	r->answered = 1;
	r->status = rp->status;
	r->endpoint = rp->endpoint;
	r->sent = rp->len;
	atomic_fetch_add_explicit(&sv.m.queries, rp->queries, memory_order_relaxed);
	atomic_fetch_add_explicit(&sv.m.keys, rp->keys, memory_order_relaxed);
	/* held until the request ends, taken or not (completed) */
	atomic_fetch_add(&sv.m.held, (long long)rp->len);
	set_phase(c, SENDING);
	enum MHD_Result ok = MHD_queue_response(c, (unsigned)rp->status, resp);
	MHD_destroy_response(resp);
	return ok;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url,
                               const char *method, const char *version, const char *upload,
                               size_t *upload_size, void **con_cls)
{
	(void)cls;
	(void)version;
	struct conn_req *r = *con_cls;
	if (r == NULL)
		return MHD_NO; /* on_uri could not allocate */
	if (!r->begun) { /* the headers are in: the request begins */
		if (pthread_getspecific(thread_key) == NULL)
			pthread_setspecific(thread_key, &sv);
		if ((r->url = strdup(url)) == NULL)
			return MHD_NO;
		r->begun = 1;
		snprintf(r->method, sizeof r->method, "%s", method);
		atomic_fetch_add(&inflight, 1);
		struct lengths l = {NULL, 0, 0};
		MHD_get_connection_values(c, MHD_HEADER_KIND, on_header, &l);
		r->length_twice = l.differ;
		if (l.differ || r->url_nul) { /* answered before any body is read */
			struct request rq = {.method = method, .url = url, .url_nul = r->url_nul,
			                     .length_twice = l.differ};
			struct reply rp;
			serve_answer(&sv, &rq, &rp);
			return respond(c, r, &rp, 1);
		}
		if (l.first && strtoull(l.first, NULL, 10) > sv.max_body) { /* refused before it is read */
			struct request rq = {.method = method, .url = url, .body_too_large = 1};
			struct reply rp;
			serve_answer(&sv, &rq, &rp);
			return respond(c, r, &rp, 0);
		}
		return MHD_YES;
	}
	if (*upload_size) { /* a part of the body */
		size_t n = *upload_size;
		*upload_size = 0;
		if (r->too_large)
			return MHD_YES;
		if (n > sv.max_body - r->len) {
			r->too_large = 1; /* the rest is read and dropped; the answer says why */
			free(r->body);
			r->body = NULL;
			r->len = r->cap = 0;
			return MHD_YES;
		}
		if (r->cap - r->len < n) {
			size_t cap = r->cap ? r->cap : 4096;
			while (cap - r->len < n)
				cap *= 2;
			char *b = realloc(r->body, cap);
			if (b == NULL)
				return MHD_NO;
			r->body = b;
			r->cap = cap;
		}
		memcpy(r->body + r->len, upload, n);
		r->len += n;
		return MHD_YES;
	}
	if (r->answered)
		return MHD_YES;
	set_phase(c, ANSWERING);
	struct args a = {0};
	MHD_get_connection_values_n(c, MHD_GET_ARGUMENT_KIND, on_arg, &a);
	struct request rq = {method, url, a.names, a.values, a.lens, a.n, r->body, r->len,
	                     r->too_large, r->url_nul, r->too_many_args, r->length_twice};
	struct reply rp;
	if (a.err)
		rp = (struct reply){500, strdup("{\"error\": \"out of memory\", \"code\": \"internal\"}\n"),
		                    0, "application/json", EP_OTHER, 0, 0};
	else
		serve_answer(&sv, &rq, &rp);
	if (rp.body && rp.len == 0)
		rp.len = strlen(rp.body);
	free(a.names);
	free(a.values);
	free(a.lens);
	return rp.body ? respond(c, r, &rp, 0) : MHD_NO;
}

/* The request is over (answered, or the client went): count it, log it, free it. */
static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
	(void)cls;
	struct conn_req *r = *con_cls;
	if (r == NULL)
		return;
	set_phase(c, ARRIVING); /* the next request on the connection: its deadline from now */
	double t = mono() - r->t0;
	if (r->answered) {
		metrics_count(&sv.m, r->endpoint, r->status, t);
		atomic_fetch_sub(&sv.m.held, (long long)r->sent);
	}
	if (!quiet && r->begun) {
		char ip[INET6_ADDRSTRLEN] = "-";
		const union MHD_ConnectionInfo *ci =
		    MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		if (ci && ci->client_addr) {
			const struct sockaddr *sa = ci->client_addr;
			if (sa->sa_family == AF_INET)
				inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, ip,
				          sizeof ip);
			else if (sa->sa_family == AF_INET6)
				inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr,
				          ip, sizeof ip);
		}
		struct timespec now;
		struct tm tm;
		char when[32];
		clock_gettime(CLOCK_REALTIME, &now);
		gmtime_r(&now.tv_sec, &tm);
		strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
		/* the URL's bytes as text: no control byte reaches the log */
		char ub[600];
		fprintf(stderr, "%s %s %s %s %d %zu %.6f%s\n", when, ip, r->method,
		        shown(r->url, strlen(r->url), ub, sizeof ub), r->answered ? r->status : 0,
		        r->sent, t, toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? "" : " (not completed)");
	}
	/* a large body (and json-c's objects for it) or reply: its memory goes back (main_loop) */
	if (r->cap > (1u << 20) || r->sent > (4u << 20))
		atomic_store(&sv.trim, 1);
	free(r->url);
	free(r->body);
	if (r->begun)
		atomic_fetch_sub(&inflight, 1);
	free(r);
	*con_cls = NULL;
}

static void thread_done(void *p)
{
	(void)p;
	serve_thread_done();
}

/* --listen ADDR:PORT, [V6]:PORT */
static int parse_listen(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
	char host[64];
	const char *colon = strrchr(s, ':');
	if (colon == NULL || (size_t)(colon - s) >= sizeof host)
		return -1;
	memcpy(host, s, (size_t)(colon - s));
	host[colon - s] = 0;
	char *end;
	/* digits only: strtoul would also take "+80" and " 80" */
	if (!colon[1] || strspn(colon + 1, "0123456789") != strlen(colon + 1) || strlen(colon + 1) > 5)
		return -1;
	unsigned long port = strtoul(colon + 1, &end, 10);
	if (*end || port > 65535)
		return -1;
	memset(ss, 0, sizeof *ss);
	struct sockaddr_in *v4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)ss;
	size_t hl = strlen(host);
	if (hl > 2 && host[0] == '[' && host[hl - 1] == ']') {
		host[hl - 1] = 0;
		if (inet_pton(AF_INET6, host + 1, &v6->sin6_addr) != 1)
			return -1;
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons((uint16_t)port);
		*len = sizeof *v6;
		return 0;
	}
	if (inet_pton(AF_INET, host, &v4->sin_addr) != 1)
		return -1;
	v4->sin_family = AF_INET;
	v4->sin_port = htons((uint16_t)port);
	*len = sizeof *v4;
	return 0;
}

static int name_ok(const char *s, size_t n)
{
	if (n == 0 || n > 100)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '.' || s[i] == '_' || s[i] == '-'))
			return 0;
	return strcmp(s, ".") && strcmp(s, "..");
}

/* ---- The main thread: opens, inotify, signals ---- */

struct watch {
	int wd;
	size_t slot;
	int dir_of; /* 1: the path's parent (events name the path); 0: the path itself */
};

struct watches {
	int fd;
	struct watch *w;
	size_t n, cap;
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
static void watch_slot(struct watches *ws, size_t i)
{
	char *copy = strdup(sv.slots[i].path);
	if (copy == NULL)
		return;
	watch_add(ws, dirname(copy), i, 1);
	free(copy);
	watch_add(ws, sv.slots[i].path, i, 0);
}

static int reload(size_t i, int first)
{
	struct slot *sl = &sv.slots[i];
	char why[300];
	double t = mono();
	int rc = slot_reload(&sv, sl, why, sizeof why);
	if (rc < 0) {
		fprintf(stderr, "bfi serve: %s: %s: %s\n", sl->name, sl->path, first ? bfi_strerror(rc) : why);
		return rc;
	}
	if (rc > 0) {
		struct gen *g = gen_acquire(sl);
		fprintf(stderr, "bfi serve: %s: %s: generation %llu open in %.3f s\n", sl->name,
		        sl->path, (unsigned long long)(g ? g->generation : 0), mono() - t);
		gen_release(&sv, g);
	}
	return 0;
}

/* Does event ev (on watch w) concern its slot's path? */
static int concerns(const struct watch *w, const struct inotify_event *ev)
{
	if (!w->dir_of)
		return 1;
	if (ev->len == 0)
		return 0;
	char *copy = strdup(sv.slots[w->slot].path);
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
static void main_loop(int sfd, struct watches *ws)
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
					for (size_t i = 0; i < sv.n_slots; i++)
						atomic_store(&sv.slots[i].dirty, 1);
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
					if (ws->w[i].wd == ev->wd && concerns(&ws->w[i], ev)) {
						struct slot *sl = &sv.slots[ws->w[i].slot];
						/* a file written in place: its generation stops answering now */
						struct gen *g = gen_acquire(sl);
						if (g)
							(void)gen_changed(sl, g);
						gen_release(&sv, g);
						atomic_store(&sl->dirty, 1);
						due = mono() + 0.1; /* a publish is several events: wait for the last */
					}
				off += (ssize_t)(sizeof *ev + ev->len);
			}
		}
		if (mono() >= tick) {
			tick = mono() + TICK;
			cut_late();
			/*
			 * After a request that needed much memory, what is free in
			 * glibc's heaps goes back to the system: here, once its reply
			 * is gone, and a few times a second at most.
			 */
			if (atomic_exchange(&sv.trim, 0))
				malloc_trim(0);
			for (size_t i = 0; i < sv.n_slots; i++) {
				struct gen *g = gen_acquire(&sv.slots[i]);
				if (g && gen_changed(&sv.slots[i], g) && !due)
					due = mono();
				gen_release(&sv, g);
				if (atomic_load(&sv.slots[i].dirty) && !due)
					due = mono() + 0.1; /* a request found it changed */
			}
		}
		if (due && mono() >= due) {
			due = 0;
			for (size_t i = 0; i < sv.n_slots; i++)
				if (atomic_exchange(&sv.slots[i].dirty, 0)) {
					reload(i, 0);
					watch_slot(ws, i); /* the path may be a new directory now */
				}
		}
	}
}

int cmd_serve(int argc, char **argv)
{
	static const struct option opts[] = {{"listen", required_argument, 0, 'l'},
	                                     {"threads", required_argument, 0, 't'},
	                                     {"warm", no_argument, 0, 'w'},
	                                     {"max-body", required_argument, 0, 'b'},
	                                     {"max-keys", required_argument, 0, 'k'},
	                                     {"timeout", required_argument, 0, 'T'},
	                                     {"max-connections", required_argument, 0, 'c'},
	                                     {"max-reply", required_argument, 0, 'R'},
	                                     {"reply-memory", required_argument, 0, 'M'},
	                                     {"quiet", no_argument, 0, 'q'},
	                                     {"help", no_argument, 0, 'h'},
	                                     {0, 0, 0, 0}};
	const char *listen = "127.0.0.1:8080";
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t threads = cores > 0 ? (uint64_t)cores : 1, v, max_conn = 1000;
	sv.max_body = 8u << 20;
	sv.max_keys = 100000;
	sv.max_reply = 64u << 20;
	sv.max_held = 1ll << 30;
	sv.timeout = 30;
	int c;
	char *end;
	optind = 1;
	while ((c = getopt_long(argc, argv, "qh", opts, NULL)) != -1) {
		switch (c) {
		case 'l': listen = optarg; break;
		case 'w': sv.warm = 1; break;
		case 'q': quiet = 1; break;
		case 't':
			if (parse_size(optarg, &threads) || threads < 1 || threads > 256) {
				fprintf(stderr, "bfi serve: --threads must be 1..256\n");
				return EXIT_USAGE;
			}
			break;
		case 'b':
			if (parse_size(optarg, &v) || v < 1 || v > (1u << 30)) {
				fprintf(stderr, "bfi serve: --max-body must be 1 byte .. 1G\n");
				return EXIT_USAGE;
			}
			sv.max_body = (size_t)v;
			break;
		case 'k':
			if (parse_size(optarg, &v) || v < 1 || v > 100000000) {
				fprintf(stderr, "bfi serve: --max-keys must be 1..100000000\n");
				return EXIT_USAGE;
			}
			sv.max_keys = (size_t)v;
			break;
		case 'T':
			sv.timeout = strtod(optarg, &end);
			if (*end || !(sv.timeout >= 0.001 && sv.timeout <= 86400)) {
				fprintf(stderr, "bfi serve: --timeout must be 0.001..86400 seconds\n");
				return EXIT_USAGE;
			}
			break;
		case 'c':
			if (parse_size(optarg, &max_conn) || max_conn < 1 || max_conn > 100000) {
				fprintf(stderr, "bfi serve: --max-connections must be 1..100000\n");
				return EXIT_USAGE;
			}
			break;
		case 'R':
			if (parse_size(optarg, &v) || v < 4096 || v > (4ull << 30)) {
				fprintf(stderr, "bfi serve: --max-reply must be 4K .. 4G\n");
				return EXIT_USAGE;
			}
			sv.max_reply = (size_t)v;
			break;
		case 'M':
			if (parse_size(optarg, &v) || v < 4096 || v > (1ull << 50)) {
				fprintf(stderr, "bfi serve: --reply-memory must be 4K or more\n");
				return EXIT_USAGE;
			}
			sv.max_held = (long long)v;
			break;
		case 'h': fputs(help, stdout); return EXIT_OK;
		default: fputs(help, stderr); return EXIT_USAGE;
		}
	}
	struct sockaddr_storage addr;
	socklen_t addr_len;
	if (parse_listen(listen, &addr, &addr_len) != 0) {
		fprintf(stderr, "bfi serve: --listen %s: give ADDR:PORT, e.g. 127.0.0.1:8080 or "
		                "[::1]:8080\n", listen);
		return EXIT_USAGE;
	}
	if (optind >= argc) {
		fprintf(stderr, "bfi serve: need NAME=PATH\n\n%s", help);
		return EXIT_USAGE;
	}
	sv.n_slots = (size_t)(argc - optind);
	sv.slots = calloc(sv.n_slots, sizeof *sv.slots);
	if (sv.slots == NULL) {
		fprintf(stderr, "bfi serve: out of memory\n");
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < sv.n_slots; i++) {
		char *a = argv[optind + (int)i], *eq = strchr(a, '=');
		if (eq == NULL || !eq[1]) {
			fprintf(stderr, "bfi serve: %s: give NAME=PATH\n", a);
			return EXIT_USAGE;
		}
		*eq = 0;
		if (!name_ok(a, strlen(a))) {
			fprintf(stderr, "bfi serve: %s: a NAME is 1..100 letters, digits, '.', '_' or '-'\n",
			        a);
			return EXIT_USAGE;
		}
		for (size_t j = 0; j < i; j++)
			if (!strcmp(sv.slots[j].name, a)) {
				fprintf(stderr, "bfi serve: %s is given twice\n", a);
				return EXIT_USAGE;
			}
		sv.slots[i].name = a;
		sv.slots[i].path = eq + 1;
		pthread_mutex_init(&sv.slots[i].mu, NULL);
	}
	/* every thread started from here blocks these: the main thread reads them from sfd */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	int sfd = signalfd(-1, &set, SFD_CLOEXEC);
	if (sfd < 0 || pthread_key_create(&thread_key, thread_done) != 0) {
		fprintf(stderr, "bfi serve: %s\n", strerror(errno));
		return EXIT_USAGE;
	}
	serve_guard_install();
	/*
	 * What a large request leaves goes back to the system: blocks of 4 MiB
	 * or more are mapped and unmapped, and a heap keeps at most 4 MiB free
	 * at its top. glibc's default raises both bounds (to 32 and 64 MiB) as
	 * large blocks are freed, and a worker thread's heap then holds what
	 * its largest request took; below 4 MiB, where a large reply of every
	 * day lies, they stay fast heap blocks. What is freed inside the heaps
	 * goes back too (malloc_trim, main_loop).
	 */
	mallopt(M_MMAP_THRESHOLD, 4 << 20);
	mallopt(M_TRIM_THRESHOLD, 4 << 20);
	/* every PATH opened first: a server that cannot serve one never listens */
	struct watches ws = {inotify_init1(IN_NONBLOCK | IN_CLOEXEC), NULL, 0, 0};
	int status = EXIT_OK;
	for (size_t i = 0; i < sv.n_slots && status == EXIT_OK; i++) {
		if (ws.fd >= 0)
			watch_slot(&ws, i);
		if (reload(i, 1) != 0)
			status = EXIT_USAGE;
	}
	struct MHD_Daemon *d = NULL;
	if (status == EXIT_OK)
		d = MHD_start_daemon(
		    MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC |
		        (addr.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0),
		    0, NULL, NULL, handler, NULL, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
		    MHD_OPTION_THREAD_POOL_SIZE, (unsigned)threads, MHD_OPTION_CONNECTION_LIMIT,
		    (unsigned)max_conn, MHD_OPTION_CONNECTION_TIMEOUT,
		    (unsigned)(sv.timeout < 1 ? 1 : sv.timeout), MHD_OPTION_NOTIFY_COMPLETED, completed,
		    NULL, MHD_OPTION_NOTIFY_CONNECTION, on_connection, NULL, MHD_OPTION_URI_LOG_CALLBACK,
		    on_uri, NULL, MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024u,
		    /*
		     * libmicrohttpd that runs out of the pool cannot even answer
		     * 431, so on_uri keeps the arguments to what half of it holds.
		     */
		    MHD_OPTION_CONNECTION_MEMORY_LIMIT, POOL_SIZE, MHD_OPTION_END);
	if (status == EXIT_OK && d == NULL) {
		fprintf(stderr, "bfi serve: cannot listen on %s (in use, or not this host's?)\n", listen);
		status = EXIT_USAGE;
	}
	if (status == EXIT_OK) {
		const union MHD_DaemonInfo *di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
		char host[INET6_ADDRSTRLEN];
		if (addr.ss_family == AF_INET6)
			inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&addr)->sin6_addr, host, sizeof host);
		else
			inet_ntop(AF_INET, &((struct sockaddr_in *)&addr)->sin_addr, host, sizeof host);
		fprintf(stderr, addr.ss_family == AF_INET6 ? "bfi serve: listening on http://[%s]:%u/\n"
		                                           : "bfi serve: listening on http://%s:%u/\n",
		        host, di ? (unsigned)di->port : 0u);
		atomic_store(&sv.ready, 1);
		main_loop(sfd, &ws);
		if (!quiet)
			fprintf(stderr, "bfi serve: stopping: no new connections; finishing the requests "
			                "in flight\n");
		/*
		 * Stop accepting; let the requests in flight end (for --timeout
		 * and a second at most), and those whose bytes were on their way
		 * when the signal came (a fifth of a second), then stop. A request
		 * still running then is abandoned: the process ends without
		 * waiting for its thread.
		 */
		MHD_socket ls = MHD_quiesce_daemon(d);
		double now = mono(), until = now + sv.timeout + 1;
		while ((atomic_load(&inflight) > 0 || mono() < now + 0.2) && mono() < until)
			usleep(10000);
		int stuck = atomic_load(&inflight);
		if (stuck > 0) {
			fprintf(stderr, "bfi serve: %d request%s still running past --timeout: abandoned\n",
			        stuck, stuck == 1 ? "" : "s");
			fflush(stderr);
			_exit(status);
		}
		MHD_stop_daemon(d);
		if (ls != MHD_INVALID_SOCKET)
			close(ls);
	}
	slots_close(&sv);
	for (size_t i = 0; i < sv.n_slots; i++)
		pthread_mutex_destroy(&sv.slots[i].mu);
	free(sv.slots);
	free(ws.w);
	if (ws.fd >= 0)
		close(ws.fd);
	close(sfd);
	serve_thread_done();
	pthread_key_delete(thread_key);
	return status;
}
