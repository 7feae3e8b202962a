/* The policy parser: the whole corpus, every rule form, every directive,
 * and every way a policy is refused (with FILE:LINE:COL, the line and a
 * caret, and nothing half-loaded).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "sandbox/policy/constants.h"
#include "sandbox/policy/parser.h"
#include "sandbox/base/syscalls.h"
#include "sandbox/tests/policy/policy_test_util.h"

#define ASSERT_CONTAINS(haystack, needle)             \
  ck_assert_msg(strstr((haystack), (needle)) != NULL, \
                "expected \"%s\" in:\n%s", (needle), (haystack))

static uint64_t constant(const char *name) {
  uint64_t v = 0;
  ck_assert_msg(sbx_constant_lookup(name, &v), "%s", name);
  return v;
}

static sbx_policy *parse_file_ok(const char *path) {
  GError *error = NULL;
  sbx_policy *p = sbx_policy_parse_file(path, &error);
  ck_assert_msg(p != NULL, "%s refused: %s", path,
                error ? error->message : "?");
  return p;
}

static char *parse_file_error(const char *path, int code) {
  GError *error = NULL;
  sbx_policy *p = sbx_policy_parse_file(path, &error);
  ck_assert_msg(p == NULL, "%s accepted but should not be", path);
  ck_assert_ptr_nonnull(error);
  ck_assert_msg(error->domain == SBX_POLICY_ERROR && error->code == code,
                "expected code %d, got %d: %s", code, error->code,
                error->message);
  char *msg = g_strdup(error->message);
  g_error_free(error);
  return msg;
}

/* Checks the error for `text` names line:col and the offending text. */
static void expect_error(const char *text, int code, const char *where,
                         const char *what) {
  char *msg = policy_test_parse_error(text, code);
  ASSERT_CONTAINS(msg, where);
  ASSERT_CONTAINS(msg, what);
  g_free(msg);
}

/* One refused text: its error code, the position the message must give
 * (":LINE:COL:") and a phrase it must contain. */
typedef struct {
  const char *text;
  int code;
  const char *where;
  const char *what;
} error_case;

static void expect_errors(const error_case *cases, size_t n) {
  for (size_t k = 0; k < n; k++)
    expect_error(cases[k].text, cases[k].code, cases[k].where, cases[k].what);
}

/* ---- the corpus -------------------------------------------------------- */

static void check_rules_are_sane(const sbx_policy *p, const char *path) {
  ck_assert_uint_gt(p->n_rules, 0);
  for (size_t i = 0; i < p->n_rules; i++) {
    const sbx_rule *r = &p->rules[i];
    ck_assert_msg(r->nr >= 0 && r->nr < sbx_syscall_max(), "%s", path);
    ck_assert_str_eq(r->name, sbx_syscall_name(r->nr));
    ck_assert_str_eq(r->file, path);
    ck_assert_uint_gt(r->line, 0);
    if (i > 0)
      ck_assert_int_lt(p->rules[i - 1].nr, r->nr);
    for (size_t a = 0; a < r->n_alts; a++) {
      ck_assert_uint_gt(r->alts[a].n_cmps, 0);
      for (size_t c = 0; c < r->alts[a].n_cmps; c++) {
        const sbx_cmp *cmp = &r->alts[a].cmps[c];
        ck_assert_uint_le(cmp->arg, 5);
        ck_assert(cmp->arg_is_32bit ==
                  sbx_syscall_arg_is_32bit(r->nr, cmp->arg));
      }
    }
  }
}

START_TEST(parser_accepts_every_chromeos_corpus_policy) {
  POLICY_TEST_NEEDS_CORPUS();
  GPtrArray *files = policy_test_corpus_files("chromeos");
  ck_assert_uint_ge(files->len, 40);
  for (guint i = 0; i < files->len; i++) {
    const char *path = g_ptr_array_index(files, i);
    sbx_policy *p = parse_file_ok(path);
    check_rules_are_sane(p, path);
    /* No chromeos file has @default: the default is kill-process. */
    ck_assert_int_eq(p->default_action.kind, SBX_ACTION_KILL_PROCESS);
    sbx_policy_free(p);
  }
  g_ptr_array_unref(files);
}
END_TEST

START_TEST(parser_accepts_the_minijail_corpus_policies_minijail_accepts) {
  POLICY_TEST_NEEDS_CORPUS();
  const char *names[] = {
      "minijail/examples__cat.policy",
      "minijail/policies__cros_default_v0.policy",
      "minijail/rust__minijail__src__test_filter.policy",
      "minijail/test__seccomp.policy",
      "minijail/test__stdin_stdout.policy",
  };
  for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
    char *path = policy_test_corpus(names[i]);
    sbx_policy *p = parse_file_ok(path);
    check_rules_are_sane(p, path);
    sbx_policy_free(p);
    g_free(path);
  }
  char *path = policy_test_corpus("minijail/examples__cat.policy");
  sbx_policy *p = parse_file_ok(path);
  ck_assert_uint_eq(p->n_rules, 12);
  const sbx_rule *mmap = policy_test_rule(p, "mmap");
  ck_assert_uint_eq(mmap->n_alts, 2);
  ck_assert_int_eq(mmap->alts[0].cmps[0].op, SBX_CMP_IN);
  ck_assert_uint_eq(mmap->alts[0].cmps[0].value, ~constant("PROT_EXEC"));
  ck_assert_uint_eq(mmap->alts[1].cmps[0].value, ~constant("PROT_WRITE"));
  ck_assert_uint_eq(mmap->line, 17);
  ck_assert_ptr_nonnull(policy_test_rule(p, "mseal"));
  sbx_policy_free(p);
  g_free(path);
}
END_TEST

START_TEST(parser_rejects_invalid_arg_filter_corpus_file_with_line_and_text) {
  POLICY_TEST_NEEDS_CORPUS();
  char *path = policy_test_corpus("minijail/test__invalid_arg_filter.policy");
  char *msg = parse_file_error(path, SBX_POLICY_ERROR_SYNTAX);
  char *where = g_strdup_printf("%s:1:7: ", path);
  ck_assert_msg(g_str_has_prefix(msg, where), "%s", msg);
  ASSERT_CONTAINS(msg, "'argnn'");
  ASSERT_CONTAINS(msg, "\n    open: argnn ==\n          ^~~~~");
  g_free(where);
  g_free(msg);
  g_free(path);
}
END_TEST

START_TEST(parser_rejects_invalid_syscall_name_corpus_file_with_line_and_text) {
  POLICY_TEST_NEEDS_CORPUS();
  char *path = policy_test_corpus("minijail/test__invalid_syscall_name.policy");
  char *msg = parse_file_error(path, SBX_POLICY_ERROR_UNKNOWN_SYSCALL);
  char *where = g_strdup_printf("%s:1:1: ", path);
  ck_assert_msg(g_str_has_prefix(msg, where), "%s", msg);
  ASSERT_CONTAINS(msg, "'notasyscall'");
  ASSERT_CONTAINS(msg, "\n    notasyscall: 1\n    ^~~~~~~~~~~");
  g_free(where);
  g_free(msg);
  g_free(path);
}
END_TEST

START_TEST(parser_rejects_nested_corpus_file_that_includes_itself) {
  POLICY_TEST_NEEDS_CORPUS();
  /* As stored, test/nested.policy names itself relative to minijail's
   * source tree; beside the corpus file that path does not exist. */
  char *path = policy_test_corpus("minijail/test__nested.policy");
  char *msg = parse_file_error(path, SBX_POLICY_ERROR_INCLUDE);
  ASSERT_CONTAINS(msg, ":1:10: @include failed");
  ASSERT_CONTAINS(msg, "minijail/test/nested.policy");
  g_free(msg);

  /* Laid out so that ./test/nested.policy is the file itself (test/test is
   * test), the unmodified text is an include cycle. */
  char *text = NULL;
  ck_assert(g_file_get_contents(path, &text, NULL, NULL));
  char *dir = policy_test_tmpdir();
  char *copy = policy_test_write(dir, "test/nested.policy", text);
  char *link = g_build_filename(dir, "test", "test", NULL);
  ck_assert_int_eq(symlink(".", link), 0);
  msg = parse_file_error(copy, SBX_POLICY_ERROR_INCLUDE);
  ASSERT_CONTAINS(msg, "test/nested.policy:1:10: @include cycle");
  g_free(msg);
  policy_test_rmtree(dir);
  g_free(link);
  g_free(copy);
  g_free(dir);
  g_free(text);
  g_free(path);
}
END_TEST

