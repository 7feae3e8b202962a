/* The zygote's loop: see server.h. Async-signal-safe throughout; the
 * only memory is what the host allocated before forking. */
#include "sandbox/zygote/server.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/kernel/landlock/landlock.h"
#include "sandbox/kernel/namespaces/credentials.h"
#include "sandbox/kernel/namespaces/rlimits.h"
#include "sandbox/kernel/namespaces/fds.h"
#include "sandbox/base/strbuf.h"
#include "sandbox/kernel/seccomp/capget.h"
#include "sandbox/kernel/seccomp/trap.h"
#include "sandbox/zygote/protocol.h"
#include "sandbox/zygote/report.h"

_Noreturn static void init_failed(sbx_zygote_server *z, const char *what,
                                  int err) {
  char text[256];
  sbx_strbuf sb;
  sbx_strbuf_init(&sb, text, sizeof text);
  sbx_strbuf_add(&sb, what);
  if (err) {
    sbx_strbuf_add(&sb, ": errno ");
    sbx_strbuf_add_i64(&sb, err);
  }
  size_t len = sbx_strbuf_finish(&sb);
  if (len >= sizeof text)
    len = sizeof text - 1;
  sbx_zygote_send(z->sock, SBX_ZMSG_INIT_FAILED, 0, text, len + 1, NULL, 0, 0);
  _exit(1);
}

/* Everything the host left open is closed but the socket, /dev/null, the
 * Landlock rulesets and stdio (the zygote's own last-resort messages). */
static int keep_only_own_fds(sbx_zygote_server *z) {
  sbx_fd_keep keep[SBX_FD_KEEP_MAX];
  size_t n = 0;
  for (int fd = 0; fd <= 2; fd++) {
    if (fcntl(fd, F_GETFD) >= 0)
      keep[n++] = (sbx_fd_keep){.fd = fd, .target = SBX_FD_SAME};
  }
  keep[n++] =
      (sbx_fd_keep){.fd = z->sock, .target = SBX_FD_SAME, .cloexec = true};
  keep[n++] =
      (sbx_fd_keep){.fd = z->devnull, .target = SBX_FD_SAME, .cloexec = true};
  for (size_t i = 0; i < z->n_plans; i++) {
    if (z->plans[i].layers.landlock_fd < 0)
      continue;
    if (n >= SBX_FD_KEEP_MAX)
      return -EMFILE;
    keep[n++] = (sbx_fd_keep){.fd = z->plans[i].layers.landlock_fd,
                              .target = SBX_FD_SAME,
                              .cloexec = true};
  }
  return sbx_fd_keep_only_raw(keep, n);
}

static void send_spawn_failed(sbx_zygote_server *z, uint32_t request_id,
                              int err, const char *what) {
  sbx_zygote_spawn_failed body;
  memset(&body, 0, sizeof body);
  body.error = err;
  size_t n = strlen(what);
  if (n >= sizeof body.what)
    n = sizeof body.what - 1;
  memcpy(body.what, what, n);
  sbx_zygote_send(z->sock, SBX_ZMSG_SPAWN_FAILED, request_id, &body,
                  sizeof body, NULL, 0, 0);
}

static void close_fds(const int *fds, size_t n) {
  for (size_t i = 0; i < n; i++)
    close(fds[i]);
}

static sbx_zygote_slot *free_slot(sbx_zygote_server *z) {
  for (size_t i = 0; i < z->high; i++) {
    if (z->slots[i].pid == 0)
      return &z->slots[i];
  }
  return z->high < z->capacity ? &z->slots[z->high++] : NULL;
}

/* A new live worker: counted, and named to the host. */
static void spawned(sbx_zygote_server *z, uint32_t request_id, pid_t pid) {
  z->live++;
  z->spawned++;
  sbx_zygote_spawned reply = {.zygote_pid = pid};
  sbx_zygote_send(z->sock, SBX_ZMSG_SPAWNED, request_id, &reply, sizeof reply,
                  NULL, 0, z->own_pid_ns ? pid : 0);
  explicit_bzero(&reply, sizeof reply);
}

/* ---- Warm pool (server.h) ------------------------------------------------ */

