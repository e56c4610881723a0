/*
 * join.c - one snapshot from the live sets of other snapshots' segments,
 * without their keys (spec/format.md, "Compaction and merge"): each flat
 * block's kept columns are copied row by row into blocks of the same
 * width, and a set's filter stays its source column bit for bit. bfi
 * compact and bfi merge both write through here.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bfi_catalog.h"
#include "bfi_writer.h"
#include "join.h"
#include "tools.h"

/* The catalog fields that say how a snapshot's keys were made: joined snapshots must match. */
static const char *const key_rules[] = {BFI_META_INPUT,         BFI_META_KMER,
                                        BFI_META_TEXT_MAX_TERM, BFI_META_TEXT_STOP_WORDS,
                                        BFI_META_PATHS,         BFI_META_PATH_MAX};

const char *key_rule_differs(const bfi_snapshot *a, const bfi_snapshot *b)
{
	for (size_t i = 0; i < sizeof key_rules / sizeof *key_rules; i++) {
		const void *va, *vb;
		size_t la, lb;
		int ra = bfi_catalog_meta(a, key_rules[i], &va, &la);
		int rb = bfi_catalog_meta(b, key_rules[i], &vb, &lb);
		if (ra != rb || (ra == 0 && (la != lb || memcmp(va, vb, la) != 0)))
			return key_rules[i];
	}
	return NULL;
}

/* One source block's kept columns: a part of an output block. */
struct piece {
	struct bfi_flat_part part;
	uint64_t m, pre_m, live;
	const uint8_t *pre;
	int line_pre;
};

struct joiner {
	const char *cmd;
	struct piece *pc;
	size_t n_pc, cap_pc;
	uint64_t n_sets;
	uint64_t *distinct, *ones;
	size_t cap_sets;
	bfi_writer *w;
	uint32_t k;
	const bfi_snapshot *first; /* the first segment: the others must match its rules */
	char first_label[4400];
	uint64_t widest;
};

static int grow_sets(struct joiner *j)
{
	if (j->n_sets < j->cap_sets)
		return 0;
	size_t cap = j->cap_sets ? j->cap_sets * 2 : 1024;
	uint64_t *d = realloc(j->distinct, cap * sizeof *d);
	if (d)
		j->distinct = d;
	uint64_t *o = d ? realloc(j->ones, cap * sizeof *o) : NULL;
	if (o)
		j->ones = o;
	if (!d || !o)
		return -ENOMEM;
	j->cap_sets = cap;
	return 0;
}

/* Can segment seg join the others? Its flat layout, k and key rules. */
static int compatible(struct joiner *j, const bfi_snapshot *seg, const char *label)
{
	struct bfi_layout_info li;
	if (bfi_layout_info(seg, BFI_LAYOUT_FLAT, &li) != 0) {
		fprintf(stderr, "bfi %s: %s has no flat layout, whose columns a join copies\n", j->cmd,
		        label);
		return EXIT_USAGE;
	}
	if (j->first == NULL) {
		j->first = seg;
		snprintf(j->first_label, sizeof j->first_label, "%s", label);
		j->k = li.hashes;
		return 0;
	}
	const char *rule = key_rule_differs(j->first, seg);
	if (rule || li.hashes != j->k) {
		fprintf(stderr, "bfi %s: %s and %s differ in %s; they cannot be joined\n", j->cmd,
		        j->first_label, label, rule ? rule : "k (hashes)");
		return EXIT_USAGE;
	}
	return 0;
}

/* Segment seg of in (its set 0 is in's ordinal first): its live sets declared, its blocks' pieces. */
static int add_segment(struct joiner *j, const struct join_input *in, const bfi_snapshot *seg,
                       uint64_t first, const char *label)
{
	int rc = compatible(j, seg, label);
	if (rc)
		return rc;
	struct bfi_layout_info li;
	if (bfi_layout_info(seg, BFI_LAYOUT_FLAT, &li) != 0)
		return EXIT_USAGE;
	for (uint32_t b = 0; b < li.u.flat.blocks; b++) {
		struct bfi_block_info bi;
		const uint8_t *rows, *pre;
		uint64_t bytes;
		if ((rc = bfi_block(seg, b, &bi)) != 0 ||
		    (rc = bfi_block_rows(seg, b, &rows, &bytes, &pre)) != 0)
			break;
		uint64_t *keep = calloc((bi.n_sets + 63) / 64, 8), live = 0;
		if (keep == NULL)
			return -ENOMEM;
		for (uint64_t c = 0; c < bi.n_sets && rc == 0; c++) {
			uint64_t o = bi.first_set + c;
			const char *name;
			size_t len;
			uint32_t ord;
			struct bfi_set_stats st;
			if (bfi_set_name(in->snap, (uint32_t)(first + o), &name, &len) != 0)
				continue; /* removed */
			if ((rc = bfi_set_stats(seg, (uint32_t)o, &st)) != 0 || (rc = grow_sets(j)) != 0)
				break;
			rc = bfi_writer_set(j->w, name, len, &ord);
			if (rc == BFI_E_DUP_SET || (rc == 0 && ord != j->n_sets)) {
				fprintf(stderr, "bfi %s: more than one input holds a set named ", j->cmd);
				text_str(stderr, name, len);
				fputc('\n', stderr);
				free(keep);
				return EXIT_USAGE;
			}
			if (rc)
				break;
			j->distinct[j->n_sets] = st.distinct_keys;
			j->ones[j->n_sets++] = st.bits_set;
			keep[c / 64] |= UINT64_C(1) << (c % 64);
			live++;
		}
		if (rc == 0 && live && j->n_pc == j->cap_pc) {
			size_t cap = j->cap_pc ? j->cap_pc * 2 : 64;
			struct piece *p = realloc(j->pc, cap * sizeof *p);
			if (p == NULL)
				rc = -ENOMEM;
			else
				j->pc = p, j->cap_pc = cap;
		}
		if (rc || live == 0) {
			free(keep);
			if (rc)
				break;
			continue;
		}
		j->pc[j->n_pc++] = (struct piece){
		    {rows, bytes, bi.row_bits, bi.n_sets, live == bi.n_sets ? NULL : keep},
		    bi.bits, bi.prefilter_bits, live, pre, li.u.flat.line_prefilters};
		if (live == bi.n_sets)
			free(keep);
	}
	if (rc) {
		fprintf(stderr, "bfi %s: %s: %s\n", j->cmd, label, bfi_strerror(rc));
		return EXIT_USAGE;
	}
	return 0;
}

