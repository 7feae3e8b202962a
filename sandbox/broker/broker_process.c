/* The broker process: its configuration, read back, and its main; see
 * broker_process.h.
 *
 * Trusts the configuration (the host wrote it); checks its shape anyway,
 * since a malformed one must fail the start with a message, not crash.
 */
#include "sandbox/broker/broker_process.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/broker/audit.h"
#include "sandbox/broker/broker_sandbox.h"
#include "sandbox/broker/protocol.h"
#include "sandbox/broker/server.h"
#include "sandbox/kernel/namespaces/rlimits.h"

/* The configuration the host wrote, with the objects it names. Lives as
 * long as the broker: the resolvers borrow the allowlists. */
typedef struct {
  sbx_broker_process_config config;
  GPtrArray *lists; /* sbx_allowlist *, owned */
  sbx_bpf_program program;
  sbx_bpf_program *verdicts; /* one per list; len 0: none */
  const sbx_bpf_program **verdict_ptrs;
} loaded_config;

/* One type's verdict program: instructions and relocations, both possibly
 * empty. */
static gboolean read_verdicts(GVariant *v, sbx_bpf_program *out,
                              GError **error) {
  g_autoptr(GVariant) insns = g_variant_get_child_value(v, 0);
  g_autoptr(GVariant) relocs = g_variant_get_child_value(v, 1);
  gsize n_bytes = 0, n_relocs = 0;
  const void *bytes = g_variant_get_fixed_array(insns, &n_bytes, 1);
  const uint32_t *r =
      g_variant_get_fixed_array(relocs, &n_relocs, sizeof(uint32_t));
  if (n_bytes == 0 && n_relocs == 0)
    return TRUE; /* none for this type */
  if (n_bytes % sizeof(struct sock_filter) != 0 || n_bytes == 0) {
    g_set_error(error, SBX_BROKER_ERROR, SBX_BROKER_ERROR_INVALID,
                "a verdict program is malformed (%zu bytes)", (size_t)n_bytes);
    return FALSE;
  }
  if (!sbx_bpf_check(bytes, n_bytes / sizeof(struct sock_filter), error))
    return FALSE;
  sbx_bpf_program p = {
      .insns = (struct sock_filter *)bytes,
      .len = n_bytes / sizeof(struct sock_filter),
      .self_pid_relocs = (uint32_t *)r,
      .n_self_pid_relocs = n_relocs,
  };
  sbx_bpf_program_copy(out, &p);
  return TRUE;
}

static gboolean read_config(int fd, loaded_config *out, GError **error) {
  struct stat st;
  if (fstat(fd, &st) != 0 || st.st_size <= 0) {
    g_set_error(error, SBX_BROKER_ERROR, SBX_BROKER_ERROR_FAILED,
                "the broker's configuration file is unreadable or empty");
    return FALSE;
  }
  g_autofree char *data = g_malloc((gsize)st.st_size);
  if (pread(fd, data, (size_t)st.st_size, 0) != st.st_size) {
    g_set_error(error, SBX_BROKER_ERROR, SBX_BROKER_ERROR_FAILED,
                "reading the broker's configuration: %s", g_strerror(errno));
    return FALSE;
  }
  g_autoptr(GVariant) all = g_variant_ref_sink(
      g_variant_new_from_data(G_VARIANT_TYPE(SBX_BROKER_CONFIG_TYPE), data,
                              (gsize)st.st_size, FALSE, NULL, NULL));
  if (!g_variant_is_normal_form(all)) {
    g_set_error(error, SBX_BROKER_ERROR, SBX_BROKER_ERROR_INVALID,
                "the broker's configuration is malformed");
    return FALSE;
  }
  guint32 parent, max_fds;
  gboolean have_audit, audit_grants, unsandboxed;
  g_autoptr(GVariant) lists = NULL;
  g_autoptr(GVariant) insns = NULL;
  g_autoptr(GVariant) verdicts = NULL;
  gboolean learn;
  g_variant_get(all, "(u@a(suia(ssubb))bbub@ay@a(ayau)b)", &parent, &lists,
                &have_audit, &audit_grants, &max_fds, &unsandboxed, &insns,
                &verdicts, &learn);
  memset(out, 0, sizeof *out);
  out->lists = g_ptr_array_new();
  for (gsize i = 0; i < g_variant_n_children(lists); i++) {
    g_autoptr(GVariant) v = g_variant_get_child_value(lists, i);
    sbx_allowlist *list = sbx_allowlist_from_variant(v, error);
    if (!list)
      return FALSE;
    g_ptr_array_add(out->lists, list);
  }
  if (g_variant_n_children(verdicts) != out->lists->len) {
    g_set_error(error, SBX_BROKER_ERROR, SBX_BROKER_ERROR_INVALID,
                "the broker's configuration has %zu verdict programs for %u "
                "types",
                (size_t)g_variant_n_children(verdicts), out->lists->len);
    return FALSE;
  }
  out->verdicts = g_new0(sbx_bpf_program, out->lists->len + 1);
  out->verdict_ptrs = g_new0(const sbx_bpf_program *, out->lists->len + 1);
  for (guint i = 0; i < out->lists->len; i++) {
    g_autoptr(GVariant) v = g_variant_get_child_value(verdicts, i);
    if (!read_verdicts(v, &out->verdicts[i], error))
      return FALSE;
    out->verdict_ptrs[i] = out->verdicts[i].len ? &out->verdicts[i] : NULL;
  }
  gsize n_bytes = 0;
  const void *bytes = g_variant_get_fixed_array(insns, &n_bytes, 1);
  if (n_bytes % sizeof(struct sock_filter) != 0 ||
      (!unsandboxed && n_bytes == 0)) {
    g_set_error(error, SBX_BROKER_ERROR, SBX_BROKER_ERROR_INVALID,
                "the broker's seccomp program is malformed (%zu bytes)",
                (size_t)n_bytes);
    return FALSE;
  }
  out->program.len = n_bytes / sizeof(struct sock_filter);
  out->program.insns = g_memdup2(bytes, n_bytes);
  out->config = (sbx_broker_process_config){
      .allowlists = (const sbx_allowlist *const *)out->lists->pdata,
      .n_allowlists = out->lists->len,
      .have_audit = have_audit,
      .audit_grants = audit_grants,
      .max_fds = max_fds,
      .dangerously_unsandboxed = unsandboxed,
      .program = &out->program,
      .parent = (pid_t)parent,
      .verdict_programs = out->verdict_ptrs,
      .learn = learn,
  };
  return TRUE;
}

