/* Loading profiles: see profile.h. */
#include "sandbox/policy/builtin/profile.h"

#include <errno.h>
#include <string.h>

#include "sandbox/kernel/namespaces/namespaces.h"
#include "sandbox/policy/builtin/builtin.h"
#include "sandbox/policy/parser.h"

GQuark sbx_profile_error_quark(void) {
  return g_quark_from_static_string("sbx-profile-error-quark");
}

typedef struct {
  const char *group;
  const char *const *keys; /* NULL: any key (rlimits: checked by name) */
} known_group;

static const char *const profile_keys[] = {"description", "seccomp", "require",
                                           NULL};
static const char *const broker_keys[] = {"rules", "include", "umask",
                                          "denied-errno", NULL};
static const char *const ns_keys[] = {"enter", "empty-root", NULL};
static const char *const landlock_keys[] = {"enabled", "min-abi", "optional",
                                            NULL};
static const char *const worker_keys[] = {"status", "pool", NULL};
static const char *const network_keys[] = {"connect-ports", "bind-ports", NULL};

static const known_group known_groups[] = {
    {"profile", profile_keys}, {"broker", broker_keys},
    {"namespaces", ns_keys},   {"landlock", landlock_keys},
    {"rlimits", NULL},         {"worker", worker_keys},
    {"network", network_keys},
};

static const struct {
  const char *name;
  unsigned bit;
} ns_names[] = {
    {"user", SBX_NS_USER},     {"pid", SBX_NS_PID}, {"net", SBX_NS_NET},
    {"ipc", SBX_NS_IPC},       {"uts", SBX_NS_UTS}, {"mount", SBX_NS_MOUNT},
    {"cgroup", SBX_NS_CGROUP},
};

static const struct {
  const char *name;
  unsigned bit;
} require_names[] = {
    {"seccomp", SBX_REQUIRE_SECCOMP},
    {"broker", SBX_REQUIRE_BROKER},
    {"userns", SBX_REQUIRE_USERNS},
    {"landlock", SBX_REQUIRE_LANDLOCK},
};

static gboolean invalid(GError **error, const char *source, const char *group,
                        const char *key, const char *fmt, ...)
    G_GNUC_PRINTF(5, 6);

static gboolean invalid(GError **error, const char *source, const char *group,
                        const char *key, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  if (key)
    g_set_error(error, SBX_PROFILE_ERROR, SBX_PROFILE_ERROR_INVALID,
                "%s: [%s] %s: %s", source, group, key, msg);
  else
    g_set_error(error, SBX_PROFILE_ERROR, SBX_PROFILE_ERROR_INVALID,
                "%s: [%s]: %s", source, group, msg);
  return FALSE;
}

static gboolean check_structure(GKeyFile *kf, const char *source,
                                GError **error) {
  g_auto(GStrv) groups = g_key_file_get_groups(kf, NULL);
  for (size_t i = 0; groups[i]; i++) {
    const known_group *known = NULL;
    for (size_t j = 0; j < G_N_ELEMENTS(known_groups); j++) {
      if (strcmp(groups[i], known_groups[j].group) == 0)
        known = &known_groups[j];
    }
    if (!known)
      return invalid(error, source, groups[i], NULL,
                     "unknown group (known: profile, broker, namespaces, "
                     "landlock, rlimits, worker)");
    if (!known->keys)
      continue;
    g_auto(GStrv) keys = g_key_file_get_keys(kf, groups[i], NULL, NULL);
    for (size_t k = 0; keys && keys[k]; k++) {
      if (!g_strv_contains(known->keys, keys[k]))
        return invalid(error, source, groups[i], keys[k], "unknown key");
    }
  }
  if (!g_key_file_has_group(kf, "profile"))
    return invalid(error, source, "profile", NULL, "the group is missing");
  return TRUE;
}

