/* New sockets, and the addresses sockets connect and bind to; see call.h.
 *
 * Why it exists: Landlock does not govern connect() to a unix socket file
 * and a seccomp filter cannot read an address, so a program given the
 * network (--net) could otherwise reach every local service that listens
 * on a socket file or an abstract name: the session bus, docker.sock,
 * X11, ssh-agent. The rules (docs/sbx-run.md, "Sockets"):
 *   - socket() and socketpair() are decided on their registers alone, so
 *     CONTINUE is sound: new sockets need allow_sockets or own_network
 *     (a network namespace of the sandbox's own), except unix
 *     stream and seqpacket sockets, whose connect and bind follow the
 *     allowlist in every mode (the filter allows such pairs by itself),
 *     and unix datagram
 *     sockets are refused everywhere: sendto() could aim one at any socket
 *     file, through an address the filter cannot see;
 *   - connect() and bind() are decided on the socket the program's
 *     descriptor refers to (taken with pidfd_getfd, so swapping the
 *     descriptor afterwards changes nothing) and on one copy of the
 *     address, and the supervisor performs them on that socket - never
 *     CONTINUE, since the kernel would look up the descriptor number and
 *     read the address again. A socket that is not a unix socket follows
 *     the network rule (allow_sockets; with own_network, binds anywhere
 *     and connects to this host, its loopback). A unix pathname follows the
 *     allowlist: connecting needs the write right on the socket file (the
 *     kernel's own rule), which the supervisor opens through the resolver
 *     and connects to as /proc/self/fd/N; binding needs the create right,
 *     and a helper process that Landlock lets make sockets only beneath
 *     the directory the resolver reached binds the program's own address,
 *     so the socket records the name the program gave. Abstract names are
 *     refused: under --net they are the host's local services, and no
 *     check of one would hold once the kernel read the address again;
 *   - the supervisor does not block for the program: a blocking connect
 *     is given a short bounded wait, then a network connect still in
 *     progress is left waiting (ANSWER_WAIT) and answered when its socket
 *     is ready; a unix listener whose backlog stays full gets EAGAIN, as
 *     with SO_SNDTIMEO;
 *   - it acts with the program's identity: as root, with the program's
 *     effective user and group (which a unix socket's peer records) and no
 *     capability, so a privileged port or a netlink group stays as closed
 *     as it is to the program.
 *
 * What it trusts: the kernel's socket objects and the resolver. What it
 * refuses: see above.
 */
#include "sandbox/supervisor/call.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stddef.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/capability.h>
#include <linux/landlock.h>

/* How long a blocking connect may hold the supervisor: a unix listener
 * with a full backlog (then EAGAIN), a network handshake (then the call
 * waits without the supervisor). */
#define UNIX_CONNECT_WAIT_US 100000
#define NET_CONNECT_WAIT_US 10000

#define SUN_PATH_SIZE sizeof(((struct sockaddr_un *)0)->sun_path)

static const char abstract_reason[] =
    "abstract unix socket names are refused: they reach the host's local "
    "services";
static const char datagram_reason[] =
    "unix datagram sockets are refused: sendto() could reach any socket "
    "file";

/* ---- the program's identity --------------------------------------------- */

typedef struct {
  bool switched;     /* effective uid and gid set to the file-system ones */
  bool caps_cleared; /* effective capabilities cleared by capset */
  uid_t fsuid;
  gid_t fsgid;
  struct __user_cap_data_struct caps[2];
} identity;

/* For one socket call: no effective capability and, as root acting for
 * another user (launch.c gives the supervisor the program's file-system
 * identity), that user's effective uid and gid. Raw system calls: this
 * thread only. */
