/* query_in.c - bfi query's input: lines of queries and FASTA records. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bfi_seq.h"
#include "query.h"
#include "tools.h"

#define CHECK_NS 50000000 /* a record that waited longer than this is checked for */

int on_fasta_query(void *ctx, const char *id, size_t id_len, const char *seq, size_t len)
{
	struct fasta_ctx *fc = ctx;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if ((now.tv_sec - fc->checked.tv_sec) * 1000000000ll + (now.tv_nsec - fc->checked.tv_nsec) >
	    CHECK_NS) { /* records may come slowly, through a pipe: were the files changed meanwhile? */
		int rc = bfi_check_files(fc->s);
		if (rc)
			return rc;
		fc->checked = now;
	}
	if (fc->qp)
		return qpool_add(fc->qp, seq, len, id, id_len);
	if (fc->bt) /* --scan: the record waits for its batch */
		return batcher_scan_add(fc->s, fc->o, fc->bt, seq, len, id, id_len);
	struct query q = {(char *)seq, len, NULL, id, id_len, 0};
	return query_run_one(fc->s, fc->res, fc->o, &q);
}

/*
 * Lines of a file descriptor, read a block at a time: getline took a
 * sixth of a batch of genome keys. read(2), not fread, so that a line
 * typed at a terminal is answered as it is typed, not once a block has
 * filled. A line is valid until the next call.
 */

/*
 * The next line of fd, without its newline and a carriage return before
 * it: 1 with *line and *len, 0 at the end, -errno on a read error or
 * -ENOMEM. A last line without a newline counts.
 */
int next_line(struct lines *r, int fd, char **line, size_t *len)
{
	for (;;) {
		char *at = r->buf + r->start;
		char *nl = r->end > r->start ? memchr(at, '\n', r->end - r->start) : NULL;
		if (nl || (r->eof && r->end > r->start)) {
			size_t l = nl ? (size_t)(nl - at) : r->end - r->start;
			r->start += l + (nl != NULL);
			if (l && at[l - 1] == '\r')
				l--;
			*line = at;
			*len = l;
			return 1;
		}
		if (r->eof)
			return 0;
		if (r->start) { /* keep the part line at the front */
			memmove(r->buf, r->buf + r->start, r->end - r->start);
			r->end -= r->start;
			r->start = 0;
		}
		if (r->end == r->cap) {
			size_t want = r->cap ? 2 * r->cap : (size_t)1 << 16;
			char *p = want > r->cap ? realloc(r->buf, want) : NULL;
			if (p == NULL)
				return -ENOMEM;
			r->buf = p;
			r->cap = want;
		}
		/* every answer made so far goes out before the read, which may wait for
		 * the next query: one write per block of input, not per answer, yet a
		 * program that writes a query and waits for its answer gets it */
		if (r->drain) {
			/* a failure stops the input here: the pool keeps it for qpool_end */
			if (qpool_drain(r->drain) != 0)
				return 0;
		} else {
			(void)out_flush();
		}
		ssize_t got = read(fd, r->buf + r->end, r->cap - r->end);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -errno;
		/* a read may wait for hours (a pipe, a terminal): before the lines
		 * it brought are answered, the files must be as they were opened */
		int changed = r->watch ? bfi_check_files(r->watch) : 0;
		if (changed)
			return changed;
		r->end += (size_t)got;
		r->eof = got == 0;
	}
}

/* --whole: each record's sequence, joined by newlines, which break k-mers. */
struct joined {
	char *buf;
	size_t len, cap;
};

static int join_record(void *ctx, const char *id, size_t id_len, const char *seq, size_t len)
{
	(void)id;
	(void)id_len;
	struct joined *j = ctx;
	if (j->len + len + 1 > j->cap) {
		size_t cap = j->cap ? j->cap : (size_t)1 << 20;
		while (cap < j->len + len + 1)
			cap *= 2;
		char *b = realloc(j->buf, cap);
		if (b == NULL)
			return -ENOMEM;
		j->buf = b;
		j->cap = cap;
	}
	memcpy(j->buf + j->len, seq, len);
	j->len += len;
	j->buf[j->len++] = '\n';
	return 0;
}

int whole_query(const bfi_snapshot *s, bfi_result *res, const struct ask *o, const char *path,
                int *status)
{
	struct joined j = {0};
	char err[512];
	int rc = bfi_seq_read(path, join_record, &j, err, sizeof err);
	if (rc && err[0]) {
		fprintf(stderr, "bfi query: %s\n", err);
		free(j.buf);
		*status = EXIT_USAGE;
		return 0;
	}
	struct query q = {j.buf ? j.buf : "", j.len, NULL, path, strlen(path), 0};
	if (rc == 0)
		rc = query_run_one(s, res, o, &q);
	free(j.buf);
	return rc;
}

/*
 * Standard input copied whole into a file in memory, which each snapshot
 * asked reads from the start: its descriptor, or -1 after saying why.
 */
int stdin_again(void)
{
	int fd = memfd_create("bfi-query-input", MFD_CLOEXEC);
	char buf[1 << 16];
	ssize_t got;
	while (fd >= 0 && (got = read(STDIN_FILENO, buf, sizeof buf)) != 0) {
		if (got < 0 && errno == EINTR)
			continue;
		for (ssize_t at = 0, w; got > 0 && at < got; at += w)
			if ((w = write(fd, buf + at, (size_t)(got - at))) < 0 && errno != EINTR) {
				got = -1;
				break;
			} else if (w < 0) {
				w = 0;
			}
		if (got < 0) {
			close(fd);
			fd = -1;
		}
	}
	if (fd < 0)
		perror("bfi query: standard input");
	return fd;
}
