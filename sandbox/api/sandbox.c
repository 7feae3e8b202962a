/* The public host API (sbx/sbx.h): a broker and a zygote started from the
 * host's process types, workers spawned, waited for and stopped.
 *
 * Why it exists: each module below does one layer; a host should not have
 * to know that the broker must exist before the zygote, that every worker
 * needs a channel of its own, or that a profile's policies are compiled
 * once, in the host, before the first fork. This file is that order.
 *
 * What it trusts: the host's configuration and the files it names. What it
 * refuses: a NULL argument, a struct whose size the rule of sized.h
 * refuses, a host that already runs threads (the zygote is cloned from
 * it and runs host code until it execs, or for good in fork mode), any
 * type whose profile, policy or rule does not load, and in fresh mode
 * (hook.h) an entry the zygote cannot find or a user_data it cannot
 * have; nothing half-starts (whatever was started is
 * stopped again before the error is returned).
 *
 * Threads: spawn, wait and stop may run on any threads at once; the
 * zygote and the broker each serve concurrent callers (zygote.h,
 * broker.h), and this file only counts the calls in progress so that
 * sbx_sandbox_stop frees nothing a call still uses.
 *
 * The zygote knows nothing of sbx.h: run_worker turns what it gives a
 * worker into sbx_worker_args and calls the host's entry function, and
 * its exit reports and errors are translated here.
 *
 * Every type uses the broker: the built-in policies trap file-system calls
 * in layer 2 as well, so a worker without a broker channel would be killed
 * by its first open(); a profile with no rules gets EACCES (and an audit
 * line) for every file request instead.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sandbox/api/channel.h"
#include "sandbox/api/error.h"
#include "sandbox/api/hook.h"
#include "sandbox/api/learn.h"
#include "sandbox/api/prepare.h"
#include "sandbox/api/sized.h"
#include "sandbox/api/status.h"
#include "sandbox/broker/audit.h"
#include "sandbox/broker/broker.h"
#include "sandbox/broker/layer1.h"
#include "sandbox/kernel/landlock/landlock.h"
#include "sandbox/kernel/namespaces/namespaces.h"
#include "sandbox/zygote/zygote.h"
#include "sbx/sbx.h"

/* The public bounds (sbx.h) are the modules' own. */
G_STATIC_ASSERT(SBX_REPLY_TIMEOUT_MS == SBX_BROKER_REPLY_TIMEOUT_MS);
G_STATIC_ASSERT(SBX_REPLY_TIMEOUT_MS == SBX_ZYGOTE_REPLY_TIMEOUT_MS);
G_STATIC_ASSERT(SBX_STOP_TIMEOUT_MS == SBX_ZYGOTE_REAP_TIMEOUT_MS +
                                           SBX_BROKER_EXIT_TIMEOUT_MS +
                                           SBX_BROKER_REAP_TIMEOUT_MS);
G_STATIC_ASSERT(SBX_POOL_MAX == SBX_ZYGOTE_MAX_POOL &&
                SBX_POOL_MAX == SBX_PROFILE_MAX_POOL);
G_STATIC_ASSERT(SBX_AUDIT_DENIAL_BURST == 100 &&
                SBX_AUDIT_DENIALS_PER_SECOND == 10 &&
                SBX_AUDIT_LINE_MAX == 1024);

/* A type's entry function as the host registered it. A forked zygote
 * calls run_worker with it; workers see it as it was at
 * sbx_sandbox_start. A fresh one gets ref, plain data (hook.h). */
typedef struct {
  sbx_worker_entry entry;
  void *user_data;
  sbx_api_entry_ref ref;
  unsigned pool; /* sbx_process_type.pool; 0: the profile's */
} host_entry;

struct sbx_sandbox {
  sbx_prepared_type *types;
  host_entry *entries;
  size_t n_types;
  sbx_broker *broker;
  sbx_zygote *zygote;
  /* Fresh mode (sbx.h): the host's executable, opened at start, and the
   * zygote's environment. */
  bool fresh;
  int exe_fd;
  char **zygote_env;
  /* The workers' broker client: the zygote's copy of this memory is what
   * layer 1's handlers read, so it lives here, before the zygote forks. */
  sbx_broker_client client;
  /* Learning mode (learn.h): where the learned files go; NULL: off. */
  char *learn_dir;
  /* Calls in progress on any thread, so that sbx_sandbox_stop frees the
   * sandbox only once the last has returned. */
  GMutex lock;
  GCond idle;
  unsigned calls;
  bool stopping;
};

