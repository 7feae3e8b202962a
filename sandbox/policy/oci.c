/* OCI seccomp profiles <-> sbx policies; the contract is in oci.h.
 *
 * Trusts: the sbx parser (the importer's text is parsed before it is
 * handed out) and the x86-64 syscall table. Refuses: JSON that is not a
 * profile, numbers that are not unsigned 64-bit integers, and every
 * construct without an exact sbx (or libseccomp) equivalent.
 *
 * Both directions rest on one observation: every comparison either side
 * can write is a union of masked equalities ((arg & mask) == value), so a
 * comparison can be moved between the two languages without changing a
 * single verdict, the 32-bit reading of int-sized arguments included.
 */
#include "sandbox/policy/oci.h"

#include <errno.h>
#include <inttypes.h>
#include <linux/audit.h>
#include <stdio.h>
#include <string.h>

#include <json-glib/json-glib.h>

#include "sandbox/policy/parser.h"
#include "sandbox/base/syscalls.h"

GQuark sbx_oci_error_quark(void) {
  return g_quark_from_static_string("sbx-oci-error-quark");
}

#define X32_SYSCALL_BIT 0x40000000u
/* Bounds the entries one sbx rule may expand to, and the alternatives a
 * negated filter may expand to. */
#define MAX_EXPANSION 1024

typedef enum {
  OCI_EQ,
  OCI_NE,
  OCI_LT,
  OCI_LE,
  OCI_GT,
  OCI_GE,
  OCI_MASKED_EQ,
} oci_op;

static const char *const kOpNames[] = {
    [OCI_EQ] = "SCMP_CMP_EQ",
    [OCI_NE] = "SCMP_CMP_NE",
    [OCI_LT] = "SCMP_CMP_LT",
    [OCI_LE] = "SCMP_CMP_LE",
    [OCI_GT] = "SCMP_CMP_GT",
    [OCI_GE] = "SCMP_CMP_GE",
    [OCI_MASKED_EQ] = "SCMP_CMP_MASKED_EQ",
};

typedef struct {
  guint index;
  oci_op op;
  uint64_t value;
  uint64_t value_two;
} oci_arg;

/* One kept entry for one system call. */
typedef struct {
  int nr;
  guint entry; /* index in "syscalls", for messages */
  sbx_action action;
  GArray *args; /* of oci_arg, all must hold */
} oci_rule;

struct sbx_oci_profile {
  char *name;
  sbx_action default_action;
  GArray *rules; /* of oci_rule, in file order */
};

/* ---- shared: comparisons as masked equalities ---------------------------- */

typedef struct {
  uint64_t mask; /* 0: always true */
  uint64_t value;
} masked;

static uint64_t width_mask(gboolean is32) {
  return is32 ? 0xffffffffull : ~0ull;
}

/* Appends to out the masked equalities whose union is exactly the set of
 * arguments for which c holds (an empty result: it never holds). */
static void cmp_to_masked(const sbx_cmp *c, GArray *out) {
  uint64_t m = width_mask(c->arg_is_32bit);
  uint64_t v = c->value & m;
  masked t;
  switch (c->op) {
    case SBX_CMP_EQ:
      t = (masked){m, v};
      g_array_append_val(out, t);
      return;
    case SBX_CMP_NE:
      /* By the highest bit that differs from v: disjoint prefixes, so a
       * conjunction of many != stays small (a trie of the values). */
      for (int i = 63; i >= 0; i--) {
        uint64_t b = 1ull << i;
        if (m & b) {
          uint64_t above = m & ~(b - 1);
          t = (masked){above, (v & above) ^ b};
          g_array_append_val(out, t);
        }
      }
      return;
    case SBX_CMP_LE:
      if (v == m) {
        t = (masked){0, 0};
        g_array_append_val(out, t);
        return;
      }
      v++; /* arg <= v - 1 is arg < v */
      G_GNUC_FALLTHROUGH;
    case SBX_CMP_LT:
      /* arg < v: at the highest bit where they differ, v has 1. */
      for (int i = 63; i >= 0; i--) {
        uint64_t b = 1ull << i;
        if ((m & b) && (v & b)) {
          uint64_t above = m & ~(b - 1);
          t = (masked){above, v & above & ~b};
          g_array_append_val(out, t);
        }
      }
      return;
    case SBX_CMP_GE:
      if (v == 0) {
        t = (masked){0, 0};
        g_array_append_val(out, t);
        return;
      }
      v--; /* arg >= v + 1 is arg > v */
      G_GNUC_FALLTHROUGH;
    case SBX_CMP_GT:
      for (int i = 63; i >= 0; i--) {
        uint64_t b = 1ull << i;
        if ((m & b) && !(v & b)) {
          uint64_t above = m & ~(b - 1);
          t = (masked){above, (v & above) | b};
          g_array_append_val(out, t);
        }
      }
      return;
    case SBX_CMP_SET:
      for (int i = 0; i < 64; i++) {
        uint64_t b = 1ull << i;
        if (v & b) {
          t = (masked){b, b};
          g_array_append_val(out, t);
        }
      }
      return;
    case SBX_CMP_IN:
      t = (masked){m & ~v, 0};
      g_array_append_val(out, t);
      return;
  }
}

/* Merges two masked equalities on one argument; FALSE if they exclude
 * each other. */
static gboolean merge_masked(masked *into, masked t) {
  uint64_t common = into->mask & t.mask;
  if ((into->value & common) != (t.value & common))
    return FALSE;
  into->mask |= t.mask;
  into->value |= t.value;
  return TRUE;
}

static gboolean has_term(const GArray *terms, masked t) {
  for (guint k = 0; k < terms->len; k++) {
    const masked *x = &g_array_index(terms, masked, k);
    if (x->mask == t.mask && x->value == t.value)
      return TRUE;
  }
  return FALSE;
}

/* The masked equalities whose union is exactly where all comparisons of
 * cmps[0..n) on argument arg hold; NULL when none of them is on arg. */
static GArray *conj_arg_terms(const sbx_cmp *cmps, size_t n, unsigned arg) {
  GArray *terms = NULL;
  for (size_t k = 0; k < n; k++) {
    if (cmps[k].arg != arg)
      continue;
    if (terms == NULL) {
      terms = g_array_new(FALSE, FALSE, sizeof(masked));
      masked all = {0, 0};
      g_array_append_val(terms, all);
    }
    GArray *alts = g_array_new(FALSE, FALSE, sizeof(masked));
    cmp_to_masked(&cmps[k], alts);
    GArray *next = g_array_new(FALSE, FALSE, sizeof(masked));
    for (guint i = 0; i < terms->len && next->len <= MAX_EXPANSION; i++) {
      for (guint j = 0; j < alts->len; j++) {
        masked t = g_array_index(terms, masked, i);
        if (merge_masked(&t, g_array_index(alts, masked, j)) &&
            !has_term(next, t))
          g_array_append_val(next, t);
      }
    }
    g_array_unref(alts);
    g_array_unref(terms);
    terms = next;
  }
  return terms;
}

/* The exact complement of a comparison (same argument, same width). */
static sbx_cmp negate_cmp(const sbx_cmp *c) {
  sbx_cmp n = *c;
  switch (c->op) {
    case SBX_CMP_EQ:
      n.op = SBX_CMP_NE;
      break;
    case SBX_CMP_NE:
      n.op = SBX_CMP_EQ;
      break;
    case SBX_CMP_LT:
      n.op = SBX_CMP_GE;
      break;
    case SBX_CMP_LE:
      n.op = SBX_CMP_GT;
      break;
    case SBX_CMP_GT:
      n.op = SBX_CMP_LE;
      break;
    case SBX_CMP_GE:
      n.op = SBX_CMP_LT;
      break;
    case SBX_CMP_SET: /* (a & v) == 0 */
      n.op = SBX_CMP_IN;
      n.value = ~c->value;
      break;
    case SBX_CMP_IN: /* (a & ~v) != 0 */
      n.op = SBX_CMP_SET;
      n.value = ~c->value;
      break;
  }
  if (n.arg_is_32bit)
    n.value &= 0xffffffffull;
  return n;
}

/* A disjunction of conjunctions: GPtrArray of GArray of sbx_cmp. */
static GPtrArray *dnf_new(void) {
  return g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
}

static GArray *conj_new(void) {
  return g_array_new(FALSE, FALSE, sizeof(sbx_cmp));
}

static GArray *conj_copy(const GArray *c) {
  GArray *n = conj_new();
  g_array_append_vals(n, c->data, c->len);
  return n;
}

/* not (C1 or C2 ...) as a disjunction, by distributing the negated
 * conjunctions, each written as disjoint pieces: not (a and b and c) is
 * (not a) or (a and not b) or (a and b and not c). The pieces share the
 * atoms they repeat, which keeps the masked forms of the result small.
 * NULL when it would exceed MAX_EXPANSION alternatives. */
static GPtrArray *dnf_negate(const sbx_conjunction *alts, size_t n_alts) {
  GPtrArray *result = dnf_new();
  g_ptr_array_add(result, conj_new()); /* true */
  for (size_t k = 0; k < n_alts; k++) {
    GPtrArray *next = dnf_new();
    for (guint r = 0; r < result->len; r++) {
      const GArray *base = g_ptr_array_index(result, r);
      for (size_t c = 0; c < alts[k].n_cmps; c++) {
        GArray *n = conj_copy(base);
        g_array_append_vals(n, alts[k].cmps, c);
        sbx_cmp neg = negate_cmp(&alts[k].cmps[c]);
        g_array_append_val(n, neg);
        g_ptr_array_add(next, n);
      }
    }
    g_ptr_array_unref(result);
    result = next;
    if (result->len > MAX_EXPANSION) {
      g_ptr_array_unref(result);
      return NULL;
    }
  }
  return result;
}

