/* sbx-policy: compile, evaluate, disassemble, lint, import and export
 * seccomp policies (docs/man/sbx-policy.1).
 *
 * Why it exists: a policy is only reviewable if one can ask what the
 * compiled program, the thing the kernel runs, says for a given call.
 * `eval` therefore never consults the parsed policy: it compiles and runs
 * the program in sbx's BPF interpreter.
 *
 * Trusts: the parser, compiler and interpreter of libsbx. Refuses: unknown
 * system calls and constants, malformed numbers, compiled files that
 * seccomp(2) would refuse; every refusal names the file (and line and
 * column for policy text) and exits non-zero.
 */
#include <errno.h>
#include <linux/audit.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "sandbox/kernel/seccomp/bpf.h"
#include "sandbox/policy/compiler.h"
#include "sandbox/policy/builtin/builtin.h"
#include "sandbox/policy/constants.h"
#include "sandbox/policy/lint.h"
#include "sandbox/policy/parser.h"
#include "sandbox/base/syscalls.h"
#include "sandbox/policy/disasm.h"
#include "sandbox/policy/oci.h"

#define X32_SYSCALL_BIT 0x40000000u

/* Exit codes: 0 success, 1 bad input (policy, profile, arguments), 2 usage. */
enum { EXIT_BAD_INPUT = 1, EXIT_USAGE = 2 };

static const char kUsage[] =
    "Usage: sbx-policy COMMAND [OPTIONS] ARGS\n"
    "\n"
    "POLICY is a policy file or the name of a built-in policy\n"
    "(renderer.policy, utility, ...).\n"
    "\n"
    "  compile POLICY -o FILE       write the BPF program (struct "
    "sock_filter[])\n"
    "  eval [--arch A] POLICY SYSCALL [ARG0..ARG5]\n"
    "                               run the compiled program on one call\n"
    "  dump POLICY|PROGRAM          disassemble\n"
    "  check POLICY...              lint; warnings on stderr\n"
    "  import --format oci PROFILE [-o OUT]  OCI seccomp JSON to policy text\n"
    "  export --format oci [--for-container] [--large-numbers] POLICY [-o "
    "OUT]\n"
    "                               policy to OCI seccomp JSON; "
    "--for-container\n"
    "                               adds the calls runc and crun make before "
    "the\n"
    "                               container's process runs\n"
    "  builtins                     list the built-in policies\n";

static int usage_error(const char *format, ...) G_GNUC_PRINTF(1, 2);

static int usage_error(const char *format, ...) {
  va_list ap;
  va_start(ap, format);
  fputs("sbx-policy: ", stderr);
  vfprintf(stderr, format, ap);
  va_end(ap);
  fputs("\nRun 'sbx-policy --help' for usage.\n", stderr);
  return EXIT_USAGE;
}

static int fail(GError *error) {
  fprintf(stderr, "%s\n", error->message);
  g_error_free(error);
  return EXIT_BAD_INPUT;
}

static gboolean is_regular_file(const char *path) {
  return g_file_test(path, G_FILE_TEST_IS_REGULAR);
}

/* A file path, or failing that a built-in policy name. */
static sbx_policy *load_policy(const char *arg, GError **error) {
  if (is_regular_file(arg) || strchr(arg, '/') != NULL)
    return sbx_policy_parse_file(arg, error);
  char *file = g_str_has_suffix(arg, ".policy")
                   ? g_strdup(arg)
                   : g_strconcat(arg, ".policy", NULL);
  gboolean builtin = sbx_builtin_find(file) != NULL;
  g_free(file);
  if (builtin)
    return sbx_builtin_policy(arg, error);
  g_set_error(error, SBX_POLICY_ERROR, SBX_POLICY_ERROR_IO,
              "%s: no such file, and no built-in policy of that name (see "
              "'sbx-policy builtins')",
              arg);
  return NULL;
}

/* Compiled programs contain NUL bytes (the first load's jt/jf); policy
 * text never does. */
static gboolean looks_compiled(const char *data, gsize len) {
  return memchr(data, '\0', len) != NULL;
}

