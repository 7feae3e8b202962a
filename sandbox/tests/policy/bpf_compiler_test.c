/* The compiler against the policy's own meaning: compiled programs and
 * sbx_policy_eval agree on every input tried, for random policies with
 * every operator, width and action (hundreds of rules to force long
 * jumps); the checker agrees with the kernel on what is a valid program.
 */
#include <check.h>
#include <errno.h>
#include <linux/audit.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/kernel/seccomp/bpf.h"
#include "sandbox/policy/compiler.h"
#include "sandbox/tests/policy/policy_test_util.h"
#include "sandbox/kernel/seccomp/loader.h"
#include "sandbox/policy/parser.h"
#include "sandbox/base/syscalls.h"
#include "sandbox/policy/builtin/builtin.h"

typedef struct {
  uint64_t state;
} rng;

static uint64_t next(rng *r) {
  r->state ^= r->state << 13;
  r->state ^= r->state >> 7;
  r->state ^= r->state << 17;
  return r->state;
}

static sbx_action random_action(rng *r) {
  sbx_action a = {(sbx_action_kind)(next(r) % 8), 0};
  if (a.kind == SBX_ACTION_ERRNO || a.kind == SBX_ACTION_TRACE ||
      a.kind == SBX_ACTION_TRAP)
    a.data = (uint16_t)(next(r) % 4);
  return a;
}

static uint64_t interesting(rng *r) {
  switch (next(r) % 7) {
    case 0:
      return next(r) % 4;
    case 1:
      return next(r);
    case 2:
      return next(r) & 0xffffffffu;
    case 3:
      return ~0ull;
    case 4:
      return 1ull << (next(r) % 64);
    case 5:
      return 0xffffffffull << 32 | (next(r) % 4);
    default:
      return (next(r) % 4) << 32 | (next(r) % 4);
  }
}

/* Rules are sorted and unique, numbers spread so runs and gaps mix. */
static sbx_policy *random_policy(rng *r, size_t max_rules) {
  sbx_policy *p = g_new0(sbx_policy, 1);
  size_t n = max_rules ? next(r) % max_rules : 0;
  p->rules = g_new0(sbx_rule, n + 1);
  int nr = -1;
  for (size_t i = 0; i < n; i++) {
    nr += 1 + (next(r) % 3 == 0 ? (int)(next(r) % 5) : 0);
    sbx_rule *rule = &p->rules[p->n_rules++];
    rule->nr = nr;
    rule->on_match = random_action(r);
    rule->on_mismatch = random_action(r);
    if (next(r) % 2) {
      rule->n_alts = 1 + next(r) % 4;
      rule->alts = g_new0(sbx_conjunction, rule->n_alts);
      for (size_t a = 0; a < rule->n_alts; a++) {
        sbx_conjunction *alt = &rule->alts[a];
        alt->n_cmps = next(r) % 4;
        alt->cmps = g_new0(sbx_cmp, alt->n_cmps + 1);
        for (size_t c = 0; c < alt->n_cmps; c++) {
          alt->cmps[c].arg = (uint8_t)(next(r) % 6);
          alt->cmps[c].arg_is_32bit = next(r) % 2;
          alt->cmps[c].op = (sbx_cmp_op)(next(r) % 8);
          alt->cmps[c].value = interesting(r);
        }
      }
    }
  }
  p->default_action = random_action(r);
  return p;
}

static void free_random_policy(sbx_policy *p) {
  for (size_t i = 0; i < p->n_rules; i++) {
    for (size_t a = 0; a < p->rules[i].n_alts; a++)
      g_free(p->rules[i].alts[a].cmps);
    g_free(p->rules[i].alts);
  }
  g_free(p->rules);
  g_free(p);
}

static const sbx_rule *find_rule(const sbx_policy *p, int nr) {
  for (size_t i = 0; i < p->n_rules; i++)
    if (p->rules[i].nr == nr)
      return &p->rules[i];
  return NULL;
}

/* Inputs built from the policy's own constants: each one, +-1, with junk
 * in the other half; plus 0, ~0, x32 and i386 numbers, unknown numbers. */
static void random_input(rng *r, const sbx_policy *p, struct seccomp_data *d) {
  memset(d, 0, sizeof(*d));
  d->arch = next(r) % 64 ? AUDIT_ARCH_X86_64 : AUDIT_ARCH_I386;
  int top = p->n_rules ? p->rules[p->n_rules - 1].nr : 0;
  switch (next(r) % 16) {
    case 0:
      d->nr = (int)next(r);
      break;
    case 1:
      d->nr = (int)(0x40000000u | (next(r) % (top + 2)));
      break;
    default:
      d->nr = (int)(next(r) % (top + 3));
      break;
  }
  const sbx_rule *rule = find_rule(p, d->nr);
  for (int a = 0; a < 6; a++) {
    uint64_t v = interesting(r);
    if (rule && rule->n_alts && next(r) % 4) {
      const sbx_conjunction *alt = &rule->alts[next(r) % rule->n_alts];
      for (size_t c = 0; c < alt->n_cmps; c++) {
        if (alt->cmps[c].arg == a && next(r) % 2) {
          v = alt->cmps[c].value + (next(r) % 3) - 1;
          if (next(r) % 3 == 0)
            v ^= (next(r) % 2 ? 1ull : 0x80000000ull) << 32;
        }
      }
    }
    d->args[a] = v;
  }
}

