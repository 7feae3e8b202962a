/* The broker process, host side: starting it (a fork that execs the
 * embedded broker program, broker_process.h), its control channel, and
 * stopping it; see broker.h.
 *
 * Trusts the host's configuration. The child keeps exactly the descriptors
 * the broker needs (stdio on /dev/null except stderr, the control channel,
 * the audit log, its configuration) and runs nothing but async-signal-safe
 * calls until its exec.
 */
#include "sandbox/broker/broker.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox/broker/broker_process.h"
#include "sandbox/broker/broker_sandbox.h"
#include "sandbox/broker/protocol.h"
#include "sandbox/base/sealed.h"
#include "sandbox/kernel/namespaces/fds.h"
#include "sandbox/kernel/namespaces/reap.h"

struct sbx_broker {
  pid_t pid;
  int control;      /* host end */
  char **types;     /* allowlist names, by index */
  uint32_t last_id; /* of the last control request */
  /* One control request at a time, whichever host thread asks: a reply
   * is read by the thread that sent its request. */
  GMutex control_lock;
};

/* Defined by the file that embeds the broker program (embed_image.py). */
const unsigned char *sbx_broker_program_bytes(size_t *len);

/* A sealed memory file holding the embedded broker program, ready for
 * execveat(fd, "", ..., AT_EMPTY_PATH), or -1 with errno set when the
 * kernel refuses one. */
static int program_image(void) {
  size_t len = 0;
  const unsigned char *bytes = sbx_broker_program_bytes(&len);
  return sbx_sealed_file(SBX_BROKER_PROGRAM_NAME, MFD_EXEC, bytes, len);
}

/* The configuration in a sealed memory file, or -1 with *error set. */
static int write_config(const sbx_broker_process_config *config,
                        GError **error) {
  GVariantBuilder lists;
  g_variant_builder_init(&lists, G_VARIANT_TYPE("a(suia(ssubb))"));
  for (size_t i = 0; i < config->n_allowlists; i++) {
    g_autoptr(GVariant) v = sbx_allowlist_to_variant(config->allowlists[i]);
    g_variant_builder_add_value(&lists, v);
  }
  const sbx_bpf_program *prog = config->program;
  GVariant *insns = g_variant_new_fixed_array(
      G_VARIANT_TYPE_BYTE, prog ? prog->insns : NULL,
      prog ? prog->len * sizeof(struct sock_filter) : 0, 1);
  GVariantBuilder verdicts;
  g_variant_builder_init(&verdicts, G_VARIANT_TYPE("a(ayau)"));
  for (size_t i = 0; i < config->n_allowlists; i++) {
    const sbx_bpf_program *v =
        config->verdict_programs ? config->verdict_programs[i] : NULL;
    g_variant_builder_add_value(
        &verdicts,
        g_variant_new("(@ay@au)",
                      g_variant_new_fixed_array(
                          G_VARIANT_TYPE_BYTE, v ? v->insns : NULL,
                          v ? v->len * sizeof(struct sock_filter) : 0, 1),
                      g_variant_new_fixed_array(
                          G_VARIANT_TYPE_UINT32, v ? v->self_pid_relocs : NULL,
                          v ? v->n_self_pid_relocs : 0, sizeof(uint32_t))));
  }
  g_autoptr(GVariant) all = g_variant_ref_sink(g_variant_new(
      "(u@a(suia(ssubb))bbub@ay@a(ayau)b)", (guint32)config->parent,
      g_variant_builder_end(&lists), (gboolean)config->have_audit,
      (gboolean)config->audit_grants, (guint32)config->max_fds,
      (gboolean)config->dangerously_unsandboxed, insns,
      g_variant_builder_end(&verdicts), (gboolean)config->learn));
  int fd = sbx_sealed_file("sbx-broker-config", 0, g_variant_get_data(all),
                           g_variant_get_size(all));
  if (fd < 0) {
    int err = errno;
    g_set_error(error, SBX_BROKER_ERROR, SBX_BROKER_ERROR_FAILED,
                "writing the broker's configuration to a memory file: %s",
                g_strerror(err));
  }
  return fd;
}

