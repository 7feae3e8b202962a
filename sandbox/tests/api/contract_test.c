/* The contract every public function keeps whatever it is given: a NULL
 * where it needs a pointer is an SBX_ERROR_INVALID error (or the -1, 0 or
 * NULL it documents), never a crash; a struct's size decides how much of
 * it is read or filled (sbx.h, "Structs that grow"): 0, below the first
 * published version or over the maximum is refused and the message names
 * the init macro; a longer struct from a newer sbx.h is served when the
 * fields this library does not know are zero and refused when one is set;
 * a struct the library fills is filled only up to the caller's size. Also
 * the status formatter and the built-in texts on their own. */
#include <check.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>

#include "sandbox/tests/api/api_test_util.h"
#include "sbx/sbx.h"

#define SENTINEL 0x5eb7c0ffee15900dull

/* Reports, as its exit code, whether it got the arguments of this
 * library's size: 10 when it did, 20 when not. */
static int entry_check_args(const sbx_worker_args *args) {
  return args->size == sizeof *args &&
                 SBX_HAS_FIELD(sbx_worker_args, args, status)
             ? 10
             : 20;
}

static sbx_sandbox *start_one(void) {
  sbx_process_type t =
      SBX_PROCESS_TYPE_INIT(.name = "renderer", .entry = entry_check_args);
  sbx_sandbox_config c = SBX_SANDBOX_CONFIG_INIT(.types = &t, .n_types = 1);
  sbx_sandbox *s = NULL;
  GError *error = NULL;
  if (!sbx_sandbox_start(&c, &s, &error))
    ck_abort_msg("sbx_sandbox_start: %s", error->message);
  return s;
}

/* error is INVALID and its message names what. Frees it. */
static void assert_invalid(GError *error, const char *what) {
  api_assert_error(error, SBX_ERROR, SBX_ERROR_INVALID);
  ck_assert_msg(strstr(error->message, what), "\"%s\" does not name %s",
                error->message, what);
  g_error_free(error);
}

static pid_t spawn_ok(sbx_sandbox *s, const sbx_spawn_config *spawn) {
  pid_t pid = -1;
  GError *error = NULL;
  if (!sbx_sandbox_spawn(s, spawn, &pid, &error))
    ck_abort_msg("sbx_sandbox_spawn: %s", error->message);
  return pid;
}

static void assert_exit_code(sbx_sandbox *s, pid_t pid, int code) {
  sbx_worker_exit e = SBX_WORKER_EXIT_INIT();
  GError *error = NULL;
  if (!sbx_sandbox_wait(s, pid, 20000, &e, &error))
    ck_abort_msg("sbx_sandbox_wait: %s", error->message);
  ck_assert_msg(e.reason == SBX_EXIT_NORMAL && e.exit_code == code, "%s",
                e.detail);
}

/* ---- NULL ------------------------------------------------------------- */