static void assert_agree(const sbx_policy *p, const sbx_bpf_program *prog,
                         rng *r, int inputs) {
  for (int i = 0; i < inputs; i++) {
    struct seccomp_data d;
    random_input(r, p, &d);
    uint32_t got = sbx_bpf_run_checked(prog->insns, prog->len, &d, NULL);
    uint32_t want = sbx_policy_eval(p, &d);
    /* Check reports every assertion to its parent: test first. */
    if (got != want)
      ck_abort_msg(
          "nr %d arch 0x%x args %#llx %#llx %#llx %#llx %#llx %#llx: "
          "program 0x%08x, policy 0x%08x",
          d.nr, d.arch, (unsigned long long)d.args[0],
          (unsigned long long)d.args[1], (unsigned long long)d.args[2],
          (unsigned long long)d.args[3], (unsigned long long)d.args[4],
          (unsigned long long)d.args[5], got, want);
  }
}

START_TEST(compiled_random_policies_agree_with_the_policy) {
  rng r = {0x9e3779b97f4a7c15ull + (uint64_t)_i};
  sbx_policy *p = random_policy(&r, _i % 4 == 0 ? 400 : 40);
  sbx_bpf_program prog;
  GError *error = NULL;
  ck_assert_msg(sbx_bpf_compile(p, &prog, &error), "%s",
                error ? error->message : "");
  ck_assert_msg(sbx_bpf_check(prog.insns, prog.len, &error), "%s",
                error ? error->message : "");
  assert_agree(p, &prog, &r, 100000);
  /* sbx_bpf_run (with its own check) gives the same answers. */
  for (int i = 0; i < 200; i++) {
    struct seccomp_data d;
    random_input(&r, p, &d);
    ck_assert_uint_eq(sbx_bpf_run(prog.insns, prog.len, &d, NULL),
                      sbx_policy_eval(p, &d));
  }
  sbx_bpf_program_clear(&prog);
  free_random_policy(p);
}
END_TEST

/* The audit rewrite (sbx_bpf_notify_errno_verdicts): wherever the
 * original returns an errno the copy notifies, and everywhere else the two
 * agree; the copy still passes the kernel's checks. */
START_TEST(errno_verdicts_become_notifications_and_nothing_else_changes) {
  rng r = {0x2545f4914f6cdd1dull + (uint64_t)_i};
  sbx_policy *p = random_policy(&r, 60);
  sbx_bpf_program prog, notify;
  GError *error = NULL;
  ck_assert(sbx_bpf_compile(p, &prog, &error));
  ck_assert_msg(sbx_bpf_notify_errno_verdicts(&notify, &prog, &error), "%s",
                error ? error->message : "");
  ck_assert_msg(sbx_bpf_check(notify.insns, notify.len, &error), "%s",
                error ? error->message : "");
  ck_assert_uint_eq(notify.len, prog.len);
  ck_assert_uint_eq(notify.n_self_pid_relocs, prog.n_self_pid_relocs);
  for (int i = 0; i < 20000; i++) {
    struct seccomp_data d;
    random_input(&r, p, &d);
    uint32_t before = sbx_bpf_run_checked(prog.insns, prog.len, &d, NULL);
    uint32_t after = sbx_bpf_run_checked(notify.insns, notify.len, &d, NULL);
    if ((before & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_ERRNO)
      ck_assert_uint_eq(after, SECCOMP_RET_USER_NOTIF);
    else
      ck_assert_uint_eq(after, before);
  }
  sbx_bpf_program_clear(&notify);
  sbx_bpf_program_clear(&prog);
  free_random_policy(p);
}
END_TEST

/* A program that returns its accumulator hides its verdicts: refused. */
START_TEST(a_program_returning_the_accumulator_is_not_rewritten) {
  struct sock_filter insns[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0),
      BPF_STMT(BPF_RET | BPF_A, 0),
  };
  sbx_bpf_program prog = {.insns = insns, .len = G_N_ELEMENTS(insns)};
  sbx_bpf_program out = {0};
  GError *error = NULL;
  ck_assert(!sbx_bpf_notify_errno_verdicts(&out, &prog, &error));
  ck_assert_ptr_nonnull(strstr(error->message, "instruction 1"));
  ck_assert_ptr_null(out.insns);
  g_error_free(error);
}
END_TEST

/* Many argument-checked rules put the returns far behind the search
 * tree, so conditional jumps need helpers. */
static sbx_policy *long_policy(size_t n_rules) {
  sbx_policy *p = g_new0(sbx_policy, 1);
  p->rules = g_new0(sbx_rule, n_rules);
  p->n_rules = n_rules;
  for (size_t i = 0; i < n_rules; i++) {
    sbx_rule *rule = &p->rules[i];
    rule->nr = 1000 + (int)i; /* past every real call: the loaded filter
                                 leaves the child's own calls alone */
    rule->n_alts = 2;
    rule->alts = g_new0(sbx_conjunction, 2);
    for (int a = 0; a < 2; a++) {
      rule->alts[a].n_cmps = 1;
      rule->alts[a].cmps = g_new0(sbx_cmp, 1);
      rule->alts[a].cmps[0] =
          (sbx_cmp){(uint8_t)a, false, SBX_CMP_GE, (uint64_t)i << 31};
    }
    rule->on_match = (sbx_action){SBX_ACTION_ALLOW, 0};
    rule->on_mismatch = (sbx_action){SBX_ACTION_ERRNO, (uint16_t)(i % 7 + 1)};
  }
  p->default_action = (sbx_action){SBX_ACTION_ALLOW, 0};
  return p;
}

/* Compiles a policy whose program is longer than min_len and reaches
 * some targets only through a BPF_JA. */
static void compile_with_long_jumps(const sbx_policy *p, size_t min_len,
                                    sbx_bpf_program *prog) {
  GError *error = NULL;
  ck_assert_msg(sbx_bpf_compile(p, prog, &error), "%s",
                error ? error->message : "");
  ck_assert_uint_gt(prog->len, min_len);
  bool has_ja = false;
  for (size_t i = 0; i < prog->len; i++)
    has_ja |= prog->insns[i].code == (BPF_JMP | BPF_JA);
  ck_assert(has_ja);
}

