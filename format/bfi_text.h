/*
 * bfi_text.h - the text tokenizer (spec/format.md, "Text keys"). Documents
 * and text queries must split into the same terms, so writer and reader
 * share this one definition.
 */
#ifndef BFI_TEXT_H
#define BFI_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "bfi_error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BFI_TERM_DEFAULT 32u /* longest term kept, by default */
#define BFI_TERM_MAX 255u    /* the most a term limit may be */

/*
 * A term is a maximal run of ASCII letters and digits, upper case folded
 * to lower; every other byte (punctuation, blanks, bytes of non-ASCII
 * UTF-8) separates terms. Runs longer than max_term bytes are dropped, not
 * cut. The tokenizer is streaming: a run may span two calls.
 */
struct bfi_tokenizer {
	unsigned max_term; /* 1 .. BFI_TERM_MAX */
	unsigned len;      /* bytes of the current run kept in term */
	int overlong;      /* the current run is longer than max_term */
	char term[BFI_TERM_MAX];
};

/* Called for each term; a nonzero return stops the tokenizer and is returned. */
typedef int (*bfi_term_fn)(void *ctx, const char *term, size_t len);

BFI_API void bfi_tokenizer_init(struct bfi_tokenizer *t, unsigned max_term);
BFI_API int bfi_tokenize(struct bfi_tokenizer *t, const void *buf, size_t n, bfi_term_fn fn,
                         void *ctx);
/* The end of the text: the last run is a term too. */
BFI_API int bfi_tokenize_end(struct bfi_tokenizer *t, bfi_term_fn fn, void *ctx);

#ifdef __cplusplus
}
#endif
#endif