/* The host's process types in this library's layout: the array's stride
 * is the caller's sizeof, which the first element's size gives. g_free. */
static sbx_process_type *read_types(const sbx_sandbox_config *config,
                                    GError **error) {
  if (!config->types || config->n_types == 0) {
    g_set_error(error, SBX_ERROR, SBX_ERROR_INVALID,
                "sbx_sandbox_start: no process types given");
    return NULL;
  }
  sbx_process_type *types = g_new0(sbx_process_type, config->n_types);
  const char *at = (const char *)config->types;
  size_t stride = sbx_api_size_of(at);
  for (size_t i = 0; i < config->n_types; i++) {
    g_autofree char *what = g_strdup_printf("sbx_sandbox_start: types[%zu]", i);
    if (!sbx_api_read(&sbx_api_process_type, at + i * stride, &types[i], what,
                      error)) {
      g_free(types);
      return NULL;
    }
    if (types[i].size != stride) {
      g_set_error(error, SBX_ERROR, SBX_ERROR_INVALID,
                  "%s: its size is %zu, the first element's %zu: make every "
                  "element with SBX_PROCESS_TYPE_INIT()",
                  what, types[i].size, stride);
      g_free(types);
      return NULL;
    }
  }
  return types;
}

static gboolean check_types(const sbx_process_type *types, size_t n,
                            GError **error) {
  for (size_t i = 0; i < n; i++) {
    const sbx_process_type *t = &types[i];
    if (t->pool > SBX_POOL_MAX) {
      g_set_error(error, SBX_ERROR, SBX_ERROR_INVALID,
                  "process type \"%s\": pool is %u; at most %d",
                  t->name ? t->name : "(null)", t->pool, SBX_POOL_MAX);
      return FALSE;
    }
    if (!t->entry) {
      g_set_error(error, SBX_ERROR, SBX_ERROR_INVALID,
                  "process type \"%s\": no entry function",
                  t->name ? t->name : "(null)");
      return FALSE;
    }
    for (size_t j = 0; t->name && j < i; j++) {
      if (types[j].name && !strcmp(types[j].name, t->name)) {
        g_set_error(error, SBX_ERROR, SBX_ERROR_INVALID,
                    "process type \"%s\" is registered twice", t->name);
        return FALSE;
      }
    }
  }
  long threads = sbx_thread_count();
  if (threads != 1) {
    g_set_error(error, SBX_ERROR, SBX_ERROR_INVALID,
                threads < 0
                    ? "sbx_sandbox_start: cannot count the host's threads "
                      "(/proc/self/stat unreadable)"
                    : "sbx_sandbox_start: the host already runs %ld threads; "
                      "call it before creating any thread (the zygote is "
                      "cloned from the host, and a lock held by another "
                      "thread would stay locked in it)",
                threads);
    return FALSE;
  }
  return TRUE;
}

static gboolean start_broker(sbx_sandbox *s, const sbx_sandbox_config *config,
                             GError **error) {
  int audit_fd = sbx_audit_log_open(config->audit_log, error);
  if (audit_fd < 0)
    return FALSE;
  const sbx_allowlist **lists = g_new0(const sbx_allowlist *, s->n_types);
  for (size_t i = 0; i < s->n_types; i++)
    lists[i] = s->types[i].allowlist;
  const sbx_bpf_program **verdicts =
      g_new0(const sbx_bpf_program *, s->n_types);
  for (size_t i = 0; i < s->n_types; i++)
    verdicts[i] = s->types[i].verdicts.len ? &s->types[i].verdicts : NULL;
  sbx_broker_config bc = {.allowlists = lists,
                          .n_allowlists = s->n_types,
                          .audit_fd = audit_fd,
                          .verdict_programs = verdicts,
                          .learn = s->learn_dir != NULL};
  GError *local = NULL;
  s->broker = sbx_broker_start(&bc, &local);
  g_free(lists);
  g_free(verdicts);
  close(audit_fd); /* the broker keeps its own duplicate */
  if (!s->broker) {
    sbx_api_propagate(error, local, "broker: ");
    return FALSE;
  }
  return TRUE;
}

/* In the worker, every layer on: the public arguments built from the
 * zygote's, then the host's entry function. */