START_TEST(long_programs_use_long_jumps_and_load_in_the_kernel) {
  sbx_policy *p = long_policy(300);
  sbx_bpf_program prog;
  compile_with_long_jumps(p, 1000, &prog);
  rng r = {12345};
  assert_agree(p, &prog, &r, 100000);
  /* The kernel takes it too. */
  pid_t pid = fork();
  if (pid == 0)
    _exit(sbx_seccomp_load_raw(prog.insns, prog.len, 0) == 0 ? 0 : 1);
  int status;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  sbx_bpf_program_clear(&prog);
  free_random_policy(p);
}
END_TEST

START_TEST(too_long_programs_are_refused_naming_a_rule) {
  sbx_policy *p = long_policy(450);
  for (size_t i = 0; i < p->n_rules; i++)
    p->rules[i].name = g_strdup_printf("call%zu", i);
  sbx_bpf_program prog;
  GError *error = NULL;
  ck_assert(!sbx_bpf_compile(p, &prog, &error));
  ck_assert_int_eq(error->code, SBX_BPF_ERROR_TOO_LONG);
  ck_assert_ptr_nonnull(strstr(error->message, "4096"));
  ck_assert_ptr_nonnull(strstr(error->message, "syscall call"));
  ck_assert_ptr_null(prog.insns);
  g_error_free(error);
  for (size_t i = 0; i < p->n_rules; i++)
    g_free(p->rules[i].name);
  free_random_policy(p);
}
END_TEST

START_TEST(duplicate_rules_are_refused) {
  sbx_rule rules[2] = {{0}};
  rules[0].nr = rules[1].nr = 3;
  rules[0].name = rules[1].name = "close";
  sbx_policy p = {rules, 2, {SBX_ACTION_ALLOW, 0}, NULL, 0};
  sbx_bpf_program prog;
  GError *error = NULL;
  ck_assert(!sbx_bpf_compile(&p, &prog, &error));
  ck_assert_int_eq(error->code, SBX_BPF_ERROR_INVALID_POLICY);
  ck_assert_ptr_nonnull(strstr(error->message, "close"));
  g_error_free(error);
}
END_TEST

START_TEST(search_depth_stays_logarithmic) {
  /* 256 unconditional rules with alternating actions: 256 runs, so the
   * tree needs 8 levels; the whole path is prologue + tree + leaf. */
  sbx_rule rules[256] = {{0}};
  for (int i = 0; i < 256; i++) {
    rules[i].nr = 2 * i;
    rules[i].on_match = (sbx_action){
        i % 2 ? SBX_ACTION_ALLOW : SBX_ACTION_ERRNO, (uint16_t)(i % 2)};
  }
  sbx_policy p = {rules, 256, {SBX_ACTION_KILL_PROCESS, 0}, NULL, 0};
  sbx_bpf_program prog;
  ck_assert(sbx_bpf_compile(&p, &prog, NULL));
  size_t worst = 0;
  for (int nr = 0; nr < 600; nr++) {
    struct seccomp_data d = {.nr = nr, .arch = AUDIT_ARCH_X86_64};
    size_t executed = 0;
    sbx_bpf_run(prog.insns, prog.len, &d, &executed);
    if (executed > worst)
      worst = executed;
  }
  /* 4 prologue + 8 levels + 1 leaf + 1 return, plus one BPF_JA where a
   * subtree lies beyond a conditional jump's reach. */
  ck_assert_uint_le(worst, 15);
  sbx_bpf_program_clear(&prog);
}
END_TEST

/* Rules whose alternatives mostly test one argument: many constants (some
 * consecutive, some differing only in the high word), ranges, masks,
 * `!=`, alternatives that also test another argument, and a few on other
 * arguments altogether. */
static void add_one_argument_rule(rng *r, sbx_rule *rule, int nr, uint8_t arg,
                                  bool is_32bit, size_t n_alts) {
  rule->nr = nr;
  rule->on_match = (sbx_action){SBX_ACTION_ALLOW, 0};
  rule->on_mismatch = (sbx_action){SBX_ACTION_ERRNO, (uint16_t)(nr % 50 + 1)};
  rule->n_alts = n_alts;
  rule->alts = g_new0(sbx_conjunction, n_alts);
  uint64_t base = next(r);
  for (size_t a = 0; a < n_alts; a++) {
    sbx_conjunction *alt = &rule->alts[a];
    alt->cmps = g_new0(sbx_cmp, 2);
    alt->n_cmps = 1;
    sbx_cmp *c = &alt->cmps[0];
    *c = (sbx_cmp){arg, is_32bit, SBX_CMP_EQ, 0};
    switch (next(r) % 8) {
      case 0: /* only the high word differs */
        c->value = (base & 0xffffffffu) | (next(r) % 6) << 32;
        break;
      case 1: /* runs of neighbours */
        c->value = base + a % 8;
        break;
      case 2:
        c->value = interesting(r);
        break;
      case 3:
        c->op = (sbx_cmp_op)(SBX_CMP_NE + next(r) % 5);
        c->value = interesting(r);
        break;
      case 4: /* masks that are ranges (and some that are not) */
        c->op = next(r) % 2 ? SBX_CMP_IN : SBX_CMP_SET;
        c->value = next(r) % 3 ? ~0ull << (next(r) % 64) : interesting(r);
        if (c->op == SBX_CMP_IN && next(r) % 2)
          c->value = ~c->value;
        break;
      default:
        c->value = (base & ~0xffffull) | next(r) % 0x40;
        break;
    }
    if (next(r) % 5 == 0) { /* a second test, on this or another argument */
      alt->cmps[1] = (sbx_cmp){(uint8_t)(next(r) % 2 ? arg : (arg + 1) % 6),
                               next(r) % 2 ? is_32bit : !is_32bit,
                               (sbx_cmp_op)(next(r) % 8), interesting(r)};
      alt->n_cmps = 2;
    }
    if (next(r) % 16 == 0)
      c->arg = (uint8_t)((arg + 2) % 6);
  }
}

