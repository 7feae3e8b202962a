/* The fresh zygote's start data, written by the host and read back by the
 * exec'd zygote; see fresh.h.
 *
 * The file is one GVariant: a magic number, the worker table's capacity,
 * the host's namespace reference, and per type its name, layer flags,
 * resource limits, filters (name, instructions, self-pid relocations),
 * whether it uses the broker and Landlock, the Landlock report, whether
 * it collects its status, the entry's plain data, the listener's filter
 * and the size of its warm pool. Plain structs
 * (limits, the namespace reference, the Landlock report) travel as bytes:
 * both ends are the same executable, and their sizes are checked. The
 * Landlock report's reason strings are pointers and do not travel (the
 * zygote never prints them).
 */
#include "sandbox/zygote/fresh.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/base/sealed.h"
#include "sandbox/layers/plan.h"
#include "sandbox/zygote/protocol.h"

#define START_MAGIC 0x53425a31u /* "SBZ1" */
#define TYPE_TYPE "(suaya(sayau)bbaybayiu)"
#define START_TYPE "(utaya" TYPE_TYPE "ay)"

bool sbx_zygote_fresh_marked(int argc, char **argv) {
  return argc >= 2 && argv && argv[1] &&
         strcmp(argv[1], SBX_ZYGOTE_FRESH_ARG) == 0;
}

/* ---- Host side ------------------------------------------------------- */

static GVariant *bytes_of(const void *data, size_t len) {
  return g_variant_new_fixed_array(G_VARIANT_TYPE_BYTE, len ? data : NULL, len,
                                   1);
}

static GVariant *type_variant(const sbx_worker_plan *plan,
                              const sbx_zygote_type *type) {
  const sbx_layer_plan *l = &plan->layers;
  GVariantBuilder filters;
  g_variant_builder_init(&filters, G_VARIANT_TYPE("a(sayau)"));
  for (size_t j = 0; j < l->n_filters; j++) {
    const sbx_bpf_program *p = &l->filters[j].program;
    g_variant_builder_add_value(
        &filters,
        g_variant_new("(s@ay@au)", l->filters[j].name,
                      bytes_of(p->insns, p->len * sizeof *p->insns),
                      g_variant_new_fixed_array(
                          G_VARIANT_TYPE_UINT32,
                          p->n_self_pid_relocs ? p->self_pid_relocs : NULL,
                          p->n_self_pid_relocs, sizeof(uint32_t))));
  }
  sbx_landlock_report report = l->landlock;
  for (size_t d = 0; d < SBX_LANDLOCK_MAX_DROPS; d++)
    report.drops[d].reason = NULL;
  return g_variant_new(
      "(su@ay@a(sayau)bb@ayb@ayiu)", l->process_type, (guint32)l->flags,
      bytes_of(l->rlimits, l->n_rlimits * sizeof *l->rlimits),
      g_variant_builder_end(&filters), (gboolean)l->broker,
      (gboolean)(l->landlock_fd >= 0), bytes_of(&report, sizeof report),
      (gboolean)l->collect_status,
      bytes_of(type->entry_data, type->entry_data ? type->entry_data_len : 0),
      (gint32)l->listener_filter, (guint32)plan->pool);
}

int sbx_zygote_fresh_write(const sbx_zygote_server *s,
                           const sbx_zygote_config *config, int **rulesets,
                           size_t *n_rulesets, GError **error) {
  GVariantBuilder types;
  g_variant_builder_init(&types, G_VARIANT_TYPE("a" TYPE_TYPE));
  int *fds = g_new(int, s->n_plans + 1);
  size_t n = 0;
  for (size_t i = 0; i < s->n_plans; i++) {
    g_variant_builder_add_value(&types,
                                type_variant(&s->plans[i], &config->types[i]));
    if (s->plans[i].layers.landlock_fd >= 0)
      fds[n++] = s->plans[i].layers.landlock_fd;
  }
  g_autoptr(GVariant) all = g_variant_ref_sink(g_variant_new(
      "(ut@ay@a" TYPE_TYPE "@ay)", START_MAGIC, (guint64)s->capacity,
      bytes_of(&s->ns_reference, sizeof s->ns_reference),
      g_variant_builder_end(&types),
      bytes_of(s->direct_binds, s->direct_binds_len)));
  int fd = sbx_sealed_file("sbx-zygote-start", 0, g_variant_get_data(all),
                           g_variant_get_size(all));
  if (fd < 0) {
    int err = errno;
    g_set_error(error, SBX_ZYGOTE_ERROR, SBX_ZYGOTE_ERROR_FAILED,
                "zygote: writing its start data to a memory file: %s",
                g_strerror(err));
    g_free(fds);
    return -1;
  }
  *rulesets = fds;
  *n_rulesets = n;
  return fd;
}