/* ---- reading a profile --------------------------------------------------- */

static void oci_error(GError **error, int code, const char *name,
                      const char *format, ...) G_GNUC_PRINTF(4, 5);

static void oci_error(GError **error, int code, const char *name,
                      const char *format, ...) {
  va_list ap;
  va_start(ap, format);
  char *msg = g_strdup_vprintf(format, ap);
  va_end(ap);
  g_set_error(error, SBX_OCI_ERROR, code, "%s: %s", name, msg);
  g_free(msg);
}

static gboolean node_is_null(JsonNode *n) {
  return n == NULL || JSON_NODE_HOLDS_NULL(n);
}

/* json-glib reads integers up to 2^64 - 1 into a gint64 bit for bit, so
 * the cast gives back the value written. (It cannot tell a negative
 * literal from its two's complement; profiles hold no negative numbers.) */
static gboolean node_uint(JsonNode *n, uint64_t *out) {
  if (n == NULL || !JSON_NODE_HOLDS_VALUE(n) ||
      json_node_get_value_type(n) != G_TYPE_INT64)
    return FALSE;
  *out = (uint64_t)json_node_get_int(n);
  return TRUE;
}

static const char *node_string(JsonNode *n) {
  if (n == NULL || !JSON_NODE_HOLDS_VALUE(n) ||
      json_node_get_value_type(n) != G_TYPE_STRING)
    return NULL;
  return json_node_get_string(n);
}

static const struct {
  const char *name;
  sbx_action_kind kind;
} kActions[] = {
    {"SCMP_ACT_ALLOW", SBX_ACTION_ALLOW},
    {"SCMP_ACT_ERRNO", SBX_ACTION_ERRNO},
    /* libseccomp's SCMP_ACT_KILL is SECCOMP_RET_KILL_THREAD. */
    {"SCMP_ACT_KILL", SBX_ACTION_KILL_THREAD},
    {"SCMP_ACT_KILL_THREAD", SBX_ACTION_KILL_THREAD},
    {"SCMP_ACT_KILL_PROCESS", SBX_ACTION_KILL_PROCESS},
    {"SCMP_ACT_TRAP", SBX_ACTION_TRAP},
    {"SCMP_ACT_TRACE", SBX_ACTION_TRACE},
    {"SCMP_ACT_LOG", SBX_ACTION_LOG},
    {"SCMP_ACT_NOTIFY", SBX_ACTION_USER_NOTIF},
};

/* An action and its errnoRet (runc's rule: EPERM when absent, for ERRNO
 * and TRACE alike). */
static gboolean parse_action(JsonNode *action, JsonNode *ret, const char *where,
                             sbx_action *out, GError **error) {
  const char *name = node_string(action);
  if (name == NULL) {
    g_set_error(error, SBX_OCI_ERROR, SBX_OCI_ERROR_JSON,
                "%s: the action must be a string such as SCMP_ACT_ALLOW",
                where);
    return FALSE;
  }
  for (size_t k = 0; k < G_N_ELEMENTS(kActions); k++) {
    if (strcmp(name, kActions[k].name) != 0)
      continue;
    *out = (sbx_action){kActions[k].kind, 0};
    if (out->kind == SBX_ACTION_ERRNO || out->kind == SBX_ACTION_TRACE) {
      uint64_t v = EPERM;
      if (!node_is_null(ret) && (!node_uint(ret, &v) || v > 4095)) {
        g_set_error(error, SBX_OCI_ERROR, SBX_OCI_ERROR_JSON,
                    "%s: errnoRet must be an integer from 0 to 4095", where);
        return FALSE;
      }
      out->data = (uint16_t)v;
    }
    return TRUE;
  }
  g_set_error(error, SBX_OCI_ERROR, SBX_OCI_ERROR_JSON,
              "%s: unknown action '%s'", where, name);
  return FALSE;
}

/* -1, 0, 1 as version a compares with version b ("5.13", "4.8.1"). */
static int compare_versions(const char *a, const char *b) {
  while (*a || *b) {
    unsigned long x = strtoul(a, (char **)&a, 10);
    unsigned long y = strtoul(b, (char **)&b, 10);
    if (x != y)
      return x < y ? -1 : 1;
    if (*a == '.')
      a++;
    if (*b == '.')
      b++;
    if ((*a && !g_ascii_isdigit(*a)) || (*b && !g_ascii_isdigit(*b)))
      break;
  }
  return 0;
}

static gboolean valid_version(const char *v) {
  if (v == NULL || !g_ascii_isdigit(*v))
    return FALSE;
  for (; *v; v++) {
    if (!g_ascii_isdigit(*v) && *v != '.')
      return FALSE;
  }
  return TRUE;
}

static gboolean is_x86_64_arch(const char *a) {
  return a != NULL && (strcmp(a, "amd64") == 0 || strcmp(a, "x86_64") == 0 ||
                       strcmp(a, "SCMP_ARCH_X86_64") == 0);
}

/* Whether an includes (want == TRUE) or excludes object selects this
 * process: x86-64, no capabilities, kernel >= SBX_OCI_ASSUMED_KERNEL.
 * Sets *matches to whether every condition given holds for it. */
static gboolean conditions_hold(JsonNode *node, const char *where,
                                gboolean *matches, gboolean *empty,
                                GError **error) {
  *matches = TRUE;
  *empty = TRUE;
  if (node_is_null(node))
    return TRUE;
  if (!JSON_NODE_HOLDS_OBJECT(node)) {
    g_set_error(error, SBX_OCI_ERROR, SBX_OCI_ERROR_JSON,
                "%s: includes/excludes must be objects", where);
    return FALSE;
  }
  JsonObject *o = json_node_get_object(node);
  JsonNode *caps = json_object_get_member(o, "caps");
  if (!node_is_null(caps) && JSON_NODE_HOLDS_ARRAY(caps) &&
      json_array_get_length(json_node_get_array(caps)) > 0) {
    *empty = FALSE;
    *matches = FALSE; /* the process holds no capability */
  }
  JsonNode *arches = json_object_get_member(o, "arches");
  if (!node_is_null(arches) && JSON_NODE_HOLDS_ARRAY(arches)) {
    JsonArray *a = json_node_get_array(arches);
    if (json_array_get_length(a) > 0) {
      gboolean found = FALSE;
      for (guint k = 0; k < json_array_get_length(a); k++)
        found |= is_x86_64_arch(node_string(json_array_get_element(a, k)));
      *empty = FALSE;
      *matches = *matches && found;
    }
  }
  JsonNode *kernel = json_object_get_member(o, "minKernel");
  if (!node_is_null(kernel)) {
    const char *v = node_string(kernel);
    if (!valid_version(v)) {
      g_set_error(error, SBX_OCI_ERROR, SBX_OCI_ERROR_JSON,
                  "%s: minKernel must be a version such as \"5.8\"", where);
      return FALSE;
    }
    if (compare_versions(v, SBX_OCI_ASSUMED_KERNEL) > 0) {
      g_set_error(error, SBX_OCI_ERROR, SBX_OCI_ERROR_UNSUPPORTED,
                  "%s: minKernel %s is newer than the oldest kernel sbx runs "
                  "on (%s), so whether the entry applies depends on the "
                  "machine; remove the condition or the entry",
                  where, v, SBX_OCI_ASSUMED_KERNEL);
      return FALSE;
    }
    *empty = FALSE;
  }
  return TRUE;
}

static gboolean parse_args(JsonNode *node, const char *where, GArray *out,
                           GError **error) {
  if (node_is_null(node))
    return TRUE;
  if (!JSON_NODE_HOLDS_ARRAY(node)) {
    g_set_error(error, SBX_OCI_ERROR, SBX_OCI_ERROR_JSON,
                "%s: args must be an array", where);
    return FALSE;
  }
  JsonArray *a = json_node_get_array(node);
  for (guint k = 0; k < json_array_get_length(a); k++) {
    JsonNode *e = json_array_get_element(a, k);
    if (!JSON_NODE_HOLDS_OBJECT(e)) {
      g_set_error(error, SBX_OCI_ERROR, SBX_OCI_ERROR_JSON,
                  "%s: args[%u] must be an object", where, k);
      return FALSE;
    }
    JsonObject *o = json_node_get_object(e);
    oci_arg arg = {0};
    uint64_t index;
    if (!node_uint(json_object_get_member(o, "index"), &index) || index > 5) {
      g_set_error(error, SBX_OCI_ERROR, SBX_OCI_ERROR_JSON,
                  "%s: args[%u].index must be 0 to 5", where, k);
      return FALSE;
    }
    arg.index = (guint)index;
    if (!node_uint(json_object_get_member(o, "value"), &arg.value)) {
      g_set_error(error, SBX_OCI_ERROR, SBX_OCI_ERROR_JSON,
                  "%s: args[%u].value must be an unsigned 64-bit integer",
                  where, k);
      return FALSE;
    }
    JsonNode *two = json_object_get_member(o, "valueTwo");
    if (!node_is_null(two) && !node_uint(two, &arg.value_two)) {
      g_set_error(error, SBX_OCI_ERROR, SBX_OCI_ERROR_JSON,
                  "%s: args[%u].valueTwo must be an unsigned 64-bit integer",
                  where, k);
      return FALSE;
    }
    const char *op = node_string(json_object_get_member(o, "op"));
    gboolean found = FALSE;
    for (size_t i = 0; op != NULL && i < G_N_ELEMENTS(kOpNames); i++) {
      if (strcmp(op, kOpNames[i]) == 0) {
        arg.op = (oci_op)i;
        found = TRUE;
      }
    }
    if (!found) {
      g_set_error(error, SBX_OCI_ERROR, SBX_OCI_ERROR_JSON,
                  "%s: args[%u].op must be one of SCMP_CMP_EQ, NE, LT, LE, "
                  "GT, GE, MASKED_EQ",
                  where, k);
      return FALSE;
    }
    g_array_append_val(out, arg);
  }
  return TRUE;
}

