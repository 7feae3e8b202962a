/* The zygote, host side: see zygote.h. */
#include "sandbox/zygote/zygote.h"

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <linux/audit.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/kernel/namespaces/namespaces.h"
#include "sandbox/kernel/namespaces/reap.h"
#include "sandbox/kernel/namespaces/status.h"
#include "sandbox/layers/missing.h"
#include "sandbox/zygote/fresh.h"
#include "sandbox/zygote/report.h"
#include "sandbox/zygote/server.h"

/* Slots in the worker table: 8 bytes each, mapped without reserve and
 * touched only as far as workers were alive at once, so the kernel's
 * limits (processes, descriptors, memory), not the table, bound a
 * sandbox. */
#define DEFAULT_MAX_WORKERS 65536
#define START_TIMEOUT_MS 20000

/* The domain's name is its first argument, stringified: clang-format
 * would put spaces into it. */
// clang-format off
GQuark sbx_zygote_error_quark(void) {
  return g_quark_from_static_string("sbx-zygote-error-quark");
}
// clang-format on

typedef struct {
  pid_t zygote_pid;
  pid_t host_pid;
} worker_pid;

struct sbx_zygote {
  int sock;
  pid_t pid;
  char (*type_names)[SBX_LAYERS_NAME_MAX];
  bool *type_uses_broker;
  size_t n_types;
  GArray *workers;    /* worker_pid, live workers */
  GArray *held;       /* worker_pid, live workers spawned held, not released */
  GArray *held_exits; /* sbx_zygote_exit, of held workers */
  GArray *pending;    /* sbx_zygote_exit, reported but not yet waited for */
  GArray *abandoned_requests; /* uint32_t: spawns whose reply timed out */
  GArray *abandoned_workers;  /* pid_t, zygote's view: killed, unreported */
  uint32_t next_request;
  bool own_pid_ns; /* server.h */
  bool dead;
  int zygote_status;
  /* Any host thread may use the zygote. lock guards every field above but
   * sock and pid, which stay as sbx_zygote_start set them until
   * sbx_zygote_stop (the socket stays open until then too, so no thread
   * ever polls a number that was closed and reused). One thread at a time
   * reads the socket on behalf of all (reading); the others sleep on news,
   * which is broadcast after every read and when the reader steps down. */
  GMutex lock;
  GCond news;
  bool reading;
  GPtrArray *awaited; /* awaited_reply *: requests whose reply is due */
  gint gone;          /* end of file seen; atomic, for sbx_zygote_fd */
};

/* ---- Starting ----------------------------------------------------------- */

/* The worker table holds every sibling's pid. It is wiped in each fork, so
 * no worker learns which pids its siblings have (S39), at no cost to the
 * spawn: the kernel maps zero pages instead of copying (MADV_WIPEONFORK). */
static void *wiped_on_fork(size_t len, const char *what, GError **error) {
  void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    g_set_error(error, SBX_ZYGOTE_ERROR, SBX_ZYGOTE_ERROR_FAILED,
                "zygote: mapping %s: %s", what, g_strerror(errno));
    return NULL;
  }
  if (madvise(p, len, MADV_WIPEONFORK) != 0) {
    int err = errno;
    munmap(p, len);
    g_set_error(error, SBX_ZYGOTE_ERROR, SBX_ZYGOTE_ERROR_FAILED,
                "zygote: madvise(MADV_WIPEONFORK) on %s: %s", what,
                g_strerror(err));
    return NULL;
  }
  return p;
}

sbx_zygote_server *sbx_zygote_server_alloc(size_t n_types, size_t capacity,
                                           GError **error) {
  sbx_zygote_server *s = g_new0(sbx_zygote_server, 1);
  s->sock = -1;
  s->devnull = -1;
  s->n_plans = n_types;
  s->plans = g_new0(sbx_worker_plan, n_types);
  for (size_t i = 0; i < n_types; i++)
    sbx_layer_plan_init(&s->plans[i].layers, "", 0);
  s->capacity = capacity ? capacity : DEFAULT_MAX_WORKERS;
  g_autofree char *table =
      g_strdup_printf("a table of %zu workers", s->capacity);
  s->slots = wiped_on_fork(s->capacity * sizeof *s->slots, table, error);
  /* The pools too: pooled workers are siblings like any other (S39). */
  s->pools = s->slots ? wiped_on_fork(n_types * sizeof *s->pools,
                                      "the warm pools", error)
                      : NULL;
  if (!s->pools) {
    sbx_zygote_server_free(s);
    return NULL;
  }
  s->buf = g_malloc0(SBX_ZYGOTE_MAX_MESSAGE);
  return s;
}

void sbx_zygote_server_free(sbx_zygote_server *s) {
  if (!s)
    return;
  for (size_t i = 0; i < s->n_plans; i++)
    sbx_layer_plan_clear(&s->plans[i].layers);
  g_free(s->plans);
  g_free(s->direct_binds);
  if (s->slots)
    munmap(s->slots, s->capacity * sizeof *s->slots);
  if (s->pools)
    munmap(s->pools, s->n_plans * sizeof *s->pools);
  g_free(s->buf);
  if (s->devnull >= 0)
    close(s->devnull);
  if (s->sock >= 0)
    close(s->sock);
  g_free(s);
}

static void copy_name(char *dst, const char *src) {
  g_strlcpy(dst, src, SBX_LAYERS_NAME_MAX);
}

/* A pooled worker takes its job with every layer on (worker.h): each of
 * the type's filters must allow the calls it makes for that, or the
 * worker would die at its first job. */
static gboolean check_pool_calls(const sbx_zygote_type *t, GError **error) {
  for (size_t j = 0; j < t->n_layers; j++) {
    const sbx_bpf_program *p = &t->layers[j];
    for (size_t c = 0; c < sbx_worker_pool_n_calls; c++) {
      const sbx_worker_pool_call *call = &sbx_worker_pool_calls[c];
      struct seccomp_data data = {.nr = call->nr, .arch = AUDIT_ARCH_X86_64};
      for (size_t a = 0; a < G_N_ELEMENTS(call->args); a++)
        data.args[a] = call->args[a];
      uint32_t action = sbx_bpf_run(p->insns, p->len, &data, NULL);
      if ((action & SECCOMP_RET_ACTION_FULL) != SECCOMP_RET_ALLOW) {
        g_set_error(
            error, SBX_ZYGOTE_ERROR, SBX_ZYGOTE_ERROR_INVALID,
            "zygote: process type \"%s\" asks for a pool, but its "
            "seccomp layer %s does not allow %s, which a pooled "
            "worker makes to take its job with every layer on "
            "(allow recvmsg, fcntl F_SETFD, dup3 and close, or "
            "drop the pool)",
            t->name,
            t->layer_names && t->layer_names[j] ? t->layer_names[j] : "unnamed",
            call->name);
        return FALSE;
      }
    }
  }
  return TRUE;
}

