/* The public status report: see status.h. */
#include "sandbox/api/status.h"

#include <string.h>

#include "sandbox/api/sized.h"
#include "sandbox/base/strbuf.h"

/* The public limits hold every name and filter the engine reports. */
_Static_assert(SBX_NAME_MAX == SBX_LAYERS_NAME_MAX,
               "process type and filter names have one limit");
_Static_assert(SBX_LAYERS_MAX_FILTERS <= SBX_STATUS_MAX_LAYERS,
               "every filter must fit in sbx_sandbox_status");

/* Async-signal-safe. */
static sbx_layer_state from_tri(sbx_tristate t) {
  switch (t) {
    case SBX_TRI_YES:
      return SBX_LAYER_ON;
    case SBX_TRI_NO:
      return SBX_LAYER_OFF;
    default:
      return SBX_LAYER_UNKNOWN;
  }
}

/* Async-signal-safe. */
static sbx_layer_state negate(sbx_tristate t) {
  switch (t) {
    case SBX_TRI_YES:
      return SBX_LAYER_OFF;
    case SBX_TRI_NO:
      return SBX_LAYER_ON;
    default:
      return SBX_LAYER_UNKNOWN;
  }
}

/* Async-signal-safe. */
void sbx_api_status_render(const sbx_process_status *in,
                           sbx_sandbox_status *out) {
  const sbx_layer_status *k = &in->kernel;
  memset(out, 0, sizeof *out);
  out->size = sizeof *out;
  memcpy(out->process_type, in->process_type, SBX_NAME_MAX);
  out->process_type[SBX_NAME_MAX - 1] = '\0';
  out->pid = k->pid;
  out->uid = k->uid;
  out->gid = k->gid;
  out->user_ns = from_tri(k->ns[0]);
  out->pid_ns = from_tri(k->ns[1]);
  out->net_ns = from_tri(k->ns[2]);
  out->ipc_ns = from_tri(k->ns[3]);
  out->uts_ns = from_tri(k->ns[4]);
  out->mount_ns = from_tri(k->ns[5]);
  out->cgroup_ns = from_tri(k->ns[6]);
  out->empty_root = from_tri(k->root_replaced);
  out->no_capabilities = from_tri(k->caps_empty);
  out->no_new_privs = from_tri(k->no_new_privs);
  out->undumpable = negate(k->dumpable);
  out->new_session = from_tri(k->new_session);
  if (k->seccomp_mode < 0)
    out->seccomp = SBX_LAYER_UNKNOWN;
  else
    out->seccomp = k->seccomp_mode == 2 ? SBX_LAYER_ON : SBX_LAYER_OFF;
  out->seccomp_filters = k->seccomp_filters;
  size_t n = in->n_filters < SBX_LAYERS_MAX_FILTERS ? in->n_filters
                                                    : SBX_LAYERS_MAX_FILTERS;
  for (size_t i = 0; i < n; i++) {
    memcpy(out->seccomp_layers[i], in->filters[i], SBX_NAME_MAX);
    out->seccomp_layers[i][SBX_NAME_MAX - 1] = '\0';
  }
  out->n_seccomp_layers = (unsigned)n;
  out->broker = in->broker ? SBX_LAYER_ON : SBX_LAYER_OFF;
  out->landlock = k->landlock == SBX_TRI_YES ? SBX_LAYER_ON : SBX_LAYER_OFF;
  out->landlock_abi = k->landlock == SBX_TRI_YES ? k->landlock_abi : -1;
  out->open_fds = (int)k->open_fds;
  out->fully_sandboxed = in->fully_sandboxed;
}

/* Async-signal-safe. */
static const char *state_word(sbx_layer_state s) {
  switch (s) {
    case SBX_LAYER_ON:
      return "on";
    case SBX_LAYER_OFF:
      return "OFF";
    default:
      return "unknown";
  }
}

/* Async-signal-safe. */
static void add_line(sbx_strbuf *sb, const char *key, sbx_layer_state s) {
  sbx_strbuf_add(sb, key);
  sbx_strbuf_add(sb, ": ");
  sbx_strbuf_add(sb, state_word(s));
  sbx_strbuf_add_char(sb, '\n');
}

/* A name of the caller's struct, which may lack its NUL.
 * Async-signal-safe. */
static void add_name(sbx_strbuf *sb, const char *name) {
  for (size_t i = 0; i < SBX_NAME_MAX && name[i]; i++)
    sbx_strbuf_add_char(sb, name[i]);
}

