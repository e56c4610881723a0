/*
 * layout.h - a layout in the writer, one ops struct each (struct
 * wlayout): how it is planned, how its bytes are filled (a stripe at a
 * time from every key, stripes.c, or faster from its columns' own
 * filters), what follows its rows, and what the build asks of it. Each
 * layout's file defines its struct and keeps its plan in its own slot of
 * struct plan (plan_own); layouts.c lists them, a row each.
 */
#ifndef BFI_WRITER_LAYOUT_H
#define BFI_WRITER_LAYOUT_H

#include <stdlib.h>

#include "internal.h"

/*
 * A layout's bytes are filled a stripe at a time (stripes.c) where
 * nothing faster fits: a stripe is a byte range [lo, hi) of one section,
 * made of whole rows or filters, filled in memory by one pass over every
 * key of every set and written in place.
 */
struct wlayout;
struct bfi_snapshot; /* the reader's (bfi.h): a join's segments */
struct bfi_block_info;

/* A segment's columns as a layout holds them (struct wlayout's columns). */
struct join_columns {
	uint32_t blocks;
	uint32_t hashes;   /* its filters' k */
	int line_pre;      /* its prefilters are lines (flat's) */
};

/*
 * A segment as a join reads it (join.c), for a layout's join_check: its
 * columns a block at a time (flat blocks, or a tree's leaves), and which
 * of its sets the join keeps (those not removed).
 */
struct join_view {
	const struct bfi_snapshot *seg;
	const char *label; /* the segment, for messages */
	uint32_t blocks;
	/* Block b: its sets [*first, *first + *n), their filters' width *bits. 0 or an error. */
	int (*block)(const struct join_view *v, uint32_t b, uint64_t *first, uint64_t *n,
	             uint64_t *bits);
	int (*lives)(const struct join_view *v, uint64_t ord);
	const void *ctx; /* join.c's */
	uint64_t first;
};
struct stripe_ctx {
	bfi_writer *w;
	const struct plan *p;
	int fd;
	uint64_t sec_off;
	const struct wlayout *l;
	uint8_t *buf; /* made by the first stripe */
	uint64_t budget;
	uint64_t done, total;
	uint64_t start, end; /* the stripe being gathered, not yet filled */
};

/* A parameter a layout takes of its own (bfi_build_options' layout_options). */
struct wparam {
	const char *name;
	uint64_t least, most, dflt;
	const char *help; /* a few words: what it sets */
};