/* ---- rule forms -------------------------------------------------------- */

START_TEST(parser_reads_unconditional_allow_as_one_or_allow) {
  sbx_policy *p = policy_test_parse_ok("read: 1\nwrite: allow\n");
  ck_assert_uint_eq(p->n_rules, 2);
  for (size_t i = 0; i < 2; i++) {
    ck_assert_uint_eq(p->rules[i].n_alts, 0);
    ck_assert_int_eq(p->rules[i].on_match.kind, SBX_ACTION_ALLOW);
    ck_assert_int_eq(p->rules[i].on_mismatch.kind, SBX_ACTION_ALLOW);
  }
  ck_assert_str_eq(p->rules[0].file, "test.policy");
  ck_assert_uint_eq(p->rules[1].line, 2);
  sbx_policy_free(p);
}
END_TEST

START_TEST(parser_reads_every_action) {
  static const struct {
    const char *text;
    sbx_action_kind kind;
    uint16_t data;
  } kCases[] = {
      {"read: kill", SBX_ACTION_KILL_PROCESS, 0},
      {"read: kill-process", SBX_ACTION_KILL_PROCESS, 0},
      {"read: kill-thread", SBX_ACTION_KILL_THREAD, 0},
      {"read: trap", SBX_ACTION_TRAP, 0},
      {"read: trace", SBX_ACTION_TRACE, 0},
      {"read: log", SBX_ACTION_LOG, 0},
      {"read: user-notify", SBX_ACTION_USER_NOTIF, 0},
      {"read: allow", SBX_ACTION_ALLOW, 0},
      {"read: return EPERM", SBX_ACTION_ERRNO, EPERM},
      {"read: return 1", SBX_ACTION_ERRNO, 1},
      {"read: return 0x26", SBX_ACTION_ERRNO, ENOSYS},
      {"read: return 4095", SBX_ACTION_ERRNO, 4095},
      {"read: return 0", SBX_ACTION_ERRNO, 0},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(kCases); i++) {
    sbx_policy *p = policy_test_parse_ok(kCases[i].text);
    ck_assert_uint_eq(p->rules[0].n_alts, 0);
    ck_assert_msg(p->rules[0].on_match.kind == kCases[i].kind, "%s",
                  kCases[i].text);
    ck_assert_uint_eq(p->rules[0].on_match.data, kCases[i].data);
    sbx_policy_free(p);
  }
}
END_TEST

START_TEST(parser_reads_an_expression_whose_mismatch_is_the_default) {
  sbx_policy *p = policy_test_parse_ok("read: arg0 == 0\n");
  const sbx_rule *r = &p->rules[0];
  ck_assert_uint_eq(r->n_alts, 1);
  ck_assert_uint_eq(r->alts[0].n_cmps, 1);
  ck_assert_uint_eq(r->alts[0].cmps[0].arg, 0);
  ck_assert_int_eq(r->alts[0].cmps[0].op, SBX_CMP_EQ);
  ck_assert_uint_eq(r->alts[0].cmps[0].value, 0);
  ck_assert(r->alts[0].cmps[0].arg_is_32bit);
  ck_assert_int_eq(r->on_match.kind, SBX_ACTION_ALLOW);
  ck_assert_int_eq(r->on_mismatch.kind, SBX_ACTION_KILL_PROCESS);
  ck_assert_int_eq(p->default_action.kind, SBX_ACTION_KILL_PROCESS);
  sbx_policy_free(p);

  /* @default applies to mismatches too, wherever it is written. */
  p = policy_test_parse_ok("read: arg0 == 0\n@default trap\n");
  ck_assert_int_eq(p->default_action.kind, SBX_ACTION_TRAP);
  ck_assert_int_eq(p->rules[0].on_mismatch.kind, SBX_ACTION_TRAP);
  sbx_policy_free(p);
  p = policy_test_parse_ok("@default return ENOSYS\nread: arg0 == 0\n");
  ck_assert_int_eq(p->rules[0].on_mismatch.kind, SBX_ACTION_ERRNO);
  ck_assert_uint_eq(p->rules[0].on_mismatch.data, ENOSYS);
  sbx_policy_free(p);
}
END_TEST

START_TEST(parser_reads_return_as_the_action_when_the_expression_fails) {
  sbx_policy *p =
      policy_test_parse_ok("read: arg0 == 0; return EBADF\n@default trap\n");
  const sbx_rule *r = &p->rules[0];
  ck_assert_int_eq(r->on_match.kind, SBX_ACTION_ALLOW);
  ck_assert_int_eq(r->on_mismatch.kind, SBX_ACTION_ERRNO);
  ck_assert_uint_eq(r->on_mismatch.data, EBADF);
  sbx_policy_free(p);
}
END_TEST

START_TEST(parser_binds_and_tighter_than_or) {
  sbx_policy *p = policy_test_parse_ok(
      "socket: arg0 == AF_UNIX || arg0 == AF_NETLINK && arg2 == 15 || "
      "arg0 == AF_INET && arg1 == SOCK_STREAM && arg2 == 0\n");
  const sbx_rule *r = &p->rules[0];
  ck_assert_uint_eq(r->n_alts, 3);
  ck_assert_uint_eq(r->alts[0].n_cmps, 1);
  ck_assert_uint_eq(r->alts[1].n_cmps, 2);
  ck_assert_uint_eq(r->alts[2].n_cmps, 3);
  ck_assert_uint_eq(r->alts[1].cmps[1].arg, 2);
  ck_assert_uint_eq(r->alts[1].cmps[1].value, 15);
  ck_assert_uint_eq(r->alts[2].cmps[1].value, constant("SOCK_STREAM"));
  sbx_policy_free(p);
}
END_TEST

START_TEST(parser_reads_every_operator) {
  static const struct {
    const char *op;
    sbx_cmp_op cmp;
  } kOps[] = {
      {"==", SBX_CMP_EQ}, {"!=", SBX_CMP_NE}, {"<", SBX_CMP_LT},
      {"<=", SBX_CMP_LE}, {">", SBX_CMP_GT},  {">=", SBX_CMP_GE},
      {"&", SBX_CMP_SET}, {"in", SBX_CMP_IN},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(kOps); i++) {
    char *text = g_strdup_printf("read: arg2 %s 7", kOps[i].op);
    sbx_policy *p = policy_test_parse_ok(text);
    ck_assert_int_eq(p->rules[0].alts[0].cmps[0].op, kOps[i].cmp);
    ck_assert_uint_eq(p->rules[0].alts[0].cmps[0].arg, 2);
    ck_assert_uint_eq(p->rules[0].alts[0].cmps[0].value, 7);
    ck_assert(!p->rules[0].alts[0].cmps[0].arg_is_32bit);
    sbx_policy_free(p);
    g_free(text);
  }
  /* Operators need no spaces around them. */
  sbx_policy *p = policy_test_parse_ok("read: arg0==1||arg0&2&&arg1<=3");
  ck_assert_uint_eq(p->rules[0].n_alts, 2);
  ck_assert_int_eq(p->rules[0].alts[1].cmps[0].op, SBX_CMP_SET);
  ck_assert_int_eq(p->rules[0].alts[1].cmps[1].op, SBX_CMP_LE);
  sbx_policy_free(p);
}
END_TEST

