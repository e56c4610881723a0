/*
 * collection.c - a collection opened as one snapshot (spec/format.md,
 * "Collections"): the manifest read once, every live segment opened, and
 * answers given in global ordinals, the removed sets left out.
 *
 * bfi_open is here: a path holding a manifest is a collection, any other a
 * snapshot (open.c). The query and catalog calls reach this file through
 * the snapshot's cops table, so that they never call it by name and it
 * can call them on its segments.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bfi_manifest.h"
#include "layout.h"

#define OPEN_TRIES 16 /* commits in a row that opening rides out */
#define MANIFEST_MAX (256ull << 20) /* bytes of manifest read at most (spec, "Limits") */

struct bfi_coll {
	struct bfi_manifest m;
	bfi_snapshot **seg; /* m.n_segments of them */
	uint64_t ordinals;  /* global ordinals run 0 .. ordinals - 1, holes included */
};

static const struct bfi_coll_ops coll_ops;

/* Is segment i's set ord removed? A binary search of the sorted removed list. */
static int removed(const struct bfi_coll *c, uint32_t i, uint32_t ord)
{
	uint64_t want = (uint64_t)i << 32 | ord;
	uint32_t lo = 0, hi = c->m.n_removed;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (c->m.removed[mid] < want)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < c->m.n_removed && c->m.removed[lo] == want;
}


