/* Writing the learned policy and profile; see write.h.
 *
 * Trusts the record. Every name and value it writes is checked again by
 * the parser, the BPF compiler, the allowlist and the profile loader.
 */
#include "sandbox/runner/learn_write.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/files/permissions.h"
#include "sandbox/kernel/seccomp/bpf.h"
#include "sandbox/policy/arg_rules.h"
#include "sandbox/policy/compiler.h"
#include "sandbox/policy/builtin/builtin.h"
#include "sandbox/policy/builtin/profile.h"
#include "sandbox/policy/constants.h"
#include "sandbox/policy/parser.h"
#include "sandbox/base/syscalls.h"
#include "sandbox/runner/plan.h"

void sbx_learn_summary_clear(sbx_learn_summary *s) {
  g_clear_pointer(&s->policy_path, g_free);
  g_clear_pointer(&s->profile_path, g_free);
}

/* What any dynamically linked program needs to start and to end, seen
 * or not (a static program, or one the run cut short, may not show them
 * all). */
static const char *const startup_calls[] = {
    "execve",
    "brk",
    "mmap",
    "munmap",
    "mprotect",
    "arch_prctl",
    "set_tid_address",
    "set_robust_list",
    "rseq",
    "prlimit64",
    "openat",
    "read",
    "pread64",
    "close",
    "newfstatat",
    "fstat",
    "access",
    "getrandom",
    "write",
    "rt_sigaction",
    "rt_sigprocmask",
    "rt_sigreturn",
    "exit",
    "exit_group",
};

static gint by_count(gconstpointer a, gconstpointer b, gpointer data) {
  const sbx_learn_record *r = data;
  int na = GPOINTER_TO_INT(*(gconstpointer *)a);
  int nb = GPOINTER_TO_INT(*(gconstpointer *)b);
  uint64_t ca = r->syscalls[na].count, cb = r->syscalls[nb].count;
  if (ca != cb)
    return ca > cb ? -1 : 1;
  return na - nb;
}

/* Whether the program needs the host's network: it made sockets that
 * are not unix sockets, unless every connect and bind of them seen was
 * its own business (learn_record.h), which the sandbox's own network
 * serves. */
static bool uses_network(const sbx_learn_record *r) {
  int nr = sbx_syscall_number("socket");
  const sbx_learn_arg *a = &r->syscalls[nr].args[0];
  if (r->syscalls[nr].count == 0)
    return false;
  if (r->own_inet > 0 && g_hash_table_size(r->connect_ports) == 0 &&
      g_hash_table_size(r->bind_ports) == 0)
    return false;
  if (a->overflow)
    return true;
  for (unsigned i = 0; i < a->n_values; i++)
    if ((uint32_t)a->values[i] != AF_UNIX)
      return true;
  return false;
}

char *sbx_learn_command_line(char **argv) {
  GString *s = g_string_new(NULL);
  for (char **a = argv; *a; a++) {
    g_autofree char *q = g_shell_quote(*a);
    g_string_append_printf(s, "%s%s", a == argv ? "" : " ",
                           strpbrk(*a, " \t\n'\"\\$`*?[]{}()<>|&;~#") ? q : *a);
  }
  return g_string_free(s, FALSE);
}

char **sbx_learn_run_argv(const sbx_learn_summary *summary, char **program) {
  GPtrArray *a = g_ptr_array_new();
  g_ptr_array_add(a, g_strdup("--profile"));
  g_ptr_array_add(a, g_strdup(summary->profile_path));
  if (summary->execs)
    g_ptr_array_add(a, g_strdup("--allow-exec"));
  if (summary->traces)
    g_ptr_array_add(a, g_strdup("--allow-ptrace"));
  g_ptr_array_add(a, g_strdup("--"));
  for (char **p = program; p && *p; p++)
    g_ptr_array_add(a, g_strdup(*p));
  g_ptr_array_add(a, NULL);
  return (char **)g_ptr_array_free(a, FALSE);
}

static const char completeness_note[] =
    "A learned policy is only as complete as the run that produced it:\n"
    "whatever this run did not do (other options, other input, error\n"
    "paths, a terminal instead of a pipe) is refused under it. Review it\n"
    "before relying on it, and learn again when the program changes.\n";

static void append_comment_block(GString *out, const char *text) {
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  for (char **l = lines; *l; l++)
    if (**l || l[1])
      g_string_append_printf(out, "#%s%s\n", **l ? " " : "", *l);
}

