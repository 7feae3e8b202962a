/* The broker process: host-side handle, and the broker's own start-up
 * (descriptor hygiene, its sandbox, then the request loop); see broker.h.
 *
 * Trusts the host's configuration. The broker child keeps exactly the
 * descriptors it needs (stdio on /dev/null except stderr, the control
 * channel, the audit log), then confines itself before it reads a single
 * worker request.
 */
#include "sandbox/broker/broker.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sandbox/broker/broker_sandbox.h"
#include "sandbox/broker/protocol.h"
#include "sandbox/linux/namespaces/fds.h"
#include "sandbox/linux/namespaces/reap.h"

/* Descriptor numbers inside the broker. */
#define BROKER_CONTROL_FD 3
#define BROKER_AUDIT_FD 4

struct sbx_broker {
  pid_t pid;
  int control;      /* host end */
  char **types;     /* allowlist names, by index */
  uint32_t last_id; /* of the last control request */
};

/* In the broker child: report a set-up failure to the waiting host and
 * leave without running atexit handlers inherited from it. */
static void G_GNUC_NORETURN child_fail(int control, const char *what,
                                       const GError *error) {
  char msg[1024];
  int n = g_snprintf(msg, sizeof(msg), "%s%s%s", what, error ? ": " : "",
                     error ? error->message : "");
  if (n > 0)
    send(control, msg, (size_t)MIN(n, (int)sizeof(msg) - 1), MSG_NOSIGNAL);
  _exit(1);
}

static void reset_signals(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; sig++) {
    if (sig == SIGKILL || sig == SIGSTOP)
      continue;
    sigaction(sig, &sa, NULL);
  }
  sa.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &sa, NULL);
  /* An audit file at the host's RLIMIT_FSIZE loses lines (EFBIG), not the
   * broker. */
  sigaction(SIGXFSZ, &sa, NULL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
}

static void G_GNUC_NORETURN broker_main(const sbx_broker_config *config,
                                        const sbx_bpf_program *program,
                                        int control, pid_t parent) {
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
    _exit(1);
  reset_signals();

  int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (devnull < 0)
    child_fail(control, "broker: cannot open /dev/null", NULL);
  sbx_fd_keep keep[5];
  size_t n_keep = 0;
  keep[n_keep++] = (sbx_fd_keep){devnull, 0, false};
  keep[n_keep++] = (sbx_fd_keep){devnull, 1, false};
  if (fcntl(2, F_GETFD) >= 0)
    keep[n_keep++] = (sbx_fd_keep){2, SBX_FD_SAME, false};
  keep[n_keep++] = (sbx_fd_keep){control, BROKER_CONTROL_FD, true};
  bool have_audit = config->audit_fd >= 0;
  if (have_audit)
    keep[n_keep++] = (sbx_fd_keep){config->audit_fd, BROKER_AUDIT_FD, true};
  int rc = sbx_fd_keep_only_raw(keep, n_keep);
  if (rc < 0) {
    /* The control channel may be anywhere now; it is gone if rc says so. */
    _exit(1);
  }
  control = BROKER_CONTROL_FD;

  if (config->max_fds > 0) {
    struct rlimit lim = {config->max_fds, config->max_fds};
    if (setrlimit(RLIMIT_NOFILE, &lim) != 0)
      child_fail(control, "broker: setrlimit(RLIMIT_NOFILE)", NULL);
  }
  /* Before the sandbox: the sink may be reopened through /proc. */
  sbx_audit audit;
  sbx_audit_open(&audit, have_audit ? BROKER_AUDIT_FD : -1,
                 config->audit_grants, 0);
  sbx_broker_server *server = sbx_broker_server_new(&audit);
  GError *error = NULL;
  for (size_t i = 0; i < config->n_allowlists; i++)
    if (!sbx_broker_server_add_type(server, config->allowlists[i], &error))
      child_fail(control, "broker: set-up failed", error);

  /* Nobody may read the broker's memory or attach to it (S5). */
  if (prctl(PR_SET_DUMPABLE, 0) != 0)
    child_fail(control, "broker: prctl(PR_SET_DUMPABLE)", NULL);
  if (!config->dangerously_unsandboxed &&
      !sbx_broker_sandbox_self(config->allowlists, config->n_allowlists,
                               program, &error))
    child_fail(control, "broker: cannot sandbox itself", error);

  sbx_broker_control_reply ready;
  memset(&ready, 0, sizeof(ready));
  ready.magic = SBX_BROKER_CONTROL_MAGIC;
  if (send(control, &ready, sizeof(ready), MSG_NOSIGNAL) < 0)
    _exit(1);
  rc = sbx_broker_server_run(server, control);
  _exit(rc == 0 ? 0 : 1);
}

/* Waits until fd has one of events (or an error) or deadline_ms (monotonic)
 * passes: 1 ready, 0 timed out, -errno. */
