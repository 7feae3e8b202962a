/* renderer-demo: a small multi-process "browser" on sbx.
 *
 * The host starts the sandbox (broker and zygote), spawns one renderer
 * worker per page, writes what each worker sends back over its message
 * channel (text and a PNG image drawn with pango and cairo) to the
 * output directory, then lets the hostile page's escape
 * requests run, one worker each, next to an unsandboxed control of the
 * same operation. It prints a table and exits 0 only if every page was
 * rendered and every attack was blocked (docs/demo.md).
 *
 * What it trusts: its command line and the sbx library. What it refuses:
 * everything a worker sends that fails demo_result_check; the pages are
 * never parsed here, only read and handed over.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "examples/renderer/attacks.h"
#include "examples/renderer/markup.h"
#include "examples/renderer/protocol.h"
#include "examples/renderer/renderer.h"
#include "sbx/sbx.h"

#define WORKER_TIMEOUT_MS 20000

typedef struct {
  char *name; /* file name in the pages directory */
  char *data;
  gsize len;
  bool rendered;
  char verdict[300];
  demo_result res;
  double ms; /* spawn to exit */
} page_run;

typedef struct {
  char name[48];
  const demo_attack *attack;
  bool control_ok;
  char control[160];
  bool blocked;
  bool skipped; /* optional, and this system lacks the feature */
  char outcome[240];
  pid_t pid; /* the worker, to find its lines in the broker's audit log */
} attack_run;

/* What one worker sent, and how it ended. */
typedef struct {
  bool got; /* a result that passed demo_result_check */
  demo_result res;
  char *text, *image, *status;
  sbx_worker_exit exit;
  char problem[200]; /* spawn or protocol trouble */
  pid_t pid;
  double ms; /* spawn to exit, wall clock */
} worker_run;

static void worker_run_clear(worker_run *w) {
  g_free(w->text);
  g_free(w->image);
  g_free(w->status);
  memset(w, 0, sizeof *w);
}

/* The next len bytes of the answer, NUL-terminated for the text parts. */
static char *read_part(sbx_channel *ch, uint32_t len, bool *ok) {
  char *buf = g_malloc((gsize)len + 1);
  size_t got = 0;
  if (*ok && !sbx_channel_read(ch, buf, len, WORKER_TIMEOUT_MS, &got, NULL))
    *ok = false;
  if (got != len)
    *ok = false;
  buf[len] = '\0';
  return buf;
}

/* The worker's one message on its channel: the result, then the parts it
 * announces. Nothing of it is trusted: the whole message must be exactly
 * as long as the result says, and within the protocol's maxima. */
static void read_answer(sbx_channel *ch, pid_t pid, worker_run *w) {
  uint64_t total = 0;
  GError *error = NULL;
  if (!sbx_channel_recv_begin(ch, WORKER_TIMEOUT_MS, &total, NULL, 0, NULL,
                              &error)) {
    /* A worker that sent nothing: the exit status tells what happened. */
    if (!g_error_matches(error, SBX_ERROR, SBX_ERROR_FAILED)) {
      g_snprintf(w->problem, sizeof w->problem, "no answer: %s",
                 error->message);
      kill(pid, SIGKILL);
    }
    g_error_free(error);
    return;
  }
  const char *why = NULL;
  size_t got = 0;
  if (total < sizeof w->res ||
      !sbx_channel_read(ch, &w->res, sizeof w->res, WORKER_TIMEOUT_MS, &got,
                        NULL) ||
      got != sizeof w->res) {
    g_snprintf(w->problem, sizeof w->problem, "bad answer: too short");
    return;
  }
  if (!demo_result_check(&w->res, got, &why)) {
    g_snprintf(w->problem, sizeof w->problem, "bad answer: %s", why);
    return;
  }
  if (total != sizeof w->res + (uint64_t)w->res.text_len + w->res.image_len +
                   w->res.status_len) {
    g_snprintf(w->problem, sizeof w->problem,
               "bad answer: its parts do not add up to its length");
    return;
  }
  bool ok = true;
  w->text = read_part(ch, w->res.text_len, &ok);
  w->image = read_part(ch, w->res.image_len, &ok);
  w->status = read_part(ch, w->res.status_len, &ok);
  w->got = ok;
  if (!ok)
    g_snprintf(w->problem, sizeof w->problem, "answer cut short");
}

