/*
 * input.c - the writer's front end: options, errors and the budget, set
 * names and keys, TSV lines, files of a directory, filter files. The
 * readers of whole files (sources.c, text.c, seq.c, paths.c) build on it;
 * the writer's life (writer.c) on them.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bfi_hash.h"
#include "internal.h"
#include "sources.h"

/* buffers outside the budget's accounts: file readers, thread stacks, the catalog's pages */
#define WRITER_SLACK (2ull << 20)

void bfi_build_options_init(struct bfi_build_options *o)
{
	memset(o, 0, sizeof *o);
	o->size = sizeof *o;
	o->fpr = 0.01;
	o->layouts = BFI_BUILD_AUTO;
}

int bfi__sized(const void *o, void *out, size_t ours, size_t least)
{
	size_t theirs;
	memcpy(&theirs, o, sizeof theirs); /* every options struct begins with its size */
	if (theirs < least || theirs > ours)
		return BFI_E_INVALID;
	memcpy(out, o, theirs);
	memcpy(out, &ours, sizeof ours);
	return 0;
}

int bfi__build_options(const struct bfi_build_options *o, struct bfi_build_options *out)
{
	bfi_build_options_init(out);
	return o ? bfi__sized(o, out, sizeof *out,
	                      offsetof(struct bfi_build_options, fpr) + sizeof o->fpr)
	         : 0;
}

/*
 * Control bytes in a message (from a set name, a file name, an input
 * line) written as \xHH from byte at on, in place, as far as cap allows:
 * a message shown on a terminal cannot drive it, nor hide its own text.
 */
static void escape_controls(char *msg, size_t at, size_t cap)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = strlen(msg), ctl = 0;
	for (size_t i = at; i < n; i++)
		ctl += (unsigned char)msg[i] < 0x20 || msg[i] == 0x7f;
	if (ctl == 0)
		return;
	char *copy = strdup(msg + at);
	if (copy == NULL)
		return;
	size_t o = at;
	for (size_t i = 0; copy[i] && o + 5 < cap; i++) {
		unsigned char c = (unsigned char)copy[i];
		if (c < 0x20 || c == 0x7f) {
			msg[o++] = '\\';
			msg[o++] = 'x';
			msg[o++] = hex[c >> 4];
			msg[o++] = hex[c & 15];
		} else {
			msg[o++] = (char)c;
		}
	}
	msg[o] = 0;
	free(copy);
}

int writer_fail(bfi_writer *w, int rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(w->errmsg, sizeof w->errmsg, fmt, ap);
	va_end(ap);
	escape_controls(w->errmsg, 0, sizeof w->errmsg);
	return rc;
}

uint64_t bfi_default_memory(void)
{
	/*
	 * A quarter of the machine: a build neither swaps nor, on a laptop,
	 * spills needlessly. But no more than half of what the process may
	 * really hold (its cgroup's limit, ulimit -v, MemAvailable): the
	 * build's own buffers, the page cache of what it writes (a cgroup
	 * counts it) and libraries take the rest.
	 */
	struct bfi_memory_limits l;
	bfi_memory_limits(&l);
	uint64_t m = l.physical / 4;
	m = m < (256ull << 20) ? 256ull << 20 : m > (64ull << 30) ? 64ull << 30 : m;
	if (m > l.usable / 2)
		m = l.usable / 2;
	return m < (8ull << 20) ? 8ull << 20 : m;
}

int writer_room_for_sets(bfi_writer *w, size_t n, int finishing)
{
	const struct set_sums *s = &w->sums;
	if (n <= s->cap)
		return 0;
	size_t cap = s->cap ? s->cap : 64;
	while (cap < n)
		cap *= 2;
	uint64_t per = sizeof *s->distinct + (s->want_seen ? sizeof *s->seen : 0) +
	               (s->want_hll ? SET_HLL_REGS : 0) +
	               (s->want_minhash ? MINHASHES * sizeof *s->minhash : 0);
	uint64_t grow = (cap - s->cap) * per;
	if (grow <= writer_budget(w))
		return 0;
	if (finishing) { /* no key comes any more: the spool's buffer can go to disk */
		int rc = spool_release(&w->spool);
		if (rc)
			return writer_fail(w, rc, "spilling keys to %s: %s", w->spool.dir, bfi_strerror(rc));
		if (grow <= writer_budget(w))
			return 0;
	}
	uint64_t want = w->opt.memory - writer_budget(w) + grow + (4ull << 20);
	return writer_fail(w, BFI_E_LIMIT, "--memory %llu MiB cannot hold the counts and sketches of "
	                   "%zu sets (%llu bytes each) beside what the build holds: give at least %llu "
	                   "MiB", (unsigned long long)(w->opt.memory >> 20), n,
	                   (unsigned long long)per, (unsigned long long)((want >> 20) + 1));
}

