/* The policy linter.
 *
 * Why it exists: a policy can be valid and still weak. The kernel attack
 * surface sbx exists to shrink (docs/threat-model.md) is reopened by a
 * default of allow, by an unconditional rule for ptrace or ioctl, or by an
 * argument filter with an alternative that is always true. The linter says
 * so, with the file and line, before the policy is shipped.
 *
 * Trusts: the parser. Refuses: nothing; it only reports. Every warning
 * about an impossible or always-true alternative is exact (no guesses): it
 * follows from the comparisons alone.
 */
#include "sandbox/policy/lint.h"

#include <string.h>

#include "sandbox/policy/parser.h"
#include "sandbox/policy/policy.h"
#include "sandbox/base/syscalls.h"

typedef struct {
  const char *name;
  const char *why;
} dangerous_syscall;

/* System calls that undo the sandbox when allowed for every argument. */
static const dangerous_syscall kDangerous[] = {
    {"ptrace", "it reads and writes other processes' memory and registers"},
    {"process_vm_readv", "it reads other processes' memory"},
    {"process_vm_writev", "it writes other processes' memory"},
    {"kcmp", "it probes other processes' kernel objects"},
    {"bpf",
     "it exposes the BPF verifier and JIT, a large kernel attack "
     "surface"},
    {"perf_event_open",
     "perf events are a frequent source of kernel "
     "exploits"},
    {"ioctl",
     "without a filter on the command every device ioctl is "
     "reachable, TIOCSTI and TIOCLINUX included"},
    {"prctl",
     "without a filter on the option it allows PR_SET_MM, "
     "PR_SET_PTRACER and other dangerous options"},
    {"personality", "it can set READ_IMPLIES_EXEC or ADDR_NO_RANDOMIZE"},
    {"clone",
     "without a check of its flags it creates namespaces "
     "(CLONE_NEW*) and new processes"},
    {"clone3", "its flags live in memory a filter cannot read"},
    {"execve", "it replaces the sandboxed program with any other"},
    {"execveat", "it replaces the sandboxed program with any other"},
    {"kexec_load", "it loads a new kernel"},
    {"kexec_file_load", "it loads a new kernel"},
    {"init_module", "it loads kernel modules"},
    {"finit_module", "it loads kernel modules"},
    {"delete_module", "it removes kernel modules"},
    {"mount", "it changes the mount table"},
    {"umount2", "it changes the mount table"},
    {"pivot_root", "it changes the root of the mount table"},
    {"chroot", "it changes the root directory"},
    {"fsopen", "it creates file system contexts (new mount API)"},
    {"fsconfig", "it configures file system contexts (new mount API)"},
    {"fsmount", "it creates mounts (new mount API)"},
    {"fspick", "it reconfigures mounts (new mount API)"},
    {"move_mount", "it moves mounts"},
    {"open_tree", "it clones mounts"},
    {"open_tree_attr", "it clones mounts"},
    {"mount_setattr", "it changes mount attributes"},
    {"unshare",
     "it creates namespaces; user namespaces expose a large "
     "kernel attack surface"},
    {"setns", "it enters other namespaces"},
    {"userfaultfd", "it widens kernel race windows that exploits rely on"},
    {"io_uring_setup", "io_uring operations bypass seccomp entirely"},
    {"io_uring_enter", "io_uring operations bypass seccomp entirely"},
    {"io_uring_register", "io_uring operations bypass seccomp entirely"},
    {"name_to_handle_at", "file handles escape path-based confinement"},
    {"open_by_handle_at",
     "it opens files by handle, escaping path-based "
     "confinement"},
    {"keyctl", "it reaches the kernel keyrings"},
    {"add_key", "it reaches the kernel keyrings"},
    {"request_key", "it reaches the kernel keyrings"},
    {"iopl", "it grants direct I/O port access"},
    {"ioperm", "it grants direct I/O port access"},
    {"reboot", "it reboots or halts the machine"},
    {"swapon", "it changes swap devices"},
    {"swapoff", "it changes swap devices"},
    {"acct", "it changes process accounting"},
    {"quotactl", "it changes disk quotas"},
};