static void run_worker(sbx_sandbox *sb, const demo_request *tmpl,
                       const page_run *page, uint32_t escape, worker_run *w) {
  memset(w, 0, sizeof *w);
  w->exit = (sbx_worker_exit)SBX_WORKER_EXIT_INIT();
  gsize payload_len = sizeof *tmpl + page->len;
  char *payload = g_malloc(payload_len);
  demo_request req = *tmpl;
  req.escape = escape;
  req.page_len = (uint32_t)page->len;
  g_strlcpy(req.page_name, page->name, sizeof req.page_name);
  memcpy(payload, &req, sizeof req);
  memcpy(payload + sizeof req, page->data, page->len);
  int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
  int fds[] = {devnull, devnull, STDERR_FILENO};
  sbx_channel *ch = NULL;
  sbx_spawn_config spawn =
      SBX_SPAWN_CONFIG_INIT(.process_type = "renderer", .payload = payload,
                            .payload_len = payload_len, .fds = fds,
                            .n_fds = G_N_ELEMENTS(fds), .channel = &ch);
  pid_t pid = -1;
  GError *error = NULL;
  gint64 start = g_get_monotonic_time();
  gboolean spawned = sbx_sandbox_spawn(sb, &spawn, &pid, &error);
  if (devnull >= 0)
    close(devnull);
  g_free(payload);
  if (!spawned) {
    g_snprintf(w->problem, sizeof w->problem, "spawn: %s", error->message);
    g_error_free(error);
    return;
  }
  read_answer(ch, pid, w);
  sbx_channel_close(ch);
  if (!sbx_sandbox_wait(sb, pid, WORKER_TIMEOUT_MS, &w->exit, &error)) {
    kill(pid, SIGKILL);
    g_clear_error(&error);
    if (!sbx_sandbox_wait(sb, pid, WORKER_TIMEOUT_MS, &w->exit, &error)) {
      g_snprintf(w->problem, sizeof w->problem, "wait: %s", error->message);
      g_clear_error(&error);
    }
  }
  w->pid = pid;
  w->ms = (double)(g_get_monotonic_time() - start) / 1000.0;
}

static void describe_exit(const sbx_worker_exit *e, char *buf, size_t len) {
  switch (e->reason) {
    case SBX_EXIT_NORMAL:
      g_snprintf(buf, len, "exit code %d", e->exit_code);
      break;
    case SBX_EXIT_SIGNALED:
      g_snprintf(buf, len, "signal %s", strsignal(e->signal));
      break;
    case SBX_EXIT_POLICY_KILL: {
      const char *what = e->detail;
      if (g_str_has_prefix(what, "policy kill: "))
        what += strlen("policy kill: ");
      g_snprintf(buf, len, "killed by SIG%s: %s",
                 sigabbrev_np(e->signal) ? sigabbrev_np(e->signal) : "?", what);
      break;
    }
    case SBX_EXIT_SETUP_FAILED:
      g_snprintf(buf, len, "sandbox setup failed: %s", e->detail);
      break;
    case SBX_EXIT_ZYGOTE_DIED:
      g_snprintf(buf, len, "the zygote died");
      break;
  }
}

static bool write_output(const char *dir, const char *page, const char *ext,
                         const char *data, uint32_t len, char *err,
                         size_t err_len) {
  char *stem = g_strdup(page);
  char *dot = strrchr(stem, '.');
  if (dot)
    *dot = '\0';
  char *name = g_strdup_printf("%s.%s", stem, ext);
  char *path = g_build_filename(dir, name, NULL);
  GError *error = NULL;
  bool ok = g_file_set_contents(path, data, len, &error);
  if (!ok) {
    g_snprintf(err, err_len, "%s", error->message);
    g_error_free(error);
  }
  g_free(path);
  g_free(name);
  g_free(stem);
  return ok;
}

static void render_page(sbx_sandbox *sb, const demo_request *tmpl,
                        page_run *page, const char *out_dir, char **status_out,
                        char **status_page) {
  worker_run w;
  run_worker(sb, tmpl, page, 0, &w);
  page->res = w.res;
  page->ms = w.ms;
  char how[200];
  describe_exit(&w.exit, how, sizeof how);
  if (w.problem[0]) {
    g_snprintf(page->verdict, sizeof page->verdict, "%s (worker: %s)",
               w.problem, how);
  } else if (!w.got) {
    g_snprintf(page->verdict, sizeof page->verdict, "no result (worker: %s)",
               how);
  } else if (!w.res.rendered) {
    g_snprintf(page->verdict, sizeof page->verdict, "%s", w.res.error);
  } else if (w.exit.reason != SBX_EXIT_NORMAL || w.exit.exit_code != 0) {
    g_snprintf(page->verdict, sizeof page->verdict, "worker ended badly: %s",
               how);
  } else if (write_output(out_dir, page->name, "txt", w.text, w.res.text_len,
                          page->verdict, sizeof page->verdict) &&
             write_output(out_dir, page->name, "png", w.image, w.res.image_len,
                          page->verdict, sizeof page->verdict)) {
    page->rendered = true;
    if (!*status_out && w.res.status_len) {
      *status_out = g_strdup(w.status);
      *status_page = page->name;
    }
  }
  worker_run_clear(&w);
}

