/* Direct opens end to end: a type whose profile marks a tree
 * "direct,read" opens files there itself under Landlock, and everything
 * else still goes to the broker. The escapes are tried on both paths: the
 * trapped open(2) (which tries the direct open, then the broker) and
 * openat2 called by the worker itself, as a hostile worker would. Every
 * refusal has its control: the same open by the unsandboxed test, or the
 * allowed open in the same worker. Each test starts its own sandbox in
 * Check's forked child. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "sandbox/kernel/landlock/landlock.h"
#include "sandbox/tests/api/api_test_util.h"
#include "sbx/sbx.h"

/* base/ holds tree/ (direct), outside/ (read through the broker) and
 * secret/ (no rule). */
static char base[128];
static char tree[160], outside[160], secret[160], profile[192];

static void write_profile(void) {
  g_autofree char *text = g_strdup_printf(
      "[profile]\nseccomp=renderer.policy\nrequire=seccomp;broker\n"
      "[broker]\nrules=direct,read %s/;read %s/;"
      "direct,read /usr/lib/x86_64-linux-gnu/\n"
      "[namespaces]\nenter=user;pid;net;ipc;uts;mount;cgroup\n"
      "empty-root=true\n[landlock]\nenabled=true\n",
      tree, outside);
  ck_assert(g_file_set_contents(profile, text, -1, NULL));
}

static void setup(void) {
  g_strlcpy(base, "/tmp/sbx-direct-XXXXXX", sizeof base);
  ck_assert_ptr_nonnull(g_mkdtemp_full(base, 0755));
  g_snprintf(tree, sizeof tree, "%s/tree", base);
  g_snprintf(outside, sizeof outside, "%s/outside", base);
  g_snprintf(secret, sizeof secret, "%s/secret", base);
  g_snprintf(profile, sizeof profile, "%s/direct.profile", base);
  ck_assert_int_eq(g_mkdir(tree, 0755), 0);
  ck_assert_int_eq(g_mkdir(outside, 0755), 0);
  ck_assert_int_eq(g_mkdir(secret, 0755), 0);
  api_write_file(tree, "data", "direct\n");
  api_write_file(outside, "allowed", "brokered\n");
  api_write_file(secret, "key", "never\n");
  g_autofree char *out_link = g_build_filename(tree, "to-outside", NULL);
  g_autofree char *out_target = g_build_filename(outside, "allowed", NULL);
  ck_assert_int_eq(symlink(out_target, out_link), 0);
  g_autofree char *sec_link = g_build_filename(tree, "to-secret", NULL);
  g_autofree char *sec_target = g_build_filename(secret, "key", NULL);
  ck_assert_int_eq(symlink(sec_target, sec_link), 0);
  g_autofree char *hard = g_build_filename(tree, "hard-to-secret", NULL);
  ck_assert_int_eq(link(sec_target, hard), 0);
  write_profile();
}

static void remove_all(const char *dir) {
  GDir *d = g_dir_open(dir, 0, NULL);
  if (d) {
    const char *name;
    while ((name = g_dir_read_name(d))) {
      g_autofree char *path = g_build_filename(dir, name, NULL);
      if (g_file_test(path, G_FILE_TEST_IS_DIR) &&
          !g_file_test(path, G_FILE_TEST_IS_SYMLINK))
        remove_all(path);
      else
        g_unlink(path);
    }
    g_dir_close(d);
  }
  g_rmdir(dir);
}

static void teardown(void) {
  remove_all(base);
}

static int open_read(const char *path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return errno;
  char c;
  int err = read(fd, &c, 1) == 1 ? 0 : EIO;
  close(fd);
  return err;
}

/* What a hostile worker could call itself: openat2 with its own flags. */
static int openat2_flags(const char *path, uint64_t flags) {
  struct open_how how;
  memset(&how, 0, sizeof how);
  how.flags = flags | O_CLOEXEC;
  long fd = syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
  if (fd < 0)
    return errno;
  close((int)fd);
  return 0;
}

/* open(2) without waiting for a FIFO's writer. */
static int open_nonblock(const char *path) {
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return errno;
  close(fd);
  return 0;
}

/* truncate(2), as the worker or the test calls it. */
static int truncate_path(const char *path) {
  return truncate(path, 0) == 0 ? 0 : errno;
}

