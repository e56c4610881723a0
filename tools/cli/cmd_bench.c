/*
 * cmd_bench.c - bfi bench: time single-key queries, or reads' threshold
 * queries, on each layout of a snapshot, beside what this machine's memory
 * allows for the bytes they touch, measured in the same run.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>

#include "bfi.h"
#include "opts.h"
#include "tools.h"

/* What the options ask. */
struct bench_args {
	unsigned only;
	uint64_t repeat, plain_limit, batch, kmer;
	double theta;
	const char *results, *label;
	int expr;
};

static int take_threshold(void *ctx, const char *arg)
{
	struct bench_args *a = ctx;
	char *end;
	a->theta = strtod(arg, &end);
	if (!*end && a->theta > 0 && a->theta <= 1)
		return 0;
	fprintf(stderr, "bfi bench: --threshold must be in (0, 1]\n");
	return EXIT_USAGE;
}

static int take_layout(void *ctx, const char *arg)
{
	struct bench_args *a = ctx;
	return (a->only = layout_arg("bench", arg)) == 0 ? EXIT_USAGE : 0;
}

static const char help_head[] =
	"Usage: bfi bench [OPTIONS] SNAP QUERIES\n"
	"\n"
	"SNAP is a snapshot or a collection of them (bfi append --help).\n"
	"\n"
	"Run each line of the file QUERIES as a single-key query against SNAP\n"
	"(or, with --threshold, each read of QUERIES as a threshold query of its\n"
	"k-mers), on every layout the snapshot holds, and report in one run:\n"
	"  - throughput and latency percentiles of each layout (one thread);\n"
	"  - the bytes and 64-byte lines of index each query touched (mean);\n"
	"  - this machine's sequential-read bandwidth and the cost of a random\n"
	"    line, measured now, and the time those bytes would take read in\n"
	"    sequence (the bandwidth bound) or those lines read at random (the\n"
	"    latency bound);\n"
	"  - the ratio of flat to plain, when the snapshot holds both\n"
	"    (bfi build --layout flat,plain).\n"
	"Each layout first answers every query once untimed (warm-up).\n"
	"\n"
	"Options:\n";

static const char help_tail[] =
	"\n"
	"Exit status: 0, or 2 for a usage error, a QUERIES file that cannot be\n"
	"read, a layout the snapshot lacks, or a snapshot that cannot be opened.\n";

static const struct opt_row rows[] = {
	{"layout", 300, "L",
	 "flat, plain, rambo or tree: time only this layout",
	 OPT_FN, 0, 0, 0, NULL, take_layout},
	{"expr", 301, NULL,
	 "each line is an expression (as bfi query --expr),\n"
	 "for example a multi-word AND query",
	 OPT_FLAG, offsetof(struct bench_args, expr), 0, 0, NULL, NULL},
	{"batch", 302, "B",
	 "also time the flat queries in batches of B\n"
	 "(bfi_query_batch) and, unless --expr, the keys B\n"
	 "at a time from their hashes (bfi_query_keys);\n"
	 "compare the throughput with one query at a time,\n"
	 "each B queries built just before they are timed\n"
	 "(alike for both, as a caller parses them),\n"
	 "and show what memory allows for their bytes:\n"
	 "read in sequence, or as random cache lines at\n"
	 "the cost measured now",
	 OPT_U64, offsetof(struct bench_args, batch), 1, 1000000, "--batch must be 1..1000000", NULL},
	{"threshold", 't', "T",
	 "QUERIES holds reads (FASTA, or a sequence a line):\n"
	 "each is the threshold query of its k-mers at T\n"
	 "(0 < T <= 1), as bfi query --fasta -t T asks it",
	 OPT_FN, 0, 0, 0, NULL, take_threshold},
	{"kmer", 303, "K",
	 "the k-mer length of --threshold reads (the\n"
	 "catalog is not opened: K must be given)",
	 OPT_U64, offsetof(struct bench_args, kmer), 1, BFI_KMER_MAX, "--kmer must be 1..255", NULL},
	{"repeat", 304, "R",
	 "timed passes over the queries (default 3)",
	 OPT_U64, offsetof(struct bench_args, repeat), 1, 1000, "--repeat must be 1..1000", NULL},
	{"plain-limit", 305, "N",
	 "queries timed on plain, which is slow (default 2000)",
	 OPT_U64, offsetof(struct bench_args, plain_limit), 1, UINT64_MAX, "bad --plain-limit", NULL},
	{"results", 306, "FILE",
	 "append the figures as Markdown table rows to FILE",
	 OPT_STR, offsetof(struct bench_args, results), 0, 0, NULL, NULL},
	{"label", 307, "TEXT",
	 "what to call this run in those rows",
	 OPT_STR, offsetof(struct bench_args, label), 0, 0, NULL, NULL},
	{"help", 'h', NULL,
	 "show this help",
	 OPT_HELP, 0, 0, 0, NULL, NULL},
	{NULL, 0, NULL, NULL, OPT_FN, 0, 0, 0, NULL, NULL},
};