char *sbx_learn_policy_text(const sbx_learn_record *r,
                            const sbx_learn_output *o,
                            sbx_learn_summary *summary) {
  GString *out = g_string_new(NULL);
  g_autofree char *cmd = sbx_learn_command_line(o->argv);
  g_autofree char *base = g_path_get_basename(o->name);
  g_autofree char *head = g_strdup_printf(
      "%s.policy: the system calls of one run of\n  %s\nrecorded by "
      "sbx-learn (%" G_GUINT64_FORMAT " calls).\n\n%s",
      base, cmd, r->total_calls, completeness_note);
  append_comment_block(out, head);
  g_string_append_printf(out, "\n@default %s\n", o->default_action);

  g_autoptr(GPtrArray) seen = g_ptr_array_new();
  for (int nr = 0; nr < r->n_syscalls; nr++)
    if (r->syscalls[nr].count)
      g_ptr_array_add(seen, GINT_TO_POINTER(nr));
  g_ptr_array_sort_with_data(seen, by_count, (gpointer)r);
  summary->n_rules = 0;
  summary->n_constrained = 0;
  for (guint i = 0; i < seen->len; i++) {
    int nr = GPOINTER_TO_INT(g_ptr_array_index(seen, i));
    const char *name = sbx_syscall_name(nr);
    const sbx_learn_syscall *s = &r->syscalls[nr];
    g_autoptr(GString) why = g_string_new(NULL);
    g_autofree char *expr = sbx_arg_rule_expression(name, s->args, why);
    g_string_append_printf(out, "\n# %" G_GUINT64_FORMAT " call%s observed%s\n",
                           s->count, s->count == 1 ? "" : "s", why->str);
    g_string_append_printf(out, "%s: %s\n", name, expr);
    summary->n_rules++;
    if (strcmp(expr, "1") != 0)
      summary->n_constrained++;
  }
  bool header = false;
  for (size_t i = 0; i < G_N_ELEMENTS(startup_calls); i++) {
    int nr = sbx_syscall_number(startup_calls[i]);
    if (nr < 0 || r->syscalls[nr].count)
      continue;
    if (!header)
      g_string_append(out,
                      "\n# Not observed; the dynamic loader, libc's "
                      "start-up or exit need them.\n");
    header = true;
    g_string_append_printf(out, "%s: 1\n", startup_calls[i]);
    summary->n_rules++;
  }
  g_string_append(out,
                  "\n# sbx-run answers these with ENOSYS, and so does this "
                  "policy, so that\n# libc falls back to the calls above "
                  "(clone, openat).\n");
  for (const char *const *c = sbx_learn_enosys_calls; *c; c++)
    if (sbx_syscall_number(*c) >= 0 &&
        !r->syscalls[sbx_syscall_number(*c)].count) {
      g_string_append_printf(out, "%s: return ENOSYS\n", *c);
      summary->n_rules++;
    }
  summary->network = uses_network(r);
  return g_string_free(out, FALSE);
}

/* ---- broker rules -----------------------------------------------------------
 */

static unsigned depth(const char *path) {
  unsigned d = 0;
  for (const char *p = path; *p; p++)
    d += *p == '/' && p[1];
  return d;
}

/* A directory a rule may cover recursively: not "/", not a top-level
 * directory, not the home directory or one above it. */
static bool may_cover(const char *dir) {
  if (depth(dir) < 2)
    return false;
  const char *home = g_get_home_dir();
  if (home && g_str_has_prefix(home, dir) &&
      (home[strlen(dir)] == '\0' || home[strlen(dir)] == '/'))
    return false;
  return true;
}

static bool below(const char *path, const char *dir) {
  size_t n = strlen(dir);
  return strncmp(path, dir, n) == 0 && path[n] == '/';
}

static bool below_any(const char *path, GPtrArray *dirs) {
  for (guint i = 0; i < dirs->len; i++) {
    const char *d = g_ptr_array_index(dirs, i);
    if (strcmp(path, d) == 0 || below(path, d))
      return true;
  }
  return false;
}

/* /proc/<pid>/x as the program meant it: /proc/self/x. */
static char *program_view(const char *path) {
  if (strncmp(path, "/proc/", 6) == 0 && g_ascii_isdigit(path[6])) {
    const char *p = path + 6;
    while (g_ascii_isdigit(*p))
      p++;
    if (*p == '/' || *p == '\0')
      return g_strconcat("/proc/self", p, NULL);
  }
  /* The directory part as the allowlist will store it (/lib/x -> on a
   * merged-/usr system /usr/lib/x), so coverage is checked on the same
   * names the rules end up with. */
  if (strcmp(path, "/") == 0 || g_str_has_prefix(path, "/proc/self/") ||
      strcmp(path, "/proc/self") == 0)
    return g_strdup(path);
  g_autofree char *dir = g_path_get_dirname(path);
  g_autofree char *name = g_path_get_basename(path);
  char *real = realpath(dir, NULL);
  if (!real)
    return g_strdup(path);
  char *out = g_build_filename(real, name, NULL);
  free(real);
  return out;
}

static bool covered(const sbx_allowlist *list, const char *path,
                    unsigned need) {
  sbx_match m;
  return sbx_allowlist_match(list, path, strlen(path), 0, need, &m);
}

