/*
 * test_seq.c - FASTA/FASTQ input (bfi_writer_add_fasta) against an oracle
 * written here with plain strings: every window of k bases inside one
 * record, with no other letter in it, spelled in upper case, and the lesser
 * of it and its reverse complement. The build from sequences must count
 * exactly the oracle's distinct k-mers per set, answer every one of them,
 * and write the same filters, byte for byte, as a build from key files
 * holding the oracle's k-mers (one key encoding, whatever the input).
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "bfi_hash.h"
#include "test.h"

enum { SETS = 6, K = 11 };

struct kset {
	char **k;
	size_t n, cap;
};
static struct kset oracle[SETS];
static const char *set_names[SETS] = {"alpha", "beta", "gamma", "delta", "eps", "zeta"};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void oracle_record(struct kset *s, const char *seq, unsigned k)
{
	size_t n = strlen(seq);
	for (size_t i = 0; i + k <= n; i++) {
		char fw[33], rc[33];
		int ok = 1;
		for (unsigned j = 0; j < k && ok; j++) {
			char c = seq[i + j];
			c = (char)(c >= 'a' && c <= 'z' ? c - 32 : c);
			ok = c == 'A' || c == 'C' || c == 'G' || c == 'T';
			fw[j] = c;
			rc[k - 1 - j] = c == 'A' ? 'T' : c == 'C' ? 'G' : c == 'G' ? 'C' : 'A';
		}
		if (!ok)
			continue;
		fw[k] = rc[k] = '\0';
		if (s->n == s->cap) {
			s->cap = s->cap ? s->cap * 2 : 256;
			s->k = realloc(s->k, s->cap * sizeof *s->k);
		}
		s->k[s->n++] = strdup(strcmp(fw, rc) <= 0 ? fw : rc);
	}
}

static void oracle_finish(struct kset *s)
{
	qsort(s->k, s->n, sizeof *s->k, cmp_str);
	size_t m = 0;
	for (size_t i = 0; i < s->n; i++) {
		if (m && !strcmp(s->k[m - 1], s->k[i])) {
			free(s->k[i]);
			continue;
		}
		s->k[m++] = s->k[i];
	}
	s->n = m;
}

/* A random record: mostly ACGT, some lower case, some N and IUPAC codes. */
static char *random_seq(uint64_t *st, size_t len)
{
	char *s = malloc(len + 1);
	for (size_t i = 0; i < len; i++) {
		uint64_t r = test_rand(st) % 1000;
		s[i] = r < 8 ? 'N' : r < 10 ? 'R' : "ACGTacgt"[r % (r < 100 ? 8 : 4)];
	}
	s[len] = '\0';
	return s;
}

/* Append text to a file, plain or gzip. */
struct out {
	FILE *f;
	gzFile gz;
};
static void put(struct out *o, const char *s)
{
	if (o->gz)
		gzputs(o->gz, s);
	else
		fputs(s, o->f);
}

static char dir[4200], keys[4200], snap_fa[4200], snap_keys[4200];

/* Set i as a file in dir: FASTA (wrapped, CRLF for one), gzip, or FASTQ. */
static void write_set(int i, uint64_t *st)
{
	static const char *ext[SETS] = {".fa", ".fasta.gz", ".fq", ".fna", ".fq.gz", ".fa"};
	char path[4400];
	snprintf(path, sizeof path, "%s/%s%s", dir, set_names[i], ext[i]);
	struct out o = {NULL, NULL};
	if (strstr(ext[i], ".gz"))
		o.gz = gzopen(path, "wb");
	else
		o.f = fopen(path, "w");
	int fastq = strstr(ext[i], ".fq") != NULL, crlf = i == 3;
	int records = 1 + (int)(test_rand(st) % 4);
	for (int r = 0; r < records; r++) {
		size_t len = 50 + test_rand(st) % 3000;
		char *seq = random_seq(st, len);
		oracle_record(&oracle[i], seq, K);
		char line[256];
		snprintf(line, sizeof line, "%c%s_r%d some description%s\n", fastq ? '@' : '>',
		         set_names[i], r, crlf ? "\r" : "");
		put(&o, line);
		size_t wrap = fastq ? len : 60 + (size_t)i * 7;
		for (size_t p = 0; p < len; p += wrap) {
			size_t n = len - p < wrap ? len - p : wrap;
			snprintf(line, sizeof line, "%.*s%s\n", (int)n, seq + p, crlf ? "\r" : "");
			if (!fastq || n < sizeof line - 2)
				put(&o, line);
			else { /* long FASTQ lines: write in pieces */
				for (size_t q = 0; q < n; q += 200) {
					snprintf(line, sizeof line, "%.*s", (int)(n - q < 200 ? n - q : 200), seq + p + q);
					put(&o, line);
				}
				put(&o, "\n");
			}
		}
		if (fastq) {
			put(&o, "+\n");
			for (size_t q = 0; q < len; q++)
				put(&o, (char[]){(char)('!' + (q + (size_t)r * 31) % 40), 0}); /* lines may start with '@' */
			put(&o, "\n");
		}
		free(seq);
	}
	if (o.gz)
		gzclose(o.gz);
	else
		fclose(o.f);
	oracle_finish(&oracle[i]);
}

