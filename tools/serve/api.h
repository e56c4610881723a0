/*
 * api.h - what the parts of bfi serve's request handling share: replies
 * (reply.c), a request's parameters, read from GET's arguments or a POST
 * body (params.c), and their queries answered (answer.c); routes.c
 * dispatches.
 */
#ifndef BFI_TOOLS_SERVE_API_H
#define BFI_TOOLS_SERVE_API_H

#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>

#include "serve.h"

/* A reply being built: on a failed allocation it is dropped for a 500. */
struct sbuf {
	char *p;
	size_t len, cap;
	int err;
};

void sb_put(struct sbuf *b, const void *s, size_t n);
void sb_str(struct sbuf *b, const char *s);
/* s as a JSON string, quotes included (json_piece: bytes that are not UTF-8 as \udcXX) */
void sb_json(struct sbuf *b, const char *s, size_t len);
/* b as rp's body with status and type; a 500 if b ran out of memory */
void reply_take(struct reply *rp, int status, struct sbuf *b, const char *type);
/* {"error": WHY, "code": CODE}, WHY from fmt */
__attribute__((format(printf, 4, 5))) void reply_error(struct reply *rp, int status,
                                                       const char *code, const char *fmt, ...);


/* One query of a request: its text and, for a sequence, its id. */
struct item {
	const char *text, *label;
	size_t len, label_len;
};

struct params {
	int form; /* BFI_FORM_*: as its field names it (params.c); AUTO: formed as the snapshot's keys were made */
	struct item *items;
	size_t n;
	double theta;  /* 0: none */
	unsigned errors; /* "errors": each read's threshold by the k-mer lemma, if errors_given */
	int errors_given;
	unsigned findere; /* "findere": a read's (k+z)-mers, z this, if findere_given */
	int findere_given;
	int whole;     /* "whole": the items joined (joined, freed with items) as one query */
	char *joined;
	int format;    /* 0 names, 1 ordinals, 2 count, 3 tsv, 4 matrix (a table, as bfi query's) */
	uint64_t limit;
	unsigned layout;
};

/* p's queries answered on slot sl into rp: {"snapshot", "generation", "results": [...]} */
void run_queries(struct server *sv, struct slot *sl, const struct params *p, struct reply *rp);

/* The names a query request asks (/v1/NAME,NAME.../query): at most SERVE_MAX_NAMES. */
#define SERVE_MAX_NAMES 64
struct names_asked {
	struct slot *sl[SERVE_MAX_NAMES];
	size_t n;
};
/*
 * p's queries answered on every slot asked into rp: one name's reply as
 * run_queries makes it; several names' as {"snapshots": [REPLY, ...]}, each
 * REPLY that name's, in the order asked. The first that fails is the reply.
 */
void run_asked(struct server *sv, const struct names_asked *na, const struct params *p,
               struct reply *rp);

/* GET /v1/NAME/query and POST /v1/NAME/query: the parameters read, the queries run (params.c) */
void get_query(struct server *sv, const struct names_asked *na, const struct request *rq,
               struct reply *rp);
void post_query(struct server *sv, const struct names_asked *na, const struct request *rq,
                struct reply *rp);

#endif
