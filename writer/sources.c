/*
 * sources.c - sets read from files: a directory of key files, FASTA and
 * FASTQ files, text, JSON or XML documents, one set a file, read on
 * threads.
 *
 * Each file is read twice. The first time its keys are hashed and counted
 * in the reading thread's table (sorted instead, for a large file), and
 * the set's summary (summary.c) made from its distinct keys; nothing else
 * of them is kept.
 * The blocks are planned from the summaries, and each set's filter is then
 * filled by reading its file again (set_keys), so a build holds one
 * file's keys per thread, not the whole input. A file whose keys do not
 * fit the thread's share of the budget, and every set when a layout needs
 * the keys in one place (bloofi's insertion build), goes to the spool
 * instead, as every other input does. With --min-count a set's keys are
 * counted (count.c) as its file is read, and only those seen often enough
 * go to the spool, which gives them back for the fill: the counting costs
 * more than the spool's sort, so it is done once.
 *
 * The second reading must give the keys the first did: their count and the
 * sum of their hashes are compared, and a file changed between the two
 * stops the build [BFI_E_INPUT] rather than give a snapshot that disagrees
 * with its own catalog.
 *
 * Files named one by one wait in a queue and are read together when the
 * next call adds sets another way, or when the build finishes; a
 * directory is read at once.
 */
#include <errno.h>
#include <fcntl.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bfi_hash.h"
#include "count.h"
#include "internal.h"
#include "sink.h"
#include "sources.h"

#define SINK_BITS 12      /* a thread's table starts with 2^12 slots (64 KiB) */

/* Every key of a key file, one a line, gzip or not, to emit; 0, or an error with err set. */
static int key_file_keys(const bfi_writer *w, const char *file, unsigned k,
                         int (*emit)(void *ctx, const char *key, size_t len), void *ctx,
                         unsigned *deepest, char *err, size_t errlen)
{
	(void)w, (void)k, (void)deepest;
	struct zin z;
	int rc = zin_open(&z, file, err, errlen);
	if (rc)
		return rc;
	size_t cap = 1u << 16;
	char *buf = malloc(cap);
	if (buf == NULL) {
		snprintf(err, errlen, "%s: %s", file, strerror(ENOMEM));
		rc = -ENOMEM;
	} else {
		ssize_t got = zin_read(&z, buf, cap, err, errlen);
		rc = writer_key_lines(&z, file, &buf, &cap, got, err, errlen, emit, ctx);
	}
	free(buf);
	zin_close(&z);
	return rc;
}

static int key_setup(bfi_writer *w, unsigned k)
{
	(void)k;
	return writer_input(w, "keys");
}

static const struct source_kind key_source = {"keys", key_setup, key_file_keys, NULL, NULL, 0};

/* The files of one sources_add call, and what each thread reading them holds. */
struct source_job {
	bfi_writer *w;
	char **files;
	size_t n;
	const struct source_kind *how;
	unsigned k;
	uint32_t *ord; /* UINT32_MAX: another shard's set */
	char (*err)[256];
	int *rc;
	size_t most; /* keys a thread may hold (records of its table or buffer) */
	struct sink **sink; /* each thread's */
	uint8_t **all; /* each thread's sketch of the union, or NULL */
	uint64_t keys, done; /* atomic */
	uint8_t *split; /* read by split.c on every thread, before the others */
};

/*
 * --min-count: the keys of file i counted, and only those seen often
 * enough spooled: the spool gives them back for the rows, so the file is
 * read and counted once, not again at the fill.
 */
