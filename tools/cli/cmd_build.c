/* cmd_build.c - bfi build: write a snapshot. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "bfi_paths.h"
#include "bfi_writer.h"
#include "tools.h"

/* "bfi build", or "bfi append" when append builds a segment through here */
static const char *me = "bfi build";

static const char help[] =
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
	"Options:\n"
	"  -o, --output SNAP   the snapshot to write (required)\n"
	"      --input FORMAT  what INPUT is:\n"
	"                      keys   a directory of key files (the default)\n"
	"                      tsv    set<TAB>key lines (the same as --tsv)\n"
	"                      text   documents (see --max-term, --stop-words)\n"
	"                      fasta  FASTA/FASTQ files (needs --kmer)\n"
	"                      json, xml  documents as path keys (see --paths)\n"
	"                      text, fasta, json and xml take files, plain or\n"
	"                      compressed (gzip, xz, bzip2, zstd), or directories\n"
	"                      of them, several INPUTs allowed; each file is a set\n"
	"                      named after it, less .gz/.xz/.bz2/.zst (and for\n"
	"                      fasta .fa/.fasta/.fna/.ffn/.fq/\n"
	"                      .fastq/.seq). Text keys are terms (ASCII letters\n"
	"                      and digits, lower-cased), fasta keys canonical\n"
	"                      k-mers\n"
	"      --kmer K        fasta: k-mer length, 1..255 (beyond 32, keys are\n"
	"                      canonical rolling hashes)\n"
	"      --from-filters  INPUT is a filter file ('bfi filter create') or a\n"
	"                      directory of them, one set each (named after the\n"
	"                      file less .bff); all must share m and k; every\n"
	"                      layout at their width (rambo cells: the OR of\n"
	"                      their sets' filters)\n"
	"      --per-record    fasta: each record is a set, named by its id\n"
	"      --min-count N   keep only the keys a set's files give N times or more\n"
	"                      (k-mers seen once in raw reads are mostly errors);\n"
	"                      counted in memory (27 to 54 bytes a distinct key),\n"
	"                      past --memory's share in sorted runs in $TMPDIR; the\n"
	"                      summary says how many distinct keys were kept and\n"
	"                      dropped, --stats each set's\n"
	"      --fof FILE      the sets from FILE, a line each, NAME: PATH[; PATH...]\n"
	"                      (kmindex's file of files): each set is its files\n"
	"                      read as one, FASTA/FASTQ with --input fasta, else key\n"
	"                      files; plain or compressed; a relative PATH is of\n"
	"                      FILE's directory. No INPUT then\n"
	"      --paths E       json, xml: the path keys, breadth (each element name\n"
	"                      at its level), depth (every sub-path) or both\n"
	"                      (default), for bfi query --path\n"
	"      --path-max L    json, xml: longest sub-path of the depth keys (8)\n"
	"      --max-term N    text: longest term kept, 1..255 (32); longer runs\n"
	"                      are dropped\n"
	"      --stop-words F  text: leave out the terms of file F\n"
	"      --tsv           INPUT is set<TAB>key lines, not a directory\n"
	"      --fpr P         target false-positive rate of every filter (default\n"
	"                      0.01): k = ceil(log2(1/P)), and m the width at which\n"
	"                      the largest set of each block, n keys, gives rate P\n"
	"                      exactly, ceil(-n k / ln(1 - P^(1/k))); k is at most 32\n"
	"                      (a warning says when P asks for more)\n"
	"      --bits M        the same m for every filter (overrides --fpr for m)\n"
	"      --hashes K      hash functions per key, 1..32 (overrides --fpr for k)\n"
	"      --expected-keys N  size filters for N keys instead of the sets' own\n"
	"                      counts (the Bloofi paper's n_expected); N k / ln 2\n"
	"                      must be at most 2^40 bits\n"
	"      --layout L      flat, plain, rambo, tree, or several joined by commas\n"
	"                      (flat,rambo): which layouts the index holds (default:\n"
	"                      flat, or the tree alone from 65,536 sets of like\n"
	"                      size, where its pruning pays).\n"
	"                      plain: N filters one after another, the naive\n"
	"                      baseline; rambo: repeated and merged filters;\n"
	"                      tree (or bloofi): levels of OR-aggregated filters\n"
	"      --fanout D      tree: children per node, 2..64, a power of two (64);\n"
	"                      with --bloofi-build incremental, the order d: nodes\n"
	"                      hold d..2d children (2)\n"
	"      --bloofi-build B  tree: offline (default: groups of D in the order\n"
	"                      sets are given) or incremental (the Bloofi paper's\n"
	"                      insertion by Hamming distance, to compare with it;\n"
	"                      holds every set's filter in memory)\n"
	"      --layout-option LAYOUT.NAME=VALUE  a layout's own parameter, written\n"
	"                      in its descriptor and shown by bfi inspect\n"
	"                      (repeatable); a name it does not take is refused\n"
	"                      with the names it does\n"
	"      --all-levels    tree: store every level, even those too full to pay\n"
	"                      for themselves (to compare bf-cost with the paper)\n"
	"      --reps R        rambo: repetitions (default: from N and --fpr)\n"
	"      --cells B       rambo: cells per repetition (default: the even number\n"
	"                      at or above sqrt(N), a multiple of --shards)\n"
	"      --shards S      rambo: the two-level hash's shards, for bfi stack (1)\n"
	"      --route I/S     keep only the sets the two-level hash sends to shard\n"
	"                      I of S (0-based), to build one shard for bfi stack\n"
	"      --keep-order    ordinals follow input order; by default sets are\n"
	"                      ordered by size, so that blocks are tight, or, when\n"
	"                      the tree is the only layout, clustered (--cluster)\n"
	"      --cluster       order sets by MinHash instead, so that similar sets\n"
	"                      sit together under the same tree nodes\n"
	"      --fixed-width   one width for every block: the largest set's\n"
	"      --prefilter P   auto (default), always or never: a union filter per\n"
	"                      flat block lets queries skip it; auto keeps one where\n"
	"                      the bytes a skip saves outweigh the probe\n"
	"      --block-cost B  bytes one more block must save to be made; smaller\n"
	"                      gives more, narrower blocks (default: 1M, and up\n"
	"                      to 4,096 sets a share of the index: a 32nd for the\n"
	"                      first blocks that fit 1 MiB together, a half for\n"
	"                      any other; 1M gives each width its block). By\n"
	"                      default a block of at most 511 sets of widths\n"
	"                      apart becomes a grouped run, whose blocks share\n"
	"                      their rows' lines; given, --block-cost,\n"
	"                      --block-sets and --fixed-width keep blocks as cut\n"
	"      --classic-prefilters\n"
	"                      pre-filters (flat and tree) as plain Bloom filters (k\n"
	"                      lines a probe); by default a key's bits share one\n"
	"                      64-byte line, one load a probe\n"
	"      --block-sets N  at most N sets per flat block (past 4,096 sets, a\n"
	"                      multiple of 512 or more, rounded down); narrower\n"
	"                      blocks read fewer bytes per query\n"
	"      --memory BYTES  the build's peak memory, the program's own (2-3 MiB)\n"
	"                      included, e.g. 512M: keys being read, sketches and\n"
	"                      rows being filled stay within it; spooled keys beyond\n"
	"                      it spill to $TMPDIR. At least 4M (less is raised, with\n"
	"                      a warning; under about 7M a build takes 2 MiB anyway).\n"
	"                      Default: a quarter of this machine's memory, but at\n"
	"                      most half of what this process may hold (the least of\n"
	"                      MemAvailable, its memory cgroup's limit and ulimit\n"
	"                      -v): %s here, so that a build neither swaps, nor is\n"
	"                      killed, nor, with rows that fit, goes through a\n"
	"                      scratch file\n"
	"      --threads N     threads for reading key, FASTA, text, JSON and XML\n"
	"                      files, sorting keys and filling rows (default: one per\n"
	"                      online core); a FASTA or FASTQ file of a thread's\n"
	"                      share of the input or more (and 1 MiB) is read on\n"
	"                      all of them, and decompressed beside them on N/4\n"
	"                      more, at least 2 (N/3 for xz), where its format\n"
	"                      allows (BGZF, zstd in many frames, xz in many\n"
	"                      blocks); the output is the same for any N\n"
	"      --stats         after the build, each phase's wall time, the CPU\n"
	"                      time of all its threads, and that of its busiest\n"
	"                      thread had each thread a core (its items' CPU\n"
	"                      times dealt as the threads take them); CPU over\n"
	"                      busiest is the speed-up the phase allows on\n"
	"                      --threads cores, whatever cores ran it; with\n"
	"                      --min-count, each set's distinct keys seen, kept\n"
	"                      and dropped (past 32 sets, the least and most kept)\n"
	"  -q, --quiet         no progress and no summary\n"
	"  -h, --help          show this help\n"
	"\n"
	"Exit status: 0, or 2 for a usage error, an input that cannot be read or\n"
	"is malformed, or an output that cannot be written (nothing is published\n"
	"then: a snapshot at SNAP stays as it was).\n";

