/* OCI seccomp profiles through the importer and exporter: every profile of
 * the corpus keeps its verdicts through import, compile, export and
 * re-import, judged against a direct evaluation of the JSON rules; the
 * importer refuses what it cannot write exactly, naming the syscall; the
 * exporter keeps the 32-bit reading of int-sized arguments (S4).
 */
#include <check.h>
#include <errno.h>
#include <linux/audit.h>
#include <string.h>
#include <sys/ioctl.h>

#include "sandbox/linux/seccomp/bpf.h"
#include "sandbox/policy/builtin/builtin.h"
#include "sandbox/policy/parser.h"
#include "sandbox/policy/syscalls.h"
#include "sandbox/tests/policy/policy_test_util.h"
#include "tools/sbx-policy/oci.h"

#define X32_BIT 0x40000000u

typedef void (*input_fn)(const struct seccomp_data *d, void *user);

static void add_value(GArray *values, uint64_t v) {
  for (guint k = 0; k < values->len; k++)
    if (g_array_index(values, uint64_t, k) == v)
      return;
  g_array_append_val(values, v);
}

/* Every call the verdicts are compared on: each number with zero and
 * all-ones arguments, i386 and x32 numbers, and for each rule every
 * argument it compares set to each constant of the rule, one less, one
 * more, 0, and with high bits, alone and in pairs. */
static void for_each_input(const sbx_policy *p, input_fn fn, void *user) {
  struct seccomp_data d;
  for (int nr = 0; nr < sbx_syscall_max() + 8; nr++) {
    d = (struct seccomp_data){.nr = nr, .arch = AUDIT_ARCH_X86_64};
    fn(&d, user);
    for (int i = 0; i < 6; i++)
      d.args[i] = ~0ull;
    fn(&d, user);
    d = (struct seccomp_data){.nr = (int)(nr | X32_BIT),
                              .arch = AUDIT_ARCH_X86_64};
    fn(&d, user);
    d = (struct seccomp_data){.nr = nr, .arch = AUDIT_ARCH_I386};
    fn(&d, user);
  }
  for (size_t r = 0; r < p->n_rules; r++) {
    const sbx_rule *rule = &p->rules[r];
    GArray *values = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    static const uint64_t kFixed[] = {0, 1, ~0ull, 1ull << 63, 1ull << 32,
                                      0xffffffffull, 0x7fffffffull};
    for (size_t k = 0; k < G_N_ELEMENTS(kFixed); k++)
      add_value(values, kFixed[k]);
    gboolean used[6] = {FALSE};
    for (size_t a = 0; a < rule->n_alts; a++) {
      for (size_t c = 0; c < rule->alts[a].n_cmps; c++) {
        const sbx_cmp *cmp = &rule->alts[a].cmps[c];
        used[cmp->arg] = TRUE;
        add_value(values, cmp->value);
        add_value(values, cmp->value - 1);
        add_value(values, cmp->value + 1);
        add_value(values, cmp->value | 1ull << 32);
        add_value(values, ~cmp->value);
      }
    }
    for (int i = 0; i < 6; i++) {
      if (!used[i])
        continue;
      for (guint v = 0; v < values->len; v++) {
        d = (struct seccomp_data){.nr = rule->nr, .arch = AUDIT_ARCH_X86_64};
        d.args[i] = g_array_index(values, uint64_t, v);
        fn(&d, user);
        for (int j = i + 1; j < 6; j++) {
          if (!used[j])
            continue;
          for (guint w = 0; w < values->len; w++) {
            d.args[j] = g_array_index(values, uint64_t, w);
            fn(&d, user);
          }
          d.args[j] = 0;
        }
      }
    }
    g_array_unref(values);
  }
}

/* What the kernel reads: int-sized arguments cut to their low 32 bits. */
static struct seccomp_data as_kernel_reads(const struct seccomp_data *d) {
  struct seccomp_data k = *d;
  for (unsigned i = 0; i < 6; i++)
    if (sbx_syscall_arg_is_32bit(d->nr, i))
      k.args[i] = (uint32_t)k.args[i];
  return k;
}

typedef struct {
  const char *file;
  const sbx_policy *policy;     /* imported */
  sbx_bpf_program prog;         /* compiled from policy */
  const sbx_oci_profile *json;  /* the original profile */
  const sbx_oci_profile *again; /* policy exported, loaded back */
  const sbx_policy *reimported; /* again, imported */
  sbx_bpf_program prog2;
  size_t checked;
} round_trip;

