/* A worker's start around the layers engine: see worker.h. */
#include "sandbox/zygote/worker.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
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

/* The entry, every layer on; its return value is the exit status. */
_Noreturn static void run_entry(const sbx_worker_plan *plan,
                                const void *payload, size_t payload_len,
                                int n_user, int broker_fd, int message_fd,
                                int report_fd,
                                const sbx_process_status *status) {
  sbx_zygote_worker worker = {
      .process_type = plan->layers.process_type,
      .payload = payload,
      .payload_len = payload_len,
      .n_fds = n_user,
      .broker_fd = broker_fd,
      .report_fd = report_fd,
      .message_fd = message_fd,
      .entry_data = plan->entry_data,
      .status = plan->layers.collect_status ? status : NULL,
  };
  _exit(plan->entry(&worker) & 0xff);
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

  run_entry(plan, spawn->payload, spawn->payload_len, n_user,
            broker ? broker->fd : -1, messages ? messages->fd : -1, report->fd,
            &status);
}

/* ---- Warm pool ---------------------------------------------------------- */

const sbx_worker_pool_call sbx_worker_pool_calls[] = {
    {"recvmsg", __NR_recvmsg, {SBX_WORKER_POOL_JOB_FD, 0, 0}},
    {"fcntl(F_SETFD)", __NR_fcntl, {3, F_SETFD, FD_CLOEXEC}},
    {"dup3", __NR_dup3, {SBX_WORKER_POOL_REPORT_FD, 3, O_CLOEXEC}},
    {"close", __NR_close, {SBX_WORKER_POOL_JOB_FD, 0, 0}},
};
const size_t sbx_worker_pool_n_calls =
    sizeof sbx_worker_pool_calls / sizeof sbx_worker_pool_calls[0];

/* The job: its length, or 0 when the zygote closed the socket without
 * one; its descriptors in fds (*n_fds). -errno for a failure or a
 * message that does not fit (its descriptors closed). Async-signal-safe. */
static ssize_t receive_job(unsigned char *buf, int *fds, size_t *n_fds) {
  enum { MAX = SBX_ZYGOTE_MAX_FDS + 2 };
  union {
    struct cmsghdr align;
    char bytes[CMSG_SPACE(sizeof(int) * MAX)];
  } control;
  struct iovec iov = {.iov_base = buf, .iov_len = SBX_ZYGOTE_MAX_MESSAGE};
  struct msghdr m = {.msg_iov = &iov,
                     .msg_iovlen = 1,
                     .msg_control = control.bytes,
                     .msg_controllen = sizeof control.bytes};
  ssize_t n;
  do {
    n = recvmsg(SBX_WORKER_POOL_JOB_FD, &m, 0);
  } while (n < 0 && errno == EINTR);
  if (n < 0)
    return -errno;
  *n_fds = 0;
  for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
      continue;
    size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < k; i++) {
      int fd;
      memcpy(&fd, CMSG_DATA(c) + i * sizeof fd, sizeof fd);
      if (*n_fds < MAX)
        fds[(*n_fds)++] = fd;
      else
        close(fd);
    }
  }
  if (m.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
    for (size_t i = 0; i < *n_fds; i++)
      close(fds[i]);
    return -EMSGSIZE;
  }
  return n;
}

/* Checks the job against the plan and that its descriptors landed on
 * 0 .. n-1. Returns the job or NULL. Async-signal-safe. */
static const sbx_zygote_job *check_job(const sbx_worker_plan *plan,
                                       const unsigned char *buf, size_t len,
                                       const int *fds, size_t n_fds) {
  sbx_zygote_header h;
  if (len < sizeof h + sizeof(sbx_zygote_job))
    return NULL;
  memcpy(&h, buf, sizeof h);
  const sbx_zygote_job *job = (const sbx_zygote_job *)(buf + sizeof h);
  bool broker = job->flags & SBX_ZSPAWN_HAS_BROKER_CHANNEL;
  bool messages = job->flags & SBX_ZSPAWN_HAS_MESSAGE_CHANNEL;
  if (h.magic != SBX_ZYGOTE_MAGIC || h.type != SBX_ZMSG_JOB ||
      h.body_len != len - sizeof h ||
      job->payload_len != h.body_len - sizeof *job ||
      job->payload_len > SBX_ZYGOTE_MAX_PAYLOAD || job->n_user < 3 ||
      job->n_user > SBX_ZYGOTE_MAX_FDS ||
      (job->flags & ~(uint32_t)(SBX_ZSPAWN_HAS_BROKER_CHANNEL |
                                SBX_ZSPAWN_HAS_MESSAGE_CHANNEL)) ||
      broker != plan->layers.broker ||
      n_fds != job->n_user + (broker ? 1u : 0u) + (messages ? 1u : 0u))
    return NULL;
  for (size_t i = 0; i < n_fds; i++) {
    if (fds[i] != (int)i)
      return NULL;
  }
  return job;
}

