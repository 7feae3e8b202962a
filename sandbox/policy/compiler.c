/* The policy -> BPF compiler.
 *
 * Why it exists: the kernel runs classic BPF, not policies. libseccomp
 * cannot express every policy exactly (a per-syscall mismatch action,
 * `arg & MASK` meaning "any bit set", comparisons on the low 32 bits only),
 * so sbx generates the program itself; docs/bpf.md describes the layout.
 *
 * Trusts: nothing in the sbx_policy beyond its C types; indices, operators
 * and actions are checked before any code is generated.
 * Refuses: malformed policy structures, two rules for one syscall, and
 * programs longer than BPF_MAXINSNS, with an error naming the rule.
 *
 * Code is generated backwards, from the return instructions up to the
 * architecture check, so every jump target already has its final position
 * when a jump to it is emitted. A conditional jump reaches at most 255
 * instructions; a farther target goes through an unconditional BPF_JA (or a
 * copy of the return instruction it leads to), shared while in reach.
 */
#include "sandbox/policy/compiler.h"

#include <linux/audit.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#define MAX_COND_JUMP 255u
#define NO_NODE UINT32_MAX
#define X32_SYSCALL_BIT 0x40000000u

#define OFF_NR ((uint32_t)offsetof(struct seccomp_data, nr))
#define OFF_ARCH ((uint32_t)offsetof(struct seccomp_data, arch))
#define OFF_ARG_LO(i) \
  ((uint32_t)(offsetof(struct seccomp_data, args) + 8u * (i)))
#define OFF_ARG_HI(i) (OFF_ARG_LO(i) + 4u)

typedef struct {
  uint32_t value;
  uint32_t node;
} ret_entry;

typedef struct {
  GArray *rev;        /* struct sock_filter, the last instruction first */
  GArray *trampoline; /* uint32_t per node: the newest far-jump helper */
  GArray *rets;       /* ret_entry: the one return per distinct action */
  GArray *self_pid;   /* uint32_t: nodes whose constant is the own pid */
} builder;

/* A piece of code as a jump target. When its first instruction loads the
 * word at `loaded` into A, a jump made while A already holds that word may
 * enter at `after` instead: `arg0 == 1 || arg0 == 2` loads arg0 once. */
typedef struct {
  uint32_t entry;
  int32_t loaded;
  uint32_t after;
} code_ref;

static code_ref node_ref(uint32_t node) {
  return (code_ref){node, -1, node};
}

static uint32_t resolve(code_ref ref, uint32_t a_holds) {
  if (ref.loaded >= 0 && (uint32_t)ref.loaded == a_holds)
    return ref.after;
  return ref.entry;
}

static uint32_t next_node(const builder *b) {
  return b->rev->len;
}

/* Instructions skipped by a jump from the next emitted instruction. */
static uint32_t distance(const builder *b, uint32_t target) {
  return next_node(b) - 1 - target;
}

static const struct sock_filter *insn_at(const builder *b, uint32_t node) {
  return &g_array_index(b->rev, struct sock_filter, node);
}

static uint32_t append(builder *b, struct sock_filter insn) {
  uint32_t none = NO_NODE;
  g_array_append_val(b->rev, insn);
  g_array_append_val(b->trampoline, none);
  return b->rev->len - 1;
}

static bool is_ret(const builder *b, uint32_t node) {
  return BPF_CLASS(insn_at(b, node)->code) == BPF_RET;
}

/* An instruction, placed next, that behaves like `target`: a copy of it if
 * it is a return (one instruction fewer to execute), else a BPF_JA. */
static uint32_t emit_reach(builder *b, uint32_t target) {
  if (is_ret(b, target))
    return append(b, *insn_at(b, target));
  struct sock_filter ja = BPF_JUMP(BPF_JMP | BPF_JA, distance(b, target), 0, 0);
  return append(b, ja);
}

static uint32_t far_helper(builder *b, uint32_t target) {
  uint32_t helper = g_array_index(b->trampoline, uint32_t, target);
  if (helper != NO_NODE && distance(b, helper) <= MAX_COND_JUMP)
    return helper;
  helper = emit_reach(b, target);
  g_array_index(b->trampoline, uint32_t, target) = helper;
  return helper;
}

static uint32_t emit_jump(builder *b, uint16_t code, uint32_t k, uint32_t jt,
                          uint32_t jf) {
  /* A new helper moves the other target one further away: re-check both. */
  for (;;) {
    if (jt == jf)
      return jt;
    if (distance(b, jt) > MAX_COND_JUMP) {
      jt = far_helper(b, jt);
      continue;
    }
    if (distance(b, jf) > MAX_COND_JUMP) {
      jf = far_helper(b, jf);
      continue;
    }
    break;
  }
  struct sock_filter insn =
      BPF_JUMP(code, k, (uint8_t)distance(b, jt), (uint8_t)distance(b, jf));
  return append(b, insn);
}

/* A non-jump instruction falls through, so `next` must come right after. */
static uint32_t emit_stmt(builder *b, uint16_t code, uint32_t k,
                          uint32_t next) {
  if (next != next_node(b) - 1)
    emit_reach(b, next);
  struct sock_filter insn = BPF_STMT(code, k);
  return append(b, insn);
}

static uint32_t ret_node(builder *b, uint32_t value) {
  for (guint i = 0; i < b->rets->len; i++) {
    const ret_entry *e = &g_array_index(b->rets, ret_entry, i);
    if (e->value == value)
      return e->node;
  }
  struct sock_filter insn = BPF_STMT(BPF_RET | BPF_K, value);
  ret_entry e = {value, append(b, insn)};
  g_array_append_val(b->rets, e);
  return e.node;
}

static code_ref emit_load(builder *b, uint32_t offset, uint32_t next) {
  uint32_t node = emit_stmt(b, BPF_LD | BPF_W | BPF_ABS, offset, next);
  return (code_ref){node, (int32_t)offset, next};
}

/* One comparison of the 32-bit word at `offset` with c. A self_pid
 * comparison's jump is recorded as a relocation: jumps are never copied
 * (only returns and BPF_JA are), so the recorded node is the only one
 * that holds the constant. */