static void check_round_trip(const struct seccomp_data *d, void *user) {
  round_trip *t = user;
  uint32_t want = sbx_policy_eval(t->policy, d);
  uint32_t bpf = sbx_bpf_run_checked(t->prog.insns, t->prog.len, d, NULL);
  struct seccomp_data k = as_kernel_reads(d);
  uint32_t json = sbx_oci_profile_eval(t->json, &k);
  uint32_t exported = sbx_oci_profile_eval(t->again, d);
  uint32_t re = sbx_policy_eval(t->reimported, d);
  uint32_t bpf2 = sbx_bpf_run_checked(t->prog2.insns, t->prog2.len, d, NULL);
  ck_assert_msg(want == bpf && want == json && want == exported &&
                    want == re && want == bpf2,
                "%s: nr %d arch 0x%x args %#llx %#llx %#llx"
                ": import 0x%x, compiled 0x%x, JSON 0x%x, exported JSON "
                "0x%x, re-imported 0x%x, re-compiled 0x%x",
                t->file, d->nr, d->arch, d->args[0], d->args[1], d->args[2],
                want, bpf, json, exported, re, bpf2);
  if (d->arch != AUDIT_ARCH_X86_64 || (d->nr & X32_BIT))
    ck_assert_uint_eq(want, SECCOMP_RET_KILL_PROCESS);
  t->checked++;
}

static sbx_policy *import_ok(const sbx_oci_profile *json, const char *name) {
  GError *error = NULL;
  char *text = sbx_oci_import(json, &error);
  ck_assert_msg(text != NULL, "%s: %s", name, error ? error->message : "?");
  sbx_policy *p = sbx_policy_parse_string(text, name, NULL, &error);
  ck_assert_msg(p != NULL, "%s: %s", name, error ? error->message : "?");
  g_free(text);
  return p;
}

static void compile_ok(const sbx_policy *p, sbx_bpf_program *prog) {
  GError *error = NULL;
  ck_assert_msg(sbx_bpf_compile(p, prog, &error), "%s",
                error ? error->message : "?");
}

START_TEST(oci_corpus_profiles_keep_their_verdicts_through_import_and_export) {
  GPtrArray *files = policy_test_corpus_files("oci");
  guint profiles = 0;
  for (guint f = 0; f < files->len; f++) {
    const char *path = g_ptr_array_index(files, f);
    if (!g_str_has_suffix(path, ".json"))
      continue;
    char *name = g_path_get_basename(path);
    GError *error = NULL;
    sbx_oci_profile *json = sbx_oci_profile_load_file(path, &error);
    ck_assert_msg(json != NULL, "%s", error ? error->message : "?");
    round_trip t = {.file = name, .json = json};
    sbx_policy *p = import_ok(json, name);
    t.policy = p;
    compile_ok(p, &t.prog);
    char *exported = sbx_oci_export(p, &error);
    ck_assert_msg(exported != NULL, "%s: %s", name,
                  error ? error->message : "?");
    sbx_oci_profile *again =
        sbx_oci_profile_load_data(exported, -1, "exported", &error);
    ck_assert_msg(again != NULL, "%s: %s", name,
                  error ? error->message : "?");
    t.again = again;
    sbx_policy *p2 = import_ok(again, name);
    t.reimported = p2;
    compile_ok(p2, &t.prog2);
    for_each_input(p, check_round_trip, &t);
    ck_assert_uint_gt(t.checked, 4 * (size_t)sbx_syscall_max());
    profiles++;
    sbx_bpf_program_clear(&t.prog);
    sbx_bpf_program_clear(&t.prog2);
    sbx_policy_free(p);
    sbx_policy_free(p2);
    sbx_oci_profile_free(again);
    sbx_oci_profile_free(json);
    g_free(exported);
    g_free(name);
  }
  ck_assert_uint_ge(profiles, 5);
  g_ptr_array_unref(files);
}
END_TEST

static sbx_oci_profile *docker_default(void) {
  char *path = policy_test_corpus("oci/seccomp__default.json");
  GError *error = NULL;
  sbx_oci_profile *json = sbx_oci_profile_load_file(path, &error);
  ck_assert_msg(json != NULL, "%s", error ? error->message : "?");
  g_free(path);
  return json;
}

