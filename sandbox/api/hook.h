/* The entry hook (sbx_main_hook) and what fresh mode needs around it: the
 * worker entry functions named by their offset in the object that holds
 * them, and the zygote's side of a fresh start.
 *
 * Why it exists: a zygote that is a new exec of the host's executable
 * (sandbox/zygote/fresh.h) has the host's code at other addresses. An
 * entry function crosses the exec as (object, offset), the object being
 * the executable or libsbx, and is turned back into an address in the
 * zygote's own layout. Nothing else of the host's memory crosses, so a
 * type's user_data cannot.
 *
 * What it trusts: the host's process types. What it refuses: an entry
 * outside the executable and libsbx (in another shared object, or in no
 * object at all), with a message naming where it is.
 */
#ifndef SBX_API_HOOK_H_
#define SBX_API_HOOK_H_

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

#include "sandbox/zygote/worker.h"
#include "sbx/sbx.h"

/* Whether sbx_main_hook ran in this process (an ordinary run). */
bool sbx_api_hook_ran(void);

/* An entry function as a fresh zygote finds it. Plain data. */
typedef struct {
  uint32_t object; /* 0: the executable, 1: libsbx's own object */
  uint32_t reserved;
  uint64_t offset; /* from the object's load address */
  /* sbx_main_hook's offset in libsbx's object, for the zygote to check
   * that it loaded the same libsbx. */
  uint64_t hook_offset;
} sbx_api_entry_ref;

/* The reference to entry, or FALSE with an SBX_ERROR_INVALID naming the
 * type and where the function is. */
gboolean sbx_api_entry_ref_make(sbx_worker_entry entry, const char *type,
                                sbx_api_entry_ref *out, GError **error);

/* The worker's side of a fresh zygote: the type's entry found by its
 * reference (the zygote's entry data), then run as sandbox.c's
 * run_worker does, with user_data NULL. */
int sbx_api_run_fresh_worker(const sbx_zygote_worker *worker);

/* sandbox.c: the public arguments built from the zygote's, then entry. */
int sbx_api_run_entry(const sbx_zygote_worker *worker, sbx_worker_entry entry,
                      void *user_data);

#endif /* SBX_API_HOOK_H_ */
