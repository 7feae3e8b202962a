/* The program's /etc/passwd, /etc/group, /etc/hosts and
 * /etc/nsswitch.conf; see accounts.h.
 *
 * Trusts the host's databases for the entries it copies; copies nothing
 * but the numbers the program can see.
 */
#include "sandbox/runner/accounts.h"

#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>

/* The owner every unmapped user or group appears as in a user namespace
 * (/proc/sys/kernel/overflowuid, overflowgid). */
static unsigned overflow_id(const char *file) {
  g_autofree char *text = NULL;
  unsigned long n = 65534;
  if (g_file_get_contents(file, &text, NULL, NULL)) {
    char *end = NULL;
    unsigned long v = strtoul(text, &end, 10);
    if (end != text)
      n = v;
  }
  return (unsigned)n;
}

static void add_user(GString *out, unsigned id) {
  struct passwd *pw = getpwuid((uid_t)id);
  if (pw)
    g_string_append_printf(
        out, "%s:x:%u:%u:%s:%s:%s\n", pw->pw_name, (unsigned)pw->pw_uid,
        (unsigned)pw->pw_gid, pw->pw_gecos ? pw->pw_gecos : "",
        pw->pw_dir ? pw->pw_dir : "/", pw->pw_shell ? pw->pw_shell : "");
}

static void add_group(GString *out, unsigned id) {
  struct group *gr = getgrgid((gid_t)id);
  if (gr)
    g_string_append_printf(out, "%s:x:%u:\n", gr->gr_name,
                           (unsigned)gr->gr_gid);
}

static bool host_file_granted(const sbx_allowlist *list, const char *path) {
  sbx_match m;
  return list &&
         sbx_allowlist_match(list, path, strlen(path), 0, SBX_PERM_READ, &m);
}

typedef void (*add_entry_fn)(GString *out, unsigned id);

/* One database: the program's own entry, then the overflow one unless it
 * is the same number. */
static char *database(add_entry_fn add, unsigned own, const char *overflow) {
  GString *s = g_string_new(NULL);
  unsigned other = overflow_id(overflow);
  add(s, own);
  if (other != own)
    add(s, other);
  return g_string_free(s, FALSE);
}

static bool plain_hostname(const char *name) {
  if (!name || !*name || strlen(name) > 253)
    return false;
  for (const char *c = name; *c; c++)
    if (!g_ascii_isalnum(*c) && *c != '-' && *c != '.')
      return false;
  return true;
}

/* The loopback's names, and the hostname on a loopback address of its
 * own, as Debian's installer writes it. */
static char *hosts_database(const char *hostname) {
  GString *s = g_string_new("127.0.0.1\tlocalhost\n");
  if (plain_hostname(hostname) && strcmp(hostname, "localhost") != 0)
    g_string_append_printf(s, "127.0.1.1\t%s\n", hostname);
  g_string_append(s, "::1\tlocalhost ip6-localhost ip6-loopback\n");
  return g_string_free(s, FALSE);
}

size_t sbx_run_account_files(uid_t uid, gid_t gid, const char *hostname,
                             const sbx_allowlist *list,
                             sbx_run_account_file out[SBX_RUN_ACCOUNT_FILES]) {
  const struct {
    const char *path;
    add_entry_fn add;
    unsigned own;
    const char *overflow;
  } dbs[] = {
      {"/etc/passwd", add_user, (unsigned)uid, "/proc/sys/kernel/overflowuid"},
      {"/etc/group", add_group, (unsigned)gid, "/proc/sys/kernel/overflowgid"},
  };
  size_t n = 0;
  for (size_t i = 0; i < G_N_ELEMENTS(dbs); i++)
    if (!host_file_granted(list, dbs[i].path))
      out[n++] = (sbx_run_account_file){
          dbs[i].path, database(dbs[i].add, dbs[i].own, dbs[i].overflow)};
  if (!host_file_granted(list, "/etc/hosts"))
    out[n++] = (sbx_run_account_file){"/etc/hosts", hosts_database(hostname)};
  /* The files above, and DNS after them for host names (it answers only
   * with --net and a grant of /etc/resolv.conf). */
  if (!host_file_granted(list, "/etc/nsswitch.conf"))
    out[n++] = (sbx_run_account_file){
        "/etc/nsswitch.conf",
        g_strdup("passwd: files\ngroup: files\nshadow: files\n"
                 "hosts: files dns\nnetworks: files\nprotocols: files\n"
                 "services: files\nethers: files\nrpc: files\n"
                 "netgroup: files\n")};
  return n;
}

void sbx_run_account_files_clear(sbx_run_account_file *files, size_t n) {
  for (size_t i = 0; files && i < n; i++) {
    g_free(files[i].text);
    files[i].text = NULL;
  }
}

const char *sbx_run_hostname(const sbx_allowlist *list, const char *own) {
  return host_file_granted(list, "/etc/hosts") ? g_get_host_name() : own;
}
