/* The image output: a layout drawn into a greyscale PGM (P5) picture
 * with the bitmap font, headings at twice the size, strong text bold,
 * emphasis underlined, code on a grey ground.
 *
 * Why it exists: an image is what a browser's renderer hands back; its
 * size is bounded by the layout's limits and capped at DEMO_RASTER_MAX_H
 * pixels high (later lines are left out).
 */
#ifndef SBX_EXAMPLES_RENDERER_RASTER_H_
#define SBX_EXAMPLES_RENDERER_RASTER_H_

#include <stddef.h>
#include <stdint.h>

#include "examples/renderer/layout.h"

#define DEMO_CELL_W 6 /* glyph plus one column of space */
#define DEMO_CELL_H 9 /* glyph plus two rows (underline, space) */
#define DEMO_MARGIN 8
#define DEMO_RASTER_MAX_H 8192

/* The whole PGM file (header and pixels); free with g_free. */
uint8_t *demo_raster_pgm(const demo_layout *layout, size_t *len);

#endif /* SBX_EXAMPLES_RENDERER_RASTER_H_ */
