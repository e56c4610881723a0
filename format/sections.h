/*
 * sections.h - the flat, plain, RAMBO and tree sections (spec/format.md,
 * "Flat section" to "Tree section"): their descriptors and table entries,
 * encoded and decoded (flat.c, plain.c, rambo.c, tree.c), and their
 * placement. format.h includes it.
 */
#ifndef BFI_FORMAT_SECTIONS_H
#define BFI_FORMAT_SECTIONS_H

#include <stdint.h>

struct bfi_where;

struct bfi_flat_desc {
	uint64_t n_sets;
	uint32_t k;
	uint32_t hash_id;
	uint32_t n_blocks;
	uint32_t flags;
	uint64_t table_offset; /* relative to the section's start */
};

/* One block of the flat section: sets [first_set, first_set + n_sets). */
struct bfi_block {
	uint64_t first_set;
	uint64_t n_sets;
	uint64_t m;           /* filter width of every set in the block */
	uint64_t row_bits;    /* stride from row to row: bfi_row_bits_ok() */
	uint64_t rows_offset; /* relative to the section's start */
	uint64_t pre_m;       /* width of the union pre-filter; 0 for none */
	uint64_t pre_offset;  /* relative; 0 for none */
	uint64_t group;       /* 0, or a grouped run's block: BFI_GROUP_FIRST if it begins one, | q */
};

/*
 * spec: "Grouped blocks" (format 3.2). Blocks of a run share their rows'
 * lines: the run's rows are G groups of group_bits bits, and group g holds
 * rows g * q .. g * q + q - 1 of each block of the run, block after block
 * (q rows of row_bits bits each), where m = G * q. So row r of a block
 * whose q rows in a group start seg bits into it is at
 * bfi_group_row_bit(), and the rows of every block that a key's probe
 * reads lie in one group: the line fastrange(z, G) of them all.
 */
#define BFI_GROUP_FIRST (UINT64_C(1) << 63)
#define BFI_GROUP_Q_MASK UINT64_C(0xffffffff)
#define BFI_GROUP_MAX_SETS 511u /* a grouped block's sets: packed rows, row_bits = n_sets */

static inline uint64_t bfi_group_row_bit(uint64_t r, uint64_t q, uint64_t group_bits, uint64_t seg,
                                         uint64_t row_bits)
{
	return r / q * group_bits + seg + r % q * row_bits;
}

/*
 * The grouped run beginning at blocks[i] (which has BFI_GROUP_FIRST): *n
 * blocks, G groups of *group_bits bits, its rows *bytes bytes (the groups
 * and a zero line after them). 0, or -1 if the run breaks the rules.
 */
int bfi_group_run(const struct bfi_block *blocks, uint32_t n_blocks, uint32_t i, uint32_t *n,
                  uint64_t *groups, uint64_t *group_bits, uint64_t *bytes);

struct bfi_plain_desc {
	uint64_t n_sets;
	uint64_t m;
	uint32_t k;
	uint32_t hash_id;
	uint64_t filter_bytes; /* bfi_word_bytes(m) */
	uint64_t filters_offset;
};

struct bfi_rambo_desc {
	uint64_t n_sets;
	uint32_t k;
	uint32_t hash_id;
	uint32_t reps;         /* R */
	uint32_t partition_id; /* BFI_PARTITION_XXH3 */
	uint64_t cells;        /* B, per repetition */
	uint32_t shards;       /* S: the two-level hash's first level; B % S == 0 */
	uint64_t table_offset; /* relative, 64 */
	uint32_t flags;        /* BFI_RAMBO_SHARED_PROBES (format 2.1) */
};
/* Every repetition tests probes 0 .. k - 1 (built from prebuilt filters),
 * not repetition r's own r k .. r k + k - 1. */
#define BFI_RAMBO_SHARED_PROBES 1u

/* One repetition of the RAMBO section; offsets relative to the section. */
struct bfi_rep {
	uint64_t m;              /* rows: width of every cell's filter */
	uint64_t row_bytes;      /* bfi_cell_row_bytes(cells, minor) */
	uint64_t rows_offset;
	uint64_t starts_offset;  /* cells + 1 little-endian u32: members of cell c are */
	uint64_t members_offset; /* members[starts[c] .. starts[c + 1]), n_sets u32 */
	uint64_t cell_of_offset; /* n_sets u32: each set's cell */
};

