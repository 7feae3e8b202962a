/* Denial lines and the audit log; see report.h.
 *
 * Trusts nothing in the events' strings; escapes them. Refuses nothing:
 * a log that cannot be written loses lines, never decisions.
 */
#include "sandbox/runner/report.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Distinct denials kept for the summary, and options it suggests. */
#define MAX_KEPT 4096
#define SUMMARY_LINES 10

struct sbx_run_report {
  int audit_fd; /* -1: none */
  int stderr_fd;
  bool explain;
  GHashTable *printed; /* denial lines already seen */
  GPtrArray *lines;    /* the same, in order (owned by printed) */
  guint dropped;       /* distinct lines beyond MAX_KEPT */
  GHashTable *hinted;  /* options suggested */
  GPtrArray *hints;    /* the same, in order (owned by hinted) */
  /* A program lookup (a shell searching PATH): option -> the name every
   * refusal that hinted it looked for (stat, access or exec of DIR/NAME);
   * "" once something else hinted it. */
  GHashTable *looked_up;
  GHashTable *executed; /* names hinted with --allow-exec */
};

sbx_run_report *sbx_run_report_new(const char *audit_path, int stderr_fd,
                                   bool explain, GError **error) {
  int fd = -1;
  if (audit_path) {
    fd = open(audit_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0) {
      int err = errno;
      g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(err),
                  "--audit %s: %s", audit_path, g_strerror(err));
      return NULL;
    }
  }
  sbx_run_report *r = g_new0(sbx_run_report, 1);
  r->audit_fd = fd;
  r->stderr_fd = stderr_fd;
  r->explain = explain;
  r->printed = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  r->lines = g_ptr_array_new();
  r->hinted = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  r->hints = g_ptr_array_new();
  r->looked_up = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free);
  r->executed = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  return r;
}

void sbx_run_report_free(sbx_run_report *r) {
  if (!r)
    return;
  if (r->audit_fd >= 0)
    close(r->audit_fd);
  g_ptr_array_free(r->lines, TRUE);
  g_hash_table_destroy(r->printed);
  g_hash_table_destroy(r->looked_up);
  g_hash_table_destroy(r->executed);
  g_ptr_array_free(r->hints, TRUE);
  g_hash_table_destroy(r->hinted);
  g_free(r);
}

static void append_escaped(GString *s, const char *text) {
  for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
    if (*p < 0x20 || *p >= 0x7f || *p == '\\')
      g_string_append_printf(s, "\\x%02x", *p);
    else
      g_string_append_c(s, (char)*p);
  }
}

/* The option of a hint that names no path. */
static const char *hint_flag(sbx_unotify_hint hint) {
  switch (hint) {
    case SBX_UNOTIFY_HINT_EXEC:
      return "--allow-exec";
    case SBX_UNOTIFY_HINT_NET:
      return "--net";
    case SBX_UNOTIFY_HINT_PTRACE:
      return "--allow-ptrace";
    default:
      return "";
  }
}

char *sbx_run_report_format_denial(const sbx_unotify_event *ev) {
  GString *s = g_string_new("sbx: denied ");
  g_string_append(s, ev->operation ? ev->operation : "syscall");
  g_string_append_c(s, ' ');
  if (ev->path)
    append_escaped(s, ev->path);
  else if (ev->detail)
    append_escaped(s, ev->detail);
  else
    append_escaped(s, ev->syscall);
  if (ev->path && ev->path2) {
    g_string_append(s, " -> ");
    append_escaped(s, ev->path2);
  }
  if (ev->target) {
    g_string_append(s, ", a link to ");
    append_escaped(s, ev->target);
  }
  switch (ev->hint) {
    case SBX_UNOTIFY_HINT_READ:
      if (ev->hint_path) {
        g_string_append(s, " (allow with --allow-read ");
        append_escaped(s, ev->hint_path);
        g_string_append_c(s, ')');
      }
      break;
    case SBX_UNOTIFY_HINT_WRITE:
      if (ev->hint_path) {
        g_string_append(s, " (allow with --allow-write ");
        append_escaped(s, ev->hint_path);
        g_string_append_c(s, ')');
      }
      break;
    case SBX_UNOTIFY_HINT_EXEC:
    case SBX_UNOTIFY_HINT_NET:
    case SBX_UNOTIFY_HINT_PTRACE:
      g_string_append_printf(s, " (allow with %s)", hint_flag(ev->hint));
      break;
    case SBX_UNOTIFY_HINT_NEVER:
      if (ev->reason) {
        g_string_append(s, " (");
        append_escaped(s, ev->reason);
        g_string_append_c(s, ')');
      }
      break;
    case SBX_UNOTIFY_HINT_NONE:
      break;
  }
  return g_string_free(s, FALSE);
}

