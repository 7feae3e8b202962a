/* sbx-bench: every metric of docs/performance.md, as a table or as one JSON
 * object (docs/design.md, contract 6).
 *
 * Why it exists: one place that runs each module's benchmark function and
 * reports its figure next to the floor it was divided by, so a reader sees
 * whether the sandbox or the machine dominates.
 *
 * What it trusts: the bench functions it lists. Each repetition of each
 * metric runs in a fresh fork of this process, so the zygote benchmarks
 * always start from a single-threaded host and the broker's threaded p99
 * benchmark leaves nothing behind. What it refuses: to print a number it
 * did not measure - a metric that cannot run here is reported skipped
 * with the reason, a failure as an error (and a non-zero exit status).
 * Missed targets are reported, never turned into a failure: benchmarks
 * report, tests assert.
 */
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>
#include <json-glib/json-glib.h>

#include "tools/sbx-bench/broker_bench.h"
#include "tools/sbx-bench/broker_load_bench.h"
#include "tools/sbx-bench/measure.h"
#include "sandbox/base/syscalls.h"
#include "tools/sbx-bench/policy_bench.h"
#include "tools/sbx-bench/worker_bench.h"
#include "tools/sbx-bench/run_bench.h"
#include "sbx/sbx.h"

#define DEFAULT_REPEAT 3
#define MAX_REPEAT 100

typedef gboolean (*bench_fn)(double *value, double *floor, GError **error);

typedef enum {
  RATIO_OVER_FLOOR,     /* ratio = value / floor measured in the same run */
  RATIO_OVER_TARGET,    /* no floor: ratio = value / target, passes at <= 1 */
  RATIO_OVER_LOG2,      /* floor = log2(rule count); no numeric target */
  RATIO_AT_LEAST,       /* no floor: ratio = value / target, passes at >= 1 */
  RATIO_FLOOR_AT_LEAST, /* ratio = value / floor, passes at >= target */
  RATIO_FLOOR_INFO,     /* ratio = value / floor, no target */
} ratio_kind;

/* No target to pass or miss: reported for information. */
static gboolean is_info(ratio_kind kind) {
  return kind == RATIO_OVER_LOG2 || kind == RATIO_FLOOR_INFO;
}

typedef struct {
  const char *key;
  const char *unit;
  const char *floor_unit;
  ratio_kind kind;
  double target; /* RATIO_OVER_FLOOR: the ratio's; OVER_TARGET: value's */
  bench_fn run;
  char *(*describe)(void); /* optional detail, computed in the same child */
} metric;

static char *describe_longest_path(void);

/* In the order of docs/performance.md. */
static const metric kMetrics[] = {
    {"syscall_getpid_ratio", "ns", "ns", RATIO_OVER_FLOOR, 1.10,
     sbx_bench_syscall_getpid, NULL},
    {"syscall_argcheck_ratio", "ns", "ns", RATIO_OVER_FLOOR, 1.30,
     sbx_bench_syscall_argcheck, NULL},
    {"broker_open_ratio", "us", "us", RATIO_OVER_FLOOR, 1.25,
     sbx_bench_broker_open, NULL},
    {"direct_open_ratio", "ns", "ns", RATIO_OVER_FLOOR, 2.0,
     sbx_bench_direct_open, NULL},
    {"broker_open_load_ratio", "opens/s", "opens/s", RATIO_FLOOR_AT_LEAST, 0.8,
     sbx_bench_broker_open_load, NULL},
    {"broker_open_tail_ratio", "us", "us", RATIO_OVER_FLOOR, 3,
     sbx_bench_broker_open_tail, NULL},
    {"broker_flood_victim_ratio", "us", "us", RATIO_OVER_FLOOR, 10,
     sbx_bench_broker_flood_victim, NULL},
    {"broker_open_p99_ratio", "us", "us", RATIO_FLOOR_INFO, 0,
     sbx_bench_broker_open_p99, NULL},
    {"zygote_spawn_ratio", "us", "us", RATIO_OVER_FLOOR, 1.5,
     sbx_bench_zygote_spawn, NULL},
    {"warm_spawn_ratio", "us", "us", RATIO_OVER_FLOOR, 0.2,
     sbx_bench_warm_spawn, NULL},
    {"spawn_vs_bwrap", "us", "us", RATIO_OVER_FLOOR, 0.02,
     sbx_bench_spawn_vs_bwrap, NULL},
    {"sbx_run_vs_bwrap", "us", "us", RATIO_OVER_FLOOR, 0.5,
     sbx_bench_run_vs_bwrap, NULL},
    {"sbx_run_files_vs_bwrap", "us", "us", RATIO_OVER_FLOOR, 1.15,
     sbx_bench_run_files_vs_bwrap, NULL},
    {"sbx_run_python_vs_bwrap", "us", "us", RATIO_OVER_FLOOR, 1.10,
     sbx_bench_run_python_vs_bwrap, NULL},
    {"policy_compile_us", "us", NULL, RATIO_OVER_TARGET, 500,
     sbx_bench_policy_compile, NULL},
    {"bpf_max_insns", "insns", "log2(rules)", RATIO_OVER_LOG2, 0,
     sbx_bench_bpf_max_insns, describe_longest_path},
    {"worker_private_kib", "KiB", NULL, RATIO_OVER_TARGET, 256,
     sbx_bench_worker_private_kib, NULL},
    {"max_workers", "workers", NULL, RATIO_AT_LEAST, 4096,
     sbx_bench_max_workers, NULL},
};

