/* The renderer demo's page engine without a sandbox: the parser on good,
 * malformed and hostile markup, the layout's width guarantees, and the
 * image output. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cairo.h>
#include <glib.h>

#include "examples/renderer/layout.h"
#include "examples/renderer/markup.h"
#include "examples/renderer/raster.h"
#include "sandbox/tests/demo/demo_test_util.h"

static demo_document *parse_ok(const char *text) {
  GError *error = NULL;
  demo_document *doc = demo_markup_parse("t.html", text, strlen(text), &error);
  ck_assert_msg(doc != NULL, "%s", error ? error->message : "?");
  return doc;
}

static const char *parse_error(const char *text, size_t len) {
  static char msg[256];
  GError *error = NULL;
  demo_document *doc = demo_markup_parse("t.html", text, len, &error);
  ck_assert_msg(doc == NULL, "a page over a limit was accepted");
  ck_assert(error != NULL);
  g_strlcpy(msg, error->message, sizeof msg);
  g_error_free(error);
  return msg;
}

static demo_block *block(demo_document *doc, guint i) {
  ck_assert_uint_gt(doc->blocks->len, i);
  return g_ptr_array_index(doc->blocks, i);
}

START_TEST(parser_reads_headings_paragraphs_and_styles) {
  demo_document *doc = parse_ok(
      "<title> A  page </title><h1>Big</h1><h2>Mid</h2>\n"
      "<p>one <em>two</em> <strong>three</strong> <code>x</code></p>"
      "<p>a<br>b</p>");
  ck_assert_str_eq(doc->title->str, "A page ");
  ck_assert_uint_eq(doc->blocks->len, 4);
  ck_assert_int_eq(block(doc, 0)->kind, DEMO_BLOCK_HEADING);
  ck_assert_int_eq(block(doc, 0)->level, 1);
  ck_assert_int_eq(block(doc, 1)->level, 2);
  demo_block *p = block(doc, 2);
  ck_assert_str_eq(p->text->str, "one two three x");
  ck_assert_int_eq(p->style->data[0], 0);
  ck_assert_int_eq(p->style->data[4], DEMO_STYLE_EM);
  ck_assert_int_eq(p->style->data[8], DEMO_STYLE_STRONG);
  ck_assert_int_eq(p->style->data[14], DEMO_STYLE_CODE);
  ck_assert_str_eq(block(doc, 3)->text->str, "a\nb");
  ck_assert_int_eq(block(doc, 3)->line, 2);
  demo_document_free(doc);
}
END_TEST

START_TEST(parser_decodes_entities_and_keeps_broken_ones_literal) {
  demo_document *doc = parse_ok(
      "<p>&lt;a&gt; &amp; &quot;&#65;&#x42;&#x263A; &bogus; &amp &#xZZ; "
      "&copy;&nbsp;x</p>");
  ck_assert_str_eq(block(doc, 0)->text->str,
                   "<a> & \"AB? &bogus; &amp &#xZZ; (c)\x01x");
  demo_document_free(doc);
}
END_TEST

START_TEST(parser_numbers_ordered_items_and_nests_lists) {
  demo_document *doc =
      parse_ok("<ol><li>a<li>b<ul><li>c</ul><li>d</ol><ul><li>e</li></ul>");
  ck_assert_uint_eq(doc->blocks->len, 5);
  ck_assert_int_eq(block(doc, 0)->number, 1);
  ck_assert_int_eq(block(doc, 1)->number, 2);
  ck_assert_int_eq(block(doc, 2)->number, 0);
  ck_assert_int_eq(block(doc, 2)->level, 2);
  ck_assert_int_eq(block(doc, 3)->number, 3);
  ck_assert_int_eq(block(doc, 4)->level, 1);
  ck_assert_int_eq(block(doc, 4)->number, 0);
  demo_document_free(doc);
}
END_TEST

START_TEST(parser_reads_table_cells) {
  demo_document *doc = parse_ok(
      "<table><tr><th>k</th><th>v</th></tr> junk <tr><td> a  b </td><td>c"
      "</table><table></table>");
  ck_assert_uint_eq(doc->blocks->len, 1);
  demo_block *t = block(doc, 0);
  ck_assert_int_eq(t->kind, DEMO_BLOCK_TABLE);
  ck_assert_uint_eq(t->rows->len, 2);
  GPtrArray *row = g_ptr_array_index(t->rows, 1);
  ck_assert_uint_eq(row->len, 2);
  ck_assert_str_eq(((GString *)g_ptr_array_index(row, 0))->str, "a b ");
  ck_assert_str_eq(((GString *)g_ptr_array_index(row, 1))->str, "c");
  demo_document_free(doc);
}
END_TEST

START_TEST(parser_keeps_pre_verbatim_and_expands_tabs) {
  demo_document *doc = parse_ok("<pre>\n  a  b\n\tc &lt;</pre>");
  ck_assert_str_eq(block(doc, 0)->text->str, "  a  b\n        c <");
  demo_document_free(doc);
}
END_TEST

START_TEST(parser_recovers_from_unclosed_and_stray_tags) {
  demo_document *doc = parse_ok(
      "</p></em><p>x <em>y <b>z</p><p>w</i> 1 < 2 <3 <a href='q'>link"
      "<script>ignored <p>gone</script> <!-- hidden --> <unknown>kept");
  ck_assert_uint_eq(doc->blocks->len, 2);
  ck_assert_str_eq(block(doc, 0)->text->str, "x y z");
  ck_assert_str_eq(block(doc, 1)->text->str, "w 1 < 2 <3 link kept");
  /* Style of the unclosed <em>/<b> continues, as in a browser. */
  ck_assert_int_eq(block(doc, 1)->style->data[0],
                   DEMO_STYLE_EM | DEMO_STYLE_STRONG);
  demo_document_free(doc);
  doc = parse_ok("<p>one </li></h2></pre> two</p>");
  ck_assert_uint_eq(doc->blocks->len, 1);
  ck_assert_str_eq(block(doc, 0)->text->str, "one two");
  demo_document_free(doc);
  doc = parse_ok("<p>tail <b");
  ck_assert_str_eq(block(doc, 0)->text->str, "tail <b");
  demo_document_free(doc);
}
END_TEST

