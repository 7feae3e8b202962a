/* The broker's audit log: one line per decision.
 *
 * Why it exists: a denial is how a sandboxed program's author finds out
 * what the allowlist lacks, and how an operator sees an attack. Every
 * denial is logged, within a per-worker budget; grants only when asked
 * (they are the hot path).
 *
 * What it trusts: nothing in the strings it prints (paths come from
 * workers), nor the reader of the sink. What it refuses: to wait. The
 * broker serves every worker from one thread, so a sink that is slow or
 * paused (a stopped terminal, a pipe nobody reads) must cost lines, never
 * decisions or time; and a worker must not be able to make the log grow
 * faster than a reader can follow.
 *
 * Format (one write per line, so lines from one broker never interleave):
 *
 *   sbx: VERDICT op=OP path="PATH" [path_len=N] [path2="PATH2"]
 *        [path2_len=N] flags=FLAGS type=TYPE pid=PID errno=ERRNO
 *        [reason="REASON"] [target="TARGET"] [allow="RULE"]
 *   sbx: suppressed denials=N type=TYPE pid=PID
 *   sbx: dropped lines=N
 *
 * each on one line. VERDICT is `denied` or `granted`; OP the operation
 * of the table of file-system calls the command performs (`open`,
 * `stat`, `access`, ...: fs_calls.h, the names sbx-run's records use too),
 * `attach`, or `protocol` for a malformed message; FLAGS as
 * sbx_fs_format_flags() spells the operation's flags (`O_RDWR|O_CREAT`,
 * `R_OK`, `AT_SYMLINK_NOFOLLOW`, a mode `0755`, `0` for none); ERRNO the
 * errno name of the result (`0`
 * when the call succeeded); TYPE the worker type of the channel; PID the
 * sender as the kernel reported it. A granted request may still carry the
 * file system's errno (a granted open of a missing file ends in
 * errno=ENOENT).
 *
 * Escaping and bounds: inside the quotes every byte outside printable
 * ASCII, and `"` and `\`, is written as \xHH, so a value never holds a raw
 * quote, newline or control byte and a worker cannot end, break or forge a
 * line. A path is written as at most SBX_AUDIT_PATH_MAX bytes between its
 * quotes: a longer one is cut before an escape that would not fit, ends in
 * `...`, and the line then carries `path_len=N` (`path2_len=N`), the
 * path's length in bytes; those fields appear exactly when a path was cut.
 * The type is cut the same way at SBX_AUDIT_NAME_MAX bytes, the reason at
 * SBX_AUDIT_REASON_MAX, target and allow at SBX_AUDIT_HINT_MAX. A denial
 * of a path the allowlist does not name carries TARGET, the path it was
 * decided on when a symbolic link on the way led there (the link's
 * target, which is what a rule must name), and RULE, the one rule that
 * would grant it (`read /usr/share/fontconfig/conf.avail/10-a.conf`;
 * `stat-intermediate /srv/data` for a stat of a directory above an
 * entry). Both only on lines without PATH2, so that every field fits. No line
 * exceeds SBX_AUDIT_LINE_MAX bytes, its newline included (every field fits; the
 * formatter also cuts at that size, newline kept).
 *
 * Rate limit (denials only; decisions never depend on it): each worker,
 * that is each worker channel together with the thread channels attached
 * through it, has a token bucket of SBX_AUDIT_DENIAL_BURST lines refilled
 * at SBX_AUDIT_DENIALS_PER_SECOND. A denial over the budget is not
 * written, only counted; once the bucket holds a token again (or the
 * worker's last channel closes) one `suppressed` line gives the count and
 * the pid of the last one suppressed, before that worker's next line.
 * Granted lines (opt-in) have no budget.
 *
 * Full sink: lines are written without waiting (see sbx_audit_open for
 * how, per kind of sink). A line the sink cannot take now is dropped and
 * counted; the next time the sink takes a write, a `dropped` line giving
 * the count comes first. A line a terminal took only part of is finished
 * before anything else is written, so lines are never cut or mixed.
 */
#ifndef SBX_BROKER_AUDIT_H_
#define SBX_BROKER_AUDIT_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sandbox/files/fs_calls.h"

#define SBX_AUDIT_LINE_MAX 1024 /* bytes of one line, '\n' included */
#define SBX_AUDIT_PATH_MAX 256  /* bytes of one path between its quotes */
#define SBX_AUDIT_NAME_MAX 64   /* bytes of the type */
#define SBX_AUDIT_REASON_MAX 96 /* bytes of the reason between its quotes */
#define SBX_AUDIT_HINT_MAX 128  /* bytes of target and of allow */

#define SBX_AUDIT_DENIAL_BURST 100      /* lines a worker may log at once */
#define SBX_AUDIT_DENIALS_PER_SECOND 10 /* and then, sustained */

/* How often the broker retries a sink that owes a `dropped` line (or the
 * rest of a line) when nothing else is written. */
#define SBX_AUDIT_RETRY_MS 100