/* Whether a recursive entry at or above dir grants need on what dir
 * holds (an exact entry for dir itself grants nothing below it). */
static bool covered_below(const sbx_allowlist *list, const char *dir,
                          unsigned need) {
  size_t n = sbx_allowlist_n_entries(list);
  for (size_t i = 0; i < n; i++) {
    const sbx_allow_entry *e = sbx_allowlist_entry(list, i);
    if (!e->recursive || e->proc_self || (e->rights & SBX_PERM_GRANTABLE) ||
        (e->rights & need) != need)
      continue;
    if (strcmp(e->path, "/") == 0 ||
        (strncmp(dir, e->path, e->len) == 0 &&
         (dir[e->len] == '\0' || dir[e->len] == '/')))
      return true;
  }
  return false;
}

static gint by_name(gconstpointer a, gconstpointer b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static gint by_depth_desc(gconstpointer a, gconstpointer b) {
  const char *pa = *(const char *const *)a, *pb = *(const char *const *)b;
  unsigned da = depth(pa), db = depth(pb);
  if (da != db)
    return da > db ? -1 : 1;
  return strcmp(pa, pb);
}

/* A directory's names seen so far: how many, and how many were read. */
typedef struct {
  GHashTable *names;
  unsigned n_read;
} dir_names;

static void dir_names_free(gpointer p) {
  dir_names *d = p;
  g_hash_table_unref(d->names);
  g_free(d);
}

static void add_name(GHashTable *dirs, const char *path, bool read) {
  g_autofree char *dir = g_path_get_dirname(path);
  dir_names *d = g_hash_table_lookup(dirs, dir);
  if (!d) {
    d = g_new0(dir_names, 1);
    d->names = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    g_hash_table_insert(dirs, g_strdup(dir), d);
  }
  if (g_hash_table_add(d->names, g_strdup(path)) && read)
    d->n_read++;
}

/* Directories holding at least fold_min files that were read or looked
 * at, at least one of them read (directories folded before count as
 * read names of their parent; deepest first). A directory whose files
 * were only looked at (ls -l) is not folded: that would grant reading
 * them. files: paths; read[i] says whether files[i] was read. */
static GPtrArray *fold_reads(GPtrArray *files, GArray *read,
                             unsigned fold_min) {
  g_autoptr(GHashTable) dirs =
      g_hash_table_new_full(g_str_hash, g_str_equal, g_free, dir_names_free);
  for (guint i = 0; i < files->len; i++)
    add_name(dirs, g_ptr_array_index(files, i),
             g_array_index(read, gboolean, i));
  GPtrArray *folded = g_ptr_array_new_with_free_func(g_free);
  for (;;) {
    g_autoptr(GPtrArray) ready = g_ptr_array_new();
    GHashTableIter it;
    gpointer key, value;
    g_hash_table_iter_init(&it, dirs);
    while (g_hash_table_iter_next(&it, &key, &value)) {
      dir_names *d = value;
      if (g_hash_table_size(d->names) >= fold_min && d->n_read > 0 &&
          may_cover(key) && !below_any(key, folded))
        g_ptr_array_add(ready, key);
    }
    if (ready->len == 0)
      break;
    g_ptr_array_sort(ready, by_depth_desc);
    g_autofree char *dir = g_strdup(g_ptr_array_index(ready, 0));
    g_ptr_array_add(folded, g_strdup(dir));
    g_hash_table_remove(dirs, dir);
    add_name(dirs, dir, true);
  }
  return folded;
}

static void add_rule(GPtrArray *rules, sbx_allowlist *list, const char *kind,
                     const char *path, bool recursive) {
  char *rule = g_strdup_printf("%s %s%s", kind, path, recursive ? "/" : "");
  GError *error = NULL;
  if (sbx_allowlist_add_rule(list, rule, &error)) {
    g_ptr_array_add(rules, rule);
  } else {
    /* A path the allowlist cannot hold (not normalisable here): left out,
     * so the program is refused it, which the comments say. */
    g_error_free(error);
    g_free(rule);
  }
}

/* The rules being built, and what they already grant (the fixed set and
 * the program included), so nothing is granted twice. */
typedef struct {
  sbx_allowlist *granted;
  GPtrArray *rules; /* of "KIND PATH" */
  GHashTable *uses; /* path as the program meant it -> SBX_LEARN_* bits */
  GPtrArray *paths; /* the keys of uses, deepest first */
} rule_set;

static unsigned uses_of(const rule_set *rs, const char *path) {
  return GPOINTER_TO_UINT(g_hash_table_lookup(rs->uses, path));
}

/* A directory made for temporary files: /tmp, /var/tmp, /dev/shm and
 * $TMPDIR (as g_get_tmp_dir() reads it), compared canonically. */
static bool is_temp_dir(const char *dir) {
  const char *const fixed[] = {"/tmp", "/var/tmp", "/dev/shm", g_get_tmp_dir()};
  g_autofree char *real = realpath(dir, NULL);
  for (size_t i = 0; i < G_N_ELEMENTS(fixed); i++) {
    if (strcmp(dir, fixed[i]) == 0)
      return true;
    g_autofree char *r = realpath(fixed[i], NULL);
    if (real && r && strcmp(real, r) == 0)
      return true;
  }
  return false;
}

/* A name that mkstemp(3), mkdtemp(3) or a program of its own made up:
 * one part (between '.', '-' and '_') of at least six letters and
 * digits that mixes upper and lower case, or has two digits or more
 * between letters (cc2l8XMv.cdtor.c, tmpa1b2c3; not python3.11 or
 * report2026). */
bool sbx_learn_name_looks_random(const char *path) {
  if (!path)
    return false;
  const char *name = strrchr(path, '/');
  name = name ? name + 1 : path;
  g_auto(GStrv) parts = g_strsplit_set(name, ".-_", -1);
  for (char **p = parts; *p; p++) {
    size_t n = strlen(*p), digits = 0, inner_digits = 0, last_letter = 0;
    bool upper = false, lower = false, alnum = true;
    for (size_t i = 0; i < n; i++) {
      char c = (*p)[i];
      upper |= g_ascii_isupper(c) != 0;
      lower |= g_ascii_islower(c) != 0;
      alnum &= g_ascii_isalnum(c) != 0;
      if (g_ascii_isalpha(c))
        last_letter = i;
    }
    for (size_t i = 0; i < n; i++)
      if (g_ascii_isdigit((*p)[i])) {
        digits++;
        inner_digits += i < last_letter;
      }
    if (n >= 6 && alnum &&
        ((upper && lower) || (inner_digits >= 2 && digits < n)))
      return true;
  }
  return false;
}

/* A temporary name: made and gone again within the run, made up, or in
 * a directory for temporary files. */
static bool is_temporary(const char *path) {
  struct stat st;
  g_autofree char *dir = g_path_get_dirname(path);
  return lstat(path, &st) != 0 || sbx_learn_name_looks_random(path) ||
         is_temp_dir(dir);
}

/* A directory a temporary name folds into: anything but "/" and the
 * home directory or one above it (a top-level directory such as /tmp is
 * fine). */
static bool may_hold_temporaries(const char *dir) {
  if (strcmp(dir, "/") == 0)
    return false;
  const char *home = g_get_home_dir();
  if (home && g_str_has_prefix(home, dir) &&
      (home[strlen(dir)] == '\0' || home[strlen(dir)] == '/'))
    return false;
  return true;
}

/* Creation: the directory written into, or just the name when that
 * directory may not be covered. A temporary name (is_temporary) folds
 * into its directory also where a lasting one would not (/tmp), so the
 * next run's new random names are created there too. */
static void add_create_rules(rule_set *rs) {
  g_autoptr(GPtrArray) dirs = g_ptr_array_new_with_free_func(g_free);
  for (guint i = 0; i < rs->paths->len; i++) {
    const char *p = g_ptr_array_index(rs->paths, i);
    struct stat st;
    if (!(uses_of(rs, p) & SBX_LEARN_CREATE) ||
        covered(rs->granted, p, SBX_PERM_CREATE) ||
        covered(rs->granted, p, SBX_PERM_READ_WRITE))
      continue;
    /* O_CREAT on a device or a FIFO (a shell's > /dev/null) writes; a
     * socket file was made by bind(). */
    if (lstat(p, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode) &&
        !S_ISLNK(st.st_mode) && !S_ISSOCK(st.st_mode))
      continue;
    g_autofree char *dir = g_path_get_dirname(p);
    bool fold =
        may_cover(dir) || (is_temporary(p) && may_hold_temporaries(dir));
    if (!fold) {
      add_rule(rs->rules, rs->granted, "create,stat-intermediate", p, false);
    } else if (!below_any(dir, dirs)) {
      g_ptr_array_add(dirs, g_strdup(dir));
      add_rule(rs->rules, rs->granted, "create,stat-intermediate", dir, true);
    }
  }
}

/* Probed and missing (a search along PATH or an include path, an
 * optional configuration file): an exact read rule on the name, so the
 * next run finds it missing again (ENOENT, as this run did) rather than
 * refused, whether it looks with stat, access(R_OK) or open. Not for
 * names the run made itself. */
static void add_missing_rules(rule_set *rs) {
  for (guint i = 0; i < rs->paths->len; i++) {
    const char *p = g_ptr_array_index(rs->paths, i);
    struct stat st;
    if ((uses_of(rs, p) & SBX_LEARN_CREATE) || lstat(p, &st) == 0 ||
        (errno != ENOENT && errno != ENOTDIR) ||
        covered(rs->granted, p, SBX_PERM_READ_ONLY))
      continue;
    /* connect() to a socket file that is not there needs the write
     * right to fail with ENOENT (nscd's, which glibc tries). */
    bool write = (uses_of(rs, p) & SBX_LEARN_WRITE) != 0;
    add_rule(rs->rules, rs->granted, write ? "read-write" : "read", p, false);
  }
}

/* Writing to files that exist: exactly those. */
static void add_write_rules(rule_set *rs) {
  for (guint i = 0; i < rs->paths->len; i++) {
    const char *p = g_ptr_array_index(rs->paths, i);
    if ((uses_of(rs, p) & SBX_LEARN_WRITE) &&
        !covered(rs->granted, p, SBX_PERM_READ_WRITE) && access(p, F_OK) == 0)
      add_rule(rs->rules, rs->granted, "read-write,stat-intermediate", p,
               false);
  }
}

/* Whether path is a symbolic link whose file no grant lets the program
 * read: a folded directory holds the link, and only an exact rule for it
 * admits where it leads (Debian's jvm.cfg -> /etc/java-17-openjdk/). */
static bool leads_out_of_grants(const sbx_allowlist *list, const char *path) {
  struct stat st;
  if (lstat(path, &st) != 0 || !S_ISLNK(st.st_mode))
    return false;
  g_autofree char *target = realpath(path, NULL);
  return target && !covered(list, target, SBX_PERM_READ_ONLY);
}

/* Reading: directories listed get exact rules, files are folded. */
static void add_read_rules(rule_set *rs, unsigned fold_min) {
  g_autoptr(GPtrArray) files = g_ptr_array_new();
  g_autoptr(GArray) read = g_array_new(FALSE, FALSE, sizeof(gboolean));
  for (guint i = 0; i < rs->paths->len; i++) {
    const char *p = g_ptr_array_index(rs->paths, i);
    gboolean is_read =
        (uses_of(rs, p) & (SBX_LEARN_READ | SBX_LEARN_EXEC)) != 0;
    struct stat st;
    if (covered(rs->granted, p, is_read ? SBX_PERM_READ_ONLY : SBX_PERM_STAT) ||
        stat(p, &st) != 0)
      continue;
    if (S_ISREG(st.st_mode)) {
      g_ptr_array_add(files, (gpointer)p);
      g_array_append_val(read, is_read);
    } else if (is_read) {
      add_rule(rs->rules, rs->granted, "read,stat-intermediate", p, false);
    }
  }
  g_autoptr(GPtrArray) folded = fold_reads(files, read, fold_min);
  /* Outermost first, so the inner ones are seen to be covered. */
  g_ptr_array_sort(folded, by_name);
  for (guint i = 0; i < folded->len; i++) {
    const char *d = g_ptr_array_index(folded, i);
    if (!covered_below(rs->granted, d, SBX_PERM_READ_ONLY))
      add_rule(rs->rules, rs->granted, "read,stat-intermediate", d, true);
  }
  for (guint i = 0; i < files->len; i++) {
    const char *f = g_ptr_array_index(files, i);
    if (g_array_index(read, gboolean, i) &&
        (!covered(rs->granted, f, SBX_PERM_READ_ONLY) ||
         leads_out_of_grants(rs->granted, f)))
      add_rule(rs->rules, rs->granted, "read,stat-intermediate", f, false);
  }
}

/* Looked at only: exact stat rules for what still exists. The entries of
 * a directory the program listed (it read the directory, so it knows the
 * names) fold into one stat rule below it when fold_min or more of them
 * were looked at (ls -l, find, make's timestamps): a name added later is
 * looked at as the others were. Looking is all that rule grants. */
static void add_stat_rules(rule_set *rs, unsigned fold_min) {
  g_autoptr(GHashTable) looked =
      g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; i < rs->paths->len; i++) {
    const char *p = g_ptr_array_index(rs->paths, i);
    struct stat st;
    if (covered(rs->granted, p, SBX_PERM_STAT) || lstat(p, &st) != 0)
      continue;
    char *dir = g_path_get_dirname(p);
    guint n = GPOINTER_TO_UINT(g_hash_table_lookup(looked, dir));
    g_hash_table_insert(looked, dir, GUINT_TO_POINTER(n + 1));
  }
  GHashTableIter it;
  gpointer key, value;
  g_hash_table_iter_init(&it, looked);
  while (g_hash_table_iter_next(&it, &key, &value)) {
    const char *dir = key;
    if (GPOINTER_TO_UINT(value) >= fold_min && may_cover(dir) &&
        covered(rs->granted, dir, SBX_PERM_READ_ONLY) &&
        !covered_below(rs->granted, dir, SBX_PERM_STAT))
      add_rule(rs->rules, rs->granted, "stat", dir, true);
  }
  for (guint i = 0; i < rs->paths->len; i++) {
    const char *p = g_ptr_array_index(rs->paths, i);
    struct stat st;
    if (!covered(rs->granted, p, SBX_PERM_STAT) && lstat(p, &st) == 0)
      add_rule(rs->rules, rs->granted, "stat", p, false);
  }
}