/* ---- The exec'd zygote ----------------------------------------------- */

static G_GNUC_NORETURN void fresh_failed(const char *what, const GError *e) {
  char msg[512];
  int n = g_snprintf(msg, sizeof msg, "fresh zygote: %s%s%s", what,
                     e ? ": " : "", e ? e->message : "");
  size_t len = MIN((size_t)MAX(n, 0), sizeof msg - 1);
  /* The host waits for this; a program started with the marker by anyone
   * else has no such socket, and says it on stderr. */
  sbx_zygote_send(SBX_ZYGOTE_FRESH_SOCK_FD, SBX_ZMSG_INIT_FAILED, 0, msg,
                  len + 1, NULL, 0, 0);
  g_printerr("sbx: %s\n", msg);
  _exit(1);
}

/* The start data: a sealed memory file only the host can have written. */
static GVariant *read_start(GError **error) {
  int fd = SBX_ZYGOTE_FRESH_DATA_FD;
  struct stat st;
  int seals = fcntl(fd, F_GET_SEALS);
  if (fstat(fd, &st) != 0 || seals < 0 ||
      (seals & SBX_SEALED_ALL) != SBX_SEALED_ALL || st.st_size <= 0 ||
      st.st_size > 64 * 1024 * 1024) {
    g_set_error(error, SBX_ZYGOTE_ERROR, SBX_ZYGOTE_ERROR_INVALID,
                "descriptor %d is not the sealed start data a host writes: "
                "this program was not started by libsbx as a zygote (argv[1] "
                "%s is libsbx's marker)",
                fd, SBX_ZYGOTE_FRESH_ARG);
    return NULL;
  }
  char *data = g_malloc((gsize)st.st_size);
  if (pread(fd, data, (size_t)st.st_size, 0) != st.st_size) {
    int err = errno;
    g_free(data);
    g_set_error(error, SBX_ZYGOTE_ERROR, SBX_ZYGOTE_ERROR_FAILED,
                "reading the start data: %s", g_strerror(err));
    return NULL;
  }
  close(fd);
  GVariant *all = g_variant_ref_sink(
      g_variant_new_from_data(G_VARIANT_TYPE(START_TYPE), data,
                              (gsize)st.st_size, FALSE, g_free, data));
  guint32 magic = 0;
  if (g_variant_is_normal_form(all))
    g_variant_get_child(all, 0, "u", &magic);
  if (magic != START_MAGIC) {
    g_variant_unref(all);
    g_set_error(error, SBX_ZYGOTE_ERROR, SBX_ZYGOTE_ERROR_INVALID,
                "the start data is malformed or of another version");
    return NULL;
  }
  return all;
}

static const void *fixed(GVariant *v, gsize elem, gsize *n) {
  gsize len = 0;
  const void *p = g_variant_get_fixed_array(v, &len, elem);
  *n = len;
  return p;
}

