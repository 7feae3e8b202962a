/* Launching and supervising the program; see launch.h.
 *
 * Trusts the plan. The code after the clone (run_init, run_program) runs
 * in the new process before exec: async-signal-safe calls only, no
 * allocation, no GLib; everything it needs was prepared in child_args.
 */
#include "sandbox/runner/launch.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/files/resolver.h"
#include "sandbox/kernel/landlock/landlock.h"
#include "sandbox/kernel/namespaces/credentials.h"
#include "sandbox/kernel/namespaces/fds.h"
#include "sandbox/kernel/namespaces/namespaces.h"
#include "sandbox/kernel/namespaces/rlimits.h"
#include "sandbox/kernel/seccomp/loader.h"
#include "sandbox/kernel/unotify/notify.h"
#include "sandbox/supervisor/supervisor.h"

/* The signals a terminal or a supervisor (systemd, a shell) sends that
 * are meant for the program. */
static const int forwarded_signals[] = {SIGHUP,  SIGINT,  SIGQUIT, SIGTERM,
                                        SIGUSR1, SIGUSR2, SIGWINCH};

/* Messages from init and the program to the launcher: fixed size, one
 * datagram each. */
typedef enum {
  MSG_LISTENER = 1, /* SCM_RIGHTS carries the listener */
  MSG_SETUP_FAILED, /* step, errno */
  MSG_EXEC_FAILED,  /* errno of execve */
  MSG_EXITED,       /* the program's wait status */
} msg_kind;

typedef enum {
  STEP_CREDENTIALS,
  STEP_LANDLOCK,
  STEP_FDS,
  STEP_SECCOMP,
  STEP_CHANNEL,
  STEP_RLIMITS,
  STEP_FORK,
  STEP_LAYER,
  STEP_COUNT,
} setup_step;

static const char *const step_names[STEP_COUNT] = {
    "dropping privileges (capabilities, no_new_privs, new session)",
    "entering the Landlock ruleset",
    "closing inherited file descriptors",
    "installing the seccomp baseline with its listener",
    "handing the listener to the supervisor",
    "applying resource limits",
    "starting the program",
    "installing a stacked --policy layer",
};

typedef struct {
  uint32_t kind;
  uint32_t step;
  int32_t value;
} child_msg;

typedef struct {
  const sbx_run_plan *plan;
  int chan;
  int parent_pidfd;
} child_args;

/* ---- the sandboxed side (after clone, before exec) ---------------------- */

/* ASYNC-SIGNAL-SAFE. */
static void send_msg(int chan, uint32_t kind, uint32_t step, int32_t value) {
  child_msg m = {kind, step, value};
  (void)send(chan, &m, sizeof(m), MSG_NOSIGNAL);
}

/* ASYNC-SIGNAL-SAFE. */
static _Noreturn void child_fail(int chan, setup_step step, int err) {
  send_msg(chan, MSG_SETUP_FAILED, step, err);
  _exit(SBX_RUN_EXIT_SETUP);
}

/* A handler that does nothing: init takes signals with sigwaitinfo, and
 * a pid-1 process would otherwise have them discarded. ASYNC-SIGNAL-SAFE. */
static void ignore_signal(int sig) {
  (void)sig;
}

