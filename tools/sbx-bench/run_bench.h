/* The sbx_run_vs_bwrap benchmark (docs/performance.md), for sbx-bench.
 *
 * *value: median wall time of `sbx-run -- /bin/true`; *floor: median wall
 * time of `bwrap --unshare-all --ro-bind / / /bin/true`, measured in the
 * same run, interleaved; both in microseconds, ratio value / floor.
 * sbx-run is found as $SBX_BUILD_DIR/sbx-run, else next to the running
 * executable (or one directory up). Returns FALSE with a message starting
 * "skipped:" when bwrap is not installed or cannot run here.
 */
#ifndef SBX_TOOLS_SBX_BENCH_RUN_BENCH_H_
#define SBX_TOOLS_SBX_BENCH_RUN_BENCH_H_

#include <glib.h>

gboolean sbx_bench_run_vs_bwrap(double *value, double *floor, GError **error);

#endif /* SBX_TOOLS_SBX_BENCH_RUN_BENCH_H_ */
