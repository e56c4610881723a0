/*
 * seq.c - sequence input: FASTA and FASTQ files (read by format/seq.c) as
 * sets of canonical k-mers (spec/format.md, "k-mer keys"), one set a file
 * (sources.c) or a record.
 */
#include <stdio.h>
#include <string.h>

#include "bfi_hash.h"
#include "internal.h"
#include "sources.h"

/* --per-record: each record a set, named by its id, its canonical k-mers its keys. */
struct kmer_ctx {
	bfi_writer *w;
	const char *path;
	unsigned k;
	uint32_t ord;
	uint64_t kmers;
};

static int add_kmer_key(void *ctx, const char *key, size_t len)
{
	struct kmer_ctx *c = ctx;
	c->kmers++;
	return bfi_writer_key(c->w, c->ord, key, len);
}

static int on_record(void *ctx, const char *id, size_t id_len, const char *seq, size_t len)
{
	struct kmer_ctx *c = ctx;
	if (id_len == 0)
		return writer_fail(c->w, BFI_E_INPUT, "%s: a record without an id cannot name a set",
		                   c->path);
	uint32_t before = c->w->names.n;
	int rc = writer_set(c->w, id, id_len, &c->ord);
	if (rc)
		return rc;
	if (c->w->names.n == before)
		return writer_fail(c->w, BFI_E_DUP_SET, "%s: record '%.*s' names a set already added",
		                   c->path, (int)id_len, id);
	return writer_seq_keys(c->w)(seq, len, c->k, add_kmer_key, c);
}

/* A sequence file's set name: its name less .gz and one of these. */
static const char *const SEQ_EXTS[] = {".fasta", ".fastq", ".fa", ".fna", ".ffn", ".faa", ".fq",
                                       ".seq"};

static size_t seq_set_name(const char *path, const char **name)
{
	return writer_file_name(path, SEQ_EXTS, sizeof SEQ_EXTS / sizeof *SEQ_EXTS, name);
}

/* seq_file_keys: every record's k-mers to one emit */
struct file_kmers {
	unsigned k;
	int (*emit)(void *ctx, const char *key, size_t len);
	void *ctx;
	writer_seq_fn keys_of;
};

static int file_record(void *ctx, const char *id, size_t id_len, const char *seq, size_t len)
{
	struct file_kmers *f = ctx;
	(void)id;
	(void)id_len;
	return f->keys_of(seq, len, f->k, f->emit, f->ctx);
}

static int seq_file_keys(const char *file, unsigned k, writer_seq_fn keys_of,
                         int (*emit)(void *ctx, const char *key, size_t len),
                  void *ctx, char *err, size_t errlen)
{
	struct file_kmers f = {k, emit, ctx, keys_of};
	err[0] = '\0';
	int rc = bfi_seq_read(file, file_record, &f, err, errlen);
	if (rc && !err[0])
		snprintf(err, errlen, "%s: %s", file, bfi_strerror(rc));
	return rc;
}

/* A file whose records are sets (--per-record), read once into the spool. */
static int add_records(bfi_writer *w, const char *file, void *ctx)
{
	struct kmer_ctx c = {w, file, *(const unsigned *)ctx, 0, 0};
	char err[512];
	int rc = bfi_seq_read(file, on_record, &c, err, sizeof err);
	if (rc && err[0]) /* a parse error; the writer's own errors have their message */
		rc = writer_fail(w, rc, "%s", err);
	if (rc == 0 && w->opt.progress)
		w->opt.progress(w->opt.progress_ctx, "k-mers", c.kmers, 0);
	return rc;
}

/* sources.c's reading of a FASTA or FASTQ file, a set a file */
static int fasta_keys(const bfi_writer *w, const char *file, unsigned k,
                      int (*emit)(void *ctx, const char *key, size_t len), void *ctx,
                      unsigned *deepest, char *err, size_t errlen)
{
	(void)deepest;
	return seq_file_keys(file, k, writer_seq_keys(w), emit, ctx, err, errlen);
}

/*
 * The k-mers a sample of a FASTA or FASTQ file may give, for sizing its
 * reading: in FASTQ, each sequence line's length less k - 1 (its quality
 * line is no k-mers); in FASTA, every base of the sequence lines, since a
 * record's k-mers run across them.
 */
static uint64_t fasta_sample_keys(const char *buf, size_t len, unsigned k)
{
	size_t i = 0;
	while (i < len && (buf[i] == '\n' || buf[i] == '\r'))
		i++;
	int fastq = i < len && buf[i] == '@';
	uint64_t keys = 0, line = 0;
	for (size_t at = i; at < len;) {
		const char *nl = memchr(buf + at, '\n', len - at);
		size_t end = nl ? (size_t)(nl - buf) : len, n = end - at;
		if (n && buf[end - 1] == '\r')
			n--;
		if (fastq ? line % 4 == 1 : n && buf[at] != '>' && buf[at] != ';')
			keys += fastq ? (n >= k ? n - k + 1 : 0) : n;
		line++;
		at = end + 1;
	}
	return keys;
}

static const struct source_kind fasta_source = {"fasta", writer_fasta_setup, fasta_keys,
                                                seq_set_name, fasta_sample_keys, 1};
static const struct source_kind protein_source = {"protein", writer_protein_setup, fasta_keys,
                                                  seq_set_name, fasta_sample_keys, 1};

const struct source_kind *writer_fasta_source(void)
{
	return &fasta_source;
}

const struct source_kind *writer_protein_source(void)
{
	return &protein_source;
}

/* How the keys were made, for queries to split sequences the same way: the input kind and k. */
static int seq_setup(bfi_writer *w, unsigned k, const char *kind)
{
	if (k < 1 || k > BFI_KMER_MAX)
		return writer_fail(w, BFI_E_INVALID, "k-mer length %u: must be 1 to %u", k, BFI_KMER_MAX);
	char num[8];
	int rc = writer_input(w, kind);
	if (rc == 0)
		rc = writer_meta(w, BFI_META_KMER, num, (size_t)snprintf(num, sizeof num, "%u", k),
		                 "the k-mer length");
	if (rc == 0)
		w->kmer = k;
	return rc;
}

int writer_fasta_setup(bfi_writer *w, unsigned k)
{
	return seq_setup(w, k, "fasta");
}

int writer_protein_setup(bfi_writer *w, unsigned k)
{
	int rc = seq_setup(w, k, "protein");
	if (rc == 0)
		w->protein = 1;
	return rc;
}

static int add_seq(bfi_writer *w, const char *path, unsigned k, int per_record,
                   const struct source_kind *how)
{
	if (w == NULL || path == NULL)
		return BFI_E_INVALID;
	int rc = how->setup(w, k);
	if (rc)
		return rc;
	if (!per_record) { /* a set a file: read on threads, and again to fill */
		w->kmer = k;
		return sources_add(w, path, how, k);
	}
	rc = sources_flush(w); /* queued files first: their sets come before these */
	if (rc)
		return rc;
	stats_begin(w, "reading");
	rc = writer_each_file(w, path, "files", add_records, &k);
	stats_end(w);
	return rc;
}

int bfi_writer_add_fasta(bfi_writer *w, const char *path, unsigned k, int per_record)
{
	return add_seq(w, path, k, per_record, &fasta_source);
}

int bfi_writer_add_protein(bfi_writer *w, const char *path, unsigned k, int per_record)
{
	return add_seq(w, path, k, per_record, &protein_source);
}
