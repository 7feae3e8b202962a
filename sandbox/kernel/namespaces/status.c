/* Reads the sandbox layers of the calling process back from the kernel.
 * Async-signal-safe throughout (open/read/stat/prctl/capget, fixed
 * buffers). Trusts only the kernel's answers; what it cannot ask is
 * reported unknown, never guessed. */
#include "sandbox/kernel/namespaces/status.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/capability.h>

#include "sandbox/kernel/namespaces/fds.h"
#include "sandbox/base/strbuf.h"

/* One open of /proc/self/ns, then fstatat per kind: resolving
 * /proc/self for each kind costs several microseconds more per call. */
static int ns_dir_open(void) {
  return open("/proc/self/ns", O_PATH | O_DIRECTORY | O_CLOEXEC);
}

static int ns_stat(int dir, const char *kind, struct stat *st) {
  if (dir < 0)
    return -ENOENT;
  return fstatat(dir, kind, st, 0) == 0 ? 0 : -errno;
}

int sbx_status_record_reference(sbx_ns_reference *ref) {
  memset(ref, 0, sizeof(*ref));
  struct stat st;
  int found = 0;
  int dir = ns_dir_open();
  for (int i = 0; i < SBX_NS_KINDS; i++) {
    if (ns_stat(dir, sbx_ns_kind_name(i), &st) == 0) {
      ref->dev[i] = st.st_dev;
      ref->ino[i] = st.st_ino;
      found++;
    }
  }
  if (dir >= 0)
    close(dir);
  if (stat("/", &st) == 0) {
    ref->root_dev = st.st_dev;
    ref->root_ino = st.st_ino;
  }
  if (!found)
    return -ENOENT;
  ref->valid = true;
  return 0;
}

/* Reads a small /proc file into buf (NUL-terminated); -errno on failure. */
static ssize_t read_small(const char *path, char *buf, size_t cap) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  size_t off = 0;
  while (off + 1 < cap) {
    ssize_t n = read(fd, buf + off, cap - 1 - off);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    off += (size_t)n;
  }
  close(fd);
  buf[off] = '\0';
  return (ssize_t)off;
}

/* The value after "key:" at the start of a line, or NULL. */
static const char *field(const char *text, const char *key) {
  size_t klen = strlen(key);
  for (const char *p = text; p && *p;) {
    if (strncmp(p, key, klen) == 0 && p[klen] == ':') {
      p += klen + 1;
      while (*p == ' ' || *p == '\t')
        p++;
      return p;
    }
    p = strchr(p, '\n');
    if (p)
      p++;
  }
  return NULL;
}

/* The CapBnd and CapAmb values of a /proc/self/status text. */
static int parse_bounding_ambient(const char *text, uint64_t *bounding,
                                  uint64_t *ambient) {
  const char *bnd = field(text, "CapBnd");
  const char *amb = field(text, "CapAmb");
  if (!bnd || !amb || sbx_parse_hex64(&bnd, bounding) != 0 ||
      sbx_parse_hex64(&amb, ambient) != 0)
    return -ENODATA;
  return 0;
}

int sbx_status_read_bounding_ambient_raw(uint64_t *bounding,
                                         uint64_t *ambient) {
  char buf[4096];
  /* Capability sets are per thread: thread-self, not the leader's. */
  ssize_t n = read_small("/proc/thread-self/status", buf, sizeof(buf));
  if (n < 0)
    return (int)n;
  return parse_bounding_ambient(buf, bounding, ambient);
}

int sbx_status_seccomp_filters(pid_t pid) {
  char path[64], buf[4096];
  sbx_strbuf sb;
  sbx_strbuf_init(&sb, path, sizeof(path));
  if (pid > 0) {
    sbx_strbuf_add(&sb, "/proc/");
    sbx_strbuf_add_u64(&sb, (uint64_t)pid);
    sbx_strbuf_add(&sb, "/status");
  } else {
    sbx_strbuf_add(&sb, "/proc/self/status");
  }
  sbx_strbuf_finish(&sb);
  if (read_small(path, buf, sizeof(buf)) <= 0)
    return -1;
  const char *v = field(buf, "Seccomp_filters");
  uint64_t n;
  return v && sbx_parse_u64(&v, &n) == 0 ? (int)n : -1;
}

