/* Turning a record (record.h) into NAME.policy and NAME.profile.
 *
 * Why it exists: the policy language (docs/policy-language.md) and the
 * profile format (docs/policies.md) are what sbx-run reads, so sbx-learn
 * writes exactly those, and checks them with the same parser, compiler
 * and profile loader before it keeps them.
 *
 * The policy lists every system call seen, most frequent first, each with
 * a comment saying how often; where one argument of a reviewed set (open
 * flags, mmap protections, socket families, ioctl, fcntl and prctl
 * commands) only ever held a few values, the rule admits only those. Calls the
 * dynamic loader and exit need are always there. Everything else gets the
 * default action.
 *
 * The profile's broker rules come from the paths seen, folded: a
 * directory in which at least three files were read becomes a recursive
 * read rule (never "/", a top-level directory, or $HOME and above); a
 * file created, removed or renamed grants create in the directory it was
 * in (with the same limits, else just that name); a temporary name
 * (created and gone again, made up like cc2l8XMv.s, or in /tmp, /var/tmp,
 * /dev/shm or $TMPDIR) grants create in its directory even where a
 * lasting one would not (/tmp; never "/" or $HOME and above), so the
 * next run's new names fit; a path probed that did not exist keeps an
 * exact read rule, so the next run finds it missing (ENOENT) rather than
 * refused; a symbolic link on the way to a path gets an exact stat rule,
 * so sbx-run follows it; other files keep exact rules; what sbx-run
 * always allows is left out. A program that made network sockets keeps
 * the network, limited to the ports it connected to and bound
 * ([network] connect-ports, bind-ports; the addresses in a comment).
 *
 * What it refuses: output names that a built-in policy would shadow, and
 * output that its own checks reject (then nothing is written).
 */
#ifndef SBX_RUNNER_LEARN_WRITE_H_
#define SBX_RUNNER_LEARN_WRITE_H_

#include <glib.h>

#include "sandbox/runner/learn_record.h"

typedef struct {
  const char *name;           /* -o NAME: writes NAME.policy, NAME.profile */
  const char *default_action; /* the policy's @default */
  unsigned fold_min;          /* files read in one directory to fold it */
  char **argv;                /* the command, for the comments */
} sbx_learn_output;

typedef struct {
  unsigned n_rules;
  unsigned n_constrained;
  unsigned n_broker_rules;
  bool network; /* sockets other than AF_UNIX were made */
  bool execs;   /* the program executed other programs */
  bool traces;  /* it called ptrace or process_vm_readv/writev */
  char *policy_path;
  char *profile_path;
} sbx_learn_summary;

void sbx_learn_summary_clear(sbx_learn_summary *s);

gboolean sbx_learn_write(const sbx_learn_record *r, const sbx_learn_output *o,
                         sbx_learn_summary *summary, GError **error);

/* Whether the last component of path looks made up by mkstemp(3) or
 * the like (cc2l8XMv.cdtor.c); such names are folded into their
 * directory. */
bool sbx_learn_name_looks_random(const char *path);

/* argv as one line a shell would split back the same way. */
char *sbx_learn_command_line(char **argv);

/* The sbx-run arguments that run program under what was learned:
 * --profile PATH, then --allow-exec when the program executed others and
 * --allow-ptrace when it traced (the grants a profile cannot hold; the
 * network, when the program used it, is kept by the profile), then "--"
 * and program.
 * NULL-terminated, for g_strfreev. */
char **sbx_learn_run_argv(const sbx_learn_summary *summary, char **program);

/* The text of each file, for tests and for sbx_learn_write. */
char *sbx_learn_policy_text(const sbx_learn_record *r,
                            const sbx_learn_output *o,
                            sbx_learn_summary *summary);
GPtrArray *sbx_learn_broker_rules(const sbx_learn_record *r,
                                  const sbx_learn_output *o, GError **error);

#endif /* SBX_RUNNER_LEARN_WRITE_H_ */
