/* util.c - JSON strings, progress lines and number parsing for bfi. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bfi_writer.h"

#include "tools.h"

size_t utf8_len(const unsigned char *s, size_t len, size_t i)
{
	unsigned c = s[i];
	size_t n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
	if (c > 0xf4 || n == 0 || len - i < n)
		return 0;
	unsigned c1 = s[i + 1];
	/* no overlong forms, no UTF-16 surrogates, nothing past U+10FFFF */
	unsigned lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
	unsigned hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
	if (c1 < lo || c1 > hi)
		return 0;
	for (size_t k = 2; k < n; k++)
		if ((s[i + k] & 0xc0) != 0x80)
			return 0;
	return n;
}

size_t json_piece(const char *s, size_t len, size_t *i, char out[8])
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *u = (const unsigned char *)s;
	unsigned c = u[*i];
	size_t n;
	if (c >= 0x80 && (n = utf8_len(u, len, *i)) != 0) {
		memcpy(out, s + *i, n);
		*i += n;
		return n;
	}
	*i += 1;
	if (c == '"' || c == '\\' || c == '\n' || c == '\t' || c == '\r') {
		out[0] = '\\';
		out[1] = c == '\n' ? 'n' : c == '\t' ? 't' : c == '\r' ? 'r' : (char)c;
		return 2;
	}
	if (c >= 0x20 && c < 0x7f) {
		out[0] = (char)c;
		return 1;
	}
	/* a control byte is U+00XX; a byte that is not UTF-8 is U+DCXX, as
	 * Python's surrogateescape reads it, so the bytes can be recovered */
	memcpy(out, c >= 0x80 ? "\\udc" : "\\u00", 4);
	out[4] = hex[c >> 4];
	out[5] = hex[c & 15];
	return 6;
}

void json_str(FILE *f, const char *s, size_t len)
{
	char piece[8];
	fputc('"', f);
	for (size_t i = 0; i < len;) {
		size_t n = json_piece(s, len, &i, piece);
		fwrite(piece, 1, n, f);
	}
	fputc('"', f);
}

size_t tty_piece(const char *s, size_t len, size_t *i, char out[8])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char c = (unsigned char)s[*i];
	/* C1 controls, U+0080..U+009F, start escape sequences on some terminals too */
	size_t n = c == 0xc2 && len - *i > 1 && (unsigned char)s[*i + 1] >= 0x80 &&
	                   (unsigned char)s[*i + 1] <= 0x9f
	               ? 2
	           : c < 0x20 || c == 0x7f ? 1
	                                   : 0;
	if (n == 0) {
		out[0] = (char)c;
		*i += 1;
		return 1;
	}
	for (size_t k = 0; k < n; k++) {
		c = (unsigned char)s[*i + k];
		memcpy(out + 4 * k, "\\x", 2);
		out[4 * k + 2] = hex[c >> 4];
		out[4 * k + 3] = hex[c & 15];
	}
	*i += n;
	return 4 * n;
}

const char *shown(const char *s, size_t len, char *buf, size_t cap)
{
	char piece[8], tail[40];
	size_t o = 0, i = 0;
	int tl = snprintf(tail, sizeof tail, "... (%zu bytes)", len);
	while (i < len) {
		size_t at = i, n = tty_piece(s, len, &i, piece);
		/* room for this piece, and, if more follows, for the tail */
		if (o + n + 1 > cap || (i < len && o + n + (size_t)tl + 1 > cap)) {
			i = at;
			break;
		}
		memcpy(buf + o, piece, n);
		o += n;
	}
	if (i < len && o + (size_t)tl + 1 <= cap) {
		memcpy(buf + o, tail, (size_t)tl);
		o += (size_t)tl;
	}
	buf[cap ? o : 0] = 0;
	return buf;
}

int meta_str(const bfi_snapshot *s, const char *key, char *buf, size_t len)
{
	const void *v;
	size_t vl;
	if (bfi_catalog_meta(s, key, &v, &vl) != 0 || vl >= len)
		return 0;
	memcpy(buf, v, vl);
	buf[vl] = 0;
	return 1;
}

unsigned meta_uint(const bfi_snapshot *s, const char *key, unsigned dflt)
{
	char num[12], *end;
	if (!meta_str(s, key, num, sizeof num) || !num[0])
		return dflt;
	unsigned long v = strtoul(num, &end, 10);
	return !*end && v <= 65535 ? (unsigned)v : dflt;
}

void text_str(FILE *f, const char *s, size_t len)
{
	if (!isatty(fileno(f))) {
		fwrite(s, 1, len, f);
		return;
	}
	char piece[8];
	for (size_t i = 0; i < len;) {
		size_t n = tty_piece(s, len, &i, piece);
		fwrite(piece, 1, n, f);
	}
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
	p->begun = now();
	p->n_phases = 0;
}

