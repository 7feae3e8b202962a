/* Planning the default mode's file tree from the allowlist; see tree.h.
 *
 * Trusts the allowlist (the user's grants, canonicalised) and the host's
 * file system as it is now. Refuses write grants of names that do not
 * exist yet, which only the supervisor can let the program create.
 */
#include "sandbox/runner/tree.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/base/path.h"

/* One grant as a mount. */
typedef struct {
  char *path; /* canonical, no trailing slash */
  unsigned flags;
  bool dir;
} bind_spec;

static int compare_binds(gconstpointer a, gconstpointer b) {
  return strcmp(((const bind_spec *)a)->path, ((const bind_spec *)b)->path);
}

/* path is dir or lies below it. */
static bool within(const char *path, const char *dir) {
  return sbx_path_is_within(path, strlen(path), dir, strlen(dir));
}

/* path lies below dir. */
static bool is_below(const char *path, const char *dir) {
  return strcmp(path, dir) != 0 && within(path, dir);
}

/* /dev/ptmx, /dev/pts and what is in it: the pseudo-terminals. */
static bool is_pty_path(const char *path) {
  return strcmp(path, "/dev/ptmx") == 0 || strcmp(path, "/dev/pts") == 0 ||
         g_str_has_prefix(path, "/dev/pts/");
}

/* The link text at path, or NULL when it is no link; each path is
 * examined once per plan (grants share their parents). */
static const char *link_at(GHashTable *seen, const char *path) {
  gpointer cached;
  if (g_hash_table_lookup_extended(seen, path, NULL, &cached))
    return cached;
  char target[PATH_MAX];
  ssize_t n = readlink(path, target, sizeof(target) - 1);
  char *text = NULL;
  if (n > 0) {
    target[n] = '\0';
    text = g_strdup(target);
  }
  g_hash_table_insert(seen, g_strdup(path), text);
  return text;
}

/* Resolves path component by component as the kernel would, recording
 * every symbolic link met (its path and text) so the tree can hold it
 * too; returns the path it leads to (g_free), which may not exist. */
static char *resolve_recording_links(GHashTable *links, GHashTable *seen,
                                     const char *path) {
  char *rest = g_strdup(path);
  char *done = g_strdup("/");
  for (int hops = 0; hops < 40;) {
    char *p = rest;
    while (*p == '/')
      p++;
    if (!*p)
      break;
    char *slash = strchr(p, '/');
    g_autofree char *comp =
        slash ? g_strndup(p, (gsize)(slash - p)) : g_strdup(p);
    char *next_rest = g_strdup(slash ? slash : "");
    g_autofree char *next = strcmp(done, "/") == 0
                                ? g_strconcat("/", comp, NULL)
                                : g_strconcat(done, "/", comp, NULL);
    if (strcmp(comp, ".") == 0) {
      g_free(rest);
      rest = next_rest;
      continue;
    }
    if (strcmp(comp, "..") == 0) {
      char *up = g_path_get_dirname(done);
      g_free(done);
      done = up;
      g_free(rest);
      rest = next_rest;
      continue;
    }
    const char *target = link_at(seen, next);
    if (target) {
      g_hash_table_replace(links, g_strdup(next), g_strdup(target));
      char *joined = target[0] == '/'
                         ? g_strconcat(target, next_rest, NULL)
                         : g_strconcat(strcmp(done, "/") == 0 ? "" : done, "/",
                                       target, next_rest, NULL);
      g_free(next_rest);
      g_free(rest);
      rest = joined;
      /* joined is absolute: walk it again from the root */
      g_free(done);
      done = g_strdup("/");
      hops++;
      continue;
    }
    g_free(done);
    done = g_steal_pointer(&next);
    g_free(rest);
    rest = next_rest;
  }
  g_free(rest);
  return done;
}

/* A grant the tree shows from the host's: not /proc, which is the pid
 * namespace's own, nor one the broker only passes on. */
static bool shows_host_path(const sbx_allow_entry *e) {
  return !e->proc_self && !(e->rights & SBX_PERM_GRANTABLE) &&
         strcmp(e->path, "/proc") != 0 && !g_str_has_prefix(e->path, "/proc/");
}