/* Values on and around the rule's constants, with junk in the upper half
 * or a different high word, in each argument. */
static void one_argument_input(rng *r, const sbx_policy *p,
                               struct seccomp_data *d) {
  const sbx_rule *rule = &p->rules[next(r) % p->n_rules];
  memset(d, 0, sizeof(*d));
  d->arch = AUDIT_ARCH_X86_64;
  d->nr = rule->nr;
  for (int a = 0; a < 6; a++) {
    const sbx_conjunction *alt = &rule->alts[next(r) % rule->n_alts];
    uint64_t v = alt->cmps[next(r) % alt->n_cmps].value;
    switch (next(r) % 6) {
      case 0:
        v += next(r) % 3 - 1;
        break;
      case 1:
        v ^= (next(r) % 6) << 32;
        break;
      case 2:
        v = (v & 0xffffffffu) | (next(r) << 32);
        break;
      case 3:
        v = interesting(r);
        break;
      default:
        break;
    }
    d->args[a] = v;
  }
}

static void assert_one_argument_rules_agree(const sbx_policy *p,
                                            const sbx_bpf_program *prog, rng *r,
                                            int inputs) {
  for (int i = 0; i < inputs; i++) {
    struct seccomp_data d;
    one_argument_input(r, p, &d);
    uint32_t got = sbx_bpf_run_checked(prog->insns, prog->len, &d, NULL);
    uint32_t want = sbx_policy_eval(p, &d);
    if (got != want)
      ck_abort_msg(
          "nr %d args %#llx %#llx %#llx %#llx: program 0x%08x, "
          "policy 0x%08x",
          d.nr, (unsigned long long)d.args[0], (unsigned long long)d.args[1],
          (unsigned long long)d.args[2], (unsigned long long)d.args[3], got,
          want);
  }
}

START_TEST(disjunctions_on_one_argument_agree_with_the_policy) {
  rng r = {0x5eed0000ull + (uint64_t)_i};
  sbx_policy *p = g_new0(sbx_policy, 1);
  p->rules = g_new0(sbx_rule, 8);
  p->n_rules = 8;
  for (int i = 0; i < 8; i++) {
    size_t n_alts = 2 + next(&r) % (i % 2 ? 12 : 120);
    add_one_argument_rule(&r, &p->rules[i], 100 + i, (uint8_t)(next(&r) % 6),
                          (i + _i) % 2 == 0, n_alts);
  }
  p->default_action = (sbx_action){SBX_ACTION_KILL_PROCESS, 0};
  sbx_bpf_program prog;
  GError *error = NULL;
  ck_assert_msg(sbx_bpf_compile(p, &prog, &error), "%s",
                error ? error->message : "");
  ck_assert_msg(sbx_bpf_check(prog.insns, prog.len, &error), "%s",
                error ? error->message : "");
  assert_one_argument_rules_agree(p, &prog, &r, 100000);
  assert_agree(p, &prog, &r, 20000);
  sbx_bpf_program_clear(&prog);
  free_random_policy(p);
}
END_TEST

/* One rule: arg `arg` equal to any of n constants. */
static sbx_policy *constants_policy(int nr, uint8_t arg, bool is_32bit,
                                    const uint64_t *values, size_t n) {
  sbx_policy *p = g_new0(sbx_policy, 1);
  p->rules = g_new0(sbx_rule, 1);
  p->n_rules = 1;
  sbx_rule *rule = &p->rules[0];
  rule->nr = nr;
  rule->n_alts = n;
  rule->alts = g_new0(sbx_conjunction, n);
  for (size_t a = 0; a < n; a++) {
    rule->alts[a].n_cmps = 1;
    rule->alts[a].cmps = g_new0(sbx_cmp, 1);
    rule->alts[a].cmps[0] = (sbx_cmp){arg, is_32bit, SBX_CMP_EQ, values[a]};
  }
  rule->on_match = (sbx_action){SBX_ACTION_ALLOW, 0};
  rule->on_mismatch = (sbx_action){SBX_ACTION_ERRNO, 77};
  p->default_action = (sbx_action){SBX_ACTION_ALLOW, 0};
  return p;
}

/* The longest path over every constant and its neighbours, with the high
 * word as given and with junk in it. */
static size_t worst_path(const sbx_policy *p, const sbx_bpf_program *prog,
                         uint8_t arg) {
  const sbx_rule *rule = &p->rules[0];
  size_t worst = 0;
  for (size_t a = 0; a < rule->n_alts; a++) {
    for (int delta = -1; delta <= 1; delta++) {
      for (uint64_t junk = 0; junk < 3; junk++) {
        struct seccomp_data d = {.nr = rule->nr, .arch = AUDIT_ARCH_X86_64};
        d.args[arg] = (rule->alts[a].cmps[0].value + delta) ^ junk << 32;
        size_t executed = 0;
        sbx_bpf_run_checked(prog->insns, prog->len, &d, &executed);
        ck_assert_uint_eq(sbx_bpf_run_checked(prog->insns, prog->len, &d, NULL),
                          sbx_policy_eval(p, &d));
        worst = MAX(worst, executed);
      }
    }
  }
  return worst;
}