START_TEST(oci_docker_default_keeps_its_argument_rules_and_capability_rules) {
  sbx_oci_profile *json = docker_default();
  sbx_policy *p = import_ok(json, "default.json");
  uint32_t eperm = SECCOMP_RET_ERRNO | EPERM;
  /* Positive controls: plain calls the profile allows. */
  ck_assert_uint_eq(policy_test_eval(p, "getpid", 0, 0, 0, 0, 0, 0),
                    SECCOMP_RET_ALLOW);
  ck_assert_uint_eq(policy_test_eval(p, "socket", 2, 1, 0, 0, 0, 0),
                    SECCOMP_RET_ALLOW);
  ck_assert_uint_eq(policy_test_eval(p, "socket", 39, 1, 0, 0, 0, 0),
                    SECCOMP_RET_ALLOW);
  /* AF_KCM (41 > 40 is allowed) but AF_VSOCK (40) and 38 are not. */
  ck_assert_uint_eq(policy_test_eval(p, "socket", 40, 1, 0, 0, 0, 0), eperm);
  ck_assert_uint_eq(policy_test_eval(p, "socket", 38, 1, 0, 0, 0, 0), eperm);
  ck_assert_uint_eq(policy_test_eval(p, "personality", 0, 0, 0, 0, 0, 0),
                    SECCOMP_RET_ALLOW);
  ck_assert_uint_eq(policy_test_eval(p, "personality", 0x0400000, 0, 0, 0,
                                     0, 0),
                    eperm);
  /* clone without namespace flags; with CLONE_NEWUSER refused. */
  ck_assert_uint_eq(policy_test_eval(p, "clone", 0x3d0f00, 0, 0, 0, 0, 0),
                    SECCOMP_RET_ALLOW);
  ck_assert_uint_eq(policy_test_eval(p, "clone", 0x10000000, 0, 0, 0, 0, 0),
                    eperm);
  /* No capabilities: clone3 gets ENOSYS, the CAP_SYS_ADMIN list EPERM. */
  ck_assert_uint_eq(policy_test_eval(p, "clone3", 0, 0, 0, 0, 0, 0),
                    SECCOMP_RET_ERRNO | ENOSYS);
  ck_assert_uint_eq(policy_test_eval(p, "mount", 0, 0, 0, 0, 0, 0), eperm);
  ck_assert_uint_eq(policy_test_eval(p, "bpf", 0, 0, 0, 0, 0, 0), eperm);
  /* minKernel 4.8 is met by every kernel sbx runs on. */
  ck_assert_uint_eq(policy_test_eval(p, "ptrace", 0, 0, 0, 0, 0, 0),
                    SECCOMP_RET_ALLOW);
  /* amd64-only entries are kept, other architectures' dropped. */
  ck_assert_uint_eq(policy_test_eval(p, "arch_prctl", 0, 0, 0, 0, 0, 0),
                    SECCOMP_RET_ALLOW);
  sbx_policy_free(p);
  sbx_oci_profile_free(json);
}
END_TEST

static char *import_error(const char *json_text) {
  GError *error = NULL;
  sbx_oci_profile *json =
      sbx_oci_profile_load_data(json_text, -1, "test.json", &error);
  char *text = NULL;
  if (json != NULL)
    text = sbx_oci_import(json, &error);
  ck_assert_msg(text == NULL, "accepted:\n%s", text);
  ck_assert_ptr_nonnull(error);
  ck_assert_msg(g_str_has_prefix(error->message, "test.json"), "%s",
                error->message);
  char *msg = g_strdup(error->message);
  g_error_free(error);
  sbx_oci_profile_free(json);
  return msg;
}

START_TEST(oci_import_refuses_what_it_cannot_write_exactly_naming_the_syscall) {
  static const struct {
    const char *json;
    const char *needle;
  } kCases[] = {
      /* ioctl's cmd is int-sized: a 64-bit constant cannot be honoured. */
      {"{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"syscalls\":[{\"names\":["
       "\"ioctl\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":1,"
       "\"value\":4294988819,\"op\":\"SCMP_CMP_EQ\"}]}]}",
       "(ioctl)"},
      /* Overlapping entries with different actions. */
      {"{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"syscalls\":[{\"names\":["
       "\"socket\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":0,"
       "\"value\":10,\"op\":\"SCMP_CMP_LT\"}]},{\"names\":[\"socket\"],"
       "\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":13,\"args\":[{\"index\":"
       "0,\"value\":5,\"op\":\"SCMP_CMP_GT\"}]}]}",
       "(socket)"},
      /* A conditional kill over a default of errno: sbx filters allow. */
      {"{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"syscalls\":[{\"names\":["
       "\"prctl\"],\"action\":\"SCMP_ACT_KILL_PROCESS\",\"args\":[{\"index\":"
       "0,\"value\":4,\"op\":\"SCMP_CMP_EQ\"}]}]}",
       "(prctl)"},
      /* Whether the entry applies depends on the kernel. */
      {"{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"syscalls\":[{\"names\":["
       "\"io_uring_setup\"],\"action\":\"SCMP_ACT_ALLOW\",\"includes\":{"
       "\"minKernel\":\"6.1\"}}]}",
       "minKernel 6.1"},
      {"{\"defaultAction\":\"SCMP_ACT_FOO\"}", "unknown action 'SCMP_ACT_FOO'"},
      {"{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"syscalls\":[{\"names\":["
       "\"read\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":6,"
       "\"value\":1,\"op\":\"SCMP_CMP_EQ\"}]}]}",
       "index must be 0 to 5"},
      {"{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"architectures\":["
       "\"SCMP_ARCH_AARCH64\"]}",
       "SCMP_ARCH_X86_64"},
      {"{\"defaultAction\": ", "test.json:"},
      {"[1, 2]", "JSON object"},
  };
  for (size_t k = 0; k < G_N_ELEMENTS(kCases); k++) {
    char *msg = import_error(kCases[k].json);
    ck_assert_msg(strstr(msg, kCases[k].needle) != NULL,
                  "case %zu: '%s' not in: %s", k, kCases[k].needle, msg);
    g_free(msg);
  }
}
END_TEST

