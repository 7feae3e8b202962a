/* Landlock rulesets with ABI negotiation: what a sandboxed process may
 * reach in the file system, on TCP, and across its domain's boundary.
 *
 * Why it exists: a seccomp filter cannot check a path safely (the string
 * can change after the check); Landlock enforces path rules inside the
 * VFS, on the object actually opened, and it is unprivileged and stacks:
 * a second ruleset only narrows the first.
 *
 * Life cycle (parent side, then child side):
 *   1. b = sbx_landlock_builder_new();         handles all the kernel knows
 *   2. sbx_landlock_require_abi(b, N);          optional minimum
 *   3. sbx_landlock_allow_path(b, "/usr", SBX_LANDLOCK_RIGHTS_READ_EXEC, 0,
 *                              &error);          broker / sbx-run only
 *      sbx_landlock_allow_tcp_port(b, port, LANDLOCK_ACCESS_NET_CONNECT_TCP,
 *                                  &error);      none by default
 *   4. fd = sbx_landlock_build(b, &report, &error);   ruleset fd, O_CLOEXEC
 *   5. sbx_landlock_builder_free(b);
 *   ... fork ...
 *   6. child: sbx_landlock_restrict_self_raw(fd, report.restrict_flags);
 *             close(fd) (or let fd hygiene close it)
 * Workers use steps 1, 4, 6 only: every right handled, no rule, so the
 * worker can open nothing by itself; everything goes through the broker.
 *
 * ABI negotiation: the kernel's version comes from
 * landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION). One
 * switch drops, ABI by ABI, what the running kernel lacks, and records why
 * in the report (sbx_landlock_build). A right that was requested but
 * dropped is never enforced silently: the report lists it. A minimum ABI
 * turns "best effort" into "refuse": below it, building fails with
 * SBX_LANDLOCK_ERROR_KERNEL_TOO_OLD and a message that says the kernel
 * lacks the feature, not that the request was wrong.
 *
 * Path rules: each path is opened when it is added, O_PATH | O_CLOEXEC,
 * following symlinks (the rule is about the object the caller named after
 * canonicalisation, which the broker does first); a directory gets the
 * requested rights, a non-directory only the rights valid for files
 * (EXECUTE, READ_FILE, WRITE_FILE, TRUNCATE, IOCTL_DEV); the rest is masked
 * off. Rights the ruleset does not handle are dropped from rules too, so
 * every rule is one the kernel accepts.
 *
 * Ownership: the builder owns the path descriptors it opened and closes
 * them in sbx_landlock_build (and in _free). The ruleset fd returned by
 * sbx_landlock_build belongs to the caller. Strings passed in are copied.
 *
 * What it trusts: the caller's rule list (it is policy, read before the
 * sandbox starts). What it refuses: relative paths, rights outside the
 * ABI-7 set, port 0 with nothing else, net rights in a path rule and vice
 * versa, building twice.
 */
#ifndef SBX_KERNEL_LANDLOCK_LANDLOCK_H_
#define SBX_KERNEL_LANDLOCK_LANDLOCK_H_

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

#include "sandbox/kernel/landlock/landlock_uapi.h"

/* Every right of each kind this code knows (ABI 7). */
#define SBX_LANDLOCK_FS_ALL                                         \
  (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |     \
   LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR |     \
   LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE | \
   LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR |     \
   LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK |     \
   LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |   \
   LANDLOCK_ACCESS_FS_MAKE_SYM | LANDLOCK_ACCESS_FS_REFER |         \
   LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_IOCTL_DEV)
#define SBX_LANDLOCK_NET_ALL \
  (LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP)
#define SBX_LANDLOCK_SCOPE_ALL \
  (LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL)
#define SBX_LANDLOCK_LOG_ALL                  \
  (LANDLOCK_RESTRICT_SELF_LOG_SAME_EXEC_OFF | \
   LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON |   \
   LANDLOCK_RESTRICT_SELF_LOG_SUBDOMAINS_OFF)