/* Async-signal-safe up to the entry call. */
_Noreturn void sbx_worker_pool_run_raw(sbx_worker_plan *plan,
                                       const sbx_worker_pooled *pooled) {
  sbx_code_ranges_populate_raw(pooled->code);
  sigprocmask(SIG_SETMASK, &pooled->sigmask, NULL);
  sbx_fd_keep keep[2] = {
      {.fd = pooled->report_fd,
       .target = SBX_WORKER_POOL_REPORT_FD,
       .cloexec = true},
      {.fd = pooled->job_fd, .target = SBX_WORKER_POOL_JOB_FD, .cloexec = true},
  };
  *pooled->report_fd_slot = SBX_WORKER_POOL_REPORT_FD;
  sbx_process_status status;
  sbx_layer_process process = {
      .keep = keep,
      .n_keep = 2,
      .expected_ppid = pooled->expected_ppid,
      .parent_pidfd = -1,
      .ns_reference = pooled->ns_reference,
      .early = pooled->early,
      .status = &status,
      /* The broker channel comes with the job: the listener waits. */
      .listener_sink = NULL,
  };
  sbx_layer_result result;
  if (sbx_layer_apply_raw(&plan->layers, &process, &result) < 0)
    fail(keep[0].fd, result.step, result.detail, result.error);
  int listener = -1;
  if (result.listener_fd >= 0) {
    listener = dup3(result.listener_fd, SBX_WORKER_POOL_LISTENER_FD, O_CLOEXEC);
    if (listener < 0)
      fail(keep[0].fd, SBX_LAYER_STEP_SECCOMP, plan->layers.listener_filter,
           errno);
    close(result.listener_fd);
  }

  /* Every layer is on. From here on, only the calls of
   * sbx_worker_pool_calls (and the broker client's, on the job's
   * channel): the job, its descriptors, the report pipe moved down. */
  int fds[SBX_ZYGOTE_MAX_FDS + 2];
  size_t n_fds = 0;
  ssize_t len = receive_job(pooled->buf, fds, &n_fds);
  if (len == 0)
    _exit(0); /* dropped before it had a job */
  const sbx_zygote_job *job =
      len > 0 ? check_job(plan, pooled->buf, (size_t)len, fds, n_fds) : NULL;
  if (!job)
    fail(keep[0].fd, SBX_LAYER_STEP_DESCRIPTORS, 0,
         len < 0 ? (int)-len : EBADMSG);
  int next = (int)job->n_user;
  int broker = plan->layers.broker ? next++ : -1;
  int messages = (job->flags & SBX_ZSPAWN_HAS_MESSAGE_CHANNEL) ? next++ : -1;
  if ((broker >= 0 && fcntl(broker, F_SETFD, FD_CLOEXEC) != 0) ||
      (messages >= 0 && fcntl(messages, F_SETFD, FD_CLOEXEC) != 0))
    fail(keep[0].fd, SBX_LAYER_STEP_DESCRIPTORS, 0, errno);
  int report = dup3(SBX_WORKER_POOL_REPORT_FD, next, O_CLOEXEC);
  if (report < 0)
    fail(keep[0].fd, SBX_LAYER_STEP_DESCRIPTORS, 0, errno);
  *pooled->report_fd_slot = report;
  close(SBX_WORKER_POOL_REPORT_FD);
  close(SBX_WORKER_POOL_JOB_FD);
  if (broker >= 0) {
    int rc = plan->broker_attach_raw
                 ? plan->broker_attach_raw(pooled->broker_client, broker)
                 : -ENOSYS;
    if (rc < 0)
      fail(report, SBX_LAYER_STEP_BROKER, 0, -rc);
  }
  if (listener >= 0) {
    int rc = plan->broker_listener_raw
                 ? plan->broker_listener_raw(pooled->broker_client, listener)
                 : -ENOSYS;
    close(listener);
    if (rc < 0)
      fail(report, SBX_LAYER_STEP_SECCOMP, plan->layers.listener_filter, -rc);
  }
  /* The report counts what the worker holds at its entry, as a cold
   * worker's does. */
  if (plan->layers.collect_status) {
    int open_now = sbx_fd_list_open_raw(NULL, 0);
    status.kernel.open_fds = open_now >= 0 ? open_now : -1;
  }
  run_entry(plan, job + 1, job->payload_len, (int)job->n_user, broker, messages,
            report, &status);
}
