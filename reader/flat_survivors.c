/*
 * flat_survivors.c - the flat layout's threshold queries past the point where
 * sets drop out.
 *
 * A set that has missed more than terms - need of a query's terms can no
 * longer reach need. So the first terms - need + 1 terms are counted on
 * every set (the pipeline, pipe.c), and from then on a set is dropped as
 * soon as hits + terms_left < need, and each later term reads only the
 * 64-bit words of its rows that hold a set still in the running. On a
 * read that matches one document of thousands, the sets left after the
 * first such term are that document and a few false positives, and the
 * rest of the read costs k word loads a term.
 *
 * The sets left, and their counts, are exactly those the full count
 * gives at or over need: a set dropped cannot reach need, and a set kept
 * has every term counted.
 */
#include "flat.h"

/* Terms past the first this many ahead have their row words asked for, while few words are left. */
#define SURVIVE_AHEAD 16
#define SURVIVE_ASK_WORDS 8

/* Word w of block b's row that starts at bit rb: in place, or shifted out of packed bits. */
static inline uint64_t row_word(const struct bfi_rblock *b, uint64_t rb, size_t w)
{
	uint64_t bit = rb + (uint64_t)w * 64;
	if (!b->packed) {
		uint64_t v;
		memcpy(&v, b->rows + bit / 8, 8);
		return le64toh(v);
	}
	return bfi__packed_word(b->rows + bit / 8, (unsigned)(bit % 8));
}

/* The k rows' first bits of term zt in block b. */
static inline void term_rows(const struct bfi_rblock *b, const uint64_t *zt, uint32_t k,
                             uint64_t *rb)
{
	for (uint32_t i = 0; i < k; i++)
		rb[i] = bfi__row_bit(b, bfi_reduce(zt[i], b->m));
}

int bfi__survivors(const struct bfi_rblock *b, const uint64_t *z, uint32_t from, uint32_t terms,
                   uint32_t k, uint32_t need, uint32_t *counts, uint64_t *alive,
                   uint32_t *live_words, bfi_result *res)
{
	/* live_words: the words of alive that hold a set still in the running */
	size_t words = (b->n + (size_t)63) / 64, nw = 0;
	uint32_t left = terms - from;
	for (size_t w = 0; w < words; w++) {
		uint64_t a = 0;
		for (uint32_t j = (uint32_t)w * 64; j < b->n && j < w * 64 + 64; j++)
			a |= (uint64_t)((uint64_t)counts[j] + left >= need) << (j % 64);
		if ((alive[w] = a) != 0)
			live_words[nw++] = (uint32_t)w;
	}
	uint64_t rb[BFI_MAX_K], ahead[BFI_MAX_K];
	uint32_t asked = from; /* terms before this have had their words asked for */
	for (uint32_t t = from; t < terms && nw; t++) {
		const uint64_t *zt = z + (size_t)t * k;
		/* once few words are left, ask for theirs SURVIVE_AHEAD terms on */
		for (asked = asked > t ? asked : t + 1;
		     nw <= SURVIVE_ASK_WORDS && asked < terms && asked <= t + SURVIVE_AHEAD; asked++) {
			term_rows(b, z + (size_t)asked * k, k, ahead);
			for (size_t x = 0; x < nw; x++)
				for (uint32_t i = 0; i < k; i++)
					bfi__prefetch(b->rows + (ahead[i] + (uint64_t)live_words[x] * 64) / 8);
		}
		int may = bfi__pre_pass(b, zt, k, res);
		if (may)
			term_rows(b, zt, k, rb);
		size_t kept = 0;
		uint64_t last_line = UINT64_MAX;
		for (size_t x = 0; x < nw; x++) {
			size_t w = live_words[x];
			uint64_t acc = may ? alive[w] : 0;
			/* all k words, without a branch between loads: they were asked for */
			for (uint32_t i = 0; may && i < k; i++)
				acc &= row_word(b, rb[i], w);
			if (res->count_bytes && may && w / 8 != last_line) /* a line of each row read */
				res->touched += (uint64_t)k * 64;
			last_line = w / 8;
			uint32_t *count = counts + w * 64;
			if (w * 64 + 64 <= b->n) { /* all 64 counts there: dense words a lane a count */
				bfi__count_bits(count, acc);
				alive[w] = bfi__still_alive64(alive[w], count, terms - t - 1, need);
			} else {
				for (; acc; acc &= acc - 1)
					count[__builtin_ctzll(acc)]++;
				alive[w] = bfi__still_alive(alive[w], count, terms - t - 1, need);
			}
			if (alive[w] != 0)
				live_words[kept++] = (uint32_t)w;
		}
		nw = kept;
		if ((t - from) % 64 == 63 && bfi__late(res))
			return BFI_E_TIMEOUT;
	}
	return 0;
}
