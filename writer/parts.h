/*
 * parts.h - one FASTA or FASTQ stream cut into parts at line starts, on
 * the calling thread, and the parts worked on by every thread in rounds
 * (parts.c); split.c reads one large file with them.
 */
#ifndef BFI_WRITER_PARTS_H
#define BFI_WRITER_PARTS_H

#include <pthread.h>

#include "internal.h"
#include "seqcut.h"
#include "zin.h"

#define READ_STEP (64u << 10)  /* bytes read into a part at a time */
#define PART_LEAST (64u << 10) /* a part's target, within these */
#define PART_MOST (1u << 20)
#define SPLIT_LEAST (1u << 20) /* a smaller file is read on one thread */

/* One part of the stream: bytes from a line start, and the parser's state there. */
struct part {
	char *buf;
	size_t n, cap;
	struct seq_at at;
	uint64_t seq; /* its place in the stream */
	int last;     /* it ends the stream */
	int broken;   /* the cutter saw the parser fail in it: the stream stops there */
};

/* The stream cut into parts (format/seqcut.h), read on the calling thread. */
struct cutting {
	struct zin z;
	struct frames *fr; /* a file of members' decoders (frames.c), which read it instead of z */
	const char *path;
	struct seq_cutter c;
	struct seq_at at; /* where the next part begins */
	char *carry;      /* bytes past the last cut */
	size_t carry_n, carry_cap, target;
	uint64_t seq;
	int eof, done;
	bfi_writer *w;
	uint64_t size; /* the file's bytes, for progress */
	char err[512];
};

/*
 * The rounds: the calling thread cuts a round of parts while the threads
 * work on the round before; after each round's work, each thread may do
 * a second step (after), once every thread's work is done.
 */
struct rounds {
	unsigned threads;
	int (*work)(void *ctx, unsigned t, struct part *p, char *err, size_t errlen);
	int (*after)(void *ctx, unsigned t);
	void *ctx;
	struct part *parts[2];
	unsigned n_parts[2];
	uint64_t produced, consumed; /* rounds cut, and rounds whose parts are free again */
	int stop;
	int rc;           /* the first error in the stream */
	uint64_t rc_seq;  /* the part it is in */
	char err[512];
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_barrier_t bar;
	double *work_cpu, *after_cpu; /* each thread's, in the round at hand */
	double span;                  /* the threads' critical path: each step's busiest */
};

/* A part parsed: each record's k-mers, hashed, to key (a thread's own state). */
struct parse_to {
	unsigned k;
	int (*key)(void *ctx, const char *key, size_t len);
	void *ctx;
	writer_seq_fn keys_of; /* how a record's sequence gives its keys (writer_seq_keys) */
};

/*
 * Open path to be cut into parts for k-mers of k on threads threads
 * (decoders of a file of members, or liblzma's, on their own threads):
 * 0, or an error with err set. cutting_close ends it.
 */
int cutting_open(struct cutting *cu, bfi_writer *w, const char *path, unsigned k,
                 unsigned threads, char *err, size_t errlen);
void cutting_close(struct cutting *cu);
/*
 * Cut the stream into rounds of parts and run r's work (then after) on
 * its threads, the next round cut meanwhile: 0, or the first part's
 * error in the stream, with err set.
 */
int rounds_run(struct rounds *r, struct cutting *cu, char *err, size_t errlen);
/* Part p parsed: each record's k-mers, hashed, to to's key. 0, or an error with err set. */
int parse(const struct part *p, const char *path, const struct parse_to *to, char *err,
          size_t errlen);

#endif
