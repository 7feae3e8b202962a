/* The renderer worker: what runs inside the sandbox.
 *
 * Why it exists: this is the untrusted side of the demo. It trusts
 * nothing it reads (the page, the license files) and holds no secret; the
 * sandbox, not this code, keeps it from reaching anything else. Its
 * resources come through the broker by plain open() and dlopen(): a file
 * under /usr/share/common-licenses, libz from /usr/lib, the fonts
 * fontconfig finds for pango (the profile's include=fonts), and a cache
 * file in the home directory the host gave it.
 */
#ifndef SBX_EXAMPLES_RENDERER_RENDERER_H_
#define SBX_EXAMPLES_RENDERER_RENDERER_H_

#include "sbx/sbx.h"

/* The worker entry (sbx_worker_entry): renders the page in the payload,
 * or carries out one of its escape requests, and sends a demo_result (and
 * what was rendered) to the host over its message channel. */
int demo_renderer_main(const sbx_worker_args *args);

#endif /* SBX_EXAMPLES_RENDERER_RENDERER_H_ */
