/* In-process sandboxing (sbx_sandbox_enter_self): a process confines
 * itself, Chromium's model for a process that is its own worker.
 *
 * Why it exists: not every program can be split into a host and zygote
 * workers; a tool that parses untrusted input can instead lock itself
 * down once its set-up is done. The order is the security argument:
 *   1. prepare   profile loaded, policies compiled, Landlock ruleset built
 *                (nothing is installed yet; a bad file fails cleanly)
 *   2. broker    started now (its own program, broker_process.h), before
 *                any layer, so it has the process's file system view; the
 *                process keeps one channel to it
 *   3. namespaces  user, net, ipc, uts, mount, cgroup as the profile says,
 *                then the empty root. Only a single-threaded process can
 *                enter a user namespace; pid is never entered here (it
 *                applies to children only, and the policy forbids fork)
 *   4. credentials  capabilities dropped, no_new_privs, undumpable; the
 *                session is kept (the host may own a terminal; TIOCSTI is
 *                refused by the ioctl allowlist instead)
 *   5. rlimits
 *   6. layer 1   file-system calls trap to the broker, on every thread
 *   7. layer 2.. the profile's policies, on every thread (TSYNC)
 *   8. Landlock  on the calling thread (and threads it creates later)
 * Steps 6 and 7 use TSYNC, so threads that already run are covered (S16).
 * Landlock and capabilities are per thread in Linux: threads started
 * before the call keep their own, and are held by seccomp and the broker.
 *
 * What it trusts: the configuration and the files it names. What it
 * refuses: a threaded process whose profile wants namespaces (unless the
 * caller says to keep them), a process that holds capabilities it cannot
 * drop. The broker handle and the client live until the process exits:
 * layer 1's handlers read them on every trap, and the broker exits when
 * its control channel closes or its parent dies.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "sandbox/api/prepare.h"
#include "sandbox/broker/broker.h"
#include "sandbox/broker/layer1.h"
#include "sandbox/kernel/landlock/landlock.h"
#include "sandbox/kernel/namespaces/credentials.h"
#include "sandbox/kernel/namespaces/fds.h"
#include "sandbox/kernel/namespaces/namespaces.h"
#include "sandbox/kernel/namespaces/rootfs.h"
#include "sandbox/kernel/namespaces/status.h"
#include "sandbox/kernel/seccomp/capget.h"
#include "sandbox/kernel/seccomp/loader.h"
#include "sandbox/zygote/self_pid.h"
#include "sandbox/zygote/status.h"
#include "sbx/sbx.h"

/* The namespaces that mean something for a process entering them itself. */
#define SELF_NAMESPACES (SBX_NS_ALL & ~SBX_NS_PID)

typedef struct {
  sbx_prepared_type type;
  unsigned namespaces;
  int landlock_fd;
  sbx_landlock_report landlock;
  sbx_ns_reference reference;
} self_plan;

static void plan_clear(self_plan *plan) {
  sbx_prepared_type_clear(&plan->type);
  if (plan->landlock_fd >= 0)
    close(plan->landlock_fd);
  plan->landlock_fd = -1;
}

static gboolean build_landlock(self_plan *plan, GError **error) {
  const sbx_profile *p = plan->type.profile;
  if (!p->landlock)
    return TRUE;
  sbx_landlock_builder *b = sbx_landlock_builder_new();
  if (p->landlock_min_abi > 0)
    sbx_landlock_require_abi(b, p->landlock_min_abi);
  GError *local = NULL;
  plan->landlock_fd = sbx_landlock_build(b, &plan->landlock, &local);
  sbx_landlock_builder_free(b);
  if (plan->landlock_fd >= 0)
    return TRUE;
  if (p->landlock_optional && g_error_matches(local, SBX_LANDLOCK_ERROR,
                                              SBX_LANDLOCK_ERROR_UNSUPPORTED)) {
    g_error_free(local);
    return TRUE;
  }
  sbx_api_propagate(error, local, "%s: [landlock]: ", p->source);
  return FALSE;
}

static gboolean prepare(const sbx_self_config *config, self_plan *plan,
                        GError **error) {
  const char *name = config->process_type ? config->process_type : "self";
  if (!sbx_prepared_type_init(&plan->type, name, config->profile,
                              config->profile_dir, config->extra_rules, false,
                              error))
    return FALSE;
  plan->namespaces = config->keep_namespaces
                         ? 0
                         : plan->type.profile->namespaces & SELF_NAMESPACES;
  long threads = sbx_thread_count();
  if (plan->namespaces && threads != 1) {
    g_set_error(error, SBX_ERROR, SBX_ERROR_INVALID,
                "enter_self: %s asks for new namespaces, but the process runs "
                "%ld threads and the kernel lets only a single-threaded "
                "process enter a user namespace; call it before starting "
                "threads, or set keep_namespaces",
                plan->type.profile->source, threads);
    return FALSE;
  }
  if (sbx_status_record_reference(&plan->reference) < 0)
    plan->reference.valid = false;
  return build_landlock(plan, error);
}

