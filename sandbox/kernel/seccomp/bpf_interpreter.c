/* Compiled seccomp programs, and a classic-BPF interpreter that accepts
 * and runs them exactly as the kernel's seccomp filter does.
 *
 * Why it exists: to prove a compiled program means what its policy says
 * (tests compare it with sbx_policy_eval on many inputs), to answer
 * `sbx-policy eval`, and to count the instructions a call costs.
 *
 * Trusts: nothing in the program. The checks are the kernel's
 * (bpf_check_classic, then seccomp_check_filter, then the scratch-memory
 * flow check), so a program accepted here is accepted by seccomp(2).
 * Refuses: anything else, by returning SECCOMP_RET_KILL_PROCESS.
 */
#include "sandbox/kernel/seccomp/bpf.h"

#include <stdbool.h>
#include <string.h>

#define SECCOMP_DATA_SIZE ((uint32_t)sizeof(struct seccomp_data))

GQuark sbx_bpf_error_quark(void) {
  return g_quark_from_static_string("sbx-bpf-error-quark");
}

void sbx_bpf_program_clear(sbx_bpf_program *program) {
  if (program == NULL)
    return;
  g_free(program->insns);
  g_free(program->self_pid_relocs);
  program->insns = NULL;
  program->len = 0;
  program->self_pid_relocs = NULL;
  program->n_self_pid_relocs = 0;
}

void sbx_bpf_program_copy(sbx_bpf_program *dst, const sbx_bpf_program *src) {
  dst->insns =
      src->len ? g_memdup2(src->insns, src->len * sizeof *src->insns) : NULL;
  dst->len = src->len;
  dst->self_pid_relocs =
      src->n_self_pid_relocs
          ? g_memdup2(src->self_pid_relocs,
                      src->n_self_pid_relocs * sizeof *src->self_pid_relocs)
          : NULL;
  dst->n_self_pid_relocs = src->n_self_pid_relocs;
}

static bool is_errno(uint32_t action) {
  return action == SECCOMP_RET_ERRNO;
}

static bool is_refusal(uint32_t action) {
  return action != SECCOMP_RET_ALLOW && action != SECCOMP_RET_LOG;
}

static gboolean notify_verdicts(sbx_bpf_program *dst,
                                const sbx_bpf_program *src,
                                bool (*which)(uint32_t action),
                                GError **error) {
  for (size_t i = 0; i < src->len; i++) {
    if (src->insns[i].code == (BPF_RET | BPF_A)) {
      g_set_error(error, SBX_BPF_ERROR, SBX_BPF_ERROR_INVALID_PROGRAM,
                  "instruction %zu returns the accumulator: the program's "
                  "verdicts cannot be rewritten",
                  i);
      return FALSE;
    }
  }
  sbx_bpf_program_copy(dst, src);
  for (size_t i = 0; i < dst->len; i++) {
    struct sock_filter *insn = &dst->insns[i];
    if (insn->code == (BPF_RET | BPF_K) &&
        which(insn->k & SECCOMP_RET_ACTION_FULL))
      insn->k = SECCOMP_RET_USER_NOTIF;
  }
  return TRUE;
}

gboolean sbx_bpf_notify_errno_verdicts(sbx_bpf_program *dst,
                                       const sbx_bpf_program *src,
                                       GError **error) {
  return notify_verdicts(dst, src, is_errno, error);
}

gboolean sbx_bpf_notify_refusals(sbx_bpf_program *dst,
                                 const sbx_bpf_program *src, GError **error) {
  return notify_verdicts(dst, src, is_refusal, error);
}

/* Opcodes seccomp accepts; the rest of classic BPF (byte and half-word
 * loads, indirect loads, MOD, LDX MSH, RET X) is refused by the kernel. */
