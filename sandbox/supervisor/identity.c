/* Identity calls: setuid, setgid, setreuid, setregid, setresuid,
 * setresgid, setfsuid, setfsgid and setgroups; see call.h.
 *
 * Why it exists: programs make these calls to change nothing. glibc's
 * posix_spawn with POSIX_SPAWN_RESETIDS calls setresuid(-1, getuid(), -1)
 * (so make runs its recipes that way), and daemons and shells "drop" to
 * the ids they already have. The program has no capabilities and its
 * namespace maps one user and one group, so no such call could change
 * anything but the order of ids it already has; refusing the ones that
 * change nothing would break ordinary programs for no gain.
 *
 * What it trusts: the kernel's /proc/TID/status for the calling thread's
 * ids (credentials are per thread, and that thread waits in this call),
 * read in the supervisor's user namespace, which sees the same numbers:
 * sbx-run maps each id to itself. What it refuses: every call that would
 * change an id, or set the supplementary groups to another list (EPERM,
 * with a `sbx: denied` line). A call that changes nothing is answered 0
 * without being made, so nothing the program wrote is read twice.
 */
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "sandbox/supervisor/call.h"

#define ID_NONE ((uint32_t)-1)

typedef struct {
  uint32_t uid[4]; /* real, effective, saved, file system */
  uint32_t gid[4];
  uint32_t *groups;
  size_t n_groups;
} thread_ids;

static bool parse_ids(const char *line, uint32_t out[4]) {
  return sscanf(line, "%u %u %u %u", &out[0], &out[1], &out[2], &out[3]) == 4;
}

static int compare_ids(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

/* The calling thread's ids; false when they cannot be read. */
static bool read_thread_ids(sbx_call *c, thread_ids *ids) {
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/status", (int)c->n->pid);
  g_autofree char *text = NULL;
  if (!g_file_get_contents(path, &text, NULL, NULL))
    return false;
  bool have_uid = false, have_gid = false, have_groups = false;
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  for (char **l = lines; *l; l++) {
    if (g_str_has_prefix(*l, "Uid:")) {
      have_uid = parse_ids(*l + 4, ids->uid);
    } else if (g_str_has_prefix(*l, "Gid:")) {
      have_gid = parse_ids(*l + 4, ids->gid);
    } else if (g_str_has_prefix(*l, "Groups:")) {
      g_auto(GStrv) words = g_strsplit_set(*l + 7, " \t", -1);
      ids->groups = g_new0(uint32_t, g_strv_length(words) + 1);
      for (char **w = words; *w; w++)
        if (**w)
          ids->groups[ids->n_groups++] = (uint32_t)strtoul(*w, NULL, 10);
      qsort(ids->groups, ids->n_groups, sizeof(uint32_t), compare_ids);
      have_groups = true;
    }
  }
  return have_uid && have_gid && have_groups;
}

static bool one_of(uint32_t v, const uint32_t cur[4]) {
  return v == cur[0] || v == cur[1] || v == cur[2];
}

/* What an unprivileged call leaves in cur (real, effective, saved, fs),
 * as the kernel computes it; false when the kernel would refuse it. */
static bool unprivileged_set(int kind, const uint32_t a[3], uint32_t cur[4]) {
  uint32_t next[4] = {cur[0], cur[1], cur[2], cur[3]};
  switch (kind) {
    case 1: /* setuid(a0) */
      if (a[0] != cur[0] && a[0] != cur[2])
        return false;
      next[1] = a[0];
      break;
    case 2: /* setreuid(a0, a1) */
      if (a[0] != ID_NONE && a[0] != cur[0] && a[0] != cur[1])
        return false;
      if (a[1] != ID_NONE && !one_of(a[1], cur))
        return false;
      if (a[0] != ID_NONE)
        next[0] = a[0];
      if (a[1] != ID_NONE)
        next[1] = a[1];
      if (a[0] != ID_NONE || (a[1] != ID_NONE && a[1] != cur[0]))
        next[2] = next[1];
      break;
    default: /* setresuid(a0, a1, a2) */
      for (int i = 0; i < 3; i++) {
        if (a[i] == ID_NONE)
          continue;
        if (!one_of(a[i], cur))
          return false;
        next[i] = a[i];
      }
      break;
  }
  next[3] = next[1];
  memcpy(cur, next, sizeof(next));
  return true;
}

/* setgroups(n, list) with the list the thread already has. */
static bool same_groups(sbx_call *c, const thread_ids *ids) {
  uint64_t n = (uint64_t)(uint32_t)arg_int(c, 0);
  if (n != ids->n_groups)
    return false;
  if (n == 0)
    return true;
  g_autofree uint32_t *want = g_new(uint32_t, n);
  if (sbx_target_read(&c->t, arg(c, 1), want, n * sizeof(uint32_t)) < 0)
    return false;
  qsort(want, n, sizeof(uint32_t), compare_ids);
  return memcmp(want, ids->groups, n * sizeof(uint32_t)) == 0;
}

/* True when the call leaves every id as it is. */
static bool changes_nothing(sbx_call *c, const thread_ids *ids) {
  int nr = c->n->data.nr;
  if (nr == __NR_setgroups)
    return same_groups(c, ids);
  bool gid = nr == __NR_setgid || nr == __NR_setregid || nr == __NR_setresgid;
  int kind = (nr == __NR_setuid || nr == __NR_setgid)       ? 1
             : (nr == __NR_setreuid || nr == __NR_setregid) ? 2
                                                            : 3;
  uint32_t a[3] = {(uint32_t)arg_int(c, 0), (uint32_t)arg_int(c, 1),
                   (uint32_t)arg_int(c, 2)};
  const uint32_t *now = gid ? ids->gid : ids->uid;
  uint32_t after[4] = {now[0], now[1], now[2], now[3]};
  if (!unprivileged_set(kind, a, after))
    return false;
  return memcmp(after, now, sizeof(after)) == 0;
}

/* setfsuid and setfsgid return the id they leave in place: a query (-1)
 * or the current one changes nothing. */
static bool fs_id_call(sbx_call *c, const thread_ids *ids, int64_t *value) {
  int nr = c->n->data.nr;
  if (nr != __NR_setfsuid && nr != __NR_setfsgid)
    return false;
  uint32_t now = nr == __NR_setfsuid ? ids->uid[3] : ids->gid[3];
  uint32_t want = (uint32_t)arg_int(c, 0);
  *value = want == ID_NONE || want == now ? (int64_t)now : -1;
  return true;
}

void sbx_handle_identity(sbx_call *c) {
  c->ev.operation = "syscall";
  thread_ids ids = {0};
  bool read = read_thread_ids(c, &ids);
  int64_t fs_value = -1;
  if (read && fs_id_call(c, &ids, &fs_value)) {
    g_free(ids.groups);
    if (drop_if_gone(c))
      return;
    if (fs_value >= 0) {
      c->ev.allowed = true;
      answer_value(c, fs_value);
    } else {
      deny(c, EPERM, "the program's user and group ids cannot change",
           SBX_UNOTIFY_HINT_NEVER, NULL, false);
    }
    return;
  }
  bool same = read && changes_nothing(c, &ids);
  g_free(ids.groups);
  if (drop_if_gone(c))
    return;
  if (same) {
    c->ev.allowed = true;
    answer_value(c, 0);
    return;
  }
  deny(c, EPERM, "the program's user and group ids cannot change",
       SBX_UNOTIFY_HINT_NEVER, NULL, false);
}