/* One payload step on path, as the worker runs it (entry_steps); the
 * test runs the same steps unsandboxed as controls. 0 or the errno. */
static int run_step(char op, const char *path) {
  switch (op) {
    case 'o':
      return open_read(path);
    case 'n':
      return open_nonblock(path);
    case '2':
      return openat2_flags(path, O_RDONLY);
    case 't':
      return openat2_flags(path, O_RDONLY | O_TRUNC);
    case 'r':
      return openat2_flags(path, O_RDWR | O_TRUNC);
    case 'T':
      return truncate_path(path);
    case 'c': {
      int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
      if (fd < 0)
        return errno;
      close(fd);
      return 0;
    }
    default:
      return openat2_flags(path, O_WRONLY);
  }
}

/* Payload lines "o PATH" (open(2): trapped, direct or brokered), "n PATH"
 * (the same, O_NONBLOCK, no read), "2 PATH" (openat2 read-only, by the
 * worker itself), "w PATH" (openat2 O_WRONLY), "t PATH" (openat2
 * O_RDONLY|O_TRUNC), "r PATH" (openat2 O_RDWR|O_TRUNC), "T PATH"
 * (truncate(2)), "c PATH" (open(2) O_WRONLY|O_TRUNC). One int per line
 * on fd 3: 0 or the errno. */
static int entry_steps(const sbx_worker_args *args) {
  g_autofree char *text = g_strndup(args->payload, args->payload_len);
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  for (char **l = lines; *l; l++) {
    if (strlen(*l) < 3)
      continue;
    const char *path = *l + 2;
    int err = run_step(**l, path);
    if (write(3, &err, sizeof err) != (ssize_t)sizeof err)
      return 90;
  }
  return 0;
}

/* Runs steps in one worker of the direct type; errs[i] for step i. */
static void run_steps(const char *steps, int *errs, size_t n) {
  static sbx_process_type t;
  t = (sbx_process_type)SBX_PROCESS_TYPE_INIT(.name = "direct",
                                              .profile = profile,
                                              .entry = entry_steps);
  sbx_sandbox_config config =
      SBX_SANDBOX_CONFIG_INIT(.types = &t, .n_types = 1);
  sbx_sandbox *s = NULL;
  GError *error = NULL;
  if (!sbx_sandbox_start(&config, &s, &error))
    ck_abort_msg("sbx_sandbox_start: %s", error->message);
  int out[2];
  ck_assert_int_eq(pipe(out), 0);
  int fds[] = {0, 1, 2, out[1]};
  sbx_spawn_config spawn =
      SBX_SPAWN_CONFIG_INIT(.process_type = "direct", .payload = steps,
                            .payload_len = strlen(steps), .fds = fds,
                            .n_fds = 4);
  pid_t pid = -1;
  if (!sbx_sandbox_spawn(s, &spawn, &pid, &error))
    ck_abort_msg("sbx_sandbox_spawn: %s", error->message);
  close(out[1]);
  size_t want = n * sizeof *errs, got = 0;
  while (got < want) {
    ssize_t r = read(out[0], (char *)errs + got, want - got);
    if (r <= 0)
      break;
    got += (size_t)r;
  }
  close(out[0]);
  sbx_worker_exit exit = SBX_WORKER_EXIT_INIT();
  ck_assert(sbx_sandbox_wait(s, pid, 20000, &exit, &error));
  ck_assert_msg(
      got == want && exit.reason == SBX_EXIT_NORMAL && exit.exit_code == 0,
      "worker answered %zu of %zu bytes, reason %d code %d: %s", got, want,
      exit.reason, exit.exit_code, exit.detail);
  sbx_sandbox_stop(s);
}

static bool landlock_present(void) {
  return sbx_landlock_abi_version() >= 1;
}

/* Controls: everything the worker is refused, the test itself reads. */
static void assert_unsandboxed_reads(void) {
  const char *names[] = {"data", "to-outside", "to-secret", "hard-to-secret"};
  for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
    g_autofree char *p = g_build_filename(tree, names[i], NULL);
    ck_assert_msg(open_read(p) == 0, "unsandboxed read of %s", p);
    ck_assert_msg(openat2_flags(p, O_RDONLY) == 0, "unsandboxed openat2 %s", p);
  }
  g_autofree char *key = g_build_filename(secret, "key", NULL);
  ck_assert_int_eq(open_read(key), 0);
}

