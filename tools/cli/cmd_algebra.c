/*
 * cmd_algebra.c - snapshot algebra on the RAMBO layout: bfi fold (OR the
 * two halves of B together) and bfi stack (shards side by side, by the
 * paper's two-level hash). Both read snapshots through bfi.h and write
 * through the writer's row interface, so the output is an ordinary,
 * checksummed, atomically published snapshot. The rows are made as the
 * writer writes them, a share of --memory at a time, and the input's
 * pages let go once read, so a result larger than memory is made within
 * it.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bfi.h"
#include "bfi_writer.h"
#include "opts.h"
#include "tools.h"

/* What bfi fold's options ask. */
struct fold_args {
	const char *out;
	uint64_t times, memory;
	int quiet;
};

static const char fold_cmd_head[] =
	"Usage: bfi fold [-q] [--times N] -o OUT SNAP\n"
	"\n"
	"Fold the RAMBO layout of SNAP: OR each repetition's cells c and\n"
	"c + B/2 together, halving B and the index, as the RAMBO paper does. The\n"
	"result is what a build with B/2 cells would give, with the original\n"
	"filter widths: no false negatives, and the false-positive rate of\n"
	"Lemma 4.1 at B/2. OUT holds the rambo layout only.\n"
	"\n"
	"Options:\n";

static const char fold_cmd_tail[] =
	"\n"
	"Exit status: 0, or 2 for a usage error, an input that cannot be read or\n"
	"does not hold what this needs, or an OUT that cannot be written.\n";

static const struct opt_row fold_cmd_rows[] = {
	{"output", 'o', "OUT",
	 "the snapshot to write",
	 OPT_STR, offsetof(struct fold_args, out), 0, 0, NULL, NULL},
	{"times", 300, "N",
	 "fold N times (B / 2^N), default 1",
	 OPT_U64, offsetof(struct fold_args, times), 1, 24, "--times must be 1..24", NULL},
	{"memory", 301, "BYTES",
	 "what the fold may hold (default: bfi build's)",
	 OPT_U64, offsetof(struct fold_args, memory), 1, UINT64_MAX, "--memory must be a size such as 256M", NULL},
	{"quiet", 'q', NULL,
	 "no summary",
	 OPT_FLAG, offsetof(struct fold_args, quiet), 0, 0, NULL, NULL},
	{"help", 'h', NULL,
	 "show this help",
	 OPT_HELP, 0, 0, 0, NULL, NULL},
	{NULL, 0, NULL, NULL, OPT_FN, 0, 0, 0, NULL, NULL},
};

static const struct opt_cmd fold_cmd = {
    .me = "bfi fold",
    .head = fold_cmd_head,
    .tail = fold_cmd_tail,
    .rows = fold_cmd_rows,
    .column = 21,
};

/* What bfi stack's options ask. */
struct stack_args {
	const char *out;
	uint64_t memory;
	int quiet;
};

static const char stack_cmd_head[] =
	"Usage: bfi stack [-q] -o OUT SHARD...\n"
	"\n"
	"Stack RAMBO shards side by side into one snapshot of S = (number of\n"
	"shards) x b cells, where b is each shard's cell count: shard s holds\n"
	"cells s*b .. s*b + b - 1, the paper's two-level hash. The shards must be\n"
	"built with identical parameters (--cells b, --reps, --bits, --hashes,\n"
	"one shard each) from the sets that hash sends them, in shard order:\n"
	"  bfi build --layout rambo --route I/S --cells b --reps R --bits M ...\n"
	"The stack answers exactly as one build of all the sets with --cells S*b\n"
	"--shards S and the same --reps, --bits and --hashes.\n"
	"\n"
	"Options:\n";

static const char stack_cmd_tail[] =
	"\n"
	"Exit status: 0, or 2 for a usage error, an input that cannot be read or\n"
	"does not hold what this needs, or an OUT that cannot be written.\n";