static const struct opt_cmd bench_cmd = {
    .me = "bfi bench",
    .head = help_head,
    .tail = help_tail,
    .rows = rows,
    .column = 23,
};

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

#if defined(__x86_64__) && BFI_HAVE_AVX2
#include <immintrin.h>
/* Sum 32-byte lanes with four independent accumulators: load-bound, not add-bound. */
__attribute__((target("avx2"))) static uint64_t sum_avx2(const uint64_t *p, size_t words)
{
	__m256i a = _mm256_setzero_si256(), b = a, c = a, d = a;
	for (size_t i = 0; i < words; i += 16) {
		a = _mm256_add_epi64(a, _mm256_load_si256((const __m256i *)(p + i)));
		b = _mm256_add_epi64(b, _mm256_load_si256((const __m256i *)(p + i + 4)));
		c = _mm256_add_epi64(c, _mm256_load_si256((const __m256i *)(p + i + 8)));
		d = _mm256_add_epi64(d, _mm256_load_si256((const __m256i *)(p + i + 12)));
	}
	uint64_t out[4];
	_mm256_storeu_si256((__m256i *)out,
	                    _mm256_add_epi64(_mm256_add_epi64(a, b), _mm256_add_epi64(c, d)));
	return out[0] + out[1] + out[2] + out[3];
}
#endif

static uint64_t sum_words(const uint64_t *p, size_t words)
{
#if defined(__x86_64__) && BFI_HAVE_AVX2
	if (__builtin_cpu_supports("avx2"))
		return sum_avx2(p, words);
#endif
	uint64_t acc[8] = {0};
	for (size_t i = 0; i < words; i += 8)
		for (int j = 0; j < 8; j++)
			acc[j] += p[i + j];
	return acc[0] + acc[1] + acc[2] + acc[3] + acc[4] + acc[5] + acc[6] + acc[7];
}

