/*
 * params.c - a query request's parameters, from GET's arguments or a POST
 * body (json-c, strict, UTF-8 checked, and the \udcXX bytes bfi writes put
 * back), handed to answer.c.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "api.h"
#include "serve.h"
#include "tools.h"

static int parse_format(const char *v, size_t len, int *format)
{
	if (len == 5 && !memcmp(v, "names", 5))
		*format = 0;
	else if (len == 8 && !memcmp(v, "ordinals", 8))
		*format = 1;
	else if (len == 5 && !memcmp(v, "count", 5))
		*format = 2;
	else if (len == 3 && !memcmp(v, "tsv", 3))
		*format = 3;
	else if (len == 6 && !memcmp(v, "matrix", 6))
		*format = 4;
	else
		return -1;
	return 0;
}

static int parse_layout(const char *v, size_t len, unsigned *layout)
{
	*layout = bfi_layout_parse(v, len);
	return *layout ? 0 : -1;
}

/* A decimal count 1 .. 2^32 of len bytes, or -1. */
#define MAX_ERRORS 1000 /* "errors", as bfi query --errors takes */
#define MAX_FINDERE 64  /* "findere": z, as bfi_query_findere takes */

/* A count of decimal digits in [lo, hi] (at most UINT32_MAX) into *out: 0, or -1. */
static int parse_count(const char *v, size_t len, uint64_t lo, uint64_t hi, uint64_t *out)
{
	uint64_t x = 0;
	if (len == 0 || len > 10)
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (v[i] < '0' || v[i] > '9')
			return -1;
		x = x * 10 + (uint64_t)(v[i] - '0');
	}
	if (x < lo || x > hi)
		return -1;
	*out = x;
	return 0;
}

/* A JSON integer in [lo, hi] into *out: 0, or -1. */
static int json_count(json_object *v, int64_t lo, int64_t hi, uint64_t *out)
{
	int64_t x = json_object_get_int64(v);
	if (!json_object_is_type(v, json_type_int) || x < lo || x > hi)
		return -1;
	*out = (uint64_t)x;
	return 0;
}

/*
 * GET /v1/NAME/query?key=K[&key=K...][&format=F][&limit=N][&layout=L], or
 * q=Q[&q=Q...] for queries formed as the snapshot's keys were made (and
 * threshold=T)
 */
