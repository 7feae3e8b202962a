/* The shared zygote and control processes of the escape suites: see
 * escape_util.h. */
#include "sandbox/tests/zygote/escape_util.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>
#include <linux/audit.h>
#include <linux/seccomp.h>

#include "sandbox/broker/broker.h"
#include "sandbox/broker/layer1.h"
#include "sandbox/kernel/seccomp/bpf.h"
#include "sandbox/policy/compiler.h"
#include "sandbox/zygote/worker.h"
#include "sandbox/policy/builtin/profile.h"

/* Two zygotes: the broker client's trap handlers are registered for every
 * worker a zygote forks, and in a type without a channel they answer
 * EACCES; "sandboxed" keeps the plain policy-kill handlers instead. */
static sbx_zygote *zygote;
static sbx_zygote *brokered_zygote;
static GArray *brokered_pids;
static sbx_broker *broker;
static sbx_allowlist *allowlist;
/* Layer 1, then the profile's policies: "brokered" uses all of them,
 * "sandboxed" all but the first. */
static sbx_bpf_program layers[SBX_LAYERS_MAX_FILTERS];
static size_t n_layers;
static int devnull = -1;
/* The broker client's state; every worker uses its own copy. */
static sbx_broker_client client;

static void start_broker(const sbx_profile *profile) {
  GError *error = NULL;
  allowlist = sbx_allowlist_new("renderer");
  for (char **rule = profile->broker_rules; rule && *rule; rule++)
    if (!sbx_allowlist_add_rule(allowlist, *rule, &error))
      ck_abort_msg("%s: %s", profile->source, error->message);
  if (profile->umask_set)
    sbx_allowlist_set_umask(allowlist, profile->umask);
  if (profile->denied_errno &&
      !sbx_allowlist_set_denied_errno(allowlist, profile->denied_errno, &error))
    ck_abort_msg("%s: %s", profile->source, error->message);
  const sbx_allowlist *const lists[] = {allowlist};
  sbx_broker_config config = {
      .allowlists = lists, .n_allowlists = 1, .audit_fd = -1};
  broker = sbx_broker_start(&config, &error);
  if (!broker)
    ck_abort_msg("%s", error->message);
}

static unsigned pool;

/* Until the zygote has n workers forked ahead (20 s at most). */
static void await_pool(sbx_zygote *z, unsigned n) {
  sbx_zygote_status st = {0};
  for (int i = 0; i < 2000; i++) {
    GError *error = NULL;
    if (!sbx_zygote_query(z, &st, &error))
      ck_abort_msg("%s", error->message);
    if (st.pooled >= n)
      return;
    g_usleep(10000);
  }
  ck_abort_msg("the zygote has %u pooled workers, not %u", st.pooled, n);
}

void escape_set_pool(unsigned n) {
  pool = n;
}

void escape_start(sbx_zygote_entry entry) {
  escape_start_profile("renderer", entry);
}

