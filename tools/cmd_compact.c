/*
 * cmd_compact.c - bfi compact (a collection's segments joined by a
 * size-tiered policy, removed sets dropped) and bfi merge (snapshots and
 * collections joined into one snapshot), both without keys, through
 * join.c (spec/format.md, "Compaction and merge").
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bfi_writer.h"
#include "join.h"
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

/* Sets held and live in each segment of coll. */
static int live_counts(const bfi_snapshot *coll, uint32_t g, uint64_t *live, uint64_t *held)
{
	for (uint32_t s = 0; s < g; s++) {
		struct bfi_segment_info sg;
		int rc = bfi_segment(coll, s, &sg);
		if (rc)
			return rc;
		held[s] = sg.n_sets;
		live[s] = sg.live;
	}
	return 0;
}

/*
 * The run [*a, *b) to join next, or 0 if none: with full, all of them;
 * else the newest run whose predecessor is no larger than the run, or a
 * segment that has lost half its sets.
 */
static int choose_run(const uint64_t *live, const uint64_t *held, uint32_t g, int full,
                      uint32_t *a, uint32_t *b)
{
	uint64_t removed = 0;
	for (uint32_t s = 0; s < g; s++)
		removed += held[s] - live[s];
	if (full) {
		*a = 0;
		*b = g;
		return g > 1 || removed;
	}
	uint32_t i = g ? g - 1 : 0;
	uint64_t run = g ? live[g - 1] : 0;
	while (i > 0 && live[i - 1] <= run)
		run += live[--i];
	if (g - i >= 2) {
		*a = i;
		*b = g;
		return 1;
	}
	for (uint32_t s = 0; s < g; s++)
		if ((held[s] - live[s]) * 2 >= held[s]) {
			*a = s;
			*b = s + 1;
			return 1;
		}
	return 0;
}

/* One join of the chosen run, committed. 1 if done, 0 if nothing to do, else an exit code + 2. */
static int compact_once(const char *coll, bfi_collection *c, int full, int quiet, uint64_t memory)
{
	bfi_snapshot *s = NULL;
	int rc = bfi_open(coll, 0, &s);
	if (rc) {
		fprintf(stderr, "bfi compact: %s: %s\n", coll, bfi_strerror(rc));
		return 2 + EXIT_USAGE;
	}
	struct bfi_info in;
	bfi_info(s, &in);
	if (!in.segments) {
		fprintf(stderr, "bfi compact: %s is a snapshot, not a collection\n", coll);
		bfi_close(&s);
		return 2 + EXIT_USAGE;
	}
	uint64_t *live = calloc(in.segments, sizeof *live), *held = calloc(in.segments, sizeof *held);
	int out = 2 + EXIT_USAGE;
	uint32_t a, b;
	if (live == NULL || held == NULL || (rc = live_counts(s, in.segments, live, held)) != 0) {
		fprintf(stderr, "bfi compact: %s: %s\n", coll, bfi_strerror(rc ? rc : -ENOMEM));
		goto end;
	}
	if (!choose_run(live, held, in.segments, full, &a, &b)) {
		out = 0;
		goto end;
	}
	struct join_input ji = {s, a, b, coll};
	uint64_t n_sets;
	uint8_t id[16];
	const char *seg = bfi_collection_segment_path(c);
	if (join_write("compact", &ji, 1, seg, quiet, memory, &n_sets, id) != EXIT_OK)
		goto end; /* join_write said why; the segment, if any, is swept */
	rc = bfi_collection_replace(c, a, b - a, n_sets, n_sets ? id : NULL);
	if (rc == 0)
		rc = bfi_collection_commit(c);
	if (rc) {
		fprintf(stderr, "bfi compact: %s\n",
		        *bfi_collection_errmsg(c) ? bfi_collection_errmsg(c) : bfi_strerror(rc));
		goto end;
	}
	if (*bfi_collection_errmsg(c))
		fprintf(stderr, "bfi compact: warning: %s\n", bfi_collection_errmsg(c));
	uint64_t was = 0;
	for (uint32_t x = a; x < b; x++)
		was += held[x];
	if (!quiet)
		fprintf(stderr, "bfi compact: %s generation %llu: segments %u..%u (%llu sets, %llu "
		                "removed) joined into one; segments now: %u\n",
		        coll, (unsigned long long)bfi_collection_generation(c), a, b - 1,
		        (unsigned long long)n_sets, (unsigned long long)(was - n_sets),
		        in.segments - (b - a) + (n_sets ? 1 : 0));
	out = 1;
end:
	free(live);
	free(held);
	bfi_close(&s);
	return out;
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
		default: fputs(compact_help, stderr); return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "bfi compact: need one COLL\n\n%s", compact_help);
		return EXIT_USAGE;
	}
	const char *coll = argv[optind];
	char err[4400];
	bfi_collection *c = NULL;
	int rc = bfi_collection_begin(coll, wait ? BFI_COLL_WAIT : 0, &c, err, sizeof err);
	if (rc) {
		fprintf(stderr, "bfi compact: %s\n", err[0] ? err : bfi_strerror(rc));
		return EXIT_USAGE;
	}
	int done = 0, r;
	/* each round joins one run; --full is one round */
	while ((r = compact_once(coll, c, full, quiet, memory)) == 1) {
		done++;
		if (full)
			break;
	}
	if (r == 0 && done == 0 && !quiet)
		fprintf(stderr, "bfi compact: %s: nothing to compact\n", coll);
	bfi_collection_end(&c);
	return r >= 2 ? r - 2 : EXIT_OK;
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
		default: fputs(merge_help, stderr); return EXIT_USAGE;
		}
	}
	int n = argc - optind;
	if (out == NULL || n < 1) {
		fprintf(stderr, "bfi merge: need -o OUT and at least one INPUT\n\n%s", merge_help);
		return EXIT_USAGE;
	}
	if (output_ok("merge", out, argv + optind, n) != 0)
		return EXIT_USAGE;
	struct join_input *in = calloc((size_t)n, sizeof *in);
	bfi_snapshot **snaps = calloc((size_t)n, sizeof *snaps);
	int exit = EXIT_USAGE, rc = in && snaps ? 0 : -ENOMEM;
	for (int x = 0; rc == 0 && x < n; x++) {
		const char *path = argv[optind + x];
		if ((rc = bfi_open(path, 0, &snaps[x])) != 0) {
			fprintf(stderr, "bfi merge: %s: %s\n", path, bfi_strerror(rc));
			break;
		}
		struct bfi_info si;
		bfi_info(snaps[x], &si);
		in[x] = (struct join_input){snaps[x], 0, si.segments ? si.segments : 1, path};
	}
	uint64_t n_sets = 0;
	uint8_t id[16];
	if (rc == 0 && (exit = join_write("merge", in, n, out, quiet, memory, &n_sets, id)) == EXIT_OK) {
		if (n_sets == 0) {
			fprintf(stderr, "bfi merge: the inputs hold no live set; nothing written\n");
			exit = EXIT_USAGE;
		} else if (!quiet) {
			fprintf(stderr, "bfi merge: %s: %llu sets from %d inputs\n", out,
			        (unsigned long long)n_sets, n);
		}
	}
	for (int x = 0; snaps && x < n; x++)
		bfi_close(&snaps[x]);
	free(snaps);
	free(in);
	return exit;
}