static bool opcode_accepted(uint16_t code) {
  switch (code) {
    case BPF_LD | BPF_W | BPF_ABS:
    case BPF_LD | BPF_W | BPF_LEN:
    case BPF_LDX | BPF_W | BPF_LEN:
    case BPF_RET | BPF_K:
    case BPF_RET | BPF_A:
    case BPF_ALU | BPF_ADD | BPF_K:
    case BPF_ALU | BPF_ADD | BPF_X:
    case BPF_ALU | BPF_SUB | BPF_K:
    case BPF_ALU | BPF_SUB | BPF_X:
    case BPF_ALU | BPF_MUL | BPF_K:
    case BPF_ALU | BPF_MUL | BPF_X:
    case BPF_ALU | BPF_DIV | BPF_K:
    case BPF_ALU | BPF_DIV | BPF_X:
    case BPF_ALU | BPF_AND | BPF_K:
    case BPF_ALU | BPF_AND | BPF_X:
    case BPF_ALU | BPF_OR | BPF_K:
    case BPF_ALU | BPF_OR | BPF_X:
    case BPF_ALU | BPF_XOR | BPF_K:
    case BPF_ALU | BPF_XOR | BPF_X:
    case BPF_ALU | BPF_LSH | BPF_K:
    case BPF_ALU | BPF_LSH | BPF_X:
    case BPF_ALU | BPF_RSH | BPF_K:
    case BPF_ALU | BPF_RSH | BPF_X:
    case BPF_ALU | BPF_NEG:
    case BPF_LD | BPF_IMM:
    case BPF_LDX | BPF_IMM:
    case BPF_MISC | BPF_TAX:
    case BPF_MISC | BPF_TXA:
    case BPF_LD | BPF_MEM:
    case BPF_LDX | BPF_MEM:
    case BPF_ST:
    case BPF_STX:
    case BPF_JMP | BPF_JA:
    case BPF_JMP | BPF_JEQ | BPF_K:
    case BPF_JMP | BPF_JEQ | BPF_X:
    case BPF_JMP | BPF_JGE | BPF_K:
    case BPF_JMP | BPF_JGE | BPF_X:
    case BPF_JMP | BPF_JGT | BPF_K:
    case BPF_JMP | BPF_JGT | BPF_X:
    case BPF_JMP | BPF_JSET | BPF_K:
    case BPF_JMP | BPF_JSET | BPF_X:
      return true;
    default:
      return false;
  }
}

static bool is_cond_jump(uint16_t code) {
  return BPF_CLASS(code) == BPF_JMP && BPF_OP(code) != BPF_JA;
}

static gboolean fail(GError **error, size_t pc, const struct sock_filter *insn,
                     const char *why) {
  g_set_error(error, SBX_BPF_ERROR, SBX_BPF_ERROR_INVALID_PROGRAM,
              "instruction %zu (code 0x%04x jt %u jf %u k 0x%08x): %s", pc,
              insn->code, insn->jt, insn->jf, insn->k, why);
  return FALSE;
}

gboolean sbx_bpf_check(const struct sock_filter *insns, size_t len,
                       GError **error) {
  if (len == 0 || len > BPF_MAXINSNS || insns == NULL) {
    g_set_error(error, SBX_BPF_ERROR, SBX_BPF_ERROR_INVALID_PROGRAM,
                "a seccomp program has 1 to %d instructions, not %zu",
                BPF_MAXINSNS, len);
    return FALSE;
  }
  for (size_t pc = 0; pc < len; pc++) {
    const struct sock_filter *insn = &insns[pc];
    uint32_t k = insn->k;
    if (!opcode_accepted(insn->code))
      return fail(error, pc, insn, "opcode not accepted by seccomp");
    switch (insn->code) {
      case BPF_ALU | BPF_DIV | BPF_K:
        if (k == 0)
          return fail(error, pc, insn, "division by constant zero");
        break;
      case BPF_ALU | BPF_LSH | BPF_K:
      case BPF_ALU | BPF_RSH | BPF_K:
        if (k >= 32)
          return fail(error, pc, insn, "shift by 32 or more");
        break;
      case BPF_LD | BPF_MEM:
      case BPF_LDX | BPF_MEM:
      case BPF_ST:
      case BPF_STX:
        if (k >= BPF_MEMWORDS)
          return fail(error, pc, insn, "scratch memory index out of range");
        break;
      case BPF_JMP | BPF_JA:
        if (k >= len - pc - 1)
          return fail(error, pc, insn, "jump past the end");
        break;
      case BPF_LD | BPF_W | BPF_ABS:
        if (k >= SECCOMP_DATA_SIZE || (k & 3))
          return fail(error, pc, insn,
                      "load outside struct seccomp_data or not 4-aligned");
        break;
      default:
        if (is_cond_jump(insn->code) &&
            (pc + insn->jt + 1 >= len || pc + insn->jf + 1 >= len))
          return fail(error, pc, insn, "jump past the end");
        break;
    }
  }
  uint16_t last = insns[len - 1].code;
  if (last != (BPF_RET | BPF_K) && last != (BPF_RET | BPF_A))
    return fail(error, len - 1, &insns[len - 1],
                "the last instruction is not a return");

  /* The kernel's flow check: a scratch word is read only if every jump to
   * the reading instruction (and the fall-through) wrote it first. */
  uint16_t masks[BPF_MAXINSNS];
  uint16_t valid = 0;
  memset(masks, 0xff, len * sizeof(masks[0]));
  for (size_t pc = 0; pc < len; pc++) {
    const struct sock_filter *insn = &insns[pc];
    valid &= masks[pc];
    switch (insn->code) {
      case BPF_ST:
      case BPF_STX:
        valid |= (uint16_t)(1u << insn->k);
        break;
      case BPF_LD | BPF_MEM:
      case BPF_LDX | BPF_MEM:
        if (!(valid & (1u << insn->k)))
          return fail(error, pc, insn,
                      "reads scratch memory not written on every path");
        break;
      case BPF_JMP | BPF_JA:
        masks[pc + 1 + insn->k] &= valid;
        valid = 0xffff;
        break;
      default:
        if (is_cond_jump(insn->code)) {
          masks[pc + 1 + insn->jt] &= valid;
          masks[pc + 1 + insn->jf] &= valid;
          valid = 0xffff;
        }
        break;
    }
  }
  return TRUE;
}