START_TEST(a_worker_opens_its_direct_trees_itself_and_nothing_else) {
  if (!landlock_present())
    return; /* covered by without_landlock_every_open_is_brokered */
  assert_unsandboxed_reads();
  g_autofree char *steps = g_strdup_printf(
      "2 %s/data\n"                             /* 0 direct, by the kernel */
      "o %s/data\n"                             /* 1 trapped open: direct */
      "2 /usr/lib/x86_64-linux-gnu/libc.so.6\n" /* 2 */
      "2 %s/allowed\n"                          /* 3 read rule, not direct */
      "o %s/allowed\n"                          /* 4 the broker grants it */
      "2 %s/key\n"                              /* 5 no rule */
      "o %s/key\n"                              /* 6 the broker refuses */
      "2 /etc/passwd\n"                         /* 7 not in the root */
      "2 /proc/self/environ\n"                  /* 8 Landlock: no rule */
      "2 %s/../secret/key\n"                    /* 9 ".." out of the tree */
      "o %s/../secret/key\n"                    /* 10 the same, trapped */
      "w %s/data\n"                             /* 11 write flags */
      "2 /proc/self/root%s/key\n",              /* 12 a magic link out */
      tree, tree, outside, outside, secret, secret, tree, tree, tree, secret);
  int errs[13];
  run_steps(steps, errs, 13);
  ck_assert_msg(errs[0] == 0, "openat2 in the direct tree: %s",
                g_strerror(errs[0]));
  ck_assert_msg(errs[1] == 0, "open in the direct tree: %s",
                g_strerror(errs[1]));
  ck_assert_msg(errs[2] == 0, "openat2 of libc: %s", g_strerror(errs[2]));
  ck_assert_int_ne(errs[3], 0);
  ck_assert_msg(errs[4] == 0, "brokered read: %s", g_strerror(errs[4]));
  ck_assert_int_ne(errs[5], 0);
  ck_assert_int_eq(errs[6], EACCES);
  ck_assert_int_ne(errs[7], 0);
  ck_assert_int_eq(errs[8], EACCES);
  ck_assert_int_ne(errs[9], 0);
  ck_assert_int_eq(errs[10], EACCES);
  ck_assert_int_ne(errs[11], 0);
  ck_assert_int_ne(errs[12], 0);
}
END_TEST

START_TEST(symlinks_out_of_a_direct_tree_get_the_brokers_decision) {
  if (!landlock_present())
    return;
  assert_unsandboxed_reads();
  g_autofree char *steps = g_strdup_printf(
      "2 %s/to-outside\n" /* 0 the kernel refuses: target not granted */
      "o %s/to-outside\n" /* 1 the broker allows: target is allowed */
      "2 %s/to-secret\n"  /* 2 refused */
      "o %s/to-secret\n", /* 3 the broker refuses too */
      tree, tree, tree, tree);
  int errs[4];
  run_steps(steps, errs, 4);
  ck_assert_int_ne(errs[0], 0);
  ck_assert_msg(errs[1] == 0, "brokered symlink to an allowed file: %s",
                g_strerror(errs[1]));
  ck_assert_int_ne(errs[2], 0);
  ck_assert_int_eq(errs[3], EACCES);
}
END_TEST

/* A hard link is the file: inside a direct tree it reads as that tree's
 * file. Exact, since only whoever can write the tree can make one there
 * (docs/design.md, "Direct opens"). */
START_TEST(a_hard_link_in_a_direct_tree_is_that_trees_file) {
  if (!landlock_present())
    return;
  assert_unsandboxed_reads();
  g_autofree char *steps =
      g_strdup_printf("2 %s/hard-to-secret\n2 %s/key\n", tree, secret);
  int errs[2];
  run_steps(steps, errs, 2);
  ck_assert_msg(errs[0] == 0, "hard link in the tree: %s", g_strerror(errs[0]));
  ck_assert_int_ne(errs[1], 0); /* the same file by its other name */
}
END_TEST

/* Which of the two answered a trapped open shows on a FIFO: below a
 * recursive entry the broker serves regular files and directories only,
 * while Landlock lets the worker open it. Layer 1 tries the direct open
 * only below a direct tree, so a FIFO there opens and one under a plain
 * read rule gets the broker's refusal. */