static int counted_keys(struct source_job *j, uint64_t i, struct sink *s)
{
	bfi_writer *w = j->w;
	char *err = j->err[i];
	struct counter c;
	s->direct = 0;
	counter_init(&c, w->opt.min_count, (uint64_t)j->most * sizeof(struct rec), w->spool.dir);
	int rc = file_or_group(j->how, w, j->files[i], j->k, counter_key, &c, &s->deepest, err,
	                       sizeof j->err[i]);
	if (rc == 0)
		rc = counter_emit(&c, sink_spool, s);
	if (rc && c.scratch_rc && !err[0])
		snprintf(err, sizeof j->err[i], "%.100s: counting its keys (--min-count) in %.60s: %s",
		         j->files[i], w->spool.dir, bfi_strerror(rc));
	else if (rc == -ENOMEM && !err[0])
		snprintf(err, sizeof j->err[i], "%.200s: counting its keys (--min-count) needs more memory",
		         j->files[i]);
	s->keys = c.keys;
	if (rc == 0 && w->sums.seen)
		w->sums.seen[s->ord] = c.distinct + 1; /* 0: not counted */
	__atomic_fetch_add(&w->count_spilled, c.spilled * sizeof(struct count_rec), __ATOMIC_RELAXED);
	counter_free(&c);
	return rc;
}

static int read_source(void *ctx, uint64_t i, unsigned thread)
{
	struct source_job *j = ctx;
	bfi_writer *w = j->w;
	char *err = j->err[i];
	int rc = 0;
	if (j->split && j->split[i]) {
		rc = j->rc[i]; /* read already */
	} else if (j->ord[i] != UINT32_MAX) {
		struct sink *s = j->sink[thread];
		s->ord = j->ord[i];
		s->n = s->chunked = s->n_buf = 0;
		s->zero = s->sorting = 0;
		s->direct = w->direct;
		s->keys = s->check = 0;
		s->all = j->all ? j->all[thread] : NULL;
		if (w->opt.min_count > 1) {
			rc = counted_keys(j, i, s);
		} else {
			rc = file_or_group(j->how, w, j->files[i], j->k, sink_key, s, &s->deepest, err,
			                   sizeof j->err[i]);
		}
		if (rc == 0 && s->direct) {
			w->sums.distinct[s->ord] = sink_finish(s);
			struct set_src *src = &w->src[s->ord];
			src->how = j->how;
			src->keys = s->keys;
			src->check = s->check;
			if ((src->path = strdup(j->files[i])) == NULL)
				rc = -ENOMEM;
		} else if (rc == 0 && s->chunked) {
			rc = sink_flush(s);
		}
		/*
		 * Emptied for the next file (sorting emptied it already). It keeps
		 * its size: freeing and growing it again for every file cost an
		 * munmap each, and with threads each of those stops the others to
		 * flush their TLBs.
		 */
		if (!s->sorting || !s->direct)
			memset(s->t, 0, ((size_t)1 << s->bits) * sizeof *s->t);
		if (rc && !err[0])
			snprintf(err, sizeof j->err[i], "%.200s: %s", j->files[i], bfi_strerror(rc));
		__atomic_fetch_add(&j->keys, s->keys, __ATOMIC_RELAXED);
	}
	j->rc[i] = rc;
	uint64_t done = __atomic_add_fetch(&j->done, 1, __ATOMIC_RELAXED);
	/* progress from the calling thread only: the callback need not be thread-safe */
	if (rc == 0 && thread == 0 && w->opt.progress)
		w->opt.progress(w->opt.progress_ctx, "sets", done, j->n);
	return rc;
}

/* Is file compressed (its first bytes, as zin.c tells)? 1, 0, or -errno. */
static int is_compressed(const char *file)
{
	if (is_group(file))
		return 0; /* named by its group: nothing to strip */
	int fd = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	unsigned char m[6];
	ssize_t got = read(fd, m, sizeof m);
	int e = errno;
	close(fd);
	if (got < 0)
		return -e;
	return zin_codec_of(m, (size_t)got) != 0;
}

/* Whether each key file is compressed, on the threads: is_compressed's answer in rc[i]. */
static int compressed_flag(void *ctx, uint64_t i, unsigned thread)
{
	struct source_job *j = ctx;
	(void)thread;
	j->rc[i] = is_compressed(j->files[i]);
	return 0;
}

