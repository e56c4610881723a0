/*
 * paths.c - JSON and XML documents as sets of path keys (spec/format.md,
 * "Path keys"): Koloniari and Pitoura's breadth encoding (each element
 * name tagged with its level, and untagged) and depth encoding (every
 * contiguous sub-path of element names, up to path_max names, and every
 * path from the root). XML is read with expat, JSON with json-c: an
 * object's member names are elements, an array is transparent (its items
 * sit at the array's level), scalars are not elements.
 */
#include <errno.h>
#include <expat.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "bfi_paths.h"
#include "internal.h"
#include "sources.h"

struct pdoc {
	int (*emit)(void *ctx, const char *key, size_t len);
	void *ctx;
	unsigned enc, path_max;
	const char *names[BFI_PATH_LEVELS_MAX];
	size_t lens[BFI_PATH_LEVELS_MAX];
	char *owned[BFI_PATH_LEVELS_MAX]; /* XML: copies of the open elements' names */
	unsigned depth, deepest;
	int too_deep;
	char *key;
	size_t key_cap;
	int rc;
};

static int add_key(struct pdoc *d, char kind, unsigned num, const char *const *names,
                   const size_t *lens, size_t n)
{
	size_t need = bfi_path_key(NULL, 0, kind, num, names, lens, n);
	if (need + 1 > d->key_cap) {
		char *k = realloc(d->key, need + 1);
		if (k == NULL)
			return -ENOMEM;
		d->key = k;
		d->key_cap = need + 1;
	}
	bfi_path_key(d->key, d->key_cap, kind, num, names, lens, n);
	return d->emit(d->ctx, d->key, need);
}

/* An element at level d->depth, whose root path is names[0 .. depth - 1]. */
static int element(struct pdoc *d)
{
	unsigned D = d->depth;
	const char *const *nm = d->names;
	const size_t *ln = d->lens;
	int rc = 0;
	if (D > d->deepest)
		d->deepest = D;
	if (d->enc & BFI_PATHS_BREADTH) {
		rc = add_key(d, 'a', 0, nm + D - 1, ln + D - 1, 1);
		if (rc == 0)
			rc = add_key(d, 'b', D, nm + D - 1, ln + D - 1, 1);
	}
	if (rc == 0 && (d->enc & BFI_PATHS_DEPTH)) {
		/* the sub-paths that end here, 1 to path_max names, and the root path */
		for (unsigned n = 1; rc == 0 && n <= D && n <= d->path_max; n++)
			rc = add_key(d, 'd', n, nm + D - n, ln + D - n, n);
		if (rc == 0 && D <= d->path_max)
			rc = add_key(d, 'r', 0, nm, ln, D);
	}
	return rc;
}

/* XML */
static void XMLCALL xml_start(void *ctx, const XML_Char *name, const XML_Char **attrs)
{
	struct pdoc *d = ctx;
	(void)attrs;
	if (d->rc)
		return;
	if (d->depth == BFI_PATH_LEVELS_MAX) {
		d->too_deep = 1;
		d->rc = BFI_E_LIMIT;
		return;
	}
	if ((d->owned[d->depth] = strdup(name)) == NULL) {
		d->rc = -ENOMEM;
		return;
	}
	d->names[d->depth] = d->owned[d->depth];
	d->lens[d->depth] = strlen(name);
	d->depth++;
	d->rc = element(d);
}

static void XMLCALL xml_end(void *ctx, const XML_Char *name)
{
	struct pdoc *d = ctx;
	(void)name;
	if (d->depth) {
		d->depth--;
		free(d->owned[d->depth]);
		d->owned[d->depth] = NULL;
	}
}

/* JSON */
static int walk(struct pdoc *d, struct json_object *o)
{
	if (json_object_is_type(o, json_type_array)) {
		size_t n = json_object_array_length(o);
		for (size_t i = 0; i < n; i++) {
			int rc = walk(d, json_object_array_get_idx(o, i));
			if (rc)
				return rc;
		}
		return 0;
	}
	if (!json_object_is_type(o, json_type_object))
		return 0;
	json_object_object_foreach(o, key, val) {
		if (d->depth == BFI_PATH_LEVELS_MAX) {
			d->too_deep = 1;
			return BFI_E_LIMIT;
		}
		d->names[d->depth] = key;
		d->lens[d->depth] = strlen(key);
		d->depth++;
		int rc = element(d);
		if (rc == 0)
			rc = walk(d, val);
		d->depth--;
		if (rc)
			return rc;
	}
	return 0;
}

