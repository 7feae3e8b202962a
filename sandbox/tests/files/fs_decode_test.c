/* The table of file-system calls and its decoder on their own: the
 * table's shape, every row decoded in its path form and its descriptor
 * forms, flags outside a row's accepted set refused with EINVAL, and
 * malformed paths refused with the kernel's errno. Every refusal the
 * decoder gives for a call is compared with the kernel's own answer to
 * the same arguments, made from this process (the arguments are chosen so
 * that the kernel refuses them before it touches anything), and the
 * accepted forms are run by the kernel too. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <glib.h>

#include "sandbox/base/path.h"
#include "sandbox/base/syscalls.h"
#include "sandbox/files/fs_calls.h"
#include "sandbox/files/fs_decode.h"

/* A bit no call accepts in its flags or AT_ flags. */
#define UNKNOWN_BIT 0x40000000u

static const char kMissing[] = "/nonexistent-sbx-fs-decode/a";
static const char kMissing2[] = "/nonexistent-sbx-fs-decode/b";

static char result_buf[8192];
static char long_path[PATH_MAX + 16];
static struct open_how zero_how;

/* Arguments for a call of row `call`, every role filled with something
 * harmless; the path arguments are `path` and kMissing2. */
static void build_args(const sbx_fs_call *call, const char *path, int fd,
                       uint64_t args[6]) {
  static const char name[] = "user.sbx";
  static const char *const empty_vector[] = {NULL};
  for (int i = 0; i < 6; i++) {
    uint64_t v = 0;
    switch ((sbx_fs_arg_role)call->args[i]) {
      case SBX_FS_ARG_DIRFD:
      case SBX_FS_ARG_DIRFD2:
        v = (uint64_t)(int64_t)AT_FDCWD;
        break;
      case SBX_FS_ARG_PATH:
        v = (uintptr_t)path;
        break;
      case SBX_FS_ARG_PATH2:
        v = (uintptr_t)kMissing2;
        break;
      case SBX_FS_ARG_FD:
        v = (uint64_t)fd;
        break;
      case SBX_FS_ARG_MODE:
        v = 0600;
        break;
      case SBX_FS_ARG_HOW:
        v = (uintptr_t)&zero_how;
        break;
      case SBX_FS_ARG_HOW_SIZE:
        v = sizeof(zero_how);
        break;
      case SBX_FS_ARG_MASK:
        v = STATX_BASIC_STATS;
        break;
      case SBX_FS_ARG_BUF:
        v = (uintptr_t)result_buf;
        break;
      case SBX_FS_ARG_SIZE:
        v = 64;
        break;
      case SBX_FS_ARG_VALUE:
        v = (uintptr_t)result_buf;
        break;
      case SBX_FS_ARG_NAME:
      case SBX_FS_ARG_TARGET:
        v = (uintptr_t)name;
        break;
      case SBX_FS_ARG_OWNER:
        v = getuid();
        break;
      case SBX_FS_ARG_GROUP:
        v = getgid();
        break;
      case SBX_FS_ARG_ARGV:
      case SBX_FS_ARG_ENVP:
        v = (uintptr_t)empty_vector;
        break;
      default:
        break;
    }
    args[i] = v;
  }
}

static void set_role(const sbx_fs_call *call, sbx_fs_arg_role role, uint64_t v,
                     uint64_t args[6]) {
  int i = sbx_fs_call_arg(call, role);
  ck_assert_msg(i >= 0, "%s has no argument of role %d", call->name, role);
  args[i] = v;
}

static bool has(const sbx_fs_call *call, sbx_fs_arg_role role) {
  return sbx_fs_call_arg(call, role) >= 0;
}

static int decode(const sbx_fs_call *call, const uint64_t args[6],
                  sbx_fs_request *q) {
  static char path[PATH_MAX], path2[PATH_MAX];
  return sbx_fs_decode(call, args, &sbx_fs_local_reader, path, path2, q);
}

/* The kernel may compare its answer with the decoder's when every
 * argument has a known role: an unknown one (an inotify descriptor, a
 * struct the kernel checks first) could be refused before the path. */
static bool comparable(const sbx_fs_call *call) {
  for (int i = 0; i < 6; i++)
    if (call->args[i] == SBX_FS_ARG_OTHER)
      return false;
  return true;
}

/* The kernel's answer: 0 or -errno. Only ever called with arguments it
 * refuses, or on the test's own files. */