/* A boolean that defaults when absent; malformed is an error. */
static gboolean get_bool(GKeyFile *kf, const char *source, const char *group,
                         const char *key, bool fallback, bool *out,
                         GError **error) {
  *out = fallback;
  if (!g_key_file_has_key(kf, group, key, NULL))
    return TRUE;
  GError *local = NULL;
  gboolean v = g_key_file_get_boolean(kf, group, key, &local);
  if (local) {
    g_error_free(local);
    return invalid(error, source, group, key, "expected true or false");
  }
  *out = v;
  return TRUE;
}

static char **get_list(GKeyFile *kf, const char *group, const char *key) {
  gsize n = 0;
  char **items = g_key_file_get_string_list(kf, group, key, &n, NULL);
  GPtrArray *out = g_ptr_array_new();
  for (gsize i = 0; items && i < n; i++) {
    char *s = g_strstrip(items[i]);
    if (*s)
      g_ptr_array_add(out, g_strdup(s));
  }
  g_strfreev(items);
  g_ptr_array_add(out, NULL);
  return (char **)g_ptr_array_free(out, FALSE);
}

gboolean sbx_profile_permission_set(const char *name, GPtrArray *rules,
                                    GError **error) {
  g_autofree char *file = g_strconcat(name, ".rules", NULL);
  const sbx_builtin_file *f =
      strchr(name, '/') || strchr(name, '.') ? NULL : sbx_builtin_find(file);
  if (!f) {
    g_set_error(error, SBX_PROFILE_ERROR, SBX_PROFILE_ERROR_NOT_FOUND,
                "no permission set \"%s\" (known: certificates, fonts, "
                "locale, random)",
                name);
    return FALSE;
  }
  g_auto(GStrv) lines = g_strsplit(f->text, "\n", -1);
  for (char **l = lines; *l; l++) {
    char *line = g_strstrip(*l);
    if (*line && *line != '#')
      g_ptr_array_add(rules, g_strdup(line));
  }
  return TRUE;
}

/* "direct,read /tree/": the rule stays a plain read rule for the broker,
 * and the tree is one a worker may open directly (docs/design.md, "Direct
 * opens"). Only recursive read rules qualify: Landlock grants directories
 * whole, and a write, create or single-file rule is the broker's alone. */
static gboolean take_direct_marks(GPtrArray *rules, sbx_profile *p,
                                  GError **error) {
  static const char mark[] = "direct,";
  GPtrArray *trees = g_ptr_array_new();
  for (guint i = 0; i < rules->len; i++) {
    char *rule = g_ptr_array_index(rules, i);
    if (strncmp(rule, mark, sizeof mark - 1) != 0)
      continue;
    const char *rest = rule + sizeof mark - 1;
    const char *path = g_str_has_prefix(rest, "read ") ? rest + 5 : NULL;
    size_t len = path ? strlen(path) : 0;
    if (!path || len < 2 || path[0] != '/' || path[len - 1] != '/' ||
        strstr(path, "/../") || strstr(path, "/./") || strstr(path, "//") ||
        g_ptr_array_find_with_equal_func(trees, path, g_str_equal, NULL)) {
      g_ptr_array_add(trees, NULL);
      g_strfreev((char **)g_ptr_array_free(trees, FALSE));
      return invalid(error, p->source, "broker", "rules",
                     "\"%s\": only a recursive read rule of an absolute, "
                     "normalised directory given once (\"direct,read "
                     "/usr/share/fonts/\") can be direct",
                     rule);
    }
    if (trees->len >= SBX_PROFILE_MAX_DIRECT) {
      g_ptr_array_add(trees, NULL);
      g_strfreev((char **)g_ptr_array_free(trees, FALSE));
      return invalid(error, p->source, "broker", "rules",
                     "\"%s\": at most %d direct trees", rule,
                     SBX_PROFILE_MAX_DIRECT);
    }
    g_ptr_array_add(trees, g_strdup(path));
    char *plain = g_strdup(rest);
    g_free(rule);
    g_ptr_array_index(rules, i) = plain;
  }
  g_ptr_array_add(trees, NULL);
  p->direct_trees = (char **)g_ptr_array_free(trees, FALSE);
  return TRUE;
}