/* Step 2. Once a layer is installed the handle and the client are never
 * freed: see the top. */
static gboolean start_broker(const sbx_self_config *config, self_plan *plan,
                             sbx_broker **broker_out,
                             sbx_broker_client **client_out, GError **error) {
  int audit_fd = sbx_audit_log_open(config->audit_log, error);
  if (audit_fd < 0)
    return FALSE;
  const sbx_allowlist *lists[] = {plan->type.allowlist};
  sbx_broker_config bc = {
      .allowlists = lists, .n_allowlists = 1, .audit_fd = audit_fd};
  GError *local = NULL;
  sbx_broker *broker = sbx_broker_start(&bc, &local);
  close(audit_fd);
  if (!broker) {
    sbx_api_propagate(error, local, "enter_self: broker: ");
    return FALSE;
  }
  int channel = sbx_broker_connect(broker, plan->type.name, &local);
  if (channel < 0) {
    sbx_broker_stop(broker, NULL, NULL);
    sbx_api_propagate(error, local, "enter_self: broker: ");
    return FALSE;
  }
  sbx_broker_client *client = g_new0(sbx_broker_client, 1);
  sbx_broker_client_init(client, channel);
  *broker_out = broker;
  *client_out = client;
  return TRUE;
}

/* Step 3. */
static gboolean enter_namespaces(const self_plan *plan, GError **error) {
  if (!plan->namespaces)
    return TRUE;
  sbx_ns_config ns;
  sbx_ns_config_init(&ns);
  ns.namespaces = plan->namespaces | SBX_NS_USER;
  GError *local = NULL;
  if (!sbx_ns_enter(&ns, &local)) {
    sbx_api_propagate(error, local, "enter_self: namespaces: ");
    return FALSE;
  }
  return TRUE;
}

static gboolean make_empty_root(const self_plan *plan, GError **error) {
  if (!plan->type.profile->empty_root || !(plan->namespaces & SBX_NS_MOUNT))
    return TRUE;
  sbx_root_config root = {0};
  sbx_root_result result;
  GError *local = NULL;
  if (!sbx_root_make_empty(&root, &result, &local)) {
    sbx_api_propagate(error, local, "enter_self: empty root: ");
    return FALSE;
  }
  return TRUE;
}

static gboolean raw_failed(GError **error, const char *step, int rc) {
  g_set_error(error, SBX_ERROR, SBX_ERROR_FAILED, "enter_self: %s: %s", step,
              g_strerror(-rc));
  return FALSE;
}

/* Step 4. In a new user namespace every capability there is dropped. In
 * the process's own namespace an unprivileged caller cannot empty its
 * bounding set (CAP_SETPCAP); that is acceptable only when it holds no
 * capability at all, since the bounding set limits nothing but exec, which
 * no_new_privs and the policies refuse. */
static gboolean drop_credentials(const self_plan *plan, GError **error) {
  int rc;
  if (plan->namespaces) {
    sbx_creds_config creds;
    sbx_creds_config_init(&creds);
    creds.die_with_parent = false;
    creds.new_session = false;
    sbx_creds_result result;
    rc = sbx_creds_apply_raw(&creds, &result);
    return rc == 0 || raw_failed(error, result.failed_step, rc);
  }
  rc = sbx_creds_drop_capabilities_raw();
  if (rc == -EPERM) {
    sbx_layer_status now;
    sbx_status_collect(NULL, &now);
    if (now.cap_effective | now.cap_permitted | now.cap_inheritable |
        now.cap_ambient) {
      g_set_error(error, SBX_ERROR, SBX_ERROR_FAILED,
                  "enter_self: the process holds capabilities but not "
                  "CAP_SETPCAP, so its bounding set cannot be emptied; drop "
                  "them before calling, or let the profile enter a user "
                  "namespace");
      return FALSE;
    }
    rc = 0;
  }
  if (rc < 0)
    return raw_failed(error, "dropping capabilities", rc);
  rc = sbx_creds_set_no_new_privs_raw();
  if (rc < 0)
    return raw_failed(error, "PR_SET_NO_NEW_PRIVS", rc);
  rc = sbx_creds_set_undumpable_raw();
  return rc == 0 || raw_failed(error, "PR_SET_DUMPABLE", rc);
}

