/*
 * cmd_collection.c - bfi append and bfi remove: a collection grows by a
 * segment, or loses sets, one committed generation at a time
 * (spec/format.md, "Collections").
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bfi.h"
#include "bfi_catalog.h"
#include "bfi_writer.h"
#include "opts.h"
#include "tools.h"

static const char append_head[] =
	"Usage: bfi append COLL [--replace] [--wait] [BUILD OPTIONS] INPUT...\n"
	"\n"
	"Add the sets of INPUT to the collection COLL as a new segment, in one\n"
	"commit: readers see all of them or none. COLL is made if it does not\n"
	"exist. INPUT and the options are those of bfi build (see bfi build --help),\n"
	"with the collection's parameters: its k (--hashes) and the way its keys\n"
	"were made (input kind, k-mer length, tokenizer, path encoding), which a\n"
	"segment must share; each segment's widths are chosen for its own sets.\n"
	"\n"
	"Options of its own:\n";
static const char append_tail[] = "\n"
	"Exit status: 0, or 2 for a usage error, a name already held, another\n"
	"writer's lock, or a build that failed (nothing is committed then).\n";

/* What bfi append's and bfi remove's own options take. */
struct coll_opts {
	int replace, wait, quiet;
	const char *from;
};

#define C_FLAG(field) OPT_FLAG, offsetof(struct coll_opts, field), 0, 0, NULL, NULL
static const struct opt_row append_rows[] = {
    {"replace", 256, NULL,
     "a set whose name the collection holds replaces it\n"
     "(without it, that is an error and nothing is committed)",
     C_FLAG(replace)},
    {"wait", 257, NULL, "wait for another writer's lock rather than fail", C_FLAG(wait)},
    {"help", 'h', NULL, "show this help", OPT_HELP, 0, 0, 0, NULL, NULL},
    {NULL, 0, NULL, NULL, OPT_FLAG, 0, 0, 0, NULL, NULL},
};
static const struct opt_cmd append_cmd = {
    .me = "bfi append",
    .head = append_head,
    .tail = append_tail,
    .rows = append_rows,
    .column = 18,
};

static const char remove_head[] =
	"Usage: bfi remove [--wait] COLL NAME...\n"
	"       bfi remove [--wait] COLL --from FILE\n"
	"\n"
	"Remove the named sets from the collection COLL in one commit. Their bits\n"
	"stay in their segments until the collection is compacted; no query\n"
	"answers them from this commit on. --from reads one name a line (\"-\":\n"
	"standard input).\n"
	"\n"
	"Options:\n";
static const char remove_tail[] = "\n"
	"Exit status: 0, or 2 for a usage error, a name the collection does not\n"
	"hold, or another writer's lock (nothing is committed then).\n";

static const struct opt_row remove_rows[] = {
    {"from", 256, "FILE", "the names, one a line", OPT_STR, offsetof(struct coll_opts, from), 0,
     0, NULL, NULL},
    {"wait", 257, NULL, "wait for another writer's lock rather than fail", C_FLAG(wait)},
    {"quiet", 'q', NULL, NULL, C_FLAG(quiet)},
    {"help", 'h', NULL, "show this help", OPT_HELP, 0, 0, 0, NULL, NULL},
    {NULL, 0, NULL, NULL, OPT_FLAG, 0, 0, 0, NULL, NULL},
};
static const struct opt_cmd remove_cmd = {
    .me = "bfi remove",
    .head = remove_head,
    .tail = remove_tail,
    .rows = remove_rows,
    .column = 19,
};

/* Is opt one of bfi build's options that set k? */
static int sets_k(const char *opt)
{
	return !strcmp(opt, "--hashes") || !strncmp(opt, "--hashes=", 9);
}

/*
 * The new segment's sets against the collection's: each name it holds is
 * removed (--replace) or an error. 0, or EXIT_USAGE after saying why.
 */
static int names_held(const char *coll, const bfi_snapshot *old, const bfi_snapshot *seg,
                      bfi_collection *c, int replace, uint64_t *replaced)
{
	struct bfi_info in;
	bfi_info(seg, &in);
	for (uint64_t j = 0; j < in.n_sets; j++) {
		const char *name;
		size_t len;
		uint32_t g;
		int rc = bfi_set_name(seg, (uint32_t)j, &name, &len);
		if (rc == 0)
			rc = bfi_set_find(old, name, len, &g);
		if (rc == BFI_E_NOT_FOUND)
			continue;
		if (rc == 0 && !replace) {
			char nb[600];
			fprintf(stderr, "bfi append: %s already holds a set named %s (give --replace to "
			                "replace it); nothing committed\n",
			        coll, shown(name, len, nb, sizeof nb));
			return EXIT_USAGE;
		}
		if (rc == 0)
			rc = bfi_collection_remove(c, g);
		if (rc) {
			fprintf(stderr, "bfi append: %s: %s\n", coll, bfi_strerror(rc));
			return EXIT_USAGE;
		}
		++*replaced;
	}
	return 0;
}

