/* tools.h - shared helpers of the bfi command. */
#ifndef BFI_TOOLS_H
#define BFI_TOOLS_H

#include <stdint.h>
#include <stdio.h>

#include "bfi.h"

/* Exit codes kept stable for scripts: 0 ok, 1 "no"/corrupt, 2 usage or I/O. */
enum { EXIT_OK = 0, EXIT_BAD = 1, EXIT_USAGE = 2 };

int cmd_build(int argc, char **argv);
int cmd_append(int argc, char **argv);
int cmd_remove(int argc, char **argv);
int cmd_compact(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_query(int argc, char **argv);
int cmd_inspect(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_synth(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_fold(int argc, char **argv);
int cmd_stack(int argc, char **argv);
int cmd_filter(int argc, char **argv);
int cmd_pack(int argc, char **argv);
int cmd_unpack(int argc, char **argv);

/*
 * JSON strings (spec/format.md, "JSON text"): well-formed UTF-8 goes out
 * as it is; '"', '\\' and control bytes are escaped; every byte that is not
 * part of well-formed UTF-8 becomes \udcXX (XX the byte), the lone
 * surrogate by which Python's surrogateescape recovers the byte.
 * json_piece writes the output for the character at s[*i] into out (at
 * most 6 bytes), advances *i past it, and returns the output's length.
 */
size_t json_piece(const char *s, size_t len, size_t *i, char out[8]);
/* Length of the well-formed UTF-8 character at s[i] (RFC 3629: no overlong
 * form, no surrogate, nothing past U+10FFFF), or 0. */
size_t utf8_len(const unsigned char *s, size_t len, size_t i);
/*
 * Bytes from the data (a name, a path) shown on a terminal: a control
 * byte (C0, DEL, and the two bytes of a C1 control) as \xHH, so that a
 * crafted name cannot drive the terminal; any other byte as it is.
 * tty_piece works as json_piece does.
 */
size_t tty_piece(const char *s, size_t len, size_t *i, char out[8]);
/*
 * Bytes from the data (a name, a query) in a message on standard error,
 * into buf (cap bytes, cap >= 40): control bytes as \xHH, whether or not
 * stderr is a terminal (logs are read on one), and past what fits, cut
 * short with "... (N bytes)". Returns buf.
 */
const char *shown(const char *s, size_t len, char *buf, size_t cap);
/* Print s as text: as it is, but through tty_piece on a terminal. */
void text_str(FILE *f, const char *s, size_t len);
/* Print s (len bytes) as a JSON string literal, quotes included. */
void json_str(FILE *f, const char *s, size_t len);

/*
 * bfi query's answers (out.c): built a line at a time in one buffer and
 * written with write(2) a committed line at a time, so that an emergency
 * stop (guard.c) can write every finished line and no part of another.
 * Each thread has its own; bfi serve's keep theirs in memory (out_hold).
 */
struct out {
	char *buf;
	size_t len, cap, committed;
	int line_flush; /* write each line as it ends */
	int tty;        /* standard output is a terminal: control bytes of text shown escaped */
	int err;        /* errno of the first failed write, or 0 */
	int hold;       /* never written: the caller takes buf[0 .. len) */
	size_t next_cap; /* after out_take: the size to start the next buffer at */
	size_t limit;    /* held answers: the most len may reach (0: none); past it err is EFBIG */
};
extern _Thread_local struct out answers;
void out_init(int line_flush);
/* Answers kept in memory, for the caller to take from answers.buf (emptied, buffer kept). */
void out_hold(void);
void out_put(const void *p, size_t n);
/* Hand answers.buf (len bytes) to the caller, who frees it; the next answers
 * start in a fresh buffer of the size this one had, up to OUT_KEEP. NULL if
 * there is none. */
char *out_take(size_t *len);
/* Drop the answers held, and the buffer too if it grew past OUT_KEEP. */
void out_drop(void);
/* Room to write n bytes at the end, or NULL (out of memory: err says so);
 * out_wrote(k) then keeps the first k of them. */
char *out_room(size_t n);
void out_wrote(size_t k);
void out_str(const char *s);
void out_char(char c);
void out_uint(uint64_t v);
/* Bytes from the data (names, queries) in text output: as they are, but
 * on a terminal control bytes are shown as \xHH. */
void out_text(const char *s, size_t len);
void out_json(const char *s, size_t len);
/* End a line: it is committed, and written if line_flush or enough is. */
void out_end_line(void);
/* Write what is committed; returns answers.err. */
int out_flush(void);
/* From a signal handler: write what is committed, with write(2) only. */
void out_emergency(void);
void out_free(void);

/*
 * SIGBUS on a mapped snapshot (guard.c): a file of it shrank under the
 * reader. The handler writes the committed answers (out_emergency), a
 * message naming the file, and exits with the status given; a SIGBUS
 * anywhere else keeps its default action.
 */
void guard_install(const char *cmd);
/* Name snap's files, at path, in the message; up to GUARD_MAX snapshots. */
#define GUARD_MAX 16
void guard_watch(const bfi_snapshot *snap, const char *path);
void guard_unwatch(const bfi_snapshot *snap);
/*
 * While an operation whose maps are not watched runs (opening, verify),
 * a SIGBUS means a file of path changed; status is the exit status then.
 * path NULL ends it.
 */
void guard_during(const char *path, int status);

/*
 * A catalog meta field as a string: 1 and the value in buf (len bytes at
 * most, NUL included), or 0 if absent or too long. meta_uint: a decimal
 * field up to 65535, or dflt.
 */
int meta_str(const bfi_snapshot *s, const char *key, char *buf, size_t len);
unsigned meta_uint(const bfi_snapshot *s, const char *key, unsigned dflt);

/* Check standard output at exit: 0, or EXIT_USAGE after saying what failed. */
int stdout_close(const char *cmd);
/* Standard input was closed when bfi started (it now reads /dev/null). */
extern int stdin_closed;

/*
 * A progress line on stderr, redrawn in place; only when stderr is a
 * terminal. It shows the phase's count, its rate since the phase began and,
 * when the total is known, the time left at that rate.
 */
struct progress {
	int on;
	double last;
	const char *last_phase;
	double begun;        /* progress_init's time */
	struct {
		char name[32];
		double start; /* when the phase began (phases may alternate) */
	} phases[8];
	unsigned n_phases;
};
void progress_init(struct progress *p, int quiet);
void progress_show(struct progress *p, const char *phase, uint64_t done, uint64_t total);
void progress_done(struct progress *p);

/*
 * Can out be written from the inputs in[0..n)? Not if it names one of them
 * (it would replace what it is made from), or cannot be published there.
 * 0, or EXIT_USAGE after saying why ("bfi CMD: ...").
 */
int output_ok(const char *cmd, const char *out, char **in, int n);

/*
 * Files written by name (outfile.c). outfile_check: may path be replaced?
 * Absent, or a regular file that is not bfi's own (no symbolic link,
 * device, FIFO, socket or directory, no file of a snapshot or collection,
 * nothing that starts with one of bfi's magic numbers). 0, or EXIT_USAGE
 * after saying why ("bfi CMD: ...").
 */
int outfile_check(const char *cmd, const char *path);
/*
 * A file replaced whole: outfile_open makes it new beside path (mkstemp),
 * f is written, and outfile_close(o, 1) fsyncs it and renames it over
 * path (checked again first), or with ok 0 removes it. path "-" is
 * standard output. Both: 0, or EXIT_USAGE after saying why.
 */
struct outfile {
	FILE *f;
	int fd;
	const char *cmd, *path;
	char tmp[4300];
};
int outfile_open(struct outfile *o, const char *cmd, const char *path);
int outfile_close(struct outfile *o, int ok);
/* A file appended to (bench --results), as outfile_check allows; NULL after saying why. */
FILE *outfile_append(const char *cmd, const char *path);

/* Parse "123", "64M", "2G" (binary units). Returns 0 on success. */
int parse_size(const char *s, uint64_t *out);
/* v bytes, rounded up, as parse_size reads them: 900, 12K, 80M, 3G; into buf (cap >= 24). */
const char *size_arg(uint64_t v, char *buf, size_t cap);
/*
 * The names of the layouts in mask (0: every one the library knows), in
 * the library's order, joined by sep, into buf. Returns buf.
 */
const char *layout_names(unsigned mask, const char *sep, char *buf, size_t cap);
/* After a usage error's own line: "Try 'bfi CMD --help'." on stderr; returns EXIT_USAGE. */
int usage_try(const char *cmd);
/* The layout named arg, or 0 after "bfi CMD: --layout must be one of ..." on stderr. */
unsigned layout_arg(const char *cmd, const char *arg);
#endif
