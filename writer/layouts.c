/* layouts.c - the writer's table of layouts (layout.h, struct wlayout): a row each. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"

extern const struct wlayout flat_layout, plain_layout, rambo_layout, tree_layout;
#ifdef BFI_TOY_LAYOUT /* the test build's (toy.c) */
extern const struct wlayout toy_layout;
#endif

/* In the order of their sections in the file. */
const struct wlayout *const wlayouts[] = {
    &flat_layout,
    &plain_layout,
    &rambo_layout,
    &tree_layout,
#ifdef BFI_TOY_LAYOUT
    &toy_layout,
#endif
    NULL,
};

unsigned wlayouts_all(void)
{
	unsigned all = 0;
	for (const struct wlayout *const *l = wlayouts; *l; l++)
		all |= bfi_layout_rows[(*l)->row].flag;
	return all;
}

unsigned wlayouts_wants(const struct bfi_build_options *o, unsigned maybe)
{
	unsigned wants = 0;
	for (const struct wlayout *const *l = wlayouts; *l; l++) {
		unsigned flag = bfi_layout_rows[(*l)->row].flag;
		if ((*l)->wants && ((o->layouts | maybe) & flag))
			wants |= (*l)->wants(o, (maybe & flag) || o->layouts == flag);
	}
	return wants;
}

/* The writer layout named name (len bytes), or NULL. */
static const struct wlayout *named(const char *name, size_t len)
{
	for (const struct wlayout *const *l = wlayouts; *l; l++) {
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

/*
 * One item of layout_options, [at, end): its layout, parameter and value
 * into *l, *p, *v: 0, or BFI_E_INVALID with err set.
 */
static int item(const char *at, const char *end, unsigned layouts, const struct wlayout **l,
                const struct wparam **p, uint64_t *v, char *err, size_t errlen)
{
	int n = (int)(end - at);
	const char *dot = memchr(at, '.', (size_t)(end - at));
	const char *eq = dot ? memchr(dot, '=', (size_t)(end - dot)) : NULL;
	if (dot == NULL || eq == NULL) {
		snprintf(err, errlen, "layout option \"%.*s\" is not LAYOUT.NAME=VALUE", n, at);
		return BFI_E_INVALID;
	}
	if ((*l = named(at, (size_t)(dot - at))) == NULL) {
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

int bfi_layout_options_check(const char *s, unsigned layouts, char *err, size_t errlen)
{
	char spare[8];
	if (err == NULL || errlen == 0) {
		err = spare;
		errlen = sizeof spare;
	}
	err[0] = 0;
	for (const char *at = s; s && *at;) {
		const char *end = strchr(at, ',');
		end = end ? end : at + strlen(at);
		const struct wlayout *l;
		const struct wparam *p;
		uint64_t v;
		int rc = item(at, end, layouts, &l, &p, &v, err, errlen);
		if (rc)
			return rc;
		at = *end ? end + 1 : end;
	}
	return 0;
}

uint64_t wlayout_param(const bfi_writer *w, const struct wlayout *l, const char *name)
{
	const struct wparam *p = param_of(l, name, strlen(name));
	uint64_t v = p ? p->dflt : 0;
	char err[8];
	for (const char *at = w->opt.layout_options; p && at && *at;) {
		const char *end = strchr(at, ',');
		end = end ? end : at + strlen(at);
		const struct wlayout *il;
		const struct wparam *ip;
		uint64_t x;
		if (item(at, end, 0, &il, &ip, &x, err, sizeof err) == 0 && il == l && ip == p)
			v = x; /* the last one given */
		at = *end ? end + 1 : end;
	}
	return v;
}
