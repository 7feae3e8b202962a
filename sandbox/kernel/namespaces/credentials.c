/* Capabilities, securebits, no_new_privs, dumpability, parent death and
 * session for a sandboxed process. Child-side and async-signal-safe
 * throughout: raw syscalls and prctl, no allocation. Trusts only the
 * kernel; refuses to report success for a set it could not empty. */
#include "sandbox/kernel/namespaces/credentials.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/capability.h>
#include <linux/securebits.h>

#include "sandbox/kernel/namespaces/status.h"

int sbx_creds_die_with_parent_raw(pid_t expected_ppid, int parent_pidfd) {
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0)
    return -errno;
  /* The signal is armed only for a future death: a parent that died
   * before the prctl must be detected here. */
  if (parent_pidfd >= 0) {
    struct pollfd p = {.fd = parent_pidfd, .events = POLLIN};
    int r = poll(&p, 1, 0);
    if (r < 0)
      return -errno;
    if (r > 0)
      return (p.revents & POLLNVAL) ? -EBADF : -ESRCH;
  } else if (expected_ppid > 0 && getppid() != expected_ppid) {
    return -ESRCH;
  }
  return 0;
}

int sbx_creds_new_session_raw(void) {
  return setsid() < 0 ? -errno : 0;
}

int sbx_creds_lock_securebits_raw(void) {
  unsigned long bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED |
                       SECBIT_NO_SETUID_FIXUP | SECBIT_NO_SETUID_FIXUP_LOCKED |
                       SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE |
                       SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
  return prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) != 0 ? -errno : 0;
}

int sbx_creds_drop_bounding_set_raw(void) {
  /* A set the kernel already reports empty (inherited from a zygote that
   * dropped its own) costs one /proc read instead of a call per cap. */
  uint64_t bounding, ambient;
  if (sbx_status_read_bounding_ambient_raw(&bounding, &ambient) == 0 &&
      bounding == 0)
    return 0;
  for (unsigned long cap = 0; cap < 64; cap++) {
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == 0)
      continue;
    if (errno == EINVAL)
      return 0;
    if (errno != EPERM)
      return -errno;
    int in_set = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);
    if (in_set < 0)
      return errno == EINVAL ? 0 : -errno;
    if (in_set)
      return -EPERM;
  }
  return 0;
}

int sbx_creds_clear_capability_sets_raw(void) {
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 &&
      errno != EINVAL)
    return -errno;
  struct __user_cap_header_struct hdr = {.version =
                                             _LINUX_CAPABILITY_VERSION_3};
  struct __user_cap_data_struct data[2] = {{0}};
  if (syscall(SYS_capset, &hdr, data) != 0)
    return -errno;
  return 0;
}

int sbx_creds_holds_capabilities_raw(void) {
  struct __user_cap_header_struct hdr = {.version =
                                             _LINUX_CAPABILITY_VERSION_3};
  struct __user_cap_data_struct data[2] = {{0}};
  if (syscall(SYS_capget, &hdr, data) != 0)
    return -errno;
  for (int i = 0; i < 2; i++) {
    if (data[i].effective | data[i].permitted | data[i].inheritable)
      return 1;
  }
  /* Asked cap by cap: /proc may be gone (an empty root). */
  for (unsigned long cap = 0; cap < 64; cap++) {
    int set = prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, cap, 0, 0);
    if (set < 0)
      return errno == EINVAL ? 0 : -errno;
    if (set)
      return 1;
  }
  return 0;
}

int sbx_creds_drop_capabilities_raw(void) {
  int rc = sbx_creds_drop_bounding_set_raw();
  if (rc)
    return rc;
  return sbx_creds_clear_capability_sets_raw();
}

int sbx_creds_set_no_new_privs_raw(void) {
  return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ? -errno : 0;
}

int sbx_creds_set_undumpable_raw(void) {
  return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0 ? -errno : 0;
}

void sbx_creds_config_init(sbx_creds_config *cfg) {
  cfg->die_with_parent = true;
  cfg->expected_ppid = 0;
  cfg->parent_pidfd = -1;
  cfg->new_session = true;
}

static int fail(sbx_creds_result *result, const char *step, int rc) {
  result->error = -rc;
  result->failed_step = step;
  return rc;
}

int sbx_creds_apply_raw(const sbx_creds_config *cfg, sbx_creds_result *result) {
  int rc;
  result->securebits_locked = false;
  result->error = 0;
  result->failed_step = NULL;
  if (cfg->die_with_parent) {
    rc = sbx_creds_die_with_parent_raw(cfg->expected_ppid, cfg->parent_pidfd);
    if (rc)
      return fail(result, "PR_SET_PDEATHSIG (parent still alive)", rc);
  }
  if (cfg->new_session) {
    rc = sbx_creds_new_session_raw();
    if (rc)
      return fail(result, "setsid", rc);
  }
  rc = sbx_creds_lock_securebits_raw();
  if (rc == 0)
    result->securebits_locked = true;
  else if (rc != -EPERM)
    return fail(result, "PR_SET_SECUREBITS", rc);
  rc = sbx_creds_drop_capabilities_raw();
  if (rc)
    return fail(result, "drop capabilities (PR_CAPBSET_DROP, capset)", rc);
  rc = sbx_creds_set_no_new_privs_raw();
  if (rc)
    return fail(result, "PR_SET_NO_NEW_PRIVS", rc);
  rc = sbx_creds_set_undumpable_raw();
  if (rc)
    return fail(result, "PR_SET_DUMPABLE 0", rc);
  return 0;
}