START_TEST(null_arguments_are_refused_without_a_crash) {
  GError *error = NULL;
  sbx_sandbox *s = NULL;
  sbx_process_type t =
      SBX_PROCESS_TYPE_INIT(.name = "renderer", .entry = entry_check_args);
  sbx_sandbox_config c = SBX_SANDBOX_CONFIG_INIT(.types = &t, .n_types = 1);
  ck_assert(!sbx_sandbox_start(NULL, &s, &error));
  ck_assert_ptr_null(s);
  assert_invalid(error, "config is NULL");
  error = NULL;
  ck_assert(!sbx_sandbox_start(&c, NULL, &error));
  assert_invalid(error, "out is NULL");
  error = NULL;
  c.types = NULL;
  ck_assert(!sbx_sandbox_start(&c, &s, &error));
  assert_invalid(error, "no process types");

  sbx_spawn_config spawn = SBX_SPAWN_CONFIG_INIT(.process_type = "renderer");
  pid_t pid = 1;
  error = NULL;
  ck_assert(!sbx_sandbox_spawn(NULL, &spawn, &pid, &error));
  ck_assert_int_eq(pid, -1);
  assert_invalid(error, "sandbox is NULL");

  sbx_worker_exit e = SBX_WORKER_EXIT_INIT(.pid = 99);
  error = NULL;
  ck_assert(!sbx_sandbox_wait(NULL, -1, 0, &e, &error));
  assert_invalid(error, "sandbox is NULL");
  ck_assert_int_eq(e.pid, 0); /* filled with zeros on failure */

  ck_assert_int_eq(sbx_sandbox_event_fd(NULL), -1);
  ck_assert_int_eq(sbx_sandbox_zygote_pid(NULL), -1);
  ck_assert_int_eq(sbx_sandbox_broker_pid(NULL), -1);
  sbx_sandbox_stop(NULL);

  error = NULL;
  ck_assert(!sbx_sandbox_enter_self(NULL, NULL, &error));
  assert_invalid(error, "config is NULL");
  sbx_self_config self = SBX_SELF_CONFIG_INIT(.profile = NULL);
  error = NULL;
  ck_assert(!sbx_sandbox_enter_self(&self, NULL, &error));
  assert_invalid(error, "no profile");

  char buf[8] = "garbage";
  ck_assert_uint_eq(sbx_sandbox_status_format(NULL, buf, sizeof buf), 0);
  ck_assert_str_eq(buf, "");
  ck_assert_ptr_null(sbx_builtin_text(NULL));
  /* Every call above failed without a crash and without passing GError. */
  ck_assert(!sbx_sandbox_start(NULL, NULL, NULL));
  ck_assert(!sbx_sandbox_spawn(NULL, NULL, NULL, NULL));
  ck_assert(!sbx_sandbox_wait(NULL, -1, 0, NULL, NULL));
  ck_assert(!sbx_sandbox_enter_self(NULL, NULL, NULL));
}
END_TEST

START_TEST(null_arguments_to_a_running_sandbox_are_refused) {
  sbx_sandbox *s = start_one();
  GError *error = NULL;
  pid_t pid = 1;
  ck_assert(!sbx_sandbox_spawn(s, NULL, &pid, &error));
  ck_assert_int_eq(pid, -1);
  assert_invalid(error, "spawn is NULL");
  sbx_spawn_config spawn = SBX_SPAWN_CONFIG_INIT(.process_type = "renderer");
  error = NULL;
  ck_assert(!sbx_sandbox_spawn(s, &spawn, NULL, &error));
  assert_invalid(error, "pid is NULL");
  spawn.process_type = NULL;
  error = NULL;
  ck_assert(!sbx_sandbox_spawn(s, &spawn, &pid, &error));
  assert_invalid(error, "no process type");
  spawn = (sbx_spawn_config)SBX_SPAWN_CONFIG_INIT(.process_type = "renderer",
                                                  .n_fds = 3);
  error = NULL;
  ck_assert(!sbx_sandbox_spawn(s, &spawn, &pid, &error));
  assert_invalid(error, "fds is NULL");
  spawn = (sbx_spawn_config)SBX_SPAWN_CONFIG_INIT(.process_type = "renderer",
                                                  .payload_len = 4);
  error = NULL;
  ck_assert(!sbx_sandbox_spawn(s, &spawn, &pid, &error));
  assert_invalid(error, "payload is NULL");
  error = NULL;
  ck_assert(!sbx_sandbox_wait(s, -1, 0, NULL, &error));
  assert_invalid(error, "exit is NULL");
  /* Control: the same sandbox serves a correct spawn. */
  spawn = (sbx_spawn_config)SBX_SPAWN_CONFIG_INIT(.process_type = "renderer");
  assert_exit_code(s, spawn_ok(s, &spawn), 10);
  sbx_sandbox_stop(s);
}
END_TEST