/* Where the renderer program's longest path goes, for the reader. */
static char *describe_longest_path(void) {
  sbx_bench_longest_path p;
  if (!sbx_bench_bpf_longest_path("renderer", &p, NULL))
    return NULL;
  const char *name = sbx_syscall_name(p.data.nr);
  GString *s = g_string_new(NULL);
  g_string_append_printf(s, "%s(", name ? name : "?");
  for (int i = 0; i < 6; i++)
    g_string_append_printf(s, "%s%#llx", i ? ", " : "",
                           (unsigned long long)p.data.args[i]);
  g_string_append_printf(s, "); %zu rules, %zu inputs tried", p.n_rules,
                         p.inputs_tried);
  return g_string_free(s, FALSE);
}

/* ---- One repetition, in a child ---------------------------------------- */

typedef enum { RUN_OK, RUN_SKIPPED, RUN_ERROR } run_status;

typedef struct {
  run_status status;
  double value;
  double floor;
  char message[512];
  char detail[256];
} run_result;

/* In the forked child. sbx-bench never starts a thread, so the child may
 * use GLib and malloc like any process; it reports through out and ends
 * with _exit, leaving the parent's stdio buffers alone. */
static void G_GNUC_NORETURN child_run(const metric *m, int out) {
  run_result r;
  memset(&r, 0, sizeof r);
  GError *error = NULL;
  if (m->run(&r.value, &r.floor, &error)) {
    r.status = RUN_OK;
    if (m->describe) {
      g_autofree char *d = m->describe();
      if (d)
        g_strlcpy(r.detail, d, sizeof r.detail);
    }
  } else {
    const char *msg = error ? error->message : "failed without a message";
    r.status = g_str_has_prefix(msg, "skipped: ") ? RUN_SKIPPED : RUN_ERROR;
    g_strlcpy(r.message,
              r.status == RUN_SKIPPED ? msg + strlen("skipped: ") : msg,
              sizeof r.message);
    g_clear_error(&error);
  }
  _exit(write(out, &r, sizeof r) == (ssize_t)sizeof r ? 0 : 1);
}

static void run_in_child(const metric *m, run_result *r) {
  memset(r, 0, sizeof *r);
  r->status = RUN_ERROR;
  int p[2];
  if (pipe(p) < 0) {
    g_snprintf(r->message, sizeof r->message, "pipe: %s", g_strerror(errno));
    return;
  }
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    g_snprintf(r->message, sizeof r->message, "fork: %s", g_strerror(errno));
    close(p[0]);
    close(p[1]);
    return;
  }
  if (pid == 0) {
    close(p[0]);
    child_run(m, p[1]);
  }
  close(p[1]);
  gboolean got = sbx_bench_read_exact(p[0], r, sizeof *r);
  close(p[0]);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  if (!got) {
    memset(r, 0, sizeof *r);
    r->status = RUN_ERROR;
    if (WIFSIGNALED(st))
      g_snprintf(r->message, sizeof r->message,
                 "the benchmark process died of signal %d (%s)", WTERMSIG(st),
                 g_strsignal(WTERMSIG(st)));
    else
      g_snprintf(r->message, sizeof r->message,
                 "the benchmark process exited %d without a result",
                 WEXITSTATUS(st));
  }
}

