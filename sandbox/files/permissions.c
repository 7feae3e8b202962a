/* The allowlist: entries, kinds, canonicalisation and matching; see
 * permissions.h.
 *
 * Trusts the host that fills it; refuses entries it cannot state exactly
 * (relative, non-normalised, another process's /proc). Matching allocates
 * nothing and is what both the broker and the supervisor call per request.
 */
#include "sandbox/files/permissions.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/base/path.h"

GQuark sbx_broker_error_quark(void) {
  return g_quark_from_static_string("sbx-broker-error-quark");
}

struct sbx_allowlist {
  char *name;
  GArray *entries; /* sbx_allow_entry */
  mode_t umask;
  int denied_errno;
};

static const struct {
  const char *name;
  unsigned rights;
} kinds[] = {
    {"stat", SBX_PERM_STAT},
    {"stat-intermediate", SBX_PERM_STAT_INTERMEDIATE},
    {"read", SBX_PERM_READ_ONLY},
    {"write", SBX_PERM_STAT | SBX_PERM_WRITE},
    {"read-write", SBX_PERM_READ_WRITE},
    {"create", SBX_PERM_READ_WRITE_CREATE},
    {"temporary", SBX_PERM_READ_WRITE_TEMPORARY},
    {"grantable", SBX_PERM_GRANTABLE},
};

static void entry_clear(gpointer p) {
  sbx_allow_entry *e = p;
  g_free(e->path);
  g_free(e->written);
}

sbx_allowlist *sbx_allowlist_new(const char *type_name) {
  sbx_allowlist *list = g_new0(sbx_allowlist, 1);
  list->name = g_strdup(type_name ? type_name : "worker");
  list->entries = g_array_new(FALSE, TRUE, sizeof(sbx_allow_entry));
  g_array_set_clear_func(list->entries, entry_clear);
  list->umask = 022;
  list->denied_errno = EACCES;
  return list;
}

void sbx_allowlist_free(sbx_allowlist *list) {
  if (!list)
    return;
  g_array_unref(list->entries);
  g_free(list->name);
  g_free(list);
}

/* Resolves every symlink in the longest existing prefix of `path`; the
 * rest (names that do not exist yet) is appended unchanged. */
static char *resolve_existing_prefix(const char *path, GError **error) {
  g_autofree char *head = g_strdup(path);
  g_autofree char *tail = g_strdup("");
  for (;;) {
    char *real = realpath(head, NULL);
    if (real) {
      char *joined;
      if (tail[0] == '\0')
        joined = g_strdup(real);
      else if (strcmp(real, "/") == 0)
        joined = g_strdup(tail);
      else
        joined = g_strconcat(real, tail, NULL);
      free(real);
      return joined;
    }
    int err = errno;
    if (err != ENOENT && err != ENOTDIR && err != EACCES) {
      g_set_error(error, SBX_BROKER_ERROR, SBX_BROKER_ERROR_FAILED,
                  "cannot canonicalise allowlist entry %s: realpath(%s): %s",
                  path, head, g_strerror(err));
      return NULL;
    }
    char *slash = strrchr(head, '/');
    if (!slash || slash == head) {
      /* Even the first component is missing: nothing to resolve. */
      return g_strdup(path);
    }
    char *new_tail = g_strconcat(slash, tail, NULL);
    g_free(tail);
    tail = new_tail;
    *slash = '\0';
  }
}

static bool is_digits(const char *s, size_t n) {
  if (n == 0)
    return false;
  for (size_t i = 0; i < n; i++)
    if (s[i] < '0' || s[i] > '9')
      return false;
  return true;
}

/* Classifies a canonical path under /proc: returns the offset of the part
 * after "/proc/self" (or "/proc/<our pid>") when the entry is about the
 * requesting process, 0 when it is not under a per-process directory, and
 * -1 when it names another process or thread-self. */
static int proc_self_offset(const char *path) {
  if (strncmp(path, "/proc/", 6) != 0)
    return 0;
  const char *c = path + 6;
  size_t n = strcspn(c, "/");
  if (n == 4 && strncmp(c, "self", 4) == 0)
    return (int)(6 + n);
  if (n == 11 && strncmp(c, "thread-self", 11) == 0)
    return -1;
  if (is_digits(c, n)) {
    char own[32];
    g_snprintf(own, sizeof(own), "%d", (int)getpid());
    if (strlen(own) == n && strncmp(c, own, n) == 0)
      return (int)(6 + n);
    return -1;
  }
  return 0;
}

