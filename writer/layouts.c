/* layouts.c - the writer's table of layouts (layout.h, struct wlayout): a row each. */
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
		int rc = wlayout_item(at, end, wlayouts, layouts, &l, &p, &v, err, errlen);
		if (rc)
			return rc;
		at = *end ? end + 1 : end;
	}
	return 0;
}

