/*
 * seq.c - sequence input: FASTA and FASTQ files, plain or gzip, as sets of
 * canonical k-mers (spec/format.md, "k-mer keys").
 *
 * A k-mer's key is its canonical form spelled in k upper-case letters:
 * the lesser, in A < C < G < T order, of the k-mer and its reverse
 * complement. The reader keeps both strands as 2-bit codes, rolling one
 * base at a time, and spells the lesser. Letters other than ACGT (either
 * case) break k-mers; line ends, CR, blanks and tabs inside a sequence do
 * not; each record starts afresh. FASTQ records are header, sequence
 * lines, a '+' line, then quality lines until they hold as many
 * characters as the sequence did.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <zlib.h>

#include "internal.h"

enum { S_START, S_HEADER, S_SEQ, S_COMMENT, S_PLUS, S_QUAL };

struct seqread {
	bfi_writer *w;
	const char *path;
	unsigned k;
	int per_record;
	uint32_t ord;       /* the set keys go to */
	uint64_t fw, rv, mask;
	unsigned shift, run;
	int state, fastq, at_line_start;
	uint64_t seq_len, qual_len, line;
	char id[512];
	size_t id_len;
	int id_done;
	uint64_t kmers;
};

static const char BASES[4] = {'A', 'C', 'G', 'T'};

static int emit(struct seqread *r)
{
	uint64_t c = r->fw < r->rv ? r->fw : r->rv;
	char key[32];
	for (unsigned j = 0; j < r->k; j++)
		key[j] = BASES[(c >> (2 * (r->k - 1 - j))) & 3];
	r->kmers++;
	return bfi_writer_key(r->w, r->ord, key, r->k);
}

/* A record's header is complete: with per_record, its id names a new set. */
static int begin_record(struct seqread *r)
{
	r->run = 0;
	r->seq_len = 0;
	if (!r->per_record)
		return 0;
	if (r->id_len == 0)
		return writer_fail(r->w, BFI_E_INPUT, "%s:%llu: record without an id", r->path,
		                   (unsigned long long)r->line);
	uint32_t before = r->w->names.n;
	int rc = bfi_writer_set(r->w, r->id, r->id_len, &r->ord);
	if (rc)
		return rc;
	if (r->w->names.n == before)
		return writer_fail(r->w, BFI_E_DUP_SET, "%s:%llu: record '%.*s' names a set already added",
		                   r->path, (unsigned long long)r->line, (int)r->id_len, r->id);
	return 0;
}

static int feed(struct seqread *r, const char *buf, size_t n)
{
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		char c = buf[i];
		int start = r->at_line_start;
		r->at_line_start = c == '\n';
		if (c == '\n')
			r->line++;
		/* what a line starts with decides what it is, outside headers and quality */
		if (start && (r->state == S_START || r->state == S_SEQ)) {
			if (c == '>' || c == '@') {
				if (r->state == S_SEQ && r->fastq)
					return writer_fail(r->w, BFI_E_INPUT,
					                   "%s:%llu: FASTQ record without a '+' line and quality",
					                   r->path, (unsigned long long)r->line + 1);
				r->fastq = c == '@';
				r->state = S_HEADER;
				r->id_len = 0;
				r->id_done = 0;
				continue;
			}
			if (c == '+' && r->fastq) {
				r->state = S_PLUS; /* the rest of the line is ignored */
				continue;
			}
			if (c == ';' && !r->fastq) {
				r->state = S_COMMENT; /* an old FASTA comment line */
				continue;
			}
			if (r->state == S_START && c != '\n' && c != '\r' && c != ' ' && c != '\t')
				return writer_fail(r->w, BFI_E_INPUT,
				                   "%s:%llu: not FASTA or FASTQ (a record starts with '>' or '@')",
				                   r->path, (unsigned long long)r->line + 1);
		}
		switch (r->state) {
		case S_START:
			break;
		case S_HEADER:
			if (c == '\n') {
				r->state = S_SEQ;
				rc = begin_record(r);
			} else if (!r->id_done) {
				if (c == ' ' || c == '\t' || c == '\r')
					r->id_done = r->id_len > 0;
				else if (r->id_len < sizeof r->id)
					r->id[r->id_len++] = c;
				else
					r->id_done = 1; /* ids are cut at 512 bytes */
			}
			break;
		case S_COMMENT:
			if (c == '\n')
				r->state = S_SEQ;
			break;
		case S_PLUS:
			if (c == '\n') {
				r->state = S_QUAL;
				r->qual_len = 0;
			}
			break;
		case S_QUAL:
			if (c != '\n' && c != '\r')
				r->qual_len++;
			else if (c == '\n' && r->qual_len >= r->seq_len)
				r->state = S_START;
			break;
		case S_SEQ: {
			int b;
			switch (c) {
			case 'A': case 'a': b = 0; break;
			case 'C': case 'c': b = 1; break;
			case 'G': case 'g': b = 2; break;
			case 'T': case 't': b = 3; break;
			case '\n': case '\r': case ' ': case '\t': continue;
			default: b = -1; break;
			}
			r->seq_len++;
			if (b < 0) {
				r->run = 0;
				break;
			}
			r->fw = ((r->fw << 2) | (uint64_t)b) & r->mask;
			r->rv = (r->rv >> 2) | ((uint64_t)(3 - b) << r->shift);
			if (++r->run >= r->k)
				rc = emit(r);
			break;
		}
		}
	}
	return rc;
}

