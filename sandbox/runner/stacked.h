/* Refusals of stacked seccomp layers, made visible.
 *
 * Why it exists: a policy stacked on sbx-run's baseline (--policy, a
 * profile's seccomp layers, what sbx-learn writes) refuses calls with
 * SECCOMP_RET_ERRNO in a filter of its own. The kernel runs every filter
 * and takes the action of highest precedence (KILL, TRAP, ERRNO,
 * USER_NOTIF, TRACE, LOG, ALLOW), so such an ERRNO beats the baseline's
 * USER_NOTIF and the supervisor never hears of it: the program sees a
 * bare EPERM with no sbx: line. A stacked filter cannot notify either:
 * only one filter of a process may have a listener (EBUSY), and a
 * USER_NOTIF from a filter without one fails the call with ENOSYS.
 *
 * So sbx-run moves the refusals into the filter that has the listener:
 *   - the stacked filter is installed with every ERRNO return changed to
 *     ALLOW (its KILL, TRAP and LOG returns stay: a signal is visible);
 *   - the baseline is installed behind a copy of each such layer whose
 *     ERRNO returns are USER_NOTIF and whose other returns jump on to the
 *     next part, the baseline last. Each part is the compiled program
 *     unchanged but for its return instructions, replaced one for one,
 *     so no jump moves.
 * The supervisor (supervisor.h, sbx_unotify_layer) runs each layer's
 * original program on the notification's registers; where one returns
 * ERRNO it answers with that errno and reports the refusal, naming the
 * layer. Registers only, as the filter decided: no memory is read.
 *
 * A process not yet under the stacked filters (init, and the program's
 * side between fork and exec) gets the baseline's own verdict instead.
 *
 * Layers whose programs compare with the process's own pid (relocated
 * when installed) or return the accumulator are stacked as they are and
 * their refusals stay silent; the same when the combined program would
 * exceed BPF_MAXINSNS.
 */
#ifndef SBX_RUNNER_STACKED_H_
#define SBX_RUNNER_STACKED_H_

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

#include "sandbox/kernel/seccomp/bpf.h"

/* A layer whose refusals are reported: the program as compiled, and the
 * reason a denial line gives. */
typedef struct {
  char *reason;
  sbx_bpf_program prog;
} sbx_run_reported_layer;

void sbx_run_reported_layer_free(gpointer layer);

/* Whether a call skips the reporting copy (one of init's calls before
 * the supervisor holds the listener; see stacked.c). */
bool sbx_run_stacked_skips(const struct seccomp_data *d);

/* Whether prog can be reported this way (see above). */
bool sbx_run_stacked_reportable(const sbx_bpf_program *prog);

/* A copy of prog whose ERRNO returns are ALLOW. */
void sbx_run_stacked_without_errno(const sbx_bpf_program *prog,
                                   sbx_bpf_program *out);

/* layers[0..n) (each reportable) in front of base, as described above;
 * base's self-pid relocations move with it. FALSE with *error when the
 * result would be too long or invalid. */
gboolean sbx_run_stacked_compose(const sbx_bpf_program *const *layers, size_t n,
                                 const sbx_bpf_program *base,
                                 sbx_bpf_program *out, GError **error);

#endif /* SBX_RUNNER_STACKED_H_ */