static const struct opt_row stack_cmd_rows[] = {
	{"output", 'o', "OUT",
	 "the snapshot to write",
	 OPT_STR, offsetof(struct stack_args, out), 0, 0, NULL, NULL},
	{"memory", 300, "BYTES",
	 "what the stack may hold (default: bfi build's); the\n"
	 "shards may pass it many times over",
	 OPT_U64, offsetof(struct stack_args, memory), 1, UINT64_MAX, "--memory must be a size such as 256M", NULL},
	{"quiet", 'q', NULL,
	 "no summary",
	 OPT_FLAG, offsetof(struct stack_args, quiet), 0, 0, NULL, NULL},
	{"help", 'h', NULL,
	 "show this help",
	 OPT_HELP, 0, 0, 0, NULL, NULL},
	{NULL, 0, NULL, NULL, OPT_FN, 0, 0, 0, NULL, NULL},
};

static const struct opt_cmd stack_cmd = {
    .me = "bfi stack",
    .head = stack_cmd_head,
    .tail = stack_cmd_tail,
    .rows = stack_cmd_rows,
    .column = 21,
};

/* Declare every set of s, in ordinal order, and collect its distinct keys. */
static int add_sets(bfi_writer *w, const bfi_snapshot *s, uint64_t *distinct, uint64_t *at)
{
	struct bfi_info in;
	bfi_info(s, &in);
	for (uint64_t o = 0; o < in.n_sets; o++) {
		const char *name;
		size_t len;
		struct bfi_set_stats st;
		uint32_t ord;
		int rc = bfi_set_name(s, (uint32_t)o, &name, &len);
		if (rc == 0)
			rc = bfi_set_stats(s, (uint32_t)o, &st);
		if (rc == 0)
			rc = bfi_writer_set(w, name, len, &ord);
		if (rc == 0 && ord != *at)
			rc = BFI_E_DUP_SET;
		if (rc)
			return rc;
		distinct[(*at)++] = st.distinct_keys;
	}
	return 0;
}

/* The 64 bits of src (rb bytes, little-endian bit order) from bit from; those past rb are zero. */
static uint64_t bits_at(const uint8_t *src, uint64_t rb, uint64_t from)
{
	uint8_t b[16] = {0};
	uint64_t at = from / 8, lo;
	if (at < rb)
		memcpy(b, src + at, (size_t)(rb - at < 9 ? rb - at : 9));
	memcpy(&lo, b, 8);
	lo = le64toh(lo);
	unsigned sh = (unsigned)(from % 8);
	return sh ? lo >> sh | (uint64_t)b[8] << (64 - sh) : lo;
}

/*
 * OR bits [from, from + n) of src (rb bytes, a RAMBO row, little-endian
 * bit order) into dst (a row of whole 64-bit words) from bit at: 64 bits
 * at a time, shifted onto the one or two words they land on.
 */
static void or_bits(uint8_t *dst, uint64_t at, const uint8_t *src, uint64_t rb, uint64_t from,
                    uint64_t n)
{
	for (uint64_t x = 0; x < n; x += 64) {
		unsigned take = n - x < 64 ? (unsigned)(n - x) : 64;
		uint64_t v = bits_at(src, rb, from + x), d;
		if (take < 64)
			v &= (UINT64_C(1) << take) - 1;
		if (v == 0)
			continue;
		uint64_t bit = at + x, w = bit / 64;
		unsigned sh = (unsigned)(bit % 64);
		memcpy(&d, dst + w * 8, 8);
		d = htole64(le64toh(d) | v << sh);
		memcpy(dst + w * 8, &d, 8);
		if (sh && sh + take > 64) {
			memcpy(&d, dst + (w + 1) * 8, 8);
			d = htole64(le64toh(d) | v >> (64 - sh));
			memcpy(dst + (w + 1) * 8, &d, 8);
		}
	}
}

/*
 * The pages of mapped input [lo, hi), read now, let go (rows before lo
 * were read before; the page hi is in, partly, not yet): the process
 * holds the rows it makes, not all it reads.
 */
static void let_go(const uint8_t *lo, const uint8_t *hi)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t a = (uintptr_t)lo & ~(page - 1), b = (uintptr_t)hi & ~(page - 1);
	if (b > a)
		(void)madvise((void *)a, b - a, MADV_DONTNEED);
}

