/* cmd_pack.c - bfi pack and bfi unpack: a snapshot or a collection as one file and back. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "bfi.h"
#include "bfi_writer.h"
#include "opts.h"
#include "tools.h"

/* What bfi pack's options ask. */
struct pack_args {
	struct bfi_pack_options o;
	const char *out;
	int quiet, stats;
};

static int take_level(void *ctx, const char *arg)
{
	char *tail;
	long l = strtol(arg, &tail, 10);
	if (tail == arg || *tail || l < 1 || l > 19) {
		fprintf(stderr, "bfi pack: --level must be 1 to 19\n");
		return usage_try("pack");
	}
	((struct pack_args *)ctx)->o.level = (int)l;
	return 0;
}

static int take_threads(void *ctx, const char *arg)
{
	char *tail;
	unsigned long t = strtoul(arg, &tail, 10);
	if (tail == arg || *tail || t < 1 || t > 256) {
		fprintf(stderr, "bfi pack: --threads must be 1 to 256\n");
		return usage_try("pack");
	}
	((struct pack_args *)ctx)->o.threads = (unsigned)t;
	return 0;
}

static const char pack_cmd_head[] =
	"Usage: bfi pack [-q] [--level L] [--threads N] [--memory SIZE] -o PACK SRC\n"
	"\n"
	"Write the snapshot or collection SRC as the one file PACK: a tar\n"
	"stream (catalog.mdb then index.bfi; or a collection's MANIFEST, then\n"
	"each live segment) cut into zstd frames of 64 KiB, each with its\n"
	"checksum, and a seek table at the end (zstd's seekable format), so\n"
	"that bfi unpack, verify and inspect can skip frames. Any zstd and tar\n"
	"unpack it too:\n"
	"  mkdir SNAP && zstd -d < PACK | tar -x -C SNAP\n"
	"PACK is written beside its path, unnamed until whole (so a pack killed\n"
	"midway leaves nothing), and renamed into place; an existing\n"
	"PACK is replaced only if it is a bfi pack. The same SRC and level give\n"
	"the same bytes at any thread count.\n"
	"\n"
	"Exit status: 0 done, 2 usage or I/O error.\n"
	"\n"
	"Options:\n";

static const char pack_cmd_tail[] =
	"";

static const struct opt_row pack_cmd_rows[] = {
	{"output", 'o', "PACK",
	 "the file to write (required)",
	 OPT_STR, offsetof(struct pack_args, out), 0, 0, NULL, NULL},
	{"level", 300, "L",
	 "zstd level, 1..19 (3): Bloom filter rows barely\n"
	 "compress, so higher levels mostly cost time",
	 OPT_FN, 0, 0, 0, NULL, take_level},
	{"threads", 301, "N",
	 "frames compressed at once, 1..256 (the online cores)",
	 OPT_FN, 0, 0, 0, NULL, take_threads},
	{"memory", 302, "SIZE",
	 "bound on packing's memory (K, M, G suffixes):\n"
	 "threads are dropped until it fits, and a SIZE too\n"
	 "small for one is an error",
	 OPT_U64, offsetof(struct pack_args, o.memory), 1, UINT64_MAX, "--memory: not a size from 1 to 18446744073709551615: %s", NULL},
	{"frame", 303, "SIZE",
	 "bytes of the tar stream a frame, 4K..64M (64K: a query\n"
	 "scanning the pack in place decompresses little more\n"
	 "than it needs; larger frames pack a little faster)",
	 OPT_U32, offsetof(struct pack_args, o.frame), 4096, 64u << 20, "--frame: not a size from 4096 to 67108864: %s", NULL},
	{"stats", 304, NULL,
	 "print where the CPU went: the serial part (files,\n"
	 "tar stream, writes), the frames' compression, and the\n"
	 "parallelism 16 threads could reach (all CPU over the\n"
	 "time batches of 16 frames take when each is read\n"
	 "while the one before compresses: the slowest frame\n"
	 "of a batch, its writes, and what is serial besides)",
	 OPT_FLAG, offsetof(struct pack_args, stats), 0, 0, NULL, NULL},
	{"quiet", 'q', NULL,
	 "no progress line",
	 OPT_FLAG, offsetof(struct pack_args, quiet), 0, 0, NULL, NULL},
	{"help", 'h', NULL,
	 "show this help",
	 OPT_HELP, 0, 0, 0, NULL, NULL},
	{NULL, 0, NULL, NULL, OPT_FN, 0, 0, 0, NULL, NULL},
};

static const struct opt_cmd pack_cmd = {
    .me = "bfi pack",
    .head = pack_cmd_head,
    .tail = pack_cmd_tail,
    .rows = pack_cmd_rows,
    .column = 21,
};

/* What bfi unpack's options ask. */
struct unpack_args {
	struct bfi_pack_options o;
	const char *out;
	int quiet;
};

