/* The x86-64 system call table: names, numbers and argument widths.
 *
 * Why it exists: policies name system calls, the kernel sees numbers, and a
 * comparison is only exact if it knows how wide the kernel reads each
 * argument. The table is generated at build time (gen_syscalls.py) from
 * <asm/unistd_64.h>, syscalls_supplement.txt and syscall_args.txt.
 *
 * Trusts: the build's kernel headers and the two reviewed text files.
 * Refuses: nothing at run time; unknown names and numbers are reported as
 * such (NULL, -1, false), never guessed.
 */
#include "sandbox/base/syscalls.h"

#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>

/* Names are offsets in kSyscallNames, whose first string is empty. */
typedef struct {
  uint32_t name;          /* 0: no system call has this number */
  signed char nargs;      /* -1: not known */
  unsigned char int_mask; /* bit i: argument i is int-sized */
} sbx_syscall_info;

typedef struct {
  uint32_t name;
  int nr;
} sbx_syscall_name_entry;

#include "sandbox/base/syscall_table.inc"

#define N_SYSCALLS ((int)(sizeof(kSyscalls) / sizeof(kSyscalls[0])))
#define N_BY_NAME (sizeof(kSyscallsByName) / sizeof(kSyscallsByName[0]))

/* Async-signal-safe: reads const data only. */
static const sbx_syscall_info *info(int nr) {
  if (nr < 0 || nr >= N_SYSCALLS || kSyscalls[nr].name == 0)
    return NULL;
  return &kSyscalls[nr];
}

const char *sbx_syscall_name(int nr) {
  const sbx_syscall_info *i = info(nr);
  return i ? kSyscallNames + i->name : NULL;
}

static int compare_name(const char *key, const char *name) {
  if (key[0] != name[0])
    return (unsigned char)key[0] - (unsigned char)name[0];
  return key[0] ? strcmp(key + 1, name + 1) : 0;
}

const void *sbx_name_search(const void *table, size_t n, size_t size,
                            size_t name_offset, const char *names,
                            const char *key) {
  const char *entries = table;
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    const char *entry = entries + mid * size;
    uint32_t name;
    memcpy(&name, entry + name_offset, sizeof(name));
    int c = compare_name(key, names + name);
    if (c == 0)
      return entry;
    if (c < 0)
      hi = mid;
    else
      lo = mid + 1;
  }
  return NULL;
}

int sbx_syscall_number(const char *name) {
  if (name == NULL)
    return -1;
  const sbx_syscall_name_entry *e = sbx_name_search(
      kSyscallsByName, N_BY_NAME, sizeof(kSyscallsByName[0]),
      offsetof(sbx_syscall_name_entry, name), kSyscallNames, name);
  return e ? e->nr : -1;
}

bool sbx_syscall_arg_is_32bit(int nr, unsigned arg) {
  const sbx_syscall_info *i = info(nr);
  if (i == NULL || arg >= 6)
    return false;
  return (i->int_mask >> arg) & 1;
}

int sbx_syscall_max(void) {
  return N_SYSCALLS;
}

int sbx_syscall_arg_count(int nr) {
  const sbx_syscall_info *i = info(nr);
  return i ? i->nargs : -1;
}

bool sbx_syscall_is_tracing(int nr) {
  return nr == SYS_ptrace || nr == SYS_process_vm_readv ||
         nr == SYS_process_vm_writev;
}