/* In the child, before exec: async-signal-safe (the host may run threads
 * when a process sandboxes itself). */
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

/* What the child needs, all prepared before the fork. */
typedef struct {
  pid_t parent;
  int devnull, control, audit, config, image; /* audit, image: -1 if none */
  char **argv, **envp;
} child_plan;

/* The forked child: its descriptors as broker_process.h lays them out,
 * then the embedded program. Async-signal-safe up to the exec; only where
 * the kernel refuses to execute the image does it go on as a fork. */
static void G_GNUC_NORETURN run_child(const child_plan *p) {
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != p->parent)
    _exit(1);
  reset_signals();
  sbx_fd_keep keep[7];
  size_t n = 0;
  keep[n++] = (sbx_fd_keep){p->devnull, 0, false};
  keep[n++] = (sbx_fd_keep){p->devnull, 1, false};
  if (fcntl(2, F_GETFD) >= 0)
    keep[n++] = (sbx_fd_keep){2, SBX_FD_SAME, false};
  keep[n++] = (sbx_fd_keep){p->control, SBX_BROKER_CONTROL_FD, false};
  if (p->audit >= 0)
    keep[n++] = (sbx_fd_keep){p->audit, SBX_BROKER_AUDIT_FD, false};
  keep[n++] = (sbx_fd_keep){p->config, SBX_BROKER_CONFIG_FD, false};
  size_t image_i = n;
  if (p->image >= 0)
    keep[n++] = (sbx_fd_keep){p->image, SBX_BROKER_CONFIG_FD + 1, true};
  if (sbx_fd_keep_only_raw(keep, n) < 0)
    _exit(1);
  if (p->image >= 0) {
    syscall(SYS_execveat, keep[image_i].fd, "", p->argv, p->envp,
            AT_EMPTY_PATH);
    close(keep[image_i].fd);
  }
  sbx_broker_process_main();
}

/* The broker's environment: the variables that tune the runtime it shares
 * with the host (sanitizers, GLib), nothing else of the host's. */
static char **broker_environment(void) {
  static const char *const kept[] = {"ASAN_OPTIONS", "UBSAN_OPTIONS",
                                     "LSAN_OPTIONS", "G_SLICE", "G_DEBUG"};
  GPtrArray *env = g_ptr_array_new();
  for (size_t i = 0; i < G_N_ELEMENTS(kept); i++) {
    const char *v = g_getenv(kept[i]);
    if (v)
      g_ptr_array_add(env, g_strconcat(kept[i], "=", v, NULL));
  }
  g_ptr_array_add(env, NULL);
  return (char **)g_ptr_array_free(env, FALSE);
}