/* The rights that make sense on a file (the rest apply to directories). */
#define SBX_LANDLOCK_FS_FILE_RIGHTS                             \
  (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | \
   LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE | \
   LANDLOCK_ACCESS_FS_IOCTL_DEV)

/* Rights sets for path rules, named by how much they grant. */
/* Read files and list directories. */
#define SBX_LANDLOCK_RIGHTS_READ \
  (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
/* Read, and execute (binaries, the dynamic loader, shared libraries). */
#define SBX_LANDLOCK_RIGHTS_READ_EXEC \
  (SBX_LANDLOCK_RIGHTS_READ | LANDLOCK_ACCESS_FS_EXECUTE)
/* Read, write, truncate, and below a directory create/remove/rename
 * regular files, directories, symlinks, sockets and fifos. Never device
 * nodes (MAKE_CHAR/MAKE_BLOCK); ioctl on devices is granted so an allowed
 * terminal or device node stays usable. No EXECUTE. */
#define SBX_LANDLOCK_RIGHTS_READ_WRITE                            \
  (SBX_LANDLOCK_RIGHTS_READ | LANDLOCK_ACCESS_FS_WRITE_FILE |     \
   LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_REMOVE_DIR |  \
   LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_DIR | \
   LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SYM |    \
   LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO |  \
   LANDLOCK_ACCESS_FS_REFER | LANDLOCK_ACCESS_FS_IOCTL_DEV)

#define SBX_LANDLOCK_ERROR (sbx_landlock_error_quark())
GQuark sbx_landlock_error_quark(void);

typedef enum {
  /* The kernel has no Landlock, or it is disabled at boot (lsm=). */
  SBX_LANDLOCK_ERROR_UNSUPPORTED,
  /* The kernel's ABI is below the minimum the profile requires. */
  SBX_LANDLOCK_ERROR_KERNEL_TOO_OLD,
  /* The request itself is wrong (bad path, unknown right, ...). */
  SBX_LANDLOCK_ERROR_INVALID,
  /* A path rule's path cannot be opened. */
  SBX_LANDLOCK_ERROR_PATH,
  /* A Landlock syscall failed; the message names it. */
  SBX_LANDLOCK_ERROR_FAILED,
} sbx_landlock_error_code;

/* The running kernel's Landlock ABI: >= 1, or 0 when Landlock is missing
 * or disabled (ENOSYS / EOPNOTSUPP). Async-signal-safe. */
int sbx_landlock_abi_version(void);

/* The rights of each kind that ABI abi has (capped at ABI 7). */
typedef struct {
  uint64_t fs;
  uint64_t net;
  uint64_t scoped;
  uint32_t restrict_flags;
} sbx_landlock_rights;
sbx_landlock_rights sbx_landlock_rights_for_abi(int abi);

#define SBX_LANDLOCK_MAX_DROPS 8

/* What was enforced, for the status report. Plain data, no pointers to
 * free; the reason strings are static. */
typedef struct {
  int kernel_abi;   /* what the kernel reported */
  int abi;          /* the level used: min(kernel_abi, 7) */
  int required_abi; /* 0 if none */
  sbx_landlock_rights requested;
  sbx_landlock_rights handled; /* what the ruleset fd enforces */
  uint32_t restrict_flags;     /* pass these to restrict_self */
  unsigned n_path_rules;       /* rules added */
  unsigned n_paths_skipped;    /* optional paths that did not exist */
  unsigned n_port_rules;
  unsigned n_drops;
  struct {
    int abi; /* the ABI that introduced the dropped feature */
    sbx_landlock_rights rights; /* what was dropped */
    const char *reason;         /* one line, static */
  } drops[SBX_LANDLOCK_MAX_DROPS];
} sbx_landlock_report;

typedef struct sbx_landlock_builder sbx_landlock_builder;

enum {
  SBX_LANDLOCK_PATH_OPTIONAL =
      1u << 0, /* a missing (or unreachable) path is skipped */
};

/* A builder that handles every fs right, both TCP rights and both scopes
 * the kernel knows, with no rules. Never NULL. Parent-side (GLib). */
sbx_landlock_builder *sbx_landlock_builder_new(void);
void sbx_landlock_builder_free(sbx_landlock_builder *b);

/* Narrow what is handled (a right not handled is not restricted at all):
 * e.g. sbx-run --net keeps TCP by handling no net rights. Masks outside
 * the ABI-7 sets are refused at build time. */
void sbx_landlock_set_handled(sbx_landlock_builder *b, uint64_t fs,
                              uint64_t net, uint64_t scoped);

/* LANDLOCK_RESTRICT_SELF_LOG_* flags (ABI 7); dropped with a reason on
 * older kernels. Default 0: the kernel's default logging. */
void sbx_landlock_set_log_flags(sbx_landlock_builder *b, uint32_t flags);

/* Refuse to build when the kernel's ABI is below min_abi. */
void sbx_landlock_require_abi(sbx_landlock_builder *b, int min_abi);

/* Adds a rule: path (absolute) may be accessed with rights (an fs mask,
 * usually one of SBX_LANDLOCK_RIGHTS_*). The path is opened now. */
gboolean sbx_landlock_allow_path(sbx_landlock_builder *b, const char *path,
                                 uint64_t rights, unsigned flags,
                                 GError **error);

/* Adds a rule: TCP port may be bound and/or connected to (net_rights is a
 * mask of LANDLOCK_ACCESS_NET_*). Port 0 with BIND_TCP means "bind to an
 * ephemeral port", as the kernel defines it. */
gboolean sbx_landlock_allow_tcp_port(sbx_landlock_builder *b, uint16_t port,
                                     uint64_t net_rights, GError **error);

/* Negotiates the ABI, creates the ruleset, adds the rules. Returns the
 * ruleset fd (close-on-exec; the caller owns it) and fills *report (may be
 * NULL), or -1 with *error set. Without Landlock in the kernel this fails
 * with SBX_LANDLOCK_ERROR_UNSUPPORTED; a caller that accepts running
 * without it checks for that code and records the layer as absent. */
int sbx_landlock_build(sbx_landlock_builder *b, sbx_landlock_report *report,
                       GError **error);

/* Child-side: sets no_new_privs (Landlock requires it or CAP_SYS_ADMIN,
 * and sbx never relies on the latter) and enforces the ruleset on the
 * calling thread; threads created later inherit it. Does not close fd.
 * Async-signal-safe. Returns 0 or -errno. */
int sbx_landlock_restrict_self_raw(int ruleset_fd, uint32_t restrict_flags);

/* Adds to a built ruleset (not yet enforced) a rule granting rights below
 * path, which is opened O_PATH for it; rules on the same object add up.
 * The rights must be ones the ruleset handles. Async-signal-safe. Returns
 * 0 or -errno. */
int sbx_landlock_add_path_raw(int ruleset_fd, const char *path,
                              uint64_t rights);

/* The same for a process that sandboxes itself; the error says what to try.
 * Parent-side (GLib). */
gboolean sbx_landlock_restrict_self(int ruleset_fd, uint32_t restrict_flags,
                                    GError **error);

/* Formats the report, e.g.
 *   landlock: abi 7 (kernel 7), fs=0xffff net=0x3 scoped=0x3, 2 path rules
 *   landlock: dropped at abi 6: scopes (abstract unix socket, signal): ...
 * into buf (NUL-terminated when len > 0); returns the full length like
 * snprintf. Async-signal-safe. */
size_t sbx_landlock_report_format(const sbx_landlock_report *report, char *buf,
                                  size_t len);

#endif /* SBX_KERNEL_LANDLOCK_LANDLOCK_H_ */
