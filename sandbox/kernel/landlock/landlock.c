/* Landlock ruleset builder with best-effort ABI negotiation in the style
 * of the kernel's sample sandboxer. Parent side builds the ruleset fd
 * (GLib, may allocate); the child side only calls restrict_self
 * (landlock_raw.c, async-signal-safe). Trusts the caller's rule list (policy
 * read before the sandbox starts); refuses relative paths, unknown rights, and
 * a kernel below a required ABI, saying which of the two is at fault. */
#include "sandbox/kernel/landlock/landlock.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/base/strbuf.h"

GQuark sbx_landlock_error_quark(void) {
  return g_quark_from_static_string("sbx-landlock-error-quark");
}

typedef struct {
  char *path;
  int fd;
  uint64_t rights;
  bool is_dir;
} path_rule;

typedef struct {
  uint16_t port;
  uint64_t rights;
} port_rule;

struct sbx_landlock_builder {
  sbx_landlock_rights requested;
  int required_abi;
  GArray *paths; /* path_rule */
  GArray *ports; /* port_rule */
  unsigned skipped;
  bool built;
};

int sbx_landlock_abi_version(void) {
  int abi =
      sbx_landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
  return abi < 0 ? 0 : abi;
}

sbx_landlock_rights sbx_landlock_rights_for_abi(int abi) {
  sbx_landlock_rights r = {0, 0, 0, 0};
  if (abi < 1)
    return r;
  r.fs = SBX_LANDLOCK_FS_ALL;
  r.net = SBX_LANDLOCK_NET_ALL;
  r.scoped = SBX_LANDLOCK_SCOPE_ALL;
  r.restrict_flags = SBX_LANDLOCK_LOG_ALL;
  /* Falls through on purpose: each older ABI lacks all newer features. */
  switch (abi) {
    case 1:
      r.fs &= ~LANDLOCK_ACCESS_FS_REFER;
      /* fallthrough */
    case 2:
      r.fs &= ~LANDLOCK_ACCESS_FS_TRUNCATE;
      /* fallthrough */
    case 3:
      r.net = 0;
      /* fallthrough */
    case 4:
      r.fs &= ~LANDLOCK_ACCESS_FS_IOCTL_DEV;
      /* fallthrough */
    case 5:
      r.scoped = 0;
      /* fallthrough */
    case 6:
      r.restrict_flags = 0;
      break;
    default:
      break;
  }
  return r;
}

sbx_landlock_builder *sbx_landlock_builder_new(void) {
  sbx_landlock_builder *b = g_new0(sbx_landlock_builder, 1);
  b->requested.fs = SBX_LANDLOCK_FS_ALL;
  b->requested.net = SBX_LANDLOCK_NET_ALL;
  b->requested.scoped = SBX_LANDLOCK_SCOPE_ALL;
  b->paths = g_array_new(FALSE, TRUE, sizeof(path_rule));
  b->ports = g_array_new(FALSE, TRUE, sizeof(port_rule));
  return b;
}

static void close_paths(sbx_landlock_builder *b) {
  for (guint i = 0; i < b->paths->len; i++) {
    path_rule *r = &g_array_index(b->paths, path_rule, i);
    if (r->fd >= 0)
      close(r->fd);
    r->fd = -1;
  }
}

void sbx_landlock_builder_free(sbx_landlock_builder *b) {
  if (!b)
    return;
  close_paths(b);
  for (guint i = 0; i < b->paths->len; i++)
    g_free(g_array_index(b->paths, path_rule, i).path);
  g_array_free(b->paths, TRUE);
  g_array_free(b->ports, TRUE);
  g_free(b);
}

void sbx_landlock_set_handled(sbx_landlock_builder *b, uint64_t fs,
                              uint64_t net, uint64_t scoped) {
  b->requested.fs = fs;
  b->requested.net = net;
  b->requested.scoped = scoped;
}

void sbx_landlock_set_log_flags(sbx_landlock_builder *b, uint32_t flags) {
  b->requested.restrict_flags = flags;
}

void sbx_landlock_require_abi(sbx_landlock_builder *b, int min_abi) {
  b->required_abi = min_abi;
}

