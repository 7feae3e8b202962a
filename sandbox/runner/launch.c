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
#include <linux/capability.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "sandbox/files/resolver.h"
#include "sandbox/kernel/namespaces/fds.h"
#include "sandbox/kernel/namespaces/namespaces.h"
#include "sandbox/kernel/namespaces/status.h"
#include "sandbox/kernel/unotify/notify.h"
#include "sandbox/layers/apply.h"
#include "sandbox/layers/missing.h"
#include "sandbox/policy/builtin/profile.h"
#include "sandbox/runner/terminal.h"
#include "sandbox/runner/baseline.h"
#include "sandbox/runner/relay.h"
#include "sandbox/runner/stacked.h"
#include "sandbox/runner/tree.h"
#include "sandbox/supervisor/supervisor.h"

/* The signals a terminal or a supervisor (systemd, a shell) sends that
 * are meant for the program, job control's among them: a stop sbx-run is
 * sent stops the program, whose stop then stops sbx-run (init reports
 * it), and a SIGCONT continues both. */
static const int forwarded_signals[] = {SIGHUP,  SIGINT,  SIGQUIT,  SIGTERM,
                                        SIGUSR1, SIGUSR2, SIGWINCH, SIGTSTP,
                                        SIGTTIN, SIGTTOU, SIGCONT};

/* Messages from init and the program to the launcher: fixed size, one
 * datagram each. */
typedef enum {
  MSG_LISTENER = 1,    /* SCM_RIGHTS carries the listener */
  MSG_INIT_FAILED,     /* a step of init's layers: step, detail, errno */
  MSG_PROGRAM_FAILED,  /* a step of the program's layers: the same */
  MSG_HANDOVER_FAILED, /* errno of sending the listener */
  MSG_FORK_FAILED,     /* errno of starting the program */
  MSG_EXEC_FAILED,     /* errno of execve */
  MSG_EXITED,          /* the program's wait status */
  MSG_STOPPED,         /* the program stopped: the signal */
  MSG_TREE_FAILED,     /* the default mode's tree: step, operation, errno */
  MSG_PRIVATE_DIR,     /* SCM_RIGHTS carries a private directory (detail:
                        * its index in sbx_run_tree_private_dirs) */
  MSG_TERMINAL,        /* SCM_RIGHTS carries the master of the program's
                        * terminal, made in the sandbox's devpts */
  MSG_NAMESPACE,       /* SCM_RIGHTS carries init's user namespace (detail
                        * 0) or mount namespace (1), where its private
                        * directories are, for the supervisor */
  MSG_PROC,            /* SCM_RIGHTS carries the procfs of init's pid
                        * namespace, for the supervisor */
  MSG_ROOT,            /* SCM_RIGHTS carries init's "/", in its mount
                        * namespace, for the supervisor */
  MSG_NETNS,           /* to init: SCM_RIGHTS carries the sandbox's network
                        * namespace, made beside it (clone_init) */
  MSG_NETNS_FAILED,    /* joining it failed: errno */
} msg_kind;

typedef struct {
  uint32_t kind;
  uint32_t step; /* sbx_layer_step */
  int32_t detail;
  int32_t value;
} child_msg;

typedef struct {
  sbx_run_plan *plan; /* the child's own copy: apply patches it */
  int chan;
  int parent_pidfd;
  int tty;               /* the program's terminal (terminal.h), or -1 */
  bool tty_own;          /* init replaces it with one of the tree's devpts
                          * where it can */
  unsigned tty_replaces; /* which of 0, 1, 2 it becomes */
  int relay_fd[3];       /* the relay's pipes (relay.h) that become 0, 1,
                          * 2, or -1 */
  bool netns_beside;     /* the network namespace comes as MSG_NETNS */
} child_args;

/* ---- the sandboxed side (after clone, before exec) ---------------------- */

/* Receives one message, and the descriptor it carries. Returns the
 * byte count (0 at EOF) or -errno. Async-signal-safe. */
static ssize_t recv_msg(int chan, child_msg *m, int *fd, int flags) {
  return sbx_unotify_recv_listener(chan, m, sizeof(*m), fd, flags);
}

/* Async-signal-safe. */
static void send_msg(int chan, uint32_t kind, int32_t value) {
  child_msg m = {kind, 0, 0, value};
  (void)send(chan, &m, sizeof(m), MSG_NOSIGNAL);
}

/* Async-signal-safe. */
static _Noreturn void child_fail(int chan, uint32_t kind, int err) {
  send_msg(chan, kind, err);
  _exit(SBX_RUN_EXIT_SETUP);
}

/* Sends fd (none when -1) to the launcher as a message of this kind and
 * closes it; init gives up if it cannot. Async-signal-safe. */
static void hand_over(int chan, uint32_t kind, int32_t detail, int fd) {
  if (fd < 0)
    return;
  child_msg m = {kind, 0, detail, 0};
  int rc = sbx_unotify_send_listener(chan, &m, sizeof(m), fd);
  close(fd);
  if (rc < 0)
    child_fail(chan, MSG_HANDOVER_FAILED, -rc);
}