/* Each pointer a call takes, and each pointer field of the structs it
 * reads, NULL on its own while everything else is valid: refused with
 * SBX_ERROR_INVALID naming it, or the documented default. Every call is
 * also made with a NULL GError **, which must not matter. */
START_TEST(each_pointer_argument_null_on_its_own_is_refused_or_defaulted) {
  GError *error = NULL;
  sbx_sandbox *s = NULL;
  sbx_process_type t =
      SBX_PROCESS_TYPE_INIT(.name = NULL, .entry = entry_check_args);
  sbx_sandbox_config c = SBX_SANDBOX_CONFIG_INIT(.types = &t, .n_types = 1);
  ck_assert(!sbx_sandbox_start(&c, &s, &error));
  ck_assert_ptr_null(s);
  assert_invalid(error, "name of 1 to");
  ck_assert(!sbx_sandbox_start(&c, &s, NULL));
  t = (sbx_process_type)SBX_PROCESS_TYPE_INIT(.name = "renderer");
  error = NULL;
  ck_assert(!sbx_sandbox_start(&c, &s, &error));
  assert_invalid(error, "no entry function");
  ck_assert(!sbx_sandbox_start(&c, &s, NULL));
  ck_assert(!sbx_sandbox_start(&c, NULL, NULL));
  ck_assert(!sbx_sandbox_start(NULL, &s, NULL));
  ck_assert_ptr_null(s);

  /* Control, and the pointers whose NULL is a default: profile (the
   * name), extra_rules, user_data, profile_dir, audit_log (stderr). */
  t = (sbx_process_type)SBX_PROCESS_TYPE_INIT(.name = "renderer",
                                              .entry = entry_check_args,
                                              .profile = NULL,
                                              .extra_rules = NULL,
                                              .user_data = NULL);
  c = (sbx_sandbox_config)SBX_SANDBOX_CONFIG_INIT(.types = &t, .n_types = 1,
                                                  .profile_dir = NULL,
                                                  .audit_log = NULL);
  ck_assert(sbx_sandbox_start(&c, &s, NULL));

  pid_t pid = 1;
  sbx_spawn_config spawn = SBX_SPAWN_CONFIG_INIT(.process_type = "renderer");
  ck_assert(!sbx_sandbox_spawn(NULL, &spawn, &pid, NULL));
  ck_assert_int_eq(pid, -1);
  ck_assert(!sbx_sandbox_spawn(s, NULL, &pid, NULL));
  ck_assert(!sbx_sandbox_spawn(s, &spawn, NULL, NULL));
  spawn.process_type = NULL;
  ck_assert(!sbx_sandbox_spawn(s, &spawn, &pid, NULL));
  spawn = (sbx_spawn_config)SBX_SPAWN_CONFIG_INIT(.process_type = "renderer",
                                                  .payload_len = 1);
  ck_assert(!sbx_sandbox_spawn(s, &spawn, &pid, NULL));
  spawn = (sbx_spawn_config)SBX_SPAWN_CONFIG_INIT(.process_type = "renderer",
                                                  .n_fds = 1);
  ck_assert(!sbx_sandbox_spawn(s, &spawn, &pid, NULL));

  sbx_worker_exit e = SBX_WORKER_EXIT_INIT();
  ck_assert(!sbx_sandbox_wait(NULL, -1, 0, &e, NULL));
  ck_assert(!sbx_sandbox_wait(s, -1, 0, NULL, NULL));

  /* payload and fds NULL with no length: no payload, stdio /dev/null. */
  spawn = (sbx_spawn_config)SBX_SPAWN_CONFIG_INIT(.process_type = "renderer",
                                                  .payload = NULL, .fds = NULL);
  assert_exit_code(s, spawn_ok(s, &spawn), 10);

  ck_assert_int_eq(sbx_sandbox_event_fd(NULL), -1);
  ck_assert_int_eq(sbx_sandbox_zygote_pid(NULL), -1);
  ck_assert_int_eq(sbx_sandbox_broker_pid(NULL), -1);
  ck_assert_int_ge(sbx_sandbox_event_fd(s), 0);
  sbx_sandbox_stop(NULL);
  sbx_sandbox_stop(s);

  sbx_self_config self = SBX_SELF_CONFIG_INIT(.profile = NULL);
  ck_assert(!sbx_sandbox_enter_self(&self, NULL, NULL));
  ck_assert(!sbx_sandbox_enter_self(NULL, NULL, NULL));

  sbx_sandbox_status st = SBX_SANDBOX_STATUS_INIT();
  ck_assert_uint_eq(sbx_sandbox_status_format(NULL, NULL, 16), 0);
  ck_assert_uint_gt(sbx_sandbox_status_format(&st, NULL, 16), 0);
  ck_assert_ptr_null(sbx_builtin_text(NULL));
}
END_TEST

