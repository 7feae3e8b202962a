/* The audit log's promises (audit.h), checked on the module itself with
 * sinks the test holds the other end of: every line is one line, within
 * its maximum, and parses; a worker's denials stay within its budget and
 * the rest are counted; a sink that does not take lines costs lines, not
 * time, and the count of what was lost comes back once it drains; the
 * caller's description of the sink keeps its flags. Times are passed in,
 * so the budgets are exact. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include <glib.h>

#include "sandbox/broker/audit.h"
#include "sandbox/broker/protocol.h"

/* ---- Reading lines back ------------------------------------------------- */

/* Everything the pipe or terminal holds now. */
static char *drain(int fd) {
  GString *s = g_string_new(NULL);
  int fl = fcntl(fd, F_GETFL);
  fcntl(fd, F_SETFL, fl | O_NONBLOCK);
  char buf[65536];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0)
    g_string_append_len(s, buf, n);
  fcntl(fd, F_SETFL, fl);
  return g_string_free(s, FALSE);
}

static guint count_lines_with(const char *text, const char *needle) {
  guint n = 0;
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  for (char **l = lines; *l; l++)
    n += strstr(*l, needle) != NULL;
  return n;
}

/* Parses one audit line as a reader would: "sbx: WORD" then key=value
 * fields, a value either bare or between quotes that hold no quote.
 * Fails the test unless it is exactly one line of printable ASCII within
 * the maximum. Returns the fields (key -> value). */
static GHashTable *parse_line(const char *line, size_t len) {
  ck_assert_uint_le(len, SBX_AUDIT_LINE_MAX);
  ck_assert_uint_ge(len, 6);
  ck_assert_msg(line[len - 1] == '\n', "no newline at the end: %.*s", (int)len,
                line);
  for (size_t i = 0; i + 1 < len; i++)
    ck_assert_msg(line[i] >= 0x20 && line[i] <= 0x7e,
                  "byte 0x%02x at %zu is not printable", (unsigned char)line[i],
                  i);
  ck_assert(g_str_has_prefix(line, "sbx: "));
  GHashTable *f =
      g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  const char *p = line + 5;
  const char *end = line + len - 1;
  const char *word = p;
  while (p < end && *p != ' ')
    p++;
  g_hash_table_insert(f, g_strdup(""), g_strndup(word, p - word));
  while (p < end) {
    ck_assert_msg(*p == ' ', "fields are separated by one space: %s", p);
    p++;
    const char *key = p;
    while (p < end && *p != '=' && *p != ' ' && *p != '"')
      p++;
    ck_assert_msg(p < end && *p == '=' && p > key, "not key=value: %s", key);
    char *k = g_strndup(key, p - key);
    p++;
    const char *value = p;
    if (*p == '"') {
      const char *close = memchr(p + 1, '"', end - p - 1);
      ck_assert_msg(close != NULL, "unterminated quote in %s", k);
      value = p + 1;
      g_hash_table_insert(f, k, g_strndup(value, close - value));
      p = close + 1;
    } else {
      while (p < end && *p != ' ')
        p++;
      g_hash_table_insert(f, k, g_strndup(value, p - value));
    }
    ck_assert_msg(p == end || *p == ' ', "junk after a field: %s", p);
  }
  return f;
}

static const char *field(GHashTable *f, const char *key) {
  return g_hash_table_lookup(f, key);
}

static char *format(const sbx_audit_record *rec, size_t *len) {
  char *buf = g_malloc(SBX_AUDIT_LINE_MAX + 1);
  *len = sbx_audit_format(rec, buf, SBX_AUDIT_LINE_MAX + 1);
  ck_assert_uint_eq(*len, strlen(buf));
  return buf;
}

static sbx_audit_record denial(const char *path, pid_t pid) {
  return (sbx_audit_record){.type = "renderer",
                            .pid = pid,
                            .op = "open",
                            .path = path,
                            .fs_op = SBX_FS_OP_OPEN,
                            .flags = O_RDONLY | O_CLOEXEC,
                            .granted = false,
                            .result = -EACCES,
                            .reason = "not in the allowlist"};
}

/* ---- Lines --------------------------------------------------------------- */