/* The program: stack the extra layers, exec. ASYNC-SIGNAL-SAFE. */
static _Noreturn void run_program(const child_args *a, int chan) {
  const sbx_run_plan *p = a->plan;
  struct sigaction dfl;
  memset(&dfl, 0, sizeof(dfl));
  dfl.sa_handler = SIG_DFL;
  for (size_t i = 0; i < G_N_ELEMENTS(forwarded_signals); i++)
    sigaction(forwarded_signals[i], &dfl, NULL);
  sigaction(SIGCHLD, &dfl, NULL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  for (size_t i = 0; i < p->n_layers; i++) {
    int rc = sbx_seccomp_load_raw(p->layers[i].insns, p->layers[i].len, 0);
    if (rc < 0)
      child_fail(chan, STEP_LAYER, -rc);
  }
  execve(p->program, p->argv, p->envp);
  int err = errno;
  send_msg(chan, MSG_EXEC_FAILED, 0, err);
  _exit(err == ENOENT ? SBX_RUN_EXIT_NOTFOUND : SBX_RUN_EXIT_NOEXEC);
}

/* pid 1 of the sandbox. ASYNC-SIGNAL-SAFE from here to the end. */
static _Noreturn void run_init(const child_args *a) {
  const sbx_run_plan *p = a->plan;
  int chan = a->chan;

  sbx_creds_config cc;
  sbx_creds_config_init(&cc);
  cc.parent_pidfd = a->parent_pidfd;
  sbx_creds_result cr;
  int rc = sbx_creds_apply_raw(&cc, &cr);
  if (rc < 0)
    child_fail(chan, STEP_CREDENTIALS, -rc);

  if (p->landlock_fd >= 0) {
    rc = sbx_landlock_restrict_self_raw(p->landlock_fd,
                                        p->landlock.restrict_flags);
    if (rc < 0)
      child_fail(chan, STEP_LANDLOCK, -rc);
  }

  sbx_fd_keep keep[4];
  size_t n_keep = 0;
  for (int fd = 0; fd <= 2; fd++)
    if (fcntl(fd, F_GETFD) >= 0)
      keep[n_keep++] = (sbx_fd_keep){fd, SBX_FD_SAME, false};
  keep[n_keep++] = (sbx_fd_keep){chan, SBX_FD_SAME, true};
  rc = sbx_fd_keep_only_raw(keep, n_keep);
  if (rc < 0)
    child_fail(chan, STEP_FDS, -rc);
  chan = keep[n_keep - 1].fd;

  int listener = sbx_seccomp_load_raw(p->baseline.insns, p->baseline.len,
                                      SBX_SECCOMP_NEW_LISTENER);
  if (listener < 0)
    child_fail(chan, STEP_SECCOMP, -listener);
  child_msg lm = {MSG_LISTENER, 0, 0};
  rc = sbx_unotify_send_listener(chan, &lm, sizeof(lm), listener);
  close(listener);
  if (rc < 0)
    child_fail(chan, STEP_CHANNEL, -rc);
  /* No go-ahead, no program: the supervisor may have failed (S32). */
  char go = 0;
  if (read(chan, &go, 1) != 1 || go != 'G')
    _exit(SBX_RUN_EXIT_SETUP);

  rc = sbx_rlimits_apply_raw(p->rlimits, p->n_rlimits, NULL);
  if (rc < 0)
    child_fail(chan, STEP_RLIMITS, -rc);

  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = ignore_signal;
  sigset_t waitset;
  sigemptyset(&waitset);
  for (size_t i = 0; i < G_N_ELEMENTS(forwarded_signals); i++) {
    sigaction(forwarded_signals[i], &sa, NULL);
    sigaddset(&waitset, forwarded_signals[i]);
  }
  sa.sa_handler = SIG_DFL;
  sigaction(SIGCHLD, &sa, NULL);
  sigaddset(&waitset, SIGCHLD);
  sigprocmask(SIG_BLOCK, &waitset, NULL);

  /* Raw clone: glibc's fork() after a raw clone is not to be relied on. */
  long child = syscall(SYS_clone, (unsigned long)SIGCHLD, 0L, 0L, 0L, 0L);
  if (child < 0)
    child_fail(chan, STEP_FORK, errno);
  if (child == 0)
    run_program(a, chan);

  int status = 0;
  for (;;) {
    siginfo_t si;
    int sig = sigwaitinfo(&waitset, &si);
    if (sig < 0)
      continue;
    if (sig != SIGCHLD) {
      kill((pid_t)child, sig);
      continue;
    }
    bool done = false;
    for (;;) {
      int st;
      pid_t w = waitpid(-1, &st, WNOHANG);
      if (w <= 0)
        break;
      if (w == (pid_t)child) {
        status = st;
        done = true;
      }
    }
    if (done)
      break;
  }
  send_msg(chan, MSG_EXITED, 0, status);
  _exit(0);
}

/* ---- the launcher's side ------------------------------------------------ */

/* Receives one message, and with MSG_LISTENER its descriptor. Returns the
 * byte count (0 at EOF) or -errno. */
static ssize_t recv_msg(int chan, child_msg *m, int *fd, int flags) {
  return sbx_unotify_recv_listener(chan, m, sizeof(*m), fd, flags);
}

/* What init has reported so far. */
typedef struct {
  bool have_status;
  int prog_status;
  int exec_errno;
  bool setup_failed;
  child_msg failure;
} init_news;

static void take_news(init_news *news, const child_msg *m) {
  if (m->kind == MSG_EXITED) {
    news->have_status = true;
    news->prog_status = m->value;
  } else if (m->kind == MSG_EXEC_FAILED) {
    news->exec_errno = m->value;
  } else if (m->kind == MSG_SETUP_FAILED) {
    news->setup_failed = true;
    news->failure = *m;
  }
}

static const char *setup_hint(setup_step step, int err) {
  if (step == STEP_SECCOMP && err == EBUSY)
    return " (this process already runs under a seccomp filter with a "
           "listener - another supervisor - and the kernel allows only one)";
  if (step == STEP_LANDLOCK && err == EPERM)
    return " (no_new_privs could not be set)";
  return "";
}

static void set_setup_error(GError **error, const child_msg *m) {
  setup_step step = m->step < STEP_COUNT ? (setup_step)m->step : STEP_FORK;
  g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_SETUP,
              "sandbox setup failed while %s: %s%s; the program was not "
              "started",
              step_names[step], g_strerror(m->value),
              setup_hint(step, m->value));
}

