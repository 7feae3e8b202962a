/* Building sbx-run's plan; see plan.h.
 *
 * Trusts the user's options and the files they name (they are policy);
 * trusts nothing about the program except what its headers say it needs
 * to start. Refuses policy layers that would use the supervisor's
 * listener, layers that forbid the exec sbx-run has to make, and paths
 * that do not exist where existence is required.
 */
#include "sandbox/runner/plan.h"

#include <elf.h>
#include <linux/audit.h>
#include <errno.h>
#include <pwd.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox/policy/builtin/builtin.h"
#include "sandbox/policy/builtin/profile.h"
#include "sandbox/policy/parser.h"
#include "sandbox/runner/baseline.h"
#include "sandbox/runner/stacked.h"
#include "sandbox/policy/compiler.h"

GQuark sbx_run_error_quark(void) {
  return g_quark_from_static_string("sbx-run-error-quark");
}

void sbx_run_options_clear(sbx_run_options *o) {
  g_clear_pointer(&o->allow_read, g_strfreev);
  g_clear_pointer(&o->allow_write, g_strfreev);
  g_clear_pointer(&o->policies, g_strfreev);
  g_clear_pointer(&o->profile, g_free);
  g_clear_pointer(&o->require, g_strfreev);
  g_clear_pointer(&o->setenv, g_strfreev);
  g_clear_pointer(&o->unsetenv, g_strfreev);
  g_clear_pointer(&o->audit, g_free);
  g_clear_pointer(&o->user, g_free);
  g_clear_pointer(&o->argv, g_strfreev);
}

void sbx_run_plan_free(sbx_run_plan *p) {
  if (!p)
    return;
  sbx_allowlist_free(p->allowlist);
  g_free(p->mode_reason_detail);
  sbx_run_tree_clear(&p->tree);
  sbx_run_account_files_clear(p->accounts, p->n_accounts);
  g_clear_pointer(&p->layer_sources, g_ptr_array_unref);
  g_clear_pointer(&p->exec_files, g_ptr_array_unref);
  sbx_layer_plan_clear(&p->init);
  sbx_layer_plan_clear(&p->program_filters);
  g_clear_pointer(&p->reported, g_ptr_array_unref);
  g_free(p->program);
  g_strfreev(p->argv);
  g_strfreev(p->envp);
  g_free(p->audit);
  g_free(p);
}

/* ---- the program -------------------------------------------------------- */

static char *find_program(const char *name, char **envp, GError **error) {
  if (strchr(name, '/')) {
    if (access(name, X_OK) != 0) {
      int err = errno;
      g_set_error(error, SBX_RUN_ERROR,
                  err == ENOENT || err == ENOTDIR ? SBX_RUN_ERROR_NOT_FOUND
                                                  : SBX_RUN_ERROR_PROGRAM,
                  "cannot execute %s: %s", name, g_strerror(err));
      return NULL;
    }
    return g_canonicalize_filename(name, NULL);
  }
  const char *path = g_environ_getenv(envp, "PATH");
  if (!path)
    path = "/usr/local/bin:/usr/bin:/bin";
  g_auto(GStrv) dirs = g_strsplit(path, ":", -1);
  for (char **d = dirs; *d; d++) {
    if (!**d || !g_path_is_absolute(*d))
      continue;
    g_autofree char *cand = g_build_filename(*d, name, NULL);
    struct stat st;
    if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0)
      return g_steal_pointer(&cand);
  }
  g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_NOT_FOUND,
              "%s: command not found in PATH (%s)", name, path);
  return NULL;
}

/* The ELF interpreter (PT_INTERP) of a 64-bit executable, or NULL for a
 * static one or anything that is not ELF. */
static char *elf_interpreter(int fd) {
  Elf64_Ehdr eh;
  if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
      memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum > 256)
    return NULL;
  for (unsigned i = 0; i < eh.e_phnum; i++) {
    Elf64_Phdr ph;
    off_t at = (off_t)(eh.e_phoff + (uint64_t)i * sizeof(ph));
    if (pread(fd, &ph, sizeof(ph), at) != (ssize_t)sizeof(ph))
      return NULL;
    if (ph.p_type != PT_INTERP || ph.p_filesz == 0 || ph.p_filesz > PATH_MAX)
      continue;
    g_autofree char *buf = g_malloc0(ph.p_filesz + 1);
    if (pread(fd, buf, ph.p_filesz, (off_t)ph.p_offset) != (ssize_t)ph.p_filesz)
      return NULL;
    buf[ph.p_filesz] = '\0';
    return g_path_is_absolute(buf) ? g_steal_pointer(&buf) : NULL;
  }
  return NULL;
}

/* A script's "#!" interpreter, or NULL. */
static char *script_interpreter(int fd) {
  char buf[256];
  ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
  if (n < 3 || buf[0] != '#' || buf[1] != '!')
    return NULL;
  buf[n] = '\0';
  char *p = buf + 2;
  while (*p == ' ' || *p == '\t')
    p++;
  char *end = p;
  while (*end && *end != ' ' && *end != '\t' && *end != '\n')
    end++;
  *end = '\0';
  return g_path_is_absolute(p) ? g_strdup(p) : NULL;
}