/* What the rows of a fold or a stack are made from: its inputs, and their cells' place. */
struct made {
	bfi_snapshot **in;
	int n_in;        /* the shards; one for a fold */
	uint64_t cells;  /* of the result: B */
	uint64_t b;      /* of each shard (a stack), or of the input (a fold) */
	int fold;
};

/*
 * Rows [first, first + n) of repetition r into dst (ceil(B / 64) words
 * each, zeroed): a fold ORs cells c, c + B, c + 2B, ... of the input
 * into cell c; a stack puts shard i's cell c at i * b + c.
 */
static int make_rows(void *ctx, uint32_t r, uint64_t first, uint64_t n, uint8_t *dst)
{
	const struct made *mk = ctx;
	uint64_t nb = (mk->cells + 63) / 64 * 8;
	for (int i = 0; i < mk->n_in; i++) {
		const uint8_t *rows;
		uint64_t m, rb;
		int rc = bfi_rambo_rows(mk->in[i], r, &rows, &m, &rb);
		if (rc)
			return rc;
		if (first + n > m)
			return BFI_E_INVALID;
		for (uint64_t row = first; row < first + n; row++) {
			uint8_t *d = dst + (row - first) * nb;
			if (mk->fold)
				for (uint64_t from = 0; from < mk->b; from += mk->cells)
					or_bits(d, 0, rows + row * rb, rb, from, mk->cells);
			else
				or_bits(d, (uint64_t)i * mk->b, rows + row * rb, rb, 0, mk->b);
		}
		let_go(rows + first * rb, rows + (first + n) * rb);
	}
	return 0;
}

static int write_out(const char *out, bfi_writer *w, int quiet)
{
	struct bfi_build_summary sum;
	int rc = bfi_writer_finish(w, out, &sum);
	if (rc) {
		const char *msg = bfi_writer_errmsg(w);
		fprintf(stderr, "bfi: %s: %s\n", out, *msg ? msg : bfi_strerror(rc));
		return rc;
	}
	if (!quiet)
		fprintf(stderr, "bfi: wrote %s: %llu sets; index %llu bytes, catalog %llu bytes\n", out,
		        (unsigned long long)sum.n_sets, (unsigned long long)sum.index_bytes,
		        (unsigned long long)sum.catalog_bytes);
	return 0;
}

static bfi_writer *rows_writer(const bfi_snapshot *s, uint64_t memory)
{
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	o.layouts = BFI_BUILD_RAMBO;
	o.keep_order = 1;
	o.memory = memory;
	const void *v;
	size_t len;
	char buf[40];
	if (s && bfi_catalog_meta(s, "fpr", &v, &len) == 0 && len < sizeof buf) {
		memcpy(buf, v, len);
		buf[len] = 0;
		double f = strtod(buf, NULL);
		if (f > 0 && f < 1)
			o.fpr = f;
	}
	bfi_writer *w = NULL;
	if (bfi_writer_create(&o, &w))
		return NULL;
	return w;
}

