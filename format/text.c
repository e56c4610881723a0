/* text.c - the text tokenizer (bfi_text.h, spec/format.md "Text keys"). */
#include "bfi_text.h"

void bfi_tokenizer_init(struct bfi_tokenizer *t, unsigned max_term)
{
	t->max_term = max_term < 1 ? 1 : max_term > BFI_TERM_MAX ? BFI_TERM_MAX : max_term;
	t->len = 0;
	t->overlong = 0;
}

static int flush(struct bfi_tokenizer *t, bfi_term_fn fn, void *ctx)
{
	int rc = 0;
	if (t->len && !t->overlong)
		rc = fn(ctx, t->term, t->len);
	t->len = 0;
	t->overlong = 0;
	return rc;
}

int bfi_tokenize(struct bfi_tokenizer *t, const void *buf, size_t n, bfi_term_fn fn, void *ctx)
{
	const unsigned char *p = buf;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = p[i];
		if (c >= 'A' && c <= 'Z')
			c = (unsigned char)(c + 32);
		if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
			if (t->len < t->max_term)
				t->term[t->len++] = (char)c;
			else
				t->overlong = 1;
		} else if (t->len || t->overlong) {
			int rc = flush(t, fn, ctx);
			if (rc)
				return rc;
		}
	}
	return 0;
}

int bfi_tokenize_end(struct bfi_tokenizer *t, bfi_term_fn fn, void *ctx)
{
	return flush(t, fn, ctx);
}