/* Room in the sources and summaries for every set declared so far. */
static int sources_grow(bfi_writer *w)
{
	size_t n = w->names.n;
	int room = writer_room_for_sets(w, n, 0);
	if (room)
		return room;
	if (n > w->cap_src) {
		size_t cap = w->cap_src ? w->cap_src : 64;
		while (cap < n)
			cap *= 2;
		struct set_src *s = realloc(w->src, cap * sizeof *s);
		if (s == NULL)
			return -ENOMEM;
		memset(s + w->cap_src, 0, (cap - w->cap_src) * sizeof *s);
		w->src = s;
		w->cap_src = cap;
	}
	return sums_grow(&w->sums, n);
}

/*
 * The sets of the files: declared first, in name order, so that their
 * ordinals are what one thread would give; then read on the threads.
 */
/*
 * The most keys one of the files may hold, to size the reading. Its size
 * in bytes bounds a FASTA file's k-mers, a text's terms or a key file's
 * keys, and four times that a gzip file's. The largest file by that bound
 * is read from its start (SAMPLE bytes decompressed) and the kind counts
 * the keys there: scaled to the file's size, with a tenth more, that is
 * the estimate when lower. FASTQ's quality lines, and what gzip saves,
 * made the bound twice what reading held, and a build on raw reads read
 * on one thread where it could use two. A file the estimate puts too low
 * only goes to the spool.
 */
#define SAMPLE (1u << 20)

static uint64_t largest_file(char **files, size_t n, const uint8_t *skip,
                             const struct source_kind *how, unsigned k)
{
	uint64_t most = 0, size = 0;
	size_t at = n;
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		if ((skip && skip[i]) || stat(files[i], &st) != 0)
			continue;
		uint64_t keys = (uint64_t)st.st_size;
		if (zin_suffix(files[i], strlen(files[i])))
			keys *= 4;
		if (keys > most) {
			most = keys;
			size = (uint64_t)st.st_size;
			at = i;
		}
	}
	if (at == n || size == 0 || strcmp(files[at], "-") == 0)
		return most;
	struct zin z;
	char err[256];
	char *buf = malloc(SAMPLE);
	if (buf == NULL || zin_open(&z, files[at], err, sizeof err) != 0) {
		free(buf);
		return most;
	}
	size_t got = 0;
	ssize_t r;
	while (got < SAMPLE && (r = zin_read(&z, buf + got, SAMPLE - got, err, sizeof err)) > 0)
		got += (size_t)r;
	/* the file's bytes read for the sample: all of a plain file's, or gzip's input so far */
	uint64_t used = z.state == ZIN_PLAIN ? got : z.offset + z.pos;
	int whole = got < SAMPLE;
	zin_close(&z);
	if (got == 0 || used == 0) {
		free(buf);
		return most;
	}
	uint64_t keys = how->sample_keys ? how->sample_keys(buf, got, k) : got;
	free(buf);
	/* the whole file, if the sample was all of it; else scaled, and a tenth more */
	double est = whole ? (double)keys : (double)keys * ((double)size / (double)used) * 1.1;
	return est < (double)most ? (uint64_t)est + 1 : most;
}

/*
 * Threads for the first reading: as many as asked, or as files, but no
 * more than the budget's quarter for keys being read holds the largest
 * file on each: a file that does not fit its thread's share goes to the
 * spool, sorted and read back later, which costs more than the thread it
 * would have kept busy. Fewer than asked are said (a warning).
 */
static unsigned reading_threads(bfi_writer *w, char **files, size_t n, const uint8_t *split,
                                const struct source_kind *how, unsigned k)
{
	unsigned asked = pool_threads(w->opt.threads);
	size_t whole = n; /* the files the pool reads, a thread each */
	for (size_t i = 0; split && i < n; i++)
		whole -= split[i];
	unsigned threads = whole < asked ? (unsigned)(whole ? whole : 1) : asked;
	uint64_t each = largest_file(files, n, split, how, k) * sizeof(struct rec),
	         room = writer_budget(w) / 4;
	if (threads > 1 && each && room / threads < each) {
		unsigned fit = room / each > 1 ? (unsigned)(room / each) : 1;
		if (fit < threads) {
			writer_warn(w, "--memory holds the keys of %u of these files at once: reading "
			            "them on %u thread%s, not %u (a larger --memory gives more)", fit, fit,
			            fit == 1 ? "" : "s", threads);
			threads = fit;
		}
	}
	return threads;
}

