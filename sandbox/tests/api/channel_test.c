/* Message channels between a host and its workers (sbx.h, "Message
 * channels"), end to end: real workers under the built-in renderer
 * profile, each given a channel at spawn. Messages of every size, in
 * pieces and whole, descriptors both ways, a GMainContext on the host
 * side, timeouts, and a worker that dies, lies about lengths or sends
 * garbage: the host gets a clear error, every descriptor that came with
 * the garbage is closed, and it never hangs. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <glib.h>

#include "sandbox/tests/api/api_test_util.h"
#include "sbx/sbx.h"

#define BIG (3u * 1024 * 1024 + 17)

static api_dirs dirs;

static unsigned char pattern(uint64_t i) {
  return (unsigned char)(i * 131u + (i >> 9));
}

/* ---- Workers: what they do is the payload ------------------------------- */

/* Echoes every message back, bytes reversed, with the descriptors it
 * came with, until the host closes its end. */
static int worker_echo(sbx_channel *ch) {
  for (;;) {
    int fds[SBX_CHANNEL_MAX_FDS];
    size_t n_fds = 0;
    GError *error = NULL;
    GBytes *b = sbx_channel_recv(ch, 8u << 20, -1, fds, SBX_CHANNEL_MAX_FDS,
                                 &n_fds, &error);
    if (!b)
      return g_error_matches(error, SBX_ERROR, SBX_ERROR_FAILED) ? 0 : 10;
    gsize len;
    const unsigned char *p = g_bytes_get_data(b, &len);
    unsigned char *r = g_malloc(len ? len : 1);
    for (gsize i = 0; i < len; i++)
      r[i] = p[len - 1 - i];
    gboolean ok = sbx_channel_send(ch, r, len, fds, n_fds, -1, &error);
    for (size_t i = 0; i < n_fds; i++)
      close(fds[i]);
    g_free(r);
    g_bytes_unref(b);
    if (!ok)
      return 11;
  }
}

/* Streams BIG bytes of the pattern in pieces of 1000. */
static int worker_stream(sbx_channel *ch) {
  if (!sbx_channel_send_begin(ch, BIG, NULL, 0, -1, NULL))
    return 20;
  unsigned char piece[1000];
  for (uint64_t at = 0; at < BIG;) {
    size_t n = MIN(sizeof piece, BIG - at);
    for (size_t i = 0; i < n; i++)
      piece[i] = pattern(at + i);
    if (!sbx_channel_write(ch, piece, n, -1, NULL))
      return 21;
    at += n;
  }
  return 0;
}

/* Writes into the descriptor the host sent, then sends back the read end
 * of a pipe of its own with a line in it. */
static int worker_fds(sbx_channel *ch) {
  int fds[1];
  size_t n = 0;
  GBytes *b = sbx_channel_recv(ch, 64, -1, fds, 1, &n, NULL);
  if (!b || n != 1)
    return 30;
  g_bytes_unref(b);
  if (write(fds[0], "from the worker\n", 16) != 16)
    return 31;
  close(fds[0]);
  int p[2];
  if (pipe(p) != 0 || write(p[1], "its own pipe\n", 13) != 13)
    return 32;
  close(p[1]);
  return sbx_channel_send(ch, "pipe", 4, &p[0], 1, -1, NULL) ? 0 : 33;
}

/* A raw packet of the given kind on the channel's descriptor, bypassing
 * the framing: what a compromised worker can do. */
static int send_raw(sbx_channel *ch, const void *bytes, size_t len, int n_fds) {
  int fds[3];
  for (int i = 0; i < n_fds; i++)
    fds[i] = dup(2);
  struct iovec iov = {(void *)bytes, len};
  union {
    char buf[CMSG_SPACE(sizeof fds)];
    struct cmsghdr align;
  } u;
  memset(&u, 0, sizeof u);
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
  if (n_fds) {
    msg.msg_control = u.buf;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
    memcpy(CMSG_DATA(c), fds, sizeof(int) * n_fds);
  }
  return sendmsg(sbx_channel_fd(ch), &msg, 0) == (ssize_t)len ? 0 : 40;
}

/* The channel's frame header, as the library writes it. */
typedef struct {
  uint32_t magic, flags, n_fds, reserved;
  uint64_t total;
} raw_frame;