START_TEST(parser_replaces_non_ascii_and_control_bytes) {
  demo_document *doc = parse_ok("<p>caf\xc3\xa9 \x01\x7f\xff\x80x</p>");
  ck_assert_str_eq(block(doc, 0)->text->str, "caf? ?x");
  demo_document_free(doc);
}
END_TEST

START_TEST(parser_reads_license_and_escape_elements) {
  demo_document *doc = parse_ok(
      "<license name=\"GPL-3\"><x-escape attack=fork>"
      "<x-escape attack='read-shadow'/><x-escape><license name=''>");
  ck_assert_uint_eq(demo_document_count(doc, DEMO_BLOCK_LICENSE), 1);
  ck_assert_uint_eq(demo_document_count(doc, DEMO_BLOCK_ESCAPE), 2);
  ck_assert_str_eq(demo_document_nth(doc, DEMO_BLOCK_LICENSE, 0)->name,
                   "GPL-3");
  ck_assert_str_eq(demo_document_nth(doc, DEMO_BLOCK_ESCAPE, 1)->name,
                   "read-shadow");
  ck_assert_ptr_null(demo_document_nth(doc, DEMO_BLOCK_ESCAPE, 2));
  demo_document_free(doc);
}
END_TEST

START_TEST(parser_refuses_nesting_deeper_than_the_limit_naming_the_line) {
  GString *s = g_string_new("<p>\n\n");
  for (int i = 0; i < DEMO_MARKUP_MAX_DEPTH; i++)
    g_string_append(s, "<em>");
  demo_document *doc = parse_ok(s->str);
  demo_document_free(doc);
  g_string_append(s, "<span>");
  const char *msg = parse_error(s->str, s->len);
  ck_assert_msg(strstr(msg, "t.html:3:") && strstr(msg, "nested deeper"), "%s",
                msg);
  g_string_free(s, TRUE);
}
END_TEST