static void rule_clear(gpointer p) {
  oci_rule *r = p;
  if (r->args != NULL)
    g_array_unref(r->args);
}

void sbx_oci_profile_free(sbx_oci_profile *profile) {
  if (profile == NULL)
    return;
  g_array_unref(profile->rules);
  g_free(profile->name);
  g_free(profile);
}

/* The names of an entry: "names" (current format) or "name" (legacy). */
static GPtrArray *entry_names(JsonObject *o, const char *where,
                              GError **error) {
  GPtrArray *names = g_ptr_array_new();
  JsonNode *list = json_object_get_member(o, "names");
  const char *one = node_string(json_object_get_member(o, "name"));
  if (!node_is_null(list) && JSON_NODE_HOLDS_ARRAY(list)) {
    JsonArray *a = json_node_get_array(list);
    for (guint k = 0; k < json_array_get_length(a); k++) {
      const char *n = node_string(json_array_get_element(a, k));
      if (n == NULL) {
        g_set_error(error, SBX_OCI_ERROR, SBX_OCI_ERROR_JSON,
                    "%s: names[%u] must be a string", where, k);
        g_ptr_array_unref(names);
        return NULL;
      }
      g_ptr_array_add(names, (gpointer)n);
    }
  } else if (one != NULL) {
    g_ptr_array_add(names, (gpointer)one);
  } else {
    g_set_error(error, SBX_OCI_ERROR, SBX_OCI_ERROR_JSON,
                "%s: an entry needs \"names\" (or the older \"name\")", where);
    g_ptr_array_unref(names);
    return NULL;
  }
  return names;
}

static gboolean load_entry(sbx_oci_profile *p, JsonNode *node, guint index,
                           GError **error) {
  char *where = g_strdup_printf("%s: syscalls[%u]", p->name, index);
  gboolean ok = FALSE;
  GPtrArray *names = NULL;
  GArray *args = g_array_new(FALSE, FALSE, sizeof(oci_arg));
  if (!JSON_NODE_HOLDS_OBJECT(node)) {
    g_set_error(error, SBX_OCI_ERROR, SBX_OCI_ERROR_JSON,
                "%s: entries must be objects", where);
    goto out;
  }
  JsonObject *o = json_node_get_object(node);
  names = entry_names(o, where, error);
  if (names == NULL)
    goto out;
  sbx_action action;
  if (!parse_action(json_object_get_member(o, "action"),
                    json_object_get_member(o, "errnoRet"), where, &action,
                    error))
    goto out;
  if (!parse_args(json_object_get_member(o, "args"), where, args, error))
    goto out;
  gboolean inc, inc_empty, exc, exc_empty;
  if (!conditions_hold(json_object_get_member(o, "includes"), where, &inc,
                       &inc_empty, error) ||
      !conditions_hold(json_object_get_member(o, "excludes"), where, &exc,
                       &exc_empty, error))
    goto out;
  /* An excludes object drops the entry when any of its conditions holds;
   * for a process without capabilities only arches and minKernel can. */
  gboolean excluded = FALSE;
  if (!exc_empty) {
    JsonObject *x = json_node_get_object(json_object_get_member(o, "excludes"));
    JsonNode *arches = json_object_get_member(x, "arches");
    if (!node_is_null(arches) && JSON_NODE_HOLDS_ARRAY(arches)) {
      JsonArray *a = json_node_get_array(arches);
      for (guint k = 0; k < json_array_get_length(a); k++)
        excluded |= is_x86_64_arch(node_string(json_array_get_element(a, k)));
    }
    excluded |= !node_is_null(json_object_get_member(x, "minKernel"));
  }
  if (!inc || excluded) {
    ok = TRUE;
    goto out;
  }
  /* libseccomp compares each argument once per rule, so runc adds an
   * entry that compares one argument twice as one rule per comparison:
   * any of them then suffices. */
  gboolean split = FALSE;
  for (guint i = 0; i < args->len; i++)
    for (guint j = i + 1; j < args->len; j++)
      split |= g_array_index(args, oci_arg, i).index ==
               g_array_index(args, oci_arg, j).index;
  for (guint k = 0; k < names->len; k++) {
    int nr = sbx_syscall_number(g_ptr_array_index(names, k));
    if (nr < 0)
      continue; /* not an x86-64 system call: the runtimes skip it too */
    for (guint i = 0; i < (split ? args->len : 1); i++) {
      oci_rule r = {.nr = nr, .entry = index, .action = action};
      if (split) {
        r.args = g_array_new(FALSE, FALSE, sizeof(oci_arg));
        g_array_append_val(r.args, g_array_index(args, oci_arg, i));
      } else {
        r.args = g_array_copy(args);
      }
      g_array_append_val(p->rules, r);
    }
  }
  ok = TRUE;
out:
  if (names != NULL)
    g_ptr_array_unref(names);
  g_array_unref(args);
  g_free(where);
  return ok;
}

static gboolean load_root(sbx_oci_profile *p, JsonNode *root, GError **error) {
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT(root)) {
    g_set_error(error, SBX_OCI_ERROR, SBX_OCI_ERROR_JSON,
                "%s: a seccomp profile is a JSON object", p->name);
    return FALSE;
  }
  JsonObject *o = json_node_get_object(root);
  char *where = g_strdup_printf("%s: defaultAction", p->name);
  gboolean ok = parse_action(json_object_get_member(o, "defaultAction"),
                             json_object_get_member(o, "defaultErrnoRet"),
                             where, &p->default_action, error);
  g_free(where);
  if (!ok)
    return FALSE;
  /* "architectures" (or archMap's keys) must cover x86-64 if given. */
  JsonNode *archs = json_object_get_member(o, "architectures");
  JsonNode *map = json_object_get_member(o, "archMap");
  if (!node_is_null(archs) && JSON_NODE_HOLDS_ARRAY(archs) &&
      json_array_get_length(json_node_get_array(archs)) > 0) {
    JsonArray *a = json_node_get_array(archs);
    gboolean found = FALSE;
    for (guint k = 0; k < json_array_get_length(a); k++)
      found |= is_x86_64_arch(node_string(json_array_get_element(a, k)));
    if (!found) {
      g_set_error(error, SBX_OCI_ERROR, SBX_OCI_ERROR_UNSUPPORTED,
                  "%s: architectures does not name SCMP_ARCH_X86_64, the "
                  "only architecture sbx policies allow",
                  p->name);
      return FALSE;
    }
  } else if (!node_is_null(map) && JSON_NODE_HOLDS_ARRAY(map)) {
    JsonArray *a = json_node_get_array(map);
    gboolean found = json_array_get_length(a) == 0;
    for (guint k = 0; k < json_array_get_length(a); k++) {
      JsonNode *e = json_array_get_element(a, k);
      if (JSON_NODE_HOLDS_OBJECT(e))
        found |= is_x86_64_arch(node_string(
            json_object_get_member(json_node_get_object(e), "architecture")));
    }
    if (!found) {
      g_set_error(error, SBX_OCI_ERROR, SBX_OCI_ERROR_UNSUPPORTED,
                  "%s: archMap has no SCMP_ARCH_X86_64 entry, the only "
                  "architecture sbx policies allow",
                  p->name);
      return FALSE;
    }
  }
  JsonNode *calls = json_object_get_member(o, "syscalls");
  if (node_is_null(calls))
    return TRUE;
  if (!JSON_NODE_HOLDS_ARRAY(calls)) {
    g_set_error(error, SBX_OCI_ERROR, SBX_OCI_ERROR_JSON,
                "%s: syscalls must be an array", p->name);
    return FALSE;
  }
  JsonArray *a = json_node_get_array(calls);
  for (guint k = 0; k < json_array_get_length(a); k++) {
    if (!load_entry(p, json_array_get_element(a, k), k, error))
      return FALSE;
  }
  return TRUE;
}

sbx_oci_profile *sbx_oci_profile_load_data(const char *json, gssize len,
                                           const char *display_name,
                                           GError **error) {
  sbx_oci_profile *p = g_new0(sbx_oci_profile, 1);
  p->name = g_strdup(display_name ? display_name : "<profile>");
  p->rules = g_array_new(FALSE, FALSE, sizeof(oci_rule));
  g_array_set_clear_func(p->rules, rule_clear);
  JsonParser *parser = json_parser_new_immutable();
  GError *local = NULL;
  gboolean ok = json_parser_load_from_data(parser, json, len, &local);
  if (!ok) {
    g_set_error(error, SBX_OCI_ERROR, SBX_OCI_ERROR_JSON, "%s:%s", p->name,
                local->message);
    g_error_free(local);
  } else {
    ok = load_root(p, json_parser_get_root(parser), error);
  }
  g_object_unref(parser);
  if (!ok) {
    sbx_oci_profile_free(p);
    return NULL;
  }
  return p;
}

sbx_oci_profile *sbx_oci_profile_load_file(const char *path, GError **error) {
  char *text = NULL;
  gsize len = 0;
  GError *local = NULL;
  if (!g_file_get_contents(path, &text, &len, &local)) {
    g_set_error(error, SBX_OCI_ERROR, SBX_OCI_ERROR_IO, "%s: %s", path,
                local->message);
    g_error_free(local);
    return NULL;
  }
  sbx_oci_profile *p =
      sbx_oci_profile_load_data(text, (gssize)len, path, error);
  g_free(text);
  return p;
}

/* ---- the reference evaluator ------------------------------------------- */

