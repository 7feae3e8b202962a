/* sbx-learn: run a program once, observed, and write the policy and the
 * profile that let sbx-run run it again.
 *
 * Why it exists: writing an allowlist by hand means reading strace
 * output. sbx-learn does the reading; the user reviews the result. This
 * file is the command line; record.c runs and observes the program,
 * write.c turns the record into NAME.policy and NAME.profile.
 *
 * Trusts the user who runs it. It enforces nothing: the program runs with
 * the user's rights, everything allowed (see observer.h).
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>

#include "sandbox/policy/parser.h"
#include "sandbox/runner/learn_record.h"
#include "sandbox/runner/learn_write.h"

static const char description[] =
    "Runs PROGRAM once with every system call allowed but observed (a\n"
    "seccomp filter sends each call to sbx-learn, which records it and lets\n"
    "it run; children are followed), then writes\n"
    "  NAME.policy   the calls seen, with argument constraints where the\n"
    "                values were obvious, in the seccomp policy language\n"
    "  NAME.profile  an sbx-run profile: the files seen, folded into\n"
    "                directories, and NAME.policy as its seccomp layer\n"
    "Then it prints the sbx-run command that runs PROGRAM under them:\n"
    "  sbx-run --profile NAME.profile [--allow-exec] [--allow-ptrace] -- "
    "PROGRAM ...\n"
    "\n"
    "A learned policy is only as complete as the run that produced it:\n"
    "what this run did not do is refused later. sbx-learn enforces\n"
    "nothing while it learns; run only programs you would run anyway.\n"
    "\n"
    "Then, unless --no-verify, it checks them: it runs the same command\n"
    "again under sbx-run with that command line (stdin /dev/null, stdout\n"
    "discarded) and compares the exit status with the learning run's; if\n"
    "they differ it says so with the rerun's first sbx: refusals.\n"
    "\n"
    "Exit status: the program's (128+N for signal N) once both files are\n"
    "written and checked; 125 if learning, writing or the check failed\n"
    "(the files are kept), 127 if PROGRAM was not found.\n"
    "\n"
    "See sbx-learn(1).";

/* The sbx-run next to this sbx-learn, else the one in PATH. */
static char *find_sbx_run(void) {
  g_autofree char *self = g_file_read_link("/proc/self/exe", NULL);
  if (self) {
    g_autofree char *dir = g_path_get_dirname(self);
    char *next = g_build_filename(dir, "sbx-run", NULL);
    if (access(next, X_OK) == 0)
      return next;
    g_free(next);
  }
  return g_find_program_in_path("sbx-run");
}

/* How many of the rerun's refusal lines a failed check shows. */
#define SHOWN_REFUSALS 10

/* Runs run_argv under sbx-run --explain, stdin from /dev/null and stdout
 * discarded, and compares its exit status with the learning run's.
 * TRUE if they match; otherwise says so with the rerun's first
 * refusals. */