START_TEST(a_short_printable_path_is_written_unchanged) {
  sbx_audit_record rec = denial("/etc/shadow", 1234);
  size_t len;
  g_autofree char *line = format(&rec, &len);
  ck_assert_str_eq(line,
                   "sbx: denied op=open path=\"/etc/shadow\" "
                   "flags=O_RDONLY|O_CLOEXEC type=renderer pid=1234 "
                   "errno=EACCES reason=\"not in the allowlist\"\n");
  g_autoptr(GHashTable) f = parse_line(line, len);
  ck_assert_str_eq(field(f, "path"), "/etc/shadow");
  ck_assert_ptr_null(field(f, "path_len"));
}
END_TEST

START_TEST(a_path_of_path_max_bytes_of_0xff_gives_one_bounded_line) {
  char path[PATH_MAX];
  path[0] = '/';
  memset(path + 1, 0xff, PATH_MAX - 2);
  path[PATH_MAX - 1] = '\0'; /* PATH_MAX - 1 bytes, the most a request has */
  sbx_audit_record rec = denial(path, 77);
  rec.path2 = path;
  size_t len;
  g_autofree char *line = format(&rec, &len);
  g_autoptr(GHashTable) f = parse_line(line, len);
  ck_assert_str_eq(field(f, ""), "denied");
  const char *shown = field(f, "path");
  ck_assert_uint_le(strlen(shown), SBX_AUDIT_PATH_MAX);
  ck_assert(g_str_has_prefix(shown, "/\\xff\\xff"));
  ck_assert(g_str_has_suffix(shown, "\\xff..."));
  ck_assert_str_eq(field(f, "path_len"), "4095");
  ck_assert_str_eq(field(f, "path2_len"), "4095");
  ck_assert_str_eq(field(f, "path2"), shown);
  /* The fields after the paths are all there. */
  ck_assert_str_eq(field(f, "type"), "renderer");
  ck_assert_str_eq(field(f, "pid"), "77");
  ck_assert_str_eq(field(f, "reason"), "not in the allowlist");
}
END_TEST

START_TEST(
    quotes_backslashes_and_newlines_in_a_path_cannot_end_or_forge_a_line) {
  const char *path =
      "/tmp/a\" type=host pid=1\nsbx: granted op=open "
      "path=\"/etc/shadow\\\"\r\t";
  sbx_audit_record rec = denial(path, 5);
  size_t len;
  g_autofree char *line = format(&rec, &len);
  g_autoptr(GHashTable) f = parse_line(line, len);
  ck_assert_str_eq(field(f, ""), "denied");
  ck_assert_str_eq(field(f, "type"), "renderer");
  ck_assert_str_eq(field(f, "pid"), "5");
  ck_assert_str_eq(field(f, "path"),
                   "/tmp/a\\x22 type=host pid=1\\x0asbx: granted op=open "
                   "path=\\x22/etc/shadow\\x5c\\x22\\x0d\\x09");
}
END_TEST

/* target and allow: on one-path lines, cut like the others; the longest
 * one-path line with both still keeps every field. */
START_TEST(a_denial_names_its_target_and_the_rule_that_would_allow_it) {
  sbx_audit_record rec = denial("/etc/fonts/conf.d/10-a.conf", 7);
  rec.target = "/usr/share/fontconfig/conf.avail/10-a.conf";
  rec.allow = "read /usr/share/fontconfig/conf.avail/10-a.conf";
  size_t len;
  g_autofree char *line = format(&rec, &len);
  g_autoptr(GHashTable) f = parse_line(line, len);
  ck_assert_str_eq(field(f, "target"), rec.target);
  ck_assert_str_eq(field(f, "allow"), rec.allow);

  char path[PATH_MAX], type[200], reason[300];
  memset(path, 0x01, PATH_MAX - 1);
  path[PATH_MAX - 1] = '\0';
  memset(type, '\x7f', sizeof type - 1);
  type[sizeof type - 1] = '\0';
  memset(reason, '"', sizeof reason - 1);
  reason[sizeof reason - 1] = '\0';
  sbx_audit_record big = {.type = type,
                          .pid = INT_MIN,
                          .op = "open",
                          .path = path,
                          .fs_op = SBX_FS_OP_OPEN,
                          .flags = 0xffffffffu,
                          .result = -ENOTRECOVERABLE,
                          .reason = reason,
                          .target = path,
                          .allow = path};
  g_autofree char *longest = format(&big, &len);
  g_autoptr(GHashTable) g = parse_line(longest, len);
  const char *keys[] = {"path",  "flags",  "type",   "pid",
                        "errno", "reason", "target", "allow"};
  for (size_t i = 0; i < G_N_ELEMENTS(keys); i++)
    ck_assert_msg(field(g, keys[i]) != NULL, "no %s in %s", keys[i], longest);
  ck_assert_uint_le(strlen(field(g, "allow")), SBX_AUDIT_HINT_MAX);

  /* With a second path they are left out. */
  rec.path2 = "/tmp/x";
  g_autofree char *two = format(&rec, &len);
  ck_assert_ptr_null(strstr(two, "target="));
  ck_assert_ptr_null(strstr(two, "allow="));
}
END_TEST

