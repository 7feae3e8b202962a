/* Entering new namespaces, the part that runs in a process setting itself
 * up or in a clone child (namespaces.c holds the GError wrappers): raw
 * syscalls and fixed buffers only. Trusts the parent's configuration;
 * refuses an identity the caller cannot assume rather than keeping the old
 * one. */
#include "sandbox/kernel/namespaces/namespaces.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/capability.h>

#include "sandbox/base/strbuf.h"
#include "sandbox/kernel/namespaces/credentials.h"

static const char *const kKindNames[SBX_NS_KINDS] = {
    "user", "pid", "net", "ipc", "uts", "mnt", "cgroup",
};

const char *sbx_ns_kind_name(int index) {
  if (index < 0 || index >= SBX_NS_KINDS)
    return NULL;
  return kKindNames[index];
}

int sbx_ns_clone_flags(unsigned namespaces) {
  int flags = 0;
  if (namespaces & SBX_NS_USER)
    flags |= CLONE_NEWUSER;
  if (namespaces & SBX_NS_PID)
    flags |= CLONE_NEWPID;
  if (namespaces & SBX_NS_NET)
    flags |= CLONE_NEWNET;
  if (namespaces & SBX_NS_IPC)
    flags |= CLONE_NEWIPC;
  if (namespaces & SBX_NS_UTS)
    flags |= CLONE_NEWUTS;
  if (namespaces & SBX_NS_MOUNT)
    flags |= CLONE_NEWNS;
  if (namespaces & SBX_NS_CGROUP)
    flags |= CLONE_NEWCGROUP;
  return flags;
}

bool sbx_ns_refusal(int err) {
  return err == EPERM || err == ENOSPC || err == ENOSYS || err == EUSERS ||
         err == EACCES;
}

void sbx_ns_config_init(sbx_ns_config *cfg) {
  cfg->namespaces = SBX_NS_ALL;
  uid_t uid = geteuid();
  gid_t gid = getegid();
  /* uid 0 owns most of the system's files even without capabilities. */
  cfg->uid = uid == 0 ? 65534 : uid;
  cfg->gid = uid == 0 ? 65534 : gid;
  cfg->hostname = "sbx";
  cfg->loopback = false;
}

/* Writes all of text to path; Async-signal-safe. */
static int write_file(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  size_t len = strlen(text);
  ssize_t n = write(fd, text, len);
  int err = n < 0 ? errno : 0;
  close(fd);
  if (n < 0)
    return -err;
  return (size_t)n == len ? 0 : -EIO;
}

/* True when /proc/self/setgroups says "deny": setgroups(2) is refused in
 * this user namespace and in every one created below it, whatever the
 * caller's capabilities. Async-signal-safe. */