/* Symbolic links on the way to a path (/usr/local/cuda ->
 * cuda-13.0): the rules name canonical paths, but the program names the
 * links, and sbx-run follows a link only where it may look at it. Each
 * link in the directory part of a recorded path gets an exact stat
 * rule (the last component's link is admitted with the entry itself). */
static void add_link_rules(rule_set *rs, GHashTable *recorded) {
  g_autoptr(GHashTable) links =
      g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  GHashTableIter it;
  gpointer key;
  g_hash_table_iter_init(&it, recorded);
  while (g_hash_table_iter_next(&it, &key, NULL)) {
    const char *path = key;
    if (g_str_has_prefix(path, "/proc/"))
      continue;
    g_autofree char *dir = g_path_get_dirname(path);
    for (char *slash = dir + 1; slash && *slash;) {
      slash = strchr(slash, '/');
      if (slash)
        *slash = '\0';
      struct stat st;
      if (lstat(dir, &st) != 0) {
        if (slash)
          *slash = '/';
        break;
      }
      if (S_ISLNK(st.st_mode))
        g_hash_table_add(links, program_view(dir));
      if (slash)
        *slash++ = '/';
    }
  }
  g_autoptr(GPtrArray) sorted = g_ptr_array_new();
  g_hash_table_iter_init(&it, links);
  while (g_hash_table_iter_next(&it, &key, NULL))
    g_ptr_array_add(sorted, key);
  g_ptr_array_sort(sorted, by_name);
  for (guint i = 0; i < sorted->len; i++) {
    const char *l = g_ptr_array_index(sorted, i);
    if (!covered(rs->granted, l, SBX_PERM_STAT))
      add_rule(rs->rules, rs->granted, "stat", l, false);
  }
}