static int worker_garbage(sbx_channel *ch) {
  static const char junk[] = "this is not a message at all";
  return send_raw(ch, junk, sizeof junk, 3);
}

/* Announces 100 bytes and ends after 10. */
static int worker_short(sbx_channel *ch) {
  struct {
    raw_frame f;
    char data[10];
  } pkt = {{0x6d786273u, 1u | 2u, 0, 0, 100}, "0123456789"};
  return send_raw(ch, &pkt, sizeof pkt, 0);
}

/* Announces one descriptor and sends three. */
static int worker_extra_fds(sbx_channel *ch) {
  raw_frame f = {0x6d786273u, 1u | 2u, 1, 0, 0};
  return send_raw(ch, &f, sizeof f, 3);
}

/* Sends one message after the host has waited for a while. */
static int worker_late(sbx_channel *ch) {
  char go;
  if (read(3, &go, 1) != 1)
    return 50;
  return sbx_channel_send(ch, "late", 4, NULL, 0, -1, NULL) ? 0 : 51;
}

static int entry(const sbx_worker_args *args) {
  g_autofree char *what = g_strndup(args->payload, args->payload_len);
  if (strcmp(what, "none") == 0)
    return args->channel ? 60 : 0;
  if (!args->channel)
    return 61;
  if (strcmp(what, "echo") == 0)
    return worker_echo(args->channel);
  if (strcmp(what, "stream") == 0)
    return worker_stream(args->channel);
  if (strcmp(what, "fds") == 0)
    return worker_fds(args->channel);
  if (strcmp(what, "garbage") == 0)
    return worker_garbage(args->channel);
  if (strcmp(what, "short") == 0)
    return worker_short(args->channel);
  if (strcmp(what, "extra-fds") == 0)
    return worker_extra_fds(args->channel);
  if (strcmp(what, "late") == 0)
    return worker_late(args->channel);
  if (strcmp(what, "exit") == 0)
    return 0;
  return 62;
}

/* ---- The host ------------------------------------------------------------ */

static sbx_sandbox *start(void) {
  static char rule[192];
  static const char *rules[2];
  api_home_rules(&dirs, rule, sizeof rule, rules);
  sbx_process_type t = SBX_PROCESS_TYPE_INIT(.name = "renderer", .entry = entry,
                                             .extra_rules = rules);
  sbx_sandbox_config config =
      SBX_SANDBOX_CONFIG_INIT(.types = &t, .n_types = 1,
                              .audit_log = dirs.audit_log);
  sbx_sandbox *s = NULL;
  GError *error = NULL;
  if (!sbx_sandbox_start(&config, &s, &error))
    ck_abort_msg("start: %s", error->message);
  return s;
}

/* Spawns a worker doing what; *ch its channel (NULL: none asked). fd 3 of
 * the worker is extra (or /dev/null). */
static pid_t spawn(sbx_sandbox *s, const char *what, sbx_channel **ch,
                   int extra) {
  int fds[] = {0, 1, 2, extra};
  sbx_spawn_config c =
      SBX_SPAWN_CONFIG_INIT(.process_type = "renderer", .payload = what,
                            .payload_len = strlen(what), .fds = fds,
                            .n_fds = extra >= 0 ? 4 : 3, .channel = ch);
  pid_t pid = -1;
  GError *error = NULL;
  if (!sbx_sandbox_spawn(s, &c, &pid, &error))
    ck_abort_msg("spawn: %s", error->message);
  if (ch)
    ck_assert_ptr_nonnull(*ch);
  return pid;
}

static int exit_code(sbx_sandbox *s, pid_t pid) {
  sbx_worker_exit e = SBX_WORKER_EXIT_INIT();
  GError *error = NULL;
  if (!sbx_sandbox_wait(s, pid, 30000, &e, &error))
    ck_abort_msg("wait: %s", error->message);
  ck_assert_msg(e.reason == SBX_EXIT_NORMAL, "%s", e.detail);
  return e.exit_code;
}

static int open_fds(void) {
  int n = 0;
  DIR *d = opendir("/proc/self/fd");
  ck_assert_ptr_nonnull(d);
  while (readdir(d))
    n++;
  closedir(d);
  return n;
}

static void setup(void) {
  api_dirs_make(&dirs);
}

static void teardown(void) {
  api_dirs_remove(&dirs);
}

