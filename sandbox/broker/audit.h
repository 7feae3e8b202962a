/* The broker's audit log: one line per decision.
 *
 * Why it exists: a denial is how a sandboxed program's author finds out
 * what the allowlist lacks, and how an operator sees an attack. Every
 * denial is logged; grants only when asked (they are the hot path).
 *
 * Format (one write(2) per line, so lines from one broker never interleave):
 *
 *   sbx: VERDICT op=OP path="PATH" [path2="PATH2"] flags=FLAGS type=TYPE
 *        pid=PID errno=ERRNO [reason="REASON"]
 *
 * on one line, where VERDICT is `denied` or `granted`; OP the command name
 * (`open`, `stat`, ...) or `protocol` for a malformed message; FLAGS the
 * open flags by name (`O_RDWR|O_CREAT`), access modes by name (`R_OK`), or
 * a hex number for other commands; ERRNO the errno name of the result (`0`
 * when the call succeeded); TYPE the worker type of the channel; PID the
 * sender as the kernel reported it. Bytes of a path outside printable
 * ASCII, and `"` and `\`, are written as \xHH, so a worker cannot forge a
 * line. A granted request may still carry the file system's errno (a
 * granted open of a missing file ends in errno=ENOENT).
 */
#ifndef SBX_BROKER_AUDIT_H_
#define SBX_BROKER_AUDIT_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct {
  int fd; /* -1: no log */
  bool log_grants;
} sbx_audit;

typedef struct {
  const char *type;
  pid_t pid;
  const char *op;
  const char *path;  /* may be NULL */
  const char *path2; /* may be NULL */
  uint16_t command;  /* decides how flags are printed; 0 for protocol */
  uint32_t flags;
  bool granted;
  int result; /* >= 0 or -errno */
  const char *reason;
} sbx_audit_record;

/* Formats one line into buf (NUL-terminated, ending in '\n'); returns its
 * length. Lines longer than size are cut, still ending in '\n'. */
size_t sbx_audit_format(const sbx_audit_record *rec, char *buf, size_t size);

/* Writes the line for rec if the log wants it. Never fails the request:
 * a log that cannot be written loses lines, not decisions. */
void sbx_audit_write(const sbx_audit *audit, const sbx_audit_record *rec);

#endif /* SBX_BROKER_AUDIT_H_ */
