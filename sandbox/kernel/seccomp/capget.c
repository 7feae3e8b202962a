/* capget(2) for the caller only: see capget.h. */
#include "sandbox/kernel/seccomp/capget.h"

#include <errno.h>
#include <linux/capability.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox/kernel/seccomp/trap.h"

/* Async-signal-safe: runs in the SIGSYS handler. Follows the kernel's
 * capget() step by step (kernel/capability.c): version check first (an
 * unknown version is answered with the preferred one, and is not an error
 * when no data pointer is given), then the pid. */
static intptr_t answer_capget(const sbx_trap_call *call, void *aux) {
  (void)aux;
  struct __user_cap_header_struct *user_header =
      (struct __user_cap_header_struct *)(uintptr_t)call->args[0];
  struct __user_cap_data_struct *data =
      (struct __user_cap_data_struct *)(uintptr_t)call->args[1];
  if (user_header == NULL)
    return -EFAULT;
  struct __user_cap_header_struct header;
  memcpy(&header, user_header, sizeof header);
  size_t words;
  switch (header.version) {
    case _LINUX_CAPABILITY_VERSION_1:
      words = _LINUX_CAPABILITY_U32S_1;
      break;
    case _LINUX_CAPABILITY_VERSION_2:
    case _LINUX_CAPABILITY_VERSION_3:
      words = _LINUX_CAPABILITY_U32S_3;
      break;
    default:
      user_header->version = _LINUX_CAPABILITY_VERSION_3;
      return data == NULL ? 0 : -EINVAL;
  }
  if (data == NULL)
    return 0;
  if (header.pid < 0)
    return -EINVAL;
  if (header.pid != 0 && header.pid != (pid_t)syscall(SYS_getpid) &&
      header.pid != (pid_t)syscall(SYS_gettid))
    return -EPERM;
  memset(data, 0, words * sizeof *data);
  return 0;
}

int sbx_capget_register_raw(void) {
  return sbx_trap_register_raw(__NR_capget, answer_capget, NULL);
}