/* Async-signal-safe. */
static void add_seccomp(sbx_strbuf *sb, const sbx_sandbox_status *st) {
  sbx_strbuf_add(sb, "seccomp: ");
  sbx_strbuf_add(sb, state_word(st->seccomp));
  if (st->seccomp_filters >= 0) {
    sbx_strbuf_add(sb, " (");
    sbx_strbuf_add_i64(sb, st->seccomp_filters);
    sbx_strbuf_add(sb, " filters");
    unsigned n = st->n_seccomp_layers < SBX_STATUS_MAX_LAYERS
                     ? st->n_seccomp_layers
                     : SBX_STATUS_MAX_LAYERS;
    if (n) {
      sbx_strbuf_add(sb, ": ");
      for (unsigned i = 0; i < n; i++) {
        if (i)
          sbx_strbuf_add(sb, ", ");
        add_name(sb, st->seccomp_layers[i]);
      }
    }
    sbx_strbuf_add_char(sb, ')');
  }
  sbx_strbuf_add_char(sb, '\n');
}

/* What each Landlock ABI after the first added: an older kernel's
 * ruleset cannot restrict these, and the report says so. */
static const char *const landlock_added[] = {
    [2] = "file reparenting",
    [3] = "truncation",
    [4] = "TCP bind and connect",
    [5] = "device ioctls",
    [6] = "abstract-socket and signal scopes",
    [7] = "logging flags",
};

/* "; without: truncation, ..." for a kernel below the newest ABI sbx
 * knows. Async-signal-safe. */
static void add_landlock_lacks(sbx_strbuf *sb, int abi) {
  int newest = (int)(sizeof landlock_added / sizeof landlock_added[0]) - 1;
  if (abi >= newest)
    return;
  sbx_strbuf_add(sb, "; without: ");
  for (int i = abi + 1; i <= newest; i++) {
    if (i > abi + 1)
      sbx_strbuf_add(sb, ", ");
    sbx_strbuf_add(sb, landlock_added[i]);
  }
}

/* Async-signal-safe. */
size_t sbx_sandbox_status_format(const sbx_sandbox_status *status, char *buf,
                                 size_t len) {
  if (!buf)
    len = 0;
  if (!status || status->size < sbx_api_sandbox_status.first ||
      status->size > SBX_STRUCT_SIZE_MAX) {
    if (len)
      buf[0] = '\0';
    return 0;
  }
  /* The fields the caller's size covers; the rest read as zero. */
  sbx_sandbox_status copy;
  memset(&copy, 0, sizeof copy);
  memcpy(&copy, status,
         status->size < sizeof copy ? status->size : sizeof copy);
  const sbx_sandbox_status *st = &copy;
  sbx_strbuf sb;
  sbx_strbuf_init(&sb, buf, len);
  sbx_strbuf_add(&sb, "process type: ");
  if (st->process_type[0])
    add_name(&sb, st->process_type);
  else
    sbx_strbuf_add(&sb, "(none)");
  sbx_strbuf_add(&sb, " (pid ");
  sbx_strbuf_add_i64(&sb, st->pid);
  sbx_strbuf_add(&sb, ", uid ");
  sbx_strbuf_add_u64(&sb, st->uid);
  sbx_strbuf_add(&sb, ")\n");
  add_line(&sb, "user namespace", st->user_ns);
  add_line(&sb, "pid namespace", st->pid_ns);
  add_line(&sb, "network namespace", st->net_ns);
  add_line(&sb, "ipc namespace", st->ipc_ns);
  add_line(&sb, "uts namespace", st->uts_ns);
  add_line(&sb, "mount namespace", st->mount_ns);
  add_line(&sb, "empty root", st->empty_root);
  add_line(&sb, "no capabilities", st->no_capabilities);
  add_line(&sb, "no_new_privs", st->no_new_privs);
  add_line(&sb, "undumpable", st->undumpable);
  add_line(&sb, "new session", st->new_session);
  add_seccomp(&sb, st);
  add_line(&sb, "broker", st->broker);
  sbx_strbuf_add(&sb, "landlock: ");
  sbx_strbuf_add(&sb, state_word(st->landlock));
  if (st->landlock_abi > 0) {
    sbx_strbuf_add(&sb, " (abi ");
    sbx_strbuf_add_i64(&sb, st->landlock_abi);
    add_landlock_lacks(&sb, st->landlock_abi);
    sbx_strbuf_add_char(&sb, ')');
  }
  sbx_strbuf_add_char(&sb, '\n');
  sbx_strbuf_add(&sb, "open fds: ");
  if (st->open_fds >= 0)
    sbx_strbuf_add_i64(&sb, st->open_fds);
  else
    sbx_strbuf_add(&sb, "unknown");
  sbx_strbuf_add_char(&sb, '\n');
  sbx_strbuf_add(&sb, "fully sandboxed: ");
  sbx_strbuf_add(&sb, st->fully_sandboxed ? "yes" : "NO");
  sbx_strbuf_add_char(&sb, '\n');
  return sbx_strbuf_finish(&sb);
}