/* What the program needs to start: its interpreters, outermost first
 * (a script's interpreter and that one's ELF loader, or the loader).
 * Only regular files are read, opened without waiting: a FIFO named as
 * the program (or as a script's interpreter) would hold sbx-run in
 * open(2) until a writer came; its exec fails as it does outside. */
static GPtrArray *startup_files(const char *program) {
  GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
  g_autofree char *cur = g_strdup(program);
  for (int depth = 0; depth < 4 && cur; depth++) {
    int fd = open(cur, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
      break;
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
      close(fd);
      break;
    }
    char *next = script_interpreter(fd);
    bool script = next != NULL;
    if (!next)
      next = elf_interpreter(fd);
    close(fd);
    if (!next)
      break;
    g_ptr_array_add(out, g_strdup(next));
    g_free(cur);
    cur = next;
    if (!script)
      break;
  }
  return out;
}

/* ---- the allowlist ------------------------------------------------------ */

typedef struct {
  const char *path;
  unsigned rights;
} fixed_entry;

/* The loader's and libc's needs (plan.h lists them and why). */
static const fixed_entry fixed_entries[] = {
    {"/etc/ld.so.cache", SBX_PERM_READ_ONLY},
    {"/etc/ld.so.preload", SBX_PERM_READ_ONLY},
    {"/lib/x86_64-linux-gnu/", SBX_PERM_READ_ONLY},
    {"/usr/lib/x86_64-linux-gnu/", SBX_PERM_READ_ONLY},
    {"/lib64/ld-linux-x86-64.so.2", SBX_PERM_READ_ONLY},
    {"/usr/lib/locale/", SBX_PERM_READ_ONLY},
    {"/usr/share/locale/", SBX_PERM_READ_ONLY},
    {"/etc/locale.alias", SBX_PERM_READ_ONLY},
    {"/etc/localtime", SBX_PERM_READ_ONLY},
    /* libc's time zones: TZ=Europe/Paris, and /etc/localtime's link. */
    {"/usr/share/zoneinfo/", SBX_PERM_READ_ONLY},
    {"/dev/null", SBX_PERM_READ_WRITE},
    {"/dev/zero", SBX_PERM_READ_WRITE},
    {"/dev/full", SBX_PERM_READ_WRITE},
    {"/dev/tty", SBX_PERM_READ_WRITE},
    {"/dev/ptmx", SBX_PERM_READ_WRITE},
    {"/dev/random", SBX_PERM_READ_ONLY},
    {"/dev/urandom", SBX_PERM_READ_ONLY},
    {"/proc/filesystems", SBX_PERM_READ_ONLY},
    {"/sys/fs/selinux", SBX_PERM_READ_ONLY},
    {"/selinux", SBX_PERM_READ_ONLY},
    {"/etc/selinux/config", SBX_PERM_READ_ONLY},
};

/* Directories whose programs --allow-exec makes runnable. */
const char *const sbx_run_exec_dirs[] = {"/usr/bin/", "/bin/", NULL};

static gboolean add_fixed(sbx_allowlist *list, const char *path,
                          unsigned rights, GError **error) {
  /* A fixed entry whose directory does not exist on this host is simply
   * not needed here. */
  g_autofree char *dir = g_path_get_dirname(path);
  if (!g_file_test(dir, G_FILE_TEST_IS_DIR))
    return TRUE;
  if (g_str_has_suffix(path, "/") && !g_file_test(path, G_FILE_TEST_IS_DIR))
    return TRUE;
  /* The directories above stay stat-able, as the default mode's tree
   * holds them (python stats /usr, its prefix, before it reads its
   * library). */
  return sbx_allowlist_add(list, path, rights | SBX_PERM_INTERMEDIATE, error);
}

gboolean sbx_run_add_fixed_entries(sbx_allowlist *list, GError **error) {
  for (size_t i = 0; i < G_N_ELEMENTS(fixed_entries); i++)
    if (!add_fixed(list, fixed_entries[i].path, fixed_entries[i].rights, error))
      return FALSE;
  return TRUE;
}

/* --allow-read / --allow-write PATH: a directory covers its tree; a file
 * (or, for write, a name yet to be created) covers exactly itself. Every
 * directory above stays stat-able, so realpath() and friends work. */
static gboolean add_user_path(sbx_allowlist *list, const char *option,
                              const char *given, bool write, GError **error) {
  g_autofree char *abs = g_canonicalize_filename(given, NULL);
  struct stat st;
  bool exists = stat(abs, &st) == 0;
  if (!exists && !write) {
    int err = errno;
    g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_USAGE, "%s %s: %s", option,
                given, g_strerror(err));
    return FALSE;
  }
  bool dir = exists && S_ISDIR(st.st_mode);
  unsigned rights = write ? SBX_PERM_READ_WRITE_CREATE : SBX_PERM_READ_ONLY;
  rights |= SBX_PERM_INTERMEDIATE;
  g_autofree char *entry = dir && strcmp(abs, "/") != 0
                               ? g_strconcat(abs, "/", NULL)
                               : g_strdup(abs);
  GError *local = NULL;
  if (!sbx_allowlist_add(list, entry, rights, &local)) {
    g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_USAGE, "%s %s: %s", option,
                given, local->message);
    g_error_free(local);
    return FALSE;
  }
  return TRUE;
}