/*
 * Is path the collection coll, or inside it? Then its files (the lock,
 * the manifest, the segments) would be read as sets.
 */
static int within(const char *coll, const char *path)
{
	char *c = realpath(coll, NULL), *p = c ? realpath(path, NULL) : NULL;
	size_t n = c ? strlen(c) : 0;
	int in = p && !strncmp(p, c, n) && (p[n] == 0 || p[n] == '/' || (n == 1 && c[0] == '/'));
	free(c);
	free(p);
	return in;
}

int cmd_append(int argc, char **argv)
{
	int given_k = 0;
	struct coll_opts own = {0};
	char **b = calloc((size_t)argc + 8, sizeof *b);
	if (b == NULL)
		return EXIT_USAGE;
	int nb = 1;
	const char *coll = NULL;
	for (int i = 1; i < argc; i++) {
		int took = opts_take_one(&append_cmd, argc, argv, &i, &own);
		if (took > 1) {
			free(b);
			return took - 2;
		}
		if (took)
			continue;
		if (coll == NULL && argv[i][0] != '-')
			coll = argv[i];
		else {
			own.quiet |= !strcmp(argv[i], "-q") || !strcmp(argv[i], "--quiet");
			given_k |= sets_k(argv[i]);
			b[nb++] = argv[i];
		}
	}
	if (coll == NULL || nb == 1) {
		fprintf(stderr, "bfi append: need COLL and at least one INPUT\n");
		free(b);
		return usage_try("append");
	}
	for (int i = 1; i < nb; i++)
		if (b[i][0] != '-' && within(coll, b[i])) {
			fprintf(stderr, "bfi append: the input %s %s the collection %s; its files are not "
			                "sets\n", b[i], within(b[i], coll) ? "is" : "is inside", coll);
			free(b);
			return EXIT_USAGE;
		}
	char err[4400], kbuf[16];
	bfi_collection *c = NULL;
	int rc = bfi_collection_begin(coll, BFI_COLL_CREATE | (own.wait ? BFI_COLL_WAIT : 0), &c, err,
	                              sizeof err);
	if (rc) {
		fprintf(stderr, "bfi append: %s\n", err[0] ? err : bfi_strerror(rc));
		free(b);
		return EXIT_USAGE;
	}
	bfi_snapshot *old = NULL, *seg = NULL;
	int exit = EXIT_USAGE;
	if (bfi_collection_generation(c) && (rc = bfi_open(coll, 0, &old)) != 0) {
		fprintf(stderr, "bfi append: %s: %s\n", coll, bfi_strerror(rc));
		goto out;
	}
	struct bfi_info oi = {0};
	if (old)
		bfi_info(old, &oi);
	if (old && oi.segments && !given_k) { /* the collection's k */
		snprintf(kbuf, sizeof kbuf, "%u", oi.hashes);
		b[nb++] = "--hashes";
		b[nb++] = kbuf;
	}
	const char *path = bfi_collection_segment_path(c);
	b[0] = "bfi append"; /* so that its messages (getopt's too) say bfi append */
	b[nb++] = "-o";
	b[nb++] = (char *)path;
	b[nb] = NULL;
	if (cmd_build(nb, b) != EXIT_OK)
		goto out; /* bfi build said why; the segment, if any, is swept */
	if ((rc = bfi_open(path, 0, &seg)) != 0) {
		fprintf(stderr, "bfi append: %s: %s\n", path, bfi_strerror(rc));
		goto out;
	}
	struct bfi_info si;
	bfi_info(seg, &si);
	const char *differs = old && oi.segments ? bfi_key_rules_differ(old, seg) : NULL;
	if (differs || (old && oi.segments && si.hashes != oi.hashes)) {
		fprintf(stderr, "bfi append: %s: the new sets' %s differs from the collection's; "
		                "nothing committed\n",
		        coll, differs ? differs : "k (--hashes)");
		goto out;
	}
	uint64_t replaced = 0;
	if (old && (exit = names_held(coll, old, seg, c, own.replace, &replaced)) != 0)
		goto out;
	exit = EXIT_USAGE;
	rc = bfi_collection_add(c, si.n_sets, si.snapshot_id);
	if (rc == 0)
		rc = bfi_collection_commit(c);
	if (rc) {
		fprintf(stderr, "bfi append: %s\n",
		        *bfi_collection_errmsg(c) ? bfi_collection_errmsg(c) : bfi_strerror(rc));
		goto out;
	}
	if (*bfi_collection_errmsg(c))
		fprintf(stderr, "bfi append: warning: %s\n", bfi_collection_errmsg(c));
	if (!own.quiet)
		fprintf(stderr, "bfi append: %s generation %llu: %llu sets added (%llu replaced)\n",
		        coll, (unsigned long long)bfi_collection_generation(c),
		        (unsigned long long)si.n_sets, (unsigned long long)replaced);
	exit = EXIT_OK;
out:
	bfi_close(&seg);
	bfi_close(&old);
	bfi_collection_end(&c);
	free(b);
	return exit;
}

