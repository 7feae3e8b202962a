/* Layer 1, the broker-client filter: a worker's file-system calls become
 * broker requests.
 *
 * Why it exists: a worker must not open files itself, yet ordinary code
 * (libc's fopen, the dynamic loader's dlopen) calls open(2) and stat(2)
 * directly. Layer 1 makes every file-system call return SECCOMP_RET_TRAP;
 * the SIGSYS handler registered here forwards it to the broker through the
 * client (client.h) and writes the broker's answer into the trapped call's
 * return register, so the calling code sees an ordinary result or errno.
 *
 * The layer is written in the policy language (builtin
 * broker-client.policy, which lists every call it traps and refuses and
 * why); the calls it traps are the rows of the table of file-system calls
 * (sandbox/files/fs_calls.h) marked SBX_FS_LAYER1, and compiling checks
 * that the two agree. It allows everything else: the per-process-type
 * layer 2 installed on top of it is the allowlist, and stacked filters
 * only narrow.
 *
 * Life cycle:
 *   zygote:     sbx_layer1_compile in the host (the program goes into the
 *               type's layers, first), sbx_layer1_register_traps_raw once
 *               in the zygote, sbx_layer1_attach_raw in each worker; the
 *               worker loads the program (worker.h steps 5-6).
 *   in-process: sbx_broker_start, connect a channel, then
 *               sbx_layer1_enter(client) loads the layer on every thread.
 *
 * Ownership: the client passed to the trap registration is borrowed for
 * the rest of the process's life: the handlers read it on every trap.
 */
#ifndef SBX_BROKER_LAYER1_H_
#define SBX_BROKER_LAYER1_H_

#include <stdbool.h>

#include <glib.h>

#include "sandbox/broker/client.h"
#include "sandbox/kernel/seccomp/bpf.h"

#define SBX_LAYER1_ERROR (sbx_layer1_error_quark())
GQuark sbx_layer1_error_quark(void);

typedef enum {
  SBX_LAYER1_ERROR_POLICY, /* the built-in policy did not parse or compile */
  SBX_LAYER1_ERROR_TRAPS,  /* a handler or the SIGSYS handler was refused */
  SBX_LAYER1_ERROR_LOAD,   /* seccomp(2) refused the program */
} sbx_layer1_error_code;

/* The name the layer carries in reports and status ("broker-client"). */
#define SBX_LAYER1_NAME "broker-client"

/* The broker-client layer compiled from broker-client.policy. */
gboolean sbx_layer1_compile(sbx_bpf_program *out, GError **error);

/* The same; with direct_opens, openat2 is allowed instead of refused with
 * ENOSYS: only for a type whose workers run under a Landlock ruleset that
 * grants read of its direct trees and nothing else (docs/design.md,
 * "Direct opens"), since Landlock is then all that bounds it. */
gboolean sbx_layer1_compile_direct(sbx_bpf_program *out, bool direct_opens,
                                   GError **error);

/* Registers layer 1's SIGSYS handler (layer1_traps.c) for every call the
 * table of file-system calls gives layer 1, forwarding to the broker
 * through client (a sbx_broker_client *, borrowed, must outlive the
 * process's use of it), and installs the SIGSYS handler. Returns 0 or
 * -errno; matches sbx_zygote_config.register_broker_traps_raw.
 * Async-signal-safe. Runs in the zygote before any worker.
 *
 * direct_roots: when the process's root holds nothing that can be opened
 * directly but these trees (the zygote's empty root: its /proc, whose
 * reads Landlock refuses, and the trees bound there), the trees,
 * absolute with a trailing '/', each NUL-terminated, one after another
 * (borrowed, must outlive the process's use of it); a read-only open is
 * then tried directly only for a path at or below one of them, and every
 * other goes to the broker without the openat2 that could only fail.
 * NULL: tried for every read-only open, as where the root is the host's. */
int sbx_layer1_register_traps_raw(void *client, const char *direct_roots,
                                  size_t direct_roots_len);

/* Per worker: points client at channel_fd (sbx_broker_client_init); matches
 * sbx_zygote_config.broker_attach_raw. Async-signal-safe. */
int sbx_layer1_attach_raw(void *client, int channel_fd);

/* Per worker of a type that audits its errno verdicts: hands the listener
 * to the broker (sbx_broker_send_listener); matches
 * sbx_zygote_config.broker_listener_raw. Async-signal-safe. */
int sbx_layer1_send_listener_raw(void *client, int listener_fd);

/* In-process (no zygote): register the traps for client and load the layer
 * on the calling process with TSYNC (threads already running are covered). */
gboolean sbx_layer1_enter(sbx_broker_client *client, GError **error);

#endif /* SBX_BROKER_LAYER1_H_ */