static bool setgroups_denied(void) {
  char buf[8] = {0};
  int fd = open("/proc/self/setgroups", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  ssize_t n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  return n >= 4 && strncmp(buf, "deny", 4) == 0;
}

static void proc_path(char *buf, size_t cap, pid_t pid, const char *leaf) {
  sbx_strbuf sb;
  sbx_strbuf_init(&sb, buf, cap);
  sbx_strbuf_add(&sb, "/proc/");
  if (pid > 0)
    sbx_strbuf_add_u64(&sb, (uint64_t)pid);
  else
    sbx_strbuf_add(&sb, "self");
  sbx_strbuf_add_char(&sb, '/');
  sbx_strbuf_add(&sb, leaf);
  sbx_strbuf_finish(&sb);
}

static void id_line(char *buf, size_t cap, uint64_t id) {
  sbx_strbuf sb;
  sbx_strbuf_init(&sb, buf, cap);
  sbx_strbuf_add_u64(&sb, id);
  sbx_strbuf_add_char(&sb, ' ');
  sbx_strbuf_add_u64(&sb, id);
  sbx_strbuf_add(&sb, " 1\n");
  sbx_strbuf_finish(&sb);
}

int sbx_ns_write_id_maps_raw(pid_t pid, uid_t uid, gid_t gid,
                             bool deny_setgroups, const char **failed_step) {
  char path[64], line[64];
  int rc;
  const char *step;
  if (deny_setgroups) {
    proc_path(path, sizeof(path), pid, "setgroups");
    rc = write_file(path, "deny");
    step = "write \"deny\" to /proc/PID/setgroups";
    if (rc && rc != -ENOENT)
      goto fail;
  }
  proc_path(path, sizeof(path), pid, "uid_map");
  id_line(line, sizeof(line), uid);
  step = "write /proc/PID/uid_map";
  if ((rc = write_file(path, line)))
    goto fail;
  proc_path(path, sizeof(path), pid, "gid_map");
  id_line(line, sizeof(line), gid);
  step = "write /proc/PID/gid_map";
  if ((rc = write_file(path, line)))
    goto fail;
  return 0;
fail:
  if (failed_step)
    *failed_step = step;
  return rc;
}

/* CAP_SETUID and CAP_SETGID effective in the caller's user namespace. */
static bool can_set_ids(void) {
  struct __user_cap_header_struct hdr = {.version =
                                             _LINUX_CAPABILITY_VERSION_3};
  struct __user_cap_data_struct data[2];
  if (syscall(SYS_capget, &hdr, data) != 0)
    return false;
  uint32_t need = (1u << CAP_SETUID) | (1u << CAP_SETGID);
  return (data[0].effective & need) == need;
}

/* Becomes uid/gid with no supplementary groups (clear_groups) on the
 * calling thread only; raw syscalls so glibc does not broadcast. */
static int switch_ids(uid_t uid, gid_t gid, bool clear_groups,
                      const char **step) {
  if (clear_groups && syscall(SYS_setgroups, 0, NULL) != 0) {
    *step = "setgroups(0, NULL)";
    return -errno;
  }
  if (syscall(SYS_setresgid, gid, gid, gid) != 0) {
    *step = "setresgid";
    return -errno;
  }
  if (syscall(SYS_setresuid, uid, uid, uid) != 0) {
    *step = "setresuid";
    return -errno;
  }
  return 0;
}

static int set_hostname(const sbx_ns_config *cfg, const char **step) {
  if (!(cfg->namespaces & SBX_NS_UTS) || !cfg->hostname)
    return 0;
  if (sethostname(cfg->hostname, strlen(cfg->hostname)) != 0) {
    *step = "sethostname";
    return -errno;
  }
  return 0;
}

/* Sets IFF_UP on "lo" of the calling process's network namespace. */
static int loopback_up(const char **step) {
  int rc = 0;
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *step = "socket for the loopback";
    return -errno;
  }
  struct ifreq ifr;
  memset(&ifr, 0, sizeof(ifr));
  memcpy(ifr.ifr_name, "lo", 3);
  if (ioctl(fd, SIOCGIFFLAGS, &ifr) != 0) {
    *step = "SIOCGIFFLAGS lo";
    rc = -errno;
  } else {
    ifr.ifr_flags = (short)(ifr.ifr_flags | IFF_UP);
    if (ioctl(fd, SIOCSIFFLAGS, &ifr) != 0) {
      *step = "SIOCSIFFLAGS lo up";
      rc = -errno;
    }
  }
  close(fd);
  return rc;
}

/* Sets IFF_UP on "lo" of the new network namespace. Needs CAP_NET_ADMIN
 * in its user namespace: before any change of uid drops it. */
static int raise_loopback(const sbx_ns_config *cfg, const char **step) {
  if (!(cfg->namespaces & SBX_NS_NET) || !cfg->loopback)
    return 0;
  return loopback_up(step);
}

int sbx_ns_make_net_beside_raw(pid_t pid, const char **failed_step) {
  const char *step = "pidfd_open of the process";
  int rc = 0;
  int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
  if (pidfd < 0) {
    rc = -errno;
    goto out;
  }
  if (setns(pidfd, CLONE_NEWUSER) != 0) {
    step = "setns into the process's user namespace";
    rc = -errno;
  } else if (unshare(CLONE_NEWNET) != 0) {
    step = "unshare(CLONE_NEWNET)";
    rc = -errno;
  } else {
    rc = loopback_up(&step);
  }
  close(pidfd);
  if (rc == 0) {
    rc = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
    if (rc < 0) {
      step = "open /proc/thread-self/ns/net";
      rc = -errno;
    }
  }
out:
  if (rc < 0 && failed_step)
    *failed_step = step;
  return rc;
}

int sbx_ns_enter_raw(const sbx_ns_config *cfg, const char **failed_step) {
  const char *step = NULL;
  int rc = 0;
  if (geteuid() != cfg->uid || getegid() != cfg->gid) {
    /* Changing identity needs privilege here; after unshare the maps could
     * only name the uid we already have. */
    if (!can_set_ids()) {
      step = "switch to the configured uid/gid (needs CAP_SETUID/SETGID)";
      rc = -EPERM;
      goto out;
    }
    if ((rc = switch_ids(cfg->uid, cfg->gid, !setgroups_denied(), &step)))
      goto out;
    /* A uid change made us undumpable, and only a dumpable process may
     * open its own /proc/self/uid_map. */
    if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0) {
      step = "PR_SET_DUMPABLE 1";
      rc = -errno;
      goto out;
    }
  } else if (can_set_ids() && !setgroups_denied() &&
             syscall(SYS_setgroups, 0, NULL) != 0) {
    step = "setgroups(0, NULL)";
    rc = -errno;
    goto out;
  }
  if (unshare(sbx_ns_clone_flags(cfg->namespaces)) != 0) {
    step = "unshare";
    rc = -errno;
    goto out;
  }
  if (cfg->namespaces & SBX_NS_USER) {
    /* We write our own maps, holding no capability in the parent
     * namespace: the kernel insists on "deny" first. */
    rc = sbx_ns_write_id_maps_raw(0, cfg->uid, cfg->gid, true, &step);
    if (rc)
      goto out;
  }
  rc = set_hostname(cfg, &step);
  if (rc == 0)
    rc = raise_loopback(cfg, &step);