/* The program of a policy (compiled here) or of a compiled file. */
static gboolean load_program(const char *arg, sbx_bpf_program *out,
                             GError **error) {
  char *data = NULL;
  gsize len = 0;
  if (is_regular_file(arg) && g_file_get_contents(arg, &data, &len, NULL) &&
      looks_compiled(data, len)) {
    if (len % sizeof(struct sock_filter) != 0) {
      g_set_error(error, SBX_BPF_ERROR, SBX_BPF_ERROR_INVALID_PROGRAM,
                  "%s: %zu bytes is not a whole number of %zu-byte "
                  "instructions",
                  arg, (size_t)len, sizeof(struct sock_filter));
      g_free(data);
      return FALSE;
    }
    GError *local = NULL;
    size_t n = len / sizeof(struct sock_filter);
    if (!sbx_bpf_check((const struct sock_filter *)(void *)data, n, &local)) {
      g_set_error(error, SBX_BPF_ERROR, SBX_BPF_ERROR_INVALID_PROGRAM, "%s: %s",
                  arg, local->message);
      g_error_free(local);
      g_free(data);
      return FALSE;
    }
    out->insns = (struct sock_filter *)(void *)data;
    out->len = n;
    return TRUE;
  }
  g_free(data);
  sbx_policy *policy = load_policy(arg, error);
  if (policy == NULL)
    return FALSE;
  gboolean ok = sbx_bpf_compile(policy, out, error);
  if (!ok)
    g_prefix_error(error, "%s: ", arg);
  sbx_policy_free(policy);
  return ok;
}

static gboolean write_output(const char *path, const char *data, gsize len,
                             GError **error) {
  if (path == NULL || strcmp(path, "-") == 0) {
    if (fwrite(data, 1, len, stdout) != len || fflush(stdout) != 0) {
      g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
                  "<stdout>: %s", g_strerror(errno));
      return FALSE;
    }
    return TRUE;
  }
  GError *local = NULL;
  if (!g_file_set_contents(path, data, (gssize)len, &local)) {
    g_set_error(error, G_FILE_ERROR, local->code, "%s", local->message);
    g_error_free(local);
    return FALSE;
  }
  return TRUE;
}

/* Every option of every command; each command accepts the ones its
 * table entry names. */
typedef struct {
  char *output;
  char *arch;
  char *format;
  gboolean werror;
  gboolean for_container;
  gboolean large_numbers;
} options;

enum {
  OPT_OUTPUT = 1 << 0,
  OPT_ARCH = 1 << 1,
  OPT_FORMAT = 1 << 2,
  OPT_WERROR = 1 << 3,
  OPT_FOR_CONTAINER = 1 << 4,
  OPT_LARGE_NUMBERS = 1 << 5,
};

/* ---- compile ------------------------------------------------------------- */

static int cmd_compile(char **args, int n, const options *o) {
  if (o->output == NULL)
    return usage_error("compile: -o FILE is required");
  GError *error = NULL;
  int status = 0;
  sbx_policy *policy = load_policy(args[0], &error);
  sbx_bpf_program prog = {0};
  if (policy == NULL || !sbx_bpf_compile(policy, &prog, &error) ||
      !write_output(o->output, (const char *)prog.insns,
                    prog.len * sizeof(struct sock_filter), &error))
    status = fail(error);
  sbx_bpf_program_clear(&prog);
  sbx_policy_free(policy);
  return status;
}

/* ---- eval ---------------------------------------------------------------- */

/* NUMBER or CONSTANT, or several joined by '|'. */
static gboolean parse_value(const char *text, uint64_t *out, GError **error) {
  char **parts = g_strsplit(text, "|", -1);
  uint64_t v = 0;
  gboolean ok = parts[0] != NULL;
  for (char **p = parts; ok && *p; p++) {
    char *part = g_strstrip(*p);
    uint64_t x;
    char *end = NULL;
    errno = 0;
    if (g_ascii_isdigit(part[0]) || part[0] == '-') {
      if (part[0] == '-')
        x = (uint64_t)g_ascii_strtoll(part, &end, 0);
      else
        x = g_ascii_strtoull(part, &end, 0);
      ok = end != part && *end == '\0' && errno == 0;
    } else {
      ok = part[0] != '\0' && sbx_constant_lookup(part, &x);
    }
    if (ok)
      v |= x;
    else
      g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                  "'%s' is neither a number nor a known constant", part);
  }
  if (parts[0] == NULL)
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "empty argument value");
  g_strfreev(parts);
  *out = v;
  return ok;
}