static gboolean append_entry(GArray *entries, const char *written,
                             const char *canonical, unsigned rights,
                             bool recursive, GError **error) {
  size_t clen = strlen(canonical);
  const char *why = NULL;
  if (sbx_path_validate(canonical, clen, &why) != 0) {
    g_set_error(error, SBX_BROKER_ERROR, SBX_BROKER_ERROR_INVALID,
                "allowlist entry %s canonicalises to %s, which is not a "
                "valid path (%s)",
                written, canonical, why);
    return FALSE;
  }
  int off = proc_self_offset(canonical);
  if (off < 0) {
    g_set_error(error, SBX_BROKER_ERROR, SBX_BROKER_ERROR_INVALID,
                "allowlist entry %s names another process's /proc directory "
                "(%s); write /proc/self/... to mean the worker itself",
                written, canonical);
    return FALSE;
  }
  sbx_allow_entry e = {0};
  e.written = g_strdup(written);
  e.rights = rights;
  e.recursive = recursive;
  if (off > 0) {
    e.proc_self = true;
    e.path = g_strdup(canonical + off);
    if ((rights & SBX_PERM_INTERMEDIATE) != 0) {
      /* Directories above /proc/self are the broker's, not the worker's. */
      e.rights &= ~(unsigned)SBX_PERM_INTERMEDIATE;
    }
  } else {
    e.path = g_strdup(canonical);
  }
  e.len = strlen(e.path);
  g_array_append_val(entries, e);
  return TRUE;
}

static gboolean add_to(GArray *entries, const char *path, unsigned rights,
                       GError **error) {
  if (!path) {
    g_set_error(error, SBX_BROKER_ERROR, SBX_BROKER_ERROR_INVALID,
                "allowlist entry without a path");
    return FALSE;
  }
  if (rights == 0 || (rights & ~(unsigned)SBX_PERM_ALL) != 0) {
    g_set_error(error, SBX_BROKER_ERROR, SBX_BROKER_ERROR_INVALID,
                "allowlist entry %s: rights 0x%x are empty or unknown", path,
                rights);
    return FALSE;
  }
  rights |= SBX_PERM_STAT;
  size_t len = strlen(path);
  bool recursive = len > 1 && path[len - 1] == '/';
  if (len == 1 && path[0] == '/')
    recursive = true;
  g_autofree char *bare = g_strndup(path, recursive && len > 1 ? len - 1 : len);
  const char *why = NULL;
  if (sbx_path_validate(bare, strlen(bare), &why) != 0) {
    g_set_error(error, SBX_BROKER_ERROR, SBX_BROKER_ERROR_INVALID,
                "allowlist entry %s is not an absolute, normalised path (%s)",
                path, why);
    return FALSE;
  }
  if ((rights & SBX_PERM_TEMPORARY) && (rights & SBX_PERM_CREATE)) {
    g_set_error(error, SBX_BROKER_ERROR, SBX_BROKER_ERROR_INVALID,
                "allowlist entry %s: temporary and create exclude each other "
                "(temporary files never keep a name; create keeps it)",
                path);
    return FALSE;
  }

  /* /proc/self is the worker's: resolving it here would name the host. */
  int off = proc_self_offset(bare);
  if (off < 0) {
    g_set_error(error, SBX_BROKER_ERROR, SBX_BROKER_ERROR_INVALID,
                "allowlist entry %s names another process's (or a thread's) "
                "/proc directory; write /proc/self/... to mean the worker",
                path);
    return FALSE;
  }
  if (off > 0)
    return append_entry(entries, path, bare, rights, recursive, error);

  if (recursive) {
    g_autofree char *canon = resolve_existing_prefix(bare, error);
    if (!canon)
      return FALSE;
    return append_entry(entries, path, canon, rights, recursive, error);
  }

  /* Exact entry: resolve the directory part only, so the name itself
   * (which may be a symlink the worker wants to readlink) is kept. */
  char *slash = strrchr(bare, '/');
  g_autofree char *dir = g_strndup(bare, slash == bare ? 1 : slash - bare);
  g_autofree char *canon_dir = resolve_existing_prefix(dir, error);
  if (!canon_dir)
    return FALSE;
  g_autofree char *canon = strcmp(canon_dir, "/") == 0
                               ? g_strconcat("/", slash + 1, NULL)
                               : g_strconcat(canon_dir, "/", slash + 1, NULL);
  if (!append_entry(entries, path, canon, rights, recursive, error))
    return FALSE;
  struct stat st;
  if (lstat(canon, &st) == 0 && S_ISLNK(st.st_mode)) {
    char *target = realpath(canon, NULL);
    if (target) {
      gboolean ok = strcmp(target, canon) == 0 ||
                    append_entry(entries, path, target, rights, false, error);
      free(target);
      return ok;
    }
  }
  return TRUE;
}

