/* A 5x7 bitmap font for printable ASCII, drawn for the demo's image
 * output (no font file is guaranteed on a fresh system).
 *
 * Why it exists: the image renderer needs glyphs; a bitmap table keeps the
 * rasteriser small and makes every pixel predictable. Characters outside
 * 0x20..0x7e draw as '?'.
 */
#ifndef SBX_EXAMPLES_RENDERER_FONT_H_
#define SBX_EXAMPLES_RENDERER_FONT_H_

#include <stdint.h>

#define DEMO_GLYPH_W 5
#define DEMO_GLYPH_H 7

/* Row y (0 = top) of character c; bit 4 is the leftmost pixel. */
uint8_t demo_glyph_row(char c, int y);

#endif /* SBX_EXAMPLES_RENDERER_FONT_H_ */