/* ---- Landlock ----------------------------------------------------------- */

static bool is_exec_file(const char *path, GPtrArray *exec_files) {
  for (guint i = 0; i < exec_files->len; i++)
    if (strcmp(path, g_ptr_array_index(exec_files, i)) == 0)
      return true;
  return false;
}

/* What a write grant lets the program do itself. Under the supervisor,
 * not make a socket file, a FIFO or a symbolic link: the supervisor makes
 * those (its helper binds socket files, restricted by Landlock to the
 * directory granted), so the kernel refuses any such call that reached
 * it. In the default mode the program makes them itself, inside its
 * write grants (the baseline lets no device node's mknod through). */
#define SUPERVISED_WRITE_RIGHTS                                              \
  (SBX_LANDLOCK_RIGHTS_READ_WRITE &                                          \
   ~(uint64_t)(LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | \
               LANDLOCK_ACCESS_FS_MAKE_SYM))

/* The same rules as the allowlist, enforced by the kernel on the objects
 * the program itself opens or executes: in the default mode, with the
 * mount tree, what decides; under the supervisor a second line, and the
 * only one for execve. */
static gboolean build_landlock(sbx_run_plan *p, GPtrArray *exec_files,
                               int min_abi, GError **error) {
  sbx_landlock_builder *b = sbx_landlock_builder_new();
  /* Abstract unix names are refused by the supervisor in every mode (the
   * host's local services under --net); the scope says so again in the
   * kernel. */
  uint64_t scoped = LANDLOCK_SCOPE_SIGNAL | LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET;
  /* TCP is the program's own business in a network namespace of its own
   * (sbx_run_plan_own_network); without one it would be the host's. */
  uint64_t net =
      p->net || sbx_run_plan_own_network(p) ? 0 : SBX_LANDLOCK_NET_ALL;
  sbx_landlock_set_handled(b, SBX_LANDLOCK_FS_ALL, net, scoped);
  size_t n = sbx_allowlist_n_entries(p->allowlist);
  for (size_t i = 0; i < n; i++) {
    const sbx_allow_entry *e = sbx_allowlist_entry(p->allowlist, i);
    if (e->proc_self || (e->rights & SBX_PERM_GRANTABLE))
      continue; /* GRANTABLE: a ceiling for a broker's per-worker rules */
    uint64_t rights = 0;
    if (sbx_allow_entry_writes(e))
      rights = p->mode == SBX_RUN_MODE_KERNEL ? SBX_LANDLOCK_RIGHTS_READ_WRITE
                                              : SUPERVISED_WRITE_RIGHTS;
    else if (e->rights & SBX_PERM_READ)
      rights = SBX_LANDLOCK_RIGHTS_READ;
    if (!rights)
      continue;
    if (p->allow_exec || is_exec_file(e->path, exec_files))
      rights |= LANDLOCK_ACCESS_FS_EXECUTE;
    /* An exact entry for a directory grants the directory itself (its
     * listing), as the resolver reads it: a rule on a directory would
     * reach every file below it. */
    struct stat st;
    if (!e->recursive && stat(e->path, &st) == 0 && S_ISDIR(st.st_mode))
      rights &= LANDLOCK_ACCESS_FS_READ_DIR;
    if (!rights)
      continue;
    if (!sbx_landlock_allow_path(b, e->path, rights, SBX_LANDLOCK_PATH_OPTIONAL,
                                 error)) {
      sbx_landlock_builder_free(b);
      return FALSE;
    }
  }
  for (guint i = 0; i < exec_files->len; i++) {
    if (!sbx_landlock_allow_path(b, g_ptr_array_index(exec_files, i),
                                 SBX_LANDLOCK_RIGHTS_READ_EXEC,
                                 SBX_LANDLOCK_PATH_OPTIONAL, error)) {
      sbx_landlock_builder_free(b);
      return FALSE;
    }
  }
  /* Optional unless required: without it the plan falls back to the
   * supervisor, which still decides every file access; docs/sbx-run.md
   * says what is lost (exec is then unchecked). */
  GError *local = NULL;
  sbx_landlock_need need = (p->require & SBX_REQUIRE_LANDLOCK)
                               ? SBX_LANDLOCK_REQUIRED
                               : SBX_LANDLOCK_OPTIONAL;
  if (!sbx_layer_plan_set_landlock(&p->init, b, need, min_abi, &local)) {
    g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_SETUP, "%s",
                local->message);
    g_error_free(local);
    return FALSE;
  }
  return TRUE;
}

/* ---- seccomp ------------------------------------------------------------ */

/* The first rule of pol with an action of this kind (NULL: none). */
static const sbx_rule *rule_with_action(const sbx_policy *pol,
                                        sbx_action_kind kind) {
  for (size_t i = 0; i < pol->n_rules; i++)
    if (pol->rules[i].on_match.kind == kind ||
        pol->rules[i].on_mismatch.kind == kind)
      return &pol->rules[i];
  return NULL;
}