static gboolean load_type(GVariant *v, sbx_worker_plan *plan, size_t *ruleset,
                          const sbx_zygote_fresh_hooks *hooks, GError **error) {
  const char *name;
  guint32 flags;
  gboolean broker, landlock, collect_status;
  g_autoptr(GVariant) limits = NULL;
  g_autoptr(GVariant) filters = NULL;
  g_autoptr(GVariant) report = NULL;
  g_autoptr(GVariant) entry_data = NULL;
  gint32 listener_filter;
  guint32 pool;
  g_variant_get(v, "(&su@ay@a(sayau)bb@ayb@ayiu)", &name, &flags, &limits,
                &filters, &broker, &landlock, &report, &collect_status,
                &entry_data, &listener_filter, &pool);
  sbx_layer_plan *l = &plan->layers;
  if (!*name || strlen(name) >= SBX_LAYERS_NAME_MAX) {
    g_set_error(error, SBX_ZYGOTE_ERROR, SBX_ZYGOTE_ERROR_INVALID,
                "a process type's name is empty or too long");
    return FALSE;
  }
  sbx_layer_plan_init(l, name, flags);
  /* A byte array in a GVariant has no alignment: structs are copied out
   * of it before they are read. */
  gsize n = 0;
  const void *bytes = fixed(limits, 1, &n);
  g_autofree sbx_rlimit *rl = n ? g_memdup2(bytes, n) : NULL;
  if (n % sizeof *rl != 0 ||
      !sbx_layer_plan_add_rlimits(l, rl, n / sizeof *rl, error))
    goto invalid;
  for (gsize j = 0; j < g_variant_n_children(filters); j++) {
    const char *fname;
    g_autoptr(GVariant) insns = NULL;
    g_autoptr(GVariant) relocs = NULL;
    g_variant_get_child(filters, j, "(&s@ay@au)", &fname, &insns, &relocs);
    gsize n_insns = 0, n_relocs = 0;
    const void *bytes_in = fixed(insns, 1, &n_insns);
    g_autofree void *code = n_insns ? g_memdup2(bytes_in, n_insns) : NULL;
    const void *rel = fixed(relocs, sizeof(uint32_t), &n_relocs);
    sbx_bpf_program p = {
        .insns = (struct sock_filter *)code,
        .len = n_insns / sizeof(struct sock_filter),
        .self_pid_relocs = n_relocs ? (uint32_t *)rel : NULL,
        .n_self_pid_relocs = n_relocs,
    };
    if (n_insns % sizeof(struct sock_filter) != 0 ||
        !sbx_layer_plan_add_filter(l, fname, &p, error))
      goto invalid;
  }
  l->broker = broker;
  l->collect_status = collect_status;
  if (listener_filter < -1 || listener_filter >= (gint32)l->n_filters ||
      (listener_filter >= 0 && (!broker || !hooks->broker_listener_raw)))
    goto invalid;
  l->listener_filter = listener_filter;
  const void *rep = fixed(report, 1, &n);
  if (n != sizeof l->landlock)
    goto invalid;
  memcpy(&l->landlock, rep, n);
  if (landlock) {
    int fd = SBX_ZYGOTE_FRESH_FIRST_RULESET_FD + (int)(*ruleset)++;
    if (fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) {
      g_set_error(error, SBX_ZYGOTE_ERROR, SBX_ZYGOTE_ERROR_INVALID,
                  "process type \"%s\": its Landlock ruleset, descriptor %d, "
                  "is not open",
                  name, fd);
      return FALSE;
    }
    l->landlock_fd = fd;
  }
  const void *data = fixed(entry_data, 1, &n);
  plan->entry = hooks->entry;
  plan->entry_data = n ? g_memdup2(data, n) : NULL;
  plan->broker_attach_raw = hooks->broker_attach_raw;
  plan->broker_listener_raw = hooks->broker_listener_raw;
  if (pool > SBX_ZYGOTE_MAX_POOL)
    goto invalid;
  plan->pool = pool;
  return TRUE;

invalid:
  if (error && !*error)
    g_set_error(error, SBX_ZYGOTE_ERROR, SBX_ZYGOTE_ERROR_INVALID,
                "process type \"%s\": malformed start data", name);
  else
    g_prefix_error(error, "process type \"%s\": ", name);
  return FALSE;
}

