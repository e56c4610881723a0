/*
 * fuzz_serve.c - any bytes as a request to bfi serve, answered by
 * serve_answer() as the HTTP layer would hand it over: the first byte
 * picks the method, the bytes up to the first newline are the URL (its
 * query string split into arguments and %-decoded, as libmicrohttpd
 * does), and the rest is the body. The served snapshot is built once:
 * twelve small sets with flat, tree and RAMBO layouts. Every reply must be
 * JSON or the metrics page, with a status of 200, 4xx, 503 or 504.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bfi.h"
#include "bfi_writer.h"
#include "fuzz.h"
#include "serve.h"

const char *fuzz_name = "serve";

static struct server sv;
static struct slot slot;

static void done(void)
{
	slots_close(&sv);
	serve_thread_done();
}

static int setup(void)
{
	static int state; /* 0 not yet, 1 ready, -1 failed */
	if (state)
		return state;
	char path[600];
	snprintf(path, sizeof path, "%s/k", fuzz_dir());
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	o.layouts = BFI_BUILD_FLAT | BFI_BUILD_TREE | BFI_BUILD_RAMBO;
	o.bits = 512;
	o.hashes = 3;
	o.cells = 4;
	o.reps = 2;
	o.fanout = 4;
	bfi_writer *w = NULL;
	state = -1;
	if (bfi_writer_create(&o, &w) == 0) {
		int ok = 1;
		for (unsigned s = 0; s < 12 && ok; s++) {
			char name[8], key[8];
			uint32_t ord;
			ok = bfi_writer_set(w, name, (size_t)snprintf(name, sizeof name, "s%u", s), &ord) == 0;
			for (unsigned i = 0; ok && i < 6; i++)
				ok = bfi_writer_key(w, ord, key, (size_t)snprintf(key, sizeof key, "k%u", s + i)) ==
				     0;
		}
		if (ok && bfi_writer_finish(w, path, NULL) == 0)
			state = 1;
	}
	bfi_writer_destroy(&w);
	if (state < 0)
		return state;
	static char name[] = "k";
	static char where[600];
	memcpy(where, path, sizeof where);
	slot.name = name;
	slot.path = where;
	pthread_mutex_init(&slot.mu, NULL);
	sv.slots = &slot;
	sv.n_slots = 1;
	sv.max_body = 1 << 16;
	sv.max_keys = 256;
	sv.max_reply = 1 << 16;
	sv.timeout = 5;
	char why[600], note[400];
	if (slot_reload(&sv, &slot, why, sizeof why, note, sizeof note) != 1)
		return state = -1;
	atomic_store(&sv.ready, 1);
	atexit(done);
	return state;
}

static int hex(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
	                                      : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* %XX and + decoded in place: the new length */
static size_t unescape(char *s, size_t n)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '%' && i + 2 < n && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
			s[o++] = (char)(hex(s[i + 1]) * 16 + hex(s[i + 2]));
			i += 2;
		} else {
			s[o++] = s[i] == '+' ? ' ' : s[i];
		}
	}
	return o;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0 || setup() < 0)
		return 0;
	static const char *const methods[] = {"GET", "POST", "HEAD", "PUT", "DELETE"};
	const char *method = methods[data[0] % 5];
	const uint8_t *nl = memchr(data + 1, '\n', size - 1);
	size_t ul = nl ? (size_t)(nl - data - 1) : size - 1;
	char *url = malloc(ul + 1), *body = NULL;
	size_t bl = nl ? size - ul - 2 : 0;
	/* at most one argument a byte of the URL, and one more */
	const char **names = calloc(ul + 2, sizeof *names), **values = calloc(ul + 2, sizeof *values);
	size_t *lens = calloc(ul + 2, sizeof *lens), n = 0;
	if (bl && (body = malloc(bl)) != NULL)
		memcpy(body, nl + 1, bl);
	if (url && names && values && lens && (bl == 0 || body)) {
		memcpy(url, data + 1, ul);
		url[ul] = 0;
		int url_nul = strnlen(url, ul) < ul; /* what the HTTP layer notes, and answers 400 */
		url[strnlen(url, ul)] = 0; /* the path ends at a NUL, as a C string does */
		char *q = strchr(url, '?');
		if (q) { /* key=value&... : each name a C string, each value binary-safe */
			*q++ = 0;
			for (char *a = q; a && *a; n++) {
				char *amp = strchr(a, '&');
				if (amp)
					*amp = 0;
				char *eq = strchr(a, '=');
				if (eq)
					*eq = 0;
				a[unescape(a, strlen(a))] = 0;
				names[n] = a;
				values[n] = eq ? eq + 1 : "";
				lens[n] = eq ? unescape(eq + 1, strlen(eq + 1)) : 0;
				a = amp ? amp + 1 : NULL;
			}
		}
		url[unescape(url, strlen(url))] = 0;
		/* the method byte's high bits: what the HTTP layer found (tools/serve/http.c) */
		struct request rq = {.method = method, .url = url, .arg_names = names,
		                     .arg_values = values, .arg_lens = lens, .n_args = n, .body = body,
		                     .body_len = bl, .body_too_large = bl > sv.max_body,
		                     .url_nul = url_nul && (data[0] & 0x40),
		                     .too_many_args = (data[0] & 0x80) != 0,
		                     .length_twice = (data[0] & 0x20) != 0 && (data[0] & 0x10) != 0};
		struct reply rp;
		serve_answer(&sv, &rq, &rp);
		int ok = (rp.status == 200 || (rp.status >= 400 && rp.status < 500) || rp.status == 503 ||
		          rp.status == 504) &&
		         rp.body && rp.len > 0;
		if (!ok)
			abort(); /* a 500, or no body: a bug */
		if (strcmp(rp.type, "application/json") == 0 && rp.body[0] != '{')
			abort();
		free(rp.body);
	}
	free(url);
	free(body);
	free(names);
	free(values);
	free(lens);
	return 0;
}