/* Refuses a layer that answers some call with `kind`, naming the rule
 * that does. */
static gboolean refuse_action(const sbx_policy *pol, const char *name,
                              sbx_action_kind kind, const char *why,
                              GError **error) {
  const sbx_rule *r = rule_with_action(pol, kind);
  if (!r && pol->default_action.kind != kind)
    return TRUE;
  if (r)
    g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_POLICY, "%s:%u: %s: %s",
                r->file ? r->file : name, r->line, r->name, why);
  else
    g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_POLICY,
                "%s: the default action: %s", name, why);
  return FALSE;
}

/* A stacked layer must not answer with user-notify (the kernel would
 * pick that layer, which has no listener, and fail the call with ENOSYS);
 * under --allow-ptrace it must not hand a call to a tracer (the program,
 * tracing its own processes, would decide it); and it must let sbx-run's
 * own execve through. */
static gboolean check_layer(const sbx_policy *pol, const char *name,
                            bool allow_ptrace, GError **error) {
  if (!refuse_action(pol, name, SBX_ACTION_USER_NOTIF,
                     "user-notify is reserved for sbx-run's supervisor; a "
                     "stacked layer may allow, deny (return ERRNO) or kill",
                     error))
    return FALSE;
  if (allow_ptrace &&
      !refuse_action(pol, name, SBX_ACTION_TRACE,
                     "'trace' lets a tracer decide the call, and under "
                     "--allow-ptrace the program's own tracer would; deny "
                     "it instead (return ERRNO)",
                     error))
    return FALSE;
  struct seccomp_data d = {.nr = __NR_execve, .arch = AUDIT_ARCH_X86_64};
  uint32_t ret = sbx_policy_eval(pol, &d);
  uint32_t action = ret & SECCOMP_RET_ACTION_FULL;
  if (action != SECCOMP_RET_ALLOW && action != SECCOMP_RET_LOG) {
    g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_POLICY,
                "%s does not allow execve, so the program could never start "
                "(add 'execve: 1')",
                name);
    return FALSE;
  }
  return TRUE;
}

static void layer_source_free(gpointer data) {
  sbx_run_layer_source *l = data;
  g_free(l->name);
  sbx_bpf_program_clear(&l->prog);
  g_free(l);
}

/* Checks and compiles a stacked layer; it is installed by install_layer
 * when the mode is known. */
static gboolean add_layer(sbx_run_plan *p, sbx_policy *pol, const char *name,
                          GError **error) {
  if (!check_layer(pol, name, p->allow_ptrace, error))
    return FALSE;
  GError *local = NULL;
  sbx_run_layer_source *l = g_new0(sbx_run_layer_source, 1);
  if (!sbx_bpf_compile(pol, &l->prog, &local)) {
    g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_POLICY, "%s: %s", name,
                local->message);
    g_error_free(local);
    g_free(l);
    return FALSE;
  }
  l->name = g_strdup(name);
  g_ptr_array_add(p->layer_sources, l);
  return TRUE;
}

static gboolean install_layer(sbx_run_plan *p, const sbx_run_layer_source *src,
                              GError **error) {
  const char *name = src->name;
  GError *local = NULL;
  sbx_bpf_program prog;
  sbx_bpf_program_copy(&prog, &src->prog);
  /* Under the supervisor its refusals go through the baseline, which
   * reports them (stacked.h); the filter itself keeps only what a signal
   * shows. In the default mode nothing reports: the layer is installed as
   * written. */
  bool reported =
      p->mode == SBX_RUN_MODE_SUPERVISOR && sbx_run_stacked_reportable(&prog);
  sbx_bpf_program installed;
  if (reported)
    sbx_run_stacked_without_errno(&prog, &installed);
  else
    sbx_bpf_program_copy(&installed, &prog);
  gboolean ok =
      sbx_layer_plan_add_filter(&p->program_filters, name, &installed, &local);
  sbx_bpf_program_clear(&installed);
  if (!ok) {
    g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_USAGE, "%s",
                local->message);
    g_error_free(local);
    sbx_bpf_program_clear(&prog);
    return FALSE;
  }
  p->n_program_filters++;
  if (reported) {
    sbx_run_reported_layer *l = g_new0(sbx_run_reported_layer, 1);
    l->reason = g_strdup_printf("not allowed by %s", name);
    l->prog = prog;
    g_ptr_array_add(p->reported, l);
  } else {
    sbx_bpf_program_clear(&prog);
  }
  return TRUE;
}

