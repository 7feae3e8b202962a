/* sbx-run: run an unmodified program in the sandbox.
 *
 * Why it exists: contract 5 of docs/design.md. This file is the command line
 * only; plan.c decides what the sandbox contains, launch.c builds it and
 * supervises the program, report.c prints the denials.
 *
 * Trusts the user who runs it. Refuses unknown options and any option or
 * input file it cannot honour exactly; then the program does not run.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>

#include "sandbox/runner/launch.h"
#include "sandbox/runner/plan.h"
#include "sandbox/runner/report.h"

static const char description[] =
    "Runs PROGRAM in new user, pid, ipc, uts, mount, cgroup and network\n"
    "namespaces, with no capabilities, no_new_privs, a new session, a seccomp\n"
    "filter and Landlock rules built from the allowlist. By default the\n"
    "program sees a file tree holding only its grants (read-only where the\n"
    "grant is) and the kernel decides each file call; without --allow-*\n"
    "options it can read only what its dynamic loader and libc need. A run\n"
    "that succeeds prints only the program's output; one that fails adds\n"
    "  sbx: PROGRAM exited with status N; run again with --explain to see\n"
    "  what the sandbox refused\n"
    "--explain runs the same grants under a supervisor in sbx-run that\n"
    "decides every file call and prints each refusal as it happens, e.g.\n"
    "  sbx: denied open /etc/shadow (allow with --allow-read /etc/shadow)\n"
    "\n"
    "Exit status: the program's, 128+N if signal N killed it; 125 if the\n"
    "sandbox could not be set up, 126 if the program could not be executed,\n"
    "127 if it was not found.\n"
    "\n"
    "Example: let python3 read its library and a data directory, write an\n"
    "output directory, and log every decision:\n"
    "  sbx-run --allow-read /usr/lib/python3.11 --allow-read ~/data \\\n"
    "          --allow-write /tmp/out --audit /tmp/audit.jsonl -- \\\n"
    "          python3 convert.py ~/data/in.csv /tmp/out/result.csv\n"
    "A shell script that runs other programs needs --allow-exec:\n"
    "  sbx-run --allow-exec --allow-write /tmp/build -- ./build.sh\n"
    "What one observed run needed (see sbx-learn(1)):\n"
    "  sbx-learn -o ls -- ls /srv/data\n"
    "  sbx-run --profile ls.profile -- ls /srv/data\n"
    "\n"
    "See sbx-run(1) and docs/sbx-run.md.";

int main(int argc, char **argv) {
  sbx_run_options o = {0};
  char **program = NULL;
  GOptionEntry entries[] = {
      {"allow-read", 'r', 0, G_OPTION_ARG_FILENAME_ARRAY, &o.allow_read,
       "Let the program read PATH (a directory: everything below it); "
       "repeatable",
       "PATH"},
      {"allow-write", 'w', 0, G_OPTION_ARG_FILENAME_ARRAY, &o.allow_write,
       "Let the program read and write PATH, and create and remove files "
       "below it if it is a directory; repeatable",
       "PATH"},
      {"policy", 'p', 0, G_OPTION_ARG_FILENAME_ARRAY, &o.policies,
       "Stack the seccomp policy FILE (minijail syntax) on the baseline; "
       "it can only narrow; repeatable",
       "FILE"},
      {"profile", 0, 0, G_OPTION_ARG_FILENAME, &o.profile,
       "Take allowlist rules, stacked policies, namespaces and limits from "
       "a .profile (a built-in name, a path containing '/', NAME.profile "
       "in the current directory, or a name in ~/.config/sbx/profiles or "
       "/etc/sbx/profiles)",
       "NAME|FILE"},
      {"net", 'n', 0, G_OPTION_ARG_NONE, &o.net,
       "Keep the host's network (no network namespace; sockets allowed)", NULL},
      {"allow-exec", 'x', 0, G_OPTION_ARG_NONE, &o.allow_exec,
       "Let the program execute other programs: those readable under the "
       "allowlist and in /usr/bin and /bin",
       NULL},
      {"allow-ptrace", 0, 0, G_OPTION_ARG_NONE, &o.allow_ptrace,
       "Let the program trace and debug its own processes (strace, gdb): "
       "ptrace, process_vm_readv and process_vm_writev, on processes of the "
       "sandbox only",
       NULL},
      {"require", 0, 0, G_OPTION_ARG_STRING_ARRAY, &o.require,
       "Refuse to run unless these layers are in place (userns, landlock, "
       "seccomp, broker; comma-separated, repeatable); others the kernel "
       "lacks are left out with a warning",
       "LAYER[,LAYER]"},
      {"audit", 'a', 0, G_OPTION_ARG_FILENAME, &o.audit,
       "Append one JSON object per decision to FILE", "FILE"},
      {"explain", 'v', 0, G_OPTION_ARG_NONE, &o.explain,
       "Let a supervisor decide every file call and print every refusal as "
       "it happens, with the option that would allow it (slower: each file "
       "call is a round trip)",
       NULL},
      {"user", 0, 0, G_OPTION_ARG_STRING, &o.user,
       "Run the program as NAME or UID (root only, for another user); "
       "default: your own identity, with every capability dropped",
       "NAME|UID"},
      {"clear-env", 0, 0, G_OPTION_ARG_NONE, &o.clear_env,
       "Start the program with an empty environment (then --setenv)", NULL},
      {"setenv", 'e', 0, G_OPTION_ARG_STRING_ARRAY, &o.setenv,
       "Set NAME=VALUE in the program's environment; repeatable", "NAME=VALUE"},
      {"unsetenv", 'u', 0, G_OPTION_ARG_STRING_ARRAY, &o.unsetenv,
       "Remove NAME from the program's environment; repeatable", "NAME"},
      {G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &program, NULL,
       NULL},
      {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  g_autoptr(GOptionContext) ctx =
      g_option_context_new("[--] PROGRAM [ARGS...] - run a program sandboxed");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_description(ctx, description);
  /* Options end at the program: `sbx-run ls -l` passes -l to ls. */
  g_option_context_set_strict_posix(ctx, TRUE);
  GError *error = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &error)) {
    fprintf(stderr, "sbx-run: %s (see sbx-run --help)\n", error->message);
    g_error_free(error);
    return SBX_RUN_EXIT_SETUP;
  }
  o.argv = program;
  if (!o.argv || !o.argv[0]) {
    fprintf(stderr, "sbx-run: no program given (see sbx-run --help)\n");
    sbx_run_options_clear(&o);
    return SBX_RUN_EXIT_SETUP;
  }

  sbx_run_plan *plan = sbx_run_plan_new(&o, &error);
  if (!plan) {
    fprintf(stderr, "sbx-run: %s\n", error->message);
    int code = SBX_RUN_EXIT_SETUP;
    if (g_error_matches(error, SBX_RUN_ERROR, SBX_RUN_ERROR_NOT_FOUND))
      code = SBX_RUN_EXIT_NOTFOUND;
    else if (g_error_matches(error, SBX_RUN_ERROR, SBX_RUN_ERROR_PROGRAM))
      code = SBX_RUN_EXIT_NOEXEC;
    g_error_free(error);
    sbx_run_options_clear(&o);
    return code;
  }
  sbx_run_report *report =
      sbx_run_report_new(plan->audit, STDERR_FILENO, o.explain, &error);
  if (!report) {
    fprintf(stderr, "sbx-run: %s\n", error->message);
    g_error_free(error);
    sbx_run_plan_free(plan);
    sbx_run_options_clear(&o);
    return SBX_RUN_EXIT_SETUP;
  }
  int status = sbx_run_launch(plan, report, &error);
  sbx_run_report_summary(report, status);
  /* The default mode saw no refusal (the kernel made them): one line
   * says where to look. */
  if (!error && status != 0 && plan->mode == SBX_RUN_MODE_KERNEL)
    fprintf(stderr,
            "sbx: %s exited with status %d; run again with --explain to see "
            "what the sandbox refused\n",
            o.argv[0], status);
  if (error) {
    fprintf(stderr, "sbx-run: %s\n", error->message);
    g_error_free(error);
  }
  sbx_run_report_free(report);
  sbx_run_plan_free(plan);
  sbx_run_options_clear(&o);
  return status;
}
