/* Learning mode: the learned profile and policy of each type; see learn.h. */
#include "sandbox/api/learn.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sandbox/api/error.h"
#include "sandbox/base/syscalls.h"
#include "sandbox/files/permissions.h"
#include "sandbox/kernel/seccomp/bpf.h"
#include "sandbox/policy/builtin/builtin.h"
#include "sandbox/policy/compiler.h"
#include "sandbox/policy/format.h"
#include "sbx/sbx.h"

const char *sbx_api_learn_dir(const char *configured) {
  if (configured && *configured)
    return configured;
  const char *env = g_getenv("SBX_LEARN_DIR");
  return env && *env ? env : NULL;
}

/* The rule line of `name` in canonical policy text ("NAME: ..."). */
static bool rule_of(const char *line, const char *name) {
  size_t n = strlen(name);
  return strncmp(line, name, n) == 0 && line[n] == ':';
}

static const sbx_rule *find_rule(const sbx_policy *p, int nr) {
  for (size_t i = 0; i < p->n_rules; i++)
    if (p->rules[i].nr == nr)
      return &p->rules[i];
  return NULL;
}

/* The learned line for one call. was: the canonical line's text after
 * "NAME: " (NULL when the policy has no rule for it). */
static char *learned_line(const sbx_policy *policy,
                          const sbx_api_learned_call *call, const char *name,
                          const char *was) {
  g_autoptr(GString) why = g_string_new(NULL);
  g_autofree char *expr = sbx_arg_rule_expression(name, call->args, why);
  bool narrowed = strcmp(expr, "1") != 0;
  const sbx_rule *r = find_rule(policy, call->nr);
  g_autoptr(GString) line = g_string_new(NULL);
  g_string_append_printf(line, "%s: ", name);
  if (!narrowed) {
    g_string_append(line, "allow");
  } else if (r && r->n_alts > 0 && r->on_match.kind == SBX_ACTION_ALLOW) {
    /* The old expression, then what was seen: || binds loosest. */
    g_autofree char *old = g_strdup(was);
    char *comment = strstr(old, "  #");
    if (comment)
      *comment = '\0';
    char *ret = strstr(old, "; return ");
    g_autofree char *tail = ret ? g_strdup(ret) : g_strdup("");
    if (ret)
      *ret = '\0';
    g_string_append_printf(line, "%s || %s%s", g_strstrip(old), expr, tail);
  } else if (r && r->on_match.kind == SBX_ACTION_ERRNO) {
    g_string_append_printf(line, "%s; return %u", expr,
                           (unsigned)r->on_match.data);
  } else {
    g_string_append(line, expr);
  }
  g_string_append(line, "  # learned");
  if (why->len > 2)
    g_string_append_printf(line, " (%s)", why->str + 2);
  if (was)
    g_string_append_printf(line, "; was:%s", was);
  return g_string_free(g_steal_pointer(&line), FALSE);
}

char *sbx_api_learn_policy_text(const sbx_policy *policy,
                                const sbx_api_learned_call *calls,
                                size_t n_calls, const char *header,
                                GError **error) {
  g_autofree char *text = sbx_policy_format(policy, header, error);
  if (!text)
    return NULL;
  g_autoptr(GHashTable) written = g_hash_table_new(g_str_hash, g_str_equal);
  g_autoptr(GString) out = g_string_new(NULL);
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  for (char **l = lines; *l; l++) {
    const sbx_api_learned_call *call = NULL;
    const char *name = NULL;
    for (size_t i = 0; !call && i < n_calls; i++) {
      name = sbx_syscall_name(calls[i].nr);
      if (name && rule_of(*l, name))
        call = &calls[i];
    }
    if (call) {
      g_autofree char *line =
          learned_line(policy, call, name, *l + strlen(name) + 1);
      g_string_append_printf(out, "%s\n", line);
      g_hash_table_add(written, (gpointer)name);
    } else if (**l || l[1]) {
      g_string_append_printf(out, "%s\n", *l);
    }
  }
  for (size_t i = 0; i < n_calls; i++) {
    const char *name = sbx_syscall_name(calls[i].nr);
    if (name && !g_hash_table_contains(written, name)) {
      g_autofree char *line = learned_line(policy, &calls[i], name, NULL);
      g_string_append_printf(out, "%s\n", line);
      g_hash_table_add(written, (gpointer)name);
    }
  }
  return g_string_free(g_steal_pointer(&out), FALSE);
}

