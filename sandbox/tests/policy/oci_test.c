/* OCI seccomp profiles through the importer and exporter: every profile of
 * the corpus keeps its verdicts through import, compile, export and
 * re-import, judged against a direct evaluation of the JSON rules; the
 * importer refuses what it cannot write exactly, naming the syscall; the
 * exporter keeps the 32-bit reading of int-sized arguments (S4).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <string.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-glib/json-glib.h>

#include "sandbox/kernel/seccomp/bpf.h"
#include "sandbox/policy/compiler.h"
#include "sandbox/kernel/seccomp/loader.h"
#include "sandbox/policy/builtin/builtin.h"
#include "sandbox/policy/parser.h"
#include "sandbox/base/syscalls.h"
#include "sandbox/tests/policy/policy_test_util.h"
#include "sandbox/policy/oci.h"

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
    static const uint64_t kFixed[] = {
        0, 1, ~0ull, 1ull << 63, 1ull << 32, 0xffffffffull, 0x7fffffffull};
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
  ck_assert_msg(want == bpf && want == json && want == exported && want == re &&
                    want == bpf2,
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
  POLICY_TEST_NEEDS_CORPUS();
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
    char *exported = sbx_oci_export(p, SBX_OCI_EXPORT_LARGE_NUMBERS, &error);
    ck_assert_msg(exported != NULL, "%s: %s", name,
                  error ? error->message : "?");
    sbx_oci_profile *again =
        sbx_oci_profile_load_data(exported, -1, "exported", &error);
    ck_assert_msg(again != NULL, "%s: %s", name, error ? error->message : "?");
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
  POLICY_TEST_NEEDS_CORPUS();
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
  ck_assert_uint_eq(
      policy_test_eval(p, "personality", 0x0400000, 0, 0, 0, 0, 0), eperm);
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
      /* trace carries data 0 in sbx; runc's default errnoRet is EPERM. */
      {"{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"syscalls\":[{\"names\":["
       "\"getpid\"],\"action\":\"SCMP_ACT_TRACE\"}]}",
       "(getpid): SCMP_ACT_TRACE with errnoRet 1"},
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
  char *json_text = sbx_oci_export(p, SBX_OCI_EXPORT_LARGE_NUMBERS, &error);
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

/* ---- the exported JSON as a container runtime loads it ------------------ */

static uint32_t scmp_action(JsonObject *o, const char *key,
                            const char *ret_key) {
  const char *name = json_object_get_string_member(o, key);
  uint32_t ret = json_object_has_member(o, ret_key)
                     ? (uint32_t)json_object_get_int_member(o, ret_key)
                     : EPERM;
  const struct {
    const char *name;
    uint32_t action;
  } kActions[] = {
      {"SCMP_ACT_ALLOW", SCMP_ACT_ALLOW},
      {"SCMP_ACT_ERRNO", SCMP_ACT_ERRNO(ret)},
      {"SCMP_ACT_KILL_PROCESS", SCMP_ACT_KILL_PROCESS},
      {"SCMP_ACT_KILL_THREAD", SCMP_ACT_KILL_THREAD},
      {"SCMP_ACT_TRAP", SCMP_ACT_TRAP},
      {"SCMP_ACT_TRACE", SCMP_ACT_TRACE(ret)},
      {"SCMP_ACT_LOG", SCMP_ACT_LOG},
      {"SCMP_ACT_NOTIFY", SCMP_ACT_NOTIFY},
  };
  for (size_t k = 0; k < G_N_ELEMENTS(kActions); k++)
    if (strcmp(name, kActions[k].name) == 0)
      return kActions[k].action;
  ck_abort_msg("unexpected action %s", name);
  return 0;
}

static enum scmp_compare scmp_op(const char *op) {
  static const struct {
    const char *name;
    enum scmp_compare op;
  } kOps[] = {
      {"SCMP_CMP_EQ", SCMP_CMP_EQ},
      {"SCMP_CMP_NE", SCMP_CMP_NE},
      {"SCMP_CMP_LT", SCMP_CMP_LT},
      {"SCMP_CMP_LE", SCMP_CMP_LE},
      {"SCMP_CMP_GT", SCMP_CMP_GT},
      {"SCMP_CMP_GE", SCMP_CMP_GE},
      {"SCMP_CMP_MASKED_EQ", SCMP_CMP_MASKED_EQ},
  };
  for (size_t k = 0; k < G_N_ELEMENTS(kOps); k++)
    if (strcmp(op, kOps[k].name) == 0)
      return kOps[k].op;
  ck_abort_msg("unexpected op %s", op);
  return SCMP_CMP_EQ;
}