int sbx_api_run_entry(const sbx_zygote_worker *w, sbx_worker_entry entry,
                      void *user_data) {
  sbx_sandbox_status status;
  if (w->status)
    sbx_api_status_render(w->status, &status);
  sbx_worker_args args = {
      .size = sizeof args,
      .process_type = w->process_type,
      .payload = w->payload,
      .payload_len = w->payload_len,
      .n_fds = w->n_fds,
      .broker_fd = w->broker_fd,
      .report_fd = w->report_fd,
      .user_data = user_data,
      .status = w->status ? &status : NULL,
      .channel =
          w->message_fd >= 0 ? sbx_api_channel_wrap(w->message_fd) : NULL,
  };
  return entry(&args);
}

/* A forked zygote's workers: the entry as the host registered it. */
static int run_worker(const sbx_zygote_worker *w) {
  const host_entry *host = w->entry_data;
  return sbx_api_run_entry(w, host->entry, host->user_data);
}

/* One zygote for every type: its namespaces are the union of what the
 * profiles ask for and its root is empty if any profile wants that, so
 * sharing a zygote never gives a type less than its profile says. */
static gboolean start_zygote(sbx_sandbox *s, GError **error) {
  sbx_zygote_type *zt = g_new0(sbx_zygote_type, s->n_types);
  const char **names = g_new0(const char *, s->n_types *SBX_LAYERS_MAX_FILTERS);
  unsigned namespaces = 0;
  bool empty_root = false;
  const char *userns_required_by = NULL;
  for (size_t i = 0; i < s->n_types; i++) {
    const sbx_prepared_type *t = &s->types[i];
    const sbx_profile *p = t->profile;
    const char **layer_names = names + i * SBX_LAYERS_MAX_FILTERS;
    for (size_t j = 0; j < t->n_layers; j++)
      layer_names[j] = t->layer_names[j];
    zt[i] = (sbx_zygote_type){
        .name = t->name,
        .entry = run_worker,
        .entry_data = s->fresh ? (void *)&s->entries[i].ref : &s->entries[i],
        .entry_data_len = sizeof s->entries[i].ref,
        .layers = t->layers,
        .layer_names = layer_names,
        .n_layers = t->n_layers,
        .uses_broker = true,
        .rlimits = p->rlimits,
        .n_rlimits = p->n_rlimits,
        .landlock = p->landlock,
        .direct_trees =
            t->direct_opens ? (const char *const *)p->direct_trees : NULL,
        .landlock_need = p->landlock_optional ? SBX_LANDLOCK_OPTIONAL
                                              : SBX_LANDLOCK_REQUIRED,
        .landlock_min_abi = p->landlock_min_abi,
        .collect_status = p->status,
        .audit_last_layer = t->verdicts.len > 0,
        .pool = s->entries[i].pool ? s->entries[i].pool : p->pool,
    };
    namespaces |= p->namespaces;
    empty_root = empty_root || p->empty_root;
    if (!userns_required_by && (p->require & SBX_REQUIRE_USERNS))
      userns_required_by = t->name;
  }
  sbx_zygote_config zc = {
      .types = zt,
      .n_types = s->n_types,
      .namespaces = namespaces ? namespaces : SBX_NS_USER,
      .host_root = !empty_root,
      .userns_required_by = userns_required_by,
      .register_broker_traps_raw = sbx_layer1_register_traps_raw,
      .broker_attach_raw = sbx_layer1_attach_raw,
      .broker_listener_raw = sbx_layer1_send_listener_raw,
      .broker_client = &s->client,
      .fresh = s->fresh,
      .exec_fd = s->exe_fd,
      .exec_env = (const char *const *)s->zygote_env,
  };
  sbx_broker_client_init(&s->client, -1);
  GError *local = NULL;
  gboolean ok = sbx_zygote_start(&zc, &s->zygote, &local);
  g_free(names);
  g_free(zt);
  if (!ok)
    sbx_api_propagate(error, local, "%s", "");
  return ok;
}

/* The config's audit_syscalls, or SBX_AUDIT_SYSCALLS=1 in the
 * environment. */
static bool audit_syscalls(const sbx_sandbox_config *c) {
  return c->audit_syscalls ||
         g_strcmp0(g_getenv("SBX_AUDIT_SYSCALLS"), "1") == 0;
}

