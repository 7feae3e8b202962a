/* The permission engine on its own: path validation (S22), the allowlist
 * (kinds, canonicalisation, matching) and the resolver (S23-S28) against a
 * real directory tree. Every refusal is paired with the same request that
 * succeeds, or with the same operation done directly. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>

#include "sandbox/base/path.h"
#include "sandbox/files/permissions.h"
#include "sandbox/files/resolver.h"
#include "sandbox/tests/broker/broker_test_util.h"

static int validate(const char *p) {
  return sbx_path_validate(p, strlen(p), NULL);
}

/* ---- path validation (S22) --------------------------------------------- */

START_TEST(broker_path_accepts_absolute_normalised_paths) {
  const char *good[] = {"/",
                        "/tmp",
                        "/tmp/good/file",
                        "/a.b/..c/...",
                        "/tmp/.hidden",
                        "/tmp/good_extra_stuff",
                        "/.x"};
  for (size_t i = 0; i < G_N_ELEMENTS(good); i++)
    ck_assert_msg(validate(good[i]) == 0, "%s refused", good[i]);
}
END_TEST

START_TEST(broker_path_refuses_dot_dot_components) {
  const char *bad[] = {
      "/..",     "/../proc/cpuinfo",           "/proc/self/../cpuinfo",
      "/dev/..", "/tmp/good/../../etc/passwd", "/a/.."};
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++)
    ck_assert_msg(validate(bad[i]) == -EACCES, "%s accepted", bad[i]);
  ck_assert_int_eq(validate("/proc/cpuinfo"), 0);
}
END_TEST

START_TEST(broker_path_refuses_dot_components) {
  const char *bad[] = {"/tmp/.", "/.", "/./tmp", "/tmp/./good/file"};
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++)
    ck_assert_msg(validate(bad[i]) == -EACCES, "%s accepted", bad[i]);
  ck_assert_int_eq(validate("/tmp/good/file"), 0);
}
END_TEST

START_TEST(broker_path_refuses_empty_components) {
  const char *bad[] = {"//", "/tmp//good/file", "//tmp", "/tmp/good//"};
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++)
    ck_assert_msg(validate(bad[i]) == -EACCES, "%s accepted", bad[i]);
  ck_assert_int_eq(validate("/tmp/good/file"), 0);
}
END_TEST

START_TEST(broker_path_refuses_trailing_slash) {
  ck_assert_int_eq(validate("/tmp/good/file/"), -EACCES);
  ck_assert_int_eq(validate("/tmp/"), -EACCES);
  ck_assert_int_eq(validate("/tmp/good/file"), 0);
  ck_assert_int_eq(validate("/"), 0);
}
END_TEST

START_TEST(broker_path_refuses_relative_paths) {
  const char *bad[] = {"", "tmp/good", "./x", "../x", "good", "."};
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++)
    ck_assert_msg(validate(bad[i]) == -EACCES, "'%s' accepted", bad[i]);
}
END_TEST

START_TEST(broker_path_refuses_embedded_nul) {
  const char p[] = "/tmp/go\0od";
  ck_assert_int_eq(sbx_path_validate(p, sizeof(p) - 1, NULL), -EACCES);
  ck_assert_int_eq(sbx_path_validate(p, 7, NULL), 0); /* "/tmp/go" */
}
END_TEST

START_TEST(broker_path_refuses_paths_of_path_max_bytes) {
  char p[PATH_MAX + 1];
  p[0] = '/';
  memset(p + 1, 'a', PATH_MAX - 1);
  p[PATH_MAX] = '\0';
  /* strlen == PATH_MAX: no room for the kernel's terminating NUL */
  ck_assert_int_eq(sbx_path_validate(p, PATH_MAX, NULL), -ENAMETOOLONG);
  /* Components may not exceed NAME_MAX on disk, but the string is valid. */
  ck_assert_int_eq(sbx_path_validate(p, PATH_MAX - 1, NULL), 0);
}
END_TEST

START_TEST(broker_path_matches_on_component_boundaries) {
  ck_assert(!sbx_path_is_within("/tmp/good_extra_stuff", 21, "/tmp/good", 9));
  ck_assert(!sbx_path_is_within("/home/sandbox-evil", 18, "/home/sandbox", 13));
  ck_assert(sbx_path_is_within("/tmp/good/x", 11, "/tmp/good", 9));
  ck_assert(sbx_path_is_within("/tmp/good", 9, "/tmp/good", 9));
  ck_assert(sbx_path_is_within("/anything", 9, "/", 1));
  ck_assert(!sbx_path_is_within("/tmp", 4, "/tmp/good", 9));
}
END_TEST

static void expect_join(const char *dir, const char *target, const char *want) {
  char out[PATH_MAX];
  int n = sbx_path_join_link(dir, strlen(dir), target, strlen(target), out,
                             sizeof(out));
  ck_assert_msg(n >= 0, "join(%s, %s) failed: %d", dir, target, n);
  ck_assert_str_eq(out, want);
  ck_assert_int_eq(validate(out), 0);
}

START_TEST(broker_path_joins_symlink_targets_lexically) {
  expect_join("/usr/lib", "../share/x", "/usr/share/x");
  expect_join("/usr/lib", "/etc//./passwd", "/etc/passwd");
  expect_join("/", "usr/lib", "/usr/lib");
  expect_join("/a", "../../../..", "/");
  expect_join("/a/b", "c/./d/", "/a/b/c/d");
  char out[16];
  ck_assert_int_eq(sbx_path_join_link("/a", 2, "", 0, out, sizeof(out)),
                   -ENOENT);
  ck_assert_int_eq(
      sbx_path_join_link("/a", 2, "bbbbbbbbbbbbbbbbbbbb", 20, out, sizeof(out)),
      -ENAMETOOLONG);
}
END_TEST

/* Which names have a `..` component, which a lexical join cannot apply
 * where a link comes before it. */
START_TEST(broker_path_finds_dotdot_components) {
  static const struct {
    const char *s;
    bool has;
  } rows[] = {{"..", true},      {"../x", true},    {"a/..", true},
              {"a/../b", true},  {"/..", true},     {"a/..//b", true},
              {"...", false},    {"a..", false},    {"..a/b", false},
              {"a/b..c", false}, {"a/.", false},    {"", false},
              {".", false},      {"a/.../b", false}};
  for (size_t i = 0; i < G_N_ELEMENTS(rows); i++)
    ck_assert_msg(
        sbx_path_has_dotdot(rows[i].s, strlen(rows[i].s)) == rows[i].has, "%s",
        rows[i].s);
  /* Only the length given counts. */
  ck_assert(!sbx_path_has_dotdot("a/..", 3));
}
END_TEST

/* ---- the allowlist ------------------------------------------------------ */

START_TEST(broker_allowlist_canonicalises_merged_usr) {
  char *lib = realpath("/lib", NULL);
  ck_assert_msg(lib && strcmp(lib, "/usr/lib") == 0,
                "this test needs a merged-/usr system (/lib -> usr/lib)");
  free(lib);
  sbx_allowlist *list = sbx_allowlist_new("t");
  GError *error = NULL;
  ck_assert(sbx_allowlist_add(list, "/lib/", SBX_PERM_READ_ONLY, &error));
  ck_assert_int_eq(sbx_allowlist_n_entries(list), 1);
  const sbx_allow_entry *e = sbx_allowlist_entry(list, 0);
  ck_assert_str_eq(e->path, "/usr/lib");
  ck_assert_str_eq(e->written, "/lib/");
  ck_assert(e->recursive);
  /* Entries that do not exist yet keep their missing tail. */
  ck_assert(sbx_allowlist_add(list, "/lib/no-such-dir/file", SBX_PERM_READ_ONLY,
                              &error));
  ck_assert_str_eq(sbx_allowlist_entry(list, 1)->path,
                   "/usr/lib/no-such-dir/file");
  ck_assert(!sbx_allowlist_entry(list, 1)->recursive);
  sbx_allowlist_free(list);
}
END_TEST

START_TEST(broker_allowlist_admits_the_target_of_an_exact_symlink) {
  broker_test_tree t;
  broker_test_tree_make(&t);
  char *link = broker_test_path(&t, "link");
  ck_assert_int_eq(symlink(t.good_file, link), 0);
  sbx_allowlist *list = sbx_allowlist_new("t");
  GError *error = NULL;
  ck_assert(sbx_allowlist_add(list, link, SBX_PERM_READ_ONLY, &error));
  ck_assert_int_eq(sbx_allowlist_n_entries(list), 2);
  ck_assert_str_eq(sbx_allowlist_entry(list, 0)->path, link);
  ck_assert_str_eq(sbx_allowlist_entry(list, 1)->path, t.good_file);
  sbx_allowlist_free(list);
  g_free(link);
  broker_test_tree_free(&t);
}
END_TEST