/* Builds the profile with libseccomp the way runc does (rules whose action
 * is the default skipped, other architectures killed) and returns the
 * program libseccomp generates. */
static sbx_bpf_program libseccomp_program(const char *json_text,
                                          const char *name,
                                          GHashTable *unknown) {
  JsonParser *parser = json_parser_new();
  GError *error = NULL;
  ck_assert_msg(json_parser_load_from_data(parser, json_text, -1, &error),
                "%s: %s", name, error ? error->message : "?");
  JsonObject *root = json_node_get_object(json_parser_get_root(parser));
  uint32_t def = scmp_action(root, "defaultAction", "defaultErrnoRet");
  scmp_filter_ctx ctx = seccomp_init(def);
  ck_assert_ptr_nonnull(ctx);
  ck_assert_int_eq(
      seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS), 0);
  JsonArray *calls = json_object_get_array_member(root, "syscalls");
  for (guint k = 0; k < json_array_get_length(calls); k++) {
    JsonObject *e = json_array_get_object_element(calls, k);
    uint32_t act = scmp_action(e, "action", "errnoRet");
    if (act == def)
      continue;
    struct scmp_arg_cmp cmps[6];
    unsigned n = 0;
    if (json_object_has_member(e, "args")) {
      JsonArray *args = json_object_get_array_member(e, "args");
      ck_assert_uint_le(json_array_get_length(args), 6);
      for (guint a = 0; a < json_array_get_length(args); a++) {
        JsonObject *x = json_array_get_object_element(args, a);
        cmps[n++] = (struct scmp_arg_cmp){
            .arg = (unsigned)json_object_get_int_member(x, "index"),
            .op = scmp_op(json_object_get_string_member(x, "op")),
            .datum_a = (scmp_datum_t)json_object_get_int_member(x, "value"),
            .datum_b = (scmp_datum_t)json_object_get_int_member(x, "valueTwo")};
      }
    }
    JsonArray *names = json_object_get_array_member(e, "names");
    for (guint i = 0; i < json_array_get_length(names); i++) {
      const char *call = json_array_get_string_element(names, i);
      int nr = seccomp_syscall_resolve_name(call);
      if (nr < 0) {
        /* Newer than this libseccomp: runc skips such names too. */
        g_hash_table_add(unknown, GINT_TO_POINTER(sbx_syscall_number(call)));
        continue;
      }
      int rc = seccomp_rule_add_array(ctx, act, nr, n, cmps);
      ck_assert_msg(rc == 0, "%s: libseccomp refused the rule for %s: %s", name,
                    call, strerror(-rc));
    }
  }
  int fd = memfd_create("bpf", MFD_CLOEXEC);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(seccomp_export_bpf(ctx, fd), 0);
  off_t size = lseek(fd, 0, SEEK_END);
  ck_assert_int_eq(size % (off_t)sizeof(struct sock_filter), 0);
  sbx_bpf_program prog = {g_malloc(size), (size_t)size / 8};
  ck_assert_int_eq(pread(fd, prog.insns, (size_t)size, 0), size);
  close(fd);
  seccomp_release(ctx);
  g_object_unref(parser);
  return prog;
}

typedef struct {
  const sbx_policy *policy;
  const sbx_bpf_program *prog;
  const char *name;
  GHashTable *unknown; /* numbers libseccomp cannot name */
  size_t checked;
} runtime_check;

static void check_runtime(const struct seccomp_data *d, void *user) {
  runtime_check *c = user;
  if (d->arch == AUDIT_ARCH_X86_64 &&
      g_hash_table_contains(c->unknown, GINT_TO_POINTER(d->nr)))
    return;
  uint32_t want = sbx_policy_eval(c->policy, d);
  uint32_t got = sbx_bpf_run(c->prog->insns, c->prog->len, d, NULL);
  ck_assert_msg(want == got,
                "%s: nr %d arch 0x%x args %#llx %#llx %#llx: policy 0x%x, "
                "libseccomp's program 0x%x",
                c->name, d->nr, d->arch, d->args[0], d->args[1], d->args[2],
                want, got);
  c->checked++;
}

/* The exported JSON through libseccomp: accepted rule by rule, the
 * generated program loads, and it returns the policy's verdict for every
 * call tried (this is what runc and crun build from it). */
