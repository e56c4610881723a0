/* cmd_inspect.c - bfi inspect: what a snapshot holds, as text, JSON or a page of pictures. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bfi.h"
#include "inspect.h"
#include "opts.h"
#include "tools.h"

/* What bfi inspect's options ask. */
struct inspect_args {
	int json, sets, trusted, probe_given;
	const char *html;
	uint64_t probes;
};

static int take_probe(void *ctx, const char *arg)
{
	struct inspect_args *a = ctx;
	if (parse_size(arg, &a->probes) != 0 || a->probes > 100000000) {
		fprintf(stderr, "bfi inspect: --probe wants a count up to 100,000,000, not '%s'\n", arg);
		return EXIT_USAGE;
	}
	a->probe_given = 1;
	return 0;
}

static const char inspect_cmd_head[] =
	"Usage: bfi inspect [--json | --sets | --html FILE [--probe N]] SNAP\n"
	"\n"
	"SNAP is a snapshot or a collection of them (bfi append --help), or a\n"
	"pack of either (bfi pack --help), read into memory without unpacking.\n"
	"\n"
	"Show SNAP's files, format version, snapshot id, section table, filter\n"
	"parameters, the fill ratio of the sets' filters (summary and\n"
	"histogram) and the expected false-positive rate, (fill ratio)^k.\n"
	"\n"
	"Options:\n";

static const char inspect_cmd_tail[] =
	"\n"
	"Exit status: 0, or 2 for a usage error or a snapshot that cannot be\n"
	"opened or read.\n";

static const struct opt_row inspect_cmd_rows[] = {
	{"json", 300, NULL,
	 "the same as one JSON object (its \"schema\" names its\n"
	 "shape: bfi-inspect-1)",
	 OPT_FLAG, offsetof(struct inspect_args, json), 0, 0, NULL, NULL},
	{"html", 301, "FILE",
	 "write a self-contained page of pictures instead: bytes\n"
	 "by section, every set's fill as a heat map, the blocks,\n"
	 "the tree's levels, RAMBO's cell loads (inline SVG, no\n"
	 "network); FILE is replaced whole, and may not be a\n"
	 "symbolic link, a device or a file of bfi's ('-':\n"
	 "standard output)",
	 OPT_STR, offsetof(struct inspect_args, html), 0, 0, NULL, NULL},
	{"probe", 302, "N",
	 "with --html, also ask each layout N random absent keys\n"
	 "and set the false-positive rate measured beside the\n"
	 "expected one (default 0: none)",
	 OPT_FN, 0, 0, 0, NULL, take_probe},
	{"sets", 303, NULL,
	 "one line per set instead, TAB-separated: ordinal, name,\n"
	 "distinct keys, filter width m, ones in the filter, and\n"
	 "expected false-positive rate (ones / m)^k; for a\n"
	 "build with --min-count, then the distinct keys its\n"
	 "files gave and those dropped ('-' for a set not\n"
	 "counted: a segment built without)",
	 OPT_FLAG, offsetof(struct inspect_args, sets), 0, 0, NULL, NULL},
	{"trusted", 304, NULL,
	 "skip the catalog digest check (trusted files only)",
	 OPT_FLAG, offsetof(struct inspect_args, trusted), 0, 0, NULL, NULL},
	{"help", 'h', NULL,
	 "show this help",
	 OPT_HELP, 0, 0, 0, NULL, NULL},
	{NULL, 0, NULL, NULL, OPT_FN, 0, 0, 0, NULL, NULL},
};

static const struct opt_cmd inspect_cmd = {
    .me = "bfi inspect",
    .head = inspect_cmd_head,
    .tail = inspect_cmd_tail,
    .rows = inspect_cmd_rows,
    .column = 18,
};

/* The page made new beside FILE and renamed over it (outfile.c): a reader sees the old page or the new. */
static int write_html(const char *file, const bfi_snapshot *s, const char *path, uint64_t probes)
{
	struct outfile o;
	if (outfile_open(&o, "inspect", file) != 0)
		return EXIT_USAGE;
	int rc = inspect_html(o.f, s, path, probes);
	if (rc < 0)
		fprintf(stderr, "bfi inspect: %s: %s\n", path, bfi_strerror(rc));
	if (outfile_close(&o, rc == 0) != 0 || rc != 0)
		return EXIT_USAGE;
	return EXIT_OK;
}