START_TEST(parser_reads_decimal_hex_octal_and_negative_numbers) {
  static const struct {
    const char *text;
    uint64_t value;
  } kCases[] = {
      {"0", 0},
      {"42", 42},
      {"0x2a", 42},
      {"0X2A", 42},
      {"052", 42},
      {"010777", 010777},
      {"-1", UINT64_MAX},
      {"-0x8000000000000000", UINT64_C(1) << 63},
      {"0xffffffffffffffff", UINT64_MAX},
      {"18446744073709551615", UINT64_MAX},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(kCases); i++) {
    char *text = g_strdup_printf("lseek: arg1 == %s", kCases[i].text);
    sbx_policy *p = policy_test_parse_ok(text);
    ck_assert_msg(p->rules[0].alts[0].cmps[0].value == kCases[i].value, "%s",
                  kCases[i].text);
    sbx_policy_free(p);
    g_free(text);
  }
}
END_TEST

START_TEST(parser_combines_constants_with_or_complement_and_parentheses) {
  static const struct {
    const char *expr;
    uint64_t value;
  } kCases[] = {
      {"PROT_READ|PROT_WRITE", 3},
      {"PROT_READ | PROT_WRITE | 4", 7},
      {"~PROT_EXEC", ~UINT64_C(4)},
      {"~(PROT_EXEC|PROT_WRITE)", ~UINT64_C(6)},
      {"(1)|2", 3},
      {"((3))", 3},
      {"0|(1|2)", 3},
      {"~0", UINT64_MAX},
      {"0x0F|~(0x00005A5AF0F00000|0x0000A5A50F0FFFFF)|0xF0",
       UINT64_C(0xFFFF0000000000FF)},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(kCases); i++) {
    char *text = g_strdup_printf("mmap: arg2 in %s", kCases[i].expr);
    sbx_policy *p = policy_test_parse_ok(text);
    ck_assert_msg(p->rules[0].alts[0].cmps[0].value == kCases[i].value,
                  "%s: 0x%" G_GINT64_MODIFIER "x", kCases[i].expr,
                  p->rules[0].alts[0].cmps[0].value);
    sbx_policy_free(p);
    g_free(text);
  }
}
END_TEST

START_TEST(parser_marks_int_sized_arguments_from_the_syscall_table) {
  sbx_policy *p = policy_test_parse_ok(
      "ioctl: arg1 == TCGETS\n"
      "mmap: arg2 in ~PROT_EXEC && arg4 == -1\n"
      "clone: arg0 & CLONE_THREAD\n"
      "prctl: arg0 == PR_SET_NAME && arg1 == 0\n");
  ck_assert(policy_test_rule(p, "ioctl")->alts[0].cmps[0].arg_is_32bit);
  ck_assert(!policy_test_rule(p, "mmap")->alts[0].cmps[0].arg_is_32bit);
  ck_assert(policy_test_rule(p, "mmap")->alts[0].cmps[1].arg_is_32bit);
  ck_assert(policy_test_rule(p, "clone")->alts[0].cmps[0].arg_is_32bit);
  ck_assert(policy_test_rule(p, "prctl")->alts[0].cmps[0].arg_is_32bit);
  ck_assert(!policy_test_rule(p, "prctl")->alts[0].cmps[1].arg_is_32bit);
  /* Values are kept as written; the 32-bit rule is applied on use. */
  ck_assert_uint_eq(policy_test_rule(p, "mmap")->alts[0].cmps[1].value,
                    UINT64_MAX);
  sbx_policy_free(p);
}
END_TEST

START_TEST(parser_joins_continued_lines_and_skips_comments_and_blanks) {
  sbx_policy *p = policy_test_parse_ok(
      "# a comment\n"
      "\n"
      "   \t\n"
      "ioctl: arg1 == TCGETS || \\\n"
      "       arg1 == FIONREAD || \\\n"
      "       arg1 == FIOCLEX   # trailing comment\n"
      "read: 1 # another\r\n"
      "  # indented comment\n"
      "write: \\\n"
      "  1\n");
  ck_assert_uint_eq(p->n_rules, 3);
  const sbx_rule *ioctl = policy_test_rule(p, "ioctl");
  ck_assert_uint_eq(ioctl->n_alts, 3);
  ck_assert_uint_eq(ioctl->line, 4);
  ck_assert_uint_eq(policy_test_rule(p, "read")->line, 7);
  ck_assert_uint_eq(policy_test_rule(p, "write")->line, 9);
  sbx_policy_free(p);
}
END_TEST

START_TEST(parser_expands_a_brace_list_of_syscalls) {
  sbx_policy *p = policy_test_parse_ok("{read, write, pread64}: arg0 == 1\n");
  ck_assert_uint_eq(p->n_rules, 3);
  for (size_t i = 0; i < 3; i++) {
    ck_assert_uint_eq(p->rules[i].n_alts, 1);
    ck_assert_uint_eq(p->rules[i].alts[0].cmps[0].value, 1);
  }
  ck_assert_ptr_nonnull(policy_test_rule(p, "pread64"));
  sbx_policy_free(p);
}
END_TEST

START_TEST(parser_skips_rules_written_for_other_architectures) {
  sbx_policy *p = policy_test_parse_ok(
      "read[arch=aarch64]: 1\n"
      "write[arch=x86_64,aarch64]: 1\n"
      "{close[arch=arm], fstat}: 1\n");
  ck_assert_uint_eq(p->n_rules, 2);
  ck_assert_ptr_null(policy_test_rule(p, "read"));
  ck_assert_ptr_nonnull(policy_test_rule(p, "write"));
  ck_assert_ptr_null(policy_test_rule(p, "close"));
  ck_assert_ptr_nonnull(policy_test_rule(p, "fstat"));
  sbx_policy_free(p);
}
END_TEST

START_TEST(parser_sorts_rules_by_number_and_names_kill_the_syscall) {
  sbx_policy *p = policy_test_parse_ok(
      "kill: arg1 == SIGTERM\nwrite: 1\nread: 1\nmseal: 1\n");
  ck_assert_uint_eq(p->n_rules, 4);
  ck_assert_str_eq(p->rules[0].name, "read");
  ck_assert_str_eq(p->rules[1].name, "write");
  ck_assert_str_eq(p->rules[2].name, "kill");
  ck_assert_int_eq(p->rules[2].nr, 62);
  ck_assert_str_eq(p->rules[3].name, "mseal");
  ck_assert_int_eq(p->rules[3].nr, 462);
  sbx_policy_free(p);
}
END_TEST

START_TEST(parser_accepts_an_identical_repeated_rule) {
  sbx_policy *p = policy_test_parse_ok(
      "read: arg0 == 0; return EPERM\nwrite: 1\nread: arg0 == 0; return "
      "EPERM\n");
  ck_assert_uint_eq(p->n_rules, 2);
  ck_assert_uint_eq(policy_test_rule(p, "read")->line, 1);
  sbx_policy_free(p);
}
END_TEST

START_TEST(parser_denylist_defaults_to_allow_and_its_entries_deny) {
  sbx_policy *p = policy_test_parse_ok(
      "@denylist\n"
      "bpf: return EPERM\n"
      "ptrace: arg0 == PTRACE_ATTACH || arg0 == PTRACE_SEIZE; return EPERM\n");
  ck_assert_int_eq(p->default_action.kind, SBX_ACTION_ALLOW);
  const sbx_rule *bpf = policy_test_rule(p, "bpf");
  ck_assert_uint_eq(bpf->n_alts, 0);
  ck_assert_int_eq(bpf->on_match.kind, SBX_ACTION_ERRNO);
  ck_assert_uint_eq(bpf->on_match.data, EPERM);
  const sbx_rule *ptrace = policy_test_rule(p, "ptrace");
  ck_assert_uint_eq(ptrace->n_alts, 2);
  ck_assert_int_eq(ptrace->on_match.kind, SBX_ACTION_ERRNO);
  ck_assert_int_eq(ptrace->on_mismatch.kind, SBX_ACTION_ALLOW);
  sbx_policy_free(p);
}
END_TEST

