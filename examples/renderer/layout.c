/* Greedy word wrapping into fixed-width lines (see layout.h). Wrapping
 * works on ranges of the block's own text, so styles travel with their
 * characters and a line never holds more than its width. */
#include "examples/renderer/layout.h"

#include <stdbool.h>
#include <string.h>

typedef struct {
  size_t start, len;
} range;

typedef struct {
  demo_layout *out;
  bool overflow;
} builder;

static void line_free(gpointer data) {
  demo_line *l = data;
  g_string_free(l->text, TRUE);
  g_byte_array_unref(l->style);
  g_free(l);
}

static demo_line *add_line(builder *b, int scale) {
  if (b->out->lines->len >= DEMO_LAYOUT_MAX_LINES) {
    b->overflow = true;
    return NULL;
  }
  demo_line *l = g_new0(demo_line, 1);
  l->text = g_string_new(NULL);
  l->style = g_byte_array_new();
  l->scale = scale;
  g_ptr_array_add(b->out->lines, l);
  return l;
}

/* Appends n characters; style may be NULL (then every character gets
 * extra). The non-breaking space becomes a plain one here. */
static void put(demo_line *l, const char *s, const guint8 *style, size_t n,
                guint8 extra) {
  for (size_t i = 0; i < n; i++) {
    char c = s[i] == DEMO_NBSP ? ' ' : s[i];
    guint8 st = (guint8)((style ? style[i] : 0) | extra);
    g_string_append_c(l->text, c);
    g_byte_array_append(l->style, &st, 1);
  }
}

static void put_repeated(demo_line *l, char c, size_t n, guint8 style) {
  for (size_t i = 0; i < n; i++)
    put(l, &c, NULL, 1, style);
}

/* Splits text into lines: the first at most first_avail characters, the
 * others at most avail (both >= 1). Breaks at spaces and at '\n'; a word
 * longer than a line is cut. Always yields at least one (maybe empty)
 * range. */
static void wrap_ranges(const char *text, size_t len, size_t first_avail,
                        size_t avail, GArray *out) {
  size_t pos = 0;
  bool first = true;
  for (;;) {
    size_t width = first ? first_avail : avail;
    while (pos < len && text[pos] == ' ')
      pos++;
    size_t line_start = pos, line_end = pos;
    while (pos < len && text[pos] != '\n') {
      size_t word_start = pos;
      while (pos < len && text[pos] != ' ' && text[pos] != '\n')
        pos++;
      if (pos - line_start <= width) {
        line_end = pos;
        if (pos < len && text[pos] == ' ')
          pos++;
        continue;
      }
      if (line_end == line_start) {
        line_end = line_start + width; /* the word alone is too long */
        pos = line_end;
      } else {
        pos = word_start;
      }
      break;
    }
    range r = {line_start, line_end - line_start};
    g_array_append_val(out, r);
    if (pos >= len)
      break;
    if (text[pos] == '\n')
      pos++;
    first = false;
  }
}

static void wrap_block(builder *b, const demo_block *blk, const char *prefix,
                       size_t width, int scale, guint8 extra) {
  size_t plen = strlen(prefix);
  size_t avail = width > plen ? width - plen : 1;
  GArray *ranges = g_array_new(FALSE, FALSE, sizeof(range));
  wrap_ranges(blk->text->str, blk->text->len, avail, avail, ranges);
  for (guint i = 0; i < ranges->len; i++) {
    range r = g_array_index(ranges, range, i);
    demo_line *l = add_line(b, scale);
    if (!l)
      break;
    if (i == 0)
      put(l, prefix, NULL, plen, extra & DEMO_STYLE_HEADING);
    else
      put_repeated(l, ' ', plen, 0);
    put(l, blk->text->str + r.start, blk->style->data + r.start, r.len, extra);
  }
  g_array_unref(ranges);
}

/* Top-level headings are drawn at twice the size, so they wrap at half
 * the width; h1 and h2 are underlined. */
static void layout_heading(builder *b, const demo_block *blk, int width) {
  int scale = blk->level == 1 ? 2 : 1;
  guint first = b->out->lines->len;
  wrap_block(b, blk, "", (size_t)(width / scale), scale,
             DEMO_STYLE_STRONG | DEMO_STYLE_HEADING);
  if (blk->level > 2)
    return;
  size_t longest = 0;
  for (guint i = first; i < b->out->lines->len; i++) {
    demo_line *l = g_ptr_array_index(b->out->lines, i);
    longest = MAX(longest, l->text->len);
  }
  demo_line *l = add_line(b, scale);
  if (l)
    put_repeated(l, blk->level == 1 ? '=' : '-', longest, DEMO_STYLE_HEADING);
}

