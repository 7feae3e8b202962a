/* Benchmarks of the policy compiler and of the compiled renderer program,
 * for sbx-bench (docs/performance.md). Same shape as the other bench functions:
 * *value is the metric, *floor what it is divided by (0 when the metric
 * has none).
 *
 *   policy_compile_us  parse + compile the built-in renderer policy, in
 *                      microseconds (median); no floor
 *   bpf_max_insns      the most BPF instructions the compiled renderer
 *                      program executes for any syscall number, with the
 *                      argument values that take the longest path; floor:
 *                      log2 of the policy's rule count
 */
#ifndef SBX_TOOLS_SBX_BENCH_POLICY_BENCH_H_
#define SBX_TOOLS_SBX_BENCH_POLICY_BENCH_H_

#include <stddef.h>

#include <glib.h>
#include <linux/seccomp.h>

gboolean sbx_bench_policy_compile(double *value, double *floor, GError **error);
gboolean sbx_bench_bpf_max_insns(double *value, double *floor, GError **error);

/* The longest path through a built-in policy's compiled program. */
typedef struct {
  size_t insns;             /* instructions executed */
  struct seccomp_data data; /* an input that executes them */
  size_t n_rules;           /* rules in the policy */
  size_t inputs_tried;
} sbx_bench_longest_path;

gboolean sbx_bench_bpf_longest_path(const char *builtin_policy,
                                    sbx_bench_longest_path *out,
                                    GError **error);

#endif /* SBX_TOOLS_SBX_BENCH_POLICY_BENCH_H_ */