START_TEST(oci_import_writes_disjoint_allow_and_errno_entries_as_one_rule) {
  /* containers-common's socket rules: errno 22 exactly where no allow
   * entry matches, so one rule with '; return 22' says it. */
  const char *text =
      "{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"defaultErrnoRet\":1,"
      "\"syscalls\":[{\"names\":[\"socket\"],\"action\":\"SCMP_ACT_ERRNO\","
      "\"errnoRet\":22,\"args\":[{\"index\":0,\"value\":16,\"op\":"
      "\"SCMP_CMP_EQ\"},{\"index\":2,\"value\":9,\"op\":\"SCMP_CMP_EQ\"}]},"
      "{\"names\":[\"socket\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{"
      "\"index\":2,\"value\":9,\"op\":\"SCMP_CMP_NE\"}]},{\"names\":["
      "\"socket\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":0,"
      "\"value\":16,\"op\":\"SCMP_CMP_NE\"}]}]}";
  GError *error = NULL;
  sbx_oci_profile *json = sbx_oci_profile_load_data(text, -1, "t", &error);
  ck_assert_ptr_nonnull(json);
  sbx_policy *p = import_ok(json, "t");
  ck_assert_uint_eq(policy_test_eval(p, "socket", 16, 3, 9, 0, 0, 0),
                    SECCOMP_RET_ERRNO | 22);
  ck_assert_uint_eq(policy_test_eval(p, "socket", 16, 3, 0, 0, 0, 0),
                    SECCOMP_RET_ALLOW);
  ck_assert_uint_eq(policy_test_eval(p, "socket", 1, 1, 9, 0, 0, 0),
                    SECCOMP_RET_ALLOW);
  ck_assert_uint_eq(policy_test_eval(p, "read", 0, 0, 0, 0, 0, 0),
                    SECCOMP_RET_ERRNO | 1);
  sbx_policy_free(p);
  sbx_oci_profile_free(json);
}
END_TEST

static uint32_t exported_eval(const char *policy_text, const char *syscall,
                              uint64_t a0, uint64_t a1) {
  sbx_policy *p = policy_test_parse_ok(policy_text);
  GError *error = NULL;
  char *json_text = sbx_oci_export(p, &error);
  ck_assert_msg(json_text != NULL, "%s", error ? error->message : "?");
  sbx_oci_profile *json =
      sbx_oci_profile_load_data(json_text, -1, "exported", &error);
  ck_assert_msg(json != NULL, "%s\n%s", error ? error->message : "?",
                json_text);
  struct seccomp_data d = {.nr = sbx_syscall_number(syscall),
                           .arch = AUDIT_ARCH_X86_64,
                           .args = {a0, a1}};
  uint32_t ret = sbx_oci_profile_eval(json, &d);
  ck_assert_uint_eq(ret, sbx_policy_eval(p, &d));
  sbx_oci_profile_free(json);
  g_free(json_text);
  sbx_policy_free(p);
  return ret;
}