/* A step of the layers engine failed. Async-signal-safe. */
static _Noreturn void layers_failed(int chan, uint32_t kind,
                                    const sbx_layer_result *r) {
  child_msg m = {kind, r->step, r->detail, r->error};
  (void)send(chan, &m, sizeof(m), MSG_NOSIGNAL);
  _exit(SBX_RUN_EXIT_SETUP);
}

/* A handler that does nothing: init takes signals with sigwaitinfo, and
 * a pid-1 process would otherwise have them discarded. Async-signal-safe. */
static void ignore_signal(int sig) {
  (void)sig;
}

/* The program: stack its own filters, exec. Async-signal-safe. */
static _Noreturn void run_program(const child_args *a, int chan) {
  sbx_run_plan *p = a->plan;
  /* The program leads a process group of its own, whose parent (init)
   * is in the same session: a stop signal stops it (in init's group,
   * orphaned, it would be discarded). On its own terminal it is the
   * foreground job, so what the terminal sends (Ctrl-C, Ctrl-Z) reaches
   * it and not init; SIGTTOU is still blocked here, as tcsetpgrp from
   * the background needs. */
  setpgid(0, 0);
  for (int fd = 0; a->tty >= 0 && fd <= 2; fd++) {
    if (a->tty_replaces & (1u << fd)) {
      tcsetpgrp(fd, getpid());
      break;
    }
  }
  struct sigaction dfl;
  memset(&dfl, 0, sizeof(dfl));
  dfl.sa_handler = SIG_DFL;
  for (size_t i = 0; i < G_N_ELEMENTS(forwarded_signals); i++)
    sigaction(forwarded_signals[i], &dfl, NULL);
  sigaction(SIGCHLD, &dfl, NULL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  sbx_layer_process inherited = {.parent_pidfd = -1};
  sbx_layer_result r;
  if (sbx_layer_apply_raw(&p->program_filters, &inherited, &r) < 0)
    layers_failed(chan, MSG_PROGRAM_FAILED, &r);
  execve(p->program, p->argv, p->envp);
  int err = errno;
  send_msg(chan, MSG_EXEC_FAILED, err);
  _exit(err == ENOENT ? SBX_RUN_EXIT_NOTFOUND : SBX_RUN_EXIT_NOEXEC);
}

/* The program ended: so does everything it started. As pid 1 of the
 * sandbox's pid namespace, init kills every other process in it and reaps
 * them, and only then reports: when the launcher returns, none of them
 * runs. The kernel's teardown of the namespaces at init's own exit (the
 * mount tree's, the network's) is not waited for. A process created while
 * a kill went round is a child of init by the time its parent is reaped,
 * and the next round kills it. Without a pid namespace of its own, init
 * reports at once. Async-signal-safe. */
static void end_the_rest(void) {
  if (getpid() != 1)
    return;
  for (;;) {
    kill(-1, SIGKILL);
    pid_t w = waitpid(-1, NULL, __WALL);
    if (w < 0 && errno == ECHILD)
      return;
  }
}

/* pid 1 of the sandbox: in the default mode its file tree (tree.h), which
 * needs the capabilities the layers then drop; init's layers by the
 * engine (sandbox/layers/apply.h); under the supervisor, the listener
 * handed over. Async-signal-safe from here to the end. */
static _Noreturn void run_init(const child_args *given) {
  child_args args = *given;
  const child_args *a = &args;
  sbx_run_plan *p = a->plan;
  for (int fd = 0; fd <= 2; fd++)
    if (a->relay_fd[fd] >= 0 && dup2(a->relay_fd[fd], fd) < 0)
      child_fail(a->chan, MSG_INIT_FAILED, errno);
  int private_fds[SBX_RUN_TREE_N_PRIVATE_DIRS];
  for (size_t d = 0; d < SBX_RUN_TREE_N_PRIVATE_DIRS; d++)
    private_fds[d] = -1;
  int proc_fd = -1;
  if (p->mode == SBX_RUN_MODE_KERNEL || (p->ns.namespaces & SBX_NS_MOUNT)) {
    sbx_run_tree_failure tf;
    int built = p->mode == SBX_RUN_MODE_KERNEL
                    ? sbx_run_tree_build_raw(&p->tree, p->init.landlock_fd,
                                             private_fds, &tf)
                    : sbx_run_tree_private_raw(&p->tree, p->init.landlock_fd,
                                               private_fds, &proc_fd, &tf);
    if (built < 0) {
      child_msg m = {MSG_TREE_FAILED, (uint32_t)tf.step, tf.op, tf.error};
      (void)send(a->chan, &m, sizeof(m), MSG_NOSIGNAL);
      _exit(SBX_RUN_EXIT_SETUP);
    }
  }
  /* The network namespace made beside init while it built the tree
   * (clone_init), joined while init still holds its user namespace's
   * capabilities: nothing runs in the sandbox before, and without it
   * nothing does at all. */
  if (a->netns_beside) {
    child_msg m;
    int net = -1;
    ssize_t n = recv_msg(a->chan, &m, &net, 0);
    if (n != (ssize_t)sizeof(m) || m.kind != MSG_NETNS || net < 0)
      child_fail(a->chan, MSG_NETNS_FAILED, n < 0 ? (int)-n : EPROTO);
    if (setns(net, CLONE_NEWNET) != 0)
      child_fail(a->chan, MSG_NETNS_FAILED, errno);
    close(net);
  }
  /* The program's terminal from the sandbox's own devpts, where the
   * program finds it by name (ttyname); the launcher relays its master. */
  int tty_master = -1;
  if (a->tty_own) {
    int unlock = 0, own = -1;
    tty_master = open("/dev/pts/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (tty_master >= 0 && ioctl(tty_master, TIOCSPTLCK, &unlock) == 0)
      own = ioctl(tty_master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (own >= 0) {
      close(args.tty);
      args.tty = own;
    } else if (tty_master >= 0) {
      /* No devpts of the sandbox's: the launcher's terminal stays. */
      close(tty_master);
      tty_master = -1;
    }
  }
  /* Under the supervisor, the namespaces its private directories are in,
   * for the sockets the supervisor binds there. */
  int ns_fds[2] = {-1, -1};
  bool any_private = false;
  for (size_t d = 0; d < SBX_RUN_TREE_N_PRIVATE_DIRS; d++)
    any_private |= private_fds[d] >= 0;
  if (p->mode == SBX_RUN_MODE_SUPERVISOR && any_private) {
    ns_fds[0] = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
    ns_fds[1] = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
  }
  /* Under the supervisor, init's "/" in its own mount namespace, in which
   * the supervisor looks every path up: a directory it opens for the
   * program is then one of the program's mounts (fchdir to it leaves a
   * working directory getcwd can name). */
  int root_fd = -1;
  if (p->mode == SBX_RUN_MODE_SUPERVISOR && (p->ns.namespaces & SBX_NS_MOUNT))
    root_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  /* 0, 1, 2, the channel, the private directories, /proc, "/", the
   * namespaces, the terminal and its master */
  sbx_fd_keep keep[10 + SBX_RUN_TREE_N_PRIVATE_DIRS];
  size_t n_keep = 0;
  for (int fd = 0; fd <= 2; fd++)
    if (fcntl(fd, F_GETFD) >= 0)
      keep[n_keep++] = (sbx_fd_keep){fd, SBX_FD_SAME, false};
  keep[n_keep++] = (sbx_fd_keep){a->chan, SBX_FD_SAME, true};
  size_t chan_at = n_keep - 1;
  for (size_t d = 0; d < SBX_RUN_TREE_N_PRIVATE_DIRS; d++)
    if (private_fds[d] >= 0)
      keep[n_keep++] = (sbx_fd_keep){private_fds[d], SBX_FD_SAME, true};
  if (proc_fd >= 0)
    keep[n_keep++] = (sbx_fd_keep){proc_fd, SBX_FD_SAME, true};
  if (root_fd >= 0)
    keep[n_keep++] = (sbx_fd_keep){root_fd, SBX_FD_SAME, true};
  for (int i = 0; i < 2; i++)
    if (ns_fds[i] >= 0)
      keep[n_keep++] = (sbx_fd_keep){ns_fds[i], SBX_FD_SAME, true};
  if (tty_master >= 0)
    keep[n_keep++] = (sbx_fd_keep){tty_master, SBX_FD_SAME, true};
  if (a->tty >= 0)
    keep[n_keep++] = (sbx_fd_keep){a->tty, SBX_FD_SAME, true};
  sbx_layer_process process = {
      .keep = keep, .n_keep = n_keep, .parent_pidfd = a->parent_pidfd};
  sbx_layer_result r;
  int rc = sbx_layer_apply_raw(&p->init, &process, &r);
  int chan = keep[chan_at].fd;
  if (rc < 0)
    layers_failed(chan, MSG_INIT_FAILED, &r);
  /* The session is new (S10); its controlling terminal is the program's
   * own, which stands in for the user's on 0, 1 and 2. */
  if (a->tty >= 0) {
    int tty = keep[n_keep - 1].fd;
    if (ioctl(tty, TIOCSCTTY, 0) < 0)
      child_fail(chan, MSG_INIT_FAILED, errno);
    for (int fd = 0; fd <= 2; fd++)
      if ((a->tty_replaces & (1u << fd)) && dup2(tty, fd) < 0)
        child_fail(chan, MSG_INIT_FAILED, errno);
    if (tty > 2)
      close(tty);
  }

  {
    /* Until the supervisor holds the listener, a notified call would
     * wait for nobody: nothing but these calls runs before the go-ahead.
     * (The default mode's baseline notifies connect and set-id chmods
     * alone.) */
    /* The terminal's master, which the launcher shapes like the user's
     * terminal before the go-ahead; the namespaces and the private
     * directories, for the supervisor's connects and binds (each kept at
     * its number through the layers: SBX_FD_SAME); the listener last. */
    hand_over(chan, MSG_TERMINAL, 0, tty_master);
    for (int i = 0; i < 2; i++)
      hand_over(chan, MSG_NAMESPACE, i, ns_fds[i]);
    for (size_t d = 0; d < SBX_RUN_TREE_N_PRIVATE_DIRS; d++)
      hand_over(chan, MSG_PRIVATE_DIR, (int32_t)d, private_fds[d]);
    hand_over(chan, MSG_PROC, 0, proc_fd);
    hand_over(chan, MSG_ROOT, 0, root_fd);
    if (r.listener_fd < 0)
      child_fail(chan, MSG_HANDOVER_FAILED, EBADF);
    hand_over(chan, MSG_LISTENER, 0, r.listener_fd);
    /* No go-ahead, no program: the supervisor may have failed (S32). */
    char go = 0;
    if (read(chan, &go, 1) != 1 || go != 'G')
      _exit(SBX_RUN_EXIT_SETUP);
  }

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

  /* vfork, as posix_spawn starts a program: the program shares init's
   * memory until its execve, so none of it is copied for a process that
   * replaces it at once, and init waits meanwhile. The program writes
   * nothing init reads again: its own frames, below init's, and the
   * plan's program filters (apply patches them). glibc's vfork is a bare
   * system call (its fork is not to be relied on after a raw clone). */
  pid_t child = vfork();
  if (child < 0)
    child_fail(chan, MSG_FORK_FAILED, errno);
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
      pid_t w = waitpid(-1, &st, WNOHANG | WUNTRACED);
      if (w <= 0)
        break;
      if (w == (pid_t)child && WIFSTOPPED(st)) {
        send_msg(chan, MSG_STOPPED, WSTOPSIG(st));
      } else if (w == (pid_t)child) {
        status = st;
        done = true;
      }
    }
    if (done)
      break;
  }
  end_the_rest();
  /* The relay's pipes: the launcher reads their end once no process of
   * the sandbox holds them. */
  for (int fd = 0; fd <= 2; fd++)
    close(fd);
  send_msg(chan, MSG_EXITED, status);
  _exit(0);
}

/* ---- the launcher's side ------------------------------------------------ */

/* What init has reported so far. */
typedef struct {
  bool stopped; /* the program stopped: sbx-run stops too */
  bool have_status;
  int prog_status;
  int exec_errno;
  bool setup_failed;
  child_msg failure;
} init_news;

static void take_news(init_news *news, const child_msg *m) {
  if (m->kind == MSG_STOPPED) {
    news->stopped = true;
  } else if (m->kind == MSG_EXITED) {
    news->have_status = true;
    news->prog_status = m->value;
  } else if (m->kind == MSG_EXEC_FAILED) {
    news->exec_errno = m->value;
  } else if (m->kind != MSG_LISTENER) {
    news->setup_failed = true;
    news->failure = *m;
  }
}

static const char *setup_hint(const child_msg *m) {
  if (m->kind == MSG_INIT_FAILED && m->step == SBX_LAYER_STEP_SECCOMP &&
      m->value == EBUSY)
    return " (this process already runs under a seccomp filter with a "
           "listener - another supervisor - and the kernel allows only one)";
  return "";
}

static void set_setup_error(GError **error, const sbx_run_plan *plan,
                            const child_msg *m) {
  g_autofree char *what = NULL;
  if (m->kind == MSG_TREE_FAILED) {
    const char *path = m->detail >= 0 && (size_t)m->detail < plan->tree.n_ops
                           ? plan->tree.ops[m->detail].path
                           : NULL;
    what =
        g_strdup_printf("the sandbox's file tree: %s%s%s: %s",
                        sbx_run_tree_step_name((int)m->step), path ? " " : "",
                        path ? path : "", g_strerror(m->value));
  } else if (m->kind == MSG_INIT_FAILED || m->kind == MSG_PROGRAM_FAILED) {
    const sbx_layer_plan *layers =
        m->kind == MSG_INIT_FAILED ? &plan->init : &plan->program_filters;
    sbx_layer_result r = {.step = (sbx_layer_step)m->step,
                          .detail = m->detail,
                          .error = m->value};
    g_autofree char *step = sbx_layer_result_describe(layers, &r);
    what = g_strdup_printf("%s: %s",
                           m->kind == MSG_INIT_FAILED
                               ? "the sandbox's init"
                               : "the program's own filters",
                           step);
  } else if (m->kind == MSG_NETNS_FAILED) {
    what =
        g_strdup_printf("the sandbox's init joining its network namespace: %s",
                        g_strerror(m->value));
  } else {
    what = g_strdup_printf("%s: %s",
                           m->kind == MSG_HANDOVER_FAILED
                               ? "handing the listener to the "
                                 "supervisor"
                               : "starting the program",
                           g_strerror(m->value));
  }
  g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_SETUP,
              "sandbox setup failed at %s%s; the program was not started", what,
              setup_hint(m));
}