typedef struct {
  char *file;
  unsigned line;
  unsigned seq; /* keeps warnings of one line in the order they were made */
  char *text;
} warning;

typedef struct {
  GPtrArray *warnings; /* of warning */
} linter;

static void warn(linter *l, const char *file, unsigned line, const char *format,
                 ...) G_GNUC_PRINTF(4, 5);

static void warn(linter *l, const char *file, unsigned line, const char *format,
                 ...) {
  va_list ap;
  va_start(ap, format);
  char *msg = g_strdup_vprintf(format, ap);
  va_end(ap);
  warning *w = g_new0(warning, 1);
  w->file = g_strdup(file);
  w->line = line;
  w->seq = l->warnings->len;
  w->text = g_strdup_printf("%s:%u: warning: %s", file, line, msg);
  g_free(msg);
  g_ptr_array_add(l->warnings, w);
}

static void warning_free(gpointer p) {
  warning *w = p;
  g_free(w->file);
  g_free(w->text);
  g_free(w);
}

static int compare_warnings(gconstpointer a, gconstpointer b) {
  const warning *x = *(warning *const *)a;
  const warning *y = *(warning *const *)b;
  int c = strcmp(x->file, y->file);
  if (c != 0)
    return c;
  if (x->line != y->line)
    return x->line < y->line ? -1 : 1;
  return (x->seq > y->seq) - (x->seq < y->seq);
}

static const char *op_text(sbx_cmp_op op) {
  switch (op) {
    case SBX_CMP_EQ:
      return "==";
    case SBX_CMP_NE:
      return "!=";
    case SBX_CMP_LT:
      return "<";
    case SBX_CMP_LE:
      return "<=";
    case SBX_CMP_GT:
      return ">";
    case SBX_CMP_GE:
      return ">=";
    case SBX_CMP_SET:
      return "&";
    case SBX_CMP_IN:
      return "in";
  }
  return "?";
}

static uint64_t width_mask(const sbx_cmp *c) {
  return c->arg_is_32bit ? UINT32_MAX : UINT64_MAX;
}

static void append_cmp(GString *s, const sbx_cmp *c) {
  g_string_append_printf(s, "arg%u %s 0x%" G_GINT64_MODIFIER "x",
                         (unsigned)c->arg, op_text(c->op),
                         c->value & width_mask(c));
}

static char *alt_text(const sbx_conjunction *alt) {
  GString *s = g_string_new(NULL);
  for (size_t k = 0; k < alt->n_cmps; k++) {
    if (k > 0)
      g_string_append(s, " && ");
    append_cmp(s, &alt->cmps[k]);
  }
  return g_string_free(s, FALSE);
}

/* True for a comparison no argument value can fail. */
static gboolean cmp_always_true(const sbx_cmp *c) {
  uint64_t m = width_mask(c), v = c->value & m;
  switch (c->op) {
    case SBX_CMP_GE:
      return v == 0;
    case SBX_CMP_LE:
      return v == m;
    case SBX_CMP_IN:
      return v == m;
    default:
      return FALSE;
  }
}

static gboolean alt_always_true(const sbx_conjunction *alt) {
  for (size_t k = 0; k < alt->n_cmps; k++) {
    if (!cmp_always_true(&alt->cmps[k]))
      return FALSE;
  }
  return alt->n_cmps > 0;
}

/* True when the comparisons on one argument cannot all hold. Exact for
 * what it reports; a conjunction it cannot decide counts as possible. */