gboolean sbx_landlock_allow_path(sbx_landlock_builder *b, const char *path,
                                 uint64_t rights, unsigned flags,
                                 GError **error) {
  if (!path || path[0] != '/') {
    g_set_error(error, SBX_LANDLOCK_ERROR, SBX_LANDLOCK_ERROR_INVALID,
                "Landlock path rule \"%s\" is not an absolute path",
                path ? path : "(null)");
    return FALSE;
  }
  if (rights == 0 || (rights & ~SBX_LANDLOCK_FS_ALL)) {
    g_set_error(error, SBX_LANDLOCK_ERROR, SBX_LANDLOCK_ERROR_INVALID,
                "Landlock path rule \"%s\": rights 0x%" G_GINT64_MODIFIER
                "x are not file system rights (use SBX_LANDLOCK_RIGHTS_*)",
                path, (guint64)rights);
    return FALSE;
  }
  int fd = open(path, O_PATH | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    /* ENXIO: a terminal this process has none of, where O_PATH is
     * emulated by a real open (under sbx-run's supervisor). */
    if ((err == ENOENT || err == ENXIO) &&
        (flags & SBX_LANDLOCK_PATH_OPTIONAL)) {
      b->skipped++;
      return TRUE;
    }
    g_set_error(error, SBX_LANDLOCK_ERROR, SBX_LANDLOCK_ERROR_PATH,
                "Landlock path rule: cannot open \"%s\": %s", path,
                g_strerror(err));
    return FALSE;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int err = errno;
    close(fd);
    g_set_error(error, SBX_LANDLOCK_ERROR, SBX_LANDLOCK_ERROR_PATH,
                "Landlock path rule: cannot stat \"%s\": %s", path,
                g_strerror(err));
    return FALSE;
  }
  path_rule r = {g_strdup(path), fd, rights, S_ISDIR(st.st_mode)};
  if (!r.is_dir)
    r.rights &= SBX_LANDLOCK_FS_FILE_RIGHTS;
  g_array_append_val(b->paths, r);
  return TRUE;
}

gboolean sbx_landlock_allow_tcp_port(sbx_landlock_builder *b, uint16_t port,
                                     uint64_t net_rights, GError **error) {
  if (net_rights == 0 || (net_rights & ~SBX_LANDLOCK_NET_ALL)) {
    g_set_error(error, SBX_LANDLOCK_ERROR, SBX_LANDLOCK_ERROR_INVALID,
                "Landlock port rule %u: rights 0x%" G_GINT64_MODIFIER
                "x are not network rights (LANDLOCK_ACCESS_NET_*)",
                port, (guint64)net_rights);
    return FALSE;
  }
  if (port == 0 && (net_rights & LANDLOCK_ACCESS_NET_CONNECT_TCP)) {
    g_set_error(error, SBX_LANDLOCK_ERROR, SBX_LANDLOCK_ERROR_INVALID,
                "Landlock port rule: port 0 cannot be connected to");
    return FALSE;
  }
  port_rule r = {port, net_rights};
  g_array_append_val(b->ports, r);
  return TRUE;
}

static void add_drop(sbx_landlock_report *rep, int abi, uint64_t fs,
                     uint64_t net, uint64_t scoped, uint32_t flags,
                     const char *reason) {
  if (!(fs | net | scoped | flags) || rep->n_drops >= SBX_LANDLOCK_MAX_DROPS)
    return;
  rep->drops[rep->n_drops].abi = abi;
  rep->drops[rep->n_drops].rights =
      (sbx_landlock_rights){fs, net, scoped, flags};
  rep->drops[rep->n_drops].reason = reason;
  rep->n_drops++;
}

/* Best effort: removes, ABI by ABI, what the running kernel lacks, saying
 * why. Falls through on purpose, as in the kernel's sample sandboxer. */
static void negotiate(int abi, sbx_landlock_rights *want,
                      sbx_landlock_report *rep) {
  sbx_landlock_rights w = *want;
  switch (abi) {
    case 1:
      add_drop(rep, 2, w.fs & LANDLOCK_ACCESS_FS_REFER, 0, 0, 0,
               "REFER needs ABI 2 (Linux 5.19); ABI 1 always denies "
               "renaming or linking across directories");
      w.fs &= ~LANDLOCK_ACCESS_FS_REFER;
      /* fallthrough */
    case 2:
      add_drop(rep, 3, w.fs & LANDLOCK_ACCESS_FS_TRUNCATE, 0, 0, 0,
               "TRUNCATE needs ABI 3 (Linux 6.2); truncate stays allowed");
      w.fs &= ~LANDLOCK_ACCESS_FS_TRUNCATE;
      /* fallthrough */
    case 3:
      add_drop(rep, 4, 0, w.net, 0, 0,
               "TCP bind/connect rules need ABI 4 (Linux 6.7); TCP is "
               "restricted only by the network namespace");
      w.net = 0;
      /* fallthrough */
    case 4:
      add_drop(rep, 5, w.fs & LANDLOCK_ACCESS_FS_IOCTL_DEV, 0, 0, 0,
               "IOCTL_DEV needs ABI 5 (Linux 6.10); device ioctls stay "
               "allowed on opened devices");
      w.fs &= ~LANDLOCK_ACCESS_FS_IOCTL_DEV;
      /* fallthrough */
    case 5:
      add_drop(rep, 6, 0, 0, w.scoped, 0,
               "scopes (abstract unix sockets, signals) need ABI 6 "
               "(Linux 6.12); the pid and net namespaces remain");
      w.scoped = 0;
      /* fallthrough */
    case 6:
      add_drop(rep, 7, 0, 0, 0, w.restrict_flags,
               "LANDLOCK_RESTRICT_SELF_LOG_* flags need ABI 7 (Linux "
               "6.15); the kernel's default audit logging applies");
      w.restrict_flags = 0;
      break;
    default:
      break;
  }
  *want = w;
}