typedef enum {
  SBX_AUDIT_SINK_NONE,   /* no log */
  SBX_AUDIT_SINK_FILE,   /* regular file or block device: never waits */
  SBX_AUDIT_SINK_SOCKET, /* sent with MSG_DONTWAIT */
  SBX_AUDIT_SINK_OWN,    /* a description of its own, O_NONBLOCK set */
  SBX_AUDIT_SINK_SHARED, /* shared description: RWF_NOWAIT writes */
  SBX_AUDIT_SINK_POLLED, /* shared, RWF_NOWAIT refused: poll, then write */
} sbx_audit_sink_kind;

typedef struct {
  int fd; /* -1: no log */
  bool log_grants;
  sbx_audit_sink_kind kind;
  uint64_t dropped;       /* lines lost since the last `dropped` line */
  uint64_t dropped_total; /* lines lost since the start */
  /* The rest of a line the sink took only part of. */
  char pending[SBX_AUDIT_LINE_MAX];
  size_t pending_off, pending_len;
} sbx_audit;

/* sbx_audit_open flags. */
#define SBX_AUDIT_NO_REOPEN 1u /* keep the description as given (tests) */

/* Makes `fd` (owned from now on; -1: no log) the sink, in the broker,
 * before it confines itself. A regular file is written as it is; a socket
 * with MSG_DONTWAIT per send. A pipe, FIFO or terminal is reopened through
 * /proc/self/fd so that the broker gets an open file description of its
 * own, on which it sets O_NONBLOCK: the caller's description (the host's
 * stderr) keeps its flags. When that is impossible (another user's pipe,
 * a named FIFO with no reader yet, no /proc, /dev/tty or /dev/ptmx, which
 * a reopen would not reach the same way) the description is shared and left as
 * it is: writes then use pwritev2(RWF_NOWAIT), which pipes honour; where the
 * kernel refuses it (terminals), poll(POLLOUT) with no wait comes before each
 * write, which is bounded except when another writer of the same sink fills it
 * in between, or a terminal has room for less than one line. */
void sbx_audit_open(sbx_audit *audit, int fd, bool log_grants, unsigned flags);

/* Closes the sink. */
void sbx_audit_close(sbx_audit *audit);

typedef struct {
  const char *type;
  pid_t pid;
  const char *op;    /* an operation's name (sbx_fs_op_name), "attach" or
                        "protocol" */
  const char *path;  /* may be NULL */
  const char *path2; /* may be NULL */
  const char *call;  /* a system call with its arguments, for op=syscall
                        (then no flags); may be NULL */
  sbx_fs_op fs_op;   /* decides how flags are printed (sbx_fs_format_flags);
                        SBX_FS_OP_NONE for the others */
  uint32_t flags;
  bool granted;
  int result; /* >= 0 or -errno */
  const char *reason;
  const char *target; /* where a symbolic link led; may be NULL or "" */
  const char *allow;  /* the rule that would grant it; may be NULL or "" */
} sbx_audit_record;

/* Formats one line into buf (NUL-terminated, ending in '\n'); returns its
 * length, at most min(size, SBX_AUDIT_LINE_MAX + 1) - 1. */
size_t sbx_audit_format(const sbx_audit_record *rec, char *buf, size_t size);

/* Writes the line for rec if the log wants it, with no budget. Never
 * fails the request and never waits: a sink that cannot take the line
 * loses it (counted). */
void sbx_audit_write(sbx_audit *audit, const sbx_audit_record *rec);

/* True while the sink owes a `dropped` line or the rest of a line. */
bool sbx_audit_owes(const sbx_audit *audit);

/* Writes what the sink owes, if it takes it now. */
void sbx_audit_flush(sbx_audit *audit);

/* One worker's budget of denial lines (a token bucket). Times are
 * milliseconds of CLOCK_MONOTONIC, passed in so the tests choose them. */
typedef struct {
  const char *type; /* borrowed: the worker type, for `suppressed` lines */
  uint64_t tokens;  /* in thousandths of a line */
  int64_t last_ms;  /* when tokens was last refilled */
  uint64_t suppressed;
  pid_t last_pid; /* of the last suppressed denial */
} sbx_audit_budget;

void sbx_audit_budget_init(sbx_audit_budget *budget, const char *type,
                           int64_t now_ms);

/* Writes the line for a denial, within the budget: over it, the denial
 * is only counted (*suppressed_total too) and false is returned. Before
 * the first line after a gap comes the `suppressed` line. */
bool sbx_audit_denial(sbx_audit *audit, sbx_audit_budget *budget,
                      int64_t now_ms, const sbx_audit_record *rec,
                      uint64_t *suppressed_total);

/* When the `suppressed` line of a budget is due (it has a count and the
 * bucket a token), or -1 when it owes none. */
int64_t sbx_audit_budget_due(const sbx_audit_budget *budget);

/* Writes the `suppressed` line if it is due at now_ms, or whenever it has
 * a count when final (the worker's last channel closed). */
void sbx_audit_budget_flush(sbx_audit *audit, sbx_audit_budget *budget,
                            int64_t now_ms, bool final);

#endif /* SBX_BROKER_AUDIT_H_ */
