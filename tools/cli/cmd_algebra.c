/*
 * cmd_algebra.c - snapshot algebra on the RAMBO layout: bfi fold (OR the
 * two halves of B together) and bfi stack (shards side by side, by the
 * paper's two-level hash). Both read snapshots through bfi.h and write
 * through the writer's row interface, so the output is an ordinary,
 * checksummed, atomically published snapshot.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bfi.h"
#include "bfi_writer.h"
#include "tools.h"

static const char fold_help[] =
	"Usage: bfi fold [-q] [--times N] -o OUT SNAP\n"
	"\n"
	"Fold the RAMBO layout of SNAP: OR each repetition's cells c and\n"
	"c + B/2 together, halving B and the index, as the RAMBO paper does. The\n"
	"result is what a build with B/2 cells would give, with the original\n"
	"filter widths: no false negatives, and the false-positive rate of\n"
	"Lemma 4.1 at B/2. OUT holds the rambo layout only.\n"
	"\n"
	"Options:\n"
	"  -o, --output OUT   the snapshot to write\n"
	"      --times N      fold N times (B / 2^N), default 1\n"
	"  -q, --quiet        no summary\n"
	"  -h, --help         show this help\n"
	"\n"
	"Exit status: 0, or 2 for a usage error, an input that cannot be read or\n"
	"does not hold what this needs, or an OUT that cannot be written.\n";

static const char stack_help[] =
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
	"Options:\n"
	"  -o, --output OUT   the snapshot to write\n"
	"  -q, --quiet        no summary\n"
	"  -h, --help         show this help\n"
	"\n"
	"Exit status: 0, or 2 for a usage error, an input that cannot be read or\n"
	"does not hold what this needs, or an OUT that cannot be written.\n";

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

static bfi_writer *rows_writer(const bfi_snapshot *s)
{
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	o.layouts = BFI_BUILD_RAMBO;
	o.keep_order = 1;
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
	static const struct option opts[] = {{"output", required_argument, 0, 'o'},
	                                     {"times", required_argument, 0, 't'},
	                                     {"quiet", no_argument, 0, 'q'},
	                                     {"help", no_argument, 0, 'h'},
	                                     {0, 0, 0, 0}};
	const char *out = NULL;
	uint64_t times = 1;
	int quiet = 0, c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'q': quiet = 1; break;
		case 't':
			if (parse_size(optarg, &times) || times < 1 || times > 24) {
				fprintf(stderr, "bfi fold: --times must be 1..24\n");
				return EXIT_USAGE;
			}
			break;
		case 'h': fputs(fold_help, stdout); return EXIT_OK;
		default: return usage_try("fold");
		}
	}
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
	uint8_t *bufs[BFI_RAMBO_MAX_REPS] = {0};
	uint64_t *distinct = rc ? NULL : calloc(in.n_sets, sizeof *distinct);
	bfi_writer *w = rc ? NULL : rows_writer(s);
	if (rc == 0 && (!distinct || !w))
		rc = -ENOMEM;
	uint64_t nb = (B + 63) / 64 * 8; /* spec: RAMBO rows are whole 64-bit words */
	for (uint32_t r = 0; r < ri.u.rambo.reps && rc == 0; r++) {
		const uint8_t *rows;
		uint64_t m, rb;
		rc = bfi_rambo_rows(s, r, &rows, &m, &rb);
		if (rc == 0 && (bufs[r] = calloc(m, nb)) == NULL)
			rc = -ENOMEM;
		/* cell c of the result ORs cells c, c + B, c + 2B, ... of the input */
		for (uint64_t i = 0; rc == 0 && i < m; i++)
			for (uint64_t from = 0; from < ri.u.rambo.cells; from += B)
				or_bits(bufs[r] + i * nb, 0, rows + i * rb, rb, from, B);
		rr.m[r] = m;
		rr.rows[r] = bufs[r];
	}
	rr.cells = B;
	rr.shards = (uint32_t)S;
	rr.distinct = distinct;
	uint64_t at = 0;
	if (rc == 0)
		rc = add_sets(w, s, distinct, &at);
	if (rc == 0)
		rc = bfi_writer_rambo_rows(w, &rr);
	if (rc == 0)
		rc = write_out(out, w, quiet) ? -1 : 0;
	else if (rc != BFI_E_INVALID)
		fprintf(stderr, "bfi fold: %s\n", bfi_strerror(rc));
	bfi_writer_destroy(&w);
	for (uint32_t r = 0; r < BFI_RAMBO_MAX_REPS; r++)
		free(bufs[r]);
	free(distinct);
	guard_unwatch(s);
	bfi_close(&s);
	return rc ? EXIT_USAGE : EXIT_OK;
}

int cmd_stack(int argc, char **argv)
{
	static const struct option opts[] = {{"output", required_argument, 0, 'o'},
	                                     {"quiet", no_argument, 0, 'q'},
	                                     {"help", no_argument, 0, 'h'},
	                                     {0, 0, 0, 0}};
	const char *out = NULL;
	int quiet = 0, c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'q': quiet = 1; break;
		case 'h': fputs(stack_help, stdout); return EXIT_OK;
		default: return usage_try("stack");
		}
	}
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
	uint8_t *bufs[BFI_RAMBO_MAX_REPS] = {0};
	uint64_t *distinct = rc ? NULL : calloc(total ? total : 1, sizeof *distinct);
	bfi_writer *w = rc ? NULL : rows_writer(sh[0]);
	if (rc == 0 && (!distinct || !w))
		rc = -ENOMEM;
	uint64_t nb = (B + 63) / 64 * 8; /* spec: RAMBO rows are whole 64-bit words */
	for (uint32_t r = 0; rc == 0 && r < first.u.rambo.reps; r++) {
		uint64_t m = 0;
		for (int i = 0; i < ns && rc == 0; i++) {
			const uint8_t *rows;
			uint64_t rb;
			rc = bfi_rambo_rows(sh[i], r, &rows, &m, &rb);
			if (rc == 0 && i == 0 && (bufs[r] = calloc(m, nb)) == NULL)
				rc = -ENOMEM;
			/* shard i's cell c becomes cell i * b + c */
			for (uint64_t row = 0; rc == 0 && row < m; row++)
				or_bits(bufs[r] + row * nb, (uint64_t)i * b, rows + row * rb, rb, 0, b);
		}
		rr.m[r] = m;
		rr.rows[r] = bufs[r];
	}
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
		rc = bfi_writer_rambo_rows(w, &rr);
	if (rc == 0)
		rc = write_out(out, w, quiet) ? -1 : 0;
	bfi_writer_destroy(&w);
	for (uint32_t r = 0; r < BFI_RAMBO_MAX_REPS; r++)
		free(bufs[r]);
	free(distinct);
	for (int i = 0; sh && i < ns; i++) {
		guard_unwatch(sh[i]);
		bfi_close(&sh[i]);
	}
	free(sh);
	return rc ? EXIT_USAGE : EXIT_OK;
}
