/* A real broker process and real clients: grants, denials with the
 * documented errno, hostile raw datagrams (B1-B4, B8) that close only their
 * own channel, and a killed broker (F1). Each refusal has its control. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/sockios.h>

#include <glib.h>

#include "sandbox/broker/broker.h"
#include "sandbox/broker/client.h"
#include "sandbox/broker/protocol.h"
#include "sandbox/tests/broker/broker_test_util.h"

typedef struct {
  broker_test_tree t;
  sbx_allowlist *list;
  sbx_broker *b;
} fixture;

static void start(fixture *f) {
  broker_test_tree_make(&f->t);
  f->list = broker_test_tree_allowlist(&f->t, "worker");
  const sbx_allowlist *lists[] = {f->list};
  sbx_broker_config cfg = {
      .allowlists = lists, .n_allowlists = 1, .audit_fd = -1};
  GError *error = NULL;
  f->b = sbx_broker_start(&cfg, &error);
  ck_assert_msg(f->b != NULL, "%s", error ? error->message : "");
}

static void stop(fixture *f) {
  if (f->b)
    sbx_broker_stop(f->b, NULL, NULL);
  sbx_allowlist_free(f->list);
  broker_test_tree_free(&f->t);
}

static int connect_worker(fixture *f) {
  GError *error = NULL;
  int fd = sbx_broker_connect(f->b, "worker", &error);
  ck_assert_msg(fd >= 0, "%s", error ? error->message : "");
  return fd;
}

START_TEST(broker_serves_allowed_reads_writes_and_creates) {
  fixture f;
  start(&f);
  sbx_broker_client c;
  sbx_broker_client_init(&c, connect_worker(&f));
  int fd = sbx_broker_open(&c, f.t.good_file, O_RDONLY | O_CLOEXEC, 0);
  ck_assert_int_ge(fd, 0);
  char *s = broker_test_read_fd(fd);
  ck_assert_str_eq(s, "good");
  g_free(s);
  ck_assert_int_eq(fcntl(fd, F_GETFD), FD_CLOEXEC);
  close(fd);
  fd = sbx_broker_open(&c, f.t.good_file, O_RDONLY, 0);
  ck_assert_int_eq(fcntl(fd, F_GETFD), 0); /* not asked: not set */
  close(fd);
  char *p = broker_test_path(&f.t, "rw/new");
  fd = sbx_broker_open(&c, p, O_WRONLY | O_CREAT | O_EXCL, 0644);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(write(fd, "w", 1), 1);
  close(fd);
  struct stat st;
  ck_assert_int_eq(sbx_broker_stat(&c, p, &st), 0);
  ck_assert_int_eq(st.st_size, 1);
  ck_assert_int_eq(sbx_broker_access(&c, p, W_OK, 0), 0);
  char *q = broker_test_path(&f.t, "rw/renamed");
  ck_assert_int_eq(sbx_broker_rename(&c, p, q, 0), 0);
  ck_assert_int_eq(sbx_broker_unlink(&c, q), 0);
  char *d = broker_test_path(&f.t, "rw/dir");
  ck_assert_int_eq(sbx_broker_mkdir(&c, d, 0755), 0);
  ck_assert_int_eq(sbx_broker_rmdir(&c, d), 0);
  char *tmp = broker_test_path(&f.t, "tmp/t.XXXXXX");
  fd = sbx_broker_open(&c, tmp, O_RDWR | O_CREAT | O_EXCL, 0600);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(fstat(fd, &st), 0);
  ck_assert_int_eq(st.st_nlink, 0);
  close(fd);
  g_free(p);
  g_free(q);
  g_free(d);
  g_free(tmp);
  close(c.channel);
  stop(&f);
}
END_TEST

