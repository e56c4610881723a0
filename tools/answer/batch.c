/*
 * batch.c - --batch (and a scan's batches): queries answered together,
 * through the library's batch calls.
 */
#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdlib.h>
#include <time.h>
#include <string.h>

#include "answer.h"
#include "tools.h"

/*
 * --batch: up to batch_size queries read at a time, their texts end to end
 * in one buffer, answered together before the next are read; and what
 * answering them needs, made once.
 */

int batcher_init(struct batcher *b, const struct ask *o)
{
	/* a scan's batch is cut by memory, not count: its arrays grow with it */
	size_t bs = o->scan && o->batch_size > 1024 ? 1024 : o->batch_size;
	memset(b, 0, sizeof *b);
	b->seen = o->cost; /* a scan's: the library's model, raised as answers come */
	if (o->form.theta == BFI_THETA_EVERY) /* every set answers every query */
		b->seen.answer_sets = (double)b->seen.sets;
	b->qs = calloc(bs, sizeof *b->qs);
	b->starts = calloc(bs, sizeof *b->starts);
	b->label_lens = calloc(bs, sizeof *b->label_lens);
	if (b->qs == NULL || b->starts == NULL || b->label_lens == NULL)
		return -ENOMEM;
	b->slots = bs;
	if (o->form.form == BFI_FORM_KEY && !o->scan) {
		b->hs = calloc(bs, sizeof *b->hs);
		b->ends = calloc(bs, sizeof *b->ends);
		return b->hs && b->ends ? bfi_result_create(&b->all) : -ENOMEM;
	}
	b->es = calloc(bs, sizeof *b->es);
	b->rs = calloc(bs, sizeof *b->rs);
	int rc = b->es && b->rs ? 0 : -ENOMEM;
	for (size_t i = 0; i < bs && rc == 0 && !o->scan; i++) /* a scan's, as queries come */
		rc = bfi_result_create(&b->rs[i]);
	return rc;
}

void batcher_free(struct batcher *b)
{
	for (size_t i = 0; b->rs && i < b->slots; i++)
		bfi_result_destroy(&b->rs[i]);
	bfi_result_destroy(&b->all);
	free(b->qs);
	free(b->starts);
	free(b->label_lens);
	free(b->text);
	free(b->hs);
	free(b->ends);
	free(b->es);
	free(b->rs);
}

/* Room for one more query in a scan's batch, whose arrays grow (hs and ends: never a scan's). */
static int more_slots(struct batcher *b)
{
	size_t want = b->slots * 2;
	struct query *qs = realloc(b->qs, want * sizeof *qs);
	if (qs)
		b->qs = qs;
	size_t *st = realloc(b->starts, want * sizeof *st);
	if (st)
		b->starts = st;
	size_t *ll = realloc(b->label_lens, want * sizeof *ll);
	if (ll)
		b->label_lens = ll;
	const bfi_expr **es = b->es ? realloc(b->es, want * sizeof *es) : NULL;
	if (es)
		b->es = es;
	bfi_result **rs = b->rs ? realloc(b->rs, want * sizeof *rs) : NULL;
	if (rs) {
		memset(rs + b->slots, 0, (want - b->slots) * sizeof *rs);
		b->rs = rs;
	}
	if (!qs || !st || !ll || !es || !rs)
		return -ENOMEM;
	b->slots = want;
	return 0;
}

/* Keep query text t (len bytes), and its label after it, for the batch. */
int batcher_add_labeled(struct batcher *b, const char *t, size_t len, const char *label,
                        size_t label_len)
{
	size_t need = len + label_len;
	if (b->n == b->slots && more_slots(b))
		return -ENOMEM;
	if (b->cap - b->len < need) {
		size_t want = b->len + need > 2 * b->cap ? b->len + need : 2 * b->cap;
		char *p = realloc(b->text, want ? want : 1);
		if (p == NULL)
			return -ENOMEM;
		b->text = p;
		b->cap = want;
	}
	if (len)
		memcpy(b->text + b->len, t, len);
	if (label_len)
		memcpy(b->text + b->len + len, label, label_len);
	b->starts[b->n] = b->len;
	b->label_lens[b->n] = label_len;
	b->qs[b->n] = (struct query){NULL, len, NULL, NULL, 0, 0};
	b->len += need;
	b->n++;
	return 0;
}

