/* Preparing a process type; see prepare.h. */
#include "sandbox/api/prepare.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox/api/error.h"
#include "sandbox/broker/layer1.h"
#include "sandbox/kernel/landlock/landlock.h"
#include "sandbox/policy/compiler.h"
#include "sbx/sbx.h"

int sbx_audit_log_open(const char *path, GError **error) {
  int fd = path ? open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600)
                : fcntl(2, F_DUPFD_CLOEXEC, 3);
  if (fd < 0) {
    int err = errno;
    g_set_error(error, SBX_ERROR, SBX_ERROR_FAILED, "audit log %s: %s",
                path ? path : "(stderr)", g_strerror(err));
  }
  return fd;
}

static gboolean add_rules(sbx_allowlist *list, char **rules, const char *source,
                          GError **error) {
  for (size_t i = 0; rules && rules[i]; i++) {
    GError *local = NULL;
    if (!sbx_allowlist_add_rule(list, rules[i], &local)) {
      sbx_api_propagate(error, local, "%s: broker rule \"%s\": ", source,
                        rules[i]);
      return FALSE;
    }
  }
  return TRUE;
}

static gboolean build_allowlist(sbx_prepared_type *t,
                                const char *const *extra_rules,
                                GError **error) {
  const sbx_profile *p = t->profile;
  t->allowlist = sbx_allowlist_new(t->name);
  if (!add_rules(t->allowlist, p->broker_rules, p->source, error) ||
      !add_rules(t->allowlist, (char **)extra_rules, "extra_rules", error))
    return FALSE;
  if (p->umask_set)
    sbx_allowlist_set_umask(t->allowlist, p->umask);
  if (p->denied_errno) {
    GError *local = NULL;
    if (!sbx_allowlist_set_denied_errno(t->allowlist, p->denied_errno,
                                        &local)) {
      sbx_api_propagate(error, local, "%s: [broker] denied-errno: ", p->source);
      return FALSE;
    }
  }
  return TRUE;
}

static gboolean add_layer(sbx_prepared_type *t, const char *layer_name,
                          GError **error) {
  if (t->n_layers >= SBX_LAYERS_MAX_FILTERS) {
    g_set_error(error, SBX_ERROR, SBX_ERROR_INVALID,
                "%s: [profile] seccomp: at most %d layers can be stacked "
                "(the broker-client layer counts as one)",
                t->profile->source, SBX_LAYERS_MAX_FILTERS);
    return FALSE;
  }
  t->layer_names[t->n_layers++] = g_strdup(layer_name);
  return TRUE;
}

static gboolean compile_layers(sbx_prepared_type *t, bool with_layer1,
                               GError **error) {
  GError *local = NULL;
  if (with_layer1) {
    if (!sbx_layer1_compile_direct(&t->layers[0], t->direct_opens, &local)) {
      sbx_api_propagate(error, local, "broker-client layer: ");
      return FALSE;
    }
    t->layer_names[t->n_layers++] = g_strdup(SBX_LAYER1_NAME);
  }
  g_auto(GStrv) names = NULL;
  g_autoptr(GPtrArray) policies =
      sbx_profile_policies(t->profile, &names, &local);
  if (!policies) {
    sbx_api_propagate(error, local, "%s", "");
    return FALSE;
  }
  for (guint i = 0; i < policies->len; i++) {
    size_t slot = t->n_layers;
    if (t->direct_opens)
      sbx_policy_allow_call(g_ptr_array_index(policies, i), SYS_openat2,
                            "openat2", "direct opens");
    if (!add_layer(t, names[i], error))
      return FALSE;
    if (!sbx_bpf_compile(g_ptr_array_index(policies, i), &t->layers[slot],
                         &local)) {
      sbx_api_propagate(error, local,
                        "%s: [profile] seccomp: %s: ", t->profile->source,
                        names[i]);
      return FALSE;
    }
  }
  return TRUE;
}

gboolean sbx_prepared_type_init(sbx_prepared_type *t, const char *name,
                                const char *profile, const char *profile_dir,
                                const char *const *extra_rules,
                                bool with_layer1, bool allow_direct,
                                GError **error) {
  memset(t, 0, sizeof *t);
  if (!name || !*name || strlen(name) >= SBX_NAME_MAX) {
    g_set_error(error, SBX_ERROR, SBX_ERROR_INVALID,
                "process type \"%s\": a name of 1 to %d bytes is required",
                name ? name : "(null)", SBX_NAME_MAX - 1);
    return FALSE;
  }
  t->name = g_strdup(name);
  GError *local = NULL;
  t->profile = sbx_profile_load(profile ? profile : name, profile_dir, &local);
  if (!t->profile) {
    sbx_api_propagate(error, local, "process type \"%s\": ", name);
    sbx_prepared_type_clear(t);
    return FALSE;
  }
  const sbx_profile *p = t->profile;
  t->direct_opens = allow_direct && with_layer1 && p->landlock &&
                    p->direct_trees && p->direct_trees[0] &&
                    sbx_landlock_abi_version() >= 1;
  if (!compile_layers(t, with_layer1, &local) ||
      !build_allowlist(t, extra_rules, &local)) {
    sbx_api_propagate(error, local, "process type \"%s\": ", name);
    sbx_prepared_type_clear(t);
    return FALSE;
  }
  return TRUE;
}

gboolean sbx_prepared_type_watch_verdicts(sbx_prepared_type *t,
                                          bool every_refusal, GError **error) {
  if (t->n_layers < 2 || t->verdicts.len) {
    g_set_error(error, SBX_ERROR, SBX_ERROR_INVALID,
                "process type \"%s\": no seccomp layer of its own to audit",
                t->name);
    return FALSE;
  }
  sbx_bpf_program *last = &t->layers[t->n_layers - 1];
  sbx_bpf_program rewritten = {0};
  GError *local = NULL;
  if (!(every_refusal
            ? sbx_bpf_notify_refusals(&rewritten, last, &local)
            : sbx_bpf_notify_errno_verdicts(&rewritten, last, &local))) {
    sbx_api_propagate(error, local, "process type \"%s\": %s: ", t->name,
                      t->layer_names[t->n_layers - 1]);
    return FALSE;
  }
  t->verdicts = *last;
  *last = rewritten;
  return TRUE;
}

void sbx_prepared_type_clear(sbx_prepared_type *t) {
  for (size_t i = 0; i < SBX_LAYERS_MAX_FILTERS; i++) {
    sbx_bpf_program_clear(&t->layers[i]);
    g_free(t->layer_names[i]);
  }
  sbx_bpf_program_clear(&t->verdicts);
  if (t->allowlist)
    sbx_allowlist_free(t->allowlist);
  sbx_profile_free(t->profile);
  g_free(t->name);
  memset(t, 0, sizeof *t);
}
