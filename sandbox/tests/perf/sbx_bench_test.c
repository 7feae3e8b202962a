/* sbx-bench's output contract (docs/design.md, contract 6): one JSON object
 * whose keys are exactly the metrics of docs/performance.md, each a measured
 * value with its unit and ratio, or null figures with the reason it was
 * skipped; --only, --quick and the refusals of bad options. Behaviour
 * only: no timing is ever asserted here.
 */
#include <check.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>
#include <json-glib/json-glib.h>

static const char *const kKeys[] = {
    "syscall_getpid_ratio",
    "syscall_argcheck_ratio",
    "broker_open_ratio",
    "direct_open_ratio",
    "broker_open_load_ratio",
    "broker_open_tail_ratio",
    "broker_flood_victim_ratio",
    "broker_open_p99_ratio",
    "zygote_spawn_ratio",
    "warm_spawn_ratio",
    "spawn_vs_bwrap",
    "sbx_run_vs_bwrap",
    "sbx_run_files_vs_bwrap",
    "sbx_run_python_vs_bwrap",
    "policy_compile_us",
    "bpf_max_insns",
    "worker_private_kib",
    "max_workers",
};

typedef struct {
  char *out;
  char *err;
  int exit_code;
} run_output;

static void run_output_clear(run_output *r) {
  g_free(r->out);
  g_free(r->err);
}

/* Runs $SBX_BUILD_DIR/sbx-bench with args (NULL-terminated) in envp
 * (NULL: this process's environment). */
static run_output run_bench(char **envp, const char *first, ...) {
  const char *dir = g_getenv("SBX_BUILD_DIR");
  ck_assert_msg(dir, "SBX_BUILD_DIR is not set (run through run_tests.py)");
  g_autofree char *bin = g_build_filename(dir, "sbx-bench", NULL);
  GPtrArray *argv = g_ptr_array_new();
  g_ptr_array_add(argv, bin);
  va_list ap;
  va_start(ap, first);
  for (const char *a = first; a; a = va_arg(ap, const char *))
    g_ptr_array_add(argv, (gpointer)a);
  va_end(ap);
  g_ptr_array_add(argv, NULL);
  run_output r = {0};
  int status = 0;
  GError *error = NULL;
  if (!g_spawn_sync(NULL, (char **)argv->pdata, envp, G_SPAWN_DEFAULT, NULL,
                    NULL, &r.out, &r.err, &status, &error))
    ck_abort_msg("cannot run %s: %s", bin, error->message);
  g_ptr_array_unref(argv);
  ck_assert_msg(WIFEXITED(status), "%s died: status %#x\n%s", bin, status,
                r.err);
  r.exit_code = WEXITSTATUS(status);
  return r;
}

static gboolean is_number(JsonNode *n) {
  if (!n || !JSON_NODE_HOLDS_VALUE(n))
    return FALSE;
  GType t = json_node_get_value_type(n);
  return t == G_TYPE_DOUBLE || t == G_TYPE_INT64;
}

/* Parses the output and checks the shape of every metric it holds;
 * returns the object's member names. */
static GList *check_json(const run_output *r, JsonParser **parser) {
  *parser = json_parser_new();
  GError *error = NULL;
  if (!json_parser_load_from_data(*parser, r->out, -1, &error))
    ck_abort_msg("not JSON: %s\n%s", error->message, r->out);
  JsonNode *root = json_parser_get_root(*parser);
  ck_assert_msg(JSON_NODE_HOLDS_OBJECT(root), "not one object:\n%s", r->out);
  JsonObject *obj = json_node_get_object(root);
  GList *names = json_object_get_members(obj);
  for (GList *l = names; l; l = l->next) {
    const char *key = l->data;
    JsonNode *m = json_object_get_member(obj, key);
    ck_assert_msg(JSON_NODE_HOLDS_OBJECT(m), "%s is not an object", key);
    JsonObject *mo = json_node_get_object(m);
    ck_assert_msg(!json_object_has_member(mo, "error"), "%s failed: %s", key,
                  json_object_get_string_member(mo, "error"));
    const char *unit =
        json_object_get_string_member_with_default(mo, "unit", NULL);
    ck_assert_msg(unit && *unit, "%s has no unit", key);
    JsonNode *value = json_object_get_member(mo, "value");
    JsonNode *ratio = json_object_get_member(mo, "ratio");
    ck_assert_msg(value && ratio, "%s lacks value or ratio", key);
    if (json_object_has_member(mo, "skipped")) {
      const char *why =
          json_object_get_string_member_with_default(mo, "skipped", NULL);
      ck_assert_msg(why && *why, "%s is skipped without a reason", key);
      ck_assert_msg(JSON_NODE_HOLDS_NULL(value) && JSON_NODE_HOLDS_NULL(ratio),
                    "%s is skipped but carries figures", key);
    } else {
      ck_assert_msg(is_number(value), "%s: value is not a number", key);
      ck_assert_msg(is_number(ratio), "%s: ratio is not a number", key);
    }
  }
  return names;
}

