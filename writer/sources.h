/*
 * sources.h - how sets come in: the kinds of input file (sources.c
 * and each kind's own file), their names, their keys read once and again,
 * one large file on every thread (split.c, frames.c).
 */
#ifndef BFI_WRITER_SOURCES_H
#define BFI_WRITER_SOURCES_H

#include <sys/types.h>

#include "internal.h"
#include "zin.h"

/*
 * How sources.c reads one kind of file, a set a file: every key of file to
 * emit, as the kind makes them (k: the k-mer length; *deepest, if not
 * NULL, raised to a document's depth), 0 or an error with err set; and the
 * set's name from the file's (*name points into file; its length). Each
 * kind's own file defines its: key files in sources.c, FASTA in seq.c,
 * text in text.c, JSON and XML in paths.c.
 */
struct source_kind {
	const char *name; /* the input kind's name (bfi_writer_add_group's input) */
	/* What the kind records before its first file (how keys are made, for queries); 0 or an error. */
	int (*setup)(bfi_writer *w, unsigned k);
	int (*file_keys)(const bfi_writer *w, const char *file, unsigned k,
	                 int (*emit)(void *ctx, const char *key, size_t len), void *ctx,
	                 unsigned *deepest, char *err, size_t errlen);
	size_t (*set_name)(const char *file, const char **name); /* NULL: a key file's (gzip aside) */
	/*
	 * At most how many keys the decompressed bytes buf (a file's start, len
	 * bytes, cut anywhere) give, to size the reading (sources.c); NULL:
	 * len, a key a byte at most.
	 */
	uint64_t (*sample_keys)(const char *buf, size_t len, unsigned k);
	int splits; /* FASTA or FASTQ: one large file may be read on every thread (split.c) */
};

/*
 * Where a set's keys are read from for the second time (sources.c): the
 * spool, or the file that gave them, which must give them again.
 */
/*
 * A set's distinct keys held in memory since its first reading (split.c),
 * in parts: what the fill reads, with no sort and no second reading.
 */
struct held_keys {
	unsigned parts;
	size_t *n;
	bfi_keyhash **h;
	uint64_t bytes;
};
void held_free(struct held_keys *k);
/*
 * The keys to fn, n at a time, on up to threads threads, thread t's with
 * ctxs[t] (the same ctx on every thread when fn may be called on them at once).
 */
int held_keys_on(const struct held_keys *k, unsigned threads,
                 int (*fn)(void *ctx, const bfi_keyhash *h, size_t n), void *const *ctxs);

struct set_src {
	char *path;  /* the file, unless the spool */
	uint64_t keys, check; /* keys the first reading gave, repeats counted, and the sum of their h1 */
	const struct source_kind *how; /* NULL: the spool (or held) */
	struct held_keys *held;        /* or the keys themselves, held */
};

/*
 * The set name an input file gives: its base name, less a trailing ".gz"
 * and then the first of the n_ext extensions it ends in (any case). *name
 * points into path; returns the name's length.
 */
size_t writer_file_name(const char *path, const char *const *exts, size_t n_ext,
                        const char **name);

/*
 * bfi_writer_set and bfi_writer_add_tsv less the reading of queued files
 * (sources.c does that, then calls these): the name checked and declared;
 * the lines of f added.
 */
int writer_set(bfi_writer *w, const char *name, size_t len, uint32_t *ord);
int writer_add_tsv(bfi_writer *w, FILE *f, const char *label);

/*
 * Declare the set name (len bytes) for the input what: BFI_E_DUP_SET, with
 * a message naming what and the set, if the name was declared before.
 */
int writer_new_set(bfi_writer *w, const char *what, const char *name, size_t len, uint32_t *ord);

/*
 * Call fn(w, file, ctx) for path if it is a file, or else for every file in
 * the directory path (names not starting with '.', in byte order), each
 * checked to be a regular file; phase names the progress. Stops at the
 * first nonzero return.
 */
int writer_each_file(bfi_writer *w, const char *path, const char *phase,
                     int (*fn)(bfi_writer *w, const char *file, void *ctx), void *ctx);
/*
 * The files of directory path (names not starting with '.', in byte
 * order, each checked to be a regular file), malloc'd: 0, or an error
 * with the message set and nothing to free.
 */
int writer_list_files(bfi_writer *w, const char *path, char ***files, size_t *count);
/* n less a line end (LF or CRLF) at the end of line (input.c). */
size_t writer_chomp(const char *line, size_t n);
/*
 * The keys of a key file, one a line, less its line end, empty lines
 * skipped: each passed to emit. buf (*cap bytes, grown as a line needs)
 * holds the first got bytes already read. 0, or an error with err set.
 */
int writer_key_lines(struct zin *z, const char *file, char **bufp, size_t *capp, ssize_t got,
                     char *err, size_t errlen,
                     int (*emit)(void *ctx, const char *key, size_t len), void *ctx);
