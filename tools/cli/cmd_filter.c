/* cmd_filter.c - bfi filter: make and use one Bloom filter in its own file. */
#include <getopt.h> /* optind */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bfi_text.h"
#include "bfi_writer.h"
#include "opts.h"
#include "tools.h"

/* bfi filter's one help page: its head, each subcommand's rows (filter_cmds), its tail. */
static const char help_head[] =
	"Usage: bfi filter create -o FILE (--bits M --hashes K | --expected-keys N\n"
	"                         [--fpr P]) [--compress [--level L]] [KEYS]\n"
	"       bfi filter add [--wait] FILE [KEYS]\n"
	"       bfi filter query [--words] [--unknown] FILE [KEY...]\n"
	"       bfi filter info [--json] FILE\n"
	"\n"
	"One Bloom filter in its own file (spec/format.md, \"Filter file\"), with\n"
	"the snapshot's own hash: a site makes its filter and ships it, and\n"
	"'bfi build --from-filters DIR' indexes many of them. KEYS is a file of\n"
	"keys, one per line ('-' or none: standard input; a trailing CR is\n"
	"dropped, empty lines skipped). The file is replaced atomically; a FILE\n"
	"that is a symbolic link is updated where it points.\n"
	"\n";
static const char help_tail[] = "\n"
	"Exit status: 0 success, 2 usage or I/O error or a bad filter file.\n";

/* What the subcommands' options take. */
struct fopts {
	const char *out;
	uint64_t m, k, n, level;
	double p;
	int compress, wait, words, unknown, json;
};

static void filter_page(FILE *o);

static int take_fpr(void *ctx, const char *arg)
{
	struct fopts *f = ctx;
	char *end;
	f->p = strtod(arg, &end);
	if (end == arg || *end || !(f->p > 0 && f->p < 1)) {
		fprintf(stderr, "bfi filter create: --fpr must be in (0, 1)\n");
		return EXIT_USAGE;
	}
	return 0;
}

#define F_HELP {"help", 'h', NULL, NULL, OPT_HELP, 0, 0, 0, NULL, NULL}
#define F_END {NULL, 0, NULL, NULL, OPT_FLAG, 0, 0, 0, NULL, NULL}

static const struct opt_row create_rows[] = {
    {NULL, 0, NULL,
     "  create   a new filter of M bits and K hashes, or sized for N keys at\n"
     "           rate P (default 0.01: k = ceil(log2(1/P)), and m the width at\n"
     "           which N keys give rate P exactly, ceil(-N k / ln(1 - P^(1/k))))\n",
     OPT_FLAG, 0, 0, 0, NULL, NULL},
    {"output", 'o', "FILE", NULL, OPT_STR, offsetof(struct fopts, out), 0, 0, NULL, NULL},
    {"bits", 256, "M", NULL, OPT_U64, offsetof(struct fopts, m), 1, UINT64_C(1) << 40,
     "--bits must be 1..2^40, got '%s'", NULL},
    {"hashes", 257, "K", NULL, OPT_U64, offsetof(struct fopts, k), 1, 32,
     "--hashes must be 1..32", NULL},
    {"expected-keys", 258, "N", NULL, OPT_U64, offsetof(struct fopts, n), 1, UINT64_MAX,
     "bad --expected-keys '%s'", NULL},
    {"fpr", 259, "P", NULL, OPT_FN, 0, 0, 0, NULL, take_fpr},
    {"compress", 260, NULL,
     "save the bits as a zstd frame (file version 2), for\n"
     "fewer bytes on the wire; with --expected-keys, each k\n"
     "from 1 to the usual one is tried at its own m for rate\n"
     "P (fewer hashes: a wider, sparser filter that\n"
     "compresses), and the smallest file is kept. Filters\n"
     "indexed together must share m and k: give every site\n"
     "the same --bits and --hashes for that",
     OPT_FLAG, offsetof(struct fopts, compress), 0, 0, NULL, NULL},
    {"level", 261, "L", "zstd level of --compress, 1..19 (19)", OPT_U64,
     offsetof(struct fopts, level), 1, 19, "--level must be 1..19", NULL},
    F_HELP,
    F_END,
};

static const struct opt_row add_rows[] = {
    {NULL, 0, NULL, "  add      add keys to an existing filter; one add at a time holds it\n",
     OPT_FLAG, 0, 0, 0, NULL, NULL},
    {"wait", 256, NULL, "wait for another add to end rather than fail", OPT_FLAG,
     offsetof(struct fopts, wait), 0, 0, NULL, NULL},
    F_HELP,
    F_END,
};

