/* Recording one run; see record.h.
 *
 * Trusts the observer's reports. The child's code between fork and exec
 * (run_child) is async-signal-safe: no allocation, no GLib.
 */
#include "sandbox/runner/learn_record.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/kernel/seccomp/bpf.h"
#include "sandbox/policy/compiler.h"
#include "sandbox/kernel/seccomp/loader.h"
#include "sandbox/kernel/unotify/notify.h"
#include "sandbox/supervisor/observer.h"
#include "sandbox/policy/parser.h"
#include "sandbox/base/syscalls.h"
#include "sandbox/files/fs_calls.h"

GQuark sbx_learn_error_quark(void) {
  return g_quark_from_static_string("sbx-learn-error-quark");
}

extern char **environ;

void sbx_learn_record_init(sbx_learn_record *r) {
  memset(r, 0, sizeof(*r));
  r->n_syscalls = sbx_syscall_max();
  r->syscalls = g_new0(sbx_learn_syscall, (gsize)r->n_syscalls);
  r->paths = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  r->pids = g_hash_table_new(g_direct_hash, g_direct_equal);
  r->connect_ports = g_hash_table_new(g_direct_hash, g_direct_equal);
  r->bind_ports = g_hash_table_new(g_direct_hash, g_direct_equal);
  r->connect_addresses =
      g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  r->bind_addresses =
      g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
}

void sbx_learn_record_clear(sbx_learn_record *r) {
  g_free(r->syscalls);
  g_clear_pointer(&r->paths, g_hash_table_unref);
  g_clear_pointer(&r->pids, g_hash_table_unref);
  g_clear_pointer(&r->connect_ports, g_hash_table_unref);
  g_clear_pointer(&r->bind_ports, g_hash_table_unref);
  g_clear_pointer(&r->connect_addresses, g_hash_table_unref);
  g_clear_pointer(&r->bind_addresses, g_hash_table_unref);
  g_clear_pointer(&r->program, g_free);
}

/* ---- what a call did ------------------------------------------------------
 */

static void note_path(sbx_learn_record *r, const char *path, unsigned bits) {
  if (!path)
    return;
  gpointer old = g_hash_table_lookup(r->paths, path);
  unsigned now = GPOINTER_TO_UINT(old) | bits;
  if (old)
    g_hash_table_replace(r->paths, g_strdup(path), GUINT_TO_POINTER(now));
  else
    g_hash_table_insert(r->paths, g_strdup(path), GUINT_TO_POINTER(now));
}

/* What a use of a path needs, as the table of file-system calls says. */
static unsigned need_use(sbx_fs_need need) {
  switch (need) {
    case SBX_FS_NEEDS_READ:
      return SBX_LEARN_READ;
    case SBX_FS_NEEDS_WRITE:
      return SBX_LEARN_WRITE;
    case SBX_FS_NEEDS_CREATE:
      return SBX_LEARN_CREATE;
    case SBX_FS_NEEDS_EXEC:
      return SBX_LEARN_EXEC;
    case SBX_FS_NEEDS_LOOK:
    case SBX_FS_NEEDS_BY_FLAGS:
      break;
  }
  return SBX_LEARN_STAT;
}

static unsigned open_use(uint64_t flags) {
  sbx_fs_need need = sbx_fs_open_need((uint32_t)flags);
  /* A file created is then written. */
  if (need == SBX_FS_NEEDS_CREATE)
    return SBX_LEARN_CREATE | SBX_LEARN_WRITE;
  return need_use(need);
}

/* How a path call used its path(s); 0 for calls that name none. */
static unsigned path_use(int nr) {
  if (nr == __NR_bind) /* a unix socket file */
    return SBX_LEARN_CREATE;
  if (nr == __NR_connect) /* to a unix socket file: the write right */
    return SBX_LEARN_WRITE;
  const sbx_fs_call *row = sbx_fs_call_find(nr);
  return need_use(row ? sbx_fs_op_need(row->op) : SBX_FS_NEEDS_LOOK);
}

/* The inode of the socket listening on TCP port `port` in the network
 * namespace of thread `pid` (its /proc/PID/net/tcp or tcp6), or 0. */
static unsigned long listener_inode(pid_t pid, uint16_t port, bool v6) {
  g_autofree char *path =
      g_strdup_printf("/proc/%d/net/%s", (int)pid, v6 ? "tcp6" : "tcp");
  g_autofree char *text = NULL;
  if (!g_file_get_contents(path, &text, NULL, NULL))
    return 0;
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  for (char **l = lines; *l; l++) {
    /* sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout
     * inode */
    g_auto(GStrv) f = g_strsplit_set(g_strstrip(*l), " ", -1);
    char *field[10];
    int n = 0;
    for (char **x = f; *x && n < 10; x++)
      if (**x)
        field[n++] = *x;
    const char *colon = n == 10 ? strrchr(field[1], ':') : NULL;
    if (!colon || strcmp(field[3], "0A") != 0) /* TCP_LISTEN */
      continue;
    if (g_ascii_strtoull(colon + 1, NULL, 16) == port)
      return (unsigned long)g_ascii_strtoull(field[9], NULL, 10);
  }
  return 0;
}