START_TEST(parser_reads_frequency_files) {
  char *dir = policy_test_tmpdir();
  g_free(policy_test_write(dir, "hot.frequency",
                           "# counts from a trace\nread: 10\nwrite: 0x5\n"
                           "read: 2\n{\n"));
  char *path = policy_test_write(dir, "p.policy",
                                 "@frequency ./hot.frequency\nread: 1\n");
  /* A frequency file is a list of name: count lines only. */
  char *msg = parse_file_error(path, SBX_POLICY_ERROR_SYNTAX);
  ASSERT_CONTAINS(msg, "hot.frequency:5:1: expected 'syscall: count'");
  ASSERT_CONTAINS(msg, "included from");
  g_free(msg);
  g_free(policy_test_write(dir, "hot.frequency",
                           "# counts from a trace\nread: 10\nwrite: 0x5\n"
                           "read: 2\n"));
  sbx_policy *p = parse_file_ok(path);
  ck_assert_ptr_nonnull(p->frequency);
  ck_assert_uint_eq(p->n_frequency, (size_t)sbx_syscall_max());
  ck_assert_uint_eq(p->frequency[0], 12);
  ck_assert_uint_eq(p->frequency[1], 5);
  ck_assert_uint_eq(p->frequency[2], 0);
  sbx_policy_free(p);

  p = policy_test_parse_ok("read: 1\n");
  ck_assert_ptr_null(p->frequency);
  ck_assert_uint_eq(p->n_frequency, 0);
  sbx_policy_free(p);
  policy_test_rmtree(dir);
  g_free(path);
  g_free(dir);
}
END_TEST

START_TEST(parser_resolves_includes_against_the_including_file) {
  char *dir = policy_test_tmpdir();
  g_free(policy_test_write(dir, "sub/common.policy",
                           "# shared\nread: 1\n@include ./more.policy\n"));
  g_free(policy_test_write(dir, "sub/more.policy", "\nwrite: 1\n"));
  char *abs = policy_test_write(dir, "abs.policy", "close: 1\n");
  char *main_text = g_strdup_printf(
      "@include ./sub/common.policy\n@include %s\nexit: 1\n", abs);
  char *path = policy_test_write(dir, "main.policy", main_text);
  sbx_policy *p = parse_file_ok(path);
  ck_assert_uint_eq(p->n_rules, 4);
  const sbx_rule *write_rule = policy_test_rule(p, "write");
  ck_assert(g_str_has_suffix(write_rule->file, "/sub/more.policy"));
  ck_assert_uint_eq(write_rule->line, 2);
  ck_assert_str_eq(policy_test_rule(p, "close")->file, abs);
  ck_assert_str_eq(policy_test_rule(p, "exit")->file, path);
  sbx_policy_free(p);

  /* Text in memory resolves against the include directory it is given. */
  GError *error = NULL;
  p = sbx_policy_parse_string("@include ./sub/common.policy\n", "mem", dir,
                              &error);
  ck_assert_msg(p != NULL, "%s", error ? error->message : "?");
  ck_assert_uint_eq(p->n_rules, 2);
  sbx_policy_free(p);
  policy_test_rmtree(dir);
  g_free(main_text);
  g_free(abs);
  g_free(path);
  g_free(dir);
}
END_TEST

START_TEST(parser_follows_include_chains_up_to_the_depth_limit) {
  char *dir = policy_test_tmpdir();
  /* f1 includes f2 ... f10: ten files, the limit. */
  for (int i = 1; i <= SBX_POLICY_MAX_INCLUDE_DEPTH; i++) {
    char *name = g_strdup_printf("f%d.policy", i);
    char *text = i < SBX_POLICY_MAX_INCLUDE_DEPTH
                     ? g_strdup_printf("@include ./f%d.policy\n", i + 1)
                     : g_strdup("read: 1\n");
    g_free(policy_test_write(dir, name, text));
    g_free(text);
    g_free(name);
  }
  char *top = g_build_filename(dir, "f1.policy", NULL);
  sbx_policy *p = parse_file_ok(top);
  ck_assert_uint_eq(p->n_rules, 1);
  sbx_policy_free(p);
  /* One more file is one too many. */
  char *last = g_strdup_printf("f%d.policy", SBX_POLICY_MAX_INCLUDE_DEPTH);
  g_free(policy_test_write(dir, last, "@include ./extra.policy\n"));
  g_free(policy_test_write(dir, "extra.policy", "read: 1\n"));
  char *msg = parse_file_error(top, SBX_POLICY_ERROR_INCLUDE);
  ASSERT_CONTAINS(msg, "nested too deep");
  ASSERT_CONTAINS(msg, "f10.policy:1:10:");
  g_free(msg);
  policy_test_rmtree(dir);
  g_free(last);
  g_free(top);
  g_free(dir);
}
END_TEST

/* ---- errors: names and numbers ---------------------------------------- */

START_TEST(parser_rejects_unknown_syscall_with_line_and_column) {
  char *msg = policy_test_parse_error("read: 1\n  opne: 1\n",
                                      SBX_POLICY_ERROR_UNKNOWN_SYSCALL);
  ck_assert_str_eq(msg,
                   "test.policy:2:3: unknown system call 'opne' (not an "
                   "x86-64 system call)\n"
                   "      opne: 1\n"
                   "      ^~~~");
  g_free(msg);
  expect_error("socketcall: 1", SBX_POLICY_ERROR_UNKNOWN_SYSCALL,
               ":1:1:", "'socketcall'");
  expect_error("{read, nope}: 1", SBX_POLICY_ERROR_UNKNOWN_SYSCALL,
               ":1:8:", "'nope'");
}
END_TEST

START_TEST(parser_rejects_unknown_constant_with_line_and_column) {
  char *msg = policy_test_parse_error("read: arg0 == 1 || arg0 == FOO_BAR\n",
                                      SBX_POLICY_ERROR_UNKNOWN_CONSTANT);
  ck_assert_str_eq(msg,
                   "test.policy:1:28: unknown constant 'FOO_BAR'\n"
                   "    read: arg0 == 1 || arg0 == FOO_BAR\n"
                   "                               ^~~~~~~");
  g_free(msg);
  expect_error("read: arg0 in PROT_READ|PROT_BOGUS",
               SBX_POLICY_ERROR_UNKNOWN_CONSTANT, ":1:25:", "'PROT_BOGUS'");
  expect_error("read: return EBOGUS", SBX_POLICY_ERROR_UNKNOWN_CONSTANT,
               ":1:14:", "'EBOGUS'");
}
END_TEST

START_TEST(parser_rejects_argument_index_above_five) {
  expect_error("mmap: arg6 == 1", SBX_POLICY_ERROR_INVALID,
               ":1:7:", "'arg6': system calls take at most six arguments");
  expect_error("mmap: arg99999999999 == 1", SBX_POLICY_ERROR_INVALID,
               ":1:7:", "at most six");
}
END_TEST

START_TEST(parser_rejects_argument_past_the_syscall_argument_count) {
  expect_error("read: arg3 == 1", SBX_POLICY_ERROR_INVALID, ":1:7:",
               "read takes 3 arguments (arg0 to arg2); there is no arg3");
  expect_error("getpid: arg0 == 1", SBX_POLICY_ERROR_INVALID,
               ":1:9:", "getpid takes no arguments");
  expect_error("close: arg0 == 1 || arg1 == 2", SBX_POLICY_ERROR_INVALID,
               ":1:21:", "close takes 1 argument (arg0 to arg0)");
  /* Unknown count: arg0..arg5 are accepted. */
  sbx_policy *p = policy_test_parse_ok("tuxcall: arg5 == 1");
  sbx_policy_free(p);
}
END_TEST