/*
 * The files that would keep one thread busy longer than the rest keep
 * the others (a fair share of every file's bytes, or more), when their
 * kind allows: each is read on every thread (split.c), before the pool
 * reads the others a thread a file. Their flags, or NULL when none.
 */
static uint8_t *split_pick(bfi_writer *w, char **files, size_t n, const struct source_kind *how)
{
	if (!how->splits)
		return NULL;
	unsigned threads = pool_threads(w->opt.threads);
	uint64_t total = 0;
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		if (!is_group(files[i]) && stat(files[i], &st) == 0)
			total += (uint64_t)st.st_size * (zin_suffix(files[i], strlen(files[i])) ? 4 : 1);
	}
	uint8_t *split = NULL;
	for (size_t i = 0; i < n; i++) {
		if (!split_wanted(w, files[i], total / threads))
			continue;
		if (split == NULL && (split = calloc(n, 1)) == NULL)
			return NULL; /* no room to say: then each is read whole */
		split[i] = 1;
	}
	return split;
}

static int split_files(struct source_job *j)
{
	bfi_writer *w = j->w;
	unsigned threads = pool_threads(w->opt.threads);
	for (size_t i = 0; j->split && i < j->n; i++) {
		if (!j->split[i] || j->ord[i] == UINT32_MAX) /* UINT32_MAX: another shard's set */
			continue;
		uint32_t ord = j->ord[i];
		struct split_result res;
		int rc = split_first(w, j->files[i], ord, j->k, threads, &res, j->err[i],
		                     sizeof j->err[i]);
		struct set_src *src = &w->src[ord];
		if (rc == 0 && res.held) {
			src->held = res.held;
			w->held_bytes += res.held->bytes;
		} else if (rc == 0 && res.reread) {
			src->how = j->how;
			src->keys = res.keys;
			src->check = res.check;
			if ((src->path = strdup(j->files[i])) == NULL)
				rc = -ENOMEM;
		}
		j->keys += res.keys;
		j->rc[i] = rc;
		if (rc)
			return writer_fail(w, rc, "%s", j->err[i][0] ? j->err[i] : bfi_strerror(rc));
	}
	return 0;
}

