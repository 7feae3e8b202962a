/* Landlock's user-space ABI up to version 7, for building on systems whose
 * <linux/landlock.h> is older than the kernel that runs the result.
 *
 * Why it exists: Debian 12's linux-libc-dev stops at ABI 2 (REFER), while
 * the kernels sbx runs on speak ABI 7. Constants of a released ABI never
 * change, so a short reviewed supplement is safe. Each value below was
 * checked against the kernel's include/uapi/linux/landlock.h; every macro
 * is guarded with #ifndef so a newer system header wins (and must agree).
 *
 * The structures are declared under sbx_ names, because an old header
 * declares struct landlock_ruleset_attr with one field only. The kernel
 * accepts a smaller struct than it knows (missing fields are zero) and
 * rejects a larger one whose unknown tail is not zero, so passing the
 * full sbx_landlock_ruleset_attr to an older kernel is safe as long as
 * the fields it lacks are zero - which the ABI negotiation guarantees.
 *
 * The raw syscall wrappers are Async-signal-safe (syscall(2) only).
 */
#ifndef SBX_KERNEL_LANDLOCK_LANDLOCK_UAPI_H_
#define SBX_KERNEL_LANDLOCK_LANDLOCK_UAPI_H_

#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/landlock.h>

/* x86-64 numbers, assigned in Linux 5.13. */
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#ifndef __NR_landlock_add_rule
#define __NR_landlock_add_rule 445
#endif
#ifndef __NR_landlock_restrict_self
#define __NR_landlock_restrict_self 446
#endif

#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif
#ifndef LANDLOCK_CREATE_RULESET_ERRATA
#define LANDLOCK_CREATE_RULESET_ERRATA (1U << 1)
#endif

/* ABI 1: file system. */
#ifndef LANDLOCK_ACCESS_FS_EXECUTE
#define LANDLOCK_ACCESS_FS_EXECUTE (1ULL << 0)
#define LANDLOCK_ACCESS_FS_WRITE_FILE (1ULL << 1)
#define LANDLOCK_ACCESS_FS_READ_FILE (1ULL << 2)
#define LANDLOCK_ACCESS_FS_READ_DIR (1ULL << 3)
#define LANDLOCK_ACCESS_FS_REMOVE_DIR (1ULL << 4)
#define LANDLOCK_ACCESS_FS_REMOVE_FILE (1ULL << 5)
#define LANDLOCK_ACCESS_FS_MAKE_CHAR (1ULL << 6)
#define LANDLOCK_ACCESS_FS_MAKE_DIR (1ULL << 7)
#define LANDLOCK_ACCESS_FS_MAKE_REG (1ULL << 8)
#define LANDLOCK_ACCESS_FS_MAKE_SOCK (1ULL << 9)
#define LANDLOCK_ACCESS_FS_MAKE_FIFO (1ULL << 10)
#define LANDLOCK_ACCESS_FS_MAKE_BLOCK (1ULL << 11)
#define LANDLOCK_ACCESS_FS_MAKE_SYM (1ULL << 12)
#endif
/* ABI 2 (Linux 5.19): reparenting by link or rename. */
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
/* ABI 3 (Linux 6.2): truncate(2), ftruncate(2), O_TRUNC. */
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
/* ABI 4 (Linux 6.7): TCP bind and connect, by port. */
#ifndef LANDLOCK_ACCESS_NET_BIND_TCP
#define LANDLOCK_ACCESS_NET_BIND_TCP (1ULL << 0)
#endif
#ifndef LANDLOCK_ACCESS_NET_CONNECT_TCP
#define LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#endif
/* ABI 5 (Linux 6.10): ioctl(2) on character and block devices. */
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
/* ABI 6 (Linux 6.12): scopes. */
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#endif
#ifndef LANDLOCK_SCOPE_SIGNAL
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif
/* ABI 7 (Linux 6.15): audit logging flags of landlock_restrict_self(). */
#ifndef LANDLOCK_RESTRICT_SELF_LOG_SAME_EXEC_OFF
#define LANDLOCK_RESTRICT_SELF_LOG_SAME_EXEC_OFF (1U << 0)
#endif
#ifndef LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON
#define LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON (1U << 1)
#endif
#ifndef LANDLOCK_RESTRICT_SELF_LOG_SUBDOMAINS_OFF
#define LANDLOCK_RESTRICT_SELF_LOG_SUBDOMAINS_OFF (1U << 2)
#endif

/* enum landlock_rule_type: LANDLOCK_RULE_PATH_BENEATH = 1 comes from every
 * header; LANDLOCK_RULE_NET_PORT (ABI 4) is the enum's next value. An enum
 * member cannot be tested with #ifndef, hence our own name. */
#define SBX_LANDLOCK_RULE_PATH_BENEATH 1
#define SBX_LANDLOCK_RULE_NET_PORT 2

/* The newest ABI this file describes. A kernel reporting more is used at
 * this level: rights we cannot name are not requested. */
#define SBX_LANDLOCK_ABI_KNOWN 7

/* struct landlock_ruleset_attr as of ABI 6 (fields added in 4 and 6). */
struct sbx_landlock_ruleset_attr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net; /* ABI 4 */
  uint64_t scoped;             /* ABI 6 */
};

/* struct landlock_path_beneath_attr (packed in the kernel's header). */
struct sbx_landlock_path_beneath_attr {
  uint64_t allowed_access;
  int32_t parent_fd;
} __attribute__((packed));

/* struct landlock_net_port_attr (ABI 4). */
struct sbx_landlock_net_port_attr {
  uint64_t allowed_access;
  uint64_t port;
};

/* Async-signal-safe wrappers; return what syscall(2) returns (-1/errno). */
static inline int sbx_landlock_create_ruleset(
    const struct sbx_landlock_ruleset_attr *attr, size_t size, uint32_t flags) {
  return (int)syscall(__NR_landlock_create_ruleset, attr, size, flags);
}

static inline int sbx_landlock_add_rule(int ruleset_fd, int rule_type,
                                        const void *rule_attr, uint32_t flags) {
  return (int)syscall(__NR_landlock_add_rule, ruleset_fd, rule_type, rule_attr,
                      flags);
}

static inline int sbx_landlock_restrict_self_syscall(int ruleset_fd,
                                                     uint32_t flags) {
  return (int)syscall(__NR_landlock_restrict_self, ruleset_fd, flags);
}

#endif /* SBX_KERNEL_LANDLOCK_LANDLOCK_UAPI_H_ */
