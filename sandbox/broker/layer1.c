/* Layer 1, the broker-client filter and its SIGSYS handlers; see layer1.h.
 *
 * Why it exists: it is the bridge between code that calls open(2) and a
 * broker that decides on every file. The filter (broker-client.policy)
 * traps the file-system calls; each handler here reads the trapped call's
 * arguments, turns its path into the absolute, normalised form the broker
 * accepts, and asks the broker through client.h.
 *
 * What it trusts: the registers the trap registry hands over (the kernel
 * wrote them) and the client's replies (client.c checks their shape). Path
 * strings are the worker's own memory, read once into the request.
 * What it refuses, before the broker is asked:
 *   - relative paths, whatever the directory descriptor: EACCES (a worker
 *     has no working directory the broker could resolve against);
 *   - an empty path: ENOENT, except (fd, "", AT_EMPTY_PATH) for newfstatat
 *     and statx, answered here with fstat(2) on the descriptor;
 *   - flags the call does not define: EINVAL, as the kernel would.
 * Paths that are absolute but not normalised (`//`, `.`, `..`, a trailing
 * `/`) are normalised lexically first (sbx_path_join_link): `..` never
 * climbs above `/`, and the broker still decides on the object it opens,
 * so normalising can never reach more than the allowlist grants. It can
 * differ from the kernel's reading when a component before `..` is a
 * symbolic link; the broker refuses those requests instead.
 *
 * Every handler runs inside the SIGSYS handler: async-signal-safe calls
 * only, stack buffers only, no GLib, no locks; the registry preserves
 * errno and writes the returned value (>= 0 or -errno) into RAX.
 */
#include "sandbox/broker/layer1.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "sandbox/base/path.h"
#include "sandbox/kernel/seccomp/loader.h"
#include "sandbox/kernel/seccomp/trap.h"
#include "sandbox/policy/builtin/builtin.h"
#include "sandbox/policy/compiler.h"

G_DEFINE_QUARK(sbx - layer1 - error - quark, sbx_layer1_error)

#define NEWFSTATAT_FLAGS (AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH | AT_NO_AUTOMOUNT)
#define STATX_FLAGS \
  (AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH | AT_NO_AUTOMOUNT | AT_STATX_SYNC_TYPE)
#define FACCESSAT2_FLAGS (AT_EACCESS | AT_SYMLINK_NOFOLLOW)

/* A path as the broker accepts it: `text` is either the caller's string
 * (already valid) or `buf`. */
typedef struct {
  const char *text;
  char buf[PATH_MAX];
} broker_path;

/* Signal-safe. The path argument of a trapped call, made acceptable to the
 * broker, or -errno. The directory descriptor matters only to say no: an
 * absolute path ignores it, as the kernel does. */
static int take_path(uint64_t arg, broker_path *out) {
  const char *path = (const char *)(uintptr_t)arg;
  if (path == NULL)
    return -EFAULT;
  if (path[0] == '\0')
    return -ENOENT;
  if (path[0] != '/')
    return -EACCES;
  size_t len = strnlen(path, PATH_MAX);
  if (len >= PATH_MAX)
    return -ENAMETOOLONG;
  if (sbx_path_validate(path, len, NULL) == 0) {
    out->text = path;
    return 0;
  }
  int n = sbx_path_join_link("/", 1, path, len, out->buf, sizeof(out->buf));
  if (n < 0)
    return n;
  out->text = out->buf;
  return 0;
}

/* Signal-safe. True for (fd, "" or NULL) with AT_EMPTY_PATH: a question
 * about the descriptor itself. */
static bool is_empty_path_call(uint64_t path_arg, int flags) {
  const char *path = (const char *)(uintptr_t)path_arg;
  return (flags & AT_EMPTY_PATH) && (path == NULL || path[0] == '\0');
}

/* Signal-safe. fstat(2) on a descriptor the worker already holds: the
 * kernel call, never glibc's fstat(), which is newfstatat and would trap
 * again. AT_FDCWD would mean the working directory, which a worker does
 * not have. */
static int fstat_fd(int fd, struct stat *st) {
  if (fd == AT_FDCWD)
    return -EACCES;
  long rc = syscall(SYS_fstat, (long)fd, st);
  return rc < 0 ? -errno : 0;
}

static const sbx_broker_client *client_of(void *aux) {
  return aux;
}

/* ---- Handlers: each runs in the SIGSYS handler (signal-safe). ---------- */

static intptr_t open_common(void *aux, uint64_t path_arg, int flags,
                            mode_t mode) {
  broker_path p;
  int rc = take_path(path_arg, &p);
  if (rc < 0)
    return rc;
  return sbx_broker_open(client_of(aux), p.text, flags, mode);
}

