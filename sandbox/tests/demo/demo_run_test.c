/* The renderer demo end to end: $SBX_BUILD_DIR/renderer-demo renders
 * every page of examples/renderer/pages in real sandboxed workers and
 * shows every escape attempt of the hostile page blocked next to a
 * control that worked. Also the other way round: a page that cannot be
 * rendered, or a run without attacks, makes the demo fail and say why. */
#include <check.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "sandbox/tests/demo/demo_test_util.h"

typedef struct {
  int exit_code;
  char *out; /* stdout */
  char *err; /* stderr */
} demo_run;

static char *build_path(const char *rel) {
  const char *dir = g_getenv("SBX_BUILD_DIR");
  ck_assert_msg(dir != NULL,
                "SBX_BUILD_DIR is not set (run through "
                "build/run_tests.py)");
  return g_build_filename(dir, rel, NULL);
}

static demo_run run_demo(const char *out_dir, const char *pages_dir) {
  char *exe = build_path("renderer-demo");
  const char *argv[] = {
      exe, "--out", out_dir, pages_dir ? "--pages" : NULL, pages_dir, NULL};
  demo_run r = {0};
  int status = 0;
  GError *error = NULL;
  if (!g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL,
                    &r.out, &r.err, &status, &error))
    ck_abort_msg("%s: %s", exe, error->message);
  ck_assert_msg(WIFEXITED(status), "renderer-demo died: status 0x%x\n%s%s",
                status, r.out, r.err);
  r.exit_code = WEXITSTATUS(status);
  g_free(exe);
  return r;
}

static void demo_run_clear(demo_run *r) {
  g_free(r->out);
  g_free(r->err);
}

static void remove_tree(const char *dir) {
  GDir *d = g_dir_open(dir, 0, NULL);
  const char *n;
  while (d && (n = g_dir_read_name(d))) {
    char *p = g_build_filename(dir, n, NULL);
    g_unlink(p);
    g_free(p);
  }
  if (d)
    g_dir_close(d);
  g_rmdir(dir);
}

static gsize file_size(const char *dir, const char *stem, const char *ext) {
  char *name = g_strdup_printf("%s.%s", stem, ext);
  char *path = g_build_filename(dir, name, NULL);
  GStatBuf st;
  gsize size = g_stat(path, &st) == 0 ? (gsize)st.st_size : 0;
  g_free(path);
  g_free(name);
  return size;
}

/* The lines of the attack table: from the "ATTACK" header to the first
 * empty line. */
static GPtrArray *attack_rows(const char *out) {
  GPtrArray *rows = g_ptr_array_new_with_free_func(g_free);
  char **lines = g_strsplit(out, "\n", -1);
  bool in_table = false;
  for (char **l = lines; *l; l++) {
    if (g_str_has_prefix(*l, "ATTACK ")) {
      in_table = true;
      continue;
    }
    if (in_table && !**l)
      break;
    /* Indented lines are the broker's evidence under a row; "(" a note. */
    if (in_table && **l != ' ' && **l != '(')
      g_ptr_array_add(rows, g_strdup(*l));
  }
  g_strfreev(lines);
  return rows;
}

