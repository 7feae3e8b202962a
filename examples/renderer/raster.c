/* Draws a layout with pango and cairo (see raster.h). */
#include "examples/renderer/raster.h"

#include <string.h>

#include <glib.h>
#include <pango/pangocairo.h>

#include "examples/renderer/markup.h"

/* The font's size in pixels for a scale-1 line: its advance fills about
 * a cell. */
#define FONT_PX 14

/* One run of equal style as pango attributes over bytes [from, to). */
static void add_style(PangoAttrList *attrs, unsigned style, guint from,
                      guint to) {
  PangoAttribute *a[3] = {NULL, NULL, NULL};
  if (style & DEMO_STYLE_STRONG)
    a[0] = pango_attr_weight_new(PANGO_WEIGHT_BOLD);
  if (style & DEMO_STYLE_EM) {
    a[1] = pango_attr_style_new(PANGO_STYLE_ITALIC);
    a[2] = pango_attr_underline_new(PANGO_UNDERLINE_SINGLE);
  }
  for (int i = 0; i < 3; i++) {
    if (!a[i])
      continue;
    a[i]->start_index = from;
    a[i]->end_index = to;
    pango_attr_list_insert(attrs, a[i]);
  }
  if (style & DEMO_STYLE_CODE) {
    PangoAttribute *bg = pango_attr_background_new(0xe000, 0xe000, 0xe000);
    bg->start_index = from;
    bg->end_index = to;
    pango_attr_list_insert(attrs, bg);
  }
}

static void draw_line(cairo_t *cr, PangoLayout *pl, PangoFontDescription *font,
                      const demo_line *l, int y) {
  /* The layout holds bytes; pango wants UTF-8, and anything else is
   * shown as '?' (the layout is ASCII by construction). */
  g_autofree char *text = g_strndup(l->text->str, l->text->len);
  for (char *c = text; *c; c++)
    if ((unsigned char)*c < 0x20 || (unsigned char)*c > 0x7e)
      *c = '?';
  pango_font_description_set_absolute_size(font,
                                           FONT_PX * l->scale * PANGO_SCALE);
  pango_layout_set_font_description(pl, font);
  pango_layout_set_text(pl, text, -1);
  PangoAttrList *attrs = pango_attr_list_new();
  guint start = 0;
  for (guint i = 1; i <= l->text->len; i++) {
    if (i == l->text->len || l->style->data[i] != l->style->data[start]) {
      add_style(attrs, l->style->data[start], start, i);
      start = i;
    }
  }
  pango_layout_set_attributes(pl, attrs);
  pango_attr_list_unref(attrs);
  cairo_move_to(cr, DEMO_MARGIN, y);
  pango_cairo_show_layout(cr, pl);
}

static cairo_status_t append(void *closure, const unsigned char *data,
                             unsigned int len) {
  g_byte_array_append(closure, data, len);
  return CAIRO_STATUS_SUCCESS;
}

uint8_t *demo_raster_png(const demo_layout *layout, size_t *len,
                         GError **error) {
  int w = 2 * DEMO_MARGIN + layout->width * DEMO_CELL_W;
  int h = 2 * DEMO_MARGIN;
  guint n = 0;
  for (; n < layout->lines->len; n++) {
    const demo_line *l = g_ptr_array_index(layout->lines, n);
    if (h + DEMO_CELL_H * l->scale > DEMO_RASTER_MAX_H)
      break;
    h += DEMO_CELL_H * l->scale;
  }
  cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, w, h);
  cairo_t *cr = cairo_create(s);
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);
  cairo_set_source_rgb(cr, 0, 0, 0);
  PangoLayout *pl = pango_cairo_create_layout(cr);
  PangoFontDescription *font = pango_font_description_from_string("Monospace");
  int y = DEMO_MARGIN;
  for (guint i = 0; i < n; i++) {
    const demo_line *l = g_ptr_array_index(layout->lines, i);
    draw_line(cr, pl, font, l, y);
    y += DEMO_CELL_H * l->scale;
  }
  pango_font_description_free(font);
  g_object_unref(pl);
  cairo_destroy(cr);
  GByteArray *png = g_byte_array_new();
  cairo_status_t st = cairo_surface_write_to_png_stream(s, append, png);
  cairo_surface_destroy(s);
  if (st != CAIRO_STATUS_SUCCESS) {
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "cairo: %s",
                cairo_status_to_string(st));
    g_byte_array_unref(png);
    return NULL;
  }
  *len = png->len;
  return g_byte_array_free(png, FALSE);
}