static void act_as_program(identity *id) {
  memset(id, 0, sizeof(*id));
  id->fsuid = (uid_t)setfsuid((uid_t)-1);
  id->fsgid = (gid_t)setfsgid((gid_t)-1);
  if (geteuid() == 0 && id->fsuid != 0 &&
      syscall(SYS_setresgid, -1, id->fsgid, -1) == 0) {
    /* Leaving euid 0 also clears the effective capabilities. */
    if (syscall(SYS_setresuid, -1, id->fsuid, -1) == 0)
      id->switched = true;
    else
      syscall(SYS_setresgid, -1, 0, -1);
  }
  struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
  if (syscall(SYS_capget, &h, id->caps) < 0 ||
      (id->caps[0].effective == 0 && id->caps[1].effective == 0))
    return;
  struct __user_cap_data_struct none[2];
  memcpy(none, id->caps, sizeof(none));
  none[0].effective = none[1].effective = 0;
  id->caps_cleared = syscall(SYS_capset, &h, none) == 0;
}

static void act_as_supervisor(const identity *id) {
  if (id->caps_cleared) {
    struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
    syscall(SYS_capset, &h, id->caps);
  }
  if (id->switched) {
    /* Back to euid 0 (effective = permitted again), then the program's
     * file-system identity, which setresuid reset. */
    syscall(SYS_setresuid, -1, 0, -1);
    syscall(SYS_setresgid, -1, 0, -1);
    setfsgid(id->fsgid);
    setfsuid(id->fsuid);
  }
}

/* ---- socket() and socketpair() ------------------------------------------ */

static const char *family_name(int family, char *buf, size_t size) {
  switch (family) {
    case AF_UNIX:
      return "AF_UNIX";
    case AF_INET:
      return "AF_INET";
    case AF_INET6:
      return "AF_INET6";
    case AF_NETLINK:
      return "AF_NETLINK";
    case AF_PACKET:
      return "AF_PACKET";
    case AF_VSOCK:
      return "AF_VSOCK";
    case AF_ALG:
      return "AF_ALG";
    case AF_BLUETOOTH:
      return "AF_BLUETOOTH";
    default:
      snprintf(buf, size, "family %d", family);
      return buf;
  }
}

static void name_family(sbx_call *c, int family) {
  char tmp[32];
  g_strlcpy(c->detail, family_name(family, tmp, sizeof(tmp)),
            sizeof(c->detail));
  c->ev.detail = c->detail;
}

/* Whether the program may make sockets of families other than unix: the
 * host's network, or a network namespace of its own. */
static bool network_sockets(const sbx_unotify_config *cfg) {
  return cfg->allow_sockets || cfg->own_network;
}

/* The unix socket types whose sends ignore an address (SOCK_RAW is a
 * datagram socket for AF_UNIX). */
static bool connected_type(int type) {
  int t = type & 0xf;
  return t == SOCK_STREAM || t == SOCK_SEQPACKET;
}

void sbx_handle_socket(sbx_call *c) {
  c->ev.operation = "socket";
  int family = arg_int(c, 0);
  int type = arg_int(c, 1);
  name_family(c, family);
  c->ev.flags = (uint32_t)type;
  if (family == AF_UNIX && !connected_type(type)) {
    int t = type & 0xf;
    if (t == SOCK_DGRAM || t == SOCK_RAW)
      snprintf(c->detail, sizeof(c->detail), "AF_UNIX %s",
               t == SOCK_DGRAM ? "SOCK_DGRAM" : "SOCK_RAW");
    else
      snprintf(c->detail, sizeof(c->detail), "AF_UNIX type %d", t);
    deny(c, EACCES, datagram_reason, SBX_UNOTIFY_HINT_NEVER, NULL, false);
    return;
  }
  /* A unix stream or seqpacket socket reaches nothing by itself: its
   * connect and bind are decided by the allowlist in every mode, as a
   * socket pair's would be. So making one needs no --net. */
  if (!network_sockets(c->cfg) && family != AF_UNIX) {
    deny(c, EACCES, "no network (and no new sockets) without --net",
         SBX_UNOTIFY_HINT_NET, NULL, false);
    return;
  }
  c->ev.allowed = true;
  c->kind = ANSWER_CONTINUE;
}