int cmd_fold(int argc, char **argv)
{
	struct fold_args opt = {NULL, 1, 0, 0};
	int orc = opts_parse(&fold_cmd, argc, argv, &opt);
	if (orc)
		return orc - 1;
	const char *out = opt.out;
	uint64_t times = opt.times, memory = opt.memory;
	int quiet = opt.quiet;
	if (out == NULL || optind != argc - 1) {
		fprintf(stderr, "bfi fold: need -o OUT and one SNAP\n");
		return usage_try("fold");
	}
	if (output_ok("fold", out, argv + optind, 1))
		return EXIT_USAGE;
	bfi_snapshot *s = NULL;
	guard_during(argv[optind], EXIT_USAGE);
	int rc = bfi_open(argv[optind], 0, &s);
	guard_during(NULL, 0);
	if (rc) {
		fprintf(stderr, "bfi fold: %s: %s\n", argv[optind], bfi_strerror(rc));
		return EXIT_USAGE;
	}
	guard_watch(s, argv[optind]);
	struct bfi_info in;
	bfi_info(s, &in);
	struct bfi_layout_info ri;
	if (bfi_layout_info(s, BFI_LAYOUT_RAMBO, &ri) != 0)
		memset(&ri, 0, sizeof ri);
	struct bfi_rambo_rows rr;
	memset(&rr, 0, sizeof rr);
	rr.cells = ri.u.rambo.cells;
	rr.shards = ri.u.rambo.shards;
	rr.reps = ri.u.rambo.reps;
	rr.k = ri.hashes;
	rr.shared_probes = ri.u.rambo.shared_probes; /* folded rows keep the probes they were made with */
	uint64_t B = ri.u.rambo.cells, S = ri.u.rambo.shards;
	for (uint64_t t = 0; t < times && rc == 0; t++) {
		if (!(in.layouts & BFI_LAYOUT_RAMBO) || B % 2 || (S > 1 && S % 2)) {
			fprintf(stderr, "bfi fold: %s: needs a rambo layout with an even number of cells "
			                "and one or an even number of shards (B = %llu, S = %llu)\n",
			        argv[optind], (unsigned long long)B, (unsigned long long)S);
			rc = BFI_E_INVALID;
			break;
		}
		if (S > 1)
			S /= 2;
		B /= 2;
	}
	uint64_t *distinct = rc ? NULL : calloc(in.n_sets, sizeof *distinct);
	bfi_writer *w = rc ? NULL : rows_writer(s, memory);
	if (rc == 0 && (!distinct || !w))
		rc = -ENOMEM;
	for (uint32_t r = 0; r < ri.u.rambo.reps && rc == 0; r++)
		rc = bfi_rambo_rep(s, r, &rr.m[r], NULL);
	/* cell c of the result ORs cells c, c + B, c + 2B, ... of the input, as it is written */
	struct made mk = {.in = &s, .n_in = 1, .cells = B, .b = ri.u.rambo.cells, .fold = 1};
	rr.cells = B;
	rr.shards = (uint32_t)S;
	rr.distinct = distinct;
	uint64_t at = 0;
	if (rc == 0)
		rc = add_sets(w, s, distinct, &at);
	if (rc == 0)
		rc = bfi_writer_rambo_rows_made(w, &rr, make_rows, &mk);
	if (rc == 0)
		rc = write_out(out, w, quiet) ? -1 : 0;
	else if (rc != BFI_E_INVALID)
		fprintf(stderr, "bfi fold: %s\n", bfi_strerror(rc));
	bfi_writer_destroy(&w);
	free(distinct);
	guard_unwatch(s);
	bfi_close(&s);
	return rc ? EXIT_USAGE : EXIT_OK;
}