static gboolean oci_arg_holds(const oci_arg *a, uint64_t x) {
  switch (a->op) {
    case OCI_EQ:
      return x == a->value;
    case OCI_NE:
      return x != a->value;
    case OCI_LT:
      return x < a->value;
    case OCI_LE:
      return x <= a->value;
    case OCI_GT:
      return x > a->value;
    case OCI_GE:
      return x >= a->value;
    case OCI_MASKED_EQ:
      return (x & a->value) == a->value_two;
  }
  return FALSE;
}

uint32_t sbx_oci_profile_eval(const sbx_oci_profile *profile,
                              const struct seccomp_data *data) {
  if (data->arch != AUDIT_ARCH_X86_64 || (data->nr & X32_SYSCALL_BIT))
    return SECCOMP_RET_KILL_PROCESS;
  /* libseccomp's rule database: the first unconditional rule of a system
   * call replaces its conditional rules, and later rules are ignored. */
  for (guint k = 0; k < profile->rules->len; k++) {
    const oci_rule *r = &g_array_index(profile->rules, oci_rule, k);
    if (r->nr == data->nr && r->args->len == 0)
      return sbx_action_to_ret(r->action);
  }
  for (guint k = 0; k < profile->rules->len; k++) {
    const oci_rule *r = &g_array_index(profile->rules, oci_rule, k);
    if (r->nr != data->nr)
      continue;
    gboolean all = TRUE;
    for (guint i = 0; i < r->args->len && all; i++) {
      const oci_arg *a = &g_array_index(r->args, oci_arg, i);
      all = oci_arg_holds(a, data->args[a->index]);
    }
    if (all)
      return sbx_action_to_ret(r->action);
  }
  return sbx_action_to_ret(profile->default_action);
}

/* ---- import -------------------------------------------------------------- */

static gboolean actions_equal(sbx_action a, sbx_action b) {
  return a.kind == b.kind && a.data == b.data;
}

static void append_action(GString *s, sbx_action a) {
  switch (a.kind) {
    case SBX_ACTION_ALLOW:
      g_string_append(s, "allow");
      break;
    case SBX_ACTION_ERRNO:
      g_string_append_printf(s, "return %u", a.data);
      break;
    case SBX_ACTION_KILL_PROCESS:
      g_string_append(s, "kill-process");
      break;
    case SBX_ACTION_KILL_THREAD:
      g_string_append(s, "kill-thread");
      break;
    case SBX_ACTION_TRAP:
      g_string_append(s, "trap");
      break;
    case SBX_ACTION_TRACE:
      g_string_append(s, "trace");
      break;
    case SBX_ACTION_LOG:
      g_string_append(s, "log");
      break;
    case SBX_ACTION_USER_NOTIF:
      g_string_append(s, "user-notify");
      break;
  }
}

static const char *const kSbxOps[] = {
    [SBX_CMP_EQ] = "==", [SBX_CMP_NE] = "!=", [SBX_CMP_LT] = "<",
    [SBX_CMP_LE] = "<=", [SBX_CMP_GT] = ">",  [SBX_CMP_GE] = ">=",
    [SBX_CMP_SET] = "&", [SBX_CMP_IN] = "in",
};

static void append_dnf(GString *s, const GPtrArray *dnf) {
  for (guint k = 0; k < dnf->len; k++) {
    const GArray *c = g_ptr_array_index(dnf, k);
    if (k > 0)
      g_string_append(s, " || ");
    for (guint i = 0; i < c->len; i++) {
      const sbx_cmp *x = &g_array_index(c, sbx_cmp, i);
      g_string_append_printf(s, "%sarg%u %s 0x%" G_GINT64_MODIFIER "x",
                             i > 0 ? " && " : "", x->arg, kSbxOps[x->op],
                             x->value);
    }
  }
}

/* The sbx comparisons meaning one entry's args (all must hold). Sets
 * *never when the args can never all hold. */
static gboolean entry_to_conj(const sbx_oci_profile *p, const oci_rule *r,
                              GArray *conj, gboolean *never, GError **error) {
  const char *name = sbx_syscall_name(r->nr);
  *never = FALSE;
  for (guint k = 0; k < r->args->len; k++) {
    const oci_arg *a = &g_array_index(r->args, oci_arg, k);
    gboolean is32 = sbx_syscall_arg_is_32bit(r->nr, a->index);
    uint64_t wide = a->value | (a->op == OCI_MASKED_EQ ? a->value_two : 0);
    if (is32 && (wide >> 32) != 0) {
      oci_error(error, SBX_OCI_ERROR_UNSUPPORTED, p->name,
                "syscalls[%u] (%s): argument %u is int-sized, so the kernel "
                "reads only its low 32 bits, but the entry compares it with "
                "0x%" G_GINT64_MODIFIER "x",
                r->entry, name, a->index, wide);
      return FALSE;
    }
    sbx_cmp c = {.arg = (uint8_t)a->index, .arg_is_32bit = is32};
    if (a->op != OCI_MASKED_EQ) {
      static const sbx_cmp_op kMap[] = {
          [OCI_EQ] = SBX_CMP_EQ, [OCI_NE] = SBX_CMP_NE, [OCI_LT] = SBX_CMP_LT,
          [OCI_LE] = SBX_CMP_LE, [OCI_GT] = SBX_CMP_GT, [OCI_GE] = SBX_CMP_GE,
      };
      c.op = kMap[a->op];
      c.value = a->value;
      g_array_append_val(conj, c);
      continue;
    }
    /* (arg & m) == w: no bit of m outside w, and every bit of w. */
    uint64_t m = a->value, w = a->value_two;
    if (w & ~m) {
      *never = TRUE;
      return TRUE;
    }
    if (m & ~w) {
      c.op = SBX_CMP_IN;
      c.value = ~(m & ~w) & width_mask(is32);
      g_array_append_val(conj, c);
    }
    for (int i = 0; i < 64; i++) {
      if (w & (1ull << i)) {
        c.op = SBX_CMP_SET;
        c.value = 1ull << i;
        g_array_append_val(conj, c);
      }
    }
  }
  return TRUE;
}

/* Two conjunctions never both hold when, on some argument, no value
 * satisfies both. */
static gboolean conj_contradict(const GArray *a, const GArray *b) {
  gboolean found = FALSE;
  for (unsigned arg = 0; arg < 6 && !found; arg++) {
    GArray *x = conj_arg_terms((const sbx_cmp *)(void *)a->data, a->len, arg);
    GArray *y = conj_arg_terms((const sbx_cmp *)(void *)b->data, b->len, arg);
    if (x != NULL && y != NULL) {
      found = TRUE;
      for (guint i = 0; i < x->len && found; i++) {
        for (guint j = 0; j < y->len && found; j++) {
          masked t = g_array_index(x, masked, i);
          found = !merge_masked(&t, g_array_index(y, masked, j));
        }
      }
    } else if ((x != NULL && x->len == 0) || (y != NULL && y->len == 0)) {
      found = TRUE; /* one side never holds */
    }
    if (x != NULL)
      g_array_unref(x);
    if (y != NULL)
      g_array_unref(y);
  }
  return found;
}

/* Whether the union of the masked equalities in l contains every value
 * t matches, splitting t on the bits l tests until each piece lies inside
 * one of them. */
static gboolean terms_cover(masked t, const GArray *l, int depth) {
  uint64_t split = 0;
  for (guint k = 0; k < l->len; k++) {
    masked x = g_array_index(l, masked, k);
    if ((x.mask & ~t.mask) == 0 && (t.value & x.mask) == x.value)
      return TRUE;
    masked probe = t;
    if (split == 0 && merge_masked(&probe, x))
      split = x.mask & ~t.mask;
  }
  if (split == 0 || depth > 64)
    return FALSE;
  uint64_t b = split & -split;
  masked lo = {t.mask | b, t.value}, hi = {t.mask | b, t.value | b};
  return terms_cover(lo, l, depth + 1) && terms_cover(hi, l, depth + 1);
}

/* Every value of argument arg that conjunction c allows is allowed by the
 * terms in l. */
static gboolean arg_within(const GArray *c, unsigned arg, const GArray *l) {
  GArray *terms = conj_arg_terms((const sbx_cmp *)(void *)c->data, c->len, arg);
  if (terms == NULL) {
    terms = g_array_new(FALSE, FALSE, sizeof(masked));
    masked all = {0, 0};
    g_array_append_val(terms, all);
  }
  gboolean ok = TRUE;
  for (guint k = 0; k < terms->len && ok; k++)
    ok = terms_cover(g_array_index(terms, masked, k), l, 0);
  g_array_unref(terms);
  return ok;
}

/* The arguments a conjunction compares, as a bit set. */
static unsigned conj_args(const GArray *c) {
  unsigned used = 0;
  for (guint k = 0; k < c->len; k++)
    used |= 1u << g_array_index(c, sbx_cmp, k).arg;
  return used;
}

/* c lies inside the union dnf: inside one alternative, or, for one of the
 * arguments c tests, inside the union of the alternatives that test only
 * that argument. A sufficient test; FALSE may mean "not shown". */