/* The zygote's environment (sbx.h, "Fresh and fork mode"): the names
 * the host chose, and those that tune the runtime and the loader. */
static const char *const always_passed[] = {
    "ASAN_OPTIONS", "UBSAN_OPTIONS",   "LSAN_OPTIONS", "G_SLICE",
    "G_DEBUG",      "LD_LIBRARY_PATH", "LD_PRELOAD",
};

static gboolean env_chosen(const char *name, const char *const *chosen) {
  for (size_t i = 0; i < G_N_ELEMENTS(always_passed); i++) {
    if (!strcmp(name, always_passed[i]))
      return TRUE;
  }
  for (size_t i = 0; chosen && chosen[i]; i++) {
    size_t len = strlen(chosen[i]);
    if (len && chosen[i][len - 1] == '*' ? !strncmp(name, chosen[i], len - 1)
                                         : !strcmp(name, chosen[i]))
      return TRUE;
  }
  return FALSE;
}

static gboolean prepare_fresh(sbx_sandbox *s, const sbx_sandbox_config *c,
                              GError **error) {
  for (size_t i = 0; c->env && c->env[i]; i++) {
    if (!*c->env[i] || strchr(c->env[i], '=')) {
      g_set_error(error, SBX_ERROR, SBX_ERROR_INVALID,
                  "sbx_sandbox_start: env[%zu] \"%s\" is not a variable "
                  "name (a name, or a prefix ending in '*')",
                  i, c->env[i]);
      return FALSE;
    }
  }
  /* The program this process runs, whatever is at its path now. */
  s->exe_fd = open("/proc/self/exe", O_PATH | O_CLOEXEC);
  if (s->exe_fd < 0) {
    g_set_error(error, SBX_ERROR, SBX_ERROR_FAILED,
                "fresh mode: opening /proc/self/exe (the zygote is a new exec "
                "of the host's program; fork_mode avoids it): %s",
                g_strerror(errno));
    return FALSE;
  }
  GPtrArray *env = g_ptr_array_new();
  g_auto(GStrv) host_env = g_get_environ();
  for (size_t i = 0; host_env[i]; i++) {
    g_autofree char *name = g_strndup(host_env[i], strcspn(host_env[i], "="));
    if (env_chosen(name, c->env))
      g_ptr_array_add(env, g_strdup(host_env[i]));
  }
  g_ptr_array_add(env, NULL);
  s->zygote_env = (char **)g_ptr_array_free(env, FALSE);
  return TRUE;
}

/* A type's entry as a fresh zygote finds it; only plain data crosses. */
static gboolean fresh_entry(const sbx_process_type *t, sbx_api_entry_ref *ref,
                            GError **error) {
  const char *name = t->name ? t->name : "(null)";
  if (t->user_data) {
    g_set_error(error, SBX_ERROR, SBX_ERROR_INVALID,
                "process type \"%s\": user_data is set, but in fresh mode "
                "the worker's memory is not the host's (pass the data in the "
                "spawn's payload, or set fork_mode)",
                name);
    return FALSE;
  }
  return t->entry && sbx_api_entry_ref_make(t->entry, name, ref, error);
}

gboolean sbx_sandbox_start(const sbx_sandbox_config *config, sbx_sandbox **out,
                           GError **error) {
  if (!out) {
    g_set_error(error, SBX_ERROR, SBX_ERROR_INVALID,
                "sbx_sandbox_start: out is NULL");
    return FALSE;
  }
  *out = NULL;
  sbx_sandbox_config c;
  if (!sbx_api_read(&sbx_api_sandbox_config, config, &c,
                    "sbx_sandbox_start: config", error))
    return FALSE;
  g_autofree sbx_process_type *types = read_types(&c, error);
  if (!types || !check_types(types, c.n_types, error))
    return FALSE;
  sbx_sandbox *s = g_new0(sbx_sandbox, 1);
  g_mutex_init(&s->lock);
  g_cond_init(&s->idle);
  s->exe_fd = -1;
  s->fresh = sbx_api_hook_ran() && !c.fork_mode;
  s->types = g_new0(sbx_prepared_type, c.n_types);
  s->learn_dir = g_strdup(sbx_api_learn_dir(c.learn_dir));
  s->entries = g_new0(host_entry, c.n_types);
  if (s->fresh && !prepare_fresh(s, &c, error))
    goto fail;
  for (size_t i = 0; i < c.n_types; i++) {
    const sbx_process_type *t = &types[i];
    s->entries[i].entry = t->entry;
    s->entries[i].user_data = t->user_data;
    s->entries[i].pool = t->pool;
    if (s->fresh && !fresh_entry(t, &s->entries[i].ref, error))
      goto fail;
    if (!sbx_prepared_type_init(&s->types[i], t->name, t->profile,
                                c.profile_dir, t->extra_rules, true, true,
                                error))
      goto fail;
    s->n_types++;
    if ((s->learn_dir || audit_syscalls(&c)) &&
        !sbx_prepared_type_watch_verdicts(&s->types[i], s->learn_dir != NULL,
                                          error))
      goto fail;
  }
  if (!start_broker(s, &c, error) || !start_zygote(s, error))
    goto fail;
  *out = s;
  return TRUE;

fail:
  sbx_sandbox_stop(s);
  return FALSE;
}