/* Whether one of the run's threads holds the socket with that inode. */
static bool held_by_the_run(const sbx_learn_record *r, unsigned long inode) {
  g_autofree char *want = g_strdup_printf("socket:[%lu]", inode);
  GHashTableIter it;
  gpointer key;
  g_hash_table_iter_init(&it, r->pids);
  while (g_hash_table_iter_next(&it, &key, NULL)) {
    g_autofree char *dir = g_strdup_printf("/proc/%d/fd", GPOINTER_TO_INT(key));
    GDir *d = g_dir_open(dir, 0, NULL);
    if (!d)
      continue; /* gone */
    const char *name;
    bool found = false;
    while (!found && (name = g_dir_read_name(d))) {
      g_autofree char *fd = g_build_filename(dir, name, NULL);
      g_autofree char *link = g_file_read_link(fd, NULL);
      found = link && strcmp(link, want) == 0;
    }
    g_dir_close(d);
    if (found)
      return true;
  }
  return false;
}

/* Whether an internet connect or bind is the program's own business: a
 * connect to a listener of the run's own on this host, a bind to port 0
 * (a port the kernel picks, which nobody outside can know beforehand). */
static bool own_inet_use(const sbx_learn_record *r,
                         const sbx_unotify_observation *o) {
  if (o->nr == __NR_bind)
    return o->port == 0;
  if (!o->this_host)
    return false;
  unsigned long inode = listener_inode(o->pid, o->port, false);
  if (!inode)
    inode = listener_inode(o->pid, o->port, true);
  return inode && held_by_the_run(r, inode);
}

static void on_observation(const sbx_unotify_observation *o, void *data) {
  sbx_learn_record *r = data;
  r->total_calls++;
  g_hash_table_add(r->pids, GINT_TO_POINTER(o->pid));
  if (o->nr < 0 || o->nr >= r->n_syscalls || !sbx_syscall_name(o->nr)) {
    r->unknown_calls++;
    return;
  }
  sbx_learn_syscall *s = &r->syscalls[o->nr];
  s->count++;
  for (int i = 0; i < 6; i++)
    sbx_arg_seen_add(&s->args[i], o->args[i]);
  if (o->inet_family && o->address && own_inet_use(r, o)) {
    r->own_inet++;
  } else if (o->inet_family && o->address) {
    bool bind = o->nr == __NR_bind;
    g_hash_table_add(bind ? r->bind_ports : r->connect_ports,
                     GUINT_TO_POINTER((unsigned)o->port + 1));
    g_hash_table_add(
        bind ? r->bind_addresses : r->connect_addresses,
        g_strdup_printf("%s port %u", o->address, (unsigned)o->port));
  }
  unsigned use = o->has_open_flags ? open_use(o->open_flags) : path_use(o->nr);
  if (use == SBX_LEARN_EXEC && !r->program) {
    /* The program itself, which sbx-run always lets start. */
    r->program = g_strdup(o->path);
    return;
  }
  note_path(r, o->path, use);
  note_path(r, o->path2, use);
}

/* ---- running the program --------------------------------------------------
 */

const char *const sbx_learn_enosys_calls[] = {
    "clone3",         "openat2",           "io_uring_setup",
    "io_uring_enter", "io_uring_register", NULL};

/* The learning filter: every call notifies, except the one that hands the
 * listener over (on a descriptor the program is unlikely to reuse) and
 * those sbx-run answers with ENOSYS. */
static gboolean learning_filter(int chan_fd, sbx_bpf_program *out,
                                GError **error) {
  GString *t = g_string_new(NULL);
  g_string_append_printf(t, "@default user-notify\nsendmsg: arg0 == %d\n",
                         chan_fd);
  for (const char *const *c = sbx_learn_enosys_calls; *c; c++)
    g_string_append_printf(t, "%s: return ENOSYS\n", *c);
  g_autofree char *text = g_string_free(t, FALSE);
  sbx_policy *pol =
      sbx_policy_parse_string(text, "sbx-learn:observe.policy", NULL, error);
  if (!pol)
    return FALSE;
  gboolean ok = sbx_bpf_compile(pol, out, error);
  sbx_policy_free(pol);
  return ok;
}

/* The terminal's interrupt and quit keys are for the program: sbx-learn
 * ignores them while it runs (as system(3) does), so stopping a server
 * with ^C still leaves a record to write. */
static const int terminal_signals[] = {SIGINT, SIGQUIT};