/*
 * Runs of pieces into output blocks: a piece joins the block before it
 * when their widths agree and so do their pre-filters (none, or the same
 * width and kind, ORed). Pre-filters of the kind the output does not keep
 * are dropped: a flat section's pre-filters are all of one kind.
 */
static int make_blocks(struct joiner *j, struct bfi_flat_given *g, struct bfi_flat_part **parts,
                       struct bfi_flat_block_given **blocks, uint8_t ***pres)
{
	int line = 0;
	for (size_t i = 0; i < j->n_pc; i++)
		line |= j->pc[i].pre_m && j->pc[i].line_pre;
	for (size_t i = 0; i < j->n_pc; i++)
		if (j->pc[i].pre_m && j->pc[i].line_pre != line)
			j->pc[i].pre_m = 0, j->pc[i].pre = NULL;
	*parts = calloc(j->n_pc, sizeof **parts);
	*blocks = calloc(j->n_pc, sizeof **blocks);
	*pres = calloc(j->n_pc, sizeof **pres);
	if (!*parts || !*blocks || !*pres)
		return -ENOMEM;
	uint32_t nb = 0;
	for (size_t i = 0; i < j->n_pc; i++) {
		const struct piece *p = &j->pc[i];
		(*parts)[i] = p->part;
		struct bfi_flat_block_given *b = nb ? &(*blocks)[nb - 1] : NULL;
		if (b && b->m == p->m && b->pre_m == p->pre_m) {
			if (p->pre_m) {
				uint64_t bytes = (p->pre_m + 511) / 512 * 64;
				if ((*pres)[nb - 1] == NULL) {
					if (((*pres)[nb - 1] = malloc((size_t)bytes)) == NULL)
						return -ENOMEM;
					memcpy((*pres)[nb - 1], b->pre, (size_t)bytes);
					b->pre = (*pres)[nb - 1];
				}
				for (uint64_t x = 0; x < bytes; x++)
					(*pres)[nb - 1][x] |= p->pre[x];
			}
			b->n_parts++;
			continue;
		}
		if (nb == JOIN_MAX_BLOCKS)
			return BFI_E_LIMIT;
		(*blocks)[nb++] = (struct bfi_flat_block_given){p->m, p->pre_m, p->pre, (uint32_t)i, 1};
	}
	*g = (struct bfi_flat_given){j->k, line, nb, *blocks, *parts, j->distinct, j->ones};
	return 0;
}

/* The target rate the first segment recorded, or the explicit width it was built at. */
static void carry_rate(const bfi_snapshot *first, struct bfi_build_options *o, uint64_t widest)
{
	const void *v;
	size_t len;
	char buf[40];
	double fpr = 0;
	if (bfi_catalog_meta(first, "fpr", &v, &len) == 0 && len < sizeof buf) {
		memcpy(buf, v, len);
		buf[len] = 0;
		char *end;
		fpr = strtod(buf, &end);
		if (*end || !(fpr > 0 && fpr < 1))
			fpr = 0;
	}
	if (fpr > 0)
		o->fpr = fpr;
	else
		o->bits = widest; /* recorded as "explicit" */
}

/* Each key rule of the first segment, and the deepest path levels of all. */
static int carry_rules(struct joiner *j, const struct join_input *in, int n)
{
	for (size_t i = 0; i < sizeof key_rules / sizeof *key_rules; i++) {
		const void *v;
		size_t len;
		if (bfi_catalog_meta(j->first, key_rules[i], &v, &len) == 0) {
			int rc = bfi_writer_meta(j->w, key_rules[i], v, len);
			if (rc)
				return rc;
		}
	}
	for (int x = 0; x < n; x++)
		for (uint32_t s = in[x].seg_lo; s < in[x].seg_hi; s++) {
			struct bfi_segment_info sg;
			const void *v;
			size_t len;
			if (bfi_segment(in[x].snap, s, &sg) == 0 &&
			    bfi_catalog_meta(sg.snap, BFI_META_PATH_LEVELS, &v, &len) == 0) {
				int rc = bfi_writer_meta(j->w, BFI_META_PATH_LEVELS, v, len);
				if (rc)
					return rc;
			}
		}
	return 0;
}