START_TEST(disjunctions_of_constants_take_logarithmic_paths) {
  uint64_t values[256];
  for (int i = 0; i < 256; i++) /* sparse: no two constants adjacent */
    values[i] = 0xdead0000ull + 3u * (uint64_t)((i * 97) % 256);
  sbx_policy *p = constants_policy(7, 1, true, values, 256);
  sbx_bpf_program prog;
  ck_assert(sbx_bpf_compile(p, &prog, NULL));
  /* 4 prologue + 2 dispatch + 1 load + 8 levels + 1 leaf + 1 return, and
   * a BPF_JA or two where a subtree is out of a jump's reach. */
  ck_assert_uint_le(worst_path(p, &prog, 1), 19);
  sbx_bpf_program_clear(&prog);
  free_random_policy(p);

  /* 64-bit: 16 high words with 16 low words each; the low words repeat
   * across high words, and some constants differ only in the high word. */
  for (int i = 0; i < 256; i++)
    values[i] = (uint64_t)(i % 16) << 32 | (0x1000u + 5u * (uint32_t)(i / 16));
  p = constants_policy(7, 2, false, values, 256);
  ck_assert(sbx_bpf_compile(p, &prog, NULL));
  /* Two searches of 4 levels (+ leaf) each, two loads. */
  ck_assert_uint_le(worst_path(p, &prog, 2), 22);
  sbx_bpf_program_clear(&prog);
  free_random_policy(p);
}
END_TEST

/* The kernel runs a large search as the interpreter does: a call the
 * filter allows reaches the kernel (ENOSYS, no such call), one it refuses
 * fails with errno 77. */
START_TEST(large_disjunctions_run_alike_in_the_kernel) {
  enum { N = 1200 };
  uint64_t *values = g_new(uint64_t, N);
  rng r = {99};
  for (int i = 0; i < N; i++)
    values[i] = i % 3 == 0 ? (uint64_t)(i % 7) << 32 | (uint64_t)(i * 5)
                           : (next(&r) & 0x3ffff) | (next(&r) % 3) << 32;
  sbx_policy *p = constants_policy(1000, 0, false, values, N);
  sbx_bpf_program prog;
  compile_with_long_jumps(p, 600, &prog);
  enum { TRIES = 3000 };
  uint64_t *tries = g_new(uint64_t, TRIES);
  int *want = g_new(int, TRIES);
  int allowed = 0;
  for (int i = 0; i < TRIES; i++) {
    tries[i] =
        values[next(&r) % N] + (next(&r) % 3 == 0 ? next(&r) % 3 - 1 : 0);
    if (next(&r) % 5 == 0)
      tries[i] ^= 1ull << 32;
    struct seccomp_data d = {.nr = 1000, .arch = AUDIT_ARCH_X86_64};
    d.args[0] = tries[i];
    uint32_t ret = sbx_bpf_run_checked(prog.insns, prog.len, &d, NULL);
    ck_assert_uint_eq(ret, sbx_policy_eval(p, &d));
    want[i] = ret == SECCOMP_RET_ALLOW ? ENOSYS : 77;
    allowed += ret == SECCOMP_RET_ALLOW;
  }
  /* Both outcomes are exercised. */
  ck_assert_int_gt(allowed, TRIES / 4);
  ck_assert_int_lt(allowed, TRIES - TRIES / 10);
  pid_t pid = fork();
  if (pid == 0) {
    if (sbx_seccomp_load_raw(prog.insns, prog.len, 0) != 0)
      _exit(2);
    for (int i = 0; i < TRIES; i++) {
      long rc = syscall(1000, tries[i], 0, 0, 0, 0, 0);
      if (rc != -1 || errno != want[i])
        _exit(3);
    }
    _exit(0);
  }
  int status;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                "child status %d", status);
  g_free(want);
  g_free(tries);
  g_free(values);
  sbx_bpf_program_clear(&prog);
  free_random_policy(p);
}
END_TEST

/* Random programs, mostly valid: the checker must accept exactly what the
 * kernel accepts. */
static void random_program(rng *r, struct sock_filter *insns, size_t len) {
  static const uint16_t codes[] = {
      BPF_LD | BPF_W | BPF_ABS,  BPF_LD | BPF_H | BPF_ABS,
      BPF_LD | BPF_IMM,          BPF_LDX | BPF_IMM,
      BPF_LD | BPF_MEM,          BPF_ST,
      BPF_ALU | BPF_ADD | BPF_K, BPF_ALU | BPF_DIV | BPF_K,
      BPF_ALU | BPF_LSH | BPF_K, BPF_ALU | BPF_MOD | BPF_K,
      BPF_MISC | BPF_TAX,        BPF_JMP | BPF_JA,
      BPF_JMP | BPF_JEQ | BPF_K, BPF_JMP | BPF_JSET | BPF_X,
      BPF_RET | BPF_K,           BPF_RET | BPF_A,
      BPF_RET | BPF_X,           BPF_LD | BPF_W | BPF_LEN,
  };
  for (size_t i = 0; i < len; i++) {
    insns[i].code = codes[next(r) % G_N_ELEMENTS(codes)];
    insns[i].jt = (uint8_t)(next(r) % 4);
    insns[i].jf = (uint8_t)(next(r) % 4);
    insns[i].k = (uint32_t)(next(r) % 70);
  }
  if (next(r) % 4)
    insns[len - 1] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, 0);
}

static bool kernel_accepts(const struct sock_filter *insns, size_t len) {
  pid_t pid = fork();
  if (pid == 0) {
    int rc = sbx_seccomp_load_raw(insns, len, 0);
    _exit(rc == 0 ? 0 : rc == -EINVAL ? 1 : 2);
  }
  /* Once loaded, the program itself decides how the child ends; only a
   * refused load is sure to exit with 1. */
  int status;
  waitpid(pid, &status, 0);
  ck_assert(!(WIFEXITED(status) && WEXITSTATUS(status) == 2));
  return !(WIFEXITED(status) && WEXITSTATUS(status) == 1);
}

START_TEST(checker_accepts_exactly_what_the_kernel_accepts) {
  rng r = {777};
  int accepted = 0, refused = 0;
  for (int i = 0; i < 150; i++) {
    struct sock_filter insns[8];
    size_t len = 1 + next(&r) % 8;
    random_program(&r, insns, len);
    bool ours = sbx_bpf_check(insns, len, NULL);
    ck_assert_msg(ours == kernel_accepts(insns, len),
                  "program %d: checker %s, kernel disagrees", i,
                  ours ? "accepts" : "refuses");
    if (ours)
      accepted++;
    else
      refused++;
  }
  /* Both outcomes were exercised. */
  ck_assert_int_gt(accepted, 10);
  ck_assert_int_gt(refused, 10);
}
END_TEST

