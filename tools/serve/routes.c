/*
 * routes.c - bfi serve's requests answered, whatever carried them: the
 * routes, GET's arguments, the POST body handed to params.c, and the
 * endpoints other than queries (list, info, health, metrics).
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "api.h"
#include "serve.h"
#include "tools.h"

static struct slot *find_slot(struct server *sv, const char *name, size_t len)
{
	for (size_t i = 0; i < sv->n_slots; i++)
		if (strlen(sv->slots[i].name) == len && !memcmp(sv->slots[i].name, name, len))
			return &sv->slots[i];
	return NULL;
}

static void list_slots(struct server *sv, const struct names_asked *na, const struct request *rq,
                       struct reply *rp)
{
	(void)na;
	(void)rq;
	struct sbuf b = {0};
	sb_str(&b, "{\"snapshots\": [");
	for (size_t i = 0; i < sv->n_slots; i++) {
		if (i)
			sb_str(&b, ", ");
		sb_json(&b, sv->slots[i].name, strlen(sv->slots[i].name));
	}
	sb_str(&b, "]}\n");
	reply_take(rp, 200, &b, "application/json");
}

static void info(struct server *sv, const struct names_asked *na, const struct request *rq,
                 struct reply *rp)
{
	(void)rq;
	struct slot *sl = na->sl[0];
	struct gen *g = gen_acquire(sl);
	if (g == NULL) {
		reply_error(rp, 503, "not_ready", "%s is not open yet", sl->name);
		return;
	}
	if (gen_changed(sl, g)) {
		gen_release(sv, g);
		reply_error(rp, 503, "changed", "%s: its files were changed in place under the server; "
		            "it answers again once a whole snapshot is published there", sl->name);
		return;
	}
	struct sbuf b = {0};
	sb_put(&b, g->inspect, g->inspect_len);
	sb_str(&b, "\n");
	gen_release(sv, g);
	reply_take(rp, 200, &b, "application/json");
}


/*
 * GET /healthz: 200 when every name serves a whole generation from a path
 * that is still there; else 503, naming each that does not (the first 64):
 * "opening", "changed" (its files were changed in place: its requests get
 * 503), or "gone" (its path was removed: it answers from what it opened,
 * which nothing will update).
 */
/* What is wrong with what sl serves, or NULL: see health(). */
static const char *slot_state(struct server *sv, struct slot *sl)
{
	struct gen *g = gen_acquire(sl);
	struct stat st;
	const char *state = g == NULL                   ? "opening"
	                    : gen_changed(sl, g)        ? "changed"
	                    : stat(sl->path, &st) != 0 ? "gone"
	                                                : NULL;
	gen_release(sv, g);
	return state;
}

static void health(struct server *sv, const struct names_asked *na, const struct request *rq,
                   struct reply *rp)
{
	(void)na;
	(void)rq;
	const char *state[64];
	size_t bad = 0, n = sv->n_slots < 64 ? sv->n_slots : 64;
	for (size_t i = 0; i < n; i++)
		bad += (state[i] = slot_state(sv, &sv->slots[i])) != NULL;
	for (size_t i = n; i < sv->n_slots && !bad; i++)
		bad += slot_state(sv, &sv->slots[i]) != NULL;
	struct sbuf b = {0};
	sb_str(&b, !atomic_load(&sv->ready) ? "{\"status\": \"opening\""
	           : bad                   ? "{\"status\": \"degraded\""
	                                   : "{\"status\": \"ok\"");
	size_t listed = 0;
	for (size_t i = 0; bad && i < n; i++) {
		if (state[i] == NULL)
			continue;
		sb_str(&b, listed++ ? ", " : ", \"snapshots\": {");
		sb_json(&b, sv->slots[i].name, strlen(sv->slots[i].name));
		sb_str(&b, ": \"");
		sb_str(&b, state[i]);
		sb_str(&b, "\"");
	}
	sb_str(&b, listed ? "}}\n" : "}\n");
	reply_take(rp, bad || !atomic_load(&sv->ready) ? 503 : 200, &b, "application/json");
}

static const char *endpoint_label(enum endpoint e);

static void metrics(struct server *sv, const struct names_asked *na, const struct request *rq,
                    struct reply *rp)
{
	(void)na;
	(void)rq;
	struct sbuf b = {0};
	size_t len = 0;
	b.p = metrics_page(sv, endpoint_label, &len);
	b.len = b.cap = len;
	b.err = b.p == NULL;
	reply_take(rp, 200, &b, "text/plain; version=0.0.4");
}

/*
 * The endpoints, one row each, in enum endpoint's order: the path as the
 * 404 names it, its metric label, and its handlers for GET (and HEAD) and
 * for POST (NULL: GET alone). route() finds the row from the URL.
 */
typedef void handler_fn(struct server *sv, const struct names_asked *na, const struct request *rq,
                        struct reply *rp);