void *writer_zalloc(size_t bytes)
{
	void *p = malloc(bytes ? bytes : 1);
	if (p)
		memset(p, 0, bytes);
	return p;
}

#define ZERO_PIECE (1u << 20)

struct zero_job {
	uint8_t *p;
	size_t bytes;
};

static int zero_piece(void *ctx, uint64_t i, unsigned thread)
{
	struct zero_job *z = ctx;
	size_t at = (size_t)i * ZERO_PIECE;
	(void)thread;
	memset(z->p + at, 0, z->bytes - at < ZERO_PIECE ? z->bytes - at : ZERO_PIECE);
	return 0;
}

void *writer_zalloc_on(size_t bytes, unsigned threads)
{
	if (threads < 2 || bytes < 4 * (size_t)ZERO_PIECE)
		return writer_zalloc(bytes);
	struct zero_job z = {malloc(bytes), bytes};
	if (z.p && pool_run(threads, (bytes + ZERO_PIECE - 1) / ZERO_PIECE, zero_piece, &z) != 0) {
		free(z.p);
		z.p = NULL;
	}
	return z.p;
}

uint64_t writer_budget(const bfi_writer *w)
{
	const struct spool *sp = &w->spool;
	const struct set_sums *su = &w->sums;
	uint64_t held = w->program + WRITER_SLACK + w->plan_bytes + w->held_bytes +
	                (sp->added < sp->cap ? sp->added : sp->cap) * sizeof(struct rec) +
	                su->cap * (sizeof *su->distinct + (su->hll ? SET_HLL_REGS : 0) +
	                           (su->minhash ? MINHASHES * sizeof *su->minhash : 0)) +
	                w->cap_src * sizeof *w->src + w->names.arena_cap +
	                w->names.cap * (sizeof *w->names.off + sizeof *w->names.len) +
	                w->names.nslots * sizeof *w->names.slots;
	uint64_t least = WRITER_MIN_MEMORY / 2;
	return w->opt.memory > held + least ? w->opt.memory - held : least;
}

int writer_fail_shared(bfi_writer *w, int rc, const char *fmt, ...)
{
	pthread_mutex_lock(&w->err_lock);
	if (!w->errmsg[0]) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(w->errmsg, sizeof w->errmsg, fmt, ap);
		va_end(ap);
		escape_controls(w->errmsg, 0, sizeof w->errmsg);
	}
	pthread_mutex_unlock(&w->err_lock);
	return rc;
}

void writer_warn(bfi_writer *w, const char *fmt, ...)
{
	size_t at = strlen(w->warnings);
	if (at + 2 >= sizeof w->warnings)
		return; /* full: the first warnings matter most */
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(w->warnings + at, sizeof w->warnings - at - 1, fmt, ap);
	va_end(ap);
	escape_controls(w->warnings, at, sizeof w->warnings - 1);
	at = strlen(w->warnings);
	w->warnings[at] = '\n';
	w->warnings[at + 1] = 0;
}

int writer_input(bfi_writer *w, const char *kind)
{
	int keys = !strcmp(kind, "keys");
	for (int i = 0; i < w->n_meta; i++)
		if (!strcmp(w->meta[i].key, BFI_META_INPUT) && keys)
			return writer_fail(w, BFI_E_INPUT, "inputs disagree on the input kind: keys as "
			                                   "given after %.*s; one snapshot's keys must all "
			                                   "be made the same way",
			                   (int)w->meta[i].len, w->meta[i].val);
	if (keys) {
		w->plain_keys = 1;
		return 0;
	}
	if (w->plain_keys)
		return writer_fail(w, BFI_E_INPUT, "inputs disagree on the input kind: %s after keys as "
		                                   "given; one snapshot's keys must all be made the "
		                                   "same way",
		                   kind);
	return writer_meta(w, BFI_META_INPUT, kind, strlen(kind), "the input kind");
}

const char *bfi_writer_warnings(const bfi_writer *w)
{
	return w ? w->warnings : "";
}

