/*
 * tsv.c - set<TAB>key lines (--tsv) read a batch of chunks at a time:
 * each chunk, whole lines of about TSV_CHUNK bytes, is parsed on its own
 * thread, its keys hashed and its lines cut into runs of one set name;
 * then, in the order of the input, each run's name is made a set (so the
 * ordinals are those of first appearance, as one thread gives them) and
 * the chunk's keys go to the spool. What the threads do is the bulk of
 * the work: the hashing and the search for line ends and TABs. What stays
 * on the caller's thread is a copy of the input, a name lookup a run and
 * a store a key.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bfi_hash.h"
#include "internal.h"
#include "sources.h"

#define TSV_CHUNK ((size_t)1 << 20)
#define TSV_MIN_CHUNK ((size_t)64 << 10) /* however small the budget */

/* Consecutive lines of one set name: the name's bytes in the chunk, the keys' records. */
struct tsv_run {
	size_t name, name_len;
	size_t first, n;    /* records of the chunk */
	uint64_t line;      /* its first line, counted from the chunk's start (1 for the first) */
	int routed;         /* built into this shard (--route) */
};

struct tsv_chunk {
	char *buf;
	size_t len, cap;
	uint64_t lines;     /* line ends in it (a last line without one counts too) */
	struct rec *recs;
	size_t n_recs, cap_recs;
	struct tsv_run *runs;
	size_t n_runs, cap_runs;
	uint64_t no_tab;    /* the first line with no TAB, counted as line is, or 0 */
	int rc;             /* -ENOMEM, or 0 */
};

struct tsv_job {
	const bfi_writer *w;
	struct tsv_chunk *chunks;
};

static int grow(void *pp, size_t *cap, size_t want, size_t size)
{
	if (want <= *cap)
		return 0;
	size_t c = *cap ? *cap : 1024;
	while (c < want)
		c *= 2;
	void *p = realloc(*(void **)pp, c * size);
	if (p == NULL)
		return -ENOMEM;
	*(void **)pp = p;
	*cap = c;
	return 0;
}

/* Parse chunk item: runs and hashed keys, until the end or a line with no TAB. */
static int parse_chunk(void *ctx, uint64_t item, unsigned thread)
{
	struct tsv_job *j = ctx;
	struct tsv_chunk *c = &j->chunks[item];
	(void)thread;
	c->n_recs = c->n_runs = 0;
	c->lines = 0;
	c->no_tab = 0;
	c->rc = 0;
	struct tsv_run *run = NULL;
	for (size_t at = 0; at < c->len && c->rc == 0;) {
		const char *line = c->buf + at, *nl = memchr(line, '\n', c->len - at);
		size_t got = nl ? (size_t)(nl - line) + 1 : c->len - at, n = writer_chomp(line, got);
		at += got;
		c->lines++;
		if (n == 0)
			continue;
		const char *tab = memchr(line, '\t', n);
		if (tab == NULL) {
			c->no_tab = c->lines;
			break; /* the build stops there */
		}
		size_t name = (size_t)(line - c->buf), name_len = (size_t)(tab - line);
		if (run == NULL || run->name_len != name_len ||
		    memcmp(c->buf + run->name, line, name_len) != 0) {
			c->rc = grow(&c->runs, &c->cap_runs, c->n_runs + 1, sizeof *c->runs);
			if (c->rc)
				break;
			run = &c->runs[c->n_runs++];
			*run = (struct tsv_run){name, name_len, c->n_recs, 0, c->lines,
			                        writer_routed(j->w, line, name_len)};
		}
		if (n > name_len + 1 && run->routed) {
			c->rc = grow(&c->recs, &c->cap_recs, c->n_recs + 1, sizeof *c->recs);
			if (c->rc)
				break;
			bfi_keyhash h = bfi_hash_key(tab + 1, n - name_len - 1);
			c->recs[c->n_recs++] = (struct rec){h.h1, h.h2, 0, 0};
			run->n++;
		}
	}
	return c->rc;
}

/*
 * Fill chunk c with whole lines from f, size bytes or the line that
 * outgrows them, after the carry (bytes of a line
 * begun in the chunk before). Returns 1 with lines, 0 at the end, or an
 * error; *carry, *carry_len keep what follows the last line end.
 */
static int read_chunk(struct tsv_chunk *c, FILE *f, size_t size, char **carry, size_t *carry_len,
                      size_t *carry_cap)
{
	c->len = 0;
	if (grow(&c->buf, &c->cap, size > *carry_len ? size : *carry_len + size, 1))
		return -ENOMEM;
	if (*carry_len)
		memcpy(c->buf, *carry, *carry_len);
	c->len = *carry_len;
	*carry_len = 0;
	for (;;) {
		size_t got = fread(c->buf + c->len, 1, c->cap - c->len, f);
		c->len += got;
		if (got == 0 || c->len == c->cap) {
			/* cut after the last line end; a line longer than the chunk grows it */
			char *nl = NULL;
			for (size_t i = c->len; i > 0 && nl == NULL; i--)
				if (c->buf[i - 1] == '\n')
					nl = c->buf + i - 1;
			if (got == 0 || nl) {
				size_t keep = nl && got ? c->len - (size_t)(nl + 1 - c->buf) : 0;
				if (keep) { /* the chunk ended inside a line: the rest starts the next */
					if (grow(carry, carry_cap, keep, 1))
						return -ENOMEM;
					memcpy(*carry, nl + 1, keep);
					*carry_len = keep;
					c->len -= keep;
				}
				return c->len > 0;
			}
			if (grow(&c->buf, &c->cap, c->cap * 2, 1))
				return -ENOMEM;
		}
	}
}