gboolean sbx_allowlist_add(sbx_allowlist *list, const char *path,
                           unsigned rights, GError **error) {
  guint before = list->entries->len;
  if (add_to(list->entries, path, rights, error))
    return TRUE;
  g_array_set_size(list->entries, before);
  return FALSE;
}

static gboolean parse_kinds(const char *word, unsigned *rights,
                            GError **error) {
  *rights = 0;
  g_auto(GStrv) parts = g_strsplit(word, ",", -1);
  for (char **p = parts; *p; p++) {
    bool found = false;
    for (size_t i = 0; i < G_N_ELEMENTS(kinds); i++) {
      if (strcmp(*p, kinds[i].name) == 0) {
        *rights |= kinds[i].rights;
        found = true;
      }
    }
    if (!found) {
      g_set_error(error, SBX_BROKER_ERROR, SBX_BROKER_ERROR_INVALID,
                  "unknown permission kind '%s' (expected stat, "
                  "stat-intermediate, read, write, read-write, create, "
                  "temporary or grantable)",
                  *p);
      return FALSE;
    }
  }
  if (*rights == SBX_PERM_GRANTABLE) {
    g_set_error(error, SBX_BROKER_ERROR, SBX_BROKER_ERROR_INVALID,
                "'grantable' needs the kinds a worker may be granted there "
                "('grantable,create PATH')");
    return FALSE;
  }
  return TRUE;
}

static gboolean add_rule_to(GArray *entries, const char *rule, GError **error) {
  const char *p = rule;
  while (*p == ' ' || *p == '\t')
    p++;
  size_t wlen = strcspn(p, " \t");
  if (wlen == 0 || p[wlen] == '\0') {
    g_set_error(error, SBX_BROKER_ERROR, SBX_BROKER_ERROR_INVALID,
                "rule '%s' is not of the form 'KIND PATH'", rule);
    return FALSE;
  }
  g_autofree char *word = g_strndup(p, wlen);
  const char *path = p + wlen;
  while (*path == ' ' || *path == '\t')
    path++;
  g_autofree char *trimmed = g_strdup(path);
  g_strchomp(trimmed);
  unsigned rights;
  if (!parse_kinds(word, &rights, error))
    return FALSE;
  return add_to(entries, trimmed, rights, error);
}

gboolean sbx_allowlist_add_rule(sbx_allowlist *list, const char *rule,
                                GError **error) {
  guint before = list->entries->len;
  if (add_rule_to(list->entries, rule, error))
    return TRUE;
  g_array_set_size(list->entries, before);
  return FALSE;
}

gboolean sbx_allowlist_parse(sbx_allowlist *list, const char *text,
                             const char *source_name, GError **error) {
  guint before = list->entries->len;
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  unsigned lineno = 0;
  for (char **l = lines; *l; l++) {
    lineno++;
    char *line = g_strstrip(*l);
    if (line[0] == '\0' || line[0] == '#')
      continue;
    GError *local = NULL;
    if (!add_rule_to(list->entries, line, &local)) {
      g_set_error(error, SBX_BROKER_ERROR, SBX_BROKER_ERROR_INVALID,
                  "%s:%u: %s", source_name ? source_name : "<allowlist>",
                  lineno, local->message);
      g_error_free(local);
      g_array_set_size(list->entries, before);
      return FALSE;
    }
  }
  return TRUE;
}

static void append_copy(GArray *entries, const sbx_allow_entry *e) {
  sbx_allow_entry c = *e;
  c.path = g_strdup(e->path);
  c.written = g_strdup(e->written);
  g_array_append_val(entries, c);
}

