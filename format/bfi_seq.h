/*
 * bfi_seq.h - FASTA and FASTQ records (spec/format.md, "k-mer keys"): what
 * the writer makes sets of, and what queries ask with.
 */
#ifndef BFI_SEQ_H
#define BFI_SEQ_H

#include <stddef.h>

#include "bfi_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Read the records of a FASTA or FASTQ file, plain or gzip ("-" reads
 * standard input), as spec/format.md "k-mer keys" describes: fn gets each
 * record's id (up to the first blank) and its sequence with line ends and
 * blanks left out (other letters kept). A nonzero return from fn stops the
 * reading and is returned. A malformed file gives BFI_E_INPUT and err
 * (errlen bytes, may be NULL) says where; -errno for I/O.
 */
typedef int (*bfi_seq_record_fn)(void *ctx, const char *id, size_t id_len, const char *seq,
                                 size_t len);
BFI_API BFI_MUST_CHECK int bfi_seq_read(const char *path, bfi_seq_record_fn fn, void *ctx,
                                        char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