static gboolean check_config(const sbx_zygote_config *config, GError **error) {
  if (config->n_types == 0 || !config->types) {
    g_set_error(error, SBX_ZYGOTE_ERROR, SBX_ZYGOTE_ERROR_INVALID,
                "zygote: no process types given");
    return FALSE;
  }
  for (size_t i = 0; i < config->n_types; i++) {
    const sbx_zygote_type *t = &config->types[i];
    if (!t->name || !*t->name || strlen(t->name) >= SBX_LAYERS_NAME_MAX) {
      g_set_error(error, SBX_ZYGOTE_ERROR, SBX_ZYGOTE_ERROR_INVALID,
                  "zygote: process type %zu: the name must be 1 to %d bytes", i,
                  SBX_LAYERS_NAME_MAX - 1);
      return FALSE;
    }
    for (size_t j = 0; j < i; j++) {
      if (strcmp(config->types[j].name, t->name) == 0) {
        g_set_error(error, SBX_ZYGOTE_ERROR, SBX_ZYGOTE_ERROR_INVALID,
                    "zygote: process type \"%s\" is defined twice", t->name);
        return FALSE;
      }
    }
    if (!t->entry) {
      g_set_error(error, SBX_ZYGOTE_ERROR, SBX_ZYGOTE_ERROR_INVALID,
                  "zygote: process type \"%s\" has no entry function", t->name);
      return FALSE;
    }
    if (t->uses_broker && (t->n_layers == 0 || !config->broker_attach_raw ||
                           !config->register_broker_traps_raw)) {
      g_set_error(error, SBX_ZYGOTE_ERROR, SBX_ZYGOTE_ERROR_INVALID,
                  "zygote: process type \"%s\" uses the broker but no "
                  "broker-client layer or client hooks were given",
                  t->name);
      return FALSE;
    }
    if (t->pool > SBX_ZYGOTE_MAX_POOL) {
      g_set_error(error, SBX_ZYGOTE_ERROR, SBX_ZYGOTE_ERROR_INVALID,
                  "zygote: process type \"%s\": a pool of %u workers; at "
                  "most %d",
                  t->name, t->pool, SBX_ZYGOTE_MAX_POOL);
      return FALSE;
    }
    if (t->pool && !check_pool_calls(t, error))
      return FALSE;
    if (t->audit_last_layer &&
        (!t->uses_broker || t->n_layers < 2 || !config->broker_listener_raw)) {
      g_set_error(error, SBX_ZYGOTE_ERROR, SBX_ZYGOTE_ERROR_INVALID,
                  "zygote: process type \"%s\" audits a layer but has no "
                  "broker, no layer of its own or no listener hook",
                  t->name);
      return FALSE;
    }
  }
  return TRUE;
}

/* A builder handling every right, with read granted on each direct tree
 * that exists (a missing one is skipped: there is nothing to open); NULL
 * when a rule is refused. */
static sbx_landlock_builder *direct_ruleset(const sbx_zygote_type *t,
                                            GError **error) {
  sbx_landlock_builder *b = sbx_landlock_builder_new();
  for (size_t i = 0; t->direct_trees && t->direct_trees[i]; i++) {
    if (access(t->direct_trees[i], F_OK) != 0)
      continue;
    GError *local = NULL;
    if (!sbx_landlock_allow_path(b, t->direct_trees[i],
                                 SBX_LANDLOCK_RIGHTS_READ, 0, &local)) {
      g_propagate_error(error, local);
      sbx_landlock_builder_free(b);
      return NULL;
    }
  }
  return b;
}

/* Every type's direct trees, once each, NUL-separated. */
static void collect_direct_binds(const sbx_zygote_config *config,
                                 sbx_zygote_server *s) {
  GString *all = g_string_new(NULL);
  GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
  for (size_t i = 0; i < config->n_types; i++) {
    const char *const *trees = config->types[i].direct_trees;
    for (size_t j = 0; trees && trees[j]; j++) {
      if (!g_hash_table_add(seen, (gpointer)trees[j]))
        continue;
      g_string_append(all, trees[j]);
      g_string_append_c(all, '\0');
    }
  }
  g_hash_table_destroy(seen);
  s->direct_binds_len = all->len;
  s->direct_binds = g_string_free(all, all->len == 0);
}

/* Direct opens leave openat2 to Landlock, which checks every open but
 * none of an O_PATH descriptor: only an empty root, which holds nothing
 * but the direct trees and the worker's /proc, keeps such a descriptor
 * from naming the host's files. Where the zygote ends up on the host's
 * tree (no user namespace, or a profile that keeps it), this filter,
 * loaded last, answers openat2 with ENOSYS and every open is brokered. */
static struct sock_filter direct_guard_insns[] = {
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat2, 0, 1),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};
static const sbx_bpf_program direct_guard = {
    .insns = direct_guard_insns, .len = G_N_ELEMENTS(direct_guard_insns)};

/* Fills one plan: programs copied, the Landlock ruleset built now, in the
 * host, where errors can still be reported properly. */
static gboolean prepare_plan(const sbx_zygote_type *t, sbx_worker_plan *plan,
                             GError **error) {
  sbx_layer_plan *layers = &plan->layers;
  sbx_layer_plan_init(layers, t->name, 0);
  plan->entry = t->entry;
  plan->entry_data = t->entry_data;
  plan->pool = t->pool;
  layers->broker = t->uses_broker;
  layers->collect_status = t->collect_status;
  gboolean ok = TRUE;
  for (size_t j = 0; ok && j < t->n_layers; j++)
    ok = sbx_layer_plan_add_filter(
        layers,
        t->layer_names && t->layer_names[j] ? t->layer_names[j] : "unnamed",
        &t->layers[j], error);
  ok =
      ok && sbx_layer_plan_add_rlimits(layers, t->rlimits, t->n_rlimits, error);
  if (ok && t->landlock) {
    sbx_landlock_builder *b = direct_ruleset(t, error);
    ok = b && sbx_layer_plan_set_landlock(layers, b, t->landlock_need,
                                          t->landlock_min_abi, error);
  }
  /* Direct trees are compiled into the filters as openat2 allowed:
   * without the ruleset nothing would bound it. */
  if (ok && t->direct_trees && t->direct_trees[0] && layers->landlock_fd < 0) {
    g_set_error(error, SBX_ZYGOTE_ERROR, SBX_ZYGOTE_ERROR_INVALID,
                "direct trees (%s, ...) need a Landlock ruleset, and this "
                "type has none",
                t->direct_trees[0]);
    ok = FALSE;
  }
  /* The guard goes last: the root decides whether it stays (server.c). */
  if (ok && t->direct_trees && t->direct_trees[0])
    ok = sbx_layer_plan_add_filter(layers, SBX_WORKER_DIRECT_GUARD,
                                   &direct_guard, error);
  if (t->audit_last_layer)
    layers->listener_filter = (int)t->n_layers - 1;
  if (!ok)
    g_prefix_error(error, "zygote: process type \"%s\": ", t->name);
  return ok;
}

