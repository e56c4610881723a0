/*
 * fuzz.h - what every fuzz target shares: its name (its corpus is
 * tests/fuzz/corpus/NAME) and scratch files in a private directory.
 * Built with libFuzzer under ./configure --mode=fuzz; in every other mode
 * tests/fuzz/replay.c runs the target over its checked-in corpus, so that
 * ninja test replays every corpus file.
 */
#ifndef BFI_FUZZ_H
#define BFI_FUZZ_H

#include <stddef.h>
#include <stdint.h>

extern const char *fuzz_name;
/* Call for its effect only: an error return is fine, a crash is not. */
extern volatile int fuzz_sink;
#define TRY(x) (fuzz_sink ^= ((x) != 0))
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* A private directory, made once per process. */
const char *fuzz_dir(void);
/* Write data to fuzz_dir()/name; returns the path (static) or NULL. */
const char *fuzz_file(const char *name, const uint8_t *data, size_t size);
/*
 * Query s on every layout it holds: single keys, keys in one call, an
 * expression, a threshold query and a batch. Errors are fine.
 */
struct bfi_snapshot;
void fuzz_queries(const struct bfi_snapshot *s);
/* Everything inspect reads of s: the info, each tree level, rambo repetition and block. */
void fuzz_inspect(const struct bfi_snapshot *s);
/* Write data as the index of the snapshot fuzz_dir()/snap; returns that path (static) or NULL. */
const char *fuzz_index(const uint8_t *data, size_t size);
#endif
