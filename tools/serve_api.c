/*
 * serve_api.c - bfi serve's requests answered, whatever carried them:
 * the routes, the JSON bodies (json-c, strict, UTF-8 checked), and the
 * queries, run by bfi query's own code (query_form, query_run_one) into a
 * per-thread buffer, so that each result is, field for field, the object
 * bfi query --json prints for the same query on the same snapshot.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "serve.h"
#include "tools.h"

/* A reply being built: on a failed allocation it is dropped for a 500. */
struct sbuf {
	char *p;
	size_t len, cap;
	int err;
};

static void sb_put(struct sbuf *b, const void *s, size_t n)
{
	if (b->err)
		return;
	if (b->cap - b->len < n) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap - b->len < n) {
			if (cap > SIZE_MAX / 2) {
				b->err = 1;
				return;
			}
			cap *= 2;
		}
		char *p = realloc(b->p, cap);
		if (p == NULL) {
			b->err = 1;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

static void sb_str(struct sbuf *b, const char *s)
{
	sb_put(b, s, strlen(s));
}

static void sb_json(struct sbuf *b, const char *s, size_t len)
{
	char piece[8];
	sb_put(b, "\"", 1);
	for (size_t i = 0; i < len;) {
		size_t n = json_piece(s, len, &i, piece);
		sb_put(b, piece, n);
	}
	sb_put(b, "\"", 1);
}

static void reply_take(struct reply *rp, int status, struct sbuf *b, const char *type)
{
	if (b->err) {
		free(b->p);
		b->p = strdup("{\"error\": \"out of memory\", \"code\": \"internal\"}");
		b->len = b->p ? strlen(b->p) : 0;
		status = 500;
		type = "application/json";
	}
	rp->status = status;
	rp->body = b->p;
	rp->len = b->len;
	rp->type = type;
}

/* {"error": WHY, "code": CODE} */
__attribute__((format(printf, 4, 5))) static void reply_error(struct reply *rp, int status,
                                                              const char *code, const char *fmt,
                                                              ...)
{
	char why[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	out_drop(); /* answers begun are not sent: their buffer, if large, is freed */
	struct sbuf b = {0};
	sb_str(&b, "{\"error\": ");
	sb_json(&b, why, strlen(why));
	sb_str(&b, ", \"code\": ");
	sb_json(&b, code, strlen(code));
	sb_str(&b, "}\n");
	reply_take(rp, status, &b, "application/json");
}

/* ---- Queries ---- */

/* K_QUERIES: each formed as the snapshot's keys were made (BFI_FORM_AUTO), as bfi query does */
enum kind { K_KEYS, K_TEXT, K_SEQUENCES, K_EXPR, K_PATH, K_QUERIES, N_KINDS };
static const char *const kind_names[N_KINDS] = {"keys", "text", "sequences", "expr", "path",
                                                "queries"};

/* One query of a request: its text and, for a sequence, its id. */
struct item {
	const char *text, *label;
	size_t len, label_len;
};

struct params {
	enum kind kind;
	struct item *items;
	size_t n;
	double theta;  /* 0: none */
	int format;    /* 0 names, 1 ordinals, 2 count */
	uint64_t limit;
	unsigned layout;
};

static _Thread_local bfi_result *res; /* each thread's scratch */

void serve_thread_done(void)
{
	bfi_result_destroy(&res);
	out_free();
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/*
 * The head of a reply, {"snapshot": NAME, "generation": G, "results": [, put
 * into the answers before them: the reply is then made where they are.
 */
static _Thread_local size_t head_len; /* of the reply's head, in the answers */

static void reply_head(const struct slot *sl, const struct gen *g)
{
	out_str("{\"snapshot\": ");
	out_json(sl->name, strlen(sl->name));
	out_str(", \"generation\": ");
	out_uint(g->generation);
	out_str(", \"results\": [");
	head_len = answers.len;
}

/*
 * The answers made after reply_head, lines of JSON objects, as the results
 * array, in place: each line's newline becomes a comma, the last the array's
 * end; the buffer goes to the reply whole, with no copy.
 */
static void reply_results(const struct params *p, struct reply *rp)
{
	if (answers.err == 0) {
		char *nl = NULL, *at = answers.buf + head_len, *end = answers.buf + answers.len;
		while (at < end && (nl = memchr(at, '\n', (size_t)(end - at))) != NULL) {
			*nl = ',';
			at = nl + 1;
		}
		if (nl != NULL && nl == end - 1)
			answers.len--; /* the last line's comma */
		out_put("]}\n", 3);
	}
	struct sbuf b = {0};
	if (answers.err == 0)
		b.p = out_take(&b.len);
	else
		b.err = 1;
	reply_take(rp, 200, &b, "application/json");
	rp->queries = p->n;
}

#define SERVE_BATCH_MIN 8     /* fewer queries are answered one by one */
#define SCRATCH_KEPT 4096     /* keys of a request past which its scratch is not kept */
#define SERVE_BATCH_SIZE 256 /* queries a batch; --timeout is checked between batches */

/*
 * A request's queries being answered. It lives outside the stack frames a
 * SIGBUS unwinds (serve_guard.c), so that what it holds can be freed when
 * one does: the batcher, the query being compiled, the answers.
 */
struct job {
	struct server *sv;
	struct slot *sl;
	struct gen *g;
	const struct params *p;
	struct opts o;
	double t0;
	struct batcher bt;
	int bt_live;     /* bt holds allocations */
	struct query q;  /* the query answered one by one: its expression, while it has one */
	size_t answered; /* queries answered */
	int rc;          /* 0, SAID (a bad query), or an error code */
	uint64_t keys;   /* keys (terms) looked up */
	char why[600];   /* what is wrong with a bad query */
};
static _Thread_local struct job job;

/* Keys or expressions in batches: the same answers as one by one, in order. */
static void batch_queries(struct job *j)
{
	const struct params *p = j->p;
	j->o.batch_size = p->n < SERVE_BATCH_SIZE ? p->n : SERVE_BATCH_SIZE;
	j->bt_live = 1;
	int rc = batcher_init(&j->bt, &j->o);
	for (size_t i = 0; i < p->n && rc == 0;) {
		size_t end = i + j->o.batch_size < p->n ? i + j->o.batch_size : p->n;
		for (; i < end && rc == 0; i++)
			rc = batcher_add(&j->bt, p->items[i].text, p->items[i].len);
		if (rc == 0)
			rc = run_batch(j->o.snap, &j->o, &j->bt);
		if (rc == 0 && answers.err)
			rc = -answers.err;
		if (rc == 0)
			j->answered = i;
		if (rc == 0 && i < p->n && now() - j->t0 > j->sv->timeout)
			rc = BFI_E_TIMEOUT;
	}
	if (rc == SAID) { /* the bad query is the first unanswered */
		j->answered = 0;
		for (size_t a = head_len; a < answers.len; a++)
			j->answered += answers.buf[a] == '\n';
	}
	batcher_free(&j->bt, &j->o);
	j->bt_live = 0;
	j->rc = rc;
}

/* One query after another; --timeout checked between them, and inside long ones. */
static void each_query(struct job *j)
{
	const struct params *p = j->p;
	int rc = 0;
	for (size_t i = 0; i < p->n && rc == 0; i++) {
		j->q = (struct query){(char *)p->items[i].text, p->items[i].len, NULL, p->items[i].label,
		                      p->items[i].label_len};
		rc = query_run_one(j->g->snap, res, &j->o, &j->q);
		if (rc == 0 && answers.err)
			rc = -answers.err;
		if (rc == 0)
			j->answered = i + 1;
		if (rc == 0 && i + 1 < p->n && now() - j->t0 > j->sv->timeout)
			rc = BFI_E_TIMEOUT;
	}
	j->rc = rc;
}

/* What a SIGBUS cut short held: freed, so that the thread goes on as new. */
static void job_abandon(struct job *j)
{
	if (j->bt_live) {
		for (size_t i = 0; j->bt.qs && i < j->o.batch_size; i++)
			bfi_expr_free(&j->bt.qs[i].e);
		batcher_free(&j->bt, &j->o);
		j->bt_live = 0;
	}
	bfi_expr_free(&j->q.e);
	bfi_result_destroy(&res); /* its scratch may be half made: a new one next time */
	out_drop();
}

/* The reply for a job that ended with rc (not 0). */
static void job_error(struct job *j, struct reply *rp)
{
	const char *name = j->sl->name;
	size_t n = j->p->n;
	out_drop(); /* the answers so far are not sent: a large buffer is freed, not kept */
	if (j->rc == SAID)
		reply_error(rp, 400, "bad_query", "query %zu: %s", j->answered, j->o.why);
	else if (j->rc == -EFBIG)
		reply_error(rp, 413, "reply_too_large", "the answers of %zu queries pass --max-reply "
		            "(%zu bytes) after %zu of them; ask for fewer at a time, or for "
		            "\"format\": \"count\" or a \"limit\"", n, j->sv->max_reply, j->answered);
	else if (j->rc == BFI_E_TIMEOUT)
		reply_error(rp, 504, "timeout", "the request took more than %g s (--timeout); "
		            "%zu of %zu queries answered", j->sv->timeout, j->answered, n);
	else if (j->rc == BFI_E_CHANGED)
		reply_error(rp, 503, "changed", "%s: its files were changed in place under the server; "
		            "it answers again once a whole snapshot is published there", name);
	else
		reply_error(rp, 500, "internal", "%s: %s", name, bfi_strerror(j->rc));
}

/*
 * All of a request's work that reads the snapshot's maps, the catalog's
 * (key rules, names) included: run under the guard. 0 once the queries
 * ran (j->rc says how); -1 if it made a reply of its own (a bad form).
 */
static int job_run(struct job *j, struct reply *rp)
{
	const struct params *p = j->p;
	struct gen *g = j->g;
	const char *name = j->sl->name;
	struct bfi_info in;
	bfi_info(g->snap, &in);
	if (p->layout && !(in.layouts & p->layout)) {
		reply_error(rp, 400, "bad_layout", "%s has no such layout", name);
		return -1;
	}
	switch (p->kind) {
	case K_TEXT: j->o.text = 1; break;
	case K_SEQUENCES:
		j->o.kmer = g->kmer;
		if (j->o.kmer == 0) {
			reply_error(rp, 400, "no_kmers", "%s records no k-mer length: it was not built "
			            "from sequences", name);
			return -1;
		}
		break;
	case K_EXPR: j->o.mode = M_EXPR; break;
	case K_PATH: j->o.mode = M_PATH; break;
	default: break;
	}
	if (query_form(g->snap, &j->o, p->kind == K_KEYS, 0, name, j->why, sizeof j->why) != 0) {
		reply_error(rp, 400, "bad_form", "%s", j->why);
		return -1;
	}
	if (res == NULL && bfi_result_create(&res) != 0) {
		reply_error(rp, 500, "internal", "out of memory");
		return -1;
	}
	bfi_result_deadline(res, (uint64_t)((j->t0 + j->sv->timeout) * 1e9));
	out_hold();
	answers.limit = j->sv->max_reply;
	reply_head(j->sl, g);
	/* many keys or expressions: in batches, as bfi query --batch (bfi_query_keys, _batch) */
	if ((j->o.mode == M_KEY || j->o.mode == M_EXPR) && p->n >= SERVE_BATCH_MIN)
		batch_queries(j);
	else
		each_query(j);
	return 0;
}

/* Answer p's queries on slot sl: {"snapshot", "generation", "results": [...]}. */
static void run_queries(struct server *sv, struct slot *sl, const struct params *p,
                        struct reply *rp)
{
	double t0 = now();
	if (sv->max_held && atomic_load(&sv->m.held) > sv->max_held) {
		reply_error(rp, 503, "busy", "replies waiting for their clients hold more than "
		            "--reply-memory (%lld bytes); try again shortly", sv->max_held);
		return;
	}
	struct gen *g = gen_acquire(sl);
	if (g == NULL) {
		reply_error(rp, 503, "not_ready", "%s is not open yet", sl->name);
		return;
	}
	struct job *j = &job;
	*j = (struct job){.sv = sv, .sl = sl, .g = g, .p = p, .t0 = t0};
	j->o = (struct opts){.json = 1,
	                     .mode = M_KEY,
	                     .batch_size = 1000,
	                     .snap = g->snap,
	                     .names = g->names.at ? &g->names : NULL,
	                     .layout = p->layout,
	                     .limit = p->limit,
	                     .ordinals = p->format == 1,
	                     .count = p->format == 2,
	                     .theta = p->theta,
	                     .why = j->why,
	                     .why_cap = sizeof j->why,
	                     .keys_seen = &j->keys};
	int ran = 0;
	if (atomic_load(&g->dead)) {
		j->rc = BFI_E_CHANGED;
		ran = 1;
	} else {
		/*
		 * Under the guard: a SIGBUS in the snapshot's maps (a file shrank
		 * under them) jumps back here, and the request gets 503.
		 */
		sigjmp_buf env;
		if (sigsetjmp(env, 0) == 0) { /* the mask need not be saved: serve_guard.c */
			serve_guard_enter(&env, g->snap);
			ran = job_run(j, rp) == 0;
			serve_guard_leave();
		} else {
			serve_guard_leave();
			job_abandon(j);
			j->rc = BFI_E_CHANGED;
			ran = 1;
			atomic_fetch_add(&sv->m.faults, 1);
			gen_kill(sl, g);
		}
	}
	if (ran) {
		/* answers made from files changed in place may be wrong: never sent */
		if (j->rc == 0 && gen_changed_since(sl, g, (long long)(now() * 1e9)))
			j->rc = BFI_E_CHANGED;
		if (j->rc)
			job_error(j, rp);
		else
			reply_results(p, rp);
	}
	answers.limit = 0;
	/* a query of many terms grew the thread's scratch: let it go rather than keep it */
	if (j->keys > SCRATCH_KEPT || j->rc == -EFBIG) {
		bfi_result_destroy(&res);
		atomic_store(&sv->trim, 1);
	}
	rp->queries = ran && j->rc == 0 ? p->n : 0;
	rp->keys = j->keys;
	j->g = NULL;
	gen_release(sv, g);
}

/* ---- Requests ---- */

static struct slot *find_slot(struct server *sv, const char *name, size_t len)
{
	for (size_t i = 0; i < sv->n_slots; i++)
		if (strlen(sv->slots[i].name) == len && !memcmp(sv->slots[i].name, name, len))
			return &sv->slots[i];
	return NULL;
}

static int parse_format(const char *v, size_t len, int *format)
{
	if (len == 5 && !memcmp(v, "names", 5))
		*format = 0;
	else if (len == 8 && !memcmp(v, "ordinals", 8))
		*format = 1;
	else if (len == 5 && !memcmp(v, "count", 5))
		*format = 2;
	else
		return -1;
	return 0;
}

static int parse_layout(const char *v, size_t len, unsigned *layout)
{
	*layout = bfi_layout_parse(v, len);
	return *layout ? 0 : -1;
}

/* A decimal count 1 .. 2^32 of len bytes, or -1. */
static int parse_limit(const char *v, size_t len, uint64_t *limit)
{
	uint64_t x = 0;
	if (len == 0 || len > 10)
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (v[i] < '0' || v[i] > '9')
			return -1;
		x = x * 10 + (uint64_t)(v[i] - '0');
	}
	if (x < 1 || x > UINT32_MAX)
		return -1;
	*limit = x;
	return 0;
}

/*
 * GET /v1/NAME/query?key=K[&key=K...][&format=F][&limit=N][&layout=L], or
 * q=Q[&q=Q...] for queries formed as the snapshot's keys were made (and
 * threshold=T)
 */
static void get_query(struct server *sv, struct slot *sl, const struct request *rq,
                      struct reply *rp)
{
	struct params p = {.kind = K_KEYS};
	size_t n = 0, nq = 0;
	for (size_t i = 0; i < rq->n_args; i++) {
		n += !strcmp(rq->arg_names[i], "key");
		nq += !strcmp(rq->arg_names[i], "q");
	}
	if (n && nq) {
		reply_error(rp, 400, "bad_field", "give key=K or q=Q, not both");
		return;
	}
	if (nq) {
		p.kind = K_QUERIES;
		n = nq;
	}
	if (n == 0) {
		reply_error(rp, 400, "no_query", "give at least one key=K or q=Q");
		return;
	}
	if (n > sv->max_keys) {
		reply_error(rp, 413, "too_many_keys", "%zu keys, more than --max-keys %zu", n,
		            sv->max_keys);
		return;
	}
	p.items = calloc(n, sizeof *p.items);
	if (p.items == NULL) {
		reply_error(rp, 500, "internal", "out of memory");
		return;
	}
	for (size_t i = 0; i < rq->n_args; i++) {
		const char *k = rq->arg_names[i], *v = rq->arg_values[i];
		size_t vl = rq->arg_lens[i];
		if (!strcmp(k, "key") || !strcmp(k, "q")) {
			p.items[p.n++] = (struct item){v, NULL, vl, 0};
		} else if (!strcmp(k, "threshold")) {
			char *end = NULL;
			double t = vl && vl < 32 ? strtod(v, &end) : 0;
			if (end != v + vl || !(t > 0 && t <= 1) || p.kind != K_QUERIES) {
				reply_error(rp, 400, "bad_field", "threshold must be a number in (0, 1], "
				            "with q=Q");
				goto out;
			}
			p.theta = t;
		} else if (!strcmp(k, "format")) {
			if (parse_format(v, vl, &p.format)) {
				reply_error(rp, 400, "bad_field", "format must be names, ordinals or count");
				goto out;
			}
		} else if (!strcmp(k, "limit")) {
			if (parse_limit(v, vl, &p.limit)) {
				reply_error(rp, 400, "bad_field", "limit must be a count, 1 or more");
				goto out;
			}
		} else if (!strcmp(k, "layout")) {
			if (parse_layout(v, vl, &p.layout)) {
				char names[200];
				reply_error(rp, 400, "bad_field", "layout must be one of %s",
				            layout_names(0, ", ", names, sizeof names));
				goto out;
			}
		} else {
			reply_error(rp, 400, "unknown_field", "unknown argument %.100s: key, q, "
			            "threshold, format, limit and layout are known", k);
			goto out;
		}
	}
	run_queries(sv, sl, &p, rp);
out:
	free(p.items);
}

/* A string, or (many) an array of strings, into items; else -1 with why. */
static int take_strings(json_object *v, int many, struct item **items, size_t *n, size_t max,
                        char *why, size_t cap)
{
	if (json_object_is_type(v, json_type_string)) {
		if (many != 2) {
			*items = calloc(1, sizeof **items);
			if (*items == NULL)
				return snprintf(why, cap, "out of memory"), -2;
			(*items)[0] = (struct item){json_object_get_string(v), NULL,
			                            (size_t)json_object_get_string_len(v), 0};
			*n = 1;
			return 0;
		}
	}
	if (!json_object_is_type(v, json_type_array))
		return snprintf(why, cap, many == 2 ? "must be an array of strings"
		                                    : "must be a string or an array of strings"), -1;
	size_t len = json_object_array_length(v);
	if (len > max)
		return snprintf(why, cap, "%zu queries, more than --max-keys %zu", len, max), -3;
	*items = calloc(len ? len : 1, sizeof **items);
	if (*items == NULL)
		return snprintf(why, cap, "out of memory"), -2;
	for (size_t i = 0; i < len; i++) {
		json_object *e = json_object_array_get_idx(v, i);
		if (!json_object_is_type(e, json_type_string))
			return snprintf(why, cap, "item %zu is not a string", i), -1;
		(*items)[i] = (struct item){json_object_get_string(e), NULL,
		                            (size_t)json_object_get_string_len(e), 0};
	}
	*n = len;
	return 0;
}

/* "sequences": [{"id": "r1", "seq": "ACGT..."}, ...]; id optional */
static int take_sequences(json_object *v, struct item **items, size_t *n, size_t max, char *why,
                          size_t cap)
{
	if (!json_object_is_type(v, json_type_array))
		return snprintf(why, cap, "must be an array of {\"id\", \"seq\"} objects"), -1;
	size_t len = json_object_array_length(v);
	if (len > max)
		return snprintf(why, cap, "%zu queries, more than --max-keys %zu", len, max), -3;
	*items = calloc(len ? len : 1, sizeof **items);
	if (*items == NULL)
		return snprintf(why, cap, "out of memory"), -2;
	for (size_t i = 0; i < len; i++) {
		json_object *e = json_object_array_get_idx(v, i), *id = NULL, *seq = NULL;
		if (!json_object_is_type(e, json_type_object))
			return snprintf(why, cap, "item %zu is not an object", i), -1;
		json_object_object_foreach(e, key, val)
		{
			if (!strcmp(key, "id") && json_object_is_type(val, json_type_string))
				id = val;
			else if (!strcmp(key, "seq") && json_object_is_type(val, json_type_string))
				seq = val;
			else
				return snprintf(why, cap, "item %zu: \"%.60s\" is not a string \"id\" or \"seq\"",
				                i, key), -1;
		}
		if (seq == NULL)
			return snprintf(why, cap, "item %zu has no \"seq\"", i), -1;
		(*items)[i] = (struct item){json_object_get_string(seq),
		                            id ? json_object_get_string(id) : NULL,
		                            (size_t)json_object_get_string_len(seq),
		                            id ? (size_t)json_object_get_string_len(id) : 0};
	}
	*n = len;
	return 0;
}

/* The body's fields into p: 0, or a reply made. */
static int post_params(struct server *sv, json_object *root, struct params *p, struct reply *rp)
{
	char why[300];
	int kinds = 0;
	if (!json_object_is_type(root, json_type_object)) {
		reply_error(rp, 400, "bad_body", "the body must be a JSON object");
		return -1;
	}
	json_object_object_foreach(root, key, v)
	{
		int k = -1, rc = 0;
		for (int i = 0; i < N_KINDS; i++)
			if (!strcmp(key, kind_names[i]))
				k = i;
		if (k >= 0) {
			if (kinds++) {
				reply_error(rp, 400, "bad_body", "give one of queries, keys, text, sequences, "
				            "expr or path");
				return -1;
			}
			p->kind = (enum kind)k;
			rc = k == K_SEQUENCES ? take_sequences(v, &p->items, &p->n, sv->max_keys, why,
			                                       sizeof why)
			                      : take_strings(v, k == K_KEYS ? 2 : 1, &p->items, &p->n,
			                                     sv->max_keys, why, sizeof why);
			if (rc) {
				reply_error(rp, rc == -3 ? 413 : rc == -2 ? 500 : 400,
				            rc == -3 ? "too_many_keys" : rc == -2 ? "internal" : "bad_field",
				            "\"%s\": %s", key, why);
				return -1;
			}
		} else if (!strcmp(key, "threshold")) {
			double t = json_object_get_double(v);
			if (!(json_object_is_type(v, json_type_double) ||
			      json_object_is_type(v, json_type_int)) ||
			    !(t > 0 && t <= 1)) {
				reply_error(rp, 400, "bad_field", "\"threshold\" must be a number in (0, 1]");
				return -1;
			}
			p->theta = t;
		} else if (!strcmp(key, "format")) {
			if (!json_object_is_type(v, json_type_string) ||
			    parse_format(json_object_get_string(v), (size_t)json_object_get_string_len(v),
			                 &p->format)) {
				reply_error(rp, 400, "bad_field", "\"format\" must be names, ordinals or count");
				return -1;
			}
		} else if (!strcmp(key, "limit")) {
			int64_t l = json_object_get_int64(v);
			if (!json_object_is_type(v, json_type_int) || l < 1 || l > UINT32_MAX) {
				reply_error(rp, 400, "bad_field", "\"limit\" must be a count, 1 or more");
				return -1;
			}
			p->limit = (uint64_t)l;
		} else if (!strcmp(key, "layout")) {
			if (!json_object_is_type(v, json_type_string) ||
			    parse_layout(json_object_get_string(v), (size_t)json_object_get_string_len(v),
			                 &p->layout)) {
				char names[200];
				reply_error(rp, 400, "bad_field", "\"layout\" must be one of %s",
				            layout_names(0, ", ", names, sizeof names));
				return -1;
			}
		} else {
			reply_error(rp, 400, "unknown_field", "unknown field \"%.100s\": queries, keys, "
			            "text, sequences, expr, path, threshold, format, limit and layout are "
			            "known",
			            key);
			return -1;
		}
	}
	if (!kinds) {
		reply_error(rp, 400, "no_query", "give one of queries, keys, text, sequences, expr or "
		            "path");
		return -1;
	}
	if (p->theta > 0 && p->kind != K_TEXT && p->kind != K_SEQUENCES && p->kind != K_QUERIES) {
		reply_error(rp, 400, "bad_field", "\"threshold\" goes with queries, text or sequences");
		return -1;
	}
	return 0;
}

static int hex4(const char *s, unsigned *u)
{
	*u = 0;
	for (int i = 0; i < 4; i++) {
		char c = s[i];
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
		        : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		if (d < 0)
			return 0;
		*u = *u << 4 | (unsigned)d;
	}
	return 1;
}

/*
 * The body read as bfi writes JSON (tools.h, json_piece): a byte that is
 * not UTF-8 is written \udcXX, so a lone \udc80..\udcff in a string is
 * that byte again, put back in place (json-c would make it U+FFFD, and
 * the query another key). Any other lone surrogate, and bytes that are not
 * strict UTF-8 (overlong forms and encoded surrogates included, which
 * json-c lets through), are refused: 0, or -1 with *at their offset. The
 * body shrinks in place (*len).
 */
static int body_bytes(char *b, size_t *len, size_t *at)
{
	size_t n = *len, i = 0, o = 0;
	int in_str = 0;
	while (i < n) {
		unsigned char c = (unsigned char)b[i];
		size_t k = 1;
		if (c >= 0x80 && (k = utf8_len((const unsigned char *)b, n, i)) == 0) {
			*at = i;
			return -1;
		}
		if (c == '"') {
			in_str = !in_str;
		} else if (in_str && c == '\\' && i + 1 < n) {
			unsigned u, lo;
			k = 2;
			if (b[i + 1] == 'u' && n - i >= 6 && hex4(b + i + 2, &u)) {
				k = 6;
				if (u >= 0xd800 && u <= 0xdbff) { /* a pair, or alone */
					if (!(n - i >= 12 && b[i + 6] == '\\' && b[i + 7] == 'u' &&
					      hex4(b + i + 8, &lo) && lo >= 0xdc00 && lo <= 0xdfff)) {
						*at = i;
						return -1;
					}
					k = 12;
				} else if (u >= 0xdc80 && u <= 0xdcff) {
					b[o++] = (char)(u & 0xff); /* the byte bfi wrote as \udcXX */
					i += 6;
					continue;
				} else if (u >= 0xdc00 && u <= 0xdfff) {
					*at = i;
					return -1;
				}
			}
		}
		memmove(b + o, b + i, k);
		o += k;
		i += k;
	}
	*len = o;
	return 0;
}

/* POST /v1/NAME/query with a JSON body */
static void post_query(struct server *sv, struct slot *sl, const struct request *rq,
                       struct reply *rp)
{
	if (rq->body_too_large) {
		reply_error(rp, 413, "body_too_large", "the body is larger than --max-body %zu bytes",
		            sv->max_body);
		return;
	}
	struct json_tokener *tok = json_tokener_new_ex(16);
	if (tok == NULL) {
		reply_error(rp, 500, "internal", "out of memory");
		return;
	}
	/* UTF-8 is checked here, strictly, and the bytes bfi writes as \udcXX read back */
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_ALLOW_TRAILING_CHARS);
	size_t bad_at, body_len = rq->body_len;
	if (body_len && body_bytes(rq->body, &body_len, &bad_at) != 0) {
		reply_error(rp, 400, "bad_utf8", "bytes that are not UTF-8, or a lone UTF-16 surrogate "
		            "escape other than \\udc80..\\udcff (a byte that is not UTF-8), at byte %zu",
		            bad_at);
		json_tokener_free(tok);
		return;
	}
	if (body_len > INT32_MAX) {
		reply_error(rp, 413, "body_too_large", "the body is larger than 2 GiB");
		json_tokener_free(tok);
		return;
	}
	json_object *root = body_len ? json_tokener_parse_ex(tok, rq->body, (int)body_len) : NULL;
	enum json_tokener_error err = json_tokener_get_error(tok);
	size_t end = json_tokener_get_parse_end(tok);
	int trailing = 0;
	for (size_t i = end; root && i < body_len; i++)
		trailing |= !strchr(" \t\r\n", rq->body[i]) || rq->body[i] == 0;
	if (body_len == 0) {
		reply_error(rp, 400, "bad_json", "the body is empty: send a JSON object");
	} else if (root == NULL || err != json_tokener_success) {
		const char *what = err == json_tokener_continue ? "the JSON ends early"
		                                                : json_tokener_error_desc(err);
		reply_error(rp, 400, err == json_tokener_error_parse_utf8_string ? "bad_utf8" : "bad_json",
		            "%s at byte %zu", what, end);
	} else if (trailing) {
		reply_error(rp, 400, "bad_json", "bytes after the JSON object, at byte %zu", end);
	} else {
		struct params p = {0};
		if (post_params(sv, root, &p, rp) == 0)
			run_queries(sv, sl, &p, rp);
		free(p.items);
	}
	json_object_put(root);
	json_tokener_free(tok);
}

static void list_slots(struct server *sv, struct reply *rp)
{
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

static void info(struct server *sv, struct slot *sl, struct reply *rp)
{
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

/* Which endpoint u names, and the slot of /v1/NAME[/query]: 0, or a 404 made. */
static int route(struct server *sv, const char *u, struct slot **sl, struct reply *rp)
{
	*sl = NULL;
	if (!strcmp(u, "/healthz")) {
		rp->endpoint = EP_HEALTH;
	} else if (!strcmp(u, "/metrics")) {
		rp->endpoint = EP_METRICS;
	} else if (!strcmp(u, "/v1") || !strcmp(u, "/v1/")) {
		rp->endpoint = EP_LIST;
	} else if (strncmp(u, "/v1/", 4) == 0) {
		const char *name = u + 4, *slash = strchr(name, '/');
		size_t nl = slash ? (size_t)(slash - name) : strlen(name);
		if ((*sl = find_slot(sv, name, nl)) == NULL) {
			reply_error(rp, 404, "not_found", "no snapshot is served as %.*s",
			            nl > 200 ? 12 : (int)nl, nl > 200 ? "(a long name)" : name);
			return -1;
		}
		if (slash == NULL || !strcmp(slash, "/")) {
			rp->endpoint = EP_INFO;
		} else if (!strcmp(slash, "/query")) {
			rp->endpoint = EP_QUERY;
		} else {
			reply_error(rp, 404, "not_found", "no such endpoint under /v1/%s: /query",
			            (*sl)->name);
			return -1;
		}
	} else {
		reply_error(rp, 404, "not_found", "no such endpoint: /v1, /v1/NAME, /v1/NAME/query, "
		            "/healthz and /metrics are served");
		return -1;
	}
	return 0;
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

static void health(struct server *sv, struct reply *rp)
{
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

static void metrics(struct server *sv, struct reply *rp)
{
	struct sbuf b = {0};
	size_t len = 0;
	b.p = metrics_page(sv, &len);
	b.len = b.cap = len;
	b.err = b.p == NULL;
	reply_take(rp, 200, &b, "text/plain; version=0.0.4");
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
	struct slot *sl;
	if (route(sv, rq->url, &sl, rp) != 0)
		return;
	if (rq->too_many_args) {
		reply_error(rp, 414, "uri_too_long", "more arguments in the URL than the server keeps; "
		            "POST many keys as {\"keys\": [...]}");
		return;
	}
	int get = !strcmp(rq->method, "GET") || !strcmp(rq->method, "HEAD");
	if (rp->endpoint == EP_QUERY && !get && !strcmp(rq->method, "POST")) {
		post_query(sv, sl, rq, rp);
		return;
	}
	if (!get) {
		reply_error(rp, 405, "method_not_allowed", "%s takes GET%s", rq->url,
		            rp->endpoint == EP_QUERY ? " and POST" : "");
		return;
	}
	switch (rp->endpoint) {
	case EP_HEALTH: health(sv, rp); break;
	case EP_METRICS: metrics(sv, rp); break;
	case EP_LIST: list_slots(sv, rp); break;
	case EP_INFO: info(sv, sl, rp); break;
	default: get_query(sv, sl, rq, rp); break;
	}
}