START_TEST(parser_rejects_invalid_argument_names) {
  static const error_case kCases[] = {
      {"open: argnn ==", SBX_POLICY_ERROR_SYNTAX,
       ":1:7:", "invalid argument 'argnn'"},
      {"read: arg0 == 1 && argX == 2", SBX_POLICY_ERROR_SYNTAX,
       ":1:20:", "invalid argument 'argX'"},
      {"read: arg0 == 1 || 3 == arg0", SBX_POLICY_ERROR_SYNTAX,
       ":1:20:", "invalid argument '3'"},
  };
  expect_errors(kCases, G_N_ELEMENTS(kCases));
}
END_TEST

START_TEST(parser_rejects_bad_operators) {
  static const error_case kCases[] = {
      {"read: arg0 = 1", SBX_POLICY_ERROR_SYNTAX,
       ":1:12:", "invalid operator '='"},
      {"read: arg0 => 1", SBX_POLICY_ERROR_SYNTAX,
       ":1:12:", "invalid operator '='"},
      {"read: arg0 ! 1", SBX_POLICY_ERROR_SYNTAX,
       ":1:12:", "unexpected character '!'"},
      {"read: arg0 1", SBX_POLICY_ERROR_SYNTAX,
       ":1:12:", "invalid operator '1'"},
      {"read: arg0 || arg1 == 1", SBX_POLICY_ERROR_SYNTAX,
       ":1:12:", "invalid operator '||'"},
  };
  expect_errors(kCases, G_N_ELEMENTS(kCases));
}
END_TEST

START_TEST(parser_rejects_missing_operators_values_and_comparisons) {
  static const error_case kCases[] = {
      {"read: arg0", SBX_POLICY_ERROR_SYNTAX,
       ":1:11:", "missing operator after 'arg0'"},
      {"read: arg0 ==", SBX_POLICY_ERROR_SYNTAX,
       ":1:14:", "missing value after '=='"},
      {"read: arg0 == 1 ||", SBX_POLICY_ERROR_SYNTAX,
       ":1:19:", "missing comparison after '||'"},
      {"read: arg0 == 1 &&", SBX_POLICY_ERROR_SYNTAX,
       ":1:19:", "missing comparison after '&&'"},
      {"read: arg0 == 1 |", SBX_POLICY_ERROR_SYNTAX,
       ":1:18:", "missing value after '|'"},
      {"read: arg0 == ~", SBX_POLICY_ERROR_SYNTAX,
       ":1:16:", "missing value after '~'"},
      {"read: arg0 == (", SBX_POLICY_ERROR_SYNTAX,
       ":1:16:", "missing value after '('"},
      {"read: arg0 == &", SBX_POLICY_ERROR_SYNTAX,
       ":1:15:", "expected a number or a constant name, not '&'"},
  };
  expect_errors(kCases, G_N_ELEMENTS(kCases));
}
END_TEST

START_TEST(parser_rejects_bad_complements_and_parentheses) {
  static const error_case kCases[] = {
      {"read: arg0 == ~~1", SBX_POLICY_ERROR_SYNTAX,
       ":1:16:", "double complement"},
      {"read: arg0 == (1|2", SBX_POLICY_ERROR_SYNTAX, ":1:15:", "unclosed '('"},
      {"read: arg0 == (1))", SBX_POLICY_ERROR_SYNTAX,
       ":1:18:", "unexpected ')'"},
      {"read: (arg0 == 1)", SBX_POLICY_ERROR_SYNTAX,
       ":1:7:", "invalid action '('"},
  };
  expect_errors(kCases, G_N_ELEMENTS(kCases));
}
END_TEST

START_TEST(parser_rejects_malformed_and_out_of_range_numbers) {
  static const error_case kCases[] = {
      {"read: arg0 == 08", SBX_POLICY_ERROR_SYNTAX,
       ":1:15:", "invalid octal number '08'"},
      {"read: arg0 == 0x", SBX_POLICY_ERROR_SYNTAX,
       ":1:15:", "invalid number '0x'"},
      {"read: arg0 == 12ab", SBX_POLICY_ERROR_SYNTAX,
       ":1:15:", "invalid decimal number '12ab'"},
      {"read: arg0 == 0x1g", SBX_POLICY_ERROR_SYNTAX,
       ":1:15:", "invalid hexadecimal number"},
      {"lseek: arg1 == 0x10000000000000000", SBX_POLICY_ERROR_INVALID,
       ":1:16:", "does not fit in 64 bits"},
      {"lseek: arg1 == 18446744073709551616", SBX_POLICY_ERROR_INVALID,
       ":1:16:", "does not fit in 64 bits"},
      {"lseek: arg1 == -0x8000000000000001", SBX_POLICY_ERROR_INVALID,
       ":1:16:", "is below -2^63"},
      {"read: arg0 == - 1", SBX_POLICY_ERROR_SYNTAX,
       ":1:15:", "unexpected character '-'"},
  };
  expect_errors(kCases, G_N_ELEMENTS(kCases));
}
END_TEST

START_TEST(parser_rejects_values_that_do_not_fit_an_int_sized_argument) {
  char *msg = policy_test_parse_error("ioctl: arg1 == 0x100005412\n",
                                      SBX_POLICY_ERROR_INVALID);
  ASSERT_CONTAINS(msg,
                  ":1:16: 0x100005412 does not fit in argument 1 of "
                  "ioctl, which is int-sized");
  ASSERT_CONTAINS(msg, "^~~~~~~~~~~");
  g_free(msg);
  expect_error("socket: arg0 == AF_UNIX | 0x200000000",
               SBX_POLICY_ERROR_INVALID, ":1:17:", "argument 0 of socket");
  /* Sign-extended and complemented values fit: the upper half is all
   * zeros or all ones. A full-width argument takes any value. */
  sbx_policy *p = policy_test_parse_ok(
      "ioctl: arg1 == -1 || arg1 in ~FIONREAD || arg1 == 0xffffffff\n"
      "lseek: arg1 == 0x100005412\n");
  sbx_policy_free(p);
}
END_TEST

/* ---- errors: structure ------------------------------------------------- */

START_TEST(parser_rejects_trailing_garbage) {
  static const error_case kCases[] = {
      {"read: 1 2", SBX_POLICY_ERROR_SYNTAX,
       ":1:9:", "unexpected '2' after the filter"},
      {"read: arg0 == 1 foo", SBX_POLICY_ERROR_SYNTAX,
       ":1:17:", "unexpected 'foo'"},
      {"read: return EPERM EPERM", SBX_POLICY_ERROR_SYNTAX,
       ":1:20:", "unexpected 'EPERM'"},
      {"read: arg0 == 1; return EPERM; return 1", SBX_POLICY_ERROR_SYNTAX,
       ":1:30:", "unexpected ';'"},
      {"read: allow kill", SBX_POLICY_ERROR_SYNTAX,
       ":1:13:", "unexpected 'kill'"},
  };
  expect_errors(kCases, G_N_ELEMENTS(kCases));
}
END_TEST

START_TEST(parser_rejects_missing_colon_and_missing_filter) {
  static const error_case kCases[] = {
      {"read 1", SBX_POLICY_ERROR_SYNTAX,
       ":1:6:", "expected ':' after the system call name, not '1'"},
      {"read", SBX_POLICY_ERROR_SYNTAX,
       ":1:5:", "missing ':' after the system call name"},
      {"read:", SBX_POLICY_ERROR_SYNTAX, ":1:5:", "missing filter after ':'"},
      {"read:   # nothing", SBX_POLICY_ERROR_SYNTAX, ":1:5:", "missing filter"},
      {": 1", SBX_POLICY_ERROR_SYNTAX,
       ":1:1:", "expected a system call name, not ':'"},
      {"0: 1", SBX_POLICY_ERROR_SYNTAX, ":1:1:", "written by name, not number"},
  };
  expect_errors(kCases, G_N_ELEMENTS(kCases));
}
END_TEST