int batcher_add(struct batcher *b, const char *t, size_t len)
{
	return batcher_add_labeled(b, t, len, NULL, 0);
}

/* What the scans of this run read, for scan_summary. */
static struct {
	uint64_t bytes, passes, reads, busiest, ranges, rounds, peak;
	uint64_t key_state; /* the most a key's state took in a pass, 0 if no pass said */
	uint64_t first, most; /* queries in the first batch, and in the largest */
	double seconds;
} scans;

/*
 * Once, if a scan read the index more than once over: its queries needed
 * more of a part (a flat block, or a layout scanned whole) than --memory
 * holds, and their state for a pass over its rows did not fit either
 * (or a plain filter wider than --memory), so rounds of them read the
 * same pages again.
 */
static void scan_warn(const bfi_snapshot *s, const struct bfi_scan_stats *st)
{
	static int warned;
	struct bfi_info in;
	bfi_info(s, &in);
	scans.bytes += st->bytes_read;
	scans.passes++;
	scans.reads += st->reads;
	scans.busiest += st->busiest;
	scans.ranges += st->ranges;
	scans.rounds += st->rounds;
	scans.peak = st->peak > scans.peak ? st->peak : scans.peak;
	scans.key_state = st->key_state > scans.key_state ? st->key_state : scans.key_state;
	if (warned || (double)st->bytes_read <= 1.5 * (double)in.file_size)
		return;
	warned = 1;
	fprintf(stderr,
	        "bfi query: warning: the scan read %.1f times the index's bytes in %llu rounds: "
	        "its queries need more of a block or layout than --memory holds, and a pass over "
	        "its rows with state for each key does not fit either (more --memory, a smaller "
	        "--batch-size, or a build with smaller --block-sets, reads each byte once)\n",
	        (double)st->bytes_read / (double)in.file_size, (unsigned long long)st->rounds);
}

void scan_summary(const bfi_snapshot *s, const struct ask *o)
{
	struct bfi_info in;
	bfi_info(s, &in);
	char m[24];
	if (scans.passes > 1 && (double)scans.bytes > 1.5 * (double)in.file_size)
		fprintf(stderr, "bfi query: note: --memory %s held the queries' state and answers in "
		        "%llu batches, each a pass: the index was read %.1f times over (more --memory "
		        "reads it fewer times)\n", size_arg(o->memory, m, sizeof m),
		        (unsigned long long)scans.passes, (double)scans.bytes / (double)in.file_size);
	if (o->stats && scans.passes) {
		char r[24], p[24], mem[24];
		fprintf(stderr,
		        "bfi query: scan: %llu passes (batches), %s read (%.2f times the index) in %llu "
		        "reads, %llu ranges, %llu rounds; at most %s of pages and state held, "
		        "--memory %s; %.2f s in passes\n"
		        "bfi query: scan: reads shared by up to %u threads: the busiest read %.2f of "
		        "them (work over the busiest thread: %.2f)\n",
		        (unsigned long long)scans.passes, size_arg(scans.bytes, r, sizeof r),
		        (double)scans.bytes / (double)in.file_size, (unsigned long long)scans.reads,
		        (unsigned long long)scans.ranges, (unsigned long long)scans.rounds,
		        size_arg(scans.peak, p, sizeof p), size_arg(o->memory, mem, sizeof mem), scans.seconds,
		        o->scan_threads ? o->scan_threads : 1,
		        scans.bytes ? (double)scans.busiest / (double)scans.bytes : 1.0,
		        scans.busiest ? (double)scans.bytes / (double)scans.busiest : 1.0);
		if (scans.key_state)
			fprintf(stderr, "bfi query: scan: a key's state took at most %llu bytes in a pass "
			        "(a row in every block: %llu); batches after the first sized by it and by "
			        "the sets a key matched: the first of %llu queries, the largest %llu\n",
			        (unsigned long long)scans.key_state, (unsigned long long)o->cost.key_state,
			        (unsigned long long)scans.first, (unsigned long long)scans.most);
	}
}