/* The supervisor acts on the file system as the program would: as root
 * (whose program keeps uid 0, or runs as --user), with no supplementary
 * groups, the program's file-system user and group, and no effective
 * capability, so files it creates belong to the program and permission
 * checks are the program's own, not root's overrides. Called once the
 * namespaces exist: their maps needed the privilege. */
static gboolean take_program_identity(const sbx_run_plan *p, GError **error) {
  if (geteuid() != 0)
    return TRUE;
  /* Inside another sandbox setgroups may be refused; no groups to drop
   * is the same. */
  if (setgroups(0, NULL) < 0 && getgroups(0, NULL) != 0) {
    int err = errno;
    g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_SETUP,
                "setgroups(0) for the supervisor: %s", g_strerror(err));
    return FALSE;
  }
  setfsgid(p->ns.gid);
  setfsuid(p->ns.uid);
  struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct caps[2];
  bool no_caps = syscall(SYS_capget, &h, caps) == 0;
  if (no_caps && (caps[0].effective || caps[1].effective)) {
    caps[0].effective = caps[1].effective = 0;
    no_caps = syscall(SYS_capset, &h, caps) == 0;
  }
  if ((uid_t)setfsuid((uid_t)-1) != p->ns.uid ||
      (gid_t)setfsgid((gid_t)-1) != p->ns.gid || !no_caps) {
    g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_SETUP,
                "the supervisor could not take the program's identity "
                "(%u:%u without capabilities)",
                (unsigned)p->ns.uid, (unsigned)p->ns.gid);
    return FALSE;
  }
  return TRUE;
}