/* Step 7. Each program is patched for this process's pid (self_pid.h). */
static gboolean load_layers(const self_plan *plan, GError **error) {
  pid_t self = getpid();
  for (size_t i = 0; i < plan->type.n_layers; i++) {
    const sbx_bpf_program *prog = &plan->type.layers[i];
    g_autofree struct sock_filter *insns =
        g_memdup2(prog->insns, prog->len * sizeof *insns);
    sbx_self_pid_patch(insns, prog->len, self);
    GError *local = NULL;
    if (!sbx_seccomp_load(insns, prog->len, SBX_SECCOMP_TSYNC, NULL, &local)) {
      sbx_api_propagate(error, local, "enter_self: seccomp layer %s: ",
                        plan->type.layer_names[i]);
      return FALSE;
    }
  }
  return TRUE;
}

/* The kernel's view, from two readings: early (right after the
 * namespaces, while /proc is still there) for what only /proc tells, late
 * (credentials final, before layer 1 sends every open to the broker) for
 * the rest. seccomp(2) and landlock_restrict_self(2) returning 0 is the
 * kernel's word that those layers are in place. */
static void fill_status(const self_plan *plan, const sbx_layer_status *early,
                        sbx_layer_status *late, sbx_sandbox_status *status) {
  for (int i = 0; i < SBX_NS_KINDS; i++) {
    if (late->ns[i] == SBX_TRI_UNKNOWN)
      late->ns[i] = early->ns[i];
  }
  size_t n_layers = plan->type.n_layers + 1;
  int filters = late->seccomp_filters >= 0 ? late->seccomp_filters
                                           : early->seccomp_filters;
  late->seccomp_mode = 2;
  late->seccomp_filters = filters >= 0 ? filters + (int)n_layers : -1;
  bool landlock = plan->landlock_fd >= 0;
  late->landlock = landlock ? SBX_TRI_YES : SBX_TRI_NO;
  late->landlock_abi = landlock ? plan->landlock.abi : -1;
  const char *names[SBX_WORKER_MAX_LAYERS + 1];
  names[0] = SBX_LAYER1_NAME;
  for (size_t i = 0; i < plan->type.n_layers; i++)
    names[i + 1] = plan->type.layer_names[i];
  sbx_status_installed installed = {
      .process_type = plan->type.name,
      .layer_names = names,
      .n_layers = n_layers,
      .broker = true,
      .landlock_abi = late->landlock_abi,
  };
  sbx_status_assemble(late, &installed, status);
}

gboolean sbx_sandbox_enter_self(const sbx_self_config *config,
                                sbx_sandbox_status *status, GError **error) {
  if (!config || !config->profile) {
    g_set_error(error, SBX_ERROR, SBX_ERROR_INVALID,
                "enter_self: no profile given");
    return FALSE;
  }
  self_plan plan = {.landlock_fd = -1};
  sbx_broker *broker = NULL;
  sbx_broker_client *client = NULL;
  gboolean ok = FALSE;
  bool layered = false; /* from here on the broker must stay */
  if (!prepare(config, &plan, error) ||
      !start_broker(config, &plan, &broker, &client, error))
    goto out;
  const sbx_ns_reference *ref = plan.reference.valid ? &plan.reference : NULL;
  if (!enter_namespaces(&plan, error))
    goto out;
  sbx_layer_status early, late;
  sbx_status_collect(ref, &early);
  if (!make_empty_root(&plan, error) || !drop_credentials(&plan, error))
    goto out;
  size_t failed_limit = 0;
  int rc = sbx_rlimits_apply_raw(plan.type.profile->rlimits,
                                 plan.type.profile->n_rlimits, &failed_limit);
  if (rc < 0) {
    g_set_error(error, SBX_ERROR, SBX_ERROR_FAILED,
                "enter_self: %s: [rlimits] entry %zu: prlimit: %s",
                plan.type.profile->source, failed_limit, g_strerror(-rc));
    goto out;
  }
  sbx_status_collect(ref, &late);
  rc = sbx_capget_register_raw();
  if (rc < 0) {
    raw_failed(error, "registering the capget handler", rc);
    goto out;
  }
  GError *local = NULL;
  if (!sbx_layer1_enter(client, &local)) {
    sbx_api_propagate(error, local, "enter_self: broker-client layer: ");
    goto out;
  }
  layered = true;
  if (!load_layers(&plan, error))
    goto out;
  if (plan.landlock_fd >= 0 &&
      !sbx_landlock_restrict_self(plan.landlock_fd,
                                  plan.landlock.restrict_flags, &local)) {
    sbx_api_propagate(error, local, "enter_self: Landlock: ");
    goto out;
  }
  if (status)
    fill_status(&plan, &early, &late, status);
  ok = TRUE;
out:
  if (broker && !layered) {
    close(client->channel);
    g_free(client);
    sbx_broker_stop(broker, NULL, NULL);
  }
  plan_clear(&plan);
  return ok;
}
