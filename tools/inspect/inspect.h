/* inspect.h - what a snapshot holds, as text or JSON (inspect.c). */
#ifndef BFI_TOOLS_INSPECT_H
#define BFI_TOOLS_INSPECT_H

#include <stdint.h>
#include <stdio.h>

#include "bfi.h"

/* The sets' fill ratios (bits set / bits, from the catalog), in BUCKETS tenths. */
#define BUCKETS 10
struct fill {
	double min, max, mean, median;
	double fpr_mean, fpr_max; /* (fill)^k over the sets: the mean, the worst */
	double fpr_theory;        /* the worst set's Bloom formula, (1 - e^(-kn/m))^k */
	uint64_t hist[BUCKETS], max_keys;
};
/* f of s's live sets (facts.c): 0 or an error code. */
int fill_stats(const bfi_snapshot *s, const struct bfi_info *in, struct fill *f);

/* A layout's n parameters p as "name=value" joined by sep, into buf (cap bytes) (facts.c). */
void layout_params_text(const struct bfi_layout_param *p, int n, const char *sep, char *buf,
                        size_t cap);

/*
 * Write bfi inspect's text, or its JSON object (and a newline), for s at
 * path to o: 0, 1 if o failed (its error flag says so), or an error code.
 */
int inspect_write(FILE *o, const bfi_snapshot *s, const char *path, int json);
/*
 * Write bfi inspect --html's page for s at path to o, measuring false
 * positives on probes random absent keys (0: none): 0, 1 if o failed, or
 * an error code (inspect_html.c).
 */
int inspect_html(FILE *o, const bfi_snapshot *s, const char *path, uint64_t probes);

#endif