static uint64_t xorshift(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/*
 * Nanoseconds per 64-byte line read at random from buf (lines long), with
 * each line asked for RANDOM_AHEAD lines before it is read, as a batch
 * asks for its rows: the rate at which this core can bring in lines that
 * are neither cached nor in sequence. Best of 3 passes of 4 M lines.
 */
#define RANDOM_AHEAD 32
static double random_line_ns(const uint8_t *buf, size_t lines)
{
	double best = 0;
	volatile uint64_t sink = 0;
	for (int pass = 0; pass < 3; pass++) {
		uint64_t lead = 88172645463325252ull + (uint64_t)pass, at = lead, sum = 0;
		for (int i = 0; i < RANDOM_AHEAD; i++)
			__builtin_prefetch(buf + xorshift(&lead) % lines * 64);
		size_t n = (size_t)1 << 22;
		double t = now_ns();
		for (size_t i = 0; i < n; i++) {
			__builtin_prefetch(buf + xorshift(&lead) % lines * 64);
			sum += buf[xorshift(&at) % lines * 64];
		}
		t = (now_ns() - t) / (double)n;
		sink += sum;
		best = pass == 0 || t < best ? t : best;
	}
	(void)sink;
	return best;
}

/*
 * This machine's memory, measured on one 1 GiB buffer: sequential read
 * bandwidth in bytes per second (best of 5 sums), and the cost of a random
 * line (random_line_ns). 0 when the buffer cannot be had. The buffer asks
 * for 2 MiB pages, as the reader does for a snapshot (BFI_OPEN_SMALL_PAGES
 * aside): in 4 KiB pages every random line would also miss the TLB, which
 * the reader's queries do not, and the bound would sit above their cost.
 */
static double measure_memory(double *line_ns)
{
	size_t len = (size_t)1 << 30, words = len / 8;
	*line_ns = 0;
	void *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		return 0;
	(void)madvise(map, len, MADV_HUGEPAGE); /* a hint: without it the figure is still one */
	uint64_t *buf = map;
	for (size_t i = 0; i < words; i++)
		buf[i] = i;
	double best = 0;
	volatile uint64_t sink = 0;
	for (int pass = 0; pass < 5; pass++) {
		double t = now_ns();
		sink += sum_words(buf, words);
		t = now_ns() - t;
		double bw = (double)len / (t * 1e-9);
		best = bw > best ? bw : best;
	}
	(void)sink;
	*line_ns = random_line_ns((const uint8_t *)buf, len / 64);
	munmap(map, len);
	return best;
}

struct keys {
	char **k;
	size_t *len;
	size_t n;
	bfi_expr **e; /* one per line: a key, or a parsed expression with --expr; or a read's terms */
	double theta; /* > 0: each is a read's term list, asked at this threshold */
};

/* Add the n bytes at p as one more of ks's queries. */
static int add_key(struct keys *ks, size_t *kcap, const char *p, size_t n)
{
	if (ks->n == *kcap) {
		size_t cap = *kcap ? 2 * *kcap : 1024;
		char **k = realloc(ks->k, cap * sizeof *k);
		if (k)
			ks->k = k;
		size_t *len = realloc(ks->len, cap * sizeof *len);
		if (len)
			ks->len = len;
		if (!k || !len)
			return -ENOMEM;
		*kcap = cap;
	}
	if ((ks->k[ks->n] = malloc(n + 1)) == NULL)
		return -ENOMEM;
	memcpy(ks->k[ks->n], p, n);
	ks->k[ks->n][n] = 0;
	ks->len[ks->n++] = n;
	return 0;
}

/*
 * The queries of the file at path: a line each, or with reads, a read each:
 * a FASTA record's lines joined, or a line of sequence.
 */
static int load_keys(const char *path, int reads, struct keys *ks)
{
	memset(ks, 0, sizeof *ks);
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return -errno;
	char *line = NULL, *seq = NULL;
	size_t cap = 0, kcap = 0, slen = 0, scap = 0;
	int in_record = 0, rc = 0;
	ssize_t got;
	while (rc == 0 && (got = getline(&line, &cap, f)) >= 0) {
		size_t n = (size_t)got;
		if (n && line[n - 1] == '\n')
			n--;
		if (n && line[n - 1] == '\r')
			n--;
		if (!reads) {
			rc = add_key(ks, &kcap, line, n);
			continue;
		}
		if (n && line[0] == '>') { /* a record's header: the read before it is whole */
			if (in_record && slen)
				rc = add_key(ks, &kcap, seq, slen);
			in_record = 1;
			slen = 0;
			continue;
		}
		if (!in_record) { /* a sequence a line */
			if (n)
				rc = add_key(ks, &kcap, line, n);
			continue;
		}
		if (slen + n > scap) {
			size_t c = (slen + n) * 2;
			char *g = realloc(seq, c);
			if (g == NULL) {
				rc = -ENOMEM;
				break;
			}
			seq = g;
			scap = c;
		}
		memcpy(seq + slen, line, n);
		slen += n;
	}
	if (rc == 0 && in_record && slen)
		rc = add_key(ks, &kcap, seq, slen);
	if (rc == 0 && ferror(f))
		rc = -EIO;
	free(seq);
	free(line);
	fclose(f);
	return rc;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

struct figures {
	const char *layout;
	size_t queries;
	double p50, p90, p99, qps, touched, matches, tests;
};

static int ask(const bfi_snapshot *s, unsigned layout, const struct keys *ks, size_t i,
               bfi_result *res)
{
	return ks->theta > 0 ? bfi_query_threshold(s, layout, ks->e[i], ks->theta, res)
	                     : bfi_query_expr(s, layout, ks->e[i], res);
}

static int run_layout(const bfi_snapshot *s, unsigned layout, const struct keys *ks, size_t limit,
                      int repeat, struct figures *fig)
{
	bfi_result *res;
	int rc = bfi_result_create(&res);
	if (rc)
		return rc;
	size_t n = ks->n < limit ? ks->n : limit;
	/* Warm-up, counting the bytes each query touches. */
	bfi_result_count_bytes(res, 1);
	double touched = 0, matches = 0, tests = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		rc = ask(s, layout, ks, i, res);
		touched += (double)bfi_result_touched(res);
		matches += (double)bfi_result_count(res);
		tests += (double)bfi_result_filter_tests(res);
	}
	bfi_result_count_bytes(res, 0);
	double *lat = malloc(n * (size_t)repeat * sizeof *lat);
	if (lat == NULL)
		rc = -ENOMEM;
	double total = 0;
	size_t m = 0;
	for (int r = 0; r < repeat && rc == 0; r++) {
		for (size_t i = 0; i < n && rc == 0; i++) {
			double t = now_ns();
			rc = ask(s, layout, ks, i, res);
			t = now_ns() - t;
			lat[m++] = t;
			total += t;
		}
	}
	if (rc == 0 && m) {
		qsort(lat, m, sizeof *lat, cmp_double);
		fig->queries = n;
		fig->p50 = lat[m / 2] / 1e3;
		fig->p90 = lat[m * 9 / 10] / 1e3;
		fig->p99 = lat[m * 99 / 100] / 1e3;
		fig->qps = (double)m / (total * 1e-9);
		fig->touched = touched / (double)n;
		fig->matches = matches / (double)n;
		fig->tests = tests / (double)n;
	}
	free(lat);
	bfi_result_destroy(&res);
	return rc;
}

/*
 * Expressions at[0 .. m) of the query file, built again into out (whose
 * old ones are freed): a caller parses a query or a batch just before it
 * asks, so the timed calls below meet them freshly built too, not as
 * objects built at load time and long out of cache (over 12 MB of them
 * for the genome's 100,000 keys).
 */
static int fresh(const struct keys *ks, int expr, size_t at, size_t m, bfi_expr **out)
{
	int rc = 0;
	for (size_t i = 0; i < m && rc == 0; i++) {
		bfi_expr_free(&out[i]);
		rc = expr ? bfi_expr_parse(ks->k[at + i], ks->len[at + i], &out[i], NULL)
		          : bfi_expr_key(ks->k[at + i], ks->len[at + i], &out[i]);
	}
	return rc;
}

/*
 * Throughput of batches of b against one query at a time, on the same keys:
 * rounds alternate a single-query pass, a pass of batches of expressions
 * and, when hs holds the keys' hashes, a pass of bfi_query_keys calls, so
 * that drift in the machine's speed hits all alike; medians of the rounds
 * are compared. In the first two passes each stretch of b queries is built
 * just before it is timed (fresh), alike for both.
 */
static int run_batch(const bfi_snapshot *s, const struct keys *ks, int expr, const bfi_keyhash *hs,
                     size_t b, int rounds, double *single_qps, double *batch_qps,
                     double *keys_qps)
{
	bfi_expr **es = calloc(b, sizeof *es);
	bfi_result **rs = calloc(b, sizeof *rs), *all = NULL;
	size_t *ends = calloc(b, sizeof *ends);
	double *ts = calloc((size_t)rounds, sizeof *ts), *tb = calloc((size_t)rounds, sizeof *tb);
	double *tk = calloc((size_t)rounds, sizeof *tk);
	int rc = es && rs && ends && ts && tb && tk ? 0 : -ENOMEM;
	for (size_t i = 0; i < b && rc == 0; i++)
		rc = bfi_result_create(&rs[i]);
	if (rc == 0)
		rc = bfi_result_create(&all);
	for (int r = -1; r < rounds && rc == 0; r++) { /* round -1 warms up */
		double single = 0, batch = 0;
		for (size_t at = 0; at < ks->n && rc == 0; at += b) {
			size_t m = ks->n - at < b ? ks->n - at : b;
			rc = fresh(ks, expr, at, m, es);
			double t = now_ns();
			for (size_t i = 0; i < m && rc == 0; i++)
				rc = bfi_query_expr(s, BFI_LAYOUT_FLAT, es[i], rs[0]);
			single += now_ns() - t;
		}
		for (size_t at = 0; at < ks->n && rc == 0; at += b) {
			size_t m = ks->n - at < b ? ks->n - at : b;
			rc = fresh(ks, expr, at, m, es);
			double t = now_ns();
			if (rc == 0)
				rc = bfi_query_batch(s, BFI_LAYOUT_FLAT, (const bfi_expr *const *)es, m, rs);
			batch += now_ns() - t;
		}
		double t2 = now_ns();
		for (size_t at = 0; hs && at < ks->n && rc == 0; at += b) {
			size_t m = ks->n - at < b ? ks->n - at : b;
			rc = bfi_query_keys(s, BFI_LAYOUT_FLAT, hs + at, m, all, ends);
		}
		double t3 = now_ns();
		if (r >= 0) {
			ts[r] = (double)ks->n / (single * 1e-9);
			tb[r] = (double)ks->n / (batch * 1e-9);
			tk[r] = (double)ks->n / ((t3 - t2) * 1e-9);
		}
	}
	if (rc == 0) {
		qsort(ts, (size_t)rounds, sizeof *ts, cmp_double);
		qsort(tb, (size_t)rounds, sizeof *tb, cmp_double);
		qsort(tk, (size_t)rounds, sizeof *tk, cmp_double);
		*single_qps = ts[rounds / 2];
		*batch_qps = tb[rounds / 2];
		*keys_qps = hs ? tk[rounds / 2] : 0;
	}
	for (size_t i = 0; rs && i < b; i++)
		bfi_result_destroy(&rs[i]);
	for (size_t i = 0; es && i < b; i++)
		bfi_expr_free(&es[i]);
	bfi_result_destroy(&all);
	free(es);
	free(rs);
	free(ends);
	free(ts);
	free(tb);
	free(tk);
	return rc;
}

/*
 * Does f (opened for appending) end with a Markdown table row? If not, rows
 * appended to it need a header of their own, or they would run on from
 * the prose before them.
 */
static int ends_in_row(FILE *f)
{
	char tail[4096];
	if (fseek(f, 0, SEEK_END) != 0)
		return 0;
	long end = ftell(f);
	if (end <= 0)
		return 0;
	long from = end > (long)sizeof tail - 1 ? end - (long)sizeof tail + 1 : 0;
	if (fseek(f, from, SEEK_SET) != 0)
		return 0;
	size_t n = fread(tail, 1, sizeof tail - 1, f);
	tail[n] = 0;
	while (n && tail[n - 1] == '\n')
		tail[--n] = 0;
	char *last = strrchr(tail, '\n');
	last = last ? last + 1 : (from == 0 ? tail : NULL);
	return last && last[0] == '|';
}

static void print_fig(const struct figures *f, double bw, double line_ns)
{
	double bound = f->touched / bw * 1e6, lines = f->touched / 64, lat = lines * line_ns / 1e3;
	printf("%-6s %8zu queries  p50 %9.2f us  p90 %9.2f us  p99 %9.2f us  %11.0f q/s\n"
	       "       touched %10.0f bytes/query (%.1f sets matched)  bandwidth bound %8.2f us"
	       "  p50/bound %.2f\n"
	       "       %.1f lines/query: latency bound (as random lines) %.2f us  p50/bound %.2f\n",
	       f->layout, f->queries, f->p50, f->p90, f->p99, f->qps, f->touched, f->matches, bound,
	       f->p50 / bound, lines, lat, lat > 0 ? f->p50 / lat : 0);
	if (f->tests > 0)
		printf("       bf-cost %.2f node filters tested per query (the Bloofi paper's measure), "
		       "%.1f cache lines\n",
		       f->tests, f->touched / 64);
}

/*
 * A row a layout's figures appended to the Markdown table in results
 * (its head first, if the file does not end in a row): 0, or 1 after
 * saying why not.
 */
static int append_results(const char *results, const char *name, uint64_t n_sets,
                          const struct figures *fig, int nf, double bw)
{
	FILE *f = outfile_append("bench", results);
	if (f == NULL)
		return 1;
	time_t t = time(NULL);
	char day[16];
	strftime(day, sizeof day, "%Y-%m-%d", gmtime(&t));
	if (!ends_in_row(f))
		fputs("\n| date | snapshot | layout | N | queries | p50 µs | p99 µs | q/s | "
		      "bytes touched/query | GB/s measured | p50 / bandwidth bound |\n"
		      "|---|---|---|---|---|---|---|---|---|---|---|\n",
		      f);
	for (int i = 0; i < nf; i++)
		fprintf(f, "| %s | %s | %s | %llu | %zu | %.2f | %.2f | %.0f | %.0f | %.2f | %.2f |\n",
		        day, name, fig[i].layout, (unsigned long long)n_sets, fig[i].queries, fig[i].p50,
		        fig[i].p99, fig[i].qps, fig[i].touched, bw / 1e9,
		        fig[i].p50 / (fig[i].touched / bw * 1e6));
	int e = ferror(f) ? (errno ? errno : EIO) : 0;
	if (fclose(f) != 0 && e == 0)
		e = errno;
	if (e)
		fprintf(stderr, "bfi bench: %s: %s\n", results, strerror(e));
	return e != 0;
}

int cmd_bench(int argc, char **argv)
{
	struct bench_args opt = {.repeat = 3, .plain_limit = 2000};
	int orc = opts_parse(&bench_cmd, argc, argv, &opt);
	if (orc)
		return orc - 1;
	unsigned only = opt.only;
	uint64_t repeat = opt.repeat, plain_limit = opt.plain_limit, batch = opt.batch, kmer = opt.kmer;
	double theta = opt.theta;
	const char *results = opt.results, *label = opt.label;
	int expr = opt.expr;
	if (optind != argc - 2) {
		fprintf(stderr, "bfi bench: need SNAP and QUERIES\n");
		return usage_try("bench");
	}
	if ((theta > 0) != (kmer > 0) || (theta > 0 && (expr || batch))) {
		fprintf(stderr, "bfi bench: --threshold and --kmer go together, without --expr or "
		                "--batch\n");
		return usage_try("bench");
	}
	const char *path = argv[optind], *qpath = argv[optind + 1];
	bfi_snapshot *s = NULL;
	guard_during(path, EXIT_USAGE);
	int rc = bfi_open(path, BFI_OPEN_NO_CATALOG, &s);
	guard_during(NULL, 0);
	if (rc) {
		fprintf(stderr, "bfi bench: %s: %s\n", path, bfi_strerror(rc));
		return EXIT_USAGE;
	}
	guard_watch(s, path);
	struct bfi_info in;
	bfi_info(s, &in);
	struct keys ks = {NULL, NULL, 0, NULL, 0};
	if (only && !(in.layouts & only)) {
		char held[200];
		fprintf(stderr, "bfi bench: %s holds no %s layout; it holds: %s\n", path,
		        bfi_layout_name(only), layout_names(in.layouts, " ", held, sizeof held));
		rc = BFI_E_INVALID;
		goto out;
	}
	rc = load_keys(qpath, theta > 0, &ks);
	ks.theta = theta;
	if (rc || ks.n == 0) {
		fprintf(stderr, "bfi bench: %s: %s\n", qpath, rc ? bfi_strerror(rc) : "no queries");
		rc = rc ? rc : BFI_E_INVALID;
		goto out;
	}
	ks.e = calloc(ks.n, sizeof *ks.e);
	for (size_t i = 0; i < ks.n && rc == 0; i++) {
		size_t at = 0;
		rc = theta > 0 ? bfi_expr_kmers(s, ks.k[i], ks.len[i], (unsigned)kmer, &ks.e[i])
		     : expr    ? bfi_expr_parse(ks.k[i], ks.len[i], &ks.e[i], &at)
		               : bfi_expr_key(ks.k[i], ks.len[i], &ks.e[i]);
		if (rc)
			fprintf(stderr, "bfi bench: %s line %zu: %s (byte %zu)\n", qpath, i + 1,
			        bfi_strerror(rc), at);
	}
	if (rc) /* said above: a query that does not parse is a usage error */
		goto out;
	struct bfi_layout_info fl;
	if (bfi_layout_info(s, BFI_LAYOUT_FLAT, &fl) != 0)
		memset(&fl, 0, sizeof fl);
	printf("snapshot %s: %llu sets, %u flat blocks, k = %u, index %llu bytes\n", path,
	       (unsigned long long)in.n_sets, fl.u.flat.blocks, in.hashes,
	       (unsigned long long)in.file_size);
	if (theta > 0)
		printf("queries  %s: %zu reads, their %llu-mers at threshold %g, %llu timed passes\n", qpath,
		       ks.n, (unsigned long long)kmer, theta, (unsigned long long)repeat);
	else
		printf("queries  %s: %zu keys, %llu timed passes\n", qpath, ks.n,
		       (unsigned long long)repeat);
	double line_ns;
	double bw = measure_memory(&line_ns);
	printf("memory   sequential read %.2f GB/s (one thread, best of 5 over 1 GiB); random 64-byte "
	       "lines %.1f ns each (asked for %d ahead)\n",
	       bw / 1e9, line_ns, RANDOM_AHEAD);

	struct figures fig[32];
	int nf = 0;
	for (unsigned i = 0, lay; (lay = bfi_layout_at(i)) != 0 && i < 32 && rc == 0; i++) {
		if (!(in.layouts & lay) || (only && only != lay))
			continue;
		int plain = lay == BFI_LAYOUT_PLAIN; /* the naive baseline: a sample of the keys */
		fig[nf].layout = bfi_layout_name(lay);
		rc = run_layout(s, lay, &ks, plain ? plain_limit : ks.n, (int)repeat, &fig[nf]);
		if (rc == 0)
			print_fig(&fig[nf++], bw, line_ns);
	}
	for (int i = 0; rc == 0 && i < nf; i++)
		for (int j = i + 1; j < nf; j++) {
			int a = fig[i].p50 <= fig[j].p50 ? i : j, b = a == i ? j : i;
			printf("%s is %.2fx faster than %s (p50), %.2fx (throughput)\n", fig[a].layout,
			       fig[b].p50 / fig[a].p50, fig[b].layout, fig[a].qps / fig[b].qps);
		}
	double batch_qps = 0, single_qps = 0, keys_qps = 0;
	if (rc == 0 && batch && (in.layouts & BFI_LAYOUT_FLAT) && (!only || only == BFI_LAYOUT_FLAT)) {
		int rounds = (int)(repeat < 5 ? 5 : repeat);
		/* bare keys are also timed through bfi_query_keys, from their hashes */
		bfi_keyhash *hs = expr ? NULL : calloc(ks.n, sizeof *hs);
		if (!expr && hs == NULL)
			rc = -ENOMEM;
		for (size_t i = 0; hs && i < ks.n; i++)
			hs[i] = bfi_hash_key(ks.k[i], ks.len[i]);
		if (rc == 0)
			rc = run_batch(s, &ks, expr, hs, (size_t)batch, rounds, &single_qps, &batch_qps,
			               &keys_qps);
		free(hs);
		if (rc == 0) {
			printf("batch  %8zu queries, batches of %llu: %11.0f q/s against %.0f q/s one at a "
			       "time: %.2fx (medians of %d alternating rounds)\n",
			       ks.n, (unsigned long long)batch, batch_qps, single_qps,
			       batch_qps / single_qps, rounds);
			if (keys_qps > 0)
				printf("keys   %8zu keys, %llu a call (bfi_query_keys): %11.0f q/s, %.2fx one "
				       "at a time\n",
				       ks.n, (unsigned long long)batch, keys_qps, keys_qps / single_qps);
			/* what memory alone allows for the bytes a query touched (fig[0] is flat) */
			double touched = fig[0].touched;
			if (touched > 0 && bw > 0 && line_ns > 0)
				printf("       memory bounds for %.0f bytes a query: %.0f q/s read in sequence, "
				       "%.0f q/s as %.1f random lines\n",
				       touched, bw / touched, 1e9 / (touched / 64 * line_ns), touched / 64);
		}
	}
	int said = rc == 0 && results &&
	           append_results(results, label ? label : path, in.n_sets, fig, nf, bw);
	if (rc)
		fprintf(stderr, "bfi bench: %s\n", bfi_strerror(rc));
	if (said && rc == 0)
		rc = -EIO;
out:
	for (size_t i = 0; i < ks.n; i++) {
		free(ks.k[i]);
		if (ks.e)
			bfi_expr_free(&ks.e[i]);
	}
	free(ks.e);
	free(ks.k);
	free(ks.len);
	guard_unwatch(s);
	bfi_close(&s);
	return rc ? EXIT_USAGE : EXIT_OK;
}
