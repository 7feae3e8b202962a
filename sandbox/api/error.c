/* The public error domain and the translation into it: see error.h. */
#include "sandbox/api/error.h"

#include <stdarg.h>

#include "sandbox/broker/layer1.h"
#include "sandbox/files/permissions.h"
#include "sandbox/kernel/landlock/landlock.h"
#include "sandbox/kernel/namespaces/namespaces.h"
#include "sandbox/kernel/seccomp/loader.h"
#include "sandbox/layers/plan.h"
#include "sandbox/zygote/zygote.h"
#include "sbx/sbx.h"

/* The domain's name is its first argument, stringified: clang-format
 * would put spaces into it, and hosts may match on the name. */
// clang-format off
GQuark sbx_error_quark(void) {
  return g_quark_from_static_string("sbx-error-quark");
}
// clang-format on

static sbx_error_code zygote_code(int code) {
  switch (code) {
    case SBX_ZYGOTE_ERROR_INVALID:
      return SBX_ERROR_INVALID;
    case SBX_ZYGOTE_ERROR_TIMED_OUT:
      return SBX_ERROR_TIMED_OUT;
    case SBX_ZYGOTE_ERROR_DIED:
      return SBX_ERROR_ZYGOTE_DIED;
    default:
      return SBX_ERROR_FAILED;
  }
}

static sbx_error_code public_code(const GError *e) {
  if (e->domain == SBX_ERROR)
    return (sbx_error_code)e->code;
  if (e->domain == SBX_ZYGOTE_ERROR)
    return zygote_code(e->code);
  if (e->domain == SBX_LANDLOCK_ERROR) {
    if (e->code == SBX_LANDLOCK_ERROR_UNSUPPORTED ||
        e->code == SBX_LANDLOCK_ERROR_KERNEL_TOO_OLD)
      return SBX_ERROR_UNSUPPORTED;
    return e->code == SBX_LANDLOCK_ERROR_INVALID ? SBX_ERROR_INVALID
                                                 : SBX_ERROR_FAILED;
  }
  if (e->domain == SBX_NS_ERROR)
    return e->code == SBX_NS_ERROR_UNSUPPORTED ? SBX_ERROR_UNSUPPORTED
                                               : SBX_ERROR_FAILED;
  if (e->domain == SBX_BROKER_ERROR)
    return e->code == SBX_BROKER_ERROR_INVALID ? SBX_ERROR_INVALID
                                               : SBX_ERROR_FAILED;
  if (e->domain == SBX_LAYER1_ERROR)
    return e->code == SBX_LAYER1_ERROR_POLICY ? SBX_ERROR_INVALID
                                              : SBX_ERROR_FAILED;
  if (e->domain == SBX_SECCOMP_ERROR)
    return SBX_ERROR_FAILED;
  if (e->domain == SBX_LAYERS_ERROR)
    return e->code == SBX_LAYERS_ERROR_INVALID       ? SBX_ERROR_INVALID
           : e->code == SBX_LAYERS_ERROR_UNSUPPORTED ? SBX_ERROR_UNSUPPORTED
                                                     : SBX_ERROR_FAILED;
  /* Profiles, policies, the compiler: the input is wrong. */
  return SBX_ERROR_INVALID;
}

void sbx_api_propagate(GError **error, GError *local, const char *format, ...) {
  va_list ap;
  va_start(ap, format);
  g_autofree char *prefix = g_strdup_vprintf(format, ap);
  va_end(ap);
  g_set_error(error, SBX_ERROR, public_code(local), "%s%s", prefix,
              local->message);
  g_error_free(local);
}