/* A NULL payload or descriptor array with a length is reported as NULL,
 * whatever the length; a real one over the limit as too large. */
START_TEST(null_payload_or_fds_with_a_length_are_reported_as_null) {
  sbx_sandbox *s = start_one();
  pid_t pid;
  GError *error = NULL;
  const size_t lens[] = {1, 64 * 1024 + 1, (size_t)-1};
  for (size_t i = 0; i < G_N_ELEMENTS(lens); i++) {
    sbx_spawn_config spawn = SBX_SPAWN_CONFIG_INIT(.process_type = "renderer",
                                                   .payload_len = lens[i]);
    ck_assert(!sbx_sandbox_spawn(s, &spawn, &pid, &error));
    assert_invalid(error, "payload is NULL");
    error = NULL;
    spawn = (sbx_spawn_config)SBX_SPAWN_CONFIG_INIT(.process_type = "renderer",
                                                    .n_fds = lens[i]);
    ck_assert(!sbx_sandbox_spawn(s, &spawn, &pid, &error));
    assert_invalid(error, "fds is NULL");
    error = NULL;
  }
  /* Controls: real arrays over the limits are too large. */
  static char big[64 * 1024 + 1];
  sbx_spawn_config spawn =
      SBX_SPAWN_CONFIG_INIT(.process_type = "renderer", .payload = big,
                            .payload_len = sizeof big);
  ck_assert(!sbx_sandbox_spawn(s, &spawn, &pid, &error));
  assert_invalid(error, "at most 65536");
  error = NULL;
  int fds[17] = {0};
  spawn = (sbx_spawn_config)SBX_SPAWN_CONFIG_INIT(.process_type = "renderer",
                                                  .fds = fds,
                                                  .n_fds = G_N_ELEMENTS(fds));
  ck_assert(!sbx_sandbox_spawn(s, &spawn, &pid, &error));
  assert_invalid(error, "at most 16");
  /* And at the limits they are served. */
  spawn = (sbx_spawn_config)SBX_SPAWN_CONFIG_INIT(.process_type = "renderer",
                                                  .payload = big,
                                                  .payload_len = sizeof big - 1,
                                                  .fds = fds, .n_fds = 16);
  assert_exit_code(s, spawn_ok(s, &spawn), 10);
  sbx_sandbox_stop(s);
}
END_TEST

/* ---- Sizes ------------------------------------------------------------ */