/* *got is the message's length, 0 at end of file, -1 when there was none
 * to read (the socket is non-blocking). */
static gboolean recv_message(sbx_zygote *z, void *buf, size_t len, ssize_t *got,
                             pid_t *cred_pid, GError **error) {
  int fds[1];
  size_t n_fds;
  ssize_t n = sbx_zygote_recv(z->sock, buf, len, fds, 0, &n_fds, cred_pid);
  if (n == -EAGAIN || n == -EINTR) {
    *got = -1;
    return TRUE;
  }
  if (n < 0 && n != -ECONNRESET) {
    g_set_error(error, SBX_ZYGOTE_ERROR, SBX_ZYGOTE_ERROR_FAILED,
                "zygote: receiving from the zygote: %s", g_strerror((int)-n));
    return FALSE;
  }
  *got = n < 0 ? 0 : n;
  return TRUE;
}

/* Reaps the zygote and says how it ended. One that closed its socket but
 * does not end is killed; one the kernel does not let go of within the
 * bound is left (a zombie, or stuck in the kernel) rather than waited for. */
static char *reap_zygote(sbx_zygote *z) {
  if (!z->dead) {
    int status = 0;
    int rc = sbx_reap_or_kill_child(z->pid, SBX_ZYGOTE_REAP_TIMEOUT_MS,
                                    SBX_ZYGOTE_REAP_TIMEOUT_MS, &status);
    z->dead = true;
    z->zygote_status = rc > 0 ? status : -1;
  }
  int st = z->zygote_status;
  if (st == -1)
    return g_strdup_printf("did not end within %d ms of SIGKILL",
                           SBX_ZYGOTE_REAP_TIMEOUT_MS);
  if (WIFEXITED(st))
    return g_strdup_printf("exited with status %d", WEXITSTATUS(st));
  if (WIFSIGNALED(st))
    return g_strdup_printf("killed by signal %d (%s)", WTERMSIG(st),
                           g_strsignal(WTERMSIG(st)));
  return g_strdup("ended");
}

static gboolean wait_ready(sbx_zygote *z, bool fresh, GError **error) {
  struct pollfd pfd = {.fd = z->sock, .events = POLLIN};
  int r;
  do {
    r = poll(&pfd, 1, START_TIMEOUT_MS);
  } while (r < 0 && errno == EINTR);
  if (r == 0) {
    g_set_error(error, SBX_ZYGOTE_ERROR, SBX_ZYGOTE_ERROR_FAILED,
                "zygote: no answer within %d ms of starting", START_TIMEOUT_MS);
    return FALSE;
  }
  char buf[512];
  ssize_t n;
  if (!recv_message(z, buf, sizeof buf - 1, &n, NULL, error))
    return FALSE;
  if (n < 0) {
    g_set_error(error, SBX_ZYGOTE_ERROR, SBX_ZYGOTE_ERROR_FAILED,
                "zygote: readable but no message while starting");
    return FALSE;
  }
  const sbx_zygote_header *h = (const sbx_zygote_header *)buf;
  if (n == 0) {
    g_autofree char *how = reap_zygote(z);
    int st = z->zygote_status;
    if (fresh && st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 127)
      g_set_error(error, SBX_ZYGOTE_ERROR, SBX_ZYGOTE_ERROR_FAILED,
                  "zygote: %s before it was ready: the exec'd program could "
                  "not be loaded (its stderr says what was missing). A fresh "
                  "zygote runs as uid %d in its user namespace (nobody for a "
                  "root host) and must be able to read the executable's "
                  "libraries on their paths; make them readable, or use fork "
                  "mode",
                  how, (int)(geteuid() == 0 ? 65534 : geteuid()));
    else
      g_set_error(error, SBX_ZYGOTE_ERROR, SBX_ZYGOTE_ERROR_FAILED,
                  "zygote: %s before it was ready (namespace setup failed? "
                  "its stderr says which step)",
                  how);
    return FALSE;
  }
  if (h->type == SBX_ZMSG_INIT_FAILED) {
    buf[n] = '\0';
    g_autofree char *how = reap_zygote(z);
    g_set_error(error, SBX_ZYGOTE_ERROR, SBX_ZYGOTE_ERROR_FAILED,
                "zygote: setup failed: %s", buf + sizeof *h);
    return FALSE;
  }
  if (h->type != SBX_ZMSG_READY) {
    g_set_error(error, SBX_ZYGOTE_ERROR, SBX_ZYGOTE_ERROR_FAILED,
                "zygote: unexpected message %u while starting", h->type);
    return FALSE;
  }
  return TRUE;
}

/* The zygote in its namespaces; where the kernel refuses them and no type
 * requires them, without (missing.h decides and warns): the workers keep
 * their seccomp layers, the broker and Landlock, and their status reports
 * show the namespaces off. Returns like fork(). */
static pid_t clone_zygote(const sbx_zygote_config *config, sbx_ns_config *ns,
                          sbx_zygote_server *s, GError **error) {
  GError *local = NULL;
  pid_t pid = sbx_ns_clone(ns, &local);
  if (pid >= 0)
    return pid;
  const char *who = config->userns_required_by;
  if (!who)
    who = config->n_types ? config->types[0].name : "the zygote";
  if (!sbx_layer_userns_refused(local, config->userns_required_by != NULL, who,
                                error))
    return -1;
  ns->namespaces = 0;
  s->empty_root = false;
  s->own_pid_ns = false;
  return sbx_ns_clone(ns, error);
}