struct ctx {
	struct progress p;
};

static void on_progress(void *c, const char *phase, uint64_t done, uint64_t total)
{
	progress_show(&((struct ctx *)c)->p, phase, done, total);
}

/* --stats: each phase, and the whole build, as wall, CPU, busiest thread and their ratio. */
static void print_stats(const bfi_writer *w, const char *cmd)
{
	struct bfi_phase_stats ph;
	double wall = 0, cpu = 0, busiest = 0;
	fprintf(stderr, "%s: %-11s %8s %8s %9s %13s\n", cmd, "phase", "wall s", "cpu s", "busiest s",
	        "cpu/busiest");
	for (unsigned i = 0; bfi_writer_phase(w, i, &ph) == 0; i++) {
		fprintf(stderr, "%s: %-11s %8.3f %8.3f %9.3f %12.2fx\n", cmd, ph.name, ph.wall, ph.cpu,
		        ph.busiest, ph.busiest > 0 ? ph.cpu / ph.busiest : 1.0);
		wall += ph.wall;
		cpu += ph.cpu;
		busiest += ph.busiest;
	}
	fprintf(stderr, "%s: %-11s %8.3f %8.3f %9.3f %12.2fx\n", cmd, "all", wall, cpu, busiest,
	        busiest > 0 ? cpu / busiest : 1.0);
}

