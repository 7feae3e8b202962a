/* What sbx-run tells the user about the supervisor's decisions: one
 * `sbx: denied OPERATION WHAT (allow with OPTION)` line per distinct
 * denial, and, with --audit FILE, one JSON object per line for every
 * decision.
 *
 * Why it exists: a denial is how the user learns what the allowlist
 * lacks; the hint names the option that would grant it. But programs
 * probe (a shell searches PATH, python its path, libc nscd): a run that
 * succeeds prints nothing but the program's own output. So the lines are
 * kept, deduplicated (a program that probes one path a thousand times
 * shows it once), and shown when the program fails, as a short summary
 * ending with the options that would allow them; with explain (--explain)
 * each is printed as it happens. The audit file keeps every decision.
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
 * now, before the sandbox starts. stderr_fd receives the denial lines:
 * each as it happens with explain, else in sbx_run_report_summary(). */
sbx_run_report *sbx_run_report_new(const char *audit_path, int stderr_fd,
                                   bool explain, GError **error);

/* After the run, given sbx-run's exit status: nothing for 0; otherwise
 * the refusals (the last few, unless explain printed them already) and
 * one line with the options that would allow them. */
void sbx_run_report_summary(sbx_run_report *r, int status);
void sbx_run_report_free(sbx_run_report *r);

/* An sbx_unotify_event_fn: pass r as user_data. */
void sbx_run_report_event(const sbx_unotify_event *event, void *r);

/* The stderr line for an event (without the newline), for tests. */
char *sbx_run_report_format_denial(const sbx_unotify_event *event);

/* The audit line for an event (a JSON object, without the newline). */
char *sbx_run_report_format_json(const sbx_unotify_event *event);

#endif /* SBX_RUNNER_REPORT_H_ */
