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

/* sbx_run_files_vs_bwrap: extracting a tar of 5,500 small files into a
 * write grant, then reading every one back (tar cf /dev/null), under
 * sbx-run against the same under `bwrap --unshare-all --ro-bind / /
 * --bind DIR DIR` (microseconds; a fresh empty DIR each time). */
gboolean sbx_bench_run_files_vs_bwrap(double *value, double *floor,
                                      GError **error);

/* sbx_run_python_vs_bwrap: /usr/bin/python3 importing ten standard
 * modules under `sbx-run --allow-read /usr/lib/python3.11` against the
 * same under bwrap (microseconds). Skipped without that python. */
gboolean sbx_bench_run_python_vs_bwrap(double *value, double *floor,
                                       GError **error);

#endif /* SBX_TOOLS_SBX_BENCH_RUN_BENCH_H_ */