/*
 * --min-count: the distinct keys the sets' files gave and those kept, in
 * all, for the summary line (as "; ..."); with each (at most PER_SET of
 * them, else the sets that kept the least and the most of theirs) for
 * --stats.
 */
#define PER_SET 32
static void print_counted(const bfi_writer *w, uint32_t least, int each, char *line, size_t cap)
{
	const char *name, *lo_name = "", *hi_name = "";
	size_t len, lo_len = 0, hi_len = 0;
	uint64_t seen, kept, all_seen = 0, all_kept = 0, n = 0;
	double lo = 2, hi = -1;
	for (uint64_t i = 0; bfi_writer_counted(w, i, &name, &len, &seen, &kept) == 0; i++, n++) {
		all_seen += seen;
		all_kept += kept;
		double share = seen ? (double)kept / (double)seen : 1.0;
		if (share < lo)
			lo = share, lo_name = name, lo_len = len;
		if (share > hi)
			hi = share, hi_name = name, hi_len = len;
	}
	if (n == 0)
		return;
	double dropped = all_seen ? 100.0 * (double)(all_seen - all_kept) / (double)all_seen : 0.0;
	snprintf(line, cap, "; --min-count %u kept %llu of the %llu distinct keys the sets' files gave "
	         "(dropped %llu, %.1f%%)", least, (unsigned long long)all_kept,
	         (unsigned long long)all_seen, (unsigned long long)(all_seen - all_kept), dropped);
	if (!each)
		return;
	fprintf(stderr, "%s: %-11s %12s %12s %12s\n", me, "set", "seen", "kept", "dropped");
	for (uint64_t i = 0; n <= PER_SET && bfi_writer_counted(w, i, &name, &len, &seen, &kept) == 0;
	     i++)
		fprintf(stderr, "%s: %-11.*s %12llu %12llu %12llu\n", me, (int)len, name,
		        (unsigned long long)seen, (unsigned long long)kept,
		        (unsigned long long)(seen - kept));
	if (n > PER_SET)
		fprintf(stderr, "%s: %llu sets kept from %.1f%% (%.*s) to %.1f%% (%.*s) of their distinct "
		        "keys\n", me, (unsigned long long)n, 100 * lo, (int)lo_len, lo_name, 100 * hi,
		        (int)hi_len, hi_name);
	fprintf(stderr, "%s: %-11s %12llu %12llu %12llu\n", me, "all", (unsigned long long)all_seen,
	        (unsigned long long)all_kept, (unsigned long long)(all_seen - all_kept));
}

/* --stats: the memory the build held itself to, and where the figure came from. */
static void print_memory(const char *cmd, uint64_t memory, int given)
{
	struct bfi_memory_limits l;
	bfi_memory_limits(&l);
	if (given)
		fprintf(stderr, "%s: memory      %.1f MiB (--memory)\n", cmd, (double)memory / (1 << 20));
	else
		fprintf(stderr, "%s: memory      %.1f MiB (the default: a quarter of the machine's "
		        "%.1f GiB, at most half of the %s, %.1f MiB)\n", cmd, (double)memory / (1 << 20),
		        (double)l.physical / (1u << 30), bfi_memory_bound_name(l.bound),
		        (double)l.usable / (1 << 20));
}

