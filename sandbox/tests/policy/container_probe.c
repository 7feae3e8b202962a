/* container_probe: makes one system call and reports what it returned, for
 * the container test (container_test.c).
 *
 * Why it has no C library: it runs inside containers whose seccomp profile
 * is an exported sbx policy, and a C library's start-up calls
 * (arch_prctl, set_tid_address, ...) would be judged by that policy before
 * the call under test. This program makes no call but the one it is asked
 * for, write and exit_group.
 *
 *   container_probe NR [ARG0..ARG5]     numbers in decimal or 0x hex
 *
 * Prints "ret=N" (N the raw return value, -errno on failure) and exits 0;
 * a call the profile kills never prints.
 */
#include <stdint.h>

static long raw_syscall(long nr, long a0, long a1, long a2, long a3, long a4,
                        long a5) {
  register long r10 __asm__("r10") = a3;
  register long r8 __asm__("r8") = a4;
  register long r9 __asm__("r9") = a5;
  long ret;
  __asm__ volatile("syscall"
                   : "=a"(ret)
                   : "a"(nr), "D"(a0), "S"(a1), "d"(a2), "r"(r10), "r"(r8),
                     "r"(r9)
                   : "rcx", "r11", "memory");
  return ret;
}

static uint64_t parse_number(const char *s) {
  uint64_t v = 0;
  unsigned base = 10;
  if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s += 2;
  }
  for (; *s; s++) {
    unsigned d;
    if (*s >= '0' && *s <= '9')
      d = (unsigned)(*s - '0');
    else if (*s >= 'a' && *s <= 'f')
      d = (unsigned)(*s - 'a' + 10);
    else if (*s >= 'A' && *s <= 'F')
      d = (unsigned)(*s - 'A' + 10);
    else
      break;
    v = v * base + d;
  }
  return v;
}

static void exit_group(int status) {
  for (;;)
    raw_syscall(231 /* exit_group */, status, 0, 0, 0, 0, 0);
}

void probe_main(long *sp);

void probe_main(long *sp) {
  long argc = sp[0];
  char **argv = (char **)(sp + 1);
  if (argc < 2)
    exit_group(2);
  long args[6] = {0};
  for (long i = 2; i < argc && i < 8; i++)
    args[i - 2] = (long)parse_number(argv[i]);
  long ret = raw_syscall((long)parse_number(argv[1]), args[0], args[1], args[2],
                         args[3], args[4], args[5]);
  char buf[32] = "ret=";
  char digits[24];
  int n = 0, len = 4;
  uint64_t mag = ret < 0 ? (uint64_t)0 - (uint64_t)ret : (uint64_t)ret;
  do {
    digits[n++] = (char)('0' + mag % 10);
    mag /= 10;
  } while (mag != 0);
  if (ret < 0)
    buf[len++] = '-';
  while (n > 0)
    buf[len++] = digits[--n];
  buf[len++] = '\n';
  raw_syscall(1 /* write */, 1, (long)buf, len, 0, 0, 0);
  exit_group(0);
}

/* The kernel starts here with the stack holding argc, argv, envp. */
__asm__(
    ".globl _start\n"
    "_start:\n"
    "  mov %rsp, %rdi\n"
    "  and $-16, %rsp\n"
    "  call probe_main\n"
    "  hlt\n");