/* A count per second, short: 950, 12.3k, 4.56M. */
static void rate_text(double r, char *out, size_t cap)
{
	if (r >= 1e9)
		snprintf(out, cap, "%.3gG", r / 1e9);
	else if (r >= 1e6)
		snprintf(out, cap, "%.3gM", r / 1e6);
	else if (r >= 1e3)
		snprintf(out, cap, "%.3gk", r / 1e3);
	else
		snprintf(out, cap, "%.0f", r);
}

void progress_show(struct progress *p, const char *phase, uint64_t done, uint64_t total)
{
	if (!p->on)
		return;
	double t = now();
	/* a phase began when another last reported before it, or when bfi began */
	unsigned i = 0;
	while (i < p->n_phases && strncmp(p->phases[i].name, phase, sizeof p->phases[i].name - 1))
		i++;
	if (i == p->n_phases) {
		i = p->n_phases < 8 ? p->n_phases++ : 7;
		snprintf(p->phases[i].name, sizeof p->phases[i].name, "%s", phase);
		p->phases[i].start = p->last_phase ? p->last : p->begun;
	}
	if (p->last_phase == phase && t - p->last < 0.2 && done != total)
		return;
	p->last = t;
	p->last_phase = phase;
	char rate[64] = "";
	double took = t - p->phases[i].start;
	if (done && took >= 0.25) {
		char r[16];
		rate_text((double)done / took, r, sizeof r);
		double left = total && done < total ? (double)(total - done) * took / (double)done : 0;
		if (left >= 120)
			snprintf(rate, sizeof rate, ", %s/s, about %.0f min left", r, left / 60);
		else if (left >= 1)
			snprintf(rate, sizeof rate, ", %s/s, about %.0f s left", r, left);
		else if (total && done < total)
			snprintf(rate, sizeof rate, ", %s/s, under a second left", r);
		else
			snprintf(rate, sizeof rate, ", %s/s", r);
	}
	/* keys read: the unit the writer counts in that phase */
	const char *unit = !strcmp(phase, "reading") ? " keys" : "";
	if (total)
		fprintf(stderr, "\r\033[K%s: %llu / %llu (%.0f%%)%s", phase, (unsigned long long)done,
		        (unsigned long long)total, 100.0 * (double)done / (double)total, rate);
	else if (done)
		fprintf(stderr, "\r\033[K%s: %llu%s%s", phase, (unsigned long long)done, unit, rate);
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

const char *size_arg(uint64_t v, char *buf, size_t cap)
{
	static const char unit[] = "KMGT";
	int u = -1;
	while (u < 3 && (v >= (uint64_t)10 << 10 || (u < 0 && v >= 1024))) {
		v = (v + 1023) >> 10;
		u++;
	}
	if (u < 0)
		snprintf(buf, cap, "%llu", (unsigned long long)v);
	else
		snprintf(buf, cap, "%llu%c", (unsigned long long)v, unit[u]);
	return buf;
}

/* Set when bfi started with descriptor 0 closed (bfi.c). */
int stdin_closed;

int output_ok(const char *cmd, const char *out, char **in, int n)
{
	struct stat so, si;
	for (int i = 0; i < n && stat(out, &so) == 0; i++)
		if (stat(in[i], &si) == 0 && so.st_dev == si.st_dev && so.st_ino == si.st_ino) {
			fprintf(stderr, "bfi %s: -o %s names the input %s; write to a new path\n", cmd, out,
			        in[i]);
			return EXIT_USAGE;
		}
	char why[600];
	if (bfi_output_check(out, why, sizeof why) != 0) {
		fprintf(stderr, "bfi %s: %s\n", cmd, why);
		return EXIT_USAGE;
	}
	return 0;
}

const char *layout_names(unsigned mask, const char *sep, char *buf, size_t cap)
{
	size_t at = 0;
	buf[0] = '\0';
	for (unsigned i = 0, f; (f = bfi_layout_at(i)) != 0; i++)
		if (mask == 0 || (mask & f)) {
			int n = snprintf(buf + at, cap - at, "%s%s", at ? sep : "", bfi_layout_name(f));
			if (n < 0 || (size_t)n >= cap - at)
				break;
			at += (size_t)n;
		}
	return buf;
}

unsigned layout_arg(const char *cmd, const char *arg)
{
	unsigned f = bfi_layout_parse(arg, strlen(arg));
	if (f == 0) {
		char names[200];
		fprintf(stderr, "bfi %s: --layout must be one of %s, not '%s'\n", cmd,
		        layout_names(0, ", ", names, sizeof names), arg);
	}
	return f;
}

int usage_try(const char *cmd)
{
	fprintf(stderr, "Try 'bfi %s --help'.\n", cmd);
	return EXIT_USAGE;
}
