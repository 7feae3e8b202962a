/* In-process sandboxing (sbx_sandbox_enter_self): a process confines
 * itself, Chromium's model for a process that is its own worker.
 *
 * Why it exists: not every program can be split into a host and zygote
 * workers; a tool that parses untrusted input can instead lock itself
 * down once its set-up is done. What happens, in order:
 *   1. prepare   profile loaded, policies compiled (the broker-client
 *                layer first), Landlock ruleset built: the layers plan
 *                (sandbox/layers/plan.h). Nothing is installed yet; a bad
 *                file fails cleanly
 *   2. broker    started now (its own program, broker_process.h), before
 *                any layer, so it has the process's file system view; the
 *                process keeps one channel to it
 *   3. namespaces  user, net, ipc, uts, mount, cgroup as the profile says,
 *                then the empty root. Only a single-threaded process can
 *                enter a user namespace; pid is never entered here (it
 *                applies to children only, and the policy forbids fork)
 *   4. traps     the broker client's SIGSYS handlers registered
 *   5. layers    the plan applied by the layers engine, in its one order
 *                (sandbox/layers/apply.h), with the flags of a process
 *                that confines itself: it outlives its parent, keeps its
 *                descriptors and its session (it may own a terminal;
 *                TIOCSTI is refused by the ioctl allowlist instead), and
 *                every filter goes on every thread (TSYNC, S16).
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

#include "sandbox/api/error.h"
#include "sandbox/api/prepare.h"
#include "sandbox/api/sized.h"
#include "sandbox/api/status.h"
#include "sandbox/broker/broker.h"
#include "sandbox/broker/layer1.h"
#include "sandbox/kernel/namespaces/namespaces.h"
#include "sandbox/kernel/namespaces/rootfs.h"
#include "sandbox/kernel/namespaces/status.h"
#include "sandbox/kernel/seccomp/capget.h"
#include "sandbox/layers/apply.h"
#include "sandbox/layers/missing.h"
#include "sbx/sbx.h"

/* The namespaces that mean something for a process entering them itself. */
#define SELF_NAMESPACES (SBX_NS_ALL & ~SBX_NS_PID)

/* What a process confining itself does not share with a worker: see the
 * flags in sandbox/layers/plan.h. */
#define SELF_FLAGS                                           \
  (SBX_LAYERS_OUTLIVE_PARENT | SBX_LAYERS_KEEP_DESCRIPTORS | \
   SBX_LAYERS_KEEP_SESSION | SBX_LAYERS_TSYNC)

typedef struct {
  sbx_prepared_type type;
  unsigned namespaces;
  sbx_layer_plan layers;
  sbx_ns_reference reference;
} self_plan;

static void plan_clear(self_plan *plan) {
  sbx_prepared_type_clear(&plan->type);
  sbx_layer_plan_clear(&plan->layers);
}

static gboolean plan_layers(self_plan *plan, bool status, GError **error) {
  const sbx_profile *p = plan->type.profile;
  sbx_layer_plan *layers = &plan->layers;
  sbx_layer_plan_init(layers, plan->type.name, SELF_FLAGS);
  layers->broker = true;
  layers->collect_status = status;
  GError *local = NULL;
  gboolean ok = TRUE;
  for (size_t i = 0; ok && i < plan->type.n_layers; i++)
    ok = sbx_layer_plan_add_filter(layers, plan->type.layer_names[i],
                                   &plan->type.layers[i], &local);
  ok = ok &&
       sbx_layer_plan_add_rlimits(layers, p->rlimits, p->n_rlimits, &local);
  if (ok && p->landlock)
    ok = sbx_layer_plan_set_landlock(
        layers, sbx_landlock_builder_new(),
        p->landlock_optional ? SBX_LANDLOCK_OPTIONAL : SBX_LANDLOCK_REQUIRED,
        p->landlock_min_abi, &local);
  if (!ok)
    sbx_api_propagate(error, local, "%s: ", p->source);
  return ok;
}