static int add_files(bfi_writer *w, char **files, size_t n, const struct source_kind *how,
                     unsigned k)
{
	uint8_t *split = split_pick(w, files, n, how);
	unsigned threads = reading_threads(w, files, n, split, how, k);
	struct source_job j = {w,    files, n,    how, k,    calloc(n, sizeof *j.ord),
	                       calloc(n, sizeof *j.err), calloc(n, sizeof *j.rc), 0,
	                       calloc(threads, sizeof *j.sink), NULL, 0,    0, split};
	int rc = j.ord && j.err && j.rc && j.sink ? 0 : -ENOMEM;
	/* a quarter of the budget holds keys being read, shared by the threads */
	j.most = (size_t)(writer_budget(w) / 4 / threads / sizeof(struct rec));
	for (unsigned t = 0; rc == 0 && t < threads; t++) {
		struct sink *s = j.sink[t] = calloc(1, sizeof *s);
		if (s == NULL || (s->t = calloc((size_t)1 << SINK_BITS, sizeof *s->t)) == NULL)
			rc = -ENOMEM;
		else {
			s->w = w;
			s->bits = SINK_BITS;
			s->most = j.most;
		}
	}
	if (rc == 0 && w->sums.all && (j.all = calloc(threads, sizeof *j.all)) == NULL)
		rc = -ENOMEM;
	for (unsigned t = 0; rc == 0 && j.all && t < threads; t++)
		if ((j.all[t] = calloc(1, HLL_REGS)) == NULL)
			rc = -ENOMEM;
	if (rc)
		rc = writer_fail(w, rc, "%s", strerror(ENOMEM));
	if (rc == 0 && how->set_name == NULL) /* a key file's name depends on it: an open each */
		pool_run(threads, n, compressed_flag, &j);
	for (size_t i = 0; i < n && rc == 0; i++) {
		const char *name;
		size_t len;
		if (is_group(files[i])) {
			len = group_name(files[i], &name);
		} else if (how->set_name) {
			len = how->set_name(files[i], &name);
		} else {
			int gz = j.rc[i]; /* is_compressed's, from compressed_flag */
			if (gz < 0) {
				rc = writer_fail(w, gz, "%s: %s", files[i], strerror(-gz));
				break;
			}
			len = writer_key_file_name(files[i], gz, &name);
		}
		j.ord[i] = UINT32_MAX;
		if (writer_routed(w, name, len))
			rc = writer_new_set(w, files[i], name, len, &j.ord[i]);
	}
	if (rc == 0 && (rc = sources_grow(w)) != 0 && rc == -ENOMEM)
		rc = writer_fail(w, rc, "%s", strerror(ENOMEM));
	if (rc == 0)
		rc = split_files(&j);
	if (rc == 0 && pool_run(threads, n, read_source, &j) != 0)
		for (size_t i = 0; i < n; i++) /* the first file that failed, in name order */
			if (j.rc[i]) {
				rc = writer_fail(w, j.rc[i], "%s", j.err[i]);
				break;
			}
	for (unsigned t = 0; j.all && t < threads; t++) {
		if (j.all[t])
			hll_merge(w->sums.all, j.all[t], HLL_REGS);
		free(j.all[t]);
	}
	w->keys_in += j.keys;
	if (rc == 0 && w->count_spilled && w->opt.min_count > 1)
		writer_warn(w, "--min-count: the keys' counts passed --memory's share for them, so "
		            "%llu MiB of them went through a scratch file in %s; a larger --memory "
		            "keeps them in memory",
		            (unsigned long long)((w->count_spilled + (1u << 20) - 1) >> 20), w->spool.dir);
	else if (rc == 0 && w->count_spilled) /* only files read on every thread count their keys */
		writer_warn(w, "the distinct keys of the files read on every thread passed --memory's "
		            "share for them, so %llu MiB of their counts went through a scratch file "
		            "in %s, and the fill reads those files again; a larger --memory keeps "
		            "them in memory",
		            (unsigned long long)((w->count_spilled + (1u << 20) - 1) >> 20), w->spool.dir);
	w->count_spilled = 0;
	if (rc == 0 && w->opt.progress)
		w->opt.progress(w->opt.progress_ctx, "sets", n, n);
	for (unsigned t = 0; j.sink && t < threads; t++) {
		if (j.sink[t] && j.sink[t]->deepest > w->path_levels)
			w->path_levels = j.sink[t]->deepest;
		if (j.sink[t]) {
			free(j.sink[t]->t);
			free(j.sink[t]->buf);
		}
		free(j.sink[t]);
	}
	free(j.sink);
#ifdef __GLIBC__
	malloc_trim(0); /* the tables' pages back to the system: the budget counts what is held */
#endif
	free(j.all);
	free(j.split);
	free(j.ord);
	free(j.err);
	free(j.rc);
	return rc;
}

void sources_free(bfi_writer *w)
{
	for (size_t i = 0; i < w->pend.n; i++)
		free(w->pend.files[i]);
	free(w->pend.files);
	w->pend.files = NULL;
	w->pend.n = w->pend.cap = 0;
}

int sources_flush(bfi_writer *w)
{
	struct pending *p = &w->pend;
	if (p->n == 0 || p->flushing)
		return 0;
	p->flushing = 1; /* add_files declares sets, which would flush again */
	stats_begin(w, "reading");
	int rc = add_files(w, p->files, p->n, p->how, p->k);
	stats_end(w);
	p->flushing = 0;
	sources_free(w);
	return rc;
}

/*
 * The public calls that declare sets one at a time read the queued files
 * first, so that every set gets the ordinal it would get had each file
 * been read when it was named.
 */
int bfi_writer_set(bfi_writer *w, const char *name, size_t len, uint32_t *ord)
{
	if (w == NULL || ord == NULL || (name == NULL && len) || w->finished)
		return BFI_E_INVALID;
	int rc = sources_flush(w);
	return rc ? rc : writer_set(w, name, len, ord);
}