START_TEST(the_longest_record_keeps_every_field_within_the_maximum) {
  char path[PATH_MAX];
  memset(path, 0x01, PATH_MAX - 1);
  path[PATH_MAX - 1] = '\0';
  char type[200], reason[300];
  memset(type, '\x7f', sizeof type - 1);
  type[sizeof type - 1] = '\0';
  memset(reason, '"', sizeof reason - 1);
  reason[sizeof reason - 1] = '\0';
  sbx_audit_record rec = {.type = type,
                          .pid = INT_MIN,
                          .op = "open",
                          .path = path,
                          .path2 = path,
                          .fs_op = SBX_FS_OP_OPEN,
                          .flags = 0xffffffffu,
                          .granted = true,
                          .result = -ENOTRECOVERABLE,
                          .reason = reason};
  size_t len;
  g_autofree char *line = format(&rec, &len);
  g_autoptr(GHashTable) f = parse_line(line, len);
  const char *keys[] = {"op",    "path", "path_len", "path2", "path2_len",
                        "flags", "type", "pid",      "errno", "reason"};
  for (size_t i = 0; i < G_N_ELEMENTS(keys); i++)
    ck_assert_msg(field(f, keys[i]) != NULL, "no %s in %s", keys[i], line);
  ck_assert_uint_le(strlen(field(f, "type")), SBX_AUDIT_NAME_MAX);
  ck_assert_uint_le(strlen(field(f, "reason")), SBX_AUDIT_REASON_MAX);
  ck_assert(g_str_has_suffix(field(f, "reason"), "..."));
  ck_assert_str_eq(field(f, "errno"), "ENOTRECOVERABLE");

  /* A buffer smaller than a line still gets one line. */
  char small[64];
  size_t n = sbx_audit_format(&rec, small, sizeof small);
  ck_assert_uint_eq(n, sizeof small - 1);
  ck_assert_int_eq(small[n - 1], '\n');
  ck_assert_ptr_null(memchr(small, '\n', n - 1));
}
END_TEST

/* ---- Sinks --------------------------------------------------------------- */

typedef struct {
  int read_end;
  sbx_audit audit;
} pipe_sink;

static void pipe_sink_open(pipe_sink *p, unsigned flags, int *callers_end) {
  int fds[2];
  ck_assert_int_eq(pipe2(fds, O_CLOEXEC), 0);
  p->read_end = fds[0];
  int broker_copy = fcntl(fds[1], F_DUPFD_CLOEXEC, 0);
  ck_assert_int_ge(broker_copy, 0);
  sbx_audit_open(&p->audit, broker_copy, false, flags);
  if (callers_end)
    *callers_end = fds[1];
  else
    close(fds[1]);
}

static void pipe_sink_close(pipe_sink *p) {
  sbx_audit_close(&p->audit);
  close(p->read_end);
}

/* Fills the pipe behind fd to the last byte, through a description of the
 * test's own: then no line fits, whatever its length. */
static void stuff(int fd) {
  char path[40];
  g_snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  int own = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  ck_assert_int_ge(own, 0);
  static const char page[4096];
  while (write(own, page, sizeof page) > 0) {
  }
  while (write(own, page, 1) > 0) {
  }
  ck_assert_int_eq(errno, EAGAIN);
  close(own);
}