typedef enum { ARCH_X86_64, ARCH_I386, ARCH_X32 } eval_arch;

static gboolean parse_one_syscall(const char *text, eval_arch arch, int *nr,
                                  GError **error) {
  if (g_ascii_isdigit(text[0])) {
    char *end = NULL;
    errno = 0;
    uint64_t v = g_ascii_strtoull(text, &end, 0);
    if (*end != '\0' || errno != 0 || v > UINT32_MAX) {
      g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                  "'%s' is not a system call number", text);
      return FALSE;
    }
    *nr = (int)(uint32_t)v;
    if (arch == ARCH_X32)
      *nr |= X32_SYSCALL_BIT;
    return TRUE;
  }
  int n = -1;
  if (arch == ARCH_X86_64) {
    n = sbx_syscall_number(text);
  } else {
    n = seccomp_syscall_resolve_name_arch(
        arch == ARCH_I386 ? SCMP_ARCH_X86 : SCMP_ARCH_X32, text);
    if (n < 0)
      n = -1;
    else if (arch == ARCH_X32)
      n |= X32_SYSCALL_BIT;
  }
  if (n < 0) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "unknown system call '%s' for %s", text,
                arch == ARCH_X86_64 ? "x86-64"
                : arch == ARCH_I386 ? "i386"
                                    : "x32");
    return FALSE;
  }
  *nr = n;
  return TRUE;
}

/* A name or number, or several joined by '|' ("0x40000000|getpid" is the
 * x32 getpid). */
static gboolean parse_syscall(const char *text, eval_arch arch, int *nr,
                              GError **error) {
  char **parts = g_strsplit(text, "|", -1);
  gboolean ok = parts[0] != NULL;
  uint32_t v = 0;
  for (char **p = parts; ok && *p; p++) {
    int one = 0;
    ok = parse_one_syscall(g_strstrip(*p), arch, &one, error);
    v |= (uint32_t)one;
  }
  if (parts[0] == NULL)
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "empty system call");
  g_strfreev(parts);
  *nr = (int)v;
  return ok;
}

static void print_verdict(uint32_t ret) {
  GString *s = g_string_new(NULL);
  sbx_bpf_append_verdict(s, ret);
  puts(s->str);
  g_string_free(s, TRUE);
}

static int cmd_eval(char **args, int n, const options *o) {
  eval_arch arch;
  if (o->arch == NULL || strcmp(o->arch, "x86_64") == 0 ||
      strcmp(o->arch, "x86-64") == 0)
    arch = ARCH_X86_64;
  else if (strcmp(o->arch, "i386") == 0)
    arch = ARCH_I386;
  else if (strcmp(o->arch, "x32") == 0)
    arch = ARCH_X32;
  else
    return usage_error(
        "eval: unknown architecture '%s' (expected x86_64, "
        "i386 or x32)",
        o->arch);
  GError *error = NULL;
  struct seccomp_data data = {.arch = arch == ARCH_I386 ? AUDIT_ARCH_I386
                                                        : AUDIT_ARCH_X86_64};
  int status = 0;
  if (!parse_syscall(args[1], arch, &data.nr, &error)) {
    status = usage_error("eval: %s", error->message);
    g_error_free(error);
    return status;
  }
  for (int i = 2; i < n; i++) {
    uint64_t v;
    if (!parse_value(args[i], &v, &error)) {
      status = usage_error("eval: arg%d: %s", i - 2, error->message);
      g_error_free(error);
      return status;
    }
    data.args[i - 2] = v;
  }
  sbx_bpf_program prog = {0};
  if (load_program(args[0], &prog, &error))
    print_verdict(sbx_bpf_run(prog.insns, prog.len, &data, NULL));
  else
    status = fail(error);
  sbx_bpf_program_clear(&prog);
  return status;
}

/* ---- dump ---------------------------------------------------------------- */

static int cmd_dump(char **args, int n, const options *o) {
  GError *error = NULL;
  sbx_bpf_program prog = {0};
  int status = 0;
  if (load_program(args[0], &prog, &error)) {
    char *text = sbx_bpf_disassemble(prog.insns, prog.len);
    printf("# %s: %zu instructions\n%s", args[0], prog.len, text);
    g_free(text);
  } else {
    status = fail(error);
  }
  sbx_bpf_program_clear(&prog);
  return status;
}