static void pool_drop(sbx_zygote_pool *pool, sbx_zygote_pooled *m) {
  close(m->job_fd);
  m->job_fd = -1;
  pool->waiting--;
}

/* How long the zygote must have been idle before it forks a pooled
 * worker: a fork costs hundreds of microseconds of the CPU the worker it
 * just handed a job to, and the host, are woken on. */
#define POOL_REFILL_IDLE_MS 2

_Static_assert(sizeof(sbx_zygote_job) == sizeof(sbx_zygote_spawn_body),
               "a job is written over the spawn body it comes from");

/* Hands the spawn in z->buf (validated) to a pooled worker of its type:
 * the job goes out on the worker's own socket, written over the request's
 * spawn body in place (the same size) so the payload is not copied. True
 * when a pooled worker took it (and the host was answered); false leaves
 * the request as it was for a cold fork. */
static bool pool_dispatch(sbx_zygote_server *z, uint32_t type,
                          const sbx_zygote_header *h, int *fds, size_t n_fds,
                          sbx_zygote_slot *slot) {
  sbx_zygote_pool *pool = &z->pools[type];
  if (pool->waiting == 0)
    return false;
  sbx_zygote_spawn_body *body = (sbx_zygote_spawn_body *)(z->buf + sizeof *h);
  sbx_zygote_spawn_body request = *body;
  /* The host's descriptors, /dev/null for stdio it did not give, then
   * the channels: in the order the worker's layout wants them. */
  int send[SBX_ZYGOTE_MAX_FDS + 2];
  size_t n_user = request.n_fds < 3 ? 3 : request.n_fds, n = 0;
  for (size_t i = 0; i < n_user; i++)
    send[n++] = i < request.n_fds ? fds[i] : z->devnull;
  for (size_t i = request.n_fds; i < n_fds; i++)
    send[n++] = fds[i];
  sbx_zygote_job job = {
      .n_user = (uint32_t)n_user,
      .flags = request.flags,
      .payload_len = request.payload_len,
  };
  memcpy(body, &job, sizeof job);
  for (size_t i = 0; i < SBX_ZYGOTE_MAX_POOL; i++) {
    sbx_zygote_pooled *m = &pool->member[i];
    if (m->pid == 0 || m->job_fd < 0)
      continue;
    int rc = sbx_zygote_send(m->job_fd, SBX_ZMSG_JOB, 0, body,
                             sizeof job + request.payload_len, send, n, 0);
    pid_t pid = m->pid;
    int report_fd = m->report_fd;
    pool_drop(pool, m);
    if (rc < 0) {
      /* Gone or stuck: never a second chance at any job. */
      kill(pid, SIGKILL);
      continue;
    }
    m->pid = 0;
    m->report_fd = -1;
    close_fds(fds, n_fds);
    slot->pid = pid;
    slot->report_fd = report_fd;
    spawned(z, h->request_id, pid);
    return true;
  }
  memcpy(body, &request, sizeof request);
  return false;
}

/* Forks one worker ahead for plan `type`. Async-signal-safe. */
static void pool_refill(sbx_zygote_server *z, size_t type) {
  sbx_zygote_pool *pool = &z->pools[type];
  sbx_zygote_pooled *m = NULL;
  for (size_t i = 0; i < SBX_ZYGOTE_MAX_POOL && !m; i++) {
    if (pool->member[i].pid == 0)
      m = &pool->member[i];
  }
  if (!m)
    return; /* dropped ones are still being reaped */
  int sv[2], pipefd[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
    z->pool_backoff = true;
    return;
  }
  if (pipe2(pipefd, O_CLOEXEC | O_NONBLOCK) < 0) {
    close(sv[0]);
    close(sv[1]);
    z->pool_backoff = true;
    return;
  }
  sbx_worker_pooled pooled = {
      .job_fd = sv[1],
      .report_fd = pipefd[1],
      .buf = z->buf,
      .expected_ppid = getpid(),
      .ns_reference = z->ns_reference.valid ? &z->ns_reference : NULL,
      .early = &z->early,
      .report_fd_slot = &z->report_fd_slot,
      .broker_client = z->broker_client,
      .sigmask = z->host_sigmask,
      .code = &z->code,
  };
  pid_t pid = _Fork();
  if (pid == 0)
    sbx_worker_pool_run_raw(&z->plans[type], &pooled);
  close(sv[1]);
  close(pipefd[1]);
  if (pid < 0) {
    close(sv[0]);
    close(pipefd[0]);
    z->pool_backoff = true;
    return;
  }
  z->pool_backoff = false;
  m->pid = pid;
  m->job_fd = sv[0];
  m->report_fd = pipefd[0];
  pool->waiting++;
}