static JsonObject *metric_of(JsonParser *parser, const char *key) {
  JsonObject *root = json_node_get_object(json_parser_get_root(parser));
  ck_assert_msg(json_object_has_member(root, key), "no %s", key);
  return json_object_get_object_member(root, key);
}

static gboolean is_skipped(JsonObject *m) {
  return json_object_has_member(m, "skipped");
}

static gboolean has_key(GList *names, const char *key) {
  for (GList *l = names; l; l = l->next)
    if (strcmp(l->data, key) == 0)
      return TRUE;
  return FALSE;
}

START_TEST(json_has_exactly_every_metric_each_measured_or_skipped) {
  run_output r = run_bench(NULL, "--json", "--quick", NULL);
  ck_assert_msg(r.exit_code == 0, "exit %d\n%s\n%s", r.exit_code, r.out, r.err);
  JsonParser *parser;
  GList *names = check_json(&r, &parser);
  ck_assert_uint_eq(g_list_length(names), G_N_ELEMENTS(kKeys));
  for (size_t i = 0; i < G_N_ELEMENTS(kKeys); i++)
    ck_assert_msg(has_key(names, kKeys[i]), "missing %s", kKeys[i]);
  /* An undumpable worker's smaps_rollup opens for root (CAP_SYS_PTRACE in
   * the host's namespace). sbx-bench calls sbx_main_hook, so its zygote
   * is exec'd inside the user namespace the host's user owns, and that
   * namespace owns the workers' memory: it opens for that user too. Where
   * the kernel refuses user namespaces it does not (EACCES). */
  JsonObject *mem = metric_of(parser, "worker_private_kib");
  if (geteuid() == 0) {
    ck_assert_msg(!is_skipped(mem), "skipped as root: %s",
                  json_object_get_string_member(mem, "skipped"));
  } else if (is_skipped(mem)) {
    ck_assert_ptr_nonnull(
        strstr(json_object_get_string_member(mem, "skipped"), "EACCES"));
  }
  g_list_free(names);
  g_object_unref(parser);
  run_output_clear(&r);
}
END_TEST

START_TEST(only_reports_the_metrics_it_names) {
  run_output r = run_bench(NULL, "--json", "--quick", "--only",
                           "bpf_max_insns,policy_compile_us", NULL);
  ck_assert_int_eq(r.exit_code, 0);
  JsonParser *parser;
  GList *names = check_json(&r, &parser);
  ck_assert_uint_eq(g_list_length(names), 2);
  ck_assert(has_key(names, "bpf_max_insns"));
  ck_assert(has_key(names, "policy_compile_us"));
  g_list_free(names);
  g_object_unref(parser);
  run_output_clear(&r);
}
END_TEST

/* A metric reported for information has no target to pass or miss. */
START_TEST(information_metrics_have_null_target_and_pass) {
  run_output r = run_bench(NULL, "--json", "--quick", "--only",
                           "broker_open_p99_ratio,policy_compile_us", NULL);
  ck_assert_msg(r.exit_code == 0, "exit %d\n%s\n%s", r.exit_code, r.out, r.err);
  JsonParser *parser;
  GList *names = check_json(&r, &parser);
  JsonObject *info = metric_of(parser, "broker_open_p99_ratio");
  ck_assert(JSON_NODE_HOLDS_NULL(json_object_get_member(info, "target")));
  ck_assert(JSON_NODE_HOLDS_NULL(json_object_get_member(info, "pass")));
  ck_assert_str_eq(json_object_get_string_member(info, "ratio_of"), "floor");
  /* Control: a metric with a target carries it and a verdict. */
  JsonObject *compile = metric_of(parser, "policy_compile_us");
  ck_assert(is_number(json_object_get_member(compile, "target")));
  ck_assert(!JSON_NODE_HOLDS_NULL(json_object_get_member(compile, "pass")));
  g_list_free(names);
  g_object_unref(parser);
  run_output_clear(&r);
}
END_TEST