/* Text with its own line structure (a license): each line keeps its
 * indentation and wraps within the width below it. */
static void layout_reflowed(builder *b, const GString *text, int width) {
  char **lines = g_strsplit(text->str, "\n", -1);
  guint n = g_strv_length(lines);
  while (n > 0 && lines[n - 1][strspn(lines[n - 1], " ")] == '\0')
    n--; /* no trailing blank lines */
  GArray *ranges = g_array_new(FALSE, FALSE, sizeof(range));
  for (guint i = 0; i < n && !b->overflow; i++) {
    const char *line = lines[i];
    size_t indent = strspn(line, " ");
    const char *content = line + indent;
    size_t len = strlen(content);
    while (len && content[len - 1] == ' ')
      len--;
    indent = MIN(indent, (size_t)width / 2);
    g_array_set_size(ranges, 0);
    wrap_ranges(content, len, (size_t)width - indent, (size_t)width - indent,
                ranges);
    for (guint r = 0; r < ranges->len; r++) {
      range rg = g_array_index(ranges, range, r);
      demo_line *l = add_line(b, 1);
      if (!l)
        break;
      put_repeated(l, ' ', rg.len ? indent : 0, 0);
      put(l, content + rg.start, NULL, rg.len, 0);
    }
  }
  g_array_unref(ranges);
  g_strfreev(lines);
}

static void layout_item(builder *b, const demo_block *blk, int width) {
  char prefix[64];
  int indent = 2 * MIN(blk->level - 1, 8);
  if (blk->number > 0)
    g_snprintf(prefix, sizeof prefix, "%*s%d. ", indent, "", blk->number);
  else
    g_snprintf(prefix, sizeof prefix, "%*s* ", indent, "");
  wrap_block(b, blk, prefix, (size_t)width, 1, 0);
}

/* Verbatim lines, indented by two and cut at the width. */
static void layout_pre(builder *b, const GString *text, const GByteArray *style,
                       int width, guint8 extra) {
  size_t len = text->len;
  while (len && text->str[len - 1] == '\n')
    len--;
  size_t pos = 0;
  do {
    const char *nl = memchr(text->str + pos, '\n', len - pos);
    size_t end = nl ? (size_t)(nl - text->str) : len;
    demo_line *l = add_line(b, 1);
    if (!l)
      return;
    put_repeated(l, ' ', 2, 0);
    size_t n = MIN(end - pos, (size_t)width - 2);
    put(l, text->str + pos, style ? style->data + pos : NULL, n, extra);
    pos = end + 1;
  } while (pos < len);
}

static void table_border(builder *b, const size_t *colw, guint ncols,
                         int width) {
  demo_line *l = add_line(b, 1);
  if (!l)
    return;
  put_repeated(l, '+', 1, 0);
  for (guint c = 0; c < ncols; c++) {
    put_repeated(l, '-', colw[c] + 2, 0);
    put_repeated(l, '+', 1, 0);
  }
  if (l->text->len > (size_t)width) {
    g_string_truncate(l->text, (gsize)width);
    g_byte_array_set_size(l->style, (guint)width);
  }
}

static void layout_table(builder *b, const demo_block *blk, int width) {
  guint ncols = 0;
  for (guint r = 0; r < blk->rows->len; r++)
    ncols = MAX(ncols, ((GPtrArray *)g_ptr_array_index(blk->rows, r))->len);
  size_t colw[DEMO_MARKUP_MAX_COLS] = {0};
  for (guint r = 0; r < blk->rows->len; r++) {
    GPtrArray *row = g_ptr_array_index(blk->rows, r);
    for (guint c = 0; c < row->len; c++)
      colw[c] = MAX(colw[c], ((GString *)g_ptr_array_index(row, c))->len);
  }
  size_t total = 1;
  for (guint c = 0; c < ncols; c++) {
    colw[c] = MAX(colw[c], 1);
    total += colw[c] + 3;
  }
  /* Narrow the widest column until the table fits (or nothing can). */
  while (total > (size_t)width) {
    guint widest = 0;
    for (guint c = 1; c < ncols; c++)
      if (colw[c] > colw[widest])
        widest = c;
    if (colw[widest] <= 1)
      break;
    colw[widest]--;
    total--;
  }
  table_border(b, colw, ncols, width);
  for (guint r = 0; r < blk->rows->len && !b->overflow; r++) {
    GPtrArray *row = g_ptr_array_index(blk->rows, r);
    GArray *cells[DEMO_MARKUP_MAX_COLS];
    guint height = 1;
    for (guint c = 0; c < ncols; c++) {
      cells[c] = g_array_new(FALSE, FALSE, sizeof(range));
      if (c < row->len) {
        GString *s = g_ptr_array_index(row, c);
        wrap_ranges(s->str, s->len, colw[c], colw[c], cells[c]);
      }
      height = MAX(height, cells[c]->len);
    }
    for (guint h = 0; h < height; h++) {
      demo_line *l = add_line(b, 1);
      if (!l)
        break;
      put_repeated(l, '|', 1, 0);
      for (guint c = 0; c < ncols; c++) {
        put_repeated(l, ' ', 1, 0);
        size_t n = 0;
        if (h < cells[c]->len) {
          GString *s = g_ptr_array_index(row, c);
          range rg = g_array_index(cells[c], range, h);
          n = rg.len;
          put(l, s->str + rg.start, NULL, n, r == 0 ? DEMO_STYLE_STRONG : 0);
        }
        put_repeated(l, ' ', colw[c] - n + 1, 0);
        put_repeated(l, '|', 1, 0);
      }
      if (l->text->len > (size_t)width) {
        g_string_truncate(l->text, (gsize)width);
        g_byte_array_set_size(l->style, (guint)width);
      }
    }
    for (guint c = 0; c < ncols; c++)
      g_array_unref(cells[c]);
    if (r == 0 || r + 1 == blk->rows->len)
      table_border(b, colw, ncols, width);
  }
}