/* The first plan whose pool wants a worker, or -1. */
static ssize_t pool_wanting(const sbx_zygote_server *z) {
  for (size_t i = 0; i < z->n_plans; i++) {
    const sbx_zygote_pool *pool = &z->pools[i];
    if (!pool->failed && pool->waiting < z->plans[i].pool)
      return (ssize_t)i;
  }
  return -1;
}

static uint32_t pool_total(const sbx_zygote_server *z) {
  uint32_t n = 0;
  for (size_t i = 0; i < z->n_plans; i++)
    n += z->pools[i].waiting;
  return n;
}

/* A reaped pid that was a pooled worker: forgotten, never reported (the
 * host never had it). One that ended waiting by itself (a layer refused,
 * a filter killed it) fails its type's pool, which would only fail again;
 * one killed from outside (SIGKILL: the OOM killer, an administrator) is
 * replaced. */
static bool pool_reaped(sbx_zygote_server *z, pid_t pid, int status) {
  for (size_t t = 0; t < z->n_plans; t++) {
    sbx_zygote_pool *pool = &z->pools[t];
    for (size_t i = 0; i < SBX_ZYGOTE_MAX_POOL; i++) {
      sbx_zygote_pooled *m = &pool->member[i];
      if (m->pid != pid)
        continue;
      if (m->job_fd >= 0) {
        pool_drop(pool, m);
        if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
          pool->failed = true;
      }
      close(m->report_fd);
      m->pid = 0;
      m->report_fd = -1;
      return true;
    }
  }
  return false;
}

static void handle_spawn(sbx_zygote_server *z, const sbx_zygote_header *h,
                         int *fds, size_t n_fds) {
  const sbx_zygote_spawn_body *body =
      (const sbx_zygote_spawn_body *)(z->buf + sizeof *h);
  const char *refusal = NULL;
  if (h->body_len < sizeof *body)
    refusal = "spawn request too short";
  else if (body->process_type >= z->n_plans)
    refusal = "unknown process type";
  else if (body->n_fds > SBX_ZYGOTE_MAX_FDS)
    refusal = "too many descriptors";
  else if (body->payload_len > SBX_ZYGOTE_MAX_PAYLOAD ||
           body->payload_len != h->body_len - sizeof *body)
    refusal = "payload length mismatch";
  else if (body->flags & ~(uint32_t)(SBX_ZSPAWN_HAS_BROKER_CHANNEL |
                                     SBX_ZSPAWN_HAS_MESSAGE_CHANNEL))
    refusal = "unknown spawn flags";
  if (refusal) {
    close_fds(fds, n_fds);
    send_spawn_failed(z, h->request_id, EINVAL, refusal);
    return;
  }
  sbx_worker_plan *plan = &z->plans[body->process_type];
  bool has_channel = body->flags & SBX_ZSPAWN_HAS_BROKER_CHANNEL;
  bool has_messages = body->flags & SBX_ZSPAWN_HAS_MESSAGE_CHANNEL;
  if (n_fds != body->n_fds + (has_channel ? 1 : 0) + (has_messages ? 1 : 0))
    refusal = "descriptor count mismatch";
  else if (plan->layers.broker && !has_channel)
    refusal = "broker channel missing";
  else if (!plan->layers.broker && has_channel)
    refusal = "unexpected broker channel";
  if (refusal) {
    close_fds(fds, n_fds);
    send_spawn_failed(z, h->request_id, EINVAL, refusal);
    return;
  }

  sbx_zygote_slot *slot = free_slot(z);
  if (!slot) {
    close_fds(fds, n_fds);
    send_spawn_failed(z, h->request_id, EAGAIN, "worker table full");
    return;
  }
  if (pool_dispatch(z, body->process_type, h, fds, n_fds, slot))
    return;
  int pipefd[2];
  if (pipe2(pipefd, O_CLOEXEC | O_NONBLOCK) < 0) {
    int err = errno;
    close_fds(fds, n_fds);
    send_spawn_failed(z, h->request_id, err, "report pipe");
    return;
  }

  sbx_worker_spawn spawn = {
      .fds = fds,
      .n_fds = body->n_fds,
      .broker_fd = has_channel ? fds[body->n_fds] : -1,
      .message_fd = has_messages ? fds[n_fds - 1] : -1,
      .report_fd = pipefd[1],
      .devnull_fd = z->devnull,
      .payload = (const unsigned char *)(body + 1),
      .payload_len = body->payload_len,
      .expected_ppid = getpid(),
      .ns_reference = z->ns_reference.valid ? &z->ns_reference : NULL,
      .early = &z->early,
      .report_fd_slot = &z->report_fd_slot,
      .broker_client = z->broker_client,
      .sigmask = z->host_sigmask,
  };
  /* _Fork: no atfork handlers, and the child's thread descriptor gets its
   * own tid, so raise() and threads work in the worker. */
  pid_t pid = _Fork();
  if (pid == 0)
    sbx_worker_run_raw(plan, &spawn);
  int err = errno;
  close(pipefd[1]);
  close_fds(fds, n_fds);
  if (pid < 0) {
    close(pipefd[0]);
    send_spawn_failed(z, h->request_id, err, "fork");
    return;
  }
  slot->pid = pid;
  slot->report_fd = pipefd[0];
  spawned(z, h->request_id, pid);
}

