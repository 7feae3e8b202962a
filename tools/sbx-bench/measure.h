/* Measurement helpers shared by sbx-bench's benchmarks (docs/performance.md),
 * so each figure is taken the same way.
 */
#ifndef SBX_TOOLS_SBX_BENCH_MEASURE_H_
#define SBX_TOOLS_SBX_BENCH_MEASURE_H_

#include <stddef.h>

#include <glib.h>

/* CLOCK_MONOTONIC in microseconds (one clock for every namespace sbx
 * enters); the median of n values (sorts v in place; the mean of the
 * middle two when n is even); a read of exactly len bytes (FALSE on EOF
 * or error). */
double sbx_bench_now_us(void);
double sbx_bench_median(double *v, size_t n);
gboolean sbx_bench_read_exact(int fd, void *buf, size_t len);

#endif /* SBX_TOOLS_SBX_BENCH_MEASURE_H_ */