static void judge(attack_run *a, const demo_request *tmpl,
                  const worker_run *w) {
  char how[200];
  describe_exit(&w->exit, how, sizeof how);
  a->blocked = false;
  if (!a->control_ok) {
    g_snprintf(a->outcome, sizeof a->outcome,
               "inconclusive: the control failed, so a refusal proves nothing");
    return;
  }
  if (w->problem[0]) {
    g_snprintf(a->outcome, sizeof a->outcome, "%s (worker: %s)", w->problem,
               how);
    return;
  }
  if (w->got && w->res.attempted) {
    if (w->res.attack_ret >= 0) {
      g_snprintf(a->outcome, sizeof a->outcome,
                 "ESCAPED: the call succeeded (returned %lld)",
                 (long long)w->res.attack_ret);
      return;
    }
    int e = w->res.attack_errno;
    g_snprintf(a->outcome, sizeof a->outcome, "refused: %s (%s)",
               strerrorname_np(e) ? strerrorname_np(e) : "errno",
               g_strerror(e));
    a->blocked = true;
  } else if (w->exit.reason == SBX_EXIT_POLICY_KILL) {
    g_snprintf(a->outcome, sizeof a->outcome, "%s", how);
    a->blocked = true;
  } else {
    g_snprintf(a->outcome, sizeof a->outcome,
               "ESCAPED or broken: the worker ended without reporting (%s)",
               how);
    return;
  }
  char trace[160] = "";
  if (a->attack->unharmed && !a->attack->unharmed(tmpl, trace, sizeof trace)) {
    g_snprintf(a->outcome, sizeof a->outcome, "ESCAPED: %s", trace);
    a->blocked = false;
  }
}

static void run_attack(sbx_sandbox *sb, const demo_request *tmpl,
                       const page_run *page, uint32_t index, attack_run *a) {
  g_strlcpy(a->name, page->res.escapes[index], sizeof a->name);
  a->attack = demo_attack_find(a->name);
  if (!a->attack) {
    g_snprintf(a->outcome, sizeof a->outcome,
               "no such attack (a typo in the page?): not attempted");
    return;
  }
  errno = 0;
  long rc = a->attack->run(tmpl, true);
  a->control_ok = rc >= 0;
  if (a->control_ok)
    g_snprintf(a->control, sizeof a->control, "works (%ld)", rc);
  else
    g_snprintf(a->control, sizeof a->control, "FAILED: %s", g_strerror(errno));
  if (!a->control_ok && a->attack->optional) {
    a->skipped = true;
    g_snprintf(a->outcome, sizeof a->outcome,
               "not attempted: this system does not offer it (%s)",
               g_strerror(errno));
    return;
  }
  worker_run w;
  run_worker(sb, tmpl, page, index + 1, &w);
  a->pid = w.pid;
  judge(a, tmpl, &w);
  worker_run_clear(&w);
}

static gint compare_names(gconstpointer a, gconstpointer b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void page_run_free(gpointer data) {
  page_run *p = data;
  g_free(p->name);
  g_free(p->data);
  g_free(p);
}

static GPtrArray *load_pages(const char *dir, GError **error) {
  GDir *d = g_dir_open(dir, 0, error);
  if (!d)
    return NULL;
  GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
  const char *n;
  while ((n = g_dir_read_name(d)))
    if (g_str_has_suffix(n, ".html"))
      g_ptr_array_add(names, g_strdup(n));
  g_dir_close(d);
  g_ptr_array_sort(names, compare_names);
  GPtrArray *pages = g_ptr_array_new_with_free_func(page_run_free);
  for (guint i = 0; i < names->len; i++) {
    const char *name = g_ptr_array_index(names, i);
    page_run *p = g_new0(page_run, 1);
    p->name = g_strdup(name);
    char *path = g_build_filename(dir, name, NULL);
    GError *local = NULL;
    if (!g_file_get_contents(path, &p->data, &p->len, &local)) {
      g_snprintf(p->verdict, sizeof p->verdict, "%s", local->message);
      g_error_free(local);
    } else if (p->len > DEMO_MARKUP_MAX_BYTES) {
      g_snprintf(p->verdict, sizeof p->verdict,
                 "%s: %zu bytes, over the %d-byte page limit", path, p->len,
                 DEMO_MARKUP_MAX_BYTES);
      g_clear_pointer(&p->data, g_free);
    }
    g_free(path);
    g_ptr_array_add(pages, p);
  }
  g_ptr_array_unref(names);
  if (pages->len == 0) {
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NOENT,
                "%s: no .html pages there", dir);
    g_ptr_array_unref(pages);
    return NULL;
  }
  return pages;
}