START_TEST(interpreter_follows_alu_and_scratch_semantics) {
  struct sock_filter prog[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_STMT(BPF_ST, 3),
      BPF_STMT(BPF_LDX | BPF_IMM, 0),
      BPF_STMT(BPF_LD | BPF_MEM, 3),
      BPF_STMT(BPF_ALU | BPF_ADD | BPF_K, 10),
      BPF_STMT(BPF_ALU | BPF_DIV | BPF_X, 0), /* X == 0: returns 0 */
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct seccomp_data d = {.nr = 5, .arch = AUDIT_ARCH_X86_64};
  size_t executed = 0;
  ck_assert_uint_eq(sbx_bpf_run(prog, G_N_ELEMENTS(prog), &d, &executed), 0);
  ck_assert_uint_eq(executed, 6);
  prog[2].k = 3; /* X = 3: (5 + 10) / 3 = 5, then falls to the return */
  prog[6] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_A, 0);
  ck_assert_uint_eq(sbx_bpf_run(prog, G_N_ELEMENTS(prog), &d, NULL), 5);
}
END_TEST

/* Every corpus policy that parses compiles, and agrees with the policy. */
START_TEST(corpus_policies_compile_and_agree_with_the_policy) {
  POLICY_TEST_NEEDS_CORPUS();
  static const char *const dirs[] = {"chromeos", "minijail"};
  int compiled = 0;
  rng r = {4242};
  for (size_t d = 0; d < G_N_ELEMENTS(dirs); d++) {
    char *path = policy_test_corpus(dirs[d]);
    GDir *dir = g_dir_open(path, 0, NULL);
    ck_assert_msg(dir != NULL, "corpus %s missing", path);
    const char *name;
    while ((name = g_dir_read_name(dir)) != NULL) {
      if (!g_str_has_suffix(name, ".policy"))
        continue;
      char *file = g_build_filename(path, name, NULL);
      GError *error = NULL;
      sbx_policy *p = sbx_policy_parse_file(file, &error);
      if (p == NULL) {
        /* minijail's own test inputs include deliberately broken files and
         * @include files the corpus does not carry. */
        ck_assert_msg(g_str_has_prefix(name, "test__"), "%s: %s", file,
                      error->message);
        g_clear_error(&error);
        g_free(file);
        continue;
      }
      sbx_bpf_program prog;
      ck_assert_msg(sbx_bpf_compile(p, &prog, &error), "%s: %s", file,
                    error ? error->message : "");
      ck_assert_msg(sbx_bpf_check(prog.insns, prog.len, &error), "%s: %s", file,
                    error ? error->message : "");
      assert_agree(p, &prog, &r, 100000);
      compiled++;
      sbx_bpf_program_clear(&prog);
      sbx_policy_free(p);
      g_free(file);
    }
    g_dir_close(dir);
    g_free(path);
  }
  ck_assert_int_ge(compiled, 45);
}
END_TEST

/* ---- SBX_SELF_PID: relocations ------------------------------------------ */

static sbx_bpf_program compile_text(const char *text) {
  GError *error = NULL;
  sbx_policy *p = sbx_policy_parse_string(text, "self-pid", NULL, &error);
  ck_assert_msg(p, "%s", error ? error->message : "");
  sbx_bpf_program prog = {0};
  ck_assert_msg(sbx_bpf_compile(p, &prog, &error), "%s",
                error ? error->message : "");
  sbx_policy_free(p);
  return prog;
}

static uint32_t run_call(const sbx_bpf_program *p, int nr, uint64_t a0,
                         uint64_t a1) {
  struct seccomp_data d = {.nr = nr, .arch = AUDIT_ARCH_X86_64};
  d.args[0] = a0;
  d.args[1] = a1;
  return sbx_bpf_run(p->insns, p->len, &d, NULL);
}

START_TEST(self_pid_comparisons_compile_to_exactly_their_relocations) {
  /* Two int-sized comparisons (one jump each) and a 64-bit one (its high
   * word is compared with 0 and is not relocated). */
  sbx_bpf_program p = compile_text(
      "kill: arg0 == SBX_SELF_PID; return EPERM\n"
      "tgkill: arg0 != SBX_SELF_PID && arg1 == 7; return EPERM\n"
      "prctl: arg1 == SBX_SELF_PID || arg0 == 1; return EPERM\n"
      "@default allow\n");
  ck_assert_uint_eq(p.n_self_pid_relocs, 3);
  for (size_t i = 0; i < p.n_self_pid_relocs; i++) {
    const struct sock_filter *insn = &p.insns[p.self_pid_relocs[i]];
    ck_assert_uint_eq(insn->code, BPF_JMP | BPF_JEQ | BPF_K);
    ck_assert_uint_eq(insn->k, SBX_BPF_SELF_PID_UNPATCHED);
    if (i)
      ck_assert_uint_gt(p.self_pid_relocs[i], p.self_pid_relocs[i - 1]);
  }
  /* The relocations are the only instructions holding the value. */
  size_t holding = 0;
  for (size_t i = 0; i < p.len; i++)
    holding += p.insns[i].k == SBX_BPF_SELF_PID_UNPATCHED;
  ck_assert_uint_eq(holding, 3);

  /* Unpatched, no pid is "self". Patched there, 4321 is. */
  ck_assert_uint_eq(run_call(&p, __NR_kill, 4321, 0),
                    SECCOMP_RET_ERRNO | EPERM);
  for (size_t i = 0; i < p.n_self_pid_relocs; i++)
    p.insns[p.self_pid_relocs[i]].k = 4321;
  ck_assert_uint_eq(run_call(&p, __NR_kill, 4321, 0), SECCOMP_RET_ALLOW);
  ck_assert_uint_eq(run_call(&p, __NR_kill, 4322, 0),
                    SECCOMP_RET_ERRNO | EPERM);
  ck_assert_uint_eq(run_call(&p, __NR_tgkill, 4322, 7), SECCOMP_RET_ALLOW);
  ck_assert_uint_eq(run_call(&p, __NR_tgkill, 4321, 7),
                    SECCOMP_RET_ERRNO | EPERM);
  ck_assert_uint_eq(run_call(&p, __NR_prctl, 0, 4321), SECCOMP_RET_ALLOW);
  ck_assert_uint_eq(run_call(&p, __NR_prctl, 0, 4321 | 1ull << 32),
                    SECCOMP_RET_ERRNO | EPERM);
  sbx_bpf_program_clear(&p);
}
END_TEST