void sbx_status_collect(const sbx_ns_reference *ref, sbx_layer_status *out) {
  memset(out, 0, sizeof(*out));
  struct stat st;
  int dir = ref && ref->valid ? ns_dir_open() : -1;
  for (int i = 0; i < SBX_NS_KINDS; i++) {
    out->ns[i] = SBX_TRI_UNKNOWN;
    if (ref && ref->valid && ref->ino[i] &&
        ns_stat(dir, sbx_ns_kind_name(i), &st) == 0)
      out->ns[i] = (st.st_ino != ref->ino[i] || st.st_dev != ref->dev[i])
                       ? SBX_TRI_YES
                       : SBX_TRI_NO;
  }
  out->ns_pid_for_children = SBX_TRI_UNKNOWN;
  if (ref && ref->valid && ref->ino[1] &&
      ns_stat(dir, "pid_for_children", &st) == 0)
    out->ns_pid_for_children =
        st.st_ino != ref->ino[1] ? SBX_TRI_YES : SBX_TRI_NO;
  if (dir >= 0)
    close(dir);
  out->root_replaced = SBX_TRI_UNKNOWN;
  if (ref && ref->valid && ref->root_ino && stat("/", &st) == 0)
    out->root_replaced =
        (st.st_ino != ref->root_ino || st.st_dev != ref->root_dev) ? SBX_TRI_YES
                                                                   : SBX_TRI_NO;

  /* uid_map proves a user namespace on its own: the initial one maps
   * everything ("0 0 4294967295"). */
  char buf[4096];
  if (out->ns[0] == SBX_TRI_UNKNOWN &&
      read_small("/proc/self/uid_map", buf, sizeof(buf)) >= 0) {
    const char *p = buf;
    uint64_t a, b, c;
    while (*p == ' ')
      p++;
    int ok = sbx_parse_u64(&p, &a);
    while (*p == ' ')
      p++;
    ok |= sbx_parse_u64(&p, &b);
    while (*p == ' ')
      p++;
    ok |= sbx_parse_u64(&p, &c);
    out->ns[0] = (ok == 0 && a == 0 && b == 0 && c == 4294967295u)
                     ? SBX_TRI_NO
                     : SBX_TRI_YES;
  }

  struct __user_cap_header_struct hdr = {.version =
                                             _LINUX_CAPABILITY_VERSION_3};
  struct __user_cap_data_struct data[2] = {{0}};
  if (syscall(SYS_capget, &hdr, data) == 0) {
    out->cap_effective = data[0].effective | (uint64_t)data[1].effective << 32;
    out->cap_permitted = data[0].permitted | (uint64_t)data[1].permitted << 32;
    out->cap_inheritable = data[0].inheritable | (uint64_t)data[1].inheritable
                                                     << 32;
  }
  /* The bounding and ambient sets come from the same status read as the
   * seccomp figures (one read instead of two prctl calls per
   * capability); without /proc, prctl asks for each capability. */
  /* thread-self: capability sets and seccomp filters are per thread. */
  ssize_t status_len = read_small("/proc/thread-self/status", buf, sizeof(buf));
  if (status_len <= 0 ||
      parse_bounding_ambient(buf, &out->cap_bounding, &out->cap_ambient) != 0) {
    out->cap_bounding = out->cap_ambient = 0;
    for (int cap = 0; cap < 64; cap++) {
      int r = prctl(PR_CAPBSET_READ, (unsigned long)cap, 0, 0, 0);
      if (r < 0)
        break;
      if (r > 0)
        out->cap_bounding |= 1ull << cap;
      if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, (unsigned long)cap, 0,
                0) > 0)
        out->cap_ambient |= 1ull << cap;
    }
  }
  int r = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
  out->no_new_privs = r < 0 ? SBX_TRI_UNKNOWN : r ? SBX_TRI_YES : SBX_TRI_NO;
  /* The bounding set only limits what an exec could add; under
   * no_new_privs an exec adds nothing, so a set that could not be emptied
   * (no CAP_SETPCAP, no user namespace) leaves no capability to hold. */
  bool bounding_moot = out->no_new_privs == SBX_TRI_YES;
  out->caps_empty =
      (out->cap_effective | out->cap_permitted | out->cap_inheritable |
       (bounding_moot ? 0 : out->cap_bounding) | out->cap_ambient) == 0
          ? SBX_TRI_YES
          : SBX_TRI_NO;
  r = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
  out->dumpable = r < 0 ? SBX_TRI_UNKNOWN : r ? SBX_TRI_YES : SBX_TRI_NO;

  out->seccomp_mode = -1;
  out->seccomp_filters = -1;
  if (status_len > 0) {
    const char *v = field(buf, "Seccomp");
    uint64_t n;
    if (v && sbx_parse_u64(&v, &n) == 0)
      out->seccomp_mode = (int)n;
    v = field(buf, "Seccomp_filters");
    if (v && sbx_parse_u64(&v, &n) == 0)
      out->seccomp_filters = (int)n;
    /* "NSpid: 1234 1": more than one entry means a nested pid ns. */
    v = field(buf, "NSpid");
    if (v && out->ns[1] == SBX_TRI_UNKNOWN) {
      int entries = 0;
      while (*v && *v != '\n') {
        if (sbx_parse_u64(&v, &n) == 0)
          entries++;
        else
          v++;
      }
      if (entries > 1)
        out->ns[1] = SBX_TRI_YES;
    }
  }
  if (out->seccomp_mode < 0) {
    r = prctl(PR_GET_SECCOMP, 0, 0, 0, 0);
    if (r >= 0)
      out->seccomp_mode = r;
  }

  out->pid = getpid();
  pid_t sid = getsid(0);
  out->new_session = sid < 0           ? SBX_TRI_UNKNOWN
                     : sid == out->pid ? SBX_TRI_YES
                                       : SBX_TRI_NO;
  out->uid = getuid();
  out->euid = geteuid();
  out->gid = getgid();
  out->egid = getegid();
  out->landlock = SBX_TRI_UNKNOWN;
  out->landlock_abi = -1;
  out->open_fds = sbx_fd_list_open_raw(NULL, 0);
  struct rlimit rl;
  out->nofile_soft = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? rl.rlim_cur : 0;
}

