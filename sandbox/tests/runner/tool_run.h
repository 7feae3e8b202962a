/* Running the tools of the build (sbx-run, sbx-learn, the probe) from
 * Check tests: each test gets a fresh temporary directory, open to
 * everyone (as root the sandboxed program runs as nobody), and every run
 * collects the exit status, stdout and stderr.
 *
 * Binaries are found under $SBX_BUILD_DIR (set by the test runner), else
 * one directory above the test binary.
 */
#ifndef SBX_TESTS_RUNNER_TOOL_RUN_H_
#define SBX_TESTS_RUNNER_TOOL_RUN_H_

#include <stdbool.h>

typedef struct {
  int status; /* exit code, or 128+signal */
  char *out;
  char *err;
} result;

void result_clear(result *r);

/* $SBX_BUILD_DIR/NAME. */
char *tool_path(const char *name);
char *sbx_run_path(void);
char *probe_path(void);

/* The Check fixture: a temporary directory per test. */
void tool_setup(void);
void tool_teardown(void);
char *path_in(const char *name);
char *make_dir(const char *name);
char *make_file(const char *name, const char *text);

/* Runs argv (NULL-terminated) with stdin from stdin_fd (-1: /dev/null). */
result run_fd(const char *const *argv, int stdin_fd);
result run(const char *const *argv);
/* The same in working directory cwd (NULL: this one), with stdout to
 * stdout_fd (-1: collected into the result). */
result run_at(const char *const *argv, const char *cwd, int stdin_fd,
              int stdout_fd);

/* Whether sbx-run runs in its --explain (supervisor) mode in this run of
 * the suite: SBX_RUN_MODE=explain, which the test runner sets for suites
 * declared with sbx_run_modes (build/test.gni). Otherwise the default
 * mode, where the kernel decides file access. */
bool sbx_run_explaining(void);

/* Whether sbx-run's default mode decides in this run of the suite: not
 * explaining, and the kernel has what the mode needs (user namespaces
 * and Landlock); otherwise the plan falls back to the supervisor. */
bool sbx_run_kernel_decides(void);

/* Whether the sandbox gets a /tmp and a /dev/shm of its own (in both
 * modes: where the kernel lets it make a user and a mount namespace). */
bool sbx_run_has_private_dirs(void);

/* Whether, without --net, the sandbox has a network of its own whose
 * loopback is up (where the kernel lets it make a user and a network
 * namespace); without one no network socket is made. */
bool sbx_run_has_own_network(void);

/* Asserts what a refused run printed on stderr in the mode of this run:
 * under the supervisor the denial line (line; NULL: not checked), in the
 * default mode no denial line (but a connect's or a set-id chmod's,
 * which the supervisor decides in both modes) and the one pointing at
 * --explain. */
void expect_denial_line(const result *r, const char *line);

/* Asserts that sbx-run runs in the mode sbx_run_kernel_decides() names:
 * the program's "/" is the default mode's own tmpfs, not the host's, and
 * a refusal is reported (or not) as that mode does. */
void expect_sbx_run_mode(void);

/* TOOL OPTS... -- CMD... with TOOL from the build directory; both lists
 * NULL-terminated, opts may be NULL. sbx-run gets --explain first when
 * sbx_run_explaining(). */
result tool_run(const char *tool, const char *const *opts,
                const char *const *cmd);
result sbx_run(const char *const *opts, const char *const *cmd);
/* sbx_run() with --explain in both passes: for what only the supervisor
 * does (hints, summaries, its own failures). */
result sbx_run_explain(const char *const *opts, const char *const *cmd);
/* sbx_run() by way of run_at(). */
result sbx_run_at(const char *cwd, int stdin_fd, int stdout_fd,
                  const char *const *opts, const char *const *cmd);

/* Asserts r's exit status (printing its stderr if wrong) and that its
 * stdout holds out_has and its stderr err_has (either may be NULL), then
 * frees r. */
void expect(result r, int status, const char *out_has, const char *err_has);

void assert_contains(const char *haystack, const char *needle);
void assert_lacks(const char *haystack, const char *needle);

/* A listening TCP socket of the host's on 127.0.0.1 at a port the kernel
 * picks (*port), with the given backlog. */
int tcp_listen_loopback(int backlog, int *port);

#endif /* SBX_TESTS_RUNNER_TOOL_RUN_H_ */
