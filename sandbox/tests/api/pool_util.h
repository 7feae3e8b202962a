/* The warm pool as a test sees it from outside: the zygote's children,
 * read from /proc (each /proc/PID/stat names its parent; no
 * CONFIG_PROC_CHILDREN needed), so a test counts the processes
 * themselves rather than what the library says about them. */
#ifndef SBX_TESTS_API_POOL_UTIL_H_
#define SBX_TESTS_API_POOL_UTIL_H_

#include <sys/types.h>

#include <glib.h>

#include "sbx/sbx.h"

/* The live (not zombie) children of parent as the host sees them, from
 * each /proc/PID/stat; g_array_unref. */
GArray *api_children_of(pid_t parent);

/* Waits until the sandbox's zygote has exactly n children (20 s at most,
 * then fails the test) and returns them. With no worker spawned, these
 * are its warm pool. */
GArray *api_await_zygote_children(sbx_sandbox *s, unsigned n);

#endif /* SBX_TESTS_API_POOL_UTIL_H_ */