static gboolean conj_within(const GArray *c, const GPtrArray *dnf) {
  for (guint k = 0; k < dnf->len; k++) {
    const GArray *e = g_ptr_array_index(dnf, k);
    gboolean inside = TRUE;
    for (unsigned arg = 0; arg < 6 && inside; arg++) {
      GArray *l = conj_arg_terms((const sbx_cmp *)(void *)e->data, e->len, arg);
      if (l != NULL) {
        inside = arg_within(c, arg, l);
        g_array_unref(l);
      }
    }
    if (inside)
      return TRUE;
  }
  /* c lies inside the alternatives that test only argument arg if its
   * values of arg do. */
  unsigned used = conj_args(c);
  for (unsigned arg = 0; arg < 6; arg++) {
    if (!(used & (1u << arg)))
      continue;
    GArray *all = g_array_new(FALSE, FALSE, sizeof(masked));
    for (guint k = 0; k < dnf->len; k++) {
      const GArray *e = g_ptr_array_index(dnf, k);
      if (conj_args(e) != (1u << arg))
        continue;
      GArray *l = conj_arg_terms((const sbx_cmp *)(void *)e->data, e->len, arg);
      g_array_append_vals(all, l->data, l->len);
      g_array_unref(l);
    }
    gboolean ok = all->len > 0 && arg_within(c, arg, all);
    g_array_unref(all);
    if (ok)
      return TRUE;
  }
  return FALSE;
}

static gboolean dnf_within(const GPtrArray *x, const GPtrArray *y) {
  for (guint k = 0; k < x->len; k++)
    if (!conj_within(g_ptr_array_index(x, k), y))
      return FALSE;
  return TRUE;
}

typedef struct {
  sbx_action action;
  gboolean unconditional;
  GPtrArray *alts; /* dnf */
} action_group;

static gboolean dnf_has(const GPtrArray *dnf, const GArray *c) {
  for (guint k = 0; k < dnf->len; k++) {
    const GArray *x = g_ptr_array_index(dnf, k);
    gboolean same = x->len == c->len;
    for (guint i = 0; i < c->len && same; i++) {
      const sbx_cmp *p = &g_array_index(x, sbx_cmp, i);
      const sbx_cmp *q = &g_array_index(c, sbx_cmp, i);
      same = p->arg == q->arg && p->op == q->op && p->value == q->value;
    }
    if (same)
      return TRUE;
  }
  return FALSE;
}

static gboolean dnf_disjoint(const GPtrArray *x, const GPtrArray *y) {
  for (guint i = 0; i < x->len; i++)
    for (guint j = 0; j < y->len; j++)
      if (!conj_contradict(g_ptr_array_index(x, i), g_ptr_array_index(y, j)))
        return FALSE;
  return TRUE;
}

static sbx_conjunction *dnf_view(const GPtrArray *dnf) {
  sbx_conjunction *v = g_new0(sbx_conjunction, MAX(dnf->len, 1));
  for (guint k = 0; k < dnf->len; k++) {
    const GArray *c = g_ptr_array_index(dnf, k);
    v[k].cmps = (sbx_cmp *)(void *)c->data;
    v[k].n_cmps = c->len;
  }
  return v;
}

/* Writes the rule line of one system call, given the kept entries' action
 * groups; refuses what the sbx rule forms (action; filter -> allow, else
 * return N or the default) cannot say. */
static gboolean write_rule(const sbx_oci_profile *p, int nr, GArray *groups,
                           guint entry, GString *out, GError **error) {
  const char *name = sbx_syscall_name(nr);
  sbx_action def = p->default_action;
  if (groups->len == 0)
    return TRUE;
  if (groups->len == 1) {
    action_group *g = &g_array_index(groups, action_group, 0);
    if (g->unconditional) {
      g_string_append_printf(out, "%s: ", name);
      append_action(out, g->action);
      g_string_append_c(out, '\n');
      return TRUE;
    }
    if (actions_equal(g->action, def))
      return TRUE; /* matched or not, the default */
    if (g->action.kind == SBX_ACTION_ALLOW) {
      g_string_append_printf(out, "%s: ", name);
      append_dnf(out, g->alts);
      g_string_append_c(out, '\n');
      return TRUE;
    }
    if (def.kind == SBX_ACTION_ALLOW && g->action.kind == SBX_ACTION_ERRNO) {
      sbx_conjunction *view = dnf_view(g->alts);
      GPtrArray *neg = dnf_negate(view, g->alts->len);
      g_free(view);
      if (neg != NULL && neg->len > 0) {
        g_string_append_printf(out, "%s: ", name);
        append_dnf(out, neg);
        g_string_append(out, "; ");
        append_action(out, g->action);
        g_string_append_c(out, '\n');
        g_ptr_array_unref(neg);
        return TRUE;
      }
      if (neg != NULL)
        g_ptr_array_unref(neg);
    }
  } else if (groups->len == 2) {
    action_group *x = &g_array_index(groups, action_group, 0);
    action_group *y = &g_array_index(groups, action_group, 1);
    if (y->action.kind == SBX_ACTION_ALLOW) {
      action_group *t = x;
      x = y;
      y = t;
    }
    if (x->action.kind == SBX_ACTION_ALLOW && !x->unconditional &&
        !y->unconditional && dnf_disjoint(x->alts, y->alts)) {
      gboolean exact = actions_equal(y->action, def);
      if (!exact && y->action.kind == SBX_ACTION_ERRNO) {
        /* X and Y must cover every call: not X inside Y, or (the same)
         * not Y inside X, whichever complement is small enough. */
        sbx_conjunction *view = dnf_view(x->alts);
        GPtrArray *neg = dnf_negate(view, x->alts->len);
        g_free(view);
        exact = neg != NULL && dnf_within(neg, y->alts);
        if (neg != NULL)
          g_ptr_array_unref(neg);
        if (!exact) {
          view = dnf_view(y->alts);
          neg = dnf_negate(view, y->alts->len);
          g_free(view);
          exact = neg != NULL && dnf_within(neg, x->alts);
          if (neg != NULL)
            g_ptr_array_unref(neg);
        }
      }
      if (exact) {
        g_string_append_printf(out, "%s: ", name);
        append_dnf(out, x->alts);
        if (!actions_equal(y->action, def)) {
          g_string_append(out, "; ");
          append_action(out, y->action);
        }
        g_string_append_c(out, '\n');
        return TRUE;
      }
    }
  }
  oci_error(error, SBX_OCI_ERROR_UNSUPPORTED, p->name,
            "syscalls[%u] (%s): the entries for %s cannot be written "
            "exactly as one sbx rule (an sbx rule is an action, or a filter "
            "that allows what it matches and returns one errno or the "
            "default otherwise; entries whose actions may overlap are "
            "refused)",
            entry, name, name);
  return FALSE;
}

static void group_clear(gpointer p) {
  action_group *g = p;
  g_ptr_array_unref(g->alts);
}

static int compare_rule_nr(gconstpointer a, gconstpointer b) {
  const oci_rule *x = a, *y = b;
  if (x->nr != y->nr)
    return (x->nr > y->nr) - (x->nr < y->nr);
  return (x->entry > y->entry) - (x->entry < y->entry);
}

/* The policy language writes trace with data 0 only. */
static gboolean action_expressible(const sbx_oci_profile *p, sbx_action a,
                                   const char *where, GError **error) {
  if (a.kind != SBX_ACTION_TRACE || a.data == 0)
    return TRUE;
  oci_error(error, SBX_OCI_ERROR_UNSUPPORTED, p->name,
            "%s: SCMP_ACT_TRACE with errnoRet %u (runc's default is EPERM) "
            "cannot be written: sbx policies trace with data 0 only; give "
            "\"errnoRet\": 0",
            where, a.data);
  return FALSE;
}

char *sbx_oci_import(const sbx_oci_profile *p, GError **error) {
  if (!action_expressible(p, p->default_action, "defaultAction", error))
    return NULL;
  for (guint k = 0; k < p->rules->len; k++) {
    const oci_rule *r = &g_array_index(p->rules, oci_rule, k);
    char *where =
        g_strdup_printf("syscalls[%u] (%s)", r->entry, sbx_syscall_name(r->nr));
    gboolean ok = action_expressible(p, r->action, where, error);
    g_free(where);
    if (!ok)
      return NULL;
  }
  GString *out = g_string_new(NULL);
  g_string_append_printf(out,
                         "# Imported from the OCI seccomp profile %s for an "
                         "x86-64 process\n# without capabilities (sbx-policy "
                         "import --format oci).\n",
                         p->name);
  g_string_append(out, "@default ");
  append_action(out, p->default_action);
  g_string_append_c(out, '\n');

  GArray *sorted =
      g_array_sized_new(FALSE, FALSE, sizeof(oci_rule), p->rules->len);
  g_array_append_vals(sorted, p->rules->data, p->rules->len);
  g_array_sort(sorted, compare_rule_nr);
  gboolean ok = TRUE;
  for (guint k = 0; k < sorted->len && ok;) {
    int nr = g_array_index(sorted, oci_rule, k).nr;
    GArray *groups = g_array_new(FALSE, TRUE, sizeof(action_group));
    g_array_set_clear_func(groups, group_clear);
    guint first_entry = g_array_index(sorted, oci_rule, k).entry;
    const oci_rule *uncond = NULL;
    for (guint i = k; i < sorted->len && !uncond &&
                      g_array_index(sorted, oci_rule, i).nr == nr;
         i++) {
      if (g_array_index(sorted, oci_rule, i).args->len == 0)
        uncond = &g_array_index(sorted, oci_rule, i);
    }
    for (; k < sorted->len && g_array_index(sorted, oci_rule, k).nr == nr;
         k++) {
      const oci_rule *r = &g_array_index(sorted, oci_rule, k);
      /* As libseccomp: an unconditional rule replaces all others. */
      if (uncond != NULL && r != uncond)
        continue;
      GArray *conj = conj_new();
      gboolean never;
      if (!entry_to_conj(p, r, conj, &never, error)) {
        g_array_unref(conj);
        ok = FALSE;
        break;
      }
      if (never) {
        g_array_unref(conj);
        continue;
      }
      action_group *g = NULL;
      for (guint i = 0; i < groups->len; i++) {
        if (actions_equal(g_array_index(groups, action_group, i).action,
                          r->action))
          g = &g_array_index(groups, action_group, i);
      }
      if (g == NULL) {
        action_group n = {.action = r->action, .alts = dnf_new()};
        g_array_append_val(groups, n);
        g = &g_array_index(groups, action_group, groups->len - 1);
      }
      if (conj->len == 0)
        g->unconditional = TRUE;
      if (dnf_has(g->alts, conj))
        g_array_unref(conj); /* an entry repeated */
      else
        g_ptr_array_add(g->alts, conj);
    }
    if (ok)
      ok = write_rule(p, nr, groups, first_entry, out, error);
    g_array_unref(groups);
  }
  g_array_unref(sorted);
  if (!ok) {
    g_string_free(out, TRUE);
    return NULL;
  }
  /* The text must load; anything else is a defect here, reported as one. */
  GError *local = NULL;
  sbx_policy *check = sbx_policy_parse_string(out->str, p->name, NULL, &local);
  if (check == NULL) {
    oci_error(error, SBX_OCI_ERROR_UNSUPPORTED, p->name,
              "the imported policy does not load: %s", local->message);
    g_error_free(local);
    g_string_free(out, TRUE);
    return NULL;
  }
  sbx_policy_free(check);
  return g_string_free(out, FALSE);
}