START_TEST(broker_denies_with_the_documented_errno) {
  fixture f;
  start(&f);
  sbx_broker_client c;
  sbx_broker_client_init(&c, connect_worker(&f));
  /* Control: the canary is readable without the broker. */
  int direct = open(f.t.canary, O_RDONLY | O_CLOEXEC);
  ck_assert_int_ge(direct, 0);
  close(direct);
  ck_assert_int_eq(sbx_broker_open(&c, f.t.canary, O_RDONLY, 0), -EACCES);
  ck_assert_int_eq(sbx_broker_open(&c, f.t.good_file, O_WRONLY, 0), -EACCES);
  ck_assert_int_eq(sbx_broker_open(&c, f.t.sibling, O_RDONLY, 0), -EACCES);
  char *missing = broker_test_path(&f.t, "good/missing");
  ck_assert_int_eq(sbx_broker_open(&c, missing, O_RDONLY, 0), -ENOENT);
  char *link = broker_test_path(&f.t, "good/evil");
  ck_assert_int_eq(symlink(f.t.canary, link), 0);
  ck_assert_int_eq(sbx_broker_open(&c, link, O_RDONLY, 0), -EACCES);
  char *dotdot = g_strconcat(f.t.good, "/../canary", NULL);
  ck_assert_int_eq(sbx_broker_open(&c, dotdot, O_RDONLY, 0), -EACCES);
  ck_assert_int_eq(sbx_broker_access(&c, f.t.good_file, 8, 0), -EINVAL);
  g_free(missing);
  g_free(link);
  g_free(dotdot);
  close(c.channel);
  stop(&f);
}
END_TEST

typedef enum {
  BAD_SHORT,
  BAD_MAGIC,
  BAD_VERSION,
  BAD_COMMAND,
  BAD_LENGTHS,
  BAD_NO_NUL,
  BAD_EMBEDDED_NUL,
  BAD_FIELDS,
  BAD_NO_FD,
  BAD_TWO_FDS,
  BAD_WRONG_FD_KIND,
  BAD_OVERSIZED,
  BAD_COUNT,
} bad_kind;

static void send_bad(int ch, bad_kind k, int reply_fd) {
  unsigned char buf[SBX_BROKER_MAX_REQUEST + 64];
  memset(buf, 0, sizeof(buf));
  sbx_broker_request h = {.magic = SBX_BROKER_MAGIC,
                          .version = SBX_BROKER_VERSION,
                          .command = SBX_BROKER_CMD_OPEN,
                          .path_len = 5};
  const char *path = "/etc";
  size_t len = sizeof(h) + 5;
  int fds[2] = {reply_fd, reply_fd};
  size_t n_fds = 1;
  switch (k) {
    case BAD_SHORT:
      len = 7;
      break;
    case BAD_MAGIC:
      h.magic ^= 1;
      break;
    case BAD_VERSION:
      h.version = 99;
      break;
    case BAD_COMMAND:
      h.command = 200;
      break;
    case BAD_LENGTHS:
      h.path_len = 60000;
      break;
    case BAD_NO_NUL:
      path = "/etcX";
      break;
    case BAD_EMBEDDED_NUL:
      path = "/e\0c";
      h.path_len = 5;
      break;
    case BAD_FIELDS:
      h.arg = 1u << 20;
      break;
    case BAD_NO_FD:
      n_fds = 0;
      break;
    case BAD_TWO_FDS:
      n_fds = 2;
      break;
    case BAD_WRONG_FD_KIND:
      break;
    case BAD_OVERSIZED:
      len = sizeof(buf);
      break;
    case BAD_COUNT:
      break;
  }
  memcpy(buf, &h, sizeof(h));
  memcpy(buf + sizeof(h), path, 5);
  broker_test_send_raw(ch, buf, len, fds, n_fds);
}