/* The mode's baseline, behind the reported layers' refusals (stacked.h). */
static gboolean add_baseline(sbx_run_plan *p, GError **error) {
  sbx_bpf_program baseline;
  sbx_run_baseline(p->mode == SBX_RUN_MODE_KERNEL, p->allow_ptrace, &baseline);
  if (p->reported->len > 0) {
    g_autofree const sbx_bpf_program **parts =
        g_new(const sbx_bpf_program *, p->reported->len);
    for (guint i = 0; i < p->reported->len; i++)
      parts[i] =
          &((sbx_run_reported_layer *)g_ptr_array_index(p->reported, i))->prog;
    sbx_bpf_program composed;
    GError *local = NULL;
    gboolean ok = sbx_run_stacked_compose(parts, p->reported->len, &baseline,
                                          &composed, &local);
    sbx_bpf_program_clear(&baseline);
    if (!ok) {
      g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_POLICY,
                  "the stacked policies cannot be reported through the "
                  "baseline: %s",
                  local->message);
      g_error_free(local);
      return FALSE;
    }
    baseline = composed;
  }
  gboolean ok = sbx_layer_plan_add_filter(&p->init,
                                          p->mode == SBX_RUN_MODE_KERNEL
                                              ? SBX_RUN_KERNEL_BASELINE_POLICY
                                              : SBX_RUN_BASELINE_POLICY,
                                          &baseline, error);
  sbx_bpf_program_clear(&baseline);
  return ok;
}

/* ---- the profile -------------------------------------------------------- */

/* --require, repeatable, each a comma-separated list. */
static gboolean parse_require(char **given, unsigned *out, GError **error) {
  g_autofree char *joined = g_strjoinv(",", given);
  g_auto(GStrv) names = g_strsplit(joined, ",", -1);
  for (char **n = names; !*names || *n; n++) {
    if (*n)
      g_strstrip(*n);
    if (!*n || !**n) {
      g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_USAGE,
                  "--require: an empty layer name");
      return FALSE;
    }
  }
  GError *local = NULL;
  unsigned bits = 0;
  if (!sbx_profile_parse_require((const char *const *)names, &bits, &local)) {
    g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_USAGE, "--require: %s",
                local->message);
    g_error_free(local);
    return FALSE;
  }
  *out |= bits;
  return TRUE;
}

/* A name with a '/' is a file; so is NAME.profile when no built-in has
 * that name and the current directory holds it (what sbx-learn writes). */
static sbx_profile *load_profile(const char *name, GError **error) {
  bool is_file =
      strchr(name, '/') != NULL ||
      (g_str_has_suffix(name, ".profile") && !sbx_builtin_find(name) &&
       g_file_test(name, G_FILE_TEST_IS_REGULAR));
  if (is_file)
    return sbx_profile_load(name, NULL, error);
  g_autofree char *user_dir =
      g_build_filename(g_get_user_config_dir(), "sbx", "profiles", NULL);
  const char *dirs[] = {user_dir, "/etc/sbx/profiles"};
  GError *first = NULL;
  for (size_t i = 0; i < G_N_ELEMENTS(dirs); i++) {
    GError *local = NULL;
    sbx_profile *prof = sbx_profile_load(name, dirs[i], &local);
    if (prof) {
      g_clear_error(&first);
      return prof;
    }
    if (!g_error_matches(local, SBX_PROFILE_ERROR,
                         SBX_PROFILE_ERROR_NOT_FOUND)) {
      g_clear_error(&first);
      g_propagate_error(error, local);
      return NULL;
    }
    if (!first)
      first = local;
    else
      g_error_free(local);
  }
  g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_USAGE,
              "--profile %s: no built-in profile, and no %s.profile in %s "
              "or /etc/sbx/profiles (give a path to use a file)",
              name, name, user_dir);
  g_clear_error(&first);
  return NULL;
}

/* The profile's contribution: broker rules, stacked layers (sbx-run's own
 * baseline, named "sbx-run.policy", is always there and is skipped),
 * namespaces (without "net" the network is kept), Landlock's minimum,
 * rlimits, umask and the denied errno. */
static gboolean apply_profile(sbx_run_plan *p, const sbx_profile *prof,
                              int *min_abi, GError **error) {
  for (char **r = prof->broker_rules; r && *r; r++) {
    GError *local = NULL;
    if (!sbx_allowlist_add_rule(p->allowlist, *r, &local)) {
      g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_USAGE,
                  "%s: [broker] rules: %s", prof->source, local->message);
      g_error_free(local);
      return FALSE;
    }
  }
  if (prof->umask_set)
    sbx_allowlist_set_umask(p->allowlist, prof->umask);
  if (prof->denied_errno &&
      !sbx_allowlist_set_denied_errno(p->allowlist, prof->denied_errno, error))
    return FALSE;
  /* [namespaces] empty-root is a worker's setting: sbx-run keeps the
   * host's tree, because the paths the program names must mean the same
   * to the supervisor that opens them (sbx-run(1), BUGS). */
  if (prof->namespaces) {
    p->ns.namespaces = prof->namespaces | SBX_NS_USER | SBX_NS_PID;
    if (!(prof->namespaces & SBX_NS_NET))
      p->net = true;
  }
  p->connect_ports = prof->connect_ports;
  p->bind_ports = prof->bind_ports;
  *min_abi = prof->landlock_min_abi;
  p->require |= prof->require;
  GError *local = NULL;
  /* Checked now, installed with the mode's layers. */
  sbx_layer_plan check;
  sbx_layer_plan_init(&check, "sbx-run", 0);
  gboolean limits_ok = sbx_layer_plan_add_rlimits(&check, prof->rlimits,
                                                  prof->n_rlimits, &local);
  sbx_layer_plan_clear(&check);
  if (!limits_ok) {
    g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_USAGE, "%s: [rlimits]: %s",
                prof->source, local->message);
    g_error_free(local);
    return FALSE;
  }
  memcpy(p->rlimits, prof->rlimits, prof->n_rlimits * sizeof(sbx_rlimit));
  p->n_rlimits = prof->n_rlimits;

  g_autoptr(GPtrArray) names = g_ptr_array_new();
  for (char **s = prof->seccomp; s && *s; s++)
    if (strcmp(*s, "sbx-run.policy") != 0 && strcmp(*s, "sbx-run") != 0)
      g_ptr_array_add(names, *s);
  if (names->len == 0)
    return TRUE;
  g_ptr_array_add(names, NULL);
  sbx_profile shallow = *prof;
  shallow.seccomp = (char **)names->pdata;
  g_auto(GStrv) display = NULL;
  g_autoptr(GPtrArray) pols = sbx_profile_policies(&shallow, &display, error);
  if (!pols)
    return FALSE;
  for (guint i = 0; i < pols->len; i++) {
    g_autofree char *name = g_strdup_printf("%s: %s", prof->source, display[i]);
    if (!add_layer(p, g_ptr_array_index(pols, i), name, error))
      return FALSE;
  }
  return TRUE;
}