static int build_fasta(const char *out, const char *in, int per_record)
{
	struct bfi_build_options opt;
	bfi_build_options_init(&opt);
	bfi_writer *w;
	int rc = bfi_writer_create(&opt, &w);
	if (rc == 0)
		rc = bfi_writer_add_fasta(w, in, K, per_record);
	if (rc == 0)
		rc = bfi_writer_finish(w, out, NULL);
	bfi_writer_destroy(&w);
	return rc;
}

static void test_against_oracle(void)
{
	snprintf(dir, sizeof dir, "%s/fasta", test_tmpdir());
	snprintf(keys, sizeof keys, "%s/keys", test_tmpdir());
	snprintf(snap_fa, sizeof snap_fa, "%s/from-fasta", test_tmpdir());
	snprintf(snap_keys, sizeof snap_keys, "%s/from-keys", test_tmpdir());
	mkdir(dir, 0755);
	mkdir(keys, 0755);
	uint64_t st = 11;
	for (int i = 0; i < SETS; i++)
		write_set(i, &st);
	EXPECT_RC(build_fasta(snap_fa, dir, 0), 0);
	/* the same k-mers as key files, one per set, named as the sequence files give */
	for (int i = 0; i < SETS; i++) {
		char path[4400];
		snprintf(path, sizeof path, "%s/%s", keys, set_names[i]);
		FILE *f = fopen(path, "w");
		for (size_t j = 0; f && j < oracle[i].n; j++)
			fprintf(f, "%s\n", oracle[i].k[j]);
		if (f)
			fclose(f);
	}
	struct bfi_build_options opt;
	bfi_build_options_init(&opt);
	bfi_writer *w;
	EXPECT_RC(bfi_writer_create(&opt, &w), 0);
	EXPECT_RC(bfi_writer_add_dir(w, keys), 0);
	EXPECT_RC(bfi_writer_finish(w, snap_keys, NULL), 0);
	bfi_writer_destroy(&w);
	char a[4400], b[4400];
	snprintf(a, sizeof a, "%s/index.bfi", snap_fa);
	snprintf(b, sizeof b, "%s/index.bfi", snap_keys);
	size_t la, lb;
	uint8_t *ba = test_read_file(a, &la), *bb = test_read_file(b, &lb);
	/* the catalog records the input kind and k, so compare the index past its
	 * header, which binds the catalog */
	EXPECT(ba && bb && la == lb && la > 128 && memcmp(ba + 128, bb + 128, la - 128) == 0);
	free(ba);
	free(bb);

	bfi_snapshot *s;
	bfi_result *r;
	EXPECT_RC(bfi_open(snap_fa, 0, &s), 0);
	EXPECT_RC(bfi_result_create(&r), 0);
	if (!s || !r)
		return;
	uint64_t fn = 0, total = 0;
	for (int i = 0; i < SETS; i++) {
		uint32_t ord;
		struct bfi_set_stats ss;
		EXPECT_RC(bfi_set_find(s, set_names[i], strlen(set_names[i]), &ord), 0);
		EXPECT_RC(bfi_set_stats(s, ord, &ss), 0);
		EXPECT(ss.distinct_keys == oracle[i].n);
		for (size_t j = 0; j < oracle[i].n; j++) {
			EXPECT_RC(bfi_query_key(s, oracle[i].k[j], K, r), 0);
			int found = 0;
			for (size_t x = 0; x < bfi_result_count(r); x++)
				found |= bfi_result_ordinals(r)[x] == ord;
			fn += !found;
			total++;
		}
	}
	printf("%llu k-mers over %d sets (FASTA, FASTQ, gzip, CRLF): %llu false negatives\n",
	       (unsigned long long)total, SETS, (unsigned long long)fn);
	EXPECT(fn == 0 && total > 1000);
	bfi_result_destroy(&r);
	bfi_close(&s);
}

