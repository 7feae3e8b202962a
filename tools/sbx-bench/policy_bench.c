/* Policy benchmarks; see policy_bench.h.
 *
 * Why it exists: the zygote compiles every process type's program once,
 * so compile time is a start-up cost a host pays per type; and every
 * system call a worker makes runs the program, so its longest path is the
 * worst per-call filter cost. Both are measured on the built-in renderer
 * policy, the one real workers run.
 *
 * What it trusts: sbx_bpf_run_checked counts instructions as the kernel
 * would execute them. The longest path is found by search, not derived:
 * for each argument a rule tests, the candidates are the constants it is
 * compared with, their neighbours, their complements, and the same with
 * junk in the upper half; small products of those are tried exhaustively,
 * large ones by coordinate ascent. The figure is therefore the longest
 * path over the inputs tried, which the count is reported beside.
 */
#include "tools/sbx-bench/policy_bench.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include <linux/audit.h>

#include "sandbox/kernel/seccomp/bpf.h"
#include "sandbox/policy/compiler.h"
#include "tools/sbx-bench/measure.h"
#include "sandbox/policy/builtin/builtin.h"
#include "sandbox/base/syscalls.h"

#define POLICY "renderer"
#define COMPILE_REPS 7
#define COMPILE_ITERS 40
#define MAX_CANDIDATES 128
#define EXHAUSTIVE_LIMIT 200000
#define ASCENT_PASSES 8

static gboolean compile_builtin(const char *name, sbx_policy **policy,
                                sbx_bpf_program *prog, GError **error) {
  *policy = sbx_builtin_policy(name, error);
  if (!*policy)
    return FALSE;
  if (!sbx_bpf_compile(*policy, prog, error)) {
    sbx_policy_free(*policy);
    *policy = NULL;
    return FALSE;
  }
  return TRUE;
}

gboolean sbx_bench_policy_compile(double *value, double *floor,
                                  GError **error) {
  double per[COMPILE_REPS];
  for (int r = -1; r < COMPILE_REPS; r++) { /* r == -1: warm-up */
    double t0 = sbx_bench_now_us();
    for (int i = 0; i < COMPILE_ITERS; i++) {
      sbx_policy *p;
      sbx_bpf_program prog;
      if (!compile_builtin(POLICY, &p, &prog, error))
        return FALSE;
      sbx_bpf_program_clear(&prog);
      sbx_policy_free(p);
    }
    if (r >= 0)
      per[r] = (sbx_bench_now_us() - t0) / COMPILE_ITERS;
  }
  *value = sbx_bench_median(per, COMPILE_REPS);
  *floor = 0;
  return TRUE;
}

typedef struct {
  uint64_t v[MAX_CANDIDATES];
  size_t n;
} candidates;

static void add_candidate(candidates *c, uint64_t v) {
  for (size_t i = 0; i < c->n; i++)
    if (c->v[i] == v)
      return;
  if (c->n < MAX_CANDIDATES)
    c->v[c->n++] = v;
}

/* Values of argument arg that sit on either side of every comparison the
 * rule makes on it, for 64-bit and for 32-bit readings. */
static void candidates_for(const sbx_rule *rule, unsigned arg, candidates *c) {
  c->n = 0;
  add_candidate(c, 0);
  add_candidate(c, UINT64_MAX);
  add_candidate(c, 0xffffffffu);
  add_candidate(c, 1ull << 32);
  for (size_t a = 0; rule && a < rule->n_alts; a++) {
    const sbx_conjunction *conj = &rule->alts[a];
    for (size_t k = 0; k < conj->n_cmps; k++) {
      if (conj->cmps[k].arg != arg)
        continue;
      uint64_t v = conj->cmps[k].value;
      add_candidate(c, v);
      add_candidate(c, v + 1);
      add_candidate(c, v - 1);
      add_candidate(c, ~v);
      add_candidate(c, v & (~v + 1)); /* lowest set bit */
      add_candidate(c, v | 0xffffffff00000000ull);
      add_candidate(c, v ^ (1ull << 32));
      add_candidate(c, (v & 0xffffffffu) | (1ull << 40));
    }
  }
}