int writer_meta(bfi_writer *w, const char *key, const void *val, size_t len, const char *what)
{
	for (int i = 0; i < w->n_meta; i++)
		if (!strcmp(w->meta[i].key, key)) {
			if (w->meta[i].len == len && memcmp(w->meta[i].val, val, len) == 0)
				return 0;
			return writer_fail(w, BFI_E_INPUT, "inputs disagree on %s: one snapshot's keys must "
			                                   "all be made the same way", what);
		}
	if (w->n_meta == WRITER_MAX_META || strlen(key) >= sizeof w->meta[0].key)
		return BFI_E_INVALID;
	struct meta_kv *m = &w->meta[w->n_meta];
	if ((m->val = malloc(len ? len : 1)) == NULL)
		return -ENOMEM;
	memcpy(m->val, val, len);
	m->len = len;
	snprintf(m->key, sizeof m->key, "%s", key);
	w->n_meta++;
	return 0;
}

int bfi_writer_meta(bfi_writer *w, const char *key, const void *val, size_t len)
{
	static const char *const rules[] = BFI_META_KEY_RULES;
	if (w == NULL || key == NULL || (val == NULL && len) || w->finished)
		return BFI_E_INVALID;
	if (!strcmp(key, BFI_META_PATH_LEVELS)) { /* the deepest of the sources': written at finish */
		char lv[16];
		unsigned v = 0;
		if (len == 0 || len >= sizeof lv)
			return BFI_E_INVALID;
		memcpy(lv, val, len);
		lv[len] = 0;
		if (sscanf(lv, "%u", &v) != 1)
			return BFI_E_INVALID;
		w->path_levels = v > w->path_levels ? v : w->path_levels;
		return 0;
	}
	for (size_t i = 0; i < sizeof rules / sizeof *rules; i++)
		if (!strcmp(key, rules[i]))
			return writer_meta(w, key, val, len, key);
	return BFI_E_INVALID;
}

const char *bfi_writer_errmsg(const bfi_writer *w)
{
	return w && w->errmsg[0] ? w->errmsg : "";
}


int writer_set(bfi_writer *w, const char *name, size_t len, uint32_t *ord)
{
	if (w->finished)
		return BFI_E_INVALID;
	if (len == 0 || len > BFI_MAX_NAME)
		return writer_fail(w, BFI_E_INPUT, "set name must be 1 to %u bytes", BFI_MAX_NAME);
	for (size_t i = 0; i < len; i++)
		if (name[i] == '\0' || name[i] == '\t' || name[i] == '\n' || name[i] == '\r')
			return writer_fail(w, BFI_E_INPUT,
			                   "set name '%.*s' holds a NUL, TAB, CR or LF", (int)len, name);
	int is_new;
	int rc = names_intern(&w->names, name, len, ord, &is_new);
	if (rc)
		return writer_fail(w, rc, "set '%.*s': %s", (int)len, name, bfi_strerror(rc));
	return 0;
}

int bfi_writer_key(bfi_writer *w, uint32_t ord, const void *key, size_t len)
{
	if (w == NULL || ord >= w->names.n || (key == NULL && len) || w->finished)
		return BFI_E_INVALID;
	if (w->n_filt)
		return writer_fail(w, BFI_E_INPUT, "a build from filters takes no keys");
	bfi_keyhash h = bfi_hash_key(key, len);
	struct rec r = {h.h1, h.h2, ord, 0};
	int rc = spool_add(&w->spool, &r);
	if (rc)
		return writer_fail(w, rc, "spilling keys to %s: %s", w->spool.dir, bfi_strerror(rc));
	w->keys_in++;
	if (w->opt.progress && (w->keys_in & 0xfffff) == 0)
		w->opt.progress(w->opt.progress_ctx, "reading", w->keys_in, 0);
	return 0;
}

/* Does the routing option send this set to the shard being built? */
int writer_routed(const bfi_writer *w, const char *name, size_t len)
{
	return w->opt.route_shards == 0 ||
	       bfi_rambo_cell(name, len, 0, w->opt.route_shards, w->opt.route_shards) ==
	           w->opt.route_shard;
}

