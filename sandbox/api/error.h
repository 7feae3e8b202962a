/* The public error domain, SBX_ERROR, and the one translation into it.
 *
 * Why it exists: each module below the API reports in a domain of its own
 * (profiles, policies, Landlock, namespaces, the broker, the layers, the
 * zygote); a host sees one domain whose codes say whether its input was
 * wrong, the kernel lacks a layer, a system call failed, a wait timed out
 * or the zygote died. Every public function translates here, so the same
 * module error gets the same public code whichever call met it.
 *
 * What it trusts: the modules' messages, which name the file, line, path
 * or system call; they are kept word for word behind the caller's prefix.
 */
#ifndef SBX_API_ERROR_H_
#define SBX_API_ERROR_H_

#include <glib.h>

/* Moves local (any module's domain) into *error as an SBX_ERROR whose code
 * says whether the input was wrong, the kernel lacks a layer, a system
 * call failed, a wait timed out or the zygote died; the message keeps
 * local's and gets the printf prefix. */
void sbx_api_propagate(GError **error, GError *local, const char *format, ...)
    G_GNUC_PRINTF(3, 4);

#endif /* SBX_API_ERROR_H_ */
