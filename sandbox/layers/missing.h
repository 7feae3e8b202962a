/* The one decision about a layer the kernel cannot provide.
 *
 * Why it exists: sbx runs where users are, and some kernels, containers
 * and distributions lack user namespaces or Landlock. A profile says
 * which layers it requires ([profile] require, policies.md). Every place
 * that finds a layer missing (the zygote's start, a process confining
 * itself, sbx-run, the Landlock step of a plan) asks this function, so
 * the answer and its wording exist once:
 *   - required: an error (SBX_LAYERS_ERROR_UNSUPPORTED) that names the
 *     process type, the layer, why the kernel lacks it and how to enable
 *     it; nothing starts.
 *   - not required: the process runs without it, one warning line on
 *     stderr the first time this process meets that layer missing, and
 *     the status report of every worker shows it off.
 *
 * What it trusts: the caller's cause (read from the kernel). */
#ifndef SBX_LAYERS_MISSING_H_
#define SBX_LAYERS_MISSING_H_

#include <stdbool.h>

#include <glib.h>

typedef enum {
  SBX_LAYER_USERNS,   /* user namespaces, and the namespaces and empty
                       * root made in them */
  SBX_LAYER_LANDLOCK, /* Landlock */
} sbx_layer_kind;

/* "user namespaces", "Landlock"; the require= name "userns",
 * "landlock". */
const char *sbx_layer_kind_name(sbx_layer_kind kind);
const char *sbx_layer_kind_require_name(sbx_layer_kind kind);

/* Decides a missing layer for process type who (a type name, "sbx-run").
 * cause says why the kernel lacks it and how to enable it. Returns FALSE
 * with error set when required; else warns once (quiet: not even that,
 * for a process whose own layers another one reports, like the broker)
 * and returns TRUE. */
gboolean sbx_layer_missing(sbx_layer_kind kind, bool required, bool quiet,
                           const char *who, const char *cause, GError **error);

/* The same decision where new namespaces could not be entered: failure
 * (consumed) is what sbx_ns_clone or sbx_ns_enter reported. TRUE when
 * it was the kernel refusing user namespaces (SBX_NS_ERROR_UNSUPPORTED)
 * and they are not required: the caller goes on without namespaces, the
 * warning printed. FALSE with *error set otherwise: the failure as it
 * was, or the refusal of a required layer. */
gboolean sbx_layer_userns_refused(GError *failure, bool required,
                                  const char *who, GError **error);

#endif /* SBX_LAYERS_MISSING_H_ */