void sbx_handle_socketpair(sbx_call *c) {
  c->ev.operation = "socketpair";
  int family = arg_int(c, 0);
  int type = arg_int(c, 1);
  char tmp[32];
  snprintf(c->detail, sizeof(c->detail), "%s type %d",
           family_name(family, tmp, sizeof(tmp)), type & 0xf);
  c->ev.detail = c->detail;
  if (family == AF_UNIX && !connected_type(type)) {
    deny(c, EACCES, datagram_reason, SBX_UNOTIFY_HINT_NEVER, NULL, false);
    return;
  }
  /* A connected pair with flags the filter does not list (the kernel
   * checks them), or another family with the network. */
  if (family != AF_UNIX && !network_sockets(c->cfg)) {
    deny(c, EACCES, "no network (and no new sockets) without --net",
         SBX_UNOTIFY_HINT_NET, NULL, false);
    return;
  }
  c->ev.allowed = true;
  c->kind = ANSWER_CONTINUE;
}

/* ---- the socket and the address ----------------------------------------- */

/* The program's socket behind fd and its domain; -1 when answered. */
static int grab_socket(sbx_call *c, int fd, int *domain) {
  int sock = sbx_call_grab_fd(c, fd);
  if (sock == PATH_GONE) {
    answer_drop(c);
    return -1;
  }
  if (sock < 0) {
    answer_failed(c, -sock);
    return -1;
  }
  socklen_t len = sizeof(*domain);
  if (getsockopt(sock, SOL_SOCKET, SO_DOMAIN, domain, &len) < 0) {
    int err = errno;
    close(sock);
    answer_failed(c, err);
    return -1;
  }
  name_family(c, *domain);
  return sock;
}

/* The one copy of the address that is decided on and used. 0, or -1 when
 * answered. */
static int read_address(sbx_call *c, uint64_t addr, int len,
                        struct sockaddr_storage *out) {
  memset(out, 0, sizeof(*out));
  if (len < 0 || (size_t)len > sizeof(*out)) {
    answer_failed(c, EINVAL);
    return -1;
  }
  return read_argument(c, addr, out, (size_t)len) ? 0 : -1;
}

typedef enum {
  UNIX_OTHER,    /* not a unix address, or malformed: the kernel says so */
  UNIX_UNNAMED,  /* the family alone: bind() picks an abstract name */
  UNIX_ABSTRACT, /* a name starting with NUL */
  UNIX_PATH,     /* a socket file */
} unix_kind;

/* Classifies a unix address; for UNIX_PATH copies the path (ending at
 * the first NUL or at len, as the kernel reads it) into path. */
static unix_kind unix_address(const struct sockaddr_storage *ss, int len,
                              char path[SUN_PATH_SIZE + 1]) {
  const struct sockaddr_un *sun = (const struct sockaddr_un *)ss;
  size_t off = offsetof(struct sockaddr_un, sun_path);
  if ((size_t)len < off || (size_t)len > sizeof(*sun) ||
      sun->sun_family != AF_UNIX)
    return UNIX_OTHER;
  if ((size_t)len == off)
    return UNIX_UNNAMED;
  if (sun->sun_path[0] == '\0')
    return UNIX_ABSTRACT;
  size_t n = (size_t)len - off;
  memcpy(path, sun->sun_path, n);
  path[n] = '\0';
  return UNIX_PATH;
}

static void refuse_abstract(sbx_call *c, const struct sockaddr_storage *ss,
                            int len) {
  const struct sockaddr_un *sun = (const struct sockaddr_un *)ss;
  size_t n = (size_t)len - offsetof(struct sockaddr_un, sun_path) - 1;
  if (n > sizeof(c->detail) - 2)
    n = sizeof(c->detail) - 2;
  c->detail[0] = '@';
  for (size_t i = 0; i < n; i++) {
    char ch = sun->sun_path[1 + i];
    c->detail[1 + i] = ch ? ch : '@';
  }
  c->detail[1 + n] = '\0';
  c->ev.detail = c->detail;
  deny(c, EPERM, abstract_reason, SBX_UNOTIFY_HINT_NEVER, NULL, false);
}

