/* The sandbox status report: see status.h. */
#include "sandbox/layers/status.h"

#include <string.h>

#include "sandbox/base/strbuf.h"
#include "sandbox/kernel/namespaces/fds.h"

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

static void copy_name(char *dst, const char *src) {
  size_t n = src ? strlen(src) : 0;
  if (n >= SBX_NAME_MAX)
    n = SBX_NAME_MAX - 1;
  if (n)
    memcpy(dst, src, n);
  dst[n] = '\0';
}

/* The kernel's view, completed with what only the plan knows. Seccomp's
 * and Landlock's own returns are the kernel's word for the layers
 * installed after the reading. Async-signal-safe. */
static void complete(const sbx_layer_plan *plan, const sbx_layer_status *early,
                     sbx_layer_status *kernel, size_t n_filters,
                     bool landlock) {
  for (int i = 0; early && i < SBX_NS_KINDS; i++) {
    if (kernel->ns[i] == SBX_TRI_UNKNOWN)
      kernel->ns[i] = early->ns[i];
  }
  if (n_filters) {
    int before = kernel->seccomp_filters;
    if (before < 0 && early)
      before = early->seccomp_filters;
    kernel->seccomp_mode = 2;
    kernel->seccomp_filters = before >= 0 ? before + (int)n_filters : -1;
  }
  kernel->landlock = landlock ? SBX_TRI_YES : SBX_TRI_NO;
  kernel->landlock_abi = landlock ? plan->landlock.abi : -1;
  int open_now = sbx_fd_list_open_raw(NULL, 0);
  kernel->open_fds = open_now >= 0 ? open_now : -1;
}

/* Async-signal-safe. */
void sbx_status_finish(const sbx_layer_plan *plan,
                       const sbx_layer_status *early, sbx_layer_status *kernel,
                       size_t n_filters, bool landlock,
                       sbx_sandbox_status *out) {
  complete(plan, early, kernel, n_filters, landlock);
  memset(out, 0, sizeof *out);
  copy_name(out->process_type, plan->process_type);
  out->pid = kernel->pid;
  out->uid = kernel->uid;
  out->gid = kernel->gid;
  out->user_ns = from_tri(kernel->ns[0]);
  out->pid_ns = from_tri(kernel->ns[1]);
  out->net_ns = from_tri(kernel->ns[2]);
  out->ipc_ns = from_tri(kernel->ns[3]);
  out->uts_ns = from_tri(kernel->ns[4]);
  out->mount_ns = from_tri(kernel->ns[5]);
  out->cgroup_ns = from_tri(kernel->ns[6]);
  out->empty_root = from_tri(kernel->root_replaced);
  out->no_capabilities = from_tri(kernel->caps_empty);
  out->no_new_privs = from_tri(kernel->no_new_privs);
  out->undumpable = negate(kernel->dumpable);
  out->new_session = from_tri(kernel->new_session);
  if (kernel->seccomp_mode < 0)
    out->seccomp = SBX_LAYER_UNKNOWN;
  else
    out->seccomp = kernel->seccomp_mode == 2 ? SBX_LAYER_ON : SBX_LAYER_OFF;
  out->seccomp_filters = kernel->seccomp_filters;
  for (size_t i = 0; i < n_filters; i++)
    copy_name(out->seccomp_layers[i], plan->filters[i].name);
  out->n_seccomp_layers = (unsigned)n_filters;
  out->broker = plan->broker ? SBX_LAYER_ON : SBX_LAYER_OFF;
  out->landlock = landlock ? SBX_LAYER_ON : SBX_LAYER_OFF;
  out->landlock_abi = landlock ? plan->landlock.abi : -1;
  out->open_fds = (int)kernel->open_fds;
  out->fully_sandboxed = sbx_status_is_fully_sandboxed(kernel) &&
                         out->landlock == SBX_LAYER_ON &&
                         out->n_seccomp_layers > 0;
}

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

static void add_line(sbx_strbuf *sb, const char *key, sbx_layer_state s) {
  sbx_strbuf_add(sb, key);
  sbx_strbuf_add(sb, ": ");
  sbx_strbuf_add(sb, state_word(s));
  sbx_strbuf_add_char(sb, '\n');
}

/* Async-signal-safe. */
size_t sbx_sandbox_status_format(const sbx_sandbox_status *st, char *buf,
                                 size_t len) {
  sbx_strbuf sb;
  sbx_strbuf_init(&sb, buf, len);
  sbx_strbuf_add(&sb, "process type: ");
  sbx_strbuf_add(&sb, st->process_type[0] ? st->process_type : "(none)");
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
  sbx_strbuf_add(&sb, "seccomp: ");
  sbx_strbuf_add(&sb, state_word(st->seccomp));
  if (st->seccomp_filters >= 0) {
    sbx_strbuf_add(&sb, " (");
    sbx_strbuf_add_i64(&sb, st->seccomp_filters);
    sbx_strbuf_add(&sb, " filters");
    if (st->n_seccomp_layers) {
      sbx_strbuf_add(&sb, ": ");
      for (unsigned i = 0; i < st->n_seccomp_layers; i++) {
        if (i)
          sbx_strbuf_add(&sb, ", ");
        sbx_strbuf_add(&sb, st->seccomp_layers[i]);
      }
    }
    sbx_strbuf_add_char(&sb, ')');
  }
  sbx_strbuf_add_char(&sb, '\n');
  add_line(&sb, "broker", st->broker);
  sbx_strbuf_add(&sb, "landlock: ");
  sbx_strbuf_add(&sb, state_word(st->landlock));
  if (st->landlock_abi > 0) {
    sbx_strbuf_add(&sb, " (abi ");
    sbx_strbuf_add_i64(&sb, st->landlock_abi);
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