static gboolean prepare(const sbx_self_config *config, self_plan *plan,
                        bool status, GError **error) {
  const char *name = config->process_type ? config->process_type : "self";
  if (!sbx_prepared_type_init(&plan->type, name, config->profile,
                              config->profile_dir, config->extra_rules, true,
                              false, error))
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
  return plan_layers(plan, status, error);
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

/* Step 3. Where the kernel refuses user namespaces and the profile does
 * not require them, the process goes on without (missing.h decides and
 * warns); its status report shows them off. */
static gboolean enter_namespaces(self_plan *plan, GError **error) {
  if (!plan->namespaces)
    return TRUE;
  sbx_ns_config ns;
  sbx_ns_config_init(&ns);
  ns.namespaces = plan->namespaces | SBX_NS_USER;
  GError *local = NULL;
  if (sbx_ns_enter(&ns, &local))
    return TRUE;
  GError *failed = NULL;
  if (sbx_layer_userns_refused(
          local, (plan->type.profile->require & SBX_REQUIRE_USERNS) != 0,
          plan->type.name, &failed)) {
    plan->namespaces = 0;
    return TRUE;
  }
  sbx_api_propagate(error, failed, "enter_self: namespaces: ");
  return FALSE;
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

/* Step 4: the capget handler, then the broker client's handlers, whose
 * registration installs the SIGSYS handler and freezes the registry. */
static gboolean register_traps(sbx_broker_client *client, GError **error) {
  int rc = sbx_capget_register_raw();
  const char *what = "the capget handler";
  if (rc == 0) {
    rc = sbx_layer1_register_traps_raw(client, NULL, 0);
    what = "the broker client's SIGSYS handlers";
  }
  if (rc == 0)
    return TRUE;
  g_set_error(error, SBX_ERROR, SBX_ERROR_FAILED,
              "enter_self: registering %s: %s (the trap registry is frozen "
              "once a SIGSYS handler is installed)",
              what, g_strerror(-rc));
  return FALSE;
}

gboolean sbx_sandbox_enter_self(const sbx_self_config *caller_config,
                                sbx_sandbox_status *status, GError **error) {
  sbx_self_config c;
  const sbx_self_config *config = &c;
  if (!sbx_api_read(&sbx_api_self_config, caller_config, &c,
                    "sbx_sandbox_enter_self: config", error))
    return FALSE;
  if (status && !sbx_api_check_size(&sbx_api_sandbox_status, status->size,
                                    "sbx_sandbox_enter_self: status", error))
    return FALSE;
  if (!config->profile) {
    g_set_error(error, SBX_ERROR, SBX_ERROR_INVALID,
                "enter_self: no profile given");
    return FALSE;
  }
  self_plan plan = {0};
  sbx_layer_plan_init(&plan.layers, "", 0);
  sbx_broker *broker = NULL;
  sbx_broker_client *client = NULL;
  gboolean ok = FALSE;
  bool layered = false; /* from here on the broker must stay */
  if (!prepare(config, &plan, status != NULL, error) ||
      !start_broker(config, &plan, &broker, &client, error))
    goto out;
  if (!enter_namespaces(&plan, error))
    goto out;
  /* /proc as the namespaces left it, before the empty root hides it. */
  sbx_layer_status early;
  sbx_status_collect(plan.reference.valid ? &plan.reference : NULL, &early);
  if (!make_empty_root(&plan, error) || !register_traps(client, error))
    goto out;
  sbx_process_status found;
  sbx_layer_process process = {
      .ns_reference = plan.reference.valid ? &plan.reference : NULL,
      .early = &early,
      .status = status ? &found : NULL,
  };
  sbx_layer_result result;
  if (sbx_layer_apply_raw(&plan.layers, &process, &result) < 0) {
    layered = result.step > SBX_LAYER_STEP_SECCOMP ||
              (result.step == SBX_LAYER_STEP_SECCOMP && result.detail > 0);
    g_autofree char *what = sbx_layer_result_describe(&plan.layers, &result);
    g_set_error(error, SBX_ERROR, SBX_ERROR_FAILED, "enter_self: %s", what);
    goto out;
  }
  layered = true;
  if (status) {
    sbx_sandbox_status rendered;
    sbx_api_status_render(&found, &rendered);
    sbx_api_write(&sbx_api_sandbox_status, &rendered, status);
  }
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