START_TEST(broker_closes_only_the_channel_of_a_hostile_client) {
  fixture f;
  start(&f);
  sbx_broker_client good;
  sbx_broker_client_init(&good, connect_worker(&f));
  for (int k = 0; k < BAD_COUNT; k++) {
    int ch = connect_worker(&f);
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
    int pipefd[2];
    ck_assert_int_eq(pipe(pipefd), 0);
    int reply = k == BAD_WRONG_FD_KIND ? pipefd[0] : sv[1];
    if (k == BAD_WRONG_FD_KIND) {
      /* A well-formed request whose reply descriptor is not a socket. */
      sbx_broker_request h = {.magic = SBX_BROKER_MAGIC,
                              .version = SBX_BROKER_VERSION,
                              .command = SBX_BROKER_CMD_STAT,
                              .path_len = (uint16_t)strlen(f.t.good_file) + 1};
      unsigned char buf[PATH_MAX + 64];
      memcpy(buf, &h, sizeof(h));
      memcpy(buf + sizeof(h), f.t.good_file, h.path_len);
      broker_test_send_raw(ch, buf, sizeof(h) + h.path_len, &reply, 1);
    } else {
      send_bad(ch, (bad_kind)k, reply);
    }
    close(sv[1]);
    close(pipefd[0]);
    ck_assert_msg(broker_test_channel_closed(ch),
                  "kind %d did not close its channel", k);
    /* B3/B8: nothing came back on the reply socket, and the broker closed
     * the descriptor it received (end of file, not a hang). */
    char b;
    struct pollfd p = {.fd = sv[0], .events = POLLIN};
    ck_assert_int_eq(poll(&p, 1, 3000), 1);
    ck_assert_int_eq(recv(sv[0], &b, 1, MSG_DONTWAIT), 0);
    close(sv[0]);
    close(pipefd[1]);
    close(ch);
    /* The other worker is served throughout. */
    int fd = sbx_broker_open(&good, f.t.good_file, O_RDONLY, 0);
    ck_assert_int_ge(fd, 0);
    close(fd);
  }
  sbx_broker_stats st;
  ck_assert(sbx_broker_get_stats(f.b, &st, NULL));
  ck_assert_uint_eq(st.bad_messages, BAD_COUNT);
  ck_assert_uint_eq(st.channels, 1);
  close(good.channel);
  stop(&f);
}
END_TEST

START_TEST(broker_peer_death_only_closes_that_channel) {
  fixture f;
  start(&f);
  int a = connect_worker(&f);
  int b = connect_worker(&f);
  close(a); /* B1 */
  sbx_broker_client c;
  sbx_broker_client_init(&c, b);
  int fd = sbx_broker_open(&c, f.t.good_file, O_RDONLY, 0);
  ck_assert_int_ge(fd, 0);
  close(fd);
  sbx_broker_stats st;
  ck_assert(sbx_broker_get_stats(f.b, &st, NULL));
  ck_assert_uint_eq(st.channels, 1);
  close(b);
  stop(&f);
}
END_TEST

typedef struct {
  sbx_broker_client c;
  const char *path;
  int fd;
} early_open;

static gpointer open_early(gpointer data) {
  early_open *o = data;
  o->fd = sbx_broker_open(&o->c, o->path, O_RDONLY | O_CLOEXEC, 0);
  return NULL;
}

/* The broker's worker channels, once they settle at want (the broker sees
 * a closed peer in its next turn), within a few seconds. */
static void assert_channels(fixture *f, uint64_t want) {
  sbx_broker_stats st = {0};
  for (int i = 0; i < 500; i++) {
    ck_assert(sbx_broker_get_stats(f->b, &st, NULL));
    if (st.channels == want)
      return;
    g_usleep(10000);
  }
  ck_abort_msg("%llu channels, not %llu", (unsigned long long)st.channels,
               (unsigned long long)want);
}

/* Until the worker's request sits in ch's socket, unread. */
static void wait_queued(int ch) {
  int queued = 0;
  while (ioctl(ch, SIOCOUTQ, &queued) == 0 && queued == 0)
    g_usleep(1000);
  ck_assert_int_gt(queued, 0);
}

/* Finishes the connect, then the early open of the good file (thread t)
 * must have been served. */