/* The writer's warnings from byte from on; returns where they end. */
static size_t print_warnings(const bfi_writer *w, size_t from)
{
	const char *all = bfi_writer_warnings(w);
	size_t len = strlen(all);
	for (const char *p = all + from; *p;) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p) : strlen(p);
		fprintf(stderr, "%s: warning: %.*s\n", me, (int)l, p);
		p += l + (nl != NULL);
	}
	return len;
}

/*
 * --fof FILE: a set a line, "NAME: PATH[; PATH...]" (kmindex's file of
 * files), blank lines and # comments skipped; a relative PATH is of FILE's
 * directory. Each set is its files read as one (bfi_writer_add_group).
 * 0, or an error said (writer_fail'd, or here for the file's own lines).
 */
static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n'))
		s[--n] = 0;
	return s;
}

static int add_fof(bfi_writer *w, const char *fof, const char *input, unsigned k)
{
	FILE *f = fopen(fof, "r");
	if (f == NULL) {
		fprintf(stderr, "%s: --fof %s: %s\n", me, fof, strerror(errno));
		return EXIT_USAGE;
	}
	const char *slash = strrchr(fof, '/');
	size_t dir = slash ? (size_t)(slash - fof) + 1 : 0; /* FILE's directory, with its slash */
	char *line = NULL, **paths = NULL;
	size_t cap = 0, lineno = 0, sets = 0;
	int rc = 0;
	while (rc == 0 && getline(&line, &cap, f) > 0) {
		lineno++;
		char *l = trim(line), *colon = strchr(l, ':');
		if (*l == 0 || *l == '#')
			continue;
		if (colon == NULL) {
			fprintf(stderr, "%s: %s:%zu: no ':' between a set's name and its files\n", me, fof,
			        lineno);
			rc = EXIT_USAGE;
			break;
		}
		*colon = 0;
		char *name = trim(l), *save = NULL;
		size_t n = 0;
		for (char *p = strtok_r(colon + 1, ";", &save); p && rc == 0; p = strtok_r(NULL, ";", &save)) {
			p = trim(p);
			if (*p == 0)
				continue;
			char **grown = realloc(paths, (n + 1) * sizeof *paths);
			char *full = grown ? malloc(dir + strlen(p) + 1) : NULL;
			if (grown)
				paths = grown;
			if (full == NULL) {
				rc = -ENOMEM;
				break;
			}
			if (*p == '/')
				strcpy(full, p);
			else
				sprintf(full, "%.*s%s", (int)dir, fof, p);
			paths[n++] = full;
		}
		if (rc == 0 && (*name == 0 || n == 0)) {
			fprintf(stderr, "%s: %s:%zu: a set needs a name and at least one file\n", me, fof,
			        lineno);
			rc = EXIT_USAGE;
		}
		if (rc == 0)
			rc = bfi_writer_add_group(w, name, strlen(name), (const char *const *)paths, n,
			                          input, k);
		sets += rc == 0;
		for (size_t i = 0; i < n; i++)
			free(paths[i]);
	}
	if (rc == 0 && ferror(f)) {
		fprintf(stderr, "%s: --fof %s: %s\n", me, fof, strerror(errno));
		rc = EXIT_USAGE;
	}
	if (rc == 0 && sets == 0) {
		fprintf(stderr, "%s: --fof %s names no set\n", me, fof);
		rc = EXIT_USAGE;
	}
	free(paths);
	free(line);
	fclose(f);
	return rc;
}