START_TEST(parser_rejects_invalid_actions) {
  static const error_case kCases[] = {
      {"read: 2", SBX_POLICY_ERROR_SYNTAX, ":1:7:", "invalid action '2'"},
      {"read: 0", SBX_POLICY_ERROR_SYNTAX, ":1:7:", "invalid action '0'"},
      {"read: permit", SBX_POLICY_ERROR_SYNTAX,
       ":1:7:", "invalid action 'permit'"},
      {"read: return", SBX_POLICY_ERROR_SYNTAX,
       ":1:13:", "missing errno after 'return'"},
      {"read: return (1)", SBX_POLICY_ERROR_SYNTAX,
       ":1:14:", "expected an errno number or name"},
  };
  expect_errors(kCases, G_N_ELEMENTS(kCases));
}
END_TEST

START_TEST(parser_rejects_invalid_errno) {
  static const error_case kCases[] = {
      {"read: return 4096", SBX_POLICY_ERROR_INVALID,
       ":1:14:", "invalid errno '4096': it must be 0 to 4095"},
      {"read: return -1", SBX_POLICY_ERROR_INVALID,
       ":1:14:", "invalid errno '-1'"},
      {"read: arg0 == 0; return 70000", SBX_POLICY_ERROR_INVALID,
       ":1:25:", "invalid errno '70000'"},
      {"read: return O_BOGUS", SBX_POLICY_ERROR_UNKNOWN_CONSTANT,
       ":1:14:", "unknown errno 'O_BOGUS'"},
  };
  expect_errors(kCases, G_N_ELEMENTS(kCases));
}
END_TEST

START_TEST(
    parser_rejects_anything_but_return_or_user_notify_after_a_semicolon) {
  static const error_case kCases[] = {
      {"read: arg0 == 0; allow", SBX_POLICY_ERROR_SYNTAX,
       ":1:18:", "only 'return ERRNO' or 'user-notify' may follow ';'"},
      {"read: arg0 == 0; user-notify trap", SBX_POLICY_ERROR_SYNTAX,
       ":1:30:", "trap"},
      {"@denylist\nread: arg0 == 0; user-notify", SBX_POLICY_ERROR_CONFLICT,
       ":2:", "must end in '; return ERRNO'"},
      {"read: arg0 == 0; trap", SBX_POLICY_ERROR_SYNTAX,
       ":1:18:", "not 'trap'"},
      {"read: arg0 == 0;", SBX_POLICY_ERROR_SYNTAX,
       ":1:17:", "missing 'return ERRNO' after ';'"},
      {"read: arg0 == 0; return", SBX_POLICY_ERROR_SYNTAX,
       ":1:24:", "missing errno"},
  };
  expect_errors(kCases, G_N_ELEMENTS(kCases));
}
END_TEST

/* sbx's own else-action: what the expression does not match goes to a
 * supervisor. */
START_TEST(parser_reads_user_notify_as_the_action_when_the_expression_fails) {
  sbx_policy *p = policy_test_parse_ok(
      "fchmod: arg1 in ~06000; user-notify\n@default trap\n");
  const sbx_rule *r = &p->rules[0];
  ck_assert_int_eq(r->on_match.kind, SBX_ACTION_ALLOW);
  ck_assert_int_eq(r->on_mismatch.kind, SBX_ACTION_USER_NOTIF);
  sbx_policy_free(p);
}
END_TEST

START_TEST(parser_rejects_forms_sbx_does_not_support) {
  static const error_case kCases[] = {
      {"read: { arg0 == 0, allow }", SBX_POLICY_ERROR_SYNTAX,
       ":1:7:", "filter lists '{ ... }' are not supported"},
      {"io@libc: 1", SBX_POLICY_ERROR_SYNTAX,
       ":1:1:", "groups such as 'io@libc' are not supported"},
      {"{read, write: 1", SBX_POLICY_ERROR_SYNTAX, ":1:1:", "unclosed '{'"},
      {"read[foo=bar]: 1", SBX_POLICY_ERROR_SYNTAX,
       ":1:6:", "unknown metadata key 'foo'"},
      {"read[arch=x86_64: 1", SBX_POLICY_ERROR_SYNTAX, ":1:5:", "unclosed '['"},
      {"read[arch]: 1", SBX_POLICY_ERROR_SYNTAX,
       ":1:6:", "expected '=' after 'arch'"},
      {"read[arch=x86_64;arch=arm]: 1", SBX_POLICY_ERROR_CONFLICT,
       ":1:18:", "given twice"},
  };
  expect_errors(kCases, G_N_ELEMENTS(kCases));
}
END_TEST

START_TEST(parser_rejects_stray_characters_and_backslashes) {
  static const error_case kCases[] = {
      {"read: 1 $", SBX_POLICY_ERROR_SYNTAX,
       ":1:9:", "unexpected character '$'"},
      {"read: 1 \\ # not last", SBX_POLICY_ERROR_SYNTAX,
       ":1:9:", "a backslash continues a line only as its last character"},
      {"read: \\", SBX_POLICY_ERROR_SYNTAX,
       ":1:7:", "continues past the end of the file"},
      {"read: 1 \x01", SBX_POLICY_ERROR_SYNTAX,
       ":1:9:", "unexpected byte 0x01"},
  };
  expect_errors(kCases, G_N_ELEMENTS(kCases));
}
END_TEST

START_TEST(parser_rejects_conflicting_rules_for_one_syscall) {
  char *msg = policy_test_parse_error("read: 1\nwrite: 1\n  read: arg0 == 0\n",
                                      SBX_POLICY_ERROR_CONFLICT);
  ASSERT_CONTAINS(msg,
                  "test.policy:3:3: conflicting rule for read: it is "
                  "already defined at test.policy:1");
  g_free(msg);
  expect_error("read: arg0 == 0\nread: arg0 == 0; return EPERM",
               SBX_POLICY_ERROR_CONFLICT, ":2:1:", "conflicting rule");
  expect_error("{read, read}: arg0 == 0\nread: arg0 == 1",
               SBX_POLICY_ERROR_CONFLICT, ":2:1:", "conflicting rule");
  expect_error("read: return EPERM\nread: return EBADF",
               SBX_POLICY_ERROR_CONFLICT, ":2:1:", "conflicting rule");
}
END_TEST

/* ---- errors: directives ------------------------------------------------ */

START_TEST(parser_rejects_unknown_directives) {
  expect_error("@allow-all\nread: 1", SBX_POLICY_ERROR_SYNTAX,
               ":1:1:", "unknown directive '@allow-all'");
  expect_error("@includes ./x", SBX_POLICY_ERROR_SYNTAX,
               ":1:1:", "unknown directive '@includes'");
}
END_TEST

START_TEST(parser_rejects_bad_default_directives) {
  static const error_case kCases[] = {
      {"@default", SBX_POLICY_ERROR_SYNTAX,
       ":1:9:", "missing action after @default"},
      {"@default maybe", SBX_POLICY_ERROR_SYNTAX,
       ":1:10:", "invalid action 'maybe'"},
      {"@default trap trap", SBX_POLICY_ERROR_SYNTAX,
       ":1:15:", "unexpected 'trap' after the action"},
      {"@default trap\nread: 1\n@default kill", SBX_POLICY_ERROR_CONFLICT,
       ":3:1:", "@default given twice; the first is at test.policy:1"},
      {"@denylist\n@default trap", SBX_POLICY_ERROR_CONFLICT,
       ":2:1:", "cannot be used in a @denylist policy"},
  };
  expect_errors(kCases, G_N_ELEMENTS(kCases));
}
END_TEST