START_TEST(a_struct_not_made_with_its_init_macro_is_refused) {
  GError *error = NULL;
  sbx_sandbox *s = NULL;
  sbx_process_type t = {.name = "renderer", .entry = entry_check_args};
  sbx_sandbox_config c = {.types = &t, .n_types = 1};
  ck_assert(!sbx_sandbox_start(&c, &s, &error));
  assert_invalid(error,
                 "sbx_sandbox_config.size is 0: make the struct with "
                 "SBX_SANDBOX_CONFIG_INIT()");
  c.size = sizeof c;
  error = NULL;
  ck_assert(!sbx_sandbox_start(&c, &s, &error));
  assert_invalid(error,
                 "types[0]: sbx_process_type.size is 0: make the "
                 "struct with SBX_PROCESS_TYPE_INIT()");
  sbx_self_config self = {.profile = "renderer"};
  error = NULL;
  ck_assert(!sbx_sandbox_enter_self(&self, NULL, &error));
  assert_invalid(error, "SBX_SELF_CONFIG_INIT()");
  self.size = sizeof self;
  sbx_sandbox_status st = {.pid = 1};
  error = NULL;
  ck_assert(!sbx_sandbox_enter_self(&self, &st, &error));
  assert_invalid(error, "SBX_SANDBOX_STATUS_INIT()");
  ck_assert_uint_eq(sbx_sandbox_status_format(&st, NULL, 0), 0);
  sbx_worker_exit e = {.pid = 1};
  error = NULL;
  ck_assert(!sbx_sandbox_wait(NULL, -1, 0, &e, &error));
  assert_invalid(error, "SBX_WORKER_EXIT_INIT()");
  ck_assert_int_eq(e.pid, 1); /* refused before anything was written */
}
END_TEST

START_TEST(sizes_below_the_first_version_or_over_the_maximum_are_refused) {
  const size_t bad[] = {sizeof(size_t), offsetof(sbx_sandbox_config, n_types),
                        SBX_STRUCT_SIZE_MAX + 1, (size_t)-1};
  sbx_process_type t =
      SBX_PROCESS_TYPE_INIT(.name = "renderer", .entry = entry_check_args);
  sbx_sandbox *running = start_one();
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    sbx_sandbox_config c = SBX_SANDBOX_CONFIG_INIT(.types = &t, .n_types = 1);
    c.size = bad[i];
    sbx_sandbox *s = NULL;
    GError *error = NULL;
    ck_assert(!sbx_sandbox_start(&c, &s, &error));
    assert_invalid(error, "SBX_SANDBOX_CONFIG_INIT()");
    sbx_spawn_config spawn = SBX_SPAWN_CONFIG_INIT(.process_type = "renderer");
    spawn.size = bad[i];
    error = NULL;
    pid_t pid;
    ck_assert(!sbx_sandbox_spawn(running, &spawn, &pid, &error));
    assert_invalid(error, "SBX_SPAWN_CONFIG_INIT()");
    sbx_worker_exit e = SBX_WORKER_EXIT_INIT();
    e.size = bad[i];
    error = NULL;
    ck_assert(!sbx_sandbox_wait(running, -1, 0, &e, &error));
    assert_invalid(error, "SBX_WORKER_EXIT_INIT()");
    sbx_sandbox_status st = SBX_SANDBOX_STATUS_INIT();
    st.size = bad[i];
    ck_assert_uint_eq(sbx_sandbox_status_format(&st, NULL, 0), 0);
  }
  /* Control: the same calls with the sizes the macros set. */
  sbx_spawn_config spawn = SBX_SPAWN_CONFIG_INIT(.process_type = "renderer");
  assert_exit_code(running, spawn_ok(running, &spawn), 10);
  sbx_sandbox_stop(running);
}
END_TEST

/* sbx_spawn_config as a program built against its first version passes
 * it: the library reads no further than its size, so what lies beyond
 * (extra_rules here) is never taken for rules. */
START_TEST(a_spawn_config_without_extra_rules_is_served) {
  sbx_sandbox *running = start_one();
  static const char *const bogus[] = {"not a rule", NULL};
  sbx_spawn_config spawn =
      SBX_SPAWN_CONFIG_INIT(.process_type = "renderer", .extra_rules = bogus);
  GError *error = NULL;
  pid_t pid;
  /* Control: at the full size the field is read, and refused. */
  ck_assert(!sbx_sandbox_spawn(running, &spawn, &pid, &error));
  assert_invalid(error, "extra_rules[0] \"not a rule\"");
  spawn.size = offsetof(sbx_spawn_config, n_fds) + sizeof(size_t);
  assert_exit_code(running, spawn_ok(running, &spawn), 10);
  sbx_sandbox_stop(running);
}
END_TEST

