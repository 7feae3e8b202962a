/* Standard input, output and error relayed through pipes, for sbx-run's
 * default mode.
 *
 * Why it exists: a descriptor the program inherits changes its file
 * whatever the mount tree shows (fchmod, fchown, futimens, ftruncate work
 * on it), and `sbx-run prog > out.txt` hands the program exactly such a
 * descriptor. Where a stream names a file outside the write grants
 * (tree.h, relay), the program gets a pipe instead and the launcher
 * copies between the pipe and the caller's descriptor, which never
 * enters the sandbox. Output keeps its order, and standard output and
 * error that share one open file share one pipe, so their order between
 * each other is kept too. What the program sees differs from the file:
 * a pipe has no size and no offset to seek, and the launcher reads
 * standard input ahead of the program (docs/sbx-run.md, "Which mode").
 *
 * What it trusts: the caller's descriptors. What it refuses: to block the
 * launcher on the program; a write to the caller's file that fails ends
 * that stream (the program's next write then fails as on a closed pipe),
 * with one line saying why.
 */
#ifndef SBX_RUNNER_RELAY_H_
#define SBX_RUNNER_RELAY_H_

#include <poll.h>

#include <glib.h>

typedef struct sbx_run_relay sbx_run_relay;

/* Makes a pipe for each stream in mask (bit fd, fd 0 to 2). child_fd[fd]
 * is then what the program must have as fd (to dup2 there), or -1 where
 * it keeps its own. NULL with *error set when a pipe cannot be made;
 * NULL without error when mask is 0. */
sbx_run_relay *sbx_run_relay_new(unsigned mask, int child_fd[3],
                                 GError **error);

/* After the program's side has its copies: closes the launcher's. */
void sbx_run_relay_started(sbx_run_relay *r);

/* The descriptors to poll (at most 3); returns how many it wrote. */
int sbx_run_relay_poll_fds(sbx_run_relay *r, struct pollfd *fds);

/* Moves what is ready, after poll() filled fds (those from
 * sbx_run_relay_poll_fds). */
void sbx_run_relay_pump(sbx_run_relay *r, const struct pollfd *fds, int n);

/* Once every process of the sandbox is gone: copies what is left in the
 * output pipes. */
void sbx_run_relay_drain(sbx_run_relay *r);

void sbx_run_relay_free(sbx_run_relay *r);

#endif /* SBX_RUNNER_RELAY_H_ */