/* --per-record: every record its own set, named by its id. */
static void test_per_record(void)
{
	char snap[4300];
	snprintf(snap, sizeof snap, "%s/per-record", test_tmpdir());
	EXPECT_RC(build_fasta(snap, dir, 1), 0);
	bfi_snapshot *s;
	EXPECT_RC(bfi_open(snap, 0, &s), 0);
	if (!s)
		return;
	struct bfi_info in;
	bfi_info(s, &in);
	uint32_t ord;
	char id[64];
	snprintf(id, sizeof id, "%s_r0", set_names[2]);
	EXPECT_RC(bfi_set_find(s, id, strlen(id), &ord), 0);
	EXPECT(in.n_sets >= SETS);
	bfi_close(&s);
}

/* Bad inputs: a clear error each, never a crash or a half-read set. */
static void test_errors(void)
{
	char bad[4300], path[4400], snap[4400];
	snprintf(bad, sizeof bad, "%s/bad", test_tmpdir());
	mkdir(bad, 0755);
	snprintf(snap, sizeof snap, "%s/bad.snap", test_tmpdir());
	struct {
		const char *name, *text;
		int want;
	} cases[] = {
		{"plain.fa", "ACGTACGTACGT\n", BFI_E_INPUT},                    /* no header */
		{"noqual.fq", "@r\nACGTACGTACGTAAA\n", BFI_E_INPUT},           /* no '+' */
		{"shortqual.fq", "@r\nACGTACGTACGTAAA\n+\nIII\n", BFI_E_INPUT}, /* short quality */
		{"twice.fa", ">x\nACGTACGTACGTAA\n>x\nACGTTTTTTTTTT\n", BFI_E_DUP_SET}, /* per record */
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		snprintf(path, sizeof path, "%s/%s", bad, cases[i].name);
		EXPECT_RC(test_write_file(path, cases[i].text, strlen(cases[i].text)), 0);
		EXPECT_RC(build_fasta(snap, path, cases[i].want == BFI_E_DUP_SET), cases[i].want);
	}
	/* a gzip file cut short */
	char gzpath[4400];
	snprintf(gzpath, sizeof gzpath, "%s/%s.fasta.gz", dir, set_names[1]);
	size_t len;
	uint8_t *b = test_read_file(gzpath, &len);
	snprintf(path, sizeof path, "%s/cut.fa.gz", bad);
	EXPECT(b && len > 100);
	if (b)
		EXPECT_RC(test_write_file(path, b, len / 2), 0);
	free(b);
	EXPECT_RC(build_fasta(snap, path, 0), BFI_E_INPUT);
	/* two files that name the same set */
	char two[4300];
	snprintf(two, sizeof two, "%s/two", test_tmpdir());
	mkdir(two, 0755);
	snprintf(path, sizeof path, "%s/x.fa", two);
	EXPECT_RC(test_write_file(path, ">a\nACGT\n", 8), 0);
	snprintf(path, sizeof path, "%s/x.fasta", two);
	EXPECT_RC(test_write_file(path, ">a\nACGT\n", 8), 0);
	EXPECT_RC(build_fasta(snap, two, 0), BFI_E_DUP_SET);
	/* k out of range, and a missing file */
	struct bfi_build_options opt;
	bfi_build_options_init(&opt);
	bfi_writer *w;
	EXPECT_RC(bfi_writer_create(&opt, &w), 0);
	EXPECT_RC(bfi_writer_add_fasta(w, dir, 0, 0), BFI_E_INVALID);
	EXPECT_RC(bfi_writer_add_fasta(w, dir, 256, 0), BFI_E_INVALID);
	snprintf(path, sizeof path, "%s/missing.fa", bad);
	EXPECT(bfi_writer_add_fasta(w, path, K, 0) == -ENOENT);
	EXPECT(strstr(bfi_writer_errmsg(w), "missing.fa") != NULL);
	bfi_writer_destroy(&w);
	/* no snapshot was left behind by any failed build */
	struct stat st;
	EXPECT(stat(snap, &st) != 0);
}

