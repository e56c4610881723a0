/* tools.h - shared helpers of the bfi command. */
#ifndef BFI_TOOLS_H
#define BFI_TOOLS_H

#include <stdint.h>
#include <stdio.h>

/* Exit codes kept stable for scripts: 0 ok, 1 "no"/corrupt, 2 usage or I/O. */
enum { EXIT_OK = 0, EXIT_BAD = 1, EXIT_USAGE = 2 };

int cmd_build(int argc, char **argv);
int cmd_query(int argc, char **argv);
int cmd_inspect(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_synth(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_fold(int argc, char **argv);
int cmd_stack(int argc, char **argv);
int cmd_filter(int argc, char **argv);

/* Print s (len bytes) as a JSON string literal, quotes included. */
void json_str(FILE *f, const char *s, size_t len);

/* A progress line on stderr, redrawn in place; only when stderr is a terminal. */
struct progress {
	int on;
	double last;
	const char *last_phase;
};
void progress_init(struct progress *p, int quiet);
void progress_show(struct progress *p, const char *phase, uint64_t done, uint64_t total);
void progress_done(struct progress *p);

/* Parse "123", "64M", "2G" (binary units). Returns 0 on success. */
int parse_size(const char *s, uint64_t *out);
#endif