/* [broker] rules, then the rules of each set [broker] include names. */
static gboolean parse_broker(GKeyFile *kf, sbx_profile *p, GError **error) {
  g_auto(GStrv) own = get_list(kf, "broker", "rules");
  g_auto(GStrv) sets = get_list(kf, "broker", "include");
  GPtrArray *rules = g_ptr_array_new();
  for (char **r = own; *r; r++)
    g_ptr_array_add(rules, g_strdup(*r));
  for (char **set = sets; *set; set++) {
    GError *local = NULL;
    if (!sbx_profile_permission_set(*set, rules, &local)) {
      g_ptr_array_add(rules, NULL);
      g_strfreev((char **)g_ptr_array_free(rules, FALSE));
      return invalid(error, p->source, "broker", "include", "%s",
                     local->message);
    }
  }
  if (!take_direct_marks(rules, p, error)) {
    g_ptr_array_add(rules, NULL);
    g_strfreev((char **)g_ptr_array_free(rules, FALSE));
    return FALSE;
  }
  g_ptr_array_add(rules, NULL);
  p->broker_rules = (char **)g_ptr_array_free(rules, FALSE);
  p->includes = g_steal_pointer(&sets);
  g_autofree char *umask_text =
      g_key_file_get_string(kf, "broker", "umask", NULL);
  if (umask_text) {
    char *end = NULL;
    errno = 0;
    unsigned long v = strtoul(g_strstrip(umask_text), &end, 8);
    if (errno || !*umask_text || *end || v > 0777)
      return invalid(error, p->source, "broker", "umask",
                     "\"%s\" is not an octal mode up to 0777", umask_text);
    p->umask = (mode_t)v;
    p->umask_set = true;
  }
  g_autofree char *denied =
      g_key_file_get_string(kf, "broker", "denied-errno", NULL);
  if (denied) {
    g_strstrip(denied);
    if (strcmp(denied, "EACCES") == 0)
      p->denied_errno = EACCES;
    else if (strcmp(denied, "EPERM") == 0)
      p->denied_errno = EPERM;
    else if (strcmp(denied, "ENOENT") == 0)
      p->denied_errno = ENOENT;
    else
      return invalid(error, p->source, "broker", "denied-errno",
                     "\"%s\": expected EACCES, EPERM or ENOENT", denied);
  }
  return TRUE;
}

static gboolean parse_namespaces(GKeyFile *kf, sbx_profile *p, GError **error) {
  p->namespaces = SBX_NS_ALL;
  if (g_key_file_has_key(kf, "namespaces", "enter", NULL)) {
    g_auto(GStrv) names = get_list(kf, "namespaces", "enter");
    p->namespaces = 0;
    for (size_t i = 0; names[i]; i++) {
      unsigned bit = 0;
      for (size_t j = 0; j < G_N_ELEMENTS(ns_names); j++) {
        if (strcmp(names[i], ns_names[j].name) == 0)
          bit = ns_names[j].bit;
      }
      if (!bit)
        return invalid(error, p->source, "namespaces", "enter",
                       "unknown namespace \"%s\" (known: user, pid, net, "
                       "ipc, uts, mount, cgroup)",
                       names[i]);
      p->namespaces |= bit;
    }
    if (!(p->namespaces & SBX_NS_USER))
      return invalid(error, p->source, "namespaces", "enter",
                     "\"user\" is required: without it the other "
                     "namespaces need privilege");
  }
  if (!get_bool(kf, p->source, "namespaces", "empty-root", true, &p->empty_root,
                error))
    return FALSE;
  if (p->empty_root && !(p->namespaces & SBX_NS_MOUNT))
    return invalid(error, p->source, "namespaces", "empty-root",
                   "an empty root needs the \"mount\" namespace");
  return TRUE;
}