/*
 * A scan's batch is cut by memory (--memory, or its default): what a
 * query is expected to hold, from its text before it is compiled (its
 * keys at most: a key, a sequence's k-mers, a word every two bytes).
 * all: its text and label and their slots, and what bfi_scan_query_bytes
 * counts by the batches' cost as seen; own: of that, what bfi query
 * holds beside the scan, the text and the compiled expression.
 */
static void scan_costs(const struct ask *o, const struct batcher *b, size_t len, size_t label_len,
                       uint64_t *own, uint64_t *all)
{
	uint64_t keys = o->form.form == BFI_FORM_KEY ? 1
	                : form_seq(&o->form) ? (len >= o->form.k ? len - o->form.k + 1 : 0)
	                                                 : len / 2 + 1;
	uint64_t text = len + label_len + sizeof(struct query) + 2 * sizeof(size_t) + 2 * sizeof(void *);
	*all = text + bfi_scan_query_bytes(&b->seen, keys, o->form.theta != 0);
	*own = text + 320 + keys * 48; /* and its compiled expression, as bfi_scan_query_bytes counts it */
}

int batcher_scan_add(const bfi_snapshot *s, const struct ask *o, struct batcher *b, const char *t,
                     size_t len, const char *label, size_t label_len)
{
	/* what the batch may hold beside the scan's fixed cost: at least half, on a small --memory */
	uint64_t own, all;
	uint64_t room = o->memory > 2 * o->cost.fixed ? o->memory - o->cost.fixed : o->memory / 2;
	scan_costs(o, b, len, label_len, &own, &all);
	if (b->n && b->cost + all > room / 2) { /* the rest is the pages' */
		int rc = run_batch(s, o, b);
		if (rc)
			return rc;
	}
	if (b->n == 0 && all > o->memory) { /* alone, it may take all */
		char q[80], need[24], given[24], advice[24];
		fprintf(stderr, "bfi query: %s: this query needs about %s to be scanned (the state and "
		        "answer of its keys), more than --memory %s; give --memory %s or more\n",
		        shown(label_len ? label : t, label_len ? label_len : len, q, sizeof q),
		        size_arg(all, need, sizeof need), size_arg(o->memory, given, sizeof given),
		        size_arg(all + o->cost.fixed, advice, sizeof advice));
		return SAID;
	}
	int rc = batcher_add_labeled(b, t, len, label, label_len);
	if (rc)
		return rc;
	b->cost += all;
	b->own += own;
	return b->n == o->batch_size ? run_batch(s, o, b) : 0;
}

/*
 * Scan queries [from, to) of the batch and print their answers, in
 * order. The results are made for them and freed after, so that no
 * answer is held past its batch. If their answers pass memory (sets
 * that share most keys answer far more than the false-positive model
 * expects), the queries are answered in two halves, each its own pass,
 * and later batches are sized by the answers and the keys' state seen.
 */
