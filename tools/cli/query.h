/*
 * query.h - bfi query's own pieces (tools/cli): the memory it may hold
 * (query_memory.c), queries on threads (query_pool.c), and queries read
 * from standard input or a FASTA file (query_in.c).
 */
#ifndef BFI_TOOLS_CLI_QUERY_H
#define BFI_TOOLS_CLI_QUERY_H

#include "answer.h"

/*
 * --memory's default, and the choice between the mapping and the scan
 * (query_memory.c), once s is open: o->memory set if not given, o->scan
 * set (and said once) if the index does not fit it and not no_scan; a
 * scan's cost in o->cost. 0, or SAID with what is wrong said.
 */
int query_memory(const bfi_snapshot *s, struct ask *o, int memory_given, int no_scan,
                 const char *path);

/* Say why s could not be opened: for -ENOMEM under a ulimit -v the index passes, that. */
void query_open_failed(const char *path, int rc);

/*
 * --threads (query_pool.c): queries answered on threads, in input order.
 * qpool_add copies a query (and its label, or NULL) into the chunk being
 * made, and writes what the workers have finished; qpool_drain gives them
 * the last chunk and writes everything (before a read that may wait);
 * qpool_end drains, stops the workers and frees the pool. Each returns 0
 * or the first failure: SAID for a bad query, whose error it has said.
 */
struct qpool;
int qpool_start(struct qpool **qp, unsigned threads, const bfi_snapshot *s, const struct ask *o);
int qpool_add(struct qpool *qp, const char *text, size_t len, const char *label, size_t label_len);
int qpool_drain(struct qpool *qp);
int qpool_end(struct qpool **qp);

/* Lines of a file descriptor (query_in.c); see there. */
struct lines {
	char *buf;
	size_t cap, start, end;
	int eof;
	const bfi_snapshot *watch; /* checked after each read: unchanged since opened */
	struct qpool *drain; /* answered and written before a read that may wait, or NULL */
};
int next_line(struct lines *r, int fd, char **line, size_t *len);

/* --fasta (query_in.c): each record a query, through bfi_seq_read. */
struct fasta_ctx {
	const bfi_snapshot *s;
	bfi_result *res;
	const struct ask *o;
	struct timespec checked; /* when the files were last found unchanged */
	struct qpool *qp;        /* records go to the pool, or NULL: answered here */
	struct batcher *bt;      /* --scan: records go to the batch, or NULL */
};
int on_fasta_query(void *ctx, const char *id, size_t id_len, const char *seq, size_t len);
/*
 * --whole: every record of path, joined, answered as one query named by
 * path. 0, or an error; a file that cannot be read is said, and *status
 * set to 2.
 */
int whole_query(const bfi_snapshot *s, bfi_result *res, const struct ask *o, const char *path,
                int *status);
/*
 * Standard input copied whole into a file in memory, which each of
 * several snapshots asked reads from the start: its descriptor, or -1
 * after saying why.
 */
int stdin_again(void);

#endif
