/* The option that would lift a refusal: the hint of each `sbx: denied`
 * line and audit record; see call.h.
 *
 * Why it exists: a hint is only useful if taking it works, and is the
 * narrowest grant that does (docs/sbx-run.md, "Denials and the audit
 * log"). So it is worked out here, once, for every handler:
 *   - a creation is hinted with its directory, never "/", unless the
 *     name exists already: then with the name;
 *   - --allow-read needs a path that exists: a missing one is hinted with
 *     the nearest directory above it that does, and with none if that is
 *     "/";
 *   - a program looked up (stat, access) in a directory --allow-exec opens
 *     is hinted with --allow-exec;
 *   - a path that is a symbolic link names its target; when the link
 *     itself was granted, the target is what was refused, and is the
 *     hint;
 *   - below /proc, where no grant changes what another process shows, the
 *     reason is printed instead.
 *
 * What it trusts: the host's file system as sbx-run sees it. What it
 * tells: nothing to the program; these looks are for the user's eyes.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sandbox/supervisor/call.h"

/* Cuts the last component off an absolute path ("/a" becomes "/"). */
static void cut_last(char *path) {
  char *slash = strrchr(path, '/');
  if (slash == path)
    slash[1] = '\0';
  else if (slash)
    *slash = '\0';
}

/* The nearest directory at or above path that exists, in place; false
 * when that is "/". */
static bool narrow_to_existing(char *path) {
  struct stat st;
  bool cut = false;
  while (stat(path, &st) < 0 && (errno == ENOENT || errno == ENOTDIR)) {
    if (strcmp(path, "/") == 0)
      return false;
    cut_last(path);
    cut = true;
  }
  if (cut && !S_ISDIR(st.st_mode))
    cut_last(path);
  return strcmp(path, "/") != 0;
}

/* A look for a program (stat, access) where --allow-exec would make it
 * visible: a shell searching PATH, where -x, not a read grant of the one
 * file, is what lets it run the program. */
static bool exec_lookup(const sbx_call *c, const char *path) {
  if (c->cfg->allow_exec || !c->cfg->exec_dirs ||
      (c->ev.op != SBX_FS_OP_STAT && c->ev.op != SBX_FS_OP_ACCESS))
    return false;
  for (const char *const *d = c->cfg->exec_dirs; *d; d++)
    if (g_str_has_prefix(path, *d) && path[strlen(*d)] != '\0')
      return true;
  return false;
}

/* Where the symbolic link path leads, into out (PATH_MAX bytes): every
 * link followed, or, for a link to a missing name, its target joined to
 * the link's directory. False when path is not a symbolic link. */
static bool link_target(const char *path, char *out) {
  struct stat st;
  if (lstat(path, &st) < 0 || !S_ISLNK(st.st_mode))
    return false;
  if (realpath(path, out))
    return true;
  char text[PATH_MAX];
  ssize_t n = readlink(path, text, sizeof(text) - 1);
  if (n <= 0)
    return false;
  text[n] = '\0';
  if (text[0] == '/') {
    g_strlcpy(out, text, PATH_MAX);
  } else {
    g_autofree char *dir = g_path_get_dirname(path);
    char real_dir[PATH_MAX];
    g_autofree char *joined =
        g_build_filename(realpath(dir, real_dir) ? real_dir : dir, text, NULL);
    g_autofree char *canon = g_canonicalize_filename(joined, "/");
    g_strlcpy(out, canon, PATH_MAX);
  }
  return true;
}

/* True when the allowlist grants what the hint is about on path itself. */
static bool granted_on(const sbx_call *c, sbx_unotify_hint hint,
                       const char *path) {
  unsigned need =
      hint == SBX_UNOTIFY_HINT_WRITE ? SBX_PERM_WRITE : SBX_PERM_READ;
  sbx_match m;
  return sbx_allowlist_match(sbx_resolver_allowlist(c->cfg->resolver), path,
                             strlen(path), 0, need, &m) &&
         m.kind == SBX_MATCH_ENTRY;
}

/* Whether no grant lifts a refusal of path: below another process's
 * /proc directory (or thread-self), and anywhere below the sandbox's own
 * procfs, which is readable already. */
static bool beyond_grants(const sbx_call *c, const char *path) {
  if (strncmp(path, "/proc/", 6) != 0)
    return false;
  const char *comp = path + 6;
  return c->cfg->sandbox_proc || (comp[0] >= '0' && comp[0] <= '9') ||
         strncmp(comp, "thread-self", 11) == 0;
}

void sbx_call_set_hint(sbx_call *c, sbx_unotify_hint hint, const char *path,
                       bool parent) {
  c->ev.hint = hint;
  c->ev.hint_path = NULL;
  if (!path)
    return;
  struct stat st;
  c->ev.missing =
      (hint == SBX_UNOTIFY_HINT_READ && !parent && lstat(path, &st) < 0 &&
       (errno == ENOENT || errno == ENOTDIR));
  if ((hint == SBX_UNOTIFY_HINT_READ || hint == SBX_UNOTIFY_HINT_WRITE) &&
      beyond_grants(c, path)) {
    c->ev.hint = SBX_UNOTIFY_HINT_NEVER; /* the reason says why */
    return;
  }
  if (hint == SBX_UNOTIFY_HINT_READ && exec_lookup(c, path)) {
    c->ev.hint = SBX_UNOTIFY_HINT_EXEC;
    return;
  }
  g_strlcpy(c->hint_path, path, sizeof(c->hint_path));
  if (!parent &&
      (hint == SBX_UNOTIFY_HINT_READ || hint == SBX_UNOTIFY_HINT_WRITE) &&
      link_target(path, c->target) && strcmp(c->target, path) != 0) {
    c->ev.target = c->target;
    /* The link was allowed; what it leads to was not. */
    if (granted_on(c, hint, path))
      g_strlcpy(c->hint_path, c->target, sizeof(c->hint_path));
  }
  /* A creation is hinted with its directory, but never "/": there the
   * name itself is the grant. A name that is there already (a shell's
   * `> FILE`) needs only itself. */
  if (parent && strchr(c->hint_path + 1, '/') &&
      (lstat(c->hint_path, &st) != 0 || S_ISLNK(st.st_mode)))
    cut_last(c->hint_path);
  if (hint == SBX_UNOTIFY_HINT_READ && !narrow_to_existing(c->hint_path)) {
    c->ev.hint = SBX_UNOTIFY_HINT_NONE;
    return;
  }
  c->ev.hint_path = c->hint_path;
}