static const sbx_rule *rule_for(const sbx_policy *p, int nr) {
  for (size_t i = 0; i < p->n_rules; i++)
    if (p->rules[i].nr == nr)
      return &p->rules[i];
  return NULL;
}

typedef struct {
  const sbx_bpf_program *prog;
  struct seccomp_data data;
  size_t best;
  struct seccomp_data best_data;
  size_t tried;
} search;

static void try_input(search *s) {
  size_t n = 0;
  sbx_bpf_run_checked(s->prog->insns, s->prog->len, &s->data, &n);
  s->tried++;
  if (n > s->best) {
    s->best = n;
    s->best_data = s->data;
  }
}

/* Every combination of the candidates of the args in used[]. */
static void exhaustive(search *s, const candidates *c, const unsigned *used,
                       size_t n_used, size_t depth) {
  if (depth == n_used) {
    try_input(s);
    return;
  }
  const candidates *cc = &c[used[depth]];
  for (size_t i = 0; i < cc->n; i++) {
    s->data.args[used[depth]] = cc->v[i];
    exhaustive(s, c, used, n_used, depth + 1);
  }
}

/* One argument at a time, keeping whatever lengthened the path, until a
 * pass changes nothing. */
static void ascent(search *s, const candidates *c, const unsigned *used,
                   size_t n_used) {
  s->data = s->best_data;
  for (int pass = 0; pass < ASCENT_PASSES; pass++) {
    size_t before = s->best;
    for (size_t u = 0; u < n_used; u++) {
      for (size_t i = 0; i < c[used[u]].n; i++) {
        s->data = s->best_data;
        s->data.args[used[u]] = c[used[u]].v[i];
        try_input(s);
      }
    }
    if (s->best == before)
      break;
  }
}

static void longest_for_nr(search *s, const sbx_policy *policy, int nr) {
  const sbx_rule *rule = rule_for(policy, nr);
  memset(&s->data, 0, sizeof s->data);
  s->data.arch = AUDIT_ARCH_X86_64;
  s->data.nr = nr;
  s->best_data = s->data;
  try_input(s);
  candidates c[6];
  unsigned used[6];
  size_t n_used = 0;
  double product = 1;
  for (unsigned a = 0; a < 6; a++) {
    gboolean tested = FALSE;
    for (size_t i = 0; rule && i < rule->n_alts; i++)
      for (size_t k = 0; k < rule->alts[i].n_cmps; k++)
        tested |= rule->alts[i].cmps[k].arg == a;
    if (!tested)
      continue;
    candidates_for(rule, a, &c[a]);
    used[n_used++] = a;
    product *= (double)c[a].n;
  }
  if (n_used && product <= EXHAUSTIVE_LIMIT)
    exhaustive(s, c, used, n_used, 0);
  else if (n_used)
    ascent(s, c, used, n_used);
}

gboolean sbx_bench_bpf_longest_path(const char *builtin_policy,
                                    sbx_bench_longest_path *out,
                                    GError **error) {
  sbx_policy *policy;
  sbx_bpf_program prog;
  if (!compile_builtin(builtin_policy, &policy, &prog, error))
    return FALSE;
  if (!sbx_bpf_check(prog.insns, prog.len, error)) {
    sbx_bpf_program_clear(&prog);
    sbx_policy_free(policy);
    return FALSE;
  }
  memset(out, 0, sizeof *out);
  out->n_rules = policy->n_rules;
  for (int nr = 0; nr <= sbx_syscall_max(); nr++) {
    search s = {.prog = &prog};
    longest_for_nr(&s, policy, nr);
    out->inputs_tried += s.tried;
    if (s.best > out->insns) {
      out->insns = s.best;
      out->data = s.best_data;
    }
  }
  sbx_bpf_program_clear(&prog);
  sbx_policy_free(policy);
  return TRUE;
}

gboolean sbx_bench_bpf_max_insns(double *value, double *floor, GError **error) {
  sbx_bench_longest_path path;
  if (!sbx_bench_bpf_longest_path(POLICY, &path, error))
    return FALSE;
  *value = (double)path.insns;
  *floor = log2((double)(path.n_rules > 1 ? path.n_rules : 2));
  return TRUE;
}