/*
 * Chunks at once, a thread each, and their size: as many as a quarter of
 * --memory holds at their worst (a record of 24 bytes for every 4 bytes
 * of input), of TSV_CHUNK bytes, or smaller to fit a small budget.
 */
static unsigned tsv_threads(bfi_writer *w, size_t *chunk)
{
	unsigned threads = pool_threads(w->opt.threads);
	uint64_t each = TSV_CHUNK + TSV_CHUNK / 4 * sizeof(struct rec), room = writer_budget(w) / 4;
	*chunk = TSV_CHUNK;
	if (threads > 1 && room / each < threads) {
		unsigned fit = room / each > 1 ? (unsigned)(room / each) : 1;
		writer_warn(w, "--memory holds %u chunks of --tsv input at once: reading on %u thread%s, "
		            "not %u (a larger --memory gives more)", fit, fit, fit == 1 ? "" : "s",
		            threads);
		threads = fit;
	}
	if (room < each) {
		uint64_t fit = room / (1 + sizeof(struct rec) / 4);
		*chunk = fit < TSV_MIN_CHUNK ? TSV_MIN_CHUNK : (size_t)fit;
	}
	return threads;
}

/* The runs and keys of chunk c, in order: sets named, keys spooled. */
static int take_chunk(bfi_writer *w, struct tsv_chunk *c, const char *label, uint64_t line0,
                      uint32_t *last_ord, int *have_last)
{
	for (size_t r = 0; r < c->n_runs; r++) {
		struct tsv_run *run = &c->runs[r];
		if (!run->routed)
			continue;
		const char *name = c->buf + run->name;
		size_t len = 0;
		const char *last = *have_last ? names_get(&w->names, *last_ord, &len) : NULL;
		uint32_t ord = *last_ord;
		if (last == NULL || len != run->name_len || memcmp(last, name, len) != 0) {
			int rc = writer_set(w, name, run->name_len, &ord);
			if (rc) {
				char msg[sizeof w->errmsg];
				snprintf(msg, sizeof msg, "%s", w->errmsg);
				return writer_fail(w, rc, "%s:%llu: %s", label,
				                   (unsigned long long)(line0 + run->line), msg);
			}
			*last_ord = ord;
			*have_last = 1;
		}
		if (run->n && w->n_filt)
			return writer_fail(w, BFI_E_INPUT, "a build from filters takes no keys");
		for (size_t i = run->first; i < run->first + run->n; i++)
			c->recs[i].ord = ord;
	}
	if (c->n_recs) {
		int rc = spool_add_many(&w->spool, c->recs, c->n_recs);
		if (rc)
			return writer_fail(w, rc, "spilling keys to %s: %s", w->spool.dir, bfi_strerror(rc));
		uint64_t before = w->keys_in;
		w->keys_in += c->n_recs;
		/* at each million (2^20) keys passed, as a key at a time would say it */
		if (w->opt.progress && before >> 20 != w->keys_in >> 20)
			w->opt.progress(w->opt.progress_ctx, "reading", w->keys_in >> 20 << 20, 0);
	}
	if (c->no_tab)
		return writer_fail(w, BFI_E_INPUT, "%s:%llu: no TAB between set name and key", label,
		                   (unsigned long long)(line0 + c->no_tab));
	return 0;
}

int writer_add_tsv(bfi_writer *w, FILE *f, const char *label)
{
	if (label == NULL)
		label = "(tsv)";
	struct stat st;
	if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode))
		return writer_fail(w, -EISDIR, "%s: %s; --tsv reads a file of set<TAB>key lines", label,
		                   strerror(EISDIR));
	if (writer_input(w, "keys"))
		return BFI_E_INPUT;
	size_t size;
	unsigned threads = tsv_threads(w, &size);
	struct tsv_job j = {w, calloc(threads, sizeof *j.chunks)};
	char *carry = NULL;
	size_t carry_len = 0, carry_cap = 0;
	uint64_t line0 = 0;
	uint32_t last_ord = 0;
	int have_last = 0, rc = j.chunks ? 0 : -ENOMEM, more = 1;
	while (rc == 0 && more) {
		unsigned n = 0;
		while (rc == 0 && n < threads && more) {
			int got = read_chunk(&j.chunks[n], f, size, &carry, &carry_len, &carry_cap);
			if (got < 0)
				rc = got;
			else if (got == 0)
				more = 0;
			else
				n++;
		}
		if (rc == 0 && ferror(f)) {
			rc = writer_fail(w, errno ? -errno : -EIO, "%s: read error: %s", label,
			                 strerror(errno ? errno : EIO));
			break;
		}
		if (rc == 0 && n)
			rc = pool_run(n, n, parse_chunk, &j);
		for (unsigned c = 0; rc == 0 && c < n; c++) {
			rc = take_chunk(w, &j.chunks[c], label, line0, &last_ord, &have_last);
			line0 += j.chunks[c].lines;
		}
	}
	if (rc == -ENOMEM && w->errmsg[0] == 0)
		rc = writer_fail(w, rc, "%s: out of memory reading it", label);
	for (unsigned c = 0; j.chunks && c < threads; c++) {
		free(j.chunks[c].buf);
		free(j.chunks[c].recs);
		free(j.chunks[c].runs);
	}
	free(j.chunks);
	free(carry);
	return rc;
}