static gboolean null_argument(const char *call, const char *name,
                              GError **error) {
  g_set_error(error, SBX_ERROR, SBX_ERROR_INVALID, "%s: %s is NULL", call,
              name);
  return FALSE;
}

/* A call on s begins: refused once sbx_sandbox_stop has begun. */
static gboolean enter_call(sbx_sandbox *s, const char *call, GError **error) {
  g_mutex_lock(&s->lock);
  gboolean ok = !s->stopping;
  if (ok)
    s->calls++;
  g_mutex_unlock(&s->lock);
  if (!ok)
    g_set_error(error, SBX_ERROR, SBX_ERROR_ZYGOTE_DIED,
                "%s: the sandbox is being stopped", call);
  return ok;
}

static void leave_call(sbx_sandbox *s) {
  g_mutex_lock(&s->lock);
  if (--s->calls == 0)
    g_cond_broadcast(&s->idle);
  g_mutex_unlock(&s->lock);
}

/* The worker's own rules (spawn.extra_rules) as an allowlist, each one
 * checked against its type's grantable entries; NULL with *error naming
 * the rule when one is wrong, and NULL without an error when there are
 * none. Reads only what sbx_sandbox_start left, so any thread may call it
 * while its call is counted (enter_call). */
static sbx_allowlist *read_grants(const sbx_sandbox *s,
                                  const sbx_spawn_config *c, GError **error) {
  if (!c->extra_rules || !c->extra_rules[0])
    return NULL;
  const sbx_allowlist *type_list = NULL;
  for (size_t i = 0; i < s->n_types && !type_list; i++) {
    if (!strcmp(s->types[i].name, c->process_type))
      type_list = s->types[i].allowlist;
  }
  if (!type_list) {
    g_set_error(error, SBX_ERROR, SBX_ERROR_INVALID,
                "spawn: no process type \"%s\" is registered", c->process_type);
    return NULL;
  }
  sbx_allowlist *grants = sbx_allowlist_new(c->process_type);
  for (size_t i = 0; c->extra_rules[i]; i++) {
    const char *rule = c->extra_rules[i];
    size_t before = sbx_allowlist_n_entries(grants);
    GError *local = NULL;
    if (!sbx_allowlist_add_rule(grants, rule, &local)) {
      g_set_error(error, SBX_ERROR, SBX_ERROR_INVALID,
                  "spawn: extra_rules[%zu] \"%s\": %s", i, rule,
                  local->message);
      g_error_free(local);
      sbx_allowlist_free(grants);
      return NULL;
    }
    for (size_t j = before; j < sbx_allowlist_n_entries(grants); j++) {
      const sbx_allow_entry *e = sbx_allowlist_entry(grants, j);
      const char *why =
          (e->rights & SBX_PERM_GRANTABLE)
              ? "a worker's own rule cannot be grantable"
          : !sbx_allowlist_grant_ceiling(type_list, e)
              ? "no grantable rule of the process type covers this path "
                "with these kinds (add one such as \"grantable,create "
                "/srv/out/\" to the type's rules)"
              : NULL;
      if (why) {
        g_set_error(error, SBX_ERROR, SBX_ERROR_INVALID,
                    "spawn: extra_rules[%zu] \"%s\" (%s) for type \"%s\": %s",
                    i, rule, e->path, c->process_type, why);
        sbx_allowlist_free(grants);
        return NULL;
      }
    }
  }
  return grants;
}

