/* Learned rules from argument values; see arg_rules.h. */
#include "sandbox/policy/arg_rules.h"

#include <string.h>

#include "sandbox/policy/constants.h"

void sbx_arg_seen_add(sbx_arg_seen *a, uint64_t v) {
  a->mask |= v;
  for (unsigned i = 0; i < a->n_values; i++)
    if (a->values[i] == v)
      return;
  if (a->n_values < SBX_ARG_MAX_VALUES)
    a->values[a->n_values++] = v;
  else
    a->overflow = true;
}

typedef enum {
  ONE_OF, /* argN == A || argN == B: a command or a family */
  FLAGS,  /* argN in MASK: a set of flag bits */
} constraint_kind;

/* Most distinct values a ONE_OF rule lists; more is not "obvious". */
#define MAX_ONE_OF 4

static const char *const open_flags[] = {
    "O_WRONLY",  "O_RDWR",    "O_CREAT",     "O_EXCL",
    "O_NOCTTY",  "O_TRUNC",   "O_APPEND",    "O_NONBLOCK",
    "O_DSYNC",   "O_DIRECT",  "O_DIRECTORY", "O_NOFOLLOW",
    "O_NOATIME", "O_CLOEXEC", "O_PATH",      NULL};
static const char *const prot_flags[] = {"PROT_READ", "PROT_WRITE", "PROT_EXEC",
                                         NULL};
static const char *const families[] = {"AF_UNIX", "AF_INET", "AF_INET6",
                                       "AF_NETLINK", NULL};
static const char *const fcntl_cmds[] = {"F_DUPFD",
                                         "F_GETFD",
                                         "F_SETFD",
                                         "F_GETFL",
                                         "F_SETFL",
                                         "F_GETLK",
                                         "F_SETLK",
                                         "F_SETLKW",
                                         "F_DUPFD_CLOEXEC",
                                         "F_GETPIPE_SZ",
                                         "F_SETPIPE_SZ",
                                         "F_ADD_SEALS",
                                         "F_GET_SEALS",
                                         "F_OFD_GETLK",
                                         "F_OFD_SETLK",
                                         "F_OFD_SETLKW",
                                         NULL};
static const char *const ioctl_cmds[] = {"TCGETS",     "TCSETS",    "TCSETSW",
                                         "TIOCGWINSZ", "FIONREAD",  "FIOCLEX",
                                         "FIONBIO",    "TIOCGPGRP", NULL};
static const char *const arch_codes[] = {"ARCH_SET_GS", "ARCH_SET_FS",
                                         "ARCH_GET_FS", "ARCH_GET_GS", NULL};
static const char *const prctl_options[] = {
    "PR_SET_PDEATHSIG",    "PR_GET_DUMPABLE",
    "PR_SET_DUMPABLE",     "PR_SET_NAME",
    "PR_GET_NAME",         "PR_SET_NO_NEW_PRIVS",
    "PR_GET_NO_NEW_PRIVS", "PR_SET_VMA",
    "PR_CAPBSET_READ",     NULL};

typedef struct {
  const char *syscall;
  int arg;
  constraint_kind kind;
  const char *const *names;
} constraint;

/* The arguments whose values say what a call may do - open for writing,
 * map executable memory, reach a network, drive a device, change a
 * process attribute - one per call. Arguments that vary with the data or
 * the moment (lseek's whence, sigprocmask's how, futex operations) are
 * not here: pinning them would only make the policy fragile. */
static const constraint constraints[] = {
    {"open", 1, FLAGS, open_flags},      {"openat", 2, FLAGS, open_flags},
    {"mmap", 2, FLAGS, prot_flags},      {"mprotect", 2, FLAGS, prot_flags},
    {"socket", 0, ONE_OF, families},     {"socketpair", 0, ONE_OF, families},
    {"ioctl", 1, ONE_OF, ioctl_cmds},    {"fcntl", 1, ONE_OF, fcntl_cmds},
    {"prctl", 0, ONE_OF, prctl_options}, {"arch_prctl", 0, ONE_OF, arch_codes},
};

static const constraint *find_constraint(const char *syscall) {
  for (size_t i = 0; i < G_N_ELEMENTS(constraints); i++)
    if (strcmp(constraints[i].syscall, syscall) == 0)
      return &constraints[i];
  return NULL;
}

/* A value as names from the list (looked up in the policy's own constant
 * tables), with what no name covers in hex. */
static void append_value(GString *out, uint64_t v, const constraint *c) {
  if (c->kind == ONE_OF) {
    for (const char *const *n = c->names; *n; n++) {
      uint64_t k;
      if (sbx_constant_lookup(*n, &k) && k == v) {
        g_string_append(out, *n);
        return;
      }
    }
    g_string_append_printf(out, "0x%" G_GINT64_MODIFIER "x", v);
    return;
  }
  uint64_t rest = v;
  bool first = true;
  for (const char *const *n = c->names; *n; n++) {
    uint64_t k;
    if (!sbx_constant_lookup(*n, &k) || k == 0 || (k & (k - 1)) != 0 ||
        (rest & k) != k)
      continue;
    g_string_append_printf(out, "%s%s", first ? "" : "|", *n);
    rest &= ~k;
    first = false;
  }
  if (rest || first)
    g_string_append_printf(out, "%s0x%" G_GINT64_MODIFIER "x", first ? "" : "|",
                           rest);
}

char *sbx_arg_rule_expression(const char *name, const sbx_arg_seen args[6],
                              GString *why) {
  const constraint *c = name ? find_constraint(name) : NULL;
  if (!c)
    return g_strdup("1");
  g_autoptr(GString) ignored = why ? NULL : g_string_new(NULL);
  if (!why)
    why = ignored;
  const sbx_arg_seen *a = &args[c->arg];
  GString *e = g_string_new(NULL);
  if (c->kind == ONE_OF) {
    if (a->overflow || a->n_values > MAX_ONE_OF) {
      g_string_free(e, TRUE);
      g_string_append_printf(why, "; arg%d took more than %d values", c->arg,
                             MAX_ONE_OF);
      return g_strdup("1");
    }
    g_string_append_printf(why, "; arg%d only ever ", c->arg);
    for (unsigned i = 0; i < a->n_values; i++) {
      if (i) {
        g_string_append(e, " || ");
        g_string_append(why, i + 1 == a->n_values ? " or " : ", ");
      }
      g_string_append_printf(e, "arg%d == ", c->arg);
      append_value(e, a->values[i], c);
      append_value(why, a->values[i], c);
    }
    return g_string_free(e, FALSE);
  }
  if (a->mask == 0) {
    g_string_append_printf(e, "arg%d == 0", c->arg);
    g_string_append_printf(why, "; arg%d always 0", c->arg);
    return g_string_free(e, FALSE);
  }
  g_string_append_printf(e, "arg%d in ", c->arg);
  append_value(e, a->mask, c);
  g_string_append_printf(why, "; arg%d never had a bit outside %s", c->arg,
                         e->str + strlen("argN in "));
  return g_string_free(e, FALSE);
}
