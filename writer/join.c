/*
 * join.c - one snapshot from the live sets of other snapshots' segments,
 * without their keys (spec/format.md, "Compaction and merge"): each flat
 * block's kept columns are copied row by row into blocks of the same
 * width, and a set's filter stays its source column bit for bit. The
 * library's bfi_merge and bfi_compact (compact.c) both write through
 * join_write; it reads its inputs through the reader's public calls.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bfi.h"
#include "bfi_catalog.h"
#include "internal.h"
#include "join.h"
#include "layout.h"
#include "publish.h"

/* The catalog fields that say how a snapshot's keys were made: joined snapshots must match. */
static const char *const key_rules[] = BFI_META_KEY_RULES;

/* One source block's kept columns: a part of an output block. */
struct piece {
	struct bfi_flat_part part;
	uint64_t m, pre_m, live;
	const uint8_t *pre;
	int line_pre;
	uint8_t *owned; /* a grouped block's rows, copied out (part.rows), or NULL */
};

struct joiner {
	char *err; /* what stopped the join, errlen bytes */
	size_t errlen;
	const struct bfi_join_options *o;
	struct piece *pc;
	size_t n_pc, cap_pc;
	uint64_t n_sets;
	uint64_t *distinct, *ones;
	uint64_t *counted; /* 1 + a set's distinct keys before --min-count's cut; 0 not recorded */
	int any_counted;
	size_t cap_sets;
	bfi_writer *w;
	uint32_t k;
	const bfi_snapshot *first; /* the first segment: the others must match its rules */
	char first_label[4400];
	uint64_t widest;
	uint32_t seen; /* segments checked */
	unsigned written; /* the layouts written from the columns (flat) that some segment holds */
	unsigned dropped; /* layouts some segment holds that the join does not write */
	/* the layouts that carry themselves (layout.h, join_check), by row */
	struct carry {
		void *state;
		int ok, any, kept; /* ok: every segment so far allows it; any: some segment has it */
		char why[4600];
	} carry[BFI_ROWS];
};

/* The writer's layout of format flag f that a join carries through its own ops, or NULL. */
static const struct wlayout *carrier(unsigned f)
{
	for (const struct wlayout *const *l = wlayouts; *l; l++)
		if (bfi_layout_rows[(*l)->row].flag == f && (*l)->join_check)
			return *l;
	return NULL;
}

/*
 * The writer's layout of format flag f that a join writes from the
 * columns (its format row says BFI_JOIN_WRITTEN; its bytes are given,
 * flat_copy.c), or NULL.
 */
static const struct wlayout *writes(unsigned f)
{
	for (const struct wlayout *const *l = wlayouts; *l; l++)
		if (bfi_layout_rows[(*l)->row].flag == f && (*l)->given)
			return *l;
	return NULL;
}

/* Why the join cannot go on, into j->err; returns BFI_E_JOIN. */
__attribute__((format(printf, 2, 3))) static int say(struct joiner *j, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(j->err, j->errlen, fmt, ap);
	va_end(ap);
	return BFI_E_JOIN;
}

/*
 * A set name for a message: control bytes as \xHH, so that a terminal
 * shows it and is not driven by it; cut short with "... (N bytes)".
 */
static const char *shown_name(const char *p, size_t len, char *buf, size_t cap)
{
	size_t o = 0, i = 0;
	for (; i < len && o + 40 < cap; i++) {
		unsigned char c = (unsigned char)p[i];
		if (c < 0x20 || c == 0x7f)
			o += (size_t)snprintf(buf + o, cap - o, "\\x%02x", c);
		else
			buf[o++] = (char)c;
	}
	if (i < len)
		o += (size_t)snprintf(buf + o, cap - o, "... (%zu bytes)", len);
	buf[o < cap ? o : cap - 1] = 0;
	return buf;
}

/* A line for the caller's note callback, if any. */
__attribute__((format(printf, 2, 3))) static void note(const struct bfi_join_options *o,
                                                       const char *fmt, ...)
{
	if (o->note == NULL)
		return;
	char line[4800];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	o->note(o->note_ctx, line);
}

/*
 * How a join carries each layout a segment holds is the layout's own
 * (bfi_layout_join): flat is written from the columns; a layout kept is
 * carried by its own join ops (layout.h) when every segment allows: the
 * tree rebuilt over the columns, RAMBO's rows ORed; others are dropped
 * with a note. A layout the library does not know, or one
 * kept by rules this file does not hold, is refused: a join never drops
 * what it does not know. 0 or BFI_E_JOIN.
 */