struct wlayout {
	int row;       /* BFI_ROW_*: the format's row (format/layouts.h) */
	/* Its own parameters, ended by a NULL name; NULL: none. */
	const struct wparam *params;
	int plan_rank; /* planned in this order: RAMBO's k may stand in for the catalog's */
	const char *what; /* its stripes, for progress: "row stripes" */
	/* The summaries its plan reads (WANT_*); alone: the build's only layout. NULL: none. */
	unsigned (*wants)(const struct bfi_build_options *o, int alone);
	/* Before the sets' order is final: may set it (the tree's insertion build). NULL: none. */
	int (*order)(bfi_writer *w, struct plan *p);
	/* Its plan, from the sets' summaries, into its slot (plan_own). */
	int (*plan)(bfi_writer *w, struct plan *p);
	/* Free what its plan's slot points to, not the slot itself. NULL: nothing. */
	void (*free)(void *own);
	/* The bytes its plan holds, counted in the budget. NULL: none. */
	uint64_t (*held)(const struct plan *p);
	/* The most its fastest fill holds at once, which the spool makes room for. NULL: 0. */
	uint64_t (*need)(const struct plan *p);
	/* Its section's bytes, and where its rows start in it. */
	uint64_t (*size)(const struct plan *p);
	uint64_t (*data)(const struct plan *p);
	/* Set j's prebuilt filter has bit row set: its bits in [lo, hi) of c->buf. */
	void (*filter_bit)(const struct stripe_ctx *c, uint64_t lo, uint64_t hi, uint32_t j,
	                   uint64_t row);
	/* Key h of set j: its bits in [lo, hi). */
	void (*key)(const struct stripe_ctx *c, uint64_t lo, uint64_t hi, uint32_t j, bfi_keyhash h);
	/* Each set's ones in [lo, hi), for the catalog, where this layout counts them; or NULL. */
	void (*count)(const struct stripe_ctx *c, uint64_t lo, uint64_t hi);
	/*
	 * The section's bytes: from whole filters where they fit, the rest
	 * handed to stripe_units. 0 or an error.
	 */
	int (*fill)(struct stripe_ctx *c);
	/* Its descriptor at off, and the tables after its rows (or NULL). */
	int (*descriptor)(int fd, const struct plan *p, uint64_t off);
	int (*after)(int fd, const struct plan *p, uint64_t off);
	/*
	 * The catalog's ones, when it is the snapshot's first layout by fill
	 * rank, from what its fill counted; NULL when its fill set p->ones.
	 */
	void (*ones)(struct plan *p);
	uint64_t (*widest)(const struct plan *p); /* its widest filter's bits */
	/* What it adds to the build's summary (flat: its blocks). NULL: nothing. */
	void (*summary)(const struct plan *p, struct bfi_build_summary *s);
	/*
	 * A build from rows, not keys (a join's columns, RAMBO's rows given):
	 * are its bytes given? NULL: never.
	 */
	int (*given)(const bfi_writer *w);
	/*
	 * A join of snapshots (join.c) carrying it from its segments, which
	 * its format row marks BFI_JOIN_KEPT. join_check, called for every
	 * segment in turn (v), keeps in *state what the join
	 * needs and returns 1 while it can carry it, else 0 with why set (a
	 * segment lacks it, or differs); join_set takes the join's next set,
	 * segment seg's set ord; join_options writes the layout_options items
	 * the build is to take (its own parameters, as the segments have them);
	 * join_free frees state. Its plan and fill then find state in
	 * w->carried[row]. A join_check with nothing in why is a quiet no:
	 * the first segment had none. NULL join_check: no join carries it.
	 */
	int (*join_check)(void **state, const struct join_view *v, char *why, size_t whylen);
	int (*join_set)(void *state, const struct bfi_snapshot *seg, uint32_t ord);
	/* Each segment, before its sets (NULL: nothing); 0 or an error. */
	int (*join_segment)(void *state, const struct bfi_snapshot *seg);
	/*
	 * Once every set is in: state handed to the writer through a call of
	 * its own (RAMBO's rows given); distinct, each set's keys. NULL:
	 * w->carried[row] alone.
	 */
	int (*join_give)(void *state, bfi_writer *w, const uint64_t *distinct);
	void (*join_options)(const void *state, char *opts, size_t len);
	/* The build options it sets (the tree's fanout); NULL: none. */
	void (*join_build)(const void *state, struct bfi_build_options *o);
	void (*join_free)(void *state);
	/*
	 * Built from the join's columns, as flat is (the tree over them): a
	 * join that keeps it needs no flat layout unless a segment had one.
	 */
	int from_columns;
	/*
	 * The sets' filters a segment holds as blocks of columns, which a join
	 * copies: 0 with *c filled when seg holds this layout, else nonzero;
	 * then block b's sets, width and rows (with rows NULL, its info alone;
	 * rows with no view in place copied into *owned, which the caller
	 * frees, else *owned NULL). The join takes the first layout in the
	 * table that has them. NULL: it holds no columns.
	 */
	int (*columns)(const struct bfi_snapshot *seg, struct join_columns *c);
	int (*column_block)(const struct bfi_snapshot *seg, uint32_t b, struct bfi_block_info *bi,
	                    const uint8_t **rows, uint64_t *bytes, const uint8_t **pre,
	                    uint8_t **owned);
};
/* The writer's layouts (layouts.c), in the order of their sections in a file; then NULL. */
extern const struct wlayout *const wlayouts[];
/* Every layout flag the writer writes. */
unsigned wlayouts_all(void);
/* Is layout l one of the build's? */
static inline int wlayout_on(const struct wlayout *l, unsigned layouts)
{
	return (layouts & bfi_layout_rows[l->row].flag) != 0;
}
/*
 * What the plans of o's layouts read of the sets' summaries (WANT_*);
 * maybe: the layouts the default may yet choose (AUTO_LAYOUTS), each as
 * the build's only one.
 */
unsigned wlayouts_wants(const struct bfi_build_options *o, unsigned maybe);
/*
 * One item of layout_options, [at, end), by the layouts of table (ended
 * by NULL) that layouts (0: any) holds: its layout, parameter and value
 * into *l, *p, *v: 0, or BFI_E_INVALID with err set (layout_param.c).
 */
int wlayout_item(const char *at, const char *end, const struct wlayout *const *table,
                 unsigned layouts, const struct wlayout **l, const struct wparam **p, uint64_t *v,
                 char *err, size_t errlen);
/* Parameter name of layout l, as the build's layout_options set it, else its default. */
uint64_t wlayout_param(const bfi_writer *w, const struct wlayout *l, const char *name);
/* Layout row's slot of the plan, size bytes zeroed the first time: NULL when out of memory. */
static inline void *plan_own(struct plan *p, int row, size_t size)
{
	if (p->own[row] == NULL)
		p->own[row] = calloc(1, size);
	return p->own[row];
}

/* Write layout l's section at sec_off of fd; each set's ones in the plan, for the catalog. */
int write_layout(bfi_writer *w, const struct plan *p, int fd, uint64_t sec_off,
                 const struct wlayout *l);
/*
 * Stripe [lo, hi) of the section in units of unit bytes (rows), as the
 * budget allows; a unit larger than the budget goes in several stripes.
 * stripe_flush fills and writes what is gathered.
 */