static void on_progress(void *c, const char *phase, uint64_t done, uint64_t total)
{
	progress_show(c, phase, done, total);
}

/* Each segment of the inputs, in order, through fn; 0, or what fn or bfi_segment returned. */
static int each_segment(struct joiner *j, const struct join_input *in, int n,
                        int (*fn)(struct joiner *j, const struct join_input *in,
                                  const bfi_snapshot *seg, uint64_t first, const char *label))
{
	char label[4400];
	for (int x = 0; x < n; x++)
		for (uint32_t s = in[x].seg_lo; s < in[x].seg_hi; s++) {
			struct bfi_segment_info sg;
			struct bfi_info si;
			int rc = bfi_segment(in[x].snap, s, &sg);
			if (rc) {
				fprintf(stderr, "bfi %s: %s: %s\n", j->cmd, in[x].label, bfi_strerror(rc));
				return EXIT_USAGE;
			}
			bfi_info(in[x].snap, &si);
			if (si.segments)
				snprintf(label, sizeof label, "%s (segment %u)", in[x].label, s);
			else
				snprintf(label, sizeof label, "%s", in[x].label);
			if ((rc = fn(j, &in[x], sg.snap, sg.first, label)) != 0)
				return rc;
		}
	return 0;
}

/* The first pass: can every segment join, and how wide is the widest block? */
static int check_segment(struct joiner *j, const struct join_input *in, const bfi_snapshot *seg,
                         uint64_t first, const char *label)
{
	(void)in;
	(void)first;
	int rc = compatible(j, seg, label);
	struct bfi_layout_info li;
	if (rc == 0 && bfi_layout_info(seg, BFI_LAYOUT_FLAT, &li) == 0)
		j->widest = li.bits > j->widest ? li.bits : j->widest;
	return rc;
}

int join_write(const char *cmd, const struct join_input *in, int n, const char *out, int quiet,
               uint64_t memory, uint64_t *n_sets, uint8_t id[16])
{
	struct joiner j = {.cmd = cmd};
	*n_sets = 0;
	int rc = each_segment(&j, in, n, check_segment);
	if (rc)
		return EXIT_USAGE;
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	o.layouts = BFI_BUILD_FLAT;
	o.keep_order = 1;
	o.prefilter = BFI_PREFILTER_NEVER;
	struct progress prog;
	progress_init(&prog, quiet);
	o.progress = on_progress;
	o.progress_ctx = &prog;
	if (memory)
		o.memory = memory;
	if (j.first)
		carry_rate(j.first, &o, j.widest);
	if ((rc = bfi_writer_create(&o, &j.w)) != 0) {
		fprintf(stderr, "bfi %s: %s\n", cmd, bfi_strerror(rc));
		return EXIT_USAGE;
	}
	int exit = EXIT_USAGE;
	struct bfi_flat_part *parts = NULL;
	struct bfi_flat_block_given *blocks = NULL;
	uint8_t **pres = NULL;
	struct bfi_flat_given g;
	j.first = NULL;
	if ((rc = each_segment(&j, in, n, add_segment)) != 0)
		goto done;
	*n_sets = j.n_sets;
	if (j.n_sets == 0) {
		exit = EXIT_OK; /* nothing lives: nothing to write */
		goto done;
	}
	rc = make_blocks(&j, &g, &parts, &blocks, &pres);
	if (rc == 0)
		rc = bfi_writer_flat_given(j.w, &g);
	if (rc == 0)
		rc = carry_rules(&j, in, n);
	struct bfi_build_summary sum;
	if (rc == 0)
		rc = bfi_writer_finish(j.w, out, &sum);
	if (rc) {
		const char *msg = bfi_writer_errmsg(j.w);
		fprintf(stderr, "bfi %s: %s: %s\n", cmd, out, *msg ? msg : bfi_strerror(rc));
		goto done;
	}
	bfi_snapshot *s = NULL;
	if ((rc = bfi_open(out, 0, &s)) != 0) {
		fprintf(stderr, "bfi %s: %s: %s\n", cmd, out, bfi_strerror(rc));
		goto done;
	}
	struct bfi_info si;
	bfi_info(s, &si);
	memcpy(id, si.snapshot_id, 16);
	bfi_close(&s);
	exit = EXIT_OK;
done:
	progress_done(&prog);
	for (size_t i = 0; i < j.n_pc; i++)
		free((void *)j.pc[i].part.keep);
	for (size_t i = 0; pres && i < j.n_pc; i++)
		free(pres[i]);
	free(pres);
	free(parts);
	free(blocks);
	free(j.pc);
	free(j.distinct);
	free(j.ones);
	bfi_writer_destroy(&j.w);
	return exit;
}