static void reap(sbx_zygote_server *z) {
  for (;;) {
    int status;
    pid_t pid = waitpid(-1, &status, WNOHANG | __WALL);
    if (pid <= 0)
      return;
    if (pool_reaped(z, pid, status))
      continue;
    sbx_zygote_slot *slot = NULL;
    for (size_t i = 0; i < z->high && !slot; i++) {
      if (z->slots[i].pid == pid)
        slot = &z->slots[i];
    }
    if (!slot)
      continue; /* not a worker (cannot happen: workers cannot fork) */
    sbx_zygote_exited ex;
    memset(&ex, 0, sizeof ex);
    ex.zygote_pid = pid;
    ex.wait_status = status;
    sbx_worker_report r;
    if (sbx_report_read(slot->report_fd, &r)) {
      /* A record counts only with the death it describes. */
      if (r.kind == SBX_REPORT_POLICY_KILL && WIFSIGNALED(status) &&
          WTERMSIG(status) == SIGSYS)
        ex.report = r;
      else if (r.kind == SBX_REPORT_SETUP_FAILED && WIFEXITED(status) &&
               WEXITSTATUS(status) == SBX_WORKER_SETUP_FAILED_EXIT)
        ex.report = r;
    }
    close(slot->report_fd);
    slot->pid = 0;
    slot->report_fd = -1;
    z->live--;
    z->exited++;
    sbx_zygote_send(z->sock, SBX_ZMSG_EXITED, 0, &ex, sizeof ex, NULL, 0, 0);
    /* One worker's last call and its arguments must not sit in the stack
     * the next worker is forked with (S36). */
    explicit_bzero(&r, sizeof r);
    explicit_bzero(&ex, sizeof ex);
  }
}