sbx_allowlist *sbx_allowlist_merged(const sbx_allowlist *base,
                                    const sbx_allowlist *extra) {
  sbx_allowlist *list = sbx_allowlist_new(base->name);
  list->umask = base->umask;
  list->denied_errno = base->denied_errno;
  for (guint i = 0; i < base->entries->len; i++)
    append_copy(list->entries,
                &g_array_index(base->entries, sbx_allow_entry, i));
  for (guint i = 0; i < extra->entries->len; i++)
    append_copy(list->entries,
                &g_array_index(extra->entries, sbx_allow_entry, i));
  return list;
}

#define ALLOWLIST_VARIANT_TYPE "(suia(ssubb))"

GVariant *sbx_allowlist_to_variant(const sbx_allowlist *list) {
  GVariantBuilder entries;
  g_variant_builder_init(&entries, G_VARIANT_TYPE("a(ssubb)"));
  for (guint i = 0; i < list->entries->len; i++) {
    const sbx_allow_entry *e =
        &g_array_index(list->entries, sbx_allow_entry, i);
    g_variant_builder_add(&entries, "(ssubb)", e->path, e->written, e->rights,
                          (gboolean)e->recursive, (gboolean)e->proc_self);
  }
  return g_variant_ref_sink(g_variant_new(
      "(sui@a(ssubb))", list->name, (guint32)list->umask,
      (gint32)list->denied_errno, g_variant_builder_end(&entries)));
}

/* The entries were canonicalised when the host built the list; they are
 * taken as they are (the host's file system, not this process's view of
 * it, decided them), after a check of their shape. */
sbx_allowlist *sbx_allowlist_from_variant(GVariant *v, GError **error) {
  if (!g_variant_is_of_type(v, G_VARIANT_TYPE(ALLOWLIST_VARIANT_TYPE))) {
    g_set_error(error, SBX_BROKER_ERROR, SBX_BROKER_ERROR_INVALID,
                "allowlist of type %s, expected %s",
                g_variant_get_type_string(v), ALLOWLIST_VARIANT_TYPE);
    return NULL;
  }
  const char *name;
  guint32 umask;
  gint32 denied;
  g_autoptr(GVariant) entries = NULL;
  g_variant_get(v, "(&sui@a(ssubb))", &name, &umask, &denied, &entries);
  sbx_allowlist *list = sbx_allowlist_new(name);
  list->umask = umask & 0777;
  if (!sbx_allowlist_set_denied_errno(list, denied, error)) {
    sbx_allowlist_free(list);
    return NULL;
  }
  GVariantIter iter;
  g_variant_iter_init(&iter, entries);
  const char *path, *written;
  guint32 rights;
  gboolean recursive, proc_self;
  while (g_variant_iter_next(&iter, "(&s&subb)", &path, &written, &rights,
                             &recursive, &proc_self)) {
    size_t len = strlen(path);
    bool valid = proc_self ? (len == 0 || path[0] == '/')
                           : sbx_path_validate(path, len, NULL) == 0;
    if (!valid || rights == 0 || (rights & ~(unsigned)SBX_PERM_ALL)) {
      g_set_error(error, SBX_BROKER_ERROR, SBX_BROKER_ERROR_INVALID,
                  "allowlist '%s': entry %s is malformed", name, written);
      sbx_allowlist_free(list);
      return NULL;
    }
    sbx_allow_entry e = {.path = g_strdup(path),
                         .len = len,
                         .written = g_strdup(written),
                         .rights = rights,
                         .recursive = recursive,
                         .proc_self = proc_self};
    g_array_append_val(list->entries, e);
  }
  return list;
}

void sbx_allowlist_set_umask(sbx_allowlist *list, mode_t umask) {
  list->umask = umask & 0777;
}

gboolean sbx_allowlist_set_denied_errno(sbx_allowlist *list, int err,
                                        GError **error) {
  if (err != EACCES && err != EPERM && err != ENOENT) {
    g_set_error(error, SBX_BROKER_ERROR, SBX_BROKER_ERROR_INVALID,
                "denied errno %d is not one of EACCES, EPERM, ENOENT", err);
    return FALSE;
  }
  list->denied_errno = err;
  return TRUE;
}

const char *sbx_allowlist_name(const sbx_allowlist *list) {
  return list->name;
}

