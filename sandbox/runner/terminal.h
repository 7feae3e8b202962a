/* The program's own terminal: a pseudo-terminal that sbx-run relays to the
 * terminal it was started from.
 *
 * Why it exists: the program runs in a session of its own (S10: a
 * terminal it does not control cannot be typed into), yet a user at a
 * terminal expects job control as with any program: Ctrl-Z stops it,
 * `fg` and `bg` resume it, a background read stops it, the window size
 * follows. So when sbx-run's standard input, output or error is its
 * controlling terminal, the program gets a pseudo-terminal as its
 * controlling terminal in place of it, and sbx-run copies bytes between
 * the two (the user's terminal in raw mode while sbx-run is in the
 * foreground, so Ctrl-Z and Ctrl-C reach the program's terminal and
 * signal the program). When the program stops, sbx-run restores the
 * user's terminal and stops too; when sbx-run is continued, it continues
 * the program.
 *
 * What it trusts: the user's terminal. What it refuses: nothing; a
 * terminal it cannot set up is a setup error.
 *
 * Life cycle (launcher side):
 *   1. t = sbx_run_terminal_new(&error)   NULL and no error: no terminal
 *   2. init makes sbx_run_terminal_slave(t) its controlling terminal (or
 *      one it makes in the sandbox's devpts, whose master it hands over
 *      for sbx_run_terminal_take_master()) and puts it on the
 *      descriptors sbx_run_terminal_replaces(t) names
 *   3. sbx_run_terminal_after_start(t) once init has its copy
 *   4. in the loop: poll the descriptors sbx_run_terminal_poll_fds()
 *      fills, then sbx_run_terminal_pump(); on the program's stop
 *      sbx_run_terminal_suspend(), on SIGCONT sbx_run_terminal_resume(),
 *      on SIGWINCH sbx_run_terminal_winch()
 *   5. sbx_run_terminal_free(t): relays what is left, restores the
 *      user's terminal
 */
#ifndef SBX_RUNNER_TERMINAL_H_
#define SBX_RUNNER_TERMINAL_H_

#include <poll.h>
#include <stdbool.h>

#include <glib.h>

typedef struct sbx_run_terminal sbx_run_terminal;

/* A pseudo-terminal (the host's /dev/ptmx) shaped like the controlling
 * terminal on 0, 1 or 2; NULL without error when none of them is
 * sbx-run's controlling terminal. */
sbx_run_terminal *sbx_run_terminal_new(GError **error);
/* The master of a terminal init made in the sandbox's own devpts (where
 * the program finds its terminal's name) to stand in for that one:
 * shaped like the user's terminal, owned by t from now on. */
void sbx_run_terminal_take_master(sbx_run_terminal *t, int master);
void sbx_run_terminal_free(sbx_run_terminal *t);

/* The slave side, for init (close-on-exec), and the mask of descriptors
 * 0, 1, 2 (bit n for descriptor n) it replaces in the program. */
int sbx_run_terminal_slave(const sbx_run_terminal *t);
unsigned sbx_run_terminal_replaces(const sbx_run_terminal *t);

/* The master side (sbx-run's own), from which the supervisor opens the
 * slave again for the program's /dev/tty. */
int sbx_run_terminal_master(const sbx_run_terminal *t);

/* Closes sbx-run's copy of the slave and, in the foreground, puts the
 * user's terminal in raw mode. */
void sbx_run_terminal_after_start(sbx_run_terminal *t);

/* Fills up to 2 entries of fds; returns how many. */
int sbx_run_terminal_poll_fds(const sbx_run_terminal *t, struct pollfd *fds);

/* Moves what the polled descriptors have ready; never blocks on the
 * program's side. */
void sbx_run_terminal_pump(sbx_run_terminal *t, const struct pollfd *fds,
                           int n);

/* The program stopped: the user's terminal as it was. */
void sbx_run_terminal_suspend(sbx_run_terminal *t);
/* sbx-run was continued: raw mode again if in the foreground. */
void sbx_run_terminal_resume(sbx_run_terminal *t);
/* The user's window size to the program's terminal (which signals it). */
void sbx_run_terminal_winch(sbx_run_terminal *t);

#endif /* SBX_RUNNER_TERMINAL_H_ */