void get_query(struct server *sv, const struct names_asked *na, const struct request *rq,
                      struct reply *rp)
{
	struct params p = {.form = BFI_FORM_KEY};
	size_t n = 0, nq = 0;
	for (size_t i = 0; i < rq->n_args; i++) {
		n += !strcmp(rq->arg_names[i], "key");
		nq += !strcmp(rq->arg_names[i], "q");
	}
	if (n && nq) {
		reply_error(rp, 400, "bad_field", "give key=K or q=Q, not both");
		return;
	}
	if (nq) {
		p.form = BFI_FORM_AUTO;
		n = nq;
	}
	if (n == 0) {
		reply_error(rp, 400, "no_query", "give at least one key=K or q=Q");
		return;
	}
	if (n > sv->max_keys) {
		reply_error(rp, 413, "too_many_keys", "%zu keys, more than --max-keys %zu", n,
		            sv->max_keys);
		return;
	}
	p.items = calloc(n, sizeof *p.items);
	if (p.items == NULL) {
		reply_error(rp, 500, "internal", "out of memory");
		return;
	}
	uint64_t x; /* a count argument's value */
	for (size_t i = 0; i < rq->n_args; i++) {
		const char *k = rq->arg_names[i], *v = rq->arg_values[i];
		size_t vl = rq->arg_lens[i];
		if (!strcmp(k, "key") || !strcmp(k, "q")) {
			p.items[p.n++] = (struct item){v, NULL, vl, 0};
		} else if (!strcmp(k, "threshold")) {
			char *end = NULL;
			double t = vl && vl < 32 ? strtod(v, &end) : -1;
			if (end != v + vl || !(t >= 0 && t <= 1) || p.form != BFI_FORM_AUTO) {
				reply_error(rp, 400, "bad_field", "threshold must be a number in [0, 1], "
				            "with q=Q");
				goto out;
			}
			p.theta = t == 0 ? BFI_THETA_EVERY : t; /* 0: every set, with its score */
		} else if (!strcmp(k, "errors")) {
			if (parse_count(v, vl, 0, MAX_ERRORS, &x)) {
				reply_error(rp, 400, "bad_field", "errors must be a count, 0 to 1000");
				goto out;
			}
			p.errors = (unsigned)x;
			p.errors_given = 1;
		} else if (!strcmp(k, "findere")) {
			if (parse_count(v, vl, 0, MAX_FINDERE, &x)) {
				reply_error(rp, 400, "bad_field", "findere must be 0 to 64");
				goto out;
			}
			p.findere = (unsigned)x;
			p.findere_given = 1;
		} else if (!strcmp(k, "format")) {
			if (parse_format(v, vl, &p.format)) {
				reply_error(rp, 400, "bad_field", "format must be names, ordinals, count, tsv "
				            "or matrix");
				goto out;
			}
		} else if (!strcmp(k, "limit")) {
			if (parse_count(v, vl, 1, UINT32_MAX, &p.limit)) {
				reply_error(rp, 400, "bad_field", "limit must be a count, 1 or more");
				goto out;
			}
		} else if (!strcmp(k, "layout")) {
			if (parse_layout(v, vl, &p.layout)) {
				char names[200];
				reply_error(rp, 400, "bad_field", "layout must be one of %s",
				            layout_names(0, ", ", names, sizeof names));
				goto out;
			}
		} else {
			reply_error(rp, 400, "unknown_field", "unknown argument %.100s: key, q, "
			            "threshold, errors, findere, format, limit and layout are known", k);
			goto out;
		}
	}
	if (p.errors_given && p.theta != 0) {
		reply_error(rp, 400, "bad_field", "errors sets each read's threshold: not with threshold");
		goto out;
	}
	run_asked(sv, na, &p, rp);
out:
	free(p.items);
}

/* The fields of a POST body that hold its queries, and the form each asks (BFI_FORM_*). */
static const struct {
	const char *field;
	int form;
} fields[] = {{"keys", BFI_FORM_KEY},     {"text", BFI_FORM_TEXT}, {"sequences", BFI_FORM_KMERS},
              {"expr", BFI_FORM_EXPR},    {"path", BFI_FORM_PATH}, {"queries", BFI_FORM_AUTO}};

/* Items for the array v, within max (-3) and memory (-2), with why. */
static int items_for(json_object *v, struct item **items, size_t *len, size_t max, char *why,
                     size_t cap)
{
	*len = json_object_array_length(v);
	if (*len > max)
		return snprintf(why, cap, "%zu queries, more than --max-keys %zu", *len, max), -3;
	*items = calloc(*len ? *len : 1, sizeof **items);
	if (*items == NULL)
		return snprintf(why, cap, "out of memory"), -2;
	return 0;
}

/* A string, or (many) an array of strings, into items; else -1 with why. */
static int take_strings(json_object *v, int many, struct item **items, size_t *n, size_t max,
                        char *why, size_t cap)
{
	if (json_object_is_type(v, json_type_string)) {
		if (many != 2) {
			*items = calloc(1, sizeof **items);
			if (*items == NULL)
				return snprintf(why, cap, "out of memory"), -2;
			(*items)[0] = (struct item){json_object_get_string(v), NULL,
			                            (size_t)json_object_get_string_len(v), 0};
			*n = 1;
			return 0;
		}
	}
	if (!json_object_is_type(v, json_type_array))
		return snprintf(why, cap, many == 2 ? "must be an array of strings"
		                                    : "must be a string or an array of strings"), -1;
	size_t len;
	int rc = items_for(v, items, &len, max, why, cap);
	if (rc)
		return rc;
	for (size_t i = 0; i < len; i++) {
		json_object *e = json_object_array_get_idx(v, i);
		if (!json_object_is_type(e, json_type_string))
			return snprintf(why, cap, "item %zu is not a string", i), -1;
		(*items)[i] = (struct item){json_object_get_string(e), NULL,
		                            (size_t)json_object_get_string_len(e), 0};
	}
	*n = len;
	return 0;
}