/* As root the program runs as nobody (namespaces.h); the supervisor then
 * acts on the file system with that identity too, so files it creates
 * belong to the program and permission checks are the program's. */
static gboolean take_program_identity(const sbx_run_plan *p, GError **error) {
  if (geteuid() != 0 || p->ns.uid == 0)
    return TRUE;
  if (setgroups(0, NULL) < 0) {
    int err = errno;
    g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_SETUP,
                "setgroups(0) for the supervisor: %s", g_strerror(err));
    return FALSE;
  }
  setfsgid(p->ns.gid);
  setfsuid(p->ns.uid);
  if ((uid_t)setfsuid((uid_t)-1) != p->ns.uid ||
      (gid_t)setfsgid((gid_t)-1) != p->ns.gid) {
    g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_SETUP,
                "the supervisor could not take the program's identity "
                "(%u:%u)",
                (unsigned)p->ns.uid, (unsigned)p->ns.gid);
    return FALSE;
  }
  return TRUE;
}

static int exit_code(int status) {
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  if (WIFSIGNALED(status))
    return 128 + WTERMSIG(status);
  return SBX_RUN_EXIT_SETUP;
}

static void reap(pid_t pid, int *status) {
  while (waitpid(pid, status, 0) < 0 && errno == EINTR) {
  }
}

