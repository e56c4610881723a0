/*
 * out.c - the answers of bfi query, written to standard output through a
 * buffer of whole lines (or, for bfi serve, kept in it).
 *
 * A line is committed when it ends; only committed lines are ever written.
 * So if the snapshot changes under a query and the process must stop
 * (guard.c), the answers already computed go out whole, with write(2),
 * which a signal handler may call, and a half-built line never does.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools.h"

#define OUT_FLUSH (1u << 16) /* write once this much is committed: 64 KiB writes */
/* A thread's buffer kept between held answers: larger ones are freed, not kept for the next. */
#define OUT_KEEP (1u << 20)

_Thread_local struct out answers;

void out_init(int line_flush)
{
	answers.buf = NULL;
	answers.len = answers.cap = answers.committed = 0;
	answers.line_flush = line_flush;
	answers.err = 0;
	answers.hold = 0;
}

void out_hold(void)
{
	answers.len = answers.committed = 0;
	answers.line_flush = answers.tty = 0;
	answers.err = 0;
	answers.hold = 1;
}

static int write_all(const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(STDOUT_FILENO, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? errno : EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int out_flush(void)
{
	if (answers.hold)
		return answers.err;
	if (answers.err == 0 && answers.committed)
		answers.err = write_all(answers.buf, answers.committed);
	/* the uncommitted part line moves to the front */
	if (answers.len > answers.committed)
		memmove(answers.buf, answers.buf + answers.committed, answers.len - answers.committed);
	answers.len -= answers.committed;
	answers.committed = 0;
	return answers.err;
}

void out_emergency(void)
{
	if (answers.err == 0 && answers.committed && !answers.hold)
		(void)write_all(answers.buf, answers.committed);
	answers.committed = 0;
}

/* Room for n more bytes; on failure the line is cut short, and err says so. */
static int reserve(size_t n)
{
	if (answers.limit && (n > answers.limit || answers.len > answers.limit - n)) {
		if (answers.err == 0)
			answers.err = EFBIG; /* held answers past their limit: the reply is refused */
		return 0;
	}
	if (answers.cap - answers.len >= n)
		return 1;
	size_t want = answers.cap ? answers.cap : answers.next_cap ? answers.next_cap : OUT_FLUSH * 2;
	while (want - answers.len < n) {
		if (want > ((size_t)-1) / 2)
			return 0;
		want *= 2;
	}
	if (answers.limit && want > answers.limit)
		want = answers.limit; /* len + n fits, as checked */
	char *p = realloc(answers.buf, want);
	if (p == NULL) {
		if (answers.err == 0)
			answers.err = ENOMEM;
		return 0;
	}
	answers.buf = p;
	answers.cap = want;
	return 1;
}

void out_put(const void *p, size_t n)
{
	if (n && reserve(n)) {
		memcpy(answers.buf + answers.len, p, n);
		answers.len += n;
	}
}

char *out_room(size_t n)
{
	return reserve(n) ? answers.buf + answers.len : NULL;
}

void out_wrote(size_t k)
{
	answers.len += k;
}

char *out_take(size_t *len)
{
	char *b = answers.buf;
	*len = answers.len;
	answers.next_cap = answers.cap < OUT_KEEP ? answers.cap : OUT_KEEP;
	answers.buf = NULL;
	answers.len = answers.cap = answers.committed = 0;
	return b;
}

void out_str(const char *s)
{
	out_put(s, strlen(s));
}

void out_char(char c)
{
	if ((answers.len < answers.cap && (answers.limit == 0 || answers.len < answers.limit)) ||
	    reserve(1))
		answers.buf[answers.len++] = c;
}

void out_uint(uint64_t v)
{
	char b[20];
	size_t i = sizeof b;
	do
		b[--i] = (char)('0' + v % 10);
	while (v /= 10);
	out_put(b + i, sizeof b - i);
}

void out_json(const char *s, size_t len)
{
	char piece[8];
	out_char('"');
	for (size_t i = 0; i < len;) {
		/* a run of printable ASCII other than " and \ goes out as it is */
		size_t j = i;
		while (j < len && (unsigned char)s[j] >= 0x20 && (unsigned char)s[j] < 0x7f && s[j] != '"' &&
		       s[j] != '\\')
			j++;
		if (j > i) {
			out_put(s + i, j - i);
			i = j;
			continue;
		}
		size_t n = json_piece(s, len, &i, piece);
		out_put(piece, n);
	}
	out_char('"');
}

void out_end_line(void)
{
	answers.committed = answers.len;
	if (!answers.hold && (answers.line_flush || answers.committed >= OUT_FLUSH))
		(void)out_flush();
}

void out_drop(void)
{
	if (answers.cap > OUT_KEEP)
		out_free();
	answers.len = answers.committed = 0;
}

void out_free(void)
{
	free(answers.buf);
	answers.buf = NULL;
	answers.len = answers.cap = answers.committed = 0;
}

void out_text(const char *s, size_t len)
{
	if (!answers.tty) {
		out_put(s, len);
		return;
	}
	char piece[8];
	for (size_t i = 0; i < len;) {
		size_t n = tty_piece(s, len, &i, piece);
		out_put(piece, n);
	}
}

int stdout_close(const char *cmd)
{
	int e = 0;
	if (fflush(stdout) != 0)
		e = errno;
	if (e == 0 && ferror(stdout))
		e = -1; /* failed earlier: the reason is gone */
	if (e == 0 && answers.err)
		e = answers.err;
	if (e == 0)
		return 0;
	if (e > 0)
		fprintf(stderr, "%s: standard output: %s\n", cmd, strerror(e));
	else
		fprintf(stderr, "%s: standard output: write error\n", cmd);
	return EXIT_USAGE;
}