static gboolean parse_landlock(GKeyFile *kf, sbx_profile *p, GError **error) {
  if (!get_bool(kf, p->source, "landlock", "enabled", true, &p->landlock,
                error) ||
      !get_bool(kf, p->source, "landlock", "optional", false,
                &p->landlock_optional, error))
    return FALSE;
  g_autofree char *abi = g_key_file_get_string(kf, "landlock", "min-abi", NULL);
  if (abi) {
    char *end = NULL;
    long v = strtol(g_strstrip(abi), &end, 10);
    if (!*abi || *end || v < 0 || v > 7)
      return invalid(error, p->source, "landlock", "min-abi",
                     "\"%s\": expected an ABI version from 0 to 7", abi);
    p->landlock_min_abi = (int)v;
  }
  if (p->landlock_optional && p->landlock_min_abi > 0)
    return invalid(error, p->source, "landlock", "optional",
                   "an optional Landlock cannot also require ABI %d",
                   p->landlock_min_abi);
  return TRUE;
}

/* [worker] pool=N: workers kept forked ahead (sandbox/zygote/server.h). */
static gboolean parse_pool(GKeyFile *kf, sbx_profile *p, GError **error) {
  g_autofree char *pool = g_key_file_get_string(kf, "worker", "pool", NULL);
  if (!pool)
    return TRUE;
  char *end = NULL;
  long v = strtol(g_strstrip(pool), &end, 10);
  if (!*pool || *end || v < 0 || v > SBX_PROFILE_MAX_POOL)
    return invalid(error, p->source, "worker", "pool",
                   "\"%s\": expected a number of workers from 0 to %d", pool,
                   SBX_PROFILE_MAX_POOL);
  p->pool = (unsigned)v;
  return TRUE;
}

gboolean sbx_profile_parse_require(const char *const *names, unsigned *out,
                                   GError **error) {
  *out = 0;
  for (size_t i = 0; names && names[i]; i++) {
    const char *name = names[i];
    unsigned bit = 0;
    for (size_t j = 0; j < G_N_ELEMENTS(require_names); j++) {
      if (strcmp(name, require_names[j].name) == 0)
        bit = require_names[j].bit;
    }
    if (!bit) {
      g_set_error(error, SBX_PROFILE_ERROR, SBX_PROFILE_ERROR_INVALID,
                  "unknown layer \"%s\" (known: seccomp, broker, userns, "
                  "landlock)",
                  name);
      return FALSE;
    }
    *out |= bit;
  }
  return TRUE;
}

const char *sbx_profile_require_name(unsigned bit) {
  for (size_t j = 0; j < G_N_ELEMENTS(require_names); j++) {
    if (require_names[j].bit == bit)
      return require_names[j].name;
  }
  return NULL;
}

/* [profile] require, after [landlock]: which layers must be in place. A
 * profile without the key requires every layer it enables, so an older
 * profile keeps its meaning; [landlock] optional=true is the older
 * spelling of leaving "landlock" out. */
static gboolean parse_require(GKeyFile *kf, sbx_profile *p, GError **error) {
  unsigned enabled = SBX_REQUIRE_SECCOMP | SBX_REQUIRE_BROKER |
                     SBX_REQUIRE_USERNS |
                     (p->landlock ? SBX_REQUIRE_LANDLOCK : 0);
  if (!g_key_file_has_key(kf, "profile", "require", NULL)) {
    p->require = enabled & ~(p->landlock_optional ? SBX_REQUIRE_LANDLOCK : 0);
    return TRUE;
  }
  g_auto(GStrv) names = get_list(kf, "profile", "require");
  GError *local = NULL;
  if (!sbx_profile_parse_require((const char *const *)names, &p->require,
                                 &local)) {
    invalid(error, p->source, "profile", "require", "%s", local->message);
    g_error_free(local);
    return FALSE;
  }
  if ((p->require & SBX_REQUIRE_LANDLOCK) && !p->landlock)
    return invalid(error, p->source, "profile", "require",
                   "\"landlock\" is required but [landlock] enabled=false");
  if ((p->require & SBX_REQUIRE_LANDLOCK) && p->landlock_optional)
    return invalid(error, p->source, "profile", "require",
                   "\"landlock\" is required but [landlock] "
                   "optional=true");
  if (!(p->require & SBX_REQUIRE_LANDLOCK) && p->landlock_min_abi > 0)
    return invalid(error, p->source, "profile", "require",
                   "[landlock] min-abi=%d demands Landlock: add \"landlock\"",
                   p->landlock_min_abi);
  if (p->landlock && !(p->require & SBX_REQUIRE_LANDLOCK))
    p->landlock_optional = true;
  return TRUE;
}