/* ---- the environment ---------------------------------------------------- */

static char **build_env(const sbx_run_options *o, GError **error) {
  char **env = o->clear_env ? g_new0(char *, 1) : g_get_environ();
  for (char **u = o->unsetenv; u && *u; u++)
    env = g_environ_unsetenv(env, *u);
  for (char **s = o->setenv; s && *s; s++) {
    const char *eq = strchr(*s, '=');
    if (!eq || eq == *s) {
      g_strfreev(env);
      g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_USAGE,
                  "--setenv %s: expected NAME=VALUE", *s);
      return NULL;
    }
    g_autofree char *name = g_strndup(*s, (gsize)(eq - *s));
    env = g_environ_setenv(env, name, eq + 1, TRUE);
  }
  return env;
}

/* ---- putting it together ------------------------------------------------ */

/* An empty path would mean the current directory to every function that
 * makes it absolute: a grant nobody meant (a shell variable that was not
 * set). Each path option refuses one. */
static gboolean check_no_empty_path(const char *option, char *const *values,
                                    bool grant, GError **error) {
  for (char *const *v = values; v && *v; v++) {
    if (**v)
      continue;
    g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_USAGE,
                "%s was given an empty path (an unset variable?); name the "
                "%s%s%s",
                option, grant ? "file or directory, e.g. " : "file",
                grant ? option : "",
                grant ? " . for the current directory" : "");
    return FALSE;
  }
  return TRUE;
}

static gboolean check_path_options(const sbx_run_options *o, GError **error) {
  char *profile[] = {o->profile, NULL};
  char *audit[] = {o->audit, NULL};
  return check_no_empty_path("--allow-read", o->allow_read, true, error) &&
         check_no_empty_path("--allow-write", o->allow_write, true, error) &&
         check_no_empty_path("--policy", o->policies, false, error) &&
         check_no_empty_path("--profile", profile, false, error) &&
         check_no_empty_path("--audit", audit, false, error);
}

/* Who the program runs as: the caller, as bubblewrap runs it (root stays
 * uid 0, with every capability dropped), or --user NAME|UID, which only
 * root may give for another user. A name takes its passwd entry's group;
 * a number without one, the group of the same number. */
static gboolean choose_identity(const sbx_run_options *o, sbx_ns_config *ns,
                                GError **error) {
  ns->uid = geteuid();
  ns->gid = getegid();
  if (!o->user)
    return TRUE;
  const char *u = o->user;
  char *end = NULL;
  errno = 0;
  unsigned long n = strtoul(u, &end, 10);
  bool numeric = *u && *end == '\0' && errno == 0 && n < (uid_t)-1;
  struct passwd *pw = numeric ? getpwuid((uid_t)n) : getpwnam(u);
  if (!pw && !numeric) {
    g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_USAGE,
                "--user %s: no such user (give a name from the passwd "
                "database or a number)",
                u);
    return FALSE;
  }
  uid_t uid = pw ? pw->pw_uid : (uid_t)n;
  gid_t gid = pw ? pw->pw_gid : (gid_t)n;
  if (uid != geteuid() && geteuid() != 0) {
    g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_USAGE,
                "--user %s: only root can run the program as another user "
                "(you are uid %u)",
                u, (unsigned)geteuid());
    return FALSE;
  }
  ns->uid = uid;
  ns->gid = uid == geteuid() ? getegid() : gid;
  return TRUE;
}

/* Under the supervisor, each link on the way to a grant as the user
 * wrote it may be seen, as the default mode's tree holds it: the
 * resolver follows a link only where its name may be seen (S39). A link
 * already seen needs no entry, so planning the mode again adds none. */
