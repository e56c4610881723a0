/* reply.c - bfi serve's replies built: a growing buffer, JSON strings, and {"error", "code"}. */
#include <errno.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "api.h"
#include "serve.h"
#include "tools.h"

void sb_put(struct sbuf *b, const void *s, size_t n)
{
	if (b->err)
		return;
	if (b->cap - b->len < n) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap - b->len < n) {
			if (cap > SIZE_MAX / 2) {
				b->err = 1;
				return;
			}
			cap *= 2;
		}
		char *p = realloc(b->p, cap);
		if (p == NULL) {
			b->err = 1;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

void sb_str(struct sbuf *b, const char *s)
{
	sb_put(b, s, strlen(s));
}

void sb_json(struct sbuf *b, const char *s, size_t len)
{
	char piece[8];
	sb_put(b, "\"", 1);
	for (size_t i = 0; i < len;) {
		size_t n = json_piece(s, len, &i, piece);
		sb_put(b, piece, n);
	}
	sb_put(b, "\"", 1);
}

void reply_take(struct reply *rp, int status, struct sbuf *b, const char *type)
{
	if (b->err) {
		free(b->p);
		b->p = strdup("{\"error\": \"out of memory\", \"code\": \"internal\"}");
		b->len = b->p ? strlen(b->p) : 0;
		status = 500;
		type = "application/json";
	}
	rp->status = status;
	rp->body = b->p;
	rp->len = b->len;
	rp->type = type;
}

/* {"error": WHY, "code": CODE} */
void reply_error(struct reply *rp, int status, const char *code, const char *fmt, ...)
{
	char why[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	out_drop(); /* answers begun are not sent: their buffer, if large, is freed */
	struct sbuf b = {0};
	sb_str(&b, "{\"error\": ");
	sb_json(&b, why, strlen(why));
	sb_str(&b, ", \"code\": ");
	sb_json(&b, code, strlen(code));
	sb_str(&b, "}\n");
	reply_take(rp, status, &b, "application/json");
}

