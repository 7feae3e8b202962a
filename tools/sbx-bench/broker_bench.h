/* Broker benchmarks for sbx-bench (docs/performance.md). Each returns the
 * metric in *value and the floor it was divided by in *floor (both in the
 * unit named), measured in the same run; medians of several repetitions.
 *
 *   broker_open_ratio      brokered open()+close() of an allowed file, over
 *                          one SEQPACKET round trip carrying an fd plus a
 *                          direct open()+close() (microseconds)
 *   broker_open_p99_ratio  p99 latency with 16 client threads over 4
 *                          channels, over the single-client p50 (us)
 *
 * The brokered opens go through the client API (client.h) to a real,
 * sandboxed broker process.
 */
#ifndef SBX_TOOLS_SBX_BENCH_BROKER_BENCH_H_
#define SBX_TOOLS_SBX_BENCH_BROKER_BENCH_H_

#include <glib.h>

gboolean sbx_bench_broker_open(double *value, double *floor, GError **error);
gboolean sbx_bench_broker_open_p99(double *value, double *floor,
                                   GError **error);

#endif /* SBX_TOOLS_SBX_BENCH_BROKER_BENCH_H_ */