START_TEST(a_trapped_open_is_direct_below_a_direct_tree_only) {
  if (!landlock_present())
    return;
  g_autofree char *in_tree = g_build_filename(tree, "fifo", NULL);
  g_autofree char *in_outside = g_build_filename(outside, "fifo", NULL);
  g_autofree char *tree_dir = g_strdup_printf("%s/", tree);
  ck_assert_int_eq(mkfifo(in_tree, 0644), 0);
  ck_assert_int_eq(mkfifo(in_outside, 0644), 0);
  /* Controls: both open for the unsandboxed test. */
  ck_assert_int_eq(open_nonblock(in_tree), 0);
  ck_assert_int_eq(open_nonblock(in_outside), 0);
  g_autofree char *steps = g_strdup_printf(
      "n %s\n"        /* 0 direct */
      "n %s\n"        /* 1 brokered */
      "n %s/./fifo\n" /* 2 normalised */
      "n %s\n",       /* 3 the tree */
      in_tree, in_outside, tree, tree_dir);
  int errs[4];
  run_steps(steps, errs, 4);
  ck_assert_msg(errs[0] == 0, "direct open of a FIFO in the tree: %s",
                g_strerror(errs[0]));
  ck_assert_int_eq(errs[1], EACCES);
  ck_assert_msg(errs[2] == 0, "direct open of %s/./fifo: %s", tree,
                g_strerror(errs[2]));
  ck_assert_msg(errs[3] == 0, "open of the tree itself: %s",
                g_strerror(errs[3]));
}
END_TEST

/* The ruleset grants more than read on a direct tree where the root is
 * empty (the truncate right, so that Landlock's check stops at the
 * tree): none of it may let a worker change a file there. Controls: the
 * test itself truncates a file of the tree each way. */
START_TEST(nothing_in_a_direct_tree_can_be_truncated_or_written) {
  if (!landlock_present())
    return;
  g_autofree char *data = g_build_filename(tree, "data", NULL);
  const char ways[] = {'t', 'r', 'T'};
  for (size_t i = 0; i < G_N_ELEMENTS(ways); i++) {
    g_autofree char *name = g_strdup_printf("scratch-%zu", i);
    api_write_file(tree, name, "scratch\n");
    g_autofree char *scratch = g_build_filename(tree, name, NULL);
    int err = run_step(ways[i], scratch);
    ck_assert_msg(err == 0, "unsandboxed truncation (%c) of %s: %s", ways[i],
                  scratch, g_strerror(err));
    struct stat st;
    ck_assert_int_eq(stat(scratch, &st), 0);
    ck_assert_int_eq(st.st_size, 0);
  }
  g_autofree char *steps = g_strdup_printf(
      "t %s\n"  /* 0 openat2 O_RDONLY|O_TRUNC */
      "r %s\n"  /* 1 openat2 O_RDWR|O_TRUNC */
      "w %s\n"  /* 2 openat2 O_WRONLY */
      "T %s\n"  /* 3 truncate(2) */
      "c %s\n"  /* 4 open(2) O_WRONLY|O_TRUNC: the broker's read rule */
      "2 %s\n", /* 5 still readable */
      data, data, data, data, data, data);
  int errs[6];
  run_steps(steps, errs, 6);
  for (int i = 0; i < 5; i++)
    ck_assert_msg(errs[i] != 0, "step %d changed %s", i, data);
  ck_assert_msg(errs[5] == 0, "openat2 read after the attempts: %s",
                g_strerror(errs[5]));
  g_autofree char *text = NULL;
  ck_assert(g_file_get_contents(data, &text, NULL, NULL));
  ck_assert_str_eq(text, "direct\n");
}
END_TEST

static Suite *direct_suite(void) {
  Suite *s = suite_create("direct");
  TCase *tc = tcase_create("direct");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, a_worker_opens_its_direct_trees_itself_and_nothing_else);
  tcase_add_test(tc, symlinks_out_of_a_direct_tree_get_the_brokers_decision);
  tcase_add_test(tc, a_hard_link_in_a_direct_tree_is_that_trees_file);
  tcase_add_test(tc, a_trapped_open_is_direct_below_a_direct_tree_only);
  tcase_add_test(tc, nothing_in_a_direct_tree_can_be_truncated_or_written);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  return api_run_suite(direct_suite());
}