static gboolean arg_impossible(const sbx_conjunction *alt, unsigned arg) {
  const sbx_cmp *eq = NULL;
  uint64_t m = UINT64_MAX;
  for (size_t k = 0; k < alt->n_cmps; k++) {
    const sbx_cmp *c = &alt->cmps[k];
    if (c->arg != arg)
      continue;
    m = width_mask(c);
    if (c->op == SBX_CMP_EQ && eq == NULL)
      eq = c;
  }
  if (eq != NULL) {
    /* One value is possible: every comparison must accept it. */
    for (size_t k = 0; k < alt->n_cmps; k++) {
      const sbx_cmp *c = &alt->cmps[k];
      if (c->arg == arg && !sbx_cmp_holds(c, eq->value & m))
        return TRUE;
    }
    return FALSE;
  }
  uint64_t lo = 0, hi = m, in_mask = m;
  gboolean have_in = FALSE;
  for (size_t k = 0; k < alt->n_cmps; k++) {
    const sbx_cmp *c = &alt->cmps[k];
    if (c->arg != arg)
      continue;
    uint64_t v = c->value & m;
    switch (c->op) {
      case SBX_CMP_LT:
        if (v == 0)
          return TRUE;
        hi = MIN(hi, v - 1);
        break;
      case SBX_CMP_LE:
        hi = MIN(hi, v);
        break;
      case SBX_CMP_GT:
        if (v == m)
          return TRUE;
        lo = MAX(lo, v + 1);
        break;
      case SBX_CMP_GE:
        lo = MAX(lo, v);
        break;
      case SBX_CMP_SET:
        if (v == 0)
          return TRUE;
        break;
      case SBX_CMP_IN:
        have_in = TRUE;
        in_mask &= v;
        break;
      default:
        break;
    }
  }
  if (lo > hi)
    return TRUE;
  if (have_in) {
    /* Every allowed value is a subset of in_mask, so none exceeds it. */
    if (lo > in_mask)
      return TRUE;
    for (size_t k = 0; k < alt->n_cmps; k++) {
      const sbx_cmp *c = &alt->cmps[k];
      if (c->arg == arg && c->op == SBX_CMP_SET &&
          (c->value & m & in_mask) == 0)
        return TRUE;
    }
  }
  if (lo == hi) {
    for (size_t k = 0; k < alt->n_cmps; k++) {
      const sbx_cmp *c = &alt->cmps[k];
      if (c->arg == arg && !sbx_cmp_holds(c, lo))
        return TRUE;
    }
  }
  return FALSE;
}

static gboolean alt_impossible(const sbx_conjunction *alt) {
  for (unsigned arg = 0; arg < 6; arg++) {
    if (arg_impossible(alt, arg))
      return TRUE;
  }
  return FALSE;
}

static gboolean alts_equal(const sbx_conjunction *a, const sbx_conjunction *b) {
  if (a->n_cmps != b->n_cmps)
    return FALSE;
  for (size_t k = 0; k < a->n_cmps; k++) {
    const sbx_cmp *x = &a->cmps[k], *y = &b->cmps[k];
    if (x->arg != y->arg || x->op != y->op ||
        (x->value & width_mask(x)) != (y->value & width_mask(y)))
      return FALSE;
  }
  return TRUE;
}

static gboolean allows(sbx_action a) {
  return a.kind == SBX_ACTION_ALLOW || a.kind == SBX_ACTION_LOG;
}

/* Returns the index of the first always-true alternative, or -1. */
static long lint_alternatives(linter *l, const sbx_rule *r) {
  long always = -1;
  for (size_t k = 0; k < r->n_alts; k++) {
    const sbx_conjunction *alt = &r->alts[k];
    char *text = alt_text(alt);
    if (always >= 0) {
      warn(l, r->file, r->line,
           "%s: alternative %zu (%s) is unreachable: alternative %ld "
           "before it is always true",
           r->name, k + 1, text, always + 1);
    } else if (alt_impossible(alt)) {
      warn(l, r->file, r->line, "%s: alternative %zu (%s) can never be true",
           r->name, k + 1, text);
    } else if (alt_always_true(alt)) {
      always = (long)k;
      warn(l, r->file, r->line,
           "%s: alternative %zu (%s) is always true, so the filter matches "
           "every call",
           r->name, k + 1, text);
    } else {
      gboolean repeated = FALSE;
      for (size_t j = 0; j < k && !repeated; j++) {
        if (alts_equal(&r->alts[j], alt)) {
          repeated = TRUE;
          warn(l, r->file, r->line,
               "%s: alternative %zu (%s) repeats alternative %zu and is "
               "unreachable",
               r->name, k + 1, text, j + 1);
        }
      }
      for (size_t c = 0; c < alt->n_cmps && !repeated; c++) {
        if (alt->n_cmps > 1 && cmp_always_true(&alt->cmps[c])) {
          GString *s = g_string_new(NULL);
          append_cmp(s, &alt->cmps[c]);
          warn(l, r->file, r->line,
               "%s: comparison %s in alternative %zu is always true", r->name,
               s->str, k + 1);
          g_string_free(s, TRUE);
        }
      }
    }
    g_free(text);
  }
  return always;
}

