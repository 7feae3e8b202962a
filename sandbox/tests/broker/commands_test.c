/* The command table as the one authority on what a worker may ask: the
 * decoder accepts exactly the requests the table admits (the question the
 * client's pre-check asks too), and ATTACH is transport, a bare header
 * that no row lists. No broker runs here: these are the functions both
 * sides call. */
#include <check.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>

#include "sandbox/broker/commands.h"
#include "sandbox/broker/protocol.h"

static size_t make(unsigned char *buf, uint16_t command, uint32_t flags,
                   uint32_t arg, unsigned n_paths) {
  sbx_broker_request h = {.magic = SBX_BROKER_MAGIC,
                          .version = SBX_BROKER_VERSION,
                          .command = command,
                          .id = 1,
                          .flags = flags,
                          .arg = arg};
  size_t len = sizeof h;
  if (n_paths >= 1) {
    h.path_len = sizeof "/a";
    memcpy(buf + len, "/a", sizeof "/a");
    len += sizeof "/a";
  }
  if (n_paths >= 2) {
    h.path2_len = sizeof "/b";
    memcpy(buf + len, "/b", sizeof "/b");
    len += sizeof "/b";
  }
  memcpy(buf, &h, sizeof h);
  return len;
}

static bool decodes(uint16_t command, uint32_t flags, uint32_t arg,
                    unsigned n_paths) {
  unsigned char buf[sizeof(sbx_broker_request) + 16];
  size_t len = make(buf, command, flags, arg, n_paths);
  sbx_broker_request_view v;
  const char *why = NULL;
  return sbx_broker_decode_request(buf, len, &v, &why) == 0;
}

START_TEST(the_decoder_accepts_exactly_what_the_table_admits) {
  const uint32_t values[] = {
      0,
      1,
      R_OK,
      W_OK | R_OK,
      X_OK,
      8,
      O_RDWR,
      O_CREAT | O_WRONLY,
      O_PATH,
      0644,
      07777,
      010000,
      16,
      PATH_MAX,
      PATH_MAX + 1,
      AT_SYMLINK_NOFOLLOW,
      AT_EACCESS,
      STATX_SIZE,
      RENAME_NOREPLACE,
      RENAME_WHITEOUT,
      0xffffffffu,
  };
  size_t admitted = 0, refused = 0;
  for (unsigned command = 0; command <= SBX_BROKER_CMD_END + 1; command++) {
    for (size_t f = 0; f < G_N_ELEMENTS(values); f++) {
      for (size_t a = 0; a < G_N_ELEMENTS(values); a++) {
        for (unsigned paths = 0; paths <= 2; paths++) {
          bool admits = !sbx_broker_command_refusal((uint16_t)command, paths,
                                                    values[f], values[a]);
          ck_assert_msg(
              decodes((uint16_t)command, values[f], values[a], paths) == admits,
              "command %u flags %#x arg %#x paths %u: the decoder and the "
              "table disagree",
              command, values[f], values[a], paths);
          admitted += admits;
          refused += !admits;
        }
      }
    }
  }
  /* Control: both answers occur, so the agreement means something. */
  ck_assert_uint_gt(admitted, 0);
  ck_assert_uint_gt(refused, 0);
}
END_TEST

START_TEST(every_row_is_a_file_operation_with_paths_and_a_handler) {
  size_t rows = 0;
  for (unsigned command = 0; command < SBX_BROKER_CMD_END; command++) {
    const sbx_broker_command *c = sbx_broker_command_find((uint16_t)command);
    if (!c)
      continue;
    rows++;
    ck_assert_uint_eq(c->command, command);
    ck_assert_int_ne(c->op, SBX_FS_OP_NONE);
    ck_assert(c->n_paths == 1 || c->n_paths == 2);
    ck_assert_ptr_nonnull(c->check);
    ck_assert(sbx_broker_command_has_handler(c->command));
    ck_assert_uint_eq(sbx_broker_command_paths((uint16_t)command), c->n_paths);
    ck_assert_str_eq(sbx_broker_command_name((uint16_t)command),
                     sbx_fs_op_name(c->op));
  }
  ck_assert_uint_eq(rows, SBX_BROKER_CMD_END - 1);
}
END_TEST

START_TEST(attach_is_a_bare_header_outside_the_table) {
  ck_assert_ptr_null(sbx_broker_command_find(SBX_BROKER_ATTACH));
  ck_assert_uint_eq(sbx_broker_command_paths(SBX_BROKER_ATTACH), 0);
  ck_assert_ptr_nonnull(sbx_broker_command_refusal(SBX_BROKER_ATTACH, 0, 0, 0));
  ck_assert_str_eq(sbx_broker_command_name(SBX_BROKER_ATTACH), "attach");
  /* The bare header is transport the decoder accepts... */
  unsigned char buf[sizeof(sbx_broker_request) + 16];
  size_t len = make(buf, SBX_BROKER_ATTACH, 0, 0, 0);
  sbx_broker_request_view v;
  const char *why = NULL;
  ck_assert_int_eq(sbx_broker_decode_request(buf, len, &v, &why), 0);
  ck_assert_uint_eq(v.command, SBX_BROKER_ATTACH);
  ck_assert_ptr_null(v.path);
  /* ...and anything more is not. */
  ck_assert(!decodes(SBX_BROKER_ATTACH, 1, 0, 0));
  ck_assert(!decodes(SBX_BROKER_ATTACH, 0, 1, 0));
  ck_assert(!decodes(SBX_BROKER_ATTACH, 0, 0, 1));
  ck_assert(!decodes(SBX_BROKER_ATTACH, 0, 0, 2));
  ck_assert(!decodes(SBX_BROKER_ATTACH + 1, 0, 0, 0));
}
END_TEST

static Suite *commands_suite(void) {
  Suite *s = suite_create("broker_commands");
  TCase *tc = tcase_create("table");
  tcase_add_test(tc, the_decoder_accepts_exactly_what_the_table_admits);
  tcase_add_test(tc, every_row_is_a_file_operation_with_paths_and_a_handler);
  tcase_add_test(tc, attach_is_a_bare_header_outside_the_table);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(commands_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