/* The name a key file gives its set: its base name, less ".gz" if it is gzip. */
size_t writer_key_file_name(const char *file, int compressed, const char **name);
void text_free(bfi_writer *w);
/* The name a document (text, JSON, XML) gives its set: its base name less its extension. */
size_t writer_doc_name(const char *file, const char **name);

/*
 * Add the sets of path, a file or a directory of files, each file one set
 * read as how says (k: the k-mer length), on threads.
 */
int sources_add(bfi_writer *w, const char *path, const struct source_kind *how, unsigned k);
/* FASTA/FASTQ files as sets (seq.c): their kind, and the catalog's key rules for k. */
const struct source_kind *writer_fasta_source(void);
int writer_fasta_setup(bfi_writer *w, unsigned k);
/* Protein sequences (seq.c): their source kind, and what it records before its first file. */
const struct source_kind *writer_protein_source(void);
int writer_protein_setup(bfi_writer *w, unsigned k);
/* Key files as sets (sources.c): their kind. */
const struct source_kind *writer_key_source(void);
/*
 * Queue one set named name[0 .. len) of the files paths[0 .. n) of kind
 * how, read one after another as one (sources.c; bfi_writer_add_group).
 */
int sources_add_group(bfi_writer *w, const char *name, size_t len, const char *const *paths,
                      size_t n, const struct source_kind *how, unsigned k);
/* Read the files sources_add has queued: 0, or the first error (writer_fail'd). */
int sources_flush(bfi_writer *w);
void sources_free(bfi_writer *w);
/*
 * Each key of input set ord, hashed, to fn, n at a time: from the spool, de-duplicated,
 * or from its file again, repeats and all. Safe on several threads for
 * different sets. 0, or an error with the writer's message set.
 */
int set_keys(bfi_writer *w, uint32_t ord, int (*fn)(void *ctx, const bfi_keyhash *h, size_t n),
             void *ctx);
/*
 * set_keys, on up to threads threads when the set's keys are held, or
 * are one large FASTA or FASTQ file (split.c): thread t calls fn with
 * ctxs[t], at once with the others.
 */
int set_keys_on(bfi_writer *w, uint32_t ord, unsigned threads,
                int (*fn)(void *ctx, const bfi_keyhash *h, size_t n), void *const *ctxs);
/*
 * One large FASTA or FASTQ file read on threads threads (split.c), or
 * in parts on the calling thread alone. split_wanted: is file worth it,
 * 1 MiB and at least share bytes (a compressed file's counted 4 times)?
 * split_first: the first reading of set ord's file, its keys counted; the
 * kept ones held for the fill when the counts fit in memory, else spooled
 * (--min-count, or a layout that reads every set's keys in one pass),
 * else the fill reads the file again: split_again, its keys to fn from
 * every thread. Both give the keys read, repeats and all, and the sum of
 * their h1; 0, or an error with err set.
 */
int split_wanted(const bfi_writer *w, const char *file, uint64_t share);
/*
 * A compressed file made of members decompressed apart (BGZF, zstd in
 * many frames) decompressed on threads decoding threads (frames.c), read
 * in order, its jobs within about memory bytes. frames_open: 1 and *g
 * when path is such a file (and threads > 1), 0 when it is not (zin.c
 * reads it), or -errno with err set. frames_read as zin_read.
 * frames_close: the busiest decoder's CPU seconds.
 */
struct frames;
int frames_open(struct frames **g, const char *path, unsigned threads, uint64_t memory,
                char *err, size_t errlen);
ssize_t frames_read(struct frames *g, void *buf, size_t n, char *err, size_t errlen);
uint64_t frames_offset(const struct frames *g);
double frames_close(struct frames *g);
struct split_result {
	uint64_t keys, check;
	struct held_keys *held; /* the kept keys, held for the fill; or NULL */
	int reread;             /* the fill reads the file again (else the spool has the keys) */
};
int split_first(bfi_writer *w, const char *path, uint32_t ord, unsigned k, unsigned threads,
                struct split_result *res, char *err, size_t errlen);
int split_again(bfi_writer *w, const char *path, unsigned k, unsigned threads,
                int (*fn)(void *ctx, const bfi_keyhash *h, size_t n), void *const *ctxs,
                uint64_t *keys, uint64_t *check, char *err, size_t errlen);
/* Every key of every set, to fn, as set_keys gives them. */
int each_source_key(bfi_writer *w, int (*fn)(void *ctx, uint32_t ord, bfi_keyhash h), void *ctx);

/*
 * A group: several files read one after another as one set
 * (bfi_writer_add_group), queued as the string "\nNAME\nPATH\nPATH...",
 * which no path given to sources_add can be (it starts with a newline)
 * (group_files.c). is_group: is file one? group_name: its name and length.
 * file_or_group: how's keys of file, or of each file of a group in turn,
 * into emit.
 */
int is_group(const char *file);
size_t group_name(const char *file, const char **name);
int file_or_group(const struct source_kind *how, const bfi_writer *w, const char *file,
                  unsigned k, int (*emit)(void *ctx, const char *key, size_t len), void *ctx,
                  unsigned *deepest, char *err, size_t errlen);

#endif
