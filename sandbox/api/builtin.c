/* sbx_builtin_text: the public face of the built-in policies and profiles
 * (sandbox/policy/builtin/builtin.h), which stay the policy layer's own.
 * Trusts nothing of the caller's but a NUL-terminated name; a NULL or
 * unknown one gets NULL. */
#include "sandbox/policy/builtin/builtin.h"
#include "sbx/sbx.h"

const char *sbx_builtin_text(const char *file_name) {
  const sbx_builtin_file *f = file_name ? sbx_builtin_find(file_name) : NULL;
  return f ? f->text : NULL;
}