int cmd_inspect(int argc, char **argv)
{
	struct inspect_args opt = {0};
	int orc = opts_parse(&inspect_cmd, argc, argv, &opt);
	if (orc)
		return orc - 1;
	int json = opt.json, sets = opt.sets, probe_given = opt.probe_given;
	unsigned flags = opt.trusted ? BFI_OPEN_TRUSTED : 0;
	const char *html = opt.html;
	uint64_t probes = opt.probes;
	if (optind != argc - 1) {
		fprintf(stderr, "bfi inspect: need exactly one SNAP\n");
		return usage_try("inspect");
	}
	if (json + sets + (html != NULL) > 1 || (probe_given && html == NULL)) {
		fprintf(stderr, "bfi inspect: --json, --sets and --html are each a whole answer: give one "
		                "(and --probe only with --html)\n");
		return EXIT_USAGE;
	}
	const char *path = argv[optind];
	bfi_snapshot *s = NULL;
	guard_during(path, EXIT_USAGE);
	int rc = bfi_open(path, flags, &s);
	guard_during(NULL, 0);
	if (rc) {
		fprintf(stderr, "bfi inspect: %s: %s\n", path, bfi_strerror(rc));
		return EXIT_USAGE;
	}
	guard_watch(s, path);
	struct bfi_info in;
	bfi_info(s, &in);
	if (sets) {
		/* --min-count's columns, if any set has them (or a damaged record: said below) */
		int counted = 0;
		for (uint64_t o = 0; o < in.ordinals && !counted; o++) {
			uint64_t seen;
			counted = bfi_set_seen(s, (uint32_t)o, &seen) != BFI_E_NOT_FOUND;
		}
		for (uint64_t o = 0; o < in.ordinals && rc == 0; o++) {
			struct bfi_set_stats st;
			const char *name;
			size_t nl;
			double fpr;
			rc = bfi_set_stats(s, (uint32_t)o, &st);
			if (rc == BFI_E_NOT_FOUND && in.segments) { /* a removed set's hole */
				rc = 0;
				continue;
			}
			if (rc == 0)
				rc = bfi_set_name(s, (uint32_t)o, &name, &nl);
			if (rc == 0)
				rc = bfi_set_fpr(s, (uint32_t)o, &fpr);
			uint64_t seen = 0;
			int got = rc == 0 && counted ? bfi_set_seen(s, (uint32_t)o, &seen) : BFI_E_NOT_FOUND;
			if (got != 0 && got != BFI_E_NOT_FOUND)
				rc = got; /* a damaged record: no line half written */
			if (rc == 0) {
				printf("%llu\t", (unsigned long long)o);
				text_str(stdout, name, nl);
				printf("\t%llu\t%llu\t%llu\t%.6g", (unsigned long long)st.distinct_keys,
				       (unsigned long long)st.bits, (unsigned long long)st.bits_set, fpr);
				if (got == 0)
					printf("\t%llu\t%llu", (unsigned long long)seen,
					       (unsigned long long)(seen - st.distinct_keys));
				else if (counted)
					printf("\t-\t-");
				putchar('\n');
			}
		}
		bfi_close(&s);
		if (rc) {
			fprintf(stderr, "bfi inspect: %s: %s\n", path, bfi_strerror(rc));
			return EXIT_USAGE;
		}
		return EXIT_OK;
	}
	if (html) {
		rc = write_html(html, s, path, probes);
		bfi_close(&s);
		return rc;
	}
	rc = inspect_write(stdout, s, path, json);
	bfi_close(&s);
	if (rc > 0)
		return EXIT_OK; /* standard output failed: stdout_close says how */
	if (rc) {
		fprintf(stderr, "bfi inspect: %s: %s\n", path, bfi_strerror(rc));
		return EXIT_USAGE;
	}
	return EXIT_OK;
}