/* n less a line end (LF or CRLF) at the end of line. */
size_t writer_chomp(const char *line, size_t n)
{
	if (n && line[n - 1] == '\n')
		n--;
	if (n && line[n - 1] == '\r')
		n--;
	return n;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The keys of a key file, one a line, less its line end, empty lines
 * skipped: each passed to emit. buf (*cap bytes, grown as a line needs)
 * holds the first got bytes already read. 0, or an error with err set.
 */
int writer_key_lines(struct zin *z, const char *file, char **bufp, size_t *capp, ssize_t got,
                     char *err, size_t errlen,
                     int (*emit)(void *ctx, const char *key, size_t len), void *ctx)
{
	char *buf = *bufp;
	size_t cap = *capp, have = 0;
	int rc = got < 0 ? (int)got : 0;
	while (rc == 0 && got > 0) {
		have += (size_t)got;
		size_t start = 0;
		for (char *nl; (nl = memchr(buf + start, '\n', have - start)) != NULL && rc == 0;) {
			size_t n = writer_chomp(buf + start, (size_t)(nl - (buf + start)) + 1);
			if (n)
				rc = emit(ctx, buf + start, n);
			start = (size_t)(nl - buf) + 1;
		}
		memmove(buf, buf + start, have - start); /* a line not yet ended */
		have -= start;
		if (rc == 0 && have == cap) {
			char *nb = cap < ((size_t)1 << 40) ? realloc(buf, cap * 2) : NULL;
			if (nb == NULL) {
				snprintf(err, errlen, "%s: a line too long to hold", file);
				rc = -ENOMEM;
			} else {
				buf = nb;
				cap *= 2;
			}
		}
		if (rc == 0)
			got = zin_read(z, buf + have, cap - have, err, errlen);
		if (rc == 0 && got < 0)
			rc = (int)got;
	}
	size_t n = rc == 0 ? writer_chomp(buf, have) : 0; /* a last line without its newline */
	if (n)
		rc = emit(ctx, buf, n);
	*bufp = buf;
	*capp = cap;
	return rc;
}

/* The name a key file gives its set: its base name, less ".gz", ".xz", ".bz2" or ".zst" if it is compressed. */
size_t writer_key_file_name(const char *file, int compressed, const char **name)
{
	const char *base = strrchr(file, '/');
	*name = base ? base + 1 : file;
	size_t len = strlen(*name);
	return compressed ? len - zin_suffix(*name, len) : len;
}



int bfi_writer_rambo_rows(bfi_writer *w, const struct bfi_rambo_rows *rows)
{
	/* alone (fold, stack), or beside given columns, flat or a tree over them (compact, merge) */
	if (w == NULL || rows == NULL || w->finished || !(w->opt.layouts & BFI_BUILD_RAMBO) ||
	    (w->opt.layouts & ~(BFI_BUILD_RAMBO | BFI_BUILD_FLAT | BFI_BUILD_TREE | writer_carried(w))) ||
	    !w->opt.keep_order || w->keys_in || rows->reps == 0 || rows->reps > BFI_MAX_REPS ||
	    rows->cells == 0 || rows->cells > BFI_MAX_CELLS || rows->shards == 0 ||
	    rows->cells % rows->shards || rows->k == 0 || rows->k > BFI_MAX_K ||
	    rows->distinct == NULL)
		return BFI_E_INVALID;
	for (uint32_t r = 0; r < rows->reps; r++)
		if (rows->m[r] == 0 || rows->m[r] > BFI_MAX_BITS || (rows->rows[r] == NULL && !w->raw_row))
			return BFI_E_INVALID;
	w->raw = rows;
	return 0;
}

int bfi_writer_rambo_rows_made(bfi_writer *w, const struct bfi_rambo_rows *rows,
                               int (*row)(void *ctx, uint32_t r, uint64_t first, uint64_t n,
                                          uint8_t *dst),
                               void *ctx)
{
	if (w == NULL || row == NULL || w->raw)
		return BFI_E_INVALID;
	w->raw_row = row;
	w->raw_ctx = ctx;
	int rc = bfi_writer_rambo_rows(w, rows);
	if (rc)
		w->raw_row = NULL;
	return rc;
}

/* One filter file as the set named after it. */
static int add_filter_file(bfi_writer *w, const char *path)
{
	if (w->keys_in)
		return writer_fail(w, BFI_E_INPUT, "%s: a build from keys takes no filters", path);
	bfi_filter *f;
	int rc = bfi_filter_load(path, &f);
	if (rc)
		return writer_fail(w, rc, "%s: %s", path, bfi_strerror(rc));
	struct bfi_filter_stats st, first;
	bfi_filter_stats(f, &st);
	if (w->n_filt) {
		bfi_filter_stats(w->filt[0], &first);
		if (st.m != first.m || st.k != first.k) {
			bfi_filter_destroy(&f);
			return writer_fail(w, BFI_E_FILTER_MISMATCH,
			                   "%s: m = %llu bits and k = %u, but the first filter has m = %llu "
			                   "and k = %u; all filters must share m, k and the hash%s",
			                   path, (unsigned long long)st.m, st.k, (unsigned long long)first.m,
			                   first.k,
			                   bfi_filter_compression(f) || bfi_filter_compression(w->filt[0])
			                           ? " (bfi filter create --compress --expected-keys "
			                             "chooses m and k for each filter's own keys: make "
			                             "filters to index together with the same --bits and "
			                             "--hashes)"
			                           : "");
		}
	}
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t len = strlen(base);
	if (len > 4 && !strcmp(base + len - 4, ".bff"))
		len -= 4;
	uint32_t ord;
	rc = writer_new_set(w, path, base, len, &ord);
	if (rc == 0 && w->n_filt == w->cap_filt) {
		size_t cap = w->cap_filt ? w->cap_filt * 2 : 64;
		bfi_filter **nf = realloc(w->filt, cap * sizeof *nf);
		if (nf == NULL)
			rc = -ENOMEM;
		else {
			w->filt = nf;
			w->cap_filt = cap;
		}
	}
	if (rc == 0 && ord != w->n_filt) /* sets declared some other way come first */
		rc = writer_fail(w, BFI_E_INPUT, "%s: a build from filters takes only filters", path);
	if (rc) {
		bfi_filter_destroy(&f);
		return rc;
	}
	w->filt[w->n_filt++] = f;
	return 0;
}

size_t writer_file_name(const char *path, const char *const *exts, size_t n_ext,
                        const char **name)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t n = strlen(base);
	n -= zin_suffix(base, n);
	for (size_t i = 0; i < n_ext; i++) {
		size_t e = strlen(exts[i]);
		if (n > e && !strncasecmp(base + n - e, exts[i], e)) {
			n -= e;
			break;
		}
	}
	*name = base;
	return n;
}