/* The sandbox's own /tmp and /dev/shm (sbx_run_tree_private_dirs)
 * serve a rerun wherever the run left nothing there that it used: names
 * it made and removed again (mkstemp files, FIFOs, its own sockets) or
 * looked for and did not find. Those names get no rule, which would make
 * the directory the host's (sbx_run_tree_plan_private), so the rerun
 * works in a directory no host process shares. A name there after the
 * run (a host's socket, a file the run left for its caller) keeps every
 * name in that directory, which the host's directory then serves. */
static void leave_private_dirs_private(GHashTable *uses) {
  for (size_t d = 0; d < SBX_RUN_TREE_N_PRIVATE_DIRS; d++) {
    const char *dir = sbx_run_tree_private_dirs[d];
    size_t n = strlen(dir);
    g_autoptr(GPtrArray) within = g_ptr_array_new();
    bool host_needed = false;
    GHashTableIter it;
    gpointer key;
    g_hash_table_iter_init(&it, uses);
    while (!host_needed && g_hash_table_iter_next(&it, &key, NULL)) {
      const char *p = key;
      bool is_dir = strcmp(p, dir) == 0;
      if (!is_dir && !below(p, dir))
        continue;
      struct stat st;
      host_needed =
          !is_dir && p[n + 1] != '\0' &&
          (lstat(p, &st) == 0 || (errno != ENOENT && errno != ENOTDIR));
      g_ptr_array_add(within, key);
    }
    for (guint i = 0; !host_needed && i < within->len; i++)
      g_hash_table_remove(uses, g_ptr_array_index(within, i));
  }
}