START_TEST(parser_refuses_oversized_pages_and_too_many_blocks) {
  size_t big = DEMO_MARKUP_MAX_BYTES + 1;
  char *text = g_malloc(big);
  memset(text, 'a', big);
  const char *msg = parse_error(text, big);
  ck_assert_msg(strstr(msg, "t.html") && strstr(msg, "limit"), "%s", msg);
  g_free(text);
  GString *s = g_string_new(NULL);
  for (int i = 0; i <= DEMO_MARKUP_MAX_BLOCKS; i++)
    g_string_append(s, "<hr>");
  msg = parse_error(s->str, s->len);
  ck_assert_msg(strstr(msg, "blocks"), "%s", msg);
  g_string_free(s, TRUE);
  s = g_string_new("<table>");
  for (int i = 0; i <= DEMO_MARKUP_MAX_ROWS; i++)
    g_string_append(s, "<tr><td>x");
  msg = parse_error(s->str, s->len);
  ck_assert_msg(strstr(msg, "rows"), "%s", msg);
  g_string_free(s, TRUE);
}
END_TEST

static void assert_layout_within(const demo_document *doc, int width) {
  GError *error = NULL;
  demo_layout *l = demo_layout_document(doc, width, &error);
  if (!l) {
    /* Only the line limit may refuse a parsed page. */
    ck_assert_msg(strstr(error->message, "lines"), "%s", error->message);
    g_error_free(error);
    return;
  }
  for (guint i = 0; i < l->lines->len; i++) {
    const demo_line *line = g_ptr_array_index(l->lines, i);
    ck_assert_uint_le(line->text->len * (size_t)line->scale, (size_t)width);
    ck_assert_uint_eq(line->text->len, line->style->len);
    ck_assert_ptr_null(memchr(line->text->str, '\n', line->text->len));
  }
  size_t len = 0;
  g_free(demo_raster_png(l, &len, NULL));
  ck_assert_uint_gt(len, 0);
  demo_layout_free(l);
}

/* Random bytes and random splices of real markup: every input either
 * parses or is refused with an error; every layout stays in its width. */
START_TEST(parser_and_layout_survive_random_and_mutated_markup) {
  static const char *const pieces[] = {"<p>",
                                       "</p>",
                                       "<h1>",
                                       "<li>",
                                       "<ol>",
                                       "</ul>",
                                       "<table>",
                                       "<tr>",
                                       "<td>",
                                       "</td>",
                                       "<pre>",
                                       "</pre>",
                                       "<em>",
                                       "</b>",
                                       "&amp;",
                                       "&#",
                                       "<",
                                       ">",
                                       "&",
                                       "\n",
                                       "\t",
                                       " ",
                                       "word",
                                       "averyveryverylongwordthatcannotfit",
                                       "<br>",
                                       "<hr>",
                                       "<license name=x>",
                                       "<x-escape attack=fork>",
                                       "<!--",
                                       "-->",
                                       "<script>",
                                       "\xc3",
                                       "\xff",
                                       "'",
                                       "\"",
                                       "="};
  GRand *rand = g_rand_new_with_seed(1234);
  for (int round = 0; round < 3000; round++) {
    GString *s = g_string_new(NULL);
    int n = g_rand_int_range(rand, 0, 200);
    for (int i = 0; i < n; i++) {
      if (round % 3 == 0)
        g_string_append_c(s, (char)g_rand_int_range(rand, 0, 256));
      else
        g_string_append(
            s, pieces[g_rand_int_range(rand, 0, G_N_ELEMENTS(pieces))]);
    }
    GError *error = NULL;
    demo_document *doc = demo_markup_parse("r.html", s->str, s->len, &error);
    if (doc) {
      assert_layout_within(doc, g_rand_int_range(rand, DEMO_LAYOUT_MIN_WIDTH,
                                                 DEMO_LAYOUT_MIN_WIDTH + 60));
      demo_document_free(doc);
    } else {
      ck_assert(error != NULL);
      g_error_free(error);
    }
    g_string_free(s, TRUE);
  }
  g_rand_free(rand);
}
END_TEST