int sbx_landlock_build(sbx_landlock_builder *b, sbx_landlock_report *report,
                       GError **error) {
  sbx_landlock_report local;
  sbx_landlock_report *rep = report ? report : &local;
  memset(rep, 0, sizeof(*rep));
  if (b->built) {
    g_set_error(error, SBX_LANDLOCK_ERROR, SBX_LANDLOCK_ERROR_INVALID,
                "this Landlock builder was already built; make a new one");
    return -1;
  }
  sbx_landlock_rights want = b->requested;
  if ((want.fs & ~SBX_LANDLOCK_FS_ALL) || (want.net & ~SBX_LANDLOCK_NET_ALL) ||
      (want.scoped & ~SBX_LANDLOCK_SCOPE_ALL) ||
      (want.restrict_flags & ~SBX_LANDLOCK_LOG_ALL)) {
    g_set_error(error, SBX_LANDLOCK_ERROR, SBX_LANDLOCK_ERROR_INVALID,
                "Landlock: handled rights name bits this code does not know "
                "(fs 0x%" G_GINT64_MODIFIER "x net 0x%" G_GINT64_MODIFIER
                "x scoped 0x%" G_GINT64_MODIFIER "x log 0x%x)",
                (guint64)want.fs, (guint64)want.net, (guint64)want.scoped,
                want.restrict_flags);
    return -1;
  }
  rep->requested = want;
  rep->required_abi = b->required_abi;
  int kernel_abi =
      sbx_landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
  if (kernel_abi < 0) {
    int err = errno;
    rep->kernel_abi = 0;
    g_set_error(error, SBX_LANDLOCK_ERROR, SBX_LANDLOCK_ERROR_UNSUPPORTED, "%s",
                err == EOPNOTSUPP
                    ? "Landlock is supported by the kernel but disabled at "
                      "boot: add \"landlock\" to the lsm= kernel parameter"
                    : "the kernel has no Landlock (it needs Linux 5.13 or "
                      "later built with CONFIG_SECURITY_LANDLOCK=y and "
                      "\"landlock\" in the lsm= kernel parameter), or a "
                      "seccomp filter this process runs under (a "
                      "container's profile) refuses the Landlock calls");
    return -1;
  }
  rep->kernel_abi = kernel_abi;
  if (b->required_abi > kernel_abi) {
    g_set_error(error, SBX_LANDLOCK_ERROR, SBX_LANDLOCK_ERROR_KERNEL_TOO_OLD,
                "this profile requires Landlock ABI %d, but the running "
                "kernel only provides ABI %d: the kernel lacks it (upgrade "
                "the kernel, or lower the profile's minimum and accept "
                "best-effort enforcement)",
                b->required_abi, kernel_abi);
    return -1;
  }
  rep->abi =
      kernel_abi > SBX_LANDLOCK_ABI_KNOWN ? SBX_LANDLOCK_ABI_KNOWN : kernel_abi;
  negotiate(rep->abi, &want, rep);
  rep->handled = want;
  rep->restrict_flags = want.restrict_flags;
  rep->n_paths_skipped = b->skipped;

  struct sbx_landlock_ruleset_attr attr = {
      .handled_access_fs = want.fs,
      .handled_access_net = want.net,
      .scoped = want.scoped,
  };
  /* Older kernels take the shorter struct their ABI defines. */
  size_t size = rep->abi >= 6   ? sizeof(attr)
                : rep->abi >= 4 ? 2 * sizeof(uint64_t)
                                : sizeof(uint64_t);
  int fd = sbx_landlock_create_ruleset(&attr, size, 0);
  if (fd < 0) {
    g_set_error(error, SBX_LANDLOCK_ERROR, SBX_LANDLOCK_ERROR_FAILED,
                "landlock_create_ruleset (abi %d, fs 0x%" G_GINT64_MODIFIER
                "x) failed: %s",
                rep->abi, (guint64)want.fs, g_strerror(errno));
    return -1;
  }
  for (guint i = 0; i < b->paths->len; i++) {
    path_rule *r = &g_array_index(b->paths, path_rule, i);
    struct sbx_landlock_path_beneath_attr pb = {
        .allowed_access = r->rights & want.fs, .parent_fd = r->fd};
    if (pb.allowed_access == 0)
      continue;
    if (sbx_landlock_add_rule(fd, SBX_LANDLOCK_RULE_PATH_BENEATH, &pb, 0) !=
        0) {
      int err = errno;
      close(fd);
      g_set_error(error, SBX_LANDLOCK_ERROR, SBX_LANDLOCK_ERROR_FAILED,
                  "landlock_add_rule for \"%s\" (rights 0x%" G_GINT64_MODIFIER
                  "x) failed: %s",
                  r->path, (guint64)pb.allowed_access, g_strerror(err));
      return -1;
    }
    rep->n_path_rules++;
  }
  for (guint i = 0; i < b->ports->len && want.net; i++) {
    port_rule *r = &g_array_index(b->ports, port_rule, i);
    struct sbx_landlock_net_port_attr np = {
        .allowed_access = r->rights & want.net, .port = r->port};
    if (np.allowed_access == 0)
      continue;
    if (sbx_landlock_add_rule(fd, SBX_LANDLOCK_RULE_NET_PORT, &np, 0) != 0) {
      int err = errno;
      close(fd);
      g_set_error(error, SBX_LANDLOCK_ERROR, SBX_LANDLOCK_ERROR_FAILED,
                  "landlock_add_rule for TCP port %u failed: %s", r->port,
                  g_strerror(err));
      return -1;
    }
    rep->n_port_rules++;
  }
  b->built = true;
  close_paths(b);
  return fd;
}

