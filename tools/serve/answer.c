/*
 * answer.c - a request's queries answered, by bfi query's own code
 * (query_form, query_run_one, the batcher) into a per-thread buffer, so
 * that each result is, field for field, the object bfi query --json prints
 * for the same query on the same snapshot; under the SIGBUS guard, and
 * never sent if the files changed meanwhile.
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
	if (p->format >= 3) { /* a table: its header and rows, as bfi query --format prints them */
		struct sbuf b = {0};
		if (answers.err == 0)
			b.p = out_take(&b.len);
		else
			b.err = 1;
		reply_take(rp, 200, &b, "text/tab-separated-values; charset=utf-8");
		rp->queries = p->n;
		return;
	}
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
	struct ask o;
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
	batcher_free(&j->bt);
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
		                      p->items[i].label_len, 0};
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
		batcher_free(&j->bt);
		j->bt_live = 0;
	}
	bfi_expr_free(&j->q.e);
	bfi_result_destroy(&res); /* its scratch may be half made: a new one next time */
	out_drop();
	free(j->o.cols);
	j->o.cols = NULL;
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
	j->o.asked = p->form;
	struct bfi_form own; /* "sequences" of a snapshot of proteins are proteins */
	if (p->form == BFI_FORM_KMERS && bfi_query_form(g->snap, BFI_FORM_AUTO, 0, 0, &own) == 0 &&
	    own.form == BFI_FORM_PROTEIN)
		j->o.asked = BFI_FORM_PROTEIN;
	if (p->form == BFI_FORM_KMERS && (j->o.kmer = g->kmer) == 0) {
		reply_error(rp, 400, "no_kmers", "%s records no k-mer length: it was not built "
		            "from sequences", name);
		return -1;
	}
	if (query_form(g->snap, &j->o, 0, name, j->why, sizeof j->why) != 0) {
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
	if (j->o.table) {
		int trc = table_head(g->snap, &j->o);
		if (trc) {
			out_drop();
			reply_error(rp, 500, "internal", "%s", bfi_strerror(trc));
			return -1;
		}
	} else {
		reply_head(j->sl, g);
	}
	/* many keys or expressions: in batches, as bfi query --batch (bfi_query_keys, _batch) */
	if ((j->o.form.form == BFI_FORM_KEY || j->o.form.form == BFI_FORM_EXPR) &&
	    p->n >= SERVE_BATCH_MIN)
		batch_queries(j);
	else
		each_query(j);
	return 0;
}

/* Answer p's queries on slot sl: {"snapshot", "generation", "results": [...]}. */
void run_queries(struct server *sv, struct slot *sl, const struct params *p,
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
	j->o = (struct ask){.json = p->format < 3,
	                     .table = p->format == 3 ? TABLE_TSV : p->format == 4 ? TABLE_MATRIX : 0,
	                     .batch_size = 1000,
	                     .snap = g->snap,
	                     .names = g->names.at ? &g->names : NULL,
	                     .layout = p->layout,
	                     .limit = p->limit,
	                     .ordinals = p->format == 1,
	                     .count = p->format == 2,
	                     .theta = p->theta,
	                     .errors = p->errors,
	                     .errors_given = p->errors_given,
	                     .findere = p->findere,
	                     .findere_given = p->findere_given,
	                     .whole = p->whole,
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
	free(j->o.cols);
	j->o.cols = NULL;
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

void run_asked(struct server *sv, const struct names_asked *na, const struct params *p,
               struct reply *rp)
{
	if (na->n == 1) {
		run_queries(sv, na->sl[0], p, rp);
		return;
	}
	if (p->format >= 3) {
		reply_error(rp, 400, "bad_field", "a table (tsv, matrix) answers one name at a time");
		return;
	}
	struct sbuf b = {0};
	sb_str(&b, "{\"snapshots\": [");
	uint64_t queries = 0, keys = 0;
	for (size_t i = 0; i < na->n; i++) {
		struct reply one = {.endpoint = EP_QUERY};
		run_queries(sv, na->sl[i], p, &one);
		if (one.status != 200) { /* the first that fails is the answer, named */
			free(b.p);
			*rp = one;
			return;
		}
		if (i)
			sb_str(&b, ", ");
		sb_put(&b, one.body, one.len && one.body[one.len - 1] == '\n' ? one.len - 1 : one.len);
		free(one.body);
		queries += one.queries;
		keys += one.keys;
		if (b.len > sv->max_reply) {
			free(b.p);
			reply_error(rp, 413, "reply_too_large", "the answers pass --max-reply (%zu bytes); "
			            "ask for \"format\": \"count\", a \"limit\", or fewer names",
			            sv->max_reply);
			return;
		}
	}
	sb_str(&b, "]}\n");
	reply_take(rp, 200, &b, "application/json");
	rp->queries = queries;
	rp->keys = keys;
}
