/* inspect.h - what a snapshot holds, as text or JSON (inspect.c). */
#ifndef BFI_TOOLS_INSPECT_H
#define BFI_TOOLS_INSPECT_H

#include <stdint.h>
#include <stdio.h>

#include "bfi.h"

/*
 * Write bfi inspect's text, or its JSON object (and a newline), for s at
 * path to o: 0, 1 if o failed (its error flag says so), or an error code.
 */
int inspect_write(FILE *o, const bfi_snapshot *s, const char *path, int json);
/*
 * Write bfi inspect --html's page for s at path to o, measuring false
 * positives on probes random absent keys (0: none): 0, 1 if o failed, or
 * an error code (inspect_html.c).
 */
int inspect_html(FILE *o, const bfi_snapshot *s, const char *path, uint64_t probes);

#endif