static int known_layouts(struct joiner *j, const bfi_snapshot *seg, const char *label)
{
	struct bfi_info si;
	bfi_info(seg, &si);
	for (unsigned i = 0, f; (f = bfi_layout_at(i)) != 0; i++) {
		if (!(si.layouts & f))
			continue;
		int how = bfi_layout_join(f);
		if (how == BFI_JOIN_UNKNOWN || (how == BFI_JOIN_WRITTEN && writes(f) == NULL) ||
		    (how == BFI_JOIN_KEPT && carrier(f) == NULL)) {
			return say(j, "%s holds a %s layout, which a join cannot carry; rebuild it from "
			           "its sets instead", label, bfi_layout_name(f));
		}
		if (how == BFI_JOIN_DROPPED)
			j->dropped |= f;
		if (how == BFI_JOIN_WRITTEN)
			j->written |= f;
	}
	/* a section this library does not know (an optional one, which the reader passed over) */
	for (uint32_t i = 0; i < si.n_sections; i++) {
		struct bfi_section_info sec;
		if (bfi_section(seg, i, &sec) == 0 && !strcmp(bfi_section_kind_name(sec.kind), "unknown")) {
			return say(j, "%s holds a section of kind %u, which this bfi does not know and so "
			           "cannot carry", label, sec.kind);
		}
	}
	return 0;
}

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
	uint64_t *c = o ? realloc(j->counted, cap * sizeof *c) : NULL;
	if (c)
		j->counted = c;
	if (!d || !o || !c)
		return -ENOMEM;
	j->cap_sets = cap;
	return 0;
}

/*
 * The layout whose columns a join copies from seg, with *c its blocks:
 * the first in the table that holds them (flat's blocks before the
 * tree's leaves), or NULL.
 */
static const struct wlayout *column_source(const bfi_snapshot *seg, struct join_columns *c)
{
	for (const struct wlayout *const *l = wlayouts; *l; l++)
		if ((*l)->columns && (*l)->columns(seg, c) == 0)
			return *l;
	*c = (struct join_columns){0, 0, 0};
	return NULL;
}

/* Can segment seg join the others? Its columns, k and key rules. */
static int compatible(struct joiner *j, const bfi_snapshot *seg, const char *label)
{
	struct join_columns c;
	if (column_source(seg, &c) == NULL)
		return say(j, "%s has neither a flat layout nor a tree, whose columns a join copies",
		           label);
	if (j->first == NULL) {
		j->first = seg;
		snprintf(j->first_label, sizeof j->first_label, "%s", label);
		j->k = c.hashes;
		return 0;
	}
	const char *rule = bfi_key_rules_differ(j->first, seg);
	if (rule || c.hashes != j->k) {
		return say(j, "%s and %s differ in %s; they cannot be joined", j->first_label, label,
		           rule ? rule : "k (hashes)");
	}
	return 0;
}

