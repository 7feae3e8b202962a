/* Namespaces, credentials, fd hygiene, rlimits, parent death and the empty
 * root, each in real forked or cloned children with a positive control. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <linux/securebits.h>

#include "sandbox/kernel/namespaces/credentials.h"
#include "sandbox/kernel/namespaces/fds.h"
#include "sandbox/kernel/namespaces/namespaces.h"
#include "sandbox/kernel/namespaces/rlimits.h"
#include "sandbox/kernel/namespaces/rootfs.h"
#include "sandbox/kernel/namespaces/status.h"

typedef int (*child_fn)(void *arg);

static int wait_status(pid_t pid) {
  int status;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int run_forked(child_fn fn, void *arg) {
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0)
    _exit(fn(arg));
  return wait_status(pid);
}

/* Runs fn in a child cloned into every namespace, its loopback up or
 * not. */
static int run_cloned_with(child_fn fn, void *arg, bool loopback) {
  sbx_ns_config cfg;
  sbx_ns_config_init(&cfg);
  cfg.loopback = loopback;
  GError *error = NULL;
  pid_t pid = sbx_ns_clone(&cfg, &error);
  if (pid < 0)
    ck_abort_msg("sbx_ns_clone: %s", error->message);
  if (pid == 0)
    _exit(fn(arg));
  return wait_status(pid);
}

static int run_cloned(child_fn fn, void *arg) {
  return run_cloned_with(fn, arg, false);
}

/* The value of a "Key:" line of /proc/self/status, parsed as hex. */
static unsigned long long status_hex(const char *key) {
  char *text = NULL;
  ck_assert(g_file_get_contents("/proc/self/status", &text, NULL, NULL));
  char *line = strstr(text, key);
  ck_assert_ptr_nonnull(line);
  unsigned long long v = strtoull(line + strlen(key) + 1, NULL, 16);
  g_free(text);
  return v;
}

static int in_new_namespaces(void *arg) {
  const sbx_ns_reference *ref = arg;
  sbx_layer_status st;
  sbx_status_collect(ref, &st);
  for (int i = 0; i < SBX_NS_KINDS; i++)
    if (st.ns[i] != SBX_TRI_YES)
      return 10 + i;
  if (getpid() != 1)
    return 20;
  sbx_ns_config cfg;
  sbx_ns_config_init(&cfg);
  if (getuid() != cfg.uid || getgid() != cfg.gid)
    return 21;
  char host[64];
  if (gethostname(host, sizeof(host)) != 0 || strcmp(host, "sbx") != 0)
    return 22;
  return 0;
}

START_TEST(ns_clone_child_is_pid_1_in_new_user_pid_net_ipc_uts_namespaces) {
  sbx_ns_reference ref;
  ck_assert_int_eq(sbx_status_record_reference(&ref), 0);
  sbx_layer_status self;
  sbx_status_collect(&ref, &self); /* control: the test itself is on the host */
  for (int i = 0; i < SBX_NS_KINDS; i++)
    ck_assert_int_eq(self.ns[i], SBX_TRI_NO);
  ck_assert_int_ne(getpid(), 1);
  ck_assert_int_eq(run_cloned(in_new_namespaces, &ref), 0);
}
END_TEST

static int listener(struct sockaddr_in *addr) {
  int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ck_assert_int_ge(s, 0);
  memset(addr, 0, sizeof(*addr));
  addr->sin_family = AF_INET;
  addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ck_assert_int_eq(bind(s, (struct sockaddr *)addr, sizeof(*addr)), 0);
  socklen_t len = sizeof(*addr);
  ck_assert_int_eq(getsockname(s, (struct sockaddr *)addr, &len), 0);
  ck_assert_int_eq(listen(s, 8), 0);
  return s;
}

static int connect_to(void *arg) {
  struct sockaddr_in *addr = arg;
  int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0)
    return 50;
  int rc = connect(s, (struct sockaddr *)addr, sizeof(*addr));
  close(s);
  return rc == 0 ? 0 : 1;
}