int bfi_writer_add_tsv(bfi_writer *w, FILE *f, const char *label)
{
	if (w == NULL || f == NULL)
		return BFI_E_INVALID;
	int rc = sources_flush(w);
	if (rc)
		return rc;
	stats_begin(w, "reading");
	rc = writer_add_tsv(w, f, label);
	stats_end(w);
	return rc;
}

/* path (malloc'd: the queue owns it) at the end of the queue. */
static int pend_one(bfi_writer *w, char *path)
{
	struct pending *p = &w->pend;
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 64;
		char **f = realloc(p->files, cap * sizeof *f);
		if (f == NULL) {
			free(path);
			return writer_fail(w, -ENOMEM, "%s", strerror(ENOMEM));
		}
		p->files = f;
		p->cap = cap;
	}
	p->files[p->n++] = path;
	return 0;
}

int sources_add(bfi_writer *w, const char *path, const struct source_kind *how, unsigned k)
{
	struct stat st;
	if (is_group(path))
		return writer_fail(w, BFI_E_INVALID, "a path may not begin with a newline");
	if (stat(path, &st) != 0)
		return writer_fail(w, -errno, "%s: %s", path, strerror(errno));
	/* files of another kind, or k-mers of another k, are read apart */
	int rc = w->pend.n && (w->pend.how != how || w->pend.k != k) ? sources_flush(w) : 0;
	w->pend.how = how;
	w->pend.k = k;
	if (rc == 0 && !S_ISDIR(st.st_mode)) {
		char *copy = strdup(path);
		rc = copy ? pend_one(w, copy) : writer_fail(w, -ENOMEM, "%s", strerror(ENOMEM));
	} else if (rc == 0) { /* a directory's files, in name order, after those queued */
		char **files = NULL;
		size_t n = 0;
		rc = writer_list_files(w, path, &files, &n);
		for (size_t i = 0; i < n; i++)
			if (rc == 0)
				rc = pend_one(w, files[i]);
			else
				free(files[i]);
		free(files);
		/* a directory is read at once, with what was queued before it, so
		 * its errors come from this call; only files named one by one wait */
		if (rc == 0)
			rc = sources_flush(w);
	}
	return rc;
}

int bfi_writer_add_dir(bfi_writer *w, const char *dir)
{
	if (w == NULL || dir == NULL)
		return BFI_E_INVALID;
	struct stat st;
	if (stat(dir, &st) != 0)
		return writer_fail(w, -errno, "%s: %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return writer_fail(w, -ENOTDIR, "%s: %s", dir, strerror(ENOTDIR));
	int rc = key_setup(w, 0);
	return rc ? rc : sources_add(w, dir, &key_source, 0);
}

const struct source_kind *writer_key_source(void)
{
	return &key_source;
}

int sources_add_group(bfi_writer *w, const char *name, size_t len, const char *const *paths,
                      size_t n, const struct source_kind *how, unsigned k)
{
	size_t size = len + 3;
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		if (paths[i] == NULL || strchr(paths[i], '\n'))
			return writer_fail(w, BFI_E_INVALID, "%.*s: a path holds a newline", (int)len, name);
		if (stat(paths[i], &st) != 0)
			return writer_fail(w, -errno, "%s: %s", paths[i], strerror(errno));
		if (S_ISDIR(st.st_mode))
			return writer_fail(w, -EISDIR, "%s: %s (a group names files)", paths[i],
			                   strerror(EISDIR));
		size += strlen(paths[i]) + 1;
	}
	/* files of another kind, or k-mers of another k, are read apart */
	int rc = w->pend.n && (w->pend.how != how || w->pend.k != k) ? sources_flush(w) : 0;
	if (rc)
		return rc;
	w->pend.how = how;
	w->pend.k = k;
	char *g = malloc(size);
	if (g == NULL)
		return writer_fail(w, -ENOMEM, "%s", strerror(ENOMEM));
	size_t at = (size_t)snprintf(g, size, "\n%.*s", (int)len, name);
	for (size_t i = 0; i < n; i++)
		at += (size_t)snprintf(g + at, size - at, "\n%s", paths[i]);
	return pend_one(w, g);
}