/* ---- check --------------------------------------------------------------- */

/* Lints one policy; a built-in name is linted from a private copy and the
 * messages name it "builtin:NAME". Returns the number of warnings, or -1
 * after printing the error. */
static int check_one(const char *arg) {
  GError *error = NULL;
  char *tmpdir = NULL;
  char *path = g_strdup(arg);
  if (!is_regular_file(arg) && strchr(arg, '/') == NULL) {
    char *file = g_str_has_suffix(arg, ".policy")
                     ? g_strdup(arg)
                     : g_strconcat(arg, ".policy", NULL);
    const sbx_builtin_file *f = sbx_builtin_find(file);
    if (f != NULL) {
      tmpdir = g_dir_make_tmp("sbx-policy-XXXXXX", &error);
      if (tmpdir == NULL) {
        g_free(file);
        g_free(path);
        fail(error);
        return -1;
      }
      g_free(path);
      path = g_build_filename(tmpdir, file, NULL);
      if (!g_file_set_contents(path, f->text, (gssize)f->len, &error)) {
        g_free(file);
        g_free(path);
        g_rmdir(tmpdir);
        g_free(tmpdir);
        fail(error);
        return -1;
      }
    }
    g_free(file);
  }
  GPtrArray *warnings = sbx_policy_lint_file(path, &error);
  char *prefix = tmpdir ? g_strconcat(tmpdir, "/", NULL) : NULL;
  int count = -1;
  if (warnings == NULL) {
    fprintf(stderr, "%s\n", error->message);
    g_error_free(error);
  } else {
    count = (int)warnings->len;
    for (guint k = 0; k < warnings->len; k++) {
      const char *w = g_ptr_array_index(warnings, k);
      if (prefix != NULL && g_str_has_prefix(w, prefix))
        fprintf(stderr, "builtin:%s\n", w + strlen(prefix));
      else
        fprintf(stderr, "%s\n", w);
    }
    g_ptr_array_unref(warnings);
  }
  if (tmpdir != NULL) {
    g_unlink(path);
    g_rmdir(tmpdir);
  }
  g_free(prefix);
  g_free(tmpdir);
  g_free(path);
  return count;
}

static int cmd_check(char **args, int n, const options *o) {
  int status = 0;
  for (int i = 0; i < n; i++) {
    int w = check_one(args[i]);
    if (w < 0 || (o->werror && w > 0))
      status = EXIT_BAD_INPUT;
  }
  return status;
}

/* ---- import / export ----------------------------------------------------- */

static gboolean format_is_oci(const char *cmd, const options *o) {
  if (o->format != NULL && strcmp(o->format, "oci") == 0)
    return TRUE;
  usage_error("%s: --format oci is required (the only format)", cmd);
  return FALSE;
}

static int finish_conversion(char *text, GError *error, const options *o) {
  int status = 0;
  if (text == NULL || !write_output(o->output, text, strlen(text), &error))
    status = fail(error);
  g_free(text);
  return status;
}

static int cmd_import(char **args, int n, const options *o) {
  if (!format_is_oci("import", o))
    return EXIT_USAGE;
  GError *error = NULL;
  char *text = NULL;
  sbx_oci_profile *profile = sbx_oci_profile_load_file(args[0], &error);
  if (profile != NULL)
    text = sbx_oci_import(profile, &error);
  sbx_oci_profile_free(profile);
  return finish_conversion(text, error, o);
}

static int cmd_export(char **args, int n, const options *o) {
  if (!format_is_oci("export", o))
    return EXIT_USAGE;
  GError *error = NULL;
  char *text = NULL;
  sbx_policy *policy = load_policy(args[0], &error);
  unsigned flags = (o->for_container ? SBX_OCI_EXPORT_FOR_CONTAINER : 0) |
                   (o->large_numbers ? SBX_OCI_EXPORT_LARGE_NUMBERS : 0);
  if (policy != NULL) {
    text = sbx_oci_export(policy, flags, &error);
    if (text == NULL)
      g_prefix_error(&error, "%s: ", args[0]);
  }
  sbx_policy_free(policy);
  return finish_conversion(text, error, o);
}

static int cmd_builtins(char **args, int n, const options *o) {
  for (size_t k = 0; k < sbx_builtin_n_files; k++) {
    if (g_str_has_suffix(sbx_builtin_files[k].name, ".policy"))
      puts(sbx_builtin_files[k].name);
  }
  return 0;
}