/* "sequences": [{"id": "r1", "seq": "ACGT..."}, ...]; id optional */
static int take_sequences(json_object *v, struct item **items, size_t *n, size_t max, char *why,
                          size_t cap)
{
	if (!json_object_is_type(v, json_type_array))
		return snprintf(why, cap, "must be an array of {\"id\", \"seq\"} objects"), -1;
	size_t len;
	int rc = items_for(v, items, &len, max, why, cap);
	if (rc)
		return rc;
	for (size_t i = 0; i < len; i++) {
		json_object *e = json_object_array_get_idx(v, i), *id = NULL, *seq = NULL;
		if (!json_object_is_type(e, json_type_object))
			return snprintf(why, cap, "item %zu is not an object", i), -1;
		json_object_object_foreach(e, key, val)
		{
			if (!strcmp(key, "id") && json_object_is_type(val, json_type_string))
				id = val;
			else if (!strcmp(key, "seq") && json_object_is_type(val, json_type_string))
				seq = val;
			else
				return snprintf(why, cap, "item %zu: \"%.60s\" is not a string \"id\" or \"seq\"",
				                i, key), -1;
		}
		if (seq == NULL)
			return snprintf(why, cap, "item %zu has no \"seq\"", i), -1;
		(*items)[i] = (struct item){json_object_get_string(seq),
		                            id ? json_object_get_string(id) : NULL,
		                            (size_t)json_object_get_string_len(seq),
		                            id ? (size_t)json_object_get_string_len(id) : 0};
	}
	*n = len;
	return 0;
}

