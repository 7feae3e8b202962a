/* Draws a layout with font.h (see raster.h). */
#include "examples/renderer/raster.h"

#include <string.h>

#include <glib.h>

#include "examples/renderer/font.h"

enum { PAPER = 255, INK = 0, CODE_GROUND = 224 };

typedef struct {
  uint8_t *px;
  int w, h;
} canvas;

static void fill(canvas *cv, int x, int y, int w, int h, uint8_t v) {
  for (int j = MAX(y, 0); j < MIN(y + h, cv->h); j++)
    for (int i = MAX(x, 0); i < MIN(x + w, cv->w); i++)
      cv->px[(size_t)j * (size_t)cv->w + (size_t)i] = v;
}

static void draw_char(canvas *cv, int x, int y, int scale, char c,
                      unsigned style) {
  if (style & DEMO_STYLE_CODE)
    fill(cv, x, y, DEMO_CELL_W * scale, DEMO_CELL_H * scale, CODE_GROUND);
  int strokes = style & DEMO_STYLE_STRONG ? 2 : 1;
  for (int gy = 0; gy < DEMO_GLYPH_H; gy++) {
    uint8_t row = demo_glyph_row(c, gy);
    for (int gx = 0; gx < DEMO_GLYPH_W; gx++) {
      if (!(row & (1u << (DEMO_GLYPH_W - 1 - gx))))
        continue;
      for (int s = 0; s < strokes; s++)
        fill(cv, x + (gx + s) * scale, y + gy * scale, scale, scale, INK);
    }
  }
  if (style & DEMO_STYLE_EM)
    fill(cv, x, y + DEMO_GLYPH_H * scale, DEMO_CELL_W * scale, scale, INK);
}

uint8_t *demo_raster_pgm(const demo_layout *layout, size_t *len) {
  int w = 2 * DEMO_MARGIN + layout->width * DEMO_CELL_W;
  int h = 2 * DEMO_MARGIN;
  guint n = 0;
  for (; n < layout->lines->len; n++) {
    const demo_line *l = g_ptr_array_index(layout->lines, n);
    if (h + DEMO_CELL_H * l->scale > DEMO_RASTER_MAX_H)
      break;
    h += DEMO_CELL_H * l->scale;
  }
  char header[64];
  int hl = g_snprintf(header, sizeof header, "P5\n%d %d\n255\n", w, h);
  size_t total = (size_t)hl + (size_t)w * (size_t)h;
  uint8_t *out = g_malloc(total);
  memcpy(out, header, (size_t)hl);
  canvas cv = {out + hl, w, h};
  memset(cv.px, PAPER, (size_t)w * (size_t)h);
  int y = DEMO_MARGIN;
  for (guint i = 0; i < n; i++) {
    const demo_line *l = g_ptr_array_index(layout->lines, i);
    for (gsize c = 0; c < l->text->len; c++) {
      int x = DEMO_MARGIN + (int)c * DEMO_CELL_W * l->scale;
      if (x + DEMO_CELL_W * l->scale > w)
        break;
      draw_char(&cv, x, y, l->scale, l->text->str[c], l->style->data[c]);
    }
    y += DEMO_CELL_H * l->scale;
  }
  *len = total;
  return out;
}