/* ---- export -------------------------------------------------------------- */

typedef struct {
  GArray *args; /* of oci_arg */
} arg_list;

static gboolean json_action(sbx_action a, const char *rule, GString *s,
                            const char *key, const char *ret_key,
                            GError **error) {
  const char *name = NULL;
  gboolean ret = FALSE;
  switch (a.kind) {
    case SBX_ACTION_ALLOW:
      name = "SCMP_ACT_ALLOW";
      break;
    case SBX_ACTION_ERRNO:
      name = "SCMP_ACT_ERRNO";
      ret = TRUE;
      break;
    case SBX_ACTION_KILL_PROCESS:
      name = "SCMP_ACT_KILL_PROCESS";
      break;
    case SBX_ACTION_KILL_THREAD:
      name = "SCMP_ACT_KILL_THREAD";
      break;
    case SBX_ACTION_TRAP:
      name = "SCMP_ACT_TRAP";
      break;
    case SBX_ACTION_TRACE:
      name = "SCMP_ACT_TRACE";
      ret = TRUE;
      break;
    case SBX_ACTION_LOG:
      name = "SCMP_ACT_LOG";
      break;
    case SBX_ACTION_USER_NOTIF:
      name = "SCMP_ACT_NOTIFY";
      break;
  }
  if (name == NULL || (a.kind == SBX_ACTION_TRAP && a.data != 0)) {
    g_set_error(error, SBX_OCI_ERROR, SBX_OCI_ERROR_UNSUPPORTED,
                "%s: the action has no OCI equivalent (SCMP_ACT_TRAP carries "
                "no data)",
                rule);
    return FALSE;
  }
  g_string_append_printf(s, "\"%s\": \"%s\"", key, name);
  if (ret)
    g_string_append_printf(s, ", \"%s\": %u", ret_key, a.data);
  return TRUE;
}

/* ---- numbers that double-based JSON readers keep ----------------------- */

/* Bits 53..63: a number with any of them set is above
 * SBX_OCI_MAX_SAFE_NUMBER. */
#define HIGH_BITS (~SBX_OCI_MAX_SAFE_NUMBER)
#define N_HIGH_VALUES 2048 /* values of the 11 high bits */

/* mask is bits k..52 for some k (0 when k == 53): the term (arg & (HIGH |
 * mask)) == 0 is then arg <= 2^k - 1. */
static gboolean is_top_run(uint64_t mask, unsigned *k) {
  for (unsigned i = 0; i <= 53; i++) {
    if (mask == (SBX_OCI_MAX_SAFE_NUMBER & ~((UINT64_C(1) << i) - 1))) {
      *k = i;
      return TRUE;
    }
  }
  return FALSE;
}

/* Rewrites the masked equalities whose union is one argument's condition
 * (terms) into comparisons with numbers of at most SBX_OCI_MAX_SAFE_NUMBER
 * whose union is the same set, appending them to out:
 *   - a term with a small mask is written as it is;
 *   - "the high bits are 0 and bits k..52 are 0" is arg <= 2^k - 1;
 *   - terms that test the high bits only are unioned over the 2048 values
 *     of those bits: "some high bit is set" is arg > 2^53 - 1, "any" is no
 *     comparison at all.
 * What is left has no such equivalent (runc reads one comparison per
 * argument in an entry, so "high bits 0" cannot be combined with a test of
 * the low bits): appended to hard. */
static void rewrite_terms(const GArray *terms, unsigned arg, GArray *out,
                          GArray *hard) {
  gboolean high_union[N_HIGH_VALUES] = {FALSE};
  GArray *high_terms = g_array_new(FALSE, FALSE, sizeof(masked));
  /* "Bit b is set" for every b from some k up is arg > 2^k - 1: one
   * comparison instead of 64 - k (libseccomp's time grows steeply with the
   * comparisons on one argument). */
  uint64_t set_bits = 0;
  for (guint k = 0; k < terms->len; k++) {
    masked t = g_array_index(terms, masked, k);
    if (t.mask != 0 && (t.mask & (t.mask - 1)) == 0 && t.value == t.mask)
      set_bits |= t.mask;
  }
  unsigned from = 64;
  while (from > 0 && (set_bits >> (from - 1)) & 1)
    from--;
  if (from == 64 || from > 53)
    from = 64; /* nothing to fold, or 2^from - 1 is not a safe number */
  else {
    oci_arg a = {arg, OCI_GT, (UINT64_C(1) << from) - 1, 0};
    if (from == 0)
      a = (oci_arg){arg, OCI_MASKED_EQ, 0, 0}; /* always true */
    g_array_append_val(out, a);
  }
  for (guint k = 0; k < terms->len; k++) {
    masked t = g_array_index(terms, masked, k);
    unsigned run;
    if (from < 64 && t.mask == t.value && t.mask >= (UINT64_C(1) << from) &&
        (t.mask & (t.mask - 1)) == 0)
      continue; /* folded above */
    if (t.mask <= SBX_OCI_MAX_SAFE_NUMBER) {
      oci_arg a = {arg, OCI_MASKED_EQ, t.mask, t.value};
      g_array_append_val(out, a);
    } else if ((t.mask & HIGH_BITS) == HIGH_BITS &&
               (t.value & HIGH_BITS) == 0 && t.value == 0 &&
               is_top_run(t.mask & SBX_OCI_MAX_SAFE_NUMBER, &run)) {
      oci_arg a = {arg, OCI_LE, (UINT64_C(1) << run) - 1, 0};
      g_array_append_val(out, a);
    } else if ((t.mask & SBX_OCI_MAX_SAFE_NUMBER) == 0) {
      for (uint64_t h = 0; h < N_HIGH_VALUES; h++)
        if (((h << 53) & t.mask) == t.value)
          high_union[h] = TRUE;
      g_array_append_val(high_terms, t);
    } else {
      g_array_append_val(hard, t);
    }
  }
  if (high_terms->len > 0) {
    gboolean all_nonzero = TRUE;
    for (uint64_t h = 1; h < N_HIGH_VALUES; h++)
      all_nonzero = all_nonzero && high_union[h];
    if (all_nonzero && high_union[0]) {
      oci_arg a = {arg, OCI_MASKED_EQ, 0, 0}; /* always true */
      g_array_append_val(out, a);
    } else if (all_nonzero) {
      oci_arg a = {arg, OCI_GT, SBX_OCI_MAX_SAFE_NUMBER, 0};
      g_array_append_val(out, a);
    } else {
      g_array_append_vals(hard, high_terms->data, high_terms->len);
    }
  }
  g_array_unref(high_terms);
}

/* ---- export -------------------------------------------------------------- */

/* Where an exported rule came from, for messages. */
typedef struct {
  const char *name;
  const char *file;
  unsigned line;
  gboolean large_numbers;
} rule_origin;

/* The choices for one argument of one conjunction (each one comparison, or
 * none), whose union is exactly where cmps (all on arg) hold. */
static gboolean arg_choices(const GArray *on_arg, unsigned arg,
                            const rule_origin *o, GArray *choices,
                            GError **error) {
  const sbx_cmp *c0 = &g_array_index(on_arg, sbx_cmp, 0);
  if (on_arg->len == 1 && !c0->arg_is_32bit && c0->op <= SBX_CMP_GE &&
      c0->value <= SBX_OCI_MAX_SAFE_NUMBER) {
    static const oci_op kMap[] = {
        [SBX_CMP_EQ] = OCI_EQ, [SBX_CMP_NE] = OCI_NE, [SBX_CMP_LT] = OCI_LT,
        [SBX_CMP_LE] = OCI_LE, [SBX_CMP_GT] = OCI_GT, [SBX_CMP_GE] = OCI_GE,
    };
    oci_arg a = {.index = arg, .op = kMap[c0->op], .value = c0->value};
    g_array_append_val(choices, a);
    return TRUE;
  }
  GArray *terms =
      conj_arg_terms((const sbx_cmp *)(void *)on_arg->data, on_arg->len, arg);
  GArray *hard = g_array_new(FALSE, FALSE, sizeof(masked));
  rewrite_terms(terms, arg, choices, hard);
  gboolean ok = TRUE;
  if (hard->len > 0 && o->large_numbers) {
    for (guint i = 0; i < hard->len; i++) {
      masked t = g_array_index(hard, masked, i);
      oci_arg a = {arg, OCI_MASKED_EQ, t.mask, t.value};
      g_array_append_val(choices, a);
    }
  } else if (hard->len > 0) {
    masked t = g_array_index(hard, masked, 0);
    g_set_error(error, SBX_OCI_ERROR, SBX_OCI_ERROR_UNSUPPORTED,
                "%s:%u: %s: arg%u: the comparison needs the mask %#" PRIx64
                " (above 2^53, which jq and JavaScript round) and has no "
                "equivalent with smaller numbers (runc reads one "
                "comparison per argument in an entry); export with "
                "--large-numbers to write it exactly",
                o->file ? o->file : "?", o->line, o->name, arg, t.mask);
    ok = FALSE;
  }
  g_array_unref(hard);
  g_array_unref(terms);
  return ok;
}

