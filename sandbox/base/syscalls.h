/* The x86-64 system call table: names, numbers and argument widths.
 *
 * Generated at build time from the kernel headers, plus a short reviewed
 * supplement of numbers assigned after Debian 12's headers (mseal, ...),
 * so names resolve for the kernel that runs the policy. Everything here is
 * const static data, safe to call from a signal handler.
 */
#ifndef SBX_BASE_SYSCALLS_H_
#define SBX_BASE_SYSCALLS_H_

#include <stdbool.h>
#include <stddef.h>

/* The name of syscall nr, or NULL if the table does not know it.
 * Async-signal-safe. */
const char *sbx_syscall_name(int nr);

/* The number of a syscall name, or -1. */
int sbx_syscall_number(const char *name);

/* True when argument `arg` of syscall nr is int-sized (the kernel reads
 * only its low 32 bits). Unknown syscalls and arguments: false. */
bool sbx_syscall_arg_is_32bit(int nr, unsigned arg);

/* One past the highest number in the table; iterate 0..max and skip the
 * NULL names. */
int sbx_syscall_max(void);

/* How many arguments syscall nr takes (0..6), or -1 when the reviewed
 * table (sandbox/base/syscall_args.txt) does not say. */
int sbx_syscall_arg_count(int nr);

/* True for the calls that act on another process's registers or memory
 * under ptrace's access check: ptrace, process_vm_readv and
 * process_vm_writev (what sbx-run --allow-ptrace allows).
 * Async-signal-safe. */
bool sbx_syscall_is_tracing(int nr);

/* A binary search for key in a table of n entries of size bytes each,
 * sorted in strcmp's order by name. Each entry holds, at name_offset, a
 * uint32_t offset of its name in names (a pool of NUL-terminated strings):
 * generated tables hold offsets rather than pointers, so they need no
 * relocation when a program loads and stay shared, read-only pages.
 * Returns the entry, or NULL. strcmp's order is kept with the first byte
 * compared inline: most steps end there, without a call.
 * Async-signal-safe. */
const void *sbx_name_search(const void *table, size_t n, size_t size,
                            size_t name_offset, const char *names,
                            const char *key);

#endif /* SBX_BASE_SYSCALLS_H_ */