/* A struct as a program built against a newer sbx.h passes it: this
 * library's fields, then one it does not know. */
typedef struct {
  sbx_sandbox_config known;
  uint64_t newer;
} newer_config;

typedef struct {
  sbx_process_type known;
  uint64_t newer;
} newer_type;

typedef struct {
  sbx_spawn_config known;
  uint64_t newer;
} newer_spawn;

typedef struct {
  sbx_worker_exit known;
  uint64_t newer;
} newer_exit;

START_TEST(a_newer_struct_is_served_when_its_unknown_fields_are_zero) {
  /* Two types in an array whose stride is the caller's, not this
   * library's: the second is found where the caller put it. */
  newer_type types[2] = {
      {SBX_PROCESS_TYPE_INIT(.name = "first", .profile = "renderer",
                             .entry = entry_check_args)},
      {SBX_PROCESS_TYPE_INIT(.name = "second", .profile = "renderer",
                             .entry = entry_check_args)},
  };
  types[0].known.size = types[1].known.size = sizeof(newer_type);
  newer_config c = {
      SBX_SANDBOX_CONFIG_INIT(.types = &types[0].known, .n_types = 2)};
  c.known.size = sizeof c;
  sbx_sandbox *s = NULL;
  GError *error = NULL;
  if (!sbx_sandbox_start(&c.known, &s, &error))
    ck_abort_msg("sbx_sandbox_start: %s", error->message);

  newer_spawn spawn = {SBX_SPAWN_CONFIG_INIT(.process_type = "second")};
  spawn.known.size = sizeof spawn;
  pid_t pid = spawn_ok(s, &spawn.known);

  /* Filled up to what this library knows, and it says so; the field it
   * does not know is left as the caller had it. */
  newer_exit e = {SBX_WORKER_EXIT_INIT(), SENTINEL};
  e.known.size = sizeof e;
  if (!sbx_sandbox_wait(s, pid, 20000, &e.known, &error))
    ck_abort_msg("sbx_sandbox_wait: %s", error->message);
  ck_assert_msg(e.known.reason == SBX_EXIT_NORMAL && e.known.exit_code == 10,
                "%s", e.known.detail);
  ck_assert_uint_eq(e.known.size, sizeof(sbx_worker_exit));
  ck_assert(SBX_HAS_FIELD(sbx_worker_exit, &e.known, detail));
  ck_assert_uint_eq(e.newer, SENTINEL);

  /* One unknown field set: this library cannot honour it. */
  spawn.newer = 1;
  ck_assert(!sbx_sandbox_spawn(s, &spawn.known, &pid, &error));
  api_assert_error(error, SBX_ERROR, SBX_ERROR_UNSUPPORTED);
  ck_assert_msg(strstr(error->message, "newer sbx.h"), "%s", error->message);
  g_clear_error(&error);
  sbx_sandbox_stop(s);

  c.newer = 1;
  ck_assert(!sbx_sandbox_start(&c.known, &s, &error));
  api_assert_error(error, SBX_ERROR, SBX_ERROR_UNSUPPORTED);
  g_clear_error(&error);
  c.newer = 0;
  types[1].newer = 1;
  ck_assert(!sbx_sandbox_start(&c.known, &s, &error));
  api_assert_error(error, SBX_ERROR, SBX_ERROR_UNSUPPORTED);
  ck_assert_msg(strstr(error->message, "types[1]"), "%s", error->message);
  g_clear_error(&error);
  /* Elements of one array have one size. */
  types[1].newer = 0;
  types[1].known.size = sizeof(sbx_process_type);
  ck_assert(!sbx_sandbox_start(&c.known, &s, &error));
  assert_invalid(error, "the first element's");
}
END_TEST