size_t writer_doc_name(const char *file, const char **name)
{
	return writer_file_name(file, NULL, 0, name);
}

int writer_new_set(bfi_writer *w, const char *what, const char *name, size_t len, uint32_t *ord)
{
	uint32_t before = w->names.n;
	int rc = writer_set(w, name, len, ord);
	if (rc == 0 && w->names.n == before)
		rc = writer_fail(w, BFI_E_DUP_SET, "%s: set '%.*s' was already added", what, (int)len,
		                 name);
	return rc;
}

int writer_list_files(bfi_writer *w, const char *path, char ***files, size_t *count)
{
	*files = NULL;
	*count = 0;
	DIR *d = opendir(path);
	if (d == NULL)
		return writer_fail(w, -errno, "%s: %s", path, strerror(errno));
	char **list = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;
	struct dirent *e;
	while (rc == 0 && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			char **l = realloc(list, cap * sizeof *l);
			if (l == NULL) {
				rc = -ENOMEM;
				break;
			}
			list = l;
		}
		size_t len = strlen(path) + strlen(e->d_name) + 2;
		if ((list[n] = malloc(len)) == NULL)
			rc = -ENOMEM;
		else
			snprintf(list[n++], len, "%s/%s", path, e->d_name);
	}
	closedir(d);
	if (rc == 0 && n)
		qsort(list, n, sizeof *list, cmp_str);
	for (size_t i = 0; i < n && rc == 0; i++) {
		struct stat st;
		if (stat(list[i], &st) != 0)
			rc = writer_fail(w, -errno, "%s: %s", list[i], strerror(errno));
		else if (!S_ISREG(st.st_mode))
			rc = writer_fail(w, BFI_E_INPUT, "%s: not a regular file", list[i]);
	}
	if (rc) {
		for (size_t i = 0; i < n; i++)
			free(list[i]);
		free(list);
		return rc;
	}
	*files = list;
	*count = n;
	return 0;
}

int writer_each_file(bfi_writer *w, const char *path, const char *phase,
                     int (*fn)(bfi_writer *w, const char *file, void *ctx), void *ctx)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return writer_fail(w, -errno, "%s: %s", path, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return fn(w, path, ctx);
	char **list;
	size_t n;
	int rc = writer_list_files(w, path, &list, &n);
	for (size_t i = 0; i < n && rc == 0; i++) {
		rc = fn(w, list[i], ctx);
		if (rc == 0 && w->opt.progress) /* every file: the callback keeps its own pace */
			w->opt.progress(w->opt.progress_ctx, phase, i + 1, n);
	}
	for (size_t i = 0; i < n; i++)
		free(list[i]);
	free(list);
	return rc;
}

static int each_filter(bfi_writer *w, const char *file, void *ctx)
{
	(void)ctx;
	return add_filter_file(w, file);
}

int bfi_writer_add_filters(bfi_writer *w, const char *path)
{
	if (w == NULL || path == NULL || w->finished)
		return BFI_E_INVALID;
	return writer_each_file(w, path, "filters", each_filter, NULL);
}