START_TEST(broker_allowlist_refuses_entries_it_cannot_state_exactly) {
  sbx_allowlist *list = sbx_allowlist_new("t");
  const char *bad[] = {"relative/path",
                       "/tmp/../etc/",
                       "/tmp//x",
                       "/tmp/./x",
                       "/proc/1/status",
                       "/proc/thread-self/status",
                       ""};
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    GError *error = NULL;
    ck_assert_msg(!sbx_allowlist_add(list, bad[i], SBX_PERM_READ_ONLY, &error),
                  "%s accepted", bad[i]);
    ck_assert_ptr_nonnull(strstr(error->message, bad[i]));
    g_error_free(error);
  }
  GError *error = NULL;
  ck_assert(!sbx_allowlist_add(list, "/tmp/x/",
                               SBX_PERM_CREATE | SBX_PERM_TEMPORARY, &error));
  g_clear_error(&error);
  ck_assert(!sbx_allowlist_add(list, "/tmp/x/", 0, &error));
  g_clear_error(&error);
  ck_assert(!sbx_allowlist_add(list, "/tmp/x/", 1u << 20, &error));
  g_clear_error(&error);
  ck_assert_int_eq(sbx_allowlist_n_entries(list), 0);
  /* The positive control: a well-formed entry loads. */
  ck_assert(sbx_allowlist_add(list, "/tmp/x/", SBX_PERM_READ_ONLY, &error));
  ck_assert_int_eq(sbx_allowlist_n_entries(list), 1);
  sbx_allowlist_free(list);
}
END_TEST

START_TEST(broker_allowlist_parse_is_all_or_nothing) {
  sbx_allowlist *list = sbx_allowlist_new("t");
  GError *error = NULL;
  const char *text =
      "# comment\n"
      "read /usr/share/\n"
      "\n"
      "read,stat-intermediate /usr/lib/x86_64-linux-gnu/\n"
      "frobnicate /etc/passwd\n";
  ck_assert(!sbx_allowlist_parse(list, text, "test.rules", &error));
  ck_assert_msg(strstr(error->message, "test.rules:5:") != NULL, "%s",
                error->message);
  ck_assert_ptr_nonnull(strstr(error->message, "frobnicate"));
  g_clear_error(&error);
  ck_assert_int_eq(sbx_allowlist_n_entries(list), 0);
  ck_assert(sbx_allowlist_parse(list,
                                "read /usr/share/\n"
                                "read,stat-intermediate /usr/lib/\n"
                                "temporary /tmp/\n",
                                "ok.rules", &error));
  ck_assert_int_eq(sbx_allowlist_n_entries(list), 3);
  ck_assert_uint_eq(sbx_allowlist_entry(list, 1)->rights,
                    SBX_PERM_READ_ONLY | SBX_PERM_INTERMEDIATE);
  ck_assert_uint_eq(sbx_allowlist_entry(list, 2)->rights,
                    SBX_PERM_READ_WRITE_TEMPORARY);
  sbx_allowlist_free(list);
}
END_TEST

START_TEST(broker_allowlist_keeps_proc_self_for_the_worker) {
  sbx_allowlist *list = sbx_allowlist_new("t");
  GError *error = NULL;
  ck_assert(
      sbx_allowlist_add(list, "/proc/self/status", SBX_PERM_READ_ONLY, &error));
  ck_assert(
      sbx_allowlist_add(list, "/proc/self/task/", SBX_PERM_READ_ONLY, &error));
  const sbx_allow_entry *e = sbx_allowlist_entry(list, 0);
  ck_assert(e->proc_self);
  ck_assert_str_eq(e->path, "/status");
  ck_assert(sbx_allowlist_entry(list, 1)->proc_self);
  sbx_match m;
  ck_assert(
      sbx_allowlist_match(list, "/proc/42/status", 15, 8, SBX_PERM_READ, &m));
  ck_assert(sbx_allowlist_match(list, "/proc/42/task/42/stat", 21, 8,
                                SBX_PERM_READ, &m));
  ck_assert_uint_eq(m.entry, 1);
  /* Without the requester's prefix a /proc/self entry matches nothing. */
  ck_assert(
      !sbx_allowlist_match(list, "/proc/42/status", 15, 0, SBX_PERM_READ, &m));
  ck_assert(
      !sbx_allowlist_match(list, "/proc/42/statusx", 16, 8, SBX_PERM_READ, &m));
  sbx_allowlist_free(list);
}
END_TEST

START_TEST(broker_allowlist_matches_rights_and_boundaries) {
  sbx_allowlist *list = sbx_allowlist_new("t");
  GError *error = NULL;
  ck_assert(sbx_allowlist_add(list, "/data/", SBX_PERM_READ_ONLY, &error));
  ck_assert(sbx_allowlist_add(list, "/data/out/", SBX_PERM_READ_WRITE_CREATE,
                              &error));
  ck_assert(sbx_allowlist_add(list, "/etc/hosts", SBX_PERM_READ_ONLY, &error));
  ck_assert(
      sbx_allowlist_add(list, "/srv/a/b/", SBX_PERM_STAT_INTERMEDIATE, &error));
  sbx_match m;
  ck_assert(sbx_allowlist_match(list, "/data/x", 7, 0, SBX_PERM_READ, &m));
  ck_assert_uint_eq(m.entry, 0);
  ck_assert(!sbx_allowlist_match(list, "/data/x", 7, 0, SBX_PERM_WRITE, &m));
  ck_assert(sbx_allowlist_match(list, "/data/out/x", 11, 0,
                                SBX_PERM_WRITE | SBX_PERM_CREATE, &m));
  ck_assert_uint_eq(m.entry, 1);
  /* Most specific wins when both grant. */
  ck_assert(sbx_allowlist_match(list, "/data/out/x", 11, 0, SBX_PERM_READ, &m));
  ck_assert_uint_eq(m.entry, 1);
  ck_assert(
      !sbx_allowlist_match(list, "/data-evil/x", 12, 0, SBX_PERM_READ, &m));
  ck_assert(sbx_allowlist_match(list, "/etc/hosts", 10, 0, SBX_PERM_READ, &m));
  ck_assert(
      !sbx_allowlist_match(list, "/etc/hosts/x", 12, 0, SBX_PERM_STAT, &m));
  ck_assert(!sbx_allowlist_match(list, "/etc", 4, 0, SBX_PERM_STAT, &m));
  ck_assert(sbx_allowlist_match(list, "/srv/a", 6, 0, SBX_PERM_STAT, &m));
  ck_assert_int_eq(m.kind, SBX_MATCH_INTERMEDIATE);
  ck_assert(sbx_allowlist_match(list, "/", 1, 0, SBX_PERM_STAT, &m));
  ck_assert_int_eq(m.kind, SBX_MATCH_INTERMEDIATE);
  ck_assert(!sbx_allowlist_match(list, "/srv/a", 6, 0, SBX_PERM_READ, &m));
  ck_assert(!sbx_allowlist_match(list, "/srv/ab", 7, 0, SBX_PERM_STAT, &m));
  sbx_allowlist_free(list);
}
END_TEST

/* ---- the resolver on a real tree --------------------------------------- */

typedef struct {
  broker_test_tree t;
  sbx_allowlist *list;
  sbx_resolver *r;
} fixture;

static void fixture_make(fixture *f) {
  broker_test_tree_make(&f->t);
  f->list = broker_test_tree_allowlist(&f->t, "t");
  GError *error = NULL;
  f->r = sbx_resolver_new(f->list, &error);
  ck_assert_msg(f->r != NULL, "%s", error ? error->message : "");
}

static void fixture_free(fixture *f) {
  sbx_resolver_free(f->r);
  sbx_allowlist_free(f->list);
  broker_test_tree_free(&f->t);
}

static int ropen(fixture *f, const char *path, int flags, mode_t mode,
                 sbx_decision *d) {
  return sbx_resolver_open(f->r, getpid(), path, flags, mode, d);
}

static char *open_and_read(fixture *f, const char *path) {
  int fd = ropen(f, path, O_RDONLY, 0, NULL);
  ck_assert_msg(fd >= 0, "%s: %s", path, g_strerror(-fd));
  char *s = broker_test_read_fd(fd);
  close(fd);
  return s;
}