START_TEST(messages_of_every_size_go_both_ways) {
  sbx_sandbox *s = start();
  sbx_channel *ch = NULL;
  pid_t pid = spawn(s, "echo", &ch, -1);
  static const size_t sizes[] = {0, 1, 10, 65536 - 24, 65536, 1u << 20, BIG};
  for (size_t k = 0; k < G_N_ELEMENTS(sizes); k++) {
    size_t len = sizes[k];
    unsigned char *msg = g_malloc(len ? len : 1);
    for (size_t i = 0; i < len; i++)
      msg[i] = pattern(i);
    GError *error = NULL;
    ck_assert_msg(sbx_channel_send(ch, msg, len, NULL, 0, 10000, &error), "%s",
                  error ? error->message : "");
    GBytes *b = sbx_channel_recv(ch, len, 10000, NULL, 0, NULL, &error);
    ck_assert_msg(b, "%zu: %s", len, error ? error->message : "");
    gsize got;
    const unsigned char *p = g_bytes_get_data(b, &got);
    ck_assert_uint_eq(got, len);
    for (size_t i = 0; i < len; i++)
      ck_assert_uint_eq(p[i], msg[len - 1 - i]);
    g_bytes_unref(b);
    g_free(msg);
  }
  sbx_channel_close(ch); /* the worker sees the end and exits 0 */
  ck_assert_int_eq(exit_code(s, pid), 0);
  sbx_sandbox_stop(s);
}
END_TEST

START_TEST(a_message_is_read_in_pieces_with_bounded_memory) {
  sbx_sandbox *s = start();
  sbx_channel *ch = NULL;
  pid_t pid = spawn(s, "stream", &ch, -1);
  uint64_t len = 0;
  GError *error = NULL;
  ck_assert_msg(sbx_channel_recv_begin(ch, 10000, &len, NULL, 0, NULL, &error),
                "%s", error ? error->message : "");
  ck_assert_uint_eq(len, BIG);
  unsigned char piece[4096];
  uint64_t at = 0;
  for (;;) {
    size_t got = 0;
    ck_assert(sbx_channel_read(ch, piece, sizeof piece, 10000, &got, &error));
    if (got == 0)
      break;
    for (size_t i = 0; i < got; i++)
      ck_assert_uint_eq(piece[i], pattern(at + i));
    at += got;
  }
  ck_assert_uint_eq(at, BIG);
  ck_assert_int_eq(exit_code(s, pid), 0);
  sbx_channel_close(ch);
  sbx_sandbox_stop(s);
}
END_TEST

/* A non-blocking whole-message receive that returns before the message
 * is complete keeps what it has: the next call goes on with it. */
START_TEST(a_non_blocking_receive_goes_on_where_it_stopped) {
  sbx_sandbox *s = start();
  sbx_channel *ch = NULL;
  pid_t pid = spawn(s, "stream", &ch, -1);
  GBytes *b = NULL;
  int waits = 0;
  while (!b) {
    GError *error = NULL;
    b = sbx_channel_recv(ch, BIG, 0, NULL, 0, NULL, &error);
    if (b)
      break;
    api_assert_error(error, SBX_ERROR, SBX_ERROR_TIMED_OUT);
    g_clear_error(&error);
    struct pollfd p = {.fd = sbx_channel_fd(ch), .events = POLLIN};
    ck_assert_int_eq(poll(&p, 1, 10000), 1);
    waits++;
  }
  gsize len;
  const unsigned char *p = g_bytes_get_data(b, &len);
  ck_assert_uint_eq(len, BIG);
  for (gsize i = 0; i < len; i++)
    ck_assert_uint_eq(p[i], pattern(i));
  ck_assert_int_gt(waits, 0);
  g_bytes_unref(b);
  ck_assert_int_eq(exit_code(s, pid), 0);
  sbx_channel_close(ch);
  sbx_sandbox_stop(s);
}
END_TEST