static const struct opt_row query_rows[] = {
    {NULL, 0, NULL, "  query    each KEY (or line of stdin), a TAB, then 'maybe' or 'no'\n",
     OPT_FLAG, 0, 0, 0, NULL, NULL},
    {"words", 256, NULL,
     "read text and check each word (the text tokenizer of\n"
     "bfi build --input text): a spellchecker over a filter\n"
     "of known words",
     OPT_FLAG, offsetof(struct fopts, words), 0, 0, NULL, NULL},
    {"unknown", 257, NULL, "print only what the filter surely does not hold", OPT_FLAG,
     offsetof(struct fopts, unknown), 0, 0, NULL, NULL},
    F_HELP,
    F_END,
};

static const struct opt_row info_rows[] = {
    {NULL, 0, NULL, "  info     m, k, keys added, fill, expected rate and distinct keys\n",
     OPT_FLAG, 0, 0, 0, NULL, NULL},
    {"json", 256, NULL, NULL, OPT_FLAG, offsetof(struct fopts, json), 0, 0, NULL, NULL},
    F_HELP,
    F_END,
};

#define FILTER_CMD(name, rows_)                                                                    \
	{                                                                                              \
		.me = "bfi filter " name, .rows = rows_, .column = 17, .indent = 6, .page = filter_page,   \
	}
/* The subcommands, in the order of the help page. */
static const struct opt_cmd filter_cmds[] = {
    FILTER_CMD("create", create_rows),
    FILTER_CMD("add", add_rows),
    FILTER_CMD("query", query_rows),
    FILTER_CMD("info", info_rows),
};

static void filter_page(FILE *o)
{
	fputs(help_head, o);
	for (size_t i = 0; i < sizeof filter_cmds / sizeof *filter_cmds; i++)
		opts_rows(o, &filter_cmds[i]);
	fputs(help_tail, o);
}

