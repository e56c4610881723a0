/* facts.c - the numbers bfi inspect prints and its page draws, from the library's calls (inspect.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "inspect.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int fill_stats(const bfi_snapshot *s, const struct bfi_info *in, struct fill *f)
{
	memset(f, 0, sizeof *f);
	if (in->n_sets == 0) /* a file may claim no sets: nothing to sum */
		return 0;
	double *v = malloc(in->n_sets * sizeof *v);
	if (v == NULL)
		return -12;
	double sum = 0, fsum = 0;
	/* every live ordinal: a collection's run on past removed sets, which are holes */
	for (uint64_t g = 0, o = 0; g < in->ordinals && o < in->n_sets; g++, o++) {
		struct bfi_set_stats st;
		int rc = bfi_set_stats(s, (uint32_t)g, &st);
		if (rc == BFI_E_NOT_FOUND && in->segments) {
			o--;
			continue;
		}
		if (rc) {
			free(v);
			return rc;
		}
		if (st.distinct_keys > f->max_keys)
			f->max_keys = st.distinct_keys;
		v[o] = (double)st.bits_set / (double)st.bits;
		/* Bloom's formula for this set: (1 - e^(-kn/m))^k. */
		double t = pow(1 - exp(-(double)in->hashes * (double)st.distinct_keys / (double)st.bits),
		               in->hashes);
		f->fpr_theory = t > f->fpr_theory ? t : f->fpr_theory;
		double p = pow(v[o], in->hashes);
		sum += v[o];
		fsum += p;
		if (p > f->fpr_max)
			f->fpr_max = p;
		int b = (int)(v[o] * BUCKETS);
		f->hist[b >= BUCKETS ? BUCKETS - 1 : b]++;
	}
	qsort(v, in->n_sets, sizeof *v, cmp_double);
	f->min = v[0];
	f->max = v[in->n_sets - 1];
	f->median = v[in->n_sets / 2];
	f->mean = sum / (double)in->n_sets;
	f->fpr_mean = fsum / (double)in->n_sets;
	free(v);
	return 0;
}

void layout_params_text(const struct bfi_layout_param *p, int n, const char *sep, char *buf,
                        size_t cap)
{
	size_t o = 0;
	if (cap)
		buf[0] = 0;
	for (int i = 0; i < n && o < cap; i++)
		o += (size_t)snprintf(buf + o, cap - o, "%s%s=%llu", i ? sep : "", p[i].name,
		                      (unsigned long long)p[i].value);
}
