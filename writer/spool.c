/*
 * spool.c - sort and de-duplicate (ord, key hash) records in bounded
 * memory: a buffer sorted in place, spilled as sorted runs when full, and
 * merged on the fly when read back. Reading back can be repeated, which
 * the row-stripe pass uses when the rows do not fit in memory at once.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "internal.h"

static int rec_cmp(const struct rec *a, const struct rec *b)
{
	if (a->ord != b->ord)
		return a->ord < b->ord ? -1 : 1;
	if (a->h1 != b->h1)
		return a->h1 < b->h1 ? -1 : 1;
	if (a->h2 != b->h2)
		return a->h2 < b->h2 ? -1 : 1;
	return 0;
}

static int rec_qcmp(const void *a, const void *b)
{
	return rec_cmp(a, b);
}

/* Sort the buffer and drop repeats; returns the new count. */
static size_t sort_unique(struct rec *r, size_t n)
{
	if (n == 0)
		return 0;
	qsort(r, n, sizeof *r, rec_qcmp);
	size_t o = 1;
	for (size_t i = 1; i < n; i++)
		if (rec_cmp(&r[i], &r[o - 1]) != 0)
			r[o++] = r[i];
	return o;
}

int spool_init(struct spool *sp, size_t cap)
{
	memset(sp, 0, sizeof *sp);
	sp->cap = cap < 1024 ? 1024 : cap;
	sp->buf = malloc(sp->cap * sizeof *sp->buf);
	if (sp->buf == NULL)
		return -ENOMEM;
	const char *t = getenv("TMPDIR");
	snprintf(sp->dir, sizeof sp->dir, "%s", t && *t ? t : "/tmp");
	return 0;
}

static int spill(struct spool *sp)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/bfi-spool-XXXXXX", sp->dir);
	int fd = mkstemp(path);
	if (fd < 0)
		return -errno;
	unlink(path); /* the run lives only as long as this writer */
	FILE *f = fdopen(fd, "w+");
	if (f == NULL) {
		int e = -errno;
		close(fd);
		return e;
	}
	FILE **runs = realloc(sp->runs, (size_t)(sp->nruns + 1) * sizeof *runs);
	if (runs == NULL) {
		fclose(f);
		return -ENOMEM;
	}
	sp->runs = runs;
	sp->runs[sp->nruns++] = f;
	size_t n = sort_unique(sp->buf, sp->n);
	if (fwrite(sp->buf, sizeof *sp->buf, n, f) != n || fflush(f) != 0)
		return errno ? -errno : -EIO;
	sp->n = 0;
	return 0;
}

int spool_add(struct spool *sp, const struct rec *r)
{
	if (sp->n == sp->cap) {
		int rc = spill(sp);
		if (rc)
			return rc;
	}
	sp->buf[sp->n++] = *r;
	sp->added++;
	return 0;
}

int spool_seal(struct spool *sp)
{
	sp->n = sort_unique(sp->buf, sp->n);
	return 0;
}

void spool_free(struct spool *sp)
{
	for (int i = 0; i < sp->nruns; i++)
		fclose(sp->runs[i]);
	free(sp->runs);
	free(sp->buf);
	memset(sp, 0, sizeof *sp);
}

/* Source i < nruns is run i; source nruns is the in-memory buffer. */
static int pull(struct spool_iter *it, int i)
{
	struct spool *sp = it->sp;
	if (i == sp->nruns) {
		if (it->pos < sp->n) {
			it->heads[i] = sp->buf[it->pos++];
			return it->live[i] = 1;
		}
		return it->live[i] = 0;
	}
	if (fread(&it->heads[i], sizeof it->heads[i], 1, sp->runs[i]) == 1)
		return it->live[i] = 1;
	it->live[i] = 0;
	return ferror(sp->runs[i]) ? -EIO : 0;
}

int spool_iter_begin(struct spool_iter *it, struct spool *sp)
{
	memset(it, 0, sizeof *it);
	it->sp = sp;
	it->heads = calloc((size_t)sp->nruns + 1, sizeof *it->heads);
	it->live = calloc((size_t)sp->nruns + 1, sizeof *it->live);
	if (it->heads == NULL || it->live == NULL)
		return -ENOMEM;
	for (int i = 0; i <= sp->nruns; i++) {
		if (i < sp->nruns && fseeko(sp->runs[i], 0, SEEK_SET) != 0)
			return -errno;
		int rc = pull(it, i);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int spool_iter_next(struct spool_iter *it, struct rec *r)
{
	for (;;) {
		int best = -1;
		for (int i = 0; i <= it->sp->nruns; i++)
			if (it->live[i] && (best < 0 || rec_cmp(&it->heads[i], &it->heads[best]) < 0))
				best = i;
		if (best < 0)
			return 0;
		*r = it->heads[best];
		int rc = pull(it, best);
		if (rc < 0)
			return rc;
		/* Runs are unique on their own; repeats come from different runs. */
		if (it->have_last && rec_cmp(r, &it->last) == 0)
			continue;
		it->last = *r;
		it->have_last = 1;
		return 1;
	}
}

void spool_iter_end(struct spool_iter *it)
{
	free(it->heads);
	free(it->live);
	memset(it, 0, sizeof *it);
}