static int wait_fd(int fd, short events, gint64 deadline_ms) {
  for (;;) {
    gint64 left = deadline_ms - g_get_monotonic_time() / 1000;
    struct pollfd p = {.fd = fd, .events = events};
    int r = poll(&p, 1, left > 0 ? (int)MIN(left, G_MAXINT) : 0);
    if (r < 0 && errno == EINTR)
      continue;
    return r < 0 ? -errno : r;
  }
}

static gint64 deadline_in(int ms) {
  return g_get_monotonic_time() / 1000 + ms;
}

static gboolean make_pair(int sv[2], const char *what, GError **error) {
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0)
    return TRUE;
  int err = errno;
  g_set_error(error, SBX_BROKER_ERROR, SBX_BROKER_ERROR_FAILED,
              "socketpair for %s: %s", what, g_strerror(err));
  return FALSE;
}

sbx_broker *sbx_broker_start(const sbx_broker_config *config, GError **error) {
  for (size_t i = 0; i < config->n_allowlists; i++) {
    for (size_t j = 0; j < i; j++) {
      if (strcmp(sbx_allowlist_name(config->allowlists[i]),
                 sbx_allowlist_name(config->allowlists[j])) == 0) {
        g_set_error(error, SBX_BROKER_ERROR, SBX_BROKER_ERROR_INVALID,
                    "two broker allowlists for worker type '%s'",
                    sbx_allowlist_name(config->allowlists[i]));
        return NULL;
      }
    }
  }
  /* Compiled here, so the broker child only loads it. */
  sbx_bpf_program program = {0};
  if (!config->dangerously_unsandboxed &&
      !sbx_broker_sandbox_compile(&program, error))
    return NULL;
  int sv[2];
  if (!make_pair(sv, "the broker's control channel", error)) {
    sbx_bpf_program_clear(&program);
    return NULL;
  }
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid != 0)
    sbx_bpf_program_clear(&program);
  if (pid < 0) {
    int err = errno;
    close(sv[0]);
    close(sv[1]);
    g_set_error(error, SBX_BROKER_ERROR, SBX_BROKER_ERROR_FAILED,
                "fork of the broker: %s", g_strerror(err));
    return NULL;
  }
  if (pid == 0) {
    close(sv[0]);
    broker_main(config, &program, sv[1], parent);
  }
  close(sv[1]);

  char buf[1024];
  ssize_t n = -1;
  int ready_rc =
      wait_fd(sv[0], POLLIN, deadline_in(SBX_BROKER_START_TIMEOUT_MS));
  if (ready_rc > 0) {
    do {
      n = recv(sv[0], buf, sizeof(buf) - 1, MSG_DONTWAIT);
    } while (n < 0 && errno == EINTR);
  }
  sbx_broker_control_reply ready;
  if (n == (ssize_t)sizeof(ready)) {
    memcpy(&ready, buf, sizeof(ready));
    if (ready.magic == SBX_BROKER_CONTROL_MAGIC && ready.result == 0) {
      sbx_broker *b = g_new0(sbx_broker, 1);
      b->pid = pid;
      b->control = sv[0];
      b->types = g_new0(char *, config->n_allowlists + 1);
      for (size_t i = 0; i < config->n_allowlists; i++)
        b->types[i] = g_strdup(sbx_allowlist_name(config->allowlists[i]));
      return b;
    }
  }
  close(sv[0]);
  int status = 0;
  sbx_reap_or_kill_child(pid, SBX_BROKER_EXIT_TIMEOUT_MS,
                         SBX_BROKER_REAP_TIMEOUT_MS, &status);
  if (ready_rc == 0) {
    g_set_error(error, SBX_BROKER_ERROR, SBX_BROKER_ERROR_FAILED,
                "the broker (pid %d) was not ready within %d ms of starting; "
                "it was killed",
                (int)pid, SBX_BROKER_START_TIMEOUT_MS);
  } else if (n > 0) {
    buf[n] = '\0';
    g_set_error(error, SBX_BROKER_ERROR, SBX_BROKER_ERROR_FAILED, "%s", buf);
  } else {
    g_set_error(error, SBX_BROKER_ERROR, SBX_BROKER_ERROR_FAILED,
                "the broker exited during set-up (wait status 0x%x)", status);
  }
  return NULL;
}

/* Fails a control call: a timeout names the bound, anything else the
 * errno. */
static gboolean control_failed(const sbx_broker *b, int err, GError **error) {
  if (err == ETIMEDOUT) {
    g_set_error(error, SBX_BROKER_ERROR, SBX_BROKER_ERROR_FAILED,
                "the broker (pid %d) did not answer on its control channel "
                "within %d ms (is it stopped or stuck?)",
                (int)b->pid, SBX_BROKER_REPLY_TIMEOUT_MS);
  } else {
    g_set_error(error, SBX_BROKER_ERROR, SBX_BROKER_ERROR_FAILED,
                "the broker (pid %d) does not answer on its control channel: "
                "%s",
                (int)b->pid, g_strerror(err));
  }
  return FALSE;
}