static uint32_t load_word(const struct seccomp_data *data, uint32_t offset) {
  uint32_t word;
  memcpy(&word, (const char *)data + offset, sizeof(word));
  return word;
}

uint32_t sbx_bpf_run_checked(const struct sock_filter *insns, size_t len,
                             const struct seccomp_data *data,
                             size_t *insns_executed) {
  uint32_t a = 0, x = 0;
  uint32_t mem[BPF_MEMWORDS] = {0};
  size_t executed = 0;
  uint32_t result = SECCOMP_RET_KILL_PROCESS;
  size_t pc = 0;
  while (pc < len) {
    const struct sock_filter *insn = &insns[pc];
    uint32_t k = insn->k;
    executed++;
    pc++;
    switch (insn->code) {
      case BPF_LD | BPF_W | BPF_ABS:
        if (k >= SECCOMP_DATA_SIZE || (k & 3))
          goto out;
        a = load_word(data, k);
        break;
      case BPF_LD | BPF_W | BPF_LEN:
        a = SECCOMP_DATA_SIZE;
        break;
      case BPF_LDX | BPF_W | BPF_LEN:
        x = SECCOMP_DATA_SIZE;
        break;
      case BPF_LD | BPF_IMM:
        a = k;
        break;
      case BPF_LDX | BPF_IMM:
        x = k;
        break;
      case BPF_LD | BPF_MEM:
        if (k >= BPF_MEMWORDS)
          goto out;
        a = mem[k];
        break;
      case BPF_LDX | BPF_MEM:
        if (k >= BPF_MEMWORDS)
          goto out;
        x = mem[k];
        break;
      case BPF_ST:
        if (k >= BPF_MEMWORDS)
          goto out;
        mem[k] = a;
        break;
      case BPF_STX:
        if (k >= BPF_MEMWORDS)
          goto out;
        mem[k] = x;
        break;
      case BPF_MISC | BPF_TAX:
        x = a;
        break;
      case BPF_MISC | BPF_TXA:
        a = x;
        break;
      case BPF_ALU | BPF_ADD | BPF_K:
        a += k;
        break;
      case BPF_ALU | BPF_ADD | BPF_X:
        a += x;
        break;
      case BPF_ALU | BPF_SUB | BPF_K:
        a -= k;
        break;
      case BPF_ALU | BPF_SUB | BPF_X:
        a -= x;
        break;
      case BPF_ALU | BPF_MUL | BPF_K:
        a *= k;
        break;
      case BPF_ALU | BPF_MUL | BPF_X:
        a *= x;
        break;
      case BPF_ALU | BPF_DIV | BPF_K:
        if (k == 0)
          goto out;
        a /= k;
        break;
      case BPF_ALU | BPF_DIV | BPF_X:
        /* The kernel ends a classic program that divides by zero with
         * return 0, which is SECCOMP_RET_KILL_THREAD. */
        if (x == 0) {
          result = 0;
          goto out;
        }
        a /= x;
        break;
      case BPF_ALU | BPF_AND | BPF_K:
        a &= k;
        break;
      case BPF_ALU | BPF_AND | BPF_X:
        a &= x;
        break;
      case BPF_ALU | BPF_OR | BPF_K:
        a |= k;
        break;
      case BPF_ALU | BPF_OR | BPF_X:
        a |= x;
        break;
      case BPF_ALU | BPF_XOR | BPF_K:
        a ^= k;
        break;
      case BPF_ALU | BPF_XOR | BPF_X:
        a ^= x;
        break;
      case BPF_ALU | BPF_LSH | BPF_K:
        if (k >= 32)
          goto out;
        a <<= k;
        break;
      case BPF_ALU | BPF_LSH | BPF_X:
        /* eBPF, which runs the converted program, masks the count. */
        a <<= (x & 31);
        break;
      case BPF_ALU | BPF_RSH | BPF_K:
        if (k >= 32)
          goto out;
        a >>= k;
        break;
      case BPF_ALU | BPF_RSH | BPF_X:
        a >>= (x & 31);
        break;
      case BPF_ALU | BPF_NEG:
        a = 0u - a;
        break;
      case BPF_JMP | BPF_JA:
        if (k >= len - pc)
          goto out;
        pc += k;
        break;
      case BPF_JMP | BPF_JEQ | BPF_K:
      case BPF_JMP | BPF_JEQ | BPF_X:
      case BPF_JMP | BPF_JGT | BPF_K:
      case BPF_JMP | BPF_JGT | BPF_X:
      case BPF_JMP | BPF_JGE | BPF_K:
      case BPF_JMP | BPF_JGE | BPF_X:
      case BPF_JMP | BPF_JSET | BPF_K:
      case BPF_JMP | BPF_JSET | BPF_X: {
        uint32_t operand = BPF_SRC(insn->code) == BPF_X ? x : k;
        bool taken;
        switch (BPF_OP(insn->code)) {
          case BPF_JEQ:
            taken = a == operand;
            break;
          case BPF_JGT:
            taken = a > operand;
            break;
          case BPF_JGE:
            taken = a >= operand;
            break;
          default:
            taken = (a & operand) != 0;
            break;
        }
        size_t skip = taken ? insn->jt : insn->jf;
        if (skip >= len - pc)
          goto out;
        pc += skip;
        break;
      }
      case BPF_RET | BPF_K:
        result = k;
        goto out;
      case BPF_RET | BPF_A:
        result = a;
        goto out;
      default:
        goto out;
    }
  }
out:
  if (insns_executed)
    *insns_executed = executed;
  return result;
}

