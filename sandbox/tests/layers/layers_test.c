/* The layers engine in forked children: a plan installs exactly the steps
 * it names, in the documented order (sandbox/layers/apply.h), a failing
 * step is reported as that step, and each flag changes only what it says.
 * What the child became is read from /proc/self/status through a
 * descriptor opened before the plan was applied (Landlock refuses a new
 * open afterwards), and from the kernel's own refusals.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/layers/apply.h"
#include "sandbox/layers/plan.h"
#include "sandbox/policy/compiler.h"
#include "sandbox/policy/parser.h"

static const char kAllowAll[] = "@default allow\n";

static sbx_bpf_program compile_text(const char *text) {
  GError *error = NULL;
  sbx_policy *p = sbx_policy_parse_string(text, "test", NULL, &error);
  ck_assert_msg(p, "%s", error ? error->message : "");
  sbx_bpf_program prog = {0};
  ck_assert_msg(sbx_bpf_compile(p, &prog, &error), "%s",
                error ? error->message : "");
  sbx_policy_free(p);
  return prog;
}

static void add_filter(sbx_layer_plan *plan, const char *name,
                       const char *text) {
  sbx_bpf_program prog = compile_text(text);
  GError *error = NULL;
  ck_assert_msg(sbx_layer_plan_add_filter(plan, name, &prog, &error), "%s",
                error ? error->message : "");
  sbx_bpf_program_clear(&prog);
}

static bool add_landlock(sbx_layer_plan *plan) {
  GError *error = NULL;
  ck_assert_msg(sbx_layer_plan_set_landlock(plan, sbx_landlock_builder_new(),
                                            SBX_LANDLOCK_OPTIONAL, 0, &error),
                "%s", error ? error->message : "");
  return plan->landlock_fd >= 0;
}

/* ---- the child ---------------------------------------------------------- */

/* What a check in the child may look at. */
typedef struct {
  int status_fd; /* /proc/self/status, opened before the plan */
  int stray_fd;  /* open before the plan, not in the keep list */
  const sbx_layer_plan *plan;
  const sbx_layer_result *result;
} child_view;

typedef int (*child_check)(const child_view *v);

typedef struct {
  sbx_layer_result result;
  int check; /* the check's return value: 0 when every probe held */
} child_report;

static long status_field(int fd, const char *key) {
  char buf[4096];
  ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0)
    return -1;
  buf[n] = '\0';
  size_t klen = strlen(key);
  for (char *line = buf; line && *line; line = strchr(line, '\n')) {
    if (*line == '\n')
      line++;
    if (strncmp(line, key, klen) == 0 && line[klen] == ':')
      return strtol(line + klen + 1, NULL, strncmp(key, "Cap", 3) ? 10 : 16);
  }
  return -1;
}

/* Applies plan in a forked child, runs check there after a successful
 * apply, and reports both. status_target: where the status descriptor is
 * kept (SBX_FD_SAME: where it is). */
static child_report in_child(sbx_layer_plan *plan, int status_target,
                             child_check check) {
  int p[2];
  ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    close(p[0]);
    child_view v = {.plan = plan};
    v.status_fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    v.stray_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    sbx_fd_keep keep[] = {
        {0, SBX_FD_SAME, false},
        {1, SBX_FD_SAME, false},
        {2, SBX_FD_SAME, false},
        {p[1], SBX_FD_SAME, true},
        {v.status_fd, status_target, true},
    };
    sbx_layer_process process = {
        .keep = keep,
        .n_keep = G_N_ELEMENTS(keep),
        .expected_ppid = getppid(),
        .parent_pidfd = -1,
    };
    child_report r = {.check = -1};
    int rc = sbx_layer_apply_raw(plan, &process, &r.result);
    int out = keep[3].fd;
    v.status_fd = keep[4].fd;
    v.result = &r.result;
    if (rc == 0)
      r.check = check ? check(&v) : 0;
    if (write(out, &r, sizeof r) != (ssize_t)sizeof r)
      _exit(2);
    _exit(0);
  }
  close(p[1]);
  child_report r;
  memset(&r, 0, sizeof r);
  ck_assert_int_eq(read(p[0], &r, sizeof r), (ssize_t)sizeof r);
  close(p[0]);
  int st;
  ck_assert_int_eq(waitpid(pid, &st, 0), pid);
  ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status 0x%x", st);
  return r;
}

