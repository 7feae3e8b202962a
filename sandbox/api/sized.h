/* The public structs that grow (sbx.h, "Structs that grow"): reading a
 * caller's struct whatever sbx.h it was built against, and filling one
 * only as far as the caller's struct reaches.
 *
 * Why it exists: a program built against an older sbx.h passes a shorter
 * struct, one built against a newer sbx.h a longer one; libsbx.so.0 must
 * serve both without breaking its soname. Every public function goes
 * through here, so the rule is applied once.
 *
 * What it trusts: a size between the struct's first published version and
 * SBX_STRUCT_SIZE_MAX, and that many bytes at the caller's pointer. What
 * it refuses: a NULL struct, a size of 0 (not made with its init macro),
 * one below the first published version or over the maximum
 * (SBX_ERROR_INVALID), and a longer struct that sets a field this library
 * does not know (SBX_ERROR_UNSUPPORTED).
 */
#ifndef SBX_API_SIZED_H_
#define SBX_API_SIZED_H_

#include <stdbool.h>
#include <stddef.h>

#include <glib.h>

/* One public struct: its name and init macro for the messages, its size in
 * this library, and its first published version's (through its last
 * field, padding excluded). */
typedef struct {
  const char *name;
  const char *init;
  size_t size;
  size_t first;
} sbx_api_struct;

extern const sbx_api_struct sbx_api_sandbox_config;
extern const sbx_api_struct sbx_api_process_type;
extern const sbx_api_struct sbx_api_spawn_config;
extern const sbx_api_struct sbx_api_self_config;
extern const sbx_api_struct sbx_api_sandbox_status;
extern const sbx_api_struct sbx_api_worker_exit;

/* Whether size is one the caller may have set for kind. what names the
 * argument in the message ("sbx_sandbox_start: config"). */
gboolean sbx_api_check_size(const sbx_api_struct *kind, size_t size,
                            const char *what, GError **error);

/* Copies the caller's struct at in into out (kind->size bytes): the
 * fields its size covers, zeros for the rest. Refuses what the top of
 * this file says, a NULL in included. */
gboolean sbx_api_read(const sbx_api_struct *kind, const void *in, void *out,
                      const char *what, GError **error);

/* The size of the caller's struct at in, which must have been checked. */
size_t sbx_api_size_of(const void *in);

/* Copies filled (kind->size bytes, its own size ignored) into the caller's
 * struct, whose size was checked: as many bytes as both have, then sets
 * the caller's size to that number. Async-signal-safe. */
void sbx_api_write(const sbx_api_struct *kind, const void *filled, void *out);

#endif /* SBX_API_SIZED_H_ */
