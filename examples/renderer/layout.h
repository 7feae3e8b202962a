/* Layout: a parsed page as lines of a fixed width, shared by the text and
 * the image output.
 *
 * Why it exists: wrapping, lists, tables and preformatted text are the
 * renderer's real work. The layout trusts the document to respect the
 * parser's limits (markup.h) and nothing else; it never writes past a
 * line's width, and it refuses a layout that would grow past
 * DEMO_LAYOUT_MAX_LINES, so a hostile page cannot make it unbounded.
 */
#ifndef SBX_EXAMPLES_RENDERER_LAYOUT_H_
#define SBX_EXAMPLES_RENDERER_LAYOUT_H_

#include <glib.h>

#include "examples/renderer/markup.h"

#define DEMO_LAYOUT_MIN_WIDTH 20
#define DEMO_LAYOUT_MAX_WIDTH 200
#define DEMO_LAYOUT_MAX_LINES 4000

/* A line's extra style bit, beside the DEMO_STYLE_* ones. */
enum { DEMO_STYLE_HEADING = 8 };

typedef struct {
  GString *text;     /* at most width / scale characters, no '\n' */
  GByteArray *style; /* one DEMO_STYLE_* mask per character */
  int scale;         /* 2 for a top-level heading, else 1 */
} demo_line;

typedef struct {
  int width;
  GPtrArray *lines; /* demo_line * */
} demo_layout;

/* Lays doc out in width columns (DEMO_LAYOUT_MIN_WIDTH ..
 * DEMO_LAYOUT_MAX_WIDTH). NULL with *error set when the width is out of
 * range or the page needs more than DEMO_LAYOUT_MAX_LINES lines. */
demo_layout *demo_layout_document(const demo_document *doc, int width,
                                  GError **error);
void demo_layout_free(demo_layout *layout);

/* The layout as plain text, one '\n'-terminated line each. Free with
 * g_free. */
char *demo_layout_to_text(const demo_layout *layout, size_t *len);

#endif /* SBX_EXAMPLES_RENDERER_LAYOUT_H_ */
