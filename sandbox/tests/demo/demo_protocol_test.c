/* The demo host's defence against a lying renderer: every answer is
 * checked before a length or string in it is used, and reads from a
 * worker end at EOF or after a timeout instead of hanging. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "examples/renderer/protocol.h"
#include "sandbox/tests/demo/demo_test_util.h"

static demo_result valid(void) {
  demo_result r;
  memset(&r, 0, sizeof r);
  r.magic = DEMO_RESULT_MAGIC;
  r.rendered = 1;
  r.text_len = 10;
  r.n_escapes = 1;
  strcpy(r.escapes[0], "fork");
  return r;
}

static const char *refusal(const demo_result *r, size_t len) {
  const char *why = NULL;
  ck_assert_msg(!demo_result_check(r, len, &why), "a bad answer passed");
  ck_assert_ptr_nonnull(why);
  return why;
}

START_TEST(host_accepts_a_well_formed_answer) {
  demo_result r = valid();
  const char *why = NULL;
  ck_assert_msg(demo_result_check(&r, sizeof r, &why), "%s", why);
}
END_TEST

START_TEST(host_refuses_short_or_foreign_answers) {
  demo_result r = valid();
  ck_assert_str_eq(refusal(&r, sizeof r - 1), "short header");
  r.magic ^= 1;
  ck_assert_str_eq(refusal(&r, sizeof r), "bad magic");
}
END_TEST

START_TEST(host_refuses_lengths_over_their_limits) {
  demo_result r = valid();
  r.text_len = DEMO_TEXT_MAX + 1;
  ck_assert_str_eq(refusal(&r, sizeof r), "length over its limit");
  r = valid();
  r.image_len = UINT32_MAX;
  ck_assert_str_eq(refusal(&r, sizeof r), "length over its limit");
  r = valid();
  r.status_len = DEMO_STATUS_MAX + 1;
  ck_assert_str_eq(refusal(&r, sizeof r), "length over its limit");
  r = valid();
  r.n_escapes = DEMO_MAX_ESCAPES + 1;
  ck_assert_str_eq(refusal(&r, sizeof r), "too many escape requests");
}
END_TEST

START_TEST(host_refuses_unterminated_strings) {
  demo_result r = valid();
  memset(r.error, 'x', sizeof r.error);
  ck_assert_str_eq(refusal(&r, sizeof r), "unterminated string");
  r = valid();
  memset(r.attack_detail, 'x', sizeof r.attack_detail);
  ck_assert_str_eq(refusal(&r, sizeof r), "unterminated string");
  r = valid();
  memset(r.escapes[0], 'x', sizeof r.escapes[0]);
  ck_assert_str_eq(refusal(&r, sizeof r), "unterminated escape name");
  /* Names past n_escapes are never read, so they need not be checked. */
  r = valid();
  memset(r.escapes[5], 'x', sizeof r.escapes[5]);
  const char *why = NULL;
  ck_assert_msg(demo_result_check(&r, sizeof r, &why), "%s", why);
}
END_TEST

START_TEST(reads_stop_at_eof_and_at_the_timeout) {
  int sv[2];
  ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  ck_assert(demo_write_all(sv[1], "abc", 3));
  char buf[8];
  /* Data but no EOF yet: the read waits, then gives up. */
  errno = 0;
  ck_assert_int_eq(demo_read_full(sv[0], buf, sizeof buf, 50), -1);
  ck_assert_int_eq(errno, ETIMEDOUT);
  ck_assert(demo_write_all(sv[1], "de", 2));
  close(sv[1]);
  ck_assert_int_eq(demo_read_full(sv[0], buf, sizeof buf, 1000), 2);
  ck_assert_int_eq(memcmp(buf, "de", 2), 0);
  ck_assert_int_eq(demo_read_full(sv[0], buf, sizeof buf, 1000), 0);
  close(sv[0]);
}
END_TEST

int main(void) {
  Suite *s = suite_create("demo_protocol");
  TCase *tc = tcase_create("protocol");
  tcase_add_test(tc, host_accepts_a_well_formed_answer);
  tcase_add_test(tc, host_refuses_short_or_foreign_answers);
  tcase_add_test(tc, host_refuses_lengths_over_their_limits);
  tcase_add_test(tc, host_refuses_unterminated_strings);
  tcase_add_test(tc, reads_stop_at_eof_and_at_the_timeout);
  suite_add_tcase(s, tc);
  return demo_test_run(s);
}
