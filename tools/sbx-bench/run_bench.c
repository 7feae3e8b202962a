/* sbx_run_vs_bwrap; see run_bench.h.
 *
 * Trusts the binaries it finds. Measures whole command lines, as a user
 * would see them: fork, exec, sandbox set-up, /bin/true, exit, wait.
 */
#include "tools/sbx-bench/run_bench.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* ---- Real programs ------------------------------------------------------- */

#define FILES_DIRS 50
#define FILES_PER_DIR 110 /* 5,500 files */
#define FILES_REPETITIONS 3
#define PYTHON "/usr/bin/python3"
#define PYTHON_LIB "/usr/lib/python3.11"
#define PYTHON_IMPORTS                                                \
  "import json, re, os, sys, collections, datetime, decimal, email, " \
  "http.client, xml.etree.ElementTree"

static gboolean have_bwrap(char **bwrap, GError **error) {
  *bwrap = g_find_program_in_path("bwrap");
  if (!*bwrap)
    g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_SETUP,
                "skipped: bwrap is not installed (Debian package "
                "bubblewrap), so there is no floor to compare with");
  return *bwrap != NULL;
}

static gboolean have_sbx_run(char **sbx_run, GError **error) {
  *sbx_run = find_sbx_run();
  if (!*sbx_run)
    g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_SETUP,
                "sbx-run not found: set SBX_BUILD_DIR to the build directory");
  return *sbx_run != NULL;
}

/* A tar of FILES_DIRS x FILES_PER_DIR small files in dir/files.tar. */
static gboolean make_tar(const char *dir, GError **error) {
  g_autofree char *src = g_build_filename(dir, "src", NULL);
  g_autofree char *tar = g_build_filename(dir, "files.tar", NULL);
  gboolean ok = TRUE;
  for (int d = 0; ok && d < FILES_DIRS; d++) {
    g_autofree char *sub = g_strdup_printf("%s/d%02d", src, d);
    ok = g_mkdir_with_parents(sub, 0755) == 0;
    for (int f = 0; ok && f < FILES_PER_DIR; f++) {
      g_autofree char *path = g_strdup_printf("%s/f%03d.h", sub, f);
      g_autofree char *text = g_strdup_printf(
          "/* %d/%d */\n#define VALUE_%d_%d %d\n", d, f, d, f, d * 1000 + f);
      ok = g_file_set_contents(path, text, -1, NULL);
    }
  }
  char *argv[] = {"/bin/tar", "cf", tar, "-C", src, ".", NULL};
  if (ok && run_once(argv) >= 0)
    return TRUE;
  g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_SETUP,
              "bench: cannot make the tar of small files in %s", dir);
  return FALSE;
}

/* A new, empty dir/out-N for run n; untimed. Every timed run extracts
 * into a directory of its own and nothing is deleted until all of them
 * are done: on ext4, creating files soon after deleting many scans past
 * the recently deleted inodes (recently_deleted() in the inode
 * allocator), so a run that followed a deletion would pay for it. */
static char *fresh_out(const char *dir, size_t n) {
  char *out = g_strdup_printf("%s/out-%zu", dir, n);
  if (g_mkdir_with_parents(out, 0777) == 0 && chmod(out, 0777) == 0)
    return out;
  g_free(out);
  return NULL;
}

/* The extraction, then the read back of every file, into out. */
#define FILES_SCRIPT "tar xf \"$1\" -C \"$2\" && tar cf /dev/null -C \"$2\" ."

/* One timed run under sbx-run (or bwrap) with the same grants: the tar
 * readable, a new output directory (number n) writable; < 0 when it
 * fails. */
static double files_run(const char *runner, gboolean is_bwrap, const char *dir,
                        const char *tar, size_t n) {
  g_autofree char *out = fresh_out(dir, n);
  if (!out)
    return -1;
  char *r = (char *)runner, *t = (char *)tar;
  char *sbx_argv[] = {r,
                      "--allow-exec",
                      "--allow-read",
                      t,
                      "--allow-write",
                      out,
                      "--",
                      "/bin/sh",
                      "-c",
                      FILES_SCRIPT,
                      "sh",
                      t,
                      out,
                      NULL};
  char *bwrap_argv[] = {r,
                        "--unshare-all",
                        "--ro-bind",
                        "/",
                        "/",
                        "--dev",
                        "/dev",
                        "--bind",
                        out,
                        out,
                        "/bin/sh",
                        "-c",
                        FILES_SCRIPT,
                        "sh",
                        t,
                        out,
                        NULL};
  return run_once(is_bwrap ? bwrap_argv : sbx_argv);
}

