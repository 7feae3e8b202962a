/* The file tree of sbx-run's default mode: an empty root holding only the
 * grants, each bind-mounted at its own path, in which the kernel decides
 * every file call of the program.
 *
 * Why it exists: the supervisor (--explain) decides each file call with a
 * round trip, which file-heavy programs pay for on every call. Here the
 * plan turns the allowlist into mounts once, before the program runs,
 * and the kernel's own path walk does the rest: a name outside the
 * grants is not in the tree (ENOENT, for stat and chdir alike: S39), a
 * read-only grant is a read-only mount (metadata changes fail with
 * EROFS), and a symbolic link that leads out of the grants leads into the
 * empty root. Landlock, built from the same allowlist, decides what may
 * be read, written and executed inside the tree and on descriptors the
 * program inherited.
 *
 * Parent side (sbx_run_tree_plan, GLib): the operations in order, from
 * the allowlist, with every path canonical and every symbolic link met on
 * the way to a grant recorded so the tree has it too (/lib64 ->
 * usr/lib64). Child side (sbx_run_tree_build_raw, async-signal-safe, in
 * init's new user and mount namespaces, before any layer is applied):
 *   1. every mount a slave of the host's, a tmpfs on /tmp (the scratch),
 *      with a tmpfs "newroot" and the old root pivoted to "oldroot";
 *   2. directories and symbolic links on newroot, then each grant bound
 *      from oldroot to newroot (parents first) and its mount flags set:
 *      read-only unless the grant writes, always nosuid, nodev unless it
 *      is a device node named itself, noexec on a write grant unless
 *      --allow-exec; then the files sbx-run makes for the program
 *      (accounts.h) on the new root itself, each readable through one
 *      Landlock rule;
 *   3. a procfs of init's pid namespace at /proc, readable through one
 *      Landlock rule added to init's ruleset (only the sandbox's own
 *      processes are in it); on each of the private directories (/tmp,
 *      /dev/shm) that the tree has nothing of its own at or below (a
 *      grant there), a private, empty tmpfs (mode 1777, nosuid, nodev,
 *      noexec unless --allow-exec), writable through one Landlock rule,
 *      which goes with the sandbox (none where the name cannot be a
 *      directory of the tree or the kernel refuses the mount: what a
 *      grant shows there stays); and, when a write grant names
 *      /dev/ptmx or
 *      /dev/pts, pseudo-terminals of the sandbox's own: a new devpts
 *      instance on /dev/pts with /dev/ptmx leading to its ptmx, and one
 *      Landlock rule for it (the host's terminals are never in the tree);
 *   4. pivot into newroot, the scratch and the old root detached, the
 *      root read-only, nosuid, nodev; the working directory the
 *      launcher's (made, empty, when no grant holds it).
 *
 * What it trusts: the plan. What it refuses: to leave the old root
 * attached; any failure is reported and init exits.
 */
#ifndef SBX_RUNNER_TREE_H_
#define SBX_RUNNER_TREE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <glib.h>

#include "sandbox/files/permissions.h"

typedef enum {
  SBX_TREE_DIR,  /* mkdir -p on the new root */
  SBX_TREE_LINK, /* a symbolic link: path -> target */
  SBX_TREE_BIND, /* the host's path bound at the same path */
  SBX_TREE_TEXT, /* a read-only file on the new root holding target */
} sbx_tree_op_kind;

enum {
  SBX_TREE_WRITABLE = 1u << 0, /* read-write; otherwise read-only */
  SBX_TREE_FILE = 1u << 1,     /* not a directory: the mount point is a file */
  SBX_TREE_DEVICE = 1u << 2,   /* a device node named itself: keep dev */
  SBX_TREE_NOEXEC = 1u << 3,
};

typedef struct {
  sbx_tree_op_kind kind;
  unsigned flags;     /* SBX_TREE_*, for binds */
  const char *path;   /* absolute, canonical */
  const char *target; /* SBX_TREE_LINK: the link's text; SBX_TREE_TEXT:
                       * the file's contents */
} sbx_tree_op;