static void finish_and_read_early_open(sbx_broker_connecting *c, GThread *t,
                                       early_open *o) {
  GError *error = NULL;
  ck_assert_msg(sbx_broker_connect_finish(c, &error), "%s",
                error ? error->message : "");
  g_thread_join(t);
  ck_assert_int_ge(o->fd, 0);
  char *text = broker_test_read_fd(o->fd);
  ck_assert_str_eq(text, "good");
  g_free(text);
  close(o->fd);
}

/* A connect in two halves: a request the worker sends before the broker
 * has even read ADD_CHANNEL waits in the socket and is served; a channel
 * whose other end closed before the reply is dropped, and the one kept
 * open (the control) stays. */
START_TEST(a_begun_channel_queues_requests_and_drops_a_closed_peer) {
  fixture f;
  start(&f);
  pid_t broker = sbx_broker_pid(f.b);
  ck_assert_int_eq(kill(broker, SIGSTOP), 0);
  GError *error = NULL;
  early_open o = {.path = f.t.good_file, .fd = -1};
  int ch = -1;
  sbx_broker_connecting *c =
      sbx_broker_connect_begin(f.b, "worker", NULL, &ch, &error);
  ck_assert_msg(c != NULL, "%s", error ? error->message : "");
  sbx_broker_client_init(&o.c, ch);
  GThread *t = g_thread_new("early-open", open_early, &o);
  /* Its request is in the socket while the broker is still stopped. */
  wait_queued(ch);
  ck_assert_int_eq(kill(broker, SIGCONT), 0);
  finish_and_read_early_open(c, t, &o);
  assert_channels(&f, 1);

  int gone = -1;
  c = sbx_broker_connect_begin(f.b, "worker", NULL, &gone, &error);
  ck_assert_msg(c != NULL, "%s", error ? error->message : "");
  close(gone);
  ck_assert_msg(sbx_broker_connect_finish(c, &error), "%s",
                error ? error->message : "");
  assert_channels(&f, 1);
  close(ch);
  assert_channels(&f, 0);
  stop(&f);
}
END_TEST

/* A connect in steps: a prepared channel is not the broker's until its
 * request is sent. A request the worker sends on it before then waits in
 * the socket (the broker holds no channel yet) and is served once
 * ADD_CHANNEL goes out; _finish sends the request itself when _send was
 * never called. */
START_TEST(a_prepared_channel_is_served_once_its_request_is_sent) {
  fixture f;
  start(&f);
  GError *error = NULL;
  early_open o = {.path = f.t.good_file, .fd = -1};
  int ch = -1;
  sbx_broker_connecting *c =
      sbx_broker_connect_prepare(f.b, "worker", NULL, &ch, &error);
  ck_assert_msg(c != NULL, "%s", error ? error->message : "");
  sbx_broker_client_init(&o.c, ch);
  GThread *t = g_thread_new("early-open", open_early, &o);
  wait_queued(ch);
  assert_channels(&f, 0);
  sbx_broker_connect_send(c);
  finish_and_read_early_open(c, t, &o);
  assert_channels(&f, 1);

  int second = -1;
  c = sbx_broker_connect_prepare(f.b, "worker", NULL, &second, &error);
  ck_assert_msg(c != NULL, "%s", error ? error->message : "");
  ck_assert_msg(sbx_broker_connect_finish(c, &error), "%s",
                error ? error->message : "");
  assert_channels(&f, 2);
  close(second);
  close(ch);
  assert_channels(&f, 0);

  int none = -1;
  ck_assert_ptr_null(
      sbx_broker_connect_prepare(f.b, "no-such-type", NULL, &none, &error));
  ck_assert_int_eq(none, -1);
  ck_assert_ptr_nonnull(error);
  ck_assert_ptr_nonnull(strstr(error->message, "no-such-type"));
  g_clear_error(&error);
  stop(&f);
}
END_TEST