int sbx_run_launch(sbx_run_plan *plan, sbx_run_report *report, GError **error) {
  int result = SBX_RUN_EXIT_SETUP;
  int sv[2] = {-1, -1};
  int sfd = -1;
  int self_pidfd = -1;
  pid_t pid = -1;
  sbx_resolver *resolver = NULL;
  sbx_unotify *u = NULL;
  sigset_t sigs, old;
  sigemptyset(&sigs);
  for (size_t i = 0; i < G_N_ELEMENTS(forwarded_signals); i++)
    sigaddset(&sigs, forwarded_signals[i]);
  sigaddset(&sigs, SIGCHLD);
  sigprocmask(SIG_BLOCK, &sigs, &old);

  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
    int err = errno;
    g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_SETUP, "socketpair: %s",
                g_strerror(err));
    goto out;
  }
  sfd = signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);
  self_pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
  if (sfd < 0 || self_pidfd < 0) {
    int err = errno;
    g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_SETUP, "%s: %s",
                sfd < 0 ? "signalfd" : "pidfd_open", g_strerror(err));
    goto out;
  }

  child_args a = {.plan = plan, .chan = sv[1], .parent_pidfd = self_pidfd};
  pid = sbx_ns_clone(&plan->ns, error);
  if (pid == 0)
    run_init(&a);
  if (pid < 0)
    goto out;
  close(sv[1]);
  sv[1] = -1;
  close(self_pidfd);
  self_pidfd = -1;

  /* While init drops privileges and installs its filter on the other
   * CPU, this side gets the supervisor's resolver ready: neither waits
   * for the other until the listener arrives. */
  if (!take_program_identity(plan, error))
    goto out;
  resolver = sbx_resolver_new(plan->allowlist, error);
  if (!resolver)
    goto out;

  child_msg m;
  int listener = -1;
  ssize_t n = recv_msg(sv[0], &m, &listener, 0);
  if (n <= 0 || m.kind != MSG_LISTENER || listener < 0) {
    if (listener >= 0)
      close(listener);
    if (n > 0 && m.kind == MSG_SETUP_FAILED)
      set_setup_error(error, &m);
    else
      g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_SETUP,
                  "the sandbox's init process ended before its supervisor "
                  "could start; the program was not started");
    goto out;
  }

  sbx_unotify_config cfg = {
      .resolver = resolver,
      .allow_exec = plan->allow_exec && plan->landlock_fd >= 0,
      .allow_first_exec = true,
      .allow_sockets = plan->net,
      .on_event = sbx_run_report_event,
      .user_data = report,
  };
  u = sbx_unotify_new(listener, &cfg, error);
  if (!u)
    goto out;
  if (write(sv[0], "G", 1) != 1) {
    int err = errno;
    g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_SETUP,
                "cannot release the sandbox's init process: %s",
                g_strerror(err));
    goto out;
  }

  bool listening = true, chan_open = true, init_done = false;
  init_news news = {0};
  int init_status = 0;
  while (!init_done) {
    struct pollfd fds[4] = {
        {.fd = sfd, .events = POLLIN},
        {.fd = chan_open ? sv[0] : -1, .events = POLLIN},
        {.fd = listening ? sbx_unotify_listener(u) : -1, .events = POLLIN},
        {.fd = sbx_unotify_waiting_fd(u), .events = POLLIN},
    };
    if (poll(fds, 4, -1) < 0) {
      if (errno == EINTR)
        continue;
      break;
    }
    if (fds[2].revents & POLLIN) {
      int rc = sbx_unotify_handle_one(u);
      if (rc < 0 && rc != -EAGAIN)
        fprintf(stderr, "sbx-run: supervisor: %s\n", g_strerror(-rc));
    } else if (fds[2].revents & (POLLHUP | POLLERR | POLLNVAL)) {
      listening = false;
    }
    if (fds[3].revents & POLLIN) {
      int rc = sbx_unotify_finish_waiting(u);
      if (rc < 0)
        fprintf(stderr, "sbx-run: supervisor: %s\n", g_strerror(-rc));
    }
    if (fds[1].revents & POLLIN) {
      int fd;
      ssize_t got = recv_msg(sv[0], &m, &fd, MSG_DONTWAIT);
      if (fd >= 0)
        close(fd);
      if (got == sizeof(m)) {
        take_news(&news, &m);
      } else if (got == 0) {
        chan_open = false;
      }
    } else if (fds[1].revents & (POLLHUP | POLLERR)) {
      chan_open = false;
    }
    if (fds[0].revents & POLLIN) {
      struct signalfd_siginfo si;
      while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
        if (si.ssi_signo == SIGCHLD) {
          int st;
          if (waitpid(pid, &st, WNOHANG) == pid) {
            init_done = true;
            init_status = st;
          }
        } else {
          kill(pid, (int)si.ssi_signo);
        }
      }
    }
  }
  pid = -1;
  /* What init said before it went. */
  while (chan_open) {
    int fd;
    ssize_t got = recv_msg(sv[0], &m, &fd, MSG_DONTWAIT);
    if (fd >= 0)
      close(fd);
    if (got != sizeof(m))
      break;
    take_news(&news, &m);
  }
  if (news.setup_failed) {
    set_setup_error(error, &news.failure);
    result = SBX_RUN_EXIT_SETUP;
  } else if (news.exec_errno) {
    g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_PROGRAM,
                "cannot execute %s: %s", plan->program,
                g_strerror(news.exec_errno));
    result =
        news.exec_errno == ENOENT ? SBX_RUN_EXIT_NOTFOUND : SBX_RUN_EXIT_NOEXEC;
  } else if (news.have_status) {
    result = exit_code(news.prog_status);
  } else {
    result = exit_code(init_status);
    if (WIFSIGNALED(init_status))
      g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_SETUP,
                  "the sandbox's init process was killed by signal %d",
                  WTERMSIG(init_status));
    else
      g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_SETUP,
                  "the sandbox's init process ended without a report");
  }

out:
  if (pid > 0) {
    /* Setup failed on this side: closing the channel tells init there is
     * no go-ahead, so it exits without starting the program. */
    if (sv[0] >= 0) {
      close(sv[0]);
      sv[0] = -1;
    }
    int st;
    reap(pid, &st);
  }
  sbx_unotify_free(u);
  sbx_resolver_free(resolver);
  if (sv[0] >= 0)
    close(sv[0]);
  if (sv[1] >= 0)
    close(sv[1]);
  if (sfd >= 0)
    close(sfd);
  if (self_pidfd >= 0)
    close(self_pidfd);
  sigprocmask(SIG_SETMASK, &old, NULL);
  return result;
}