/* The grant's path as the host wrote it, without a trailing slash. */
static char *written_path(const sbx_allow_entry *e) {
  char *written = g_strdup(e->written ? e->written : e->path);
  size_t wl = strlen(written);
  if (wl > 1 && written[wl - 1] == '/')
    written[wl - 1] = '\0';
  return written;
}

GPtrArray *sbx_run_tree_grant_links(const sbx_allowlist *list) {
  g_autoptr(GHashTable) links =
      g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr(GHashTable) seen =
      g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  size_t n = sbx_allowlist_n_entries(list);
  for (size_t i = 0; i < n; i++) {
    const sbx_allow_entry *e = sbx_allowlist_entry(list, i);
    if (!shows_host_path(e) || is_pty_path(e->path))
      continue;
    g_autofree char *written = written_path(e);
    if (g_path_is_absolute(written))
      g_free(resolve_recording_links(links, seen, written));
  }
  GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
  GHashTableIter it;
  gpointer k;
  g_hash_table_iter_init(&it, links);
  while (g_hash_table_iter_next(&it, &k, NULL))
    g_ptr_array_add(out, g_strdup(k));
  return out;
}

static const char *keep(sbx_run_tree *t, const char *s) {
  return g_string_chunk_insert_const(t->strings, s);
}

/* A grant another one already shows as it should: below a directory bind
 * that writes if it writes, runs if it runs, and it is no device. */
static bool covered(const bind_spec *b, GArray *binds) {
  for (guint i = 0; i < binds->len; i++) {
    const bind_spec *o = &g_array_index(binds, bind_spec, i);
    if (o == b || !o->dir || !is_below(b->path, o->path))
      continue;
    if ((b->flags & SBX_TREE_DEVICE) ||
        ((b->flags & SBX_TREE_WRITABLE) && !(o->flags & SBX_TREE_WRITABLE)) ||
        (!(b->flags & SBX_TREE_NOEXEC) && (o->flags & SBX_TREE_NOEXEC)))
      continue;
    /* A read-only grant below a write grant stays read-only, as a mount;
     * the supervisor would let the wider one decide. Be as wide. */
    return true;
  }
  return false;
}

/* Adds or widens the bind of path. */
static void add_bind(GArray *binds, const char *path, unsigned flags,
                     bool dir) {
  for (guint i = 0; i < binds->len; i++) {
    bind_spec *o = &g_array_index(binds, bind_spec, i);
    if (strcmp(o->path, path) != 0)
      continue;
    o->flags |= flags & (SBX_TREE_WRITABLE | SBX_TREE_DEVICE);
    if (!(flags & SBX_TREE_NOEXEC))
      o->flags &= ~(unsigned)SBX_TREE_NOEXEC;
    return;
  }
  bind_spec b = {g_strdup(path), flags, dir};
  g_array_append_val(binds, b);
}

static void clear_bind(gpointer p) {
  g_free(((bind_spec *)p)->path);
}

static void add_op(GArray *ops, sbx_tree_op_kind kind, unsigned flags,
                   const char *path, const char *target) {
  sbx_tree_op op = {kind, flags, path, target};
  g_array_append_val(ops, op);
}

/* Whether a write grant of list covers path (canonical). */
static bool writable_in(const sbx_allowlist *list, const char *path) {
  size_t n = sbx_allowlist_n_entries(list);
  for (size_t i = 0; i < n; i++) {
    const sbx_allow_entry *e = sbx_allowlist_entry(list, i);
    if (e->proc_self || !(e->rights & (SBX_PERM_WRITE | SBX_PERM_CREATE)))
      continue;
    if (strcmp(e->path, path) == 0 || (e->recursive && is_below(path, e->path)))
      return true;
  }
  return false;
}

/* The device nodes of the fixed set, which init opens again through the
 * tree's read-only binds when they are standard input, output or error
 * (tree_raw.c). */
