/* build_args.c - bfi build's options as rows (build_args.h, opts.h), and their checks. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "bfi_paths.h"
#include "build_args.h"
#include "tools.h"



static int take_alphabet(void *ctx, const char *arg)
{
	struct args *a = ctx;
	if (strcmp(arg, "dna") && strcmp(arg, "protein")) {
		fprintf(stderr, "%s: --alphabet takes dna or protein\n", build_me);
		return EXIT_USAGE;
	}
	a->protein = !strcmp(arg, "protein");
	return 0;
}

static int take_input(void *ctx, const char *arg)
{
	struct args *a = ctx;
	const struct input_kind *k = input_kind(arg);
	if (k == NULL) {
		fprintf(stderr, "%s: --input takes keys, tsv, text, fasta, json or xml\n", build_me);
		return EXIT_USAGE;
	}
	if (k != input_kinds) { /* keys: the default, which another kind overrides */
		a->in = k;
		a->kinds |= 1u << (k - input_kinds);
	}
	return 0;
}

static int take_paths(void *ctx, const char *arg)
{
	struct args *a = ctx;
	a->paths = !strcmp(arg, "breadth") ? BFI_PATHS_BREADTH
	           : !strcmp(arg, "depth") ? BFI_PATHS_DEPTH
	           : !strcmp(arg, "both")  ? BFI_PATHS_BREADTH | BFI_PATHS_DEPTH : 0;
	if (a->paths)
		return 0;
	fprintf(stderr, "%s: --paths takes breadth, depth or both\n", build_me);
	return EXIT_USAGE;
}

static int take_fpr(void *ctx, const char *arg)
{
	struct args *a = ctx;
	char *end;
	a->o.fpr = strtod(arg, &end);
	if (!*end && a->o.fpr > 0 && a->o.fpr < 1)
		return 0;
	fprintf(stderr, "%s: --fpr must be a number between 0 and 1\n", build_me);
	return EXIT_USAGE;
}

static int take_layout(void *ctx, const char *arg)
{
	struct args *a = ctx;
	a->o.layouts = 0;
	char *copy = strdup(arg), *save = NULL;
	for (char *t = copy ? strtok_r(copy, ",", &save) : NULL; t; t = strtok_r(NULL, ",", &save)) {
		unsigned f = bfi_layout_parse(t, strlen(t));
		a->o.layouts = f && a->o.layouts != ~0u ? a->o.layouts | f : ~0u;
	}
	free(copy);
	if (a->o.layouts != 0 && a->o.layouts != ~0u)
		return 0;
	char names[200];
	fprintf(stderr, "%s: --layout takes %s, joined by commas\n", build_me,
	        layout_names(0, ", ", names, sizeof names));
	return EXIT_USAGE;
}

static int take_bloofi(void *ctx, const char *arg)
{
	struct args *a = ctx;
	if (!strcmp(arg, "incremental"))
		a->o.bloofi_incremental = 1;
	else if (strcmp(arg, "offline")) {
		fprintf(stderr, "%s: --bloofi-build takes offline or incremental\n", build_me);
		return EXIT_USAGE;
	}
	return 0;
}

static int take_layout_option(void *ctx, const char *arg)
{
	struct args *a = ctx;
	size_t at = strlen(a->layout_opts), n = strlen(arg);
	if (n == 0 || strchr(arg, ',') || at + n + 2 > sizeof a->layout_opts) {
		fprintf(stderr, "%s: --layout-option takes one LAYOUT.NAME=VALUE\n", build_me);
		return EXIT_USAGE;
	}
	snprintf(a->layout_opts + at, sizeof a->layout_opts - at, "%s%s", at ? "," : "", arg);
	a->o.layout_options = a->layout_opts;
	return 0;
}