START_TEST(descriptors_travel_both_ways) {
  sbx_sandbox *s = start();
  sbx_channel *ch = NULL;
  pid_t pid = spawn(s, "fds", &ch, -1);
  int p[2];
  ck_assert_int_eq(pipe(p), 0);
  ck_assert(sbx_channel_send(ch, "w", 1, &p[1], 1, 10000, NULL));
  close(p[1]);
  char buf[64] = {0};
  ck_assert_int_eq(read(p[0], buf, sizeof buf - 1), 16);
  ck_assert_str_eq(buf, "from the worker\n");
  close(p[0]);
  int back[1];
  size_t n = 0;
  GError *error = NULL;
  GBytes *b = sbx_channel_recv(ch, 64, 10000, back, 1, &n, &error);
  ck_assert_msg(b, "%s", error ? error->message : "");
  ck_assert_uint_eq(n, 1);
  memset(buf, 0, sizeof buf);
  ck_assert_int_eq(read(back[0], buf, sizeof buf - 1), 13);
  ck_assert_str_eq(buf, "its own pipe\n");
  close(back[0]);
  g_bytes_unref(b);
  ck_assert_int_eq(exit_code(s, pid), 0);
  sbx_channel_close(ch);
  sbx_sandbox_stop(s);
}
END_TEST

/* A worker that lies is refused with a clear error, every descriptor it
 * sent is closed, and the channel stays broken. */
static const char *const lies[] = {"garbage", "short", "extra-fds"};

START_TEST(a_malformed_message_is_refused_and_its_descriptors_closed) {
  sbx_sandbox *s = start();
  sbx_channel *ch = NULL;
  pid_t pid = spawn(s, lies[_i], &ch, -1);
  ck_assert_int_eq(exit_code(s, pid), 0);
  int before = open_fds();
  int fds[SBX_CHANNEL_MAX_FDS];
  size_t n = 99;
  GError *error = NULL;
  GBytes *b =
      sbx_channel_recv(ch, 1024, 10000, fds, SBX_CHANNEL_MAX_FDS, &n, &error);
  ck_assert_ptr_null(b);
  api_assert_error(error, SBX_ERROR, SBX_ERROR_INVALID);
  ck_assert_msg(strstr(error->message, "malformed message"), "%s",
                error->message);
  g_clear_error(&error);
  ck_assert_uint_eq(n, 0);
  ck_assert_int_eq(open_fds(), before);
  /* Broken for good. */
  ck_assert(!sbx_channel_send(ch, "x", 1, NULL, 0, 0, &error));
  api_assert_error(error, SBX_ERROR, SBX_ERROR_FAILED);
  g_clear_error(&error);
  sbx_channel_close(ch);
  sbx_sandbox_stop(s);
}
END_TEST

START_TEST(a_worker_that_is_gone_is_an_error_not_a_hang) {
  sbx_sandbox *s = start();
  sbx_channel *ch = NULL;
  pid_t pid = spawn(s, "exit", &ch, -1);
  ck_assert_int_eq(exit_code(s, pid), 0);
  GError *error = NULL;
  ck_assert_ptr_null(sbx_channel_recv(ch, 16, -1, NULL, 0, NULL, &error));
  api_assert_error(error, SBX_ERROR, SBX_ERROR_FAILED);
  ck_assert_msg(strstr(error->message, "closed the channel"), "%s",
                error->message);
  g_clear_error(&error);
  ck_assert(!sbx_channel_send(ch, "x", 1, NULL, 0, -1, &error));
  api_assert_error(error, SBX_ERROR, SBX_ERROR_FAILED);
  g_clear_error(&error);
  sbx_channel_close(ch);
  sbx_sandbox_stop(s);
}
END_TEST

typedef struct {
  sbx_channel *ch;
  GBytes *got;
  GMainLoop *loop;
} watch;

static gboolean on_message(gint fd, GIOCondition cond, gpointer data) {
  watch *w = data;
  GError *error = NULL;
  w->got = sbx_channel_recv(w->ch, 64, 0, NULL, 0, NULL, &error);
  if (!w->got)
    fprintf(stderr, "on_message: %s\n", error->message);
  g_clear_error(&error);
  g_main_loop_quit(w->loop);
  return G_SOURCE_REMOVE;
}