gboolean sbx_zygote_start(const sbx_zygote_config *config, sbx_zygote **out,
                          GError **error) {
  *out = NULL;
  if (!check_config(config, error))
    return FALSE;
  long threads = sbx_thread_count();
  if (threads > 1) {
    g_set_error(error, SBX_ZYGOTE_ERROR, SBX_ZYGOTE_ERROR_INVALID,
                "zygote: the host already runs %ld threads; start the sandbox "
                "before creating any thread (the zygote is cloned from the "
                "host, and locks held by other threads would stay locked in "
                "it until it runs a program of its own, or for good when it "
                "is a fork)",
                threads);
    return FALSE;
  }

  /* A fresh zygote's exec (fresh.h); exec_fd -1 for a forked one. Its
   * settings argument is written by the child (server.h), which alone
   * knows what the namespaces came to. */
  static char *const no_env[] = {NULL};
  char settings[] = "--";
  char *argv[] = {(char *)SBX_ZYGOTE_FRESH_NAME, (char *)SBX_ZYGOTE_FRESH_ARG,
                  settings, NULL};
  int *rulesets = NULL;
  sbx_zygote_exec fresh = {.exec_fd = -1, .data_fd = -1, .settings = settings};

  sbx_zygote *z = g_new0(sbx_zygote, 1);
  z->sock = -1;
  z->pid = -1;
  z->n_types = config->n_types;
  z->type_names = g_malloc0(SBX_LAYERS_NAME_MAX * config->n_types);
  z->type_uses_broker = g_new0(bool, config->n_types);
  z->workers = g_array_new(FALSE, FALSE, sizeof(worker_pid));
  z->held = g_array_new(FALSE, FALSE, sizeof(worker_pid));
  z->held_exits = g_array_new(FALSE, FALSE, sizeof(sbx_zygote_exit));
  z->pending = g_array_new(FALSE, FALSE, sizeof(sbx_zygote_exit));
  z->abandoned_requests = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  z->abandoned_workers = g_array_new(FALSE, FALSE, sizeof(pid_t));
  z->next_request = 1;
  g_mutex_init(&z->lock);
  g_cond_init(&z->news);
  z->awaited = g_ptr_array_new();

  sbx_zygote_server *s =
      sbx_zygote_server_alloc(config->n_types, config->max_workers, error);
  if (!s)
    goto fail;
  s->empty_root = !config->host_root;
  collect_direct_binds(config, s);
  s->register_broker_traps_raw = config->register_broker_traps_raw;
  s->broker_client = config->broker_client;

  for (size_t i = 0; i < config->n_types; i++) {
    const sbx_zygote_type *t = &config->types[i];
    copy_name(z->type_names[i], t->name);
    z->type_uses_broker[i] = t->uses_broker;
    if (!prepare_plan(t, &s->plans[i], error))
      goto fail;
    s->plans[i].broker_attach_raw = config->broker_attach_raw;
    s->plans[i].broker_listener_raw = config->broker_listener_raw;
  }

  s->devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (s->devnull < 0) {
    g_set_error(error, SBX_ZYGOTE_ERROR, SBX_ZYGOTE_ERROR_FAILED,
                "zygote: opening /dev/null: %s", g_strerror(errno));
    goto fail;
  }
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
    g_set_error(error, SBX_ZYGOTE_ERROR, SBX_ZYGOTE_ERROR_FAILED,
                "zygote: socketpair: %s", g_strerror(errno));
    goto fail;
  }
  int one = 1;
  /* Non-blocking on the host's side only (a description of its own): no
   * send or receive there can outlast the reply timeout. */
  if (setsockopt(sv[0], SOL_SOCKET, SO_PASSCRED, &one, sizeof one) < 0 ||
      fcntl(sv[0], F_SETFL, O_NONBLOCK) < 0) {
    g_set_error(error, SBX_ZYGOTE_ERROR, SBX_ZYGOTE_ERROR_FAILED,
                "zygote: SO_PASSCRED or O_NONBLOCK on its socket: %s",
                g_strerror(errno));
    close(sv[0]);
    close(sv[1]);
    goto fail;
  }
  z->sock = sv[0];
  s->sock = sv[1];
  if (sbx_status_record_reference(&s->ns_reference) < 0)
    s->ns_reference.valid = false;

  sbx_ns_config ns;
  sbx_ns_config_init(&ns);
  if (config->namespaces)
    ns.namespaces = config->namespaces | SBX_NS_USER;
  if (!(ns.namespaces & SBX_NS_MOUNT))
    s->empty_root = false;
  s->own_pid_ns = (ns.namespaces & SBX_NS_PID) != 0;
  if (config->fresh) {
    fresh.data_fd =
        sbx_zygote_fresh_write(s, config, &rulesets, &fresh.n_rulesets, error);
    if (fresh.data_fd < 0)
      goto fail;
    fresh.exec_fd = config->exec_fd;
    fresh.rulesets = rulesets;
    fresh.argv = argv;
    fresh.envp = config->exec_env ? (char *const *)config->exec_env : no_env;
  }
  pid_t pid = clone_zygote(config, &ns, s, error);
  if (pid == 0) {
    if (fresh.exec_fd >= 0)
      sbx_zygote_server_exec(s, &fresh); /* never returns */
    sbx_zygote_server_main(s);           /* the zygote; never returns */
  }
  close(s->sock);
  s->sock = -1;
  if (fresh.data_fd >= 0)
    close(fresh.data_fd);
  fresh.data_fd = -1;
  g_clear_pointer(&rulesets, g_free);
  if (pid < 0) {
    g_prefix_error(error, "zygote: ");
    goto fail;
  }
  z->pid = pid;
  z->own_pid_ns = s->own_pid_ns;
  sbx_zygote_server_free(s); /* the zygote has its own copy */
  s = NULL;
  if (!wait_ready(z, config->fresh, error)) {
    sbx_zygote_stop(z);
    return FALSE;
  }
  *out = z;
  return TRUE;

fail:
  if (fresh.data_fd >= 0)
    close(fresh.data_fd);
  g_free(rulesets);
  sbx_zygote_server_free(s);
  sbx_zygote_stop(z);
  return FALSE;
}

/* ---- Talking to it ------------------------------------------------------ */

/* The host's pid of the worker the zygote calls zygote_pid, removed from
 * workers (worker_pid), or -1. */
static pid_t take_host_pid(GArray *workers, pid_t zygote_pid) {
  for (guint i = 0; i < workers->len; i++) {
    worker_pid *w = &g_array_index(workers, worker_pid, i);
    if (w->zygote_pid == zygote_pid) {
      pid_t host = w->host_pid;
      g_array_remove_index_fast(workers, i);
      return host;
    }
  }
  return -1;
}