static code_ref emit_word_cmp(builder *b, uint32_t offset, sbx_cmp_op op,
                              uint32_t c, bool self_pid, code_ref t,
                              code_ref f) {
  switch (op) {
    case SBX_CMP_SET:
      if (c == 0)
        return f;
      break;
    case SBX_CMP_IN:
      if (c == UINT32_MAX)
        return t;
      break;
    case SBX_CMP_GE:
      if (c == 0)
        return t;
      break;
    case SBX_CMP_LT:
      if (c == 0)
        return f;
      break;
    case SBX_CMP_GT:
      if (c == UINT32_MAX)
        return f;
      break;
    case SBX_CMP_LE:
      if (c == UINT32_MAX)
        return t;
      break;
    default:
      break;
  }
  uint32_t yes = resolve(t, offset), no = resolve(f, offset);
  if (yes == no)
    return t;
  uint32_t node;
  switch (op) {
    case SBX_CMP_EQ:
      node = emit_jump(b, BPF_JMP | BPF_JEQ | BPF_K, c, yes, no);
      break;
    case SBX_CMP_NE:
      node = emit_jump(b, BPF_JMP | BPF_JEQ | BPF_K, c, no, yes);
      break;
    case SBX_CMP_GT:
      node = emit_jump(b, BPF_JMP | BPF_JGT | BPF_K, c, yes, no);
      break;
    case SBX_CMP_GE:
      node = emit_jump(b, BPF_JMP | BPF_JGE | BPF_K, c, yes, no);
      break;
    case SBX_CMP_LT:
      node = emit_jump(b, BPF_JMP | BPF_JGE | BPF_K, c, no, yes);
      break;
    case SBX_CMP_LE:
      node = emit_jump(b, BPF_JMP | BPF_JGT | BPF_K, c, no, yes);
      break;
    case SBX_CMP_SET:
      node = emit_jump(b, BPF_JMP | BPF_JSET | BPF_K, c, yes, no);
      break;
    case SBX_CMP_IN:
    default:
      node = emit_jump(b, BPF_JMP | BPF_JSET | BPF_K, ~c, no, yes);
      break;
  }
  /* emit_jump returns an existing node when both targets merge. */
  if (self_pid && node == next_node(b) - 1 &&
      BPF_CLASS(insn_at(b, node)->code) == BPF_JMP && insn_at(b, node)->k == c)
    g_array_append_val(b->self_pid, node);
  return emit_load(b, offset, node);
}

/* Three-way branch on the high word: above c, equal to c, below c. */
static code_ref emit_high_order(builder *b, uint32_t offset, uint32_t c,
                                code_ref above, code_ref equal,
                                code_ref below) {
  uint32_t ga = resolve(above, offset), eq = resolve(equal, offset),
           lt = resolve(below, offset);
  uint32_t node;
  if (c == 0) {
    /* Nothing is below 0: "not above" means equal. */
    if (ga == eq)
      return equal;
    node = emit_jump(b, BPF_JMP | BPF_JGT | BPF_K, 0, ga, eq);
  } else if (c == UINT32_MAX) {
    /* Nothing is above ~0. */
    if (eq == lt)
      return equal;
    node = emit_jump(b, BPF_JMP | BPF_JEQ | BPF_K, c, eq, lt);
  } else {
    if (ga == eq && eq == lt)
      return equal;
    uint32_t is_eq = emit_jump(b, BPF_JMP | BPF_JEQ | BPF_K, c, eq, lt);
    node = emit_jump(b, BPF_JMP | BPF_JGT | BPF_K, c, ga, is_eq);
  }
  return emit_load(b, offset, node);
}

/* A 64-bit comparison is decided on the high word unless the high words
 * are equal; only then does the low word count. */
static code_ref emit_cmp(builder *b, const sbx_cmp *cmp, code_ref t,
                         code_ref f) {
  uint32_t lo = OFF_ARG_LO(cmp->arg), hi = OFF_ARG_HI(cmp->arg);
  uint32_t vlo = (uint32_t)cmp->value, vhi = (uint32_t)(cmp->value >> 32);
  /* A pid is positive: its high word is 0, like the placeholder's, so
   * only the low word is patched. */
  bool self = cmp->self_pid;
  if (cmp->arg_is_32bit)
    return emit_word_cmp(b, lo, cmp->op, vlo, self, t, f);
  code_ref low;
  switch (cmp->op) {
    case SBX_CMP_EQ:
      low = emit_word_cmp(b, lo, SBX_CMP_EQ, vlo, self, t, f);
      return emit_word_cmp(b, hi, SBX_CMP_EQ, vhi, false, low, f);
    case SBX_CMP_NE:
      low = emit_word_cmp(b, lo, SBX_CMP_NE, vlo, self, t, f);
      return emit_word_cmp(b, hi, SBX_CMP_EQ, vhi, false, low, t);
    case SBX_CMP_GT:
    case SBX_CMP_GE:
      low = emit_word_cmp(b, lo, cmp->op, vlo, false, t, f);
      return emit_high_order(b, hi, vhi, t, low, f);
    case SBX_CMP_LT:
    case SBX_CMP_LE:
      low = emit_word_cmp(b, lo, cmp->op, vlo, false, t, f);
      return emit_high_order(b, hi, vhi, f, low, t);
    case SBX_CMP_SET:
      /* Any bit of either half: the high half's miss tries the low half. */
      low = emit_word_cmp(b, lo, SBX_CMP_SET, vlo, false, t, f);
      return emit_word_cmp(b, hi, SBX_CMP_SET, vhi, false, t, low);
    case SBX_CMP_IN:
    default:
      low = emit_word_cmp(b, lo, SBX_CMP_IN, vlo, false, t, f);
      return emit_word_cmp(b, hi, SBX_CMP_IN, vhi, false, low, f);
  }
}

static bool rule_is_unconditional(const sbx_rule *rule) {
  return rule->n_alts == 0 || sbx_action_to_ret(rule->on_match) ==
                                  sbx_action_to_ret(rule->on_mismatch);
}

/* Consecutive syscall numbers that go to the same code. */
typedef struct {
  uint32_t first, last;
  uint32_t node;
  bool mergeable; /* an unconditional action, not an argument check */
} nr_run;

/* Syscalls most programs make most often: without @frequency data they are
 * kept near the root of the search tree where its depth allows. */