static char *layout_text(const char *markup, int width) {
  demo_document *doc = parse_ok(markup);
  GError *error = NULL;
  demo_layout *l = demo_layout_document(doc, width, &error);
  ck_assert_msg(l != NULL, "%s", error ? error->message : "?");
  char *text = demo_layout_to_text(l, NULL);
  demo_layout_free(l);
  demo_document_free(doc);
  return text;
}

START_TEST(layout_wraps_words_at_the_width) {
  char *t = layout_text("<p>aaa bbb ccc ddd eee fff ggg hhh iii jjj</p>", 20);
  ck_assert_str_eq(t, "aaa bbb ccc ddd eee\nfff ggg hhh iii jjj\n");
  g_free(t);
  t = layout_text("<ul><li>one two three four five six seven</ul>", 20);
  ck_assert_str_eq(t, "* one two three four\n  five six seven\n");
  g_free(t);
}
END_TEST

START_TEST(layout_cuts_words_longer_than_a_line) {
  char *t = layout_text("<p>x abcdefghijklmnopqrstuvwxyz</p>", 20);
  ck_assert_str_eq(t, "x\nabcdefghijklmnopqrst\nuvwxyz\n");
  g_free(t);
}
END_TEST

START_TEST(layout_underlines_headings_and_keeps_nbsp_together) {
  char *t = layout_text("<h2>Title</h2><p>aaaaaaaaaaaaaaaaa b&nbsp;c</p>", 20);
  ck_assert_str_eq(t, "Title\n-----\n\naaaaaaaaaaaaaaaaa\nb c\n");
  g_free(t);
}
END_TEST

START_TEST(layout_draws_tables_with_borders_within_the_width) {
  char *t = layout_text("<table><tr><td>k<td>v<tr><td>a<td>bb</table>", 40);
  ck_assert_str_eq(t,
                   "+---+----+\n| k | v  |\n+---+----+\n| a | bb |\n"
                   "+---+----+\n");
  g_free(t);
  t = layout_text(
      "<table><tr><td>a very long cell that must wrap<td>another long one"
      "</table>",
      24);
  for (char *line = strtok(t, "\n"); line; line = strtok(NULL, "\n"))
    ck_assert_uint_le(strlen(line), 24);
  g_free(t);
}
END_TEST

START_TEST(layout_refuses_widths_out_of_range) {
  demo_document *doc = parse_ok("<p>x</p>");
  GError *error = NULL;
  ck_assert_ptr_null(demo_layout_document(doc, 5, &error));
  ck_assert_msg(strstr(error->message, "width 5"), "%s", error->message);
  g_error_free(error);
  demo_document_free(doc);
}
END_TEST

typedef struct {
  const uint8_t *p;
  size_t left;
} png_reader;

static cairo_status_t read_png(void *closure, unsigned char *data,
                               unsigned int len) {
  png_reader *r = closure;
  if (len > r->left)
    return CAIRO_STATUS_READ_ERROR;
  memcpy(data, r->p, len);
  r->p += len;
  r->left -= len;
  return CAIRO_STATUS_SUCCESS;
}