START_TEST(broker_resolver_opens_an_allowed_file) {
  fixture f;
  fixture_make(&f);
  sbx_decision d;
  int fd = ropen(&f, f.t.good_file, O_RDONLY, 0, &d);
  ck_assert_int_ge(fd, 0);
  ck_assert(d.granted);
  char *s = broker_test_read_fd(fd);
  ck_assert_str_eq(s, "good");
  g_free(s);
  ck_assert_int_eq(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
  /* O_NONBLOCK is the broker's, not the caller's. */
  ck_assert_int_eq(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
  close(fd);
  s = open_and_read(&f, f.t.deep);
  ck_assert_str_eq(s, "deep");
  g_free(s);
  fixture_free(&f);
}
END_TEST

/* A denial names what it was decided on and the rule that would grant it:
 * a link's target (not the link), and stat-intermediate for a directory
 * above an entry. */
START_TEST(broker_resolver_denial_names_the_target_and_the_rule) {
  g_autofree char *made = g_dir_make_tmp("sbx-hint-XXXXXX", NULL);
  ck_assert_ptr_nonnull(made);
  g_autofree char *root = realpath(made, NULL);
  g_autofree char *allowed = g_build_filename(root, "allowed", NULL);
  g_autofree char *outside = g_build_filename(root, "outside", NULL);
  g_autofree char *secret = g_build_filename(outside, "secret.txt", NULL);
  g_autofree char *link = g_build_filename(allowed, "link", NULL);
  g_autofree char *plain = g_build_filename(allowed, "plain.txt", NULL);
  ck_assert_int_eq(g_mkdir_with_parents(allowed, 0700), 0);
  ck_assert_int_eq(g_mkdir_with_parents(outside, 0700), 0);
  ck_assert(g_file_set_contents(secret, "s", -1, NULL));
  ck_assert(g_file_set_contents(plain, "p", -1, NULL));
  ck_assert_int_eq(symlink(secret, link), 0);
  sbx_allowlist *list = sbx_allowlist_new("t");
  g_autofree char *rule = g_strdup_printf("read %s/", allowed);
  ck_assert(sbx_allowlist_add_rule(list, rule, NULL));
  sbx_resolver *r = sbx_resolver_new(list, NULL);
  ck_assert_ptr_nonnull(r);

  sbx_decision d;
  int fd = sbx_resolver_open(r, getpid(), plain, O_RDONLY, 0, &d);
  ck_assert_int_ge(fd, 0); /* control */
  close(fd);
  ck_assert_str_eq(d.object, "");
  ck_assert_int_lt(sbx_resolver_open(r, getpid(), link, O_RDONLY, 0, &d), 0);
  ck_assert(!d.granted);
  ck_assert_str_eq(d.object, secret);
  g_autofree char *want = g_strdup_printf("read %s", secret);
  ck_assert_str_eq(d.allow, want);

  ck_assert_int_lt(sbx_resolver_open(r, getpid(), secret, O_RDWR, 0, &d), 0);
  ck_assert_str_eq(d.object, ""); /* asked for by its own name */
  g_free(want);
  want = g_strdup_printf("read-write %s", secret);
  ck_assert_str_eq(d.allow, want);

  struct stat st;
  ck_assert_int_lt(sbx_resolver_stat(r, getpid(), root, true, &st, &d), 0);
  g_free(want);
  want = g_strdup_printf("stat-intermediate %s", allowed);
  ck_assert_str_eq(d.allow, want);

  sbx_resolver_free(r);
  sbx_allowlist_free(list);
  unlink(link);
  unlink(plain);
  unlink(secret);
  rmdir(allowed);
  rmdir(outside);
  rmdir(root);
}
END_TEST

START_TEST(broker_resolver_refuses_every_non_canonical_spelling) {
  fixture f;
  fixture_make(&f);
  const char *root = f.t.root;
  char *bad[] = {
      g_strdup_printf("%s/good/../good/file", root),
      g_strdup_printf("%s/good/./file", root),
      g_strdup_printf("%s//good/file", root),
      g_strdup_printf("%s/good/file/", root),
      g_strdup_printf("%s/good/.", root),
      g_strdup("good/file"),
      g_strdup(""),
      g_strdup_printf("%s/good/sub/../file", root),
  };
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    sbx_decision d;
    int fd = ropen(&f, bad[i], O_RDONLY, 0, &d);
    ck_assert_msg(fd == -EACCES, "'%s' gave %d", bad[i], fd);
    ck_assert(!d.granted);
    ck_assert_ptr_nonnull(d.reason);
    struct stat st;
    ck_assert_int_eq(sbx_resolver_stat(f.r, getpid(), bad[i], true, &st, &d),
                     -EACCES);
    g_free(bad[i]);
  }
  char *s = open_and_read(&f, f.t.good_file); /* positive control */
  ck_assert_str_eq(s, "good");
  g_free(s);
  char long_path[PATH_MAX + 8];
  memset(long_path, 'a', sizeof(long_path));
  long_path[0] = '/';
  long_path[sizeof(long_path) - 1] = '\0';
  ck_assert_int_eq(ropen(&f, long_path, O_RDONLY, 0, NULL), -ENAMETOOLONG);
  fixture_free(&f);
}
END_TEST

START_TEST(broker_resolver_refuses_a_sibling_prefix) {
  fixture f;
  fixture_make(&f);
  int direct = open(f.t.sibling, O_RDONLY | O_CLOEXEC);
  ck_assert_int_ge(direct, 0); /* it exists and is readable */
  close(direct);
  sbx_decision d;
  ck_assert_int_eq(ropen(&f, f.t.sibling, O_RDONLY, 0, &d), -EACCES);
  ck_assert_str_eq(d.reason, "not in the allowlist");
  fixture_free(&f);
}
END_TEST

START_TEST(broker_resolver_refuses_symlink_out_of_tree) {
  fixture f;
  fixture_make(&f);
  char *abs_link = broker_test_path(&f.t, "good/abs");
  char *rel_link = broker_test_path(&f.t, "good/rel");
  char *dir_link = broker_test_path(&f.t, "good/dir");
  char *inside = broker_test_path(&f.t, "good/inside");
  ck_assert_int_eq(symlink(f.t.canary, abs_link), 0);
  ck_assert_int_eq(symlink("../canary", rel_link), 0);
  ck_assert_int_eq(symlink(f.t.root, dir_link), 0);
  ck_assert_int_eq(symlink("sub/deep", inside), 0);
  /* Control: followed directly, the links do reach the canary. */
  int direct = open(abs_link, O_RDONLY | O_CLOEXEC);
  ck_assert(broker_test_same_file(direct, &f.t.canary_st));
  close(direct);
  sbx_decision d;
  ck_assert_int_eq(ropen(&f, abs_link, O_RDONLY, 0, &d), -EACCES);
  ck_assert(!d.granted);
  ck_assert_int_eq(ropen(&f, rel_link, O_RDONLY, 0, &d), -EACCES);
  char *via_dir = g_strconcat(dir_link, "/canary", NULL);
  ck_assert_int_eq(ropen(&f, via_dir, O_RDONLY, 0, &d), -EACCES);
  struct stat st;
  ck_assert_int_eq(sbx_resolver_stat(f.r, getpid(), abs_link, true, &st, &d),
                   -EACCES);
  /* lstat of the link itself is within the tree. */
  ck_assert_int_eq(sbx_resolver_stat(f.r, getpid(), abs_link, false, &st, &d),
                   0);
  ck_assert(S_ISLNK(st.st_mode));
  /* A link that stays inside the tree is followed. */
  char *s = open_and_read(&f, inside);
  ck_assert_str_eq(s, "deep");
  g_free(s);
  g_free(via_dir);
  g_free(abs_link);
  g_free(rel_link);
  g_free(dir_link);
  g_free(inside);
  fixture_free(&f);
}
END_TEST

/* A resolver that cannot open one of its roots (here: out of
 * descriptors) closes what it opened and nothing else. The memory its
 * table of roots gets is first filled with the number of a pipe of the
 * test's, so a table read before it is written names that pipe. */
START_TEST(broker_resolver_failing_part_way_closes_only_its_own) {
  static const char *const roots[] = {
      "/usr/lib/x86_64-linux-gnu/",
      "/usr/share/",
      "/etc/",
      "/var/",
      "/usr/include/",
      "/usr/bin/",
      "/usr/sbin/",
      "/dev/",
  };
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    int p[2];
    if (pipe(p) != 0)
      _exit(10);
    sbx_allowlist *list = sbx_allowlist_new("t");
    for (size_t i = 0; i < G_N_ELEMENTS(roots); i++)
      if (!sbx_allowlist_add(list, roots[i], SBX_PERM_READ_ONLY, NULL))
        _exit(11);
    int *bait = malloc(G_N_ELEMENTS(roots) * sizeof(int));
    for (size_t i = 0; i < G_N_ELEMENTS(roots); i++)
      bait[i] = p[0];
    free(bait);
    /* Room for two roots, not for the third. */
    int probe = dup(0);
    close(probe);
    struct rlimit lim = {(rlim_t)probe + 2, (rlim_t)probe + 2};
    struct rlimit old;
    getrlimit(RLIMIT_NOFILE, &old);
    lim.rlim_max = old.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &lim) != 0)
      _exit(12);
    GError *error = NULL;
    sbx_resolver *r = sbx_resolver_new(list, &error);
    if (r || !error || !strstr(error->message, "Too many open files"))
      _exit(13);
    /* The pipe is still the test's: control, it was open before. */
    _exit(fcntl(p[0], F_GETFD) >= 0 && fcntl(p[1], F_GETFD) >= 0 ? 0 : 14);
  }
  int st;
  ck_assert_int_eq(waitpid(pid, &st, 0), pid);
  ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child: %d", st);
}
END_TEST

