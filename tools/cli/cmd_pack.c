/* cmd_pack.c - bfi pack and bfi unpack: a snapshot or a collection as one file and back. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "bfi.h"
#include "bfi_writer.h"
#include "tools.h"

static const char pack_help[] =
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
	"Options:\n"
	"  -o, --output PACK  the file to write (required)\n"
	"      --level L      zstd level, 1..19 (3): Bloom filter rows barely\n"
	"                     compress, so higher levels mostly cost time\n"
	"      --threads N    frames compressed at once, 1..256 (the online cores)\n"
	"      --memory SIZE  bound on packing's memory (K, M, G suffixes):\n"
	"                     threads are dropped until it fits, and a SIZE too\n"
	"                     small for one is an error\n"
	"      --frame SIZE   bytes of the tar stream a frame, 4K..64M (64K: a query\n"
	"                     scanning the pack in place decompresses little more\n"
	"                     than it needs; larger frames pack a little faster)\n"
	"      --stats        print where the CPU went: the serial part (files,\n"
	"                     tar stream, writes), the frames' compression, and the\n"
	"                     parallelism 16 threads could reach (all CPU over the\n"
	"                     time batches of 16 frames take when each is read\n"
	"                     while the one before compresses: the slowest frame\n"
	"                     of a batch, its writes, and what is serial besides)\n"
	"  -q, --quiet        no progress line\n"
	"  -h, --help         show this help\n";

static const char unpack_help[] =
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
	"Options:\n"
	"  -o, --output OUT   where to write (required)\n"
	"      --memory SIZE  refuse a pack whose frames need more than SIZE\n"
	"  -q, --quiet        no progress line\n"
	"  -h, --help         show this help\n";

static void on_progress(void *c, uint64_t done, uint64_t total)
{
	progress_show(c, "bytes", done, total);
}

/* A size option within [lo, hi]: 0, or EXIT_USAGE after saying why. */
static int size_opt(const char *me, const char *name, const char *arg, uint64_t lo, uint64_t hi,
                    uint64_t *out)
{
	if (parse_size(arg, out) != 0 || *out < lo || *out > hi) {
		fprintf(stderr, "bfi %s: --%s: not a size from %llu to %llu: %s\n", me, name,
		        (unsigned long long)lo, (unsigned long long)hi, arg);
		return EXIT_USAGE;
	}
	return 0;
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
	static const struct option opts[] = {
		{"output", required_argument, 0, 'o'}, {"level", required_argument, 0, 'L'},
		{"threads", required_argument, 0, 'j'}, {"memory", required_argument, 0, 'M'},
		{"frame", required_argument, 0, 'F'}, {"stats", no_argument, 0, 'S'},
		{"quiet", no_argument, 0, 'q'},
		{"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
	struct bfi_pack_options o;
	bfi_pack_options_init(&o);
	const char *out = NULL;
	int quiet = 0, stats = 0, c;
	uint64_t v;
	struct bfi_pack_stats st;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'q': quiet = 1; break;
		case 'L': {
			char *tail;
			long l = strtol(optarg, &tail, 10);
			if (tail == optarg || *tail || l < 1 || l > 19)
				return usage("pack", "--level must be 1 to 19");
			o.level = (int)l;
			break;
		}
		case 'j': {
			char *tail;
			unsigned long t = strtoul(optarg, &tail, 10);
			if (tail == optarg || *tail || t < 1 || t > 256)
				return usage("pack", "--threads must be 1 to 256");
			o.threads = (unsigned)t;
			break;
		}
		case 'M':
			if (size_opt("pack", "memory", optarg, 1, UINT64_MAX, &o.memory))
				return EXIT_USAGE;
			break;
		case 'F':
			if (size_opt("pack", "frame", optarg, 4096, 64u << 20, &v))
				return EXIT_USAGE;
			o.frame = (uint32_t)v;
			break;
		case 'S': stats = 1; break;
		case 'h': fputs(pack_help, stdout); return EXIT_OK;
		default: return usage("pack", NULL);
		}
	}
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
	static const struct option opts[] = {
		{"output", required_argument, 0, 'o'}, {"memory", required_argument, 0, 'M'},
		{"quiet", no_argument, 0, 'q'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
	struct bfi_pack_options o;
	bfi_pack_options_init(&o);
	const char *out = NULL;
	int quiet = 0, c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'q': quiet = 1; break;
		case 'M':
			if (size_opt("unpack", "memory", optarg, 1, UINT64_MAX, &o.memory))
				return EXIT_USAGE;
			break;
		case 'h': fputs(unpack_help, stdout); return EXIT_OK;
		default: return usage("unpack", NULL);
		}
	}
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