static int only_loopback_and_no_host_listener(void *arg) {
  struct if_nameindex *ifs = if_nameindex();
  if (!ifs)
    return 10;
  int n = 0;
  bool only_lo = true;
  for (struct if_nameindex *i = ifs; i->if_index; i++, n++)
    only_lo = only_lo && strcmp(i->if_name, "lo") == 0;
  if_freenameindex(ifs);
  if (n != 1 || !only_lo)
    return 11;
  return connect_to(arg) == 1 ? 0 : 12;
}

START_TEST(ns_clone_child_has_only_loopback_and_cannot_reach_the_host) {
  struct sockaddr_in addr;
  int s = listener(&addr);
  ck_assert_int_eq(run_forked(connect_to, &addr), 0); /* control */
  ck_assert_int_eq(run_cloned(only_loopback_and_no_host_listener, &addr), 0);
  close(s);
}
END_TEST

/* Listens on 127.0.0.1 at the port of *arg (which the host's listener
 * holds), connects to itself there and exchanges a byte. 0 when it did. */
static int serve_itself_on_the_hosts_port(void *arg) {
  struct sockaddr_in addr = *(const struct sockaddr_in *)arg;
  int srv = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int cli = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (srv < 0 || cli < 0)
    return 10;
  if (bind(srv, (struct sockaddr *)&addr, sizeof(addr)) != 0)
    return 11;
  if (listen(srv, 1) != 0)
    return 12;
  if (connect(cli, (struct sockaddr *)&addr, sizeof(addr)) != 0)
    return 13;
  int conn = accept4(srv, NULL, NULL, SOCK_CLOEXEC);
  char c = 'x';
  if (conn < 0 || write(cli, &c, 1) != 1 || read(conn, &c, 1) != 1 || c != 'x')
    return 14;
  return 0;
}

START_TEST(ns_clone_with_loopback_serves_its_own_127_0_0_1_not_the_hosts) {
  struct sockaddr_in addr;
  int s = listener(&addr);
  /* Control: on the host the port is taken. */
  ck_assert_int_eq(run_forked(serve_itself_on_the_hosts_port, &addr), 11);
  /* Down (the default), the namespace has no 127.0.0.1 to use. */
  ck_assert_int_ne(run_cloned(serve_itself_on_the_hosts_port, &addr), 0);
  /* Up, the port is the namespace's own and its client reaches its own
   * server; the host's listener saw nothing. */
  ck_assert_int_eq(run_cloned_with(serve_itself_on_the_hosts_port, &addr, true),
                   0);
  ck_assert_int_eq(
      run_cloned_with(only_loopback_and_no_host_listener, &addr, true), 0);
  ck_assert_int_eq(fcntl(s, F_SETFL, O_NONBLOCK), 0);
  ck_assert_int_lt(accept(s, NULL, NULL), 0);
  ck_assert_int_eq(errno, EAGAIN);
  close(s);
}
END_TEST

static int first_child_is_pid_1(void *arg) {
  const sbx_ns_reference *ref = arg;
  sbx_ns_config cfg;
  sbx_ns_config_init(&cfg);
  const char *step = NULL;
  if (sbx_ns_enter_raw(&cfg, &step) != 0)
    return 10;
  sbx_layer_status st;
  sbx_status_collect(ref, &st);
  /* unshare(CLONE_NEWPID) moves children, not the caller. */
  if (st.ns[0] != SBX_TRI_YES || st.ns[2] != SBX_TRI_YES ||
      st.ns[1] != SBX_TRI_NO || st.ns_pid_for_children == SBX_TRI_NO)
    return 11;
  if (getuid() != cfg.uid)
    return 12;
  pid_t pid = fork();
  if (pid == 0)
    _exit(getpid() == 1 ? 0 : 1);
  int status;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
    return 13;
  return WEXITSTATUS(status) == 0 ? 0 : 14;
}

START_TEST(ns_enter_in_process_makes_the_first_child_pid_1) {
  sbx_ns_reference ref;
  ck_assert_int_eq(sbx_status_record_reference(&ref), 0);
  ck_assert_int_eq(run_forked(first_child_is_pid_1, &ref), 0);
}
END_TEST

