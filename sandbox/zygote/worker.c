/* A worker's start around the layers engine: see worker.h. */
#include "sandbox/zygote/worker.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "sandbox/kernel/namespaces/fds.h"
#include "sandbox/layers/apply.h"
#include "sandbox/zygote/protocol.h"
#include "sandbox/zygote/report.h"

/* Async-signal-safe. */
_Noreturn static void fail(int report_fd, sbx_layer_step step, int detail,
                           int err) {
  sbx_report_setup_failure(report_fd, step, detail, err);
  _exit(SBX_WORKER_SETUP_FAILED_EXIT);
}

/* The descriptors a worker keeps: the host's at 0..n-1 (each missing
 * stdio slot a /dev/null of its own: one source may not feed two
 * targets), then the broker channel, the message channel and the report
 * pipe. Returns the
 * number of entries or -errno. Async-signal-safe. */
static int descriptors(const sbx_worker_plan *plan,
                       const sbx_worker_spawn *spawn, sbx_fd_keep *keep,
                       int *n_user) {
  size_t n = 0;
  size_t user = spawn->n_fds < 3 ? 3 : spawn->n_fds;
  if (spawn->n_fds > SBX_ZYGOTE_MAX_FDS)
    return -EINVAL;
  for (size_t i = 0; i < user; i++) {
    int fd = i < spawn->n_fds ? spawn->fds[i]
                              : fcntl(spawn->devnull_fd, F_DUPFD_CLOEXEC, 0);
    if (fd < 0)
      return -errno;
    keep[n++] = (sbx_fd_keep){.fd = fd, .target = (int)i, .cloexec = false};
  }
  int next = (int)user;
  if (plan->layers.broker)
    keep[n++] = (sbx_fd_keep){
        .fd = spawn->broker_fd, .target = next++, .cloexec = true};
  if (spawn->message_fd >= 0)
    keep[n++] = (sbx_fd_keep){
        .fd = spawn->message_fd, .target = next++, .cloexec = true};
  keep[n++] =
      (sbx_fd_keep){.fd = spawn->report_fd, .target = next, .cloexec = true};
  *n_user = (int)user;
  return (int)n;
}

/* Async-signal-safe up to the entry call. */
_Noreturn void sbx_worker_run_raw(sbx_worker_plan *plan,
                                  const sbx_worker_spawn *spawn) {
  sigprocmask(SIG_SETMASK, &spawn->sigmask, NULL);
  sbx_fd_keep keep[SBX_ZYGOTE_MAX_FDS + 5];
  int n_user = 0;
  int n_keep = descriptors(plan, spawn, keep, &n_user);
  if (n_keep < 0)
    fail(spawn->report_fd, SBX_LAYER_STEP_DESCRIPTORS, 0, -n_keep);
  size_t at = (size_t)n_user;
  sbx_fd_keep *broker = plan->layers.broker ? &keep[at++] : NULL;
  sbx_fd_keep *messages = spawn->message_fd >= 0 ? &keep[at++] : NULL;
  sbx_fd_keep *report = &keep[at];

  /* The numbers are fixed before the engine moves anything there, so the
   * client and the policy-kill handler can be told now: neither is used
   * before the filters go on. */
  *spawn->report_fd_slot = report->target;
  if (broker) {
    int rc = plan->broker_attach_raw
                 ? plan->broker_attach_raw(spawn->broker_client, broker->target)
                 : -ENOSYS;
    if (rc < 0)
      fail(report->fd, SBX_LAYER_STEP_BROKER, 0, -rc);
  }

  sbx_process_status status;
  sbx_layer_process process = {
      .keep = keep,
      .n_keep = (size_t)n_keep,
      .expected_ppid = spawn->expected_ppid,
      .parent_pidfd = -1,
      .ns_reference = spawn->ns_reference,
      .early = spawn->early,
      .status = &status,
      .listener_sink = plan->broker_listener_raw,
      .listener_ctx = spawn->broker_client,
  };
  sbx_layer_result result;
  if (sbx_layer_apply_raw(&plan->layers, &process, &result) < 0)
    fail(report->fd, result.step, result.detail, result.error);

  sbx_zygote_worker worker = {
      .process_type = plan->layers.process_type,
      .payload = spawn->payload,
      .payload_len = spawn->payload_len,
      .n_fds = n_user,
      .broker_fd = broker ? broker->fd : -1,
      .report_fd = report->fd,
      .message_fd = messages ? messages->fd : -1,
      .entry_data = plan->entry_data,
      .status = plan->layers.collect_status ? &status : NULL,
  };
  _exit(plan->entry(&worker) & 0xff);
}
