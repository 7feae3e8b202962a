/* The image output: a layout drawn with pango and cairo into a PNG, in
 * the system's monospace font (fontconfig finds it: in the worker,
 * through the broker, by the renderer profile's include=fonts), headings
 * at twice the size, strong text bold, emphasis in italics and
 * underlined, code on a grey ground.
 *
 * Why it exists: an image is what a browser's renderer hands back, drawn
 * by the same kind of libraries a real one uses; its size is bounded by
 * the layout's limits and capped at DEMO_RASTER_MAX_H pixels high (later
 * lines are left out).
 */
#ifndef SBX_EXAMPLES_RENDERER_RASTER_H_
#define SBX_EXAMPLES_RENDERER_RASTER_H_

#include <stddef.h>
#include <stdint.h>

#include "examples/renderer/layout.h"

#define DEMO_CELL_W 9  /* one column of the layout, in pixels */
#define DEMO_CELL_H 18 /* one line */
#define DEMO_MARGIN 8
#define DEMO_RASTER_MAX_H 8192

/* The whole PNG file; free with g_free. NULL with *error set when cairo
 * fails (out of memory). */
uint8_t *demo_raster_png(const demo_layout *layout, size_t *len,
                         GError **error);

#endif /* SBX_EXAMPLES_RENDERER_RASTER_H_ */
