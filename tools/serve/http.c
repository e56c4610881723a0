/*
 * http.c - bfi serve's HTTP: serve_answer() (routes.c) behind
 * libmicrohttpd's thread pool (epoll); connections tracked against their
 * deadlines, GET arguments and headers gathered, replies queued, and each
 * request counted and logged once it is over.
 */
#include <arpa/inet.h>
#include <errno.h>
#include "mhd_dl.h"
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "serve.h"
#include "tools.h"

static struct server *served; /* what http_start serves */
static int quiet;             /* no request log */
static atomic_int inflight;   /* requests begun and not over */
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

/* The main thread, now and then: cut the connections past their deadline (serve.h). */
void http_cut_late(void)
{
	double now = mono();
	pthread_mutex_lock(&track_mu);
	for (struct track *t = tracked; t; t = t->next)
		if (!t->cut && atomic_load(&t->phase) != ANSWERING &&
		    now - atomic_load(&t->since) > served->timeout) {
			(void)shutdown(t->fd, SHUT_RDWR);
			t->cut = 1;
			atomic_fetch_add(&served->m.cut, 1);
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
	if (served->cors) { /* --cors: pages from that origin may read the answers */
		MHD_add_response_header(resp, "Access-Control-Allow-Origin", served->cors);
		MHD_add_response_header(resp, "Vary", "Origin");
		if (rp->preflight) {
			MHD_add_response_header(resp, "Access-Control-Allow-Methods", "GET, POST, OPTIONS");
			MHD_add_response_header(resp, "Access-Control-Allow-Headers", "Content-Type");
			MHD_add_response_header(resp, "Access-Control-Max-Age", "600");
		}
	}
	if (close) /* the request's framing is in doubt: nothing more is read from it */
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
	r->answered = 1;
	r->status = rp->status;
	r->endpoint = rp->endpoint;
	r->sent = rp->len;
	atomic_fetch_add_explicit(&served->m.queries, rp->queries, memory_order_relaxed);
	atomic_fetch_add_explicit(&served->m.keys, rp->keys, memory_order_relaxed);
	/* held until the request ends, taken or not (completed) */
	atomic_fetch_add(&served->m.held, (long long)rp->len);
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
			pthread_setspecific(thread_key, served);
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
			serve_answer(served, &rq, &rp);
			return respond(c, r, &rp, 1);
		}
		if (l.first && strtoull(l.first, NULL, 10) > served->max_body) { /* refused before it is read */
			struct request rq = {.method = method, .url = url, .body_too_large = 1};
			struct reply rp;
			serve_answer(served, &rq, &rp);
			return respond(c, r, &rp, 0);
		}
		return MHD_YES;
	}
	if (*upload_size) { /* a part of the body */
		size_t n = *upload_size;
		*upload_size = 0;
		if (r->too_large)
			return MHD_YES;
		if (n > served->max_body - r->len) {
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
		                    0, "application/json", EP_OTHER, 0, 0, 0};
	else
		serve_answer(served, &rq, &rp);
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
		metrics_count(&served->m, r->endpoint, r->status, t);
		atomic_fetch_sub(&served->m.held, (long long)r->sent);
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
		atomic_store(&served->trim, 1);
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


struct MHD_Daemon *http_start(struct server *sv, const struct sockaddr_storage *addr,
                              unsigned threads, unsigned max_conn, int no_log)
{
	served = sv;
	quiet = no_log;
	if (pthread_key_create(&thread_key, thread_done) != 0)
		return NULL;
	return MHD_start_daemon(
	    MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC |
	        (addr->ss_family == AF_INET6 ? MHD_USE_IPv6 : 0),
	    0, NULL, NULL, handler, NULL, MHD_OPTION_SOCK_ADDR, (const struct sockaddr *)addr,
	    MHD_OPTION_THREAD_POOL_SIZE, threads, MHD_OPTION_CONNECTION_LIMIT, max_conn,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)(sv->timeout < 1 ? 1 : sv->timeout),
	    MHD_OPTION_NOTIFY_COMPLETED, completed, NULL, MHD_OPTION_NOTIFY_CONNECTION, on_connection,
	    NULL, MHD_OPTION_URI_LOG_CALLBACK, on_uri, NULL, MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024u,
	    /*
	     * libmicrohttpd that runs out of the pool cannot even answer
	     * 431, so on_uri keeps the arguments to what half of it holds.
	     */
	    MHD_OPTION_CONNECTION_MEMORY_LIMIT, POOL_SIZE, MHD_OPTION_END);
}

unsigned http_port(struct MHD_Daemon *d)
{
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	return di ? (unsigned)di->port : 0u;
}

int http_stop(struct MHD_Daemon *d)
{
	/*
	 * Stop accepting; let the requests in flight end (for --timeout and a
	 * second at most), and those whose bytes were on their way when the
	 * signal came (a fifth of a second), then stop.
	 */
	MHD_socket ls = MHD_quiesce_daemon(d);
	double now = mono(), until = now + served->timeout + 1;
	while ((atomic_load(&inflight) > 0 || mono() < now + 0.2) && mono() < until)
		usleep(10000);
	int stuck = atomic_load(&inflight);
	if (stuck > 0)
		return stuck; /* abandoned: the caller ends the process without waiting */
	MHD_stop_daemon(d);
	if (ls != MHD_INVALID_SOCKET)
		close(ls);
	pthread_key_delete(thread_key);
	return 0;
}