/* digits, a slash, digits; S no more than --shards allows */
static int take_route(void *ctx, const char *arg)
{
	struct args *a = ctx;
	const char *slash = strchr(arg, '/');
	char *e1, *e2;
	unsigned long long i = 0, s = 0;
	int ok = slash && slash > arg && isdigit((unsigned char)arg[0]) &&
	         isdigit((unsigned char)slash[1]);
	if (ok) {
		errno = 0;
		i = strtoull(arg, &e1, 10);
		s = strtoull(slash + 1, &e2, 10);
		ok = errno == 0 && e1 == slash && !*e2 && s >= 1 && s <= (1u << 24) && i < s;
	}
	if (!ok) {
		fprintf(stderr, "%s: --route takes I/S with 0 <= I < S <= 2^24, not '%s'\n", build_me, arg);
		return EXIT_USAGE;
	}
	a->o.route_shard = (unsigned)i;
	a->o.route_shards = (unsigned)s;
	return 0;
}

static int take_prefilter(void *ctx, const char *arg)
{
	struct args *a = ctx;
	if (!strcmp(arg, "auto"))
		a->o.prefilter = BFI_PREFILTER_AUTO;
	else if (!strcmp(arg, "always"))
		a->o.prefilter = BFI_PREFILTER_ALWAYS;
	else if (!strcmp(arg, "never"))
		a->o.prefilter = BFI_PREFILTER_NEVER;
	else {
		fprintf(stderr, "%s: --prefilter must be auto, always or never\n", build_me);
		return EXIT_USAGE;
	}
	return 0;
}

static const char head[] =
	"Usage: bfi build -o SNAP [OPTIONS] INPUT...\n"
	"\n"
	"Write the snapshot directory SNAP (index.bfi + catalog.mdb) from INPUT:\n"
	"  a directory holding one file per set (the file name is the set name,\n"
	"  each non-empty line a key), or with --tsv a file of set<TAB>key lines\n"
	"  ('-' reads standard input), or with --input fasta sequences. SNAP is\n"
	"  replaced atomically if it is already a snapshot holding only bfi's\n"
	"  files; any other existing SNAP is refused. In a directory of inputs,\n"
	"  names starting with '.' are skipped; any other entry must be a\n"
	"  regular file. Set names are 1 to 511 bytes, without NUL, TAB, CR or\n"
	"  LF. The published files are read-only: a snapshot is replaced by\n"
	"  building a new one, never edited in place.\n"
	"\n"
	"Options:\n";

static const char tail[] =
	"\n"
	"Exit status: 0, or 2 for a usage error, an input that cannot be read or\n"
	"is malformed, or an output that cannot be written (nothing is published\n"
	"then: a snapshot at SNAP stays as it was).\n";