static bool fixed_device(dev_t rdev) {
  static const char *const nodes[] = {"/dev/null", "/dev/zero", "/dev/full",
                                      "/dev/random", "/dev/urandom"};
  for (size_t i = 0; i < G_N_ELEMENTS(nodes); i++) {
    struct stat st;
    if (stat(nodes[i], &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == rdev)
      return true;
  }
  return false;
}

/* A descriptor the program inherits changes its file whatever the tree
 * shows: fchmod, fchown and futimens work on it. So standard input,
 * output or error that names a file outside every write grant (a regular
 * file, a named FIFO, a device node other than a terminal) reaches the
 * program as a pipe the launcher relays (t->relay); a directory or a
 * block device, which no pipe stands in for, is kept from such changes
 * only by the supervisor (FALSE, with *why_path naming the stream).
 * Pipes, sockets and terminals carry no name the program could change. */
static gboolean plan_stdio(sbx_run_tree *t, const sbx_allowlist *list,
                           const char **why_path) {
  static const char *const names[] = {"standard input", "standard output",
                                      "standard error"};
  for (int fd = 0; fd <= 2; fd++) {
    struct stat st;
    if (fstat(fd, &st) != 0)
      continue;
    bool named = S_ISREG(st.st_mode) || S_ISDIR(st.st_mode) ||
                 S_ISBLK(st.st_mode) || S_ISFIFO(st.st_mode) ||
                 (S_ISCHR(st.st_mode) && !isatty(fd));
    if (!named || (S_ISCHR(st.st_mode) && fixed_device(st.st_rdev)))
      continue;
    char link[32], path[PATH_MAX];
    g_snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n <= 0)
      continue;
    path[n] = '\0';
    if (path[0] != '/')
      continue; /* pipe:[N]: an anonymous pipe */
    if (writable_in(list, path))
      continue;
    if (S_ISDIR(st.st_mode) || S_ISBLK(st.st_mode)) {
      *why_path = keep(t, names[fd]);
      return FALSE;
    }
    t->relay |= 1u << fd;
  }
  return TRUE;
}

/* Whether dir stays the host's, as granted, rather than the sandbox's
 * own: a grant names something at or below it, as resolved or as
 * written (a link granted there is shown there), or writes the tree
 * above it. Both modes decide with this, from the grants alone: whether
 * a granted name exists, or which grant another one covers, does not
 * change it. The working directory is no grant: made again inside a
 * private one, it keeps nothing. */
static bool grants_keep_host_dir(const sbx_allowlist *list, const char *dir) {
  size_t n = sbx_allowlist_n_entries(list);
  for (size_t i = 0; i < n; i++) {
    const sbx_allow_entry *e = sbx_allowlist_entry(list, i);
    if (!shows_host_path(e))
      continue;
    if (within(e->path, dir) ||
        (e->written && g_path_is_absolute(e->written) &&
         within(e->written, dir)) ||
        (sbx_allow_entry_writes(e) && e->recursive && within(dir, e->path)))
      return true;
  }
  return false;
}

static unsigned plan_private_dirs(const sbx_allowlist *list) {
  unsigned dirs = 0;
  for (size_t d = 0; d < SBX_RUN_TREE_N_PRIVATE_DIRS; d++)
    if (!grants_keep_host_dir(list, sbx_run_tree_private_dirs[d]))
      dirs |= 1u << d;
  return dirs;
}

