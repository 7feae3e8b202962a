/* Making links for the supervised program: the symlink and link
 * operations of the table of file-system calls; see call.h.
 *
 * Why it exists: unpacking an archive, `cp -a`, a git checkout and many
 * build systems make symbolic links, and some make hard links, inside the
 * directory they write. A link is only a name: what a path through it
 * reaches is decided on the object at the end, by the resolver, every
 * time - a symbolic link that leads out of the grants reads, writes and
 * runs nothing out there (the resolver re-checks the target as a new path,
 * and Landlock checks the file an exec reaches). So the supervisor makes
 * them where the program may create names:
 *   - a symbolic link, with any target text, where the grant has the
 *     create right (the directory the resolver reached beneath the grant);
 *   - a hard link only between two names of one write grant: the object
 *     must already be writable there, so a second name adds no access (a
 *     file with several links is not written anyway, S25).
 *
 * What it trusts: the decoder's copy of the paths, one copy of the target
 * text, the resolver and the kernel's /proc. What it refuses: links where
 * the program may not create, hard links into another grant or of objects
 * outside the grants, and linkat(AT_EMPTY_PATH) (which needs
 * CAP_DAC_READ_SEARCH outside too).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sandbox/supervisor/call.h"

bool sbx_fs_exists_for_program(sbx_call *c, const char *path) {
  struct stat st;
  sbx_decision d;
  return sbx_resolver_stat(c->cfg->resolver, sbx_call_self_pid(c, path), path,
                           false, &st, &d) == 0;
}

bool sbx_fs_is_symlink_for_program(sbx_call *c, const char *path) {
  struct stat st;
  sbx_decision d;
  return sbx_resolver_stat(c->cfg->resolver, sbx_call_self_pid(c, path), path,
                           false, &st, &d) == 0 &&
         S_ISLNK(st.st_mode);
}

int sbx_fs_symlink_to_change(sbx_call *c, const char *path) {
  sbx_decision d;
  int fd =
      sbx_resolver_open_object(c->cfg->resolver, sbx_call_self_pid(c, path),
                               path, SBX_PERM_READ_WRITE, false, &d);
  if (fd < 0)
    return -1;
  struct stat st;
  if (fstat(fd, &st) < 0 || !S_ISLNK(st.st_mode)) {
    close(fd);
    return -1;
  }
  return fd;
}

/* The directory a new name goes in, reached beneath a grant with the
 * create right, and the name; -1 when answered (EEXIST for a name the
 * program may see, else the denial, hinted with the directory). */
static int parent_for_new_name(sbx_call *c, const char *path, char *name) {
  sbx_decision d;
  int dir =
      sbx_resolver_open_parent(c->cfg->resolver, sbx_call_self_pid(c, path),
                               path, name, NAME_MAX + 1, &d);
  if (dir >= 0)
    return dir;
  if (!d.granted && sbx_fs_exists_for_program(c, path))
    answer_failed(c, EEXIST);
  else
    decided(c, dir, &d, SBX_UNOTIFY_HINT_WRITE, path, true);
  return -1;
}

void sbx_op_symlink(sbx_call *c, const sbx_fs_request *q) {
  /* The target is text the link stores; it is read once and only this
   * copy is written. */
  char target[PATH_MAX];
  ssize_t n = sbx_target_read_string(
      &c->t, sbx_fs_request_arg(q, SBX_FS_ARG_TARGET), target, sizeof(target));
  if (n == -ENOENT) {
    answer_drop(c);
    return;
  }
  if (!sbx_fs_take_path(c))
    return;
  c->ev.path = c->path;
  if (n < 0 || n == 0) {
    answer_failed(c, n == 0 ? ENOENT : (int)-n);
    return;
  }
  if (sbx_call_own_fd_path(c->path) >= 0) {
    deny(c, EPERM, "a descriptor's name cannot be created or removed",
         SBX_UNOTIFY_HINT_NONE, NULL, false);
    return;
  }
  if (drop_if_gone(c))
    return;
  char name[NAME_MAX + 1];
  int dir = parent_for_new_name(c, c->path, name);
  if (dir < 0)
    return;
  int rc = symlinkat(target, dir, name) < 0 ? -errno : 0;
  close(dir);
  c->ev.allowed = true;
  answer_result(c, rc);
}

/* The allowlist entry that grants `need` on path, or false. */
static bool entry_of(sbx_call *c, const char *path, unsigned need,
                     size_t *entry) {
  sbx_match m;
  const sbx_allowlist *list = sbx_resolver_allowlist(c->cfg->resolver);
  if (!sbx_allowlist_match(list, path, strlen(path), 0, need, &m) ||
      m.kind != SBX_MATCH_ENTRY)
    return false;
  *entry = m.entry;
  return true;
}

void sbx_op_link(sbx_call *c, const sbx_fs_request *q) {
  if (!sbx_fs_take_path(c))
    return;
  c->ev.path = c->path;
  if (!sbx_fs_take_path2(c))
    return;
  c->ev.path2 = c->path2;
  if (sbx_call_own_fd_path(c->path) >= 0 ||
      sbx_call_own_fd_path(c->path2) >= 0) {
    deny(c, EPERM, "a descriptor's name cannot be linked",
         SBX_UNOTIFY_HINT_NONE, NULL, false);
    return;
  }
  if (drop_if_gone(c))
    return;
  /* The object, decided where it is: writable beneath a grant. */
  bool follow = (q->at_flags & AT_SYMLINK_FOLLOW) != 0;
  unsigned need = SBX_PERM_WRITE | SBX_PERM_CREATE;
  sbx_decision d;
  int obj =
      sbx_resolver_open_object(c->cfg->resolver, sbx_call_self_pid(c, c->path),
                               c->path, need, follow, &d);
  if (obj < 0) {
    decided(c, obj, &d, SBX_UNOTIFY_HINT_WRITE, c->path, false);
    return;
  }
  char where[PATH_MAX];
  size_t from_entry, to_entry;
  if (!sbx_call_object_location(obj, where, sizeof(where)) ||
      !entry_of(c, where, need, &from_entry)) {
    close(obj);
    deny(c, EACCES, "the file is not in a write grant", SBX_UNOTIFY_HINT_WRITE,
         c->path, false);
    return;
  }
  char name[NAME_MAX + 1];
  int dir = parent_for_new_name(c, c->path2, name);
  if (dir < 0) {
    close(obj);
    return;
  }
  if (!entry_of(c, c->path2, SBX_PERM_CREATE, &to_entry) ||
      to_entry != from_entry) {
    close(dir);
    close(obj);
    deny(c, EXDEV, "hard links stay within one write grant",
         SBX_UNOTIFY_HINT_NEVER, NULL, false);
    return;
  }
  char self[64];
  snprintf(self, sizeof(self), "/proc/self/fd/%d", obj);
  int rc =
      linkat(AT_FDCWD, self, dir, name, AT_SYMLINK_FOLLOW) < 0 ? -errno : 0;
  close(dir);
  close(obj);
  c->ev.allowed = true;
  answer_result(c, rc);
}