/* Decodes the PNG; returns how many pixels are darker than mid-grey. */
static size_t ink(const uint8_t *png, size_t len, int *w, int *h) {
  ck_assert_int_eq(memcmp(png, "\x89PNG\r\n\x1a\n", 8), 0);
  png_reader r = {png, len};
  cairo_surface_t *s = cairo_image_surface_create_from_png_stream(read_png, &r);
  ck_assert_int_eq(cairo_surface_status(s), CAIRO_STATUS_SUCCESS);
  *w = cairo_image_surface_get_width(s);
  *h = cairo_image_surface_get_height(s);
  int stride = cairo_image_surface_get_stride(s);
  const unsigned char *px = cairo_image_surface_get_data(s);
  size_t dark = 0;
  for (int y = 0; y < *h; y++) {
    const uint32_t *row = (const uint32_t *)(px + (size_t)y * stride);
    for (int x = 0; x < *w; x++) {
      uint32_t v = row[x];
      unsigned grey = (((v >> 16) & 0xff) + ((v >> 8) & 0xff) + (v & 0xff)) / 3;
      dark += grey < 128;
    }
  }
  cairo_surface_destroy(s);
  return dark;
}

/* pango draws the text in the system's monospace font: ink where there is
 * text, none on an empty page, and the picture's size follows the
 * layout's cells. */
START_TEST(raster_writes_a_png_with_ink_only_where_text_is) {
  demo_document *doc = parse_ok("<h1>Hi</h1><p>x <strong>y</strong></p>");
  demo_layout *l = demo_layout_document(doc, 30, NULL);
  size_t len;
  uint8_t *png = demo_raster_png(l, &len, NULL);
  ck_assert_ptr_nonnull(png);
  int w, h;
  size_t dark = ink(png, len, &w, &h);
  ck_assert_int_eq(w, 2 * DEMO_MARGIN + 30 * DEMO_CELL_W);
  /* heading and its underline (both scale 2), blank, paragraph */
  ck_assert_int_eq(h, 2 * DEMO_MARGIN + DEMO_CELL_H * (2 + 2 + 1 + 1));
  ck_assert_uint_gt(dark, 20);
  g_free(png);
  demo_layout_free(l);
  demo_document_free(doc);
  doc = parse_ok("<p>&nbsp;</p>");
  l = demo_layout_document(doc, 30, NULL);
  png = demo_raster_png(l, &len, NULL);
  ck_assert_uint_eq(ink(png, len, &w, &h), 0);
  g_free(png);
  demo_layout_free(l);
  demo_document_free(doc);
}
END_TEST

int main(void) {
  Suite *s = suite_create("demo_page");
  TCase *tc = tcase_create("page");
  tcase_set_timeout(tc, 30);
  tcase_add_test(tc, parser_reads_headings_paragraphs_and_styles);
  tcase_add_test(tc, parser_decodes_entities_and_keeps_broken_ones_literal);
  tcase_add_test(tc, parser_numbers_ordered_items_and_nests_lists);
  tcase_add_test(tc, parser_reads_table_cells);
  tcase_add_test(tc, parser_keeps_pre_verbatim_and_expands_tabs);
  tcase_add_test(tc, parser_recovers_from_unclosed_and_stray_tags);
  tcase_add_test(tc, parser_replaces_non_ascii_and_control_bytes);
  tcase_add_test(tc, parser_reads_license_and_escape_elements);
  tcase_add_test(tc,
                 parser_refuses_nesting_deeper_than_the_limit_naming_the_line);
  tcase_add_test(tc, parser_refuses_oversized_pages_and_too_many_blocks);
  tcase_add_test(tc, parser_and_layout_survive_random_and_mutated_markup);
  tcase_add_test(tc, layout_wraps_words_at_the_width);
  tcase_add_test(tc, layout_cuts_words_longer_than_a_line);
  tcase_add_test(tc, layout_underlines_headings_and_keeps_nbsp_together);
  tcase_add_test(tc, layout_draws_tables_with_borders_within_the_width);
  tcase_add_test(tc, layout_refuses_widths_out_of_range);
  tcase_add_test(tc, raster_writes_a_png_with_ink_only_where_text_is);
  suite_add_tcase(s, tc);
  return demo_test_run(s);
}