/* The entry of workers (worker_pid) for host_pid, removed into *out. */
static bool take_worker(GArray *workers, pid_t host_pid, worker_pid *out) {
  for (guint i = 0; i < workers->len; i++) {
    worker_pid *w = &g_array_index(workers, worker_pid, i);
    if (w->host_pid == host_pid) {
      *out = *w;
      g_array_remove_index_fast(workers, i);
      return true;
    }
  }
  return false;
}

static void describe_signal(sbx_zygote_exit *e, const char *prefix) {
  g_snprintf(e->detail, sizeof e->detail, "%s signal %d (%s)", prefix,
             e->signal, g_strsignal(e->signal));
}

static void fill_exit(const sbx_zygote_exited *ex, pid_t host_pid,
                      sbx_zygote_exit *e) {
  memset(e, 0, sizeof *e);
  e->pid = host_pid;
  e->syscall_nr = -1;
  int st = ex->wait_status;
  if (ex->report.kind == SBX_REPORT_POLICY_KILL) {
    e->reason = SBX_ZYGOTE_EXIT_POLICY_KILL;
    e->signal = SIGSYS;
    e->syscall_nr = ex->report.nr;
    memcpy(e->syscall_args, ex->report.args, sizeof e->syscall_args);
    g_autofree char *d = sbx_report_describe(&ex->report);
    g_snprintf(e->detail, sizeof e->detail, "policy kill: %s", d);
  } else if (ex->report.kind == SBX_REPORT_SETUP_FAILED) {
    e->reason = SBX_ZYGOTE_EXIT_SETUP_FAILED;
    e->exit_code = WEXITSTATUS(st);
    g_autofree char *d = sbx_report_describe(&ex->report);
    g_snprintf(e->detail, sizeof e->detail, "sandbox setup failed: %s", d);
  } else if (WIFEXITED(st)) {
    e->reason = SBX_ZYGOTE_EXIT_NORMAL;
    e->exit_code = WEXITSTATUS(st);
    g_snprintf(e->detail, sizeof e->detail, "exited with status %d",
               e->exit_code);
  } else if (WIFSIGNALED(st)) {
    e->reason = SBX_ZYGOTE_EXIT_SIGNALED;
    e->signal = WTERMSIG(st);
    /* No report: the handler never ran. The kernel reports both ways
     * alike (it resets the handler either way), but a worker that obeys
     * its sandbox never blocks SIGSYS, so the verdict comes first. */
    describe_signal(e, e->signal == SIGSYS
                           ? "killed by a seccomp kill verdict (a call from "
                             "another architecture, an x32 number or a kill "
                             "rule; or a trap with SIGSYS blocked),"
                           : "killed by");
  } else {
    e->reason = SBX_ZYGOTE_EXIT_SIGNALED;
    g_snprintf(e->detail, sizeof e->detail, "ended (wait status 0x%x)", st);
  }
}

/* Each of workers (worker_pid) ended with the zygote: an exit for it in
 * exits (sbx_zygote_exit), and workers emptied. */
static void report_killed_with_zygote(GArray *workers, GArray *exits,
                                      const char *how) {
  for (guint i = 0; i < workers->len; i++) {
    sbx_zygote_exit e;
    memset(&e, 0, sizeof e);
    e.pid = g_array_index(workers, worker_pid, i).host_pid;
    e.reason = SBX_ZYGOTE_EXIT_ZYGOTE_DIED;
    e.signal = SIGKILL;
    e.syscall_nr = -1;
    g_snprintf(e.detail, sizeof e.detail,
               "killed with its zygote (the zygote %s)", how);
    g_array_append_val(exits, e);
  }
  g_array_set_size(workers, 0);
}

/* The zygote is gone: it took its workers with it. Its socket stays open
 * (at end of file) until sbx_zygote_stop. With z->lock held. */
static void zygote_gone(sbx_zygote *z) {
  if (g_atomic_int_get(&z->gone))
    return;
  g_atomic_int_set(&z->gone, 1);
  g_autofree char *how = reap_zygote(z);
  report_killed_with_zygote(z->workers, z->pending, how);
  report_killed_with_zygote(z->held, z->held_exits, how);
  g_array_set_size(z->abandoned_requests, 0);
  g_array_set_size(z->abandoned_workers, 0);
}

typedef struct {
  uint32_t request_id; /* 0: none awaited */
  uint32_t type;       /* the reply's message type */
  char body[sizeof(sbx_zygote_spawn_failed) + sizeof(sbx_zygote_status)];
  pid_t cred_pid;
  bool done;
  bool hold;                  /* the worker goes to held, not workers */
  void (*on_sent)(void *ctx); /* sbx_zygote_spawn_request.on_sent */
  void *on_sent_ctx;
} awaited_reply;

static bool take_request(GArray *ids, uint32_t id) {
  for (guint i = 0; i < ids->len; i++) {
    if (g_array_index(ids, uint32_t, i) == id) {
      g_array_remove_index_fast(ids, i);
      return true;
    }
  }
  return false;
}

static bool take_abandoned_worker(GArray *pids, pid_t pid) {
  for (guint i = 0; i < pids->len; i++) {
    if (g_array_index(pids, pid_t, i) == pid) {
      g_array_remove_index_fast(pids, i);
      return true;
    }
  }
  return false;
}

/* A spawn reply that came after its request timed out: the caller was
 * told the spawn failed and will never wait for this worker, so it is
 * killed, and its exit is not reported. */
static void kill_abandoned(sbx_zygote *z, const sbx_zygote_header *h,
                           const char *body, pid_t cred) {
  if (h->type != SBX_ZMSG_SPAWNED ||
      h->body_len != sizeof(sbx_zygote_spawned) || cred <= 0)
    return;
  sbx_zygote_spawned ok;
  memcpy(&ok, body, sizeof ok);
  kill(cred, SIGKILL);
  g_array_append_val(z->abandoned_workers, ok.zygote_pid);
}

static awaited_reply *find_awaited(sbx_zygote *z, uint32_t request_id) {
  for (guint i = 0; request_id && i < z->awaited->len; i++) {
    awaited_reply *a = g_ptr_array_index(z->awaited, i);
    if (a->request_id == request_id)
      return a;
  }
  return NULL;
}

/* Hands a reply to the thread that awaits it. A new worker joins the
 * table here, by whichever thread reads the reply: its exit report may be
 * in the very next message, before the spawning thread runs again. */
static void deliver(sbx_zygote *z, awaited_reply *a, const sbx_zygote_header *h,
                    const char *body, pid_t cred) {
  a->type = h->type;
  memcpy(a->body, body, h->body_len);
  a->cred_pid = cred;
  a->done = true;
  if (h->type == SBX_ZMSG_SPAWNED &&
      h->body_len == sizeof(sbx_zygote_spawned) && cred > 0) {
    sbx_zygote_spawned ok;
    memcpy(&ok, body, sizeof ok);
    worker_pid w = {.zygote_pid = ok.zygote_pid, .host_pid = cred};
    g_array_append_val(a->hold ? z->held : z->workers, w);
  }
}