/* ---- every step, in order ------------------------------------------------ */

/* Whether the parent's plan has a ruleset (the kernel has Landlock). */
static bool g_landlock;

static bool open_is_refused(void) {
  int fd = open("/etc/passwd", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    close(fd);
    return false;
  }
  return errno == EACCES;
}

/* Each probe returns its own number when it fails. */
static int check_every_step(const child_view *v) {
  if (status_field(v->status_fd, "NoNewPrivs") != 1)
    return 1;
  if (status_field(v->status_fd, "Seccomp") != 2)
    return 2;
  if (status_field(v->status_fd, "Seccomp_filters") != 2)
    return 3;
  if (status_field(v->status_fd, "CapEff") != 0 ||
      status_field(v->status_fd, "CapPrm") != 0)
    return 4;
  if (geteuid() == 0 && status_field(v->status_fd, "CapBnd") != 0)
    return 5;
  if (getsid(0) != getpid())
    return 6;
  if (prctl(PR_GET_DUMPABLE) != 0)
    return 7;
  struct rlimit lim;
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur != 20)
    return 8;
  /* The status descriptor sits at 40, above the limit: the descriptors
   * were laid out before the limit went on. */
  if (fcntl(v->stray_fd, F_GETFD) != -1 || v->status_fd != 40)
    return 9;
  if (g_landlock && !open_is_refused())
    return 10;
  return 0;
}

START_TEST(a_plan_installs_every_step_it_names) {
  sbx_layer_plan plan;
  sbx_layer_plan_init(&plan, "test", 0);
  sbx_rlimit nofile = {RLIMIT_NOFILE, 20, 20};
  ck_assert(sbx_layer_plan_add_rlimits(&plan, &nofile, 1, NULL));
  add_filter(&plan, "one", kAllowAll);
  add_filter(&plan, "two", kAllowAll);
  g_landlock = add_landlock(&plan);
  child_report r = in_child(&plan, 40, check_every_step);
  ck_assert_int_eq(r.result.step, SBX_LAYER_STEP_NONE);
  ck_assert_int_eq(r.check, 0);
  sbx_layer_plan_clear(&plan);
}
END_TEST

/* Credentials go on before the filters, which may refuse every call that
 * changes them; Landlock goes on after them, under them. */
START_TEST(credentials_precede_the_filters_and_landlock_follows_them) {
  sbx_layer_plan plan;
  sbx_layer_plan_init(&plan, "test", 0);
  sbx_rlimit core = {RLIMIT_CORE, 0, 0};
  ck_assert(sbx_layer_plan_add_rlimits(&plan, &core, 1, NULL));
  add_filter(&plan, "no-credentials",
             "setsid: return EPERM\nprctl: return EPERM\n"
             "capset: return EPERM\nprlimit64: return EPERM\n"
             "setrlimit: return EPERM\n@default allow\n");
  child_report r = in_child(&plan, SBX_FD_SAME, NULL);
  ck_assert_int_eq(r.result.step, SBX_LAYER_STEP_NONE);
  sbx_layer_plan_clear(&plan);

  sbx_layer_plan_init(&plan, "test", 0);
  add_filter(&plan, "no-landlock",
             "landlock_restrict_self: return EPERM\n@default allow\n");
  if (!add_landlock(&plan)) {
    sbx_layer_plan_clear(&plan);
    return; /* no Landlock in this kernel: nothing to order */
  }
  r = in_child(&plan, SBX_FD_SAME, NULL);
  ck_assert_int_eq(r.result.step, SBX_LAYER_STEP_LANDLOCK);
  ck_assert_int_eq(r.result.error, EPERM);
  sbx_layer_plan_clear(&plan);
}
END_TEST