START_TEST(a_struct_of_the_first_version_is_served_and_filled_that_far) {
  /* The first published sbx_sandbox_status ends at fully_sandboxed; the
   * padding after it is not the caller's to give. */
  size_t first = offsetof(sbx_sandbox_status, fully_sandboxed) + sizeof(bool);
  struct {
    sbx_sandbox_status st;
    uint64_t after;
  } out;
  memset(&out, 0xa5, sizeof out);
  out.st.size = first;
  out.st.process_type[0] = '\0';
  out.st.seccomp_filters = -1;
  out.st.n_seccomp_layers = 0;
  out.st.landlock_abi = -1;
  out.st.open_fds = -1;
  out.st.fully_sandboxed = false;
  char text[1024];
  ck_assert_uint_gt(sbx_sandbox_status_format(&out.st, text, sizeof text), 0);
  ck_assert_ptr_nonnull(strstr(text, "fully sandboxed: NO"));
  /* enter_self fills it no further than its size (in a child: it
   * sandboxes for good). */
  pid_t child = fork();
  ck_assert_int_ge(child, 0);
  if (child == 0) {
    sbx_self_config self =
        SBX_SELF_CONFIG_INIT(.profile = "renderer", .keep_namespaces = true);
    GError *error = NULL;
    bool ok = sbx_sandbox_enter_self(&self, &out.st, &error);
    const unsigned char *tail = (const unsigned char *)&out.st + first;
    bool untouched = true;
    for (size_t i = 0; i < sizeof out - first; i++)
      untouched = untouched && tail[i] == 0xa5;
    _exit(!ok                              ? 1
          : out.st.size != first           ? 2
          : !untouched                     ? 3
          : out.st.seccomp != SBX_LAYER_ON ? 4
                                           : 0);
  }
  int status = 0;
  ck_assert_int_eq(waitpid(child, &status, 0), child);
  ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                "child wait status 0x%x", status);
}
END_TEST

START_TEST(workers_get_arguments_of_this_librarys_size) {
  sbx_sandbox *s = start_one();
  sbx_spawn_config spawn = SBX_SPAWN_CONFIG_INIT(.process_type = "renderer");
  assert_exit_code(s, spawn_ok(s, &spawn), 10);
  sbx_sandbox_stop(s);
}
END_TEST

/* ---- The formatter and the built-ins ----------------------------------- */

static sbx_sandbox_status sample_status(void) {
  sbx_sandbox_status st =
      SBX_SANDBOX_STATUS_INIT(.process_type = "renderer", .pid = 2,
                              .uid = 65534, .user_ns = SBX_LAYER_ON,
                              .pid_ns = SBX_LAYER_ON, .net_ns = SBX_LAYER_ON,
                              .ipc_ns = SBX_LAYER_ON, .uts_ns = SBX_LAYER_OFF,
                              .mount_ns = SBX_LAYER_UNKNOWN,
                              .seccomp = SBX_LAYER_ON, .seccomp_filters = 2,
                              .n_seccomp_layers = 2, .broker = SBX_LAYER_ON,
                              .landlock = SBX_LAYER_ON, .landlock_abi = 3,
                              .open_fds = 5, .fully_sandboxed = true);
  g_strlcpy(st.seccomp_layers[0], "broker-client", SBX_NAME_MAX);
  g_strlcpy(st.seccomp_layers[1], "renderer.policy", SBX_NAME_MAX);
  return st;
}