/* The unix address's path, absolute (relative paths are the program's
 * working directory's), in c->path. false when answered. */
static bool unix_path(sbx_call *c, const char *raw) {
  int rc = sbx_call_absolute_path(c, AT_FDCWD, raw, strlen(raw), c->path);
  if (rc == PATH_GONE) {
    answer_drop(c);
    return false;
  }
  if (rc < 0) {
    answer_failed(c, -rc);
    return false;
  }
  c->ev.path = c->path;
  c->ev.detail = NULL;
  return true;
}

/* ---- connect() ---------------------------------------------------------- */

/* Connects the program's socket (ours to close) and records the answer:
 * a blocking connect gets a bounded wait, then a network connect still in
 * progress waits for its socket (ANSWER_WAIT). */
static void perform_connect(sbx_call *c, int sock, int domain, const void *addr,
                            socklen_t len) {
  int fl = fcntl(sock, F_GETFL);
  bool blocking = fl >= 0 && !(fl & O_NONBLOCK);
  struct timeval saved;
  socklen_t slen = sizeof(saved);
  bool bounded = false;
  if (blocking &&
      getsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &saved, &slen) == 0) {
    long long bound =
        domain == AF_UNIX ? UNIX_CONNECT_WAIT_US : NET_CONNECT_WAIT_US;
    long long cur = (long long)saved.tv_sec * 1000000 + saved.tv_usec;
    if (cur == 0 || cur > bound) {
      struct timeval tv = {.tv_sec = 0, .tv_usec = (suseconds_t)bound};
      bounded = setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) == 0;
    }
  }
  int rc = -1, err = 0;
  if (!gone(c)) {
    identity id;
    act_as_program(&id);
    rc = connect(sock, (const struct sockaddr *)addr, len);
    err = errno;
    act_as_supervisor(&id);
  }
  if (bounded)
    setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &saved, sizeof(saved));
  if (rc < 0 && err == 0) {
    close(sock);
    answer_drop(c);
    return;
  }
  if (rc < 0 && blocking && domain != AF_UNIX &&
      (err == EINPROGRESS || err == EALREADY)) {
    c->kind = ANSWER_WAIT;
    c->wait_kind = WAIT_CONNECT;
    c->wait_fd = sock;
    return;
  }
  close(sock);
  answer_result(c, rc < 0 ? -err : 0);
}

/* The socket file at c->path as an O_PATH descriptor of ours, when the
 * allowlist grants writing it (the sandbox's own /tmp and /dev/shm are
 * entries the resolver finds beneath init's descriptors); -1 when
 * answered. */