static void check_through_libseccomp(const sbx_policy *p, const char *name) {
  GError *error = NULL;
  char *json_text = sbx_oci_export(p, SBX_OCI_EXPORT_LARGE_NUMBERS, &error);
  ck_assert_msg(json_text != NULL, "%s: %s", name,
                error ? error->message : "?");
  GHashTable *unknown = g_hash_table_new(g_direct_hash, g_direct_equal);
  sbx_bpf_program prog = libseccomp_program(json_text, name, unknown);
  ck_assert_msg(policy_test_kernel_accepts(prog.insns, prog.len),
                "%s: the kernel refused libseccomp's "
                "%zu-instruction program",
                name, prog.len);
  runtime_check c = {
      .policy = p, .prog = &prog, .name = name, .unknown = unknown};
  for_each_input(p, check_runtime, &c);
  ck_assert_uint_gt(c.checked, 0);
  g_hash_table_unref(unknown);
  sbx_bpf_program_clear(&prog);
  g_free(json_text);
}

START_TEST(oci_exported_profiles_give_the_same_verdicts_through_libseccomp) {
  POLICY_TEST_NEEDS_CORPUS();
  GPtrArray *files = policy_test_corpus_files("oci");
  for (guint f = 0; f < files->len; f++) {
    const char *path = g_ptr_array_index(files, f);
    if (!g_str_has_suffix(path, ".json"))
      continue;
    GError *error = NULL;
    sbx_oci_profile *json = sbx_oci_profile_load_file(path, &error);
    ck_assert_msg(json != NULL, "%s", error ? error->message : "?");
    sbx_policy *p = import_ok(json, path);
    check_through_libseccomp(p, path);
    sbx_policy_free(p);
    sbx_oci_profile_free(json);
  }
  g_ptr_array_unref(files);
  /* Int-sized comparisons (S4) and ranges, written as masked compares. */
  sbx_policy *p = policy_test_parse_ok(
      "ioctl: arg1 != TIOCSTI\n"
      "socket: arg0 < 3 || arg0 >= 40 && arg0 <= 41; return 97\n"
      "mmap: arg2 in PROT_READ|PROT_WRITE && arg3 & MAP_PRIVATE\n"
      "lseek: arg1 > 0x100000000 && arg2 != 1\n"
      "@default return 1\n");
  check_through_libseccomp(p, "test.policy");
  sbx_policy_free(p);
}
END_TEST

/* Whether any verdict of p is user-notify (the default or a rule's). */
static gboolean uses_user_notify(const sbx_policy *p) {
  if (p->default_action.kind == SBX_ACTION_USER_NOTIF)
    return TRUE;
  for (size_t i = 0; i < p->n_rules; i++)
    if (p->rules[i].on_match.kind == SBX_ACTION_USER_NOTIF ||
        (p->rules[i].n_alts &&
         p->rules[i].on_mismatch.kind == SBX_ACTION_USER_NOTIF))
      return TRUE;
  return FALSE;
}

/* Every built-in policy exports, but those that send calls to a
 * supervisor (sbx-run's baselines), which no container runtime has; the
 * JSON evaluated directly and the program libseccomp builds from it both
 * give the policy's verdicts. */
START_TEST(oci_export_of_every_builtin_policy_gives_the_same_verdicts) {
  guint exported = 0;
  for (size_t k = 0; k < sbx_builtin_n_files; k++) {
    const char *name = sbx_builtin_files[k].name;
    if (!g_str_has_suffix(name, ".policy"))
      continue;
    GError *error = NULL;
    sbx_policy *p = sbx_builtin_policy(name, &error);
    ck_assert_msg(p != NULL, "%s", error ? error->message : "?");
    char *text = sbx_oci_export(p, SBX_OCI_EXPORT_LARGE_NUMBERS, &error);
    if (uses_user_notify(p)) {
      /* No container runtime answers user-notify. */
      ck_assert_ptr_null(text);
      ck_assert_msg(strstr(error->message, "user-notify") != NULL, "%s: %s",
                    name, error->message);
      g_clear_error(&error);
      sbx_policy_free(p);
      continue;
    }
    ck_assert_msg(text != NULL, "%s: %s", name, error ? error->message : "?");
    sbx_oci_profile *json = sbx_oci_profile_load_data(text, -1, name, &error);
    ck_assert_msg(json != NULL, "%s: %s", name, error ? error->message : "?");
    export_check c = {.policy = p, .json = json, .name = name};
    for_each_input(p, check_export, &c);
    check_through_libseccomp(p, name);
    exported++;
    sbx_oci_profile_free(json);
    g_free(text);
    sbx_policy_free(p);
  }
  ck_assert_uint_ge(exported, 4);
}
END_TEST