static long kernel(const sbx_fs_call *call, const uint64_t a[6]) {
  long rc = syscall(call->nr, a[0], a[1], a[2], a[3], a[4], a[5]);
  return rc < 0 ? -errno : 0;
}

/* How many refusals the kernel was asked about. */
static int kernel_compared;

static void expect_same_refusal(const sbx_fs_call *call, const uint64_t a[6],
                                int want, const char *what) {
  sbx_fs_request q;
  int got = decode(call, a, &q);
  ck_assert_msg(got == -want, "%s %s: decoder %d, want %d", call->name, what,
                got, -want);
  if (!comparable(call))
    return;
  long k = kernel(call, a);
  /* A kernel without the call says ENOSYS: nothing to compare. */
  if (k == -ENOSYS)
    return;
  ck_assert_msg(k == -want, "%s %s: kernel %ld, decoder %d", call->name, what,
                k, got);
  kernel_compared++;
}

/* ---- the table ----------------------------------------------------------- */

START_TEST(every_row_names_its_system_call_and_has_one_object) {
  ck_assert_uint_gt(sbx_fs_call_count(), 50);
  for (size_t i = 0; i < sbx_fs_call_count(); i++) {
    const sbx_fs_call *c = sbx_fs_call_at(i);
    ck_assert_msg(sbx_syscall_number(c->name) == c->nr, "%s is not %d", c->name,
                  c->nr);
    ck_assert_ptr_eq(sbx_fs_call_find(c->nr), c);
    ck_assert_ptr_nonnull(sbx_fs_op_name(c->op));
    /* A path or a descriptor, never both, never neither. */
    ck_assert_msg(has(c, SBX_FS_ARG_PATH) != has(c, SBX_FS_ARG_FD), "%s",
                  c->name);
    ck_assert_msg(!has(c, SBX_FS_ARG_PATH2) || has(c, SBX_FS_ARG_PATH), "%s",
                  c->name);
    ck_assert_msg(!has(c, SBX_FS_ARG_DIRFD2) || has(c, SBX_FS_ARG_PATH2), "%s",
                  c->name);
    /* Each role but OTHER at most once. */
    for (int a = 0; a < 6; a++)
      for (int b = a + 1; b < 6; b++)
        ck_assert_msg(c->args[a] == SBX_FS_ARG_NONE ||
                          c->args[a] == SBX_FS_ARG_OTHER ||
                          c->args[a] != c->args[b],
                      "%s: role %d twice", c->name, c->args[a]);
    /* Arguments past the call's count are unused. */
    int n = sbx_syscall_arg_count(c->nr);
    for (int a = n; n >= 0 && a < 6; a++)
      ck_assert_msg(c->args[a] == SBX_FS_ARG_NONE, "%s: argument %d", c->name,
                    a);
    /* AT_ flags and the fixed ones only where the call has them. */
    ck_assert_msg(!c->at_flags_mask || has(c, SBX_FS_ARG_AT_FLAGS), "%s",
                  c->name);
    ck_assert_msg(!c->flags_mask || has(c, SBX_FS_ARG_FLAGS) ||
                      has(c, SBX_FS_ARG_HOW) || c->fixed_flags,
                  "%s", c->name);
    /* Layer 1 serves a subset of what the supervisor decides, by path. */
    if (c->traits & SBX_FS_LAYER1) {
      ck_assert_msg(c->traits & SBX_FS_SUPERVISED, "%s", c->name);
      ck_assert_msg(has(c, SBX_FS_ARG_PATH), "%s", c->name);
    }
  }
}
END_TEST

START_TEST(the_flag_sets_are_the_kernels) {
  /* Spot checks of the one definition against the headers' spelling. */
  ck_assert_uint_eq(SBX_FS_O_PATH, O_PATH);
  ck_assert_uint_eq(SBX_FS_O_TMPFILE_BIT | O_DIRECTORY, O_TMPFILE);
  ck_assert_uint_eq(SBX_FS_O_SYNC_BIT | O_DSYNC, O_SYNC);
  ck_assert_uint_eq(SBX_FS_O_ASYNC, O_ASYNC);
  ck_assert(SBX_FS_OPEN_FLAGS & O_CLOEXEC);
  ck_assert(!(SBX_FS_OPEN_FLAGS & UNKNOWN_BIT));
  ck_assert_int_eq(sbx_fs_check_statx(AT_STATX_SYNC_TYPE, 0), -EINVAL);
  ck_assert_int_eq(sbx_fs_check_statx(AT_STATX_FORCE_SYNC, STATX__RESERVED),
                   -EINVAL);
  ck_assert_int_eq(sbx_fs_check_statx(AT_STATX_DONT_SYNC, STATX_ALL), 0);
  ck_assert_int_eq(sbx_fs_check_rename(RENAME_EXCHANGE | RENAME_NOREPLACE),
                   -EINVAL);
  ck_assert_int_eq(sbx_fs_check_rename(RENAME_EXCHANGE | RENAME_WHITEOUT),
                   -EINVAL);
  ck_assert_int_eq(sbx_fs_check_rename(RENAME_NOREPLACE | RENAME_WHITEOUT), 0);
}
END_TEST

