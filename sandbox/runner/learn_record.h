/* Running a program once under the observer and keeping what it did.
 *
 * Why it exists: sbx-learn's output is only as good as this record. The
 * program runs with the caller's identity and environment, outside any
 * namespace, under one seccomp filter that sends every system call to the
 * observer (sandbox/supervisor/observer.h), which lets each one run.
 * Children inherit the filter, so forks and execs are recorded too. The
 * filter is installed just before the program's execve, with
 * no_new_privs, as sbx-run does; the only call it lets through unseen is
 * the sendmsg on a high descriptor number that hands the listener over
 * before exec.
 *
 * What it trusts: the kernel and its own observer; the record is only
 * as truthful as the program's memory was stable (observer.h). What it
 * refuses: a program that cannot be found or executed.
 */
#ifndef SBX_RUNNER_LEARN_RECORD_H_
#define SBX_RUNNER_LEARN_RECORD_H_

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

#include "sandbox/policy/arg_rules.h"

/* What one argument of one system call was seen holding. */
typedef sbx_arg_seen sbx_learn_arg;

typedef struct {
  uint64_t count;
  sbx_learn_arg args[6];
} sbx_learn_syscall;

/* How the program used a path (bits). */
enum {
  SBX_LEARN_STAT = 1u << 0,   /* stat, access, readlink, chdir, ... */
  SBX_LEARN_READ = 1u << 1,   /* opened for reading */
  SBX_LEARN_WRITE = 1u << 2,  /* opened for writing, chmod, truncate */
  SBX_LEARN_CREATE = 1u << 3, /* created, removed or renamed (its dir) */
  SBX_LEARN_EXEC = 1u << 4,   /* executed after the program's own exec */
};

typedef struct {
  sbx_learn_syscall *syscalls; /* indexed by number, n_syscalls long */
  int n_syscalls;
  uint64_t total_calls;
  uint64_t unknown_calls; /* numbers the syscall table does not name */
  GHashTable *paths;      /* absolute path -> GUINT_TO_POINTER(bits) */
  GHashTable *pids;       /* thread ids seen */
  char *program;          /* the path of the first execve */
  /* Internet addresses: port -> GUINT_TO_POINTER(1), and "ADDRESS port
   * PORT" -> 1, of connect and of bind. */
  GHashTable *connect_ports;
  GHashTable *bind_ports;
  GHashTable *connect_addresses;
  GHashTable *bind_addresses;
  /* Connects and binds that were the program's own business, which the
   * sandbox's own network serves without the host's: a connect to a
   * listener of the run's own on this host, a bind to a port the kernel
   * picks. They are not among the addresses above. */
  uint64_t own_inet;
} sbx_learn_record;

/* The calls sbx-run answers with ENOSYS in both modes, whose callers
 * then take an older call the filters can check (glibc: clone3 for clone,
 * openat2 for openat). The learning run answers them so too, so the
 * fallback is what is learned, and the learned policy says so again:
 * otherwise its default would answer them first, and a libc that falls
 * back on ENOSYS alone would fail. NULL-terminated. */
extern const char *const sbx_learn_enosys_calls[];

void sbx_learn_record_init(sbx_learn_record *r);
void sbx_learn_record_clear(sbx_learn_record *r);

/* Runs argv (argv[0] looked up in PATH) to its end, recording into r.
 * Returns the program's exit status (128+N for signal N), or -1 with
 * *error set when it could not be run. */
int sbx_learn_run(char **argv, sbx_learn_record *r, GError **error);

#define SBX_LEARN_ERROR (sbx_learn_error_quark())
GQuark sbx_learn_error_quark(void);

typedef enum {
  SBX_LEARN_ERROR_USAGE,
  SBX_LEARN_ERROR_NOT_FOUND,
  SBX_LEARN_ERROR_SETUP,
  SBX_LEARN_ERROR_OUTPUT,
} sbx_learn_error_code;

#endif /* SBX_RUNNER_LEARN_RECORD_H_ */