/* Writes denials until the sink drops one; returns how many it took. */
static unsigned fill(sbx_audit *a) {
  sbx_audit_record rec = denial("/fill", 1);
  unsigned taken = 0;
  while (a->dropped == 0 && taken < 100000) {
    sbx_audit_write(a, &rec);
    taken += a->dropped == 0;
  }
  ck_assert_uint_eq(a->dropped, 1);
  return taken;
}

START_TEST(a_full_sink_drops_lines_and_counts_them_in_the_next_line_it_takes) {
  pipe_sink p;
  pipe_sink_open(&p, 0, NULL);
  ck_assert_int_eq(p.audit.kind, SBX_AUDIT_SINK_OWN);
  /* Control: an empty sink takes the line. */
  sbx_audit_record first = denial("/before", 1);
  sbx_audit_write(&p.audit, &first);
  g_autofree char *before = drain(p.read_end);
  ck_assert_uint_eq(count_lines_with(before, "path=\"/before\""), 1);

  stuff(p.audit.fd);
  for (int i = 0; i < 5; i++) {
    sbx_audit_record rec = denial("/lost", 1);
    sbx_audit_write(&p.audit, &rec);
  }
  ck_assert_uint_eq(p.audit.dropped, 5);
  ck_assert(sbx_audit_owes(&p.audit));
  sbx_audit_flush(&p.audit); /* still full: nothing changes */
  ck_assert_uint_eq(p.audit.dropped, 5);

  g_autofree char *filled = drain(p.read_end);
  ck_assert(!strstr(filled, "/lost"));
  sbx_audit_record after = denial("/after", 1);
  sbx_audit_write(&p.audit, &after);
  g_autofree char *out = drain(p.read_end);
  ck_assert_str_eq(out,
                   "sbx: dropped lines=5\nsbx: denied op=open "
                   "path=\"/after\" flags=O_RDONLY|O_CLOEXEC "
                   "type=renderer pid=1 errno=EACCES "
                   "reason=\"not in the allowlist\"\n");
  ck_assert(!sbx_audit_owes(&p.audit));
  ck_assert_uint_eq(p.audit.dropped_total, 5);
  pipe_sink_close(&p);
}
END_TEST

START_TEST(a_drained_sink_gets_the_count_without_waiting_for_another_line) {
  pipe_sink p;
  pipe_sink_open(&p, 0, NULL);
  stuff(p.audit.fd);
  sbx_audit_record rec = denial("/lost", 1);
  sbx_audit_write(&p.audit, &rec);
  g_autofree char *filled = drain(p.read_end);
  ck_assert(!strstr(filled, "/lost"));
  sbx_audit_flush(&p.audit);
  g_autofree char *out = drain(p.read_end);
  ck_assert_str_eq(out, "sbx: dropped lines=1\n");
  ck_assert(!sbx_audit_owes(&p.audit));
  pipe_sink_close(&p);
}
END_TEST

START_TEST(
    the_broker_gets_a_description_of_its_own_and_the_callers_stays_blocking) {
  int callers_end;
  pipe_sink p;
  pipe_sink_open(&p, 0, &callers_end);
  ck_assert_int_eq(p.audit.kind, SBX_AUDIT_SINK_OWN);
  ck_assert(fcntl(p.audit.fd, F_GETFL) & O_NONBLOCK);
  ck_assert(!(fcntl(callers_end, F_GETFL) & O_NONBLOCK));
  ck_assert_int_ne(fcntl(p.audit.fd, F_GETFD) & FD_CLOEXEC, 0);
  fill(&p.audit); /* returns: the sink never waits */
  ck_assert(!(fcntl(callers_end, F_GETFL) & O_NONBLOCK));
  close(callers_end);
  pipe_sink_close(&p);
}
END_TEST