static sbx_zygote_server *load(const sbx_zygote_fresh_hooks *hooks,
                               const char *settings, GError **error) {
  g_autoptr(GVariant) all = read_start(error);
  if (!all)
    return NULL;
  guint32 magic;
  guint64 capacity;
  g_autoptr(GVariant) ns_reference = NULL;
  g_autoptr(GVariant) types = NULL;
  g_autoptr(GVariant) binds = NULL;
  g_variant_get(all, "(ut@ay@a" TYPE_TYPE "@ay)", &magic, &capacity,
                &ns_reference, &types, &binds);
  gsize n_types = g_variant_n_children(types);
  gsize n = 0;
  const void *ref = fixed(ns_reference, 1, &n);
  if (n_types == 0 || capacity == 0 || capacity > (1u << 24) ||
      n != sizeof(sbx_ns_reference) || strlen(settings) != 2) {
    g_set_error(error, SBX_ZYGOTE_ERROR, SBX_ZYGOTE_ERROR_INVALID,
                "the start data or the settings argument is malformed");
    return NULL;
  }
  sbx_zygote_server *s =
      sbx_zygote_server_alloc(n_types, (size_t)capacity, error);
  if (!s)
    return NULL;
  memcpy(&s->ns_reference, ref, n);
  gsize n_binds = 0;
  const char *bind_text = fixed(binds, 1, &n_binds);
  if (n_binds && bind_text[n_binds - 1] == '\0') {
    s->direct_binds = g_memdup2(bind_text, n_binds);
    s->direct_binds_len = n_binds;
  }
  size_t ruleset = 0;
  for (gsize i = 0; i < n_types; i++) {
    g_autoptr(GVariant) t = g_variant_get_child_value(types, i);
    if (!load_type(t, &s->plans[i], &ruleset, hooks, error)) {
      sbx_zygote_server_free(s);
      return NULL;
    }
  }
  s->empty_root = settings[0] == 'r';
  s->own_pid_ns = settings[1] == 'p';
  s->register_broker_traps_raw = hooks->register_broker_traps_raw;
  s->broker_client = hooks->broker_client;
  s->devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (s->devnull < 0) {
    g_set_error(error, SBX_ZYGOTE_ERROR, SBX_ZYGOTE_ERROR_FAILED,
                "opening /dev/null: %s", g_strerror(errno));
    sbx_zygote_server_free(s);
    return NULL;
  }
  s->sock = SBX_ZYGOTE_FRESH_SOCK_FD;
  return s;
}

_Noreturn void sbx_zygote_fresh_main(int argc, char **argv,
                                     const sbx_zygote_fresh_hooks *hooks) {
  /* Started from a descriptor, it would be called by that number. */
  prctl(PR_SET_NAME, SBX_ZYGOTE_FRESH_NAME);
  /* Armed by the clone; an exec that changes no credentials keeps it, and
   * arming it again costs nothing. The host's end of the socket closing
   * ends the zygote too (server.h). */
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (fcntl(SBX_ZYGOTE_FRESH_SOCK_FD, F_SETFD, FD_CLOEXEC) != 0)
    fresh_failed(
        "descriptor 3, its socket to the host, is not open: this "
        "program was not started by libsbx as a zygote "
        "(argv[1] " SBX_ZYGOTE_FRESH_ARG " is libsbx's marker)",
        NULL);
  int rc = sbx_zygote_fresh_caps_settle_raw();
  if (rc < 0) {
    GError *e = g_error_new(SBX_ZYGOTE_ERROR, SBX_ZYGOTE_ERROR_FAILED, "%s",
                            g_strerror(-rc));
    fresh_failed("clearing the ambient capabilities", e);
  }
  long threads = sbx_thread_count();
  if (threads != 1) {
    g_autofree char *what = g_strdup_printf(
        "the program runs %ld threads before its main calls the entry hook "
        "(a library's constructor started them?); the zygote forks workers "
        "and must be single-threaded",
        threads);
    fresh_failed(what, NULL);
  }
  GError *error = NULL;
  sbx_zygote_server *s =
      load(hooks, argc >= 3 && argv[2] ? argv[2] : "", &error);
  if (!s)
    fresh_failed("start data", error);
  sbx_zygote_server_main(s);
}
