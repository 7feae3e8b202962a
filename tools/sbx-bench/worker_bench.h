/* Benchmarks of a renderer worker as a host gets it, for sbx-bench
 * (docs/performance.md).
 *
 * Every function here starts a sandbox through the public API
 * (sbx/sbx.h) with one process type, "renderer", under the built-in
 * renderer profile: sbx_sandbox_start compiles layer 1 and the profile's
 * policies, starts the broker and the zygote; each worker comes from
 * sbx_sandbox_spawn with its own broker channel and every layer. Each
 * function returns the metric in *value and the floor measured in the same
 * run in *floor, both medians of several repetitions; the ratio is
 * value / floor. A metric that cannot be measured on this machine fails
 * with a message that starts "skipped: " and says why; any other failure
 * is a real error.
 *
 * sbx_sandbox_start refuses a threaded host: call these from a
 * single-threaded process (sbx-bench runs each one in a fresh fork of
 * itself).
 */
#ifndef SBX_TOOLS_SBX_BENCH_WORKER_BENCH_H_
#define SBX_TOOLS_SBX_BENCH_WORKER_BENCH_H_

#include <glib.h>

/* zygote_spawn_ratio: from sbx_sandbox_spawn (broker channel included) to
 * the entry function of a cold worker, forked for the spawn, of a type
 * without a pool (microseconds), against fork()+_exit()+waitpid() in the
 * host. */
gboolean sbx_bench_zygote_spawn(double *value, double *floor, GError **error);

/* warm_spawn_ratio: the same for a renderer type with a warm pool
 * (SBX_BENCH_POOL workers forked ahead): sbx_sandbox_spawn to the entry
 * function of the pooled worker that takes the job. */
#define SBX_BENCH_POOL 4
gboolean sbx_bench_warm_spawn(double *value, double *floor, GError **error);

/* direct_open_ratio: open+close of a file under a tree the renderer
 * profile marks direct (/usr/lib/x86_64-linux-gnu/libc.so.6), in a
 * renderer worker, against the same loop unsandboxed (ns per pair). */
gboolean sbx_bench_direct_open(double *value, double *floor, GError **error);

/* syscall_getpid_ratio: one getpid() inside a renderer worker against the
 * same loop in the unsandboxed host (nanoseconds per call). */
gboolean sbx_bench_syscall_getpid(double *value, double *floor, GError **error);

/* syscall_argcheck_ratio: one fcntl(F_GETFD) plus one FUTEX_WAKE_PRIVATE,
 * both argument-checked by the renderer policy, against the unsandboxed
 * host (nanoseconds per pair). */
gboolean sbx_bench_syscall_argcheck(double *value, double *floor,
                                    GError **error);

/* spawn_vs_bwrap: the warm_spawn_ratio latency (a pooled spawn) against
 * the wall time of `bwrap --unshare-all --ro-bind / / /bin/true`
 * (microseconds). Skipped when bwrap is missing or cannot run here. */
gboolean sbx_bench_spawn_vs_bwrap(double *value, double *floor, GError **error);

/* worker_private_kib: Private_Dirty of an idle renderer worker, from
 * /proc/PID/smaps_rollup read by the host (KiB). There is no floor:
 * *floor is 0. The worker is undumpable, so the kernel lets only a reader
 * with CAP_SYS_PTRACE over the host's user namespace open that file
 * (root); anyone else gets "skipped: " and the kernel's answer. */
gboolean sbx_bench_worker_private_kib(double *value, double *floor,
                                      GError **error);

/* max_workers: renderer workers alive at once before the first refused
 * spawn, each waiting to be released; the probe stops at
 * SBX_BENCH_MAX_WORKERS_CAP. There is no floor: *floor is 0. */
#define SBX_BENCH_MAX_WORKERS_CAP 8192
gboolean sbx_bench_max_workers(double *value, double *floor, GError **error);

#endif /* SBX_TOOLS_SBX_BENCH_WORKER_BENCH_H_ */