/* ---- numbers JSON tools keep, container profiles, user-notify ---------- */

/* Every integer in the text is at most 2^53 - 1 (jq and JavaScript read
 * numbers as doubles). */
static void assert_small_numbers(const char *json, const char *name) {
  for (const char *c = json; *c; c++) {
    if (!g_ascii_isdigit(*c) || (c > json && g_ascii_isalnum(c[-1])))
      continue;
    char *end = NULL;
    uint64_t v = g_ascii_strtoull(c, &end, 10);
    ck_assert_msg(v <= SBX_OCI_MAX_SAFE_NUMBER,
                  "%s: the profile holds %.*s, above 2^53", name,
                  (int)(end - c), c);
    c = end - 1;
  }
}

typedef struct {
  const sbx_policy *policy;
  const sbx_policy *runtime; /* NULL: the policy alone */
  const sbx_oci_profile *json;
  sbx_bpf_program compiled; /* the policy, compiled by sbx */
  sbx_bpf_program seccomp;  /* the JSON, compiled by libseccomp */
  GHashTable *unknown;
  const char *name;
} verdict_check;

/* The verdict the exported profile must give: the runtime's calls where
 * they hold, the policy's everywhere else. */
static uint32_t wanted(const verdict_check *c, const struct seccomp_data *d,
                       gboolean *by_runtime) {
  *by_runtime = FALSE;
  for (size_t k = 0; c->runtime && k < c->runtime->n_rules; k++)
    if (c->runtime->rules[k].nr == d->nr && d->arch == AUDIT_ARCH_X86_64 &&
        sbx_policy_eval(c->runtime, d) == SECCOMP_RET_ALLOW)
      *by_runtime = TRUE;
  return *by_runtime ? SECCOMP_RET_ALLOW : sbx_policy_eval(c->policy, d);
}

static void check_verdicts(const struct seccomp_data *d, void *user) {
  verdict_check *c = user;
  gboolean by_runtime;
  uint32_t want = wanted(c, d, &by_runtime);
  if (!by_runtime) /* the policy's own program agrees with its meaning */
    ck_assert_uint_eq(
        sbx_bpf_run_checked(c->compiled.insns, c->compiled.len, d, NULL), want);
  ck_assert_msg(sbx_oci_profile_eval(c->json, d) == want,
                "%s: nr %d args %#llx %#llx: want 0x%x, the JSON gives 0x%x",
                c->name, d->nr, d->args[0], d->args[1], want,
                sbx_oci_profile_eval(c->json, d));
  if (d->arch == AUDIT_ARCH_X86_64 &&
      g_hash_table_contains(c->unknown, GINT_TO_POINTER(d->nr)))
    return;
  uint32_t got = sbx_bpf_run(c->seccomp.insns, c->seccomp.len, d, NULL);
  ck_assert_msg(got == want,
                "%s: nr %d arch 0x%x args %#llx %#llx: want 0x%x, "
                "libseccomp's program 0x%x",
                c->name, d->nr, d->arch, d->args[0], d->args[1], want, got);
}

/* Compiles the policy with sbx and the exported JSON with libseccomp and
 * compares both with the meaning on every sample call. */
static void check_exported(const sbx_policy *p, const char *json_text,
                           gboolean for_container, const char *name) {
  GError *error = NULL;
  verdict_check c = {.policy = p, .name = name};
  sbx_policy *runtime = NULL;
  if (for_container) {
    runtime = sbx_policy_parse_string(sbx_oci_container_runtime_calls,
                                      "container-runtime", NULL, &error);
    ck_assert_msg(runtime != NULL, "%s", error ? error->message : "?");
    c.runtime = runtime;
  }
  sbx_oci_profile *json =
      sbx_oci_profile_load_data(json_text, -1, name, &error);
  ck_assert_msg(json != NULL, "%s: %s", name, error ? error->message : "?");
  c.json = json;
  compile_ok(p, &c.compiled);
  c.unknown = g_hash_table_new(g_direct_hash, g_direct_equal);
  c.seccomp = libseccomp_program(json_text, name, c.unknown);
  for_each_input(p, check_verdicts, &c);
  if (runtime != NULL)
    for_each_input(runtime, check_verdicts, &c);
  g_hash_table_unref(c.unknown);
  sbx_bpf_program_clear(&c.seccomp);
  sbx_bpf_program_clear(&c.compiled);
  sbx_oci_profile_free(json);
  sbx_policy_free(runtime);
}