START_TEST(flags_are_spelled_one_way) {
  static const struct {
    sbx_fs_op op;
    uint32_t flags;
    const char *text;
  } cases[] = {
      {SBX_FS_OP_OPEN, O_RDONLY | O_CLOEXEC, "O_RDONLY|O_CLOEXEC"},
      {SBX_FS_OP_OPEN, O_RDWR | O_CREAT | UNKNOWN_BIT,
       "O_RDWR|O_CREAT|0x40000000"},
      {SBX_FS_OP_ACCESS, F_OK, "F_OK"},
      {SBX_FS_OP_ACCESS, R_OK | W_OK, "R_OK|W_OK"},
      {SBX_FS_OP_STAT, 0, "0"},
      {SBX_FS_OP_STAT, AT_SYMLINK_NOFOLLOW, "AT_SYMLINK_NOFOLLOW"},
      {SBX_FS_OP_MKDIR, 0755, "0755"},
      {SBX_FS_OP_CHMOD, 04700, "04700"},
      {SBX_FS_OP_RENAME, RENAME_NOREPLACE, "RENAME_NOREPLACE"},
      {SBX_FS_OP_UNLINK, 0, "0"},
      {SBX_FS_OP_NONE, 1, "0x1"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    char buf[SBX_FS_FLAGS_TEXT_MAX];
    size_t n =
        sbx_fs_format_flags(cases[i].op, cases[i].flags, buf, sizeof(buf));
    ck_assert_str_eq(buf, cases[i].text);
    ck_assert_uint_eq(n, strlen(cases[i].text));
  }
  /* Cut, never overflowed; the length needed is still told. */
  char small[8];
  size_t n = sbx_fs_format_flags(SBX_FS_OP_OPEN, O_RDONLY | O_CLOEXEC, small,
                                 sizeof(small));
  ck_assert_uint_eq(n, strlen("O_RDONLY|O_CLOEXEC"));
  ck_assert_uint_eq(strlen(small), sizeof(small) - 1);
}
END_TEST

/* ---- decoding every row -------------------------------------------------- */

START_TEST(every_row_decodes_its_path_form) {
  for (size_t i = 0; i < sbx_fs_call_count(); i++) {
    const sbx_fs_call *c = sbx_fs_call_at(i);
    if (!has(c, SBX_FS_ARG_PATH))
      continue;
    uint64_t a[6];
    build_args(c, kMissing, -1, a);
    sbx_fs_request q;
    ck_assert_msg(decode(c, a, &q) == 0, "%s", c->name);
    ck_assert_msg(q.form == SBX_FS_FORM_PATH, "%s", c->name);
    ck_assert_int_eq(q.op, c->op);
    ck_assert_str_eq(q.path, kMissing);
    ck_assert_ptr_ne(q.path, kMissing); /* a copy */
    ck_assert_uint_eq(q.path_len, strlen(kMissing));
    ck_assert_int_eq(q.dirfd, AT_FDCWD);
    if (has(c, SBX_FS_ARG_PATH2))
      ck_assert_str_eq(q.path2, kMissing2);
    else
      ck_assert_ptr_null(q.path2);
    ck_assert_uint_eq(q.at_flags, c->fixed_at_flags);
    if (!has(c, SBX_FS_ARG_FLAGS) && !has(c, SBX_FS_ARG_HOW))
      ck_assert_uint_eq(q.flags, c->fixed_flags);
  }
}
END_TEST

START_TEST(every_descriptor_form_decodes_to_its_descriptor) {
  int fd = open("/", O_PATH | O_CLOEXEC);
  ck_assert_int_ge(fd, 0);
  int forms = 0;
  for (size_t i = 0; i < sbx_fs_call_count(); i++) {
    const sbx_fs_call *c = sbx_fs_call_at(i);
    uint64_t a[6];
    sbx_fs_request q;
    if (has(c, SBX_FS_ARG_FD)) {
      build_args(c, NULL, fd, a);
      ck_assert_msg(decode(c, a, &q) == 0, "%s", c->name);
      ck_assert_msg(q.form == SBX_FS_FORM_FD && q.fd == fd, "%s", c->name);
      ck_assert_ptr_null(q.path);
      forms++;
    }
    if ((c->at_flags_mask & AT_EMPTY_PATH) && has(c, SBX_FS_ARG_DIRFD)) {
      build_args(c, "", -1, a);
      set_role(c, SBX_FS_ARG_DIRFD, (uint64_t)fd, a);
      set_role(c, SBX_FS_ARG_AT_FLAGS, AT_EMPTY_PATH, a);
      ck_assert_msg(decode(c, a, &q) == 0, "%s", c->name);
      ck_assert_msg(q.form == SBX_FS_FORM_EMPTY_PATH && q.fd == fd, "%s",
                    c->name);
      /* The form says it; the flags no longer do. */
      ck_assert_uint_eq(q.at_flags & AT_EMPTY_PATH, 0);
      forms++;
    }
    if (c->traits & SBX_FS_NULL_PATH_IS_FD) {
      build_args(c, NULL, -1, a);
      set_role(c, SBX_FS_ARG_DIRFD, (uint64_t)fd, a);
      ck_assert_msg(decode(c, a, &q) == 0, "%s", c->name);
      ck_assert_msg(q.form == SBX_FS_FORM_FD && q.fd == fd, "%s", c->name);
      forms++;
    }
    if (c->traits & SBX_FS_NULL_PATH_EMPTY) {
      build_args(c, NULL, -1, a);
      set_role(c, SBX_FS_ARG_DIRFD, (uint64_t)fd, a);
      set_role(c, SBX_FS_ARG_AT_FLAGS, AT_EMPTY_PATH, a);
      ck_assert_msg(decode(c, a, &q) == 0, "%s", c->name);
      ck_assert_msg(q.form == SBX_FS_FORM_EMPTY_PATH && q.fd == fd, "%s",
                    c->name);
    }
  }
  /* fchmod, fchown, fsetxattr, fremovexattr, ftruncate, fallocate, and the
   * AT_EMPTY_PATH and NULL forms. */
  ck_assert_int_ge(forms, 6 + 10);
  close(fd);
}
END_TEST

START_TEST(unlinkat_with_at_removedir_is_rmdir) {
  const sbx_fs_call *c = sbx_fs_call_find(__NR_unlinkat);
  uint64_t a[6];
  build_args(c, kMissing, -1, a);
  sbx_fs_request q;
  ck_assert_int_eq(decode(c, a, &q), 0);
  ck_assert_int_eq(q.op, SBX_FS_OP_UNLINK);
  set_role(c, SBX_FS_ARG_AT_FLAGS, AT_REMOVEDIR, a);
  ck_assert_int_eq(decode(c, a, &q), 0);
  ck_assert_int_eq(q.op, SBX_FS_OP_RMDIR);
  ck_assert_int_eq(kernel(c, a), -ENOENT); /* the kernel accepts it too */
}
END_TEST

START_TEST(creat_and_openat2_carry_their_open_flags) {
  const sbx_fs_call *creat_ = sbx_fs_call_find(__NR_creat);
  uint64_t a[6];
  build_args(creat_, kMissing, -1, a);
  sbx_fs_request q;
  ck_assert_int_eq(decode(creat_, a, &q), 0);
  ck_assert_uint_eq(q.flags, O_CREAT | O_WRONLY | O_TRUNC);
  ck_assert_uint_eq(q.mode, 0600);

  const sbx_fs_call *o2 = sbx_fs_call_find(__NR_openat2);
  struct open_how how = {.flags = O_RDONLY | O_NOFOLLOW,
                         .resolve = RESOLVE_NO_MAGICLINKS};
  build_args(o2, kMissing, -1, a);
  set_role(o2, SBX_FS_ARG_HOW, (uintptr_t)&how, a);
  ck_assert_int_eq(decode(o2, a, &q), 0);
  ck_assert_uint_eq(q.flags, O_RDONLY | O_NOFOLLOW);
  ck_assert_uint_eq(q.resolve, RESOLVE_NO_MAGICLINKS);
  /* Every open flag's bit the table knows, and one it does not. */
  how.flags = UNKNOWN_BIT;
  expect_same_refusal(o2, a, EINVAL, "unknown open flag");
  how.flags = 0;
  set_role(o2, SBX_FS_ARG_HOW_SIZE, 8, a);
  expect_same_refusal(o2, a, EINVAL, "short struct open_how");
}
END_TEST

/* ---- refusals, compared with the kernel's -------------------------------- */

START_TEST(malformed_paths_get_the_kernels_errno_from_every_row) {
  memset(long_path, 'a', sizeof(long_path) - 1);
  long_path[0] = '/';
  long_path[sizeof(long_path) - 1] = '\0';
  /* The kernel looks the first path up before it reads the second: a
   * second path is tried after a first one that exists. */
  char dir[] = "/tmp/sbx-fs-decode-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  g_autofree char *file = g_strconcat(dir, "/f", NULL);
  ck_assert(g_file_set_contents(file, "x", 1, NULL));
  for (size_t i = 0; i < sbx_fs_call_count(); i++) {
    const sbx_fs_call *c = sbx_fs_call_at(i);
    if (!has(c, SBX_FS_ARG_PATH))
      continue;
    uint64_t a[6];
    build_args(c, NULL, -1, a);
    expect_same_refusal(c, a, EFAULT, "NULL path");
    build_args(c, "", -1, a);
    expect_same_refusal(c, a, ENOENT, "empty path");
    build_args(c, long_path, -1, a);
    expect_same_refusal(c, a, ENAMETOOLONG, "path of PATH_MAX bytes");
    if (has(c, SBX_FS_ARG_PATH2)) {
      build_args(c, file, -1, a);
      set_role(c, SBX_FS_ARG_PATH2, 0, a);
      expect_same_refusal(c, a, EFAULT, "NULL second path");
      set_role(c, SBX_FS_ARG_PATH2, (uintptr_t) "", a);
      expect_same_refusal(c, a, ENOENT, "empty second path");
    }
  }
  ck_assert_int_eq(unlink(file), 0);
  ck_assert_int_eq(rmdir(dir), 0);
  /* Three malformed paths for each of the 50-odd comparable rows. */
  ck_assert_int_ge(kernel_compared, 150);
}
END_TEST

START_TEST(unknown_flags_get_einval_like_the_kernel) {
  /* A descriptor the descriptor forms accept, so that only the flag is
   * wrong. */
  int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ck_assert_int_ge(fd, 0);
  int checked = 0;
  for (size_t i = 0; i < sbx_fs_call_count(); i++) {
    const sbx_fs_call *c = sbx_fs_call_at(i);
    uint64_t a[6];
    if (has(c, SBX_FS_ARG_AT_FLAGS)) {
      build_args(c, kMissing, -1, a);
      set_role(c, SBX_FS_ARG_AT_FLAGS, UNKNOWN_BIT, a);
      expect_same_refusal(c, a, EINVAL, "unknown AT_ flag");
      checked++;
    }
    if (has(c, SBX_FS_ARG_FLAGS) && (c->traits & SBX_FS_STRICT_FLAGS)) {
      build_args(c, kMissing, fd, a);
      set_role(c, SBX_FS_ARG_FLAGS, UNKNOWN_BIT, a);
      expect_same_refusal(c, a, EINVAL, "unknown flag");
      checked++;
    }
  }
  ck_assert_int_ge(checked, 15);
  ck_assert_int_ge(kernel_compared, 12);
  close(fd);
}
END_TEST

START_TEST(the_rules_beyond_the_masks_are_the_kernels) {
  uint64_t a[6];
  const sbx_fs_call *statx_ = sbx_fs_call_find(__NR_statx);
  build_args(statx_, kMissing, -1, a);
  set_role(statx_, SBX_FS_ARG_AT_FLAGS, AT_STATX_SYNC_TYPE, a);
  expect_same_refusal(statx_, a, EINVAL, "both sync types");
  build_args(statx_, kMissing, -1, a);
  set_role(statx_, SBX_FS_ARG_MASK, STATX__RESERVED, a);
  expect_same_refusal(statx_, a, EINVAL, "reserved mask bit");

  const sbx_fs_call *rename2 = sbx_fs_call_find(__NR_renameat2);
  build_args(rename2, kMissing, -1, a);
  set_role(rename2, SBX_FS_ARG_FLAGS, RENAME_EXCHANGE | RENAME_NOREPLACE, a);
  expect_same_refusal(rename2, a, EINVAL, "exchange and noreplace");

  const sbx_fs_call *readlink_ = sbx_fs_call_find(__NR_readlink);
  build_args(readlink_, kMissing, -1, a);
  set_role(readlink_, SBX_FS_ARG_SIZE, 0, a);
  expect_same_refusal(readlink_, a, EINVAL, "empty buffer");
  set_role(readlink_, SBX_FS_ARG_SIZE, (uint32_t)-1, a);
  expect_same_refusal(readlink_, a, EINVAL, "negative size");

  /* utimensat(fd, NULL, ...) takes no flag. */
  const sbx_fs_call *utimensat_ = sbx_fs_call_find(__NR_utimensat);
  build_args(utimensat_, NULL, -1, a);
  set_role(utimensat_, SBX_FS_ARG_DIRFD, 0, a);
  set_role(utimensat_, SBX_FS_ARG_AT_FLAGS, AT_SYMLINK_NOFOLLOW, a);
  expect_same_refusal(utimensat_, a, EINVAL, "futimens with a flag");
  /* ... and at AT_FDCWD it is a path form with a NULL path. */
  set_role(utimensat_, SBX_FS_ARG_DIRFD, (uint64_t)(int64_t)AT_FDCWD, a);
  set_role(utimensat_, SBX_FS_ARG_AT_FLAGS, 0, a);
  expect_same_refusal(utimensat_, a, EFAULT, "NULL path at AT_FDCWD");
}
END_TEST

/* The same arguments, accepted by both: the decoder's request names the
 * file the kernel reached. */
START_TEST(accepted_forms_are_accepted_by_the_kernel_too) {
  char dir[] = "/tmp/sbx-fs-decode-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  g_autofree char *file = g_strconcat(dir, "/f", NULL);
  ck_assert(g_file_set_contents(file, "x", 1, NULL));
  int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ck_assert_int_ge(dfd, 0);
  uint64_t a[6];
  sbx_fs_request q;

  const sbx_fs_call *fstatat = sbx_fs_call_find(__NR_newfstatat);
  build_args(fstatat, "f", -1, a);
  set_role(fstatat, SBX_FS_ARG_DIRFD, (uint64_t)dfd, a);
  set_role(fstatat, SBX_FS_ARG_AT_FLAGS, SBX_FS_STAT_AT_FLAGS, a);
  ck_assert_int_eq(decode(fstatat, a, &q), 0);
  ck_assert_int_eq(q.dirfd, dfd);
  ck_assert_str_eq(q.path, "f");
  ck_assert_uint_eq(q.at_flags, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT);
  ck_assert_int_eq(kernel(fstatat, a), 0);

  const sbx_fs_call *statx_ = sbx_fs_call_find(__NR_statx);
  build_args(statx_, "", -1, a);
  set_role(statx_, SBX_FS_ARG_DIRFD, (uint64_t)dfd, a);
  set_role(statx_, SBX_FS_ARG_AT_FLAGS, AT_EMPTY_PATH | AT_STATX_DONT_SYNC, a);
  ck_assert_int_eq(decode(statx_, a, &q), 0);
  ck_assert_int_eq(q.form, SBX_FS_FORM_EMPTY_PATH);
  ck_assert_int_eq(kernel(statx_, a), 0);

  const sbx_fs_call *faccessat2 = sbx_fs_call_find(__NR_faccessat2);
  build_args(faccessat2, file, -1, a);
  set_role(faccessat2, SBX_FS_ARG_FLAGS, R_OK | W_OK, a);
  set_role(faccessat2, SBX_FS_ARG_AT_FLAGS, AT_EACCESS | AT_SYMLINK_NOFOLLOW,
           a);
  ck_assert_int_eq(decode(faccessat2, a, &q), 0);
  ck_assert_uint_eq(q.flags, R_OK | W_OK);
  ck_assert_int_eq(kernel(faccessat2, a), 0);

  const sbx_fs_call *readlinkat = sbx_fs_call_find(__NR_readlinkat);
  build_args(readlinkat, file, -1, a);
  ck_assert_int_eq(decode(readlinkat, a, &q), 0);
  ck_assert_int_eq(kernel(readlinkat, a), -EINVAL); /* not a link */

  close(dfd);
  ck_assert_int_eq(unlink(file), 0);
  ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* ---- the reader ---------------------------------------------------------- */

static ssize_t gone_string(void *ctx, uint64_t addr, char *buf, size_t size) {
  return SBX_FS_GONE;
}

static int gone_read(void *ctx, uint64_t addr, void *buf, size_t len) {
  return SBX_FS_GONE;
}

START_TEST(a_caller_gone_while_it_was_read_is_said_so) {
  const sbx_fs_reader gone = {gone_string, gone_read, NULL};
  static char p1[PATH_MAX], p2[PATH_MAX];
  uint64_t a[6];
  sbx_fs_request q;
  const sbx_fs_call *open_ = sbx_fs_call_find(__NR_open);
  build_args(open_, kMissing, -1, a);
  ck_assert_int_eq(sbx_fs_decode(open_, a, &gone, p1, p2, &q), SBX_FS_GONE);
  const sbx_fs_call *o2 = sbx_fs_call_find(__NR_openat2);
  build_args(o2, kMissing, -1, a);
  ck_assert_int_eq(sbx_fs_decode(o2, a, &gone, p1, p2, &q), SBX_FS_GONE);
  /* Flags are refused before anything is read. */
  const sbx_fs_call *unlinkat_ = sbx_fs_call_find(__NR_unlinkat);
  build_args(unlinkat_, kMissing, -1, a);
  set_role(unlinkat_, SBX_FS_ARG_AT_FLAGS, UNKNOWN_BIT, a);
  ck_assert_int_eq(sbx_fs_decode(unlinkat_, a, &gone, p1, p2, &q), -EINVAL);
  ck_assert_int_eq(q.op, SBX_FS_OP_UNLINK);
}
END_TEST

/* ---- normalising in place ------------------------------------------------ */

static void check_normalises_like_join(const char *in) {
  char out[PATH_MAX];
  int want = sbx_path_join_link("/", 1, in, strlen(in), out, sizeof(out));
  char buf[PATH_MAX];
  g_strlcpy(buf, in, sizeof(buf));
  size_t got = sbx_fs_normalize_absolute(buf, strlen(buf));
  ck_assert_msg(want >= 0 && got == (size_t)want && strcmp(buf, out) == 0,
                "%s: in place '%s', joined '%s'", in, buf, out);
  ck_assert_int_eq(sbx_path_validate(buf, got, NULL), 0);
}

START_TEST(normalising_in_place_agrees_with_the_lexical_join) {
  static const char *const cases[] = {
      "/",
      "//",
      "/.",
      "/..",
      "/a",
      "/a/",
      "/a//b",
      "/a/./b",
      "/a/../b",
      "/a/b/..",
      "/../../a",
      "/a/b/../..",
      "/a/b/../../..",
      "/.a/..b/...",
      "///a///b///",
      "/a/./././",
      "/a/b/c/../../d/./e/..",
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++)
    check_normalises_like_join(cases[i]);
  /* Random paths over an alphabet that makes every kind of component. */
  GRand *rand = g_rand_new_with_seed(7);
  static const char alphabet[] = "/./..ab";
  for (int n = 0; n < 20000; n++) {
    char p[64];
    int len = g_rand_int_range(rand, 1, (int)sizeof(p) - 1);
    p[0] = '/';
    for (int i = 1; i < len; i++)
      p[i] = alphabet[g_rand_int_range(rand, 0, (int)sizeof(alphabet) - 1)];
    p[len] = '\0';
    check_normalises_like_join(p);
  }
  g_rand_free(rand);
}
END_TEST

/* A name written as a directory ("/a/b/", "/a/b/.", "/a/b/..") is read
 * as the kernel reads it in every row that takes a path: a final link
 * followed (no no-follow flag left), a directory required, and the fixed
 * answers of rmdir, unlink and rename to "." and "..". The calls that
 * make the name are left to their executor; a plain name is untouched.
 * (The layer 1 and sbx-run suites compare the executors' answers with
 * the kernel's on a real tree.) */
START_TEST(a_name_written_as_a_directory_is_read_as_the_kernel_reads_it) {
  static const char *const forms[] = {"/a/b/", "/a/b/.", "/a/b/..", "/a/b//",
                                      "/a/b"};
  int checked = 0;
  for (size_t i = 0; i < sbx_fs_call_count(); i++) {
    const sbx_fs_call *c = sbx_fs_call_at(i);
    if (!has(c, SBX_FS_ARG_PATH))
      continue;
    for (size_t f = 0; f < G_N_ELEMENTS(forms); f++) {
      uint64_t a[6];
      build_args(c, forms[f], -1, a);
      if (has(c, SBX_FS_ARG_AT_FLAGS) &&
          (c->at_flags_mask & AT_SYMLINK_NOFOLLOW))
        set_role(c, SBX_FS_ARG_AT_FLAGS, AT_SYMLINK_NOFOLLOW, a);
      sbx_fs_request q;
      if (decode(c, a, &q) != 0)
        continue;
      bool dot = g_str_has_suffix(forms[f], "/.");
      bool dotdot = g_str_has_suffix(forms[f], "/..");
      bool plain = strcmp(forms[f], "/a/b") == 0;
      bool makes = q.op == SBX_FS_OP_MKDIR || q.op == SBX_FS_OP_SYMLINK ||
                   q.op == SBX_FS_OP_LINK || q.op == SBX_FS_OP_MKNOD;
      sbx_fs_dir_form form;
      bool is = sbx_fs_directory_form(&q, &form);
      ck_assert_msg(is == (!plain && !makes), "%s %s", c->name, forms[f]);
      if (!is)
        continue;
      checked++;
      ck_assert_msg(!(q.at_flags & AT_SYMLINK_NOFOLLOW), "%s", c->name);
      int want = 0;
      if (q.op == SBX_FS_OP_RMDIR)
        want = dot ? EINVAL : dotdot ? ENOTEMPTY : 0;
      else if (q.op == SBX_FS_OP_UNLINK)
        want = dot || dotdot ? EISDIR : 0;
      else if (q.op == SBX_FS_OP_RENAME)
        want = dot || dotdot ? EBUSY : 0;
      ck_assert_msg(form.error == want, "%s %s: %d", c->name, forms[f],
                    form.error);
      if (q.op == SBX_FS_OP_OPEN && !(q.flags & O_CREAT)) {
        /* The open itself then answers ENOTDIR. */
        ck_assert_msg(
            (q.flags & O_DIRECTORY) && !(q.flags & O_NOFOLLOW) && !form.look,
            "%s", c->name);
        continue;
      }
      ck_assert_msg(form.look == (want == 0), "%s %s", c->name, forms[f]);
      if (!form.look)
        continue;
      bool on_name = q.op == SBX_FS_OP_UNLINK || q.op == SBX_FS_OP_RMDIR ||
                     q.op == SBX_FS_OP_RENAME;
      ck_assert_msg(form.follow == !on_name, "%s", c->name);
      ck_assert_msg(form.if_not_dir == (q.op == SBX_FS_OP_OPEN ? 0 : ENOTDIR),
                    "%s", c->name);
      int if_dir = q.op == SBX_FS_OP_UNLINK     ? EISDIR
                   : q.op == SBX_FS_OP_READLINK ? EINVAL
                   : q.op == SBX_FS_OP_OPEN     ? EISDIR
                                                : 0;
      ck_assert_msg(form.if_dir == if_dir, "%s", c->name);
      ck_assert_msg(form.parent == (q.op == SBX_FS_OP_OPEN), "%s", c->name);
    }
  }
  ck_assert_int_gt(checked, 20);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("fs-decode");
  TCase *table = tcase_create("table");
  tcase_add_test(table, every_row_names_its_system_call_and_has_one_object);
  tcase_add_test(table, the_flag_sets_are_the_kernels);
  tcase_add_test(table, flags_are_spelled_one_way);
  suite_add_tcase(s, table);
  TCase *dec = tcase_create("decoder");
  tcase_add_test(dec, every_row_decodes_its_path_form);
  tcase_add_test(dec, every_descriptor_form_decodes_to_its_descriptor);
  tcase_add_test(dec, unlinkat_with_at_removedir_is_rmdir);
  tcase_add_test(dec, creat_and_openat2_carry_their_open_flags);
  tcase_add_test(dec, malformed_paths_get_the_kernels_errno_from_every_row);
  tcase_add_test(dec, unknown_flags_get_einval_like_the_kernel);
  tcase_add_test(dec, the_rules_beyond_the_masks_are_the_kernels);
  tcase_add_test(dec, accepted_forms_are_accepted_by_the_kernel_too);
  tcase_add_test(dec, a_caller_gone_while_it_was_read_is_said_so);
  tcase_add_test(dec, normalising_in_place_agrees_with_the_lexical_join);
  tcase_add_test(dec,
                 a_name_written_as_a_directory_is_read_as_the_kernel_reads_it);
  suite_add_tcase(s, dec);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_ENV);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
