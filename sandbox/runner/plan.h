/* What sbx-run will do, worked out completely before anything runs: the
 * allowlist, the Landlock ruleset, the compiled seccomp layers, the
 * namespaces, the program's path, argv and environment.
 *
 * Why it exists: every input (options, profile, policy files, the ELF
 * header of the program) is read and checked here, in the unsandboxed
 * launcher, so the sandboxed side only applies finished artefacts and
 * nothing the program can later write changes its policy (S35). A bad
 * input fails the whole plan, never half of it.
 *
 * What the program may read with no --allow-* option (the fixed set,
 * docs/sbx-run.md): the dynamic loader the ELF names (PT_INTERP) or a
 * script's interpreter, /etc/ld.so.cache and /etc/ld.so.preload, the
 * library directories /lib/x86_64-linux-gnu, /usr/lib/x86_64-linux-gnu
 * and /lib64/ld-linux-x86-64.so.2, the locale files (/usr/lib/locale,
 * /usr/share/locale, /etc/locale.alias), /etc/localtime and the time
 * zones (/usr/share/zoneinfo), /dev/null,
 * /dev/zero, /dev/full, /dev/tty (read-write; the program's own terminal),
 * /dev/ptmx (read-write: pseudo-terminals the program makes, tree.h),
 * /dev/random and /dev/urandom, and the
 * paths libselinux probes (/proc/filesystems, /sys/fs/selinux, /selinux,
 * /etc/selinux/config); the directories above each of them can be
 * examined (stat). Plus the program file itself, and the
 * /etc/passwd, /etc/group, /etc/hosts and /etc/nsswitch.conf sbx-run
 * makes for it (accounts.h).
 */
#ifndef SBX_RUNNER_PLAN_H_
#define SBX_RUNNER_PLAN_H_

#include <stdbool.h>
#include <stddef.h>

#include <glib.h>

#include "sandbox/files/permissions.h"
#include "sandbox/kernel/landlock/landlock.h"
#include "sandbox/kernel/namespaces/namespaces.h"
#include "sandbox/layers/plan.h"
#include "sandbox/policy/builtin/profile.h"
#include "sandbox/runner/accounts.h"
#include "sandbox/runner/tree.h"

/* Who decides the program's file calls.
 *
 * The default, SBX_RUN_MODE_KERNEL: the kernel. Init builds a mount tree
 * holding only the grants (tree.h) and the program's calls go straight
 * to it, checked by the mount flags and Landlock; the baseline
 * (sbx-run-kernel.policy) sends two calls alone to the supervisor:
 * connect (a read-only mount does not stop one), and a chmod asking for
 * a set-id bit (the filter cannot tell a directory, whose setgid bit is
 * set, from a file). Standard streams that name files
 * outside the write grants reach the program as relayed pipes (relay.h).
 * Nothing else is printed for a refusal (but those two calls'): the
 * program sees the errno, and a program that fails gets one line
 * pointing at --explain.
 *
 * SBX_RUN_MODE_SUPERVISOR (--explain): init's first filter, the baseline
 * (sbx-run.policy), returns a user-notification listener that init hands
 * to the supervisor before the program runs; the supervisor decides and
 * performs every file call and names each refusal with its hint. The plan
 * chooses it for a run the default mode cannot enforce exactly (reason
 * below), and the launcher where the kernel refuses user namespaces. */
typedef enum {
  SBX_RUN_MODE_KERNEL,
  SBX_RUN_MODE_SUPERVISOR,
} sbx_run_mode;

/* A seccomp layer of --policy or the profile, compiled. */
typedef struct {
  char *name;
  sbx_bpf_program prog;
} sbx_run_layer_source;

/* The command line (and profile) as given. */
typedef struct {
  char **allow_read; /* NULL-terminated or NULL */
  char **allow_write;
  char **policies; /* --policy FILE, stacked in order */
  char *profile;   /* --profile NAME|FILE */
  gboolean net;
  gboolean allow_exec;
  gboolean allow_ptrace; /* --allow-ptrace: the baseline allows tracing */
  gboolean clear_env;
  char **setenv; /* K=V */
  char **unsetenv;
  char *audit;
  char *user;       /* --user NAME|UID, NULL: the caller's own identity */
  gboolean explain; /* --explain: the supervisor mode, every refusal as
                     * it happens */
  /* --require LAYER[,LAYER]: layers that must be in place (profile.h's
   * names); the rest are left out with a warning where the kernel lacks
   * them. */
  char **require;
  char **argv; /* PROGRAM ARGS... */
} sbx_run_options;