/* The private directories init mounted are the program's to read and
 * write, and the resolver finds them beneath init's descriptors, not in
 * the host's tree the supervisor sees: every call the supervisor decides
 * there (every file call under --explain, connect in the default mode).
 * So is the procfs of the sandbox's pid namespace (proc_fd, -1 without),
 * readable as in the default mode, where /proc/self is the program's pid
 * there. */
static gboolean use_private_dirs(sbx_run_plan *plan,
                                 const sbx_unotify_private_dir *dirs, size_t n,
                                 int proc_fd, int root_fd,
                                 sbx_resolver **resolver, GError **error) {
  sbx_resolver_root roots[SBX_RUN_TREE_N_PRIVATE_DIRS + 2];
  for (size_t i = 0; i < n; i++) {
    g_autofree char *entry = g_strconcat(dirs[i].path, "/", NULL);
    if (!sbx_allowlist_add(plan->allowlist, entry, SBX_PERM_READ_WRITE_CREATE,
                           error))
      return FALSE;
    roots[i] = (sbx_resolver_root){dirs[i].path, dirs[i].fd};
  }
  if (proc_fd >= 0) {
    if (!sbx_allowlist_add(plan->allowlist, "/proc/", SBX_PERM_READ_ONLY,
                           error))
      return FALSE;
    roots[n++] = (sbx_resolver_root){"/proc", proc_fd};
  }
  if (root_fd >= 0)
    roots[n++] = (sbx_resolver_root){"/", root_fd};
  sbx_resolver *r =
      sbx_resolver_new_with_roots(plan->allowlist, roots, n, error);
  if (!r)
    return FALSE;
  sbx_resolver_free(*resolver);
  *resolver = r;
  return TRUE;
}