START_TEST(broker_killed_gives_a_clean_error) {
  fixture f;
  start(&f);
  sbx_broker_client c;
  sbx_broker_client_init(&c, connect_worker(&f));
  int fd = sbx_broker_open(&c, f.t.good_file, O_RDONLY, 0); /* control */
  ck_assert_int_ge(fd, 0);
  close(fd);
  ck_assert_int_eq(kill(sbx_broker_pid(f.b), SIGKILL), 0);
  int status = 0;
  ck_assert(sbx_broker_stop(f.b, &status, NULL));
  f.b = NULL;
  ck_assert(WIFSIGNALED(status));
  ck_assert_int_eq(sbx_broker_open(&c, f.t.good_file, O_RDONLY, 0), -EACCES);
  struct stat st;
  ck_assert_int_eq(sbx_broker_stat(&c, f.t.good_file, &st), -EACCES);
  close(c.channel);
  stop(&f);
}
END_TEST

/* The client's pooled thread channel belongs to the process that
 * registered it, under the number it had: a forked child registers its
 * own (and closes its copy of the parent's), and a number the program
 * closed and reused for another socket is never written to. */
static int pooled_slot(const sbx_broker_client *c) {
  for (int i = 0; i < SBX_BROKER_CLIENT_POOL; i++)
    if (c->pool[i].fd >= 0 && c->pool[i].ino != 0)
      return i;
  return -1;
}

static bool names_inode(int fd, unsigned long long ino) {
  struct stat st;
  return fstat(fd, &st) == 0 && (unsigned long long)st.st_ino == ino;
}

START_TEST(pooled_channels_stay_with_their_process_and_descriptor) {
  fixture f;
  start(&f);
  sbx_broker_client c;
  sbx_broker_client_init(&c, connect_worker(&f));
  int fd = sbx_broker_open(&c, f.t.good_file, O_RDONLY, 0); /* control */
  ck_assert_int_ge(fd, 0);
  close(fd);
  int slot = pooled_slot(&c);
  ck_assert_int_ge(slot, 0);
  int parent_fd = c.pool[slot].fd;
  unsigned long long parent_ino = c.pool[slot].ino;
  sbx_broker_stats st;
  ck_assert(sbx_broker_get_stats(f.b, &st, NULL));
  ck_assert_uint_eq(st.thread_channels, 1);

  pid_t child = fork();
  ck_assert_int_ge(child, 0);
  if (child == 0) {
    int cfd = sbx_broker_open(&c, f.t.good_file, O_RDONLY, 0);
    if (cfd < 0)
      _exit(1);
    close(cfd);
    /* Served on a channel of its own; the parent's copy is gone. */
    for (int i = 0; i < SBX_BROKER_CLIENT_POOL; i++)
      if (c.pool[i].fd >= 0 && c.pool[i].ino == parent_ino)
        _exit(2);
    if (names_inode(parent_fd, parent_ino))
      _exit(3);
    _exit(0);
  }
  int status = 0;
  ck_assert_int_eq(waitpid(child, &status, 0), child);
  ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child: %#x",
                status);
  /* The parent still uses its own channel. */
  fd = sbx_broker_open(&c, f.t.good_file, O_RDONLY, 0);
  ck_assert_int_ge(fd, 0);
  close(fd);
  ck_assert_int_eq(c.pool[slot].fd, parent_fd);
  ck_assert(names_inode(parent_fd, parent_ino));

  /* The number now names another socket: nothing is sent there, it stays
   * open, and the request goes on a new channel. */
  int impostor[2];
  ck_assert_int_eq(
      socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, impostor), 0);
  ck_assert_int_eq(dup2(impostor[0], parent_fd), parent_fd);
  fd = sbx_broker_open(&c, f.t.good_file, O_RDONLY, 0);
  ck_assert_int_ge(fd, 0);
  close(fd);
  char b;
  ck_assert_int_eq(recv(impostor[1], &b, 1, MSG_DONTWAIT), -1);
  ck_assert_int_eq(errno, EAGAIN);
  ck_assert_int_ge(fcntl(parent_fd, F_GETFD), 0);
  close(parent_fd);
  close(impostor[0]);
  close(impostor[1]);
  for (int i = 0; i < SBX_BROKER_CLIENT_POOL; i++)
    if (c.pool[i].fd >= 0)
      close(c.pool[i].fd);
  close(c.channel);
  stop(&f);
}
END_TEST

