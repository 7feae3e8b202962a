/* Policy source files: reading them safely and pointing into them.
 *
 * Why it exists: every parser message must name the file, line and column
 * and show the line, and reading a policy must never hang or balloon (a
 * FIFO, a device, a huge file named in an @include).
 *
 * Trusts: nothing in the file. Refuses: non-regular files, files over
 * SBX_POLICY_MAX_FILE_SIZE, and NUL bytes in the text.
 */
#include "sandbox/policy/source.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/policy/parser.h"

static void split_lines(sbx_policy_source *src) {
  GPtrArray *lines = g_ptr_array_new();
  char *p = src->text;
  while (*p != '\0') {
    char *nl = strchr(p, '\n');
    if (nl != NULL)
      *nl = '\0';
    size_t len = strlen(p);
    if (len > 0 && p[len - 1] == '\r')
      p[len - 1] = '\0';
    g_ptr_array_add(lines, p);
    if (nl == NULL)
      break;
    p = nl + 1;
  }
  src->n_lines = lines->len;
  g_ptr_array_add(lines, NULL);
  src->lines = (char **)g_ptr_array_free(lines, FALSE);
}

/* A NUL byte would silently cut the line short; refuse it instead. */
static gboolean check_no_nul(const sbx_policy_source *src, const char *text,
                             size_t len, GError **error) {
  const char *nul = memchr(text, '\0', len);
  if (nul == NULL)
    return TRUE;
  unsigned line = 1;
  const char *start = text;
  for (const char *p = text; p < nul; p++) {
    if (*p == '\n') {
      line++;
      start = p + 1;
    }
  }
  g_set_error(error, SBX_POLICY_ERROR, SBX_POLICY_ERROR_SYNTAX,
              "%s:%u:%u: NUL byte in policy text", src->name, line,
              (unsigned)(nul - start) + 1);
  return FALSE;
}

static sbx_policy_source *source_alloc(const char *name, const char *dir) {
  sbx_policy_source *src = g_new0(sbx_policy_source, 1);
  src->name = g_strdup(name);
  src->dir = g_strdup(dir);
  return src;
}

sbx_policy_source *sbx_policy_source_new(const char *text, const char *name,
                                         const char *dir) {
  sbx_policy_source *src = source_alloc(name, dir);
  src->text = g_strdup(text);
  split_lines(src);
  return src;
}

sbx_policy_source *sbx_policy_source_open(const char *path, const char *name,
                                          const char *dir, GError **error) {
  /* O_NONBLOCK: opening a FIFO must not wait for a writer. */
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    int saved = errno;
    g_set_error(error, SBX_POLICY_ERROR, SBX_POLICY_ERROR_IO,
                "cannot open %s: %s", path, g_strerror(saved));
    return NULL;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int saved = errno;
    g_set_error(error, SBX_POLICY_ERROR, SBX_POLICY_ERROR_IO,
                "cannot stat %s: %s", path, g_strerror(saved));
    close(fd);
    return NULL;
  }
  if (!S_ISREG(st.st_mode)) {
    g_set_error(error, SBX_POLICY_ERROR, SBX_POLICY_ERROR_IO,
                "%s is not a regular file", path);
    close(fd);
    return NULL;
  }
  if (st.st_size > SBX_POLICY_MAX_FILE_SIZE) {
    g_set_error(error, SBX_POLICY_ERROR, SBX_POLICY_ERROR_IO,
                "%s is too large (%lld bytes; a policy may have at most %d)",
                path, (long long)st.st_size, SBX_POLICY_MAX_FILE_SIZE);
    close(fd);
    return NULL;
  }
  /* Read one byte past the limit so a file that grows meanwhile is caught. */
  size_t cap = (size_t)st.st_size + 1;
  char *buf = g_malloc(cap + 1);
  size_t len = 0;
  for (;;) {
    ssize_t n = read(fd, buf + len, cap - len);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      int saved = errno;
      g_set_error(error, SBX_POLICY_ERROR, SBX_POLICY_ERROR_IO,
                  "cannot read %s: %s", path, g_strerror(saved));
      g_free(buf);
      close(fd);
      return NULL;
    }
    if (n == 0)
      break;
    len += (size_t)n;
    if (len == cap) {
      if (cap > SBX_POLICY_MAX_FILE_SIZE) {
        g_set_error(error, SBX_POLICY_ERROR, SBX_POLICY_ERROR_IO,
                    "%s is too large (a policy may have at most %d bytes)",
                    path, SBX_POLICY_MAX_FILE_SIZE);
        g_free(buf);
        close(fd);
        return NULL;
      }
      cap = MIN(cap * 2, (size_t)SBX_POLICY_MAX_FILE_SIZE + 1);
      buf = g_realloc(buf, cap + 1);
    }
  }
  close(fd);
  buf[len] = '\0';

  sbx_policy_source *src = source_alloc(name, dir);
  src->dev = st.st_dev;
  src->ino = st.st_ino;
  if (!check_no_nul(src, buf, len, error)) {
    g_free(buf);
    sbx_policy_source_free(src);
    return NULL;
  }
  src->text = buf;
  split_lines(src);
  return src;
}

void sbx_policy_source_free(sbx_policy_source *src) {
  if (src == NULL)
    return;
  g_free(src->name);
  g_free(src->dir);
  g_free(src->text);
  g_free(src->lines);
  g_free(src);
}

void sbx_policy_source_error(GError **error, int code,
                             const sbx_policy_source *src, unsigned line,
                             unsigned col, unsigned len, const char *format,
                             ...) {
  if (error == NULL)
    return;
  va_list ap;
  va_start(ap, format);
  char *msg = g_strdup_vprintf(format, ap);
  va_end(ap);
  if (line == 0 || line > src->n_lines) {
    g_set_error(error, SBX_POLICY_ERROR, code, "%s: %s", src->name, msg);
    g_free(msg);
    return;
  }
  const char *text = src->lines[line - 1];
  size_t text_len = strlen(text);
  if (col > text_len)
    col = (unsigned)text_len;
  GString *caret = g_string_new("    ");
  /* Copy tabs so the caret lines up however tabs are shown. */
  for (unsigned i = 0; i < col; i++)
    g_string_append_c(caret, text[i] == '\t' ? '\t' : ' ');
  g_string_append_c(caret, '^');
  for (unsigned i = 1; i < len; i++)
    g_string_append_c(caret, '~');
  g_set_error(error, SBX_POLICY_ERROR, code, "%s:%u:%u: %s\n    %s\n%s",
              src->name, line, col + 1, msg, text, caret->str);
  g_string_free(caret, TRUE);
  g_free(msg);
}
