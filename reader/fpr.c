/*
 * fpr.c - bfi_layout_fpr: the false positives a layout's filters, as
 * filled, lead one to expect; a layout whose sets share filters (RAMBO's
 * cells) gives its own model through its row's fpr.
 */
#include <math.h>

#include "layout.h"

int bfi_layout_fpr(const bfi_snapshot *s, unsigned layout, struct bfi_fpr_model *out)
{
	int r = bfi_layout_row(layout);
	if (s == NULL || out == NULL || r < 0)
		return BFI_E_INVALID;
	*out = (struct bfi_fpr_model){0, 0};
	struct bfi_info in;
	bfi_info(s, &in);
	if (!(in.layouts & layout))
		return BFI_E_NO_LAYOUT;
	if (bfi__layouts[r]->fpr)
		return in.segments ? BFI_E_INVALID : bfi__layouts[r]->fpr(s, out);
	/* every live ordinal: a collection's run on past removed sets, which are holes */
	double sum = 0;
	uint64_t live = 0;
	for (uint64_t ord = 0; ord < in.ordinals; ord++) {
		struct bfi_set_stats st;
		int rc = bfi_set_stats(s, (uint32_t)ord, &st);
		if (rc == BFI_E_NOT_FOUND && in.segments)
			continue;
		if (rc)
			return rc;
		sum += pow(st.bits ? (double)st.bits_set / (double)st.bits : 0, in.hashes);
		live++;
	}
	out->expected = live ? sum / (double)live : 0;
	return 0;
}