static void reap(pid_t pid, int *status) {
  while (waitpid(pid, status, 0) < 0 && errno == EINTR) {
  }
}

/* Drops whatever an init that is gone sent on its channel, so that none
 * of it is taken for the next one's. */
static void drain(int chan) {
  child_msg m;
  int fd = -1;
  while (recv_msg(chan, &m, &fd, MSG_DONTWAIT) > 0) {
    if (fd >= 0)
      close(fd);
    fd = -1;
  }
}

/* In a vfork child of the launcher: the network namespace of init's user
 * namespace, handed to init. Async-signal-safe. */
static _Noreturn void net_beside(pid_t init, int chan, const char **step,
                                 int *err) {
  int net = sbx_ns_make_net_beside_raw(init, step);
  if (net < 0) {
    *err = -net;
    _exit(1);
  }
  child_msg m = {MSG_NETNS, 0, 0, 0};
  int rc = sbx_unotify_send_listener(chan, &m, sizeof(m), net);
  if (rc < 0) {
    *step = "handing the network namespace to init";
    *err = -rc;
    _exit(1);
  }
  _exit(0);
}

/* The sandbox's own network namespace, made beside init: creating one
 * is the dearest part of the clone (hundreds of microseconds), so init
 * is cloned without it and a vfork child of the launcher makes it in
 * init's user namespace, on the launcher's CPU, while init builds its
 * tree on the other; init joins it before its layers. 0, or -errno with
 * *step set: nothing was sent, and init is the caller's to end. */
static int make_net_beside(pid_t init, int launcher_chan, const char **step) {
  int err = 0;
  *step = NULL;
  pid_t helper = vfork();
  if (helper == 0)
    net_beside(init, launcher_chan, step, &err);
  if (helper < 0) {
    *step = "vfork for the network namespace";
    return -errno;
  }
  int st = 0;
  reap(helper, &st);
  if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
    return 0;
  if (!*step)
    *step = "making the network namespace";
  return -(err ? err : EIO);
}

/* init in its namespaces; where the kernel refuses them and the plan does
 * not require them, init without (missing.h decides and warns): the
 * seccomp baseline, the supervisor and Landlock still apply, and without
 * a network of its own the program makes no network socket without
 * --net. Without namespaces there is no mount tree: the default mode
 * falls back to the supervisor, never to less. Returns like fork(). */