/* Said once per process: the broker then shares the host's layout. */
static void warn_fork_only(int err) {
  static gsize warned = 0;
  if (g_once_init_enter(&warned)) {
    g_printerr(
        "sbx: the kernel refuses to execute the broker's program from "
        "a memory file (%s; vm.memfd_noexec?): the broker runs as a "
        "fork of the host and shares its memory layout\n",
        g_strerror(err));
    g_once_init_leave(&warned, 1);
  }
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
  /* Compiled here, so the broker only loads it. */
  sbx_bpf_program program = {0};
  if (!config->dangerously_unsandboxed &&
      !sbx_broker_sandbox_compile(&program, error))
    return NULL;
  sbx_broker_process_config pc = {
      .allowlists = config->allowlists,
      .n_allowlists = config->n_allowlists,
      .have_audit = config->audit_fd >= 0,
      .audit_grants = config->audit_grants,
      .max_fds = config->max_fds,
      .dangerously_unsandboxed = config->dangerously_unsandboxed,
      .program = config->dangerously_unsandboxed ? NULL : &program,
      .parent = getpid(),
      .verdict_programs = config->verdict_programs,
      .learn = config->learn,
  };
  child_plan plan = {
      .parent = pc.parent, .audit = config->audit_fd, .control = -1};
  plan.config = write_config(&pc, error);
  sbx_bpf_program_clear(&program);
  if (plan.config < 0)
    return NULL;
  plan.image = program_image();
  if (plan.image < 0)
    warn_fork_only(errno);
  plan.devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
  int sv[2] = {-1, -1};
  if (plan.devnull < 0) {
    g_set_error(error, SBX_BROKER_ERROR, SBX_BROKER_ERROR_FAILED,
                "opening /dev/null for the broker: %s", g_strerror(errno));
  } else if (make_pair(sv, "the broker's control channel", error)) {
    plan.control = sv[1];
  }
  char *argv[] = {(char *)SBX_BROKER_PROGRAM_NAME, NULL};
  plan.argv = argv;
  plan.envp = broker_environment();
  fflush(NULL); /* the child's copy of the host's stdio buffers stays empty */
  pid_t pid = plan.control >= 0 ? fork() : -1;
  if (pid == 0)
    run_child(&plan);
  int fork_err = errno;
  g_strfreev(plan.envp);
  close(plan.config);
  if (plan.image >= 0)
    close(plan.image);
  if (plan.devnull >= 0)
    close(plan.devnull);
  if (sv[1] >= 0)
    close(sv[1]);
  if (pid < 0) {
    if (sv[0] >= 0) {
      close(sv[0]);
      g_set_error(error, SBX_BROKER_ERROR, SBX_BROKER_ERROR_FAILED,
                  "fork of the broker: %s", g_strerror(fork_err));
    }
    return NULL;
  }

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
      g_mutex_init(&b->control_lock);
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

/* Sends one request; its reply is due by *deadline (set here, in ms of
 * the monotonic clock) and carries *id. With b->control_lock held. */
static gboolean control_send_locked(sbx_broker *b, uint32_t op, uint32_t arg,
                                    int fd, GBytes *payload, uint32_t *id,
                                    gint64 *deadline, GError **error) {
  if (++b->last_id == 0)
    b->last_id = 1; /* 0 is the start-up message's */
  *id = b->last_id;
  sbx_broker_control_request req = {
      .magic = SBX_BROKER_CONTROL_MAGIC, .op = op, .arg = arg, .id = *id};
  gsize payload_len = 0;
  const void *payload_bytes =
      payload ? g_bytes_get_data(payload, &payload_len) : NULL;
  struct iovec iov[2] = {
      {.iov_base = &req, .iov_len = sizeof(req)},
      {.iov_base = (void *)payload_bytes, .iov_len = payload_len},
  };
  sbx_broker_fd_cmsg cbuf;
  struct msghdr msg = {.msg_iov = iov, .msg_iovlen = payload_len ? 2 : 1};
  if (fd >= 0)
    sbx_broker_msg_attach_fd(&msg, &cbuf, fd);
  *deadline = deadline_in(SBX_BROKER_REPLY_TIMEOUT_MS);
  for (;;) {
    if (sendmsg(b->control, &msg, MSG_NOSIGNAL | MSG_DONTWAIT) >= 0)
      return TRUE;
    if (errno == EINTR)
      continue;
    if (errno != EAGAIN)
      return control_failed(b, errno, error);
    int r = wait_fd(b->control, POLLOUT, *deadline);
    if (r <= 0)
      return control_failed(b, r == 0 ? ETIMEDOUT : -r, error);
  }
}

/* Waits until deadline for the reply to request id. A reply to an earlier
 * request that timed out arrives first and is skipped. With
 * b->control_lock held. */
static gboolean control_receive_locked(sbx_broker *b, uint32_t id,
                                       gint64 deadline,
                                       sbx_broker_control_reply *rep,
                                       GError **error) {
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
    if (rep->id == id)
      return TRUE;
  }
}