START_TEST(broker_resolver_follows_links_into_other_allowed_trees) {
  fixture f;
  fixture_make(&f);
  const char *libm = "/usr/lib/x86_64-linux-gnu/libm.so.6";
  struct stat want;
  ck_assert_int_eq(stat(libm, &want), 0);
  sbx_allowlist *list = broker_test_tree_allowlist(&f.t, "t");
  GError *error = NULL;
  ck_assert(sbx_allowlist_add(list, "/usr/lib/x86_64-linux-gnu/",
                              SBX_PERM_READ_ONLY, &error));
  sbx_resolver *r = sbx_resolver_new(list, &error);
  ck_assert_ptr_nonnull(r);
  char *link = broker_test_path(&f.t, "good/libm");
  ck_assert_int_eq(symlink(libm, link), 0);
  int fd = sbx_resolver_open(r, getpid(), link, O_RDONLY, 0, NULL);
  ck_assert_int_ge(fd, 0);
  ck_assert(broker_test_same_file(fd, &want));
  close(fd);
  /* Merged /usr: the loader's spelling reaches the same file. */
  fd = sbx_resolver_open(r, getpid(), "/lib/x86_64-linux-gnu/libm.so.6",
                         O_RDONLY | O_CLOEXEC, 0, NULL);
  ck_assert_int_ge(fd, 0);
  ck_assert(broker_test_same_file(fd, &want));
  close(fd);
  /* ... but only for what the allowlist has: /lib/... itself is no entry. */
  ck_assert_int_eq(
      sbx_resolver_open(r, getpid(), "/lib/os-release", O_RDONLY, 0, NULL),
      -EACCES);
  /* Without the second entry, the same link is refused. */
  ck_assert_int_eq(ropen(&f, link, O_RDONLY, 0, NULL), -EACCES);
  sbx_resolver_free(r);
  sbx_allowlist_free(list);
  g_free(link);
  fixture_free(&f);
}
END_TEST

/* A directory given for an entry's root stands in for the host's (sbx-run's
 * private /tmp under the supervisor): names below it are found there and
 * only there, a link in it that leads up is decided on where it leads,
 * and a resolver without it finds the host's (the control). */