typedef struct {
  sbx_tree_op *ops; /* directories and links first, then binds, parents
                     * before what they hold */
  size_t n_ops;
  const char *cwd; /* where the program starts, or NULL for "/" */
  bool proc;       /* a procfs of the pid namespace at /proc */
  bool ptys;       /* a devpts of the sandbox's own on /dev/pts */
  /* Bit i: a private tmpfs at sbx_run_tree_private_dirs[i]. */
  unsigned private_dirs;
  bool private_exec; /* those without noexec (--allow-exec) */
  /* The Landlock rights of the rule for each (a write grant's and FIFOs,
   * as far as the ruleset handles them; the plan sets it). */
  uint64_t private_rights;
  /* The Landlock rights the rule for that devpts grants: reading,
   * writing and device ioctls, as far as the ruleset handles them (the
   * plan sets it once the ruleset is built). */
  uint64_t pty_rights;
  /* Bit fd (0, 1, 2): that stream names a file outside the write grants
   * (a regular file, a named FIFO, a device node) and reaches the
   * program as a pipe the launcher relays (launch.h), so that nothing
   * the program does through the descriptor changes the file. */
  unsigned relay;
  GStringChunk *strings; /* owns every path */
} sbx_run_tree;

/* The directories a program expects to write scratch files in, which
 * the default mode gives it as its own: /tmp and /dev/shm (POSIX shared
 * memory and semaphores). */
#define SBX_RUN_TREE_N_PRIVATE_DIRS 2
extern const char *const sbx_run_tree_private_dirs[SBX_RUN_TREE_N_PRIVATE_DIRS];

/* Builds t from list (allow_exec: no noexec mount). FALSE with *why set
 * (static text naming the grant in *why_path, owned by t) when a grant
 * cannot be a mount: a write grant of a path that does not exist yet
 * (the default mode has no way to let one name be created); or when
 * standard input, output or error is a directory or block device outside
 * the write grants (no pipe can stand in for it). */
gboolean sbx_run_tree_plan(sbx_run_tree *t, const sbx_allowlist *list,
                           bool allow_exec, const char **why,
                           const char **why_path);
void sbx_run_tree_clear(sbx_run_tree *t);

/* Under the supervisor: t holds only which private directories the
 * program gets (private_dirs, private_exec), by the rule the default mode
 * follows: each unless a grant holds something at or below it, or a
 * write grant holds it. */
void sbx_run_tree_plan_private(sbx_run_tree *t, const sbx_allowlist *list,
                               bool allow_exec);

/* The symbolic links met on the way to each grant of list, as the host
 * wrote it (paths, g_free'd): the default mode's tree makes each of
 * them, and the supervisor lets the program follow the same, so a grant
 * named through a link (/usr/share/perl/5.36 -> 5.36.0) reaches its
 * object by that name in both modes. */
GPtrArray *sbx_run_tree_grant_links(const sbx_allowlist *list);

/* Adds a file holding text at path (absolute, canonical) to a planned
 * tree, unless a grant's mount covers path: the host's file, or a
 * directory holding it, is what the user granted, and nothing is ever
 * written into a bound host directory. */
void sbx_run_tree_add_text(sbx_run_tree *t, const char *path, const char *text);

/* Where building failed: the step (sbx_run_tree_step_name), the index of
 * the operation (-1: none), the errno. Plain numbers, so a failure can
 * cross to the launcher in a message. */
typedef struct {
  int step;
  int op;
  int error;
} sbx_run_tree_failure;

/* Child side, steps 1-4 above. landlock_fd: init's ruleset, which gets the
 * rules for /proc, the private directories, /dev/pts and the made files
 * (-1: none). private_fds (SBX_RUN_TREE_N_PRIVATE_DIRS of them): set to an
 * O_PATH descriptor of each private directory mounted, -1 for the others
 * (for the supervisor, whose tree does not show them). Returns 0 or
 * -errno with *failure set. Async-signal-safe. */
int sbx_run_tree_build_raw(const sbx_run_tree *t, int landlock_fd,
                           int *private_fds, sbx_run_tree_failure *failure);

/* Under the supervisor, whose program sees the host's tree: only the
 * private directories t->private_dirs names (sbx_run_tree_plan_private),
 * and with t->proc a procfs of init's pid namespace, mounted over the
 * host's in init's own mount namespace, with their Landlock rules and
 * descriptors as above (*proc_fd: the procfs's, -1 without one). Returns
 * 0 or -errno with *failure set. Async-signal-safe. */
int sbx_run_tree_private_raw(const sbx_run_tree *t, int landlock_fd,
                             int *private_fds, int *proc_fd,
                             sbx_run_tree_failure *failure);

/* "mount the scratch tmpfs", "bind mount", ... */
const char *sbx_run_tree_step_name(int step);

#endif /* SBX_RUNNER_TREE_H_ */