static const char *errno_name(int err) {
  switch (err) {
    case 0:
      return "0";
    case EPERM:
      return "EPERM";
    case ENOENT:
      return "ENOENT";
    case EBADF:
      return "EBADF";
    case EACCES:
      return "EACCES";
    case EFAULT:
      return "EFAULT";
    case EEXIST:
      return "EEXIST";
    case ENOTDIR:
      return "ENOTDIR";
    case EISDIR:
      return "EISDIR";
    case EINVAL:
      return "EINVAL";
    case ENOSPC:
      return "ENOSPC";
    case EROFS:
      return "EROFS";
    case ENAMETOOLONG:
      return "ENAMETOOLONG";
    case ENOSYS:
      return "ENOSYS";
    case ENOTEMPTY:
      return "ENOTEMPTY";
    case ELOOP:
      return "ELOOP";
    case ENODATA:
      return "ENODATA";
    case EXDEV:
      return "EXDEV";
    case ENOTSUP:
      return "ENOTSUP";
    case ERANGE:
      return "ERANGE";
    case EAGAIN:
      return "EAGAIN";
    case ENXIO:
      return "ENXIO";
    default:
      return NULL;
  }
}

/* A JSON string. Everything but printable ASCII is written as \u00XX, so
 * the line stays one line of plain ASCII whatever the bytes are. */
static void append_json_string(GString *s, const char *text) {
  g_string_append_c(s, '"');
  for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
    if (*p == '"' || *p == '\\') {
      g_string_append_c(s, '\\');
      g_string_append_c(s, (char)*p);
    } else if (*p < 0x20 || *p >= 0x7f) {
      g_string_append_printf(s, "\\u%04x", *p);
    } else {
      g_string_append_c(s, (char)*p);
    }
  }
  g_string_append_c(s, '"');
}

static void append_member_name(GString *s, const char *name) {
  if (s->len > 1)
    g_string_append_c(s, ',');
  append_json_string(s, name);
  g_string_append_c(s, ':');
}

static void add_string_member(GString *s, const char *name, const char *value) {
  append_member_name(s, name);
  if (value)
    append_json_string(s, value);
  else
    g_string_append(s, "null");
}

static void add_int_member(GString *s, const char *name, gint64 value) {
  append_member_name(s, name);
  g_string_append_printf(s, "%" G_GINT64_FORMAT, value);
}

/* Paths are bytes, not necessarily UTF-8: they are escaped as on stderr
 * (\xHH) first, so the audit file and the denial line name a file the
 * same way. A NULL value adds no member. */
static void add_escaped_member(GString *s, const char *name,
                               const char *value) {
  if (!value)
    return;
  GString *e = g_string_new(NULL);
  append_escaped(e, value);
  add_string_member(s, name, e->str);
  g_string_free(e, TRUE);
}

/* Written by hand rather than with json-glib: linking it (and with it
 * GIO, GObject, libmount, libselinux, libblkid) cost every sbx-run start
 * more than a millisecond of loading (docs/sbx-run.md, "What it costs"). */
char *sbx_run_report_format_json(const sbx_unotify_event *ev) {
  GString *s = g_string_new("{");
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  char num[G_ASCII_DTOSTR_BUF_SIZE];
  append_member_name(s, "time");
  g_string_append(s, g_ascii_formatd(num, sizeof(num), "%.6f",
                                     (double)ts.tv_sec + ts.tv_nsec / 1e9));
  add_string_member(s, "decision", ev->allowed ? "allow" : "deny");
  add_int_member(s, "pid", ev->pid);
  add_string_member(s, "syscall", ev->syscall);
  add_int_member(s, "nr", ev->nr);
  add_string_member(s, "operation", ev->operation ? ev->operation : "syscall");
  add_escaped_member(s, "path", ev->path);
  add_escaped_member(s, "path2", ev->path2);
  add_escaped_member(s, "target", ev->target);
  add_escaped_member(s, "detail", ev->detail);
  /* Spelled as the broker's audit lines spell them (fs_calls.h). */
  char flags[SBX_FS_FLAGS_TEXT_MAX];
  sbx_fs_format_flags(ev->op, (uint32_t)ev->flags, flags, sizeof(flags));
  add_string_member(s, "flags", flags);
  add_int_member(s, "errno", ev->error);
  const char *en = errno_name(ev->error);
  if (en && ev->error)
    add_string_member(s, "errno_name", en);
  append_member_name(s, "served");
  g_string_append(s, ev->served ? "true" : "false");
  if (ev->reason)
    add_string_member(s, "reason", ev->reason);
  if (!ev->allowed && ev->hint != SBX_UNOTIFY_HINT_NONE) {
    g_autofree char *line = sbx_run_report_format_denial(ev);
    const char *hint = strstr(line, "(allow with ");
    if (hint) {
      g_autofree char *h = g_strndup(hint + 12, strlen(hint + 12) - 1);
      add_string_member(s, "hint", h);
    }
  }
  g_string_append_c(s, '}');
  return g_string_free(s, FALSE);
}