static int scan_some(const bfi_snapshot *s, const struct ask *o, struct batcher *b, size_t from,
                     size_t to, uint64_t memory)
{
	int rc = 0;
	for (size_t i = from; i < to && rc == 0; i++)
		if (b->rs[i] == NULL)
			rc = bfi_result_create(&b->rs[i]);
	struct bfi_scan_stats st;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (rc == 0)
		rc = bfi_scan_parallel(s, o->layout, b->es + from, to - from, o->theta, b->rs + from,
		                       memory, o->scan_threads ? o->scan_threads : 1, &st);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	scans.seconds += (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	if (rc == BFI_E_LIMIT && to - from > 1) {
		for (size_t i = from; i < to; i++)
			bfi_result_destroy(&b->rs[i]);
		size_t mid = from + (to - from) / 2;
		rc = scan_some(s, o, b, from, mid, memory);
		return rc ? rc : scan_some(s, o, b, mid, to, memory);
	}
	if (rc == BFI_E_LIMIT) {
		char q[80], m[24];
		const struct query *x = &b->qs[from];
		fprintf(stderr, "bfi query: %s: its answer alone passes --memory %s; give more\n",
		        shown(x->label ? x->label : x->text, x->label ? x->label_len : x->len, q, sizeof q),
		        size_arg(o->memory, m, sizeof m));
		rc = SAID;
	}
	if (rc == 0) {
		scan_warn(s, &st);
		if (scans.first == 0)
			scans.first = to - from;
		if (to - from > scans.most)
			scans.most = to - from;
		/* what the answers took a key, for the next batches' sizing */
		uint64_t keys = 0, sets = 0;
		for (size_t i = from; i < to; i++) {
			keys += bfi_expr_keys(b->es[i]);
			sets += bfi_result_count(b->rs[i]);
		}
		/*
		 * the model's false matches are a bound: once a batch has
		 * matched, the most matched a key since sizes the batches (more
		 * in one later are halved, above, and raise it)
		 */
		if (keys && (!b->matches_seen || (double)sets / (double)keys > b->seen.key_matches)) {
			b->seen.key_matches = (double)sets / (double)keys;
			b->matches_seen = 1;
		}
		if ((double)sets / (double)(to - from) > b->seen.answer_sets)
			b->seen.answer_sets = (double)sets / (double)(to - from);
		/*
		 * the state a key took: on blocks of distinct sets, only the keys
		 * a block may hold take a row in its pass. Should a later batch's
		 * keys need more, its pass is declined for rounds of queries,
		 * within memory, and the figure raised.
		 */
		if (st.key_state && (!b->state_seen || st.key_state > b->seen.key_state)) {
			b->seen.key_state = st.key_state;
			b->state_seen = 1;
		}
	}
	for (size_t i = from; i < to && rc == 0; i++)
		rc = print_answer(s, b->rs[i], o, &b->qs[i]);
	for (size_t i = from; i < to; i++)
		bfi_result_destroy(&b->rs[i]);
#ifdef __GLIBC__
	/* what the answers held goes back to the system, not kept beside the next pass's pages */
	malloc_trim(0);
#endif
	return rc;
}

/*
 * Answer the batch's queries and print the answers, in order; then empty
 * it. Expressions: those before one that does not parse are answered,
 * then that one's error is returned.
 */
int run_batch(const bfi_snapshot *s, const struct ask *o, struct batcher *b)
{
	size_t m = b->n, ok = 0;
	struct query *qs = b->qs;
	int rc = 0, bad = 0;
	for (size_t i = 0; i < m; i++) {
		qs[i].text = b->text + b->starts[i];
		if (b->label_lens[i]) {
			qs[i].label = qs[i].text + qs[i].len;
			qs[i].label_len = b->label_lens[i];
		}
	}
	uint64_t own = b->own;
	b->n = b->len = 0;
	b->cost = b->own = 0;
	if (o->form.form == BFI_FORM_KEY && !o->scan) {
		for (size_t i = 0; i < m; i++)
			b->hs[i] = bfi_hash_key(qs[i].text, qs[i].len);
		rc = bfi_query_keys(s, o->layout, b->hs, m, b->all, b->ends);
		if (o->keys_seen)
			*o->keys_seen += m;
		/* NULL when no key matched anything: no offset may be added to it then */
		const uint32_t *ords = bfi_result_ordinals(b->all);
		for (size_t i = 0, from = 0; i < m && rc == 0; from = b->ends[i++])
			rc = print_sets(s, ords ? ords + from : NULL, NULL, b->ends[i] - from, o, &qs[i]);
		return rc;
	}
	for (; ok < m && bad == 0; ok++) {
		bad = query_compile(o, &qs[ok]);
		b->es[ok] = qs[ok].e;
		if (bad == 0 && o->keys_seen)
			*o->keys_seen += bfi_expr_keys(qs[ok].e);
	}
	if (bad)
		ok--;
	if (o->scan) {
		/* less what the batch holds here, and an eighth for the allocator's own */
		uint64_t keep = own + o->memory / 8;
		uint64_t memory = o->memory > keep + o->memory / 4 ? o->memory - keep : o->memory / 4;
		rc = scan_some(s, o, b, 0, ok, memory);
	} else {
		rc = bfi_query_batch(s, o->layout, b->es, ok, b->rs);
		for (size_t i = 0; i < ok && rc == 0; i++)
			rc = print_answer(s, b->rs[i], o, &qs[i]);
	}
	for (size_t i = 0; i < m; i++)
		bfi_expr_free(&qs[i].e);
	return rc ? rc : bad;
}
