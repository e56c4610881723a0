/*
 * seqcut.h - one FASTA or FASTQ stream cut into parts that threads parse
 * apart (seq.c); not installed.
 *
 * A cutter follows the stream a line at a time, as the parser would,
 * without looking at the bases, so that the thread reading the file does
 * little more than read it. A part may begin between records, or, in
 * FASTA, at any line of a record's sequence: then it carries the record's
 * last k - 1 bases before it, so that the k-mers across the cut are made
 * once, by the part after it. Parsed part by part, the stream gives every
 * k-mer it gives parsed whole, and the first part with an error reports
 * it as the whole parse would, line number and all.
 */
#ifndef BFI_SEQCUT_H
#define BFI_SEQCUT_H

#include <stddef.h>
#include <stdint.h>

#include "bfi_hash.h"
#include "bfi_seq.h"

/* Where a part begins: the parser's state at a line start. */
struct seq_at {
	uint64_t line;   /* lines before it */
	int in_seq;      /* within a FASTA record's sequence (else between records) */
	int fastq;       /* the last record began with '@' */
	unsigned tail_n; /* in_seq: the record's last bases before the part, at most k - 1 */
	char tail[BFI_KMER_MAX];
};

struct seq_cutter {
	int state, fastq, in_record, failed;
	uint64_t seq_n, qual_n, line;
	unsigned k;
};

void seq_cutter_init(struct seq_cutter *c, unsigned k, struct seq_at *first);
/* May a part begin at the line the cutter is at? */
int seq_cutter_may_cut(const struct seq_cutter *c);
/*
 * Follow one whole line, p[0, n) with its newline. 0, or 1 when the
 * parser fails on it: the part it is in is then the stream's last.
 */
int seq_cutter_line(struct seq_cutter *c, const char *p, size_t n);
/*
 * The state at the cutter's line, for a part beginning there; the part
 * before it, from where at0 says, is d[0, len) (its bases give the tail).
 */
void seq_cutter_at(const struct seq_cutter *c, const char *d, size_t len,
                   const struct seq_at *at0, struct seq_at *at);
/*
 * Parse one part, buf[0, n), which begins as at says; last: it ends the
 * stream (the end's checks are made). fn gets each record's sequence
 * within the part (a FASTA record cut by the part's end, its part). 0,
 * fn's nonzero return, or BFI_E_INPUT with err naming path and line.
 */
int seq_parse_part(const struct seq_at *at, const char *buf, size_t n, int last,
                   const char *path, bfi_seq_record_fn fn, void *ctx, char *err, size_t errlen);

#endif
