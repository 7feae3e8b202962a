/* The public structs that grow: see sized.h. */
#include "sandbox/api/sized.h"

#include <string.h>

#include "sbx/sbx.h"

/* The bytes of type up to the end of field. */
#define THROUGH(type, field) \
  (offsetof(type, field) + sizeof(((type *)0)->field))

#define KIND(type, init, last_first_field) \
  { #type, #init "()", sizeof(type), THROUGH(type, last_first_field) }

/* The first published version of each struct ends at the field named
 * here. A field added later goes after the last one and leaves these
 * alone. */
const sbx_api_struct sbx_api_sandbox_config =
    KIND(sbx_sandbox_config, SBX_SANDBOX_CONFIG_INIT, audit_log);
const sbx_api_struct sbx_api_process_type =
    KIND(sbx_process_type, SBX_PROCESS_TYPE_INIT, extra_rules);
const sbx_api_struct sbx_api_spawn_config =
    KIND(sbx_spawn_config, SBX_SPAWN_CONFIG_INIT, n_fds);
const sbx_api_struct sbx_api_self_config =
    KIND(sbx_self_config, SBX_SELF_CONFIG_INIT, keep_namespaces);
const sbx_api_struct sbx_api_sandbox_status =
    KIND(sbx_sandbox_status, SBX_SANDBOX_STATUS_INIT, fully_sandboxed);
const sbx_api_struct sbx_api_worker_exit =
    KIND(sbx_worker_exit, SBX_WORKER_EXIT_INIT, detail);

/* size is the first member of every one of them. */
G_STATIC_ASSERT(offsetof(sbx_sandbox_config, size) == 0 &&
                offsetof(sbx_process_type, size) == 0 &&
                offsetof(sbx_spawn_config, size) == 0 &&
                offsetof(sbx_self_config, size) == 0 &&
                offsetof(sbx_sandbox_status, size) == 0 &&
                offsetof(sbx_worker_exit, size) == 0 &&
                offsetof(sbx_worker_args, size) == 0);

gboolean sbx_api_check_size(const sbx_api_struct *kind, size_t size,
                            const char *what, GError **error) {
  if (size == 0) {
    g_set_error(error, SBX_ERROR, SBX_ERROR_INVALID,
                "%s: %s.size is 0: make the struct with %s", what, kind->name,
                kind->init);
    return FALSE;
  }
  if (size < kind->first || size > SBX_STRUCT_SIZE_MAX) {
    g_set_error(error, SBX_ERROR, SBX_ERROR_INVALID,
                "%s: %s.size is %zu, which no %s has (%zu to %d bytes): make "
                "the struct with %s",
                what, kind->name, size, kind->name, kind->first,
                SBX_STRUCT_SIZE_MAX, kind->init);
    return FALSE;
  }
  return TRUE;
}

size_t sbx_api_size_of(const void *in) {
  size_t size;
  memcpy(&size, in, sizeof size);
  return size;
}

gboolean sbx_api_read(const sbx_api_struct *kind, const void *in, void *out,
                      const char *what, GError **error) {
  memset(out, 0, kind->size);
  if (!in) {
    g_set_error(error, SBX_ERROR, SBX_ERROR_INVALID, "%s is NULL (a %s)", what,
                kind->name);
    return FALSE;
  }
  size_t size = sbx_api_size_of(in);
  if (!sbx_api_check_size(kind, size, what, error))
    return FALSE;
  const unsigned char *bytes = in;
  for (size_t i = kind->size; i < size; i++) {
    if (bytes[i]) {
      g_set_error(error, SBX_ERROR, SBX_ERROR_UNSUPPORTED,
                  "%s: %s sets a field this libsbx does not know (byte %zu of "
                  "%zu; it knows %zu): the program was built against a newer "
                  "sbx.h than the library it runs with",
                  what, kind->name, i, size, kind->size);
      return FALSE;
    }
  }
  memcpy(out, in, size < kind->size ? size : kind->size);
  return TRUE;
}

/* Async-signal-safe. */
void sbx_api_write(const sbx_api_struct *kind, const void *filled, void *out) {
  size_t size = sbx_api_size_of(out);
  size_t n = size < kind->size ? size : kind->size;
  memcpy((char *)out + sizeof n, (const char *)filled + sizeof n, n - sizeof n);
  memcpy(out, &n, sizeof n);
}