void sbx_run_options_clear(sbx_run_options *o);

typedef struct {
  sbx_allowlist *allowlist;
  sbx_run_mode mode;
  /* Why the supervisor decides without --explain (static text), and the
   * path or option it concerns (owned), or NULL. */
  const char *mode_reason;
  char *mode_reason_detail;
  /* The default mode's file tree (empty in the supervisor mode). */
  sbx_run_tree tree;
  /* The program's name databases (accounts.h), in the tree of the
   * default mode, answered by the supervisor in the other. */
  sbx_run_account_file accounts[SBX_RUN_ACCOUNT_FILES];
  size_t n_accounts;
  /* init's layers: the profile's rlimits, the mode's baseline
   * (baseline.h; the supervisor's with its listener), and the Landlock
   * ruleset (none on a kernel without Landlock). */
  sbx_layer_plan init;
  /* The program's own filters, stacked on init's: --policy and the
   * profile's, which init itself must not run under. */
  sbx_layer_plan program_filters;
  unsigned n_program_filters;
  /* Those of them whose refusals the baseline reports (stacked.h): of
   * sbx_run_reported_layer. */
  GPtrArray *reported;
  sbx_ns_config ns;
  unsigned require; /* SBX_REQUIRE_*: --require and the profile's */
  bool net;
  bool allow_exec;
  bool allow_ptrace;
  /* The profile's [network] ports: what network sockets may connect and
   * bind to under net. */
  sbx_profile_ports connect_ports;
  sbx_profile_ports bind_ports;
  char *program; /* the path execve() receives */
  char **argv;
  char **envp;
  char *audit;
  /* What the mode-dependent parts are built from (sbx_run_plan_use_
   * supervisor builds them again). */
  GPtrArray *layer_sources; /* of sbx_run_layer_source */
  GPtrArray *exec_files;    /* the program and its interpreters */
  int landlock_min_abi;
  sbx_rlimit rlimits[SBX_PROFILE_MAX_RLIMITS];
  size_t n_rlimits;
} sbx_run_plan;

/* Builds the plan; on failure *error names the option, file or path. */
sbx_run_plan *sbx_run_plan_new(const sbx_run_options *o, GError **error);
void sbx_run_plan_free(sbx_run_plan *p);

/* Takes the namespaces out of a plan, for the launcher where the kernel
 * refuses them: no private directories, and the default mode (whose tree
 * needs a mount namespace) becomes the supervisor mode (reason: static
 * text, why). Rebuilds the baseline, stacked layers and Landlock ruleset,
 * which then refuses TCP again: the network is the host's. */
gboolean sbx_run_plan_without_namespaces(sbx_run_plan *p, const char *reason,
                                         GError **error);

/* Whether the program gets a network namespace of its own (no --net, and
 * the namespaces are there): sockets, binds and connects on its loopback
 * are its own business there. */
bool sbx_run_plan_own_network(const sbx_run_plan *p);

/* Adds the fixed set above (the loader's and libc's needs) to list:
 * what every sbx-run program may read without an option. */
gboolean sbx_run_add_fixed_entries(sbx_allowlist *list, GError **error);

/* The directories --allow-exec makes readable, NULL-terminated. */
extern const char *const sbx_run_exec_dirs[];

#define SBX_RUN_ERROR (sbx_run_error_quark())
GQuark sbx_run_error_quark(void);

typedef enum {
  SBX_RUN_ERROR_USAGE,     /* wrong options */
  SBX_RUN_ERROR_NOT_FOUND, /* the program does not exist */
  SBX_RUN_ERROR_PROGRAM,   /* the program cannot be executed */
  SBX_RUN_ERROR_POLICY,    /* a policy layer is unusable */
  SBX_RUN_ERROR_SETUP,     /* a sandbox layer could not be set up */
} sbx_run_error_code;

#endif /* SBX_RUNNER_PLAN_H_ */