/* Returns false when the host has gone. */
static bool handle_request(sbx_zygote_server *z) {
  int fds[SBX_ZYGOTE_MAX_FDS + 2];
  size_t n_fds = 0;
  ssize_t n = sbx_zygote_recv(z->sock, z->buf, SBX_ZYGOTE_MAX_MESSAGE, fds,
                              SBX_ZYGOTE_MAX_FDS + 2, &n_fds, NULL);
  if (n == 0)
    return false;
  if (n == -EBADMSG) {
    explicit_bzero(z->buf, SBX_ZYGOTE_MAX_MESSAGE); /* see below */
    return true;
  }
  if (n == -EAGAIN || n == -EINTR)
    return true;
  if (n < 0)
    return false;
  const sbx_zygote_header *h = (const sbx_zygote_header *)z->buf;
  switch (h->type) {
    case SBX_ZMSG_SPAWN:
      handle_spawn(z, h, fds, n_fds);
      break;
    case SBX_ZMSG_STATUS: {
      close_fds(fds, n_fds);
      sbx_zygote_status st = {
          .live = (uint32_t)z->live,
          .capacity = (uint32_t)z->capacity,
          .spawned = z->spawned,
          .exited = z->exited,
          .pooled = pool_total(z),
      };
      sbx_zygote_send(z->sock, SBX_ZMSG_STATUS_REPLY, h->request_id, &st,
                      sizeof st, NULL, 0, 0);
      break;
    }
    default:
      close_fds(fds, n_fds);
      break;
  }
  /* The next worker is forked with a copy of this buffer: nothing of this
   * request (its payload above all) may still be in it then (S36). */
  explicit_bzero(z->buf, (size_t)n);
  return true;
}

/* The child holds every capability in its new user namespace, but as a
 * uid other than 0 there it would lose them all in the exec, and the
 * zygote needs them (its empty root, naming workers to the host). The
 * ambient set carries them across; the exec'd zygote clears it and the
 * inheritable set again (sbx_zygote_fresh_caps_settle_raw). Without a user
 * namespace of its own an unprivileged child has nothing to carry, and
 * root keeps its capabilities anyway. Async-signal-safe. */
static int carry_capabilities(void) {
  struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
  if (syscall(SYS_capget, &hdr, data) != 0)
    return -errno;
  bool any = false;
  for (int i = 0; i < _LINUX_CAPABILITY_U32S_3; i++) {
    data[i].inheritable = data[i].permitted;
    any = any || data[i].permitted;
  }
  if (!any)
    return 0;
  if (syscall(SYS_capset, &hdr, data) != 0)
    return -errno;
  for (int cap = 0; cap < 32 * _LINUX_CAPABILITY_U32S_3; cap++) {
    if ((data[cap / 32].permitted & (1u << (cap % 32))) &&
        prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0) != 0)
      return -errno;
  }
  return 0;
}

int sbx_zygote_fresh_caps_settle_raw(void) {
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 &&
      errno != EINVAL)
    return -errno;
  struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
  if (syscall(SYS_capget, &hdr, data) != 0)
    return -errno;
  bool any = false;
  for (int i = 0; i < _LINUX_CAPABILITY_U32S_3; i++) {
    any = any || data[i].inheritable;
    data[i].inheritable = 0;
  }
  if (any && syscall(SYS_capset, &hdr, data) != 0)
    return -errno;
  return 0;
}

_Noreturn void sbx_zygote_server_exec(sbx_zygote_server *z,
                                      const sbx_zygote_exec *e) {
  int caps = carry_capabilities();
  if (caps < 0)
    init_failed(z, "fresh zygote: raising ambient capabilities", -caps);
  sbx_fd_keep keep[SBX_FD_KEEP_MAX];
  size_t n = 0;
  for (int fd = 0; fd <= 2; fd++) {
    if (fcntl(fd, F_GETFD) >= 0)
      keep[n++] = (sbx_fd_keep){.fd = fd, .target = SBX_FD_SAME};
  }
  size_t sock = n;
  keep[n++] = (sbx_fd_keep){.fd = z->sock, .target = SBX_ZYGOTE_FRESH_SOCK_FD};
  keep[n++] =
      (sbx_fd_keep){.fd = e->data_fd, .target = SBX_ZYGOTE_FRESH_DATA_FD};
  if (e->n_rulesets + n + 1 > SBX_FD_KEEP_MAX)
    init_failed(z, "fresh zygote: too many Landlock rulesets", E2BIG);
  for (size_t i = 0; i < e->n_rulesets; i++)
    keep[n++] =
        (sbx_fd_keep){.fd = e->rulesets[i],
                      .target = SBX_ZYGOTE_FRESH_FIRST_RULESET_FD + (int)i};
  size_t exe = n;
  keep[n++] = (sbx_fd_keep){
      .fd = e->exec_fd,
      .target = SBX_ZYGOTE_FRESH_FIRST_RULESET_FD + (int)e->n_rulesets,
      .cloexec = true};
  int rc = sbx_fd_keep_only_raw(keep, n);
  if (rc < 0)
    init_failed(z, "fresh zygote: descriptors for the exec", -rc);
  z->sock = keep[sock].fd;
  e->settings[0] = z->empty_root ? 'r' : '-';
  e->settings[1] = z->own_pid_ns ? 'p' : '-';
  e->settings[2] = '\0';
  syscall(SYS_execveat, keep[exe].fd, "", e->argv, e->envp, AT_EMPTY_PATH);
  init_failed(z, "fresh zygote: execveat of the host's executable", errno);
}