/* ---- failures ------------------------------------------------------------ */

START_TEST(a_failing_step_is_reported_as_that_step) {
  /* The kernel refuses a jump past the program's end. */
  struct sock_filter bad[] = {
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 5, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sbx_bpf_program invalid = {.insns = bad, .len = G_N_ELEMENTS(bad)};
  sbx_layer_plan plan;
  sbx_layer_plan_init(&plan, "test", 0);
  add_filter(&plan, "good", kAllowAll);
  ck_assert(sbx_layer_plan_add_filter(&plan, "bad", &invalid, NULL));
  child_report r = in_child(&plan, SBX_FD_SAME, NULL);
  ck_assert_int_eq(r.result.step, SBX_LAYER_STEP_SECCOMP);
  ck_assert_int_eq(r.result.detail, 1);
  ck_assert_int_eq(r.result.error, EINVAL);
  g_autofree char *what = sbx_layer_result_describe(&plan, &r.result);
  ck_assert_msg(strstr(what, "seccomp filter 1 (bad)"), "%s", what);
  sbx_layer_plan_clear(&plan);

  /* A resource the kernel does not know. */
  sbx_layer_plan_init(&plan, "test", 0);
  sbx_rlimit limits[] = {{RLIMIT_CORE, 0, 0}, {99, 1, 1}};
  ck_assert(sbx_layer_plan_add_rlimits(&plan, limits, 2, NULL));
  add_filter(&plan, "never", kAllowAll);
  r = in_child(&plan, SBX_FD_SAME, NULL);
  ck_assert_int_eq(r.result.step, SBX_LAYER_STEP_RLIMITS);
  ck_assert_int_eq(r.result.detail, 1);
  ck_assert_int_eq(r.result.error, EINVAL);
  sbx_layer_plan_clear(&plan);
}
END_TEST

/* ---- flags --------------------------------------------------------------- */

static int check_kept_session_only(const child_view *v) {
  if (getsid(0) == getpid())
    return 1;
  if (status_field(v->status_fd, "NoNewPrivs") != 1 ||
      prctl(PR_GET_DUMPABLE) != 0 || status_field(v->status_fd, "Seccomp") != 2)
    return 2;
  if (fcntl(v->stray_fd, F_GETFD) != -1)
    return 3; /* descriptors were still laid out */
  return 0;
}

static int check_kept_descriptors(const child_view *v) {
  if (fcntl(v->stray_fd, F_GETFD) == -1)
    return 1;
  if (getsid(0) != getpid() || status_field(v->status_fd, "NoNewPrivs") != 1)
    return 2;
  return 0;
}

static int check_filters_only(const child_view *v) {
  struct rlimit lim;
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur == 20)
    return 1;
  if (getsid(0) == getpid() || prctl(PR_GET_DUMPABLE) != 1)
    return 2;
  if (fcntl(v->stray_fd, F_GETFD) == -1)
    return 3;
  if (status_field(v->status_fd, "Seccomp_filters") != 1)
    return 4;
  if (g_landlock && open_is_refused())
    return 5;
  return 0;
}

static int check_listener(const child_view *v) {
  return v->result->listener_fd >= 0 ? 0 : 1;
}

static int check_no_listener(const child_view *v) {
  return v->result->listener_fd == -1 ? 0 : 1;
}

static int check_capabilities_kept(const child_view *v) {
  long held = status_field(v->status_fd, "CapEff");
  return (geteuid() == 0 ? held != 0 : held == 0) ? 0 : 1;
}