/* sbx_zygote_spawn_request.on_sent of a spawn: the broker's request for
 * the worker's channel (sbx_broker_connect_finish sends it if this never
 * ran). */
static void send_add_channel(void *connecting) {
  sbx_broker_connect_send(connecting);
}

gboolean sbx_sandbox_spawn(sbx_sandbox *s, const sbx_spawn_config *spawn,
                           pid_t *pid, GError **error) {
  if (pid)
    *pid = -1;
  if (!s || !pid)
    return null_argument("sbx_sandbox_spawn", s ? "pid" : "sandbox", error);
  sbx_spawn_config c;
  if (!sbx_api_read(&sbx_api_spawn_config, spawn, &c,
                    "sbx_sandbox_spawn: spawn", error))
    return FALSE;
  if (!c.process_type) {
    g_set_error(error, SBX_ERROR, SBX_ERROR_INVALID,
                "spawn: no process type given");
    return FALSE;
  }
  if ((c.payload_len && !c.payload) || (c.n_fds && !c.fds)) {
    g_set_error(error, SBX_ERROR, SBX_ERROR_INVALID,
                c.n_fds && !c.fds
                    ? "spawn: n_fds is %zu but fds is NULL"
                    : "spawn: payload_len is %zu but payload is NULL",
                c.n_fds && !c.fds ? c.n_fds : c.payload_len);
    return FALSE;
  }
  if (c.channel)
    *c.channel = NULL;
  int messages[2] = {-1, -1};
  if (c.channel &&
      socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, messages) < 0) {
    g_set_error(error, SBX_ERROR, SBX_ERROR_FAILED,
                "spawn: socketpair for the message channel: %s",
                g_strerror(errno));
    return FALSE;
  }
  if (!enter_call(s, "sbx_sandbox_spawn", error)) {
    if (c.channel) {
      close(messages[0]);
      close(messages[1]);
    }
    return FALSE;
  }
  GError *local = NULL;
  sbx_allowlist *grants = read_grants(s, &c, &local);
  /* The broker adds the worker's channel while the zygote starts the
   * worker: requests the worker sends before then wait in the socket. Its
   * request goes out once the zygote's has (on_sent): the first process a
   * message wakes runs on the sender's CPU, so sending the broker's first
   * put the broker's work ahead of the zygote's and the worker's. */
  int channel = -1;
  sbx_broker_connecting *connecting =
      local ? NULL
            : sbx_broker_connect_prepare(s->broker, c.process_type, grants,
                                         &channel, &local);
  sbx_allowlist_free(grants);
  gboolean ok = connecting != NULL;
  if (ok) {
    sbx_zygote_spawn_request req = {
        .process_type = c.process_type,
        .payload = c.payload,
        .payload_len = c.payload_len,
        .fds = c.fds,
        .n_fds = c.n_fds,
        .broker_channel = channel,
        .with_messages = c.channel != NULL,
        .message_channel = messages[1],
        .held = true,
        .on_sent = send_add_channel,
        .on_sent_ctx = connecting,
    };
    ok = sbx_zygote_spawn(s->zygote, &req, pid, &local);
    /* The worker holds the only other end; without a worker the broker
     * drops the channel once it adds it. */
    close(channel);
    GError *broker_error = NULL;
    if (!sbx_broker_connect_finish(connecting, &broker_error)) {
      /* The broker's error, as when the worker did not exist yet. */
      if (ok) {
        sbx_zygote_discard(s->zygote, *pid);
        *pid = -1;
        ok = FALSE;
      }
      g_clear_error(&local);
      local = broker_error;
      g_prefix_error(&local, "spawn: ");
    } else if (ok) {
      sbx_zygote_release(s->zygote, *pid);
    }
  } else if (local->domain != SBX_ERROR) { /* read_grants' says spawn: */
    g_prefix_error(&local, "spawn: ");
  }
  leave_call(s);
  if (c.channel) {
    close(messages[1]); /* likewise */
    if (ok)
      *c.channel = sbx_api_channel_wrap(messages[0]);
    else
      close(messages[0]);
  }
  if (!ok)
    sbx_api_propagate(error, local, "%s", "");
  return ok;
}

