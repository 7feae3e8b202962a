/* Resource limits for a sandboxed process.
 *
 * Why it exists: seccomp and Landlock say what a process may do, not how
 * much; without limits a worker can exhaust memory, disk, descriptors or
 * the uid's process table for everybody. RLIMIT_CORE = 0 also keeps a
 * crashing worker's memory out of core files.
 *
 * Limits only narrow (as every layer does): each entry's soft and hard
 * values are clamped to the process's current hard limit, and soft to the
 * new hard, so applying a profile never fails because the parent is
 * already tighter and never raises anything. What it refuses: an unknown
 * resource number.
 *
 * RLIMIT_NPROC counts every process and thread of the real uid in the
 * user namespace, not of one process: in a zygote's workers it is a bound
 * for all of them together (and, one level up, the host user's own
 * processes count too). What bounds one worker's threads is RLIMIT_AS:
 * each thread needs a stack and, under contention, a malloc arena, both
 * address space.
 *
 * Builds with AddressSanitizer skip RLIMIT_AS and RLIMIT_DATA: its shadow
 * memory is terabytes of address space reserved at start, so any such
 * limit would make every later mapping fail.
 */
#ifndef SBX_KERNEL_NAMESPACES_RLIMITS_H_
#define SBX_KERNEL_NAMESPACES_RLIMITS_H_

#include <stddef.h>
#include <sys/resource.h>

#include <glib.h>

typedef struct {
  int resource; /* RLIMIT_* */
  rlim_t soft;  /* RLIM_INFINITY allowed */
  rlim_t hard;
} sbx_rlimit;

/* Applies every entry with prlimit(2) on the caller, in order. Returns 0
 * or -errno with *failed_index (may be NULL) set to the entry that failed.
 * Async-signal-safe. */
int sbx_rlimits_apply_raw(const sbx_rlimit *limits, size_t n,
                          size_t *failed_index);

/* Clamps every entry in place as sbx_rlimits_apply_raw would against the
 * caller's current limits (a resource this build skips is left as it
 * is): a process forked afterwards, whose limits are the caller's
 * unchanged, then gets the same result from sbx_rlimits_set_raw with one
 * call per entry instead of two. For the zygote, once, for all workers.
 * Returns 0 or -errno with *failed_index set. Async-signal-safe. */
int sbx_rlimits_clamp_raw(sbx_rlimit *limits, size_t n, size_t *failed_index);

/* Sets every entry as it is (see sbx_rlimits_clamp_raw). Returns 0 or
 * -errno with *failed_index (may be NULL) set. Async-signal-safe. */
int sbx_rlimits_set_raw(const sbx_rlimit *limits, size_t n,
                        size_t *failed_index);

/* Raises the caller's soft RLIMIT_NOFILE to its hard limit: for the
 * zygote and the broker, which hold a descriptor per live worker, so that
 * the kernel's limit, not a soft default of 1024, bounds how many workers
 * a sandbox has. Returns 0 or -errno. Async-signal-safe. */
int sbx_rlimit_raise_nofile_raw(void);

/* The RLIMIT_* number for a name as profiles write it: "nofile",
 * "RLIMIT_NOFILE" and "NOFILE" are all accepted (case-insensitive); -1 for
 * an unknown name. Async-signal-safe. */
int sbx_rlimit_from_name(const char *name);

/* "RLIMIT_NOFILE" etc. for a resource number; NULL if unknown.
 * Async-signal-safe. */
const char *sbx_rlimit_name(int resource);

/* Parses a limit value as profiles write it: a decimal number with an
 * optional K/M/G suffix (powers of 1024) or "unlimited"/"infinity".
 * Parent-side; the error names the text. */
gboolean sbx_rlimit_parse_value(const char *text, rlim_t *out, GError **error);

#define SBX_RLIMIT_ERROR (sbx_rlimit_error_quark())
GQuark sbx_rlimit_error_quark(void);

#endif /* SBX_KERNEL_NAMESPACES_RLIMITS_H_ */
