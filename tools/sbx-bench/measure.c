/* Measurement helpers; see measure.h.
 *
 * Why it exists: a clock reading, a median and an exact read are what
 * every benchmark needs, and a figure is only comparable with another
 * taken the same way. What it trusts: the kernel's clock. What it
 * refuses: a short read is FALSE, never a partial value.
 */
#include "tools/sbx-bench/measure.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

double sbx_bench_now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

double sbx_bench_median(double *v, size_t n) {
  qsort(v, n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

gboolean sbx_bench_read_exact(int fd, void *buf, size_t len) {
  size_t got = 0;
  while (got < len) {
    ssize_t n = read(fd, (char *)buf + got, len - got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return FALSE;
    got += (size_t)n;
  }
  return TRUE;
}