/* The pages next to the sources: DEMO_PAGES_DIR is relative to the build
 * directory, where the binary lives. */
static char *default_pages_dir(void) {
  char *exe = g_file_read_link("/proc/self/exe", NULL);
  if (!exe)
    return g_strdup(DEMO_PAGES_DIR);
  char *dir = g_path_get_dirname(exe);
  char *path = g_build_filename(dir, DEMO_PAGES_DIR, NULL);
  char *canon = g_canonicalize_filename(path, NULL);
  g_free(path);
  g_free(dir);
  g_free(exe);
  return canon;
}

/* The run directory: home (the workers' writable tree), a canary outside
 * it, a symlink from home to the canary, and the name of a file no worker
 * may create. */
typedef struct {
  char *dir, *home, *canary, *link, *outside;
  int listen_fd;
} run_dir;

static bool make_run_dir(run_dir *r, demo_request *t, GError **error) {
  memset(r, 0, sizeof *r);
  r->listen_fd = -1;
  r->dir = g_dir_make_tmp("sbx-demo-XXXXXX", error);
  if (!r->dir)
    return false;
  r->home = g_build_filename(r->dir, "home", NULL);
  r->canary = g_build_filename(r->dir, "canary", NULL);
  r->link = g_build_filename(r->home, "escape-link", NULL);
  r->outside = g_build_filename(r->dir, "escaped", NULL);
  if (g_mkdir(r->home, 0700) != 0 ||
      !g_file_set_contents(r->canary, "canary: outside the sandbox\n", -1,
                           error) ||
      symlink(r->canary, r->link) != 0) {
    if (error && !*error)
      g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno), "%s: %s",
                  r->home, g_strerror(errno));
    return false;
  }
  g_chmod(r->canary, 0644);
  /* The abstract socket a worker must not reach (think X11 or D-Bus). */
  r->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  char *base = g_path_get_basename(r->dir);
  g_snprintf(t->abstract_name, sizeof t->abstract_name, "%s-%d", base,
             (int)getpid());
  g_free(base);
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  size_t n = strlen(t->abstract_name);
  memcpy(addr.sun_path + 1, t->abstract_name, n);
  if (r->listen_fd < 0 ||
      bind(r->listen_fd, (struct sockaddr *)&addr,
           (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n)) != 0 ||
      listen(r->listen_fd, 8) != 0) {
    g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
                "abstract socket @%s: %s", t->abstract_name, g_strerror(errno));
    return false;
  }
  g_strlcpy(t->home, r->home, sizeof t->home);
  g_strlcpy(t->link_path, r->link, sizeof t->link_path);
  g_strlcpy(t->outside_path, r->outside, sizeof t->outside_path);
  /* /etc/shadow when this user can read it (root); otherwise the canary,
   * so that the control can succeed and a refusal means something. */
  int fd = open("/etc/shadow", O_RDONLY | O_CLOEXEC);
  g_strlcpy(t->secret_path, fd >= 0 ? "/etc/shadow" : r->canary,
            sizeof t->secret_path);
  if (fd >= 0)
    close(fd);
  return true;
}

static void remove_run_dir(run_dir *r) {
  if (r->listen_fd >= 0)
    close(r->listen_fd);
  if (r->dir) {
    GDir *d = g_dir_open(r->home, 0, NULL);
    const char *n;
    while (d && (n = g_dir_read_name(d))) {
      char *p = g_build_filename(r->home, n, NULL);
      g_unlink(p);
      g_free(p);
    }
    if (d)
      g_dir_close(d);
    g_rmdir(r->home);
    g_unlink(r->canary);
    g_unlink(r->outside);
    g_rmdir(r->dir);
  }
  g_free(r->dir);
  g_free(r->home);
  g_free(r->canary);
  g_free(r->link);
  g_free(r->outside);
}