out:
  if (rc && failed_step)
    *failed_step = step;
  return rc;
}

/* Runs in the clone child. Async-signal-safe. */
static void child_fail(const char *step, int err) {
  char buf[256];
  sbx_strbuf sb;
  sbx_strbuf_init(&sb, buf, sizeof(buf));
  sbx_strbuf_add(&sb, "sbx: namespace setup failed: ");
  sbx_strbuf_add(&sb, step);
  sbx_strbuf_add(&sb, ": errno ");
  sbx_strbuf_add_i64(&sb, err);
  sbx_strbuf_add_char(&sb, '\n');
  size_t len = sbx_strbuf_finish(&sb);
  if (len >= sizeof(buf))
    len = sizeof(buf) - 1;
  ssize_t ignored = write(STDERR_FILENO, buf, len);
  (void)ignored;
  _exit(127);
}

/* Runs in the clone child. Async-signal-safe. */
static void child_setup(const sbx_ns_config *cfg, int release_fd,
                        bool privileged, bool clear_groups) {
  const char *step = NULL;
  char go = 0;
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0)
    child_fail("PR_SET_PDEATHSIG", errno);
  /* EOF instead of the byte: the parent died or gave up on us. */
  ssize_t n;
  do {
    n = read(release_fd, &go, 1);
  } while (n < 0 && errno == EINTR);
  if (n != 1 || go != 'g')
    _exit(127);
  close(release_fd);
  /* Without a user namespace of its own a privileged parent's child still
   * holds the host's capabilities here: empty the bounding set while
   * CAP_SETPCAP is there (the uid change below clears the others), so no
   * later exec could ever regain one. */
  if (privileged && !(cfg->namespaces & SBX_NS_USER)) {
    int drop = sbx_creds_drop_bounding_set_raw();
    if (drop)
      child_fail("dropping the bounding set", -drop);
  }
  /* While the namespace's capabilities are still held. */
  int rc = raise_loopback(cfg, &step);
  if (rc)
    child_fail(step, -rc);
  rc = switch_ids(cfg->uid, cfg->gid, clear_groups, &step);
  if (rc)
    child_fail(step, -rc);
  rc = set_hostname(cfg, &step);
  if (rc)
    child_fail(step, -rc);
}

/* Async-signal-safe. */
long sbx_ns_clone_raw(const sbx_ns_config *cfg, sbx_ns_clone_state *state) {
  int release[2];
  state->release_fd = -1;
  state->clone_refused = false;
  if (pipe2(release, O_CLOEXEC) != 0) {
    state->failed_step = "pipe2 for the namespace child";
    return -errno;
  }
  state->privileged = can_set_ids();
  /* Read before the clone: the child's namespace inherits the refusal. */
  bool clear_groups = state->privileged && !setgroups_denied();
  long pid = syscall(
      SYS_clone, (unsigned long)sbx_ns_clone_flags(cfg->namespaces) | SIGCHLD,
      NULL, NULL, NULL, 0);
  if (pid == 0) {
    close(release[1]);
    child_setup(cfg, release[0], state->privileged, clear_groups);
    return 0;
  }
  int err = errno;
  close(release[0]);
  if (pid < 0) {
    close(release[1]);
    state->failed_step = "clone with new namespaces";
    state->clone_refused = true;
    return -err;
  }
  state->release_fd = release[1];
  return pid;
}

/* Async-signal-safe. */
int sbx_ns_clone_release_raw(const sbx_ns_config *cfg, pid_t pid,
                             sbx_ns_clone_state *state) {
  int rc = 0;
  if (cfg->namespaces & SBX_NS_USER)
    rc = sbx_ns_write_id_maps_raw(pid, cfg->uid, cfg->gid, !state->privileged,
                                  &state->failed_step);
  if (rc == 0 && write(state->release_fd, "g", 1) != 1) {
    rc = -errno;
    state->failed_step = "release the child";
  }
  close(state->release_fd);
  state->release_fd = -1;
  if (rc) {
    kill(pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
    }
  }
  return rc;
}