int cmd_stack(int argc, char **argv)
{
	struct stack_args opt = {NULL, 0, 0};
	int orc = opts_parse(&stack_cmd, argc, argv, &opt);
	if (orc)
		return orc - 1;
	const char *out = opt.out;
	uint64_t memory = opt.memory;
	int quiet = opt.quiet;
	int ns = argc - optind;
	if (out == NULL || ns < 1) {
		fprintf(stderr, "bfi stack: need -o OUT and at least one SHARD\n");
		return usage_try("stack");
	}
	if (output_ok("stack", out, argv + optind, ns))
		return EXIT_USAGE;
	bfi_snapshot **sh = calloc((size_t)ns, sizeof *sh);
	struct bfi_layout_info first = {0};
	uint64_t total = 0;
	int rc = sh ? 0 : -ENOMEM;
	for (int i = 0; i < ns && rc == 0; i++) {
		guard_during(argv[optind + i], EXIT_USAGE);
		rc = bfi_open(argv[optind + i], 0, &sh[i]);
		guard_during(NULL, 0);
		if (rc) {
			fprintf(stderr, "bfi stack: %s: %s\n", argv[optind + i], bfi_strerror(rc));
			break;
		}
		guard_watch(sh[i], argv[optind + i]);
		struct bfi_layout_info in;
		int same = bfi_layout_info(sh[i], BFI_LAYOUT_RAMBO, &in) == 0;
		if (i == 0 && same)
			first = in;
		same = same && in.u.rambo.shards == 1 && in.u.rambo.cells == first.u.rambo.cells &&
		       in.u.rambo.reps == first.u.rambo.reps &&
		       in.u.rambo.shared_probes == first.u.rambo.shared_probes &&
		       in.hashes == first.hashes;
		for (uint32_t r = 0; same && r < in.u.rambo.reps; r++) {
			uint64_t m0, m1;
			same = bfi_rambo_rep(sh[0], r, &m0, NULL) == 0 &&
			       bfi_rambo_rep(sh[i], r, &m1, NULL) == 0 && m0 == m1;
		}
		if (!same) {
			fprintf(stderr, "bfi stack: %s: not built with the same rambo parameters as %s "
			                "(cells, reps, hashes, one shard, and --bits so every filter width "
			                "matches)\n",
			        argv[optind + i], argv[optind]);
			rc = BFI_E_INVALID;
		}
		struct bfi_info si;
		bfi_info(sh[i], &si);
		total += si.n_sets;
	}
	uint64_t b = rc ? 0 : first.u.rambo.cells, B = b * (uint64_t)ns;
	if (rc == 0 && B > (1u << 24)) {
		fprintf(stderr, "bfi stack: %llu cells in all is over the limit of 2^24\n",
		        (unsigned long long)B);
		rc = BFI_E_LIMIT;
	}
	/* Every set must be in the shard the two-level hash sends it to. */
	for (int i = 0; i < ns && rc == 0; i++) {
		struct bfi_info in;
		bfi_info(sh[i], &in);
		for (uint64_t o = 0; o < in.n_sets && rc == 0; o++) {
			const char *name;
			size_t len;
			rc = bfi_set_name(sh[i], (uint32_t)o, &name, &len);
			if (rc == 0 && bfi_rambo_cell(name, len, 0, (uint64_t)ns, (uint32_t)ns) != (uint32_t)i) {
				char nb[600];
				fprintf(stderr, "bfi stack: %s: set '%s' belongs in shard %u of %d, not %d "
				                "(build shards with --route I/%d)\n",
				        argv[optind + i], shown(name, len, nb, sizeof nb),
				        bfi_rambo_cell(name, len, 0, (uint64_t)ns, (uint32_t)ns), ns, i, ns);
				rc = BFI_E_INVALID;
			}
		}
	}
	struct bfi_rambo_rows rr;
	memset(&rr, 0, sizeof rr);
	uint64_t *distinct = rc ? NULL : calloc(total ? total : 1, sizeof *distinct);
	bfi_writer *w = rc ? NULL : rows_writer(sh[0], memory);
	if (rc == 0 && (!distinct || !w))
		rc = -ENOMEM;
	for (uint32_t r = 0; rc == 0 && r < first.u.rambo.reps; r++)
		rc = bfi_rambo_rep(sh[0], r, &rr.m[r], NULL);
	/* shard i's cell c becomes cell i * b + c, as the rows are written */
	struct made mk = {.in = sh, .n_in = ns, .cells = B, .b = b};
	rr.cells = B;
	rr.shards = (uint32_t)ns;
	rr.reps = rc ? 0 : first.u.rambo.reps;
	rr.k = rc ? 0 : first.hashes;
	rr.shared_probes = rc ? 0 : first.u.rambo.shared_probes;
	rr.distinct = distinct;
	uint64_t at = 0;
	for (int i = 0; i < ns && rc == 0; i++)
		rc = add_sets(w, sh[i], distinct, &at);
	if (rc == BFI_E_DUP_SET)
		fprintf(stderr, "bfi stack: a set name appears in two shards\n");
	if (rc == 0)
		rc = bfi_writer_rambo_rows_made(w, &rr, make_rows, &mk);
	if (rc == 0)
		rc = write_out(out, w, quiet) ? -1 : 0;
	bfi_writer_destroy(&w);
	free(distinct);
	for (int i = 0; sh && i < ns; i++) {
		guard_unwatch(sh[i]);
		bfi_close(&sh[i]);
	}
	free(sh);
	return rc ? EXIT_USAGE : EXIT_OK;
}
