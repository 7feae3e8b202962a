/* The zygote started from a fresh exec of the host's own executable
 * (Chromium's --type=zygote, Firefox's fork server).
 *
 * Why it exists: a zygote forked from the host holds a copy of the host's
 * memory (its secrets, its stdio buffers, its atexit handlers) as it was
 * at start, and shares the host's address-space layout with every worker:
 * one leaked pointer in a worker is a map of the host. An exec gives the
 * zygote memory of its own and a layout the kernel picks anew.
 *
 * How: the host prepares everything as for a forked zygote (compiled
 * programs, Landlock rulesets, namespaces), then writes what the zygote
 * needs into a sealed memory file: each type's name, layer flags, limits,
 * filters with their self-pid relocations, whether it uses the broker and
 * Landlock (the ruleset itself is inherited as a descriptor), the
 * entry's plain data, and the server's settings. The child it clones
 * into the zygote's namespaces lays out its descriptors and execs the
 * host's executable by descriptor (a file replaced on disk since the host
 * started does not matter) with the marker argument and the environment
 * the host chose. The program's main calls its entry hook first; the hook
 * finds the marker and calls sbx_zygote_fresh_main(), which reads the
 * file back, builds the server, and never returns.
 *
 * Descriptors of the exec'd zygote:
 *   0, 1, 2  the host's stdio, as the forked zygote has them
 *   3        its socket to the host
 *   4        the start data (a sealed memory file, read once and closed)
 *   5 ...    one Landlock ruleset per type that has one, in type order
 *
 * What it trusts: the start data, which the host wrote; its shape is
 * checked anyway, so a damaged or foreign file fails the start with a
 * message to the host instead of a crash. A program started with the
 * marker by anyone else finds no valid start data and exits.
 */
#ifndef SBX_ZYGOTE_FRESH_H_
#define SBX_ZYGOTE_FRESH_H_

#include <stdbool.h>

#include <glib.h>

#include "sandbox/zygote/server.h"
#include "sandbox/zygote/zygote.h"

/* The marker and the descriptor numbers are in server.h, whose child
 * side execs the zygote. */

/* What the exec'd program supplies, in its own address space. */
typedef struct {
  sbx_zygote_entry entry; /* every type's; gets its type's entry data */
  int (*register_broker_traps_raw)(void *client, const char *direct_roots,
                                   size_t direct_roots_len);
  int (*broker_attach_raw)(void *client, int channel_fd);
  int (*broker_listener_raw)(void *client, int listener_fd);
  void *broker_client;
} sbx_zygote_fresh_hooks;

/* Whether argv carries the marker (argc >= 2 and argv[1] is
 * SBX_ZYGOTE_FRESH_ARG). No system call. */
bool sbx_zygote_fresh_marked(int argc, char **argv);

/* In the exec'd program: reads the start data, becomes the zygote and
 * serves the host until it leaves. Never returns. A failure before the
 * zygote is ready goes to the host (INIT_FAILED, naming the step) and to
 * stderr, and the process exits 1. */
_Noreturn void sbx_zygote_fresh_main(int argc, char **argv,
                                     const sbx_zygote_fresh_hooks *hooks);

/* Host side: the start data for server s (prepared from config) in a
 * sealed memory file (close-on-exec; the caller owns it), or -1 with
 * *error set. *rulesets (g_free) receives the ruleset descriptors of s in
 * the order the zygote expects them, *n_rulesets their number. */
int sbx_zygote_fresh_write(const sbx_zygote_server *s,
                           const sbx_zygote_config *config, int **rulesets,
                           size_t *n_rulesets, GError **error);

/* Shared by both starts: the server's memory (plans, worker table,
 * buffer) with nothing filled in, or NULL with *error set; and its
 * release, which closes what it holds. */
sbx_zygote_server *sbx_zygote_server_alloc(size_t n_types, size_t capacity,
                                           GError **error);
void sbx_zygote_server_free(sbx_zygote_server *s);

#endif /* SBX_ZYGOTE_FRESH_H_ */