/* [network] KEY=PORT;PORT...: each 0 to 65535, at most
 * SBX_PROFILE_MAX_PORTS. */
static gboolean parse_ports(GKeyFile *kf, sbx_profile *p, const char *key,
                            sbx_profile_ports *out, GError **error) {
  if (!g_key_file_has_key(kf, "network", key, NULL))
    return TRUE;
  g_auto(GStrv) items = get_list(kf, "network", key);
  out->set = true;
  for (char **i = items; *i; i++) {
    char *end = NULL;
    errno = 0;
    unsigned long v = strtoul(*i, &end, 10);
    if (errno || !**i || *end || v > 65535 || !g_ascii_isdigit(**i))
      return invalid(error, p->source, "network", key,
                     "\"%s\" is not a port (0 to 65535)", *i);
    if (out->n == SBX_PROFILE_MAX_PORTS)
      return invalid(error, p->source, "network", key, "more than %d ports",
                     SBX_PROFILE_MAX_PORTS);
    out->ports[out->n++] = (uint16_t)v;
  }
  return TRUE;
}

static gboolean parse_rlimits(GKeyFile *kf, sbx_profile *p, GError **error) {
  if (!g_key_file_has_group(kf, "rlimits"))
    return TRUE;
  g_auto(GStrv) keys = g_key_file_get_keys(kf, "rlimits", NULL, NULL);
  for (size_t i = 0; keys && keys[i]; i++) {
    int resource = sbx_rlimit_from_name(keys[i]);
    if (resource < 0)
      return invalid(error, p->source, "rlimits", keys[i],
                     "unknown resource (as, core, cpu, data, fsize, "
                     "memlock, msgqueue, nofile, nproc, stack, ...)");
    for (size_t j = 0; j < p->n_rlimits; j++) {
      if (p->rlimits[j].resource == resource)
        return invalid(error, p->source, "rlimits", keys[i],
                       "given twice (under another spelling)");
    }
    if (p->n_rlimits >= SBX_PROFILE_MAX_RLIMITS)
      return invalid(error, p->source, "rlimits", keys[i],
                     "more than %d limits", SBX_PROFILE_MAX_RLIMITS);
    g_autofree char *text = g_key_file_get_string(kf, "rlimits", keys[i], NULL);
    rlim_t value;
    GError *local = NULL;
    if (!sbx_rlimit_parse_value(g_strstrip(text), &value, &local)) {
      invalid(error, p->source, "rlimits", keys[i], "%s", local->message);
      g_error_free(local);
      return FALSE;
    }
    p->rlimits[p->n_rlimits++] =
        (sbx_rlimit){.resource = resource, .soft = value, .hard = value};
  }
  return TRUE;
}

sbx_profile *sbx_profile_parse(const char *text, const char *name,
                               const char *source, const char *dir,
                               GError **error) {
  g_autoptr(GKeyFile) kf = g_key_file_new();
  GError *local = NULL;
  if (!g_key_file_load_from_data(kf, text, (gsize)-1, G_KEY_FILE_NONE,
                                 &local)) {
    g_set_error(error, SBX_PROFILE_ERROR, SBX_PROFILE_ERROR_INVALID, "%s: %s",
                source, local->message);
    g_error_free(local);
    return NULL;
  }
  if (!check_structure(kf, source, error))
    return NULL;

  g_autoptr(sbx_profile) p = g_new0(sbx_profile, 1);
  p->name = g_strdup(name);
  p->source = g_strdup(source);
  p->dir = g_strdup(dir);
  p->description = g_key_file_get_string(kf, "profile", "description", NULL);
  p->seccomp = get_list(kf, "profile", "seccomp");
  if (!p->seccomp[0]) {
    invalid(error, source, "profile", "seccomp",
            "at least one policy is required (a worker without a syscall "
            "filter is not sandboxed)");
    return NULL;
  }
  if (!parse_broker(kf, p, error) || !parse_namespaces(kf, p, error) ||
      !parse_landlock(kf, p, error) || !parse_require(kf, p, error) ||
      !parse_rlimits(kf, p, error) ||
      !parse_ports(kf, p, "connect-ports", &p->connect_ports, error) ||
      !parse_ports(kf, p, "bind-ports", &p->bind_ports, error) ||
      !get_bool(kf, source, "worker", "status", false, &p->status, error) ||
      !parse_pool(kf, p, error))
    return NULL;
  return g_steal_pointer(&p);
}