static void print_indented(const char *text, const char *indent) {
  char **lines = g_strsplit(text, "\n", -1);
  for (char **l = lines; *l; l++)
    if (**l)
      printf("%s%s\n", indent, *l);
  g_strfreev(lines);
}

/* The broker's audit lines for one worker: its refusals, in its words. */
static void print_denials(char **audit, pid_t pid) {
  char key[32];
  g_snprintf(key, sizeof key, " pid=%d ", (int)pid);
  for (char **l = audit; audit && *l; l++) {
    const char *op = strstr(*l, " op=");
    const char *flags = op ? strstr(op, " flags=") : NULL;
    const char *reason = strstr(*l, " reason=");
    if (!strstr(*l, key) || !op)
      continue;
    printf("%-20s   broker audit:%.*s%s\n", "",
           flags ? (int)(flags - op) : (int)strlen(op), op,
           flags && reason ? reason : "");
  }
}

/* The two tables; returns whether the run succeeded. */
static bool print_tables(GPtrArray *pages, GArray *attacks,
                         const demo_request *tmpl, const char *audit,
                         const char *status, const char *status_page) {
  guint rendered = 0, blocked = 0, skipped = 0;
  printf("%-18s %-9s %6s %8s %8s %7s %8s %9s  %s\n", "PAGE", "RESULT", "LINES",
         "TEXT", "IMAGE", "CACHE", "LICENSE", "WORKER", "CRC32");
  for (guint i = 0; i < pages->len; i++) {
    page_run *p = g_ptr_array_index(pages, i);
    if (p->rendered) {
      rendered++;
      printf("%-18s %-9s %6u %7uB %7uB %6uB %7uB %7.1fms  %08x\n", p->name,
             "rendered", p->res.lines, p->res.text_len, p->res.image_len,
             p->res.cache_bytes, p->res.license_bytes, p->ms, p->res.text_crc);
      if (p->res.n_escapes)
        printf("%-18s   asks for %u escape attempts (below)\n", "",
               p->res.n_escapes);
    } else {
      printf("%-18s %-9s %s\n", p->name, "FAILED", p->verdict);
    }
  }
  gchar *audit_text = NULL;
  g_file_get_contents(audit, &audit_text, NULL, NULL);
  char **audit_lines = audit_text ? g_strsplit(audit_text, "\n", -1) : NULL;
  printf("\n%-20s %-42s %-20s %s\n", "ATTACK", "TRIES", "CONTROL (no sandbox)",
         "IN THE SANDBOX");
  for (guint i = 0; i < attacks->len; i++) {
    attack_run *a = &g_array_index(attacks, attack_run, i);
    blocked += a->blocked;
    skipped += a->skipped;
    const char *verdict = a->blocked   ? "BLOCKED"
                          : a->skipped ? "SKIPPED"
                          : !a->attack ? "UNKNOWN"
                                       : "NOT BLOCKED";
    printf("%-20s %-42s %-20s %s: %s\n", a->name,
           a->attack ? a->attack->what : "?", a->control, verdict, a->outcome);
    print_denials(audit_lines, a->pid);
  }
  g_strfreev(audit_lines);
  g_free(audit_text);
  if (strcmp(tmpl->secret_path, "/etc/shadow") != 0)
    printf(
        "(read-shadow aims at a canary: /etc/shadow is unreadable for "
        "this user even without a sandbox)\n");
  if (status) {
    printf("\nSandbox status of the worker that rendered %s:\n", status_page);
    print_indented(status, "  ");
  }
  printf("\nThe broker's audit log: %s\n", audit);
  guint tried = attacks->len - skipped;
  bool ok = rendered == pages->len && tried > 0 && blocked == tried;
  printf("\n%u/%u pages rendered, %u/%u attacks blocked", rendered, pages->len,
         blocked, tried);
  if (skipped)
    printf(" (%u skipped: not offered by this system)", skipped);
  printf(": %s\n", ok ? "OK" : "FAILED");
  if (tried == 0)
    printf(
        "no page asked for an escape attempt, so nothing was shown "
        "to be blocked\n");
  return ok;
}