static int credentials_dropped(void *arg) {
  (void)arg;
  /* Control: inside a new user namespace the process holds every cap. */
  if (status_hex("CapEff") == 0 || status_hex("CapBnd") == 0)
    return 10;
  sbx_creds_config cfg;
  sbx_creds_config_init(&cfg);
  cfg.die_with_parent = false;
  sbx_creds_result res;
  if (sbx_creds_apply_raw(&cfg, &res) != 0) {
    fprintf(stderr, "creds: %s: %s\n", res.failed_step, strerror(res.error));
    return 11;
  }
  static const char *const sets[] = {"CapInh", "CapPrm", "CapEff", "CapBnd",
                                     "CapAmb"};
  for (int i = 0; i < 5; i++)
    if (status_hex(sets[i]) != 0)
      return 20 + i;
  if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
    return 30;
  if (prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != 0)
    return 31;
  if (getsid(0) != getpid())
    return 32;
  /* No controlling terminal, so no TIOCSTI target. */
  int tty = open("/dev/tty", O_RDWR | O_CLOEXEC);
  if (tty >= 0 || errno != ENXIO)
    return 33;
  sbx_layer_status st;
  sbx_status_collect(NULL, &st);
  if (st.caps_empty != SBX_TRI_YES || st.no_new_privs != SBX_TRI_YES ||
      st.dumpable != SBX_TRI_NO || st.new_session != SBX_TRI_YES ||
      st.ns[0] != SBX_TRI_YES || st.ns[1] != SBX_TRI_YES)
    return 34;
  /* Capabilities cannot come back. */
  if (setuid(0) == 0)
    return 35;
  /* Inside its user namespace it had CAP_SETPCAP, so the lock held. */
  if (!res.securebits_locked ||
      !(prctl(PR_GET_SECUREBITS, 0, 0, 0, 0) & SECBIT_NOROOT_LOCKED))
    return 36;
  return 0;
}

START_TEST(creds_apply_empties_every_capability_set_in_a_new_user_namespace) {
  ck_assert_int_eq(run_cloned(credentials_dropped, NULL), 0);
}
END_TEST

typedef struct {
  char *dir;
  char *file;
} host_tree;

