/* cmd_synth.c - bfi synth: the Bloofi paper's synthetic workload, as files. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dirent.h>

#include "opts.h"
#include "tools.h"

/* What bfi synth's options ask. */
struct synth_args {
	const char *dir;
	uint64_t n, q, seed;
};

static const char synth_cmd_head[] =
	"Usage: bfi synth [OPTIONS] -o DIR\n"
	"\n"
	"Write the synthetic workload of the Bloofi paper (Crainiceanu & Lemire)\n"
	"into DIR: set i holds the integers [100 i, 100 i + 99] (as decimal keys);\n"
	"present keys are uniform in [0, 100 N), absent keys uniform in\n"
	"[100 N, 2^31). Files:\n"
	"  DIR/sets.tsv     set<TAB>key lines; set i is named s<i>\n"
	"  DIR/present.txt  present keys, one per line\n"
	"  DIR/absent.txt   absent keys, one per line\n"
	"Build it as the paper sizes its filters (n_expected 10,000, p 0.01, so\n"
	"m = 100,989 bits and k = 7) with:\n"
	"  bfi build -o SNAP --expected-keys 10000 --fpr 0.01 --tsv DIR/sets.tsv\n"
	"\n"
	"Options:\n";

static const char synth_cmd_tail[] =
	"\n"
	"Exit status: 0, or 2 for a usage error or a DIR that cannot be written.\n";

static const struct opt_row synth_cmd_rows[] = {
	{"output", 'o', "DIR",
	 "where to write (created if missing)",
	 OPT_STR, offsetof(struct synth_args, dir), 0, 0, NULL, NULL},
	{"sets", 'n', "N",
	 "number of sets (default 1000)",
	 OPT_U64, offsetof(struct synth_args, n), 1, 21474836, "--sets must be 1..21474836 (100 N < 2^31)", NULL},
	{"queries", 300, "Q",
	 "present and absent keys to write, each (default 10000)",
	 OPT_U64, offsetof(struct synth_args, q), 0, UINT64_MAX, "bad --queries", NULL},
	{"seed", 301, "S",
	 "random seed (default 1)",
	 OPT_U64, offsetof(struct synth_args, seed), 0, UINT64_MAX, "bad --seed", NULL},
	{"help", 'h', NULL,
	 "show this help",
	 OPT_HELP, 0, 0, 0, NULL, NULL},
	{NULL, 0, NULL, NULL, OPT_FN, 0, 0, 0, NULL, NULL},
};

static const struct opt_cmd synth_cmd = {
    .me = "bfi synth",
    .head = synth_cmd_head,
    .tail = synth_cmd_tail,
    .rows = synth_cmd_rows,
    .column = 21,
};

static uint64_t next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static const char *const files[3] = {"sets.tsv", "present.txt", "absent.txt"};

/*
 * May synth write into dir? If it is missing (then it is made, *made set)
 * or holds nothing but synth's own files; a snapshot or any other data is
 * refused. 0, or EXIT_USAGE after saying why.
 */
static int check_dir(const char *dir, int *made)
{
	*made = 0;
	if (mkdir(dir, 0755) == 0) {
		*made = 1;
		return 0;
	}
	if (errno != EEXIST) {
		fprintf(stderr, "bfi synth: %s: %s\n", dir, strerror(errno));
		return EXIT_USAGE;
	}
	DIR *d = opendir(dir);
	if (d == NULL) {
		fprintf(stderr, "bfi synth: %s: %s\n", dir, strerror(errno));
		return EXIT_USAGE;
	}
	struct dirent *e;
	int rc = 0;
	while (rc == 0 && (e = readdir(d)) != NULL) {
		int ours = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
		for (int i = 0; i < 3; i++)
			ours |= !strcmp(e->d_name, files[i]);
		if (!ours) {
			fprintf(stderr, "bfi synth: %s holds '%s', which synth does not write; give a new "
			                "or empty directory\n",
			        dir, e->d_name);
			rc = EXIT_USAGE;
		}
	}
	closedir(d);
	return rc;
}

int cmd_synth(int argc, char **argv)
{
	struct synth_args opt = {NULL, 1000, 10000, 1};
	int orc = opts_parse(&synth_cmd, argc, argv, &opt);
	if (orc)
		return orc - 1;
	const char *dir = opt.dir;
	uint64_t n = opt.n, q = opt.q, seed = opt.seed;
	if (dir == NULL || optind != argc) {
		fprintf(stderr, "bfi synth: need -o DIR and no other arguments\n");
		return usage_try("synth");
	}
	int made;
	if (check_dir(dir, &made))
		return EXIT_USAGE;
	struct outfile of[3];
	char final[3][4300];
	int rc = EXIT_OK;
	for (int i = 0; i < 3; i++) {
		snprintf(final[i], sizeof final[i], "%s/%s", dir, files[i]);
		if (rc == 0 && outfile_open(&of[i], "synth", final[i]) != 0)
			rc = EXIT_USAGE;
		else if (rc)
			of[i].f = NULL;
	}
	FILE *sets = of[0].f, *pres = of[1].f, *abs = of[2].f;
	for (uint64_t i = 0; rc == 0 && i < n; i++)
		for (uint64_t v = 100 * i; v < 100 * i + 100; v++)
			fprintf(sets, "s%llu\t%llu\n", (unsigned long long)i, (unsigned long long)v);
	uint64_t s = seed, lo = 100 * n, span = (1ull << 31) - lo;
	for (uint64_t i = 0; rc == 0 && i < q; i++) {
		fprintf(pres, "%llu\n", (unsigned long long)(next(&s) % (100 * n)));
		fprintf(abs, "%llu\n", (unsigned long long)(lo + next(&s) % span));
	}
	/* each written whole, or not at all: no partial files */
	for (int i = 0; i < 3; i++)
		if (of[i].f && outfile_close(&of[i], rc == 0) != 0)
			rc = EXIT_USAGE;
	if (rc && made)
		(void)rmdir(dir);
	return rc;
}
