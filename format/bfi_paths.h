/*
 * bfi_paths.h - keys of hierarchical documents (spec/format.md, "Path
 * keys"), after Koloniari and Pitoura's breadth and depth Bloom filters:
 * every element name tagged with its level (breadth), and every contiguous
 * sub-path of the element names from the root (depth). The writer spells
 * a document's keys with these, and path queries spell what they look for
 * the same way.
 */
#ifndef BFI_PATHS_H
#define BFI_PATHS_H

#include <stddef.h>

#include "bfi_error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BFI_PATHS_BREADTH 1u
#define BFI_PATHS_DEPTH 2u
#define BFI_PATH_MAX_DEFAULT 8u /* longest sub-path kept by the depth encoding */
#define BFI_PATH_LEVELS_MAX 64u /* deepest level a document may have */

/*
 * Spell a path key into out (cap bytes, NUL-terminated when it fits) and
 * return its length, as snprintf does:
 *   kind 'a': "@a:" name              (the name at any level)
 *   kind 'b': "@b" level ":" name     (the name at level num, 1 = the root's children)
 *   kind 'd': "@d" n ":" n1 "/" n2 ... (a sub-path of n names)
 *   kind 'r': "@r:/" n1 "/" n2 ...    (a path from the root)
 * Names are escaped: '/' as "\/" and '\' as "\\".
 */
BFI_API size_t bfi_path_key(char *out, size_t cap, char kind, unsigned num,
                            const char *const *names, const size_t *lens, size_t n);

#ifdef __cplusplus
}
#endif
#endif
