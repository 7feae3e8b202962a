/* Docker/OCI seccomp profiles (the JSON runc, crun and Docker read) to and
 * from sbx policies.
 *
 * Why it exists: container profiles are the other large body of seccomp
 * policy in use. Importing one gives an sbx policy with the same verdicts;
 * exporting an sbx policy gives a profile a container runtime loads with
 * the same verdicts. docs/policy-language.md ("OCI profiles") states every
 * rule below in full.
 *
 * What the importer assumes: an x86-64 process without capabilities on a
 * kernel of at least SBX_OCI_ASSUMED_KERNEL. Entries are kept or dropped by
 * their includes/excludes under that assumption; a minKernel above it
 * cannot be decided and is refused. Names that are not x86-64 system calls
 * are skipped (the runtimes skip them too). Other architectures and x32
 * numbers are killed, as in every sbx policy.
 *
 * What it refuses, naming the entry and the system call: anything that
 * cannot be written exactly as sbx policy text (actions sbx cannot return,
 * entries for one system call whose actions may overlap, comparisons of an
 * int-sized argument with a value wider than 32 bits, ...). Nothing is ever
 * silently widened.
 */
#ifndef SBX_POLICY_OCI_H_
#define SBX_POLICY_OCI_H_

#include <linux/seccomp.h>
#include <stdint.h>

#include <glib.h>

#include "sandbox/policy/policy.h"

#define SBX_OCI_ERROR (sbx_oci_error_quark())
GQuark sbx_oci_error_quark(void);

typedef enum {
  SBX_OCI_ERROR_IO,          /* the file cannot be read */
  SBX_OCI_ERROR_JSON,        /* not JSON, or not a seccomp profile */
  SBX_OCI_ERROR_UNSUPPORTED, /* valid, but not expressible exactly */
} sbx_oci_error_code;

/* The oldest kernel sbx runs on; includes/excludes minKernel values are
 * decided against it. */
#define SBX_OCI_ASSUMED_KERNEL "5.13"

typedef struct sbx_oci_profile sbx_oci_profile;

/* Reads a profile. display_name names it in messages. */
sbx_oci_profile *sbx_oci_profile_load_file(const char *path, GError **error);
sbx_oci_profile *sbx_oci_profile_load_data(const char *json, gssize len,
                                           const char *display_name,
                                           GError **error);
void sbx_oci_profile_free(sbx_oci_profile *profile);

/* The verdict the profile's rules give one x86-64 call, compared the way
 * libseccomp compares (all 64 bits of every argument); the entries the
 * importer keeps, first match wins. Other architectures and x32 numbers:
 * kill-process. This is the reference the importer is tested against. */
uint32_t sbx_oci_profile_eval(const sbx_oci_profile *profile,
                              const struct seccomp_data *data);

/* The profile as sbx policy text (g_free it). The text is parsed before it
 * is returned, so it always loads. */
char *sbx_oci_import(const sbx_oci_profile *profile, GError **error);

/* Options of sbx_oci_export, or-ed. */
typedef enum {
  /* Add the calls a container runtime's init makes between installing
   * the filter and executing the container's process
   * (sbx_oci_container_runtime_calls), allowed where the policy refuses
   * them. Without it the profile is the policy alone. */
  SBX_OCI_EXPORT_FOR_CONTAINER = 1 << 0,
  /* Where a comparison has no exact equivalent with numbers of at most
   * SBX_OCI_MAX_SAFE_NUMBER, write the exact 64-bit constant instead of
   * refusing. runc and crun read such numbers exactly; jq, JavaScript and
   * other tools that read JSON numbers as doubles change them. */
  SBX_OCI_EXPORT_LARGE_NUMBERS = 1 << 1,
} sbx_oci_export_flags;

/* The largest integer every double-based JSON reader keeps (2^53 - 1). */
#define SBX_OCI_MAX_SAFE_NUMBER ((UINT64_C(1) << 53) - 1)

/* A policy as a profile (g_free it): architectures [SCMP_ARCH_X86_64],
 * every comparison written so that libseccomp's 64-bit comparisons give
 * exactly sbx's verdict, int-sized arguments included, with numbers of at
 * most SBX_OCI_MAX_SAFE_NUMBER (a comparison that needs a larger one is
 * rewritten into an equivalent one, or refused naming the rule unless
 * flags has SBX_OCI_EXPORT_LARGE_NUMBERS). Refuses user-notify anywhere in
 * the policy, naming the rule: a container runtime has no supervisor to
 * answer it. */
char *sbx_oci_export(const sbx_policy *policy, unsigned flags, GError **error);

/* The calls SBX_OCI_EXPORT_FOR_CONTAINER adds, as sbx policy text (one
 * rule a line, each with the reason it is needed). */
extern const char sbx_oci_container_runtime_calls[];

#endif /* SBX_POLICY_OCI_H_ */