START_TEST(broker_resolver_resolves_beneath_a_directory_given_for_a_root) {
  g_autofree char *made = g_dir_make_tmp("sbx-root-XXXXXX", NULL);
  ck_assert_ptr_nonnull(made);
  g_autofree char *top = realpath(made, NULL);
  g_autofree char *host = g_build_filename(top, "host", NULL);
  g_autofree char *own = g_build_filename(top, "own", NULL);
  g_autofree char *host_file = g_build_filename(host, "f", NULL);
  g_autofree char *host_only = g_build_filename(host, "only-here", NULL);
  g_autofree char *own_file = g_build_filename(own, "f", NULL);
  g_autofree char *secret = g_build_filename(top, "secret", NULL);
  ck_assert_int_eq(g_mkdir_with_parents(host, 0700), 0);
  ck_assert_int_eq(g_mkdir_with_parents(own, 0700), 0);
  ck_assert(g_file_set_contents(host_file, "host", -1, NULL));
  ck_assert(g_file_set_contents(host_only, "host", -1, NULL));
  ck_assert(g_file_set_contents(own_file, "own", -1, NULL));
  ck_assert(g_file_set_contents(secret, "secret", -1, NULL));
  g_autofree char *up = g_build_filename(own, "up", NULL);
  ck_assert_int_eq(symlink("../secret", up), 0);
  sbx_allowlist *list = sbx_allowlist_new("t");
  g_autofree char *rule = g_strdup_printf("read %s/", host);
  ck_assert(sbx_allowlist_add_rule(list, rule, NULL));

  sbx_resolver *plain = sbx_resolver_new(list, NULL);
  ck_assert_ptr_nonnull(plain);
  int fd = sbx_resolver_open(plain, getpid(), host_file, O_RDONLY, 0, NULL);
  ck_assert_int_ge(fd, 0);
  g_autofree char *got = broker_test_read_fd(fd);
  ck_assert_str_eq(got, "host");
  close(fd);
  sbx_resolver_free(plain);

  int own_fd = open(own, O_PATH | O_DIRECTORY | O_CLOEXEC);
  ck_assert_int_ge(own_fd, 0);
  sbx_resolver_root roots[] = {{host, own_fd}};
  GError *error = NULL;
  sbx_resolver *r = sbx_resolver_new_with_roots(list, roots, 1, &error);
  ck_assert_msg(r != NULL, "%s", error ? error->message : "");
  close(own_fd); /* the resolver holds a copy */
  fd = sbx_resolver_open(r, getpid(), host_file, O_RDONLY, 0, NULL);
  ck_assert_int_ge(fd, 0);
  g_autofree char *got_own = broker_test_read_fd(fd);
  ck_assert_str_eq(got_own, "own");
  close(fd);
  ck_assert_int_eq(sbx_resolver_open(r, getpid(), host_only, O_RDONLY, 0, NULL),
                   -ENOENT);
  g_autofree char *via_up = g_build_filename(host, "up", NULL);
  ck_assert_int_eq(sbx_resolver_open(r, getpid(), via_up, O_RDONLY, 0, NULL),
                   -EACCES);
  sbx_resolver_free(r);
  sbx_allowlist_free(list);
  g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", top);
  ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* A root given for /proc is a procfs of the requesters' own pid
 * namespace: of another process's directory there what ps reads is
 * served (its status, its threads'), while without one all of it is
 * refused; its environment and memory never are, and a magic link in it
 * leads nowhere. The test's own /proc stands in for such a procfs: the
 * child is in its pid namespace. */
START_TEST(broker_resolver_reads_other_processes_in_a_procfs_given_as_root) {
  pid_t child = fork();
  ck_assert_int_ge(child, 0);
  if (child == 0) {
    pause();
    _exit(0);
  }
  sbx_allowlist *list = sbx_allowlist_new("t");
  ck_assert(sbx_allowlist_add_rule(list, "read /proc/", NULL));
  g_autofree char *status = g_strdup_printf("/proc/%d/status", (int)child);
  g_autofree char *root =
      g_strdup_printf("/proc/%d/root/etc/passwd", (int)child);
  sbx_decision d;

  sbx_resolver *plain = sbx_resolver_new(list, NULL);
  ck_assert_ptr_nonnull(plain);
  ck_assert_int_eq(sbx_resolver_open(plain, getpid(), status, O_RDONLY, 0, &d),
                   -EACCES);
  ck_assert(!d.granted);
  sbx_resolver_free(plain);

  int proc_fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
  ck_assert_int_ge(proc_fd, 0);
  sbx_resolver_root roots[] = {{"/proc", proc_fd}};
  GError *error = NULL;
  sbx_resolver *r = sbx_resolver_new_with_roots(list, roots, 1, &error);
  ck_assert_msg(r != NULL, "%s", error ? error->message : "");
  close(proc_fd);
  int fd = sbx_resolver_open(r, getpid(), status, O_RDONLY, 0, &d);
  ck_assert_int_ge(fd, 0);
  g_autofree char *text = broker_test_read_fd(fd);
  g_autofree char *line = g_strdup_printf("\nPid:\t%d\n", (int)child);
  ck_assert_ptr_nonnull(strstr(text, line));
  close(fd);
  g_autofree char *thread =
      g_strdup_printf("/proc/%d/task/%d/stat", (int)child, (int)child);
  fd = sbx_resolver_open(r, getpid(), thread, O_RDONLY, 0, &d);
  ck_assert_int_ge(fd, 0);
  close(fd);
  static const char *const closed[] = {"environ", "mem", "maps", "fd",
                                       "task/1/environ"};
  for (size_t i = 0; i < G_N_ELEMENTS(closed); i++) {
    g_autofree char *p = g_strdup_printf("/proc/%d/%s", (int)child, closed[i]);
    ck_assert_int_eq(sbx_resolver_open(r, getpid(), p, O_RDONLY, 0, &d),
                     -EACCES);
    ck_assert(!d.granted);
  }
  /* The requester's own directory is all its own. */
  fd = sbx_resolver_open(r, getpid(), "/proc/self/environ", O_RDONLY, 0, &d);
  ck_assert_int_ge(fd, 0);
  close(fd);
  ck_assert_int_lt(sbx_resolver_open(r, getpid(), root, O_RDONLY, 0, &d), 0);
  sbx_resolver_free(r);
  sbx_allowlist_free(list);
  kill(child, SIGKILL);
  waitpid(child, NULL, 0);
}
END_TEST

/* A root given for "/" is the requesters' tree: every absolute path, and
 * every symbolic link on the way, is looked up beneath it, not in the
 * caller's own tree. */
START_TEST(broker_resolver_looks_every_path_up_beneath_a_root_given_for_slash) {
  g_autofree char *made = g_dir_make_tmp("sbx-base-XXXXXX", NULL);
  ck_assert_ptr_nonnull(made);
  g_autofree char *top = realpath(made, NULL);
  g_autofree char *top_etc = g_build_filename(top, "etc", NULL);
  ck_assert_int_eq(g_mkdir_with_parents(top_etc, 0700), 0);
  g_autofree char *own = g_build_filename(top_etc, "hostname", NULL);
  ck_assert(g_file_set_contents(own, "theirs", -1, NULL));
  g_autofree char *link = g_build_filename(top_etc, "via-link", NULL);
  ck_assert_int_eq(symlink("/etc/hostname", link), 0);
  sbx_allowlist *list = sbx_allowlist_new("t");
  ck_assert(sbx_allowlist_add_rule(list, "read /etc/", NULL));
  int base = open(top, O_PATH | O_DIRECTORY | O_CLOEXEC);
  ck_assert_int_ge(base, 0);
  sbx_resolver_root roots[] = {{"/", base}};
  GError *error = NULL;
  sbx_resolver *r = sbx_resolver_new_with_roots(list, roots, 1, &error);
  ck_assert_msg(r != NULL, "%s", error ? error->message : "");
  close(base);
  static const char *const paths[] = {"/etc/hostname", "/etc/via-link"};
  for (size_t i = 0; i < G_N_ELEMENTS(paths); i++) {
    int fd = sbx_resolver_open(r, getpid(), paths[i], O_RDONLY, 0, NULL);
    ck_assert_int_ge(fd, 0);
    g_autofree char *got = broker_test_read_fd(fd);
    ck_assert_str_eq(got, "theirs");
    close(fd);
  }
  /* Control: without the root, the caller's own /etc/hostname. */
  sbx_resolver *plain = sbx_resolver_new(list, NULL);
  ck_assert_ptr_nonnull(plain);
  int fd =
      sbx_resolver_open(plain, getpid(), "/etc/hostname", O_RDONLY, 0, NULL);
  ck_assert_int_ge(fd, 0);
  g_autofree char *host = broker_test_read_fd(fd);
  ck_assert_str_ne(host, "theirs");
  close(fd);
  sbx_resolver_free(plain);
  sbx_resolver_free(r);
  sbx_allowlist_free(list);
  g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", top);
  ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* S39: a link in a directory the worker may not list leads to an allowed
 * file; following it would tell the worker which names exist there. */
START_TEST(broker_resolver_decides_on_every_directory_it_walks) {
  fixture f;
  fixture_make(&f);
  char *hidden = broker_test_path(&f.t, "hidden");
  char *link = broker_test_path(&f.t, "hidden/alternative");
  char *missing = broker_test_path(&f.t, "hidden/nothing");
  ck_assert_int_eq(mkdir(hidden, 0755), 0);
  ck_assert_int_eq(symlink(f.t.good_file, link), 0);
  /* Control: followed directly, the link reaches the allowed file. */
  struct stat want, st;
  ck_assert_int_eq(stat(f.t.good_file, &want), 0);
  int direct = open(link, O_RDONLY | O_CLOEXEC);
  ck_assert(broker_test_same_file(direct, &want));
  close(direct);
  /* Through the resolver, the link and a missing name look alike. */
  sbx_decision d;
  ck_assert_int_eq(sbx_resolver_stat(f.r, getpid(), link, true, &st, &d),
                   -EACCES);
  ck_assert(!d.granted);
  ck_assert_str_eq(d.reason, "not in the allowlist");
  ck_assert_int_eq(sbx_resolver_stat(f.r, getpid(), missing, true, &st, &d),
                   -EACCES);
  ck_assert_str_eq(d.reason, "not in the allowlist");
  ck_assert_int_eq(ropen(&f, link, O_RDONLY, 0, &d), -EACCES);
  char buf[PATH_MAX];
  ck_assert_int_eq(
      sbx_resolver_readlink(f.r, getpid(), link, buf, sizeof buf, &d), -EACCES);
  /* A link inside an allowed tree that leads through the hidden one: each
   * hop is decided where it is. */
  char *via = broker_test_path(&f.t, "good/via");
  ck_assert_int_eq(symlink(link, via), 0);
  ck_assert_int_eq(ropen(&f, via, O_RDONLY, 0, &d), -EACCES);
  /* Where the allowlist lets the worker see the directory, it is followed. */
  sbx_allowlist *list = broker_test_tree_allowlist(&f.t, "t");
  GError *error = NULL;
  char *hidden_dir = g_strconcat(hidden, "/", NULL);
  ck_assert(sbx_allowlist_add(list, hidden_dir, SBX_PERM_STAT, &error));
  sbx_resolver *r = sbx_resolver_new(list, &error);
  ck_assert_ptr_nonnull(r);
  int fd = sbx_resolver_open(r, getpid(), link, O_RDONLY, 0, &d);
  ck_assert_msg(fd >= 0, "%s", d.reason);
  ck_assert(broker_test_same_file(fd, &want));
  close(fd);
  fd = sbx_resolver_open(r, getpid(), via, O_RDONLY, 0, &d);
  ck_assert_msg(fd >= 0, "%s", d.reason);
  close(fd);
  sbx_resolver_free(r);
  sbx_allowlist_free(list);
  g_free(hidden_dir);
  g_free(via);
  g_free(missing);
  g_free(link);
  g_free(hidden);
  fixture_free(&f);
}
END_TEST

START_TEST(broker_resolver_refuses_writes_through_hard_links) {
  fixture f;
  fixture_make(&f);
  char *hl = broker_test_path(&f.t, "rw/hardlink");
  ck_assert_int_eq(link(f.t.canary, hl), 0);
  sbx_decision d;
  ck_assert_int_eq(ropen(&f, hl, O_WRONLY, 0, &d), -EACCES);
  ck_assert_str_eq(d.reason, "write to a file with several hard links");
  ck_assert_int_eq(ropen(&f, hl, O_WRONLY | O_TRUNC, 0, &d), -EACCES);
  ck_assert_int_eq(ropen(&f, hl, O_RDWR | O_CREAT, 0644, &d), -EACCES);
  char *s = NULL;
  ck_assert(g_file_get_contents(f.t.canary, &s, NULL, NULL));
  ck_assert_str_eq(s, "canary"); /* not truncated */
  g_free(s);
  /* Control: the same writes to a file with one link succeed. */
  int fd = ropen(&f, f.t.existing, O_WRONLY | O_TRUNC, 0, &d);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(write(fd, "new", 3), 3);
  close(fd);
  ck_assert(g_file_get_contents(f.t.existing, &s, NULL, NULL));
  ck_assert_str_eq(s, "new");
  g_free(s);
  g_free(hl);
  fixture_free(&f);
}
END_TEST

static pid_t spawn_sleeper(void) {
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    pause();
    _exit(0);
  }
  return pid;
}

static void reap(pid_t pid) {
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
}

START_TEST(broker_resolver_means_the_worker_by_proc_self) {
  sbx_allowlist *list = sbx_allowlist_new("t");
  GError *error = NULL;
  ck_assert(sbx_allowlist_add(list, "/proc/self/", SBX_PERM_READ_ONLY, &error));
  sbx_resolver *r = sbx_resolver_new(list, &error);
  ck_assert_ptr_nonnull(r);
  pid_t worker = spawn_sleeper();
  int fd = sbx_resolver_open(r, worker, "/proc/self/status", O_RDONLY, 0, NULL);
  ck_assert_int_ge(fd, 0);
  char *s = broker_test_read_fd(fd);
  close(fd);
  char *want = g_strdup_printf("\nPid:\t%d\n", (int)worker);
  ck_assert_msg(strstr(s, want) != NULL, "status is not the worker's");
  g_free(want);
  g_free(s);
  /* /proc/<worker pid> is the same thing. */
  char *by_pid = g_strdup_printf("/proc/%d/status", (int)worker);
  fd = sbx_resolver_open(r, worker, by_pid, O_RDONLY, 0, NULL);
  ck_assert_int_ge(fd, 0);
  close(fd);
  /* Another process's directory (ours) is refused. */
  char *other = g_strdup_printf("/proc/%d/status", (int)getpid());
  sbx_decision d;
  ck_assert_int_eq(sbx_resolver_open(r, worker, other, O_RDONLY, 0, &d),
                   -EACCES);
  ck_assert_str_eq(d.reason, "another process's /proc directory");
  ck_assert_int_eq(
      sbx_resolver_open(r, worker, "/proc/thread-self/status", O_RDONLY, 0, &d),
      -EACCES);
  ck_assert_int_eq(
      sbx_resolver_open(r, 0, "/proc/self/status", O_RDONLY, 0, &d), -EACCES);
  reap(worker);
  g_free(by_pid);
  g_free(other);
  sbx_resolver_free(r);
  sbx_allowlist_free(list);
}
END_TEST

START_TEST(broker_resolver_refuses_magic_links) {
  sbx_allowlist *list = sbx_allowlist_new("t");
  GError *error = NULL;
  ck_assert(sbx_allowlist_add(list, "/proc/self/", SBX_PERM_READ_ONLY, &error));
  sbx_resolver *r = sbx_resolver_new(list, &error);
  ck_assert_ptr_nonnull(r);
  pid_t worker = spawn_sleeper();
  const char *magic[] = {"/proc/self/root/etc/passwd", "/proc/self/exe",
                         "/proc/self/cwd/etc/passwd", "/proc/self/fd/0",
                         "/proc/self/root"};
  for (size_t i = 0; i < G_N_ELEMENTS(magic); i++) {
    sbx_decision d;
    int fd = sbx_resolver_open(r, worker, magic[i], O_RDONLY, 0, &d);
    ck_assert_msg(fd == -EACCES, "%s gave %d", magic[i], fd);
    ck_assert(!d.granted);
  }
  /* Control: the same process directory serves ordinary files, and the
   * magic link itself can be read as a link. */
  int fd =
      sbx_resolver_open(r, worker, "/proc/self/cmdline", O_RDONLY, 0, NULL);
  ck_assert_int_ge(fd, 0);
  close(fd);
  char buf[PATH_MAX];
  ck_assert_int_gt(sbx_resolver_readlink(r, worker, "/proc/self/exe", buf,
                                         sizeof(buf), NULL),
                   0);
  reap(worker);
  sbx_resolver_free(r);
  sbx_allowlist_free(list);
}
END_TEST

START_TEST(broker_resolver_checks_open_flags) {
  fixture f;
  fixture_make(&f);
  sbx_decision d;
  ck_assert_int_eq(ropen(&f, f.t.good_file, O_PATH, 0, &d), -EACCES);
  ck_assert_int_eq(ropen(&f, f.t.good_file, O_RDONLY | O_TRUNC, 0, &d),
                   -EACCES);
  ck_assert_int_eq(ropen(&f, f.t.good_file, O_WRONLY, 0, &d), -EACCES);
  ck_assert_int_eq(ropen(&f, f.t.good_file, O_RDWR, 0, &d), -EACCES);
  char *new_in_good = broker_test_path(&f.t, "good/new");
  ck_assert_int_eq(ropen(&f, new_in_good, O_WRONLY | O_CREAT, 0644, &d),
                   -EACCES);
  ck_assert_int_eq(access(new_in_good, F_OK), -1); /* nothing created */
  ck_assert_int_eq(ropen(&f, f.t.good, O_TMPFILE | O_RDWR, 0600, &d), -EACCES);
  ck_assert_int_eq(ropen(&f, f.t.good_file, O_RDONLY | (1 << 30), 0, &d),
                   -EINVAL);
  ck_assert_int_eq(ropen(&f, f.t.good_file, O_ACCMODE, 0, &d), -EINVAL);
  ck_assert_int_eq(ropen(&f, f.t.good_file, O_RDONLY | O_ASYNC, 0, &d),
                   -EACCES);
  /* Controls: the same flags where the allowlist grants them. */
  int fd = ropen(&f, f.t.existing, O_RDWR, 0, &d);
  ck_assert_int_ge(fd, 0);
  close(fd);
  fd = ropen(&f, f.t.rw, O_TMPFILE | O_RDWR, 0600, &d);
  ck_assert_int_ge(fd, 0);
  close(fd);
  char *new_in_rw = broker_test_path(&f.t, "rw/new");
  fd = ropen(&f, new_in_rw, O_WRONLY | O_CREAT | O_EXCL, 0777, &d);
  ck_assert_int_ge(fd, 0);
  close(fd);
  struct stat st;
  ck_assert_int_eq(stat(new_in_rw, &st), 0);
  ck_assert_int_eq(st.st_mode & 07777, 0755);
  fd = ropen(&f, f.t.good_file, O_RDONLY | O_NONBLOCK | O_NOFOLLOW, 0, &d);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_ne(fcntl(fd, F_GETFL) & O_NONBLOCK, 0); /* asked: kept */
  close(fd);
  g_free(new_in_good);
  g_free(new_in_rw);
  fixture_free(&f);
}
END_TEST

START_TEST(broker_resolver_honours_the_umask_and_drops_special_bits) {
  fixture f;
  fixture_make(&f);
  sbx_allowlist_set_umask(f.list, 077);
  char *p = broker_test_path(&f.t, "rw/private");
  int fd = ropen(&f, p, O_WRONLY | O_CREAT, 06777, NULL);
  ck_assert_int_ge(fd, 0);
  close(fd);
  struct stat st;
  ck_assert_int_eq(stat(p, &st), 0);
  ck_assert_int_eq(st.st_mode & 07777, 0700);
  char *d = broker_test_path(&f.t, "rw/dir");
  ck_assert_int_eq(sbx_resolver_mkdir(f.r, getpid(), d, 07777, NULL), 0);
  ck_assert_int_eq(stat(d, &st), 0);
  ck_assert_int_eq(st.st_mode & 07777, 0700);
  g_free(p);
  g_free(d);
  fixture_free(&f);
}
END_TEST

START_TEST(broker_resolver_does_not_hang_or_open_special_files) {
  fixture f;
  fixture_make(&f);
  char *fifo = broker_test_path(&f.t, "good/fifo");
  ck_assert_int_eq(mkfifo(fifo, 0644), 0);
  sbx_decision d;
  /* A blocking open of a FIFO without a writer would hang: it must not. */
  ck_assert_int_eq(ropen(&f, fifo, O_RDONLY, 0, &d), -EACCES);
  ck_assert_str_eq(d.reason, "not a regular file or directory");
  /* A device below a recursive entry is refused too. */
  sbx_allowlist *list = sbx_allowlist_new("t");
  GError *error = NULL;
  ck_assert(sbx_allowlist_add(list, "/dev/", SBX_PERM_READ_WRITE, &error));
  sbx_resolver *r = sbx_resolver_new(list, &error);
  ck_assert_int_eq(sbx_resolver_open(r, getpid(), "/dev/null", O_RDWR, 0, &d),
                   -EACCES);
  sbx_resolver_free(r);
  sbx_allowlist_free(list);
  /* Control: rules that name them exactly open them, without blocking. */
  list = sbx_allowlist_new("t");
  ck_assert(sbx_allowlist_add(list, "/dev/null", SBX_PERM_READ_WRITE, &error));
  ck_assert(sbx_allowlist_add(list, fifo, SBX_PERM_READ_ONLY, &error));
  r = sbx_resolver_new(list, &error);
  int fd = sbx_resolver_open(r, getpid(), "/dev/null", O_RDWR, 0, &d);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(write(fd, "x", 1), 1);
  ck_assert_int_eq(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
  close(fd);
  fd = sbx_resolver_open(r, getpid(), fifo, O_RDONLY, 0, &d);
  ck_assert_int_ge(fd, 0);
  close(fd);
  sbx_resolver_free(r);
  sbx_allowlist_free(list);
  g_free(fifo);
  fixture_free(&f);
}
END_TEST

START_TEST(broker_resolver_creates_and_removes_only_in_create_trees) {
  fixture f;
  fixture_make(&f);
  pid_t me = getpid();
  char *dir = broker_test_path(&f.t, "rw/d");
  char *file = broker_test_path(&f.t, "rw/d/f");
  char *moved = broker_test_path(&f.t, "rw/moved");
  char *out_of_tree = broker_test_path(&f.t, "good/moved");
  ck_assert_int_eq(sbx_resolver_mkdir(f.r, me, dir, 0755, NULL), 0);
  ck_assert_int_eq(sbx_resolver_mkdir(f.r, me, dir, 0755, NULL), -EEXIST);
  int fd = sbx_resolver_open(f.r, me, file, O_WRONLY | O_CREAT, 0644, NULL);
  ck_assert_int_ge(fd, 0);
  close(fd);
  sbx_decision d;
  /* B6: both paths of a rename are checked. */
  ck_assert_int_eq(sbx_resolver_rename(f.r, me, file, out_of_tree, 0, &d),
                   -EACCES);
  ck_assert_int_eq(access(file, F_OK), 0);
  ck_assert_int_eq(sbx_resolver_rename(f.r, me, f.t.good_file, moved, 0, &d),
                   -EACCES);
  ck_assert_int_eq(access(f.t.good_file, F_OK), 0);
  ck_assert_int_eq(sbx_resolver_rename(f.r, me, file, moved, 0, &d), 0);
  ck_assert_int_eq(access(moved, F_OK), 0);
  ck_assert_int_eq(
      sbx_resolver_rename(f.r, me, moved, f.t.existing, RENAME_NOREPLACE, &d),
      -EEXIST);
  ck_assert_int_eq(sbx_resolver_unlink(f.r, me, f.t.good_file, &d), -EACCES);
  ck_assert_int_eq(access(f.t.good_file, F_OK), 0);
  ck_assert_int_eq(sbx_resolver_unlink(f.r, me, moved, &d), 0);
  ck_assert_int_eq(sbx_resolver_rmdir(f.r, me, dir, &d), 0);
  ck_assert_int_eq(access(dir, F_OK), -1);
  /* The tree's own root cannot be removed. */
  ck_assert_int_eq(sbx_resolver_rmdir(f.r, me, f.t.rw, &d), -EACCES);
  ck_assert_int_eq(sbx_resolver_mkdir(f.r, me, out_of_tree, 0755, &d), -EACCES);
  g_free(dir);
  g_free(file);
  g_free(moved);
  g_free(out_of_tree);
  fixture_free(&f);
}
END_TEST

START_TEST(broker_resolver_temporary_files_leave_no_name) {
  fixture f;
  fixture_make(&f);
  pid_t me = getpid();
  char *p = broker_test_path(&f.t, "tmp/scratch.XXXXXX");
  sbx_decision d;
  int fd = sbx_resolver_open(f.r, me, p, O_RDWR | O_CREAT | O_EXCL, 0600, &d);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(write(fd, "scratch", 7), 7);
  char *s = broker_test_read_fd(fd);
  ck_assert_str_eq(s, "scratch");
  g_free(s);
  struct stat st;
  ck_assert_int_eq(fstat(fd, &st), 0);
  ck_assert_int_eq(st.st_nlink, 0);
  close(fd);
  GDir *dir = g_dir_open(f.t.tmp, 0, NULL);
  ck_assert_ptr_null(g_dir_read_name(dir)); /* nothing stayed behind */
  g_dir_close(dir);
  /* A temporary right is not a create right. */
  ck_assert_int_eq(sbx_resolver_open(f.r, me, p, O_RDWR | O_CREAT, 0600, &d),
                   -EACCES);
  ck_assert_int_eq(sbx_resolver_mkdir(f.r, me, p, 0700, &d), -EACCES);
  ck_assert_int_eq(sbx_resolver_unlink(f.r, me, p, &d), -EACCES);
  g_free(p);
  fixture_free(&f);
}
END_TEST

START_TEST(broker_resolver_states_what_a_worker_learns) {
  fixture f;
  fixture_make(&f);
  pid_t me = getpid();
  sbx_decision d;
  char *missing_inside = broker_test_path(&f.t, "good/missing");
  char *missing_outside = broker_test_path(&f.t, "missing");
  /* Inside the allowlist the file system answers. */
  ck_assert_int_eq(sbx_resolver_open(f.r, me, missing_inside, O_RDONLY, 0, &d),
                   -ENOENT);
  ck_assert(d.granted);
  /* Outside, existing or not, the answer is the same denial. */
  ck_assert_int_eq(sbx_resolver_open(f.r, me, missing_outside, O_RDONLY, 0, &d),
                   -EACCES);
  ck_assert(!d.granted);
  ck_assert_int_eq(sbx_resolver_open(f.r, me, f.t.canary, O_RDONLY, 0, &d),
                   -EACCES);
  /* With denied-errno ENOENT, refusals look like absence. */
  GError *error = NULL;
  ck_assert(sbx_allowlist_set_denied_errno(f.list, ENOENT, &error));
  ck_assert_int_eq(sbx_resolver_open(f.r, me, f.t.canary, O_RDONLY, 0, &d),
                   -ENOENT);
  ck_assert(!d.granted);
  ck_assert(!sbx_allowlist_set_denied_errno(f.list, EIO, &error));
  g_clear_error(&error);
  g_free(missing_inside);
  g_free(missing_outside);
  fixture_free(&f);
}
END_TEST

/* A resolver over one entry, good/sub/, that lets the directories above
 * it be examined (stat-intermediate) and nothing else. */
static sbx_resolver *intermediate_resolver(fixture *f, sbx_allowlist **list,
                                           char **sub) {
  GError *error = NULL;
  *list = sbx_allowlist_new("t");
  *sub = broker_test_path(&f->t, "good/sub/");
  ck_assert(sbx_allowlist_add(*list, *sub, SBX_PERM_STAT_INTERMEDIATE, &error));
  sbx_resolver *r = sbx_resolver_new(*list, &error);
  ck_assert_ptr_nonnull(r);
  return r;
}

START_TEST(broker_resolver_stats_intermediate_directories_only) {
  fixture f;
  fixture_make(&f);
  sbx_allowlist *list;
  char *sub;
  sbx_resolver *r = intermediate_resolver(&f, &list, &sub);
  pid_t me = getpid();
  struct stat st, want;
  ck_assert_int_eq(stat(f.t.good, &want), 0);
  ck_assert_int_eq(sbx_resolver_stat(r, me, f.t.good, false, &st, NULL), 0);
  ck_assert_int_eq(st.st_ino, want.st_ino);
  ck_assert_int_eq(sbx_resolver_stat(r, me, f.t.root, true, &st, NULL), 0);
  ck_assert_int_eq(sbx_resolver_stat(r, me, "/", true, &st, NULL), 0);
  ck_assert_int_eq(sbx_resolver_access(r, me, f.t.good, F_OK, 0, NULL), 0);
  char buf[16];
  ck_assert_int_eq(
      sbx_resolver_readlink(r, me, f.t.good, buf, sizeof(buf), NULL),
      -EINVAL); /* a directory, not a link: what realpath needs */
  /* Stat only: no open, no read, and no sibling. */
  ck_assert_int_eq(
      sbx_resolver_open(r, me, f.t.good, O_RDONLY | O_DIRECTORY, 0, NULL),
      -EACCES);
  ck_assert_int_eq(sbx_resolver_access(r, me, f.t.good, R_OK, 0, NULL),
                   -EACCES);
  ck_assert_int_eq(sbx_resolver_stat(r, me, f.t.good_file, true, &st, NULL),
                   -EACCES);
  ck_assert_int_eq(sbx_resolver_stat(r, me, f.t.rw, true, &st, NULL), -EACCES);
  /* The entry itself: stat, and files below it. */
  ck_assert_int_eq(sbx_resolver_stat(r, me, f.t.deep, true, &st, NULL), 0);
  ck_assert_int_eq(sbx_resolver_open(r, me, f.t.deep, O_RDONLY, 0, NULL),
                   -EACCES);
  sbx_resolver_free(r);
  sbx_allowlist_free(list);
  g_free(sub);
  fixture_free(&f);
}
END_TEST

/* sbx-run's answer for names outside every grant: a look (stat, read)
 * at a name no entry lets the requester even stat is missing, existing
 * or not; a name it may stat, and every change, keep the denied errno. */
START_TEST(broker_resolver_answers_unseen_names_with_their_own_errno) {
  fixture f;
  fixture_make(&f);
  sbx_allowlist *list;
  char *sub;
  sbx_resolver *r = intermediate_resolver(&f, &list, &sub);
  ck_assert(!sbx_resolver_set_unlisted_errno(r, EIO));
  ck_assert(!sbx_resolver_set_unlisted_errno(NULL, ENOENT));
  ck_assert_int_eq(sbx_resolver_unlisted_errno(r), EACCES);
  ck_assert(sbx_resolver_set_unlisted_errno(r, ENOENT));
  ck_assert_int_eq(sbx_resolver_unlisted_errno(r), ENOENT);
  pid_t me = getpid();
  sbx_decision d;
  char *missing = broker_test_path(&f.t, "missing");
  struct stat st;
  /* Unseen, existing or not: missing, and still a denial. */
  ck_assert_int_eq(sbx_resolver_open(r, me, f.t.canary, O_RDONLY, 0, &d),
                   -ENOENT);
  ck_assert(!d.granted);
  ck_assert_int_eq(sbx_resolver_open(r, me, missing, O_RDONLY, 0, &d), -ENOENT);
  ck_assert(!d.granted);
  ck_assert_int_eq(sbx_resolver_stat(r, me, f.t.canary, true, &st, &d),
                   -ENOENT);
  /* Seen (stat-able) but not readable: refused. */
  ck_assert_int_eq(sbx_resolver_stat(r, me, f.t.good, true, &st, &d), 0);
  ck_assert_int_eq(
      sbx_resolver_open(r, me, f.t.good, O_RDONLY | O_DIRECTORY, 0, &d),
      -EACCES);
  /* A change is refused, seen or not. */
  ck_assert_int_eq(sbx_resolver_open(r, me, f.t.canary, O_WRONLY, 0, &d),
                   -EACCES);
  ck_assert_int_eq(sbx_resolver_mkdir(r, me, missing, 0700, &d), -EACCES);
  ck_assert_int_eq(access(missing, F_OK), -1);
  sbx_resolver_free(r);
  sbx_allowlist_free(list);
  g_free(sub);
  g_free(missing);
  fixture_free(&f);
}
END_TEST

START_TEST(broker_resolver_checks_access_modes) {
  fixture f;
  fixture_make(&f);
  pid_t me = getpid();
  ck_assert_int_eq(sbx_resolver_access(f.r, me, f.t.good_file, F_OK, 0, NULL),
                   0);
  ck_assert_int_eq(sbx_resolver_access(f.r, me, f.t.good_file, R_OK, 0, NULL),
                   0);
  ck_assert_int_eq(sbx_resolver_access(f.r, me, f.t.good_file, W_OK, 0, NULL),
                   -EACCES);
  ck_assert_int_eq(sbx_resolver_access(f.r, me, f.t.existing, W_OK, 0, NULL),
                   0);
  ck_assert_int_eq(sbx_resolver_access(f.r, me, f.t.existing, X_OK, 0, NULL),
                   -EACCES);
  ck_assert_int_eq(sbx_resolver_access(f.r, me, f.t.existing, 8, 0, NULL),
                   -EINVAL);
  ck_assert_int_eq(sbx_resolver_access(f.r, me, f.t.canary, F_OK, 0, NULL),
                   -EACCES);
  fixture_free(&f);
}
END_TEST

START_TEST(broker_resolver_reads_links_and_statx) {
  fixture f;
  fixture_make(&f);
  pid_t me = getpid();
  char *l = broker_test_path(&f.t, "good/l");
  ck_assert_int_eq(symlink("sub/deep", l), 0);
  char buf[64];
  ssize_t n = sbx_resolver_readlink(f.r, me, l, buf, sizeof(buf), NULL);
  ck_assert_int_eq(n, 8);
  ck_assert(memcmp(buf, "sub/deep", 8) == 0);
  ck_assert_int_eq(sbx_resolver_readlink(f.r, me, l, buf, 3, NULL), 3);
  struct statx stx;
  ck_assert_int_eq(
      sbx_resolver_statx(f.r, me, l, 0, STATX_BASIC_STATS, &stx, NULL), 0);
  ck_assert(S_ISREG(stx.stx_mode));
  ck_assert_int_eq(stx.stx_size, 4);
  ck_assert_int_eq(sbx_resolver_statx(f.r, me, l, AT_SYMLINK_NOFOLLOW,
                                      STATX_BASIC_STATS, &stx, NULL),
                   0);
  ck_assert(S_ISLNK(stx.stx_mode));
  ck_assert_int_eq(
      sbx_resolver_statx(f.r, me, f.t.canary, 0, STATX_BASIC_STATS, &stx, NULL),
      -EACCES);
  g_free(l);
  fixture_free(&f);
}
END_TEST

/* A grantable entry grants nothing itself, and is the ceiling for the
 * rules one worker may get: same place or below, kinds it names. */
START_TEST(broker_allowlist_grantable_entries_only_bound_grants) {
  GError *error = NULL;
  sbx_allowlist *type = sbx_allowlist_new("job");
  ck_assert(!sbx_allowlist_add_rule(type, "grantable /srv/jobs/", &error));
  ck_assert_msg(strstr(error->message, "'grantable' needs the kinds"), "%s",
                error->message);
  g_clear_error(&error);
  ck_assert_msg(
      sbx_allowlist_add_rule(type, "grantable,read /srv/jobs/", &error), "%s",
      error ? error->message : "");
  ck_assert_msg(
      sbx_allowlist_add_rule(type, "grantable,create /srv/out/a", &error), "%s",
      error ? error->message : "");
  ck_assert(sbx_allowlist_entry(type, 0)->rights & SBX_PERM_GRANTABLE);
  sbx_match m;
  const char *inside = "/srv/jobs/42/in.png";
  ck_assert(
      !sbx_allowlist_match(type, inside, strlen(inside), 0, SBX_PERM_STAT, &m));
  ck_assert(!sbx_allowlist_match(type, "/srv/out/a", 10, 0, SBX_PERM_READ, &m));

  sbx_allowlist *own = sbx_allowlist_new("job");
  const char *rules[] = {
      "read /srv/jobs/42/",   "read /srv/jobs/",
      "create /srv/jobs/42/", "read /srv/jobs-other/",
      "read /srv/",           "create /srv/out/a",
      "create /srv/out/a/",   "stat-intermediate /srv/jobs/4"};
  const bool granted[] = {true, true, false, false, false, true, false, false};
  for (size_t i = 0; i < G_N_ELEMENTS(rules); i++) {
    size_t at = sbx_allowlist_n_entries(own);
    ck_assert_msg(sbx_allowlist_add_rule(own, rules[i], &error), "%s",
                  error ? error->message : "");
    bool got = sbx_allowlist_grant_ceiling(type, sbx_allowlist_entry(own, at));
    ck_assert_msg(got == granted[i], "%s: %s", rules[i],
                  got ? "granted" : "refused");
  }

  /* The merged list: the type's entries, then the worker's, which match. */
  sbx_allowlist *merged = sbx_allowlist_merged(type, own);
  ck_assert_int_eq(
      sbx_allowlist_n_entries(merged),
      sbx_allowlist_n_entries(type) + sbx_allowlist_n_entries(own));
  ck_assert_str_eq(sbx_allowlist_name(merged), "job");
  ck_assert(sbx_allowlist_match(merged, inside, strlen(inside), 0,
                                SBX_PERM_READ, &m));
  ck_assert_int_eq(m.kind, SBX_MATCH_ENTRY);
  ck_assert_int_ge(m.entry, sbx_allowlist_n_entries(type));
  ck_assert(
      !sbx_allowlist_match(type, inside, strlen(inside), 0, SBX_PERM_READ, &m));
  sbx_allowlist_free(merged);
  sbx_allowlist_free(own);
  sbx_allowlist_free(type);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("broker_permissions");
  TCase *path = tcase_create("path");
  tcase_add_test(path, broker_path_accepts_absolute_normalised_paths);
  tcase_add_test(path, broker_path_refuses_dot_dot_components);
  tcase_add_test(path, broker_path_refuses_dot_components);
  tcase_add_test(path, broker_path_refuses_empty_components);
  tcase_add_test(path, broker_path_refuses_trailing_slash);
  tcase_add_test(path, broker_path_refuses_relative_paths);
  tcase_add_test(path, broker_path_refuses_embedded_nul);
  tcase_add_test(path, broker_path_refuses_paths_of_path_max_bytes);
  tcase_add_test(path, broker_path_matches_on_component_boundaries);
  tcase_add_test(path, broker_path_joins_symlink_targets_lexically);
  tcase_add_test(path, broker_path_finds_dotdot_components);
  suite_add_tcase(s, path);
  TCase *list = tcase_create("allowlist");
  tcase_add_test(list, broker_allowlist_canonicalises_merged_usr);
  tcase_add_test(list, broker_allowlist_admits_the_target_of_an_exact_symlink);
  tcase_add_test(list,
                 broker_allowlist_refuses_entries_it_cannot_state_exactly);
  tcase_add_test(list, broker_allowlist_parse_is_all_or_nothing);
  tcase_add_test(list, broker_allowlist_keeps_proc_self_for_the_worker);
  tcase_add_test(list, broker_allowlist_matches_rights_and_boundaries);
  tcase_add_test(list, broker_allowlist_grantable_entries_only_bound_grants);
  suite_add_tcase(s, list);
  TCase *res = tcase_create("resolver");
  tcase_add_test(res, broker_resolver_opens_an_allowed_file);
  tcase_add_test(res, broker_resolver_denial_names_the_target_and_the_rule);
  tcase_add_test(res, broker_resolver_refuses_every_non_canonical_spelling);
  tcase_add_test(res, broker_resolver_refuses_a_sibling_prefix);
  tcase_add_test(res, broker_resolver_refuses_symlink_out_of_tree);
  tcase_add_test(res, broker_resolver_follows_links_into_other_allowed_trees);
  tcase_add_test(res,
                 broker_resolver_resolves_beneath_a_directory_given_for_a_root);
  tcase_add_test(
      res, broker_resolver_reads_other_processes_in_a_procfs_given_as_root);
  tcase_add_test(
      res, broker_resolver_looks_every_path_up_beneath_a_root_given_for_slash);
  tcase_add_test(res, broker_resolver_decides_on_every_directory_it_walks);
  tcase_add_test(res, broker_resolver_refuses_writes_through_hard_links);
  tcase_add_test(res, broker_resolver_means_the_worker_by_proc_self);
  tcase_add_test(res, broker_resolver_refuses_magic_links);
  tcase_add_test(res, broker_resolver_checks_open_flags);
  tcase_add_test(res, broker_resolver_honours_the_umask_and_drops_special_bits);
  tcase_add_test(res, broker_resolver_does_not_hang_or_open_special_files);
  tcase_add_test(res, broker_resolver_creates_and_removes_only_in_create_trees);
  tcase_add_test(res, broker_resolver_temporary_files_leave_no_name);
  tcase_add_test(res, broker_resolver_states_what_a_worker_learns);
  tcase_add_test(res,
                 broker_resolver_answers_unseen_names_with_their_own_errno);
  tcase_add_test(res, broker_resolver_stats_intermediate_directories_only);
  tcase_add_test(res, broker_resolver_checks_access_modes);
  tcase_add_test(res, broker_resolver_reads_links_and_statx);
  tcase_add_test(res, broker_resolver_failing_part_way_closes_only_its_own);
  suite_add_tcase(s, res);
  return s;
}

int main(void) {
  umask(022); /* the modes asserted below assume it */
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_ENV);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