static int socket_file(sbx_call *c) {
  int denied =
      sbx_allowlist_denied_errno(sbx_resolver_allowlist(c->cfg->resolver));
  int own = sbx_call_own_fd_path(c->path);
  int held = -1;
  struct stat hst;
  if (own >= 0) {
    /* /proc/self/fd/N naming an O_PATH descriptor of the socket file
     * (how programs reach paths longer than sun_path): decided on the
     * file it refers to. */
    held = sbx_call_grab_fd(c, own);
    if (held == PATH_GONE) {
      answer_drop(c);
      return -1;
    }
    if (held < 0) {
      answer_failed(c, ENOENT);
      return -1;
    }
    if (fstat(held, &hst) < 0 ||
        !sbx_call_object_location(held, c->path, sizeof(c->path))) {
      close(held);
      deny(c, denied, "descriptor names no file in the allowlist",
           SBX_UNOTIFY_HINT_NEVER, NULL, false);
      return -1;
    }
  }
  sbx_decision d;
  int fd =
      sbx_resolver_open_object(c->cfg->resolver, sbx_call_self_pid(c, c->path),
                               c->path, SBX_PERM_WRITE, true, &d);
  struct stat st;
  if (fd >= 0 && fstat(fd, &st) < 0) {
    close(fd);
    fd = -errno;
  }
  bool moved = fd >= 0 && held >= 0 && !same_object(&st, &hst);
  if (held >= 0)
    close(held);
  if (fd < 0 || moved) {
    /* What the program sees at the path, where the grants refused it: one
     * look through the resolver answers both cases below. */
    struct stat lst, seen;
    sbx_decision look = {0};
    int looked =
        moved || d.granted
            ? -EACCES
            : sbx_resolver_stat(c->cfg->resolver, sbx_call_self_pid(c, c->path),
                                c->path, true, &seen, &look);
    if (moved)
      deny(c, denied, "descriptor's file moved during the check",
           SBX_UNOTIFY_HINT_WRITE, c->path, false);
    else if (looked == -ENOENT && look.granted)
      /* Where the grants show the directory, a socket that is not there
       * is missing, as for the kernel (glibc's nscd probe under -r /). */
      answer_failed(c, ENOENT);
    else if (looked == 0 && !S_ISSOCK(seen.st_mode))
      /* No socket where the program may look: the kernel's answer, which
       * no grant would change. */
      answer_failed(c, ECONNREFUSED);
    else if (!d.granted && lstat(c->path, &lst) != 0) {
      /* No grant makes a socket that is not there answer (glibc's nscd
       * probe): refused as any path outside the grants, with no hint. */
      decided(c, fd, &d, SBX_UNOTIFY_HINT_NONE, NULL, false);
      c->ev.missing = true;
    } else
      decided(c, fd, &d, SBX_UNOTIFY_HINT_WRITE, c->path, false);
    if (fd >= 0)
      close(fd);
    return -1;
  }
  if (!S_ISSOCK(st.st_mode) || st.st_nlink > 1) {
    close(fd);
    if (S_ISSOCK(st.st_mode))
      deny(c, denied, "a socket file with several hard links",
           SBX_UNOTIFY_HINT_NEVER, NULL, false);
    else
      answer_failed(c, ECONNREFUSED); /* what the kernel says */
    return -1;
  }
  return fd;
}

static void connect_path(sbx_call *c, int sock, const char *raw) {
  if (!unix_path(c, raw)) {
    close(sock);
    return;
  }
  int file = socket_file(c);
  if (file < 0) {
    close(sock);
    return;
  }
  /* The kernel follows the magic link to the very inode the resolver
   * reached: nothing the program changes after the check matters. */
  struct sockaddr_un via = {.sun_family = AF_UNIX};
  snprintf(via.sun_path, sizeof(via.sun_path), "/proc/self/fd/%d", file);
  socklen_t vlen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
                               strlen(via.sun_path) + 1);
  c->ev.allowed = true;
  perform_connect(c, sock, AF_UNIX, &via, vlen);
  close(file);
}

bool sbx_call_inet_address(const struct sockaddr_storage *ss, int len,
                           char host[INET6_ADDRSTRLEN], uint16_t *port) {
  if (ss->ss_family == AF_INET && len >= (int)sizeof(struct sockaddr_in)) {
    const struct sockaddr_in *in = (const struct sockaddr_in *)ss;
    *port = ntohs(in->sin_port);
    inet_ntop(AF_INET, &in->sin_addr, host, INET6_ADDRSTRLEN);
    return true;
  }
  if (ss->ss_family == AF_INET6 && len >= (int)sizeof(struct sockaddr_in6)) {
    const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;
    *port = ntohs(in6->sin6_port);
    inet_ntop(AF_INET6, &in6->sin6_addr, host, INET6_ADDRSTRLEN);
    return true;
  }
  return false;
}

/* Names an inet address in the call's detail ("127.0.0.1 port 80"); other
 * addresses leave the family's name there. */
