/* sbx_run_vs_bwrap; see run_bench.h.
 *
 * Trusts the binaries it finds. Measures whole command lines, as a user
 * would see them: fork, exec, sandbox set-up, /bin/true, exit, wait.
 */
#include "tools/sbx-bench/run_bench.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/runner/plan.h"

#define REPETITIONS 15

static char *find_sbx_run(void) {
  const char *dir = g_getenv("SBX_BUILD_DIR");
  if (dir) {
    char *p = g_build_filename(dir, "sbx-run", NULL);
    if (g_file_test(p, G_FILE_TEST_IS_EXECUTABLE))
      return p;
    g_free(p);
  }
  g_autofree char *self = g_file_read_link("/proc/self/exe", NULL);
  if (!self)
    return NULL;
  g_autofree char *here = g_path_get_dirname(self);
  const char *tries[] = {".", ".."};
  for (size_t i = 0; i < G_N_ELEMENTS(tries); i++) {
    char *p = g_build_filename(here, tries[i], "sbx-run", NULL);
    if (g_file_test(p, G_FILE_TEST_IS_EXECUTABLE))
      return p;
    g_free(p);
  }
  return NULL;
}

/* Runs argv with stdio on /dev/null; returns the wall time in
 * microseconds, or a negative value when it did not exit 0. */
static double run_once(char *const argv[]) {
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  pid_t pid = fork();
  if (pid == 0) {
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
      dup2(null, 0);
      dup2(null, 1);
      dup2(null, 2);
    }
    execv(argv[0], argv);
    _exit(127);
  }
  if (pid < 0)
    return -1;
  int st;
  if (waitpid(pid, &st, 0) < 0)
    return -1;
  clock_gettime(CLOCK_MONOTONIC, &b);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
    return -1;
  return (double)(b.tv_sec - a.tv_sec) * 1e6 +
         (double)(b.tv_nsec - a.tv_nsec) / 1e3;
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

static double median(double *v, size_t n) {
  qsort(v, n, sizeof(*v), cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

gboolean sbx_bench_run_vs_bwrap(double *value, double *floor, GError **error) {
  g_autofree char *bwrap = g_find_program_in_path("bwrap");
  if (!bwrap) {
    g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_SETUP,
                "skipped: bwrap is not installed (Debian package "
                "bubblewrap), so there is no floor to compare with");
    return FALSE;
  }
  g_autofree char *sbx_run = find_sbx_run();
  if (!sbx_run) {
    g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_SETUP,
                "sbx-run not found: set SBX_BUILD_DIR to the build directory");
    return FALSE;
  }
  char *sbx_argv[] = {sbx_run, "--", "/bin/true", NULL};
  char *bwrap_argv[] = {bwrap, "--unshare-all", "--ro-bind", "/",
                        "/",   "/bin/true",     NULL};
  double s[REPETITIONS], w[REPETITIONS];
  /* One of each first, untimed: page cache and dynamic linking. */
  if (run_once(bwrap_argv) < 0) {
    g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_SETUP,
                "skipped: `bwrap --unshare-all --ro-bind / / /bin/true` "
                "fails here (unprivileged user namespaces disabled?)");
    return FALSE;
  }
  if (run_once(sbx_argv) < 0) {
    g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_SETUP,
                "`%s -- /bin/true` failed; run it by hand to see why", sbx_run);
    return FALSE;
  }
  for (size_t i = 0; i < REPETITIONS; i++) {
    w[i] = run_once(bwrap_argv);
    s[i] = run_once(sbx_argv);
    if (w[i] < 0 || s[i] < 0) {
      g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_SETUP,
                  "a timed run failed (repetition %zu)", i);
      return FALSE;
    }
  }
  *value = median(s, REPETITIONS);
  *floor = median(w, REPETITIONS);
  return TRUE;
}
