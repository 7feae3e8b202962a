/* Looking up the built-in policies and profiles: see builtin.h. */
#include "sandbox/policy/builtin/builtin.h"

#include <string.h>

#include "sandbox/policy/parser.h"

const sbx_builtin_file *sbx_builtin_find(const char *name) {
  if (!name)
    return NULL;
  size_t lo = 0, hi = sbx_builtin_n_files;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = strcmp(name, sbx_builtin_files[mid].name);
    if (c == 0)
      return &sbx_builtin_files[mid];
    if (c < 0)
      hi = mid;
    else
      lo = mid + 1;
  }
  return NULL;
}

sbx_policy *sbx_builtin_policy(const char *name, GError **error) {
  g_autofree char *file = g_str_has_suffix(name, ".policy")
                              ? g_strdup(name)
                              : g_strconcat(name, ".policy", NULL);
  const sbx_builtin_file *f = sbx_builtin_find(file);
  if (!f) {
    g_set_error(error, SBX_POLICY_ERROR, SBX_POLICY_ERROR_IO,
                "%s: no built-in policy of that name", file);
    return NULL;
  }
  g_autofree char *display = g_strconcat("builtin:", file, NULL);
  return sbx_policy_parse_string(f->text, display, NULL, error);
}
