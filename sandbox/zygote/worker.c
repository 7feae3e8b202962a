/* A worker's start, layer by layer: see worker.h. */
#include "sandbox/zygote/worker.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "sandbox/kernel/landlock/landlock.h"
#include "sandbox/kernel/namespaces/credentials.h"
#include "sandbox/kernel/namespaces/fds.h"
#include "sandbox/kernel/seccomp/loader.h"
#include "sandbox/zygote/protocol.h"
#include "sandbox/zygote/report.h"
#include "sandbox/zygote/self_pid.h"
#include "sandbox/zygote/status.h"

/* ASYNC-SIGNAL-SAFE. */
_Noreturn static void fail(int report_fd, sbx_worker_step step, int detail,
                           int err) {
  sbx_report_setup_failure(report_fd, step, detail, err);
  _exit(SBX_WORKER_SETUP_FAILED_EXIT);
}

/* Step 2. Lays out the descriptors: the host's at 0..n-1 (/dev/null for
 * missing stdio), then the broker channel, the report pipe and the
 * Landlock ruleset. Fills the final numbers. ASYNC-SIGNAL-SAFE. */
static int lay_out_fds(const sbx_worker_plan *plan,
                       const sbx_worker_spawn *spawn, int *n_user,
                       int *broker_fd, int *report_fd, int *landlock_fd) {
  sbx_fd_keep keep[SBX_ZYGOTE_MAX_FDS + 6];
  size_t n = 0;
  size_t user = spawn->n_fds < 3 ? 3 : spawn->n_fds;
  if (spawn->n_fds > SBX_ZYGOTE_MAX_FDS)
    return -EINVAL;
  for (size_t i = 0; i < user; i++) {
    int fd;
    if (i < spawn->n_fds) {
      fd = spawn->fds[i];
    } else {
      /* A slot of its own: one source may not feed two targets. */
      fd = fcntl(spawn->devnull_fd, F_DUPFD_CLOEXEC, 0);
      if (fd < 0)
        return -errno;
    }
    keep[n++] = (sbx_fd_keep){.fd = fd, .target = (int)i, .cloexec = false};
  }
  size_t broker_i = 0, report_i, landlock_i = 0;
  int next = (int)user;
  if (plan->uses_broker) {
    broker_i = n;
    keep[n++] = (sbx_fd_keep){
        .fd = spawn->broker_fd, .target = next++, .cloexec = true};
  }
  report_i = n;
  keep[n++] =
      (sbx_fd_keep){.fd = spawn->report_fd, .target = next++, .cloexec = true};
  if (plan->landlock_fd >= 0) {
    landlock_i = n;
    keep[n++] = (sbx_fd_keep){
        .fd = plan->landlock_fd, .target = next++, .cloexec = true};
  }
  int rc = sbx_fd_keep_only_raw(keep, n);
  if (rc < 0)
    return rc;
  *n_user = (int)user;
  *broker_fd = plan->uses_broker ? keep[broker_i].fd : -1;
  *report_fd = keep[report_i].fd;
  *landlock_fd = plan->landlock_fd >= 0 ? keep[landlock_i].fd : -1;
  return 0;
}