/* ---- main -----------------------------------------------------------------
 */

/* Reports a set-up failure to the waiting host and leaves. */
static void G_GNUC_NORETURN fail(const char *what, const GError *error) {
  char msg[1024];
  int n = g_snprintf(msg, sizeof(msg), "%s%s%s", what, error ? ": " : "",
                     error ? error->message : "");
  if (n > 0)
    send(SBX_BROKER_CONTROL_FD, msg, (size_t)MIN(n, (int)sizeof(msg) - 1),
         MSG_NOSIGNAL);
  _exit(1);
}

_Noreturn void sbx_broker_process_main(void) {
  /* Started from a memory file, it would be called "memfd:sbx-broker". */
  prctl(PR_SET_NAME, SBX_BROKER_PROGRAM_NAME);
  GError *error = NULL;
  loaded_config loaded;
  if (!read_config(SBX_BROKER_CONFIG_FD, &loaded, &error))
    fail("broker: configuration", error);
  close(SBX_BROKER_CONFIG_FD);
  const sbx_broker_process_config *config = &loaded.config;
  /* The parent-death signal survives exec; the host may have died before
   * it was set. */
  if (getppid() != config->parent)
    _exit(1);
  /* Before the sandbox: the sink may be reopened through /proc. */
  sbx_audit audit;
  sbx_audit_open(&audit, config->have_audit ? SBX_BROKER_AUDIT_FD : -1,
                 config->audit_grants, 0);
  /* A channel per live worker: the hard limit bounds them (and the
   * thread channels' share of it, server.c). */
  sbx_rlimit_raise_nofile_raw();
  sbx_broker_server *server = sbx_broker_server_new(&audit);
  /* Learning: the whole file system, for the server's second decision and
   * for the broker's own Landlock (the union of its lists). */
  g_autoptr(GPtrArray) confine = g_ptr_array_new();
  for (size_t i = 0; i < config->n_allowlists; i++)
    g_ptr_array_add(confine, (gpointer)config->allowlists[i]);
  if (config->learn) {
    sbx_allowlist *everything = sbx_allowlist_new("learning");
    if (!sbx_allowlist_add_rule(everything, "create /", &error) ||
        !sbx_broker_server_set_learning(server, everything, &error))
      fail("broker: set-up failed", error);
    g_ptr_array_add(confine, everything);
  }
  for (size_t i = 0; i < config->n_allowlists; i++)
    if (!sbx_broker_server_add_type(server, config->allowlists[i], &error) ||
        (config->verdict_programs && config->verdict_programs[i] &&
         !sbx_broker_server_set_verdicts(server, i, config->verdict_programs[i],
                                         &error)))
      fail("broker: set-up failed", error);

  /* Undumpable (S5) even when dangerously unsandboxed: nobody may read
   * the broker's memory or attach to it. */
  if (!sbx_broker_sandbox_self(
          (const sbx_allowlist *const *)confine->pdata, confine->len,
          config->dangerously_unsandboxed ? NULL : config->program,
          config->max_fds, config->parent, &error))
    fail("broker: cannot sandbox itself", error);

  sbx_broker_control_reply ready;
  memset(&ready, 0, sizeof(ready));
  ready.magic = SBX_BROKER_CONTROL_MAGIC;
  if (send(SBX_BROKER_CONTROL_FD, &ready, sizeof(ready), MSG_NOSIGNAL) < 0)
    _exit(1);
  int rc = sbx_broker_server_run(server, SBX_BROKER_CONTROL_FD);
  _exit(rc == 0 ? 0 : 1);
}
