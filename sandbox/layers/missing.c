/* A layer the kernel cannot provide: see missing.h. */
#include "sandbox/layers/missing.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/kernel/namespaces/namespaces.h"
#include "sandbox/layers/plan.h"

static const struct {
  const char *name;
  const char *require_name;
  const char *lost; /* what the process goes without */
  const char *kept; /* what still holds */
} kinds[] = {
    [SBX_LAYER_USERNS] = {"user namespaces", "userns",
                          "no pid, network, ipc or mount namespace of its "
                          "own and no empty root",
                          "the seccomp filters, the broker (sbx-run: its "
                          "supervisor, which then decides every file call) "
                          "and Landlock"},
    [SBX_LAYER_LANDLOCK] = {"Landlock", "landlock",
                            "no file-access check inside the kernel's path "
                            "walk",
                            "the broker (sbx-run: its supervisor) decides "
                            "every file access; the seccomp filters and "
                            "namespaces"},
};

/* One warning per layer per process: a host that starts many sandboxes
 * says it once. */
static gint warned[G_N_ELEMENTS(kinds)];

/* Writes line to stderr without waiting for its reader: a host whose
 * stderr is a full pipe must still start (the broker's audit log keeps
 * the same rule). A description of our own, non-blocking, where /proc
 * lets us reopen it; a socket is sent to without waiting; otherwise a
 * plain write (a regular file, or no /proc). What does not fit at once
 * is dropped. */
static void warn(const char *line) {
  size_t len = strlen(line);
  fflush(stderr);
  if (send(STDERR_FILENO, line, len, MSG_DONTWAIT | MSG_NOSIGNAL) >= 0 ||
      errno != ENOTSOCK)
    return;
  /* A regular file never makes a writer wait, and a new description of it
   * would not append. */
  struct stat st;
  bool reopen = fstat(STDERR_FILENO, &st) == 0 && !S_ISREG(st.st_mode);
  int fd =
      reopen ? open("/proc/self/fd/2", O_WRONLY | O_NONBLOCK | O_CLOEXEC) : -1;
  ssize_t n = write(fd >= 0 ? fd : STDERR_FILENO, line, len);
  (void)n;
  if (fd >= 0)
    close(fd);
}

const char *sbx_layer_kind_name(sbx_layer_kind kind) {
  return kinds[kind].name;
}

const char *sbx_layer_kind_require_name(sbx_layer_kind kind) {
  return kinds[kind].require_name;
}

gboolean sbx_layer_missing(sbx_layer_kind kind, bool required, bool quiet,
                           const char *who, const char *cause, GError **error) {
  if (required) {
    g_set_error(error, SBX_LAYERS_ERROR, SBX_LAYERS_ERROR_UNSUPPORTED,
                "%s requires %s (require=%s), which this system lacks: %s", who,
                kinds[kind].name, kinds[kind].require_name, cause);
    return FALSE;
  }
  if (!quiet && g_atomic_int_compare_and_exchange(&warned[kind], 0, 1)) {
    g_autofree char *line = g_strdup_printf(
        "sbx: warning: %s runs without %s (%s): %s. Still in place: %s\n", who,
        kinds[kind].name, kinds[kind].lost, cause, kinds[kind].kept);
    warn(line);
  }
  return TRUE;
}

gboolean sbx_layer_userns_refused(GError *failure, bool required,
                                  const char *who, GError **error) {
  if (!g_error_matches(failure, SBX_NS_ERROR, SBX_NS_ERROR_UNSUPPORTED)) {
    g_propagate_error(error, failure);
    return FALSE;
  }
  gboolean ok = sbx_layer_missing(SBX_LAYER_USERNS, required, false, who,
                                  failure->message, error);
  g_error_free(failure);
  return ok;
}
