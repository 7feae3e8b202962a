/* See without_filter.h. */
#include "sandbox/tests/degrade/without_filter.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <string.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif
#ifndef __NR_clone3
#define __NR_clone3 435
#endif

#define NS_FLAGS                                                              \
  (CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWNS | CLONE_NEWIPC | \
   CLONE_NEWUTS | CLONE_NEWCGROUP)

#define MAX_INSNS 64

typedef struct {
  struct sock_filter insns[MAX_INSNS];
  unsigned short len;
} program;

static void emit(program *p, struct sock_filter f) {
  if (p->len < MAX_INSNS)
    p->insns[p->len++] = f;
}

static void load_nr(program *p) {
  emit(p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                       offsetof(struct seccomp_data, nr)));
}

/* if nr == NR: return ERRNO(err) */
static void refuse(program *p, int nr, int err) {
  emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 1));
  emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
                                       SECCOMP_RET_ERRNO | (err & 0xffff)));
}

/* if nr == NR && (low word of arg0 & mask): return ERRNO(err) */
static void refuse_flags(program *p, int nr, unsigned mask, int err) {
  emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 3));
  emit(p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                       offsetof(struct seccomp_data, args)));
  emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, mask, 0, 1));
  emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
                                       SECCOMP_RET_ERRNO | (err & 0xffff)));
  load_nr(p);
}

int without_install(unsigned what) {
  program p = {.len = 0};
  emit(&p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                        offsetof(struct seccomp_data, arch)));
  emit(&p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
                                        AUDIT_ARCH_X86_64, 1, 0));
  emit(&p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  load_nr(&p);
  if (what & WITHOUT_DOCKER) {
    refuse(&p, __NR_unshare, EPERM);
    refuse(&p, __NR_setns, EPERM);
    refuse_flags(&p, __NR_clone, NS_FLAGS, EPERM);
    refuse(&p, __NR_clone3, ENOSYS);
  } else if (what & WITHOUT_USERNS) {
    refuse_flags(&p, __NR_unshare, CLONE_NEWUSER, EPERM);
    refuse_flags(&p, __NR_clone, CLONE_NEWUSER, EPERM);
    refuse(&p, __NR_clone3, ENOSYS);
  }
  if (what & WITHOUT_LANDLOCK) {
    refuse(&p, __NR_landlock_create_ruleset, ENOSYS);
    refuse(&p, __NR_landlock_add_rule, ENOSYS);
    refuse(&p, __NR_landlock_restrict_self, ENOSYS);
  }
  emit(&p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  if (p.len >= MAX_INSNS)
    return -E2BIG;
  struct sock_fprog prog = {.len = p.len, .filter = p.insns};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
      syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0)
    return -errno;
  return 0;
}

static int write_text(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  ssize_t n = write(fd, text, strlen(text));
  int err = errno;
  close(fd);
  return n == (ssize_t)strlen(text) ? 0 : -(n < 0 ? err : EIO);
}

int without_userns_by_sysctl(void) {
  return without_namespaces_by_sysctl("max_user_namespaces");
}

int without_namespaces_by_sysctl(const char *limit) {
  char uid_map[64], gid_map[64], path[96];
  snprintf(path, sizeof path, "/proc/sys/user/%s", limit);
  snprintf(uid_map, sizeof uid_map, "1000 %u 1\n", (unsigned)geteuid());
  snprintf(gid_map, sizeof gid_map, "1000 %u 1\n", (unsigned)getegid());
  if (unshare(CLONE_NEWUSER) != 0)
    return -errno;
  int rc;
  if ((rc = write_text("/proc/self/setgroups", "deny")) ||
      (rc = write_text("/proc/self/uid_map", uid_map)) ||
      (rc = write_text("/proc/self/gid_map", gid_map)))
    return rc;
  struct __user_cap_header_struct hdr = {.version =
                                             _LINUX_CAPABILITY_VERSION_3};
  struct __user_cap_data_struct caps[2];
  if (syscall(SYS_capget, &hdr, caps) != 0)
    return -errno;
  caps[0].effective &= ~((1u << CAP_SETUID) | (1u << CAP_SETGID));
  if (syscall(SYS_capset, &hdr, caps) != 0)
    return -errno;
  return write_text(path, "0\n");
}

/* The supervisor's loop: the ABI query gets abi, anything else goes on
 * to the kernel. */
static _Noreturn void answer_abi(int listener, int abi) {
  struct seccomp_notif req;
  struct seccomp_notif_resp resp;
  for (;;) {
    struct pollfd p = {.fd = listener, .events = POLLIN};
    if (poll(&p, 1, -1) < 0 && errno != EINTR)
      _exit(1);
    if (p.revents & (POLLHUP | POLLERR | POLLNVAL))
      _exit(0);
    memset(&req, 0, sizeof req);
    if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) != 0)
      continue; /* the caller died before we read it */
    memset(&resp, 0, sizeof resp);
    resp.id = req.id;
    if (req.data.args[0] == 0 && req.data.args[1] == 0 &&
        req.data.args[2] == 1 /* LANDLOCK_CREATE_RULESET_VERSION */)
      resp.val = abi;
    else
      resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
    ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
  }
}

static int send_fd(int sock, int fd) {
  char byte = 0;
  struct iovec iov = {.iov_base = &byte, .iov_len = 1};
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } u;
  memset(&u, 0, sizeof u);
  struct msghdr msg = {.msg_iov = &iov,
                       .msg_iovlen = 1,
                       .msg_control = u.buf,
                       .msg_controllen = sizeof u.buf};
  struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(c), &fd, sizeof fd);
  return sendmsg(sock, &msg, 0) == 1 ? 0 : -errno;
}

static int recv_fd(int sock) {
  char byte;
  struct iovec iov = {.iov_base = &byte, .iov_len = 1};
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } u;
  struct msghdr msg = {.msg_iov = &iov,
                       .msg_iovlen = 1,
                       .msg_control = u.buf,
                       .msg_controllen = sizeof u.buf};
  if (recvmsg(sock, &msg, 0) != 1)
    return -1;
  struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
  if (!c || c->cmsg_type != SCM_RIGHTS)
    return -1;
  int fd;
  memcpy(&fd, CMSG_DATA(c), sizeof fd);
  return fd;
}

int without_fake_landlock_abi(int abi) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
    return -errno;
  pid_t caller = getpid();
  pid_t pid = fork();
  if (pid < 0)
    return -errno;
  if (pid == 0) {
    close(sv[0]);
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (getppid() != caller)
      _exit(0);
    int listener = recv_fd(sv[1]);
    if (listener < 0)
      _exit(1);
    answer_abi(listener, abi);
  }
  close(sv[1]);
  struct sock_filter insns[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_landlock_create_ruleset, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = {.len = sizeof insns / sizeof insns[0],
                            .filter = insns};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    close(sv[0]);
    return -errno;
  }
  int listener = (int)syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER,
                              SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
  if (listener < 0) {
    int err = errno;
    close(sv[0]);
    return -err;
  }
  int rc = send_fd(sv[0], listener);
  close(listener);
  close(sv[0]);
  return rc;
}