/* The example in spec/format.md, "k-mer keys". */
static void test_spec_example(void)
{
	char path[4300], snap[4300];
	snprintf(path, sizeof path, "%s/example.fa", test_tmpdir());
	snprintf(snap, sizeof snap, "%s/example", test_tmpdir());
	EXPECT_RC(test_write_file(path, ">r\nACGNTTgca\n", 13), 0);
	struct bfi_build_options opt;
	bfi_build_options_init(&opt);
	bfi_writer *w;
	EXPECT_RC(bfi_writer_create(&opt, &w), 0);
	EXPECT_RC(bfi_writer_add_fasta(w, path, 3, 0), 0);
	EXPECT_RC(bfi_writer_finish(w, snap, NULL), 0);
	bfi_writer_destroy(&w);
	bfi_snapshot *s;
	bfi_result *r;
	EXPECT_RC(bfi_open(snap, 0, &s), 0);
	EXPECT_RC(bfi_result_create(&r), 0);
	if (!s || !r)
		return;
	struct bfi_set_stats ss;
	EXPECT_RC(bfi_set_stats(s, 0, &ss), 0);
	EXPECT(ss.distinct_keys == 3);
	const char *name;
	size_t len;
	EXPECT_RC(bfi_set_name(s, 0, &name, &len), 0);
	EXPECT(len == 7 && memcmp(name, "example", 7) == 0);
	static const char *const keys3[] = {"ACG", "CAA", "GCA"};
	for (int i = 0; i < 3; i++) {
		EXPECT_RC(bfi_query_key(s, keys3[i], 3, r), 0);
		EXPECT(bfi_result_count(r) == 1);
	}
	bfi_result_destroy(&r);
	bfi_close(&s);
}

/*
 * k > 32: the spec's rolling hash, computed here window by window from its
 * definition (F = XOR rol(s[x_j], k-1-j), R = XOR rol(s[3-x_j], j), key =
 * min as 8 little-endian bytes), against the reader's keys and a build.
 */
static uint64_t rotl(uint64_t x, unsigned r)
{
	r &= 63;
	return r ? x << r | x >> (64 - r) : x;
}

static uint64_t naive_long_key(const char *w, unsigned k)
{
	uint64_t s[4], f = 0, r = 0;
	for (int b = 0; b < 4; b++)
		s[b] = bfi_hash_mix(0x9e3779b97f4a7c15ull * (uint64_t)(b + 1));
	for (unsigned j = 0; j < k; j++) {
		int x = w[j] == 'A' || w[j] == 'a' ? 0 : w[j] == 'C' || w[j] == 'c' ? 1
		        : w[j] == 'G' || w[j] == 'g' ? 2 : 3;
		f ^= rotl(s[x], k - 1 - j);
		r ^= rotl(s[3 - x], j);
	}
	return f < r ? f : r;
}