GPtrArray *sbx_learn_broker_rules(const sbx_learn_record *r,
                                  const sbx_learn_output *o, GError **error) {
  rule_set rs = {.granted = sbx_allowlist_new("sbx-learn")};
  if (!sbx_run_add_fixed_entries(rs.granted, error)) {
    sbx_allowlist_free(rs.granted);
    return NULL;
  }
  if (r->program) {
    sbx_allowlist_add(rs.granted, r->program, SBX_PERM_READ_ONLY, NULL);
    g_autofree char *real = realpath(r->program, NULL);
    if (real)
      sbx_allowlist_add(rs.granted, real, SBX_PERM_READ_ONLY, NULL);
  }
  rs.rules = g_ptr_array_new_with_free_func(g_free);
  rs.uses = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  GHashTableIter it;
  gpointer key, value;
  g_hash_table_iter_init(&it, r->paths);
  while (g_hash_table_iter_next(&it, &key, &value)) {
    char *p = program_view(key);
    unsigned bits = GPOINTER_TO_UINT(value) | uses_of(&rs, p);
    g_hash_table_replace(rs.uses, p, GUINT_TO_POINTER(bits));
  }
  leave_private_dirs_private(rs.uses);
  rs.paths = g_ptr_array_new();
  g_hash_table_iter_init(&it, rs.uses);
  while (g_hash_table_iter_next(&it, &key, NULL))
    g_ptr_array_add(rs.paths, key);
  g_ptr_array_sort(rs.paths, by_depth_desc);

  add_create_rules(&rs);
  add_write_rules(&rs);
  add_read_rules(&rs, o->fold_min);
  add_stat_rules(&rs, o->fold_min);
  add_missing_rules(&rs);
  add_link_rules(&rs, r->paths);

  g_ptr_array_free(rs.paths, TRUE);
  g_hash_table_unref(rs.uses);
  sbx_allowlist_free(rs.granted);
  g_ptr_array_sort(rs.rules, by_name);
  return rs.rules;
}