void escape_start_profile(const char *name, sbx_zygote_entry entry) {
  GError *error = NULL;
  g_autoptr(sbx_profile) profile = sbx_profile_load(name, NULL, &error);
  if (!profile)
    ck_abort_msg("%s", error->message);
  start_broker(profile);
  char **names = NULL;
  GPtrArray *policies = sbx_profile_policies(profile, &names, &error);
  if (!policies)
    ck_abort_msg("%s", error->message);
  ck_assert_uint_lt(policies->len, SBX_LAYERS_MAX_FILTERS);
  if (!sbx_layer1_compile(&layers[0], &error))
    ck_abort_msg("%s", error->message);
  n_layers = 1 + policies->len;
  const char *layer_names[SBX_LAYERS_MAX_FILTERS];
  layer_names[0] = SBX_LAYER1_NAME;
  for (guint i = 0; i < policies->len; i++) {
    if (!sbx_bpf_compile(g_ptr_array_index(policies, i), &layers[1 + i],
                         &error))
      ck_abort_msg("%s: %s", names[i], error->message);
    layer_names[1 + i] = names[i];
  }
  g_ptr_array_unref(policies);
  sbx_zygote_type types[] = {
      {.name = "sandboxed",
       .entry = entry,
       .layers = layers + 1,
       .layer_names = layer_names + 1,
       .n_layers = n_layers - 1,
       .rlimits = profile->rlimits,
       .n_rlimits = profile->n_rlimits,
       .landlock = profile->landlock,
       .pool = pool},
      {.name = "control",
       .entry = entry,
       .rlimits = profile->rlimits,
       .n_rlimits = profile->n_rlimits,
       .pool = pool},
  };
  sbx_zygote_config config = {
      .types = types,
      .n_types = G_N_ELEMENTS(types),
      .namespaces = profile->namespaces,
      .host_root = !profile->empty_root,
  };
  if (!sbx_zygote_start(&config, &zygote, &error))
    ck_abort_msg("%s", error->message);
  sbx_zygote_type brokered = {
      .name = "brokered",
      .entry = entry,
      .layers = layers,
      .layer_names = layer_names,
      .n_layers = n_layers,
      .uses_broker = true,
      .rlimits = profile->rlimits,
      .n_rlimits = profile->n_rlimits,
      .landlock = profile->landlock,
      .pool = pool,
  };
  sbx_zygote_config bconfig = {
      .types = &brokered,
      .n_types = 1,
      .namespaces = profile->namespaces,
      .host_root = !profile->empty_root,
      .register_broker_traps_raw = sbx_layer1_register_traps_raw,
      .broker_attach_raw = sbx_layer1_attach_raw,
      .broker_client = &client,
  };
  if (!sbx_zygote_start(&bconfig, &brokered_zygote, &error))
    ck_abort_msg("%s", error->message);
  brokered_pids = g_array_new(FALSE, FALSE, sizeof(pid_t));
  g_strfreev(names);
  /* Every attack then meets a worker that waited in the pool. */
  await_pool(zygote, 2 * pool);
  await_pool(brokered_zygote, pool);
  devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
  ck_assert_int_ge(devnull, 0);
}

void escape_stop(void) {
  sbx_zygote_stop(zygote);
  zygote = NULL;
  sbx_zygote_stop(brokered_zygote);
  brokered_zygote = NULL;
  if (brokered_pids)
    g_array_unref(brokered_pids);
  brokered_pids = NULL;
  sbx_broker_stop(broker, NULL, NULL);
  broker = NULL;
  sbx_allowlist_free(allowlist);
  allowlist = NULL;
  for (size_t i = 0; i < n_layers; i++)
    sbx_bpf_program_clear(&layers[i]);
  n_layers = 0;
  close(devnull);
  devnull = -1;
}

sbx_zygote *escape_zygote(void) {
  return zygote;
}

pid_t escape_broker_pid(void) {
  return sbx_broker_pid(broker);
}

uint32_t escape_sandboxed_action(int nr, const long args[6]) {
  struct seccomp_data d = {.nr = nr, .arch = AUDIT_ARCH_X86_64};
  for (int i = 0; i < 6; i++)
    d.args[i] = (uint64_t)args[i];
  uint32_t best = SECCOMP_RET_ALLOW;
  for (size_t i = 1; i < n_layers; i++) {
    uint32_t r = sbx_bpf_run(layers[i].insns, layers[i].len, &d, NULL);
    /* seccomp(2): lower action values take precedence, compared signed. */
    if ((int32_t)(r & SECCOMP_RET_ACTION_FULL) <
        (int32_t)(best & SECCOMP_RET_ACTION_FULL))
      best = r;
  }
  return best;
}

pid_t escape_spawn(const char *type, const void *payload, size_t len,
                   const int *extra, size_t n_extra, int *reply_fd) {
  int out[2];
  ck_assert_int_eq(pipe2(out, O_CLOEXEC), 0);
  int fds[SBX_ZYGOTE_MAX_FDS];
  ck_assert_uint_le(4 + n_extra, SBX_ZYGOTE_MAX_FDS);
  fds[0] = fds[1] = fds[2] = devnull;
  fds[ESCAPE_REPLY_FD] = out[1];
  for (size_t i = 0; i < n_extra; i++)
    fds[4 + i] = extra[i];
  GError *error = NULL;
  int channel = -1;
  if (strcmp(type, "brokered") == 0) {
    channel = sbx_broker_connect(broker, "renderer", &error);
    if (channel < 0)
      ck_abort_msg("%s", error->message);
  }
  sbx_zygote_spawn_request req = {.process_type = type,
                                  .payload = payload,
                                  .payload_len = len,
                                  .fds = fds,
                                  .n_fds = 4 + n_extra,
                                  .broker_channel = channel};
  pid_t pid = -1;
  if (!sbx_zygote_spawn(channel >= 0 ? brokered_zygote : zygote, &req, &pid,
                        &error))
    ck_abort_msg("%s", error->message);
  close(out[1]);
  if (channel >= 0) {
    close(channel);
    g_array_append_val(brokered_pids, pid);
  }
  *reply_fd = out[0];
  return pid;
}