/* ---- Several repetitions ------------------------------------------------ */

typedef struct {
  const metric *m;
  run_status status;
  double value, floor, ratio; /* medians */
  int repetitions;
  char *message; /* skip reason or error */
  char *detail;
} outcome;

static double ratio_of(const metric *m, double value, double floor) {
  switch (m->kind) {
    case RATIO_OVER_TARGET:
    case RATIO_AT_LEAST:
      return value / m->target;
    case RATIO_OVER_FLOOR:
    case RATIO_FLOOR_AT_LEAST:
    case RATIO_FLOOR_INFO:
    case RATIO_OVER_LOG2:
    default:
      return floor > 0 ? value / floor : NAN;
  }
}

/* The ratio is the median of each repetition's own ratio: a floor is only
 * comparable with the value measured next to it. */
static void measure(const metric *m, int repeat, outcome *o) {
  memset(o, 0, sizeof *o);
  o->m = m;
  double *v = g_new(double, repeat), *f = g_new(double, repeat),
         *q = g_new(double, repeat);
  o->status = RUN_OK;
  for (int i = 0; i < repeat && o->status == RUN_OK; i++) {
    run_result r;
    run_in_child(m, &r);
    if (r.status == RUN_OK && m->kind != RATIO_OVER_TARGET &&
        m->kind != RATIO_AT_LEAST && !(r.floor > 0)) {
      r.status = RUN_ERROR;
      g_snprintf(r.message, sizeof r.message,
                 "the floor came out as %g, so there is no ratio", r.floor);
    }
    if (r.status != RUN_OK) {
      o->status = r.status;
      o->message = g_strdup(r.message);
      break;
    }
    v[i] = r.value;
    f[i] = r.floor;
    q[i] = ratio_of(m, r.value, r.floor);
    o->repetitions++;
    if (!o->detail && r.detail[0])
      o->detail = g_strdup(r.detail);
  }
  if (o->status == RUN_OK) {
    o->value = sbx_bench_median(v, (size_t)repeat);
    o->floor = sbx_bench_median(f, (size_t)repeat);
    o->ratio = sbx_bench_median(q, (size_t)repeat);
  }
  g_free(v);
  g_free(f);
  g_free(q);
}

static void outcome_clear(outcome *o) {
  g_free(o->message);
  g_free(o->detail);
}

/* TRUE: meets its target; only meaningful for metrics that have one. */
static gboolean passes(const outcome *o) {
  switch (o->m->kind) {
    case RATIO_OVER_FLOOR:
      return o->ratio <= o->m->target;
    case RATIO_FLOOR_AT_LEAST:
      return o->ratio >= o->m->target;
    case RATIO_OVER_TARGET:
      return o->ratio <= 1.0;
    case RATIO_AT_LEAST:
      return o->ratio >= 1.0;
    case RATIO_OVER_LOG2:
    default:
      return TRUE;
  }
}

static char *target_text(const metric *m) {
  switch (m->kind) {
    case RATIO_OVER_FLOOR:
      return g_strdup_printf("ratio <= %g", m->target);
    case RATIO_FLOOR_AT_LEAST:
      return g_strdup_printf("ratio >= %g", m->target);
    case RATIO_FLOOR_INFO:
      return g_strdup("none");
    case RATIO_OVER_TARGET:
      return g_strdup_printf("<= %g %s", m->target, m->unit);
    case RATIO_AT_LEAST:
      return g_strdup_printf(">= %g %s", m->target, m->unit);
    case RATIO_OVER_LOG2:
    default:
      return g_strdup("binary search");
  }
}

/* ---- Output ------------------------------------------------------------- */