static void name_address(sbx_call *c, const struct sockaddr_storage *ss,
                         int len) {
  char host[INET6_ADDRSTRLEN] = "?";
  uint16_t port;
  if (!sbx_call_inet_address(ss, len, host, &port))
    return;
  snprintf(c->detail, sizeof(c->detail), "%s port %u", host, (unsigned)port);
  c->ev.detail = c->detail;
}

bool sbx_call_this_host(const struct sockaddr_storage *ss, int len) {
  if (ss->ss_family == AF_INET && len >= (int)sizeof(struct sockaddr_in)) {
    uint32_t a = ntohl(((const struct sockaddr_in *)ss)->sin_addr.s_addr);
    return (a >> 24) == 127 || a == INADDR_ANY;
  }
  if (ss->ss_family == AF_INET6 && len >= (int)sizeof(struct sockaddr_in6)) {
    const struct in6_addr *a = &((const struct sockaddr_in6 *)ss)->sin6_addr;
    return IN6_IS_ADDR_LOOPBACK(a) || IN6_IS_ADDR_UNSPECIFIED(a) ||
           (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
  }
  return false;
}

/* Whether an inet address's port is one ports allows; other families
 * (AF_UNSPEC disconnects) pass. On a refusal, the address is the call's
 * detail. */
static bool port_allowed(sbx_call *c, const sbx_unotify_ports *ports,
                         const struct sockaddr_storage *ss, int len) {
  if (!ports->narrow)
    return true;
  char host[INET6_ADDRSTRLEN] = "?";
  uint16_t port;
  if (!sbx_call_inet_address(ss, len, host, &port))
    return true;
  for (size_t i = 0; i < ports->n; i++)
    if (ports->ports[i] == port)
      return true;
  name_address(c, ss, len);
  return false;
}

/* A connect of a socket that is not a unix socket, without the host's
 * network: in the sandbox's own network (own_network) an inet address
 * leads only to its loopback, so one elsewhere is refused with the --net
 * hint, and a refused connection is reported with it too (a host's
 * service the program expected); other families, and AF_UNSPEC, reach
 * nothing of the host's there. */
static void connect_without_net(sbx_call *c, int sock, int domain,
                                const struct sockaddr_storage *ss, int len) {
  bool inet = domain == AF_INET || domain == AF_INET6;
  bool elsewhere =
      inet && ss->ss_family != AF_UNSPEC && !sbx_call_this_host(ss, len);
  if (!c->cfg->own_network || elsewhere) {
    close(sock);
    name_address(c, ss, len);
    deny(c, EACCES,
         c->cfg->own_network ? "the sandbox's network is its loopback alone"
                             : "no network without --net",
         SBX_UNOTIFY_HINT_NET, NULL, false);
    return;
  }
  c->ev.allowed = true;
  perform_connect(c, sock, domain, ss, (socklen_t)len);
  if (inet && c->kind == ANSWER_VALUE && c->error == ECONNREFUSED) {
    name_address(c, ss, len);
    deny(c, ECONNREFUSED,
         "nothing listens there in the sandbox's own network; the host's "
         "services need --net",
         SBX_UNOTIFY_HINT_NET, NULL, false);
  }
}

void sbx_handle_connect(sbx_call *c) {
  c->ev.operation = "connect";
  int domain;
  int sock = grab_socket(c, arg_int(c, 0), &domain);
  if (sock < 0)
    return;
  int len = arg_int(c, 2);
  struct sockaddr_storage ss;
  if (read_address(c, arg(c, 1), len, &ss) < 0) {
    close(sock);
    return;
  }
  if (domain != AF_UNIX) {
    if (!c->cfg->allow_sockets) {
      connect_without_net(c, sock, domain, &ss, len);
      return;
    }
    if (!port_allowed(c, &c->cfg->connect_ports, &ss, len)) {
      close(sock);
      deny(c, EACCES, c->cfg->connect_ports.reason, SBX_UNOTIFY_HINT_NEVER,
           NULL, false);
      return;
    }
    c->ev.allowed = true;
    perform_connect(c, sock, domain, &ss, (socklen_t)len);
    return;
  }
  char raw[SUN_PATH_SIZE + 1];
  switch (unix_address(&ss, len, raw)) {
    case UNIX_OTHER:
    case UNIX_UNNAMED:
      /* No name: the kernel refuses it, or disconnects a datagram
       * socket (AF_UNSPEC). */
      c->ev.allowed = true;
      perform_connect(c, sock, domain, &ss, (socklen_t)len);
      return;
    case UNIX_ABSTRACT:
      close(sock);
      refuse_abstract(c, &ss, len);
      return;
    case UNIX_PATH:
      connect_path(c, sock, raw);
      return;
  }
}

void sbx_socket_finish(sbx_call *c) {
  int err = 0;
  socklen_t len = sizeof(err);
  if (getsockopt(c->wait_fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
    err = errno;
  if (err == 0) {
    struct sockaddr_storage peer;
    socklen_t plen = sizeof(peer);
    if (getpeername(c->wait_fd, (struct sockaddr *)&peer, &plen) < 0 &&
        errno == ENOTCONN)
      return; /* still in progress */
  }
  answer_result(c, -err);
}

/* ---- bind() ------------------------------------------------------------- */

static int bind_as_program(int sock, const void *addr, socklen_t len) {
  identity id;
  act_as_program(&id);
  int rc = bind(sock, (const struct sockaddr *)addr, len);
  int err = errno;
  act_as_supervisor(&id);
  return rc < 0 ? -err : 0;
}

/* Binds sock to the program's own address - so the socket records the
 * name the program gave - in a child process that Landlock lets make
 * sockets only beneath dir: if a directory on the way was swapped after
 * the resolver's check, the kernel refuses (EACCES). cwd: the program's
 * working directory (relative addresses), or -1. ns: the user and mount
 * namespaces to bind in (a private directory's, where the name is the
 * sandbox's), or NULL for the supervisor's own. 0 or -errno. */
static int bind_beneath(int sock, int dir, int cwd, const int ns[2],
                        const void *addr, socklen_t len) {
  struct landlock_ruleset_attr attr = {.handled_access_fs =
                                           LANDLOCK_ACCESS_FS_MAKE_SOCK};
  int ruleset =
      (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);
  if (ruleset < 0)
    return -EOPNOTSUPP;
  struct landlock_path_beneath_attr beneath = {
      .allowed_access = LANDLOCK_ACCESS_FS_MAKE_SOCK, .parent_fd = dir};
  if (syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH,
              &beneath, 0) < 0) {
    int err = errno;
    close(ruleset);
    return -err;
  }
  uid_t fsuid = (uid_t)setfsuid((uid_t)-1);
  gid_t fsgid = (gid_t)setfsgid((gid_t)-1);
  pid_t pid = fork();
  if (pid == 0) {
    /* The owner of the sandbox's user namespace holds every capability
     * in it, which joining its mount namespace needs. */
    if (ns &&
        (setns(ns[0], CLONE_NEWUSER) < 0 || setns(ns[1], CLONE_NEWNS) < 0))
      _exit(errno);
    /* As root acting for another user, become that user for good. */
    if (geteuid() == 0 && fsuid != 0 &&
        (syscall(SYS_setresgid, fsgid, fsgid, fsgid) < 0 ||
         syscall(SYS_setresuid, fsuid, fsuid, fsuid) < 0))
      _exit(EPERM);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
        syscall(SYS_landlock_restrict_self, ruleset, 0) < 0)
      _exit(EPERM);
    if (cwd >= 0 && fchdir(cwd) < 0)
      _exit(errno);
    _exit(bind(sock, (const struct sockaddr *)addr, len) == 0 ? 0 : errno);
  }
  int err = errno;
  close(ruleset);
  if (pid < 0)
    return -err;
  int status;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR)
      return -errno;
  }
  if (!WIFEXITED(status))
    return -EIO;
  return -WEXITSTATUS(status);
}