static void write_all(int fd, const char *buf, size_t len) {
  while (len > 0) {
    ssize_t n = write(fd, buf, len);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return;
    buf += n;
    len -= (size_t)n;
  }
}

/* The name a refusal looked for in a directory, when it is a step of a
 * program lookup (stat, access or exec of DIR/NAME); NULL otherwise. */
static char *looked_up_name(const sbx_unotify_event *ev) {
  if (!ev->path || !ev->operation ||
      (strcmp(ev->operation, "stat") != 0 &&
       strcmp(ev->operation, "access") != 0 &&
       strcmp(ev->operation, "exec") != 0))
    return NULL;
  const char *slash = strrchr(ev->path, '/');
  return slash && slash[1] ? g_strdup(slash + 1) : NULL;
}

/* Notes what the refusal behind option looked for: a hint that only
 * ever answered the lookup of a program that --allow-exec then finds
 * (PATH's other directories) is left out of the summary. */
static void note_lookup(sbx_run_report *r, const char *option,
                        const sbx_unotify_event *ev) {
  char *name = looked_up_name(ev);
  if (ev->hint == SBX_UNOTIFY_HINT_EXEC) {
    if (name)
      g_hash_table_add(r->executed, name);
    return;
  }
  /* "" (not only a lookup) once it differs, and from then on; and for a
   * name already run, which is no lookup of it (a wrapper script,
   * /usr/bin/7z, running its program of the same name elsewhere). */
  const char *had = g_hash_table_lookup(r->looked_up, option);
  if (!name || (had && strcmp(had, name) != 0) ||
      g_hash_table_contains(r->executed, name)) {
    g_free(name);
    name = g_strdup("");
  }
  g_hash_table_insert(r->looked_up, (gpointer)option, name);
}

/* Whether a refusal changed nothing an option could: a look at a name
 * that does not exist, answered as missing, which the option would
 * answer the same way (a program probing for optional files: python's
 * pyvenv.cfg, a configuration in several places), or a connect to a
 * socket file that is not there (glibc's probe of nscd's). Such
 * refusals are printed under --explain and recorded, but are no news in
 * the summary of a failed run. */
static bool changes_nothing(const sbx_unotify_event *ev) {
  return ev->missing &&
         (ev->error == ENOENT || ev->hint == SBX_UNOTIFY_HINT_NONE);
}

/* The option of the event's hint, once, for the summary's last line. */
static void keep_hint(sbx_run_report *r, const sbx_unotify_event *ev) {
  GString *o = g_string_new(NULL);
  switch (ev->hint) {
    case SBX_UNOTIFY_HINT_READ:
    case SBX_UNOTIFY_HINT_WRITE:
      if (ev->hint_path) {
        g_string_append(o, ev->hint == SBX_UNOTIFY_HINT_READ
                               ? "--allow-read "
                               : "--allow-write ");
        append_escaped(o, ev->hint_path);
      }
      break;
    case SBX_UNOTIFY_HINT_EXEC:
    case SBX_UNOTIFY_HINT_NET:
    case SBX_UNOTIFY_HINT_PTRACE:
      g_string_append(o, hint_flag(ev->hint));
      break;
    case SBX_UNOTIFY_HINT_NEVER:
    case SBX_UNOTIFY_HINT_NONE:
      break;
  }
  char *option = g_string_free(o, FALSE);
  char *kept = g_hash_table_lookup(r->hinted, option);
  if (!*option || (!kept && g_hash_table_size(r->hinted) >= MAX_KEPT)) {
    g_free(option);
    return;
  }
  if (kept) {
    g_free(option);
    option = kept;
  } else {
    g_hash_table_add(r->hinted, option);
    g_ptr_array_add(r->hints, option);
  }
  note_lookup(r, option, ev);
}

/* Whether the summary leaves option out: it only answered the lookup of
 * a program that --allow-exec finds elsewhere. */
static bool only_looked_up(const sbx_run_report *r, const char *option) {
  const char *name = g_hash_table_lookup(r->looked_up, option);
  return name && *name && g_hash_table_contains(r->executed, name);
}