/* The body's fields into p: 0, or a reply made. */
static int post_params(struct server *sv, json_object *root, struct params *p, struct reply *rp)
{
	char why[300];
	int kinds = 0;
	if (!json_object_is_type(root, json_type_object)) {
		reply_error(rp, 400, "bad_body", "the body must be a JSON object");
		return -1;
	}
	json_object_object_foreach(root, key, v)
	{
		int k = -1, rc = 0;
		for (size_t i = 0; i < sizeof fields / sizeof *fields; i++)
			if (!strcmp(key, fields[i].field))
				k = fields[i].form;
		if (k >= 0) {
			if (kinds++) {
				reply_error(rp, 400, "bad_body", "give one of queries, keys, text, sequences, "
				            "expr or path");
				return -1;
			}
			p->form = k;
			rc = k == BFI_FORM_KMERS ? take_sequences(v, &p->items, &p->n, sv->max_keys, why,
			                                       sizeof why)
			                      : take_strings(v, k == BFI_FORM_KEY ? 2 : 1, &p->items, &p->n,
			                                     sv->max_keys, why, sizeof why);
			if (rc) {
				reply_error(rp, rc == -3 ? 413 : rc == -2 ? 500 : 400,
				            rc == -3 ? "too_many_keys" : rc == -2 ? "internal" : "bad_field",
				            "\"%s\": %s", key, why);
				return -1;
			}
		} else if (!strcmp(key, "threshold")) {
			double t = json_object_get_double(v);
			if (!(json_object_is_type(v, json_type_double) ||
			      json_object_is_type(v, json_type_int)) ||
			    !(t >= 0 && t <= 1)) {
				reply_error(rp, 400, "bad_field", "\"threshold\" must be a number in [0, 1]");
				return -1;
			}
			p->theta = t == 0 ? BFI_THETA_EVERY : t; /* 0: every set, with its score */
		} else if (!strcmp(key, "errors")) {
			uint64_t x;
			if (json_count(v, 0, MAX_ERRORS, &x)) {
				reply_error(rp, 400, "bad_field", "\"errors\" must be a count, 0 to 1000");
				return -1;
			}
			p->errors = (unsigned)x;
			p->errors_given = 1;
		} else if (!strcmp(key, "findere")) {
			uint64_t x;
			if (json_count(v, 0, MAX_FINDERE, &x)) {
				reply_error(rp, 400, "bad_field", "\"findere\" must be 0 to 64");
				return -1;
			}
			p->findere = (unsigned)x;
			p->findere_given = 1;
		} else if (!strcmp(key, "whole")) {
			if (!json_object_is_type(v, json_type_boolean)) {
				reply_error(rp, 400, "bad_field", "\"whole\" must be true or false");
				return -1;
			}
			p->whole = json_object_get_boolean(v);
		} else if (!strcmp(key, "format")) {
			if (!json_object_is_type(v, json_type_string) ||
			    parse_format(json_object_get_string(v), (size_t)json_object_get_string_len(v),
			                 &p->format)) {
				reply_error(rp, 400, "bad_field", "\"format\" must be names, ordinals, count, "
				            "tsv or matrix");
				return -1;
			}
		} else if (!strcmp(key, "limit")) {
			if (json_count(v, 1, UINT32_MAX, &p->limit)) {
				reply_error(rp, 400, "bad_field", "\"limit\" must be a count, 1 or more");
				return -1;
			}
		} else if (!strcmp(key, "layout")) {
			if (!json_object_is_type(v, json_type_string) ||
			    parse_layout(json_object_get_string(v), (size_t)json_object_get_string_len(v),
			                 &p->layout)) {
				char names[200];
				reply_error(rp, 400, "bad_field", "\"layout\" must be one of %s",
				            layout_names(0, ", ", names, sizeof names));
				return -1;
			}
		} else {
			reply_error(rp, 400, "unknown_field", "unknown field \"%.100s\": queries, keys, "
			            "text, sequences, expr, path, threshold, errors, findere, whole, format, "
			            "limit and layout are known",
			            key);
			return -1;
		}
	}
	if (!kinds) {
		reply_error(rp, 400, "no_query", "give one of queries, keys, text, sequences, expr or "
		            "path");
		return -1;
	}
	if (p->errors_given && p->theta != 0) {
		reply_error(rp, 400, "bad_field", "\"errors\" sets each read's threshold: not with "
		            "\"threshold\"");
		return -1;
	}
	if (p->whole && p->n) { /* the items, joined by newlines (which break k-mers), one query */
		size_t len = 0;
		for (size_t i = 0; i < p->n; i++)
			len += p->items[i].len + 1;
		if ((p->joined = malloc(len)) == NULL) {
			reply_error(rp, 500, "internal", "out of memory");
			return -1;
		}
		size_t at = 0;
		for (size_t i = 0; i < p->n; i++) {
			memcpy(p->joined + at, p->items[i].text, p->items[i].len);
			at += p->items[i].len;
			p->joined[at++] = '\n';
		}
		p->items[0] = (struct item){p->joined, "whole", len, 5};
		p->n = 1;
	}
	if (p->theta != 0 && p->form != BFI_FORM_TEXT && p->form != BFI_FORM_KMERS &&
	    p->form != BFI_FORM_AUTO) {
		reply_error(rp, 400, "bad_field", "\"threshold\" goes with queries, text or sequences");
		return -1;
	}
	return 0;
}

static int hex4(const char *s, unsigned *u)
{
	*u = 0;
	for (int i = 0; i < 4; i++) {
		char c = s[i];
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
		        : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		if (d < 0)
			return 0;
		*u = *u << 4 | (unsigned)d;
	}
	return 1;
}

/*
 * The body read as bfi writes JSON (tools.h, json_piece): a byte that is
 * not UTF-8 is written \udcXX, so a lone \udc80..\udcff in a string is
 * that byte again, put back in place (json-c would make it U+FFFD, and
 * the query another key). Any other lone surrogate, and bytes that are not
 * strict UTF-8 (overlong forms and encoded surrogates included, which
 * json-c lets through), are refused: 0, or -1 with *at their offset. The
 * body shrinks in place (*len).
 */
