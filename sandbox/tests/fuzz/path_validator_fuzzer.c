/* libFuzzer target: the path validator and the lexical symlink join, on
 * arbitrary bytes. Checks their promises: an accepted path really is
 * absolute and normalised, and a join always yields a valid path. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox/base/path.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *p = (const char *)data;
  if (sbx_path_validate(p, size, NULL) == 0) {
    if (size == 0 || p[0] != '/' || memchr(p, '\0', size) ||
        (size > 1 && p[size - 1] == '/'))
      abort();
    for (size_t i = 0; i + 1 < size; i++)
      if (p[i] == '/' && p[i + 1] == '/')
        abort();
    char out[4096];
    int n = sbx_path_join_link(p, size, "../x/./y", 8, out, sizeof(out));
    if (n >= 0 && sbx_path_validate(out, (size_t)n, NULL) != 0)
      abort();
  }
  char out[4096];
  int n = sbx_path_join_link("/a/b", 4, p, size, out, sizeof(out));
  if (n >= 0 && sbx_path_validate(out, (size_t)n, NULL) != 0)
    abort();
  return 0;
}