/* ---- the profile and the files ------------------------------------------ */

static gint by_uint(gconstpointer a, gconstpointer b) {
  unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
  return x < y ? -1 : x > y;
}

/* The ports of one table of the record (stored as port + 1), sorted, as
 * profile list items. */
static char **port_list(GHashTable *ports) {
  g_autoptr(GArray) sorted = g_array_new(FALSE, FALSE, sizeof(unsigned));
  GHashTableIter it;
  gpointer key;
  g_hash_table_iter_init(&it, ports);
  while (g_hash_table_iter_next(&it, &key, NULL)) {
    unsigned port = GPOINTER_TO_UINT(key) - 1;
    g_array_append_val(sorted, port);
  }
  g_array_sort(sorted, by_uint);
  char **out = g_new0(char *, sorted->len + 1);
  for (guint i = 0; i < sorted->len; i++)
    out[i] = g_strdup_printf("%u", g_array_index(sorted, unsigned, i));
  return out;
}

static void append_addresses(GString *s, const char *what, GHashTable *set) {
  g_autoptr(GPtrArray) all = g_ptr_array_new();
  GHashTableIter it;
  gpointer key;
  g_hash_table_iter_init(&it, set);
  while (g_hash_table_iter_next(&it, &key, NULL))
    g_ptr_array_add(all, key);
  g_ptr_array_sort(all, by_name);
  for (guint i = 0; i < all->len; i++)
    g_string_append_printf(s, " %s %s\n", what,
                           (const char *)g_ptr_array_index(all, i));
}

static char *profile_text(const sbx_learn_record *r, const sbx_learn_output *o,
                          GPtrArray *rules, bool network, GError **error) {
  g_autofree char *base = g_path_get_basename(o->name);
  g_autofree char *cmd = sbx_learn_command_line(o->argv);
  g_autoptr(GKeyFile) kf = g_key_file_new();
  g_autofree char *desc = g_strdup_printf("Learned by sbx-learn from: %s", cmd);
  g_key_file_set_string(kf, "profile", "description", desc);
  g_autofree char *policy = g_strconcat(base, ".policy", NULL);
  g_key_file_set_string(kf, "profile", "seccomp", policy);
  /* As sbx-run without --require: where a kernel lacks user namespaces
   * or Landlock, the profile runs without them and says so. */
  static const char *const required[] = {"seccomp", "broker"};
  g_key_file_set_string_list(kf, "profile", "require", required,
                             G_N_ELEMENTS(required));
  g_key_file_set_string_list(kf, "broker", "rules",
                             (const char *const *)rules->pdata, rules->len);
  static const char *const all[] = {"user", "pid",   "net",   "ipc",
                                    "uts",  "mount", "cgroup"};
  static const char *const no_net[] = {"user", "pid",   "ipc",
                                       "uts",  "mount", "cgroup"};
  if (network)
    g_key_file_set_string_list(kf, "namespaces", "enter", no_net,
                               G_N_ELEMENTS(no_net));
  else
    g_key_file_set_string_list(kf, "namespaces", "enter", all,
                               G_N_ELEMENTS(all));
  g_key_file_set_boolean(kf, "namespaces", "empty-root", FALSE);
  if (network) {
    /* Only the ports this run connected to and bound (sbx-run's
     * supervisor holds the program to them). */
    g_auto(GStrv) connect = port_list(r->connect_ports);
    g_auto(GStrv) bind = port_list(r->bind_ports);
    g_key_file_set_string_list(kf, "network", "connect-ports",
                               (const char *const *)connect,
                               g_strv_length(connect));
    g_key_file_set_string_list(kf, "network", "bind-ports",
                               (const char *const *)bind, g_strv_length(bind));
    g_autoptr(GString) seen =
        g_string_new(" The ports seen; the addresses were (not enforced):\n");
    append_addresses(seen, "connected to", r->connect_addresses);
    append_addresses(seen, "bound to", r->bind_addresses);
    if (!g_key_file_set_comment(kf, "network", NULL, seen->str, error))
      return NULL;
  }
  g_autofree char *head = g_strdup_printf(
      " %s.profile: what one run of\n   %s\n needed, recorded by sbx-learn.\n"
      " Use it with: sbx-run --profile %s.profile -- COMMAND\n%s%s\n",
      base, cmd, o->name,
      network ? " The program made network sockets: the network is kept "
                "(no net namespace),\n limited to the ports it used "
                "([network]).\n"
              : "",
      " A learned profile is only as complete as the run that produced\n"
      " it: files this run did not touch are refused. Review the rules.");
  if (!g_key_file_set_comment(kf, "profile", NULL, head, error))
    return NULL;
  return g_key_file_to_data(kf, NULL, error);
}