static intptr_t trap_open(const sbx_trap_call *call, void *aux) {
  return open_common(aux, call->args[0], (int)call->args[1],
                     (mode_t)call->args[2]);
}

static intptr_t trap_openat(const sbx_trap_call *call, void *aux) {
  return open_common(aux, call->args[1], (int)call->args[2],
                     (mode_t)call->args[3]);
}

static intptr_t trap_creat(const sbx_trap_call *call, void *aux) {
  return open_common(aux, call->args[0], O_CREAT | O_WRONLY | O_TRUNC,
                     (mode_t)call->args[1]);
}

static intptr_t stat_common(void *aux, uint64_t path_arg, bool follow,
                            struct stat *out) {
  broker_path p;
  int rc = take_path(path_arg, &p);
  if (rc < 0)
    return rc;
  return follow ? sbx_broker_stat(client_of(aux), p.text, out)
                : sbx_broker_lstat(client_of(aux), p.text, out);
}

static intptr_t trap_stat(const sbx_trap_call *call, void *aux) {
  return stat_common(aux, call->args[0], true,
                     (struct stat *)(uintptr_t)call->args[1]);
}

static intptr_t trap_lstat(const sbx_trap_call *call, void *aux) {
  return stat_common(aux, call->args[0], false,
                     (struct stat *)(uintptr_t)call->args[1]);
}

static intptr_t trap_newfstatat(const sbx_trap_call *call, void *aux) {
  int dirfd = (int)call->args[0];
  struct stat *out = (struct stat *)(uintptr_t)call->args[2];
  int flags = (int)call->args[3];
  if (flags & ~NEWFSTATAT_FLAGS)
    return -EINVAL;
  if (is_empty_path_call(call->args[1], flags))
    return fstat_fd(dirfd, out);
  return stat_common(aux, call->args[1], !(flags & AT_SYMLINK_NOFOLLOW), out);
}

/* Signal-safe. What statx(fd, "", AT_EMPTY_PATH) reports, from fstat(2):
 * the basic fields; no birth time or mount id, which fstat lacks. */
static int statx_fd(int fd, struct statx *out) {
  struct stat st;
  int rc = fstat_fd(fd, &st);
  if (rc < 0)
    return rc;
  struct statx stx;
  memset(&stx, 0, sizeof(stx));
  stx.stx_mask = STATX_BASIC_STATS;
  stx.stx_blksize = (uint32_t)st.st_blksize;
  stx.stx_nlink = (uint32_t)st.st_nlink;
  stx.stx_uid = st.st_uid;
  stx.stx_gid = st.st_gid;
  stx.stx_mode = (uint16_t)st.st_mode;
  stx.stx_ino = st.st_ino;
  stx.stx_size = (uint64_t)st.st_size;
  stx.stx_blocks = (uint64_t)st.st_blocks;
  stx.stx_atime.tv_sec = st.st_atim.tv_sec;
  stx.stx_atime.tv_nsec = (uint32_t)st.st_atim.tv_nsec;
  stx.stx_mtime.tv_sec = st.st_mtim.tv_sec;
  stx.stx_mtime.tv_nsec = (uint32_t)st.st_mtim.tv_nsec;
  stx.stx_ctime.tv_sec = st.st_ctim.tv_sec;
  stx.stx_ctime.tv_nsec = (uint32_t)st.st_ctim.tv_nsec;
  stx.stx_rdev_major = major(st.st_rdev);
  stx.stx_rdev_minor = minor(st.st_rdev);
  stx.stx_dev_major = major(st.st_dev);
  stx.stx_dev_minor = minor(st.st_dev);
  /* NULL is the one bad buffer a handler can tell from a good one. */
  if (out == NULL)
    return -EFAULT;
  memcpy(out, &stx, sizeof(stx));
  return 0;
}

static intptr_t trap_statx(const sbx_trap_call *call, void *aux) {
  int dirfd = (int)call->args[0];
  int flags = (int)call->args[2];
  unsigned mask = (unsigned)call->args[3];
  struct statx *out = (struct statx *)(uintptr_t)call->args[4];
  if ((flags & ~STATX_FLAGS) ||
      (flags & AT_STATX_SYNC_TYPE) == AT_STATX_SYNC_TYPE ||
      (mask & STATX__RESERVED))
    return -EINVAL;
  if (is_empty_path_call(call->args[1], flags))
    return statx_fd(dirfd, out);
  broker_path p;
  int rc = take_path(call->args[1], &p);
  if (rc < 0)
    return rc;
  /* AT_EMPTY_PATH means nothing for a non-empty path. */
  return sbx_broker_statx(client_of(aux), p.text, flags & ~AT_EMPTY_PATH, mask,
                          out);
}