static uint32_t builtin_heat(uint32_t nr) {
  switch (nr) {
    case __NR_read:
    case __NR_write:
    case __NR_futex:
    case __NR_getpid:
    case __NR_clock_gettime:
    case __NR_gettimeofday:
      return 100;
    case __NR_mmap:
    case __NR_munmap:
    case __NR_close:
    case __NR_recvmsg:
    case __NR_sendmsg:
    case __NR_epoll_wait:
    case __NR_epoll_pwait:
    case __NR_poll:
    case __NR_ppoll:
      return 50;
    case __NR_rt_sigprocmask:
    case __NR_rt_sigreturn:
    case __NR_madvise:
    case __NR_mprotect:
    case __NR_brk:
    case __NR_fstat:
    case __NR_newfstatat:
    case __NR_lseek:
    case __NR_gettid:
    case __NR_sched_yield:
    case __NR_writev:
    case __NR_readv:
    case __NR_pread64:
    case __NR_pwrite64:
    case __NR_nanosleep:
    case __NR_clock_nanosleep:
    case __NR_fcntl:
    case __NR_recvfrom:
    case __NR_sendto:
    case __NR_restart_syscall:
      return 10;
    default:
      return 0;
  }
}

static bool has_frequency(const sbx_policy *policy) {
  for (size_t i = 0; policy->frequency && i < policy->n_frequency; i++)
    if (policy->frequency[i])
      return true;
  return false;
}

/* Picks where to split runs[i..j): the tree's height stays the minimum,
 * ceil(log2(n)) levels, and within that freedom the heavier side gets
 * fewer runs, so hot syscalls sit higher up. */
static size_t choose_split(const uint64_t *prefix, size_t i, size_t j) {
  size_t n = j - i;
  size_t half = 1;
  while (half * 2 < n)
    half *= 2;
  size_t min_left = n > half ? n - half : 1;
  size_t max_left = half < n ? half : n - 1;
  uint64_t total = prefix[j] - prefix[i];
  size_t best = min_left;
  uint64_t best_gap = UINT64_MAX;
  /* Weights grow with m: the best m sits where the left side passes half. */
  size_t lo = min_left, hi = max_left;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (2 * (prefix[i + mid] - prefix[i]) < total)
      lo = mid + 1;
    else
      hi = mid;
  }
  for (size_t m = lo > min_left ? lo - 1 : lo; m <= lo + 1 && m <= max_left;
       m++) {
    uint64_t left = prefix[i + m] - prefix[i];
    uint64_t gap = 2 * left > total ? 2 * left - total : total - 2 * left;
    if (gap < best_gap) {
      best_gap = gap;
      best = m;
    }
  }
  return i + best;
}

/* The numbers reaching this leaf lie in [lo, hi). */
static uint32_t emit_leaf(builder *b, const nr_run *run, uint64_t lo,
                          uint64_t hi, uint32_t dflt) {
  bool below = run->first > lo;
  bool above = (uint64_t)run->last + 1 < hi;
  if (below && above && run->first == run->last)
    return emit_jump(b, BPF_JMP | BPF_JEQ | BPF_K, run->first, run->node, dflt);
  uint32_t node = run->node;
  if (above)
    node = emit_jump(b, BPF_JMP | BPF_JGT | BPF_K, run->last, dflt, node);
  if (below)
    node = emit_jump(b, BPF_JMP | BPF_JGE | BPF_K, run->first, node, dflt);
  return node;
}

/* The comparisons emit_leaf makes. */
static unsigned leaf_cost(const nr_run *run, uint64_t lo, uint64_t hi) {
  bool below = run->first > lo;
  bool above = (uint64_t)run->last + 1 < hi;
  if (below && above && run->first == run->last)
    return 1;
  return below + above;
}

/* The most comparisons emit_tree makes on one path (far-jump helpers
 * aside). */
static unsigned tree_height(const nr_run *runs, const uint64_t *prefix,
                            size_t i, size_t j, uint64_t lo, uint64_t hi) {
  if (i == j)
    return 0;
  if (j - i == 1)
    return leaf_cost(&runs[i], lo, hi);
  size_t m = choose_split(prefix, i, j);
  uint32_t pivot = runs[m].first;
  return 1 + MAX(tree_height(runs, prefix, m, j, pivot, hi),
                 tree_height(runs, prefix, i, m, lo, pivot));
}

static uint32_t emit_tree(builder *b, const nr_run *runs,
                          const uint64_t *prefix, size_t i, size_t j,
                          uint64_t lo, uint64_t hi, uint32_t dflt) {
  if (i == j)
    return dflt;
  if (j - i == 1)
    return emit_leaf(b, &runs[i], lo, hi, dflt);
  size_t m = choose_split(prefix, i, j);
  uint32_t pivot = runs[m].first;
  uint32_t right = emit_tree(b, runs, prefix, m, j, pivot, hi, dflt);
  uint32_t left = emit_tree(b, runs, prefix, i, m, lo, pivot, dflt);
  return emit_jump(b, BPF_JMP | BPF_JGE | BPF_K, pivot, right, left);
}

/* Argument disjunctions.
 *
 * A rule's alternatives only decide together whether one holds, so they
 * may be tried in any order. When several constrain the same argument word
 * (`arg1 == FUTEX_WAIT || arg1 == FUTEX_WAKE || ...`), the comparisons on
 * it that select a range of values (==, !=, <, <=, >, >=, and masks whose
 * values form a range) cut the argument's values into segments, and one
 * binary search over the segments replaces the chain of comparisons. Each
 * segment leads to `match`, to what its alternatives still have to check,
 * or to the alternatives that do not test this argument. */

typedef struct {
  const sbx_cmp **cmps;
  size_t n;
} alt_view;

typedef struct {
  uint64_t first, last; /* inclusive */
} interval;

/* An argument as the comparisons see it: number and width. */
#define N_KEYS 12u

static unsigned cmp_key(const sbx_cmp *cmp) {
  return cmp->arg * 2u + (cmp->arg_is_32bit ? 1u : 0u);
}

static uint64_t key_max(unsigned key) {
  return key % 2 ? UINT32_MAX : UINT64_MAX;
}

/* Sorted disjoint intervals in storage the caller sized. */
typedef struct {
  interval *iv;
  size_t n;
} interval_set;