START_TEST(a_shared_description_is_written_without_waiting_and_left_as_it_was) {
  int callers_end;
  pipe_sink p;
  pipe_sink_open(&p, SBX_AUDIT_NO_REOPEN, &callers_end);
  ck_assert_int_eq(p.audit.kind, SBX_AUDIT_SINK_SHARED);
  int flags = fcntl(callers_end, F_GETFL);
  ck_assert(!(flags & O_NONBLOCK));
  unsigned taken = fill(&p.audit);
  ck_assert_int_eq(fcntl(callers_end, F_GETFL), flags);
  g_autofree char *filled = drain(p.read_end);
  ck_assert_uint_eq(count_lines_with(filled, "path=\"/fill\""), taken);
  sbx_audit_flush(&p.audit);
  g_autofree char *out = drain(p.read_end);
  ck_assert_str_eq(out, "sbx: dropped lines=1\n");
  /* Full to the last byte: RWF_NOWAIT refuses even a short line. */
  stuff(callers_end);
  sbx_audit_write(&p.audit, &(sbx_audit_record){.op = "stat"});
  ck_assert_uint_eq(p.audit.dropped, 1);
  close(callers_end);
  pipe_sink_close(&p);
}
END_TEST

/* A pseudo-terminal in raw mode: *slave is what the audit log gets. */
static int open_terminal(int *slave) {
  int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  ck_assert_int_ge(master, 0);
  ck_assert_int_eq(grantpt(master), 0);
  ck_assert_int_eq(unlockpt(master), 0);
  *slave = open(ptsname(master), O_RDWR | O_NOCTTY | O_CLOEXEC);
  ck_assert_int_ge(*slave, 0);
  struct termios t;
  ck_assert_int_eq(tcgetattr(*slave, &t), 0);
  cfmakeraw(&t);
  ck_assert_int_eq(tcsetattr(*slave, TCSANOW, &t), 0);
  return master;
}

static void check_stopped_terminal(unsigned flags,
                                   sbx_audit_sink_kind expected) {
  int slave;
  int master = open_terminal(&slave);
  sbx_audit a;
  sbx_audit_open(&a, dup(slave), false, flags);
  sbx_audit_record rec = denial("/tty", 3);
  /* Control: a terminal that is not stopped shows the line. */
  sbx_audit_write(&a, &rec);
  ck_assert_uint_eq(a.dropped, 0);
  g_usleep(20000);
  g_autofree char *shown = drain(master);
  ck_assert_uint_eq(count_lines_with(shown, "path=\"/tty\""), 1);

  ck_assert_int_eq(tcflow(slave, TCOOFF), 0); /* ^S */
  for (int i = 0; i < 3; i++)
    sbx_audit_write(&a, &rec);
  ck_assert_uint_eq(a.dropped, 3);
  ck_assert_int_eq(a.kind, expected);
  ck_assert(!(fcntl(slave, F_GETFL) & O_NONBLOCK));

  ck_assert_int_eq(tcflow(slave, TCOON), 0); /* ^Q */
  sbx_audit_write(&a, &rec);
  g_usleep(20000);
  g_autofree char *out = drain(master);
  ck_assert(g_str_has_prefix(out, "sbx: dropped lines=3\nsbx: denied "));
  ck_assert_uint_eq(count_lines_with(out, "path=\"/tty\""), 1);
  sbx_audit_close(&a);
  close(slave);
  close(master);
}

START_TEST(a_stopped_terminal_costs_lines_not_time) {
  check_stopped_terminal(0, SBX_AUDIT_SINK_OWN);
}
END_TEST

START_TEST(a_stopped_terminal_shared_as_it_is_costs_lines_not_time) {
  /* Terminals refuse RWF_NOWAIT: the sink falls back to polling. */
  check_stopped_terminal(SBX_AUDIT_NO_REOPEN, SBX_AUDIT_SINK_POLLED);
}
END_TEST

/* ---- Budgets ------------------------------------------------------------- */

