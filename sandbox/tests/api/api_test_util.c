/* Helpers of the API suites; see api_test_util.h. */
#include "sandbox/tests/api/api_test_util.h"

#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fcntl.h>
#include <linux/openat2.h>

#include <glib.h>
#include <glib/gstdio.h>

static void make_dir(char *out, size_t len, const char *tmpl) {
  GError *error = NULL;
  char *dir = g_dir_make_tmp(tmpl, &error);
  if (!dir)
    ck_abort_msg("g_dir_make_tmp: %s", error->message);
  g_strlcpy(out, dir, len);
  g_free(dir);
}

void api_dirs_make(api_dirs *dirs) {
  memset(dirs, 0, sizeof *dirs);
  make_dir(dirs->home, sizeof dirs->home, "sbx-api-home-XXXXXX");
  make_dir(dirs->outside, sizeof dirs->outside, "sbx-api-canary-XXXXXX");
  g_snprintf(dirs->canary, sizeof dirs->canary, "%s/canary", dirs->outside);
  g_snprintf(dirs->audit_log, sizeof dirs->audit_log, "%s/audit.log",
             dirs->outside);
  GError *error = NULL;
  if (!g_file_set_contents(dirs->canary, "canary\n", -1, &error))
    ck_abort_msg("%s", error->message);
  g_chmod(dirs->canary, 0644);
}

void api_dirs_remove(const api_dirs *dirs) {
  g_autofree char *home_file =
      g_build_filename(dirs->home, API_HOME_FILE, NULL);
  g_unlink(home_file);
  g_rmdir(dirs->home);
  /* The canary, the audit log and whatever files a test wrote there. */
  GDir *dir = g_dir_open(dirs->outside, 0, NULL);
  const char *name;
  while (dir && (name = g_dir_read_name(dir))) {
    g_autofree char *path = g_build_filename(dirs->outside, name, NULL);
    g_unlink(path);
  }
  if (dir)
    g_dir_close(dir);
  g_rmdir(dirs->outside);
}

void api_home_rules(const api_dirs *dirs, char *rule, size_t len,
                    const char *rules[2]) {
  g_snprintf(rule, len, "create %s/", dirs->home);
  rules[0] = rule;
  rules[1] = NULL;
}

static int open_errno(const char *path, char *first_line, size_t len) {
  FILE *f = fopen(path, "r");
  if (!f)
    return errno;
  if (first_line && !fgets(first_line, (int)len, f))
    first_line[0] = '\0';
  fclose(f);
  return 0;
}

static int opath_errno(const char *path) {
  struct open_how how = {.flags = O_PATH | O_CLOEXEC};
  long fd = syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
  if (fd < 0)
    return errno;
  close((int)fd);
  return 0;
}

void api_probe_run(const api_dirs *dirs, api_probe *out) {
  memset(out, 0, sizeof *out);
  out->allowed_errno =
      open_errno(API_ALLOWED_FILE, out->allowed_line, sizeof out->allowed_line);
  char path[192];
  g_snprintf(path, sizeof path, "%s/%s", dirs->home, API_HOME_FILE);
  FILE *f = fopen(path, "w");
  if (!f) {
    out->home_errno = errno;
  } else {
    if (fputs(API_HOME_TEXT, f) < 0)
      out->home_errno = errno;
    if (fclose(f) != 0 && !out->home_errno)
      out->home_errno = errno;
  }
  out->shadow_errno = open_errno("/etc/shadow", NULL, 0);
  out->canary_errno = open_errno(dirs->canary, NULL, 0);
  int s = socket(AF_INET, SOCK_STREAM, 0);
  out->inet_errno = s < 0 ? errno : 0;
  if (s >= 0)
    close(s);
  out->opath_errno = opath_errno(dirs->outside);
}

void api_assert_unsandboxed_controls(const api_dirs *dirs) {
  char line[64];
  ck_assert_int_eq(open_errno(API_ALLOWED_FILE, line, sizeof line), 0);
  ck_assert_int_eq(open_errno(dirs->canary, NULL, 0), 0);
  int s = socket(AF_INET, SOCK_STREAM, 0);
  ck_assert_int_ge(s, 0);
  close(s);
  ck_assert_int_eq(opath_errno(dirs->outside), 0);
}

void api_assert_probe_sandboxed(const api_dirs *dirs, const api_probe *p) {
  ck_assert_msg(p->allowed_errno == 0, "allowed file: %s",
                g_strerror(p->allowed_errno));
  char expected[64];
  ck_assert_int_eq(open_errno(API_ALLOWED_FILE, expected, sizeof expected), 0);
  ck_assert_str_eq(p->allowed_line, expected);
  ck_assert_msg(p->home_errno == 0, "writing into the home: %s",
                g_strerror(p->home_errno));
  g_autofree char *home_file =
      g_build_filename(dirs->home, API_HOME_FILE, NULL);
  g_autofree char *text = NULL;
  ck_assert(g_file_get_contents(home_file, &text, NULL, NULL));
  ck_assert_str_eq(text, API_HOME_TEXT);
  ck_assert_msg(p->shadow_errno == EACCES, "/etc/shadow: %s",
                g_strerror(p->shadow_errno));
  ck_assert_msg(p->canary_errno == EACCES, "canary: %s",
                g_strerror(p->canary_errno));
  ck_assert_msg(p->inet_errno == EPERM, "socket(AF_INET): %s",
                g_strerror(p->inet_errno));
  /* Refused by the filters (ENOSYS), or, for a type with direct opens in
   * its empty root, absent (ENOENT): never a descriptor. */
  ck_assert_msg(p->opath_errno == ENOSYS || p->opath_errno == ENOENT,
                "openat2(O_PATH) of a host directory: %s",
                g_strerror(p->opath_errno));
}

void api_assert_canary_denial_audited(const api_dirs *dirs, const char *type) {
  g_autofree char *log = NULL;
  ck_assert_msg(g_file_get_contents(dirs->audit_log, &log, NULL, NULL),
                "no audit log at %s", dirs->audit_log);
  g_autofree char *want =
      g_strdup_printf("sbx: denied op=open path=\"%s\" flags=O_RDONLY type=%s ",
                      dirs->canary, type);
  ck_assert_msg(strstr(log, want), "%s not in the audit log:\n%s", want, log);
}

static bool read_exact(int fd, void *buf, size_t len) {
  size_t got = 0;
  while (got < len) {
    ssize_t n = read(fd, (char *)buf + got, len - got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    got += (size_t)n;
  }
  return true;
}

void api_read_all(int fd, void *buf, size_t len) {
  ck_assert_msg(read_exact(fd, buf, len), "fewer than %zu bytes before EOF",
                len);
}

int api_run_suite(Suite *suite) {
  SRunner *sr = srunner_create(suite);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}

void api_write_file(const char *dir, const char *name, const char *text) {
  g_autofree char *path = g_build_filename(dir, name, NULL);
  GError *error = NULL;
  if (!g_file_set_contents(path, text, -1, &error))
    ck_abort_msg("%s", error->message);
}