/* An exact entry opened for reading is handed out whatever kind of file
 * it is (the entry names that object), without O_NONBLOCK unless asked,
 * and a FIFO there does not block the broker; under a recursive entry
 * only regular files and directories are. */
START_TEST(exact_entries_open_any_object_without_blocking_the_broker) {
  fixture f;
  broker_test_tree_make(&f.t);
  f.list = broker_test_tree_allowlist(&f.t, "worker");
  g_autofree char *file = broker_test_path(&f.t, "exact.txt");
  g_autofree char *fifo = broker_test_path(&f.t, "exact.fifo");
  g_autofree char *deep_fifo = g_build_filename(f.t.good, "fifo", NULL);
  broker_test_write(file, "exact");
  ck_assert_int_eq(mkfifo(fifo, 0600), 0);
  ck_assert_int_eq(mkfifo(deep_fifo, 0600), 0);
  const char *exact[] = {file, fifo};
  for (size_t i = 0; i < G_N_ELEMENTS(exact); i++) {
    g_autofree char *rule = g_strdup_printf("read %s", exact[i]);
    GError *error = NULL;
    ck_assert_msg(sbx_allowlist_add_rule(f.list, rule, &error), "%s",
                  error ? error->message : "");
  }
  const sbx_allowlist *lists[] = {f.list};
  sbx_broker_config cfg = {
      .allowlists = lists, .n_allowlists = 1, .audit_fd = -1};
  GError *error = NULL;
  f.b = sbx_broker_start(&cfg, &error);
  ck_assert_msg(f.b != NULL, "%s", error ? error->message : "");
  sbx_broker_client c;
  sbx_broker_client_init(&c, connect_worker(&f));
  for (size_t i = 0; i < G_N_ELEMENTS(exact); i++) {
    int fd = sbx_broker_open(&c, exact[i], O_RDONLY | O_CLOEXEC, 0);
    ck_assert_msg(fd >= 0, "%s: %s", exact[i], g_strerror(-fd));
    ck_assert_msg(!(fcntl(fd, F_GETFL) & O_NONBLOCK), "%s", exact[i]);
    if (i == 0) {
      char *text = broker_test_read_fd(fd);
      ck_assert_str_eq(text, "exact");
      g_free(text);
    }
    close(fd);
  }
  /* Asked for, O_NONBLOCK stays. */
  int fd = sbx_broker_open(&c, file, O_RDONLY | O_NONBLOCK | O_CLOEXEC, 0);
  ck_assert_int_ge(fd, 0);
  ck_assert(fcntl(fd, F_GETFL) & O_NONBLOCK);
  close(fd);
  /* The same FIFO kind under the recursive good/ is refused, while a
   * regular file there is served. */
  ck_assert_int_eq(sbx_broker_open(&c, deep_fifo, O_RDONLY, 0), -EACCES);
  fd = sbx_broker_open(&c, f.t.good_file, O_RDONLY, 0);
  ck_assert_int_ge(fd, 0);
  close(fd);
  unlink(fifo);
  unlink(deep_fifo);
  unlink(file);
  close(c.channel);
  stop(&f);
}
END_TEST

/* Rules of one worker's own: on its channel only, within the type's
 * grantable entries (checked by the broker too), gone with the channel. */
