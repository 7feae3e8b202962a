/* Running the build's tools from tests; see tool_run.h. */
#include "sandbox/tests/runner/tool_run.h"

#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>

void result_clear(result *r) {
  g_free(r->out);
  g_free(r->err);
}

static char *build_dir(void) {
  const char *env = g_getenv("SBX_BUILD_DIR");
  if (env)
    return g_canonicalize_filename(env, NULL);
  g_autofree char *self = g_file_read_link("/proc/self/exe", NULL);
  ck_assert_ptr_nonnull(self);
  g_autofree char *tests = g_path_get_dirname(self);
  return g_path_get_dirname(tests);
}

char *tool_path(const char *name) {
  g_autofree char *dir = build_dir();
  return g_build_filename(dir, name, NULL);
}

char *sbx_run_path(void) {
  return tool_path("sbx-run");
}

char *probe_path(void) {
  g_autofree char *self = g_file_read_link("/proc/self/exe", NULL);
  g_autofree char *dir = g_path_get_dirname(self);
  return g_build_filename(dir, "sbx_run_probe", NULL);
}

static char *tmp;

void tool_setup(void) {
  tmp = g_dir_make_tmp("sbx-run-test-XXXXXX", NULL);
  ck_assert_ptr_nonnull(tmp);
  /* Open to everyone: a program run with --user must be able to write. */
  ck_assert_int_eq(chmod(tmp, 0777), 0);
}

void tool_teardown(void) {
  g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", tmp);
  if (system(cmd) != 0)
    fprintf(stderr, "cannot remove %s\n", tmp);
  g_clear_pointer(&tmp, g_free);
}

char *path_in(const char *name) {
  return g_build_filename(tmp, name, NULL);
}

char *make_dir(const char *name) {
  char *p = path_in(name);
  ck_assert_int_eq(mkdir(p, 0777), 0);
  ck_assert_int_eq(chmod(p, 0777), 0);
  return p;
}

char *make_file(const char *name, const char *text) {
  char *p = path_in(name);
  ck_assert(g_file_set_contents(p, text, -1, NULL));
  ck_assert_int_eq(chmod(p, 0644), 0);
  return p;
}

result run_at(const char *const *argv, const char *cwd, int stdin_fd,
              int stdout_fd) {
  g_autofree char *out_path = path_in(".stdout");
  g_autofree char *err_path = path_in(".stderr");
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    int in = stdin_fd >= 0 ? stdin_fd : open("/dev/null", O_RDONLY);
    int out = stdout_fd >= 0
                  ? stdout_fd
                  : open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0 || err < 0)
      _exit(99);
    dup2(in, 0);
    dup2(out, 1);
    dup2(err, 2);
    if (cwd && chdir(cwd) < 0)
      _exit(97);
    execv(argv[0], (char *const *)argv);
    _exit(98);
  }
  int st;
  ck_assert_int_eq(waitpid(pid, &st, 0), pid);
  result r = {0};
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  if (stdout_fd >= 0)
    r.out = g_strdup("");
  else
    ck_assert(g_file_get_contents(out_path, &r.out, NULL, NULL));
  ck_assert(g_file_get_contents(err_path, &r.err, NULL, NULL));
  return r;
}

/* Runs argv (NULL-terminated) with stdin from stdin_fd (-1: /dev/null),
 * collecting stdout and stderr. */
result run_fd(const char *const *argv, int stdin_fd) {
  return run_at(argv, NULL, stdin_fd, -1);
}

result run(const char *const *argv) {
  return run_fd(argv, -1);
}

bool sbx_run_explaining(void) {
  const char *mode = getenv("SBX_RUN_MODE");
  return mode && strcmp(mode, "explain") == 0;
}

static result tool_run_at(const char *tool, const char *cwd, int stdin_fd,
                          int stdout_fd, const char *const *opts,
                          const char *const *cmd) {
  g_autofree char *bin = tool_path(tool);
  GPtrArray *a = g_ptr_array_new();
  g_ptr_array_add(a, bin);
  if (strcmp(tool, "sbx-run") == 0 && sbx_run_explaining())
    g_ptr_array_add(a, "--explain");
  for (const char *const *o = opts; o && *o; o++)
    g_ptr_array_add(a, (char *)*o);
  g_ptr_array_add(a, "--");
  for (const char *const *c = cmd; *c; c++)
    g_ptr_array_add(a, (char *)*c);
  g_ptr_array_add(a, NULL);
  result r = run_at((const char *const *)a->pdata, cwd, stdin_fd, stdout_fd);
  g_ptr_array_free(a, TRUE);
  return r;
}

result tool_run(const char *tool, const char *const *opts,
                const char *const *cmd) {
  return tool_run_at(tool, NULL, -1, -1, opts, cmd);
}

result sbx_run(const char *const *opts, const char *const *cmd) {
  return tool_run("sbx-run", opts, cmd);
}

result sbx_run_at(const char *cwd, int stdin_fd, int stdout_fd,
                  const char *const *opts, const char *const *cmd) {
  return tool_run_at("sbx-run", cwd, stdin_fd, stdout_fd, opts, cmd);
}

void assert_contains(const char *haystack, const char *needle) {
  ck_assert_msg(strstr(haystack, needle) != NULL, "'%s' not in:\n%s", needle,
                haystack);
}

void assert_lacks(const char *haystack, const char *needle) {
  ck_assert_msg(strstr(haystack, needle) == NULL, "'%s' unexpectedly in:\n%s",
                needle, haystack);
}

void expect(result r, int status, const char *out_has, const char *err_has) {
  ck_assert_msg(r.status == status, "status %d, expected %d: %s%s", r.status,
                status, r.out, r.err);
  if (out_has)
    assert_contains(r.out, out_has);
  if (err_has)
    assert_contains(r.err, err_has);
  result_clear(&r);
}