static int empty_root(void *arg) {
  host_tree *t = arg;
  if (access(t->file, R_OK) != 0)
    return 10; /* control: visible before */
  sbx_bind_mount binds[] = {{t->dir, "/data", 0}};
  sbx_root_config cfg = {binds, 1, true, true, true};
  sbx_root_result res;
  if (sbx_root_make_empty_raw(&cfg, &res) != 0) {
    fprintf(stderr, "root: %s %s: %s\n", res.failed_step,
            res.failed_path ? res.failed_path : "", strerror(res.error));
    return 11;
  }
  if (res.mode != SBX_ROOT_EMPTY || !res.proc_mounted)
    return 12;
  if (access(t->file, F_OK) == 0 || errno != ENOENT)
    return 13;
  if (access("/etc/passwd", F_OK) == 0 || access("/usr", F_OK) == 0)
    return 14;
  char *inside = g_build_filename("/data", "f.txt", NULL);
  int fd = open(inside, O_RDONLY | O_CLOEXEC);
  g_free(inside);
  if (fd < 0)
    return 15;
  close(fd);
  if (open("/data/new", O_WRONLY | O_CREAT | O_CLOEXEC, 0644) >= 0 ||
      errno != EROFS)
    return 16;
  if (mkdir("/x", 0755) == 0 || errno != EROFS)
    return 17;
  fd = open("/tmp/ok", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    return 18;
  close(fd);
  fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (fd < 0 || write(fd, "x", 1) != 1)
    return 19;
  close(fd);
  if (access("/proc/self/status", R_OK) != 0 || access("/proc/1", F_OK) != 0)
    return 20;
  return 0;
}

START_TEST(rootfs_empty_root_hides_every_host_file_but_the_bound_ones) {
  host_tree t;
  t.dir = g_dir_make_tmp("sbx-rootfs-XXXXXX", NULL);
  ck_assert_ptr_nonnull(t.dir);
  ck_assert_int_eq(chmod(t.dir, 0755), 0); /* root's sandbox is nobody */
  t.file = g_build_filename(t.dir, "f.txt", NULL);
  ck_assert(g_file_set_contents(t.file, "host", -1, NULL));
  ck_assert_int_eq(run_cloned(empty_root, &t), 0);
  unlink(t.file);
  rmdir(t.dir);
  g_free(t.file);
  g_free(t.dir);
}
END_TEST

static bool contains(const int *fds, int n, int fd) {
  for (int i = 0; i < n; i++)
    if (fds[i] == fd)
      return true;
  return false;
}

static int hygiene(void *arg) {
  (void)arg;
  int dir = open("/", O_RDONLY | O_DIRECTORY); /* no CLOEXEC: a leak */
  int sock = socket(AF_UNIX, SOCK_STREAM, 0);
  int p[2];
  if (dir < 0 || sock < 0 || pipe(p) != 0)
    return 10;
  int before[256];
  int n = sbx_fd_list_open_raw(before, 256);
  if (!contains(before, n, dir) || !contains(before, n, sock))
    return 11; /* control */
  sbx_fd_keep keep[] = {
      {0, SBX_FD_SAME, false},
      {1, SBX_FD_SAME, false},
      {2, SBX_FD_SAME, false},
      {p[1], 3, true},
  };
  if (sbx_fd_keep_only_raw(keep, 4) != 0)
    return 12;
  int after[256];
  n = sbx_fd_list_open_raw(after, 256);
  if (n != 4 || after[0] != 0 || after[1] != 1 || after[2] != 2 ||
      after[3] != 3)
    return 13;
  if (fcntl(3, F_GETFD) != FD_CLOEXEC || fcntl(0, F_GETFD) != 0)
    return 14;
  struct stat st;
  if (fstat(3, &st) != 0 || !S_ISFIFO(st.st_mode))
    return 15;
  int kept[] = {0, 1, 2, 3};
  int stray = -1;
  if (sbx_fd_verify_only_raw(kept, 4, &stray) != 0)
    return 16;
  /* A new descriptor is noticed. */
  int extra = dup(3);
  if (sbx_fd_verify_only_raw(kept, 4, &stray) != -ENOTRECOVERABLE ||
      stray != extra)
    return 17;
  close(extra);
  /* So is one at the last number below the limit. */
  struct rlimit rl;
  getrlimit(RLIMIT_NOFILE, &rl);
  int last = (int)(rl.rlim_cur > 4096 ? 4095 : rl.rlim_cur - 1);
  rl.rlim_cur = (rlim_t)last + 1;
  if (setrlimit(RLIMIT_NOFILE, &rl) != 0 || dup2(0, last) != last)
    return 18;
  if (sbx_fd_verify_only_raw(kept, 4, &stray) != -ENOTRECOVERABLE ||
      stray != last)
    return 19;
  return 0;
}

START_TEST(fd_hygiene_leaves_only_the_kept_fds_at_their_numbers) {
  ck_assert_int_eq(run_forked(hygiene, NULL), 0);
}
END_TEST

static int permutation(void *arg) {
  (void)arg;
  int p[2], q[2];
  if (pipe(p) != 0 || pipe(q) != 0)
    return 10;
  /* Park everything high, then make fd 5 p's read end and fd 3 q's. */
  if (dup2(p[0], 20) < 0 || dup2(q[0], 21) < 0 || dup2(p[1], 30) < 0 ||
      dup2(q[1], 31) < 0)
    return 11;
  close(p[0]);
  close(q[0]);
  close(p[1]);
  close(q[1]);
  if (dup2(20, 5) < 0 || dup2(21, 3) < 0)
    return 12;
  close(20);
  close(21);
  if (write(30, "p", 1) != 1 || write(31, "q", 1) != 1)
    return 13;
  sbx_fd_keep keep[] = {{2, SBX_FD_SAME, false}, {5, 3, false}, {3, 4, false}};
  if (sbx_fd_keep_only_raw(keep, 3) != 0)
    return 14;
  char c = 0;
  if (read(3, &c, 1) != 1 || c != 'p')
    return 15;
  if (read(4, &c, 1) != 1 || c != 'q')
    return 16;
  return fcntl(5, F_GETFD) == -1 && errno == EBADF ? 0 : 17;
}

START_TEST(fd_hygiene_moves_a_permutation_of_fds_without_clobbering) {
  ck_assert_int_eq(run_forked(permutation, NULL), 0);
}
END_TEST

START_TEST(fd_hygiene_refuses_duplicate_targets_and_closed_fds) {
  sbx_fd_keep dup_target[] = {{0, 3, false}, {1, 3, false}};
  ck_assert_int_eq(sbx_fd_keep_only_raw(dup_target, 2), -EINVAL);
  sbx_fd_keep closed[] = {{999, SBX_FD_SAME, false}};
  ck_assert_int_eq(sbx_fd_keep_only_raw(closed, 1), -EBADF);
}
END_TEST

/* poll(2) reports an O_PATH descriptor as not open (POLLNVAL); the
 * layout check must see it anyway. */
static int o_path_stray(void *arg) {
  (void)arg;
  struct rlimit rl = {32, 32};
  if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
    return 10;
  int kept[] = {0, 1, 2};
  int stray = -1;
  sbx_fd_keep keep[] = {
      {0, SBX_FD_SAME, false},
      {1, SBX_FD_SAME, false},
      {2, SBX_FD_SAME, false},
  };
  if (sbx_fd_keep_only_raw(keep, 3) != 0 ||
      sbx_fd_verify_only_raw(kept, 3, &stray) != 0)
    return 11; /* control: nothing stray */
  int path_fd = open("/tmp", O_PATH | O_DIRECTORY);
  if (path_fd < 0)
    return 12;
  struct pollfd pfd = {.fd = path_fd};
  if (poll(&pfd, 1, 0) != 1 || !(pfd.revents & POLLNVAL))
    return 13; /* what makes a poll-only check blind */
  if (sbx_fd_verify_only_raw(kept, 3, &stray) != -ENOTRECOVERABLE ||
      stray != path_fd)
    return 14;
  return 0;
}

START_TEST(fd_verify_notices_a_stray_o_path_descriptor) {
  ck_assert_int_eq(run_forked(o_path_stray, NULL), 0);
}
END_TEST

/* Without CAP_SETPCAP the bounding set cannot be dropped: a full one is
 * refused, never reported as emptied. */
static int bounding_undroppable(void *arg) {
  (void)arg;
  if (prctl(PR_CAPBSET_READ, CAP_SYS_ADMIN, 0, 0, 0) != 1)
    return 10; /* control: the set is full to begin with */
  struct __user_cap_header_struct hdr = {.version =
                                             _LINUX_CAPABILITY_VERSION_3};
  struct __user_cap_data_struct data[2] = {{0}};
  if (syscall(SYS_capset, &hdr, data) != 0)
    return 11;
  if (sbx_creds_drop_capabilities_raw() != -EPERM)
    return 12;
  return prctl(PR_CAPBSET_READ, CAP_SYS_ADMIN, 0, 0, 0) == 1 ? 0 : 13;
}

START_TEST(creds_drop_refuses_a_bounding_set_it_cannot_empty) {
  ck_assert_int_eq(run_forked(bounding_undroppable, NULL), 0);
}
END_TEST

/* The zygote drops its own bounding set once; each worker then finds it
 * empty in its status and needs no call per capability. */
static int bounding_dropped_then_found_empty(void *arg) {
  (void)arg;
  uint64_t bnd = 0, amb = 1;
  if (sbx_status_read_bounding_ambient_raw(&bnd, &amb) != 0 || bnd == 0 ||
      bnd != status_hex("CapBnd"))
    return 10; /* control: full inside a new user namespace */
  if (sbx_creds_drop_bounding_set_raw() != 0)
    return 11;
  if (prctl(PR_CAPBSET_READ, CAP_SYS_ADMIN, 0, 0, 0) != 0 ||
      prctl(PR_CAPBSET_READ, CAP_SETPCAP, 0, 0, 0) != 0)
    return 12;
  if (sbx_status_read_bounding_ambient_raw(&bnd, &amb) != 0 || bnd != 0 ||
      amb != 0)
    return 13;
  /* Found empty: succeeds without CAP_SETPCAP in any set. */
  struct __user_cap_header_struct hdr = {.version =
                                             _LINUX_CAPABILITY_VERSION_3};
  struct __user_cap_data_struct data[2] = {{0}};
  if (syscall(SYS_capset, &hdr, data) != 0)
    return 14;
  return sbx_creds_drop_bounding_set_raw() == 0 ? 0 : 15;
}

START_TEST(creds_bounding_set_dropped_once_is_found_empty_afterwards) {
  ck_assert_int_eq(run_cloned(bounding_dropped_then_found_empty, NULL), 0);
}
END_TEST

static int write_self(const char *leaf, const char *text) {
  char path[64];
  snprintf(path, sizeof(path), "/proc/self/%s", leaf);
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  ssize_t n = write(fd, text, strlen(text));
  close(fd);
  return n == (ssize_t)strlen(text) ? 0 : -1;
}

static int exit_zero(void *arg) {
  (void)arg;
  return 0;
}

/* As under `unshare -r`: root with every capability in a user namespace
 * whose setgroups is denied, where setgroups(2) fails whatever the
 * capabilities. sbx_ns_clone must still start its child there. */
static int clone_under_denied_setgroups(void *arg) {
  (void)arg;
  char map[64];
  uid_t uid = geteuid();
  gid_t gid = getegid();
  if (unshare(CLONE_NEWUSER) != 0 || write_self("setgroups", "deny") != 0)
    return 10;
  snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)uid);
  if (write_self("uid_map", map) != 0)
    return 11;
  snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)gid);
  if (write_self("gid_map", map) != 0)
    return 12;
  if (syscall(SYS_setgroups, 0, NULL) == 0 || errno != EPERM)
    return 13; /* control: the refusal the fix works around is real */
  sbx_ns_config cfg;
  sbx_ns_config_init(&cfg);
  cfg.uid = 0; /* the only ids mapped here */
  cfg.gid = 0;
  GError *error = NULL;
  pid_t pid = sbx_ns_clone(&cfg, &error);
  if (pid < 0) {
    g_printerr("sbx_ns_clone: %s\n", error->message);
    g_error_free(error);
    return 14;
  }
  if (pid == 0)
    _exit(getpid() == 1 ? exit_zero(NULL) : 15);
  int status;
  if (waitpid(pid, &status, 0) != pid)
    return 16;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