/* The profile's own text, built-in or file. */
static char *profile_text(const sbx_profile *p, GError **error) {
  if (g_str_has_prefix(p->source, "builtin:")) {
    const sbx_builtin_file *f = sbx_builtin_find(p->source + 8);
    if (f)
      return g_strdup(f->text);
    g_set_error(error, SBX_ERROR, SBX_ERROR_FAILED, "no built-in %s",
                p->source);
    return NULL;
  }
  char *text = NULL;
  return g_file_get_contents(p->source, &text, NULL, error) ? text : NULL;
}

/* The seccomp list of the learned profile: the earlier layers as the
 * profile named them (relative files made absolute), then the learned
 * policy. */
static char *seccomp_list(const sbx_profile *p, const char *policy_file) {
  g_autoptr(GPtrArray) layers = g_ptr_array_new_with_free_func(g_free);
  size_t n = g_strv_length(p->seccomp);
  for (size_t i = 0; i + 1 < n; i++) {
    const char *layer = p->seccomp[i];
    bool builtin = !strchr(layer, '/') && sbx_builtin_find(layer);
    g_ptr_array_add(layers, builtin || g_path_is_absolute(layer) || !p->dir
                                ? g_strdup(layer)
                                : g_build_filename(p->dir, layer, NULL));
  }
  g_ptr_array_add(layers, g_strconcat("./", policy_file, NULL));
  g_ptr_array_add(layers, NULL);
  return g_strjoinv(";", (char **)layers->pdata);
}

static char *profile_learned_text(const sbx_profile *p, const char *policy_file,
                                  char **rules, GError **error) {
  g_autofree char *text = profile_text(p, error);
  if (!text)
    return NULL;
  g_autoptr(GKeyFile) kf = g_key_file_new();
  if (!g_key_file_load_from_data(kf, text, (gsize)-1, G_KEY_FILE_KEEP_COMMENTS,
                                 error))
    return NULL;
  g_autofree char *layers = seccomp_list(p, policy_file);
  g_key_file_set_string(kf, "profile", "seccomp", layers);
  g_autofree char *old = g_key_file_get_string(kf, "broker", "rules", NULL);
  g_autoptr(GString) all = g_string_new(old ? g_strstrip(old) : "");
  for (char **r = rules; *r; r++) {
    if (strpbrk(*r, ";\n#"))
      continue; /* a rule the key file cannot carry; left to the log */
    if (all->len && all->str[all->len - 1] != ';')
      g_string_append_c(all, ';');
    g_string_append(all, *r);
  }
  g_key_file_set_string(kf, "broker", "rules", all->str);
  g_key_file_set_comment(kf, "profile", "seccomp",
                         " Learned: the last layer allows what the type was "
                         "refused (see the policy file).",
                         NULL);
  g_key_file_set_comment(kf, "broker", "rules",
                         " Learned: the type's rules, then what it was "
                         "refused.",
                         NULL);
  return g_key_file_to_data(kf, NULL, error);
}

/* Loads the written profile as a host would and compiles its layers. */
static gboolean check_learned(const char *path, GError **error) {
  g_autoptr(sbx_profile) p = sbx_profile_load(path, NULL, error);
  if (!p)
    return FALSE;
  g_autoptr(GPtrArray) policies = sbx_profile_policies(p, NULL, error);
  if (!policies)
    return FALSE;
  for (guint i = 0; i < policies->len; i++) {
    sbx_bpf_program prog = {0};
    if (!sbx_bpf_compile(g_ptr_array_index(policies, i), &prog, error))
      return FALSE;
    sbx_bpf_program_clear(&prog);
  }
  sbx_allowlist *list = sbx_allowlist_new(p->name);
  gboolean ok = TRUE;
  for (char **r = p->broker_rules; ok && *r; r++)
    ok = sbx_allowlist_add_rule(list, *r, error);
  sbx_allowlist_free(list);
  return ok;
}