static sbx_exit_reason public_reason(sbx_zygote_exit_reason reason) {
  switch (reason) {
    case SBX_ZYGOTE_EXIT_NORMAL:
      return SBX_EXIT_NORMAL;
    case SBX_ZYGOTE_EXIT_POLICY_KILL:
      return SBX_EXIT_POLICY_KILL;
    case SBX_ZYGOTE_EXIT_SETUP_FAILED:
      return SBX_EXIT_SETUP_FAILED;
    case SBX_ZYGOTE_EXIT_ZYGOTE_DIED:
      return SBX_EXIT_ZYGOTE_DIED;
    default:
      return SBX_EXIT_SIGNALED;
  }
}

G_STATIC_ASSERT(sizeof(((sbx_worker_exit *)0)->detail) ==
                SBX_ZYGOTE_EXIT_DETAIL_MAX);

gboolean sbx_sandbox_wait(sbx_sandbox *s, pid_t pid, int timeout_ms,
                          sbx_worker_exit *exit, GError **error) {
  if (!exit)
    return null_argument("sbx_sandbox_wait", "exit", error);
  if (!sbx_api_check_size(&sbx_api_worker_exit, exit->size,
                          "sbx_sandbox_wait: exit", error))
    return FALSE;
  sbx_worker_exit filled = SBX_WORKER_EXIT_INIT();
  gboolean ok = FALSE;
  sbx_zygote_exit e;
  GError *local = NULL;
  if (!s) {
    null_argument("sbx_sandbox_wait", "sandbox", error);
  } else if (enter_call(s, "sbx_sandbox_wait", error)) {
    ok = sbx_zygote_wait(s->zygote, pid, timeout_ms, &e, &local);
    leave_call(s);
    if (!ok)
      sbx_api_propagate(error, local, "%s", "");
  }
  if (ok) {
    filled.pid = e.pid;
    filled.reason = public_reason(e.reason);
    filled.exit_code = e.exit_code;
    filled.signal = e.signal;
    filled.syscall_nr = e.syscall_nr;
    memcpy(filled.syscall_args, e.syscall_args, sizeof filled.syscall_args);
    memcpy(filled.detail, e.detail, sizeof filled.detail);
  }
  sbx_api_write(&sbx_api_worker_exit, &filled, exit);
  return ok;
}

int sbx_sandbox_event_fd(const sbx_sandbox *s) {
  return s ? sbx_zygote_fd(s->zygote) : -1;
}

pid_t sbx_sandbox_zygote_pid(const sbx_sandbox *s) {
  return s ? sbx_zygote_pid(s->zygote) : -1;
}

pid_t sbx_sandbox_broker_pid(const sbx_sandbox *s) {
  return s ? sbx_broker_pid(s->broker) : -1;
}

/* Learning mode: what the broker kept, as files (learn.h); a failure is
 * one line on stderr, since stop reports nothing. */
static void write_learned(sbx_sandbox *s) {
  GError *error = NULL;
  g_autoptr(GVariant) learned = sbx_broker_learned(s->broker, &error);
  if (!learned || !sbx_api_learn_write(s->types, s->n_types, learned,
                                       s->learn_dir, &error)) {
    fprintf(stderr, "sbx: learning: %s\n", error->message);
    g_error_free(error);
  }
}

void sbx_sandbox_stop(sbx_sandbox *s) {
  if (!s)
    return;
  /* The zygote first: its pid namespace takes every worker with it, so no
   * worker outlives the broker it talks to. Killing it also makes the
   * calls in progress on other threads return; s is freed after the last. */
  g_mutex_lock(&s->lock);
  s->stopping = true;
  g_mutex_unlock(&s->lock);
  sbx_zygote_kill(s->zygote);
  g_mutex_lock(&s->lock);
  while (s->calls > 0)
    g_cond_wait(&s->idle, &s->lock);
  g_mutex_unlock(&s->lock);
  sbx_zygote_stop(s->zygote);
  if (s->learn_dir && s->broker)
    write_learned(s);
  sbx_broker_stop(s->broker, NULL, NULL);
  for (size_t i = 0; i < s->n_types; i++)
    sbx_prepared_type_clear(&s->types[i]);
  g_free(s->types);
  g_free(s->entries);
  g_free(s->learn_dir);
  if (s->exe_fd >= 0)
    close(s->exe_fd);
  g_strfreev(s->zygote_env);
  g_cond_clear(&s->idle);
  g_mutex_clear(&s->lock);
  g_free(s);
}