START_TEST(ns_clone_starts_in_a_user_namespace_that_denies_setgroups) {
  ck_assert_int_eq(run_forked(clone_under_denied_setgroups, NULL), 0);
}
END_TEST

static int limits(void *arg) {
  (void)arg;
  struct rlimit core_before;
  getrlimit(RLIMIT_CORE, &core_before);
  sbx_rlimit want[] = {
      {RLIMIT_NOFILE, 32, 64},
      {RLIMIT_CORE, 0, 0},
      {RLIMIT_FSIZE, 1 << 20, 1 << 20},
      {RLIMIT_AS, RLIM_INFINITY, RLIM_INFINITY}, /* cannot raise anything */
  };
  size_t bad = 99;
  if (sbx_rlimits_apply_raw(want, 4, &bad) != 0)
    return 10;
  struct rlimit rl;
  getrlimit(RLIMIT_NOFILE, &rl);
  if (rl.rlim_cur != 32 || rl.rlim_max != 64)
    return 11;
  getrlimit(RLIMIT_CORE, &rl);
  if (rl.rlim_cur != 0 || rl.rlim_max != 0)
    return 12;
  /* Never raised: asking for more than the hard limit keeps the hard. */
  sbx_rlimit more[] = {{RLIMIT_NOFILE, 1000, 1000}};
  if (sbx_rlimits_apply_raw(more, 1, &bad) != 0)
    return 13;
  getrlimit(RLIMIT_NOFILE, &rl);
  if (rl.rlim_cur != 64 || rl.rlim_max != 64)
    return 14;
  /* The limit is enforced: fd 64 cannot be allocated. */
  if (dup2(0, 64) != -1 || errno != EBADF)
    return 15;
  sbx_rlimit unknown[] = {{999, 1, 1}};
  if (sbx_rlimits_apply_raw(unknown, 1, &bad) != -EINVAL || bad != 0)
    return 16;
  return 0;
}