static void add_interval(interval_set *set, uint64_t first, uint64_t last) {
  set->iv[set->n++] = (interval){first, last};
}

/* Whether the values for which cmp holds form at most two intervals that
 * a search may fold into its own boundaries. Never for the own pid: its
 * value is known only when the process patches the one jump that holds
 * it. */
static bool cmp_is_range(const sbx_cmp *cmp) {
  if (cmp->self_pid)
    return false;
  uint64_t max = key_max(cmp_key(cmp));
  uint64_t v = cmp->value & max;
  uint64_t below = ~v & max;
  switch (cmp->op) {
    case SBX_CMP_SET:
      /* x & v != 0 means x >= 2^k when v holds every bit from k up. */
      return v == 0 || (below & (below + 1)) == 0;
    case SBX_CMP_IN:
      /* x & ~v == 0 means x <= v when v holds every bit below k. */
      return v == max || (v & (v + 1)) == 0;
    default:
      return true;
  }
}

/* The values for which a range comparison holds, into `two` (room for
 * two intervals); returns how many. The value is cut to the argument's
 * width, as sbx_cmp_holds does. */
static size_t cmp_intervals(const sbx_cmp *cmp, interval *two) {
  uint64_t max = key_max(cmp_key(cmp));
  uint64_t v = cmp->value & max;
  interval_set set = {two, 0};
  switch (cmp->op) {
    case SBX_CMP_EQ:
      add_interval(&set, v, v);
      break;
    case SBX_CMP_NE:
      if (v > 0)
        add_interval(&set, 0, v - 1);
      if (v < max)
        add_interval(&set, v + 1, max);
      break;
    case SBX_CMP_LT:
      if (v > 0)
        add_interval(&set, 0, v - 1);
      break;
    case SBX_CMP_LE:
      add_interval(&set, 0, v);
      break;
    case SBX_CMP_GT:
      if (v < max)
        add_interval(&set, v + 1, max);
      break;
    case SBX_CMP_GE:
      add_interval(&set, v, max);
      break;
    case SBX_CMP_SET:
      if (v != 0)
        add_interval(&set, (~v & max) + 1, max);
      break;
    case SBX_CMP_IN:
    default:
      add_interval(&set, 0, v);
      break;
  }
  return set.n;
}

/* set &= with; each interval of with cuts at most one more out of set, so
 * set grows by at most with_n - 1. scratch holds set->n + with_n. */
static void intersect(interval_set *set, const interval *with, size_t with_n,
                      interval *scratch) {
  interval_set out = {scratch, 0};
  for (size_t i = 0; i < set->n; i++) {
    for (size_t j = 0; j < with_n; j++) {
      uint64_t first = MAX(set->iv[i].first, with[j].first);
      uint64_t last = MIN(set->iv[i].last, with[j].last);
      if (first <= last)
        add_interval(&out, first, last);
    }
  }
  memcpy(set->iv, out.iv, out.n * sizeof(interval));
  set->n = out.n;
}

static bool in_set(const interval_set *set, uint64_t x) {
  for (size_t i = 0; i < set->n; i++)
    if (set->iv[i].first <= x && x <= set->iv[i].last)
      return true;
  return false;
}

/* A binary search on the word at offset: values from starts[i] up to
 * starts[i + 1] - 1 go to targets[i]; starts[0] is 0. */
static code_ref emit_word_switch(builder *b, uint32_t offset,
                                 const uint32_t *starts,
                                 const code_ref *targets, size_t n) {
  nr_run *pieces = g_new(nr_run, n);
  size_t n_pieces = 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t last = i + 1 < n ? starts[i + 1] - 1 : UINT32_MAX;
    uint32_t node = resolve(targets[i], offset);
    if (n_pieces > 0 && pieces[n_pieces - 1].node == node)
      pieces[n_pieces - 1].last = last;
    else
      pieces[n_pieces++] = (nr_run){starts[i], last, node, false};
  }
  if (n_pieces == 1) {
    g_free(pieces);
    return targets[0];
  }
  /* The target of most pieces is what the tree falls back to. */
  uint32_t dflt = pieces[0].node;
  size_t dflt_count = 0;
  for (size_t i = 0; i < n_pieces; i++) {
    size_t count = 0;
    for (size_t j = 0; j < n_pieces; j++)
      count += pieces[j].node == pieces[i].node;
    if (count > dflt_count) {
      dflt_count = count;
      dflt = pieces[i].node;
    }
  }
  nr_run *runs = g_new(nr_run, n_pieces);
  size_t n_runs = 0;
  for (size_t i = 0; i < n_pieces; i++)
    if (pieces[i].node != dflt)
      runs[n_runs++] = pieces[i];
  uint64_t *prefix = g_new(uint64_t, n_pieces + 1);
  for (size_t i = 0; i <= n_pieces; i++)
    prefix[i] = i;
  /* Leaving the default's pieces out saves instructions, but a leaf then
   * costs up to two comparisons; a tree over every piece needs none. */
  uint64_t end = (uint64_t)UINT32_MAX + 1;
  if (tree_height(pieces, prefix, 0, n_pieces, 0, end) <
      tree_height(runs, prefix, 0, n_runs, 0, end)) {
    g_free(runs);
    runs = pieces;
    pieces = NULL;
    n_runs = n_pieces;
  }
  uint32_t tree = emit_tree(b, runs, prefix, 0, n_runs, 0, end, dflt);
  g_free(prefix);
  g_free(runs);
  g_free(pieces);
  return emit_load(b, offset, tree);
}

typedef struct {
  uint32_t start;
  code_ref target;
} hi_piece;

static int compare_hi_piece(const void *a, const void *b) {
  uint32_t x = ((const hi_piece *)a)->start, y = ((const hi_piece *)b)->start;
  return x < y ? -1 : x > y;
}