/* The set name of a sequence file: its name less .gz and a sequence extension. */
static size_t seq_name(const char *path, const char **name)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t n = strlen(base);
	if (n > 3 && !strcasecmp(base + n - 3, ".gz"))
		n -= 3;
	static const char *const ext[] = {".fasta", ".fastq", ".fa", ".fna", ".ffn", ".fq", ".seq"};
	for (size_t i = 0; i < sizeof ext / sizeof *ext; i++) {
		size_t e = strlen(ext[i]);
		if (n > e && !strncasecmp(base + n - e, ext[i], e)) {
			n -= e;
			break;
		}
	}
	*name = base;
	return n;
}

static int add_file(bfi_writer *w, const char *path, unsigned k, int per_record)
{
	struct seqread r;
	memset(&r, 0, sizeof r);
	r.w = w;
	r.path = path;
	r.k = k;
	r.per_record = per_record;
	r.mask = k == 32 ? ~0ull : (1ull << (2 * k)) - 1;
	r.shift = 2 * (k - 1);
	r.at_line_start = 1;
	r.state = S_START;
	int rc = 0;
	if (!per_record) {
		const char *name;
		size_t len = seq_name(path, &name);
		uint32_t before = w->names.n;
		rc = bfi_writer_set(w, name, len, &r.ord);
		if (rc)
			return rc;
		if (w->names.n == before)
			return writer_fail(w, BFI_E_DUP_SET, "%s: set '%.*s' was already added", path, (int)len,
			                   name);
	}
	gzFile gz = gzopen(path, "rb");
	if (gz == NULL)
		return writer_fail(w, errno ? -errno : -ENOMEM, "%s: %s", path,
		                   errno ? strerror(errno) : "cannot open");
	gzbuffer(gz, 1u << 17);
	char *buf = malloc(1u << 20);
	if (buf == NULL) {
		gzclose(gz);
		return -ENOMEM;
	}
	for (;;) {
		int got = gzread(gz, buf, 1u << 20);
		if (got < 0) {
			int zerr;
			const char *msg = gzerror(gz, &zerr);
			rc = writer_fail(w, zerr == Z_ERRNO ? -errno : BFI_E_INPUT, "%s: %s", path,
			                 zerr == Z_ERRNO ? strerror(errno) : msg);
			break;
		}
		if (got == 0)
			break;
		if ((rc = feed(&r, buf, (size_t)got)))
			break;
	}
	/* a last line without its newline */
	if (rc == 0 && r.state == S_HEADER)
		rc = feed(&r, "\n", 1);
	if (rc == 0 && r.fastq && (r.state == S_SEQ || r.state == S_PLUS))
		rc = writer_fail(w, BFI_E_INPUT, "%s: the last FASTQ record has no quality", path);
	if (rc == 0 && r.state == S_QUAL && r.qual_len < r.seq_len)
		rc = writer_fail(w, BFI_E_INPUT, "%s: the last FASTQ record's quality is short", path);
	free(buf);
	int zc = gzclose(gz);
	if (rc == 0 && zc != Z_OK)
		rc = writer_fail(w, BFI_E_INPUT, "%s: truncated or corrupt", path);
	if (rc == 0 && w->opt.progress)
		w->opt.progress(w->opt.progress_ctx, "k-mers", r.kmers, 0);
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int bfi_writer_add_fasta(bfi_writer *w, const char *path, unsigned k, int per_record)
{
	if (w == NULL || path == NULL)
		return BFI_E_INVALID;
	if (k < 1 || k > 32)
		return writer_fail(w, BFI_E_INVALID, "k-mer length %u: must be 1 to 32", k);

	struct stat st;
	if (stat(path, &st) != 0)
		return writer_fail(w, -errno, "%s: %s", path, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return add_file(w, path, k, per_record);
	/* a directory: every file in it, in name order */
	DIR *d = opendir(path);
	if (d == NULL)
		return writer_fail(w, -errno, "%s: %s", path, strerror(errno));
	char **list = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;
	struct dirent *e;
	while (rc == 0 && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			char **l = realloc(list, cap * sizeof *l);
			if (l == NULL) {
				rc = -ENOMEM;
				break;
			}
			list = l;
		}
		size_t len = strlen(path) + strlen(e->d_name) + 2;
		if ((list[n] = malloc(len)) == NULL)
			rc = -ENOMEM;
		else
			snprintf(list[n++], len, "%s/%s", path, e->d_name);
	}
	closedir(d);
	if (rc == 0)
		qsort(list, n, sizeof *list, cmp_str);
	for (size_t i = 0; i < n && rc == 0; i++) {
		if (stat(list[i], &st) != 0)
			rc = writer_fail(w, -errno, "%s: %s", list[i], strerror(errno));
		else if (!S_ISREG(st.st_mode))
			rc = writer_fail(w, BFI_E_INPUT, "%s: not a regular file", list[i]);
		else
			rc = add_file(w, list[i], k, per_record);
		if (rc == 0 && w->opt.progress)
			w->opt.progress(w->opt.progress_ctx, "files", i + 1, n);
	}
	for (size_t i = 0; i < n; i++)
		free(list[i]);
	free(list);
	return rc;
}
