/* Stacked layers' refusals through the baseline; see stacked.h.
 *
 * Trusts the compiler's programs; checks the combined one as seccomp(2)
 * would before it is used.
 */
#include "sandbox/runner/stacked.h"

#include <stddef.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

/* The calls sbx-run's init makes between installing the baseline and
 * handing its listener to the supervisor (launch.c), when a notification
 * would wait for nobody, and on its failure paths: never sent to the
 * supervisor by a stacked layer. In the installed layer they meet the
 * layer as compiled, so they are refused as before, without a line.
 * ioctl only as TIOCSCTTY (init takes the program's terminal). */
static const uint32_t init_calls[] = {
    __NR_landlock_restrict_self,
    __NR_close,
    __NR_dup2,
    __NR_dup3,
    __NR_sendmsg,
    __NR_sendto,
    __NR_read,
    __NR_write,
    __NR_exit,
    __NR_exit_group,
};
#define N_INIT_CALLS G_N_ELEMENTS(init_calls)
#define GUARD_LEN (N_INIT_CALLS + 6)

/* Writes the guard to out[0..GUARD_LEN): for the calls above it jumps
 * past the following first_len instructions, otherwise into them. */
static void write_guard(struct sock_filter *out, size_t first_len) {
  size_t at = 0;
  out[at++] = (struct sock_filter)BPF_STMT(
      BPF_LD | BPF_W | BPF_ABS, (uint32_t)offsetof(struct seccomp_data, nr));
  for (size_t i = 1; i <= N_INIT_CALLS; i++, at++)
    out[at] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
                                           init_calls[i - 1],
                                           (uint8_t)(N_INIT_CALLS + 4 - i), 0);
  /* ioctl(fd, TIOCSCTTY): the command's low 32 bits, as the kernel reads
   * it. */
  out[at++] =
      (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ioctl, 0, 2);
  out[at++] = (struct sock_filter)BPF_STMT(
      BPF_LD | BPF_W | BPF_ABS,
      (uint32_t)offsetof(struct seccomp_data, args[1]));
  out[at++] =
      (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TIOCSCTTY, 1, 0);
  out[at++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JA, 1, 0, 0);
  out[at++] =
      (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JA, (uint32_t)first_len, 0, 0);
}

bool sbx_run_stacked_skips(const struct seccomp_data *d) {
  if (!d)
    return false;
  if (d->nr == __NR_ioctl)
    return (uint32_t)d->args[1] == TIOCSCTTY;
  for (size_t i = 0; i < N_INIT_CALLS; i++)
    if (init_calls[i] == (uint32_t)d->nr)
      return true;
  return false;
}

static bool is_ret(const struct sock_filter *f) {
  return BPF_CLASS(f->code) == BPF_RET;
}

static bool returns_errno(const struct sock_filter *f) {
  return is_ret(f) && BPF_RVAL(f->code) == BPF_K &&
         (f->k & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_ERRNO;
}

void sbx_run_reported_layer_free(gpointer layer) {
  sbx_run_reported_layer *l = layer;
  if (!l)
    return;
  g_free(l->reason);
  sbx_bpf_program_clear(&l->prog);
  g_free(l);
}

bool sbx_run_stacked_reportable(const sbx_bpf_program *prog) {
  if (!prog || prog->len == 0 || prog->n_self_pid_relocs)
    return false;
  for (size_t i = 0; i < prog->len; i++)
    if (is_ret(&prog->insns[i]) && BPF_RVAL(prog->insns[i].code) != BPF_K)
      return false;
  return true;
}

void sbx_run_stacked_without_errno(const sbx_bpf_program *prog,
                                   sbx_bpf_program *out) {
  memset(out, 0, sizeof(*out));
  out->len = GUARD_LEN + 2 * prog->len;
  out->insns = g_new(struct sock_filter, out->len);
  write_guard(out->insns, prog->len);
  struct sock_filter *quiet = out->insns + GUARD_LEN;
  for (size_t i = 0; i < prog->len; i++)
    quiet[i] =
        returns_errno(&prog->insns[i])
            ? (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
            : prog->insns[i];
  memcpy(quiet + prog->len, prog->insns, prog->len * sizeof(*quiet));
}

gboolean sbx_run_stacked_compose(const sbx_bpf_program *const *layers, size_t n,
                                 const sbx_bpf_program *base,
                                 sbx_bpf_program *out, GError **error) {
  memset(out, 0, sizeof(*out));
  size_t total = base->len;
  for (size_t i = 0; i < n; i++)
    total += GUARD_LEN + layers[i]->len;
  if (total > BPF_MAXINSNS) {
    g_set_error(error, SBX_BPF_ERROR, SBX_BPF_ERROR_TOO_LONG,
                "the stacked layers and the baseline together are %zu "
                "instructions (at most %d)",
                total, BPF_MAXINSNS);
    return FALSE;
  }
  struct sock_filter *insns = g_new(struct sock_filter, total);
  size_t at = 0;
  for (size_t l = 0; l < n; l++) {
    const sbx_bpf_program *p = layers[l];
    write_guard(insns + at, p->len);
    at += GUARD_LEN;
    for (size_t i = 0; i < p->len; i++, at++) {
      const struct sock_filter *f = &p->insns[i];
      if (returns_errno(f))
        insns[at] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
                                                 SECCOMP_RET_USER_NOTIF);
      else if (is_ret(f)) /* on to the next part */
        insns[at] = (struct sock_filter)BPF_JUMP(
            BPF_JMP | BPF_JA, (uint32_t)(p->len - i - 1), 0, 0);
      else
        insns[at] = *f;
    }
  }
  size_t offset = at;
  memcpy(insns + at, base->insns, base->len * sizeof(*insns));
  out->insns = insns;
  out->len = total;
  if (base->n_self_pid_relocs) {
    out->n_self_pid_relocs = base->n_self_pid_relocs;
    out->self_pid_relocs = g_new(uint32_t, base->n_self_pid_relocs);
    for (size_t i = 0; i < base->n_self_pid_relocs; i++)
      out->self_pid_relocs[i] = base->self_pid_relocs[i] + (uint32_t)offset;
  }
  if (!sbx_bpf_check(out->insns, out->len, error)) {
    sbx_bpf_program_clear(out);
    return FALSE;
  }
  return TRUE;
}
