/* Path validation and lexical joins for the broker; see path.h.
 *
 * Trusts nothing it is given; refuses every non-canonical spelling. Pure
 * functions, async-signal-safe.
 */
#include "sandbox/base/path.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

static int refuse(const char **reason, const char *why) {
  if (reason)
    *reason = why;
  return -EACCES;
}

int sbx_path_validate(const char *path, size_t len, const char **reason) {
  if (reason)
    *reason = NULL;
  if (len >= PATH_MAX) {
    if (reason)
      *reason = "path longer than PATH_MAX";
    return -ENAMETOOLONG;
  }
  if (len == 0)
    return refuse(reason, "empty path");
  if (path[0] != '/')
    return refuse(reason, "relative path");
  if (len == 1)
    return 0;
  if (path[len - 1] == '/')
    return refuse(reason, "trailing slash");

  /* Walk component by component; each starts after a '/'. */
  size_t i = 1;
  while (i <= len) {
    size_t start = i;
    while (i < len && path[i] != '/') {
      if (path[i] == '\0')
        return refuse(reason, "embedded NUL");
      i++;
    }
    size_t clen = i - start;
    if (clen == 0)
      return refuse(reason, "empty component (//)");
    if (clen == 1 && path[start] == '.')
      return refuse(reason, "'.' component");
    if (clen == 2 && path[start] == '.' && path[start + 1] == '.')
      return refuse(reason, "'..' component");
    i++; /* skip the '/' (or step past the end) */
  }
  return 0;
}

bool sbx_path_is_within(const char *path, size_t len, const char *prefix,
                        size_t prefix_len) {
  if (prefix_len == 1 && prefix[0] == '/')
    return len >= 1 && path[0] == '/';
  if (len < prefix_len || memcmp(path, prefix, prefix_len) != 0)
    return false;
  return len == prefix_len || path[prefix_len] == '/';
}

/* Appends one component to out (which holds a normalised path of length
 * *olen), applying `.` and `..` lexically. */
static int push_component(char *out, size_t out_size, size_t *olen,
                          const char *c, size_t clen) {
  if (clen == 0 || (clen == 1 && c[0] == '.'))
    return 0;
  if (clen == 2 && c[0] == '.' && c[1] == '.') {
    if (*olen <= 1)
      return 0; /* `..` at the root stays at the root */
    size_t j = *olen - 1;
    while (j > 0 && out[j] != '/')
      j--;
    *olen = j == 0 ? 1 : j;
    out[*olen] = '\0';
    return 0;
  }
  size_t need = (*olen > 1 ? 1 : 0) + clen;
  if (*olen + need + 1 > out_size || *olen + need >= PATH_MAX)
    return -ENAMETOOLONG;
  if (*olen > 1)
    out[(*olen)++] = '/';
  memcpy(out + *olen, c, clen);
  *olen += clen;
  out[*olen] = '\0';
  return 0;
}

static int push_all(char *out, size_t out_size, size_t *olen, const char *s,
                    size_t len) {
  size_t i = 0;
  while (i < len) {
    while (i < len && s[i] == '/')
      i++;
    size_t start = i;
    while (i < len && s[i] != '/')
      i++;
    int rc = push_component(out, out_size, olen, s + start, i - start);
    if (rc < 0)
      return rc;
  }
  return 0;
}

int sbx_path_join_link(const char *dir, size_t dir_len, const char *target,
                       size_t target_len, char *out, size_t out_size) {
  if (out_size < 2)
    return -ENAMETOOLONG;
  if (target_len == 0)
    return -ENOENT;
  if (memchr(target, '\0', target_len))
    return -ENOENT;
  size_t olen = 1;
  out[0] = '/';
  out[1] = '\0';
  int rc = 0;
  if (target[0] != '/')
    rc = push_all(out, out_size, &olen, dir, dir_len);
  if (rc == 0)
    rc = push_all(out, out_size, &olen, target, target_len);
  if (rc < 0)
    return rc;
  return (int)olen;
}

bool sbx_path_has_dotdot(const char *s, size_t len) {
  for (size_t i = 0; i + 1 < len; i++)
    if (s[i] == '.' && s[i + 1] == '.' && (i == 0 || s[i - 1] == '/') &&
        (i + 2 == len || s[i + 2] == '/'))
      return true;
  return false;
}
