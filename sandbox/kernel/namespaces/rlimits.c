/* Parsing resource limit values as profiles write them (parent side;
 * rlimits_raw.c applies them). Refuses malformed values with a message
 * that says what to write instead. */
#include "sandbox/kernel/namespaces/rlimits.h"

#include <errno.h>

GQuark sbx_rlimit_error_quark(void) {
  return g_quark_from_static_string("sbx-rlimit-error-quark");
}

gboolean sbx_rlimit_parse_value(const char *text, rlim_t *out, GError **error) {
  if (!text || !*text) {
    g_set_error(error, SBX_RLIMIT_ERROR, 0,
                "empty resource limit value (write a number, e.g. 64, 16M, "
                "or \"unlimited\")");
    return FALSE;
  }
  if (g_ascii_strcasecmp(text, "unlimited") == 0 ||
      g_ascii_strcasecmp(text, "infinity") == 0) {
    *out = RLIM_INFINITY;
    return TRUE;
  }
  char *end = NULL;
  errno = 0;
  guint64 v = g_ascii_strtoull(text, &end, 10);
  if (end == text || errno != 0 || text[0] == '-') {
    g_set_error(error, SBX_RLIMIT_ERROR, 0,
                "resource limit \"%s\" is not a number (write e.g. 64, "
                "16M, or \"unlimited\")",
                text);
    return FALSE;
  }
  unsigned shift = 0;
  if (*end) {
    switch (g_ascii_toupper(*end)) {
      case 'K':
        shift = 10;
        break;
      case 'M':
        shift = 20;
        break;
      case 'G':
        shift = 30;
        break;
      default:
        shift = 64;
        break;
    }
    if (shift == 64 || end[1] != '\0') {
      g_set_error(error, SBX_RLIMIT_ERROR, 0,
                  "resource limit \"%s\" has an unknown suffix (K, M and G "
                  "are accepted)",
                  text);
      return FALSE;
    }
  }
  if (shift && v > (G_MAXUINT64 >> shift)) {
    g_set_error(error, SBX_RLIMIT_ERROR, 0,
                "resource limit \"%s\" is too large", text);
    return FALSE;
  }
  *out = (rlim_t)(v << shift);
  return TRUE;
}