/* Segment seg of in (its set 0 is in's ordinal first): its live sets declared, its blocks' pieces. */
static int add_segment(struct joiner *j, const struct join_input *in, const bfi_snapshot *seg,
                       uint64_t first, const char *label)
{
	int rc = compatible(j, seg, label);
	for (const struct wlayout *const *l = wlayouts; rc == 0 && *l; l++)
		if (j->carry[(*l)->row].kept && (*l)->join_segment)
			rc = (*l)->join_segment(j->carry[(*l)->row].state, seg);
	if (rc) {
		if (!j->err[0])
			snprintf(j->err, j->errlen, "%s: %s", label, bfi_strerror(rc));
		return rc;
	}
	struct join_columns cs;
	const struct wlayout *src = column_source(seg, &cs);
	for (uint32_t b = 0; b < cs.blocks; b++) {
		struct bfi_block_info bi;
		const uint8_t *rows, *pre;
		uint64_t bytes;
		uint8_t *owned;
		if ((rc = src->column_block(seg, b, &bi, &rows, &bytes, &pre, &owned)) != 0) {
			free(owned);
			break;
		}
		uint64_t *keep = calloc((bi.n_sets + 63) / 64, 8), live = 0;
		if (keep == NULL) {
			free(owned);
			return -ENOMEM;
		}
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
				free(keep);
				free(owned);
				char nb[300];
				return say(j, "more than one input holds a set named %s",
				           shown_name(name, len, nb, sizeof nb));
			}
			if (rc)
				break;
			/* what --min-count dropped, carried over where the input recorded it */
			uint64_t seen;
			int got = bfi_set_seen(seg, (uint32_t)o, &seen);
			if (got && got != BFI_E_NOT_FOUND) {
				rc = got;
				break;
			}
			j->counted[j->n_sets] = got ? 0 : seen + 1;
			j->any_counted |= !got;
			j->distinct[j->n_sets] = st.distinct_keys;
			j->ones[j->n_sets++] = st.bits_set;
			keep[c / 64] |= UINT64_C(1) << (c % 64);
			live++;
			for (const struct wlayout *const *l = wlayouts; rc == 0 && *l; l++)
				if (j->carry[(*l)->row].kept && (*l)->join_set)
					rc = (*l)->join_set(j->carry[(*l)->row].state, seg, (uint32_t)o);
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
			free(owned);
			if (rc)
				break;
			continue;
		}
		j->pc[j->n_pc++] = (struct piece){
		    {rows, bytes, bi.row_bits, bi.n_sets, live == bi.n_sets ? NULL : keep},
		    bi.bits, bi.prefilter_bits, live, pre, cs.line_pre, owned};
		if (live == bi.n_sets)
			free(keep);
	}
	if (rc) {
		snprintf(j->err, j->errlen, "%s: %s", label, bfi_strerror(rc));
		return rc;
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
				snprintf(j->err, j->errlen, "%s: %s", in[x].label, bfi_strerror(rc));
				return rc;
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

/* The join's view of a segment (struct join_view): its columns' blocks, and its live sets. */
static int view_block(const struct join_view *v, uint32_t b, uint64_t *first, uint64_t *n,
                      uint64_t *bits)
{
	struct bfi_block_info bi;
	struct join_columns c;
	const struct wlayout *src = column_source(v->seg, &c);
	int rc = src ? src->column_block(v->seg, b, &bi, NULL, NULL, NULL, NULL) : BFI_E_INVALID;
	if (rc == 0) {
		*first = bi.first_set;
		*n = bi.n_sets;
		*bits = bi.bits;
	}
	return rc;
}

static int view_lives(const struct join_view *v, uint64_t ord)
{
	const char *name;
	size_t len;
	const struct join_input *in = v->ctx;
	return bfi_set_name(in->snap, (uint32_t)(v->first + ord), &name, &len) == 0;
}

/* Can the join carry each layout that carries itself? Its own ops say (layout.h). */
static void carry_check(struct joiner *j, const struct join_input *in, const bfi_snapshot *seg,
                        uint64_t first, const char *label)
{
	struct join_columns cols;
	column_source(seg, &cols);
	struct join_view v = {seg, label, cols.blocks, view_block, view_lives, in, first};
	for (const struct wlayout *const *l = wlayouts; *l; l++) {
		struct carry *c = &j->carry[(*l)->row];
		struct bfi_layout_info li;
		if ((*l)->join_check == NULL)
			continue;
		if (j->seen == 0)
			c->ok = 1;
		c->any |= bfi_layout_info(seg, bfi_layout_rows[(*l)->row].flag, &li) == 0;
		if (c->ok && !(*l)->join_check(&c->state, &v, c->why, sizeof c->why))
			c->ok = 0;
	}
}

/* The first pass: can every segment join, and how wide is the widest block? */
static int check_segment(struct joiner *j, const struct join_input *in, const bfi_snapshot *seg,
                         uint64_t first, const char *label)
{
	int rc = known_layouts(j, seg, label);
	if (rc == 0)
		rc = compatible(j, seg, label);
	struct join_columns c;
	const struct wlayout *src = rc == 0 ? column_source(seg, &c) : NULL;
	for (uint32_t b = 0; src && b < c.blocks; b++) {
		struct bfi_block_info bi;
		if (src->column_block(seg, b, &bi, NULL, NULL, NULL, NULL) == 0)
			j->widest = bi.bits > j->widest ? bi.bits : j->widest;
	}
	if (rc == 0) {
		carry_check(j, in, seg, first, label);
	}
	j->seen++;
	return rc;
}

int join_write(const struct join_input *in, int n, const char *out,
               const struct bfi_join_options *jo, uint64_t *n_sets, uint8_t id[16], char *err,
               size_t errlen)
{
	struct joiner j = {.err = err, .errlen = errlen, .o = jo};
	*n_sets = 0;
	struct bfi_flat_part *parts = NULL;
	struct bfi_flat_block_given *blocks = NULL;
	uint8_t **pres = NULL;
	int rc = each_segment(&j, in, n, check_segment);
	if (rc)
		goto done; /* the layouts' join states to free */
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	/*
	 * Each layout kept that every segment allows (its join ops, layout.h),
	 * its own parameters and build options as the segments have them; flat
	 * if any input has it, or if no layout kept is built from the columns.
	 */
	char opts[1024] = "";
	int columns = 0; /* a kept layout built from the columns: flat only if an input had it */
	o.layouts = 0;
	for (const struct wlayout *const *l = wlayouts; *l; l++) {
		struct carry *c = &j.carry[(*l)->row];
		if (!(*l)->join_check || !c->any)
			continue;
		if (!c->ok) { /* no why: the first segment had none, so none was looked for */
			if (c->why[0])
				note(jo, "note: the %s layout is not kept: %s", bfi_layout_rows[(*l)->row].name,
				     c->why);
			continue;
		}
		c->kept = 1;
		o.layouts |= bfi_layout_rows[(*l)->row].flag;
		columns |= (*l)->from_columns;
		if ((*l)->join_build)
			(*l)->join_build(c->state, &o);
		char item[256] = "";
		if ((*l)->join_options)
			(*l)->join_options(c->state, item, sizeof item);
		size_t at = strlen(opts);
		if (item[0])
			snprintf(opts + at, sizeof opts - at, "%s%s", at ? "," : "", item);
	}
	o.layout_options = opts[0] ? opts : NULL;
	o.layouts |= j.written | (columns ? 0 : BFI_BUILD_FLAT);
	for (unsigned i = 0, f; (f = bfi_layout_at(i)) != 0; i++)
		if (j.dropped & f)
			note(jo, "note: the %s layout is not kept: a join writes its sets from their "
			     "columns, and %s is built from keys", bfi_layout_name(f), bfi_layout_name(f));
	o.keep_order = 1;
	o.prefilter = BFI_PREFILTER_NEVER;
	o.progress = jo->progress;
	o.progress_ctx = jo->progress_ctx;
	o.memory = jo->memory;
	if (j.first)
		carry_rate(j.first, &o, j.widest);
	if ((rc = bfi_writer_create(&o, &j.w)) != 0) {
		snprintf(err, errlen, "%s", bfi_strerror(rc));
		goto done;
	}
	for (int r = 0; r < BFI_ROWS; r++)
		if (j.carry[r].kept)
			j.w->carried[r] = j.carry[r].state;
	struct bfi_flat_given g;
	j.first = NULL;
	if ((rc = each_segment(&j, in, n, add_segment)) != 0)
		goto done;
	*n_sets = j.n_sets;
	if (j.n_sets == 0)
		goto done; /* nothing lives: nothing to write */
	rc = make_blocks(&j, &g, &parts, &blocks, &pres);
	if (rc == 0)
		rc = bfi_writer_flat_given(j.w, &g);
	for (const struct wlayout *const *l = wlayouts; rc == 0 && *l; l++)
		if (j.carry[(*l)->row].kept && (*l)->join_give)
			rc = (*l)->join_give(j.carry[(*l)->row].state, j.w, j.distinct);
	if (rc == 0)
		rc = carry_rules(&j, in, n);
	if (rc == 0 && j.any_counted) /* the writer's catalog takes them as a build's */
		rc = writer_carry_seen(j.w, j.counted, j.n_sets);
	struct bfi_build_summary sum;
	if (rc == 0)
		rc = bfi_writer_finish(j.w, out, &sum);
	if (rc) {
		const char *msg = bfi_writer_errmsg(j.w);
		snprintf(err, errlen, "%s: %s", out, *msg ? msg : bfi_strerror(rc));
		goto done;
	}
	bfi_snapshot *s = NULL;
	if ((rc = bfi_open(out, 0, &s)) != 0) {
		snprintf(err, errlen, "%s: %s", out, bfi_strerror(rc));
		goto done;
	}
	struct bfi_info si;
	bfi_info(s, &si);
	memcpy(id, si.snapshot_id, 16);
	bfi_close(&s);
done:
	for (size_t i = 0; i < j.n_pc; i++) {
		free((void *)j.pc[i].part.keep);
		free(j.pc[i].owned);
	}
	for (size_t i = 0; pres && i < j.n_pc; i++)
		free(pres[i]);
	free(pres);
	free(parts);
	free(blocks);
	free(j.pc);
	free(j.distinct);
	free(j.ones);
	free(j.counted);
	bfi_writer_destroy(&j.w);
	for (const struct wlayout *const *l = wlayouts; *l; l++)
		if (j.carry[(*l)->row].state)
			(*l)->join_free(j.carry[(*l)->row].state);
	return rc;
}