static int body_bytes(char *b, size_t *len, size_t *at)
{
	size_t n = *len, i = 0, o = 0;
	int in_str = 0;
	while (i < n) {
		unsigned char c = (unsigned char)b[i];
		size_t k = 1;
		if (c >= 0x80 && (k = utf8_len((const unsigned char *)b, n, i)) == 0) {
			*at = i;
			return -1;
		}
		if (c == '"') {
			in_str = !in_str;
		} else if (in_str && c == '\\' && i + 1 < n) {
			unsigned u, lo;
			k = 2;
			if (b[i + 1] == 'u' && n - i >= 6 && hex4(b + i + 2, &u)) {
				k = 6;
				if (u >= 0xd800 && u <= 0xdbff) { /* a pair, or alone */
					if (!(n - i >= 12 && b[i + 6] == '\\' && b[i + 7] == 'u' &&
					      hex4(b + i + 8, &lo) && lo >= 0xdc00 && lo <= 0xdfff)) {
						*at = i;
						return -1;
					}
					k = 12;
				} else if (u >= 0xdc80 && u <= 0xdcff) {
					b[o++] = (char)(u & 0xff); /* the byte bfi wrote as \udcXX */
					i += 6;
					continue;
				} else if (u >= 0xdc00 && u <= 0xdfff) {
					*at = i;
					return -1;
				}
			}
		}
		memmove(b + o, b + i, k);
		o += k;
		i += k;
	}
	*len = o;
	return 0;
}

/* POST /v1/NAME/query with a JSON body */
void post_query(struct server *sv, const struct names_asked *na, const struct request *rq,
                       struct reply *rp)
{
	if (rq->body_too_large) {
		reply_error(rp, 413, "body_too_large", "the body is larger than --max-body %zu bytes",
		            sv->max_body);
		return;
	}
	struct json_tokener *tok = json_tokener_new_ex(16);
	if (tok == NULL) {
		reply_error(rp, 500, "internal", "out of memory");
		return;
	}
	/* UTF-8 is checked here, strictly, and the bytes bfi writes as \udcXX read back */
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_ALLOW_TRAILING_CHARS);
	size_t bad_at, body_len = rq->body_len;
	if (body_len && body_bytes(rq->body, &body_len, &bad_at) != 0) {
		reply_error(rp, 400, "bad_utf8", "bytes that are not UTF-8, or a lone UTF-16 surrogate "
		            "escape other than \\udc80..\\udcff (a byte that is not UTF-8), at byte %zu",
		            bad_at);
		json_tokener_free(tok);
		return;
	}
	if (body_len > INT32_MAX) {
		reply_error(rp, 413, "body_too_large", "the body is larger than 2 GiB");
		json_tokener_free(tok);
		return;
	}
	json_object *root = body_len ? json_tokener_parse_ex(tok, rq->body, (int)body_len) : NULL;
	enum json_tokener_error err = json_tokener_get_error(tok);
	size_t end = json_tokener_get_parse_end(tok);
	int trailing = 0;
	for (size_t i = end; root && i < body_len; i++)
		trailing |= !strchr(" \t\r\n", rq->body[i]) || rq->body[i] == 0;
	if (body_len == 0) {
		reply_error(rp, 400, "bad_json", "the body is empty: send a JSON object");
	} else if (root == NULL || err != json_tokener_success) {
		const char *what = err == json_tokener_continue ? "the JSON ends early"
		                                                : json_tokener_error_desc(err);
		reply_error(rp, 400, err == json_tokener_error_parse_utf8_string ? "bad_utf8" : "bad_json",
		            "%s at byte %zu", what, end);
	} else if (trailing) {
		reply_error(rp, 400, "bad_json", "bytes after the JSON object, at byte %zu", end);
	} else {
		struct params p = {0};
		if (post_params(sv, root, &p, rp) == 0)
			run_asked(sv, na, &p, rp);
		free(p.items);
		free(p.joined);
	}
	json_object_put(root);
	json_tokener_free(tok);
}