START_TEST(
    a_worker_over_its_budget_logs_the_burst_then_one_line_counting_the_rest) {
  pipe_sink p;
  pipe_sink_open(&p, 0, NULL);
  sbx_audit_budget b;
  sbx_audit_budget_init(&b, "renderer", 1000);
  const unsigned k = 7;
  uint64_t suppressed = 0;
  unsigned logged = 0;
  for (unsigned i = 0; i < SBX_AUDIT_DENIAL_BURST + k; i++) {
    sbx_audit_record rec = denial("/denied", 100 + (pid_t)i);
    logged += sbx_audit_denial(&p.audit, &b, 1000, &rec, &suppressed);
  }
  ck_assert_uint_eq(logged, SBX_AUDIT_DENIAL_BURST);
  ck_assert_uint_eq(suppressed, k);
  g_autofree char *burst = drain(p.read_end);
  ck_assert_uint_eq(count_lines_with(burst, "sbx: denied op=open"),
                    SBX_AUDIT_DENIAL_BURST);
  ck_assert(!strstr(burst, "suppressed"));

  /* The count is due once a token is back: 1/10 s later. */
  int64_t due = sbx_audit_budget_due(&b);
  ck_assert_int_eq(due, 1000 + 1000 / SBX_AUDIT_DENIALS_PER_SECOND);
  sbx_audit_budget_flush(&p.audit, &b, due - 1, false);
  g_autofree char *early = drain(p.read_end);
  ck_assert_str_eq(early, "");
  sbx_audit_budget_flush(&p.audit, &b, due, false);
  g_autofree char *count = drain(p.read_end);
  g_autofree char *want =
      g_strdup_printf("sbx: suppressed denials=%u type=renderer pid=%u\n", k,
                      100 + SBX_AUDIT_DENIAL_BURST + k - 1);
  ck_assert_str_eq(count, want);
  ck_assert_int_eq(sbx_audit_budget_due(&b), -1);
  g_autoptr(GHashTable) f = parse_line(count, strlen(count));
  ck_assert_str_eq(field(f, ""), "suppressed");

  /* That token is the worker's next line. */
  sbx_audit_record rec = denial("/next", 9);
  ck_assert(sbx_audit_denial(&p.audit, &b, due, &rec, &suppressed));
  ck_assert(!sbx_audit_denial(&p.audit, &b, due, &rec, &suppressed));
  g_autofree char *next = drain(p.read_end);
  ck_assert_uint_eq(count_lines_with(next, "path=\"/next\""), 1);
  ck_assert(!strstr(next, "suppressed"));
  pipe_sink_close(&p);
}
END_TEST

START_TEST(the_count_comes_before_the_workers_next_line_and_when_it_leaves) {
  pipe_sink p;
  pipe_sink_open(&p, 0, NULL);
  sbx_audit_budget b;
  sbx_audit_budget_init(&b, "utility", 0);
  sbx_audit_record rec = denial("/x", 4);
  for (unsigned i = 0; i < SBX_AUDIT_DENIAL_BURST + 2; i++)
    sbx_audit_denial(&p.audit, &b, 0, &rec, NULL);
  g_autofree char *burst = drain(p.read_end);
  /* Without a flush, the next line that fits brings the count first. */
  sbx_audit_record later = denial("/later", 4);
  ck_assert(sbx_audit_denial(&p.audit, &b, 5000, &later, NULL));
  g_autofree char *out = drain(p.read_end);
  ck_assert(g_str_has_prefix(
      out, "sbx: suppressed denials=2 type=utility pid=4\nsbx: denied "));
  ck_assert_uint_eq(count_lines_with(out, "path=\"/later\""), 1);

  /* A worker whose last channel closes gets its count at once. */
  uint64_t suppressed = 0;
  while (suppressed < 4)
    sbx_audit_denial(&p.audit, &b, 5000, &rec, &suppressed);
  g_autofree char *again = drain(p.read_end);
  sbx_audit_budget_flush(&p.audit, &b, 5000, false); /* no token */
  g_autofree char *none = drain(p.read_end);
  ck_assert_str_eq(none, "");
  sbx_audit_budget_flush(&p.audit, &b, 5000, true);
  g_autofree char *final = drain(p.read_end);
  ck_assert_str_eq(final, "sbx: suppressed denials=4 type=utility pid=4\n");
  pipe_sink_close(&p);
}
END_TEST