static const sbx_rule *find_rule(const sbx_policy *policy, int nr) {
  for (size_t k = 0; k < policy->n_rules; k++) {
    if (policy->rules[k].nr == nr)
      return &policy->rules[k];
  }
  return NULL;
}

static void lint_dangerous(linter *l, const sbx_policy *policy,
                           const sbx_policy_notes *notes,
                           const long *always_true) {
  const sbx_policy_location *default_at = NULL;
  if (notes->denylist)
    default_at = &notes->denylist_at;
  else if (notes->default_given)
    default_at = &notes->default_at;
  GString *by_default = g_string_new(NULL);
  for (size_t d = 0; d < G_N_ELEMENTS(kDangerous); d++) {
    int nr = sbx_syscall_number(kDangerous[d].name);
    if (nr < 0)
      continue;
    const sbx_rule *r = find_rule(policy, nr);
    if (r == NULL) {
      if (allows(policy->default_action) && default_at != NULL)
        g_string_append_printf(by_default, "%s%s", by_default->len ? ", " : "",
                               kDangerous[d].name);
      continue;
    }
    long always = always_true[r - policy->rules];
    if (r->n_alts == 0 && allows(r->on_match))
      warn(l, r->file, r->line, "%s is allowed unconditionally: %s", r->name,
           kDangerous[d].why);
    else if (r->n_alts > 0 && always >= 0 && allows(r->on_match))
      warn(l, r->file, r->line,
           "%s is allowed for every argument (alternative %ld is always "
           "true): %s",
           r->name, always + 1, kDangerous[d].why);
  }
  /* One line: a default-allow policy would otherwise drown the rest. */
  if (by_default->len > 0)
    warn(l, default_at->file, default_at->line,
         "dangerous system calls no rule denies are allowed by default: %s",
         by_default->str);
  g_string_free(by_default, TRUE);
}

GPtrArray *sbx_policy_lint_file(const char *path, GError **error) {
  sbx_policy_notes notes;
  sbx_policy *policy = sbx_policy_parse_file_with_notes(path, &notes, error);
  if (policy == NULL) {
    sbx_policy_notes_clear(&notes);
    return NULL;
  }
  linter l = {.warnings = g_ptr_array_new_with_free_func(warning_free)};

  if (notes.denylist)
    warn(&l, notes.denylist_at.file, notes.denylist_at.line,
         "@denylist makes this a default-allow policy: every system call "
         "it does not deny is allowed, including ones added to future "
         "kernels");
  else if (notes.default_given && allows(policy->default_action))
    warn(&l, notes.default_at.file, notes.default_at.line,
         "@default %s makes this a default-allow policy: every system call "
         "without a rule is allowed",
         policy->default_action.kind == SBX_ACTION_LOG ? "log" : "allow");

  for (guint k = 0; k < notes.duplicates->len; k++) {
    const sbx_policy_duplicate *dup = g_ptr_array_index(notes.duplicates, k);
    warn(&l, dup->here.file, dup->here.line,
         "%s is defined again, identically (first at %s:%u); this line has "
         "no effect",
         dup->name, dup->first.file, dup->first.line);
  }

  long *always_true = g_new(long, MAX(policy->n_rules, 1));
  for (size_t k = 0; k < policy->n_rules; k++)
    always_true[k] = lint_alternatives(&l, &policy->rules[k]);
  lint_dangerous(&l, policy, &notes, always_true);
  g_free(always_true);

  g_ptr_array_sort(l.warnings, compare_warnings);
  GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
  for (guint k = 0; k < l.warnings->len; k++) {
    warning *w = g_ptr_array_index(l.warnings, k);
    g_ptr_array_add(out, w->text);
    w->text = NULL;
  }
  g_ptr_array_unref(l.warnings);
  sbx_policy_notes_clear(&notes);
  sbx_policy_free(policy);
  return out;
}
