/*
 * compact.c - bfi_merge and bfi_compact: snapshots and a collection's
 * segments joined without their keys, through join_write (join.c). The
 * compaction's size-tiered policy chooses the runs; each is one commit.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"
#include "join.h"

void bfi_join_options_init(struct bfi_join_options *o)
{
	memset(o, 0, sizeof *o);
	o->size = sizeof *o;
}

/* o as this library's struct, as bfi__build_options does: 0 or BFI_E_INVALID. */
static int join_options(const struct bfi_join_options *o, struct bfi_join_options *out)
{
	bfi_join_options_init(out);
	return o ? bfi__sized(o, out, sizeof *out,
	                      offsetof(struct bfi_join_options, memory) + sizeof o->memory)
	         : 0;
}

int bfi_merge(const char *const *paths, size_t n, const char *out,
              const struct bfi_join_options *o, uint64_t *n_sets, char *err, size_t errlen)
{
	struct bfi_join_options jo;
	if (err && errlen)
		err[0] = 0;
	if (n_sets)
		*n_sets = 0;
	if (paths == NULL || n == 0 || n > INT32_MAX || out == NULL || n_sets == NULL ||
	    err == NULL || errlen == 0 || join_options(o, &jo) != 0) {
		if (err && errlen)
			snprintf(err, errlen, "invalid arguments");
		return BFI_E_INVALID;
	}
	/* out may not name an input: it would replace what it is made from */
	struct stat so, si;
	for (size_t x = 0; x < n && stat(out, &so) == 0; x++)
		if (stat(paths[x], &si) == 0 && so.st_dev == si.st_dev && so.st_ino == si.st_ino) {
			snprintf(err, errlen, "%s names the input %s; write to a new path", out, paths[x]);
			return BFI_E_INVALID;
		}
	if (bfi_output_check(out, err, errlen) != 0)
		return BFI_E_EXISTS;
	struct join_input *in = calloc(n, sizeof *in);
	bfi_snapshot **snaps = calloc(n, sizeof *snaps);
	int rc = in && snaps ? 0 : -ENOMEM;
	for (size_t x = 0; rc == 0 && x < n; x++) {
		if ((rc = bfi_open(paths[x], 0, &snaps[x])) != 0) {
			snprintf(err, errlen, "%s: %s", paths[x], bfi_strerror(rc));
			break;
		}
		struct bfi_info si2;
		bfi_info(snaps[x], &si2);
		in[x] = (struct join_input){snaps[x], 0, si2.segments ? si2.segments : 1, paths[x]};
	}
	uint8_t id[16];
	if (rc == 0)
		rc = join_write(in, (int)n, out, &jo, n_sets, id, err, errlen);
	if (rc == 0 && *n_sets == 0) {
		snprintf(err, errlen, "the inputs hold no live set; nothing written");
		rc = BFI_E_NO_SETS;
	}
	for (size_t x = 0; snaps && x < n; x++)
		bfi_close(&snaps[x]);
	free(snaps);
	free(in);
	return rc;
}

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

/* One join of the chosen run, committed: 1 if done, 0 if nothing to do, else an error. */
static int compact_once(const char *coll, bfi_collection *c, const struct bfi_join_options *o,
                        char *err, size_t errlen)
{
	bfi_snapshot *s = NULL;
	int rc = bfi_open(coll, 0, &s);
	if (rc) {
		snprintf(err, errlen, "%s: %s", coll, bfi_strerror(rc));
		return rc;
	}
	struct bfi_info in;
	bfi_info(s, &in);
	if (!in.segments) {
		snprintf(err, errlen, "%s is a snapshot, not a collection", coll);
		bfi_close(&s);
		return BFI_E_INVALID;
	}
	uint64_t *live = calloc(in.segments, sizeof *live), *held = calloc(in.segments, sizeof *held);
	uint32_t a, b;
	if (live == NULL || held == NULL || (rc = live_counts(s, in.segments, live, held)) != 0) {
		rc = rc ? rc : -ENOMEM;
		snprintf(err, errlen, "%s: %s", coll, bfi_strerror(rc));
		goto end;
	}
	if (!choose_run(live, held, in.segments, o->full, &a, &b))
		goto end; /* rc 0: nothing to do */
	struct join_input ji = {s, a, b, coll};
	uint64_t n_sets;
	uint8_t id[16];
	const char *seg = bfi_collection_segment_path(c);
	if ((rc = join_write(&ji, 1, seg, o, &n_sets, id, err, errlen)) != 0)
		goto end; /* the segment, if any, is swept by bfi_collection_end */
	rc = bfi_collection_replace(c, a, b - a, n_sets, n_sets ? id : NULL);
	if (rc == 0)
		rc = bfi_collection_commit(c);
	if (rc) {
		snprintf(err, errlen, "%s",
		         *bfi_collection_errmsg(c) ? bfi_collection_errmsg(c) : bfi_strerror(rc));
		goto end;
	}
	if (*bfi_collection_errmsg(c) && o->note) {
		char line[4600];
		snprintf(line, sizeof line, "warning: %s", bfi_collection_errmsg(c));
		o->note(o->note_ctx, line);
	}
	uint64_t was = 0;
	for (uint32_t x = a; x < b; x++)
		was += held[x];
	if (o->note) {
		char line[4600];
		snprintf(line, sizeof line, "%s generation %llu: segments %u..%u (%llu sets, %llu "
		         "removed) joined into one; segments now: %u",
		         coll, (unsigned long long)bfi_collection_generation(c), a, b - 1,
		         (unsigned long long)n_sets, (unsigned long long)(was - n_sets),
		         in.segments - (b - a) + (n_sets ? 1 : 0));
		o->note(o->note_ctx, line);
	}
	rc = 1;
end:
	free(live);
	free(held);
	bfi_close(&s);
	return rc;
}

int bfi_compact(const char *coll, const struct bfi_join_options *o, unsigned *joins, char *err,
                size_t errlen)
{
	struct bfi_join_options jo;
	if (err && errlen)
		err[0] = 0;
	if (joins)
		*joins = 0;
	if (coll == NULL || joins == NULL || err == NULL || errlen == 0 ||
	    join_options(o, &jo) != 0) {
		if (err && errlen)
			snprintf(err, errlen, "invalid arguments");
		return BFI_E_INVALID;
	}
	bfi_collection *c = NULL;
	int rc = bfi_collection_begin(coll, jo.wait ? BFI_COLL_WAIT : 0, &c, err, errlen);
	if (rc) {
		if (!err[0])
			snprintf(err, errlen, "%s", bfi_strerror(rc));
		return rc;
	}
	/* each round joins one run; full is one round */
	while ((rc = compact_once(coll, c, &jo, err, errlen)) == 1) {
		++*joins;
		if (jo.full) {
			rc = 0;
			break;
		}
	}
	bfi_collection_end(&c);
	return rc;
}
