/* Starting the program inside the sandbox and supervising it to the end.
 *
 * Why it exists: the order in which the layers go on is what makes them
 * hold, so it is the layers engine's (sandbox/layers/apply.h), the same
 * for every kind of sandboxed process. The launcher (this process) clones
 * an init process into new user, pid, ipc, uts, mount, cgroup (and,
 * without --net, network) namespaces, the network one made beside the
 * clone by a vfork child of the launcher while init builds its tree;
 * init
 *   1. joins that network namespace, then applies its plan: dies with
 *      the launcher, keeps only stdin, stdout, stderr and its channel to
 *      the launcher, takes the profile's rlimits, a new session (S10), no
 *      capabilities, no_new_privs, undumpable (S33), the baseline filter
 *      with a user-notification listener, then the Landlock ruleset;
 *   2. hands the listener to the launcher;
 *   3. waits for the launcher to confirm that the supervisor runs - if it
 *      does not, nothing of the program ever runs (S32);
 *   4. forks the program, which stacks its own filters (--policy, the
 *      profile's) and execs; init then forwards signals to it, reaps
 *      every orphan, and when the program ends kills and reaps every
 *      other process of its pid namespace before it reports the
 *      program's wait status.
 * The program is pid 2, not pid 1: a pid-1 process ignores signals it has
 * no handler for, which would change what kill(getpid(), SIGTERM) does.
 *
 * In the default mode init first builds its file tree (tree.h) and takes
 * the relay's pipes (relay.h) as 0, 1, 2 where the plan says so; its
 * baseline's listener then carries connect and set-id chmods alone.
 *
 * The launcher meanwhile serves the listener (supervisor.h), relays the
 * standard streams the plan names, forwards
 * SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2 and SIGWINCH to init,
 * and returns the program's status.
 *
 * What it trusts: the plan. What it refuses: to let the program start
 * before every layer is in place.
 */
#ifndef SBX_RUNNER_LAUNCH_H_
#define SBX_RUNNER_LAUNCH_H_

#include <glib.h>

#include "sandbox/runner/plan.h"
#include "sandbox/runner/report.h"

/* sbx-run's own exit codes, as env(1) and timeout(1) use them. */
enum {
  SBX_RUN_EXIT_SETUP = 125,    /* sbx-run could not set the sandbox up */
  SBX_RUN_EXIT_NOEXEC = 126,   /* the program could not be executed */
  SBX_RUN_EXIT_NOTFOUND = 127, /* the program was not found */
};

/* Runs the plan. Returns the program's exit status (128+N when signal N
 * killed it), or SBX_RUN_EXIT_* with *error set when the program never
 * ran. On return no process the program started runs; init itself may
 * still be exiting (the kernel tearing its namespaces down), and is left
 * to be reaped by whoever inherits it. */
int sbx_run_launch(sbx_run_plan *plan, sbx_run_report *report, GError **error);

#endif /* SBX_RUNNER_LAUNCH_H_ */