static gboolean verify(char **run_argv, int learned_status) {
  g_autofree char *sbx_run = find_sbx_run();
  if (!sbx_run) {
    fprintf(stderr,
            "sbx-learn: cannot check the profile: no sbx-run next to "
            "sbx-learn or in PATH (--no-verify skips the check)\n");
    return FALSE;
  }
  g_autoptr(GPtrArray) a = g_ptr_array_new();
  g_ptr_array_add(a, sbx_run);
  /* The supervisor names each refusal, which a failed check shows. */
  g_ptr_array_add(a, "--explain");
  for (char **p = run_argv; *p; p++)
    g_ptr_array_add(a, *p);
  g_ptr_array_add(a, NULL);
  fprintf(stderr,
          "sbx-learn: checking the profile: running the command "
          "again under sbx-run (its output is discarded)\n");
  fflush(stderr);
  g_autofree char *err = NULL;
  int wait_status = 0;
  GError *error = NULL;
  if (!g_spawn_sync(NULL, (char **)a->pdata, NULL,
                    G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDIN_FROM_DEV_NULL,
                    NULL, NULL, NULL, &err, &wait_status, &error)) {
    fprintf(stderr, "sbx-learn: cannot check the profile: %s\n",
            error->message);
    g_error_free(error);
    return FALSE;
  }
  int status = WIFEXITED(wait_status)     ? WEXITSTATUS(wait_status)
               : WIFSIGNALED(wait_status) ? 128 + WTERMSIG(wait_status)
                                          : 125;
  if (status == learned_status) {
    fprintf(stderr,
            "sbx-learn: checked: under sbx-run with the learned profile the "
            "program exited %d, as it did while learning\n",
            status);
    return TRUE;
  }
  fprintf(stderr,
          "sbx-learn: CHECK FAILED: under sbx-run with the learned profile "
          "the program exited %d, while learning it exited %d; the profile "
          "does not reproduce the run (both files are kept for review).\n",
          status, learned_status);
  g_auto(GStrv) lines = g_strsplit(err ? err : "", "\n", -1);
  unsigned shown = 0;
  for (char **l = lines; *l && shown < SHOWN_REFUSALS; l++) {
    /* A refusal is reported as the program's call returns, so the
     * program's own message may have begun the line. */
    const char *line = strstr(*l, "sbx: ");
    if (!line)
      continue;
    if (shown++ == 0)
      fprintf(stderr, "sbx-learn: the rerun's first refusals:\n");
    fprintf(stderr, "  %s\n", line);
  }
  if (shown == 0)
    fprintf(stderr,
            "sbx-learn: the rerun printed no sbx: line; its stderr "
            "ended:\n%s\n",
            err && strlen(err) > 2000 ? err + strlen(err) - 2000
                                      : (err ? err : ""));
  return FALSE;
}

