/* What sbx-run tells the user about the supervisor's decisions: one
 * `sbx: denied OPERATION WHAT (allow with OPTION)` line on stderr per
 * distinct denial, and, with --audit FILE, one JSON object per line for
 * every decision.
 *
 * Why it exists: a denial is how the user learns what the allowlist
 * lacks; the hint names the option that would grant it. Lines are
 * deduplicated (a program that probes one path a thousand times prints it
 * once); the audit file keeps every decision.
 *
 * What it trusts: nothing in the event's strings, which come from the
 * sandboxed program: bytes outside printable ASCII (and backslash) are
 * written as \xHH on stderr, so a file name cannot forge a line; JSON
 * escaping does the same in the audit file.
 */
#ifndef SBX_RUNNER_REPORT_H_
#define SBX_RUNNER_REPORT_H_

#include <stdbool.h>

#include <glib.h>

#include "sandbox/supervisor/supervisor.h"

typedef struct sbx_run_report sbx_run_report;

/* audit_path NULL: no audit file. The file is created (or appended to)
 * now, before the sandbox starts. stderr_fd receives the denial lines. */
sbx_run_report *sbx_run_report_new(const char *audit_path, int stderr_fd,
                                   GError **error);
void sbx_run_report_free(sbx_run_report *r);

/* An sbx_unotify_event_fn: pass r as user_data. */
void sbx_run_report_event(const sbx_unotify_event *event, void *r);

/* The stderr line for an event (without the newline), for tests. */
char *sbx_run_report_format_denial(const sbx_unotify_event *event);

/* The audit line for an event (a JSON object, without the newline). */
char *sbx_run_report_format_json(const sbx_unotify_event *event);

#endif /* SBX_RUNNER_REPORT_H_ */