static pid_t clone_init(sbx_run_plan *plan, child_args *a, int launcher_chan,
                        sbx_run_relay **relay, GError **error) {
  GError *local = NULL;
  sbx_ns_config ns = plan->ns;
  a->netns_beside =
      sbx_run_plan_own_network(plan) && (ns.namespaces & SBX_NS_USER);
  if (a->netns_beside) {
    ns.namespaces &= ~(unsigned)SBX_NS_NET;
    ns.loopback = false;
  }
  pid_t pid = sbx_ns_clone(&ns, &local);
  if (pid > 0 && a->netns_beside) {
    const char *step;
    int rc = make_net_beside(pid, launcher_chan, &step);
    if (rc == 0)
      return pid;
    /* The kernel would not make it (its limit on network namespaces,
     * say): init goes, and the clone that makes every namespace at once
     * decides, with the refusals and fallbacks below. */
    kill(pid, SIGKILL);
    reap(pid, NULL);
    drain(launcher_chan);
    a->netns_beside = false;
    pid = sbx_ns_clone(&plan->ns, &local);
  }
  if (pid >= 0)
    return pid;
  if (!sbx_layer_userns_refused(local, plan->require & SBX_REQUIRE_USERNS,
                                "sbx-run", error))
    return -1;
  if (!sbx_run_plan_without_namespaces(
          plan,
          "the kernel refuses user namespaces, without which there is no "
          "mount tree",
          error))
    return -1;
  /* Without a pid namespace the host's processes are the program's to
   * name; only Landlock's scoping then keeps tracing inside. */
  if (plan->allow_ptrace && plan->init.landlock_fd < 0) {
    g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_SETUP,
                "--allow-ptrace needs a pid namespace or Landlock, so that "
                "the program traces only its own processes; the kernel "
                "offers neither");
    return -1;
  }
  /* The supervisor decides the descriptors' calls: no relay. */
  g_clear_pointer(relay, sbx_run_relay_free);
  for (int fd = 0; fd <= 2; fd++)
    a->relay_fd[fd] = -1;
  a->netns_beside = false;
  return sbx_ns_clone(&plan->ns, error);
}

/* The supervisor's copies of the files made for the program: a sealed
 * memfd each, read-only like the default mode's. A file that cannot be
 * made is left out (the program then finds none there). */
static size_t make_account_memfds(const sbx_run_plan *plan,
                                  sbx_unotify_made_file *made) {
  size_t n = 0;
  for (size_t i = 0; i < plan->n_accounts; i++) {
    const char *text = plan->accounts[i].text;
    size_t len = strlen(text);
    int fd = memfd_create("sbx-run-account", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0)
      continue;
    if (write(fd, text, len) != (ssize_t)len || fchmod(fd, 0444) != 0 ||
        fcntl(fd, F_ADD_SEALS,
              F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE) != 0) {
      close(fd);
      continue;
    }
    made[n++] = (sbx_unotify_made_file){plan->accounts[i].path, fd};
  }
  return n;
}

static int exit_code(int status) {
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  if (WIFSIGNALED(status))
    return 128 + WTERMSIG(status);
  return SBX_RUN_EXIT_SETUP;
}