static void run_flag(unsigned flags, bool landlock, child_check check) {
  sbx_layer_plan plan;
  sbx_layer_plan_init(&plan, "test", flags);
  sbx_rlimit nofile = {RLIMIT_NOFILE, 20, 20};
  ck_assert(sbx_layer_plan_add_rlimits(&plan, &nofile, 1, NULL));
  add_filter(&plan, "allow", kAllowAll);
  g_landlock = landlock && add_landlock(&plan);
  child_report r = in_child(&plan, SBX_FD_SAME, check);
  ck_assert_msg(r.result.step == SBX_LAYER_STEP_NONE, "step %s: %s",
                sbx_layer_step_name(r.result.step), g_strerror(r.result.error));
  ck_assert_msg(r.check == 0, "flags 0x%x: probe %d failed", flags, r.check);
  sbx_layer_plan_clear(&plan);
}

START_TEST(each_flag_changes_only_what_it_says) {
  run_flag(SBX_LAYERS_KEEP_SESSION, false, check_kept_session_only);
  run_flag(SBX_LAYERS_KEEP_DESCRIPTORS, false, check_kept_descriptors);
  run_flag(SBX_LAYERS_FILTERS_ONLY, true, check_filters_only);
  run_flag(SBX_LAYERS_LISTENER, false, check_listener);
  run_flag(0, false, check_no_listener);
  run_flag(SBX_LAYERS_KEEP_CAPABILITIES, false, check_capabilities_kept);
}
END_TEST

/* The parent's death is checked unless the plan outlives it. */
static int check_nothing(const child_view *v) {
  (void)v;
  return 0;
}

START_TEST(a_process_dies_with_its_parent_unless_it_outlives_it) {
  sbx_layer_plan plan;
  sbx_layer_plan_init(&plan, "test", 0);
  sbx_layer_process process = {.expected_ppid = 1, .parent_pidfd = -1};
  sbx_layer_result result;
  pid_t pid = fork();
  if (pid == 0) {
    /* Expecting pid 1 as the parent, which it is not. */
    int rc = sbx_layer_apply_raw(&plan, &process, &result);
    _exit(rc == -ESRCH && result.step == SBX_LAYER_STEP_PARENT_DEATH ? 0 : 1);
  }
  int st;
  ck_assert_int_eq(waitpid(pid, &st, 0), pid);
  ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  sbx_layer_plan_clear(&plan);
  run_flag(SBX_LAYERS_OUTLIVE_PARENT, false, check_nothing);
}
END_TEST

/* TSYNC: a thread that runs before the plan gets the filters too. */
static int g_pipe[2];
static pid_t g_tid;

static void *idle_thread(void *arg) {
  (void)arg;
  g_tid = (pid_t)syscall(SYS_gettid);
  char c;
  if (read(g_pipe[0], &c, 1) < 0)
    return NULL;
  return NULL;
}

static int tsync_child(unsigned flags) {
  if (pipe(g_pipe) != 0)
    return 20;
  pthread_t t;
  if (pthread_create(&t, NULL, idle_thread, NULL) != 0)
    return 21;
  while (__atomic_load_n(&g_tid, __ATOMIC_SEQ_CST) == 0)
    usleep(1000);
  char path[64];
  snprintf(path, sizeof path, "/proc/self/task/%d/status", (int)g_tid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  sbx_layer_plan plan;
  sbx_layer_plan_init(&plan, "test",
                      flags | SBX_LAYERS_KEEP_DESCRIPTORS |
                          SBX_LAYERS_KEEP_SESSION | SBX_LAYERS_OUTLIVE_PARENT);
  sbx_bpf_program prog = compile_text(kAllowAll);
  if (!sbx_layer_plan_add_filter(&plan, "allow", &prog, NULL))
    return 22;
  sbx_layer_process process = {.parent_pidfd = -1};
  sbx_layer_result result;
  if (sbx_layer_apply_raw(&plan, &process, &result) != 0)
    return 23;
  return (int)status_field(fd, "Seccomp");
}

START_TEST(tsync_puts_the_filters_on_threads_that_already_run) {
  unsigned flags[] = {SBX_LAYERS_TSYNC, 0};
  int expected[] = {2, 0};
  for (size_t i = 0; i < G_N_ELEMENTS(flags); i++) {
    pid_t pid = fork();
    if (pid == 0)
      _exit(tsync_child(flags[i]));
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == expected[i],
                  "flags 0x%x: status 0x%x", flags[i], st);
  }
}
END_TEST