/* The argument lists (each one entry's "args") whose union is exactly one
 * sbx conjunction; appends them to out. */
static gboolean conj_to_arg_lists(const sbx_cmp *cmps, size_t n,
                                  const rule_origin *o, GPtrArray *out,
                                  GError **error) {
  GPtrArray *lists =
      g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
  g_ptr_array_add(lists, g_array_new(FALSE, FALSE, sizeof(oci_arg)));
  gboolean ok = TRUE;
  for (unsigned arg = 0; arg < 6 && ok; arg++) {
    GArray *on_arg = g_array_new(FALSE, FALSE, sizeof(sbx_cmp));
    for (size_t k = 0; k < n; k++)
      if (cmps[k].arg == arg)
        g_array_append_val(on_arg, cmps[k]);
    if (on_arg->len == 0) {
      g_array_unref(on_arg);
      continue;
    }
    /* The choices for this argument: each is one oci_arg (or none). */
    GArray *choices = g_array_new(FALSE, FALSE, sizeof(oci_arg));
    ok = arg_choices(on_arg, arg, o, choices, error);
    GPtrArray *next =
        g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
    for (guint i = 0; ok && i < lists->len; i++) {
      for (guint j = 0; j < choices->len; j++) {
        GArray *l = g_array_copy(g_ptr_array_index(lists, i));
        oci_arg a = g_array_index(choices, oci_arg, j);
        if (a.op != OCI_MASKED_EQ || a.value != 0)
          g_array_append_val(l, a);
        g_ptr_array_add(next, l);
      }
    }
    g_ptr_array_unref(lists);
    lists = next;
    if (ok && lists->len > MAX_EXPANSION) {
      g_set_error(error, SBX_OCI_ERROR, SBX_OCI_ERROR_UNSUPPORTED,
                  "%s:%u: %s: the rule needs more than %d entries as "
                  "libseccomp comparisons",
                  o->file ? o->file : "?", o->line, o->name, MAX_EXPANSION);
      ok = FALSE;
    }
    g_array_unref(on_arg);
    g_array_unref(choices);
  }
  while (ok && lists->len > 0)
    g_ptr_array_add(out, g_ptr_array_steal_index(lists, 0));
  g_ptr_array_unref(lists);
  return ok;
}

static void write_entry(GString *s, const char *names, const char *action,
                        const GArray *args, const char *comment) {
  g_string_append_printf(s, "    {\n      \"names\": [%s],\n      %s", names,
                         action);
  if (args != NULL && args->len > 0) {
    g_string_append(s, ",\n      \"args\": [");
    for (guint k = 0; k < args->len; k++) {
      const oci_arg *a = &g_array_index(args, oci_arg, k);
      g_string_append_printf(
          s,
          "%s\n        {\"index\": %u, \"value\": %" G_GUINT64_FORMAT
          ", \"valueTwo\": %" G_GUINT64_FORMAT ", \"op\": \"%s\"}",
          k ? "," : "", a->index, a->value, a->value_two, kOpNames[a->op]);
    }
    g_string_append(s, "\n      ]");
  }
  if (comment != NULL)
    g_string_append_printf(s, ",\n      \"comment\": \"%s\"", comment);
  g_string_append(s, "\n    }");
}

/* The profile being written. */
typedef struct {
  GString *s;
  guint n_entries;
} writer;

/* Appends the entries that give `action` exactly when one of the
 * alternatives (a disjunction of conjunctions) holds. */
static gboolean export_dnf(const rule_origin *o, const GPtrArray *dnf,
                           sbx_action action, const char *comment, writer *w,
                           GError **error) {
  GString *act = g_string_new(NULL);
  gboolean ok = json_action(action, o->name, act, "action", "errnoRet", error);
  GPtrArray *lists =
      g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
  for (guint k = 0; k < dnf->len && ok; k++) {
    const GArray *c = g_ptr_array_index(dnf, k);
    ok = conj_to_arg_lists((const sbx_cmp *)(void *)c->data, c->len, o, lists,
                           error);
    if (ok && lists->len > MAX_EXPANSION) {
      g_set_error(error, SBX_OCI_ERROR, SBX_OCI_ERROR_UNSUPPORTED,
                  "%s:%u: %s: the rule needs more than %d entries as "
                  "libseccomp comparisons",
                  o->file ? o->file : "?", o->line, o->name, MAX_EXPANSION);
      ok = FALSE;
    }
  }
  char *names = g_strdup_printf("\"%s\"", o->name);
  for (guint k = 0; ok && k < lists->len; k++) {
    g_string_append(w->s, w->n_entries++ ? ",\n" : "\n");
    write_entry(w->s, names, act->str, g_ptr_array_index(lists, k), comment);
  }
  g_free(names);
  g_ptr_array_unref(lists);
  g_string_free(act, TRUE);
  return ok;
}

/* One verdict of one system call: `action` where `dnf` holds (an empty
 * conjunction: always). The parts of one call never overlap. */
typedef struct {
  sbx_action action;
  GPtrArray *dnf;
  gboolean runtime; /* added for the container runtime */
} part;

static void part_clear(gpointer p) {
  g_ptr_array_unref(((part *)p)->dnf);
}

static GPtrArray *dnf_of_alts(const sbx_conjunction *alts, size_t n) {
  GPtrArray *d = dnf_new();
  for (size_t k = 0; k < n; k++) {
    GArray *c = conj_new();
    g_array_append_vals(c, alts[k].cmps, alts[k].n_cmps);
    g_ptr_array_add(d, c);
  }
  return d;
}

static GPtrArray *dnf_true(void) {
  GPtrArray *d = dnf_new();
  g_ptr_array_add(d, conj_new());
  return d;
}

/* x and y: every pair of conjunctions joined; NULL past MAX_EXPANSION. */
static GPtrArray *dnf_and(const GPtrArray *x, const GPtrArray *y) {
  GPtrArray *d = dnf_new();
  for (guint i = 0; i < x->len; i++) {
    for (guint j = 0; j < y->len; j++) {
      GArray *c = conj_copy(g_ptr_array_index(x, i));
      const GArray *b = g_ptr_array_index(y, j);
      g_array_append_vals(c, b->data, b->len);
      g_ptr_array_add(d, c);
    }
  }
  if (d->len > MAX_EXPANSION) {
    g_ptr_array_unref(d);
    return NULL;
  }
  return d;
}

/* The verdicts of the policy for one call, as non-overlapping parts. */
static GArray *rule_parts(const sbx_policy *policy, const sbx_rule *r) {
  GArray *parts = g_array_new(FALSE, FALSE, sizeof(part));
  g_array_set_clear_func(parts, part_clear);
  if (r == NULL) {
    part p = {policy->default_action, dnf_true(), FALSE};
    g_array_append_val(parts, p);
  } else if (r->n_alts == 0) {
    part p = {r->on_match, dnf_true(), FALSE};
    g_array_append_val(parts, p);
  } else {
    part m = {r->on_match, dnf_of_alts(r->alts, r->n_alts), FALSE};
    g_array_append_val(parts, m);
    /* NULL past MAX_EXPANSION, reported when it is written. */
    part x = {r->on_mismatch, dnf_negate(r->alts, r->n_alts), FALSE};
    g_array_append_val(parts, x);
  }
  return parts;
}

/* parts with the runtime's rule rt for the same call put first: allow
 * where rt holds, every other part where it does not. */
static gboolean is_unconditional(const GArray *parts);

static GArray *add_runtime_rule(GArray *parts, const sbx_rule *rt) {
  if (is_unconditional(parts) &&
      g_array_index(parts, part, 0).action.kind == SBX_ACTION_ALLOW)
    return parts; /* the policy allows it already */
  GArray *out = g_array_new(FALSE, FALSE, sizeof(part));
  g_array_set_clear_func(out, part_clear);
  GPtrArray *holds =
      rt->n_alts == 0 ? dnf_true() : dnf_of_alts(rt->alts, rt->n_alts);
  part a = {{SBX_ACTION_ALLOW, 0}, holds, TRUE};
  g_array_append_val(out, a);
  if (rt->n_alts != 0) {
    GPtrArray *not_rt = dnf_negate(rt->alts, rt->n_alts);
    for (guint k = 0; k < parts->len; k++) {
      part *p = &g_array_index(parts, part, k);
      part q = {p->action, NULL, p->runtime};
      if (not_rt != NULL && p->dnf != NULL)
        q.dnf = dnf_and(p->dnf, not_rt);
      g_array_append_val(out, q);
    }
    if (not_rt != NULL)
      g_ptr_array_unref(not_rt);
  }
  g_array_unref(parts);
  return out;
}

static gboolean is_unconditional(const GArray *parts) {
  if (parts->len != 1)
    return FALSE;
  const part *p = &g_array_index(parts, part, 0);
  return p->dnf != NULL && p->dnf->len == 1 &&
         ((GArray *)g_ptr_array_index(p->dnf, 0))->len == 0;
}

/* user-notify needs a supervisor holding the listener; a container
 * runtime has none (runc refuses SCMP_ACT_NOTIFY without a listener path,
 * crun answers ENOSYS for every such call). */
