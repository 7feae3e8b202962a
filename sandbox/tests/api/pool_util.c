/* The warm pool seen from outside: see pool_util.h. */
#include "sandbox/tests/api/pool_util.h"

#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

GArray *api_children_of(pid_t parent) {
  GArray *out = g_array_new(FALSE, FALSE, sizeof(pid_t));
  DIR *d = opendir("/proc");
  ck_assert_ptr_nonnull(d);
  struct dirent *e;
  while ((e = readdir(d))) {
    char *end;
    long pid = strtol(e->d_name, &end, 10);
    if (*end || pid <= 0)
      continue;
    g_autofree char *path = g_strdup_printf("/proc/%ld/stat", pid);
    g_autofree char *text = NULL;
    if (!g_file_get_contents(path, &text, NULL, NULL))
      continue;
    const char *after = strrchr(text, ')');
    char state;
    long ppid;
    if (after && sscanf(after + 1, " %c %ld", &state, &ppid) == 2 &&
        ppid == parent && state != 'Z') {
      pid_t p = (pid_t)pid;
      g_array_append_val(out, p);
    }
  }
  closedir(d);
  return out;
}

GArray *api_await_zygote_children(sbx_sandbox *s, unsigned n) {
  GArray *now = NULL;
  for (int i = 0; i < 2000; i++) {
    now = api_children_of(sbx_sandbox_zygote_pid(s));
    if (now->len == n)
      return now;
    g_array_unref(now);
    g_usleep(10000);
  }
  now = api_children_of(sbx_sandbox_zygote_pid(s));
  ck_abort_msg("the zygote has %u children, not %u", now->len, n);
  return now;
}