/* The last segment that starts at or below x. */
static size_t segment_of(const uint64_t *starts, size_t n, uint64_t x) {
  size_t lo = 0, hi = n;
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (starts[mid] <= x)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

static bool starts_contain(const uint64_t *starts, size_t n, uint64_t x) {
  return starts[segment_of(starts, n, x)] == x;
}

/* The same on a 64-bit argument: a search on the high word, whose values
 * that one segment covers whole jump straight to its target, and the
 * others to a search on the low word among the segments inside them. */
static code_ref emit_wide_switch(builder *b, unsigned arg,
                                 const uint64_t *starts,
                                 const code_ref *targets, size_t n) {
  /* High words that some segment starts inside of. */
  GArray *split = g_array_new(FALSE, FALSE, sizeof(uint64_t));
  for (size_t i = 0; i < n; i++) {
    uint64_t h = starts[i] >> 32;
    if ((uint32_t)starts[i] != 0 &&
        (split->len == 0 ||
         g_array_index(split, uint64_t, split->len - 1) != h))
      g_array_append_val(split, h);
  }
  const uint64_t *hs = (const uint64_t *)(void *)split->data;
  GArray *pieces = g_array_new(FALSE, FALSE, sizeof(hi_piece));
  for (size_t i = 0; i < n; i++) {
    uint64_t h = starts[i] >> 32;
    if ((uint32_t)starts[i] == 0 &&
        (split->len == 0 || !starts_contain(hs, split->len, h))) {
      hi_piece p = {(uint32_t)h, targets[i]};
      g_array_append_val(pieces, p);
    }
  }
  uint32_t *lo_starts = g_new(uint32_t, n);
  code_ref *lo_targets = g_new(code_ref, n);
  for (guint k = 0; k < split->len; k++) {
    uint64_t h = hs[k];
    size_t first = segment_of(starts, n, h << 32), m = 0;
    lo_starts[m] = 0;
    lo_targets[m++] = targets[first];
    for (size_t j = first + 1; j < n && starts[j] >> 32 == h; j++) {
      lo_starts[m] = (uint32_t)starts[j];
      lo_targets[m++] = targets[j];
    }
    hi_piece p = {(uint32_t)h, emit_word_switch(b, OFF_ARG_LO(arg), lo_starts,
                                                lo_targets, m)};
    g_array_append_val(pieces, p);
    /* The next high word starts inside the last segment seen here. */
    uint64_t next = h + 1;
    if (next <= UINT32_MAX && !(k + 1 < split->len && hs[k + 1] == next) &&
        !starts_contain(starts, n, next << 32)) {
      hi_piece q = {(uint32_t)next, targets[segment_of(starts, n, next << 32)]};
      g_array_append_val(pieces, q);
    }
  }
  g_array_sort(pieces, compare_hi_piece);
  uint32_t *hi_starts = g_new(uint32_t, pieces->len);
  code_ref *hi_targets = g_new(code_ref, pieces->len);
  for (guint k = 0; k < pieces->len; k++) {
    hi_starts[k] = g_array_index(pieces, hi_piece, k).start;
    hi_targets[k] = g_array_index(pieces, hi_piece, k).target;
  }
  code_ref out =
      emit_word_switch(b, OFF_ARG_HI(arg), hi_starts, hi_targets, pieces->len);
  g_free(hi_targets);
  g_free(hi_starts);
  g_free(lo_targets);
  g_free(lo_starts);
  g_array_free(pieces, TRUE);
  g_array_free(split, TRUE);
  return out;
}

static code_ref emit_conjunction(builder *b, const alt_view *alt, code_ref t,
                                 code_ref f) {
  code_ref all_hold = t;
  for (size_t i = alt->n; i-- > 0;)
    all_hold = emit_cmp(b, alt->cmps[i], all_hold, f);
  return all_hold;
}

static code_ref emit_disjunction(builder *b, const alt_view *alts, size_t n,
                                 code_ref t, code_ref f);

/* What one alternative leaves once the switched argument is known. */
typedef struct {
  interval_set set;  /* the argument's values it accepts */
  alt_view residual; /* its comparisons not decided by the search */
  bool switched;
} alt_split;

/* The alternatives one segment's values pass. */
typedef struct {
  const uint32_t *members;
  size_t n;
  guint segment;
} segment_members;

static int compare_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static int compare_members(const void *a, const void *b) {
  const segment_members *x = a, *y = b;
  if (x->n != y->n)
    return x->n < y->n ? -1 : 1;
  int c = x->n ? memcmp(x->members, y->members, x->n * sizeof(uint32_t)) : 0;
  if (c != 0)
    return c;
  return x->segment < y->segment ? -1 : x->segment > y->segment;
}

/* Emits the alternatives as a search on key into *out, unless fewer than
 * two of them test it or the search would have to copy an alternative's
 * remaining checks into several segments (then nothing is emitted). With
 * pure_only, only alternatives that test nothing else join the search. */
static bool emit_switch(builder *b, const alt_view *alts, size_t n,
                        unsigned key, bool pure_only, code_ref t, code_ref f,
                        code_ref *out) {
  uint64_t max = key_max(key);
  size_t total = 0, widest = 0;
  for (size_t a = 0; a < n; a++) {
    total += alts[a].n;
    widest = MAX(widest, alts[a].n);
  }
  /* An alternative's set has at most one interval more than it has
   * comparisons on key. */
  interval *pool = g_new(interval, total + n);
  interval *scratch = g_new(interval, widest + 3);
  const sbx_cmp **residual_pool = g_new(const sbx_cmp *, total + 1);
  alt_split *split = g_new0(alt_split, n);
  size_t n_switched = 0, used = 0, n_starts = 1;
  for (size_t a = 0; a < n; a++) {
    alt_split *s = &split[a];
    bool on_key = false;
    s->set = (interval_set){pool + used + a, 0};
    add_interval(&s->set, 0, max);
    s->residual.cmps = residual_pool + used;
    used += alts[a].n;
    for (size_t c = 0; c < alts[a].n; c++) {
      const sbx_cmp *cmp = alts[a].cmps[c];
      if (cmp_key(cmp) == key && cmp_is_range(cmp)) {
        interval two[2];
        size_t k = cmp_intervals(cmp, two);
        on_key = true;
        intersect(&s->set, two, k, scratch);
      } else {
        s->residual.cmps[s->residual.n++] = cmp;
      }
    }
    s->switched = on_key && (!pure_only || s->residual.n == 0);
    n_switched += s->switched;
    if (s->switched)
      n_starts += 2 * s->set.n;
  }

  /* Segments: every value where some switched set starts or ends. */
  uint64_t *starts = g_new(uint64_t, n_starts);
  size_t n_seg = 0;
  starts[n_seg++] = 0;
  for (size_t a = 0; a < n; a++) {
    for (size_t i = 0; split[a].switched && i < split[a].set.n; i++) {
      starts[n_seg++] = split[a].set.iv[i].first;
      if (split[a].set.iv[i].last < max)
        starts[n_seg++] = split[a].set.iv[i].last + 1;
    }
  }
  qsort(starts, n_seg, sizeof(uint64_t), compare_u64);
  size_t unique = 0;
  for (size_t i = 0; i < n_seg; i++)
    if (unique == 0 || starts[i] != starts[unique - 1])
      starts[unique++] = starts[i];
  n_seg = unique;

  /* Segments whose values pass the same alternatives share one class. */
  GArray *members = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  size_t *first_member = g_new(size_t, n_seg + 1);
  for (size_t i = 0; i < n_seg; i++) {
    first_member[i] = members->len;
    for (size_t a = 0; a < n; a++) {
      uint32_t index = (uint32_t)a;
      if (split[a].switched && in_set(&split[a].set, starts[i]))
        g_array_append_val(members, index);
    }
  }
  first_member[n_seg] = members->len;
  const uint32_t *all = (const uint32_t *)(void *)members->data;
  segment_members *by_members = g_new(segment_members, n_seg);
  for (size_t i = 0; i < n_seg; i++)
    by_members[i] = (segment_members){
        all + first_member[i], first_member[i + 1] - first_member[i], (guint)i};
  qsort(by_members, n_seg, sizeof(*by_members), compare_members);
  guint *seg_class = g_new(guint, n_seg);
  segment_members *classes = g_new(segment_members, n_seg);
  size_t n_classes = 0;
  for (size_t i = 0; i < n_seg; i++) {
    if (n_classes == 0 || by_members[i].n != classes[n_classes - 1].n ||
        (by_members[i].n &&
         memcmp(by_members[i].members, classes[n_classes - 1].members,
                by_members[i].n * sizeof(uint32_t)) != 0))
      classes[n_classes++] = by_members[i];
    seg_class[by_members[i].segment] = (guint)(n_classes - 1);
  }

  /* A class with a member that checks nothing else goes to t; any other
   * alternative must belong to one class only, or its checks would be
   * emitted twice. */
  bool *pure_class = g_new0(bool, n_classes + 1);
  guint *class_of = g_new(guint, n);
  for (size_t a = 0; a < n; a++)
    class_of[a] = G_MAXUINT;
  bool ok = n_switched >= 2;
  for (guint c = 0; ok && c < n_classes; c++) {
    const uint32_t *m = classes[c].members;
    for (size_t k = 0; k < classes[c].n; k++)
      pure_class[c] |= split[m[k]].residual.n == 0;
    for (size_t k = 0; !pure_class[c] && k < classes[c].n; k++) {
      if (class_of[m[k]] != G_MAXUINT && class_of[m[k]] != c)
        ok = false;
      class_of[m[k]] = c;
    }
  }

  if (ok) {
    alt_view *views = g_new(alt_view, n + 1);
    size_t n_views = 0;
    for (size_t a = 0; a < n; a++)
      if (!split[a].switched)
        views[n_views++] = alts[a];
    code_ref rest = emit_disjunction(b, views, n_views, t, f);
    code_ref *class_target = g_new(code_ref, n_classes);
    for (guint c = 0; c < n_classes; c++) {
      n_views = 0;
      for (size_t k = 0; k < classes[c].n; k++)
        views[n_views++] = split[classes[c].members[k]].residual;
      if (pure_class[c])
        class_target[c] = t;
      else if (n_views == 0)
        class_target[c] = rest;
      else
        class_target[c] = emit_disjunction(b, views, n_views, t, rest);
    }
    code_ref *targets = g_new(code_ref, n_seg);
    for (size_t i = 0; i < n_seg; i++)
      targets[i] = class_target[seg_class[i]];
    if (key % 2) {
      uint32_t *s32 = g_new(uint32_t, n_seg);
      for (size_t i = 0; i < n_seg; i++)
        s32[i] = (uint32_t)starts[i];
      *out = emit_word_switch(b, OFF_ARG_LO(key / 2), s32, targets, n_seg);
      g_free(s32);
    } else {
      *out = emit_wide_switch(b, key / 2, starts, targets, n_seg);
    }
    g_free(targets);
    g_free(class_target);
    g_free(views);
  }

  g_free(class_of);
  g_free(pure_class);
  g_free(classes);
  g_free(seg_class);
  g_free(by_members);
  g_free(first_member);
  g_array_free(members, TRUE);
  g_free(starts);
  g_free(split);
  g_free(residual_pool);
  g_free(scratch);
  g_free(pool);
  return ok;
}

/* Any of alts holds -> t, none -> f. Switches on the argument that most
 * alternatives test; without one that two test, the alternatives are
 * tried one after the other. */
static code_ref emit_disjunction(builder *b, const alt_view *alts, size_t n,
                                 code_ref t, code_ref f) {
  size_t count[N_KEYS] = {0};
  for (size_t a = 0; n >= 2 && a < n; a++) {
    bool tests[N_KEYS] = {false};
    for (size_t c = 0; c < alts[a].n; c++)
      if (cmp_is_range(alts[a].cmps[c]))
        tests[cmp_key(alts[a].cmps[c])] = true;
    for (unsigned k = 0; k < N_KEYS; k++)
      count[k] += tests[k];
  }
  unsigned key = 0;
  for (unsigned k = 1; k < N_KEYS; k++)
    if (count[k] > count[key])
      key = k;
  code_ref out;
  if (count[key] >= 2 && (emit_switch(b, alts, n, key, false, t, f, &out) ||
                          emit_switch(b, alts, n, key, true, t, f, &out)))
    return out;
  out = f;
  for (size_t a = n; a-- > 0;)
    out = emit_conjunction(b, &alts[a], t, out);
  return out;
}

static uint32_t emit_rule(builder *b, const sbx_rule *rule) {
  code_ref match = node_ref(ret_node(b, sbx_action_to_ret(rule->on_match)));
  if (rule_is_unconditional(rule))
    return match.entry;
  code_ref mismatch =
      node_ref(ret_node(b, sbx_action_to_ret(rule->on_mismatch)));
  alt_view *alts = g_new(alt_view, rule->n_alts);
  const sbx_cmp **cmps = NULL;
  size_t total = 0;
  for (size_t a = 0; a < rule->n_alts; a++)
    total += rule->alts[a].n_cmps;
  cmps = g_new(const sbx_cmp *, total + 1);
  total = 0;
  for (size_t a = 0; a < rule->n_alts; a++) {
    alts[a] = (alt_view){&cmps[total], rule->alts[a].n_cmps};
    for (size_t c = 0; c < rule->alts[a].n_cmps; c++)
      cmps[total++] = &rule->alts[a].cmps[c];
  }
  code_ref entry = emit_disjunction(b, alts, rule->n_alts, match, mismatch);
  g_free(cmps);
  g_free(alts);
  return entry.entry;
}

static const char *rule_where(const sbx_rule *rule, char *buf, size_t size) {
  const char *name = rule->name ? rule->name : "?";
  if (rule->file)
    g_snprintf(buf, size, "%s:%u: syscall %s (%d)", rule->file, rule->line,
               name, rule->nr);
  else
    g_snprintf(buf, size, "syscall %s (%d)", name, rule->nr);
  return buf;
}

static bool action_is_valid(sbx_action action) {
  switch (action.kind) {
    case SBX_ACTION_KILL_PROCESS:
    case SBX_ACTION_KILL_THREAD:
    case SBX_ACTION_TRAP:
    case SBX_ACTION_ERRNO:
    case SBX_ACTION_USER_NOTIF:
    case SBX_ACTION_TRACE:
    case SBX_ACTION_LOG:
    case SBX_ACTION_ALLOW:
      return true;
  }
  return false;
}

static gboolean validate_policy(const sbx_policy *policy, GError **error) {
  char where[512];
  if (!action_is_valid(policy->default_action)) {
    g_set_error(error, SBX_BPF_ERROR, SBX_BPF_ERROR_INVALID_POLICY,
                "policy default action has unknown kind %d",
                (int)policy->default_action.kind);
    return FALSE;
  }
  if (policy->n_rules > 0 && policy->rules == NULL) {
    g_set_error(error, SBX_BPF_ERROR, SBX_BPF_ERROR_INVALID_POLICY,
                "policy claims %zu rules but has no rule array",
                policy->n_rules);
    return FALSE;
  }
  for (size_t r = 0; r < policy->n_rules; r++) {
    const sbx_rule *rule = &policy->rules[r];
    if (!action_is_valid(rule->on_match) ||
        (rule->n_alts > 0 && !action_is_valid(rule->on_mismatch))) {
      g_set_error(error, SBX_BPF_ERROR, SBX_BPF_ERROR_INVALID_POLICY,
                  "%s: unknown action kind",
                  rule_where(rule, where, sizeof(where)));
      return FALSE;
    }
    if (rule->n_alts > 0 && rule->alts == NULL) {
      g_set_error(error, SBX_BPF_ERROR, SBX_BPF_ERROR_INVALID_POLICY,
                  "%s: %zu alternatives but no alternative array",
                  rule_where(rule, where, sizeof(where)), rule->n_alts);
      return FALSE;
    }
    for (size_t a = 0; a < rule->n_alts; a++) {
      const sbx_conjunction *alt = &rule->alts[a];
      if (alt->n_cmps > 0 && alt->cmps == NULL) {
        g_set_error(error, SBX_BPF_ERROR, SBX_BPF_ERROR_INVALID_POLICY,
                    "%s: alternative %zu has no comparison array",
                    rule_where(rule, where, sizeof(where)), a + 1);
        return FALSE;
      }
      for (size_t c = 0; c < alt->n_cmps; c++) {
        const sbx_cmp *cmp = &alt->cmps[c];
        if (cmp->self_pid && (cmp->op > SBX_CMP_NE ||
                              cmp->value != SBX_BPF_SELF_PID_UNPATCHED)) {
          g_set_error(error, SBX_BPF_ERROR, SBX_BPF_ERROR_INVALID_POLICY,
                      "%s: a comparison with the own pid must be == or != "
                      "with the value 0x%x",
                      rule_where(rule, where, sizeof(where)),
                      SBX_BPF_SELF_PID_UNPATCHED);
          return FALSE;
        }
        if (cmp->arg > 5 || (unsigned)cmp->op > SBX_CMP_IN) {
          g_set_error(error, SBX_BPF_ERROR, SBX_BPF_ERROR_INVALID_POLICY,
                      "%s: comparison on arg%u with operator %d: system "
                      "calls have arguments 0..5 and operators ==, !=, <, "
                      "<=, >, >=, &, in",
                      rule_where(rule, where, sizeof(where)), cmp->arg,
                      (int)cmp->op);
          return FALSE;
        }
      }
    }
  }
  return TRUE;
}

static int compare_rule_nr(const void *a, const void *b) {
  uint32_t x = (uint32_t)(*(const sbx_rule *const *)a)->nr;
  uint32_t y = (uint32_t)(*(const sbx_rule *const *)b)->nr;
  return x < y ? -1 : x > y;
}

/* Returns values are emitted first, least used first, so the most used
 * ones sit closest to the code that jumps to them. */
static void emit_returns(builder *b, const sbx_policy *policy) {
  GArray *values = g_array_new(FALSE, FALSE, sizeof(ret_entry));
  uint32_t kill = SECCOMP_RET_KILL_PROCESS;
  uint32_t dflt = sbx_action_to_ret(policy->default_action);
  for (size_t r = 0; r <= policy->n_rules * 2 + 1; r++) {
    uint32_t value;
    if (r == policy->n_rules * 2)
      value = kill;
    else if (r == policy->n_rules * 2 + 1)
      value = dflt;
    else if (r % 2 == 0)
      value = sbx_action_to_ret(policy->rules[r / 2].on_match);
    else if (!rule_is_unconditional(&policy->rules[r / 2]))
      value = sbx_action_to_ret(policy->rules[r / 2].on_mismatch);
    else
      continue;
    guint i;
    for (i = 0; i < values->len; i++) {
      ret_entry *e = &g_array_index(values, ret_entry, i);
      if (e->value == value) {
        e->node++;
        break;
      }
    }
    if (i == values->len) {
      ret_entry e = {value, 1};
      g_array_append_val(values, e);
    }
  }
  while (values->len > 0) {
    guint least = 0;
    for (guint i = 1; i < values->len; i++)
      if (g_array_index(values, ret_entry, i).node <
          g_array_index(values, ret_entry, least).node)
        least = i;
    ret_node(b, g_array_index(values, ret_entry, least).value);
    g_array_remove_index(values, least);
  }
  g_array_free(values, TRUE);
}

static int compare_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

/* The relocations, as indices into the program in its final order. A
 * comparison that decided nothing emitted no jump and has none. */
static void collect_relocs(const builder *b, sbx_bpf_program *out) {
  size_t n = b->self_pid->len;
  if (n == 0)
    return;
  out->self_pid_relocs = g_new(uint32_t, n);
  for (size_t i = 0; i < n; i++)
    out->self_pid_relocs[i] =
        (uint32_t)(out->len - 1 - g_array_index(b->self_pid, uint32_t, i));
  qsort(out->self_pid_relocs, n, sizeof(uint32_t), compare_u32);
  out->n_self_pid_relocs = n;
}

gboolean sbx_bpf_compile(const sbx_policy *policy, sbx_bpf_program *out,
                         GError **error) {
  g_return_val_if_fail(policy != NULL && out != NULL, FALSE);
  memset(out, 0, sizeof *out);
  if (!validate_policy(policy, error))
    return FALSE;

  size_t n_rules = policy->n_rules;
  const sbx_rule **sorted = g_new(const sbx_rule *, n_rules ? n_rules : 1);
  for (size_t r = 0; r < n_rules; r++)
    sorted[r] = &policy->rules[r];
  qsort(sorted, n_rules, sizeof(*sorted), compare_rule_nr);
  for (size_t r = 1; r < n_rules; r++) {
    if (sorted[r]->nr == sorted[r - 1]->nr) {
      char first[512], second[512];
      g_set_error(error, SBX_BPF_ERROR, SBX_BPF_ERROR_INVALID_POLICY,
                  "%s: a second rule for the same syscall (first at %s)",
                  rule_where(sorted[r], second, sizeof(second)),
                  rule_where(sorted[r - 1], first, sizeof(first)));
      g_free(sorted);
      return FALSE;
    }
  }

  builder b = {
      g_array_new(FALSE, FALSE, sizeof(struct sock_filter)),
      g_array_new(FALSE, FALSE, sizeof(uint32_t)),
      g_array_new(FALSE, FALSE, sizeof(ret_entry)),
      g_array_new(FALSE, FALSE, sizeof(uint32_t)),
  };
  emit_returns(&b, policy);
  uint32_t kill = ret_node(&b, SECCOMP_RET_KILL_PROCESS);
  uint32_t dflt = ret_node(&b, sbx_action_to_ret(policy->default_action));

  /* Argument checks, highest number first so they end up in ascending
   * order behind the search tree. */
  uint32_t *rule_node = g_new(uint32_t, n_rules ? n_rules : 1);
  size_t biggest = 0, biggest_size = 0;
  for (size_t r = n_rules; r-- > 0;) {
    uint32_t before = next_node(&b);
    rule_node[r] = emit_rule(&b, sorted[r]);
    if (next_node(&b) - before > biggest_size) {
      biggest_size = next_node(&b) - before;
      biggest = r;
    }
  }

  nr_run *runs = g_new(nr_run, n_rules ? n_rules : 1);
  uint64_t *prefix = g_new(uint64_t, n_rules + 1);
  bool use_frequency = has_frequency(policy);
  size_t n_runs = 0;
  prefix[0] = 0;
  for (size_t r = 0; r < n_rules; r++) {
    uint32_t nr = (uint32_t)sorted[r]->nr;
    uint32_t node = rule_node[r];
    if (node == dflt)
      continue;
    bool mergeable = rule_is_unconditional(sorted[r]);
    uint64_t heat = use_frequency
                        ? (nr < policy->n_frequency ? policy->frequency[nr] : 0)
                        : builtin_heat(nr);
    nr_run *prev = n_runs ? &runs[n_runs - 1] : NULL;
    if (prev && mergeable && prev->mergeable && prev->node == node &&
        prev->last + 1 == nr) {
      prev->last = nr;
      prefix[n_runs] += heat;
      continue;
    }
    runs[n_runs] = (nr_run){nr, nr, node, mergeable};
    prefix[n_runs + 1] = prefix[n_runs] + 1 + heat;
    n_runs++;
  }

  uint32_t tree =
      emit_tree(&b, runs, prefix, 0, n_runs, 0, (uint64_t)UINT32_MAX + 1, dflt);
  uint32_t x32 =
      emit_jump(&b, BPF_JMP | BPF_JSET | BPF_K, X32_SYSCALL_BIT, kill, tree);
  uint32_t load_nr = emit_stmt(&b, BPF_LD | BPF_W | BPF_ABS, OFF_NR, x32);
  uint32_t arch_ok = emit_jump(&b, BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64,
                               load_nr, kill);
  emit_stmt(&b, BPF_LD | BPF_W | BPF_ABS, OFF_ARCH, arch_ok);

  gboolean ok = TRUE;
  size_t len = b.rev->len;
  if (len > BPF_MAXINSNS) {
    char where[512];
    g_set_error(error, SBX_BPF_ERROR, SBX_BPF_ERROR_TOO_LONG,
                "the policy compiles to %zu BPF instructions, more than the "
                "kernel's limit of %d (BPF_MAXINSNS); the largest argument "
                "filter is %s with %zu instructions: shorten the filters or "
                "split the policy into stacked layers",
                len, BPF_MAXINSNS,
                rule_where(sorted[biggest], where, sizeof(where)),
                biggest_size);
    ok = FALSE;
  } else {
    out->insns = g_new(struct sock_filter, len);
    out->len = len;
    for (size_t i = 0; i < len; i++)
      out->insns[i] = g_array_index(b.rev, struct sock_filter, len - 1 - i);
    collect_relocs(&b, out);
  }

  g_free(prefix);
  g_free(runs);
  g_free(rule_node);
  g_free(sorted);
  g_array_free(b.rev, TRUE);
  g_array_free(b.trampoline, TRUE);
  g_array_free(b.rets, TRUE);
  g_array_free(b.self_pid, TRUE);
  return ok;
}
