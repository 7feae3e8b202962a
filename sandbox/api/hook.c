/* The entry hook and fresh mode's entry references; see hook.h. */
#include "sandbox/api/hook.h"

#include <link.h>
#include <string.h>

#include "sandbox/broker/client.h"
#include "sandbox/broker/layer1.h"
#include "sandbox/zygote/fresh.h"

/* Set by sbx_main_hook in an ordinary run. Read by sbx_sandbox_start, on
 * the thread that started the program or after it: the hook runs before
 * any thread exists. */
static bool hook_ran;

/* In a fresh zygote: the load addresses of the executable and of libsbx,
 * and sbx_main_hook's offset, found once before the first worker (which
 * inherits them). */
static uintptr_t zygote_base[2];
static uint64_t zygote_hook_offset;
/* The workers' broker client, in the zygote's memory (layer 1's handlers
 * read each worker's copy). */
static sbx_broker_client zygote_client;

bool sbx_api_hook_ran(void) {
  return hook_ran;
}

typedef struct {
  uintptr_t addr;
  int index; /* of the object visited; the executable is the first */
  int found; /* the object's index, or -1 */
  uintptr_t base;
  char name[256];
} object_search;

static int visit_object(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  object_search *f = data;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD)
      continue;
    uintptr_t start = info->dlpi_addr + ph->p_vaddr;
    if (f->addr >= start && f->addr - start < ph->p_memsz) {
      f->found = f->index;
      f->base = info->dlpi_addr;
      g_strlcpy(f->name,
                info->dlpi_name && *info->dlpi_name ? info->dlpi_name
                                                    : "the executable",
                sizeof f->name);
      return 1;
    }
  }
  f->index++;
  return 0;
}

/* The loaded object that holds addr; FALSE when none does. */
static gboolean find_object(uintptr_t addr, object_search *f) {
  memset(f, 0, sizeof *f);
  f->addr = addr;
  f->found = -1;
  dl_iterate_phdr(visit_object, f);
  return f->found >= 0;
}

static int first_object(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  *(uintptr_t *)data = info->dlpi_addr;
  return 1;
}

gboolean sbx_api_entry_ref_make(sbx_worker_entry entry, const char *type,
                                sbx_api_entry_ref *out, GError **error) {
  memset(out, 0, sizeof *out);
  object_search lib, at;
  if (!find_object((uintptr_t)sbx_main_hook, &lib)) {
    g_set_error(error, SBX_ERROR, SBX_ERROR_FAILED,
                "fresh mode: libsbx's own code is in no loaded object");
    return FALSE;
  }
  if (!find_object((uintptr_t)entry, &at)) {
    g_set_error(error, SBX_ERROR, SBX_ERROR_INVALID,
                "process type \"%s\": its entry function (%p) is in no "
                "loaded object (generated code?); a zygote started from a "
                "fresh exec finds only functions of the executable or of "
                "libsbx (or set fork_mode)",
                type, (void *)(uintptr_t)entry);
    return FALSE;
  }
  if (at.found != 0 && at.base != lib.base) {
    g_set_error(error, SBX_ERROR, SBX_ERROR_INVALID,
                "process type \"%s\": its entry function (%p) is in %s, not "
                "in the executable or libsbx; a zygote started from a fresh "
                "exec finds only those (move the entry into the program, or "
                "set fork_mode)",
                type, (void *)(uintptr_t)entry, at.name);
    return FALSE;
  }
  out->object = at.found == 0 ? 0 : 1;
  out->offset = (uintptr_t)entry - at.base;
  out->hook_offset = (uintptr_t)sbx_main_hook - lib.base;
  return TRUE;
}

int sbx_api_run_fresh_worker(const sbx_zygote_worker *w) {
  sbx_api_entry_ref ref;
  if (!w->entry_data)
    return 127;
  memcpy(&ref, w->entry_data, sizeof ref);
  /* Another libsbx than the host's was loaded (the file was replaced
   * between start and exec): its offsets mean nothing here. */
  if (ref.object > 1 || ref.hook_offset != zygote_hook_offset)
    return 127;
  sbx_worker_entry entry =
      (sbx_worker_entry)(zygote_base[ref.object] + ref.offset);
  return sbx_api_run_entry(w, entry, NULL);
}

void sbx_main_hook(int argc, char **argv) {
  if (!sbx_zygote_fresh_marked(argc, argv)) {
    hook_ran = true;
    return;
  }
  /* This process is a fresh zygote: it never returns to main. */
  object_search lib;
  if (find_object((uintptr_t)sbx_main_hook, &lib)) {
    zygote_base[1] = lib.base;
    zygote_hook_offset = (uintptr_t)sbx_main_hook - lib.base;
  }
  dl_iterate_phdr(first_object, &zygote_base[0]);
  sbx_broker_client_init(&zygote_client, -1);
  sbx_zygote_fresh_hooks hooks = {
      .entry = sbx_api_run_fresh_worker,
      .register_broker_traps_raw = sbx_layer1_register_traps_raw,
      .broker_attach_raw = sbx_layer1_attach_raw,
      .broker_listener_raw = sbx_layer1_send_listener_raw,
      .broker_client = &zygote_client,
  };
  sbx_zygote_fresh_main(argc, argv, &hooks);
}