START_TEST(rlimits_are_applied_and_never_raised) {
  struct rlimit rl;
  getrlimit(RLIMIT_NOFILE, &rl);
  ck_assert(rl.rlim_cur > 64); /* control: the test runs with more */
  ck_assert_int_eq(run_forked(limits, NULL), 0);
}
END_TEST

START_TEST(rlimit_names_and_values_parse_as_profiles_write_them) {
  ck_assert_int_eq(sbx_rlimit_from_name("nofile"), RLIMIT_NOFILE);
  ck_assert_int_eq(sbx_rlimit_from_name("RLIMIT_AS"), RLIMIT_AS);
  ck_assert_int_eq(sbx_rlimit_from_name("Core"), RLIMIT_CORE);
  ck_assert_int_eq(sbx_rlimit_from_name("bogus"), -1);
  ck_assert_str_eq(sbx_rlimit_name(RLIMIT_NPROC), "RLIMIT_NPROC");
  rlim_t v;
  ck_assert(sbx_rlimit_parse_value("16M", &v, NULL));
  ck_assert_uint_eq(v, 16u << 20);
  ck_assert(sbx_rlimit_parse_value("unlimited", &v, NULL));
  ck_assert(v == RLIM_INFINITY);
  GError *error = NULL;
  ck_assert(!sbx_rlimit_parse_value("12Q", &v, &error));
  ck_assert_ptr_nonnull(strstr(error->message, "12Q"));
  g_error_free(error);
}
END_TEST