START_TEST(a_literal_placeholder_value_is_not_a_relocation) {
  sbx_bpf_program p =
      compile_text("kill: arg0 == 0x7fff5e1f; return EPERM\n@default allow\n");
  ck_assert_uint_eq(p.n_self_pid_relocs, 0);
  ck_assert_ptr_null(p.self_pid_relocs);
  sbx_bpf_program_clear(&p);
}
END_TEST

START_TEST(self_pid_stands_alone_after_equality) {
  const char *bad[] = {
      "kill: arg0 > SBX_SELF_PID\n",      "kill: arg0 & SBX_SELF_PID\n",
      "kill: arg0 == SBX_SELF_PID | 1\n", "kill: arg0 == 1 | SBX_SELF_PID\n",
      "kill: arg0 == ~SBX_SELF_PID\n",    "kill: return SBX_SELF_PID\n",
  };
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    GError *error = NULL;
    sbx_policy *p = sbx_policy_parse_string(bad[i], "bad", NULL, &error);
    ck_assert_msg(p == NULL, "accepted: %s", bad[i]);
    ck_assert_msg(strstr(error->message, "SBX_SELF_PID") != NULL, "%s",
                  error->message);
    g_error_free(error);
  }
}
END_TEST

/* ---- The kernel's action cache ------------------------------------------ */

/* What the policy answers for nr whatever the arguments, or false when the
 * answer depends on them. */
static bool policy_const_ret(const sbx_policy *p, int nr, uint32_t *ret) {
  const sbx_rule *rule = find_rule(p, nr);
  if (rule == NULL) {
    *ret = sbx_action_to_ret(p->default_action);
    return true;
  }
  *ret = sbx_action_to_ret(rule->on_match);
  if (rule->n_alts == 0 || *ret == sbx_action_to_ret(rule->on_mismatch))
    return true;
  for (size_t a = 0; a < rule->n_alts; a++)
    if (rule->alts[a].n_cmps == 0)
      return true;
  return false;
}

/* Every call the policy decides without its arguments is decided on a
 * path that loads nothing but arch and nr, so the kernel's emulation finds
 * it (and caches it when it is an allow). A path may be constant for a
 * rule whose checks cannot fail (or cannot hold) too; what it returns is
 * then the policy's answer, which the other tests hold the program to.
 * i386 and x32 numbers end in a kill that needs nothing else. Returns the
 * number of syscalls the kernel caches. */
static int assert_cacheable(const sbx_policy *p, const sbx_bpf_program *prog,
                            const char *what, int top) {
  int cached = 0;
  for (int nr = 0; nr <= top; nr++) {
    uint32_t want, got;
    bool found = sbx_bpf_const_action(prog->insns, prog->len, AUDIT_ARCH_X86_64,
                                      (uint32_t)nr, &got);
    if (policy_const_ret(p, nr, &want)) {
      ck_assert_msg(found,
                    "%s: syscall %d: decided without its arguments, "
                    "but its path loads more than arch and nr",
                    what, nr);
      ck_assert_msg(got == want,
                    "%s: syscall %d: 0x%x on the constant path, "
                    "the policy says 0x%x",
                    what, nr, got, want);
    }
    cached += found && got == SECCOMP_RET_ALLOW;
    ck_assert(sbx_bpf_const_action(prog->insns, prog->len, AUDIT_ARCH_X86_64,
                                   0x40000000u | (uint32_t)nr, &got) &&
              got == SECCOMP_RET_KILL_PROCESS);
    ck_assert(sbx_bpf_const_action(prog->insns, prog->len, AUDIT_ARCH_I386,
                                   (uint32_t)nr, &got) &&
              got == SECCOMP_RET_KILL_PROCESS);
  }
  return cached;
}

START_TEST(random_policies_decide_argument_free_calls_from_nr_alone) {
  rng r = {0x5eed + (uint64_t)_i};
  sbx_policy *p = random_policy(&r, 300);
  sbx_bpf_program prog;
  GError *error = NULL;
  ck_assert_msg(sbx_bpf_compile(p, &prog, &error), "%s",
                error ? error->message : "");
  int top = p->n_rules ? p->rules[p->n_rules - 1].nr + 2 : 2;
  assert_cacheable(p, &prog, "random policy", top);
  sbx_bpf_program_clear(&prog);
  free_random_policy(p);
}
END_TEST

/* Every built-in policy, and layer 1's with openat2 allowed (a type with
 * direct trees): the filters a worker stacks. getpid is allowed without
 * arguments by each, so the kernel answers it without running any. */