gboolean sbx_bench_run_files_vs_bwrap(double *value, double *floor,
                                      GError **error) {
  g_autofree char *bwrap = NULL, *sbx_run = NULL;
  if (!have_bwrap(&bwrap, error) || !have_sbx_run(&sbx_run, error))
    return FALSE;
  g_autofree char *dir = g_dir_make_tmp("sbx-bench-files-XXXXXX", NULL);
  if (!dir || chmod(dir, 0755) != 0 || !make_tar(dir, error)) {
    if (error && !*error)
      g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_SETUP,
                  "bench: no temporary directory");
    return FALSE;
  }
  g_autofree char *tar = g_build_filename(dir, "files.tar", NULL);
  double s[FILES_REPETITIONS], w[FILES_REPETITIONS];
  size_t n = 0;
  gboolean ok = files_run(bwrap, TRUE, dir, tar, n++) >= 0;
  if (!ok) {
    g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_SETUP,
                "skipped: the tar under bwrap fails here (unprivileged user "
                "namespaces disabled?)");
  }
  /* The two sides take turns going first, so neither always runs in the
   * other's wake (page cache writeback, journal commits). */
  for (size_t i = 0; ok && i < FILES_REPETITIONS; i++) {
    gboolean bwrap_first = i % 2 == 0;
    for (int side = 0; ok && side < 2; side++) {
      gboolean bwrap_now = (side == 0) == bwrap_first;
      double t =
          files_run(bwrap_now ? bwrap : sbx_run, bwrap_now, dir, tar, n++);
      *(bwrap_now ? &w[i] : &s[i]) = t;
      ok = t >= 0;
    }
    if (!ok)
      g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_SETUP,
                  "the tar of small files failed (repetition %zu): run `%s "
                  "--allow-exec --allow-read TAR --allow-write DIR -- tar xf "
                  "TAR -C DIR` by hand to see why",
                  i, sbx_run);
  }
  char *rm[] = {"/bin/rm", "-rf", dir, NULL};
  run_once(rm);
  if (!ok)
    return FALSE;
  *value = median(s, FILES_REPETITIONS);
  *floor = median(w, FILES_REPETITIONS);
  return TRUE;
}

gboolean sbx_bench_run_python_vs_bwrap(double *value, double *floor,
                                       GError **error) {
  g_autofree char *bwrap = NULL, *sbx_run = NULL;
  if (!have_bwrap(&bwrap, error) || !have_sbx_run(&sbx_run, error))
    return FALSE;
  if (!g_file_test(PYTHON, G_FILE_TEST_IS_EXECUTABLE) ||
      !g_file_test(PYTHON_LIB, G_FILE_TEST_IS_DIR)) {
    g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_SETUP,
                "skipped: " PYTHON " with " PYTHON_LIB " is not installed");
    return FALSE;
  }
  char *sbx_argv[] = {sbx_run, "--allow-read", PYTHON_LIB,     "--",
                      PYTHON,  "-c",           PYTHON_IMPORTS, NULL};
  char *bwrap_argv[] = {bwrap, "--unshare-all", "--ro-bind", "/", "/", PYTHON,
                        "-c",  PYTHON_IMPORTS,  NULL};
  if (run_once(bwrap_argv) < 0) {
    g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_SETUP,
                "skipped: python3 under bwrap fails here (unprivileged user "
                "namespaces disabled?)");
    return FALSE;
  }
  if (run_once(sbx_argv) < 0) {
    g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_SETUP,
                "python3 under `%s` failed; run it by hand to see why",
                sbx_run);
    return FALSE;
  }
  double s[REPETITIONS], w[REPETITIONS];
  for (size_t i = 0; i < REPETITIONS; i++) {
    w[i] = run_once(bwrap_argv);
    s[i] = run_once(sbx_argv);
    if (w[i] < 0 || s[i] < 0) {
      g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_SETUP,
                  "a timed python3 run failed (repetition %zu)", i);
      return FALSE;
    }
  }
  *value = median(s, REPETITIONS);
  *floor = median(w, REPETITIONS);
  return TRUE;
}