static void print_json(const outcome *o, size_t n) {
  g_autoptr(JsonBuilder) b = json_builder_new();
  json_builder_begin_object(b);
  for (size_t i = 0; i < n; i++) {
    const metric *m = o[i].m;
    gboolean ok = o[i].status == RUN_OK;
    json_builder_set_member_name(b, m->key);
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "value");
    if (ok)
      json_builder_add_double_value(b, o[i].value);
    else
      json_builder_add_null_value(b);
    json_builder_set_member_name(b, "unit");
    json_builder_add_string_value(b, m->unit);
    json_builder_set_member_name(b, "ratio");
    if (ok)
      json_builder_add_double_value(b, o[i].ratio);
    else
      json_builder_add_null_value(b);
    json_builder_set_member_name(b, "floor");
    if (ok && m->floor_unit)
      json_builder_add_double_value(b, o[i].floor);
    else
      json_builder_add_null_value(b);
    json_builder_set_member_name(b, "floor_unit");
    if (m->floor_unit)
      json_builder_add_string_value(b, m->floor_unit);
    else
      json_builder_add_null_value(b);
    json_builder_set_member_name(b, "ratio_of");
    json_builder_add_string_value(
        b, m->kind == RATIO_OVER_TARGET || m->kind == RATIO_AT_LEAST ? "target"
                                                                     : "floor");
    json_builder_set_member_name(b, "target");
    if (is_info(m->kind))
      json_builder_add_null_value(b);
    else
      json_builder_add_double_value(b, m->target);
    json_builder_set_member_name(b, "pass");
    if (ok && !is_info(m->kind))
      json_builder_add_boolean_value(b, passes(&o[i]));
    else
      json_builder_add_null_value(b);
    json_builder_set_member_name(b, "repetitions");
    json_builder_add_int_value(b, o[i].repetitions);
    if (o[i].status == RUN_SKIPPED) {
      json_builder_set_member_name(b, "skipped");
      json_builder_add_string_value(b, o[i].message);
    } else if (o[i].status == RUN_ERROR) {
      json_builder_set_member_name(b, "error");
      json_builder_add_string_value(b, o[i].message);
    }
    if (o[i].detail) {
      json_builder_set_member_name(b, "detail");
      json_builder_add_string_value(b, o[i].detail);
    }
    json_builder_end_object(b);
  }
  json_builder_end_object(b);
  g_autoptr(JsonNode) root = json_builder_get_root(b);
  g_autoptr(JsonGenerator) gen = json_generator_new();
  json_generator_set_pretty(gen, TRUE);
  json_generator_set_root(gen, root);
  g_autofree char *text = json_generator_to_data(gen, NULL);
  printf("%s\n", text);
}

static char *with_unit(double v, const char *unit) {
  return g_strdup_printf("%.*f %s", fabs(v) >= 100 ? 0 : 2, v, unit);
}

static void print_table(const outcome *o, size_t n) {
  printf("%-24s %14s %18s %8s %-16s %s\n", "metric", "value", "floor", "ratio",
         "target", "");
  for (size_t i = 0; i < n; i++) {
    const metric *m = o[i].m;
    g_autofree char *target = target_text(m);
    if (o[i].status != RUN_OK) {
      printf("%-24s %14s %18s %8s %-16s %s: %s\n", m->key, "-", "-", "-",
             target, o[i].status == RUN_SKIPPED ? "skip" : "ERROR",
             o[i].message);
      continue;
    }
    g_autofree char *value = with_unit(o[i].value, m->unit);
    g_autofree char *floor =
        m->floor_unit ? with_unit(o[i].floor, m->floor_unit) : g_strdup("-");
    const char *mark = is_info(m->kind) ? "info"
                       : passes(&o[i])  ? "pass"
                                        : "MISS";
    printf("%-24s %14s %18s %8.3f %-16s %s", m->key, value, floor, o[i].ratio,
           target, mark);
    if (o[i].detail)
      printf("  (%s)", o[i].detail);
    printf("\n");
  }
  printf(
      "ratio: median over %d repetition(s) of value / floor measured in "
      "the same run; without a floor, value / target.\n",
      n ? o[0].repetitions : 0);
}

/* ---- main --------------------------------------------------------------- */

