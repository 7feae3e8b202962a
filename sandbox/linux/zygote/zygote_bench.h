/* Measurement helpers shared by the bench functions of the tree (sbx-bench,
 * PERFORMANCE.md) and by suites that read what a worker wrote, so each
 * figure is taken the same way. The benchmarks of workers themselves live
 * in sandbox/tests/perf/worker_bench.h, on the public API.
 */
#ifndef SBX_LINUX_ZYGOTE_ZYGOTE_BENCH_H_
#define SBX_LINUX_ZYGOTE_ZYGOTE_BENCH_H_

#include <stddef.h>

#include <glib.h>

/* CLOCK_MONOTONIC in microseconds (one clock for every namespace sbx
 * enters); the median of n values (sorts v in place; the mean of the
 * middle two when n is even); a read of exactly len bytes (FALSE on EOF
 * or error). */
double sbx_bench_now_us(void);
double sbx_bench_median(double *v, size_t n);
gboolean sbx_bench_read_exact(int fd, void *buf, size_t len);

#endif /* SBX_LINUX_ZYGOTE_ZYGOTE_BENCH_H_ */