START_TEST(each_worker_has_a_budget_of_its_own) {
  pipe_sink p;
  pipe_sink_open(&p, 0, NULL);
  sbx_audit_budget flooder, other;
  sbx_audit_budget_init(&flooder, "renderer", 0);
  sbx_audit_budget_init(&other, "renderer", 0);
  sbx_audit_record flood = denial("/flood", 10);
  for (unsigned i = 0; i < SBX_AUDIT_DENIAL_BURST; i++)
    ck_assert(sbx_audit_denial(&p.audit, &flooder, 0, &flood, NULL));
  ck_assert(!sbx_audit_denial(&p.audit, &flooder, 0, &flood, NULL));
  sbx_audit_record mine = denial("/other", 11);
  ck_assert(sbx_audit_denial(&p.audit, &other, 0, &mine, NULL));
  g_autofree char *out = drain(p.read_end);
  ck_assert_uint_eq(count_lines_with(out, "path=\"/flood\""),
                    SBX_AUDIT_DENIAL_BURST);
  ck_assert_uint_eq(count_lines_with(out, "path=\"/other\" "), 1);
  pipe_sink_close(&p);
}
END_TEST

START_TEST(
    the_bucket_refills_at_the_sustained_rate_and_no_higher_than_the_burst) {
  pipe_sink p;
  pipe_sink_open(&p, 0, NULL);
  sbx_audit_budget b;
  sbx_audit_budget_init(&b, "renderer", 0);
  sbx_audit_record rec = denial("/r", 1);
  /* An hour idle still allows only the burst. */
  unsigned logged = 0;
  for (unsigned i = 0; i < 2 * SBX_AUDIT_DENIAL_BURST; i++)
    logged += sbx_audit_denial(&p.audit, &b, 3600 * 1000, &rec, NULL);
  ck_assert_uint_eq(logged, SBX_AUDIT_DENIAL_BURST);
  /* Then a steady flood gets the sustained rate: 10 s, 100 lines. */
  logged = 0;
  for (int64_t t = 3600 * 1000; t <= 3600 * 1000 + 10000; t += 5)
    logged += sbx_audit_denial(&p.audit, &b, t, &rec, NULL);
  ck_assert_uint_eq(logged, 10 * SBX_AUDIT_DENIALS_PER_SECOND);
  g_autofree char *out = drain(p.read_end);
  pipe_sink_close(&p);
}
END_TEST

static Suite *audit_suite(void) {
  Suite *s = suite_create("audit");
  TCase *lines = tcase_create("lines");
  tcase_add_test(lines, a_short_printable_path_is_written_unchanged);
  tcase_add_test(lines,
                 a_path_of_path_max_bytes_of_0xff_gives_one_bounded_line);
  tcase_add_test(
      lines,
      quotes_backslashes_and_newlines_in_a_path_cannot_end_or_forge_a_line);
  tcase_add_test(lines,
                 a_denial_names_its_target_and_the_rule_that_would_allow_it);
  tcase_add_test(lines,
                 the_longest_record_keeps_every_field_within_the_maximum);
  suite_add_tcase(s, lines);
  TCase *sinks = tcase_create("sinks");
  tcase_add_test(
      sinks, a_full_sink_drops_lines_and_counts_them_in_the_next_line_it_takes);
  tcase_add_test(
      sinks, a_drained_sink_gets_the_count_without_waiting_for_another_line);
  tcase_add_test(
      sinks,
      the_broker_gets_a_description_of_its_own_and_the_callers_stays_blocking);
  tcase_add_test(
      sinks,
      a_shared_description_is_written_without_waiting_and_left_as_it_was);
  tcase_add_test(sinks, a_stopped_terminal_costs_lines_not_time);
  tcase_add_test(sinks,
                 a_stopped_terminal_shared_as_it_is_costs_lines_not_time);
  suite_add_tcase(s, sinks);
  TCase *budgets = tcase_create("budgets");
  tcase_add_test(
      budgets,
      a_worker_over_its_budget_logs_the_burst_then_one_line_counting_the_rest);
  tcase_add_test(
      budgets, the_count_comes_before_the_workers_next_line_and_when_it_leaves);
  tcase_add_test(budgets, each_worker_has_a_budget_of_its_own);
  tcase_add_test(
      budgets,
      the_bucket_refills_at_the_sustained_rate_and_no_higher_than_the_burst);
  suite_add_tcase(s, budgets);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(audit_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