static intptr_t access_common(void *aux, uint64_t path_arg, int mode,
                              int flags) {
  if (flags & ~FACCESSAT2_FLAGS)
    return -EINVAL;
  broker_path p;
  int rc = take_path(path_arg, &p);
  if (rc < 0)
    return rc;
  return sbx_broker_access(client_of(aux), p.text, mode, flags);
}

static intptr_t trap_access(const sbx_trap_call *call, void *aux) {
  return access_common(aux, call->args[0], (int)call->args[1], 0);
}

static intptr_t trap_faccessat(const sbx_trap_call *call, void *aux) {
  return access_common(aux, call->args[1], (int)call->args[2], 0);
}

static intptr_t trap_faccessat2(const sbx_trap_call *call, void *aux) {
  return access_common(aux, call->args[1], (int)call->args[2],
                       (int)call->args[3]);
}

static intptr_t readlink_common(void *aux, uint64_t path_arg, uint64_t buf,
                                int size) {
  if (size <= 0)
    return -EINVAL;
  broker_path p;
  int rc = take_path(path_arg, &p);
  if (rc < 0)
    return rc;
  return sbx_broker_readlink(client_of(aux), p.text, (char *)(uintptr_t)buf,
                             (size_t)size);
}

static intptr_t trap_readlink(const sbx_trap_call *call, void *aux) {
  return readlink_common(aux, call->args[0], call->args[1], (int)call->args[2]);
}

static intptr_t trap_readlinkat(const sbx_trap_call *call, void *aux) {
  return readlink_common(aux, call->args[1], call->args[2], (int)call->args[3]);
}

static intptr_t mkdir_common(void *aux, uint64_t path_arg, mode_t mode) {
  broker_path p;
  int rc = take_path(path_arg, &p);
  if (rc < 0)
    return rc;
  return sbx_broker_mkdir(client_of(aux), p.text, mode);
}

static intptr_t trap_mkdir(const sbx_trap_call *call, void *aux) {
  return mkdir_common(aux, call->args[0], (mode_t)call->args[1]);
}

static intptr_t trap_mkdirat(const sbx_trap_call *call, void *aux) {
  return mkdir_common(aux, call->args[1], (mode_t)call->args[2]);
}

static intptr_t remove_common(void *aux, uint64_t path_arg, bool directory) {
  broker_path p;
  int rc = take_path(path_arg, &p);
  if (rc < 0)
    return rc;
  return directory ? sbx_broker_rmdir(client_of(aux), p.text)
                   : sbx_broker_unlink(client_of(aux), p.text);
}

static intptr_t trap_rmdir(const sbx_trap_call *call, void *aux) {
  return remove_common(aux, call->args[0], true);
}

static intptr_t trap_unlink(const sbx_trap_call *call, void *aux) {
  return remove_common(aux, call->args[0], false);
}

static intptr_t trap_unlinkat(const sbx_trap_call *call, void *aux) {
  int flags = (int)call->args[2];
  if (flags & ~AT_REMOVEDIR)
    return -EINVAL;
  return remove_common(aux, call->args[1], (flags & AT_REMOVEDIR) != 0);
}

static intptr_t rename_common(void *aux, uint64_t from_arg, uint64_t to_arg,
                              unsigned flags) {
  broker_path from, to;
  int rc = take_path(from_arg, &from);
  if (rc == 0)
    rc = take_path(to_arg, &to);
  if (rc < 0)
    return rc;
  return sbx_broker_rename(client_of(aux), from.text, to.text, flags);
}

static intptr_t trap_rename(const sbx_trap_call *call, void *aux) {
  return rename_common(aux, call->args[0], call->args[1], 0);
}

static intptr_t trap_renameat(const sbx_trap_call *call, void *aux) {
  return rename_common(aux, call->args[1], call->args[3], 0);
}

static intptr_t trap_renameat2(const sbx_trap_call *call, void *aux) {
  return rename_common(aux, call->args[1], call->args[3],
                       (unsigned)call->args[4]);
}

/* Every call broker-client.policy traps, and who answers it.
 * sbx_layer1_compile checks that the program traps exactly these. */
static const struct {
  int nr;
  sbx_trap_handler handler;
} layer1_traps[] = {
    {__NR_open, trap_open},           {__NR_openat, trap_openat},
    {__NR_creat, trap_creat},         {__NR_stat, trap_stat},
    {__NR_lstat, trap_lstat},         {__NR_newfstatat, trap_newfstatat},
    {__NR_statx, trap_statx},         {__NR_access, trap_access},
    {__NR_faccessat, trap_faccessat}, {__NR_faccessat2, trap_faccessat2},
    {__NR_readlink, trap_readlink},   {__NR_readlinkat, trap_readlinkat},
    {__NR_mkdir, trap_mkdir},         {__NR_mkdirat, trap_mkdirat},
    {__NR_rmdir, trap_rmdir},         {__NR_unlink, trap_unlink},
    {__NR_unlinkat, trap_unlinkat},   {__NR_rename, trap_rename},
    {__NR_renameat, trap_renameat},   {__NR_renameat2, trap_renameat2},
};

