/* What every escape suite shares: one real zygote with a "sandboxed" type
 * built from the built-in renderer profile (its policy compiled, its
 * rlimits, Landlock), a "brokered" type that is the same with layer 1 under
 * it and a real broker applying the profile's allowlist (how workers run
 * in production), and a "control" type that differs from "sandboxed" only
 * by having no seccomp layer and no Landlock; plus the unsandboxed
 * processes the positive controls run in.
 *
 * Every worker gets /dev/null as stdio and the write end of a reply pipe
 * as fd 3; extra descriptors follow from 4. A worker reports by writing
 * its reply to fd 3 (escape_reply). A suite passes one entry function for
 * both types and tells attacks apart by the payload.
 */
#ifndef SBX_TESTS_ZYGOTE_ESCAPE_UTIL_H_
#define SBX_TESTS_ZYGOTE_ESCAPE_UTIL_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <check.h>

#include "sandbox/zygote/zygote.h"

#define ESCAPE_REPLY_FD 3

typedef struct {
  bool wrote; /* the worker wrote its whole reply before it ended */
  sbx_zygote_exit exit;
} escape_outcome;

/* The result of one system call as a worker saw it. */
typedef struct {
  long ret;
  long err; /* errno when ret is -1, else 0 */
} escape_result;

/* Fixture: starts the broker and the zygote (types "sandboxed",
 * "brokered" and "control", all running entry), and stops both. */
void escape_start(sbx_zygote_entry entry);
/* The same with "sandboxed" built from another profile: a built-in name
 * or a path. The profile and its policies are read here, once. */
void escape_start_profile(const char *profile, sbx_zygote_entry entry);
void escape_stop(void);
/* Workers of "sandboxed", "brokered" and "control" forked ahead (the
 * zygote's warm pool) by the next escape_start; 0 (the default): each
 * spawn forks its worker. The pooled suites rerun every attack on
 * workers that waited with every layer on before they got their job. */
void escape_set_pool(unsigned pool);
sbx_zygote *escape_zygote(void);
pid_t escape_broker_pid(void);

/* What the sandboxed type's compiled layers return for one call, combined
 * as the kernel combines stacked filters (the most restrictive wins). */
uint32_t escape_sandboxed_action(int nr, const long args[6]);

/* Spawns one worker and returns at once: its pid as the host sees it, and
 * the read end of its reply pipe in *reply_fd. extra fds become 4.. A
 * "brokered" worker also gets a new broker channel (after them). */
pid_t escape_spawn(const char *type, const void *payload, size_t len,
                   const int *extra, size_t n_extra, int *reply_fd);

/* Reads exactly len bytes (fewer when the writer ends first); returns
 * whether all came. */
bool escape_read_reply(int fd, void *buf, size_t len);

sbx_zygote_exit escape_wait(pid_t pid);

/* Spawns, reads a reply of reply_len bytes, waits. */
escape_outcome escape_run(const char *type, const void *payload, size_t len,
                          void *reply, size_t reply_len);

/* The same for a worker whose reply is one escape_result. */
typedef struct {
  escape_result r;
  escape_outcome o;
} escape_call;
escape_call escape_run_call(const char *type, const void *payload, size_t len);

/* main() of an escape suite: runs it, returns the exit status. */
int escape_main(Suite *suite);

/* Worker side: writes the whole buffer to fd, or _exits(91). */
void escape_reply_to(int fd, const void *buf, size_t len);
void escape_reply(const void *buf, size_t len);

/* The ids a sandboxed worker runs as (docs/namespaces.md: the caller's
 * euid, except that root becomes nobody). */
uid_t escape_expected_uid(void);
gid_t escape_expected_gid(void);

/* Positive controls: runs probe(reply_fd, arg) in a forked child of the
 * test, unsandboxed. With own_namespaces the child first enters a new
 * user, mount and pid namespace (mapped to root there, so it holds every
 * capability in them) and the probe runs in a child of that, as pid 1.
 * Returns whether the probe wrote the whole reply. */
typedef void (*escape_probe)(int reply_fd, const void *arg);
bool escape_run_unsandboxed(bool own_namespaces, escape_probe probe,
                            const void *arg, void *reply, size_t reply_len);

#endif /* SBX_TESTS_ZYGOTE_ESCAPE_UTIL_H_ */