/* Reads one message if there is one (1; 0 when there was none or the
 * zygote is gone): queues exits, hands replies to the threads awaiting
 * them. -1 with an error only for a failure to read. With z->lock held. */
static int read_one(sbx_zygote *z, GError **error) {
  union {
    char bytes[1024];
    sbx_zygote_header h;
  } buf;
  ssize_t n;
  pid_t cred = 0;
  if (!recv_message(z, buf.bytes, sizeof buf.bytes, &n, &cred, error))
    return -1;
  if (n < 0)
    return 0;
  if (n == 0) {
    zygote_gone(z);
    return 0;
  }
  const sbx_zygote_header *h = &buf.h;
  const char *body = buf.bytes + sizeof *h;
  /* Without a pid namespace of its own the zygote names a new worker by
   * its pid, which is the host's too (server.h). */
  if (!z->own_pid_ns && h->type == SBX_ZMSG_SPAWNED &&
      h->body_len == sizeof(sbx_zygote_spawned)) {
    sbx_zygote_spawned named;
    memcpy(&named, body, sizeof named);
    cred = named.zygote_pid;
  }
  if (h->type == SBX_ZMSG_EXITED && h->body_len == sizeof(sbx_zygote_exited)) {
    sbx_zygote_exited ex;
    memcpy(&ex, body, sizeof ex);
    pid_t host = take_host_pid(z->workers, ex.zygote_pid);
    GArray *exits = z->pending;
    if (host <= 0) {
      host = take_host_pid(z->held, ex.zygote_pid);
      exits = z->held_exits;
    }
    if (host > 0) {
      sbx_zygote_exit e;
      fill_exit(&ex, host, &e);
      g_array_append_val(exits, e);
    } else {
      take_abandoned_worker(z->abandoned_workers, ex.zygote_pid);
    }
    return 1;
  }
  awaited_reply *a = find_awaited(z, h->request_id);
  if (a && !a->done && h->body_len <= sizeof a->body)
    deliver(z, a, h, body, cred);
  else if (h->request_id && take_request(z->abandoned_requests, h->request_id))
    kill_abandoned(z, h, body, cred);
  return 1;
}

/* With z->lock held. */
static gboolean zygote_dead_error(sbx_zygote *z, GError **error) {
  g_autofree char *how = reap_zygote(z);
  g_set_error(error, SBX_ZYGOTE_ERROR, SBX_ZYGOTE_ERROR_DIED,
              "zygote: the zygote %s; no worker is left", how);
  return FALSE;
}

static gint64 now_ms(void) {
  return g_get_monotonic_time() / 1000;
}

/* Waits until the socket has one of events or deadline_ms (-1: none)
 * passes: 1 ready, 0 timed out, -errno. */
static int wait_socket(const sbx_zygote *z, short events, gint64 deadline_ms) {
  for (;;) {
    int wait_ms = -1;
    if (deadline_ms >= 0) {
      gint64 left = deadline_ms - now_ms();
      wait_ms = left > 0 ? (int)MIN(left, G_MAXINT) : 0;
    }
    struct pollfd pfd = {.fd = z->sock, .events = events};
    int r = poll(&pfd, 1, wait_ms);
    if (r < 0 && errno == EINTR)
      continue;
    return r < 0 ? -errno : r;
  }
}

/* With z->lock held: lets time pass until something may have changed or
 * deadline_ms (-1: none) passes; the caller checks what it waits for
 * again either way. If no thread reads the socket, this one does (without
 * the lock while it polls) and reads every message that came; otherwise
 * it sleeps until the reader has read or stepped down. So no thread takes
 * another's reply for good, a long wait on one thread stalls no other
 * thread's spawn, and every deadline is kept. FALSE with an error only
 * for a failure to poll or read. */
static gboolean await_news(sbx_zygote *z, gint64 deadline_ms, GError **error) {
  if (z->reading) {
    if (deadline_ms < 0)
      g_cond_wait(&z->news, &z->lock);
    else
      g_cond_wait_until(&z->news, &z->lock, deadline_ms * 1000);
    return TRUE;
  }
  z->reading = true;
  g_mutex_unlock(&z->lock);
  int r = wait_socket(z, POLLIN, deadline_ms);
  g_mutex_lock(&z->lock);
  z->reading = false;
  int got = r > 0 ? 1 : 0;
  while (got > 0)
    got = read_one(z, error);
  g_cond_broadcast(&z->news);
  if (r < 0) {
    g_set_error(error, SBX_ZYGOTE_ERROR, SBX_ZYGOTE_ERROR_FAILED,
                "zygote: poll on its socket: %s", g_strerror(-r));
    return FALSE;
  }
  return got == 0;
}

static gboolean transact_failed(sbx_zygote *z, const char *what, int err,
                                GError **error) {
  if (err == ETIMEDOUT)
    g_set_error(error, SBX_ZYGOTE_ERROR, SBX_ZYGOTE_ERROR_FAILED,
                "zygote: no reply to the %s request within %d ms (the "
                "zygote, pid %d, is stopped or stuck)",
                what, SBX_ZYGOTE_REPLY_TIMEOUT_MS, (int)z->pid);
  else
    g_set_error(error, SBX_ZYGOTE_ERROR, SBX_ZYGOTE_ERROR_FAILED,
                "zygote: %s request: %s", what, g_strerror(err));
  return FALSE;
}

/* Sends one request, without the lock: a SOCK_SEQPACKET message is
 * atomic, so requests of several threads never interleave. 0 or -errno
 * (-ETIMEDOUT when the socket stayed full until deadline_ms). */
static int send_request(sbx_zygote *z, uint32_t type, uint32_t request_id,
                        const void *body, size_t body_len, const int *fds,
                        size_t n_fds, gint64 deadline_ms) {
  for (;;) {
    int rc = sbx_zygote_send(z->sock, type, request_id, body, body_len, fds,
                             n_fds, 0);
    if (rc != -EAGAIN)
      return rc;
    int r = wait_socket(z, POLLOUT, deadline_ms);
    if (r <= 0)
      return r == 0 ? -ETIMEDOUT : r;
  }
}

/* Sends a request and waits for its reply, within
 * SBX_ZYGOTE_REPLY_TIMEOUT_MS; safe from any thread. The reply is matched
 * by its request id, whichever thread reads it. reply comes zeroed but
 * for hold. With z->lock held. */