#define N_LAYER1_TRAPS (sizeof(layer1_traps) / sizeof(layer1_traps[0]))

static bool has_handler(int nr) {
  for (size_t i = 0; i < N_LAYER1_TRAPS; i++)
    if (layer1_traps[i].nr == nr)
      return true;
  return false;
}

/* The policy and the handler table are two lists of the same calls; a
 * call trapped without a handler would kill the worker, a handler without
 * a trap would never run. Refuse a program where they differ. */
static gboolean check_traps_match(const sbx_bpf_program *prog, GError **error) {
  for (int nr = 0; nr < SBX_TRAP_MAX_NR; nr++) {
    struct seccomp_data d;
    memset(&d, 0, sizeof(d));
    d.nr = nr;
    d.arch = AUDIT_ARCH_X86_64;
    uint32_t action =
        sbx_bpf_run(prog->insns, prog->len, &d, NULL) & SECCOMP_RET_ACTION_FULL;
    bool traps = action == SECCOMP_RET_TRAP;
    if (traps != has_handler(nr)) {
      g_set_error(error, SBX_LAYER1_ERROR, SBX_LAYER1_ERROR_POLICY,
                  "builtin:broker-client.policy %s syscall %d, but layer 1 "
                  "%s a handler for it",
                  traps ? "traps" : "does not trap", nr,
                  traps ? "has no" : "registers");
      return FALSE;
    }
  }
  return TRUE;
}

gboolean sbx_layer1_compile(sbx_bpf_program *out, GError **error) {
  memset(out, 0, sizeof(*out));
  sbx_policy *policy = sbx_builtin_policy("broker-client", error);
  if (policy == NULL)
    return FALSE;
  sbx_bpf_program prog = {NULL, 0};
  gboolean ok = sbx_bpf_compile(policy, &prog, error);
  sbx_policy_free(policy);
  if (ok)
    ok = check_traps_match(&prog, error);
  if (!ok) {
    sbx_bpf_program_clear(&prog);
    return FALSE;
  }
  *out = prog;
  return TRUE;
}

/* ASYNC-SIGNAL-SAFE: runs in the zygote, which may have been forked from a
 * process whose other threads held locks. The registry's functions
 * allocate nothing when given a NULL GError (as report.c relies on too),
 * and the numbers here are all in the registry's range, so the only
 * refusal left is a frozen registry. */
int sbx_layer1_register_traps_raw(void *client) {
  if (client == NULL)
    return -EINVAL;
  for (size_t i = 0; i < N_LAYER1_TRAPS; i++) {
    if (!sbx_trap_register(layer1_traps[i].nr, layer1_traps[i].handler, client,
                           NULL))
      return -EBUSY;
  }
  if (!sbx_trap_install(NULL))
    return -EINVAL;
  return 0;
}

/* ASYNC-SIGNAL-SAFE: runs in each worker between fork and its entry. */
int sbx_layer1_attach_raw(void *client, int channel_fd) {
  if (client == NULL || channel_fd < 0)
    return -EINVAL;
  sbx_broker_client_init(client, channel_fd);
  return 0;
}

gboolean sbx_layer1_enter(sbx_broker_client *client, GError **error) {
  g_return_val_if_fail(client != NULL, FALSE);
  /* Compile first: a failure there leaves the registry untouched. */
  sbx_bpf_program prog;
  if (!sbx_layer1_compile(&prog, error))
    return FALSE;
  int rc = sbx_layer1_register_traps_raw(client);
  if (rc < 0) {
    g_set_error(error, SBX_LAYER1_ERROR, SBX_LAYER1_ERROR_TRAPS,
                "layer 1: cannot register the broker client's SIGSYS "
                "handlers: %s (the trap registry is frozen once a SIGSYS "
                "handler is installed; enter layer 1 before any other trap "
                "user installs it)",
                g_strerror(-rc));
    sbx_bpf_program_clear(&prog);
    return FALSE;
  }
  GError *load_error = NULL;
  gboolean ok = sbx_seccomp_load(prog.insns, prog.len, SBX_SECCOMP_TSYNC, NULL,
                                 &load_error);
  sbx_bpf_program_clear(&prog);
  if (!ok) {
    g_set_error(error, SBX_LAYER1_ERROR, SBX_LAYER1_ERROR_LOAD,
                "layer 1: loading the broker-client filter: %s",
                load_error->message);
    g_error_free(load_error);
    return FALSE;
  }
  return TRUE;
}
