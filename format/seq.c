/*
 * seq.c - FASTA and FASTQ records, plain or gzip (spec/format.md, "k-mer
 * keys"), for the writer, which makes sets of them, and for queries, which
 * ask with them. Records are header, sequence lines, and for FASTQ a '+'
 * line, then quality lines until they hold as many characters as the
 * sequence did.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "bfi_seq.h"
#include "seqcut.h"
#include "zin.h"

enum { S_START, S_HEADER, S_SEQ, S_COMMENT, S_PLUS, S_QUAL };

struct seqread {
	const char *path;
	bfi_seq_record_fn fn;
	void *ctx;
	char *err;
	size_t errlen;
	int state, fastq, at_line_start, in_record;
	uint64_t qual_len, line;
	char id[512];
	size_t id_len;
	int id_done;
	char *seq; /* the record's sequence bytes, blanks and line ends left out */
	size_t seq_n, seq_cap;
};

static int fail(struct seqread *r, uint64_t line, const char *what)
{
	if (r->err && r->errlen) {
		if (line)
			snprintf(r->err, r->errlen, "%s:%llu: %s", r->path, (unsigned long long)line, what);
		else
			snprintf(r->err, r->errlen, "%s: %s", r->path, what);
	}
	return BFI_E_INPUT;
}

/* The record is whole: hand it over. */
static int end_record(struct seqread *r)
{
	if (!r->in_record)
		return 0;
	r->in_record = 0;
	int rc = r->fn(r->ctx, r->id, r->id_len, r->seq ? r->seq : "", r->seq_n);
	r->seq_n = 0;
	return rc;
}

static int append(struct seqread *r, char c)
{
	if (r->seq_n == r->seq_cap) {
		size_t cap = r->seq_cap ? r->seq_cap * 2 : 1u << 16;
		char *ns = realloc(r->seq, cap);
		if (ns == NULL)
			return -ENOMEM;
		r->seq = ns;
		r->seq_cap = cap;
	}
	r->seq[r->seq_n++] = c;
	return 0;
}

static int feed(struct seqread *r, const char *buf, size_t n)
{
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		char c = buf[i];
		int start = r->at_line_start;
		r->at_line_start = c == '\n';
		if (c == '\n')
			r->line++;
		/* what a line starts with decides what it is, outside headers and quality */
		if (start && (r->state == S_START || r->state == S_SEQ)) {
			if (c == '>' || c == '@') {
				if (r->state == S_SEQ && r->fastq)
					return fail(r, r->line + 1, "FASTQ record without a '+' line and quality");
				if ((rc = end_record(r)))
					return rc;
				r->fastq = c == '@';
				r->state = S_HEADER;
				r->id_len = 0;
				r->id_done = 0;
				continue;
			}
			if (c == '+' && r->fastq) {
				r->state = S_PLUS; /* the rest of the line is ignored */
				continue;
			}
			if (c == ';' && !r->fastq) {
				r->state = S_COMMENT; /* an old FASTA comment line */
				continue;
			}
			if (r->state == S_START && c != '\n' && c != '\r' && c != ' ' && c != '\t')
				return fail(r, r->line + 1, "not FASTA or FASTQ (a record starts with '>' or '@')");
		}
		switch (r->state) {
		case S_START:
			break;
		case S_HEADER:
			if (c == '\n') {
				r->state = S_SEQ;
				r->in_record = 1;
				r->seq_n = 0;
			} else if (!r->id_done) {
				if (c == ' ' || c == '\t' || c == '\r')
					r->id_done = r->id_len > 0;
				else if (r->id_len < sizeof r->id)
					r->id[r->id_len++] = c;
				else
					r->id_done = 1; /* ids are cut at 512 bytes */
			}
			break;
		case S_COMMENT:
			if (c == '\n')
				r->state = S_SEQ;
			break;
		case S_PLUS:
			if (c == '\n') {
				r->state = S_QUAL;
				r->qual_len = 0;
			}
			break;
		case S_QUAL:
			if (c != '\n' && c != '\r')
				r->qual_len++;
			else if (c == '\n' && r->qual_len > r->seq_n)
				return fail(r, r->line, "the FASTQ quality is longer than its sequence");
			else if (c == '\n' && r->qual_len == r->seq_n) {
				r->state = S_START;
				rc = end_record(r);
			}
			break;
		case S_SEQ:
			if (c != '\n' && c != '\r' && c != ' ' && c != '\t')
				rc = append(r, c);
			break;
		}
	}
	return rc;
}

/* The stream's end: a last line without its newline, and records cut short. */
static int finish(struct seqread *r)
{
	int rc = 0;
	if (r->state == S_HEADER)
		rc = feed(r, "\n", 1);
	if (rc == 0 && r->fastq && (r->state == S_SEQ || r->state == S_PLUS))
		rc = fail(r, 0, "the last FASTQ record has no quality");
	if (rc == 0 && r->state == S_QUAL && r->qual_len < r->seq_n)
		rc = fail(r, 0, "the last FASTQ record's quality is short");
	return rc ? rc : end_record(r);
}

/* r at a stream's start (a part's callers move it on). */
static void reader_init(struct seqread *r, const char *path, bfi_seq_record_fn fn, void *ctx,
                        char *err, size_t errlen)
{
	memset(r, 0, sizeof *r);
	r->path = strcmp(path, "-") ? path : "(stdin)";
	r->fn = fn;
	r->ctx = ctx;
	r->err = err;
	r->errlen = errlen;
	r->at_line_start = 1;
	r->state = S_START;
	if (err && errlen)
		err[0] = '\0';
}