int main(int argc, char **argv) {
  /* In the zygote (a fresh exec of this program) it never returns. */
  sbx_main_hook(argc, argv);
  char *pages_dir = NULL, *out_dir = NULL;
  int width = 72;
  GOptionEntry entries[] = {
      {"pages", 0, 0, G_OPTION_ARG_FILENAME, &pages_dir,
       "Directory of .html pages (default: the demo's own)", "DIR"},
      {"out", 0, 0, G_OPTION_ARG_FILENAME, &out_dir,
       "Where the rendered pages go (default: a new directory in /tmp)", "DIR"},
      {"width", 0, 0, G_OPTION_ARG_INT, &width, "Layout width in columns", "N"},
      {NULL}};
  GOptionContext *ctx = g_option_context_new(
      "- render untrusted pages in sandboxed worker processes");
  g_option_context_add_main_entries(ctx, entries, NULL);
  GError *error = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &error)) {
    fprintf(stderr, "renderer-demo: %s (try --help)\n", error->message);
    return 2;
  }
  g_option_context_free(ctx);
  if (width < 20 || width > 200) {
    fprintf(stderr, "renderer-demo: --width %d is outside 20..200\n", width);
    return 2;
  }
  if (!pages_dir)
    pages_dir = default_pages_dir();
  GPtrArray *pages = load_pages(pages_dir, &error);
  if (!pages) {
    fprintf(stderr, "renderer-demo: %s (pass --pages DIR)\n", error->message);
    return 2;
  }
  if (out_dir) {
    if (g_mkdir_with_parents(out_dir, 0755) != 0) {
      fprintf(stderr, "renderer-demo: --out %s: %s\n", out_dir,
              g_strerror(errno));
      return 2;
    }
  } else if (!(out_dir = g_dir_make_tmp("sbx-demo-out-XXXXXX", &error))) {
    fprintf(stderr, "renderer-demo: %s\n", error->message);
    return 2;
  }

  demo_request tmpl = {.magic = DEMO_REQUEST_MAGIC, .width = (uint32_t)width};
  run_dir rd;
  if (!make_run_dir(&rd, &tmpl, &error)) {
    fprintf(stderr, "renderer-demo: %s\n", error->message);
    remove_run_dir(&rd);
    return 2;
  }
  char *home_rule = g_strdup_printf("create %s/", rd.home);
  const char *const extra_rules[] = {home_rule, NULL};
  sbx_process_type types[] = {
      SBX_PROCESS_TYPE_INIT(.name = "renderer", .profile = "renderer",
                            .entry = demo_renderer_main,
                            .extra_rules = extra_rules)};
  char *audit = g_build_filename(out_dir, "broker-audit.log", NULL);
  g_unlink(audit);
  sbx_sandbox_config config =
      SBX_SANDBOX_CONFIG_INIT(.types = types, .n_types = G_N_ELEMENTS(types),
                              .audit_log = audit);
  sbx_sandbox *sb = NULL;
  if (!sbx_sandbox_start(&config, &sb, &error)) {
    fprintf(stderr, "renderer-demo: cannot start the sandbox: %s\n",
            error->message);
    remove_run_dir(&rd);
    return 1;
  }
  tmpl.broker_pid = sbx_sandbox_broker_pid(sb);
  tmpl.zygote_pid = sbx_sandbox_zygote_pid(sb);

  printf("renderer-demo: %u pages from %s, broker pid %d, zygote pid %d\n",
         pages->len, pages_dir, (int)tmpl.broker_pid, (int)tmpl.zygote_pid);
  printf("output: %s\n\n", out_dir);

  char *status = NULL, *status_page = NULL;
  for (guint i = 0; i < pages->len; i++) {
    page_run *p = g_ptr_array_index(pages, i);
    if (p->data)
      render_page(sb, &tmpl, p, out_dir, &status, &status_page);
  }
  GArray *attacks = g_array_new(FALSE, TRUE, sizeof(attack_run));
  for (guint i = 0; i < pages->len; i++) {
    page_run *p = g_ptr_array_index(pages, i);
    for (uint32_t e = 0; p->rendered && e < p->res.n_escapes; e++) {
      attack_run a;
      memset(&a, 0, sizeof a);
      run_attack(sb, &tmpl, p, e, &a);
      g_array_append_val(attacks, a);
    }
  }
  sbx_sandbox_stop(sb);

  bool ok = print_tables(pages, attacks, &tmpl, audit, status, status_page);
  g_free(status);
  g_array_unref(attacks);
  g_ptr_array_unref(pages);
  remove_run_dir(&rd);
  g_free(home_rule);
  g_free(audit);
  g_free(pages_dir);
  g_free(out_dir);
  return ok ? 0 : 1;
}