/* The broker's record of one type's calls (SBX_BROKER_LEARNED_TYPE). */
static GArray *read_calls(GVariant *v) {
  GArray *calls = g_array_new(FALSE, TRUE, sizeof(sbx_api_learned_call));
  GVariantIter it;
  g_variant_iter_init(&it, v);
  gint32 nr;
  GVariant *args;
  while (g_variant_iter_next(&it, "(i@a(batt))", &nr, &args)) {
    sbx_api_learned_call c = {.nr = nr};
    for (gsize i = 0; i < 6 && i < g_variant_n_children(args); i++) {
      gboolean overflow;
      guint64 mask;
      g_autoptr(GVariant) values = NULL;
      g_variant_get_child(args, i, "(b@att)", &overflow, &values, &mask);
      gsize n = 0;
      const guint64 *vals =
          g_variant_get_fixed_array(values, &n, sizeof(guint64));
      for (gsize k = 0; k < n; k++)
        sbx_arg_seen_add(&c.args[i], vals[k]);
      c.args[i].overflow = c.args[i].overflow || overflow;
      c.args[i].mask |= mask;
    }
    g_variant_unref(args);
    g_array_append_val(calls, c);
  }
  return calls;
}

static gboolean write_type(const sbx_prepared_type *t, char **rules,
                           GVariant *calls_v, const char *dir, GError **error) {
  if (strchr(t->name, '/') || t->name[0] == '.') {
    g_set_error(error, SBX_ERROR, SBX_ERROR_INVALID,
                "process type \"%s\": not a name for a file", t->name);
    return FALSE;
  }
  g_autoptr(GArray) calls = read_calls(calls_v);
  size_t n_calls = calls->len;
  g_autoptr(GPtrArray) policies = sbx_profile_policies(t->profile, NULL, error);
  if (!policies || policies->len == 0)
    return FALSE;
  g_autofree char *policy_file = g_strconcat(t->name, ".learned.policy", NULL);
  g_autofree char *profile_file =
      g_strconcat(t->name, ".learned.profile", NULL);
  g_autofree char *policy_path = g_build_filename(dir, policy_file, NULL);
  g_autofree char *profile_path = g_build_filename(dir, profile_file, NULL);
  const char *layer = t->profile->seccomp[policies->len - 1];
  g_autofree char *header = g_strdup_printf(
      "%s: the seccomp layer %s of process type \"%s\" (%s), written back\n"
      "with what libsbx's learning mode saw it refuse allowed (as far as\n"
      "its reviewed argument was seen used).",
      policy_file, layer, t->name, t->profile->source);
  g_autofree char *policy_text = sbx_api_learn_policy_text(
      g_ptr_array_index(policies, policies->len - 1),
      (const sbx_api_learned_call *)(void *)calls->data, n_calls, header,
      error);
  if (!policy_text)
    return FALSE;
  g_autofree char *profile =
      profile_learned_text(t->profile, policy_file, rules, error);
  if (!profile || !g_file_set_contents(policy_path, policy_text, -1, error) ||
      !g_file_set_contents(profile_path, profile, -1, error))
    return FALSE;
  if (!check_learned(profile_path, error)) {
    g_prefix_error(error, "%s does not load: ", profile_path);
    return FALSE;
  }
  fprintf(stderr,
          "sbx: learned for type %s: %u broker rules, %zu system calls; run "
          "with the profile %s\n",
          t->name, g_strv_length(rules), (size_t)n_calls, profile_path);
  return TRUE;
}

gboolean sbx_api_learn_write(const sbx_prepared_type *types, size_t n_types,
                             GVariant *learned, const char *dir,
                             GError **error) {
  if (g_mkdir_with_parents(dir, 0755) != 0) {
    g_set_error(error, SBX_ERROR, SBX_ERROR_FAILED, "%s: %s", dir,
                g_strerror(errno));
    return FALSE;
  }
  GVariantIter it;
  g_variant_iter_init(&it, learned);
  const char *name;
  GVariant *rules_v, *calls;
  while (g_variant_iter_next(&it, "(&s@as@a(ia(batt)))", &name, &rules_v,
                             &calls)) {
    g_auto(GStrv) rules = g_variant_dup_strv(rules_v, NULL);
    gboolean empty = !rules[0] && g_variant_n_children(calls) == 0;
    const sbx_prepared_type *t = NULL;
    for (size_t i = 0; i < n_types && !t; i++)
      if (strcmp(types[i].name, name) == 0)
        t = &types[i];
    gboolean ok = empty || !t || write_type(t, rules, calls, dir, error);
    g_variant_unref(rules_v);
    g_variant_unref(calls);
    if (!ok)
      return FALSE;
  }
  return TRUE;
}