int sbx_run_launch(sbx_run_plan *plan, sbx_run_report *report, GError **error) {
  int result = SBX_RUN_EXIT_SETUP;
  int sv[2] = {-1, -1};
  int sfd = -1;
  int self_pidfd = -1;
  pid_t pid = -1;
  sbx_resolver *resolver = NULL;
  sbx_unotify *u = NULL;
  sbx_run_terminal *term = NULL;
  sbx_unotify_layer *layers = NULL;
  sbx_run_relay *relay = NULL;
  sbx_unotify_made_file made[SBX_RUN_ACCOUNT_FILES];
  size_t n_made = 0;
  sbx_unotify_private_dir private_dirs[SBX_RUN_TREE_N_PRIVATE_DIRS];
  size_t n_private = 0;
  int proc_fd = -1, root_fd = -1;
  int ns_fds[2] = {-1, -1}; /* init's user and mount namespaces */
  sigset_t sigs, old;
  sigemptyset(&sigs);
  for (size_t i = 0; i < G_N_ELEMENTS(forwarded_signals); i++)
    sigaddset(&sigs, forwarded_signals[i]);
  sigaddset(&sigs, SIGCHLD);
  /* A relayed stream whose reader went away answers EPIPE. */
  sigaddset(&sigs, SIGPIPE);
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

  GError *term_error = NULL;
  term = sbx_run_terminal_new(&term_error);
  if (term_error) {
    g_propagate_error(error, term_error);
    goto out;
  }
  child_args a = {
      .plan = plan,
      .chan = sv[1],
      .parent_pidfd = self_pidfd,
      .tty = term ? sbx_run_terminal_slave(term) : -1,
      /* In the default mode, init makes one of the
       * sandbox's devpts, as every terminal the program
       * makes itself. */
      .tty_own = term && plan->mode == SBX_RUN_MODE_KERNEL && plan->tree.ptys,
      .tty_replaces = term ? sbx_run_terminal_replaces(term) : 0};
  GError *relay_error = NULL;
  relay = sbx_run_relay_new(
      plan->mode == SBX_RUN_MODE_KERNEL ? plan->tree.relay : 0, a.relay_fd,
      &relay_error);
  if (relay_error) {
    g_propagate_error(error, relay_error);
    goto out;
  }
  pid = clone_init(plan, &a, sv[0], &relay, error);
  if (pid == 0)
    run_init(&a);
  if (pid < 0)
    goto out;
  close(sv[1]);
  sv[1] = -1;
  close(self_pidfd);
  self_pidfd = -1;
  if (term)
    sbx_run_terminal_after_start(term);
  sbx_run_relay_started(relay);

  child_msg m;
  /* While init drops privileges and installs its filter on the other
   * CPU, this side gets the supervisor's resolver ready: neither waits
   * for the other until the listener arrives. */
  if (!take_program_identity(plan, error))
    goto out;
  resolver = sbx_resolver_new(plan->allowlist, error);
  if (!resolver)
    goto out;

  int listener = -1;
  ssize_t n = recv_msg(sv[0], &m, &listener, 0);
  /* The terminal's master, the namespaces and the private directories
   * come before the listener. */
  for (;;) {
    if (n <= 0 || listener < 0)
      break;
    if (m.kind == MSG_TERMINAL && term) {
      sbx_run_terminal_take_master(term, listener);
    } else if (m.kind == MSG_NAMESPACE && (m.detail == 0 || m.detail == 1) &&
               ns_fds[m.detail] < 0) {
      ns_fds[m.detail] = listener;
    } else if (m.kind == MSG_PROC && proc_fd < 0) {
      proc_fd = listener;
    } else if (m.kind == MSG_ROOT && root_fd < 0) {
      root_fd = listener;
    } else if (m.kind == MSG_PRIVATE_DIR && m.detail >= 0 &&
               m.detail < SBX_RUN_TREE_N_PRIVATE_DIRS &&
               n_private < SBX_RUN_TREE_N_PRIVATE_DIRS) {
      private_dirs[n_private++] = (sbx_unotify_private_dir){
          sbx_run_tree_private_dirs[m.detail], listener};
    } else {
      break;
    }
    listener = -1;
    n = recv_msg(sv[0], &m, &listener, 0);
  }
  if (n <= 0 || m.kind != MSG_LISTENER || listener < 0) {
    if (listener >= 0)
      close(listener);
    if (n > 0 && m.kind != MSG_LISTENER)
      set_setup_error(error, plan, &m);
    else
      g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_SETUP,
                  "the sandbox's init process ended before its supervisor "
                  "could start; the program was not started");
    goto out;
  }
  if ((n_private > 0 || proc_fd >= 0 || root_fd >= 0) &&
      !use_private_dirs(plan, private_dirs, n_private, proc_fd, root_fd,
                        &resolver, error)) {
    close(listener);
    goto out;
  }
  /* A name outside every grant is missing, as in the default mode's
   * tree, which holds only the grants: a search along a path (perl's
   * @INC, gcc's include directories) goes on past it in both modes. */
  sbx_resolver_set_unlisted_errno(resolver, ENOENT);

  /* The stacked layers' refusals, which the baseline sends here. */
  layers = g_new0(sbx_unotify_layer, plan->reported->len + 1);
  for (guint i = 0; i < plan->reported->len; i++) {
    const sbx_run_reported_layer *l = g_ptr_array_index(plan->reported, i);
    layers[i].insns = l->prog.insns;
    layers[i].len = l->prog.len;
    layers[i].reason = l->reason;
  }
  if (plan->mode == SBX_RUN_MODE_SUPERVISOR)
    n_made = make_account_memfds(plan, made);
  const sbx_run_embedded_baseline *base =
      &sbx_run_baselines[plan->mode == SBX_RUN_MODE_KERNEL][plan->allow_ptrace];
  sbx_unotify_config cfg = {
      .layers = layers,
      .n_layers = plan->reported->len,
      .base = base->insns,
      .base_len = base->len,
      /* The program runs under sbx-run's own filters, the baseline and
       * every stacked one. */
      /* The filters sbx-run itself runs under (nested in another
       * sandbox): init and the program inherit them. */
      .min_filters = (unsigned)MAX(sbx_status_seccomp_filters(0), 0) + 1 +
                     plan->n_program_filters,
      .resolver = resolver,
      .allow_exec = plan->allow_exec && plan->init.landlock_fd >= 0,
      .allow_first_exec = true,
      .allow_sockets = plan->net,
      .own_network = sbx_run_plan_own_network(plan),
      .connect_ports = {.narrow = plan->connect_ports.set,
                        .ports = plan->connect_ports.ports,
                        .n = plan->connect_ports.n,
                        .reason = "port not in the profile's [network] "
                                  "connect-ports"},
      .bind_ports = {.narrow = plan->bind_ports.set,
                     .ports = plan->bind_ports.ports,
                     .n = plan->bind_ports.n,
                     .reason = "port not in the profile's [network] "
                               "bind-ports"},
      .exec_dirs = sbx_run_exec_dirs,
      .tty_relayed = term != NULL,
      .tty_master = term ? sbx_run_terminal_master(term) : -1,
      .made = made,
      .private_dirs = private_dirs,
      .n_private_dirs = n_private,
      .sandbox_proc = proc_fd >= 0,
      .private_ns = ns_fds[0] >= 0 && ns_fds[1] >= 0,
      .private_userns = ns_fds[0],
      .private_mntns = ns_fds[1],
      .n_made = n_made,
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

  bool listening = u != NULL, chan_open = true, init_done = false;
  init_news news = {0};
  int init_status = 0;
  int supervisor_error = 0;
  const char *supervisor_step = NULL;
  /* Init reports the program's status once nothing else of the sandbox
   * runs; its own exit, the namespaces' teardown, is not waited for. */
  while (!init_done && !news.have_status && !supervisor_error) {
    struct pollfd fds[4 + 2 + 3] = {
        {.fd = sfd, .events = POLLIN},
        {.fd = chan_open ? sv[0] : -1, .events = POLLIN},
        {.fd = listening ? sbx_unotify_listener(u) : -1, .events = POLLIN},
        {.fd = u ? sbx_unotify_waiting_fd(u) : -1, .events = POLLIN},
    };
    int n_term = term ? sbx_run_terminal_poll_fds(term, fds + 4) : 0;
    int n_relay = sbx_run_relay_poll_fds(relay, fds + 4 + n_term);
    if (poll(fds, (nfds_t)(4 + n_term + n_relay), -1) < 0) {
      if (errno == EINTR)
        continue;
      supervisor_error = errno;
      supervisor_step = "waiting for the program's calls";
      break;
    }
    if (fds[2].revents & POLLIN) {
      int rc = sbx_unotify_handle_one(u);
      if (rc < 0 && rc != -EAGAIN) {
        supervisor_error = -rc;
        supervisor_step = "answering a call of the program";
        break;
      }
    } else if (fds[2].revents & (POLLHUP | POLLERR | POLLNVAL)) {
      listening = false;
    }
    if (fds[3].revents & POLLIN) {
      int rc = sbx_unotify_finish_waiting(u);
      if (rc < 0) {
        supervisor_error = -rc;
        supervisor_step = "finishing a waiting call of the program";
        break;
      }
    }
    if (term)
      sbx_run_terminal_pump(term, fds + 4, n_term);
    sbx_run_relay_pump(relay, fds + 4 + n_term, n_relay);
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
    if (news.stopped) {
      /* The program stopped: so does sbx-run, the job its shell sees,
       * with the user's terminal as it was. SIGCONT continues both. */
      news.stopped = false;
      if (term)
        sbx_run_terminal_suspend(term);
      kill(getpid(), SIGSTOP);
    }
    if (fds[0].revents & POLLIN) {
      struct signalfd_siginfo si;
      while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
        int sig = (int)si.ssi_signo;
        if (sig == SIGPIPE)
          continue; /* the relay's: the write said EPIPE */
        if (sig == SIGCHLD) {
          int st;
          if (waitpid(pid, &st, WNOHANG) == pid) {
            init_done = true;
            init_status = st;
          }
          continue;
        }
        if (term && sig == SIGCONT)
          sbx_run_terminal_resume(term);
        if (term && sig == SIGWINCH) {
          /* The program's terminal tells its foreground job itself. */
          sbx_run_terminal_winch(term);
          continue;
        }
        kill(pid, sig);
      }
    }
  }
  if (supervisor_error) {
    /* A call the supervisor could not answer would wait forever, and
     * nothing else would decide the program's calls: the sandbox goes.
     * Killing init, pid 1 of the namespace, kills every process in it. */
    kill(pid, SIGKILL);
    int st;
    reap(pid, &st);
    pid = -1;
    g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_SETUP,
                "the supervisor failed %s (%s); the program and everything "
                "it started were killed",
                supervisor_step, g_strerror(supervisor_error));
    result = SBX_RUN_EXIT_SETUP;
    goto out;
  }
  /* Every process of the sandbox is gone but init, which may still be
   * exiting: reaped here if it is done, else by whoever inherits it. */
  if (!init_done)
    (void)waitpid(pid, NULL, WNOHANG);
  pid = -1;
  sbx_run_relay_drain(relay);
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
    set_setup_error(error, plan, &news.failure);
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
  sbx_run_terminal_free(term);
  sbx_run_relay_free(relay);
  sbx_unotify_free(u);
  g_free(layers);
  for (size_t i = 0; i < n_made; i++)
    close(made[i].fd);
  for (size_t i = 0; i < n_private; i++)
    close(private_dirs[i].fd);
  if (proc_fd >= 0)
    close(proc_fd);
  if (root_fd >= 0)
    close(root_fd);
  for (int i = 0; i < 2; i++)
    if (ns_fds[i] >= 0)
      close(ns_fds[i]);
  sbx_resolver_free(resolver);
  if (sv[0] >= 0)
    close(sv[0]);
  if (sv[1] >= 0)
    close(sv[1]);
  if (sfd >= 0)
    close(sfd);
  if (self_pidfd >= 0)
    close(self_pidfd);
  /* A SIGPIPE of the relay's, still pending, is not for sbx-run. */
  sigset_t pipe_only;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  struct timespec now = {0, 0};
  while (sigtimedwait(&pipe_only, NULL, &now) == SIGPIPE) {
  }
  sigprocmask(SIG_SETMASK, &old, NULL);
  return result;
}