START_TEST(table_names_each_metric_with_its_target) {
  run_output r = run_bench(NULL, "--quick", "--only",
                           "bpf_max_insns,policy_compile_us", NULL);
  ck_assert_int_eq(r.exit_code, 0);
  g_auto(GStrv) lines = g_strsplit(r.out, "\n", -1);
  gboolean bpf = FALSE, compile = FALSE;
  for (char **l = lines; *l; l++) {
    bpf |= g_str_has_prefix(*l, "bpf_max_insns ") &&
           strstr(*l, "log2(rules)") != NULL;
    compile |= g_str_has_prefix(*l, "policy_compile_us ") &&
               strstr(*l, "<= 500 us") != NULL;
  }
  ck_assert_msg(bpf && compile, "table lacks a row:\n%s", r.out);
  run_output_clear(&r);
}
END_TEST

START_TEST(unknown_metric_is_refused_by_name) {
  run_output r =
      run_bench(NULL, "--json", "--only", "policy_compile_us,no_such", NULL);
  ck_assert_int_eq(r.exit_code, 2);
  ck_assert_str_eq(r.out, "");
  ck_assert_msg(strstr(r.err, "\"no_such\"") != NULL, "%s", r.err);
  run_output_clear(&r);
}
END_TEST

START_TEST(bad_repeat_count_is_refused) {
  run_output r = run_bench(NULL, "--repeat", "-1", NULL);
  ck_assert_int_eq(r.exit_code, 2);
  ck_assert_ptr_nonnull(strstr(r.err, "--repeat"));
  run_output_clear(&r);
}
END_TEST

START_TEST(repeat_sets_how_many_repetitions_are_reported) {
  run_output r = run_bench(NULL, "--json", "--repeat", "2", "--only",
                           "policy_compile_us", NULL);
  ck_assert_int_eq(r.exit_code, 0);
  JsonParser *parser;
  g_list_free(check_json(&r, &parser));
  JsonObject *m = metric_of(parser, "policy_compile_us");
  ck_assert_int_eq(json_object_get_int_member(m, "repetitions"), 2);
  g_object_unref(parser);
  run_output_clear(&r);
}
END_TEST

/* bwrap found through PATH: measured where it is (the control), skipped
 * with the reason where PATH has no bwrap. */
START_TEST(missing_bwrap_is_reported_skipped_with_the_reason) {
  g_autofree char *bwrap = g_find_program_in_path("bwrap");
  if (bwrap) {
    run_output c =
        run_bench(NULL, "--json", "--quick", "--only", "spawn_vs_bwrap", NULL);
    ck_assert_int_eq(c.exit_code, 0);
    JsonParser *cp;
    g_list_free(check_json(&c, &cp));
    ck_assert_msg(!is_skipped(metric_of(cp, "spawn_vs_bwrap")),
                  "bwrap is installed, yet: %s",
                  json_object_get_string_member(metric_of(cp, "spawn_vs_bwrap"),
                                                "skipped"));
    g_object_unref(cp);
    run_output_clear(&c);
  }
  g_auto(GStrv) env = g_get_environ();
  env = g_environ_setenv(env, "PATH", "/nonexistent", TRUE);
  run_output r = run_bench(env, "--json", "--quick", "--only",
                           "spawn_vs_bwrap,sbx_run_vs_bwrap", NULL);
  ck_assert_int_eq(r.exit_code, 0);
  JsonParser *parser;
  g_list_free(check_json(&r, &parser));
  const char *keys[] = {"spawn_vs_bwrap", "sbx_run_vs_bwrap"};
  for (size_t i = 0; i < G_N_ELEMENTS(keys); i++) {
    JsonObject *m = metric_of(parser, keys[i]);
    ck_assert_msg(is_skipped(m), "%s measured without bwrap", keys[i]);
    ck_assert_ptr_nonnull(
        strstr(json_object_get_string_member(m, "skipped"), "bwrap"));
  }
  g_object_unref(parser);
  run_output_clear(&r);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("sbx_bench");
  TCase *full = tcase_create("full");
  /* Every benchmark runs once; under ASan on two busy cores that takes
   * a while. */
  tcase_set_timeout(full, 300);
  tcase_add_test(full, json_has_exactly_every_metric_each_measured_or_skipped);
  suite_add_tcase(s, full);
  TCase *cli = tcase_create("cli");
  tcase_set_timeout(cli, 60);
  tcase_add_test(cli, only_reports_the_metrics_it_names);
  tcase_add_test(cli, table_names_each_metric_with_its_target);
  tcase_add_test(cli, information_metrics_have_null_target_and_pass);
  tcase_add_test(cli, unknown_metric_is_refused_by_name);
  tcase_add_test(cli, bad_repeat_count_is_refused);
  tcase_add_test(cli, repeat_sets_how_many_repetitions_are_reported);
  tcase_add_test(cli, missing_bwrap_is_reported_skipped_with_the_reason);
  suite_add_tcase(s, cli);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_ENV);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