int cmd_build(int argc, char **argv)
{
	me = argc > 0 && !strcmp(argv[0], "bfi append") ? "bfi append" : "bfi build";
	static const struct option opts[] = {
		{"output", required_argument, 0, 'o'}, {"tsv", no_argument, 0, 't'},
		{"fpr", required_argument, 0, 'f'},    {"bits", required_argument, 0, 'b'},
		{"hashes", required_argument, 0, 'k'}, {"memory", required_argument, 0, 'm'},
		{"quiet", no_argument, 0, 'q'},        {"help", no_argument, 0, 'h'},
		{"stats", no_argument, 0, 's'},
		{"expected-keys", required_argument, 0, 'e'}, {"layout", required_argument, 0, 'L'},
		{"keep-order", no_argument, 0, 'K'},   {"fixed-width", no_argument, 0, 'F'},
		{"block-cost", required_argument, 0, 'B'}, {"prefilter", required_argument, 0, 'P'},
		{"block-sets", required_argument, 0, 'N'},
		{"classic-prefilters", no_argument, 0, 'O'},
		{"reps", required_argument, 0, 'R'},   {"cells", required_argument, 0, 'C'},
		{"shards", required_argument, 0, 'H'},  {"route", required_argument, 0, 'U'},
		{"fanout", required_argument, 0, 'D'},  {"bloofi-build", required_argument, 0, 'I'},  {"all-levels", no_argument, 0, 'A'},
		{"cluster", no_argument, 0, 'Y'},      {"input", required_argument, 0, 'i'},
		{"kmer", required_argument, 0, 'X'},   {"per-record", no_argument, 0, 'W'},
		{"max-term", required_argument, 0, 'T'}, {"stop-words", required_argument, 0, 'S'},
		{"from-filters", no_argument, 0, 'G'}, {"paths", required_argument, 0, 'Q'},
		{"path-max", required_argument, 0, 'J'}, {"threads", required_argument, 0, 'j'},
		{"fof", required_argument, 0, 1001}, {"min-count", required_argument, 0, 1002},
		{"layout-option", required_argument, 0, 1003},
		{0, 0, 0, 0}};
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	const char *out = NULL;
	int tsv = 0, quiet = 0, stats = 0, c, fasta = 0, per_record = 0, text = 0, filters = 0,
	    docs = 0;
	unsigned paths = 0, path_max = 0;
	unsigned kmer = 0, max_term = 0;
	const char *stop_words = NULL, *fof = NULL;
	char *end;
	static char layout_opts[4096]; /* --layout-option's, joined by commas */
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 't': tsv = 1; break;
		case 'i':
			if (!strcmp(optarg, "tsv"))
				tsv = 1;
			else if (!strcmp(optarg, "fasta"))
				fasta = 1;
			else if (!strcmp(optarg, "text"))
				text = 1;
			else if (!strcmp(optarg, "json"))
				docs = 1;
			else if (!strcmp(optarg, "xml"))
				docs = 2;
			else if (strcmp(optarg, "keys")) {
				fprintf(stderr, "%s: --input takes keys, tsv, text, fasta, json or xml\n", me);
				return EXIT_USAGE;
			}
			break;
		case 'T': {
			uint64_t v;
			if (parse_size(optarg, &v) || v < 1 || v > 255) {
				fprintf(stderr, "%s: --max-term must be from 1 to 255\n", me);
				return EXIT_USAGE;
			}
			max_term = (unsigned)v;
			break;
		}
		case 'S': stop_words = optarg; break;
		case 'G': filters = 1; break;
		case 'Q':
			paths = !strcmp(optarg, "breadth") ? BFI_PATHS_BREADTH
			        : !strcmp(optarg, "depth") ? BFI_PATHS_DEPTH
			        : !strcmp(optarg, "both")  ? BFI_PATHS_BREADTH | BFI_PATHS_DEPTH : 0;
			if (!paths) {
				fprintf(stderr, "%s: --paths takes breadth, depth or both\n", me);
				return EXIT_USAGE;
			}
			break;
		case 'J': {
			uint64_t v;
			if (parse_size(optarg, &v) || v < 1 || v > 64) {
				fprintf(stderr, "%s: --path-max must be from 1 to 64\n", me);
				return EXIT_USAGE;
			}
			path_max = (unsigned)v;
			break;
		}
		case 'X': {
			uint64_t v;
			if (parse_size(optarg, &v) || v < 1 || v > 255) {
				fprintf(stderr, "%s: --kmer must be from 1 to 255\n", me);
				return EXIT_USAGE;
			}
			kmer = (unsigned)v;
			break;
		}
		case 'W': per_record = 1; break;
		case 1001: fof = optarg; break;
		case 1002: {
			uint64_t v;
			if (parse_size(optarg, &v) || v < 1 || v > UINT32_MAX) {
				fprintf(stderr, "%s: --min-count must be 1 or more\n", me);
				return EXIT_USAGE;
			}
			o.min_count = (uint32_t)v;
			break;
		}
		case 'q': quiet = 1; break;
		case 's': stats = 1; break;
		case 'h': {
			char mem[32];
			snprintf(mem, sizeof mem, "%.1f GiB", (double)bfi_default_memory() / (1u << 30));
			printf(help, mem);
			return EXIT_OK;
		}
		case 'f':
			o.fpr = strtod(optarg, &end);
			if (*end || !(o.fpr > 0 && o.fpr < 1)) {
				fprintf(stderr, "%s: --fpr must be a number between 0 and 1\n", me);
				return EXIT_USAGE;
			}
			break;
		case 'b':
			if (parse_size(optarg, &o.bits) || o.bits == 0 || o.bits > (1ull << 40)) {
				fprintf(stderr, "%s: --bits must be 1..2^40\n", me);
				return EXIT_USAGE;
			}
			break;
		case 'k': {
			uint64_t k;
			if (parse_size(optarg, &k) || k < 1 || k > 32) {
				fprintf(stderr, "%s: --hashes must be 1..32\n", me);
				return EXIT_USAGE;
			}
			o.hashes = (uint32_t)k;
			break;
		}
		case 'e':
			if (parse_size(optarg, &o.expected_keys) || o.expected_keys == 0 ||
			    o.expected_keys > (1ull << 40)) {
				fprintf(stderr, "%s: --expected-keys must be 1..2^40, got '%s'\n", me, optarg);
				return EXIT_USAGE;
			}
			break;
		case 'L': {
			o.layouts = 0;
			char *copy = strdup(optarg), *save = NULL;
			for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
				unsigned f = bfi_layout_parse(t, strlen(t));
				o.layouts = f && o.layouts != ~0u ? o.layouts | f : ~0u;
			}
			free(copy);
			if (o.layouts == 0 || o.layouts == ~0u) {
				char names[200];
				fprintf(stderr, "%s: --layout takes %s, joined by commas\n", me,
				        layout_names(0, ", ", names, sizeof names));
				return EXIT_USAGE;
			}
			break;
		}
		case 'R':
		case 'C':
		case 'H': {
			uint64_t v;
			if (parse_size(optarg, &v) || v == 0 || (c == 'R' && v > 64) ||
			    (c == 'C' && v > (1u << 24)) || (c == 'H' && v > (1u << 24))) {
				fprintf(stderr, "%s: --reps must be 1..64, --cells and --shards "
				                "1..2^24\n", me);
				return EXIT_USAGE;
			}
			if (c == 'R')
				o.reps = (uint32_t)v;
			else if (c == 'C')
				o.cells = v;
			else
				o.shards = (uint32_t)v;
			break;
		}
		case 1003: {
			size_t at = strlen(layout_opts), n = strlen(optarg);
			if (n == 0 || strchr(optarg, ',') || at + n + 2 > sizeof layout_opts) {
				fprintf(stderr, "%s: --layout-option takes one LAYOUT.NAME=VALUE\n", me);
				return EXIT_USAGE;
			}
			snprintf(layout_opts + at, sizeof layout_opts - at, "%s%s", at ? "," : "", optarg);
			o.layout_options = layout_opts;
			break;
		}
		case 'K': o.keep_order = 1; break;
		case 'A': o.all_levels = 1; break;
		case 'Y': o.cluster = 1; break;
		case 'D': {
			uint64_t v;
			if (parse_size(optarg, &v) || v < 2 || v > 64) {
				fprintf(stderr, "%s: --fanout must be from 2 to 64\n", me);
				return EXIT_USAGE;
			}
			o.fanout = (uint32_t)v;
			break;
		}
		case 'I':
			if (!strcmp(optarg, "incremental"))
				o.bloofi_incremental = 1;
			else if (strcmp(optarg, "offline")) {
				fprintf(stderr, "%s: --bloofi-build takes offline or incremental\n", me);
				return EXIT_USAGE;
			}
			break;
		case 'U': {
			/* digits, a slash, digits; S no more than --shards allows */
			char *slash = strchr(optarg, '/'), *e1, *e2;
			unsigned long long a = 0, b = 0;
			int ok = slash && slash > optarg && isdigit((unsigned char)optarg[0]) &&
			         isdigit((unsigned char)slash[1]);
			if (ok) {
				errno = 0;
				a = strtoull(optarg, &e1, 10);
				b = strtoull(slash + 1, &e2, 10);
				ok = errno == 0 && e1 == slash && !*e2 && b >= 1 && b <= (1u << 24) && a < b;
			}
			if (!ok) {
				fprintf(stderr, "%s: --route takes I/S with 0 <= I < S <= 2^24, not '%s'\n", me,
				        optarg);
				return EXIT_USAGE;
			}
			o.route_shard = (unsigned)a;
			o.route_shards = (unsigned)b;
			break;
		}
		case 'O':
			o.classic_prefilters = 1;
			break;
		case 'P':
			if (!strcmp(optarg, "auto"))
				o.prefilter = BFI_PREFILTER_AUTO;
			else if (!strcmp(optarg, "always"))
				o.prefilter = BFI_PREFILTER_ALWAYS;
			else if (!strcmp(optarg, "never"))
				o.prefilter = BFI_PREFILTER_NEVER;
			else {
				fprintf(stderr, "%s: --prefilter must be auto, always or never\n", me);
				return EXIT_USAGE;
			}
			break;
		case 'B':
			if (parse_size(optarg, &o.block_cost) || o.block_cost == 0) {
				fprintf(stderr, "%s: bad --block-cost '%s'\n", me, optarg);
				return EXIT_USAGE;
			}
			break;
		case 'N': {
			uint64_t v;
			if (parse_size(optarg, &v) || v < 1 || v > UINT32_MAX) {
				fprintf(stderr, "%s: --block-sets must be 1 to %u, got '%s'\n", me, UINT32_MAX,
				        optarg);
				return EXIT_USAGE;
			}
			o.max_block_sets = (uint32_t)v;
			break;
		}
		case 'F': o.fixed_width = 1; break;
		case 'j': {
			char *tail;
			unsigned long v = strtoul(optarg, &tail, 10);
			if (tail == optarg || *tail || v < 1 || v > 256) {
				fprintf(stderr, "%s: --threads must be 1 to 256, got '%s'\n", me, optarg);
				return EXIT_USAGE;
			}
			o.threads = (unsigned)v;
			break;
		}
		case 'm':
			if (parse_size(optarg, &o.memory)) {
				fprintf(stderr, "%s: bad --memory '%s'\n", me, optarg);
				return EXIT_USAGE;
			}
			break;
		default:
			/* bfi append's own help tells its options and points here for the rest */
			if (strcmp(me, "bfi build"))
				fprintf(stderr, "Try 'bfi append --help' and 'bfi build --help'.\n");
			return strcmp(me, "bfi build") ? EXIT_USAGE : usage_try("build");
		}
	}
	char optwhy[512];
	if (bfi_layout_options_check(o.layout_options, o.layouts == BFI_BUILD_AUTO ? 0 : o.layouts,
	                             optwhy, sizeof optwhy)) {
		fprintf(stderr, "%s: %s\n", me, optwhy);
		return EXIT_USAGE;
	}
	if (o.fanout && !o.bloofi_incremental && (o.fanout & (o.fanout - 1))) {
		fprintf(stderr, "%s: --fanout must be a power of two (any order from 2 to 64 "
		                "with --bloofi-build incremental)\n", me);
		return EXIT_USAGE;
	}
	if (fasta + tsv + text + filters + (docs > 0) > 1) {
		fprintf(stderr, "%s: give one input format\n", me);
		return EXIT_USAGE;
	}
	if (!docs && (paths || path_max)) {
		fprintf(stderr, "%s: --paths and --path-max need --input json or xml\n", me);
		return EXIT_USAGE;
	}
	if (!text && (max_term || stop_words)) {
		fprintf(stderr, "%s: --max-term and --stop-words need --input text\n", me);
		return EXIT_USAGE;
	}
	if (fasta != (kmer > 0) || (per_record && !fasta)) {
		fprintf(stderr, "%s: --input fasta needs --kmer K, and --kmer and --per-record "
		                "need --input fasta\n", me);
		return EXIT_USAGE;
	}
	if (fof && (optind < argc || tsv || text || docs || filters || per_record)) {
		fprintf(stderr, "%s: --fof names the inputs itself, of keys or of --input fasta: give "
		                "no INPUT, and no --input other than those\n", me);
		return usage_try(me + 4);
	}
	if (out == NULL || (optind >= argc && !fof) ||
	    (!fof && !fasta && !text && !docs && optind != argc - 1)) {
		fprintf(stderr, "%s: need -o SNAP and %s\n", me,
		        fasta || text || docs ? "at least one INPUT" : "exactly one INPUT");
		return usage_try(me + 4);
	}
	if (o.keep_order && o.cluster) {
		fprintf(stderr, "%s: --keep-order and --cluster ask for two orders; give one\n", me);
		return EXIT_USAGE;
	}
	if ((o.route_shards || o.cells || o.reps || o.shards) && !(o.layouts & BFI_BUILD_RAMBO)) {
		fprintf(stderr, "%s: --route, --cells, --reps and --shards are for the rambo "
		                "layout; add --layout rambo\n", me);
		return EXIT_USAGE;
	}
	if (o.cells == 1) {
		fprintf(stderr, "%s: --cells 1 puts every set in one cell, which tells none "
		                "apart; give at least 2\n", me);
		return EXIT_USAGE;
	}
	if (o.cells && o.shards && o.cells % o.shards) {
		fprintf(stderr, "%s: --cells %llu is not a multiple of --shards %u\n", me,
		        (unsigned long long)o.cells, o.shards);
		return EXIT_USAGE;
	}
	char why[600];
	if (bfi_output_check(out, why, sizeof why) != 0) {
		fprintf(stderr, "%s: %s\n", me, why);
		return EXIT_USAGE;
	}
	const char *input = fof ? fof : argv[optind];
	struct ctx ctx;
	progress_init(&ctx.p, quiet);
	o.progress = on_progress;
	o.progress_ctx = &ctx;

	bfi_writer *w = NULL;
	int rc = bfi_writer_create(&o, &w);
	if (rc == BFI_E_LIMIT) /* the only limit the options alone can pass */
		fprintf(stderr, "%s: --expected-keys %llu: each filter would need more than "
		                "2^40 bits\n", me,
		        (unsigned long long)o.expected_keys);
	else if (rc)
		fprintf(stderr, "%s: %s\n", me, bfi_strerror(rc));
	if (rc)
		return EXIT_USAGE;
	size_t warned = print_warnings(w, 0);
	if (tsv) {
		FILE *f = strcmp(input, "-") ? fopen(input, "r") : stdin;
		if (f == NULL) {
			fprintf(stderr, "%s: %s: %s\n", me, input, strerror(errno));
			bfi_writer_destroy(&w);
			return EXIT_USAGE;
		}
		rc = bfi_writer_add_tsv(w, f, strcmp(input, "-") ? input : "(stdin)");
		if (f != stdin)
			fclose(f);
	} else if (docs) {
		for (int i = optind; i < argc && rc == 0; i++)
			rc = bfi_writer_add_paths(w, argv[i], docs == 2,
			                          paths ? paths : BFI_PATHS_BREADTH | BFI_PATHS_DEPTH, path_max);
	} else if (filters) {
		rc = bfi_writer_add_filters(w, input);
	} else if (text) {
		for (int i = optind; i < argc && rc == 0; i++)
			rc = bfi_writer_add_text(w, argv[i], max_term, stop_words);
	} else if (fof) {
		rc = add_fof(w, fof, fasta ? "fasta" : "keys", kmer);
	} else if (fasta) {
		for (int i = optind; i < argc && rc == 0; i++)
			rc = bfi_writer_add_fasta(w, argv[i], kmer, per_record);
	} else {
		rc = bfi_writer_add_dir(w, input);
	}
	struct bfi_build_summary sum;
	if (rc == 0)
		rc = bfi_writer_finish(w, out, &sum);
	progress_done(&ctx.p);
	print_warnings(w, warned);
	if (rc) {
		const char *msg = bfi_writer_errmsg(w);
		if (rc < 0) /* > 0: add_fof said what is wrong with its file */
			fprintf(stderr, "%s: %s\n", me, *msg ? msg : bfi_strerror(rc));
		bfi_writer_destroy(&w);
		return EXIT_USAGE;
	}
	char counted[256] = "";
	if (stats) {
		print_stats(w, me);
		print_memory(me, o.memory ? o.memory : bfi_default_memory(), o.memory != 0);
	}
	print_counted(w, o.min_count, stats, counted, sizeof counted);
	bfi_writer_destroy(&w);
	/* the layouts written (the default chooses by the sets), read back from the index alone */
	char held[128] = "?";
	bfi_snapshot *snap = NULL;
	if (!quiet && bfi_open(out, BFI_OPEN_NO_CATALOG, &snap) == 0) {
		struct bfi_info in;
		bfi_info(snap, &in);
		layout_names(in.layouts, ",", held, sizeof held);
		bfi_close(&snap);
	}
	if (!quiet)
		fprintf(stderr,
		        "%s: wrote %s: %llu sets, %llu keys (%llu distinct set/key pairs), "
		        "largest set %llu keys, k=%u, layout %s (%u flat blocks), widest m=%llu bits; "
		        "index %llu bytes, catalog %llu bytes%s\n", me,
		        out, (unsigned long long)sum.n_sets, (unsigned long long)sum.keys_in,
		        (unsigned long long)sum.distinct_pairs, (unsigned long long)sum.max_set_keys,
		        sum.hashes, held, sum.blocks, (unsigned long long)sum.bits,
		        (unsigned long long)sum.index_bytes,
		        (unsigned long long)sum.catalog_bytes, counted);
	return EXIT_OK;
}
