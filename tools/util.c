/* util.c - JSON strings, progress lines and number parsing for bfi. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tools.h"

void json_str(FILE *f, const char *s, size_t len)
{
	fputc('"', f);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c == '\r')
			fputs("\\r", f);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f); /* UTF-8 passes through; other bytes are the caller's input */
	}
	fputc('"', f);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void progress_init(struct progress *p, int quiet)
{
	p->on = !quiet && isatty(2);
	p->last = 0;
	p->last_phase = NULL;
}

void progress_show(struct progress *p, const char *phase, uint64_t done, uint64_t total)
{
	if (!p->on)
		return;
	double t = now();
	if (p->last_phase == phase && t - p->last < 0.2 && done != total)
		return;
	p->last = t;
	p->last_phase = phase;
	if (total)
		fprintf(stderr, "\r\033[K%s: %llu / %llu (%.0f%%)", phase, (unsigned long long)done,
		        (unsigned long long)total, 100.0 * (double)done / (double)total);
	else if (done)
		fprintf(stderr, "\r\033[K%s: %llu", phase, (unsigned long long)done);
	else
		fprintf(stderr, "\r\033[K%s...", phase);
}

void progress_done(struct progress *p)
{
	if (p->on && p->last_phase)
		fputs("\r\033[K", stderr);
	p->last_phase = NULL;
}

int parse_size(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || s[0] == '-')
		return -1;
	unsigned shift = 0;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	}
	if (*end || (shift && v > (~0ull >> shift)))
		return -1;
	*out = v << shift;
	return 0;
}