/* What each command takes, in one place. */
static const struct {
  const char *name;
  const char *params;
  unsigned options;
  int min_args, max_args; /* positional arguments after the command */
  int (*run)(char **args, int n, const options *o);
} kCommands[] = {
    {"compile", "POLICY -o FILE", OPT_OUTPUT, 1, 1, cmd_compile},
    {"eval", "POLICY SYSCALL [ARG0..ARG5]", OPT_ARCH, 2, 8, cmd_eval},
    {"dump", "POLICY|PROGRAM", 0, 1, 1, cmd_dump},
    {"check", "POLICY...", OPT_WERROR, 1, G_MAXINT, cmd_check},
    {"import", "--format oci PROFILE [-o OUT]", OPT_FORMAT | OPT_OUTPUT, 1, 1,
     cmd_import},
    {"export",
     "--format oci [--for-container] [--large-numbers] POLICY [-o OUT]",
     OPT_FORMAT | OPT_OUTPUT | OPT_FOR_CONTAINER | OPT_LARGE_NUMBERS, 1, 1,
     cmd_export},
    {"builtins", "", 0, 0, 0, cmd_builtins},
};

int main(int argc, char **argv) {
  if (argc < 2)
    return usage_error("missing command");
  const char *cmd = argv[1];
  if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 ||
      strcmp(cmd, "help") == 0) {
    fputs(kUsage, stdout);
    return 0;
  }
  for (size_t k = 0; k < G_N_ELEMENTS(kCommands); k++) {
    if (strcmp(cmd, kCommands[k].name) != 0)
      continue;
    options o = {0};
    const GOptionEntry all[] = {
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &o.output, "Write to FILE",
         "FILE"},
        {"arch", 'a', 0, G_OPTION_ARG_STRING, &o.arch,
         "Architecture of the call: x86_64 (default), i386 or x32", "ARCH"},
        {"format", 'f', 0, G_OPTION_ARG_STRING, &o.format,
         "Profile format (only 'oci': Docker, runc, crun, podman)", "FORMAT"},
        {"werror", 0, 0, G_OPTION_ARG_NONE, &o.werror,
         "Exit with status 1 when there are warnings", NULL},
        {"for-container", 0, 0, G_OPTION_ARG_NONE, &o.for_container,
         "Add the calls runc's and crun's init make before the container's "
         "process runs",
         NULL},
        {"large-numbers", 0, 0, G_OPTION_ARG_NONE, &o.large_numbers,
         "Write constants above 2^53 where no equivalent with smaller ones "
         "exists (jq and JavaScript change them)",
         NULL},
    };
    GOptionEntry entries[G_N_ELEMENTS(all) + 1];
    size_t n_entries = 0;
    for (size_t i = 0; i < G_N_ELEMENTS(all); i++)
      if (kCommands[k].options & (1u << i))
        entries[n_entries++] = all[i];
    entries[n_entries] = (GOptionEntry){NULL, 0, 0, 0, NULL, NULL, NULL};
    /* The command sees argv from its name on, as its own program. */
    GOptionContext *ctx = g_option_context_new(kCommands[k].params);
    g_option_context_add_main_entries(ctx, entries, NULL);
    /* Negative argument values ("-1") are values, not options. */
    g_option_context_set_ignore_unknown_options(ctx, TRUE);
    char **rest = g_new0(char *, argc);
    for (int i = 1; i < argc; i++)
      rest[i - 1] = g_strdup(argv[i]);
    GError *error = NULL;
    int status;
    /* The strv variant frees the strings it removes. */
    if (!g_option_context_parse_strv(ctx, &rest, &error)) {
      status = usage_error("%s: %s", cmd, error->message);
      g_error_free(error);
    } else {
      int n = (int)g_strv_length(rest) - 1;
      if (n < kCommands[k].min_args || n > kCommands[k].max_args)
        status =
            usage_error("%s: expected %s %s", cmd, cmd, kCommands[k].params);
      else
        status = kCommands[k].run(rest + 1, n, &o);
    }
    g_option_context_free(ctx);
    g_strfreev(rest);
    g_free(o.output);
    g_free(o.arch);
    g_free(o.format);
    return status;
  }
  return usage_error("unknown command '%s'", cmd);
}
