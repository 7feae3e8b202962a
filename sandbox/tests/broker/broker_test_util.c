/* Fixtures for the broker suites; see broker_test_util.h. */
#include "sandbox/tests/broker/broker_test_util.h"

#include <check.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>

char *broker_test_path(const broker_test_tree *t, const char *rel) {
  return g_build_filename(t->root, rel, NULL);
}

void broker_test_write(const char *path, const char *text) {
  GError *error = NULL;
  if (!g_file_set_contents(path, text, -1, &error))
    ck_abort_msg("cannot write %s: %s", path, error->message);
}

void broker_test_tree_make(broker_test_tree *t) {
  memset(t, 0, sizeof(*t));
  GError *error = NULL;
  t->root = g_dir_make_tmp("sbx-broker-XXXXXX", &error);
  ck_assert_msg(t->root != NULL, "g_dir_make_tmp: %s",
                error ? error->message : "?");
  /* Readable by the broker however the test runs. */
  ck_assert_int_eq(chmod(t->root, 0755), 0);
  t->good = broker_test_path(t, "good");
  t->good_file = broker_test_path(t, "good/file");
  t->deep = broker_test_path(t, "good/sub/deep");
  t->sibling = broker_test_path(t, "good_extra_stuff");
  t->rw = broker_test_path(t, "rw");
  t->existing = broker_test_path(t, "rw/existing");
  t->tmp = broker_test_path(t, "tmp");
  t->canary = broker_test_path(t, "canary");
  char *sub = broker_test_path(t, "good/sub");
  ck_assert_int_eq(mkdir(t->good, 0755), 0);
  ck_assert_int_eq(mkdir(sub, 0755), 0);
  ck_assert_int_eq(mkdir(t->rw, 0755), 0);
  ck_assert_int_eq(mkdir(t->tmp, 0755), 0);
  g_free(sub);
  broker_test_write(t->good_file, "good");
  broker_test_write(t->deep, "deep");
  broker_test_write(t->sibling, "sibling");
  broker_test_write(t->existing, "existing");
  broker_test_write(t->canary, "canary");
  ck_assert_int_eq(stat(t->canary, &t->canary_st), 0);
}

static int remove_one(const char *path, const struct stat *st, int flag,
                      struct FTW *ftw) {
  return remove(path) == 0 || errno == ENOENT ? 0 : -1;
}

void broker_test_tree_free(broker_test_tree *t) {
  if (t->root)
    nftw(t->root, remove_one, 16, FTW_DEPTH | FTW_PHYS);
  g_free(t->root);
  g_free(t->good);
  g_free(t->good_file);
  g_free(t->deep);
  g_free(t->sibling);
  g_free(t->rw);
  g_free(t->existing);
  g_free(t->tmp);
  g_free(t->canary);
  memset(t, 0, sizeof(*t));
}

sbx_allowlist *broker_test_tree_allowlist(const broker_test_tree *t,
                                          const char *type) {
  sbx_allowlist *list = sbx_allowlist_new(type);
  GError *error = NULL;
  char *good = g_strconcat(t->good, "/", NULL);
  char *rw = g_strconcat(t->rw, "/", NULL);
  char *tmp = g_strconcat(t->tmp, "/", NULL);
  ck_assert_msg(sbx_allowlist_add(list, good, SBX_PERM_READ_ONLY, &error), "%s",
                error ? error->message : "");
  ck_assert_msg(sbx_allowlist_add(list, rw, SBX_PERM_READ_WRITE_CREATE, &error),
                "%s", error ? error->message : "");
  ck_assert_msg(
      sbx_allowlist_add(list, tmp, SBX_PERM_READ_WRITE_TEMPORARY, &error), "%s",
      error ? error->message : "");
  g_free(good);
  g_free(rw);
  g_free(tmp);
  return list;
}

char *broker_test_read_fd(int fd) {
  GString *s = g_string_new(NULL);
  char buf[4096];
  off_t off = 0;
  for (;;) {
    ssize_t n = pread(fd, buf, sizeof(buf), off);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    g_string_append_len(s, buf, n);
    off += n;
  }
  return g_string_free(s, FALSE);
}

int broker_test_run_in_child(int (*fn)(void *arg), void *arg) {
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0)
    _exit(fn(arg));
  int status;
  pid_t r;
  do {
    r = waitpid(pid, &status, 0);
  } while (r < 0 && errno == EINTR);
  ck_assert_int_eq(r, pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

bool broker_test_same_file(int fd, const struct stat *st) {
  struct stat s;
  if (fstat(fd, &s) != 0)
    return false;
  return s.st_dev == st->st_dev && s.st_ino == st->st_ino;
}

void broker_test_send_raw(int ch, const void *buf, size_t len, const int *fds,
                          size_t n_fds) {
  ck_assert_uint_le(n_fds, 4);
  struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
  union {
    char buf[CMSG_SPACE(4 * sizeof(int))];
    struct cmsghdr align;
  } cbuf;
  memset(&cbuf, 0, sizeof(cbuf));
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
  if (n_fds) {
    msg.msg_control = cbuf.buf;
    msg.msg_controllen = CMSG_SPACE(n_fds * sizeof(int));
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(n_fds * sizeof(int));
    memcpy(CMSG_DATA(c), fds, n_fds * sizeof(int));
  }
  ck_assert_int_ge(sendmsg(ch, &msg, MSG_NOSIGNAL), 0);
}

bool broker_test_channel_closed(int ch) {
  struct pollfd p = {.fd = ch, .events = POLLIN};
  if (poll(&p, 1, 3000) != 1)
    return false;
  char b;
  return recv(ch, &b, 1, MSG_DONTWAIT) == 0;
}