static const char unpack_cmd_head[] =
	"Usage: bfi unpack [-q] [--memory SIZE] -o OUT PACK\n"
	"\n"
	"Write the snapshot or collection in PACK (bfi pack) back to OUT, byte\n"
	"for byte: every frame is decompressed and checked against its\n"
	"checksums, and every member against what a pack holds, before OUT is\n"
	"published. A snapshot is published as bfi build publishes one (staged\n"
	"beside OUT, then swapped in at once, so bfi serve and other readers\n"
	"of OUT see the old snapshot or the new, never a mix); OUT may be a\n"
	"snapshot already. A collection is renamed into place at OUT; if OUT\n"
	"is a collection already, the two are swapped at once while its lock\n"
	"is held (refused if a writer holds it), and the old one removed.\n"
	"\n"
	"Exit status: 0 done, 1 PACK is damaged or not a pack, 2 usage or I/O\n"
	"error.\n"
	"\n"
	"Options:\n";

static const char unpack_cmd_tail[] =
	"";

static const struct opt_row unpack_cmd_rows[] = {
	{"output", 'o', "OUT",
	 "where to write (required)",
	 OPT_STR, offsetof(struct unpack_args, out), 0, 0, NULL, NULL},
	{"memory", 300, "SIZE",
	 "refuse a pack whose frames need more than SIZE",
	 OPT_U64, offsetof(struct unpack_args, o.memory), 1, UINT64_MAX, "--memory: not a size from 1 to 18446744073709551615: %s", NULL},
	{"quiet", 'q', NULL,
	 "no progress line",
	 OPT_FLAG, offsetof(struct unpack_args, quiet), 0, 0, NULL, NULL},
	{"help", 'h', NULL,
	 "show this help",
	 OPT_HELP, 0, 0, 0, NULL, NULL},
	{NULL, 0, NULL, NULL, OPT_FN, 0, 0, 0, NULL, NULL},
};

static const struct opt_cmd unpack_cmd = {
    .me = "bfi unpack",
    .head = unpack_cmd_head,
    .tail = unpack_cmd_tail,
    .rows = unpack_cmd_rows,
    .column = 21,
};

static void on_progress(void *c, uint64_t done, uint64_t total)
{
	progress_show(c, "bytes", done, total);
}

/* The short word on a mistyped command line: no wall of help. */
static int usage(const char *me, const char *why)
{
	if (why)
		fprintf(stderr, "bfi %s: %s\n", me, why);
	return usage_try(me);
}

int cmd_pack(int argc, char **argv)
{
	struct pack_args opt = {.out = NULL};
	bfi_pack_options_init(&opt.o);
	int orc = opts_parse(&pack_cmd, argc, argv, &opt);
	if (orc)
		return orc - 1;
	struct bfi_pack_options o = opt.o;
	const char *out = opt.out;
	int quiet = opt.quiet, stats = opt.stats;
	struct bfi_pack_stats st;
	if (out == NULL)
		return usage("pack", "need -o PACK");
	if (optind != argc - 1)
		return usage("pack", "need exactly one SRC");
	struct progress p;
	progress_init(&p, quiet);
	o.progress = on_progress;
	o.progress_ctx = &p;
	if (stats)
		o.stats = &st;
	char err[4600];
	int rc = bfi_pack(argv[optind], out, &o, err, sizeof err);
	progress_done(&p);
	if (rc) {
		fprintf(stderr, "bfi pack: %s\n", err[0] ? err : bfi_strerror(rc));
		return EXIT_USAGE;
	}
	if (stats) {
		double all = st.serial + st.compress;
		fprintf(stderr,
		        "bfi pack: stats: serial %.3f s CPU (files, tar stream, writes); compressing "
		        "%.3f s CPU over %u frames; at 16 threads at least %.3f s: %.2fx\n",
		        st.serial, st.compress, st.frames, st.critical16,
		        st.critical16 > 0 ? all / st.critical16 : 1.0);
	}
	return EXIT_OK;
}

int cmd_unpack(int argc, char **argv)
{
	struct unpack_args opt = {.out = NULL};
	bfi_pack_options_init(&opt.o);
	int orc = opts_parse(&unpack_cmd, argc, argv, &opt);
	if (orc)
		return orc - 1;
	struct bfi_pack_options o = opt.o;
	const char *out = opt.out;
	int quiet = opt.quiet;
	if (out == NULL)
		return usage("unpack", "need -o OUT");
	if (optind != argc - 1)
		return usage("unpack", "need exactly one PACK");
	struct progress p;
	progress_init(&p, quiet);
	o.progress = on_progress;
	o.progress_ctx = &p;
	char err[4600], warn[4600];
	int rc = bfi_unpack(argv[optind], out, &o, err, sizeof err, warn, sizeof warn);
	progress_done(&p);
	if (warn[0])
		fprintf(stderr, "bfi unpack: warning: %s\n", warn);
	if (rc) {
		fprintf(stderr, "bfi unpack: %s\n", err[0] ? err : bfi_strerror(rc));
		/* the format's codes: the pack, or a manifest in it, is damaged */
		return rc >= BFI_E_TRUNCATED && rc <= BFI_E_TRUNCATED + 99 ? EXIT_BAD : EXIT_USAGE;
	}
	return EXIT_OK;
}