static void test_long_k(void)
{
	enum { LK = 41, LEN = 3000 };
	uint64_t st = 99;
	char *seq = random_seq(&st, LEN), *rc = malloc(LEN + 1);
	/* its reverse complement has the same canonical keys */
	for (size_t i = 0; i < LEN; i++) {
		char c = seq[LEN - 1 - i];
		rc[i] = c == 'A' || c == 'a' ? 'T' : c == 'C' || c == 'c' ? 'G' : c == 'G' || c == 'g' ? 'C'
		      : c == 'T' || c == 't' ? 'A' : 'N';
	}
	rc[LEN] = '\0';
	char *got, *got_rc;
	size_t n, n_rc;
	EXPECT_RC(bfi_kmers(seq, LEN, LK, &got, &n), 0);
	EXPECT_RC(bfi_kmers(rc, LEN, LK, &got_rc, &n_rc), 0);
	/* the naive keys, distinct, in order of first appearance */
	uint64_t *want = malloc(LEN * sizeof *want);
	size_t nw = 0;
	for (size_t i = 0; i + LK <= LEN; i++) {
		int ok = 1;
		for (unsigned j = 0; j < LK && ok; j++)
			ok = strchr("ACGTacgt", seq[i + j]) != NULL;
		if (!ok)
			continue;
		uint64_t key = naive_long_key(seq + i, LK);
		int seen = 0;
		for (size_t x = 0; x < nw && !seen; x++)
			seen = want[x] == key;
		if (!seen)
			want[nw++] = key;
	}
	EXPECT(n == nw && n_rc == nw && nw > 100);
	for (size_t i = 0; i < n && i < nw; i++) {
		uint64_t v = 0;
		for (int b = 0; b < 8; b++)
			v |= (uint64_t)(uint8_t)got[i * 8 + b] << (8 * b);
		EXPECT(v == want[i]);
	}
	/* the reverse strand: the same set of keys */
	size_t same = 0;
	for (size_t i = 0; i < n_rc; i++)
		for (size_t j = 0; j < n; j++)
			if (memcmp(got_rc + i * 8, got + j * 8, 8) == 0) {
				same++;
				break;
			}
	EXPECT(same == n_rc);
	/* a build from FASTA with k = 41 holds exactly those keys */
	char path[4300], snap[4300];
	snprintf(path, sizeof path, "%s/long.fa", test_tmpdir());
	snprintf(snap, sizeof snap, "%s/long", test_tmpdir());
	FILE *f = fopen(path, "w");
	if (f) {
		fprintf(f, ">long\n%s\n", seq);
		fclose(f);
	}
	struct bfi_build_options opt;
	bfi_build_options_init(&opt);
	bfi_writer *w;
	EXPECT_RC(bfi_writer_create(&opt, &w), 0);
	EXPECT_RC(bfi_writer_add_fasta(w, path, LK, 0), 0);
	EXPECT_RC(bfi_writer_finish(w, snap, NULL), 0);
	bfi_writer_destroy(&w);
	bfi_snapshot *s;
	bfi_result *r;
	EXPECT_RC(bfi_open(snap, 0, &s), 0);
	EXPECT_RC(bfi_result_create(&r), 0);
	if (s && r) {
		struct bfi_set_stats ss;
		EXPECT_RC(bfi_set_stats(s, 0, &ss), 0);
		EXPECT(ss.distinct_keys == nw);
		size_t fn = 0;
		for (size_t i = 0; i < n; i++) {
			EXPECT_RC(bfi_query_key(s, got + i * 8, 8, r), 0);
			fn += bfi_result_count(r) != 1;
		}
		EXPECT(fn == 0);
	}
	/* the spec's test vectors */
	static const struct {
		const char *seq, *hex;
	} vec[] = {{"ACGTACGTACGTACGTACGTACGTACGTACGTA", "fe6ee457d3b06275"},
	           {"GATTACAGATTACAGATTACAGATTACAGATTACAGAT", "ecb5a7896d7ba030"}};
	for (int v = 0; v < 2; v++) {
		char *o;
		size_t c;
		EXPECT_RC(bfi_kmers(vec[v].seq, strlen(vec[v].seq), (unsigned)strlen(vec[v].seq), &o, &c), 0);
		char hex[17] = "";
		for (size_t b = 0; c == 1 && b < 8; b++)
			snprintf(hex + 2 * b, 3, "%02x", (uint8_t)o[b]);
		EXPECT(c == 1 && strcmp(hex, vec[v].hex) == 0);
		free(o);
	}
	printf("k = %d: %zu distinct rolling-hash keys, equal to the spec's formula, strand-free\n", LK, nw);
	bfi_result_destroy(&r);
	bfi_close(&s);
	free(want);
	free(got);
	free(got_rc);
	free(seq);
	free(rc);
}

int main(void)
{
	test_run("seq: k > 32, the rolling hash of the spec", test_long_k);
	test_run("seq: the spec's k-mer example", test_spec_example);
	test_run("seq: FASTA/FASTQ k-mers equal the oracle's, and the key-file build", test_against_oracle);
	test_run("seq: --per-record names each record's set by its id", test_per_record);
	test_run("seq: bad sequence files give clear errors", test_errors);
	for (int i = 0; i < SETS; i++) {
		for (size_t j = 0; j < oracle[i].n; j++)
			free(oracle[i].k[j]);
		free(oracle[i].k);
	}
	test_cleanup();
	return test_exit();
}