/* Between fork and exec. Async-signal-safe. */
static _Noreturn void run_child(int chan, int chan_fd,
                                const sbx_bpf_program *prog,
                                const char *program, char **argv,
                                const struct sigaction *saved) {
  for (size_t i = 0; i < G_N_ELEMENTS(terminal_signals); i++)
    sigaction(terminal_signals[i], &saved[i], NULL);
  int err = 0;
  if (dup3(chan, chan_fd, O_CLOEXEC) < 0 ||
      prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    err = errno;
  int listener = -1;
  if (!err) {
    listener =
        sbx_seccomp_load_raw(prog->insns, prog->len, SBX_SECCOMP_NEW_LISTENER);
    if (listener < 0)
      err = -listener;
  }
  if (err) {
    (void)send(chan, &err, sizeof(err), MSG_NOSIGNAL);
    _exit(125);
  }
  /* From here every call but this sendmsg waits for the observer. */
  if (sbx_unotify_send_listener(chan_fd, &err, sizeof(err), listener) < 0)
    _exit(125);
  execve(program, argv, environ);
  _exit(errno == ENOENT ? 127 : 126);
}

static int exit_code(int status) {
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  if (WIFSIGNALED(status))
    return 128 + WTERMSIG(status);
  return 125;
}

/* The parent's side: takes the listener, observes to the end, reaps. */
static int observe(pid_t pid, int sv[2], int fork_err, sbx_learn_record *r,
                   GError **error) {
  close(sv[1]);
  if (pid < 0) {
    close(sv[0]);
    g_set_error(error, SBX_LEARN_ERROR, SBX_LEARN_ERROR_SETUP, "fork: %s",
                g_strerror(fork_err));
    return -1;
  }
  int child_err = 0, listener = -1;
  ssize_t n = sbx_unotify_recv_listener(sv[0], &child_err, sizeof(child_err),
                                        &listener, 0);
  close(sv[0]);
  sbx_unotify_observer *o = NULL;
  if (n == (ssize_t)sizeof(child_err) && listener >= 0)
    o = sbx_unotify_observer_new(listener, on_observation, r, error);
  else if (listener >= 0)
    close(listener);
  if (!o) {
    if (error && !*error)
      g_set_error(error, SBX_LEARN_ERROR, SBX_LEARN_ERROR_SETUP,
                  "installing the observing seccomp filter failed: %s%s",
                  g_strerror(child_err ? child_err : EPROTO),
                  child_err == EBUSY ? " (this process already runs under "
                                       "another supervisor's listener)"
                                     : "");
    kill(pid, SIGKILL);
    int st;
    waitpid(pid, &st, 0);
    return -1;
  }
  /* Until the last filtered process is gone (POLLHUP): children too. */
  for (;;) {
    struct pollfd p = {.fd = sbx_unotify_observer_listener(o),
                       .events = POLLIN};
    if (poll(&p, 1, -1) < 0) {
      if (errno == EINTR)
        continue;
      break;
    }
    if (p.revents & POLLIN) {
      int rc = sbx_unotify_observer_handle_one(o);
      if (rc < 0 && rc != -EAGAIN)
        fprintf(stderr, "sbx-learn: observer: %s\n", g_strerror(-rc));
    } else if (p.revents & (POLLHUP | POLLERR | POLLNVAL)) {
      break;
    }
  }
  sbx_unotify_observer_free(o);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return exit_code(status);
}

int sbx_learn_run(char **argv, sbx_learn_record *r, GError **error) {
  g_autofree char *program = g_find_program_in_path(argv[0]);
  if (!program) {
    g_set_error(error, SBX_LEARN_ERROR, SBX_LEARN_ERROR_NOT_FOUND,
                "%s: not found, or not executable (PATH is searched for a "
                "name without '/')",
                argv[0]);
    return -1;
  }
  struct rlimit rl;
  int chan_fd = 1023;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 1024)
    chan_fd = (int)rl.rlim_cur - 1;
  sbx_bpf_program prog = {0};
  if (!learning_filter(chan_fd, &prog, error))
    return -1;
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
    int err = errno;
    g_set_error(error, SBX_LEARN_ERROR, SBX_LEARN_ERROR_SETUP, "socketpair: %s",
                g_strerror(err));
    sbx_bpf_program_clear(&prog);
    return -1;
  }
  struct sigaction ignore, saved[G_N_ELEMENTS(terminal_signals)];
  memset(&ignore, 0, sizeof(ignore));
  ignore.sa_handler = SIG_IGN;
  for (size_t i = 0; i < G_N_ELEMENTS(terminal_signals); i++)
    sigaction(terminal_signals[i], &ignore, &saved[i]);
  fflush(NULL); /* the child's copy of our stdio buffers stays empty */
  pid_t pid = fork();
  if (pid == 0)
    run_child(sv[1], chan_fd, &prog, program, argv, saved);
  int fork_err = errno;
  sbx_bpf_program_clear(&prog);
  int status = observe(pid, sv, fork_err, r, error);
  for (size_t i = 0; i < G_N_ELEMENTS(terminal_signals); i++)
    sigaction(terminal_signals[i], &saved[i], NULL);
  return status;
}
