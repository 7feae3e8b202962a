/* The escape attempts a hostile page can ask its renderer to make.
 *
 * Why it exists: "blocked" means something only next to a control, so
 * each attack is one operation that the worker runs inside the sandbox
 * and the host runs outside it (where it must work), plus, where an
 * attempt could leave a trace, a check the host makes afterwards (the
 * file outside home was not created, the zygote and the broker still
 * live). The page only names attacks; what each one does is fixed here.
 */
#ifndef SBX_EXAMPLES_RENDERER_ATTACKS_H_
#define SBX_EXAMPLES_RENDERER_ATTACKS_H_

#include <stdbool.h>
#include <stddef.h>

#include "examples/renderer/protocol.h"

typedef struct {
  const char *name; /* as in <x-escape attack="NAME"> */
  const char *what; /* what the worker tries, for the table */
  /* The operation. In the worker (control == false) it aims at the real
   * target; as the host's control (control == true) it performs the same
   * call where a sandbox-free process may, without harming anything.
   * Returns >= 0 when the operation worked, else -1 with errno set. */
  long (*run)(const demo_request *t, bool control);
  /* In the host after the worker ended: false (and *detail says why) if
   * the attempt left a trace. NULL when there is nothing to check. */
  bool (*unharmed)(const demo_request *t, char *detail, size_t len);
  /* A feature some systems switch off (io_uring, user namespaces for
   * unprivileged users): when the control fails the attack is skipped,
   * not failed. The attacks the demo promises are never optional. */
  bool optional;
} demo_attack;

/* The attack called name, or NULL. */
const demo_attack *demo_attack_find(const char *name);

#endif /* SBX_EXAMPLES_RENDERER_ATTACKS_H_ */