/* One request and its reply, within SBX_BROKER_REPLY_TIMEOUT_MS. A reply
 * to an earlier request that timed out arrives first and is skipped. */
static gboolean control_call(sbx_broker *b, uint32_t op, uint32_t arg, int fd,
                             sbx_broker_control_reply *rep, GError **error) {
  if (++b->last_id == 0)
    b->last_id = 1; /* 0 is the start-up message's */
  sbx_broker_control_request req = {.magic = SBX_BROKER_CONTROL_MAGIC,
                                    .op = op,
                                    .arg = arg,
                                    .id = b->last_id};
  struct iovec iov = {.iov_base = &req, .iov_len = sizeof(req)};
  sbx_broker_fd_cmsg cbuf;
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
  if (fd >= 0)
    sbx_broker_msg_attach_fd(&msg, &cbuf, fd);
  gint64 deadline = deadline_in(SBX_BROKER_REPLY_TIMEOUT_MS);
  for (;;) {
    if (sendmsg(b->control, &msg, MSG_NOSIGNAL | MSG_DONTWAIT) >= 0)
      break;
    if (errno == EINTR)
      continue;
    if (errno != EAGAIN)
      return control_failed(b, errno, error);
    int r = wait_fd(b->control, POLLOUT, deadline);
    if (r <= 0)
      return control_failed(b, r == 0 ? ETIMEDOUT : -r, error);
  }
  for (;;) {
    int r = wait_fd(b->control, POLLIN, deadline);
    if (r <= 0)
      return control_failed(b, r == 0 ? ETIMEDOUT : -r, error);
    ssize_t n = recv(b->control, rep, sizeof(*rep), MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
      continue;
    if (n < 0)
      return control_failed(b, errno, error);
    if (n != (ssize_t)sizeof(*rep) || rep->magic != SBX_BROKER_CONTROL_MAGIC)
      return control_failed(b, n == 0 ? EPIPE : EPROTO, error);
    if (rep->id == req.id)
      return TRUE;
  }
}

int sbx_broker_connect(sbx_broker *b, const char *type, GError **error) {
  size_t index = 0;
  while (b->types[index] && strcmp(b->types[index], type) != 0)
    index++;
  if (!b->types[index]) {
    g_set_error(error, SBX_BROKER_ERROR, SBX_BROKER_ERROR_INVALID,
                "the broker has no allowlist for worker type '%s'", type);
    return -1;
  }
  int sv[2];
  if (!make_pair(sv, "a broker channel", error))
    return -1;
  sbx_broker_control_reply rep;
  gboolean ok = control_call(b, SBX_BROKER_CONTROL_ADD_CHANNEL, (uint32_t)index,
                             sv[1], &rep, error);
  close(sv[1]);
  if (!ok) {
    close(sv[0]);
    return -1;
  }
  if (rep.result != 0) {
    close(sv[0]);
    g_set_error(error, SBX_BROKER_ERROR, SBX_BROKER_ERROR_FAILED,
                "the broker refused a channel for worker type '%s': %s", type,
                g_strerror(-rep.result));
    return -1;
  }
  return sv[0];
}

pid_t sbx_broker_pid(const sbx_broker *b) {
  return b->pid;
}

gboolean sbx_broker_get_stats(sbx_broker *b, sbx_broker_stats *out,
                              GError **error) {
  sbx_broker_control_reply rep;
  if (!control_call(b, SBX_BROKER_CONTROL_STATUS, 0, -1, &rep, error))
    return FALSE;
  *out = rep.stats;
  return TRUE;
}

gboolean sbx_broker_stop(sbx_broker *b, int *status, GError **error) {
  if (!b)
    return TRUE;
  /* End of file on its control channel is the broker's cue to leave. */
  close(b->control);
  int st = 0;
  int rc = sbx_reap_or_kill_child(b->pid, SBX_BROKER_EXIT_TIMEOUT_MS,
                                  SBX_BROKER_REAP_TIMEOUT_MS, &st);
  pid_t pid = b->pid;
  g_strfreev(b->types);
  g_free(b);
  if (rc < 0) {
    g_set_error(error, SBX_BROKER_ERROR, SBX_BROKER_ERROR_FAILED,
                "waitpid for the broker (pid %d): %s", (int)pid,
                g_strerror(-rc));
    return FALSE;
  }
  if (rc == 0) {
    g_set_error(error, SBX_BROKER_ERROR, SBX_BROKER_ERROR_FAILED,
                "the broker (pid %d) did not end within %d ms of SIGKILL; "
                "it is left unreaped",
                (int)pid, SBX_BROKER_REAP_TIMEOUT_MS);
    return FALSE;
  }
  if (status)
    *status = st;
  return TRUE;
}
