/* A parsed policy written back as text; see format.h. */
#include "sandbox/policy/format.h"

#include <inttypes.h>
#include <string.h>

#include "sandbox/base/syscalls.h"
#include "sandbox/policy/parser.h"

static const char *const cmp_ops[] = {
    [SBX_CMP_EQ] = "==", [SBX_CMP_NE] = "!=", [SBX_CMP_LT] = "<",
    [SBX_CMP_LE] = "<=", [SBX_CMP_GT] = ">",  [SBX_CMP_GE] = ">=",
    [SBX_CMP_SET] = "&", [SBX_CMP_IN] = "in",
};

static bool same_action(sbx_action a, sbx_action b) {
  return a.kind == b.kind && a.data == b.data;
}

/* Appends the action's word; false for one the language cannot name (a
 * trap or trace with data). */
static bool put_action(GString *out, sbx_action a) {
  switch (a.kind) {
    case SBX_ACTION_ALLOW:
      g_string_append(out, "allow");
      return true;
    case SBX_ACTION_KILL_PROCESS:
      g_string_append(out, "kill-process");
      return true;
    case SBX_ACTION_KILL_THREAD:
      g_string_append(out, "kill-thread");
      return true;
    case SBX_ACTION_TRAP:
      g_string_append(out, "trap");
      return a.data == 0;
    case SBX_ACTION_TRACE:
      g_string_append(out, "trace");
      return a.data == 0;
    case SBX_ACTION_LOG:
      g_string_append(out, "log");
      return true;
    case SBX_ACTION_USER_NOTIF:
      g_string_append(out, "user-notify");
      return true;
    case SBX_ACTION_ERRNO:
      g_string_append_printf(out, "return %u", (unsigned)a.data);
      return true;
  }
  return false;
}

static void put_expression(GString *out, const sbx_rule *r) {
  for (size_t a = 0; a < r->n_alts; a++) {
    const sbx_conjunction *alt = &r->alts[a];
    if (a)
      g_string_append(out, " || ");
    for (size_t c = 0; c < alt->n_cmps; c++) {
      const sbx_cmp *cmp = &alt->cmps[c];
      if (c)
        g_string_append(out, " && ");
      g_string_append_printf(out, "arg%u %s ", (unsigned)cmp->arg,
                             cmp_ops[cmp->op]);
      if (cmp->self_pid)
        g_string_append(out, SBX_SELF_PID_NAME);
      else
        g_string_append_printf(out, "0x%" PRIx64, cmp->value);
    }
  }
}

/* An alternative without comparisons always holds. */
static bool always_holds(const sbx_rule *r) {
  for (size_t a = 0; a < r->n_alts; a++)
    if (r->alts[a].n_cmps == 0)
      return true;
  return false;
}

static gboolean put_rule(GString *out, const sbx_policy *p, const sbx_rule *r,
                         GError **error) {
  const char *name = r->name ? r->name : sbx_syscall_name(r->nr);
  if (!name) {
    g_set_error(error, SBX_POLICY_ERROR, SBX_POLICY_ERROR_UNKNOWN_SYSCALL,
                "rule for system call %d: no name to write it with", r->nr);
    return FALSE;
  }
  g_string_append_printf(out, "%s: ", name);
  bool ok;
  if (r->n_alts == 0 || always_holds(r)) {
    ok = put_action(out, r->on_match);
  } else {
    ok = r->on_match.kind == SBX_ACTION_ALLOW &&
         (same_action(r->on_mismatch, p->default_action) ||
          r->on_mismatch.kind == SBX_ACTION_ERRNO ||
          r->on_mismatch.kind == SBX_ACTION_USER_NOTIF);
    if (ok) {
      put_expression(out, r);
      if (same_action(r->on_mismatch, p->default_action)) {
        /* The policy's default: nothing to write. */
      } else if (r->on_mismatch.kind == SBX_ACTION_USER_NOTIF) {
        g_string_append(out, "; user-notify");
      } else {
        g_string_append_printf(out, "; return %u",
                               (unsigned)r->on_mismatch.data);
      }
    }
  }
  if (!ok) {
    g_set_error(error, SBX_POLICY_ERROR, SBX_POLICY_ERROR_SYNTAX,
                "%s:%u: the rule for %s cannot be written outside @denylist",
                r->file ? r->file : "policy", r->line, name);
    return FALSE;
  }
  if (r->file && !strchr(r->file, '\n'))
    g_string_append_printf(out, "  # %s:%u", r->file, r->line);
  g_string_append_c(out, '\n');
  return TRUE;
}

char *sbx_policy_format(const sbx_policy *p, const char *header,
                        GError **error) {
  g_autoptr(GString) out = g_string_new(NULL);
  if (header) {
    g_auto(GStrv) lines = g_strsplit(header, "\n", -1);
    for (char **l = lines; *l; l++)
      g_string_append_printf(out, "# %s\n", *l);
    g_string_append_c(out, '\n');
  }
  g_string_append(out, "@default ");
  if (!put_action(out, p->default_action)) {
    g_set_error(error, SBX_POLICY_ERROR, SBX_POLICY_ERROR_SYNTAX,
                "the default action cannot be written");
    return NULL;
  }
  g_string_append_c(out, '\n');
  for (size_t i = 0; i < p->n_rules; i++)
    if (!put_rule(out, p, &p->rules[i], error))
      return NULL;
  return g_string_free(g_steal_pointer(&out), FALSE);
}