static const struct opt_row rows[] = {
	{"output", 'o', "SNAP",
	 "the snapshot to write (required)",
	 OPT_STR, offsetof(struct args, out), 0, 0, NULL, NULL},
	{"input", 300, "FORMAT",
	 "what INPUT is:\n"
	 "keys   a directory of key files (the default)\n"
	 "tsv    set<TAB>key lines (the same as --tsv)\n"
	 "text   documents (see --max-term, --stop-words)\n"
	 "fasta  FASTA/FASTQ files (needs --kmer)\n"
	 "json, xml  documents as path keys (see --paths)\n"
	 "text, fasta, json and xml take files, plain or\n"
	 "compressed (gzip, xz, bzip2, zstd), or directories\n"
	 "of them, several INPUTs allowed; each file is a set\n"
	 "named after it, less .gz/.xz/.bz2/.zst (and for\n"
	 "fasta .fa/.fasta/.fna/.ffn/.fq/\n"
	 ".fastq/.seq). Text keys are terms (ASCII letters\n"
	 "and digits, lower-cased), fasta keys canonical\n"
	 "k-mers",
	 OPT_FN, 0, 0, 0, NULL, take_input},
	{"kmer", 301, "K",
	 "fasta: k-mer length, 1..255 (beyond 32, keys are\n"
	 "canonical rolling hashes)",
	 OPT_U32, offsetof(struct args, kmer), 1, 255, "--kmer must be from 1 to 255", NULL},
	{"alphabet", 340, "A",
	 "fasta: dna (the default: canonical k-mers of A, C, G,\n"
	 "T) or protein (amino-acid k-mers of the twenty\n"
	 "letters; --kmer defaults to 10); queries are then\n"
	 "split the same way, and DNA k-mers refused",
	 OPT_FN, 0, 0, 0, NULL, take_alphabet},
	{"from-filters", 302, NULL,
	 "INPUT is a filter file ('bfi filter create') or a\n"
	 "directory of them, one set each (named after the\n"
	 "file less .bff); all must share m and k; every\n"
	 "layout at their width (rambo cells: the OR of\n"
	 "their sets' filters)",
	 OPT_FLAG, offsetof(struct args, filters), 0, 0, NULL, NULL},
	{"per-record", 303, NULL,
	 "fasta: each record is a set, named by its id",
	 OPT_FLAG, offsetof(struct args, per_record), 0, 0, NULL, NULL},
	{"min-count", 304, "N",
	 "keep only the keys a set's files give N times or more\n"
	 "(k-mers seen once in raw reads are mostly errors);\n"
	 "counted in memory (27 to 54 bytes a distinct key),\n"
	 "past --memory's share in sorted runs in $TMPDIR; the\n"
	 "summary says how many distinct keys were kept and\n"
	 "dropped, --stats each set's",
	 OPT_U32, offsetof(struct args, o.min_count), 1, UINT32_MAX, "--min-count must be 1 or more", NULL},
	{"fof", 305, "FILE",
	 "the sets from FILE, a line each, NAME: PATH[; PATH...]\n"
	 "(kmindex's file of files): each set is its files\n"
	 "read as one, FASTA/FASTQ with --input fasta, else key\n"
	 "files; plain or compressed; a relative PATH is of\n"
	 "FILE's directory. No INPUT then",
	 OPT_STR, offsetof(struct args, fof), 0, 0, NULL, NULL},
	{"paths", 306, "E",
	 "json, xml: the path keys, breadth (each element name\n"
	 "at its level), depth (every sub-path) or both\n"
	 "(default), for bfi query --path",
	 OPT_FN, 0, 0, 0, NULL, take_paths},
	{"path-max", 307, "L",
	 "json, xml: longest sub-path of the depth keys (8)",
	 OPT_U32, offsetof(struct args, path_max), 1, 64, "--path-max must be from 1 to 64", NULL},
	{"max-term", 308, "N",
	 "text: longest term kept, 1..255 (32); longer runs\n"
	 "are dropped",
	 OPT_U32, offsetof(struct args, max_term), 1, 255, "--max-term must be from 1 to 255", NULL},
	{"stop-words", 309, "F",
	 "text: leave out the terms of file F",
	 OPT_STR, offsetof(struct args, stop_words), 0, 0, NULL, NULL},
	{"tsv", 310, NULL,
	 "INPUT is set<TAB>key lines, not a directory",
	 OPT_FLAG, offsetof(struct args, tsv), 0, 0, NULL, NULL},
	{"fpr", 311, "P",
	 "target false-positive rate of every filter (default\n"
	 "0.01): k = ceil(log2(1/P)), and m the width at which\n"
	 "the largest set of each block, n keys, gives rate P\n"
	 "exactly, ceil(-n k / ln(1 - P^(1/k))); k is at most 32\n"
	 "(a warning says when P asks for more)",
	 OPT_FN, 0, 0, 0, NULL, take_fpr},
	{"bits", 312, "M",
	 "the same m for every filter (overrides --fpr for m)",
	 OPT_U64, offsetof(struct args, o.bits), 1, 1ull << 40, "--bits must be 1..2^40", NULL},
	{"hashes", 313, "K",
	 "hash functions per key, 1..32 (overrides --fpr for k)",
	 OPT_U32, offsetof(struct args, o.hashes), 1, 32, "--hashes must be 1..32", NULL},
	{"expected-keys", 314, "N",
	 "size filters for N keys instead of the sets' own\n"
	 "counts (the Bloofi paper's n_expected); N k / ln 2\n"
	 "must be at most 2^40 bits",
	 OPT_U64, offsetof(struct args, o.expected_keys), 1, 1ull << 40, "--expected-keys must be 1..2^40, got '%s'", NULL},
	{"layout", 315, "L",
	 "flat, plain, rambo, tree, or several joined by commas\n"
	 "(flat,rambo): which layouts the index holds (default:\n"
	 "flat, or the tree alone from 65,536 sets of like\n"
	 "size, where its pruning pays).\n"
	 "plain: N filters one after another, the naive\n"
	 "baseline; rambo: repeated and merged filters;\n"
	 "tree (or bloofi): levels of OR-aggregated filters",
	 OPT_FN, 0, 0, 0, NULL, take_layout},
	{"fanout", 316, "D",
	 "tree: children per node, 2..64, a power of two (64);\n"
	 "with --bloofi-build incremental, the order d: nodes\n"
	 "hold d..2d children (2)",
	 OPT_U32, offsetof(struct args, o.fanout), 2, 64, "--fanout must be from 2 to 64", NULL},
	{"bloofi-build", 317, "B",
	 "tree: offline (default: groups of D in the order\n"
	 "sets are given) or incremental (the Bloofi paper's\n"
	 "insertion by Hamming distance, to compare with it;\n"
	 "holds every set's filter in memory)",
	 OPT_FN, 0, 0, 0, NULL, take_bloofi},
	{"layout-option", 318, "LAYOUT.NAME=VALUE",
	 "a layout's own parameter, written\n"
	 "in its descriptor and shown by bfi inspect\n"
	 "(repeatable); a name it does not take is refused\n"
	 "with the names it does",
	 OPT_FN, 0, 0, 0, NULL, take_layout_option},
	{"all-levels", 319, NULL,
	 "tree: store every level, even those too full to pay\n"
	 "for themselves (to compare bf-cost with the paper)",
	 OPT_FLAG, offsetof(struct args, o.all_levels), 0, 0, NULL, NULL},
	{"reps", 320, "R",
	 "rambo: repetitions (default: from N and --fpr)",
	 OPT_U32, offsetof(struct args, o.reps), 1, 64, "--reps must be 1..64, --cells and --shards 1..2^24", NULL},
	{"cells", 321, "B",
	 "rambo: cells per repetition (default: the even number\n"
	 "at or above sqrt(N), a multiple of --shards)",
	 OPT_U64, offsetof(struct args, o.cells), 1, 1u << 24, "--reps must be 1..64, --cells and --shards 1..2^24", NULL},
	{"shards", 322, "S",
	 "rambo: the two-level hash's shards, for bfi stack (1)",
	 OPT_U32, offsetof(struct args, o.shards), 1, 1u << 24, "--reps must be 1..64, --cells and --shards 1..2^24", NULL},
	{"route", 323, "I/S",
	 "keep only the sets the two-level hash sends to shard\n"
	 "I of S (0-based), to build one shard for bfi stack",
	 OPT_FN, 0, 0, 0, NULL, take_route},
	{"keep-order", 324, NULL,
	 "ordinals follow input order; by default sets are\n"
	 "ordered by size, so that blocks are tight, or, when\n"
	 "the tree is the only layout, clustered (--cluster)",
	 OPT_FLAG, offsetof(struct args, o.keep_order), 0, 0, NULL, NULL},
	{"cluster", 325, NULL,
	 "order sets by MinHash instead, so that similar sets\n"
	 "sit together under the same tree nodes",
	 OPT_FLAG, offsetof(struct args, o.cluster), 0, 0, NULL, NULL},
	{"fixed-width", 326, NULL,
	 "one width for every block: the largest set's",
	 OPT_FLAG, offsetof(struct args, o.fixed_width), 0, 0, NULL, NULL},
	{"prefilter", 327, "P",
	 "auto (default), always or never: a union filter per\n"
	 "flat block lets queries skip it; auto keeps one where\n"
	 "the bytes a skip saves outweigh the probe",
	 OPT_FN, 0, 0, 0, NULL, take_prefilter},
	{"block-cost", 328, "B",
	 "bytes one more block must save to be made; smaller\n"
	 "gives more, narrower blocks (default: 1M, and up\n"
	 "to 4,096 sets a share of the index: a 32nd for the\n"
	 "first blocks that fit 1 MiB together, a half for\n"
	 "any other; 1M gives each width its block). By\n"
	 "default a block of at most 511 sets of widths\n"
	 "apart becomes a grouped run, whose blocks share\n"
	 "their rows' lines; given, --block-cost,\n"
	 "--block-sets and --fixed-width keep blocks as cut",
	 OPT_U64, offsetof(struct args, o.block_cost), 1, UINT64_MAX, "bad --block-cost '%s'", NULL},
	{"classic-prefilters", 329, NULL,
	 "\n"
	 "pre-filters (flat and tree) as plain Bloom filters (k\n"
	 "lines a probe); by default a key's bits share one\n"
	 "64-byte line, one load a probe",
	 OPT_FLAG, offsetof(struct args, o.classic_prefilters), 0, 0, NULL, NULL},
	{"block-sets", 330, "N",
	 "at most N sets per flat block (past 4,096 sets, a\n"
	 "multiple of 512 or more, rounded down); narrower\n"
	 "blocks read fewer bytes per query",
	 OPT_U32, offsetof(struct args, o.max_block_sets), 1, UINT32_MAX, "--block-sets must be 1 to 4294967295, got '%s'", NULL},
	{"memory", 331, "BYTES",
	 "the build's peak memory, the program's own (2-3 MiB)\n"
	 "included, e.g. 512M: keys being read, sketches and\n"
	 "rows being filled stay within it; spooled keys beyond\n"
	 "it spill to $TMPDIR. At least 4M (less is raised, with\n"
	 "a warning; under about 7M a build takes 2 MiB anyway).\n"
	 "Default: a quarter of this machine's memory, but at\n"
	 "most half of what this process may hold (the least of\n"
	 "MemAvailable, its memory cgroup's limit and ulimit\n"
	 "-v): %s here, so that a build neither swaps, nor is\n"
	 "killed, nor, with rows that fit, goes through a\n"
	 "scratch file",
	 OPT_U64, offsetof(struct args, o.memory), 0, UINT64_MAX, "bad --memory '%s'", NULL},
	{"threads", 332, "N",
	 "threads for reading key, FASTA, text, JSON and XML\n"
	 "files, sorting keys and filling rows (default: one per\n"
	 "online core); a FASTA or FASTQ file of a thread's\n"
	 "share of the input or more (and 1 MiB) is read on\n"
	 "all of them, and decompressed beside them on N/4\n"
	 "more, at least 2 (N/3 for xz), where its format\n"
	 "allows (BGZF, zstd in many frames, xz in many\n"
	 "blocks); the output is the same for any N",
	 OPT_U32, offsetof(struct args, o.threads), 1, 256, "--threads must be 1 to 256, got '%s'", NULL},
	{"stats", 333, NULL,
	 "after the build, each phase's wall time, the CPU\n"
	 "time of all its threads, and that of its busiest\n"
	 "thread had each thread a core (its items' CPU\n"
	 "times dealt as the threads take them); CPU over\n"
	 "busiest is the speed-up the phase allows on\n"
	 "--threads cores, whatever cores ran it; with\n"
	 "--min-count, each set's distinct keys seen, kept\n"
	 "and dropped (past 32 sets, the least and most kept)",
	 OPT_FLAG, offsetof(struct args, stats), 0, 0, NULL, NULL},
	{"quiet", 'q', NULL,
	 "no progress and no summary",
	 OPT_FLAG, offsetof(struct args, quiet), 0, 0, NULL, NULL},
	{"help", 'h', NULL,
	 "show this help",
	 OPT_HELP, 0, 0, 0, NULL, NULL},
	{NULL, 0, NULL, NULL, OPT_FN, 0, 0, 0, NULL, NULL},
};