gboolean sbx_run_tree_plan(sbx_run_tree *t, const sbx_allowlist *list,
                           bool allow_exec, const char **why,
                           const char **why_path) {
  memset(t, 0, sizeof(*t));
  t->strings = g_string_chunk_new(4096);
  g_autoptr(GHashTable) links =
      g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr(GHashTable) seen =
      g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr(GArray) binds = g_array_new(FALSE, TRUE, sizeof(bind_spec));
  g_array_set_clear_func(binds, clear_bind);
  bool devices = false;

  if (!plan_stdio(t, list, why_path)) {
    *why =
        "a directory or block device outside the write grants is given as "
        "standard input, output or error, and only the supervisor keeps "
        "its mode and times from changing through the descriptor";
    return FALSE;
  }
  size_t n = sbx_allowlist_n_entries(list);
  for (size_t i = 0; i < n; i++) {
    const sbx_allow_entry *e = sbx_allowlist_entry(list, i);
    if (!shows_host_path(e))
      continue;
    bool writes = sbx_allow_entry_writes(e);
    if (is_pty_path(e->path)) {
      /* The host's terminals stay out; a write grant (a terminal is
       * opened for reading and writing) gets the sandbox's own. */
      t->ptys |= writes;
      devices |= writes;
      continue;
    }
    /* The path as the host wrote it, so the links on its way are in the
     * tree (a program names /lib64/ld-linux-x86-64.so.2, not where it
     * leads). */
    g_autofree char *written = written_path(e);
    g_autofree char *real = resolve_recording_links(links, seen, written);
    struct stat st;
    if (stat(real, &st) != 0) {
      if (writes) {
        *why =
            "a write grant names a path that does not exist yet, which "
            "only the supervisor can let the program create";
        *why_path = keep(t, written);
        return FALSE;
      }
      continue; /* nothing to show; the name stays absent */
    }
    unsigned flags = 0;
    if (writes)
      flags |= SBX_TREE_WRITABLE;
    if (writes && !allow_exec)
      flags |= SBX_TREE_NOEXEC;
    if (!S_ISDIR(st.st_mode))
      flags |= SBX_TREE_FILE;
    if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
      /* Read-only whatever the grant: a device is read and written
       * through the mount all the same, and its mode, owner and times,
       * which are the host's, cannot change. */
      flags = (flags | SBX_TREE_DEVICE) & ~(unsigned)SBX_TREE_WRITABLE;
      devices = true;
    }
    add_bind(binds, real, flags, S_ISDIR(st.st_mode));
  }

  GArray *ops = g_array_new(FALSE, TRUE, sizeof(sbx_tree_op));
  GHashTableIter it;
  gpointer k, v;
  g_hash_table_iter_init(&it, links);
  while (g_hash_table_iter_next(&it, &k, &v))
    add_op(ops, SBX_TREE_LINK, 0, keep(t, k), keep(t, v));
  if (devices) {
    /* What libc and shells expect next to the device nodes. */
    add_op(ops, SBX_TREE_LINK, 0, "/dev/fd", "/proc/self/fd");
    add_op(ops, SBX_TREE_LINK, 0, "/dev/stdin", "/proc/self/fd/0");
    add_op(ops, SBX_TREE_LINK, 0, "/dev/stdout", "/proc/self/fd/1");
    add_op(ops, SBX_TREE_LINK, 0, "/dev/stderr", "/proc/self/fd/2");
  }
  /* The working directory: the launcher's, empty where no grant holds
   * it, so relative names find nothing rather than something else. */
  char *cwd = g_get_current_dir();
  if (cwd && g_path_is_absolute(cwd)) {
    t->cwd = keep(t, cwd);
    add_op(ops, SBX_TREE_DIR, 0, t->cwd, NULL);
  }
  g_free(cwd);
  g_array_sort(binds, compare_binds);
  for (guint i = 0; i < binds->len; i++) {
    const bind_spec *b = &g_array_index(binds, bind_spec, i);
    if (!covered(b, binds))
      add_op(ops, SBX_TREE_BIND, b->flags, keep(t, b->path), NULL);
  }
  t->proc = true;
  t->private_exec = allow_exec;
  t->private_dirs = plan_private_dirs(list);
  t->n_ops = ops->len;
  t->ops = (sbx_tree_op *)g_array_free(ops, FALSE);
  return TRUE;
}

void sbx_run_tree_plan_private(sbx_run_tree *t, const sbx_allowlist *list,
                               bool allow_exec) {
  memset(t, 0, sizeof(*t));
  t->private_exec = allow_exec;
  t->private_dirs = plan_private_dirs(list);
}

void sbx_run_tree_add_text(sbx_run_tree *t, const char *path,
                           const char *text) {
  for (size_t i = 0; i < t->n_ops; i++) {
    const sbx_tree_op *op = &t->ops[i];
    if (op->kind == SBX_TREE_BIND && within(path, op->path))
      return;
  }
  t->ops = g_renew(sbx_tree_op, t->ops, t->n_ops + 1);
  t->ops[t->n_ops++] = (sbx_tree_op){
      .kind = SBX_TREE_TEXT, .path = keep(t, path), .target = keep(t, text)};
}

void sbx_run_tree_clear(sbx_run_tree *t) {
  if (!t)
    return;
  g_free(t->ops);
  if (t->strings)
    g_string_chunk_free(t->strings);
  memset(t, 0, sizeof(*t));
}
