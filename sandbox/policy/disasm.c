/* The disassembler behind `sbx-policy dump`.
 *
 * Why it exists: a compiled filter is the thing the kernel runs, so it is
 * what a reviewer has to be able to read. Trusts nothing about the
 * program: unknown opcodes are printed as such, not skipped.
 */
#include "sandbox/policy/disasm.h"

#include <linux/audit.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>

#include <glib.h>

#include "sandbox/base/syscalls.h"

/* The field of struct seccomp_data at a byte offset. */
static void append_field(GString *s, uint32_t k) {
  if (k == offsetof(struct seccomp_data, nr))
    g_string_append(s, "nr");
  else if (k == offsetof(struct seccomp_data, arch))
    g_string_append(s, "arch");
  else if (k == offsetof(struct seccomp_data, instruction_pointer))
    g_string_append(s, "ip_lo");
  else if (k == offsetof(struct seccomp_data, instruction_pointer) + 4)
    g_string_append(s, "ip_hi");
  else if (k >= offsetof(struct seccomp_data, args) &&
           k < sizeof(struct seccomp_data) && k % 4 == 0) {
    uint32_t off = k - offsetof(struct seccomp_data, args);
    g_string_append_printf(s, "arg%u_%s", off / 8, off % 8 ? "hi" : "lo");
  } else {
    g_string_append_printf(s, "[%u]", k);
  }
}

void sbx_bpf_append_verdict(GString *s, uint32_t ret) {
  uint32_t data = ret & SECCOMP_RET_DATA;
  switch (ret & SECCOMP_RET_ACTION_FULL) {
    case SECCOMP_RET_KILL_PROCESS:
      g_string_append(s, "kill-process");
      return;
    case SECCOMP_RET_KILL_THREAD:
      g_string_append(s, "kill-thread");
      return;
    case SECCOMP_RET_TRAP:
      g_string_append(s, "trap");
      if (data != 0)
        g_string_append_printf(s, " %u", data);
      return;
    case SECCOMP_RET_ERRNO:
      g_string_append_printf(s, "errno %u", data);
      return;
    case SECCOMP_RET_USER_NOTIF:
      g_string_append(s, "user-notify");
      return;
    case SECCOMP_RET_TRACE:
      g_string_append_printf(s, "trace %u", data);
      return;
    case SECCOMP_RET_LOG:
      g_string_append(s, "log");
      return;
    case SECCOMP_RET_ALLOW:
      g_string_append(s, "allow");
      return;
  }
  /* The kernel treats an unknown action as kill-process. */
  g_string_append(s, "kill-process");
}

static const char *jump_name(uint16_t op) {
  switch (op) {
    case BPF_JEQ:
      return "jeq";
    case BPF_JGT:
      return "jgt";
    case BPF_JGE:
      return "jge";
    case BPF_JSET:
      return "jset";
  }
  return NULL;
}

static const char *alu_name(uint16_t op) {
  switch (op) {
    case BPF_ADD:
      return "add";
    case BPF_SUB:
      return "sub";
    case BPF_MUL:
      return "mul";
    case BPF_DIV:
      return "div";
    case BPF_OR:
      return "or";
    case BPF_AND:
      return "and";
    case BPF_LSH:
      return "lsh";
    case BPF_RSH:
      return "rsh";
    case BPF_NEG:
      return "neg";
    case BPF_MOD:
      return "mod";
    case BPF_XOR:
      return "xor";
  }
  return NULL;
}

/* Names the constant of a comparison when A holds nr or arch. */
static void append_note(GString *s, const char *loaded, uint32_t k) {
  if (loaded == NULL)
    return;
  if (g_str_equal(loaded, "nr")) {
    const char *name = sbx_syscall_name((int)k);
    if (name != NULL)
      g_string_append_printf(s, "  ; %s", name);
    else if (k & 0x40000000u)
      g_string_append(s, "  ; x32 bit");
  } else if (g_str_equal(loaded, "arch")) {
    if (k == AUDIT_ARCH_X86_64)
      g_string_append(s, "  ; AUDIT_ARCH_X86_64");
    else if (k == AUDIT_ARCH_I386)
      g_string_append(s, "  ; AUDIT_ARCH_I386");
  }
}

