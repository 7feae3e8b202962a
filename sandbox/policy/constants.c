/* Named constants for policies.
 *
 * Why it exists: policy files name constants (AF_UNIX, TCGETS, PROT_EXEC)
 * and must mean exactly what the kernel means. The values come from the
 * compiler evaluating the real headers at build time (gen_constants.py);
 * nothing here is typed by hand except the reviewed supplement of
 * constants newer than those headers.
 *
 * Trusts: the build's headers and constants_supplement.txt.
 * Refuses: names no table defines (the caller reports them).
 */
#include "sandbox/policy/constants.h"

#include <stddef.h>

#include "sandbox/base/syscalls.h"
#include "sandbox/policy/constants_tables.h"

static const char kSupplementNames[] = SBX_CONSTANT_SUPPLEMENT_NAMES;
static const sbx_constant_entry kSupplement[] = {SBX_CONSTANT_SUPPLEMENT};

typedef struct {
  const char *source;
  const char *names;
  const sbx_constant_entry *entries;
  const size_t *count;
} sbx_constant_table;

static const size_t kSupplementCount =
    sizeof(kSupplement) / sizeof(kSupplement[0]);

#define SBX_TABLE_ENTRY(group)                                   \
  {#group, sbx_constants_##group##_names, sbx_constants_##group, \
   &sbx_constants_##group##_count},
static const sbx_constant_table kTables[] = {
    SBX_CONSTANT_TABLES(SBX_TABLE_ENTRY){"supplement", kSupplementNames,
                                         kSupplement, &kSupplementCount},
};
#undef SBX_TABLE_ENTRY

gboolean sbx_constant_lookup(const char *name, uint64_t *value) {
  if (name == NULL)
    return FALSE;
  for (size_t t = 0; t < G_N_ELEMENTS(kTables); t++) {
    const sbx_constant_entry *e = sbx_name_search(
        kTables[t].entries, *kTables[t].count, sizeof(sbx_constant_entry),
        offsetof(sbx_constant_entry, name), kTables[t].names, name);
    if (e != NULL) {
      *value = e->value;
      return TRUE;
    }
  }
  return FALSE;
}

void sbx_constant_foreach(sbx_constant_visitor visit, void *user_data) {
  for (size_t t = 0; t < G_N_ELEMENTS(kTables); t++) {
    for (size_t i = 0; i < *kTables[t].count; i++)
      visit(kTables[t].names + kTables[t].entries[i].name,
            kTables[t].entries[i].value, kTables[t].source, user_data);
  }
}