/* Read the whole manifest in dirfd: 0, -errno, or a manifest's BFI_E_* with *bad set. */
int bfi__read_manifest(int dirfd, struct bfi_manifest *m, struct bfi_bad *bad)
{
	int fd = openat(dirfd, BFI_MANIFEST_NAME, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat st;
	int rc = fstat(fd, &st) != 0 ? -errno : S_ISREG(st.st_mode) ? 0 : BFI_E_NOT_REGULAR;
	uint64_t size = rc == 0 ? (uint64_t)st.st_size : 0;
	if (rc == 0 && size > MANIFEST_MAX)
		rc = BFI_E_LIMIT;
	uint8_t *b = rc == 0 ? malloc(size ? (size_t)size : 1) : NULL;
	if (rc == 0 && b == NULL)
		rc = -ENOMEM;
	for (uint64_t got = 0; rc == 0 && got < size;) {
		ssize_t n = pread(fd, b + got, (size_t)(size - got), (off_t)got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) /* shorter than its stat: replaced, or cut, as it was read */
			rc = n < 0 ? -errno : BFI_E_TRUNCATED;
		else
			got += (uint64_t)n;
	}
	const char *what = "cannot read " BFI_MANIFEST_NAME;
	if (rc == 0)
		rc = bfi_manifest_decode(b, size, m, &what);
	if (rc)
		bfi__bad(bad, rc, 0, size, what);
	free(b);
	close(fd);
	return rc;
}

/* Open the segments m lists, under path; on failure *failed is the one that failed. */
static int open_segments(const char *path, unsigned flags, struct bfi_coll *c, struct bfi_bad *bad)
{
	char p[4200];
	for (uint32_t i = 0; i < c->m.n_segments; i++) {
		const struct bfi_segment *g = &c->m.segs[i];
		if (snprintf(p, sizeof p, "%s/%s", path, g->name) >= (int)sizeof p)
			return bfi__bad(bad, BFI_E_INVALID, 0, 0, "collection path too long");
		int rc = bfi__open(p, flags, &c->seg[i], bad);
		if (rc)
			return rc;
		struct bfi_info in;
		bfi_info(c->seg[i], &in);
		if (in.n_sets != g->n_sets || memcmp(in.snapshot_id, g->snapshot_id, 16) != 0)
			return bfi__bad(bad, BFI_E_CATALOG_MISMATCH, 0, 0,
			                "a segment is not the snapshot the manifest lists");
	}
	return 0;
}

static void coll_close(bfi_snapshot *s)
{
	struct bfi_coll *c = s->coll;
	for (uint32_t i = 0; c && c->seg && i < c->m.n_segments; i++)
		bfi_close(&c->seg[i]);
	if (c) {
		free(c->seg);
		bfi_manifest_free(&c->m);
	}
	free(c);
	s->coll = NULL;
}

/* One attempt at opening the collection at path (dirfd held); -ENOENT may mean a commit came between. */
static int open_once(const char *path, int dirfd, unsigned flags, bfi_snapshot *s,
                     struct bfi_bad *bad)
{
	struct bfi_coll *c = calloc(1, sizeof *c);
	if (c == NULL)
		return -ENOMEM;
	s->coll = c;
	int rc = bfi__read_manifest(dirfd, &c->m, bad);
	if (rc == 0 && (c->seg = calloc(c->m.n_segments ? c->m.n_segments : 1, sizeof *c->seg)) == NULL)
		rc = -ENOMEM;
	if (rc == 0)
		rc = open_segments(path, flags, c, bad);
	if (rc == 0 && c->m.n_segments) {
		const struct bfi_segment *last = &c->m.segs[c->m.n_segments - 1];
		c->ordinals = last->first + last->n_sets;
	}
	return rc;
}

int bfi__collection_of(struct bfi_manifest *m, bfi_snapshot **segs, bfi_snapshot **out,
                       struct bfi_bad *bad)
{
	*out = NULL;
	bfi_snapshot *s = calloc(1, sizeof *s);
	struct bfi_coll *c = calloc(1, sizeof *c);
	if (s == NULL || c == NULL) {
		for (uint32_t i = 0; i < m->n_segments; i++)
			bfi_close(&segs[i]);
		free(segs);
		bfi_manifest_free(m);
		free(s);
		free(c);
		return -ENOMEM;
	}
	s->index_fd = s->dirfd = s->catalog_fd = -1;
	s->cops = &coll_ops;
	s->coll = c;
	c->m = *m;
	c->seg = segs;
	memset(m, 0, sizeof *m);
	for (uint32_t i = 0; i < c->m.n_segments; i++) {
		const struct bfi_segment *g = &c->m.segs[i];
		struct bfi_info in;
		bfi_info(c->seg[i], &in);
		if (in.n_sets != g->n_sets || memcmp(in.snapshot_id, g->snapshot_id, 16) != 0) {
			bfi_close(&s);
			return bfi__bad(bad, BFI_E_CATALOG_MISMATCH, 0, 0,
			                "a segment is not the snapshot the manifest lists");
		}
	}
	if (c->m.n_segments) {
		const struct bfi_segment *last = &c->m.segs[c->m.n_segments - 1];
		c->ordinals = last->first + last->n_sets;
	}
	*out = s;
	return 0;
}

int bfi__open_packed(const char *path, unsigned flags, bfi_snapshot **out, struct bfi_bad *bad,
                     int (*each)(void *ctx, const char *segment, bfi_snapshot *s), void *ctx)
{
	struct bfi_packed pk;
	*out = NULL;
	int rc = bfi__open_pack(path, flags, &pk, bad, each, ctx);
	if (rc)
		return rc;
	if (!pk.collection) {
		*out = pk.snap;
		return 0;
	}
	return bfi__collection_of(&pk.m, pk.segs, out, bad);
}

int bfi__is_collection(int dirfd)
{
	struct stat st;
	return fstatat(dirfd, BFI_MANIFEST_NAME, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

int bfi_open(const char *path, unsigned flags, bfi_snapshot **out)
{
	struct bfi_bad bad;
	if (path == NULL || out == NULL)
		return BFI_E_INVALID;
	/* a snapshot first: a collection is a directory without an index; a pack, a file */
	int rc = bfi__open(path, flags, out, &bad);
	if (rc == -ENOTDIR && bfi__is_pack(path))
		return bfi__open_packed(path, flags, out, &bad, NULL, NULL);
	if (rc != -ENOENT)
		return rc;
	int dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0 || !bfi__is_collection(dirfd)) {
		if (dirfd >= 0)
			close(dirfd);
		return rc;
	}
	for (int tries = 0; tries < OPEN_TRIES; tries++) {
		bfi_snapshot *s = calloc(1, sizeof *s);
		if (s == NULL) {
			rc = -ENOMEM;
			break;
		}
		s->index_fd = s->dirfd = s->catalog_fd = -1;
		s->cops = &coll_ops;
		rc = open_once(path, dirfd, flags, s, &bad);
		if (rc == 0) {
			*out = s;
			break;
		}
		bfi_close(&s);
		if (rc != -ENOENT) /* a segment gone: a commit came between; read the manifest again */
			break;
	}
	close(dirfd);
	return rc;
}

/*
 * Append to res the answers w holds from segment i, as global ordinals,
 * without the removed sets (and, with scores, their scores).
 */
static int take(const struct bfi_coll *c, uint32_t i, const bfi_result *w, bfi_result *res)
{
	int rc = bfi__room(res, w->n);
	if (rc == 0 && w->have_scores)
		rc = bfi__grow(&res->scores, &res->scores_cap, res->n + w->n, sizeof *res->scores);
	for (size_t x = 0; rc == 0 && x < w->n; x++) {
		if (c->m.n_removed && removed(c, i, w->ords[x]))
			continue;
		if (w->have_scores)
			res->scores[res->n] = w->scores[x];
		res->ords[res->n++] = (uint32_t)(c->m.segs[i].first + w->ords[x]);
	}
	res->touched += w->touched;
	res->tests += w->tests;
	return rc;
}

/* The scratch result every segment answers in: res's own, made when first needed. */
static bfi_result *scratch(bfi_result *res)
{
	if (res->scratch == NULL && bfi_result_create(&res->scratch) != 0)
		return NULL;
	res->scratch->count_bytes = res->count_bytes;
	res->scratch->deadline = res->deadline;
	return res->scratch;
}

static int coll_expr(const bfi_snapshot *s, unsigned layout, const struct bfi_expr *e,
                     bfi_result *res)
{
	const struct bfi_coll *c = s->coll;
	bfi_result *w = scratch(res);
	if (w == NULL)
		return -ENOMEM;
	bfi__reset_result(res, 0);
	int rc = 0;
	for (uint32_t i = 0; i < c->m.n_segments && rc == 0; i++) {
		rc = i && bfi__late(res) ? BFI_E_TIMEOUT : bfi_query_expr(c->seg[i], layout, e, w);
		if (rc == 0)
			rc = take(c, i, w, res);
	}
	return rc;
}

static int coll_threshold(const bfi_snapshot *s, unsigned layout, const struct bfi_expr *e,
                          double theta, bfi_result *res)
{
	const struct bfi_coll *c = s->coll;
	bfi_result *w = scratch(res);
	if (w == NULL)
		return -ENOMEM;
	bfi__reset_result(res, 1);
	int rc = 0;
	for (uint32_t i = 0; i < c->m.n_segments && rc == 0; i++) {
		rc = i && bfi__late(res) ? BFI_E_TIMEOUT : bfi_query_threshold(c->seg[i], layout, e, theta, w);
		if (rc == 0)
			rc = take(c, i, w, res);
	}
	/* each segment ranked its own: rank them all together */
	return rc ? rc : bfi__rank(res);
}

/*
 * A scan of a collection: each segment scanned in turn, in manifest
 * order, for the whole batch, and its answers taken as global ordinals
 * without the removed sets; term lists ranked together at the end.
 */
static int coll_scan(const bfi_snapshot *s, unsigned layout, const struct bfi_expr *const *qs,
                     size_t n, double theta, bfi_result *const *res, uint64_t memory,
                     unsigned threads, struct bfi_scan_stats *st)
{
	const struct bfi_coll *c = s->coll;
	bfi_result **w = calloc(n ? n : 1, sizeof *w);
	int rc = w ? 0 : -ENOMEM;
	for (size_t q = 0; q < n && rc == 0; q++) {
		rc = bfi_result_create(&w[q]);
		bfi__reset_result(res[q], qs[q]->nodes[qs[q]->root].type == BFI_EXPR_TERMS);
	}
	struct bfi_scan_stats one;
	for (uint32_t i = 0; i < c->m.n_segments && rc == 0; i++) {
		/* the segments' answers so far count against the memory the next may hold */
		uint64_t held = memory ? bfi__results_bytes(res, n) : 0;
		uint64_t left = held < memory - memory / 8 ? memory - held : memory / 8;
		rc = bfi_scan_parallel(c->seg[i], layout, (const bfi_expr *const *)qs, n, theta, w, left,
		                       threads, st ? &one : NULL);
		for (size_t q = 0; q < n && rc == 0; q++)
			rc = take(c, i, w[q], res[q]);
		if (rc == 0 && st) {
			st->bytes_read += one.bytes_read;
			st->busiest += one.busiest;
			st->reads += one.reads;
			st->packed += one.packed;
			st->passes += one.passes;
			st->rounds += one.rounds;
			st->peak = one.peak > st->peak ? one.peak : st->peak;
			st->key_state = one.key_state > st->key_state ? one.key_state : st->key_state;
			st->answers = one.answers + held > st->answers ? one.answers + held : st->answers;
		}
	}
	for (size_t q = 0; q < n && rc == 0; q++)
		rc = bfi__rank(res[q]); /* each segment ranked its own: rank them all together */
	for (size_t q = 0; w && q < n; q++)
		bfi_result_destroy(&w[q]);
	free(w);
	return rc;
}

/* A scan's cost on a collection: its costliest segment's, the sets' matches summed. */
static int coll_scan_cost(const bfi_snapshot *s, unsigned layout, struct bfi_scan_cost *out)
{
	const struct bfi_coll *c = s->coll;
	int rc = 0;
	for (uint32_t i = 0; i < c->m.n_segments && rc == 0; i++) {
		struct bfi_scan_cost one;
		rc = bfi_scan_cost(c->seg[i], layout, &one);
		out->key_state = one.key_state > out->key_state ? one.key_state : out->key_state;
		out->fixed = one.fixed > out->fixed ? one.fixed : out->fixed;
		out->key_matches += one.key_matches;
		out->sets += one.sets;
	}
	return rc;
}

static int coll_keys(const bfi_snapshot *s, unsigned layout, const bfi_keyhash *keys, size_t n,
                     bfi_result *res, size_t *ends)
{
	bfi__reset_result(res, 0);
	int rc = 0;
	/* key by key: each key's sets from every segment, in segment order */
	for (size_t i = 0; i < n && rc == 0; i++) {
		struct bfi_expr e;
		bfi__expr_one_key(&e, keys[i]);
		bfi_result *w = NULL;
		rc = bfi_result_create(&w);
		if (rc == 0) {
			bfi_result_count_bytes(w, res->count_bytes);
			rc = coll_expr(s, layout, &e, w);
		}
		if (rc == 0)
			rc = bfi__room(res, w->n);
		if (rc == 0 && w->n)
			memcpy(res->ords + res->n, w->ords, w->n * sizeof *w->ords);
		if (rc == 0) {
			res->n += w->n;
			res->touched += w->touched;
			ends[i] = res->n;
		}
		bfi_result_destroy(&w);
	}
	return rc;
}

/* The segment and live ordinal of global ordinal ord: BFI_E_NOT_FOUND for a hole. */
static int live(const bfi_snapshot *s, uint32_t ord, const bfi_snapshot **seg, uint32_t *in)
{
	const struct bfi_coll *c = s->coll;
	int i = bfi_manifest_segment_of(&c->m, ord, in);
	if (i < 0 || removed(c, (uint32_t)i, *in))
		return BFI_E_NOT_FOUND;
	*seg = c->seg[i];
	return 0;
}

static int coll_set_name(const bfi_snapshot *s, uint32_t ord, const char **name, size_t *len)
{
	const bfi_snapshot *g;
	uint32_t in;
	int rc = live(s, ord, &g, &in);
	return rc ? rc : bfi_set_name(g, in, name, len);
}

static int coll_set_stats(const bfi_snapshot *s, uint32_t ord, struct bfi_set_stats *out)
{
	const bfi_snapshot *g;
	uint32_t in;
	int rc = live(s, ord, &g, &in);
	return rc ? rc : bfi_set_stats(g, in, out);
}

static int coll_set_seen(const bfi_snapshot *s, uint32_t ord, uint64_t *seen)
{
	const bfi_snapshot *g;
	uint32_t in;
	int rc = live(s, ord, &g, &in);
	return rc ? rc : bfi_set_seen(g, in, seen);
}

static int coll_set_fpr(const bfi_snapshot *s, uint32_t ord, double *fpr)
{
	const bfi_snapshot *g;
	uint32_t in;
	int rc = live(s, ord, &g, &in);
	return rc ? rc : bfi_set_fpr(g, in, fpr);
}

/* Names are unique among live sets: the first live match, from the newest segment. */
static int coll_set_find(const bfi_snapshot *s, const char *name, size_t len, uint32_t *ord)
{
	const struct bfi_coll *c = s->coll;
	for (uint32_t i = c->m.n_segments; i-- > 0;) {
		uint32_t in;
		int rc = bfi_set_find(c->seg[i], name, len, &in);
		if (rc == BFI_E_NOT_FOUND || (rc == 0 && removed(c, i, in)))
			continue;
		if (rc == 0)
			*ord = (uint32_t)(c->m.segs[i].first + in);
		return rc;
	}
	return BFI_E_NOT_FOUND;
}

static int coll_check_files(const bfi_snapshot *s)
{
	const struct bfi_coll *c = s->coll;
	int rc = 0;
	for (uint32_t i = 0; i < c->m.n_segments && rc == 0; i++)
		rc = bfi_check_files(c->seg[i]);
	return rc;
}

static const char *coll_mapped_file(const bfi_snapshot *s, const void *addr)
{
	const struct bfi_coll *c = s->coll;
	const char *f = NULL;
	for (uint32_t i = 0; i < c->m.n_segments && f == NULL; i++)
		f = bfi_mapped_file(c->seg[i], addr);
	return f;
}

/* The segment whose catalog speaks for the collection: key rules and meta are every segment's. */
static const bfi_snapshot *coll_first(const bfi_snapshot *s)
{
	const struct bfi_coll *c = s->coll;
	return c->m.n_segments ? c->seg[0] : NULL;
}

static void coll_info(const bfi_snapshot *s, struct bfi_info *info)
{
	const struct bfi_coll *c = s->coll;
	memset(info, 0, sizeof *info);
	if (c->m.n_segments)
		bfi_info(c->seg[0], info);
	info->n_sets = c->m.n_sets;
	info->ordinals = c->ordinals;
	info->file_size = info->catalog_size = 0;
	info->bits = 0;
	for (uint32_t i = 0; i < c->m.n_segments; i++) {
		struct bfi_info si;
		bfi_info(c->seg[i], &si);
		info->file_size += si.file_size;
		info->catalog_size += si.catalog_size;
		info->bits = si.bits > info->bits ? si.bits : info->bits;
		info->layouts &= si.layouts; /* what every segment can answer from */
	}
	info->segments = c->m.n_segments;
	info->generation = c->m.generation;
	memcpy(info->snapshot_id, c->m.collection_id, 16);
}

int bfi_segment(const bfi_snapshot *snap, uint32_t i, struct bfi_segment_info *out)
{
	if (snap == NULL || out == NULL)
		return BFI_E_INVALID;
	memset(out, 0, sizeof *out);
	if (snap->coll == NULL) { /* a snapshot is its own one segment */
		if (i != 0)
			return BFI_E_INVALID;
		struct bfi_info in;
		bfi_info(snap, &in);
		out->snap = snap;
		out->n_sets = out->live = in.n_sets;
		return 0;
	}
	const struct bfi_coll *c = snap->coll;
	if (i >= c->m.n_segments)
		return BFI_E_INVALID;
	out->snap = c->seg[i];
	out->first = c->m.segs[i].first;
	out->n_sets = out->live = c->m.segs[i].n_sets;
	for (uint32_t x = 0; x < c->m.n_removed; x++)
		out->live -= (c->m.removed[x] >> 32) == i;
	snprintf(out->name, sizeof out->name, "%s", c->m.segs[i].name);
	return 0;
}

static const struct bfi_coll_ops coll_ops = {
	.expr = coll_expr,
	.threshold = coll_threshold,
	.keys = coll_keys,
	.scan = coll_scan,
	.scan_cost = coll_scan_cost,
	.set_name = coll_set_name,
	.set_find = coll_set_find,
	.set_stats = coll_set_stats,
	.set_seen = coll_set_seen,
	.set_fpr = coll_set_fpr,
	.check_files = coll_check_files,
	.mapped_file = coll_mapped_file,
	.first = coll_first,
	.info = coll_info,
	.close = coll_close,
};