/* Keys from a file (or stdin), a line each, into each of the n filters f. */
static int add_keys_n(bfi_filter **f, int nf, const char *path)
{
	FILE *in = path && strcmp(path, "-") ? fopen(path, "r") : stdin;
	if (in == NULL) {
		perror(path);
		return -1;
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t got;
	int rc = 0;
	while (rc == 0 && (got = getline(&line, &cap, in)) >= 0) {
		size_t n = (size_t)got;
		if (n && line[n - 1] == '\n')
			n--;
		if (n && line[n - 1] == '\r')
			n--;
		for (int i = 0; n && rc == 0 && i < nf; i++)
			rc = bfi_filter_add(f[i], line, n);
	}
	if (rc == 0 && ferror(in))
		rc = -1;
	free(line);
	if (in != stdin)
		fclose(in);
	return rc;
}

static int add_keys(bfi_filter *f, const char *path)
{
	return add_keys_n(&f, 1, path);
}

static int fail(const char *what, const char *path, int rc)
{
	fprintf(stderr, "bfi filter %s: %s: %s\n", what, path,
	        rc == BFI_E_BAD_MAGIC ? "not a bfi filter file (bad magic)" : bfi_strerror(rc));
	return EXIT_USAGE;
}

/*
 * May create write out? If it is absent, or a filter file (which it then
 * replaces), and is not the keys file it reads. 0, or EXIT_USAGE after
 * saying why.
 */
static int check_out(const char *out, const char *keys)
{
	struct stat so, sk;
	if (lstat(out, &so) != 0)
		return 0;
	if (S_ISLNK(so.st_mode)) {
		fprintf(stderr, "bfi filter create: -o %s is a symbolic link; give the path it points "
		                "to\n", out);
		return EXIT_USAGE;
	}
	if (keys && strcmp(keys, "-") && stat(keys, &sk) == 0 && sk.st_dev == so.st_dev &&
	    sk.st_ino == so.st_ino) {
		fprintf(stderr, "bfi filter create: -o %s is the keys file it reads\n", out);
		return EXIT_USAGE;
	}
	bfi_filter *f;
	int rc = S_ISREG(so.st_mode) ? bfi_filter_load(out, &f) : BFI_E_NOT_REGULAR;
	if (rc == 0) {
		bfi_filter_destroy(&f);
		return 0;
	}
	fprintf(stderr, "bfi filter create: %s exists and is not a filter file (%s); not replacing "
	                "it\n",
	        out, rc == BFI_E_BAD_MAGIC ? "bad magic" : bfi_strerror(rc));
	return EXIT_USAGE;
}

/* Operands: [KEYS]. */
static int filter_create(struct fopts *f, int n_ops, char **ops)
{
	const char *out = f->out, *keys = n_ops ? ops[0] : NULL;
	uint64_t m = f->m, k = f->k, n = f->n, level = f->level;
	int compress = f->compress;
	double p = f->p;
	if (out == NULL || n_ops > 1 || (n && (m || k)) || (!n && (!m || !k))) {
		fprintf(stderr, "bfi filter create: need -o FILE and either --bits and --hashes, "
		                "or --expected-keys\n");
		return usage_try("filter create");
	}
	if (check_out(out, keys))
		return EXIT_USAGE;
	if (n) {
		uint32_t k32;
		int sz = bfi_filter_size(n, p, &m, &k32);
		if (sz < 0) {
			fprintf(stderr, "bfi filter create: --expected-keys %llu at --fpr %g: %s (more than "
			                "2^40 bits)\n",
			        (unsigned long long)n, p, bfi_strerror(sz));
			return EXIT_USAGE;
		}
		if (sz == 1)
			fprintf(stderr, "bfi filter create: warning: a rate of %g needs more than 32 "
			                "hashes; the filter uses 32, so its rate is about 2^-32\n",
			        p);
		k = k32;
	}
	/* --compress for N keys: each k up to the usual at its own width, the smallest file kept */
	bfi_filter *cand[32] = {0};
	int nc = compress && n ? (int)k : 1, rc = 0;
	for (int i = 0; i < nc && rc == 0; i++) {
		uint64_t mi = m;
		uint32_t ki = nc > 1 ? (uint32_t)i + 1 : (uint32_t)k;
		if (nc > 1 && (rc = bfi_filter_size_k(n, ki, p, &mi)) != 0)
			break;
		rc = bfi_filter_create(mi, ki, &cand[i]);
		if (rc == 0 && compress)
			rc = bfi_filter_set_compression(cand[i], (int)level);
	}
	if (rc) {
		for (int i = 0; i < nc; i++)
			bfi_filter_destroy(&cand[i]);
		return fail("create", out, rc);
	}
	if (add_keys_n(cand, nc, keys) != 0) {
		for (int i = 0; i < nc; i++)
			bfi_filter_destroy(&cand[i]);
		fprintf(stderr, "bfi filter create: reading keys failed\n");
		return EXIT_USAGE;
	}
	int best = 0;
	uint64_t best_bytes = UINT64_MAX;
	for (int i = 0; nc > 1 && i < nc && rc == 0; i++) {
		uint64_t b;
		rc = bfi_filter_file_size(cand[i], (int)level, &b);
		if (rc == 0 && b < best_bytes) {
			best_bytes = b;
			best = i;
		}
	}
	if (rc == 0)
		rc = bfi_filter_save(cand[best], out);
	for (int i = 0; i < nc; i++)
		bfi_filter_destroy(&cand[i]);
	return rc ? fail("create", out, rc) : EXIT_OK;
}

/* Operands: FILE [KEYS]. */
static int filter_add(struct fopts *f, int n_ops, char **ops)
{
	if (n_ops < 1 || n_ops > 2) {
		fprintf(stderr, "bfi filter add: need FILE and at most one KEYS file\n");
		return usage_try("filter add");
	}
	const char *path = ops[0];
	int wait = f->wait;
	/* load, add and save under the file's lock: two adds never lose each other's keys */
	int lock;
	int rc = bfi_filter_lock(path, wait, &lock);
	if (rc == BFI_E_BUSY) {
		fprintf(stderr, "bfi filter add: %s: another bfi filter add holds it; give --wait to "
		                "wait for it\n", path);
		return EXIT_USAGE;
	}
	bfi_filter *bf = NULL;
	if (rc == 0)
		rc = bfi_filter_load(path, &bf);
	if (rc) {
		bfi_filter_unlock(&lock);
		return fail("add", path, rc);
	}
	if (add_keys(bf, n_ops == 2 ? ops[1] : NULL) != 0) {
		bfi_filter_destroy(&bf);
		bfi_filter_unlock(&lock);
		fprintf(stderr, "bfi filter add: reading keys failed\n");
		return EXIT_USAGE;
	}
	rc = bfi_filter_save(bf, path);
	bfi_filter_destroy(&bf);
	bfi_filter_unlock(&lock);
	return rc ? fail("add", path, rc) : EXIT_OK;
}

struct check {
	const bfi_filter *f;
	int unknown;
};

static int check_one(void *ctx, const char *key, size_t len)
{
	const struct check *c = ctx;
	int hit = bfi_filter_contains(c->f, key, len);
	if (c->unknown && hit)
		return 0;
	fwrite(key, 1, len, stdout);
	if (!c->unknown)
		fputs(hit ? "\tmaybe" : "\tno", stdout);
	putchar('\n');
	return 0;
}

/* Operands: FILE [KEY...]. */
static int filter_query(struct fopts *fo, int n_ops, char **ops)
{
	int words = fo->words;
	struct check chk = {NULL, fo->unknown};
	if (n_ops < 1) {
		fprintf(stderr, "bfi filter query: need FILE\n");
		return usage_try("filter query");
	}
	bfi_filter *f;
	int rc = bfi_filter_load(ops[0], &f);
	if (rc)
		return fail("query", ops[0], rc);
	chk.f = f;
	struct bfi_tokenizer t;
	bfi_tokenizer_init(&t, BFI_TERM_DEFAULT);
	if (n_ops > 1) {
		for (int i = 1; i < n_ops; i++) {
			if (words) {
				bfi_tokenizer_init(&t, BFI_TERM_DEFAULT);
				(void)bfi_tokenize(&t, ops[i], strlen(ops[i]), check_one, &chk);
				(void)bfi_tokenize_end(&t, check_one, &chk);
			} else {
				check_one(&chk, ops[i], strlen(ops[i]));
			}
		}
	} else {
		char *line = NULL;
		size_t cap = 0;
		ssize_t got;
		while ((got = getline(&line, &cap, stdin)) >= 0) {
			size_t n = (size_t)got;
			if (words) {
				(void)bfi_tokenize(&t, line, n, check_one, &chk);
				continue;
			}
			if (n && line[n - 1] == '\n')
				n--;
			if (n && line[n - 1] == '\r')
				n--;
			check_one(&chk, line, n);
		}
		if (words)
			(void)bfi_tokenize_end(&t, check_one, &chk);
		free(line);
	}
	bfi_filter_destroy(&f);
	return EXIT_OK; /* standard output is checked at exit (bfi.c) */
}

/* Operands: FILE. */
static int filter_info(struct fopts *fo, int n_ops, char **ops)
{
	int json = fo->json;
	if (n_ops != 1) {
		fprintf(stderr, "bfi filter info: need one FILE\n");
		return usage_try("filter info");
	}
	const char *path = ops[0];
	bfi_filter *f;
	int rc = bfi_filter_load(path, &f);
	if (rc)
		return fail("info", path, rc);
	struct bfi_filter_stats st;
	bfi_filter_stats(f, &st);
	int zstd = bfi_filter_compression(f) != 0;
	bfi_filter_destroy(&f);
	struct stat fs;
	unsigned long long bytes = stat(path, &fs) == 0 ? (unsigned long long)fs.st_size : 0;
	double fill = (double)st.bits_set / (double)st.m, fpr = pow(fill, st.k);
	/* distinct keys from the fill: n = -(m / k) ln(1 - fill) */
	double est = fill < 1 ? -(double)st.m / st.k * log1p(-fill) : INFINITY;
	if (json) {
		fputs("{\"file\": ", stdout);
		json_str(stdout, path, strlen(path));
		printf(", \"bits\": %llu, \"hashes\": %u, \"keys_added\": %llu, "
		       "\"bits_set\": %llu, \"fill\": %.6f, \"expected_fpr\": %.6g, "
		       "\"compressed\": %s, \"file_bytes\": %llu, \"estimated_distinct_keys\": ",
		       (unsigned long long)st.m, st.k, (unsigned long long)st.keys,
		       (unsigned long long)st.bits_set, fill, fpr, zstd ? "true" : "false", bytes);
		if (isfinite(est)) /* a full filter: no estimate, and JSON has no infinity */
			printf("%.0f}\n", est);
		else
			puts("null}");
	} else
		printf("filter       %s\n"
		       "bits         %llu (m), %u hashes (k)\n"
		       "keys added   %llu (repeats counted), about %.0f distinct (from the fill)\n"
		       "fill         %llu bits set, %.4f\n"
		       "expected fpr %.3g\n"
		       "stored       %llu bytes, %s\n",
		       path, (unsigned long long)st.m, st.k, (unsigned long long)st.keys, est,
		       (unsigned long long)st.bits_set, fill, fpr, bytes,
		       zstd ? "the bits a zstd frame (version 2)" : "the bits as they are (version 1)");
	return EXIT_OK;
}

int cmd_filter(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		filter_page(argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_USAGE : EXIT_OK;
	}
	static int (*const run[])(struct fopts *, int, char **) = {filter_create, filter_add,
	                                                             filter_query, filter_info};
	for (size_t i = 0; i < sizeof run / sizeof *run; i++) {
		const struct opt_cmd *cmd = &filter_cmds[i];
		if (strcmp(argv[1], cmd->me + strlen("bfi filter ")))
			continue;
		/* getopt names the program by argv[0]: "bfi filter create: ..." */
		argv[1] = (char *)cmd->me;
		struct fopts f = {.level = 19, .p = 0.01};
		int rc = opts_parse(cmd, argc - 1, argv + 1, &f);
		if (rc)
			return rc - 1;
		return run[i](&f, argc - 1 - optind, argv + 1 + optind);
	}
	fprintf(stderr, "bfi filter: unknown subcommand '%s'\n", argv[1]);
	return usage_try("filter");
}