START_TEST(timeouts_fire_and_a_main_context_sees_the_message) {
  sbx_sandbox *s = start();
  int go[2];
  ck_assert_int_eq(pipe(go), 0);
  sbx_channel *ch = NULL;
  pid_t pid = spawn(s, "late", &ch, go[0]);
  close(go[0]);
  GError *error = NULL;
  /* Nothing yet: a non-blocking call and a bounded one both say so. */
  ck_assert_ptr_null(sbx_channel_recv(ch, 64, 0, NULL, 0, NULL, &error));
  api_assert_error(error, SBX_ERROR, SBX_ERROR_TIMED_OUT);
  g_clear_error(&error);
  ck_assert_ptr_null(sbx_channel_recv(ch, 64, 100, NULL, 0, NULL, &error));
  api_assert_error(error, SBX_ERROR, SBX_ERROR_TIMED_OUT);
  g_clear_error(&error);

  GMainContext *ctx = g_main_context_new();
  watch w = {.ch = ch, .loop = g_main_loop_new(ctx, FALSE)};
  GSource *src = sbx_channel_source_new(ch);
  ck_assert_ptr_nonnull(src);
  g_source_set_callback(src, G_SOURCE_FUNC(on_message), &w, NULL);
  g_source_attach(src, ctx);
  ck_assert_int_eq(write(go[1], "g", 1), 1);
  g_main_loop_run(w.loop);
  ck_assert_ptr_nonnull(w.got);
  gsize len;
  const char *p = g_bytes_get_data(w.got, &len);
  ck_assert_uint_eq(len, 4);
  ck_assert_int_eq(memcmp(p, "late", 4), 0);
  g_bytes_unref(w.got);
  g_source_destroy(src);
  g_source_unref(src);
  g_main_loop_unref(w.loop);
  g_main_context_unref(ctx);
  close(go[1]);
  ck_assert_int_eq(exit_code(s, pid), 0);
  sbx_channel_close(ch);
  sbx_sandbox_stop(s);
}
END_TEST

START_TEST(no_channel_unless_asked_and_null_arguments_are_errors) {
  sbx_sandbox *s = start();
  pid_t pid = spawn(s, "none", NULL, -1);
  ck_assert_int_eq(exit_code(s, pid), 0);
  sbx_sandbox_stop(s);

  GError *error = NULL;
  ck_assert(!sbx_channel_send(NULL, "x", 1, NULL, 0, 0, &error));
  api_assert_error(error, SBX_ERROR, SBX_ERROR_INVALID);
  g_clear_error(&error);
  ck_assert_ptr_null(sbx_channel_recv(NULL, 1, 0, NULL, 0, NULL, &error));
  api_assert_error(error, SBX_ERROR, SBX_ERROR_INVALID);
  g_clear_error(&error);
  uint64_t len;
  ck_assert(!sbx_channel_recv_begin(NULL, 0, &len, NULL, 0, NULL, &error));
  api_assert_error(error, SBX_ERROR, SBX_ERROR_INVALID);
  g_clear_error(&error);
  size_t got;
  ck_assert(!sbx_channel_read(NULL, &len, sizeof len, 0, &got, &error));
  api_assert_error(error, SBX_ERROR, SBX_ERROR_INVALID);
  g_clear_error(&error);
  ck_assert(!sbx_channel_write(NULL, "x", 1, 0, &error));
  api_assert_error(error, SBX_ERROR, SBX_ERROR_INVALID);
  g_clear_error(&error);
  ck_assert(!sbx_channel_send_begin(NULL, 1, NULL, 0, 0, &error));
  api_assert_error(error, SBX_ERROR, SBX_ERROR_INVALID);
  g_clear_error(&error);
  ck_assert_int_eq(sbx_channel_fd(NULL), -1);
  ck_assert_ptr_null(sbx_channel_source_new(NULL));
  sbx_channel_close(NULL);
}
END_TEST

static Suite *channel_suite(void) {
  Suite *s = suite_create("api_channel");
  TCase *tc = tcase_create("channel");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, messages_of_every_size_go_both_ways);
  tcase_add_test(tc, a_message_is_read_in_pieces_with_bounded_memory);
  tcase_add_test(tc, a_non_blocking_receive_goes_on_where_it_stopped);
  tcase_add_test(tc, descriptors_travel_both_ways);
  tcase_add_loop_test(tc,
                      a_malformed_message_is_refused_and_its_descriptors_closed,
                      0, G_N_ELEMENTS(lies));
  tcase_add_test(tc, a_worker_that_is_gone_is_an_error_not_a_hang);
  tcase_add_test(tc, timeouts_fire_and_a_main_context_sees_the_message);
  tcase_add_test(tc, no_channel_unless_asked_and_null_arguments_are_errors);
  suite_add_tcase(s, tc);
  return s;
}

int main(int argc, char **argv) {
  sbx_main_hook(argc, argv);
  return api_run_suite(channel_suite());
}
