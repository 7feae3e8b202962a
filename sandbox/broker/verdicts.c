/* The errno verdicts of a worker's seccomp layer; see verdicts.h. */
#include "sandbox/broker/verdicts.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sandbox/base/syscalls.h"
#include "sandbox/layers/self_pid.h"

/* Distinct calls remembered per listener; past it every call is a line
 * of its own, under the worker's audit budget. */
#define MAX_SEEN 256

struct sbx_verdict_listener {
  int fd;
  sbx_bpf_program program; /* the original, patched with the worker's pid */
  uint64_t seen[MAX_SEEN]; /* nr << 32 | errno */
  size_t n_seen;
  bool learning;
};

sbx_verdict_listener *sbx_verdict_listener_new(const sbx_bpf_program *program,
                                               pid_t self, int fd,
                                               bool learning, GError **error) {
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
    int err = errno;
    close(fd);
    g_set_error(error, SBX_BPF_ERROR, SBX_BPF_ERROR_INVALID_PROGRAM,
                "listener descriptor: %s", g_strerror(err));
    return NULL;
  }
  sbx_verdict_listener *l = g_new0(sbx_verdict_listener, 1);
  l->fd = fd;
  l->learning = learning;
  sbx_bpf_program_copy(&l->program, program);
  if (sbx_self_pid_patch(l->program.insns, l->program.len,
                         l->program.self_pid_relocs,
                         l->program.n_self_pid_relocs, self) < 0) {
    g_set_error(error, SBX_BPF_ERROR, SBX_BPF_ERROR_INVALID_PROGRAM,
                "the verdict program's relocations do not fit it");
    sbx_verdict_listener_free(l);
    return NULL;
  }
  return l;
}

void sbx_verdict_listener_free(sbx_verdict_listener *l) {
  if (!l)
    return;
  if (l->fd >= 0)
    close(l->fd);
  sbx_bpf_program_clear(&l->program);
  g_free(l);
}

int sbx_verdict_listener_fd(const sbx_verdict_listener *l) {
  return l->fd;
}

int sbx_verdict_listener_serve(sbx_verdict_listener *l, sbx_unotify_buffers *b,
                               sbx_verdict_heard *heard) {
  int rc = sbx_unotify_recv(l->fd, b);
  if (rc == -ENOENT || rc == -EAGAIN)
    return 0;
  if (rc < 0)
    return rc;
  const struct seccomp_notif *req = b->req;
  uint32_t action =
      sbx_bpf_run_checked(l->program.insns, l->program.len, &req->data, NULL);
  int err = (action & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_ERRNO
                ? (int)(action & SECCOMP_RET_DATA)
                : EPERM;
  if (l->learning)
    err = 0;
  rc = l->learning ? sbx_unotify_continue(l->fd, b, req->id)
                   : sbx_unotify_reply(l->fd, b, req->id, 0, err);
  if (rc == -ENOENT)
    return 0;
  if (rc < 0)
    return rc;
  *heard = (sbx_verdict_heard){
      .pid = (pid_t)req->pid, .nr = req->data.nr, .error = err};
  memcpy(heard->args, req->data.args, sizeof heard->args);
  return 1;
}

bool sbx_verdict_listener_seen(sbx_verdict_listener *l,
                               const sbx_verdict_heard *heard) {
  uint64_t key = (uint64_t)(uint32_t)heard->nr << 32 | (uint32_t)heard->error;
  for (size_t i = 0; i < l->n_seen; i++)
    if (l->seen[i] == key)
      return true;
  if (l->n_seen < MAX_SEEN)
    l->seen[l->n_seen++] = key;
  return false;
}

void sbx_verdict_format_call(const sbx_verdict_heard *heard, char *buf,
                             size_t size) {
  const char *name = sbx_syscall_name(heard->nr);
  char number[32];
  if (!name) {
    snprintf(number, sizeof number, "syscall_%d", heard->nr);
    name = number;
  }
  snprintf(buf, size,
           "%s(0x%" G_GINT64_MODIFIER "x, 0x%" G_GINT64_MODIFIER
           "x, 0x%" G_GINT64_MODIFIER "x, 0x%" G_GINT64_MODIFIER
           "x, 0x%" G_GINT64_MODIFIER "x, 0x%" G_GINT64_MODIFIER "x)",
           name, (guint64)heard->args[0], (guint64)heard->args[1],
           (guint64)heard->args[2], (guint64)heard->args[3],
           (guint64)heard->args[4], (guint64)heard->args[5]);
}