/* ASYNC-SIGNAL-SAFE up to the entry call. */
_Noreturn void sbx_worker_run_raw(const sbx_worker_plan *plan,
                                  const sbx_worker_spawn *spawn) {
  int report_fd = spawn->report_fd;
  int rc;

  /* 1. Die with the zygote; start with the host's signal mask. */
  rc = sbx_creds_die_with_parent_raw(spawn->expected_ppid, -1);
  if (rc < 0)
    fail(report_fd, SBX_STEP_PARENT_DEATH, 0, -rc);
  sigprocmask(SIG_SETMASK, &spawn->sigmask, NULL);

  /* 2. Descriptors. */
  int n_user = 0, broker_fd = -1, landlock_fd = -1;
  rc = lay_out_fds(plan, spawn, &n_user, &broker_fd, &report_fd, &landlock_fd);
  if (rc < 0)
    fail(report_fd, SBX_STEP_FDS, 0, -rc);
  *spawn->report_fd_slot = report_fd;

  /* 3. Resource limits. */
  size_t failed_limit = 0;
  rc = sbx_rlimits_apply_raw(plan->rlimits, plan->n_rlimits, &failed_limit);
  if (rc < 0)
    fail(report_fd, SBX_STEP_RLIMITS, (int)failed_limit, -rc);

  /* 4. Credentials. */
  sbx_creds_config creds;
  sbx_creds_config_init(&creds);
  creds.die_with_parent = false; /* done in step 1 */
  creds.new_session = true;
  sbx_creds_result creds_result;
  rc = sbx_creds_apply_raw(&creds, &creds_result);
  if (rc < 0)
    fail(report_fd, SBX_STEP_CREDENTIALS, 0, -rc);

  /* The kernel's view of namespaces and credentials is final now, and
   * /proc can still be read directly: after step 6 every open goes to the
   * broker. */
  sbx_layer_status kernel;
  if (plan->collect_status)
    sbx_status_collect(spawn->ns_reference, &kernel);

  /* 5. Broker channel. */
  if (plan->uses_broker) {
    rc = plan->broker_attach_raw
             ? plan->broker_attach_raw(spawn->broker_client, broker_fd)
             : -ENOSYS;
    if (rc < 0)
      fail(report_fd, SBX_STEP_BROKER, 0, -rc);
  }

  /* 6, 7. Seccomp layers, in order; each only narrows the ones before. */
  pid_t self = getpid();
  for (size_t i = 0; i < plan->n_layers; i++) {
    const sbx_worker_layer *layer = &plan->layers[i];
    sbx_self_pid_patch(layer->insns, layer->len, self);
    rc = sbx_seccomp_load_raw(layer->insns, layer->len, 0);
    if (rc < 0)
      fail(report_fd, SBX_STEP_SECCOMP, (int)i, -rc);
  }

  /* 8. Landlock. */
  if (landlock_fd >= 0) {
    rc = sbx_landlock_restrict_self_raw(landlock_fd, plan->landlock_flags);
    if (rc < 0)
      fail(report_fd, SBX_STEP_LANDLOCK, 0, -rc);
    close(landlock_fd);
  }

  /* 9. Status: seccomp(2) and landlock_restrict_self(2) returning 0 is the
   * kernel's word that each layer is in place. */
  sbx_sandbox_status status;
  if (plan->collect_status) {
    if (plan->n_layers) {
      kernel.seccomp_mode = 2;
      if (kernel.seccomp_filters >= 0)
        kernel.seccomp_filters += (int)plan->n_layers;
    }
    kernel.landlock = landlock_fd >= 0 ? SBX_TRI_YES : SBX_TRI_NO;
    kernel.landlock_abi = landlock_fd >= 0 ? plan->landlock_abi : -1;
    int open_now = sbx_fd_list_open_raw(NULL, 0);
    kernel.open_fds = open_now >= 0 ? open_now : -1;
    const char *names[SBX_WORKER_MAX_LAYERS];
    for (size_t i = 0; i < plan->n_layers; i++)
      names[i] = plan->layers[i].name;
    sbx_status_installed installed = {
        .process_type = plan->name,
        .layer_names = names,
        .n_layers = plan->n_layers,
        .broker = plan->uses_broker,
        .landlock_abi = landlock_fd >= 0 ? plan->landlock_abi : -1,
    };
    sbx_status_assemble(&kernel, &installed, &status);
  }

  /* 10. Entry. */
  sbx_worker_args args = {
      .process_type = plan->name,
      .payload = spawn->payload,
      .payload_len = spawn->payload_len,
      .n_fds = n_user,
      .broker_fd = broker_fd,
      .report_fd = report_fd,
      .user_data = plan->user_data,
      .status = plan->collect_status ? &status : NULL,
  };
  _exit(plan->entry(&args) & 0xff);
}