int main(int argc, char **argv) {
  char *name = NULL;
  char *default_action = NULL;
  int fold_min = 3;
  gboolean no_verify = FALSE;
  char **program = NULL;
  char *cmd = NULL;
  char **run_argv = NULL;
  GOptionEntry entries[] = {
      {"output", 'o', 0, G_OPTION_ARG_FILENAME, &name,
       "Write NAME.policy and NAME.profile (required; NAME may end in "
       ".profile)",
       "NAME"},
      {"default", 'd', 0, G_OPTION_ARG_STRING, &default_action,
       "The policy's action for calls not seen (default: 'return EPERM'; "
       "e.g. kill-process)",
       "ACTION"},
      {"fold", 'f', 0, G_OPTION_ARG_INT, &fold_min,
       "Fold a directory into one read rule when at least N files in it "
       "were read (default 3)",
       "N"},
      {"no-verify", 0, 0, G_OPTION_ARG_NONE, &no_verify,
       "Do not run the command again under sbx-run to check the profile", NULL},
      {G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &program, NULL,
       NULL},
      {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  g_autoptr(GOptionContext) ctx = g_option_context_new(
      "-o NAME [--] PROGRAM [ARGS...] - learn a policy from one run");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_description(ctx, description);
  g_option_context_set_strict_posix(ctx, TRUE);
  GError *error = NULL;
  int code = 125;
  if (!g_option_context_parse(ctx, &argc, &argv, &error)) {
    fprintf(stderr, "sbx-learn: %s (see sbx-learn --help)\n", error->message);
    goto out;
  }
  /* -o ls.profile (or ls.policy) names the same pair as -o ls. */
  if (name &&
      (g_str_has_suffix(name, ".profile") || g_str_has_suffix(name, ".policy")))
    *strrchr(name, '.') = '\0';
  if (!name || !*name || !program || !program[0] || fold_min < 2) {
    fprintf(stderr,
            "sbx-learn: %s (usage: sbx-learn -o NAME -- PROGRAM "
            "[ARGS...])\n",
            !name || !*name ? "-o NAME is required"
            : fold_min < 2  ? "--fold needs at least 2"
                            : "no program given");
    goto out;
  }
  if (default_action) {
    /* Checked before the program runs, not after. */
    g_autofree char *text = g_strdup_printf("@default %s\n", default_action);
    sbx_policy *pol = sbx_policy_parse_string(text, "--default", NULL, &error);
    if (!pol) {
      fprintf(stderr, "sbx-learn: --default %s: %s\n", default_action,
              error->message);
      goto out;
    }
    sbx_action_kind kind = pol->default_action.kind;
    sbx_policy_free(pol);
    if (kind == SBX_ACTION_ALLOW || kind == SBX_ACTION_USER_NOTIF) {
      fprintf(stderr,
              "sbx-learn: --default %s: %s; use return ERRNO, kill-process "
              "or log\n",
              default_action,
              kind == SBX_ACTION_ALLOW
                  ? "that would allow every call the run did not make"
                  : "user-notify is reserved for sbx-run's supervisor");
      goto out;
    }
  }
  sbx_learn_output o = {
      .name = name,
      .default_action = default_action ? default_action : "return EPERM",
      .fold_min = (unsigned)fold_min,
      .argv = program,
  };
  sbx_learn_record rec;
  sbx_learn_record_init(&rec);
  int status = sbx_learn_run(program, &rec, &error);
  if (status < 0) {
    fprintf(stderr, "sbx-learn: %s\n", error->message);
    if (g_error_matches(error, SBX_LEARN_ERROR, SBX_LEARN_ERROR_NOT_FOUND))
      code = 127;
    sbx_learn_record_clear(&rec);
    goto out;
  }
  sbx_learn_summary sum = {0};
  if (!sbx_learn_write(&rec, &o, &sum, &error)) {
    fprintf(stderr, "sbx-learn: %s\n", error->message);
    sbx_learn_record_clear(&rec);
    sbx_learn_summary_clear(&sum);
    goto out;
  }
  fprintf(stderr,
          "sbx-learn: %" G_GUINT64_FORMAT
          " calls from %u thread(s)%s; "
          "wrote %s (%u rules, %u with argument constraints) and %s "
          "(%u broker rules)\n",
          rec.total_calls, g_hash_table_size(rec.pids),
          status ? " (the program failed: the record shows a failing run)" : "",
          sum.policy_path, sum.n_rules, sum.n_constrained, sum.profile_path,
          sum.n_broker_rules);
  run_argv = sbx_learn_run_argv(&sum, program);
  cmd = sbx_learn_command_line(run_argv);
  if (rec.unknown_calls)
    fprintf(stderr,
            "sbx-learn: %" G_GUINT64_FORMAT
            " calls had numbers the syscall "
            "table does not name; they are not in the policy\n",
            rec.unknown_calls);
  if (sum.execs)
    fprintf(stderr,
            "sbx-learn: the program executed other programs; "
            "sbx-run needs --allow-exec for that\n");
  if (sum.traces)
    fprintf(stderr,
            "sbx-learn: the program traced processes; sbx-run needs "
            "--allow-ptrace for that\n");
  fprintf(stderr,
          "sbx-learn: a learned policy is only as complete as the run that "
          "produced it: what this run did not do will be refused. Review "
          "both files.\n"
          "sbx-learn: run it with: sbx-run %s\n",
          cmd);
  code = status;
  if (no_verify) {
    fprintf(stderr, "sbx-learn: not checked (--no-verify)\n");
  } else if (status > 128) {
    fprintf(stderr,
            "sbx-learn: not checked: the program was ended by signal %d; a "
            "rerun would not end the same way\n",
            status - 128);
  } else if (!verify(run_argv, status)) {
    code = 125;
  }
  sbx_learn_record_clear(&rec);
  sbx_learn_summary_clear(&sum);
out:
  g_clear_error(&error);
  g_free(cmd);
  g_strfreev(run_argv);
  g_free(name);
  g_free(default_action);
  g_strfreev(program);
  return code;
}