static gboolean transact(sbx_zygote *z, uint32_t type, const char *what,
                         const void *body, size_t body_len, const int *fds,
                         size_t n_fds, awaited_reply *reply, GError **error) {
  if (z->gone)
    return zygote_dead_error(z, error);
  reply->request_id = z->next_request++;
  if (z->next_request == 0)
    z->next_request = 1;
  g_ptr_array_add(z->awaited, reply);
  gint64 deadline = now_ms() + SBX_ZYGOTE_REPLY_TIMEOUT_MS;
  g_mutex_unlock(&z->lock);
  int rc = send_request(z, type, reply->request_id, body, body_len, fds, n_fds,
                        deadline);
  if (rc == 0 && reply->on_sent)
    reply->on_sent(reply->on_sent_ctx);
  g_mutex_lock(&z->lock);
  gboolean ok = rc == 0;
  if (rc == -EPIPE || rc == -ECONNRESET)
    zygote_gone(z);
  else if (rc < 0)
    transact_failed(z, what, -rc, error);
  while (ok && !reply->done && !z->gone && now_ms() < deadline)
    ok = await_news(z, deadline, error);
  g_ptr_array_remove_fast(z->awaited, reply);
  if (reply->done)
    return TRUE;
  if (z->gone)
    return zygote_dead_error(z, error);
  if (!ok)
    return FALSE;
  if (type == SBX_ZMSG_SPAWN)
    g_array_append_val(z->abandoned_requests, reply->request_id);
  return transact_failed(z, what, ETIMEDOUT, error);
}

static gssize find_type(const sbx_zygote *z, const char *name) {
  for (size_t i = 0; name && i < z->n_types; i++) {
    if (strcmp(z->type_names[i], name) == 0)
      return (gssize)i;
  }
  return -1;
}

gboolean sbx_zygote_spawn(sbx_zygote *z, const sbx_zygote_spawn_request *req,
                          pid_t *pid, GError **error) {
  *pid = -1;
  gssize type = find_type(z, req->process_type);
  if (type < 0) {
    g_set_error(error, SBX_ZYGOTE_ERROR, SBX_ZYGOTE_ERROR_INVALID,
                "spawn: unknown process type \"%s\"",
                req->process_type ? req->process_type : "(null)");
    return FALSE;
  }
  if (req->payload_len && !req->payload) {
    g_set_error(error, SBX_ZYGOTE_ERROR, SBX_ZYGOTE_ERROR_INVALID,
                "spawn: payload_len is %zu but payload is NULL",
                req->payload_len);
    return FALSE;
  }
  if (req->payload_len > SBX_ZYGOTE_MAX_PAYLOAD) {
    g_set_error(error, SBX_ZYGOTE_ERROR, SBX_ZYGOTE_ERROR_INVALID,
                "spawn: the payload is %zu bytes; it must be at most %d",
                req->payload_len, SBX_ZYGOTE_MAX_PAYLOAD);
    return FALSE;
  }
  if (req->n_fds && !req->fds) {
    g_set_error(error, SBX_ZYGOTE_ERROR, SBX_ZYGOTE_ERROR_INVALID,
                "spawn: n_fds is %zu but fds is NULL", req->n_fds);
    return FALSE;
  }
  if (req->n_fds > SBX_ZYGOTE_MAX_FDS) {
    g_set_error(error, SBX_ZYGOTE_ERROR, SBX_ZYGOTE_ERROR_INVALID,
                "spawn: %zu descriptors given; at most %d", req->n_fds,
                SBX_ZYGOTE_MAX_FDS);
    return FALSE;
  }
  bool channel = req->broker_channel >= 0;
  if (channel != z->type_uses_broker[type]) {
    g_set_error(error, SBX_ZYGOTE_ERROR, SBX_ZYGOTE_ERROR_INVALID,
                channel ? "spawn: process type \"%s\" does not use the broker"
                        : "spawn: process type \"%s\" needs a broker channel",
                req->process_type);
    return FALSE;
  }
  for (size_t i = 0; i < req->n_fds; i++) {
    if (fcntl(req->fds[i], F_GETFD) < 0) {
      g_set_error(error, SBX_ZYGOTE_ERROR, SBX_ZYGOTE_ERROR_INVALID,
                  "spawn: descriptor %d (slot %zu) is not open", req->fds[i],
                  i);
      return FALSE;
    }
  }

  size_t body_len = sizeof(sbx_zygote_spawn_body) + req->payload_len;
  g_autofree unsigned char *body = g_malloc(body_len);
  sbx_zygote_spawn_body head = {
      .process_type = (uint32_t)type,
      .n_fds = (uint32_t)req->n_fds,
      .flags = (channel ? SBX_ZSPAWN_HAS_BROKER_CHANNEL : 0) |
               (req->with_messages ? SBX_ZSPAWN_HAS_MESSAGE_CHANNEL : 0),
      .payload_len = (uint32_t)req->payload_len,
  };
  memcpy(body, &head, sizeof head);
  if (req->payload_len)
    memcpy(body + sizeof head, req->payload, req->payload_len);
  int fds[SBX_ZYGOTE_MAX_FDS + 2];
  size_t n_sent = req->n_fds;
  if (req->n_fds)
    memcpy(fds, req->fds, req->n_fds * sizeof(int));
  if (channel)
    fds[n_sent++] = req->broker_channel;
  if (req->with_messages)
    fds[n_sent++] = req->message_channel;

  awaited_reply reply = {.hold = req->held,
                         .on_sent = req->on_sent,
                         .on_sent_ctx = req->on_sent_ctx};
  g_mutex_lock(&z->lock);
  gboolean ok = transact(z, SBX_ZMSG_SPAWN, "spawn", body, body_len, fds,
                         n_sent, &reply, error);
  g_mutex_unlock(&z->lock);
  if (!ok)
    return FALSE;
  if (reply.type == SBX_ZMSG_SPAWN_FAILED) {
    sbx_zygote_spawn_failed f;
    memcpy(&f, reply.body, sizeof f);
    f.what[sizeof f.what - 1] = '\0';
    g_set_error(error, SBX_ZYGOTE_ERROR, SBX_ZYGOTE_ERROR_FAILED,
                "spawn: %s: %s", f.what, g_strerror(f.error));
    return FALSE;
  }
  /* A reply that names the worker put it in the table (deliver). */
  if (reply.type != SBX_ZMSG_SPAWNED || reply.cred_pid <= 0) {
    g_set_error(error, SBX_ZYGOTE_ERROR, SBX_ZYGOTE_ERROR_FAILED,
                "spawn: the zygote's reply did not name the worker");
    return FALSE;
  }
  *pid = reply.cred_pid;
  return TRUE;
}