/* Everything written must load exactly as sbx-run will load it. */
static gboolean check_output(const char *profile_path, GError **error) {
  g_autoptr(sbx_profile) prof = sbx_profile_load(profile_path, NULL, error);
  if (!prof)
    return FALSE;
  g_autoptr(GPtrArray) pols = sbx_profile_policies(prof, NULL, error);
  if (!pols)
    return FALSE;
  for (guint i = 0; i < pols->len; i++) {
    sbx_bpf_program prog = {0};
    if (!sbx_bpf_compile(g_ptr_array_index(pols, i), &prog, error))
      return FALSE;
    sbx_bpf_program_clear(&prog);
  }
  sbx_allowlist *list = sbx_allowlist_new("sbx-learn");
  gboolean ok = TRUE;
  for (char **rule = prof->broker_rules; ok && rule && *rule; rule++)
    ok = sbx_allowlist_add_rule(list, *rule, error);
  sbx_allowlist_free(list);
  return ok;
}

gboolean sbx_learn_write(const sbx_learn_record *r, const sbx_learn_output *o,
                         sbx_learn_summary *summary, GError **error) {
  g_autofree char *base = g_path_get_basename(o->name);
  g_autofree char *policy_name = g_strconcat(base, ".policy", NULL);
  g_autofree char *profile_name = g_strconcat(base, ".profile", NULL);
  if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0 ||
      g_str_has_suffix(o->name, "/") || sbx_builtin_find(policy_name) ||
      sbx_builtin_find(profile_name)) {
    g_set_error(error, SBX_LEARN_ERROR, SBX_LEARN_ERROR_USAGE,
                "-o %s: not a usable name (a built-in policy or profile "
                "called %s would be loaded instead of the learned one); "
                "choose another name",
                o->name, base);
    return FALSE;
  }
  g_autofree char *policy = sbx_learn_policy_text(r, o, summary);
  GError *local = NULL;
  sbx_policy *pol = sbx_policy_parse_string(policy, policy_name, NULL, &local);
  if (pol) {
    sbx_bpf_program prog = {0};
    if (sbx_bpf_compile(pol, &prog, &local))
      sbx_bpf_program_clear(&prog);
    sbx_policy_free(pol);
  }
  if (local) {
    g_set_error(error, SBX_LEARN_ERROR, SBX_LEARN_ERROR_OUTPUT,
                "the learned policy does not compile (nothing written): %s",
                local->message);
    g_error_free(local);
    return FALSE;
  }
  g_autoptr(GPtrArray) rules = sbx_learn_broker_rules(r, o, error);
  if (!rules)
    return FALSE;
  g_autofree char *profile = profile_text(r, o, rules, summary->network, error);
  if (!profile)
    return FALSE;
  summary->n_broker_rules = rules->len;
  summary->execs = false;
  GHashTableIter it;
  gpointer key, value;
  g_hash_table_iter_init(&it, r->paths);
  while (g_hash_table_iter_next(&it, &key, &value))
    summary->execs |= (GPOINTER_TO_UINT(value) & SBX_LEARN_EXEC) != 0;
  summary->traces = false;
  for (int nr = 0; nr < r->n_syscalls; nr++)
    summary->traces |= r->syscalls[nr].count && sbx_syscall_is_tracing(nr);
  summary->policy_path = g_strconcat(o->name, ".policy", NULL);
  summary->profile_path = g_strconcat(o->name, ".profile", NULL);
  if (!g_file_set_contents(summary->policy_path, policy, -1, error) ||
      !g_file_set_contents(summary->profile_path, profile, -1, error))
    return FALSE;
  if (!check_output(summary->profile_path, &local)) {
    unlink(summary->policy_path);
    unlink(summary->profile_path);
    g_set_error(error, SBX_LEARN_ERROR, SBX_LEARN_ERROR_OUTPUT,
                "the learned profile does not load (removed): %s",
                local->message);
    g_error_free(local);
    return FALSE;
  }
  return TRUE;
}
