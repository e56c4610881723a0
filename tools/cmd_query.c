/* cmd_query.c - bfi query: which sets may contain each key. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "bfi.h"
#include "tools.h"

static const char help[] =
	"Usage: bfi query [OPTIONS] SNAP [KEY...]\n"
	"\n"
	"Print the sets of SNAP that may contain each KEY: never misses a set\n"
	"that holds the key, and may list a few that do not (false positives).\n"
	"With no KEY, each line of standard input is one query (a trailing CR\n"
	"is dropped). Answers come in input order, one line per query:\n"
	"  text:    the key, then a TAB before each matching set name\n"
	"  --json:  {\"query\": \"KEY\", \"matches\": [\"name\", ...]}\n"
	"  --count: the key, a TAB, and the number of matching sets\n"
	"\n"
	"Options:\n"
	"      --json       one JSON object per query\n"
	"  -c, --count      counts instead of names (with --json: \"count\": N)\n"
	"      --ordinals   set ordinals instead of names (no catalog needed)\n"
	"      --trusted    skip the catalog digest check (trusted files only)\n"
	"  -h, --help       show this help\n";

struct out {
	int json, count, ordinals;
};

static int answer(bfi_snapshot *s, bfi_result *res, const struct out *o, const char *key,
                  size_t len)
{
	int rc = bfi_query_key(s, key, len, res);
	if (rc)
		return rc;
	size_t n = bfi_result_count(res);
	const uint32_t *ords = bfi_result_ordinals(res);
	if (o->json) {
		fputs("{\"query\": ", stdout);
		json_str(stdout, key, len);
	} else {
		fwrite(key, 1, len, stdout);
	}
	if (o->count) {
		printf(o->json ? ", \"count\": %zu}\n" : "\t%zu\n", n);
		return 0;
	}
	if (o->json)
		fputs(", \"matches\": [", stdout);
	for (size_t i = 0; i < n; i++) {
		if (o->json && i)
			fputs(", ", stdout);
		else if (!o->json)
			fputc('\t', stdout);
		if (o->ordinals) {
			printf("%u", ords[i]);
			continue;
		}
		const char *name;
		size_t nl;
		rc = bfi_set_name(s, ords[i], &name, &nl);
		if (rc)
			return rc;
		if (o->json)
			json_str(stdout, name, nl);
		else
			fwrite(name, 1, nl, stdout);
	}
	fputs(o->json ? "]}\n" : "\n", stdout);
	return 0;
}

int cmd_query(int argc, char **argv)
{
	static const struct option opts[] = {{"json", no_argument, 0, 'j'},
	                                     {"count", no_argument, 0, 'c'},
	                                     {"ordinals", no_argument, 0, 'O'},
	                                     {"trusted", no_argument, 0, 'T'},
	                                     {"help", no_argument, 0, 'h'},
	                                     {0, 0, 0, 0}};
	struct out o = {0, 0, 0};
	unsigned flags = 0;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "ch", opts, NULL)) != -1) {
		switch (c) {
		case 'j': o.json = 1; break;
		case 'c': o.count = 1; break;
		case 'O': o.ordinals = 1; break;
		case 'T': flags |= BFI_OPEN_TRUSTED; break;
		case 'h': fputs(help, stdout); return EXIT_OK;
		default: fputs(help, stderr); return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "bfi query: need SNAP\n\n%s", help);
		return EXIT_USAGE;
	}
	const char *path = argv[optind++];
	if (o.ordinals || o.count)
		flags |= BFI_OPEN_NO_CATALOG;
	bfi_snapshot *s = NULL;
	bfi_result *res = NULL;
	int rc = bfi_open(path, flags, &s);
	if (rc) {
		fprintf(stderr, "bfi query: %s: %s\n", path, bfi_strerror(rc));
		return EXIT_USAGE;
	}
	rc = bfi_result_create(&res);
	if (optind < argc) {
		for (int i = optind; i < argc && rc == 0; i++)
			rc = answer(s, res, &o, argv[i], strlen(argv[i]));
	} else {
		char *line = NULL;
		size_t cap = 0;
		ssize_t got;
		while (rc == 0 && (got = getline(&line, &cap, stdin)) >= 0) {
			size_t n = (size_t)got;
			if (n && line[n - 1] == '\n')
				n--;
			if (n && line[n - 1] == '\r')
				n--;
			rc = answer(s, res, &o, line, n);
		}
		free(line);
	}
	if (fflush(stdout) != 0 && rc == 0)
		rc = -EIO;
	bfi_result_destroy(&res);
	bfi_close(&s);
	if (rc) {
		fprintf(stderr, "bfi query: %s: %s\n", path, bfi_strerror(rc));
		return EXIT_USAGE;
	}
	return EXIT_OK;
}
