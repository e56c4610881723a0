/*
 * layout_param.c - a layout's own parameters in a build's layout_options
 * (layout.h, struct wparam): each item checked against a table of
 * layouts, and one layout's value read back for its plan.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"

/* The layout of table named name (len bytes), or NULL. */
static const struct wlayout *named(const struct wlayout *const *table, const char *name,
                                   size_t len)
{
	for (const struct wlayout *const *l = table; *l; l++) {
		const char *n = bfi_layout_rows[(*l)->row].name;
		if (strlen(n) == len && !memcmp(n, name, len))
			return *l;
	}
	return NULL;
}

/* l's parameter name (len bytes), or NULL. */
static const struct wparam *param_of(const struct wlayout *l, const char *name, size_t len)
{
	for (const struct wparam *p = l->params; p && p->name; p++)
		if (strlen(p->name) == len && !memcmp(p->name, name, len))
			return p;
	return NULL;
}

int wlayout_item(const char *at, const char *end, const struct wlayout *const *table,
                 unsigned layouts, const struct wlayout **l, const struct wparam **p, uint64_t *v,
                 char *err, size_t errlen)
{
	int n = (int)(end - at);
	const char *dot = memchr(at, '.', (size_t)(end - at));
	const char *eq = dot ? memchr(dot, '=', (size_t)(end - dot)) : NULL;
	if (dot == NULL || eq == NULL) {
		snprintf(err, errlen, "layout option \"%.*s\" is not LAYOUT.NAME=VALUE", n, at);
		return BFI_E_INVALID;
	}
	if ((*l = named(table, at, (size_t)(dot - at))) == NULL) {
		snprintf(err, errlen, "layout option \"%.*s\": no layout is named \"%.*s\"", n, at,
		         (int)(dot - at), at);
		return BFI_E_INVALID;
	}
	if (layouts && !(layouts & bfi_layout_rows[(*l)->row].flag)) {
		snprintf(err, errlen, "layout option \"%.*s\": the build has no %s layout", n, at,
		         bfi_layout_rows[(*l)->row].name);
		return BFI_E_INVALID;
	}
	if ((*p = param_of(*l, dot + 1, (size_t)(eq - dot - 1))) == NULL) {
		size_t o = (size_t)snprintf(err, errlen, "layout option \"%.*s\": the %s layout takes ",
		                            n, at, bfi_layout_rows[(*l)->row].name);
		if (!(*l)->params || !(*l)->params[0].name)
			snprintf(err + (o < errlen ? o : errlen), o < errlen ? errlen - o : 0, "none");
		for (const struct wparam *q = (*l)->params; q && q->name && o < errlen; q++)
			o += (size_t)snprintf(err + o, errlen - o, "%s%s (%s, %" PRIu64 " to %" PRIu64 ")",
			                      q == (*l)->params ? "" : ", ", q->name, q->help, q->least,
			                      q->most);
		return BFI_E_INVALID;
	}
	char *stop;
	const char *num = eq + 1;
	unsigned long long x = num < end && *num >= '0' && *num <= '9' ? strtoull(num, &stop, 10) : 0;
	if (num == end || *num < '0' || *num > '9' || stop != end || x < (*p)->least ||
	    x > (*p)->most) {
		snprintf(err, errlen, "layout option \"%.*s\": %s.%s takes a whole number from %" PRIu64
		         " to %" PRIu64, n, at, bfi_layout_rows[(*l)->row].name, (*p)->name,
		         (*p)->least, (*p)->most);
		return BFI_E_INVALID;
	}
	*v = x;
	return 0;
}

uint64_t wlayout_param(const bfi_writer *w, const struct wlayout *l, const char *name)
{
	const struct wparam *p = param_of(l, name, strlen(name));
	const struct wlayout *const alone[] = {l, NULL}; /* others' items are not this layout's */
	uint64_t v = p ? p->dflt : 0;
	char err[8];
	for (const char *at = w->opt.layout_options; p && at && *at;) {
		const char *end = strchr(at, ',');
		end = end ? end : at + strlen(at);
		const struct wlayout *il;
		const struct wparam *ip;
		uint64_t x;
		if (wlayout_item(at, end, alone, 0, &il, &ip, &x, err, sizeof err) == 0 && ip == p)
			v = x; /* the last one given */
		at = *end ? end + 1 : end;
	}
	return v;
}
