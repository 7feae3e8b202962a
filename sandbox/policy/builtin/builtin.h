/* The built-in policies and profiles, compiled into libsbx.
 *
 * Why it exists: the policies a worker runs under must not depend on files
 * the worker (or anyone else) could change at run time (S35), and a host
 * should get a working sandbox without installing data files. embed.py
 * turns every .policy and .profile of this folder into a C string at build
 * time, resolving @include between them, so a built-in text is
 * self-contained.
 *
 * All data here is const and allocates nothing.
 */
#ifndef SBX_POLICY_BUILTIN_BUILTIN_H_
#define SBX_POLICY_BUILTIN_BUILTIN_H_

#include <stddef.h>

#include <glib.h>

#include "sandbox/policy/policy.h"

typedef struct {
  const char *name; /* "renderer.policy" */
  const char *text; /* NUL-terminated, includes resolved */
  size_t len;
} sbx_builtin_file;

/* Generated: sorted by name. */
extern const sbx_builtin_file sbx_builtin_files[];
extern const size_t sbx_builtin_n_files;

/* The built-in file called name, or NULL. */
const sbx_builtin_file *sbx_builtin_find(const char *name);

/* Parses a built-in policy ("renderer" or "renderer.policy"). Messages
 * name it "builtin:renderer.policy". NULL with *error set when there is
 * no such built-in or it does not parse. */
sbx_policy *sbx_builtin_policy(const char *name, GError **error);

#endif /* SBX_POLICY_BUILTIN_BUILTIN_H_ */