static gboolean grant_links(sbx_run_plan *p, GError **error) {
  g_autoptr(GPtrArray) links = sbx_run_tree_grant_links(p->allowlist);
  for (guint i = 0; i < links->len; i++) {
    const char *link = g_ptr_array_index(links, i);
    sbx_match m;
    if (!sbx_allowlist_match(p->allowlist, link, strlen(link), 0, SBX_PERM_STAT,
                             &m) &&
        !sbx_allowlist_add(p->allowlist, link, SBX_PERM_STAT, error))
      return FALSE;
  }
  return TRUE;
}

/* The parts of the plan that depend on the mode: init's layers (limits,
 * baseline, Landlock), the program's stacked filters, the tree. The
 * default mode falls back to the supervisor where it cannot hold: a
 * write grant of a name yet to be made, a kernel without Landlock. */
static gboolean build_mode(sbx_run_plan *p, sbx_run_mode mode,
                           const char *reason, GError **error) {
  p->mode = mode;
  p->mode_reason = reason;
  /* Made again for each mode: without namespaces the hostname is the
   * host's. */
  sbx_run_account_files_clear(p->accounts, p->n_accounts);
  p->n_accounts = sbx_run_account_files(
      p->ns.uid, p->ns.gid,
      (p->ns.namespaces & SBX_NS_UTS) ? p->ns.hostname : g_get_host_name(),
      p->allowlist, p->accounts);
  sbx_run_tree_clear(&p->tree);
  if (mode == SBX_RUN_MODE_KERNEL) {
    const char *why = NULL, *why_path = NULL;
    if (!sbx_run_tree_plan(&p->tree, p->allowlist, p->allow_exec, &why,
                           &why_path)) {
      g_free(p->mode_reason_detail);
      p->mode_reason_detail = g_strdup(why_path);
      return build_mode(p, SBX_RUN_MODE_SUPERVISOR, why, error);
    }
    for (size_t i = 0; i < p->n_accounts; i++)
      sbx_run_tree_add_text(&p->tree, p->accounts[i].path, p->accounts[i].text);
  } else if (p->ns.namespaces & SBX_NS_MOUNT) {
    /* The same private /tmp and /dev/shm, and the pid namespace's own
     * /proc, mounted in init's namespace. */
    sbx_run_tree_plan_private(&p->tree, p->allowlist, p->allow_exec);
    p->tree.proc = (p->ns.namespaces & SBX_NS_PID) != 0;
  }
  if (mode == SBX_RUN_MODE_SUPERVISOR && !grant_links(p, error))
    return FALSE;
  sbx_layer_plan_clear(&p->init);
  /* Both baselines notify: the default mode's its connect calls alone. */
  sbx_layer_plan_init(&p->init, "sbx-run", SBX_LAYERS_LISTENER);
  sbx_layer_plan_clear(&p->program_filters);
  sbx_layer_plan_init(&p->program_filters, "sbx-run", SBX_LAYERS_FILTERS_ONLY);
  p->n_program_filters = 0;
  g_ptr_array_set_size(p->reported, 0);
  GError *local = NULL;
  if (!sbx_layer_plan_add_rlimits(&p->init, p->rlimits, p->n_rlimits, &local)) {
    g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_USAGE, "[rlimits]: %s",
                local->message);
    g_error_free(local);
    return FALSE;
  }
  for (guint i = 0; i < p->layer_sources->len; i++)
    if (!install_layer(p, g_ptr_array_index(p->layer_sources, i), error))
      return FALSE;
  if (!add_baseline(p, error) ||
      !build_landlock(p, p->exec_files, p->landlock_min_abi, error))
    return FALSE;
  if (mode == SBX_RUN_MODE_KERNEL && p->init.landlock_fd < 0)
    return build_mode(p, SBX_RUN_MODE_SUPERVISOR,
                      "the kernel has no Landlock, which decides what the "
                      "program may do inside its tree",
                      error);
  /* Rights the ruleset does not handle are refused in a rule. */
  p->tree.private_rights = p->init.landlock.handled.fs &
                           (SBX_LANDLOCK_RIGHTS_READ_WRITE |
                            (p->allow_exec ? LANDLOCK_ACCESS_FS_EXECUTE : 0));
  p->tree.pty_rights =
      p->init.landlock.handled.fs &
      (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE |
       LANDLOCK_ACCESS_FS_READ_DIR | LANDLOCK_ACCESS_FS_IOCTL_DEV);
  return TRUE;
}

gboolean sbx_run_plan_without_namespaces(sbx_run_plan *p, const char *reason,
                                         GError **error) {
  if (!p || !reason) {
    g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_USAGE,
                "sbx_run_plan_without_namespaces: no plan or no reason");
    return FALSE;
  }
  p->ns.namespaces = 0;
  if (p->mode == SBX_RUN_MODE_SUPERVISOR)
    reason = p->mode_reason;
  return build_mode(p, SBX_RUN_MODE_SUPERVISOR, reason, error);
}

bool sbx_run_plan_own_network(const sbx_run_plan *p) {
  return p && !p->net && (p->ns.namespaces & SBX_NS_NET);
}

