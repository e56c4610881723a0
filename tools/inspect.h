/* inspect.h - what a snapshot holds, as text or JSON (inspect.c). */
#ifndef BFI_TOOLS_INSPECT_H
#define BFI_TOOLS_INSPECT_H

#include <stdio.h>

#include "bfi.h"

/*
 * Write bfi inspect's text, or its JSON object (and a newline), for s at
 * path to o: 0, 1 if o failed (its error flag says so), or an error code.
 */
int inspect_write(FILE *o, const bfi_snapshot *s, const char *path, int json);

#endif