size_t sbx_allowlist_n_entries(const sbx_allowlist *list) {
  return list->entries->len;
}

const sbx_allow_entry *sbx_allowlist_entry(const sbx_allowlist *list,
                                           size_t i) {
  if (i >= list->entries->len)
    return NULL;
  return &g_array_index(list->entries, sbx_allow_entry, i);
}

mode_t sbx_allowlist_umask(const sbx_allowlist *list) {
  return list->umask;
}

int sbx_allowlist_denied_errno(const sbx_allowlist *list) {
  return list->denied_errno;
}

bool sbx_allowlist_needs_root(const sbx_allowlist *list) {
  for (guint i = 0; i < list->entries->len; i++) {
    const sbx_allow_entry *e =
        &g_array_index(list->entries, sbx_allow_entry, i);
    if (e->rights & SBX_PERM_INTERMEDIATE)
      return true;
  }
  return false;
}

/* Does a /proc/self entry (path relative to /proc/self) cover `rel`, the
 * part of a request after "/proc/<pid>" ("" or starting with '/')? */
static bool proc_entry_covers(const sbx_allow_entry *e, const char *rel,
                              size_t rlen) {
  if (!e->recursive)
    return rlen == e->len && memcmp(rel, e->path, rlen) == 0;
  if (e->len == 0)
    return true;
  return rlen >= e->len && memcmp(rel, e->path, e->len) == 0 &&
         (rlen == e->len || rel[e->len] == '/');
}

bool sbx_allowlist_match(const sbx_allowlist *list, const char *path,
                         size_t len, size_t proc_prefix_len, unsigned need,
                         sbx_match *out) {
  const sbx_allow_entry *all = (const sbx_allow_entry *)list->entries->data;
  size_t n = list->entries->len;
  size_t best = n, best_len = 0;
  for (size_t i = 0; i < n; i++) {
    const sbx_allow_entry *e = &all[i];
    if ((e->rights & need) != need || (e->rights & SBX_PERM_GRANTABLE))
      continue;
    bool covers;
    size_t specificity;
    if (e->proc_self) {
      if (proc_prefix_len == 0)
        continue;
      covers =
          proc_entry_covers(e, path + proc_prefix_len, len - proc_prefix_len);
      specificity = proc_prefix_len + e->len;
    } else if (e->recursive) {
      covers = sbx_path_is_within(path, len, e->path, e->len);
      specificity = e->len;
    } else {
      covers = len == e->len && memcmp(path, e->path, len) == 0;
      specificity = e->len;
    }
    if (covers && (best == n || specificity > best_len)) {
      best = i;
      best_len = specificity;
    }
  }
  if (best < n) {
    out->kind = SBX_MATCH_ENTRY;
    out->entry = best;
    return true;
  }
  if (need == SBX_PERM_STAT) {
    for (size_t i = 0; i < n; i++) {
      const sbx_allow_entry *e = &all[i];
      if (!(e->rights & SBX_PERM_INTERMEDIATE) || e->proc_self ||
          (e->rights & SBX_PERM_GRANTABLE))
        continue;
      if (len < e->len && sbx_path_is_within(e->path, e->len, path, len)) {
        out->kind = SBX_MATCH_INTERMEDIATE;
        out->entry = i;
        return true;
      }
    }
  }
  out->kind = SBX_MATCH_NONE;
  out->entry = 0;
  return false;
}

const sbx_allow_entry *sbx_allowlist_grant_ceiling(const sbx_allowlist *list,
                                                   const sbx_allow_entry *e) {
  unsigned want = e->rights & ~(unsigned)SBX_PERM_GRANTABLE;
  for (guint i = 0; i < list->entries->len; i++) {
    const sbx_allow_entry *g =
        &g_array_index(list->entries, sbx_allow_entry, i);
    if (!(g->rights & SBX_PERM_GRANTABLE) || g->proc_self != e->proc_self ||
        (want & ~g->rights) != 0)
      continue;
    bool covers;
    if (!g->recursive)
      covers = !e->recursive && e->len == g->len && !strcmp(e->path, g->path);
    else if (g->proc_self && g->len == 0)
      covers = true; /* /proc/self/ */
    else
      covers = sbx_path_is_within(e->path, e->len, g->path, g->len);
    if (covers)
      return g;
  }
  return NULL;
}
