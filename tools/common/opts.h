/*
 * opts.h - a command's options as rows (opts.c): each row names an option,
 * its argument and its help, and says how its argument is taken into the
 * command's own struct. One table gives the parser (getopt_long) and the
 * --help text, from which the manual pages and the bash completion are
 * made (tools/man/help2scd.awk, tools/bfi.bash-completion).
 */
#ifndef BFI_TOOLS_OPTS_H
#define BFI_TOOLS_OPTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* How a row takes its argument into the field at off of the command's struct. */
enum opt_kind {
	OPT_FN,   /* fn(ctx, arg) does it */
	OPT_FLAG, /* an int set to 1 */
	OPT_STR,  /* a const char * set to the argument */
	OPT_U32,  /* a uint32_t (or unsigned), parse_size's number in [lo, hi] */
	OPT_U64,  /* a uint64_t, the same */
	OPT_SIZE, /* a size_t, the same */
	OPT_HELP, /* print the help and end with status 0 */
	OPT_DOC,  /* in the help only: another argument of the option of the same name above */
};

struct opt_row {
	const char *name; /* the long name, without "--" */
	int key;          /* its short letter, or a number past 255 */
	const char *arg;  /* its argument's name in the help, or NULL: it takes none */
	/*
	 * Its help: the first line beside the name, each after on a line of
	 * its own (joined by '\n'); "%s" stands for the command's help_fill.
	 * NULL: the parser takes it, the help does not show it (an option the
	 * usage line names).
	 */
	const char *help;
	enum opt_kind kind;
	size_t off;
	uint64_t lo, hi; /* OPT_U32, OPT_U64 */
	/* OPT_U32, OPT_U64: the message for an argument out of range ("%s": the argument) */
	const char *bad;
	/* OPT_FN: 0, or an exit status after saying why (the command's ctx, the argument or NULL) */
	int (*fn)(void *ctx, const char *arg);
};

/* A command: its name for messages ("bfi build"), its help around the rows, and the rows. */
struct opt_cmd {
	const char *me;
	const char *head; /* the help before the options, "Options:\n" included */
	const char *tail; /* the help after them, from the blank line on */
	/* what "%s" in a row's help says, into buf (cap bytes), asked only for --help; or NULL */
	const char *(*help_fill)(char *buf, size_t cap);
	/*
	 * Ended by a row of NULL name and help; a row of NULL name and some
	 * help is text between options, printed as it is (a heading).
	 */
	const struct opt_row *rows;
	/* an option not in the rows: its exit status after saying so; NULL: usage_try */
	int (*unknown)(const struct opt_cmd *cmd);
	int column; /* where each option's help begins (0: 22) */
	/*
	 * Each option's indent when shown as "--name ARG" alone, with no
	 * short letter (a subcommand's options, under its heading); 0: "  -x, --name ARG".
	 */
	int indent;
	/* The whole help, when several commands share one page (bfi filter's); NULL: opts_help. */
	void (*page)(FILE *o);
};

/* The help: head, a row each, tail. */
void opts_help(FILE *o, const struct opt_cmd *cmd);
/* The rows alone, for a page of several commands' rows. */
void opts_rows(FILE *o, const struct opt_cmd *cmd);
/*
 * Take argv's options into ctx by cmd's rows: optind then names the first
 * operand. 0, or 1 + the exit status to end with (after --help, or after
 * saying what is wrong).
 */
int opts_parse(const struct opt_cmd *cmd, int argc, char **argv, void *ctx);
/*
 * The row that arg names whole ("--name" or "-x"), or NULL: for a command
 * that reads its arguments itself (bfi append passes what is not its own
 * on to bfi build; bfi remove's names may begin with '-').
 */
const struct opt_row *opts_find(const struct opt_cmd *cmd, const char *arg);
/*
 * argv[*i], if it names one of cmd's rows whole, taken into ctx as
 * opts_parse takes it, its argument the next (*i moved past it): 1; 0 if
 * it is none of cmd's; 2 + an exit status to end with (after --help, or
 * an argument missing or wrong).
 */
int opts_take_one(const struct opt_cmd *cmd, int argc, char **argv, int *i, void *ctx);

#endif