/* The default --memory, as --help says it. */
static const char *default_memory(char *buf, size_t cap)
{
	snprintf(buf, cap, "%.1f GiB", (double)bfi_default_memory() / (1u << 30));
	return buf;
}

/* bfi append's own help tells its options and points here for the rest. */
static int unknown(const struct opt_cmd *cmd)
{
	(void)cmd;
	if (strcmp (build_me, "bfi build"))
		fprintf(stderr, "Try 'bfi append --help' and 'bfi build --help'.\n");
	return strcmp (build_me, "bfi build") ? EXIT_USAGE : usage_try("build");
}

const struct opt_cmd build_cmd = {
    .me = "bfi build",
    .head = head,
    .tail = tail,
    .help_fill = default_memory,
    .rows = rows,
    .unknown = unknown,
    .column = 22,
};

/* Options that need or exclude one another: 0, or the exit status after saying why. */
int build_check(struct args *a, int argc)
{
	struct bfi_build_options *o = &a->o;
	char why[600];
	if (bfi_layout_options_check(o->layout_options, o->layouts == BFI_BUILD_AUTO ? 0 : o->layouts,
	                             why, sizeof why)) {
		fprintf(stderr, "%s: %s\n", build_me, why);
		return EXIT_USAGE;
	}
	/* --tsv and --from-filters are kinds of input too */
	if (a->tsv)
		take_input(a, "tsv");
	if (a->filters) {
		a->in = input_filters();
		a->kinds |= 1u << (a->in - input_kinds);
	}
	const char *kind = a->in && a->in->name ? a->in->name : "";
	int fasta = !strcmp(kind, "fasta"), text = !strcmp(kind, "text");
	int docs = a->in ? a->in->docs : 0, many = a->in ? a->in->many : 0;
	const char *bad = NULL;
	if (o->fanout && !o->bloofi_incremental && (o->fanout & (o->fanout - 1)))
		bad = "--fanout must be a power of two (any order from 2 to 64 with --bloofi-build "
		      "incremental)";
	else if (a->kinds & (a->kinds - 1))
		bad = "give one input format";
	else if (!docs && (a->paths || a->path_max))
		bad = "--paths and --path-max need --input json or xml";
	else if (!text && (a->max_term || a->stop_words))
		bad = "--max-term and --stop-words need --input text";
	else if (a->protein && !fasta)
		bad = "--alphabet protein needs --input fasta";
	else if (fasta != (a->kmer > 0 || a->protein) || (a->per_record && !fasta))
		bad = "--input fasta needs --kmer K, and --kmer and --per-record need --input fasta";
	if (bad) {
		fprintf(stderr, "%s: %s\n", build_me, bad);
		return EXIT_USAGE;
	}
	if (a->protein && a->kmer == 0)
		a->kmer = PROTEIN_K;
	if (a->fof && (optind < argc || (a->in && !fasta) || a->per_record)) {
		fprintf(stderr, "%s: --fof names the inputs itself, of keys or of --input fasta: give "
		                "no INPUT, and no --input other than those\n", build_me);
		return usage_try(build_me + 4);
	}
	if (a->out == NULL || (optind >= argc && !a->fof) ||
	    (!a->fof && !many && optind != argc - 1)) {
		fprintf(stderr, "%s: need -o SNAP and %s\n", build_me,
		        many ? "at least one INPUT" : "exactly one INPUT");
		return usage_try(build_me + 4);
	}
	if (o->keep_order && o->cluster)
		bad = "--keep-order and --cluster ask for two orders; give one";
	else if ((o->route_shards || o->cells || o->reps || o->shards) && !(o->layouts & BFI_BUILD_RAMBO))
		bad = "--route, --cells, --reps and --shards are for the rambo layout; add --layout rambo";
	else if (o->cells == 1)
		bad = "--cells 1 puts every set in one cell, which tells none apart; give at least 2";
	if (bad) {
		fprintf(stderr, "%s: %s\n", build_me, bad);
		return EXIT_USAGE;
	}
	if (o->cells && o->shards && o->cells % o->shards) {
		fprintf(stderr, "%s: --cells %llu is not a multiple of --shards %u\n", build_me,
		        (unsigned long long)o->cells, o->shards);
		return EXIT_USAGE;
	}
	if (bfi_output_check(a->out, why, sizeof why) != 0) {
		fprintf(stderr, "%s: %s\n", build_me, why);
		return EXIT_USAGE;
	}
	return 0;
}