sbx_run_plan *sbx_run_plan_new(const sbx_run_options *o, GError **error) {
  if (!o->argv || !o->argv[0]) {
    g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_USAGE,
                "no program given (usage: sbx-run [OPTIONS] -- PROGRAM "
                "[ARGS...])");
    return NULL;
  }
  if (!check_path_options(o, error))
    return NULL;
  sbx_ns_config ns;
  sbx_ns_config_init(&ns);
  /* Without --net the program's network is its own: a loopback that is
   * up, as under bubblewrap, which local servers and their clients in
   * the sandbox use; nothing outside is reachable. */
  ns.loopback = true;
  if (!choose_identity(o, &ns, error))
    return NULL;
  sbx_run_plan *p = g_new0(sbx_run_plan, 1);
  sbx_layer_plan_init(&p->init, "sbx-run", 0);
  sbx_layer_plan_init(&p->program_filters, "sbx-run", SBX_LAYERS_FILTERS_ONLY);
  p->reported = g_ptr_array_new_with_free_func(sbx_run_reported_layer_free);
  p->layer_sources = g_ptr_array_new_with_free_func(layer_source_free);
  p->exec_files = g_ptr_array_new_with_free_func(g_free);
  p->net = o->net;
  p->allow_exec = o->allow_exec;
  p->allow_ptrace = o->allow_ptrace;
  p->audit = g_strdup(o->audit);
  p->ns = ns;
  p->argv = g_strdupv(o->argv);
  GPtrArray *exec_files = p->exec_files;
  g_autoptr(sbx_profile) prof = NULL;
  g_autoptr(GPtrArray) interps = NULL;
  int min_abi = 0;

  if (o->require && !parse_require(o->require, &p->require, error))
    goto fail;
  p->envp = build_env(o, error);
  if (!p->envp)
    goto fail;
  p->program = find_program(o->argv[0], p->envp, error);
  if (!p->program)
    goto fail;

  p->allowlist = sbx_allowlist_new("sbx-run");
  mode_t mask = umask(022);
  umask(mask);
  sbx_allowlist_set_umask(p->allowlist, mask);
  if (!sbx_run_add_fixed_entries(p->allowlist, error))
    goto fail;

  /* The program and what starts it: readable (a script is read by its
   * interpreter) and executable. */
  g_ptr_array_add(exec_files, g_strdup(p->program));
  interps = startup_files(p->program);
  for (guint i = 0; i < interps->len; i++)
    g_ptr_array_add(exec_files, g_strdup(g_ptr_array_index(interps, i)));
  for (guint i = 0; i < exec_files->len; i++)
    if (!sbx_allowlist_add(p->allowlist, g_ptr_array_index(exec_files, i),
                           SBX_PERM_READ_ONLY, error))
      goto fail;
  if (o->allow_exec) {
    for (const char *const *d = sbx_run_exec_dirs; *d; d++)
      if (!add_fixed(p->allowlist, *d, SBX_PERM_READ_ONLY, error))
        goto fail;
    /* Programs in those directories are often links through the
     * alternatives system (awk -> /etc/alternatives/awk -> mawk); a link
     * is followed only where its name may be seen. */
    if (!add_fixed(p->allowlist, "/etc/alternatives/", SBX_PERM_STAT, error))
      goto fail;
  }

  if (o->profile) {
    prof = load_profile(o->profile, error);
    if (!prof || !apply_profile(p, prof, &min_abi, error))
      goto fail;
  }
  for (char **r = o->allow_read; r && *r; r++)
    if (!add_user_path(p->allowlist, "--allow-read", *r, false, error))
      goto fail;
  for (char **w = o->allow_write; w && *w; w++)
    if (!add_user_path(p->allowlist, "--allow-write", *w, true, error))
      goto fail;
  if (p->net)
    p->ns.namespaces &= ~(unsigned)SBX_NS_NET;
  p->ns.hostname = sbx_run_hostname(p->allowlist, p->ns.hostname);

  for (char **f = o->policies; f && *f; f++) {
    sbx_policy *pol = sbx_policy_parse_file(*f, error);
    if (!pol)
      goto fail;
    gboolean ok = add_layer(p, pol, *f, error);
    sbx_policy_free(pol);
    if (!ok)
      goto fail;
  }

  /* Landlock paths are canonical like the allowlist's, so the two agree
   * on which object a rule means. */
  guint n_named = exec_files->len;
  for (guint i = 0; i < n_named; i++) {
    char *real = realpath(g_ptr_array_index(exec_files, i), NULL);
    if (real) {
      g_ptr_array_add(exec_files, g_strdup(real));
      free(real);
    }
  }
  p->landlock_min_abi = min_abi;

  /* The default mode, unless the run needs what only the supervisor
   * does (docs/sbx-run.md, "Which mode"). */
  const char *reason = NULL;
  if (o->explain)
    reason = "--explain";
  else if (o->audit)
    reason =
        "--audit records every decision, which only the supervisor "
        "makes";
  else if (p->connect_ports.set || p->bind_ports.set)
    reason =
        "the profile's [network] ports are checked on every address "
        "by the supervisor";
  if (!build_mode(p, reason ? SBX_RUN_MODE_SUPERVISOR : SBX_RUN_MODE_KERNEL,
                  reason, error))
    goto fail;
  return p;

fail:
  sbx_run_plan_free(p);
  return NULL;
}