int stripe_units(struct stripe_ctx *c, uint64_t lo, uint64_t hi, uint64_t unit);
int stripe_flush(struct stripe_ctx *c);
/* Set bit `bit` of byte `byte` of the section, if it lies in the stripe [lo, hi) at buf. */
static inline void stripe_bit(uint8_t *buf, uint64_t lo, uint64_t hi, uint64_t byte, unsigned bit)
{
	if (byte >= lo && byte < hi)
		buf[byte - lo] |= (uint8_t)(1u << bit);
}
/*
 * Add the ones of each column of the m rows of row_bytes at rows_off that
 * lie in [lo, hi), whose bytes are at buf, to ones[column].
 */
void count_columns(const uint8_t *buf, uint64_t lo, uint64_t hi, uint64_t rows_off, uint64_t m,
                   uint64_t row_bytes, uint64_t *ones);
/* OR prebuilt filter ord (m bits, as the plan gives it) into filt, m bits as 64-bit words (fill.c). */
int prebuilt_into(bfi_writer *w, uint32_t ord, uint64_t m, uint64_t *filt);

/*
 * Columns whose filters are unions of sets (unions.c): a tree level's
 * nodes, a RAMBO repetition's cells. Each column's filter is filled from
 * its sets' keys while it is in cache, and 64 finished filters are
 * transposed into the rows at once; the rows are held in memory and
 * written once.
 */
struct columns {
	bfi_writer *w;
	const struct plan *p;
	uint64_t m, row_bytes, n; /* m rows of row_bytes, columns 0 .. n - 1 */
	uint32_t k, first_probe; /* probes first_probe .. first_probe + k - 1 */
	/* the snapshot ordinals of column c: [a, e) of list, or of 0.. when list is NULL */
	const uint32_t *list;
	const uint32_t *starts; /* list: column c's at starts[c] .. starts[c + 1] */
	uint64_t span;          /* no list: column c holds ordinals c span .. (c + 1) span - 1 */
	uint8_t *pre;           /* the tree's pre-filter, every key in it, or NULL */
	uint64_t pre_m;
	uint64_t *ones;         /* each column's ones, or NULL */
	int pre_line;           /* the pre-filter takes one line a key (BFI_TREE_LINE_PRE) */
	/* fill_columns' own */
	uint8_t *rows;
	uint64_t words;
	uint64_t **filt;  /* per thread: 64 filters of words 64-bit words */
	uint8_t **pres;   /* per thread: a pre-filter, ORed into pre at the end */
};
/* Fill c's rows and write them at off of fd: 0, 1 if they do not fit in budget, or an error. */
int fill_columns(struct columns *c, int fd, uint64_t off, uint64_t budget);

/*
 * Where rows go (a flat block's, a level's), from its rows_offset: row r at bit
 * r * row_bits, or in a grouped run (q > 0) at bfi_group_row_bit.
 */
struct rowmap {
	uint64_t row_bits, q, group_bits, seg;
	uint64_t run_bytes; /* a run's first block: the run's rows' bytes; else 0 */
	uint32_t run_n;     /* a run's first block: its blocks; else 0 */
};

static inline uint64_t rowmap_bit(const struct rowmap *rm, uint64_t r)
{
	return rm->q ? bfi_group_row_bit(r, rm->q, rm->group_bits, rm->seg, rm->row_bits)
	             : r * rm->row_bits;
}

/* Transposing (transpose.c). a[r] bit c becomes a[c] bit r. */
void transpose64(uint64_t a[64]);
/*
 * One tile of a slice: rows 64 w .. 64 w + 63 of the n <= 64 filters at
 * filt (words 64-bit words each), as out[r]: bit c of out[r] is bit 64 w +
 * r of filter c.
 */
void transpose_slice(const uint64_t *filt, uint64_t words, uint32_t n, uint64_t w, uint64_t out[64]);
/*
 * The n <= 64 filters at filt (m bits each, the bits past m zero) become
 * columns col .. col + n - 1 of the m rows at rows (row r from bit
 * rowmap_bit(rm, r); rows 8-byte aligned), ORed into what is there, atomically when
 * shared (other threads write columns that share its words).
 */
void transpose_filters(const uint64_t *filt, uint64_t words, uint32_t n, uint64_t m,
                       uint8_t *rows, const struct rowmap *rm, uint64_t col, int shared);
/* The same for the filters' words [w0, w1) only: rows 64 w0 .. 64 w1 - 1. */
void transpose_filters_part(const uint64_t *filt, uint64_t words, uint32_t n, uint64_t m,
                            uint8_t *rows, const struct rowmap *rm, uint64_t col, int shared,
                            uint64_t w0, uint64_t w1);
/*
 * OR count rows of a slice (little-endian words, bit c = column col + c)
 * into the rows at rows, row r from bit r * row_bits.
 */
void slice_into_rows(const uint64_t *slice, uint64_t count, uint8_t *rows, uint64_t row_bits,
                     uint64_t col);

#endif
