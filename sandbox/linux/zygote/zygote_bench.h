/* Benchmarks of the zygote and of a fully layered worker, for sbx-bench
 * (PERFORMANCE.md).
 *
 * Every function here starts its own zygote with the built-in renderer
 * profile as it stands: the broker-client program, then each of the
 * profile's seccomp layers, compiled once in the host; its namespaces, its
 * empty root, Landlock, its resource limits and its status report. No
 * broker is attached (docs/performance.md says what that leaves out). Each returns the metric in *value and the floor
 * measured in the same run in *floor, both medians of several
 * repetitions; the ratio is value / floor. A metric that cannot be
 * measured on this machine fails with a message that starts "skipped: "
 * and says why; any other failure is a real error.
 *
 * The zygote refuses a threaded host: call these from a single-threaded
 * process (sbx-bench runs each one in a fresh fork of itself).
 */
#ifndef SBX_LINUX_ZYGOTE_ZYGOTE_BENCH_H_
#define SBX_LINUX_ZYGOTE_ZYGOTE_BENCH_H_

#include <stddef.h>

#include <glib.h>

/* Shared by every bench function of the tree, so each figure is taken the
 * same way: CLOCK_MONOTONIC in microseconds (one clock for every
 * namespace sbx enters); the median of n values (sorts v in place; the
 * mean of the middle two when n is even); a read of exactly len bytes
 * (FALSE on EOF or error). */
double sbx_bench_now_us(void);
double sbx_bench_median(double *v, size_t n);
gboolean sbx_bench_read_exact(int fd, void *buf, size_t len);

/* zygote_spawn_ratio: from the spawn request to the worker's entry
 * function (microseconds), against fork()+_exit()+waitpid() in the host. */
gboolean sbx_bench_zygote_spawn(double *value, double *floor, GError **error);

/* syscall_getpid_ratio: one getpid() inside a renderer worker against the
 * same loop in the unsandboxed host (nanoseconds per call). */
gboolean sbx_bench_syscall_getpid(double *value, double *floor, GError **error);

/* syscall_argcheck_ratio: one fcntl(F_GETFD) plus one FUTEX_WAKE_PRIVATE,
 * both argument-checked by the renderer policy, against the unsandboxed
 * host (nanoseconds per pair). */
gboolean sbx_bench_syscall_argcheck(double *value, double *floor,
                                    GError **error);

/* spawn_vs_bwrap: the zygote_spawn_ratio latency against the wall time of
 * `bwrap --unshare-all --ro-bind / / /bin/true` (microseconds). Skipped
 * when bwrap is missing or cannot run here. */
gboolean sbx_bench_spawn_vs_bwrap(double *value, double *floor, GError **error);

/* worker_private_kib: Private_Dirty of an idle renderer worker, from
 * /proc/PID/smaps_rollup read by the host (KiB). There is no floor:
 * *floor is 0. The worker is undumpable, so the kernel lets only a reader
 * with CAP_SYS_PTRACE over the host's user namespace open that file
 * (root); anyone else gets "skipped: " and the kernel's answer. */
gboolean sbx_bench_worker_private_kib(double *value, double *floor,
                                      GError **error);

#endif /* SBX_LINUX_ZYGOTE_ZYGOTE_BENCH_H_ */