struct bfi_tree_desc {
	uint64_t n_sets;
	uint32_t k;
	uint32_t hash_id;
	uint32_t fanout; /* d: children per node, a power of two, 2 to 64 */
	uint32_t levels; /* level 0 holds the sets; at most the shape's count */
	uint64_t table_offset;
	uint64_t pre_m;      /* width of the union pre-filter of all sets, 0 for none */
	uint64_t pre_offset; /* relative; after the last level; 0 for none */
	uint32_t flags;      /* BFI_TREE_EXPLICIT: child groups listed, not implied by d */
	/* explicit trees: levels above the top stored one that the writer dropped,
	 * and their nodes (information only; implied trees: 0, the shape tells) */
	uint32_t dropped_levels;
	uint64_t dropped_nodes;
};

/* Tree flags. With BFI_TREE_EXPLICIT (format 2.1) each level above 0 lists
 * its nodes' child groups; d is then the build's order, for information. */
#define BFI_TREE_EXPLICIT 1u
/*
 * With BFI_TREE_LINE_PRE (format 3.3) the union pre-filter is a line
 * pre-filter, as a flat block's: pre_m a multiple of 512, a key's k bits in
 * the one line bfi_pre_line(probe 0, pre_m), at bfi_pre_bit(probe i).
 */
#define BFI_TREE_LINE_PRE 2u

/*
 * One level of the tree section. Level l's node j has children j d .. j d +
 * d - 1, or, in an explicit tree, groups[j] .. groups[j + 1] - 1 of level l - 1.
 */
struct bfi_level {
	uint64_t nodes;
	uint64_t m;             /* rows: filter width of every node of the level */
	uint64_t row_bytes;     /* bfi_rambo_row_bytes(nodes): whole 64-bit words */
	uint64_t rows_offset;   /* relative */
	uint64_t groups_offset; /* relative; explicit trees, levels >= 1: nodes + 1 u32 */
};

/* Encoders write every byte of their buffer, reserved bytes as zero. */
void bfi_flat_desc_encode(uint8_t out[BFI_FLAT_DESC_SIZE], const struct bfi_flat_desc *d);
void bfi_block_encode(uint8_t out[BFI_BLOCK_ENTRY_SIZE], const struct bfi_block *b);
void bfi_plain_desc_encode(uint8_t out[BFI_PLAIN_DESC_SIZE], const struct bfi_plain_desc *d);

/*
 * Check a flat section of size bytes at sec: the descriptor, then every
 * block entry against the exact packing the spec requires. blocks, if not
 * NULL, receives d->n_blocks entries. On failure *where is the structure
 * at fault.
 */
int bfi_flat_decode(const uint8_t *sec, uint64_t size, struct bfi_flat_desc *d,
                    struct bfi_block *blocks, struct bfi_where *where);
int bfi_plain_decode(const uint8_t *sec, uint64_t size, struct bfi_plain_desc *d,
                     struct bfi_where *where);

void bfi_rambo_desc_encode(uint8_t out[BFI_RAMBO_DESC_SIZE], const struct bfi_rambo_desc *d);
void bfi_rep_encode(uint8_t out[BFI_REP_ENTRY_SIZE], const struct bfi_rep *r);
/*
 * Check a RAMBO section of a file of format minor version minor:
 * descriptor and every repetition entry against the exact packing. reps,
 * if not NULL, receives d->reps entries.
 */
int bfi_rambo_decode(const uint8_t *sec, uint64_t size, unsigned minor, struct bfi_rambo_desc *d,
                     struct bfi_rep *reps, struct bfi_where *where);
/*
 * Place the repetitions (m set) for a file of format minor version minor,
 * and return the section's size, 0 on overflow.
 */
uint64_t bfi_rambo_layout(struct bfi_rep *reps, uint32_t n_reps, uint64_t n_sets, uint64_t cells,
                          unsigned minor);

void bfi_tree_desc_encode(uint8_t out[BFI_TREE_DESC_SIZE], const struct bfi_tree_desc *d);
void bfi_level_encode(uint8_t out[BFI_LEVEL_ENTRY_SIZE], const struct bfi_level *l);
int bfi_tree_decode(const uint8_t *sec, uint64_t size, struct bfi_tree_desc *d,
                    struct bfi_level *levels, struct bfi_where *where);
/* Nodes per level for n sets and fanout d; returns the level count (0: too many). */
uint32_t bfi_tree_shape(uint64_t n_sets, uint32_t fanout, uint64_t nodes[BFI_MAX_LEVELS]);
/* Place the levels (nodes and m set) and the pre-filter (d->pre_m set) and
 * return the section's size, 0 on overflow. */
uint64_t bfi_tree_layout(struct bfi_level *levels, uint32_t n_levels, struct bfi_tree_desc *d);

/* Byte length of a flat section with these blocks, or 0 on overflow. */
uint64_t bfi_flat_layout(struct bfi_block *blocks, uint32_t n_blocks);

#endif