int bfi_seq_read(const char *path, bfi_seq_record_fn fn, void *ctx, char *err, size_t errlen)
{
	if (path == NULL || fn == NULL)
		return BFI_E_INVALID;
	struct seqread r;
	reader_init(&r, path, fn, ctx, err, errlen);
	struct zin z;
	char zerr[512];
	int rc = zin_open(&z, path, zerr, sizeof zerr);
	if (rc) {
		if (err && errlen)
			snprintf(err, errlen, "%s", zerr);
		return rc;
	}
	char *buf = malloc(1u << 20);
	rc = buf ? 0 : -ENOMEM;
	while (rc == 0) {
		ssize_t got = zin_read(&z, buf, 1u << 20, zerr, sizeof zerr);
		if (got < 0) {
			rc = (int)got;
			if (err && errlen)
				snprintf(err, errlen, "%s", zerr);
			break;
		}
		if (got == 0)
			break;
		rc = feed(&r, buf, (size_t)got);
	}
	if (rc == 0)
		rc = finish(&r);
	free(buf);
	free(r.seq);
	zin_close(&z);
	return rc;
}

/*
 * The cutter: feed's states at line starts, a line at a time. Headers,
 * '+' lines and comments end at their newline, so a line start is only
 * ever between records, in a sequence or in a quality; the quality's
 * length is all that needs counting.
 */
void seq_cutter_init(struct seq_cutter *c, unsigned k, struct seq_at *first)
{
	memset(c, 0, sizeof *c);
	c->state = S_START;
	c->k = k;
	memset(first, 0, sizeof *first);
}

int seq_cutter_may_cut(const struct seq_cutter *c)
{
	return !c->failed && (c->state == S_START || (c->state == S_SEQ && c->in_record && !c->fastq));
}

static int blank(char c)
{
	return c == '\n' || c == '\r' || c == ' ' || c == '\t';
}

int seq_cutter_line(struct seq_cutter *c, const char *p, size_t n)
{
	c->line++;
	if (c->failed || n == 0)
		return c->failed;
	char first = p[0];
	if (c->state == S_START || c->state == S_SEQ) {
		if (first == '>' || first == '@') {
			if (c->state == S_SEQ && c->fastq)
				return c->failed = 1; /* a FASTQ record without its quality */
			c->fastq = first == '@';
			c->state = S_SEQ; /* after the header's newline */
			c->in_record = 1;
			c->seq_n = 0;
		} else if (first == '+' && c->fastq) {
			c->state = S_QUAL;
			c->qual_n = 0;
		} else if (first == ';' && !c->fastq) {
			c->state = S_SEQ; /* a comment, then the sequence goes on */
		} else if (c->state == S_START) {
			if (!blank(first))
				return c->failed = 1; /* not FASTA or FASTQ */
		} else if (c->fastq) { /* only FASTQ needs the sequence's length */
			for (size_t i = 0; i < n; i++)
				c->seq_n += !blank(p[i]);
		}
		return 0;
	}
	/* S_QUAL: every byte but line ends counts */
	for (size_t i = 0; i < n; i++)
		c->qual_n += p[i] != '\n' && p[i] != '\r';
	if (c->qual_n > c->seq_n)
		return c->failed = 1;
	if (c->qual_n == c->seq_n) {
		c->state = S_START;
		c->in_record = 0;
		c->seq_n = 0;
	}
	return 0;
}

void seq_cutter_at(const struct seq_cutter *c, const char *d, size_t len,
                   const struct seq_at *at0, struct seq_at *at)
{
	memset(at, 0, sizeof *at);
	at->line = c->line;
	at->fastq = c->fastq;
	at->in_seq = c->state == S_SEQ && c->in_record;
	if (!at->in_seq)
		return;
	/* the record's last k - 1 bases: its lines back from the cut, comments left out */
	unsigned want = c->k - 1, got = 0;
	char rev[BFI_KMER_MAX];
	size_t end = len;
	int header = 0;
	while (got < want && end > 0 && !header) {
		size_t start = end - 1;
		while (start > 0 && d[start - 1] != '\n')
			start--;
		if (d[start] == '>' || d[start] == '@')
			header = 1; /* the record begins here */
		else if (d[start] != ';')
			for (size_t i = end; i > start && got < want; i--)
				if (!blank(d[i - 1]))
					rev[got++] = d[i - 1];
		end = start;
	}
	unsigned from0 = 0;
	if (got < want && !header && at0->in_seq) /* the part began within the record */
		from0 = at0->tail_n < want - got ? at0->tail_n : want - got;
	memcpy(at->tail, at0->tail + at0->tail_n - from0, from0);
	for (unsigned i = 0; i < got; i++)
		at->tail[from0 + i] = rev[got - 1 - i];
	at->tail_n = from0 + got;
}

int seq_parse_part(const struct seq_at *at, const char *buf, size_t n, int last,
                   const char *path, bfi_seq_record_fn fn, void *ctx, char *err, size_t errlen)
{
	struct seqread r;
	reader_init(&r, path, fn, ctx, err, errlen);
	r.line = at->line;
	r.fastq = at->fastq;
	r.state = at->in_seq ? S_SEQ : S_START;
	r.in_record = at->in_seq;
	int rc = 0;
	for (unsigned i = 0; i < at->tail_n && rc == 0; i++)
		rc = append(&r, at->tail[i]);
	if (rc == 0)
		rc = feed(&r, buf, n);
	if (rc == 0)
		rc = last ? finish(&r) : end_record(&r); /* a record cut here: its part */
	free(r.seq);
	return rc;
}