char *sbx_bpf_disassemble(const struct sock_filter *insns, size_t len) {
  GString *s = g_string_new(NULL);
  const char *loaded = NULL; /* what A holds, when it is a plain field */
  for (size_t i = 0; i < len; i++) {
    const struct sock_filter *f = &insns[i];
    g_string_append_printf(s, "%04zu: ", i);
    uint16_t cls = BPF_CLASS(f->code);
    if (f->code == (BPF_LD | BPF_W | BPF_ABS)) {
      g_string_append(s, "ld ");
      append_field(s, f->k);
      loaded = f->k == offsetof(struct seccomp_data, nr)     ? "nr"
               : f->k == offsetof(struct seccomp_data, arch) ? "arch"
                                                             : NULL;
    } else if (f->code == (BPF_LD | BPF_W | BPF_LEN)) {
      g_string_append(s, "ld #len");
      loaded = NULL;
    } else if (f->code == (BPF_LD | BPF_IMM)) {
      g_string_append_printf(s, "ld #0x%x", f->k);
      loaded = NULL;
    } else if (f->code == (BPF_LD | BPF_MEM)) {
      g_string_append_printf(s, "ld M[%u]", f->k);
      loaded = NULL;
    } else if (f->code == (BPF_LDX | BPF_IMM)) {
      g_string_append_printf(s, "ldx #0x%x", f->k);
    } else if (f->code == (BPF_LDX | BPF_MEM)) {
      g_string_append_printf(s, "ldx M[%u]", f->k);
    } else if (f->code == (BPF_ST)) {
      g_string_append_printf(s, "st M[%u]", f->k);
    } else if (f->code == (BPF_STX)) {
      g_string_append_printf(s, "stx M[%u]", f->k);
    } else if (f->code == (BPF_RET | BPF_K)) {
      g_string_append(s, "ret ");
      sbx_bpf_append_verdict(s, f->k);
    } else if (f->code == (BPF_RET | BPF_A)) {
      g_string_append(s, "ret A");
    } else if (f->code == (BPF_MISC | BPF_TAX)) {
      g_string_append(s, "tax");
    } else if (f->code == (BPF_MISC | BPF_TXA)) {
      g_string_append(s, "txa");
      loaded = NULL;
    } else if (f->code == (BPF_JMP | BPF_JA)) {
      g_string_append_printf(s, "ja %04zu", i + 1 + f->k);
    } else if (cls == BPF_JMP && jump_name(BPF_OP(f->code)) != NULL) {
      const char *name = jump_name(BPF_OP(f->code));
      if (BPF_SRC(f->code) == BPF_X)
        g_string_append_printf(s, "%s X", name);
      else
        g_string_append_printf(s, "%s #0x%x", name, f->k);
      g_string_append_printf(s, ", %04zu, %04zu", i + 1 + f->jt, i + 1 + f->jf);
      if (BPF_SRC(f->code) == BPF_K)
        append_note(s, loaded, f->k);
    } else if (cls == BPF_ALU && alu_name(BPF_OP(f->code)) != NULL) {
      const char *name = alu_name(BPF_OP(f->code));
      if (BPF_OP(f->code) == BPF_NEG)
        g_string_append(s, name);
      else if (BPF_SRC(f->code) == BPF_X)
        g_string_append_printf(s, "%s X", name);
      else
        g_string_append_printf(s, "%s #0x%x", name, f->k);
      loaded = NULL;
    } else {
      g_string_append_printf(s, "unknown opcode 0x%04x (jt %u, jf %u, k 0x%x)",
                             f->code, f->jt, f->jf, f->k);
    }
    g_string_append_c(s, '\n');
  }
  return g_string_free(s, FALSE);
}