START_TEST(parser_rejects_misused_denylist) {
  static const error_case kCases[] = {
      {"read: return 1\n@denylist", SBX_POLICY_ERROR_SYNTAX,
       ":2:1:", "@denylist must come before any other statement"},
      {"@denylist now", SBX_POLICY_ERROR_SYNTAX,
       ":1:11:", "unexpected 'now' after @denylist"},
      {"@denylist\nread: 1", SBX_POLICY_ERROR_CONFLICT,
       ":2:7:", "may only deny"},
      {"@denylist\nread: kill", SBX_POLICY_ERROR_CONFLICT,
       ":2:7:", "may only deny"},
      {"@denylist\nread: arg0 == 1", SBX_POLICY_ERROR_CONFLICT,
       ":2:16:", "must end in '; return ERRNO'"},
  };
  expect_errors(kCases, G_N_ELEMENTS(kCases));
}
END_TEST

START_TEST(parser_rejects_denylist_mixed_with_allowlist_files) {
  char *dir = policy_test_tmpdir();
  g_free(policy_test_write(dir, "deny.policy", "@denylist\nbpf: return 1\n"));
  g_free(policy_test_write(dir, "allow.policy", "read: 1\n"));
  char *a = policy_test_write(dir, "a.policy", "@include ./deny.policy\n");
  char *msg = parse_file_error(a, SBX_POLICY_ERROR_CONFLICT);
  ASSERT_CONTAINS(msg,
                  "deny.policy:1:1: @denylist in a file included into "
                  "an allowlist policy");
  g_free(msg);
  char *b = policy_test_write(dir, "b.policy",
                              "@denylist\n@include ./allow.policy\n");
  msg = parse_file_error(b, SBX_POLICY_ERROR_CONFLICT);
  ASSERT_CONTAINS(msg,
                  "allow.policy:1:1: this file is included into a "
                  "@denylist policy");
  g_free(msg);
  char *c = policy_test_write(dir, "c.policy",
                              "@denylist\n@include ./deny.policy\n"
                              "ptrace: return EPERM\n");
  sbx_policy *p = parse_file_ok(c);
  ck_assert_uint_eq(p->n_rules, 2);
  ck_assert_int_eq(p->default_action.kind, SBX_ACTION_ALLOW);
  sbx_policy_free(p);
  policy_test_rmtree(dir);
  g_free(a);
  g_free(b);
  g_free(c);
  g_free(dir);
}
END_TEST