/* Async-signal-safe. In the empty root every direct tree is a read-only
 * bind, where the kernel refuses to truncate a file whatever Landlock
 * says. Landlock asks at each open whether the file may be truncated as
 * well as read; with that right granted on the trees too, its check of a
 * direct open stops at the tree's rule instead of walking on to the root
 * (docs/design.md, "Direct opens"). Every bound tree is added, another
 * type's too: TRUNCATE alone opens nothing. A refused rule leaves the
 * check as it was. */
static void grant_truncate_on_direct_trees(const sbx_zygote_server *z,
                                           const sbx_layer_plan *l) {
  if (l->landlock_fd < 0 || l->landlock.abi < 3)
    return;
  for (size_t at = 0; at < z->direct_binds_len;
       at += strlen(z->direct_binds + at) + 1)
    sbx_landlock_add_path_raw(l->landlock_fd, z->direct_binds + at,
                              LANDLOCK_ACCESS_FS_TRUNCATE);
}

_Noreturn void sbx_zygote_server_main(sbx_zygote_server *z) {
  int rc = keep_only_own_fds(z);
  if (rc < 0)
    init_failed(z, "descriptor hygiene", -rc);
  /* A report pipe per live worker: the hard limit, not the soft one, is
   * what bounds them (a worker's own limits come from its profile). */
  sbx_rlimit_raise_nofile_raw();
  /* Workers inherit these limits unchanged: each type's are clamped to
   * them once here, and a worker only sets them. */
  for (size_t i = 0; i < z->n_plans; i++) {
    sbx_layer_plan *l = &z->plans[i].layers;
    size_t bad = 0;
    rc = sbx_rlimits_clamp_raw(l->rlimits, l->n_rlimits, &bad);
    if (rc < 0)
      init_failed(z, "reading the limits the workers inherit", -rc);
    l->rlimits_clamped = true;
  }

  /* While the host's /proc is still there: the namespaces every worker
   * shares with the zygote, for reports where a new /proc is refused. */
  sbx_status_collect(z->ns_reference.valid ? &z->ns_reference : NULL,
                     &z->early);
  /* Likewise the mappings of code pooled workers map in ahead (none when
   * /proc cannot be read: they fault as they run, as before). */
  sbx_code_ranges_read_raw(&z->code);
  if (z->empty_root) {
    /* Direct trees keep exec: a library opened directly is mapped
     * executable like one the broker opened (Landlock's EXECUTE, never
     * granted, still refuses execve). */
    sbx_bind_mount binds[SBX_ROOT_MAX_BINDS];
    size_t n_binds = 0;
    for (size_t at = 0;
         at < z->direct_binds_len && n_binds < SBX_ROOT_MAX_BINDS;
         at += strlen(z->direct_binds + at) + 1)
      binds[n_binds++] =
          (sbx_bind_mount){.source = z->direct_binds + at,
                           .flags = SBX_BIND_OPTIONAL | SBX_BIND_EXEC};
    sbx_root_config root = {
        .binds = binds, .n_binds = n_binds, .mount_proc = true};
    rc = sbx_root_make_empty_raw(&root, &z->root_result);
    /* A failure before the pivot leaves the host's tree (reported in the
     * status); one after it leaves a half-built root: never fork there. */
    if (rc < 0 && z->root_result.mode == SBX_ROOT_EMPTY)
      init_failed(z, z->root_result.failed_step, -rc);
  }
  /* In the empty root a worker's own openat2 can name nothing but the
   * direct trees and its /proc: the guard against it (worker.h) goes.
   * Its program stays the plan's to free. */
  if (z->empty_root && z->root_result.mode == SBX_ROOT_EMPTY) {
    for (size_t i = 0; i < z->n_plans; i++) {
      sbx_layer_plan *l = &z->plans[i].layers;
      if (l->n_filters && strcmp(l->filters[l->n_filters - 1].name,
                                 SBX_WORKER_DIRECT_GUARD) == 0) {
        l->n_filters--;
        grant_truncate_on_direct_trees(z, l);
      }
    }
  }

  /* The zygote never execs, so its bounding set guards nothing here; an
   * empty one is inherited by every worker, whose own drop then costs one
   * read of its status instead of a call per capability. */
  rc = sbx_creds_drop_bounding_set_raw();
  /* Without a user namespace an unprivileged zygote cannot empty it
   * (no CAP_SETPCAP); holding no capability, it loses nothing, and each
   * worker's own step decides the same way (apply.h, step 5). */
  if (rc == -EPERM && sbx_creds_holds_capabilities_raw() == 0)
    rc = 0;
  if (rc < 0)
    init_failed(z, "dropping the bounding set", -rc);

  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  if (sigprocmask(SIG_BLOCK, &chld, &z->host_sigmask) < 0)
    init_failed(z, "sigprocmask", errno);
  int sigfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sigfd < 0)
    init_failed(z, "signalfd", errno);
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigaction(SIGCHLD, &dfl, NULL);

  /* The SIGSYS handlers, registered once for every worker to inherit:
   * the policy-kill report first, the broker's file-system calls over it. */
  z->report_fd_slot = -1;
  rc = sbx_report_register_kill_handlers_raw(&z->report_fd_slot);
  if (rc < 0)
    init_failed(z, "registering the policy-kill handlers", -rc);
  rc = sbx_capget_register_raw();
  if (rc < 0)
    init_failed(z, "registering the capget handler", -rc);
  if (z->register_broker_traps_raw) {
    /* In the empty root nothing outside the direct trees can be opened
     * directly: layer 1 then tries only paths below them. */
    bool only_trees = z->empty_root && z->root_result.mode == SBX_ROOT_EMPTY;
    rc = z->register_broker_traps_raw(z->broker_client,
                                      only_trees ? z->direct_binds : NULL,
                                      only_trees ? z->direct_binds_len : 0);
    if (rc < 0)
      init_failed(z, "registering the broker client's handlers", -rc);
  }
  if (sbx_trap_install_raw() < 0)
    init_failed(z, "installing the SIGSYS handler", 0);

  /* No process of the same uid may ptrace the zygote or open its
   * /proc/PID/mem or exe (S5, S34). The maps were written before it ran. */
  rc = sbx_creds_set_undumpable_raw();
  if (rc < 0)
    init_failed(z, "PR_SET_DUMPABLE", -rc);

  if (sbx_zygote_send(z->sock, SBX_ZMSG_READY, 0, NULL, 0, NULL, 0, 0) < 0)
    _exit(1);

  struct pollfd pfd[2] = {
      {.fd = z->sock, .events = POLLIN},
      {.fd = sigfd, .events = POLLIN},
  };
  for (;;) {
    /* Pools are refilled only when nothing else is waiting. */
    ssize_t wanting = pool_wanting(z);
    int timeout = wanting < 0       ? -1
                  : z->pool_backoff ? 100
                                    : POOL_REFILL_IDLE_MS;
    int ready = poll(pfd, 2, timeout);
    if (ready < 0) {
      if (errno == EINTR)
        continue;
      _exit(1);
    }
    if (ready == 0) {
      if (wanting >= 0)
        pool_refill(z, (size_t)wanting);
      continue;
    }
    if (pfd[1].revents & POLLIN) {
      struct signalfd_siginfo si;
      while (read(sigfd, &si, sizeof si) == (ssize_t)sizeof si) {
      }
      reap(z);
    }
    if (pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      if (!handle_request(z))
        _exit(0); /* the host is gone: every worker dies with us */
    }
  }
}
