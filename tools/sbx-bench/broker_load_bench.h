/* The broker under load, for sbx-bench (docs/performance.md): brokered
 * opens from real renderer workers (sbx_sandbox_spawn, the renderer
 * profile, layer 1 trapping each open() to the worker's broker channel),
 * several threads in each worker, started inside the worker's entry
 * function. Each function returns the metric in *value and the floor it
 * is compared with in *floor, measured in the same run.
 *
 *   broker_open_load_ratio     opens per second of 16 threads over 4
 *                              workers, against the same 16 threads (4
 *                              processes of 4) on a plain SEQPACKET server
 *                              that opens the file and sends the fd
 *                              (opens/s; the ratio passes at >= its target)
 *   broker_open_tail_ratio     p99 of those brokered opens, against their
 *                              p50 (microseconds)
 *   broker_flood_victim_ratio  p99 of one worker's opens (one thread)
 *                              while another worker floods from 12
 *                              threads, against that worker's p50 alone
 *                              (microseconds)
 *
 * sbx_sandbox_start refuses a threaded host: call these from a
 * single-threaded process (sbx-bench runs each in a fresh fork). Threads
 * run only in the workers and in forked floor clients.
 */
#ifndef SBX_TOOLS_SBX_BENCH_BROKER_LOAD_BENCH_H_
#define SBX_TOOLS_SBX_BENCH_BROKER_LOAD_BENCH_H_

#include <glib.h>

gboolean sbx_bench_broker_open_load(double *value, double *floor,
                                    GError **error);
gboolean sbx_bench_broker_open_tail(double *value, double *floor,
                                    GError **error);
gboolean sbx_bench_broker_flood_victim(double *value, double *floor,
                                       GError **error);

#endif /* SBX_TOOLS_SBX_BENCH_BROKER_LOAD_BENCH_H_ */