/* Each built-in policy, alone and for a container: the profile holds no
 * number above 2^53 and keeps the verdicts, or the export is refused
 * naming the rule and --large-numbers writes it exactly. */
START_TEST(oci_export_of_builtins_keeps_numbers_below_2_53_or_names_the_rule) {
  guint small = 0, refused = 0;
  for (size_t k = 0; k < sbx_builtin_n_files; k++) {
    const char *name = sbx_builtin_files[k].name;
    if (!g_str_has_suffix(name, ".policy"))
      continue;
    GError *error = NULL;
    sbx_policy *p = sbx_builtin_policy(name, &error);
    ck_assert_msg(p != NULL, "%s", error ? error->message : "?");
    for (unsigned fc = 0; fc <= SBX_OCI_EXPORT_FOR_CONTAINER; fc++) {
      char *text = sbx_oci_export(p, fc, &error);
      if (text == NULL && strstr(error->message, "user-notify") != NULL) {
        g_clear_error(&error);
        continue;
      }
      if (text == NULL) {
        ck_assert_msg(strstr(error->message, "2^53") != NULL &&
                          strstr(error->message, ".policy:") != NULL &&
                          strstr(error->message, "--large-numbers") != NULL,
                      "%s: %s", name, error->message);
        g_clear_error(&error);
        text = sbx_oci_export(p, fc | SBX_OCI_EXPORT_LARGE_NUMBERS, &error);
        ck_assert_msg(text != NULL, "%s: %s", name,
                      error ? error->message : "?");
        refused++;
      } else {
        assert_small_numbers(text, name);
        small++;
      }
      check_exported(p, text, fc != 0, name);
      g_free(text);
    }
    sbx_policy_free(p);
  }
  ck_assert_uint_gt(small, 0);
  ck_assert_uint_gt(small + refused, 8);
}
END_TEST

static char *export_error(const char *text, unsigned flags) {
  GError *error = NULL;
  sbx_policy *p = sbx_policy_parse_string(text, "numbers.policy", NULL, &error);
  ck_assert_msg(p != NULL, "%s", error ? error->message : "?");
  char *json = sbx_oci_export(p, flags, &error);
  char *message = NULL;
  if (json == NULL) {
    message = g_strdup(error->message);
    g_error_free(error);
  } else {
    assert_small_numbers(json, "numbers.policy");
    check_exported(p, json, (flags & SBX_OCI_EXPORT_FOR_CONTAINER) != 0,
                   "numbers.policy");
  }
  g_free(json);
  sbx_policy_free(p);
  return message;
}

START_TEST(oci_export_rewrites_masks_above_2_53_into_equivalent_comparisons) {
  /* (arg & ~3) == 0 is arg <= 3; its complement "some bit from 2 up" is
   * arg > 3; 18446744073709551614 (~1) becomes arg <= 1. */
  ck_assert_ptr_null(
      export_error("mprotect: arg2 in PROT_READ|PROT_WRITE; return EPERM\n"
                   "prctl: arg1 in 1; return EINVAL\n"
                   "madvise: arg0 != 0 && arg1 > 0x100000000\n"
                   "@default kill-process\n",
                   0));
  ck_assert_ptr_null(export_error(
      "mprotect: arg2 in PROT_READ|PROT_WRITE; return EPERM\n", 0));
  /* Bit 63 alone cannot be tested with numbers below 2^53. */
  const char *high = "getpid: 1\nprctl: arg1 & 0x8000000000000000; return 7\n";
  char *message = export_error(high, 0);
  ck_assert_ptr_nonnull(message);
  ck_assert_msg(strstr(message, "numbers.policy:2: prctl: arg1") != NULL &&
                    strstr(message, "2^53") != NULL,
                "%s", message);
  g_free(message);
  /* With --large-numbers it is written exactly (and keeps its verdicts). */
  GError *error = NULL;
  sbx_policy *p = sbx_policy_parse_string(high, "high.policy", NULL, &error);
  char *json = sbx_oci_export(p, SBX_OCI_EXPORT_LARGE_NUMBERS, &error);
  ck_assert_msg(json != NULL, "%s", error ? error->message : "?");
  ck_assert_ptr_nonnull(strstr(json, "9223372036854775808"));
  check_exported(p, json, FALSE, "high.policy");
  g_free(json);
  sbx_policy_free(p);
}
END_TEST

