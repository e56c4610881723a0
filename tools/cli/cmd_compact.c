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
#include "opts.h"
#include "tools.h"

/* What bfi compact's options ask. */
struct compact_args {
	int full, wait, quiet;
	uint64_t memory;
};

/* --memory of bfi CMD (me + 4 is CMD), in bytes. */
static int take_join_memory(const char *me, uint64_t *memory, const char *arg)
{
	if (parse_size(arg, memory) == 0)
		return 0;
	fprintf(stderr, "%s: --memory: not a size: %s\n", me, arg);
	return EXIT_USAGE;
}

static int take_compact_memory(void *ctx, const char *arg)
{
	return take_join_memory("bfi compact", &((struct compact_args *)ctx)->memory, arg);
}

static const char compact_cmd_head[] =
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
	"Options:\n";

static const char compact_cmd_tail[] =
	"\n"
	"Exit status: 0 (also when there was nothing to do), or 2 for a usage\n"
	"error, another writer's lock, segments that cannot be joined, or an I/O\n"
	"error (the collection is then as it was).\n";

static const struct opt_row compact_cmd_rows[] = {
	{"full", 300, NULL,
	 "join every segment into one",
	 OPT_FLAG, offsetof(struct compact_args, full), 0, 0, NULL, NULL},
	{"wait", 301, NULL,
	 "wait for another writer's lock rather than fail",
	 OPT_FLAG, offsetof(struct compact_args, wait), 0, 0, NULL, NULL},
	{"memory", 302, "SIZE",
	 "the rows being joined stay within SIZE (as bfi build)",
	 OPT_FN, 0, 0, 0, NULL, take_compact_memory},
	{"quiet", 'q', NULL,
	 "no progress and no summary",
	 OPT_FLAG, offsetof(struct compact_args, quiet), 0, 0, NULL, NULL},
	{"help", 'h', NULL,
	 "show this help",
	 OPT_HELP, 0, 0, 0, NULL, NULL},
	{NULL, 0, NULL, NULL, OPT_FN, 0, 0, 0, NULL, NULL},
};

static const struct opt_cmd compact_cmd = {
    .me = "bfi compact",
    .head = compact_cmd_head,
    .tail = compact_cmd_tail,
    .rows = compact_cmd_rows,
    .column = 21,
};

/* What bfi merge's options ask. */
struct merge_args {
	const char *out;
	int quiet;
	uint64_t memory;
};

static int take_merge_memory(void *ctx, const char *arg)
{
	return take_join_memory("bfi merge", &((struct merge_args *)ctx)->memory, arg);
}

static const char merge_cmd_head[] =
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
	"Options:\n";

static const char merge_cmd_tail[] =
	"\n"
	"Exit status: 0, or 2 for a usage error, inputs that cannot be joined, or\n"
	"an I/O error (OUT is then as it was).\n";

static const struct opt_row merge_cmd_rows[] = {
	{"output", 'o', "OUT",
	 "the snapshot to write (replaced if it is one)",
	 OPT_STR, offsetof(struct merge_args, out), 0, 0, NULL, NULL},
	{"memory", 300, "SIZE",
	 "the rows being joined stay within SIZE (as bfi build)",
	 OPT_FN, 0, 0, 0, NULL, take_merge_memory},
	{"quiet", 'q', NULL,
	 "no progress and no summary",
	 OPT_FLAG, offsetof(struct merge_args, quiet), 0, 0, NULL, NULL},
	{"help", 'h', NULL,
	 "show this help",
	 OPT_HELP, 0, 0, 0, NULL, NULL},
	{NULL, 0, NULL, NULL, OPT_FN, 0, 0, 0, NULL, NULL},
};

static const struct opt_cmd merge_cmd = {
    .me = "bfi merge",
    .head = merge_cmd_head,
    .tail = merge_cmd_tail,
    .rows = merge_cmd_rows,
    .column = 21,
};

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
	struct compact_args opt = {0};
	int orc = opts_parse(&compact_cmd, argc, argv, &opt);
	if (orc)
		return orc - 1;
	int full = opt.full, wait = opt.wait, quiet = opt.quiet;
	uint64_t memory = opt.memory;
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
	struct merge_args opt = {0};
	int orc = opts_parse(&merge_cmd, argc, argv, &opt);
	if (orc)
		return orc - 1;
	const char *out = opt.out;
	int quiet = opt.quiet;
	uint64_t memory = opt.memory;
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