/* Remove the set called name (len bytes) held by the collection open as old. */
static int remove_one(const char *coll, const bfi_snapshot *old, bfi_collection *c,
                      const char *name, size_t len)
{
	uint32_t g;
	char nb[600];
	int rc = bfi_set_find(old, name, len, &g);
	if (rc == 0 && (rc = bfi_collection_remove(c, g)) == BFI_E_NOT_FOUND) {
		/* held, and removed already by this command */
		fprintf(stderr, "bfi remove: %s is named twice; nothing committed\n",
		        shown(name, len, nb, sizeof nb));
		return rc;
	}
	if (rc == BFI_E_NOT_FOUND)
		fprintf(stderr, "bfi remove: %s holds no set named %s; nothing committed\n", coll,
		        shown(name, len, nb, sizeof nb));
	else if (rc)
		fprintf(stderr, "bfi remove: %s: %s\n", coll, bfi_strerror(rc));
	return rc;
}

/* Each line of file (a name) removed; 0 or the first error. */
static int remove_listed(const char *coll, const bfi_snapshot *old, bfi_collection *c,
                         const char *file, uint64_t *n)
{
	FILE *f = strcmp(file, "-") ? fopen(file, "r") : stdin;
	if (f == NULL) {
		fprintf(stderr, "bfi remove: %s: %s\n", file, strerror(errno));
		return -errno;
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t got;
	int rc = 0;
	while (rc == 0 && (got = getline(&line, &cap, f)) >= 0) {
		while (got && (line[got - 1] == '\n' || line[got - 1] == '\r'))
			got--;
		if (got == 0)
			continue;
		rc = remove_one(coll, old, c, line, (size_t)got);
		*n += rc == 0;
	}
	if (rc == 0 && ferror(f)) {
		fprintf(stderr, "bfi remove: %s: read error\n", file);
		rc = -EIO;
	}
	free(line);
	if (f != stdin)
		fclose(f);
	return rc;
}

int cmd_remove(int argc, char **argv)
{
	int first = 0, nnames = 0;
	struct coll_opts own = {0};
	const char *coll = NULL;
	for (int i = 1; i < argc; i++) {
		int took = opts_take_one(&remove_cmd, argc, argv, &i, &own);
		if (took > 1)
			return took - 2;
		if (took)
			continue;
		if (coll == NULL)
			coll = argv[i];
		else if (nnames++ == 0)
			first = i;
	}
	if (coll == NULL || (own.from == NULL) == (nnames == 0)) {
		fprintf(stderr, "bfi remove: need COLL and NAMEs, or --from FILE\n");
		return usage_try("remove");
	}
	char err[4400];
	bfi_collection *c = NULL;
	int rc = bfi_collection_begin(coll, own.wait ? BFI_COLL_WAIT : 0, &c, err, sizeof err);
	if (rc) {
		fprintf(stderr, "bfi remove: %s\n", err[0] ? err : bfi_strerror(rc));
		return EXIT_USAGE;
	}
	bfi_snapshot *old = NULL;
	uint64_t n = 0;
	rc = bfi_open(coll, 0, &old);
	if (rc)
		fprintf(stderr, "bfi remove: %s: %s\n", coll, bfi_strerror(rc));
	for (int i = first; rc == 0 && !own.from && i < argc; i++) {
		if (opts_find(&remove_cmd, argv[i]))
			continue; /* its own, taken above */
		rc = remove_one(coll, old, c, argv[i], strlen(argv[i]));
		n += rc == 0;
	}
	if (rc == 0 && own.from)
		rc = remove_listed(coll, old, c, own.from, &n);
	if (rc == 0 && (rc = bfi_collection_commit(c)) != 0)
		fprintf(stderr, "bfi remove: %s\n",
		        *bfi_collection_errmsg(c) ? bfi_collection_errmsg(c) : bfi_strerror(rc));
	if (rc == 0 && *bfi_collection_errmsg(c))
		fprintf(stderr, "bfi remove: warning: %s\n", bfi_collection_errmsg(c));
	if (rc == 0 && !own.quiet)
		fprintf(stderr, "bfi remove: %s generation %llu: %llu sets removed\n", coll,
		        (unsigned long long)bfi_collection_generation(c), (unsigned long long)n);
	bfi_close(&old);
	bfi_collection_end(&c);
	return rc ? EXIT_USAGE : EXIT_OK;
}
