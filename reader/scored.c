/*
 * scored.c - an answer made from each set's score, for the queries that
 * count terms themselves (findere.c, whole.c) rather than through a
 * layout's threshold.
 */
#include "layout.h"

int bfi__answer_scores(const bfi_snapshot *s, const uint32_t *score, uint64_t n, size_t terms,
                       double theta, bfi_result *res)
{
	bfi__reset_result(res, 1);
	res->have_scores = 1;
	struct bfi_info in;
	bfi_info(s, &in);
	uint32_t need = theta == BFI_THETA_EVERY
	                    ? 0
	                    : bfi__share(terms > UINT32_MAX ? UINT32_MAX : (uint32_t)terms, theta);
	size_t m = 0;
	for (uint64_t o = 0; terms && o < n; o++)
		m += score[o] >= need;
	int rc = m ? bfi__room(res, m) : 0;
	if (rc == 0 && m)
		rc = bfi__grow(&res->scores, &res->scores_cap, m, sizeof *res->scores);
	for (uint64_t o = 0; rc == 0 && m && o < n; o++) {
		if (score[o] < need)
			continue;
		if (need == 0 && in.segments) { /* every set: a collection's live ones */
			const char *name;
			size_t nl;
			if (bfi_set_name(s, (uint32_t)o, &name, &nl) == BFI_E_NOT_FOUND)
				continue;
		}
		res->ords[res->n] = (uint32_t)o;
		res->scores[res->n++] = score[o];
	}
	return rc ? rc : bfi__rank(res);
}