/* One line "<label><name>", cut at the width. */
static void add_label(builder *b, const char *label, const char *name,
                      int width, guint8 style) {
  demo_line *l = add_line(b, 1);
  if (!l)
    return;
  char head[DEMO_MARKUP_MAX_NAME + 32];
  g_snprintf(head, sizeof head, "%s%s", label, name);
  put(l, head, NULL, MIN(strlen(head), (size_t)width), style);
}

demo_layout *demo_layout_document(const demo_document *doc, int width,
                                  GError **error) {
  if (width < DEMO_LAYOUT_MIN_WIDTH || width > DEMO_LAYOUT_MAX_WIDTH) {
    g_set_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                "layout width %d is outside %d..%d", width,
                DEMO_LAYOUT_MIN_WIDTH, DEMO_LAYOUT_MAX_WIDTH);
    return NULL;
  }
  builder b = {.out = g_new0(demo_layout, 1)};
  b.out->width = width;
  b.out->lines = g_ptr_array_new_with_free_func(line_free);
  demo_block_kind prev = DEMO_BLOCK_RULE;
  for (guint i = 0; i < doc->blocks->len && !b.overflow; i++) {
    const demo_block *blk = g_ptr_array_index(doc->blocks, i);
    bool list_continues =
        blk->kind == DEMO_BLOCK_ITEM && prev == DEMO_BLOCK_ITEM;
    if (i > 0 && !list_continues)
      add_line(&b, 1);
    prev = blk->kind;
    switch (blk->kind) {
      case DEMO_BLOCK_HEADING:
        layout_heading(&b, blk, width);
        break;
      case DEMO_BLOCK_PARAGRAPH:
        wrap_block(&b, blk, "", (size_t)width, 1, 0);
        break;
      case DEMO_BLOCK_ITEM:
        layout_item(&b, blk, width);
        break;
      case DEMO_BLOCK_PRE:
        layout_pre(&b, blk->text, blk->style, width, DEMO_STYLE_CODE);
        break;
      case DEMO_BLOCK_TABLE:
        layout_table(&b, blk, width);
        break;
      case DEMO_BLOCK_RULE: {
        demo_line *l = add_line(&b, 1);
        if (l)
          put_repeated(l, '-', (size_t)width, 0);
        break;
      }
      case DEMO_BLOCK_LICENSE:
        add_label(&b, "License: ", blk->name, width, DEMO_STYLE_STRONG);
        layout_reflowed(&b, blk->text, width);
        break;
      case DEMO_BLOCK_ESCAPE:
        add_label(&b, "[escape attempt] ", blk->name, width, DEMO_STYLE_EM);
        break;
    }
  }
  if (b.overflow) {
    g_set_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                "the page needs more than %d lines", DEMO_LAYOUT_MAX_LINES);
    demo_layout_free(b.out);
    return NULL;
  }
  return b.out;
}

void demo_layout_free(demo_layout *layout) {
  if (!layout)
    return;
  g_ptr_array_unref(layout->lines);
  g_free(layout);
}

char *demo_layout_to_text(const demo_layout *layout, size_t *len) {
  GString *s = g_string_new(NULL);
  for (guint i = 0; i < layout->lines->len; i++) {
    const demo_line *l = g_ptr_array_index(layout->lines, i);
    g_string_append_len(s, l->text->str, (gssize)l->text->len);
    g_string_append_c(s, '\n');
  }
  if (len)
    *len = s->len;
  return g_string_free(s, FALSE);
}
