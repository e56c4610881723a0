/*
 * cmd_compact.c - bfi compact (a collection's segments joined by a
 * size-tiered policy, removed sets dropped) and bfi merge (snapshots and
 * collections joined into one snapshot), both without keys, through
 * the library's bfi_compact and bfi_merge (writer/compact.c; spec/format.md,
 * "Compaction and merge"). Here: options, progress and notes shown.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bfi_writer.h"
#include "tools.h"

static const char compact_help[] =
	"Usage: bfi compact [-q] [--full] [--wait] [--memory SIZE] COLL\n"
	"\n"
	"Join segments of the collection COLL into fewer, without their keys, and\n"
	"drop the sets removed from them. Each join is one commit: readers see the\n"
	"old segments or the new one. By default a size-tiered policy joins the\n"
	"newest segments while the one before them is no larger than all of them\n"
	"together, so that each segment holds more live sets than all the newer\n"
	"ones: G segments over N sets stay at most log2(N) + 1, and a set is\n"
	"rewritten O(log N) times. A segment that has lost half its sets or more\n"
	"is rewritten without them.\n"
	"\n"
	"A set keeps its filter bit for bit, so every answer stays what it was.\n"
	"The joined segment has a tree, its upper levels rebuilt, when every\n"
	"segment joined has one and every live set one filter width; RAMBO when\n"
	"every one has it with the same cells, repetitions, shards, widths and\n"
	"k, its cells ORed as bfi stack does; and the flat layout when any one\n"
	"has it, or no tree can be kept. A note names the segment that keeps a\n"
	"layout out, and says when a plain layout is not kept (spec/format.md,\n"
	"\"Compaction and merge\").\n"
	"\n"
	"Options:\n"
	"      --full         join every segment into one\n"
	"      --wait         wait for another writer's lock rather than fail\n"
	"      --memory SIZE  the rows being joined stay within SIZE (as bfi build)\n"
	"  -q, --quiet        no progress and no summary\n"
	"  -h, --help         show this help\n"
	"\n"
	"Exit status: 0 (also when there was nothing to do), or 2 for a usage\n"
	"error, another writer's lock, segments that cannot be joined, or an I/O\n"
	"error (the collection is then as it was).\n";

static const char merge_help[] =
	"Usage: bfi merge [-q] [--memory SIZE] -o OUT INPUT...\n"
	"\n"
	"Join the live sets of the snapshots and collections INPUT, in that order,\n"
	"into one snapshot at OUT, without their keys: flat blocks (or a tree's\n"
	"leaves) are joined column by column, and each set keeps its filter bit\n"
	"for bit, so OUT answers every query as the inputs together do. The\n"
	"inputs must share k and the way their keys were made (input kind, k-mer\n"
	"length, tokenizer, path encoding), have a flat layout or a tree, and\n"
	"hold no set name twice; the error names what differs. OUT has a tree,\n"
	"its upper levels rebuilt, when every input has one and every live set\n"
	"one filter width; RAMBO when every input has one of the same cells,\n"
	"repetitions, shards, widths and k; and the flat layout when any input\n"
	"has it, or no tree can be kept. A plain layout is not kept (a note says\n"
	"so); a layout this bfi cannot join is refused.\n"
	"\n"
	"Options:\n"
	"  -o, --output OUT   the snapshot to write (replaced if it is one)\n"
	"      --memory SIZE  the rows being joined stay within SIZE (as bfi build)\n"
	"  -q, --quiet        no progress and no summary\n"
	"  -h, --help         show this help\n"
	"\n"
	"Exit status: 0, or 2 for a usage error, inputs that cannot be joined, or\n"
	"an I/O error (OUT is then as it was).\n";

/* What the CLI shows of a join: its notes (a warning even when quiet) and progress. */
struct shown_join {
	const char *cmd;
	int quiet;
	struct progress prog;
};

static void on_note(void *ctx, const char *line)
{
	const struct shown_join *sj = ctx;
	if (!sj->quiet || !strncmp(line, "warning:", 8))
		fprintf(stderr, "bfi %s: %s\n", sj->cmd, line);
}