START_TEST(the_status_report_has_one_line_per_layer_like_snprintf) {
  sbx_sandbox_status st = sample_status();
  char text[2048];
  size_t len = sbx_sandbox_status_format(&st, text, sizeof text);
  ck_assert_uint_eq(len, strlen(text));
  const char *lines[] = {
      "process type: renderer (pid 2, uid 65534)\n",
      "user namespace: on\n",
      "uts namespace: OFF\n",
      "mount namespace: unknown\n",
      "seccomp: on (2 filters: broker-client, renderer.policy)\n",
      "broker: on\n",
      "landlock: on (abi 3; without: TCP bind and connect, device ioctls, "
      "abstract-socket and signal scopes, logging flags)\n",
      "open fds: 5\n",
      "fully sandboxed: yes\n",
  };
  for (size_t i = 0; i < G_N_ELEMENTS(lines); i++)
    ck_assert_msg(strstr(text, lines[i]), "no \"%s\" in:\n%s", lines[i], text);
  /* Measured without a buffer, cut short in a small one. */
  ck_assert_uint_eq(sbx_sandbox_status_format(&st, NULL, 0), len);
  char small[16];
  ck_assert_uint_eq(sbx_sandbox_status_format(&st, small, sizeof small), len);
  ck_assert_uint_eq(strlen(small), sizeof small - 1);
  ck_assert_uint_eq(sbx_sandbox_status_format(&st, NULL, 100), len);
  /* Names without their NUL end at the array. */
  memset(st.process_type, 'x', sizeof st.process_type);
  memset(st.seccomp_layers[1], 'y', sizeof st.seccomp_layers[1]);
  st.n_seccomp_layers = 1000;
  ck_assert_uint_lt(sbx_sandbox_status_format(&st, text, sizeof text),
                    sizeof text);
  g_autofree char *xs = g_strnfill(SBX_NAME_MAX, 'x');
  ck_assert_ptr_nonnull(strstr(text, xs));
}
END_TEST

START_TEST(
    sbx_builtin_text_gives_each_built_in_file_by_name_and_null_otherwise) {
  ck_assert_ptr_nonnull(sbx_builtin_text("renderer.profile"));
  ck_assert_ptr_nonnull(sbx_builtin_text("common.policy"));
  ck_assert_ptr_null(sbx_builtin_text("missing.policy"));
  ck_assert_ptr_null(sbx_builtin_text(NULL));
  /* Includes are resolved at build time: no @include is left. */
  ck_assert_ptr_null(strstr(sbx_builtin_text("renderer.policy"), "\n@include"));
}
END_TEST

START_TEST(the_error_domain_keeps_its_name) {
  ck_assert_str_eq(g_quark_to_string(SBX_ERROR), "sbx-error-quark");
}
END_TEST

static Suite *contract_suite(void) {
  Suite *s = suite_create("api_contract");
  TCase *args = tcase_create("arguments");
  tcase_set_timeout(args, 60);
  tcase_add_test(args, null_arguments_are_refused_without_a_crash);
  tcase_add_test(args, null_arguments_to_a_running_sandbox_are_refused);
  tcase_add_test(args,
                 each_pointer_argument_null_on_its_own_is_refused_or_defaulted);
  tcase_add_test(args, null_payload_or_fds_with_a_length_are_reported_as_null);
  suite_add_tcase(s, args);
  TCase *sizes = tcase_create("sizes");
  tcase_set_timeout(sizes, 60);
  tcase_add_test(sizes, a_struct_not_made_with_its_init_macro_is_refused);
  tcase_add_test(sizes,
                 sizes_below_the_first_version_or_over_the_maximum_are_refused);
  tcase_add_test(sizes, a_spawn_config_without_extra_rules_is_served);
  tcase_add_test(sizes,
                 a_newer_struct_is_served_when_its_unknown_fields_are_zero);
  tcase_add_test(sizes,
                 a_struct_of_the_first_version_is_served_and_filled_that_far);
  tcase_add_test(sizes, workers_get_arguments_of_this_librarys_size);
  suite_add_tcase(s, sizes);
  TCase *plain = tcase_create("plain");
  tcase_add_test(plain, the_status_report_has_one_line_per_layer_like_snprintf);
  tcase_add_test(
      plain,
      sbx_builtin_text_gives_each_built_in_file_by_name_and_null_otherwise);
  tcase_add_test(plain, the_error_domain_keeps_its_name);
  suite_add_tcase(s, plain);
  return s;
}

int main(int argc, char **argv) {
  sbx_main_hook(argc, argv);
  return api_run_suite(contract_suite());
}