static bool take_exit(GArray *exits, pid_t pid, sbx_zygote_exit *exit) {
  for (guint i = 0; i < exits->len; i++) {
    sbx_zygote_exit *e = &g_array_index(exits, sbx_zygote_exit, i);
    if (pid == -1 || e->pid == pid) {
      *exit = *e;
      g_array_remove_index(exits, i);
      return true;
    }
  }
  return false;
}

static bool is_live(const sbx_zygote *z, pid_t pid) {
  for (guint i = 0; i < z->workers->len; i++) {
    if (g_array_index(z->workers, worker_pid, i).host_pid == pid)
      return true;
  }
  return false;
}

/* With z->lock held: the wait's result once it has one, else -1. */
static int wait_result(sbx_zygote *z, pid_t pid, sbx_zygote_exit *exit,
                       GError **error) {
  if (take_exit(z->pending, pid, exit))
    return TRUE;
  if (z->gone)
    return zygote_dead_error(z, error);
  if (pid != -1 && !is_live(z, pid)) {
    g_set_error(error, SBX_ZYGOTE_ERROR, SBX_ZYGOTE_ERROR_INVALID,
                "wait: %d is not a worker of this zygote (or was already "
                "waited for)",
                (int)pid);
    return FALSE;
  }
  if (pid == -1 && z->workers->len == 0) {
    g_set_error(error, SBX_ZYGOTE_ERROR, SBX_ZYGOTE_ERROR_INVALID,
                "wait: no worker is running");
    return FALSE;
  }
  return -1;
}

gboolean sbx_zygote_wait(sbx_zygote *z, pid_t pid, int timeout_ms,
                         sbx_zygote_exit *exit, GError **error) {
  memset(exit, 0, sizeof *exit);
  gint64 deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
  g_mutex_lock(&z->lock);
  int result;
  /* At least one look at the socket, even for a timeout of 0. */
  bool looked = false;
  while ((result = wait_result(z, pid, exit, error)) < 0) {
    if (looked && deadline >= 0 && now_ms() >= deadline) {
      g_set_error(error, SBX_ZYGOTE_ERROR, SBX_ZYGOTE_ERROR_TIMED_OUT,
                  "wait: no worker ended within %d ms", timeout_ms);
      result = FALSE;
      break;
    }
    if (!await_news(z, deadline, error)) {
      g_prefix_error(error, "wait: ");
      result = FALSE;
      break;
    }
    looked = true;
  }
  g_mutex_unlock(&z->lock);
  return result;
}

void sbx_zygote_release(sbx_zygote *z, pid_t pid) {
  g_mutex_lock(&z->lock);
  worker_pid w;
  sbx_zygote_exit e;
  if (take_worker(z->held, pid, &w))
    g_array_append_val(z->workers, w);
  else if (take_exit(z->held_exits, pid, &e))
    g_array_append_val(z->pending, e);
  g_mutex_unlock(&z->lock);
}

static bool has_pid(const GArray *pids, pid_t pid) {
  for (guint i = 0; i < pids->len; i++) {
    if (g_array_index(pids, pid_t, i) == pid)
      return true;
  }
  return false;
}

void sbx_zygote_discard(sbx_zygote *z, pid_t pid) {
  g_mutex_lock(&z->lock);
  worker_pid w;
  sbx_zygote_exit e;
  if (take_worker(z->held, pid, &w)) {
    kill(w.host_pid, SIGKILL);
    g_array_append_val(z->abandoned_workers, w.zygote_pid);
    /* Its exit report is read (and dropped, read_one) here, so that the
     * worker is gone when this returns. */
    gint64 deadline = now_ms() + SBX_ZYGOTE_REPLY_TIMEOUT_MS;
    while (!z->gone && has_pid(z->abandoned_workers, w.zygote_pid) &&
           now_ms() < deadline) {
      GError *error = NULL;
      if (!await_news(z, deadline, &error)) {
        g_clear_error(&error);
        break;
      }
    }
  } else {
    take_exit(z->held_exits, pid, &e);
  }
  g_mutex_unlock(&z->lock);
}

gboolean sbx_zygote_query(sbx_zygote *z, sbx_zygote_status *status,
                          GError **error) {
  awaited_reply reply = {0};
  g_mutex_lock(&z->lock);
  gboolean ok =
      transact(z, SBX_ZMSG_STATUS, "status", NULL, 0, NULL, 0, &reply, error);
  g_mutex_unlock(&z->lock);
  if (!ok)
    return FALSE;
  if (reply.type != SBX_ZMSG_STATUS_REPLY) {
    g_set_error(error, SBX_ZYGOTE_ERROR, SBX_ZYGOTE_ERROR_FAILED,
                "zygote: unexpected reply %u to a status request", reply.type);
    return FALSE;
  }
  memcpy(status, reply.body, sizeof *status);
  return TRUE;
}

int sbx_zygote_fd(const sbx_zygote *z) {
  return g_atomic_int_get(&z->gone) ? -1 : z->sock;
}

pid_t sbx_zygote_pid(const sbx_zygote *z) {
  return z->pid;
}

void sbx_zygote_kill(sbx_zygote *z) {
  if (!z)
    return;
  g_mutex_lock(&z->lock);
  if (z->pid > 0 && !z->dead)
    kill(z->pid, SIGKILL);
  g_mutex_unlock(&z->lock);
  /* End of file for the thread that polls the socket, at once. */
  if (z->sock >= 0)
    shutdown(z->sock, SHUT_RDWR);
}

void sbx_zygote_stop(sbx_zygote *z) {
  if (!z)
    return;
  if (z->pid > 0 && !z->dead) {
    /* Its pid namespace takes every remaining worker with it. */
    kill(z->pid, SIGKILL);
    sbx_reap_child(z->pid, SBX_ZYGOTE_REAP_TIMEOUT_MS, NULL);
    z->dead = true;
  }
  if (z->sock >= 0)
    close(z->sock);
  g_free(z->type_names);
  g_free(z->type_uses_broker);
  g_array_unref(z->workers);
  g_array_unref(z->held);
  g_array_unref(z->held_exits);
  g_array_unref(z->pending);
  g_array_unref(z->abandoned_requests);
  g_array_unref(z->abandoned_workers);
  g_ptr_array_unref(z->awaited);
  g_cond_clear(&z->news);
  g_mutex_clear(&z->lock);
  g_free(z);
}