bool escape_read_reply(int fd, void *buf, size_t len) {
  size_t got = 0;
  while (got < len) {
    ssize_t n = read(fd, (char *)buf + got, len - got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    got += (size_t)n;
  }
  return got == len;
}

sbx_zygote_exit escape_wait(pid_t pid) {
  sbx_zygote *z = zygote;
  for (guint i = 0; i < brokered_pids->len; i++) {
    if (g_array_index(brokered_pids, pid_t, i) == pid) {
      z = brokered_zygote;
      g_array_remove_index_fast(brokered_pids, i);
      break;
    }
  }
  sbx_zygote_exit e;
  GError *error = NULL;
  if (!sbx_zygote_wait(z, pid, 20000, &e, &error))
    ck_abort_msg("%s", error->message);
  return e;
}

escape_outcome escape_run(const char *type, const void *payload, size_t len,
                          void *reply, size_t reply_len) {
  escape_outcome o;
  memset(&o, 0, sizeof o);
  int fd;
  pid_t pid = escape_spawn(type, payload, len, NULL, 0, &fd);
  o.wrote = escape_read_reply(fd, reply, reply_len);
  close(fd);
  o.exit = escape_wait(pid);
  return o;
}

escape_call escape_run_call(const char *type, const void *payload, size_t len) {
  escape_call c;
  memset(&c, 0, sizeof c);
  c.o = escape_run(type, payload, len, &c.r, sizeof c.r);
  return c;
}

int escape_main(Suite *suite) {
  SRunner *sr = srunner_create(suite);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

void escape_reply_to(int fd, const void *buf, size_t len) {
  const char *p = buf;
  while (len) {
    ssize_t n = write(fd, p, len);
    if (n <= 0)
      _exit(91);
    p += n;
    len -= (size_t)n;
  }
}

void escape_reply(const void *buf, size_t len) {
  escape_reply_to(ESCAPE_REPLY_FD, buf, len);
}

uid_t escape_expected_uid(void) {
  return geteuid() == 0 ? 65534 : geteuid();
}

gid_t escape_expected_gid(void) {
  return geteuid() == 0 ? 65534 : getegid();
}

static bool write_file(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  ssize_t n = write(fd, text, strlen(text));
  close(fd);
  return n == (ssize_t)strlen(text);
}

/* Root of a new user namespace that owns a new mount and pid namespace;
 * the caller's next child is pid 1 there. Returns false on failure. */
static bool enter_own_namespaces(void) {
  uid_t uid = geteuid();
  gid_t gid = getegid();
  if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID) != 0)
    return false;
  char map[64];
  if (!write_file("/proc/self/setgroups", "deny"))
    return false;
  snprintf(map, sizeof map, "0 %u 1", (unsigned)uid);
  if (!write_file("/proc/self/uid_map", map))
    return false;
  snprintf(map, sizeof map, "0 %u 1", (unsigned)gid);
  return write_file("/proc/self/gid_map", map);
}

bool escape_run_unsandboxed(bool own_namespaces, escape_probe probe,
                            const void *arg, void *reply, size_t reply_len) {
  int out[2];
  ck_assert_int_eq(pipe2(out, O_CLOEXEC), 0);
  pid_t child = fork();
  ck_assert_int_ge(child, 0);
  if (child == 0) {
    close(out[0]);
    if (own_namespaces) {
      if (!enter_own_namespaces())
        _exit(92);
      pid_t inner = fork();
      if (inner < 0)
        _exit(93);
      if (inner > 0) {
        int st;
        _exit(waitpid(inner, &st, 0) == inner && WIFEXITED(st) ? WEXITSTATUS(st)
                                                               : 94);
      }
    }
    probe(out[1], arg);
    _exit(0);
  }
  close(out[1]);
  bool wrote = escape_read_reply(out[0], reply, reply_len);
  close(out[0]);
  int st;
  ck_assert_int_eq(waitpid(child, &st, 0), child);
  ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
                "control process ended with wait status 0x%x", st);
  return wrote;
}