START_TEST(broker_keeps_a_workers_own_rules_on_its_channel) {
  fixture f;
  broker_test_tree_make(&f.t);
  f.list = broker_test_tree_allowlist(&f.t, "worker");
  g_autofree char *scope = g_strdup_printf("grantable,read %s/", f.t.root);
  GError *error = NULL;
  ck_assert_msg(sbx_allowlist_add_rule(f.list, scope, &error), "%s",
                error ? error->message : "");
  const sbx_allowlist *lists[] = {f.list};
  sbx_broker_config cfg = {
      .allowlists = lists, .n_allowlists = 1, .audit_fd = -1};
  f.b = sbx_broker_start(&cfg, &error);
  ck_assert_msg(f.b != NULL, "%s", error ? error->message : "");

  sbx_allowlist *own = sbx_allowlist_new("worker");
  g_autofree char *rule = g_strdup_printf("read %s", f.t.canary);
  ck_assert(sbx_allowlist_add_rule(own, rule, NULL));
  int granted_fd = sbx_broker_connect_with_grants(f.b, "worker", own, &error);
  ck_assert_msg(granted_fd >= 0, "%s", error ? error->message : "");
  sbx_allowlist_free(own);
  sbx_broker_client granted, plain;
  sbx_broker_client_init(&granted, granted_fd);
  sbx_broker_client_init(&plain, connect_worker(&f));

  int fd = sbx_broker_open(&granted, f.t.canary, O_RDONLY, 0);
  ck_assert_int_ge(fd, 0);
  g_autofree char *text = broker_test_read_fd(fd);
  ck_assert_str_eq(text, "canary");
  close(fd);
  ck_assert_int_eq(sbx_broker_open(&plain, f.t.canary, O_RDONLY, 0), -EACCES);
  /* The type's rules still hold for both. */
  fd = sbx_broker_open(&granted, f.t.good_file, O_RDONLY, 0);
  ck_assert_int_ge(fd, 0);
  close(fd);
  fd = sbx_broker_open(&plain, f.t.good_file, O_RDONLY, 0);
  ck_assert_int_ge(fd, 0);
  close(fd);
  /* Read only: the grant is what was given, not the ceiling's kinds. */
  ck_assert_int_eq(sbx_broker_open(&granted, f.t.canary, O_WRONLY, 0), -EACCES);

  /* A grant wider than the grantable kinds: the broker refuses it even
   * though the host side did not check. */
  own = sbx_allowlist_new("worker");
  g_autofree char *wide = g_strdup_printf("create %s/", f.t.root);
  ck_assert(sbx_allowlist_add_rule(own, wide, NULL));
  ck_assert_int_lt(sbx_broker_connect_with_grants(f.b, "worker", own, &error),
                   0);
  ck_assert_msg(error && strstr(error->message, "with rules of its own") &&
                    strstr(error->message, g_strerror(EPERM)),
                "%s", error ? error->message : "no error");
  g_clear_error(&error);
  sbx_allowlist_free(own);

  sbx_broker_stats st;
  ck_assert(sbx_broker_get_stats(f.b, &st, NULL));
  ck_assert_uint_eq(st.channels, 2);
  close(granted_fd);
  close(plain.channel);
  stop(&f);
}
END_TEST

int main(void) {
  umask(022);
  Suite *s = suite_create("broker_integration");
  TCase *tc = tcase_create("broker");
  tcase_set_timeout(tc, 20);
  tcase_add_test(tc, broker_serves_allowed_reads_writes_and_creates);
  tcase_add_test(tc, broker_denies_with_the_documented_errno);
  tcase_add_test(tc, broker_closes_only_the_channel_of_a_hostile_client);
  tcase_add_test(tc, broker_peer_death_only_closes_that_channel);
  tcase_add_test(tc, broker_killed_gives_a_clean_error);
  tcase_add_test(tc, a_begun_channel_queues_requests_and_drops_a_closed_peer);
  tcase_add_test(tc, a_prepared_channel_is_served_once_its_request_is_sent);
  tcase_add_test(tc, broker_keeps_a_workers_own_rules_on_its_channel);
  tcase_add_test(tc, pooled_channels_stay_with_their_process_and_descriptor);
  tcase_add_test(tc, exact_entries_open_any_object_without_blocking_the_broker);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_ENV);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