typedef struct {
  int release_read;
  bool arm;
} orphan_case;

/* The middle process: forks the grandchild, then exits. */
static int middle(void *arg) {
  orphan_case *c = arg;
  pid_t parent = getpid();
  int pidfd = (int)syscall(SYS_pidfd_open, parent, 0);
  pid_t pid = fork();
  if (pid == 0) {
    if (c->arm && sbx_creds_die_with_parent_raw(parent, pidfd) != 0)
      _exit(3);
    char b;
    /* Blocks until the test releases it: only the signal ends it early. */
    _exit(read(c->release_read, &b, 1) == 1 ? 0 : 4);
  }
  /* Give the grandchild time to arm: wait until it blocks in read. */
  for (int i = 0; i < 2000; i++) {
    char path[64], state = 0;
    snprintf(path, sizeof(path), "/proc/%d/stat", pid);
    char *text = NULL;
    if (g_file_get_contents(path, &text, NULL, NULL)) {
      char *p = strrchr(text, ')');
      state = p ? p[2] : 0;
      g_free(text);
    }
    if (state == 'S')
      break;
    usleep(1000);
  }
  return 0;
}

static int orphan_status(bool arm) {
  int p[2];
  ck_assert_int_eq(pipe(p), 0);
  ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
  orphan_case c = {p[0], arm};
  ck_assert_int_eq(run_forked(middle, &c), 0);
  /* The grandchild is ours now; release it (a dead one ignores this). */
  ck_assert_int_eq(write(p[1], "go", 2), 2);
  int status;
  pid_t pid = wait(&status);
  ck_assert_int_gt(pid, 0);
  close(p[0]);
  close(p[1]);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

START_TEST(pdeathsig_kills_the_child_when_its_parent_dies) {
  ck_assert_int_eq(orphan_status(false), 0); /* control: it survives */
  ck_assert_int_eq(orphan_status(true), 128 + SIGKILL);
}
END_TEST

static int already_orphaned(void *arg) {
  (void)arg;
  pid_t pid = fork();
  if (pid == 0)
    _exit(0);
  int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
  if (pidfd < 0)
    return 10;
  siginfo_t si;
  /* Wait for its exit without reaping, so the pidfd stays valid. */
  if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) != 0)
    return 11;
  if (sbx_creds_die_with_parent_raw(0, pidfd) != -ESRCH)
    return 12;
  if (sbx_creds_die_with_parent_raw(getppid(), -1) != 0)
    return 13; /* control: a live parent passes */
  return sbx_creds_die_with_parent_raw(getppid() + 100000, -1) == -ESRCH ? 0
                                                                         : 14;
}

START_TEST(die_with_parent_notices_a_parent_that_already_died) {
  ck_assert_int_eq(run_forked(already_orphaned, NULL), 0);
}
END_TEST