START_TEST(demo_renders_every_page_and_blocks_every_attack) {
  char *out_dir = g_dir_make_tmp("sbx-demo-test-XXXXXX", NULL);
  demo_run r = run_demo(out_dir, NULL);
  ck_assert_msg(r.exit_code == 0, "exit %d\n%s%s", r.exit_code, r.out, r.err);

  char *pages_dir = build_path(DEMO_PAGES_DIR);
  GDir *d = g_dir_open(pages_dir, 0, NULL);
  ck_assert_msg(d != NULL, "%s", pages_dir);
  const char *n;
  int pages = 0;
  while ((n = g_dir_read_name(d))) {
    if (!g_str_has_suffix(n, ".html"))
      continue;
    char *stem = g_strndup(n, strlen(n) - strlen(".html"));
    ck_assert_msg(file_size(out_dir, stem, "txt") > 0, "%s.txt", stem);
    ck_assert_msg(file_size(out_dir, stem, "png") > 0, "%s.png", stem);
    char *row = g_strdup_printf("\n%s ", n);
    ck_assert_msg(strstr(r.out, row) && strstr(strstr(r.out, row), "rendered"),
                  "no \"rendered\" row for %s:\n%s", n, r.out);
    g_free(row);
    g_free(stem);
    pages++;
  }
  g_dir_close(d);
  ck_assert_int_ge(pages, 5);

  /* The worker's own output, not a placeholder. */
  char *index_txt = g_build_filename(out_dir, "index.txt", NULL);
  char *text = NULL;
  ck_assert(g_file_get_contents(index_txt, &text, NULL, NULL));
  ck_assert_msg(strstr(text, "Welcome to sbx"), "%s", text);
  ck_assert_msg(
      strstr(text, "License: Apache-2.0") && strstr(text, "Apache License"),
      "the license text read through the broker is missing:\n%s", text);
  g_free(text);
  char *index_png = g_build_filename(out_dir, "index.png", NULL);
  ck_assert(g_file_get_contents(index_png, &text, NULL, NULL));
  ck_assert(g_str_has_prefix(text, "\x89PNG\r\n\x1a\n"));
  g_free(text);

  static const char *const required[] = {
      "read-shadow",   "write-outside-home", "symlink-out-of-home",
      "socket-inet",   "connect-abstract",   "ptrace-broker",
      "fork",          "kill-zygote",        "exec-shell",
      "proc-root-link"};
  /* Features a system may not offer at all; the demo skips them then. */
  static const char *const optional[] = {"unknown-syscall", "io-uring",
                                         "user-namespace"};
  GPtrArray *rows = attack_rows(r.out);
  ck_assert_uint_ge(rows->len, G_N_ELEMENTS(required));
  for (guint i = 0; i < rows->len; i++) {
    const char *row = g_ptr_array_index(rows, i);
    bool is_optional = false;
    for (size_t j = 0; j < G_N_ELEMENTS(optional); j++)
      is_optional |= g_str_has_prefix(row, optional[j]);
    if (is_optional && strstr(row, " SKIPPED: "))
      continue;
    ck_assert_msg(strstr(row, " works (") != NULL,
                  "the control did not work: %s", row);
    ck_assert_msg(strstr(row, " BLOCKED: ") && !strstr(row, "NOT BLOCKED"),
                  "not blocked: %s", row);
  }
  for (size_t i = 0; i < G_N_ELEMENTS(required); i++) {
    bool found = false;
    for (guint j = 0; j < rows->len && !found; j++)
      found = g_str_has_prefix(g_ptr_array_index(rows, j), required[i]);
    ck_assert_msg(found, "attack %s missing from:\n%s", required[i], r.out);
  }
  ck_assert_msg(strstr(r.out, "fully sandboxed: yes"), "%s", r.out);
  /* The file attacks were refused by the broker, which says so. */
  ck_assert_msg(strstr(r.out, "broker audit: op=open path=\"") &&
                    strstr(r.out, "home/escape-link\""),
                "%s", r.out);
  g_ptr_array_unref(rows);
  g_free(index_txt);
  g_free(index_png);
  g_free(pages_dir);
  demo_run_clear(&r);
  remove_tree(out_dir);
  g_free(out_dir);
}
END_TEST

/* Runs the demo on pages written to a fresh directory (NULL-terminated
 * name, content pairs); *out_dir receives the output directory. */
static demo_run run_on_pages(const char *const *pages, char **out_dir) {
  char *dir = g_dir_make_tmp("sbx-demo-pages-XXXXXX", NULL);
  *out_dir = g_dir_make_tmp("sbx-demo-test-XXXXXX", NULL);
  ck_assert(dir && *out_dir);
  for (const char *const *p = pages; *p; p += 2) {
    char *path = g_build_filename(dir, p[0], NULL);
    ck_assert(g_file_set_contents(path, p[1], -1, NULL));
    g_free(path);
  }
  demo_run r = run_demo(*out_dir, dir);
  remove_tree(dir);
  g_free(dir);
  return r;
}

START_TEST(demo_fails_and_names_the_page_and_attack_it_could_not_run) {
  static const char *const pages[] = {
      "good.html", "<p>fine <x-escape attack=fork><x-escape attack=nope>",
      "bad.html", "<license name=\"no-such-license\">", NULL};
  char *out_dir;
  demo_run r = run_on_pages(pages, &out_dir);
  ck_assert_msg(r.exit_code == 1, "exit %d\n%s%s", r.exit_code, r.out, r.err);
  ck_assert_msg(strstr(r.out, "bad.html           FAILED") &&
                    strstr(r.out, "/usr/share/common-licenses/no-such-license"),
                "%s", r.out);
  ck_assert_msg(
      strstr(r.out, "1/2 pages rendered, 1/2 attacks blocked: FAILED"), "%s",
      r.out);
  ck_assert_msg(
      strstr(r.out, "\nnope ") && strstr(r.out, "UNKNOWN: no such attack"),
      "%s", r.out);
  ck_assert_uint_gt(file_size(out_dir, "good", "txt"), 0);
  ck_assert_uint_eq(file_size(out_dir, "bad", "txt"), 0);
  demo_run_clear(&r);
  remove_tree(out_dir);
  g_free(out_dir);
}
END_TEST

START_TEST(demo_fails_when_no_page_asks_for_an_escape) {
  static const char *const pages[] = {"quiet.html", "<h1>nothing to see</h1>",
                                      NULL};
  char *out_dir;
  demo_run r = run_on_pages(pages, &out_dir);
  ck_assert_msg(r.exit_code == 1, "exit %d\n%s%s", r.exit_code, r.out, r.err);
  ck_assert_msg(strstr(r.out, "no page asked for an escape attempt"), "%s",
                r.out);
  demo_run_clear(&r);
  remove_tree(out_dir);
  g_free(out_dir);
}
END_TEST

int main(void) {
  Suite *s = suite_create("demo_run");
  TCase *tc = tcase_create("run");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, demo_renders_every_page_and_blocks_every_attack);
  tcase_add_test(tc, demo_fails_and_names_the_page_and_attack_it_could_not_run);
  tcase_add_test(tc, demo_fails_when_no_page_asks_for_an_escape);
  suite_add_tcase(s, tc);
  return demo_test_run(s);
}
