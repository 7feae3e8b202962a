/* An empty root file system for a process in its own mount namespace.
 *
 * Why it exists: Landlock and the broker decide what may be *opened*, but a
 * process that can still see the host's tree learns its layout, reaches
 * every file opened through an inherited directory, and is one kernel bug
 * away from it. Replacing "/" with an empty tmpfs removes the host tree
 * from the process's view altogether.
 *
 * How: every mount is made private (so nothing propagates back to the
 * host), each bind source is taken as a detached copy with
 * open_tree(OPEN_TREE_CLONE) (so the scratch mount cannot hide it), a
 * tmpfs is mounted on a scratch point (/tmp, else /mnt, else
 * /dev), the requested bind mounts are placed inside it, a fresh procfs
 * is mounted when asked and allowed, the process pivot_root()s into the
 * tmpfs with pivot_root(".", "."), the old root is detached with
 * MNT_DETACH, and the new root is remounted read-only, nosuid, nodev.
 *
 * Fallback: if any step before pivot_root fails, the tmpfs is unmounted
 * again and the process keeps the host root (inside its private mount
 * namespace); sbx_root_result says so and which step failed. After a
 * successful pivot nothing can fail half-way that leaves the old root
 * attached.
 *
 * Requirements: the caller is in a mount namespace owned by its user
 * namespace and holds CAP_SYS_ADMIN there (true right after
 * sbx_ns_enter/sbx_ns_clone with SBX_NS_USER|SBX_NS_MOUNT), and no
 * Landlock domain is active (Landlock refuses mount and pivot_root to any
 * sandboxed process). A fresh /proc can be mounted only by a process that
 * is inside a pid namespace owned by its user namespace, i.e. the
 * sbx_ns_clone() child, not the sbx_ns_enter() caller.
 *
 * What it refuses: bind sources or targets that are not absolute,
 * normalised paths (no "..", ".", "//") of at most PATH_MAX bytes.
 * The process's working directory is "/" of the new root afterwards.
 */
#ifndef SBX_KERNEL_NAMESPACES_ROOTFS_H_
#define SBX_KERNEL_NAMESPACES_ROOTFS_H_

#include <stdbool.h>
#include <stddef.h>

#include <glib.h>

enum {
  SBX_BIND_WRITABLE = 1u << 0, /* default is read-only */
  SBX_BIND_OPTIONAL = 1u << 1, /* a missing source is skipped, not an error */
  SBX_BIND_EXEC = 1u << 2,     /* default adds noexec; keep exec rights */
};

typedef struct {
  const char *source; /* host path, absolute; not owned */
  const char *target; /* path inside the new root; NULL: same as source */
  unsigned flags;     /* SBX_BIND_* */
} sbx_bind_mount;

/* At most this many bind mounts per root (their sources are held open on
 * the stack while the root is built). */
#define SBX_ROOT_MAX_BINDS 64

typedef struct {
  const sbx_bind_mount *binds; /* not owned; may be NULL when n_binds == 0 */
  size_t n_binds;
  bool mount_proc; /* a new procfs at /proc (see requirements above) */
  bool mount_dev;  /* a tmpfs /dev with null, zero, full, random, urandom
                    * bound from the host (read-write, nosuid, noexec) */
  bool mount_tmp;  /* a writable tmpfs at /tmp (nosuid, nodev) */
} sbx_root_config;

typedef enum {
  SBX_ROOT_HOST = 0,  /* unchanged: the host's tree (private mount ns) */
  SBX_ROOT_EMPTY = 1, /* pivoted into the new read-only tmpfs */
} sbx_root_mode;

typedef struct {
  sbx_root_mode mode;
  bool proc_mounted;
  int error;               /* 0, or the errno of the failed step */
  const char *failed_step; /* static string, NULL on success */
  const char *failed_path; /* points into the config, or NULL */
} sbx_root_result;

/* Child-side: builds the empty root as described above.
 * Async-signal-safe: raw syscalls, fixed stack buffers, no allocation.
 * Returns 0 (result->mode == SBX_ROOT_EMPTY) or -errno. A failure before
 * the pivot leaves the host root in place (mode SBX_ROOT_HOST): the caller
 * may go on without this layer and report it. A failure after the pivot
 * (detaching the old root, the read-only remount) leaves mode
 * SBX_ROOT_EMPTY with error set: the caller must exit, never run untrusted
 * code in that state. result must not be NULL. */
int sbx_root_make_empty_raw(const sbx_root_config *cfg,
                            sbx_root_result *result);

/* The same with a GError naming the step and path. Parent-side (GLib); for
 * a process that sandboxes itself. */
gboolean sbx_root_make_empty(const sbx_root_config *cfg,
                             sbx_root_result *result, GError **error);

#endif /* SBX_KERNEL_NAMESPACES_ROOTFS_H_ */