static void on_progress(void *ctx, const char *phase, uint64_t done, uint64_t total)
{
	progress_show(&((struct shown_join *)ctx)->prog, phase, done, total);
}

static void join_options(struct bfi_join_options *o, struct shown_join *sj, const char *cmd,
                         int quiet, uint64_t memory)
{
	*sj = (struct shown_join){.cmd = cmd, .quiet = quiet};
	progress_init(&sj->prog, quiet);
	bfi_join_options_init(o);
	o->memory = memory;
	o->progress = on_progress;
	o->progress_ctx = sj;
	o->note = on_note;
	o->note_ctx = sj;
}

int cmd_compact(int argc, char **argv)
{
	int full = 0, wait = 0, quiet = 0, opt;
	uint64_t memory = 0;
	static const struct option longs[] = {
	    {"full", no_argument, 0, 'F'},  {"wait", no_argument, 0, 'W'},
	    {"memory", required_argument, 0, 'M'}, {"quiet", no_argument, 0, 'q'},
	    {"help", no_argument, 0, 'h'},  {0, 0, 0, 0}};
	optind = 1;
	while ((opt = getopt_long(argc, argv, "qh", longs, NULL)) != -1) {
		switch (opt) {
		case 'F': full = 1; break;
		case 'W': wait = 1; break;
		case 'q': quiet = 1; break;
		case 'M':
			if (parse_size(optarg, &memory) != 0) {
				fprintf(stderr, "bfi compact: --memory: not a size: %s\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'h': fputs(compact_help, stdout); return EXIT_OK;
		default: return usage_try("compact");
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "bfi compact: need one COLL\n");
		return usage_try("compact");
	}
	const char *coll = argv[optind];
	struct bfi_join_options o;
	struct shown_join sj;
	join_options(&o, &sj, "compact", quiet, memory);
	o.full = full;
	o.wait = wait;
	char err[4600];
	unsigned joins = 0;
	int rc = bfi_compact(coll, &o, &joins, err, sizeof err);
	progress_done(&sj.prog);
	if (rc) {
		fprintf(stderr, "bfi compact: %s\n", err[0] ? err : bfi_strerror(rc));
		return EXIT_USAGE;
	}
	if (joins == 0 && !quiet)
		fprintf(stderr, "bfi compact: %s: nothing to compact\n", coll);
	return EXIT_OK;
}

int cmd_merge(int argc, char **argv)
{
	int quiet = 0, opt;
	uint64_t memory = 0;
	const char *out = NULL;
	static const struct option longs[] = {
	    {"output", required_argument, 0, 'o'}, {"memory", required_argument, 0, 'M'},
	    {"quiet", no_argument, 0, 'q'},        {"help", no_argument, 0, 'h'},
	    {0, 0, 0, 0}};
	optind = 1;
	while ((opt = getopt_long(argc, argv, "o:qh", longs, NULL)) != -1) {
		switch (opt) {
		case 'o': out = optarg; break;
		case 'q': quiet = 1; break;
		case 'M':
			if (parse_size(optarg, &memory) != 0) {
				fprintf(stderr, "bfi merge: --memory: not a size: %s\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'h': fputs(merge_help, stdout); return EXIT_OK;
		default: return usage_try("merge");
		}
	}
	int n = argc - optind;
	if (out == NULL || n < 1) {
		fprintf(stderr, "bfi merge: need -o OUT and at least one INPUT\n");
		return usage_try("merge");
	}
	if (output_ok("merge", out, argv + optind, n) != 0)
		return EXIT_USAGE;
	struct bfi_join_options o;
	struct shown_join sj;
	join_options(&o, &sj, "merge", quiet, memory);
	char err[4600];
	uint64_t n_sets = 0;
	int rc = bfi_merge((const char *const *)(argv + optind), (size_t)n, out, &o, &n_sets, err,
	                   sizeof err);
	progress_done(&sj.prog);
	if (rc) {
		fprintf(stderr, "bfi merge: %s\n", err[0] ? err : bfi_strerror(rc));
		return EXIT_USAGE;
	}
	if (!quiet)
		fprintf(stderr, "bfi merge: %s: %llu sets from %d inputs\n", out,
		        (unsigned long long)n_sets, n);
	return EXIT_OK;
}