/* ---- the own pid -----------------------------------------------------------
 */

static int check_kill_self_only(const child_view *v) {
  (void)v;
  if (kill(getpid(), 0) != 0)
    return 1;
  if (kill(getppid(), 0) != -1 || errno != EPERM)
    return 2;
  return 0;
}

static int check_literal_unpatched(const child_view *v) {
  if (kill(getpid(), 0) != -1 || errno != EPERM)
    return 1;
  const sbx_bpf_program *p = &v->plan->filters[0].program;
  size_t holding = 0;
  for (size_t i = 0; i < p->len; i++)
    holding += p->insns[i].k == SBX_BPF_SELF_PID_UNPATCHED;
  return holding == 1 ? 0 : 2;
}

START_TEST(the_own_pid_is_patched_at_its_relocations_and_nowhere_else) {
  sbx_layer_plan plan;
  sbx_layer_plan_init(&plan, "test", 0);
  add_filter(&plan, "self",
             "kill: arg0 == SBX_SELF_PID; return EPERM\n@default allow\n");
  child_report r = in_child(&plan, SBX_FD_SAME, check_kill_self_only);
  ck_assert_int_eq(r.result.step, SBX_LAYER_STEP_NONE);
  ck_assert_int_eq(r.check, 0);
  /* The parent's plan is untouched: each child patches its own copy. */
  const sbx_bpf_program *p = &plan.filters[0].program;
  ck_assert_uint_eq(p->insns[p->self_pid_relocs[0]].k,
                    SBX_BPF_SELF_PID_UNPATCHED);
  sbx_layer_plan_clear(&plan);

  sbx_layer_plan_init(&plan, "test", 0);
  add_filter(&plan, "literal",
             "kill: arg0 == 0x7fff5e1f; return EPERM\n@default allow\n");
  r = in_child(&plan, SBX_FD_SAME, check_literal_unpatched);
  ck_assert_int_eq(r.result.step, SBX_LAYER_STEP_NONE);
  ck_assert_int_eq(r.check, 0);
  sbx_layer_plan_clear(&plan);
}
END_TEST

START_TEST(a_relocation_that_does_not_fit_its_program_is_refused) {
  sbx_bpf_program prog = compile_text(kAllowAll);
  uint32_t reloc = 0; /* the architecture load, not a jump */
  prog.self_pid_relocs = g_memdup2(&reloc, sizeof reloc);
  prog.n_self_pid_relocs = 1;
  sbx_layer_plan plan;
  sbx_layer_plan_init(&plan, "test", 0);
  GError *error = NULL;
  ck_assert(!sbx_layer_plan_add_filter(&plan, "broken", &prog, &error));
  ck_assert_int_eq(error->code, SBX_LAYERS_ERROR_INVALID);
  ck_assert_msg(strstr(error->message, "relocation"), "%s", error->message);
  g_error_free(error);
  sbx_bpf_program_clear(&prog);
  sbx_layer_plan_clear(&plan);
}
END_TEST

static Suite *layers_suite(void) {
  Suite *s = suite_create("layers");
  TCase *tc = tcase_create("apply");
  tcase_set_timeout(tc, 30);
  tcase_add_test(tc, a_plan_installs_every_step_it_names);
  tcase_add_test(tc, credentials_precede_the_filters_and_landlock_follows_them);
  tcase_add_test(tc, a_failing_step_is_reported_as_that_step);
  tcase_add_test(tc, each_flag_changes_only_what_it_says);
  tcase_add_test(tc, a_process_dies_with_its_parent_unless_it_outlives_it);
  tcase_add_test(tc, tsync_puts_the_filters_on_threads_that_already_run);
  tcase_add_test(tc,
                 the_own_pid_is_patched_at_its_relocations_and_nowhere_else);
  tcase_add_test(tc, a_relocation_that_does_not_fit_its_program_is_refused);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(layers_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