static void bind_path(sbx_call *c, int sock, const struct sockaddr_storage *ss,
                      int len, const char *raw) {
  if (!unix_path(c, raw)) {
    close(sock);
    return;
  }
  if (sbx_call_own_fd_path(c->path) >= 0) {
    close(sock);
    deny(c, EPERM, "a descriptor's name cannot be created",
         SBX_UNOTIFY_HINT_NEVER, NULL, false);
    return;
  }
  char name[NAME_MAX + 1];
  sbx_decision d;
  int dir =
      sbx_resolver_open_parent(c->cfg->resolver, sbx_call_self_pid(c, c->path),
                               c->path, name, sizeof(name), &d);
  if (dir < 0) {
    close(sock);
    decided(c, dir, &d, SBX_UNOTIFY_HINT_WRITE, c->path, true);
    return;
  }
  int cwd = -1;
  if (raw[0] != '/') {
    char proc[64];
    sbx_target_fd_proc_path(&c->t, AT_FDCWD, proc, sizeof(proc));
    cwd = open(proc, O_PATH | O_DIRECTORY | O_CLOEXEC);
  }
  const int ns[2] = {c->cfg->private_userns, c->cfg->private_mntns};
  bool in_sandbox = c->cfg->private_ns && sbx_call_private_dir(c, c->path);
  int rc = -ENOENT;
  if (!drop_if_gone(c) && (raw[0] == '/' || cwd >= 0))
    rc = bind_beneath(sock, dir, cwd, in_sandbox ? ns : NULL, ss,
                      (socklen_t)len);
  if (cwd >= 0)
    close(cwd);
  close(dir);
  close(sock);
  if (c->kind == ANSWER_DROP)
    return;
  if (rc == -EOPNOTSUPP) {
    deny(c, EACCES,
         "socket files are made only where Landlock (Linux 5.13) can "
         "check their directory",
         SBX_UNOTIFY_HINT_NEVER, NULL, false);
    return;
  }
  c->ev.allowed = true;
  answer_result(c, rc);
}

