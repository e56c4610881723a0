/* expr.h - the parsed form of query expressions (expr.c), read by query.c. */
#ifndef BFI_READER_EXPR_H
#define BFI_READER_EXPR_H

#include "internal.h"

enum {
	BFI_EXPR_KEYS = 1, /* a conjunction of keys: kidx[first_key .. first_key + n_keys) */
	BFI_EXPR_AND,      /* all children: kids[first_kid .. first_kid + n_kids) */
	BFI_EXPR_OR,       /* any child */
	BFI_EXPR_TERMS,    /* a term list for threshold queries (keys, as KEYS) */
};

struct bfi_enode {
	int type;
	uint32_t first_key, n_keys;
	uint32_t first_kid, n_kids;
};

struct bfi_expr {
	struct bfi_enode *nodes;
	uint32_t n_nodes, cap_nodes, root;
	uint32_t *kids; /* child node ids of AND and OR nodes */
	uint32_t n_kids, cap_kids;
	uint32_t *kidx; /* key indices of KEYS and TERMS nodes */
	uint32_t n_kidx, cap_kidx;
	bfi_keyhash *keys; /* one hash per key, in parse order */
	uint32_t n_keys, cap_keys;
};

#endif
