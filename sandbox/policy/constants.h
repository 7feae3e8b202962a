/* Named constants for policies: O_RDONLY, TCGETS, CLONE_THREAD, EPERM, ...
 *
 * The tables are generated at build time from the real kernel and libc
 * headers (constants_headers.txt) by gen_constants.py, with the compiler
 * evaluating every value, plus a short reviewed supplement of constants
 * newer than the build's headers (constants_supplement.txt). All data is
 * const; lookups allocate nothing.
 */
#ifndef SBX_POLICY_CONSTANTS_H_
#define SBX_POLICY_CONSTANTS_H_

#include <stdint.h>

#include <glib.h>

/* Sets *value to the constant called name and returns TRUE, or returns
 * FALSE (leaving *value alone) when no table defines it. A negative macro
 * value is returned as its 64-bit two's complement, as the kernel sees it
 * in a register. */
gboolean sbx_constant_lookup(const char *name, uint64_t *value);

/* Calls visit once for every entry of every table, in search order; source
 * names the table ("libc", "linux", "supplement"). A name may appear in
 * more than one table; lookups return the first. */
typedef void (*sbx_constant_visitor)(const char *name, uint64_t value,
                                     const char *source, void *user_data);
void sbx_constant_foreach(sbx_constant_visitor visit, void *user_data);

#endif /* SBX_POLICY_CONSTANTS_H_ */