gboolean sbx_landlock_restrict_self(int ruleset_fd, uint32_t restrict_flags,
                                    GError **error) {
  int rc = sbx_landlock_restrict_self_raw(ruleset_fd, restrict_flags);
  if (rc == 0)
    return TRUE;
  g_set_error(error, SBX_LANDLOCK_ERROR, SBX_LANDLOCK_ERROR_FAILED,
              "landlock_restrict_self failed: %s%s", g_strerror(-rc),
              rc == -E2BIG ? " (too many stacked Landlock domains: at most "
                             "16 layers)"
              : rc == -EBADFD || rc == -EBADF
                  ? " (pass the fd sbx_landlock_build returned)"
                  : "");
  return FALSE;
}

static void add_rights(sbx_strbuf *sb, const sbx_landlock_rights *r) {
  sbx_strbuf_add(sb, "fs=");
  sbx_strbuf_add_hex(sb, r->fs);
  sbx_strbuf_add(sb, " net=");
  sbx_strbuf_add_hex(sb, r->net);
  sbx_strbuf_add(sb, " scoped=");
  sbx_strbuf_add_hex(sb, r->scoped);
  if (r->restrict_flags) {
    sbx_strbuf_add(sb, " log=");
    sbx_strbuf_add_hex(sb, r->restrict_flags);
  }
}

size_t sbx_landlock_report_format(const sbx_landlock_report *rep, char *buf,
                                  size_t len) {
  sbx_strbuf sb;
  sbx_strbuf_init(&sb, buf, len);
  sbx_strbuf_add(&sb, "landlock: abi ");
  sbx_strbuf_add_i64(&sb, rep->abi);
  sbx_strbuf_add(&sb, " (kernel ");
  sbx_strbuf_add_i64(&sb, rep->kernel_abi);
  if (rep->required_abi) {
    sbx_strbuf_add(&sb, ", required ");
    sbx_strbuf_add_i64(&sb, rep->required_abi);
  }
  sbx_strbuf_add(&sb, "), handled ");
  add_rights(&sb, &rep->handled);
  sbx_strbuf_add(&sb, ", ");
  sbx_strbuf_add_u64(&sb, rep->n_path_rules);
  sbx_strbuf_add(&sb, " path rules, ");
  sbx_strbuf_add_u64(&sb, rep->n_port_rules);
  sbx_strbuf_add(&sb, " port rules");
  if (rep->n_paths_skipped) {
    sbx_strbuf_add(&sb, ", ");
    sbx_strbuf_add_u64(&sb, rep->n_paths_skipped);
    sbx_strbuf_add(&sb, " optional paths absent");
  }
  sbx_strbuf_add_char(&sb, '\n');
  for (unsigned i = 0; i < rep->n_drops; i++) {
    sbx_strbuf_add(&sb, "landlock: dropped ");
    add_rights(&sb, &rep->drops[i].rights);
    sbx_strbuf_add(&sb, ": ");
    sbx_strbuf_add(&sb, rep->drops[i].reason);
    sbx_strbuf_add_char(&sb, '\n');
  }
  return sbx_strbuf_finish(&sb);
}