static int formatted(void *arg) {
  const sbx_ns_reference *ref = arg;
  sbx_creds_config cc;
  sbx_creds_config_init(&cc);
  cc.die_with_parent = false;
  sbx_creds_result cr;
  if (sbx_creds_apply_raw(&cc, &cr) != 0)
    return 10;
  sbx_layer_status st;
  sbx_status_collect(ref, &st);
  char buf[2048];
  size_t n = sbx_status_format(&st, buf, sizeof(buf));
  if (n >= sizeof(buf))
    return 11;
  if (!strstr(buf, "user=new pid=new net=new ipc=new uts=new mnt=new") ||
      !strstr(buf,
              "effective=0x0 permitted=0x0 inheritable=0x0 "
              "bounding=0x0 ambient=0x0") ||
      !strstr(buf, "no_new_privs: yes") || !strstr(buf, "dumpable: no") ||
      !strstr(buf, "session: new (pid 1)") || !strstr(buf, "seccomp: off"))
    return 12;
  /* Without seccomp it is not fully sandboxed. */
  return sbx_status_is_fully_sandboxed(&st) ? 13 : 0;
}

START_TEST(status_format_reports_every_layer_as_the_kernel_sees_it) {
  sbx_ns_reference ref;
  ck_assert_int_eq(sbx_status_record_reference(&ref), 0);
  ck_assert_int_eq(run_cloned(formatted, &ref), 0);
  sbx_layer_status host;
  sbx_status_collect(&ref, &host);
  char buf[2048];
  sbx_status_format(&host, buf, sizeof(buf));
  ck_assert_ptr_nonnull(strstr(buf, "user=host pid=host net=host"));
}
END_TEST

static int seccomp_counted(void *arg) {
  (void)arg;
  sbx_layer_status st;
  sbx_status_collect(NULL, &st);
  if (st.seccomp_mode != 0 || st.seccomp_filters != 0)
    return 10; /* control: none yet */
  struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  struct sock_fprog prog = {1, &allow};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    return 11;
  for (int i = 0; i < 2; i++)
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0)
      return 12;
  sbx_status_collect(NULL, &st);
  if (st.seccomp_mode != 2 || st.seccomp_filters != 2)
    return 13;
  char buf[2048];
  sbx_status_format(&st, buf, sizeof(buf));
  return strstr(buf, "seccomp: filter (2 filters)") ? 0 : 14;
}

START_TEST(status_counts_stacked_seccomp_filters) {
  ck_assert_int_eq(run_forked(seccomp_counted, NULL), 0);
}
END_TEST

static Suite *namespaces_suite(void) {
  Suite *s = suite_create("namespaces");
  TCase *tc = tcase_create("namespaces");
  tcase_set_timeout(tc, 20);
  tcase_add_test(
      tc, ns_clone_child_is_pid_1_in_new_user_pid_net_ipc_uts_namespaces);
  tcase_add_test(tc,
                 ns_clone_child_has_only_loopback_and_cannot_reach_the_host);
  tcase_add_test(tc,
                 ns_clone_with_loopback_serves_its_own_127_0_0_1_not_the_hosts);
  tcase_add_test(tc, ns_enter_in_process_makes_the_first_child_pid_1);
  tcase_add_test(
      tc, creds_apply_empties_every_capability_set_in_a_new_user_namespace);
  tcase_add_test(tc,
                 rootfs_empty_root_hides_every_host_file_but_the_bound_ones);
  tcase_add_test(tc, fd_hygiene_leaves_only_the_kept_fds_at_their_numbers);
  tcase_add_test(tc, fd_hygiene_moves_a_permutation_of_fds_without_clobbering);
  tcase_add_test(tc, fd_hygiene_refuses_duplicate_targets_and_closed_fds);
  tcase_add_test(tc, fd_verify_notices_a_stray_o_path_descriptor);
  tcase_add_test(tc, creds_drop_refuses_a_bounding_set_it_cannot_empty);
  tcase_add_test(tc, creds_bounding_set_dropped_once_is_found_empty_afterwards);
  tcase_add_test(tc, ns_clone_starts_in_a_user_namespace_that_denies_setgroups);
  tcase_add_test(tc, rlimits_are_applied_and_never_raised);
  tcase_add_test(tc, rlimit_names_and_values_parse_as_profiles_write_them);
  tcase_add_test(tc, pdeathsig_kills_the_child_when_its_parent_dies);
  tcase_add_test(tc, die_with_parent_notices_a_parent_that_already_died);
  tcase_add_test(tc, status_format_reports_every_layer_as_the_kernel_sees_it);
  tcase_add_test(tc, status_counts_stacked_seccomp_filters);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(namespaces_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