static const struct route_row {
	const char *path, *metric;
	handler_fn *get, *post;
} routes[N_ENDPOINTS] = {
	[EP_QUERY] = {"/v1/NAME/query", "query", get_query, post_query},
	[EP_INFO] = {"/v1/NAME", "info", info, NULL},
	[EP_LIST] = {"/v1", "list", list_slots, NULL},
	[EP_HEALTH] = {"/healthz", "healthz", health, NULL},
	[EP_METRICS] = {"/metrics", "metrics", metrics, NULL},
	[EP_OTHER] = {NULL, "other", NULL, NULL},
};


/* Which endpoint u names, and the slot of /v1/NAME[/query]: 0, or a 404 made. */
static int route(struct server *sv, const char *u, struct names_asked *na, struct reply *rp)
{
	na->n = 0;
	if (!strcmp(u, "/healthz")) {
		rp->endpoint = EP_HEALTH;
	} else if (!strcmp(u, "/metrics")) {
		rp->endpoint = EP_METRICS;
	} else if (!strcmp(u, "/v1") || !strcmp(u, "/v1/")) {
		rp->endpoint = EP_LIST;
	} else if (strncmp(u, "/v1/", 4) == 0) {
		const char *names = u + 4, *slash = strchr(names, '/');
		const char *end = slash ? slash : names + strlen(names);
		/* NAME, or NAME,NAME... (a query of several) */
		for (const char *name = names; name <= end;) {
			const char *comma = memchr(name, ',', (size_t)(end - name));
			size_t nl = (size_t)((comma ? comma : end) - name);
			struct slot *sl = find_slot(sv, name, nl);
			if (sl == NULL) {
				reply_error(rp, 404, "not_found", "no snapshot is served as %.*s",
				            nl > 200 ? 12 : (int)nl, nl > 200 ? "(a long name)" : name);
				return -1;
			}
			for (size_t i = 0; i < na->n; i++)
				if (na->sl[i] == sl) {
					reply_error(rp, 400, "bad_request", "%s is asked twice", sl->name);
					return -1;
				}
			if (na->n == SERVE_MAX_NAMES) {
				reply_error(rp, 400, "bad_request", "more than %d names in one request",
				            SERVE_MAX_NAMES);
				return -1;
			}
			na->sl[na->n++] = sl;
			name = (comma ? comma : end) + 1;
		}
		if ((slash == NULL || !strcmp(slash, "/")) && na->n == 1) {
			rp->endpoint = EP_INFO;
		} else if (slash && !strcmp(slash, "/query")) {
			rp->endpoint = EP_QUERY;
		} else {
			reply_error(rp, 404, "not_found", na->n > 1 ? "several names are asked together "
			            "only of /v1/NAME,NAME.../query" : "no such endpoint under /v1/%s: /query",
			            na->sl[0]->name);
			return -1;
		}
	} else {
		char served[200];
		size_t at = 0;
		for (int e = 0; e < N_ENDPOINTS; e++)
			if (routes[e].path && at < sizeof served)
				at += (size_t)snprintf(served + at, sizeof served - at, "%s%s", at ? ", " : "",
				                       routes[e].path);
		reply_error(rp, 404, "not_found", "no such endpoint: %s are served", served);
		return -1;
	}
	return 0;
}

/* An endpoint's label in the metrics, from its row. */
static const char *endpoint_label(enum endpoint e)
{
	return routes[e].metric;
}

void serve_answer(struct server *sv, const struct request *rq, struct reply *rp)
{
	*rp = (struct reply){.endpoint = EP_OTHER};
	/* what the HTTP layer found wrong with the request itself */
	if (rq->url_nul) {
		reply_error(rp, 400, "bad_request", "the request line holds a NUL byte");
		return;
	}
	if (rq->length_twice) {
		reply_error(rp, 400, "bad_request", "two Content-Length headers that differ");
		return;
	}
	struct names_asked na;
	if (route(sv, rq->url, &na, rp) != 0)
		return;
	if (rq->too_many_args) {
		reply_error(rp, 414, "uri_too_long", "more arguments in the URL than the server keeps; "
		            "POST many keys as {\"keys\": [...]}");
		return;
	}
	if (!strcmp(rq->method, "OPTIONS") && sv->cors) { /* a browser asks before it POSTs */
		rp->status = 204;
		rp->body = strdup("");
		rp->type = "text/plain";
		rp->preflight = 1;
		if (rp->body == NULL)
			reply_error(rp, 500, "internal", "out of memory");
		return;
	}
	const struct route_row *row = &routes[rp->endpoint];
	int get = !strcmp(rq->method, "GET") || !strcmp(rq->method, "HEAD");
	handler_fn *h = get ? row->get : !strcmp(rq->method, "POST") ? row->post : NULL;
	if (h == NULL) {
		reply_error(rp, 405, "method_not_allowed", "%s takes GET%s", rq->url,
		            row->post ? " and POST" : "");
		return;
	}
	h(sv, &na, rq, rp);
}