START_TEST(oci_export_refuses_user_notify_naming_the_rule) {
  for (unsigned fc = 0; fc <= SBX_OCI_EXPORT_FOR_CONTAINER; fc++) {
    char *m = export_error("getpid: 1\nopenat: user-notify\n", fc);
    ck_assert_msg(m && strstr(m, "numbers.policy:2: openat: user-notify"), "%s",
                  m);
    g_free(m);
    m = export_error("getpid: 1\n@default user-notify\n", fc);
    ck_assert_msg(m && strstr(m, "@default user-notify"), "%s", m);
    g_free(m);
    m = export_error(
        "openat: arg2 == 0; return EPERM\n"
        "ioctl: arg1 == 1 || arg1 == 2\n"
        "chdir: user-notify\n",
        fc);
    ck_assert_msg(m && strstr(m, "numbers.policy:3: chdir"), "%s", m);
    g_free(m);
    /* Positive control: another action exports. */
    ck_assert_ptr_null(export_error("getpid: 1\nopenat: return EPERM\n", fc));
  }
}
END_TEST

START_TEST(oci_export_for_container_adds_only_the_runtime_calls) {
  /* A policy that refuses every runtime call: the profile allows each
   * exactly where the runtime's rule holds, and keeps the policy's verdict
   * elsewhere (openat with other flags still EPERM). */
  ck_assert_ptr_null(
      export_error("getppid: 1\n"
                   "openat: return EPERM\n"
                   "epoll_ctl: arg1 == EPOLL_CTL_MOD\n"
                   "@default kill-process\n",
                   SBX_OCI_EXPORT_FOR_CONTAINER));
  GError *error = NULL;
  sbx_policy *p = sbx_policy_parse_string("openat: return EPERM\n", "t.policy",
                                          NULL, &error);
  char *json = sbx_oci_export(p, SBX_OCI_EXPORT_FOR_CONTAINER, &error);
  ck_assert_msg(json != NULL, "%s", error ? error->message : "?");
  sbx_oci_profile *o = sbx_oci_profile_load_data(json, -1, "t", &error);
  struct seccomp_data d = {.nr = __NR_openat,
                           .arch = AUDIT_ARCH_X86_64,
                           .args = {0, 0, O_WRONLY | O_CLOEXEC}};
  ck_assert_uint_eq(sbx_oci_profile_eval(o, &d), SECCOMP_RET_ALLOW);
  d.args[2] = O_RDWR | O_CLOEXEC;
  ck_assert_uint_eq(sbx_oci_profile_eval(o, &d), SECCOMP_RET_ERRNO | EPERM);
  d.nr = __NR_socket;
  ck_assert_uint_eq(sbx_oci_profile_eval(o, &d), SECCOMP_RET_KILL_PROCESS);
  ck_assert_ptr_nonnull(strstr(json, "\"comment\": \"container runtime"));
  sbx_oci_profile_free(o);
  g_free(json);
  sbx_policy_free(p);
}
END_TEST

static Suite *oci_suite(void) {
  Suite *s = suite_create("policy_oci");
  TCase *tc = tcase_create("oci");
  tcase_set_timeout(tc, 120);
  tcase_add_test(
      tc, oci_corpus_profiles_keep_their_verdicts_through_import_and_export);
  tcase_add_test(
      tc, oci_docker_default_keeps_its_argument_rules_and_capability_rules);
  tcase_add_test(
      tc, oci_import_refuses_what_it_cannot_write_exactly_naming_the_syscall);
  tcase_add_test(
      tc, oci_import_writes_disjoint_allow_and_errno_entries_as_one_rule);
  tcase_add_test(tc,
                 oci_export_compares_int_sized_arguments_on_their_low_32_bits);
  tcase_add_test(tc,
                 oci_export_of_every_builtin_policy_gives_the_same_verdicts);
  tcase_add_test(
      tc, oci_exported_profiles_give_the_same_verdicts_through_libseccomp);
  tcase_add_test(
      tc, oci_export_of_builtins_keeps_numbers_below_2_53_or_names_the_rule);
  tcase_add_test(
      tc, oci_export_rewrites_masks_above_2_53_into_equivalent_comparisons);
  tcase_add_test(tc, oci_export_refuses_user_notify_naming_the_rule);
  tcase_add_test(tc, oci_export_for_container_adds_only_the_runtime_calls);

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