static const metric *find_metric(const char *key) {
  for (size_t i = 0; i < G_N_ELEMENTS(kMetrics); i++)
    if (strcmp(kMetrics[i].key, key) == 0)
      return &kMetrics[i];
  return NULL;
}

/* The metrics --only names, in table order; NULL with *error set when one
 * is unknown. */
static GPtrArray *select_metrics(const char *only, GError **error) {
  GPtrArray *out = g_ptr_array_new();
  if (!only) {
    for (size_t i = 0; i < G_N_ELEMENTS(kMetrics); i++)
      g_ptr_array_add(out, (gpointer)&kMetrics[i]);
    return out;
  }
  g_auto(GStrv) keys = g_strsplit(only, ",", -1);
  for (char **k = keys; *k; k++) {
    g_strstrip(*k);
    if (!**k)
      continue;
    if (!find_metric(*k)) {
      GString *known = g_string_new(NULL);
      for (size_t i = 0; i < G_N_ELEMENTS(kMetrics); i++)
        g_string_append_printf(known, "%s%s", i ? ", " : "", kMetrics[i].key);
      g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                  "--only: unknown metric \"%s\" (known: %s)", *k, known->str);
      g_string_free(known, TRUE);
      g_ptr_array_unref(out);
      return NULL;
    }
  }
  for (size_t i = 0; i < G_N_ELEMENTS(kMetrics); i++)
    if (g_strv_contains((const char *const *)keys, kMetrics[i].key))
      g_ptr_array_add(out, (gpointer)&kMetrics[i]);
  if (out->len == 0) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "--only: no metric named");
    g_ptr_array_unref(out);
    return NULL;
  }
  return out;
}

int main(int argc, char **argv) {
  /* In the zygote (a fresh exec of this program) it never returns. */
  sbx_main_hook(argc, argv);
  setlocale(LC_ALL, "C");
  gboolean json = FALSE, quick = FALSE;
  char *only = NULL;
  int repeat = 0;
  GOptionEntry entries[] = {
      {"json", 0, 0, G_OPTION_ARG_NONE, &json,
       "Print one JSON object keyed by metric", NULL},
      {"only", 0, 0, G_OPTION_ARG_STRING, &only,
       "Run only these metrics (comma-separated keys)", "KEY[,KEY]"},
      {"repeat", 0, 0, G_OPTION_ARG_INT, &repeat,
       "Repetitions per metric, reported as the median (default 3)", "N"},
      {"quick", 0, 0, G_OPTION_ARG_NONE, &quick,
       "One repetition per metric (for tests)", NULL},
      {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  g_autoptr(GOptionContext) ctx =
      g_option_context_new("- measure every metric of docs/performance.md");
  g_option_context_add_main_entries(ctx, entries, NULL);
  GError *error = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &error)) {
    fprintf(stderr, "sbx-bench: %s\n", error->message);
    g_error_free(error);
    return 2;
  }
  if (argc > 1) {
    fprintf(stderr, "sbx-bench: unexpected argument \"%s\"\n", argv[1]);
    return 2;
  }
  if (repeat < 0 || repeat > MAX_REPEAT) {
    fprintf(stderr, "sbx-bench: --repeat %d: must be 1..%d\n", repeat,
            MAX_REPEAT);
    return 2;
  }
  if (repeat == 0)
    repeat = quick ? 1 : DEFAULT_REPEAT;
  GPtrArray *selected = select_metrics(only, &error);
  g_free(only);
  if (!selected) {
    fprintf(stderr, "sbx-bench: %s\n", error->message);
    g_error_free(error);
    return 2;
  }
  size_t n = selected->len;
  outcome *o = g_new0(outcome, n);
  int errors = 0;
  for (size_t i = 0; i < n; i++) {
    measure(g_ptr_array_index(selected, i), repeat, &o[i]);
    errors += o[i].status == RUN_ERROR;
  }
  if (json)
    print_json(o, n);
  else
    print_table(o, n);
  for (size_t i = 0; i < n; i++)
    outcome_clear(&o[i]);
  g_free(o);
  g_ptr_array_unref(selected);
  return errors ? 1 : 0;
}
