/* cmd_verify.c - bfi verify: check every checksum; exit 0 good, 1 corrupt, 2 error. */
#include <getopt.h>
#include <string.h>

#include "bfi.h"
#include "opts.h"
#include "tools.h"

/* What bfi verify's options ask. */
struct verify_args {
	int quiet;
};

static const char verify_cmd_head[] =
	"Usage: bfi verify [-q] SNAP\n"
	"\n"
	"SNAP is a snapshot or a collection of them (bfi append --help), or a\n"
	"pack of either (bfi pack --help), read into memory without unpacking.\n"
	"\n"
	"Check everything in SNAP: header, section table, every 64 KiB chunk\n"
	"checksum, every section checksum, the zero padding of every row, and\n"
	"the catalog's digest and contents; in a pack, first every frame's\n"
	"checksums and every member. On damage, print the file (\"pack\" for\n"
	"the pack's own frames and members) and byte offset of the first bad\n"
	"region.\n"
	"\n"
	"Exit status: 0 good, 1 corrupt, 2 usage or I/O error.\n"
	"\n"
	"Options:\n";

static const char verify_cmd_tail[] =
	"";

static const struct opt_row verify_cmd_rows[] = {
	{"quiet", 'q', NULL,
	 "no progress, and print nothing when the snapshot is good",
	 OPT_FLAG, offsetof(struct verify_args, quiet), 0, 0, NULL, NULL},
	{"help", 'h', NULL,
	 "show this help",
	 OPT_HELP, 0, 0, 0, NULL, NULL},
	{NULL, 0, NULL, NULL, OPT_FN, 0, 0, 0, NULL, NULL},
};

static const struct opt_cmd verify_cmd = {
    .me = "bfi verify",
    .head = verify_cmd_head,
    .tail = verify_cmd_tail,
    .rows = verify_cmd_rows,
    .column = 16,
};

static void on_progress(void *c, uint64_t done, uint64_t total)
{
	progress_show(c, "verifying", done, total);
}

int cmd_verify(int argc, char **argv)
{
	struct verify_args opt = {0};
	int orc = opts_parse(&verify_cmd, argc, argv, &opt);
	if (orc)
		return orc - 1;
	int quiet = opt.quiet;
	if (optind != argc - 1) {
		fprintf(stderr, "bfi verify: need exactly one SNAP\n");
		return usage_try("verify");
	}
	const char *path = argv[optind];
	struct progress p;
	progress_init(&p, quiet);
	struct bfi_verify_report rep;
	/* a file that shrinks while it is read: corrupt, as any other change */
	guard_during(path, EXIT_BAD);
	int rc = bfi_verify(path, &rep, on_progress, &p);
	guard_during(NULL, 0);
	progress_done(&p);
	if (rc == 0) {
		if (!quiet)
			printf("%s: ok\n", path);
		return EXIT_OK;
	}
	if (rc <= BFI_E_FIRST + 999 && rc >= BFI_E_FIRST && rc != BFI_E_INVALID) {
		/* bfi's own code: the snapshot is damaged or not a snapshot. */
		printf("%s: CORRUPT: %s%s%s at byte offset %llu (length %llu): %s (%s)\n", path,
		       rep.segment, rep.segment[0] ? "/" : "", rep.file ? rep.file : "?",
		       (unsigned long long)rep.offset,
		       (unsigned long long)rep.length, rep.what, bfi_strerror(rc));
		return EXIT_BAD;
	}
	fprintf(stderr, "bfi verify: %s%s%s%s%s: %s%s%s\n", path, rep.segment[0] ? "/" : "",
	        rep.segment, rep.file ? "/" : "", rep.file ? rep.file : "", bfi_strerror(rc),
	        rep.what[0] ? ": " : "", rep.what);
	return EXIT_USAGE;
}