START_TEST(builtin_filters_leave_argument_free_allows_to_the_cache) {
  int top = sbx_syscall_max();
  int checked = 0;
  for (size_t i = 0; i <= sbx_builtin_n_files; i++) {
    const char *name = i < sbx_builtin_n_files ? sbx_builtin_files[i].name
                                               : "broker-client.policy";
    if (!g_str_has_suffix(name, ".policy"))
      continue;
    GError *error = NULL;
    sbx_policy *p = sbx_builtin_policy(name, &error);
    ck_assert_msg(p != NULL, "%s: %s", name, error ? error->message : "");
    if (i == sbx_builtin_n_files)
      ck_assert(
          sbx_policy_allow_call(p, SYS_openat2, "openat2", "direct opens"));
    sbx_bpf_program prog;
    ck_assert_msg(sbx_bpf_compile(p, &prog, &error), "%s: %s", name,
                  error ? error->message : "");
    int cached = assert_cacheable(p, &prog, name, top);
    uint32_t got;
    if (g_str_has_prefix(name, "renderer") ||
        g_str_has_prefix(name, "broker-client"))
      ck_assert_msg(sbx_bpf_const_action(prog.insns, prog.len,
                                         AUDIT_ARCH_X86_64, SYS_getpid, &got) &&
                        got == SECCOMP_RET_ALLOW && cached > 50,
                    "%s: %d calls cached", name, cached);
    checked++;
    sbx_bpf_program_clear(&prog);
    sbx_policy_free(p);
  }
  ck_assert_int_ge(checked, 5);
}
END_TEST

/* The emulation itself, on hand-written programs: an argument or
 * instruction-pointer load before the verdict hides every call from it
 * (the negative), the same decisions with nr tested first do not. */
START_TEST(const_action_follows_only_what_the_kernel_knows) {
  struct sock_filter ip_first[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
               offsetof(struct seccomp_data, instruction_pointer)),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getpid, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
  };
  struct sock_filter nr_first[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xffff),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getpid, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_JMP | BPF_JA, 1),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
  };
  uint32_t got = 0;
  ck_assert(!sbx_bpf_const_action(ip_first, G_N_ELEMENTS(ip_first),
                                  AUDIT_ARCH_X86_64, SYS_getpid, &got));
  ck_assert(!sbx_bpf_const_action(ip_first, G_N_ELEMENTS(ip_first),
                                  AUDIT_ARCH_X86_64, SYS_read, &got));
  ck_assert(sbx_bpf_const_action(nr_first, G_N_ELEMENTS(nr_first),
                                 AUDIT_ARCH_X86_64, SYS_getpid, &got));
  ck_assert_uint_eq(got, SECCOMP_RET_ALLOW);
  /* BPF_JA skips the argument load: read is constant too. */
  ck_assert(sbx_bpf_const_action(nr_first, G_N_ELEMENTS(nr_first),
                                 AUDIT_ARCH_X86_64, SYS_read, &got));
  ck_assert_uint_eq(got, SECCOMP_RET_ERRNO | EPERM);
  /* Without the jump, read's path loads arg0. */
  nr_first[4] = (struct sock_filter)BPF_STMT(BPF_JMP | BPF_JA, 0);
  ck_assert(!sbx_bpf_const_action(nr_first, G_N_ELEMENTS(nr_first),
                                  AUDIT_ARCH_X86_64, SYS_read, &got));
  /* A policy rule with an argument check: loads it, so not constant. */
  sbx_bpf_program prog = compile_text(
      "@default kill-process\n"
      "getpid: 1\n"
      "fcntl: arg1 == 1; return EPERM\n");
  ck_assert(sbx_bpf_const_action(prog.insns, prog.len, AUDIT_ARCH_X86_64,
                                 SYS_getpid, &got) &&
            got == SECCOMP_RET_ALLOW);
  ck_assert(!sbx_bpf_const_action(prog.insns, prog.len, AUDIT_ARCH_X86_64,
                                  SYS_fcntl, &got));
  sbx_bpf_program_clear(&prog);
}
END_TEST

static Suite *bpf_compiler_suite(void) {
  Suite *s = suite_create("bpf_compiler");
  TCase *tc = tcase_create("compiler");
  tcase_set_timeout(tc, 30);
  tcase_add_loop_test(tc, compiled_random_policies_agree_with_the_policy, 0,
                      12);
  tcase_add_test(tc, corpus_policies_compile_and_agree_with_the_policy);
  tcase_add_loop_test(
      tc, errno_verdicts_become_notifications_and_nothing_else_changes, 0, 8);
  tcase_add_test(tc, a_program_returning_the_accumulator_is_not_rewritten);
  tcase_add_test(tc, long_programs_use_long_jumps_and_load_in_the_kernel);
  tcase_add_test(tc, too_long_programs_are_refused_naming_a_rule);
  tcase_add_test(tc, duplicate_rules_are_refused);
  tcase_add_test(tc, search_depth_stays_logarithmic);
  tcase_add_loop_test(tc, disjunctions_on_one_argument_agree_with_the_policy, 0,
                      16);
  tcase_add_test(tc, disjunctions_of_constants_take_logarithmic_paths);
  tcase_add_test(tc, large_disjunctions_run_alike_in_the_kernel);
  tcase_add_test(tc, checker_accepts_exactly_what_the_kernel_accepts);
  tcase_add_test(tc, interpreter_follows_alu_and_scratch_semantics);
  tcase_add_test(tc, self_pid_comparisons_compile_to_exactly_their_relocations);
  tcase_add_test(tc, a_literal_placeholder_value_is_not_a_relocation);
  tcase_add_test(tc, self_pid_stands_alone_after_equality);
  tcase_add_loop_test(
      tc, random_policies_decide_argument_free_calls_from_nr_alone, 0, 16);
  tcase_add_test(tc, builtin_filters_leave_argument_free_allows_to_the_cache);
  tcase_add_test(tc, const_action_follows_only_what_the_kernel_knows);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *runner = srunner_create(bpf_compiler_suite());
  srunner_run_all(runner, CK_NORMAL);
  int failed = srunner_ntests_failed(runner);
  srunner_free(runner);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