/* One request and its reply, within SBX_BROKER_REPLY_TIMEOUT_MS. With
 * b->control_lock held. */
static gboolean control_call_locked(sbx_broker *b, uint32_t op, uint32_t arg,
                                    int fd, GBytes *payload,
                                    sbx_broker_control_reply *rep,
                                    GError **error) {
  uint32_t id;
  gint64 deadline;
  return control_send_locked(b, op, arg, fd, payload, &id, &deadline, error) &&
         control_receive_locked(b, id, deadline, rep, error);
}

static gboolean control_call(sbx_broker *b, uint32_t op, uint32_t arg, int fd,
                             GBytes *payload, sbx_broker_control_reply *rep,
                             GError **error) {
  g_mutex_lock(&b->control_lock);
  gboolean ok = control_call_locked(b, op, arg, fd, payload, rep, error);
  g_mutex_unlock(&b->control_lock);
  return ok;
}

int sbx_broker_connect(sbx_broker *b, const char *type, GError **error) {
  return sbx_broker_connect_with_grants(b, type, NULL, error);
}

struct sbx_broker_connecting {
  sbx_broker *broker; /* its control_lock held from _send to _finish */
  size_t type;        /* index in broker->types */
  GBytes *payload;    /* the grants, or NULL */
  int broker_end;     /* the channel's end the broker gets; -1 once _send
                         ran (whether or not it succeeded) */
  GError *send_error; /* why _send failed, for _finish */
  uint32_t id;
  gint64 deadline;
};

sbx_broker_connecting *sbx_broker_connect_prepare(sbx_broker *b,
                                                  const char *type,
                                                  const sbx_allowlist *grants,
                                                  int *channel,
                                                  GError **error) {
  *channel = -1;
  g_autoptr(GBytes) payload = NULL;
  if (grants && sbx_allowlist_n_entries(grants) > 0) {
    g_autoptr(GVariant) v = sbx_allowlist_to_variant(grants);
    payload = g_variant_get_data_as_bytes(v);
    if (g_bytes_get_size(payload) > SBX_BROKER_CONTROL_MAX_GRANTS) {
      g_set_error(error, SBX_BROKER_ERROR, SBX_BROKER_ERROR_INVALID,
                  "the rules of one worker of type '%s' take %zu bytes, more "
                  "than the %d a broker channel carries",
                  type, g_bytes_get_size(payload),
                  SBX_BROKER_CONTROL_MAX_GRANTS);
      return NULL;
    }
  }
  size_t index = 0;
  while (b->types[index] && strcmp(b->types[index], type) != 0)
    index++;
  if (!b->types[index]) {
    g_set_error(error, SBX_BROKER_ERROR, SBX_BROKER_ERROR_INVALID,
                "the broker has no allowlist for worker type '%s'", type);
    return NULL;
  }
  int sv[2];
  if (!make_pair(sv, "a broker channel", error))
    return NULL;
  sbx_broker_connecting *c = g_new0(sbx_broker_connecting, 1);
  c->broker = b;
  c->type = index;
  c->payload = g_steal_pointer(&payload);
  c->broker_end = sv[1];
  *channel = sv[0];
  return c;
}

void sbx_broker_connect_send(sbx_broker_connecting *c) {
  if (c->broker_end < 0)
    return;
  sbx_broker *b = c->broker;
  g_mutex_lock(&b->control_lock);
  gboolean ok =
      control_send_locked(b,
                          c->payload ? SBX_BROKER_CONTROL_ADD_CHANNEL_GRANTS
                                     : SBX_BROKER_CONTROL_ADD_CHANNEL,
                          (uint32_t)c->type, c->broker_end, c->payload, &c->id,
                          &c->deadline, &c->send_error);
  close(c->broker_end);
  c->broker_end = -1;
  if (!ok)
    g_mutex_unlock(&b->control_lock);
}