/* A whole (possibly gzip) file into memory; 0, or an error with err set. */
static int slurp(const char *path, char **out, size_t *len, char *err, size_t errlen)
{
	struct zin z;
	int rc = zin_open(&z, path, err, errlen);
	if (rc)
		return rc;
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	rc = buf ? 0 : -ENOMEM;
	while (rc == 0) {
		if (n == cap) {
			char *nb = realloc(buf, cap * 2);
			if (nb == NULL) {
				rc = -ENOMEM;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		ssize_t got = zin_read(&z, buf + n, cap - n, err, errlen);
		if (got < 0)
			rc = (int)got;
		else if (got == 0)
			break;
		else
			n += (size_t)got;
	}
	zin_close(&z);
	if (rc == -ENOMEM)
		snprintf(err, errlen, "%s: %s", path, strerror(ENOMEM));
	if (rc) {
		free(buf);
		return rc;
	}
	*out = buf;
	*len = n;
	return 0;
}

static int paths_file_keys(const char *path, int xml, unsigned enc, unsigned path_max,
                    int (*emit)(void *ctx, const char *key, size_t len), void *ctx,
                    unsigned *deepest, char *err, size_t errlen)
{
	struct pdoc d;
	memset(&d, 0, sizeof d);
	d.emit = emit;
	d.ctx = ctx;
	d.enc = enc;
	d.path_max = path_max;
	char *text = NULL;
	size_t len = 0;
	err[0] = '\0';
	int rc = slurp(path, &text, &len, err, errlen);
	if (rc)
		return rc;
	if (xml) {
		XML_Parser p = XML_ParserCreate(NULL);
		if (p == NULL) {
			free(text);
			return -ENOMEM;
		}
		XML_SetUserData(p, &d);
		XML_SetElementHandler(p, xml_start, xml_end);
		if (XML_Parse(p, text, (int)(len > INT32_MAX ? INT32_MAX : len), 1) == XML_STATUS_ERROR &&
		    d.rc == 0) {
			snprintf(err, errlen, "%s:%lu: not well-formed XML: %s", path,
			         (unsigned long)XML_GetCurrentLineNumber(p),
			         XML_ErrorString(XML_GetErrorCode(p)));
			rc = BFI_E_INPUT;
		}
		XML_ParserFree(p);
		for (unsigned i = 0; i < BFI_PATH_LEVELS_MAX; i++)
			free(d.owned[i]);
	} else {
		struct json_tokener *tok = json_tokener_new_ex(BFI_PATH_LEVELS_MAX * 2 + 2);
		if (tok == NULL || len > INT32_MAX) {
			free(text);
			snprintf(err, errlen, "%s: %s", path, tok ? "larger than 2 GB" : strerror(ENOMEM));
			return tok ? BFI_E_LIMIT : -ENOMEM;
		}
		struct json_object *o = json_tokener_parse_ex(tok, text, (int)len);
		enum json_tokener_error je = json_tokener_get_error(tok);
		if (o == NULL || je != json_tokener_success || (size_t)json_tokener_get_parse_end(tok) < len) {
			/* trailing blanks are fine; anything else after the value is not */
			size_t end = o ? json_tokener_get_parse_end(tok) : 0;
			while (o && end < len && (text[end] == ' ' || text[end] == '\n' || text[end] == '\r' ||
			                          text[end] == '\t'))
				end++;
			if (o == NULL || je != json_tokener_success || end < len) {
				snprintf(err, errlen, "%s: not JSON: %s", path,
				         o == NULL || je != json_tokener_success ? json_tokener_error_desc(je)
				                                                  : "text after the value");
				rc = BFI_E_INPUT;
			}
		}
		if (rc == 0)
			rc = walk(&d, o);
		json_object_put(o);
		json_tokener_free(tok);
	}
	free(text);
	free(d.key);
	if (rc == 0 && d.rc)
		rc = d.rc;
	if (rc == BFI_E_LIMIT && !err[0])
		snprintf(err, errlen, "%s: deeper than %u levels", path, BFI_PATH_LEVELS_MAX);
	if (rc && !err[0])
		snprintf(err, errlen, "%s: %s", path, bfi_strerror(rc));
	if (rc == 0 && deepest && d.deepest > *deepest)
		*deepest = d.deepest;
	return rc;
}

/* sources.c's reading of a JSON or an XML document, a set a file */
static int json_keys(const bfi_writer *w, const char *file, unsigned k,
                     int (*emit)(void *ctx, const char *key, size_t len), void *ctx,
                     unsigned *deepest, char *err, size_t errlen)
{
	(void)k;
	return paths_file_keys(file, 0, w->path_enc, w->path_max, emit, ctx, deepest, err, errlen);
}

static int xml_keys(const bfi_writer *w, const char *file, unsigned k,
                    int (*emit)(void *ctx, const char *key, size_t len), void *ctx,
                    unsigned *deepest, char *err, size_t errlen)
{
	(void)k;
	return paths_file_keys(file, 1, w->path_enc, w->path_max, emit, ctx, deepest, err, errlen);
}

static const struct source_kind json_source = {"json", NULL, json_keys, writer_doc_name, NULL, 0};
static const struct source_kind xml_source = {"xml", NULL, xml_keys, writer_doc_name, NULL, 0};

int bfi_writer_add_paths(bfi_writer *w, const char *path, int xml, unsigned enc, unsigned path_max)
{
	if (w == NULL || path == NULL)
		return BFI_E_INVALID;
	if (path_max == 0)
		path_max = BFI_PATH_MAX_DEFAULT;
	if (enc == 0 || (enc & ~(BFI_PATHS_BREADTH | BFI_PATHS_DEPTH)) || path_max > BFI_PATH_LEVELS_MAX)
		return writer_fail(w, BFI_E_INVALID, "path encoding %u or sub-path limit %u out of range",
		                   enc, path_max);
	/* queries rewrite paths by the encoding the documents were given */
	const char *es = enc == BFI_PATHS_BREADTH ? "breadth" : enc == BFI_PATHS_DEPTH ? "depth"
	                                                                               : "breadth+depth";
	char num[16];
	int rc = writer_input(w, "paths");
	if (rc == 0)
		rc = writer_meta(w, BFI_META_PATHS, es, strlen(es), "the path encoding");
	if (rc == 0)
		rc = writer_meta(w, BFI_META_PATH_MAX, num, (size_t)snprintf(num, sizeof num, "%u", path_max),
		                 "the sub-path limit");
	if (rc)
		return rc;
	w->path_enc = enc;
	w->path_max = path_max;
	/* a document a set, read on threads, and again to fill */
	return sources_add(w, path, xml ? &xml_source : &json_source, 0);
}