bool sbx_status_is_fully_sandboxed(const sbx_layer_status *st) {
  return st->ns[0] == SBX_TRI_YES && st->ns[1] == SBX_TRI_YES &&
         st->ns[2] == SBX_TRI_YES && st->ns[3] == SBX_TRI_YES &&
         st->caps_empty == SBX_TRI_YES && st->no_new_privs == SBX_TRI_YES &&
         st->dumpable == SBX_TRI_NO && st->seccomp_mode == 2 &&
         st->new_session == SBX_TRI_YES;
}

static const char *tri(sbx_tristate t, const char *yes, const char *no) {
  return t == SBX_TRI_YES ? yes : t == SBX_TRI_NO ? no : "unknown";
}

size_t sbx_status_format(const sbx_layer_status *st, char *buf, size_t len) {
  sbx_strbuf sb;
  sbx_strbuf_init(&sb, buf, len);
  sbx_strbuf_add(&sb, "namespaces:");
  for (int i = 0; i < SBX_NS_KINDS; i++) {
    sbx_strbuf_add_char(&sb, ' ');
    sbx_strbuf_add(&sb, sbx_ns_kind_name(i));
    sbx_strbuf_add_char(&sb, '=');
    sbx_strbuf_add(&sb, tri(st->ns[i], "new", "host"));
  }
  sbx_strbuf_add(&sb, "\nroot: ");
  sbx_strbuf_add(&sb, tri(st->root_replaced, "replaced", "host"));
  sbx_strbuf_add(&sb, "\ncapabilities: effective=");
  sbx_strbuf_add_hex(&sb, st->cap_effective);
  sbx_strbuf_add(&sb, " permitted=");
  sbx_strbuf_add_hex(&sb, st->cap_permitted);
  sbx_strbuf_add(&sb, " inheritable=");
  sbx_strbuf_add_hex(&sb, st->cap_inheritable);
  sbx_strbuf_add(&sb, " bounding=");
  sbx_strbuf_add_hex(&sb, st->cap_bounding);
  sbx_strbuf_add(&sb, " ambient=");
  sbx_strbuf_add_hex(&sb, st->cap_ambient);
  sbx_strbuf_add(&sb, "\nno_new_privs: ");
  sbx_strbuf_add(&sb, tri(st->no_new_privs, "yes", "no"));
  sbx_strbuf_add(&sb, "\ndumpable: ");
  sbx_strbuf_add(&sb, tri(st->dumpable, "yes", "no"));
  sbx_strbuf_add(&sb, "\nseccomp: ");
  static const char *const modes[] = {"off", "strict", "filter"};
  if (st->seccomp_mode >= 0 && st->seccomp_mode <= 2)
    sbx_strbuf_add(&sb, modes[st->seccomp_mode]);
  else
    sbx_strbuf_add(&sb, "unknown");
  if (st->seccomp_filters >= 0) {
    sbx_strbuf_add(&sb, " (");
    sbx_strbuf_add_i64(&sb, st->seccomp_filters);
    sbx_strbuf_add(&sb, " filters)");
  }
  sbx_strbuf_add(&sb, "\nsession: ");
  sbx_strbuf_add(&sb, tri(st->new_session, "new", "inherited"));
  sbx_strbuf_add(&sb, " (pid ");
  sbx_strbuf_add_i64(&sb, st->pid);
  sbx_strbuf_add(&sb, ")\nlandlock: ");
  if (st->landlock == SBX_TRI_YES) {
    sbx_strbuf_add(&sb, "abi ");
    sbx_strbuf_add_i64(&sb, st->landlock_abi);
  } else {
    sbx_strbuf_add(&sb, tri(st->landlock, "yes", "no"));
  }
  sbx_strbuf_add(&sb, "\nfds: ");
  sbx_strbuf_add_i64(&sb, st->open_fds);
  sbx_strbuf_add(&sb, " open (RLIMIT_NOFILE ");
  sbx_strbuf_add_u64(&sb, st->nofile_soft);
  sbx_strbuf_add(&sb, ")\n");
  return sbx_strbuf_finish(&sb);
}