START_TEST(oci_export_compares_int_sized_arguments_on_their_low_32_bits) {
  const char *deny_sti = "ioctl: arg1 != TIOCSTI\n";
  /* Positive control: another command passes. */
  ck_assert_uint_eq(exported_eval(deny_sti, "ioctl", 0, TCGETS),
                    SECCOMP_RET_ALLOW);
  ck_assert_uint_eq(exported_eval(deny_sti, "ioctl", 0, TIOCSTI),
                    SECCOMP_RET_KILL_PROCESS);
  /* S4: junk above bit 31 does not make TIOCSTI "different". */
  ck_assert_uint_eq(exported_eval(deny_sti, "ioctl", 0, TIOCSTI | 1ull << 32),
                    SECCOMP_RET_KILL_PROCESS);
  const char *allow_get = "ioctl: arg1 == TCGETS\n";
  ck_assert_uint_eq(exported_eval(allow_get, "ioctl", 0, TCGETS),
                    SECCOMP_RET_ALLOW);
  ck_assert_uint_eq(exported_eval(allow_get, "ioctl", 0, TIOCSTI),
                    SECCOMP_RET_KILL_PROCESS);
  const char *ranges =
      "socket: arg0 < 3 || arg0 >= 40 && arg0 <= 41; return 97\n"
      "@default return 1\n";
  ck_assert_uint_eq(exported_eval(ranges, "socket", 2, 0), SECCOMP_RET_ALLOW);
  ck_assert_uint_eq(exported_eval(ranges, "socket", 3, 0),
                    SECCOMP_RET_ERRNO | 97);
  ck_assert_uint_eq(exported_eval(ranges, "socket", 41 | 1ull << 40, 0),
                    SECCOMP_RET_ALLOW);
  ck_assert_uint_eq(exported_eval(ranges, "socket", 42, 0),
                    SECCOMP_RET_ERRNO | 97);
}
END_TEST

typedef struct {
  const sbx_policy *policy;
  const sbx_oci_profile *json;
  const char *name;
} export_check;

static void check_export(const struct seccomp_data *d, void *user) {
  export_check *c = user;
  uint32_t want = sbx_policy_eval(c->policy, d);
  uint32_t got = sbx_oci_profile_eval(c->json, d);
  ck_assert_msg(want == got,
                "%s: nr %d args %#llx %#llx"
                ": policy 0x%x, exported 0x%x",
                c->name, d->nr, d->args[0], d->args[1], want, got);
}

START_TEST(oci_export_of_every_builtin_policy_gives_the_same_verdicts) {
  guint exported = 0, refused = 0;
  for (size_t k = 0; k < sbx_builtin_n_files; k++) {
    const char *name = sbx_builtin_files[k].name;
    if (!g_str_has_suffix(name, ".policy"))
      continue;
    GError *error = NULL;
    sbx_policy *p = sbx_builtin_policy(name, &error);
    ck_assert_msg(p != NULL, "%s", error ? error->message : "?");
    char *text = sbx_oci_export(p, &error);
    if (text == NULL) {
      /* Refused only for trap actions (the broker's SIGSYS path has no
       * OCI form) or a rule too large as libseccomp comparisons, and the
       * message names the rule's system call. */
      ck_assert_msg(strstr(error->message, "no OCI equivalent") != NULL ||
                        strstr(error->message, "needs more than") != NULL ||
                        strstr(error->message, "more than") != NULL,
                    "%s: %s", name, error->message);
      refused++;
      g_clear_error(&error);
      sbx_policy_free(p);
      continue;
    }
    sbx_oci_profile *json = sbx_oci_profile_load_data(text, -1, name, &error);
    ck_assert_msg(json != NULL, "%s: %s", name, error ? error->message : "?");
    export_check c = {.policy = p, .json = json, .name = name};
    for_each_input(p, check_export, &c);
    exported++;
    sbx_oci_profile_free(json);
    g_free(text);
    sbx_policy_free(p);
  }
  ck_assert_msg(exported >= 1, "%u exported, %u refused", exported, refused);
}
END_TEST

static Suite *oci_suite(void) {
  Suite *s = suite_create("policy_oci");
  TCase *tc = tcase_create("oci");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc,
                 oci_corpus_profiles_keep_their_verdicts_through_import_and_export);
  tcase_add_test(tc,
                 oci_docker_default_keeps_its_argument_rules_and_capability_rules);
  tcase_add_test(tc,
                 oci_import_refuses_what_it_cannot_write_exactly_naming_the_syscall);
  tcase_add_test(tc,
                 oci_import_writes_disjoint_allow_and_errno_entries_as_one_rule);
  tcase_add_test(tc,
                 oci_export_compares_int_sized_arguments_on_their_low_32_bits);
  tcase_add_test(tc, oci_export_of_every_builtin_policy_gives_the_same_verdicts);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(oci_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? 0 : 1;
}