uint32_t sbx_bpf_run(const struct sock_filter *insns, size_t len,
                     const struct seccomp_data *data, size_t *insns_executed) {
  if (!sbx_bpf_check(insns, len, NULL)) {
    if (insns_executed)
      *insns_executed = 0;
    return SECCOMP_RET_KILL_PROCESS;
  }
  return sbx_bpf_run_checked(insns, len, data, insns_executed);
}

/* The kernel's seccomp_is_const_allow (kernel/seccomp.c, Linux 5.11 and
 * later), which fills the action cache when a filter is attached: only
 * loads of nr and arch, ALU AND with a constant, BPF_JA and the
 * constant-operand jumps are followed; anything else makes the path
 * unknown. The kernel stops at the first instruction past the end too. */
bool sbx_bpf_const_action(const struct sock_filter *insns, size_t len,
                          uint32_t arch, uint32_t nr, uint32_t *action) {
  uint32_t a = 0;
  for (size_t pc = 0; pc < len; pc++) {
    const struct sock_filter *insn = &insns[pc];
    bool taken;
    switch (insn->code) {
      case BPF_LD | BPF_W | BPF_ABS:
        if (insn->k == offsetof(struct seccomp_data, nr))
          a = nr;
        else if (insn->k == offsetof(struct seccomp_data, arch))
          a = arch;
        else
          return false;
        continue;
      case BPF_RET | BPF_K:
        *action = insn->k;
        return true;
      case BPF_JMP | BPF_JA:
        pc += insn->k;
        continue;
      case BPF_ALU | BPF_AND | BPF_K:
        a &= insn->k;
        continue;
      case BPF_JMP | BPF_JEQ | BPF_K:
        taken = a == insn->k;
        break;
      case BPF_JMP | BPF_JGE | BPF_K:
        taken = a >= insn->k;
        break;
      case BPF_JMP | BPF_JGT | BPF_K:
        taken = a > insn->k;
        break;
      case BPF_JMP | BPF_JSET | BPF_K:
        taken = (a & insn->k) != 0;
        break;
      default:
        return false;
    }
    pc += taken ? insn->jt : insn->jf;
  }
  return false;
}