void sbx_run_report_event(const sbx_unotify_event *ev, void *data) {
  sbx_run_report *r = data;
  if (r->audit_fd >= 0) {
    g_autofree char *json = sbx_run_report_format_json(ev);
    g_autofree char *line = g_strconcat(json, "\n", NULL);
    write_all(r->audit_fd, line, strlen(line));
  }
  if (ev->allowed && ev->served && ev->operation &&
      strcmp(ev->operation, "exec") == 0) {
    /* A program found and run (with --allow-exec): the refusals of its
     * lookup in PATH's other directories answered nothing that
     * mattered. */
    char *name = looked_up_name(ev);
    if (name)
      g_hash_table_add(r->executed, name);
  }
  if (ev->allowed || !ev->served)
    return;
  char *line = sbx_run_report_format_denial(ev);
  if (g_hash_table_contains(r->printed, line)) {
    g_free(line);
    return;
  }
  if (r->explain) {
    g_autofree char *out = g_strconcat(line, "\n", NULL);
    write_all(r->stderr_fd, out, strlen(out));
  }
  /* A refusal that changes nothing is printed once, but left out of the
   * summary. */
  bool summarised = !changes_nothing(ev);
  if (summarised)
    keep_hint(r, ev);
  /* Bounded: a program probing endless distinct names still shows each
   * once, but the table stops growing. */
  if (g_hash_table_size(r->printed) < MAX_KEPT) {
    g_hash_table_add(r->printed, line);
    if (summarised)
      g_ptr_array_add(r->lines, line);
  } else {
    if (summarised)
      r->dropped++;
    g_free(line);
  }
}

/* The path of a --allow-read or --allow-write option (with *write), or
 * NULL for another option. */
static const char *grant_path(const char *option, bool *write) {
  static const char read_opt[] = "--allow-read ",
                    write_opt[] = "--allow-write ";
  *write = g_str_has_prefix(option, write_opt);
  if (*write)
    return option + sizeof(write_opt) - 1;
  return g_str_has_prefix(option, read_opt) ? option + sizeof(read_opt) - 1
                                            : NULL;
}

/* Whether another option offered grants everything option does: the
 * same kind of grant (or a write grant, for a read) of a directory
 * above its path, or a write grant of its own path where it reads. */
static bool covered_by_another(const GPtrArray *offered, const char *option) {
  bool write;
  const char *path = grant_path(option, &write);
  if (!path)
    return false;
  for (guint i = 0; i < offered->len; i++) {
    const char *other = g_ptr_array_index(offered, i);
    bool other_write;
    const char *dir = grant_path(other, &other_write);
    if (other == option || !dir || (write && !other_write))
      continue;
    size_t n = strlen(dir);
    if (strncmp(path, dir, n) == 0 &&
        (path[n] == '/' || (path[n] == '\0' && other_write && !write)))
      return true;
  }
  return false;
}

void sbx_run_report_summary(sbx_run_report *r, int status) {
  guint n = r->lines->len;
  if (status == 0 || (n == 0 && r->dropped == 0))
    return;
  GString *s = g_string_new(NULL);
  guint total = n + r->dropped;
  g_string_append_printf(s,
                         "sbx: the program ended with status %d after %u "
                         "refusal%s%s\n",
                         status, total, total == 1 ? "" : "s",
                         r->explain ? " (above)" : ":");
  if (!r->explain) {
    guint first = n > SUMMARY_LINES ? n - SUMMARY_LINES : 0;
    if (first > 0 || r->dropped > 0)
      g_string_append_printf(s,
                             "sbx: (%u earlier not shown; --explain shows "
                             "each, --audit FILE records every decision)\n",
                             first + r->dropped);
    for (guint i = first; i < n; i++)
      g_string_append_printf(s, "%s\n", (char *)g_ptr_array_index(r->lines, i));
  }
  g_autoptr(GPtrArray) offered = g_ptr_array_new();
  for (guint i = 0; i < r->hints->len; i++) {
    const char *option = g_ptr_array_index(r->hints, i);
    if (!only_looked_up(r, option))
      g_ptr_array_add(offered, (gpointer)option);
  }
  guint shown = 0, left = 0;
  for (guint i = 0; i < offered->len; i++) {
    const char *option = g_ptr_array_index(offered, i);
    if (covered_by_another(offered, option))
      continue;
    if (shown == 0)
      g_string_append(s, "sbx: to allow them:");
    if (shown < SUMMARY_LINES) {
      g_string_append_printf(s, " %s", option);
      shown++;
    } else {
      left++;
    }
  }
  if (left > 0)
    g_string_append(s, " ...");
  if (shown > 0)
    g_string_append_c(s, '\n');
  /* A run that needs many grants finds them one run at a time here;
   * sbx-learn records them all from one run. */
  if (left > 0)
    g_string_append_printf(s,
                           "sbx: (%u more options; sbx-learn -o NAME -- "
                           "PROGRAM [ARGS...] writes a profile with every "
                           "grant one run needs)\n",
                           left);
  write_all(r->stderr_fd, s->str, s->len);
  g_string_free(s, TRUE);
}
