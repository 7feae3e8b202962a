/* What the API suites share: a worker home and a canary in temporary
 * directories, and one probe that a sandboxed process runs on itself with
 * plain libc calls (no knowledge of the broker), reporting each outcome. */
#ifndef SBX_TESTS_API_API_TEST_UTIL_H_
#define SBX_TESTS_API_API_TEST_UTIL_H_

#include <stdbool.h>
#include <stddef.h>

#include <check.h>

/* Readable by every worker type with the renderer profile's rules. */
#define API_ALLOWED_FILE "/usr/share/common-licenses/Apache-2.0"
#define API_HOME_FILE "from-worker.txt"
#define API_HOME_TEXT "written by a sandboxed worker\n"

typedef struct {
  char home[128];   /* the worker's home: an extra "create" rule */
  char canary[128]; /* a file no rule names, readable by the test */
  char outside[128];
  char audit_log[160]; /* in outside; the broker appends its denials */
} api_dirs;

/* Makes the two directories under /tmp and the canary. */
void api_dirs_make(api_dirs *dirs);
void api_dirs_remove(const api_dirs *dirs);

/* "create HOME/" for sbx_process_type.extra_rules (static storage of the
 * caller's dirs; NULL-terminated array of 2). */
void api_home_rules(const api_dirs *dirs, char *rule, size_t len,
                    const char *rules[2]);

/* 0 or the errno of each step; the first line of the allowed file. */
typedef struct {
  int allowed_errno;
  char allowed_line[64];
  int home_errno;
  int shadow_errno;
  int canary_errno;
  int inet_errno;
  /* The process's own openat2(O_PATH) of the canary's directory: an
   * O_PATH descriptor needs no Landlock right, so only the filters (and
   * an empty root) keep it from naming the host's files. */
  int opath_errno;
} api_probe;

void api_probe_run(const api_dirs *dirs, api_probe *out);

/* The same outcomes the probe must see in an unsandboxed process: the
 * allowed file and the canary open, a TCP socket can be made. Fails the
 * test otherwise (a broken environment must not read as "blocked"). */
void api_assert_unsandboxed_controls(const api_dirs *dirs);

/* What a sandboxed probe must see. */
void api_assert_probe_sandboxed(const api_dirs *dirs, const api_probe *p);

#define api_assert_error(e, dom, c)                            \
  ck_assert_msg((e) && g_error_matches((e), (dom), (c)), "%s", \
                (e) ? (e)->message : "no error")

/* The broker logged the probe's denied open of the canary for type. */
void api_assert_canary_denial_audited(const api_dirs *dirs, const char *type);

/* Writes dir/name or fails the test. */
void api_write_file(const char *dir, const char *name, const char *text);

/* Runs the suite in Check's fork mode; the process's exit status. */
int api_run_suite(Suite *suite);

/* Reads exactly len bytes or fails the test. */
void api_read_all(int fd, void *buf, size_t len);

#endif /* SBX_TESTS_API_API_TEST_UTIL_H_ */