void sbx_handle_bind(sbx_call *c) {
  c->ev.operation = "bind";
  int domain;
  int sock = grab_socket(c, arg_int(c, 0), &domain);
  if (sock < 0)
    return;
  int len = arg_int(c, 2);
  struct sockaddr_storage ss;
  if (read_address(c, arg(c, 1), len, &ss) < 0) {
    close(sock);
    return;
  }
  char raw[SUN_PATH_SIZE + 1];
  unix_kind kind = domain == AF_UNIX ? unix_address(&ss, len, raw) : UNIX_OTHER;
  if (domain != AF_UNIX && !network_sockets(c->cfg)) {
    close(sock);
    name_address(c, &ss, len);
    deny(c, EACCES, "no network without --net", SBX_UNOTIFY_HINT_NET, NULL,
         false);
    return;
  }
  if (domain != AF_UNIX && !port_allowed(c, &c->cfg->bind_ports, &ss, len)) {
    close(sock);
    deny(c, EACCES, c->cfg->bind_ports.reason, SBX_UNOTIFY_HINT_NEVER, NULL,
         false);
    return;
  }
  switch (kind) {
    case UNIX_OTHER:
    case UNIX_UNNAMED:
      /* A network address, an abstract name the kernel picks, or an
       * address the kernel refuses. */
      if (drop_if_gone(c)) {
        close(sock);
        return;
      }
      c->ev.allowed = true;
      answer_result(c, bind_as_program(sock, &ss, (socklen_t)len));
      close(sock);
      return;
    case UNIX_ABSTRACT:
      close(sock);
      refuse_abstract(c, &ss, len);
      return;
    case UNIX_PATH:
      bind_path(c, sock, &ss, len, raw);
      return;
  }
}