sbx_profile *sbx_profile_load(const char *name, const char *search_dir,
                              GError **error) {
  if (!name || !*name) {
    g_set_error(error, SBX_PROFILE_ERROR, SBX_PROFILE_ERROR_NOT_FOUND,
                "no profile named");
    return NULL;
  }
  g_autofree char *file = g_str_has_suffix(name, ".profile")
                              ? g_strdup(name)
                              : g_strconcat(name, ".profile", NULL);
  g_autofree char *stem = g_path_get_basename(file);
  stem[strlen(stem) - strlen(".profile")] = '\0';
  if (!strchr(name, '/')) {
    const sbx_builtin_file *f = sbx_builtin_find(file);
    if (f) {
      g_autofree char *source = g_strconcat("builtin:", file, NULL);
      return sbx_profile_parse(f->text, stem, source, NULL, error);
    }
  }
  g_autofree char *path = strchr(name, '/') || !search_dir
                              ? g_strdup(strchr(name, '/') ? name : file)
                              : g_build_filename(search_dir, file, NULL);
  g_autofree char *text = NULL;
  GError *local = NULL;
  if (!g_file_get_contents(path, &text, NULL, &local)) {
    g_set_error(error, SBX_PROFILE_ERROR, SBX_PROFILE_ERROR_NOT_FOUND,
                "%s: no built-in profile of that name, and the file cannot "
                "be read: %s",
                name, local->message);
    g_error_free(local);
    return NULL;
  }
  g_autofree char *dir = g_path_get_dirname(path);
  return sbx_profile_parse(text, stem, path, dir, error);
}

void sbx_profile_free(sbx_profile *p) {
  if (!p)
    return;
  g_free(p->name);
  g_free(p->source);
  g_free(p->dir);
  g_free(p->description);
  g_strfreev(p->seccomp);
  g_strfreev(p->broker_rules);
  g_strfreev(p->direct_trees);
  g_strfreev(p->includes);
  g_free(p);
}

static void free_policy(gpointer p) {
  sbx_policy_free(p);
}

GPtrArray *sbx_profile_policies(const sbx_profile *profile, char ***names,
                                GError **error) {
  g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func(free_policy);
  g_autoptr(GPtrArray) display = g_ptr_array_new_with_free_func(g_free);
  for (size_t i = 0; profile->seccomp[i]; i++) {
    const char *layer = profile->seccomp[i];
    sbx_policy *policy = NULL;
    GError *local = NULL;
    if (!strchr(layer, '/') && sbx_builtin_find(layer)) {
      policy = sbx_builtin_policy(layer, &local);
    } else if (profile->dir || g_path_is_absolute(layer)) {
      g_autofree char *path = g_path_is_absolute(layer)
                                  ? g_strdup(layer)
                                  : g_build_filename(profile->dir, layer, NULL);
      policy = sbx_policy_parse_file(path, &local);
    } else {
      g_set_error(&local, SBX_PROFILE_ERROR, SBX_PROFILE_ERROR_NOT_FOUND,
                  "%s: no built-in policy of that name", layer);
    }
    if (!policy) {
      g_propagate_prefixed_error(error, local,
                                 "%s: [profile] seccomp: ", profile->source);
      return NULL;
    }
    g_ptr_array_add(out, policy);
    g_ptr_array_add(display, g_path_get_basename(layer));
  }
  if (names) {
    g_ptr_array_add(display, NULL);
    *names = (char **)g_ptr_array_free(g_steal_pointer(&display), FALSE);
  }
  return g_steal_pointer(&out);
}