static gboolean refuse_user_notify(const sbx_policy *policy, GError **error) {
  static const char kWhy[] =
      "user-notify has no meaning in a container profile (no supervisor "
      "answers it: runc refuses the profile, crun answers ENOSYS); give it "
      "another action, such as return EPERM";
  if (policy->default_action.kind == SBX_ACTION_USER_NOTIF) {
    g_set_error(error, SBX_OCI_ERROR, SBX_OCI_ERROR_UNSUPPORTED,
                "@default user-notify: %s", kWhy);
    return FALSE;
  }
  for (size_t k = 0; k < policy->n_rules; k++) {
    const sbx_rule *r = &policy->rules[k];
    if (r->on_match.kind == SBX_ACTION_USER_NOTIF ||
        (r->n_alts != 0 && r->on_mismatch.kind == SBX_ACTION_USER_NOTIF)) {
      g_set_error(error, SBX_OCI_ERROR, SBX_OCI_ERROR_UNSUPPORTED,
                  "%s:%u: %s: %s", r->file ? r->file : "?", r->line, r->name,
                  kWhy);
      return FALSE;
    }
  }
  return TRUE;
}

const char sbx_oci_container_runtime_calls[] =
    "# Calls runc's and crun's init make after installing the filter and\n"
    "# before executing the container's process (docs/policy-language.md,\n"
    "# \"Container profiles\").\n"
    "# runc closes its sync and log pipes and the exec fifo; crun its\n"
    "# seccomp descriptors.\n"
    "close: 1\n"
    "# runc reopens the exec fifo as /proc/self/fd/N (O_WRONLY|O_CLOEXEC)\n"
    "# and opens /proc/self/fd to close leaked descriptors.\n"
    "openat: arg2 == O_WRONLY|O_CLOEXEC || arg2 == O_RDONLY|O_CLOEXEC\n"
    "# runc writes one byte to the exec fifo.\n"
    "write: 1\n"
    "# Go registers each opened file with its poller (runc ignores the\n"
    "# error /proc gives).\n"
    "epoll_ctl: arg1 == EPOLL_CTL_ADD || arg1 == EPOLL_CTL_DEL\n"
    "# runc checks that /proc/self/fd is procfs, then lists it.\n"
    "fstatfs: 1\n"
    "getdents64: 1\n"
    "# runc records its pid for the start hooks.\n"
    "getpid: 1\n"
    "# The Go scheduler on runc's init thread: wake-ups, yields, and the\n"
    "# return from its preemption signal.\n"
    "futex: 1\n"
    "sched_yield: 1\n"
    "nanosleep: 1\n"
    "rt_sigreturn: 1\n"
    "# Both runtimes execute the container's process; runc 1.2 through a\n"
    "# descriptor (execveat with AT_EMPTY_PATH).\n"
    "execve: 1\n"
    "execveat: arg4 == AT_EMPTY_PATH\n";

static const char kRuntimeComment[] =
    "container runtime start-up (sbx-policy export --for-container)";

/* Writes the entries of one call; unconditional verdicts are collected in
 * groups (one entry per action) instead. */
static gboolean export_call(const sbx_policy *policy, int nr, GArray *parts,
                            const rule_origin *o, GString *groups[2], writer *w,
                            GError **error) {
  if (is_unconditional(parts)) {
    const part *p = &g_array_index(parts, part, 0);
    if (!actions_equal(p->action, policy->default_action)) {
      GString *g = groups[p->runtime ? 1 : 0];
      g_string_append_printf(g, "%s%d:%s", g->len ? "," : "", nr, o->name);
    }
    return TRUE;
  }
  for (guint k = 0; k < parts->len; k++) {
    const part *p = &g_array_index(parts, part, k);
    if (actions_equal(p->action, policy->default_action))
      continue;
    if (p->dnf == NULL) {
      g_set_error(error, SBX_OCI_ERROR, SBX_OCI_ERROR_UNSUPPORTED,
                  "%s:%u: %s: the complement of the rule has more than %d "
                  "alternatives",
                  o->file ? o->file : "?", o->line, o->name, MAX_EXPANSION);
      return FALSE;
    }
    if (!export_dnf(o, p->dnf, p->action, p->runtime ? kRuntimeComment : NULL,
                    w, error))
      return FALSE;
  }
  return TRUE;
}

/* The unconditional verdicts "nr:name,..." of one kind (the policy's or
 * the runtime's), one entry per action. */
static gboolean write_groups(const sbx_policy *policy, const GString *group,
                             GHashTable *actions, const char *comment,
                             writer *w, GError **error) {
  char **items = g_strsplit(group->str, ",", -1);
  GPtrArray *seen = g_ptr_array_new();
  gboolean ok = TRUE;
  for (char **i = items; ok && *i && **i; i++) {
    const sbx_action *a = g_hash_table_lookup(actions, *i);
    gboolean done = FALSE;
    for (guint j = 0; j < seen->len && !done; j++)
      done = actions_equal(*(const sbx_action *)g_ptr_array_index(seen, j), *a);
    if (done)
      continue;
    g_ptr_array_add(seen, (gpointer)a);
    GString *names = g_string_new(NULL);
    for (char **j = i; *j && **j; j++)
      if (actions_equal(*(const sbx_action *)g_hash_table_lookup(actions, *j),
                        *a))
        g_string_append_printf(names, "%s\"%s\"", names->len ? ", " : "",
                               strchr(*j, ':') + 1);
    GString *act = g_string_new(NULL);
    ok = json_action(*a, strchr(*i, ':') + 1, act, "action", "errnoRet", error);
    if (ok) {
      g_string_append(w->s, w->n_entries++ ? ",\n" : "\n");
      write_entry(w->s, names->str, act->str, NULL, comment);
    }
    g_string_free(act, TRUE);
    g_string_free(names, TRUE);
  }
  g_ptr_array_unref(seen);
  g_strfreev(items);
  return ok;
}

static const sbx_rule *find_rule(const sbx_policy *p, int nr) {
  for (size_t k = 0; k < p->n_rules; k++)
    if (p->rules[k].nr == nr)
      return &p->rules[k];
  return NULL;
}

char *sbx_oci_export(const sbx_policy *policy, unsigned flags, GError **error) {
  if (policy == NULL) {
    g_set_error(error, SBX_OCI_ERROR, SBX_OCI_ERROR_UNSUPPORTED,
                "no policy to export");
    return NULL;
  }
  if (!refuse_user_notify(policy, error))
    return NULL;
  sbx_policy *runtime = NULL;
  if (flags & SBX_OCI_EXPORT_FOR_CONTAINER) {
    runtime = sbx_policy_parse_string(sbx_oci_container_runtime_calls,
                                      "container-runtime", NULL, error);
    if (runtime == NULL)
      return NULL;
  }
  writer w = {g_string_new("{\n  "), 0};
  if (!json_action(policy->default_action, "@default", w.s, "defaultAction",
                   "defaultErrnoRet", error)) {
    g_string_free(w.s, TRUE);
    sbx_policy_free(runtime);
    return NULL;
  }
  g_string_append(w.s,
                  ",\n  \"architectures\": [\"SCMP_ARCH_X86_64\"],\n"
                  "  \"syscalls\": [");
  /* Conditional entries go to cond, after the unconditional groups. */
  writer cond = {g_string_new(NULL), 0};
  GString *own = g_string_new(NULL), *rt_group = g_string_new(NULL);
  GHashTable *actions =
      g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  gboolean ok = TRUE;
  /* The policy's calls in rule order, then calls only the runtime adds. */
  size_t n_rt = runtime ? runtime->n_rules : 0;
  for (size_t k = 0; k < policy->n_rules + n_rt && ok; k++) {
    const sbx_rule *r =
        k < policy->n_rules
            ? &policy->rules[k]
            : find_rule(policy, runtime->rules[k - policy->n_rules].nr);
    const sbx_rule *rt =
        runtime
            ? find_rule(runtime, k < policy->n_rules
                                     ? r->nr
                                     : runtime->rules[k - policy->n_rules].nr)
            : NULL;
    if (k >= policy->n_rules && r != NULL)
      continue; /* written with the policy's rule */
    const sbx_rule *named = r ? r : rt;
    GArray *parts = rule_parts(policy, r);
    if (rt != NULL)
      parts = add_runtime_rule(parts, rt);
    rule_origin o = {named->name, named->file, named->line,
                     (flags & SBX_OCI_EXPORT_LARGE_NUMBERS) != 0};
    GString *groups[2] = {own, rt_group};
    ok = export_call(policy, named->nr, parts, &o, groups, &cond, error);
    if (ok && is_unconditional(parts)) {
      const part *p = &g_array_index(parts, part, 0);
      g_hash_table_insert(actions,
                          g_strdup_printf("%d:%s", named->nr, named->name),
                          g_memdup2(&p->action, sizeof(sbx_action)));
    }
    g_array_unref(parts);
  }
  if (ok)
    ok = write_groups(policy, own, actions, NULL, &w, error) &&
         write_groups(policy, rt_group, actions, kRuntimeComment, &w, error);
  if (ok && cond.n_entries > 0) {
    g_string_append(w.s, w.n_entries ? "," : "");
    g_string_append(w.s, cond.s->str);
    w.n_entries += cond.n_entries;
  }
  g_hash_table_unref(actions);
  g_string_free(own, TRUE);
  g_string_free(rt_group, TRUE);
  g_string_free(cond.s, TRUE);
  sbx_policy_free(runtime);
  if (!ok) {
    g_string_free(w.s, TRUE);
    return NULL;
  }
  g_string_append(w.s, w.n_entries ? "\n  ]\n}\n" : "]\n}\n");
  return g_string_free(w.s, FALSE);
}