START_TEST(parser_rejects_bad_include_directives) {
  char *dir = policy_test_tmpdir();
  char *sub = g_build_filename(dir, "adir", NULL);
  ck_assert_int_eq(g_mkdir(sub, 0700), 0);
  char *fifo = g_build_filename(dir, "fifo.policy", NULL);
  ck_assert_int_eq(mkfifo(fifo, 0600), 0);
  static const struct {
    const char *text;
    int code;
    const char *where;
    const char *what;
  } kCases[] = {
      {"@include", SBX_POLICY_ERROR_SYNTAX,
       ":1:9:", "missing path after @include"},
      {"@include common.policy", SBX_POLICY_ERROR_SYNTAX,
       ":1:10:", "needs a path that starts with '/' or './'"},
      {"@include ../common.policy", SBX_POLICY_ERROR_SYNTAX,
       ":1:10:", "not '../common.policy'"},
      {"@include ./a.policy ./b.policy", SBX_POLICY_ERROR_SYNTAX,
       ":1:21:", "unexpected './b.policy' after the path"},
      {"@include ./missing.policy", SBX_POLICY_ERROR_INCLUDE,
       ":1:10:", "missing.policy: No such file or directory"},
      {"@include ./adir", SBX_POLICY_ERROR_INCLUDE,
       ":1:10:", "adir is not a regular file"},
      {"@include ./fifo.policy", SBX_POLICY_ERROR_INCLUDE,
       ":1:10:", "fifo.policy is not a regular file"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(kCases); i++) {
    GError *error = NULL;
    sbx_policy *p =
        sbx_policy_parse_string(kCases[i].text, "inc.policy", dir, &error);
    ck_assert_msg(p == NULL, "accepted: %s", kCases[i].text);
    ck_assert_int_eq(error->code, kCases[i].code);
    ASSERT_CONTAINS(error->message, kCases[i].where);
    ASSERT_CONTAINS(error->message, kCases[i].what);
    g_error_free(error);
  }
  /* Text without an include directory may not include anything. */
  expect_error("@include /etc/passwd", SBX_POLICY_ERROR_INCLUDE,
               ":1:1:", "@include is refused");
  expect_error("@frequency ./f", SBX_POLICY_ERROR_INCLUDE,
               ":1:1:", "@frequency is refused");
  policy_test_rmtree(dir);
  g_free(fifo);
  g_free(sub);
  g_free(dir);
}
END_TEST

START_TEST(parser_reports_errors_inside_included_files_where_they_are) {
  char *dir = policy_test_tmpdir();
  char *inc = policy_test_write(dir, "inc.policy", "read: 1\nbogus: 1\n");
  char *top = policy_test_write(dir, "top.policy",
                                "write: 1\n\n@include ./inc.policy\n");
  char *msg = parse_file_error(top, SBX_POLICY_ERROR_UNKNOWN_SYSCALL);
  char *want = g_strdup_printf("%s:2:1: unknown system call 'bogus'", inc);
  ck_assert_msg(g_str_has_prefix(msg, want), "%s", msg);
  char *from = g_strdup_printf("included from %s:3", top);
  ASSERT_CONTAINS(msg, from);
  g_free(from);
  g_free(want);
  g_free(msg);
  policy_test_rmtree(dir);
  g_free(inc);
  g_free(top);
  g_free(dir);
}
END_TEST

START_TEST(parser_rejects_bad_frequency_files) {
  char *dir = policy_test_tmpdir();
  char *path =
      policy_test_write(dir, "p.policy", "@frequency ./f.frequency\nread: 1\n");
  static const struct {
    const char *text;
    int code;
    const char *where;
    const char *what;
  } kCases[] = {
      {"read", SBX_POLICY_ERROR_SYNTAX, ":1:5:", "missing ':'"},
      {"read foo", SBX_POLICY_ERROR_SYNTAX, ":1:6:", "expected ':'"},
      {"read:", SBX_POLICY_ERROR_SYNTAX, ":1:6:", "missing count after ':'"},
      {"read: foo", SBX_POLICY_ERROR_INVALID, ":1:7:", "invalid count 'foo'"},
      {"read: -1", SBX_POLICY_ERROR_INVALID, ":1:7:", "invalid count '-1'"},
      {"read: 0x100000000", SBX_POLICY_ERROR_INVALID, ":1:7:", "invalid count"},
      {"read: 1 2", SBX_POLICY_ERROR_SYNTAX,
       ":1:9:", "unexpected '2' after the count"},
      {"reed: 1", SBX_POLICY_ERROR_UNKNOWN_SYSCALL,
       ":1:1:", "unknown system call 'reed'"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(kCases); i++) {
    g_free(policy_test_write(dir, "f.frequency", kCases[i].text));
    char *msg = parse_file_error(path, kCases[i].code);
    ASSERT_CONTAINS(msg, "f.frequency");
    ASSERT_CONTAINS(msg, kCases[i].where);
    ASSERT_CONTAINS(msg, kCases[i].what);
    g_free(msg);
  }
  char *freq = g_build_filename(dir, "f.frequency", NULL);
  ck_assert_int_eq(g_unlink(freq), 0);
  g_free(freq);
  char *msg = parse_file_error(path, SBX_POLICY_ERROR_INCLUDE);
  ASSERT_CONTAINS(msg, "p.policy:1:12: @frequency failed");
  g_free(msg);
  expect_error("@frequency", SBX_POLICY_ERROR_SYNTAX,
               ":1:11:", "missing path after @frequency");
  policy_test_rmtree(dir);
  g_free(path);
  g_free(dir);
}
END_TEST

/* ---- errors: files ----------------------------------------------------- */

START_TEST(parser_rejects_unreadable_and_oversized_files) {
  char *dir = policy_test_tmpdir();
  char *missing = g_build_filename(dir, "missing.policy", NULL);
  char *msg = parse_file_error(missing, SBX_POLICY_ERROR_IO);
  ASSERT_CONTAINS(msg, "missing.policy: No such file or directory");
  g_free(msg);

  msg = parse_file_error(dir, SBX_POLICY_ERROR_IO);
  ASSERT_CONTAINS(msg, "is not a regular file");
  g_free(msg);

  char *big = g_build_filename(dir, "big.policy", NULL);
  int fd = open(big, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(ftruncate(fd, 5 * 1024 * 1024), 0);
  close(fd);
  msg = parse_file_error(big, SBX_POLICY_ERROR_IO);
  ASSERT_CONTAINS(msg, "big.policy is too large");
  g_free(msg);

  char *nul = g_build_filename(dir, "nul.policy", NULL);
  ck_assert(g_file_set_contents(nul, "read: 1\nwr\0ite: 1\n", 19, NULL));
  msg = parse_file_error(nul, SBX_POLICY_ERROR_SYNTAX);
  ASSERT_CONTAINS(msg, "nul.policy:2:3: NUL byte");
  g_free(msg);

  char *empty = policy_test_write(dir, "empty.policy", "# nothing\n\n");
  sbx_policy *p = parse_file_ok(empty);
  ck_assert_uint_eq(p->n_rules, 0);
  ck_assert_int_eq(p->default_action.kind, SBX_ACTION_KILL_PROCESS);
  sbx_policy_free(p);
  policy_test_rmtree(dir);
  g_free(empty);
  g_free(nul);
  g_free(big);
  g_free(missing);
  g_free(dir);
}
END_TEST

START_TEST(parser_failure_returns_null_and_leaves_nothing_allocated) {
  /* Errors late in a long policy: the earlier rules are freed (the ASan
   * build of this suite checks for leaks). */
  GString *text = g_string_new(NULL);
  for (int nr = 0; nr < 200; nr++) {
    const char *name = sbx_syscall_name(nr);
    if (name != NULL && sbx_syscall_arg_count(nr) > 0)
      g_string_append_printf(text, "%s: arg0 == %d || arg0 == 1\n", name, nr);
  }
  g_string_append(text, "bogus: 1\n");
  char *msg =
      policy_test_parse_error(text->str, SBX_POLICY_ERROR_UNKNOWN_SYSCALL);
  g_free(msg);
  g_string_free(text, TRUE);
  GError *error = NULL;
  ck_assert_ptr_null(sbx_policy_parse_string("read: 1\nx", NULL, NULL, &error));
  ck_assert_msg(g_str_has_prefix(error->message, "<string>:2:1:"), "%s",
                error->message);
  g_error_free(error);
  sbx_policy_free(NULL);
}
END_TEST

static Suite *parser_suite(void) {
  Suite *s = suite_create("policy_parser");
  TCase *corpus = tcase_create("corpus");
  tcase_set_timeout(corpus, 20);
  tcase_add_test(corpus, parser_accepts_every_chromeos_corpus_policy);
  tcase_add_test(corpus,
                 parser_accepts_the_minijail_corpus_policies_minijail_accepts);
  tcase_add_test(
      corpus, parser_rejects_invalid_arg_filter_corpus_file_with_line_and_text);
  tcase_add_test(
      corpus,
      parser_rejects_invalid_syscall_name_corpus_file_with_line_and_text);
  tcase_add_test(corpus,
                 parser_rejects_nested_corpus_file_that_includes_itself);
  suite_add_tcase(s, corpus);

  TCase *forms = tcase_create("forms");
  tcase_add_test(forms, parser_reads_unconditional_allow_as_one_or_allow);
  tcase_add_test(forms, parser_reads_every_action);
  tcase_add_test(forms,
                 parser_reads_an_expression_whose_mismatch_is_the_default);
  tcase_add_test(forms,
                 parser_reads_return_as_the_action_when_the_expression_fails);
  tcase_add_test(
      forms, parser_reads_user_notify_as_the_action_when_the_expression_fails);
  tcase_add_test(forms, parser_binds_and_tighter_than_or);
  tcase_add_test(forms, parser_reads_every_operator);
  tcase_add_test(forms, parser_reads_decimal_hex_octal_and_negative_numbers);
  tcase_add_test(forms,
                 parser_combines_constants_with_or_complement_and_parentheses);
  tcase_add_test(forms,
                 parser_marks_int_sized_arguments_from_the_syscall_table);
  tcase_add_test(forms,
                 parser_joins_continued_lines_and_skips_comments_and_blanks);
  tcase_add_test(forms, parser_expands_a_brace_list_of_syscalls);
  tcase_add_test(forms, parser_skips_rules_written_for_other_architectures);
  tcase_add_test(forms,
                 parser_sorts_rules_by_number_and_names_kill_the_syscall);
  tcase_add_test(forms, parser_accepts_an_identical_repeated_rule);
  tcase_add_test(forms, parser_denylist_defaults_to_allow_and_its_entries_deny);
  tcase_add_test(forms, parser_reads_frequency_files);
  tcase_add_test(forms, parser_resolves_includes_against_the_including_file);
  tcase_add_test(forms, parser_follows_include_chains_up_to_the_depth_limit);
  suite_add_tcase(s, forms);

  TCase *errors = tcase_create("errors");
  tcase_add_test(errors, parser_rejects_unknown_syscall_with_line_and_column);
  tcase_add_test(errors, parser_rejects_unknown_constant_with_line_and_column);
  tcase_add_test(errors, parser_rejects_argument_index_above_five);
  tcase_add_test(errors,
                 parser_rejects_argument_past_the_syscall_argument_count);
  tcase_add_test(errors, parser_rejects_invalid_argument_names);
  tcase_add_test(errors, parser_rejects_bad_operators);
  tcase_add_test(errors,
                 parser_rejects_missing_operators_values_and_comparisons);
  tcase_add_test(errors, parser_rejects_bad_complements_and_parentheses);
  tcase_add_test(errors, parser_rejects_malformed_and_out_of_range_numbers);
  tcase_add_test(errors,
                 parser_rejects_values_that_do_not_fit_an_int_sized_argument);
  tcase_add_test(errors, parser_rejects_trailing_garbage);
  tcase_add_test(errors, parser_rejects_missing_colon_and_missing_filter);
  tcase_add_test(errors, parser_rejects_invalid_actions);
  tcase_add_test(errors, parser_rejects_invalid_errno);
  tcase_add_test(
      errors,
      parser_rejects_anything_but_return_or_user_notify_after_a_semicolon);
  tcase_add_test(errors, parser_rejects_forms_sbx_does_not_support);
  tcase_add_test(errors, parser_rejects_stray_characters_and_backslashes);
  tcase_add_test(errors, parser_rejects_conflicting_rules_for_one_syscall);
  tcase_add_test(errors, parser_rejects_unknown_directives);
  tcase_add_test(errors, parser_rejects_bad_default_directives);
  tcase_add_test(errors, parser_rejects_misused_denylist);
  tcase_add_test(errors, parser_rejects_denylist_mixed_with_allowlist_files);
  tcase_add_test(errors, parser_rejects_bad_include_directives);
  tcase_add_test(errors,
                 parser_reports_errors_inside_included_files_where_they_are);
  tcase_add_test(errors, parser_rejects_bad_frequency_files);
  tcase_add_test(errors, parser_rejects_unreadable_and_oversized_files);
  tcase_add_test(errors,
                 parser_failure_returns_null_and_leaves_nothing_allocated);
  suite_add_tcase(s, errors);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(parser_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