sbx_broker_connecting *sbx_broker_connect_begin(sbx_broker *b, const char *type,
                                                const sbx_allowlist *grants,
                                                int *channel, GError **error) {
  sbx_broker_connecting *c =
      sbx_broker_connect_prepare(b, type, grants, channel, error);
  if (!c)
    return NULL;
  sbx_broker_connect_send(c);
  if (c->send_error) {
    sbx_broker_connect_finish(c, error); /* reports it and frees c */
    close(*channel);
    *channel = -1;
    return NULL;
  }
  return c;
}

gboolean sbx_broker_connect_finish(sbx_broker_connecting *c, GError **error) {
  sbx_broker *b = c->broker;
  sbx_broker_connect_send(c);
  gboolean ok;
  if (c->send_error) {
    g_propagate_error(error, g_steal_pointer(&c->send_error));
    ok = FALSE;
  } else {
    sbx_broker_control_reply rep;
    ok = control_receive_locked(b, c->id, c->deadline, &rep, error);
    g_mutex_unlock(&b->control_lock);
    if (ok && rep.result != 0) {
      g_set_error(error, SBX_BROKER_ERROR, SBX_BROKER_ERROR_FAILED,
                  "the broker refused a channel for worker type '%s'%s: %s",
                  b->types[c->type], c->payload ? " with rules of its own" : "",
                  g_strerror(-rep.result));
      ok = FALSE;
    }
  }
  g_clear_pointer(&c->payload, g_bytes_unref);
  g_free(c);
  return ok;
}

int sbx_broker_connect_with_grants(sbx_broker *b, const char *type,
                                   const sbx_allowlist *grants,
                                   GError **error) {
  int channel;
  sbx_broker_connecting *c =
      sbx_broker_connect_begin(b, type, grants, &channel, error);
  if (!c)
    return -1;
  if (!sbx_broker_connect_finish(c, error)) {
    close(channel);
    return -1;
  }
  return channel;
}

pid_t sbx_broker_pid(const sbx_broker *b) {
  return b->pid;
}

GVariant *sbx_broker_learned(sbx_broker *b, GError **error) {
  int fd = memfd_create("sbx-learned", MFD_CLOEXEC);
  if (fd < 0) {
    g_set_error(error, SBX_BROKER_ERROR, SBX_BROKER_ERROR_FAILED,
                "a memory file for what the broker learned: %s",
                g_strerror(errno));
    return NULL;
  }
  sbx_broker_control_reply rep;
  if (!control_call(b, SBX_BROKER_CONTROL_LEARNED, 0, fd, NULL, &rep, error)) {
    close(fd);
    return NULL;
  }
  if (rep.result < 0) {
    close(fd);
    g_set_error(error, SBX_BROKER_ERROR, SBX_BROKER_ERROR_FAILED,
                "the broker could not write what it learned: %s",
                g_strerror(-rep.result));
    return NULL;
  }
  char *data = g_malloc((size_t)rep.result + 1);
  ssize_t n = pread(fd, data, (size_t)rep.result, 0);
  close(fd);
  if (n != rep.result) {
    g_free(data);
    g_set_error(error, SBX_BROKER_ERROR, SBX_BROKER_ERROR_FAILED,
                "reading what the broker learned: short read");
    return NULL;
  }
  GVariant *v = g_variant_ref_sink(
      g_variant_new_from_data(G_VARIANT_TYPE(SBX_BROKER_LEARNED_TYPE), data,
                              (gsize)n, FALSE, g_free, data));
  GVariant *normal = g_variant_get_normal_form(v);
  g_variant_unref(v);
  return normal;
}

gboolean sbx_broker_get_stats(sbx_broker *b, sbx_broker_stats *out,
                              GError **error) {
  sbx_broker_control_reply rep;
  if (!control_call(b, SBX_BROKER_CONTROL_STATUS, 0, -1, NULL, &rep, error))
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
  g_mutex_clear(&b->control_lock);
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
