/* The renderer demo's page language: a small HTML-like subset.
 *
 * Why it exists: the demo needs untrusted input that takes real work to
 * turn into output, so that a sandboxed renderer has something to do.
 * The parser trusts nothing in the page. Like a browser it recovers from
 * malformed markup (unclosed or stray tags, broken entities, bytes that
 * are not ASCII) instead of failing; it refuses, with an error naming the
 * page and line, only input that would make its work unbounded: a page
 * over the size limit, elements nested too deep, too many blocks, table
 * cells or text. A refused page yields no document at all.
 *
 * Elements: h1 h2 h3 p br hr em/i strong/b code/tt ul ol li pre table tr
 * td th title, and two of the demo's own: <license name="NAME"> (the text
 * of /usr/share/common-licenses/NAME, read by the renderer at render
 * time) and <x-escape attack="NAME"> (a hostile page's request that its
 * renderer try the named escape). Everything else is ignored, its text
 * kept; script and style content is dropped. Entities: &amp; &lt; &gt;
 * &quot; &apos; &nbsp; &copy; &mdash; &hellip; and &#N; / &#xH;.
 */
#ifndef SBX_EXAMPLES_RENDERER_MARKUP_H_
#define SBX_EXAMPLES_RENDERER_MARKUP_H_

#include <stddef.h>

#include <glib.h>

#define DEMO_MARKUP_MAX_BYTES (60 * 1024)
#define DEMO_MARKUP_MAX_DEPTH 32
#define DEMO_MARKUP_MAX_BLOCKS 2048
#define DEMO_MARKUP_MAX_TEXT (256 * 1024) /* decoded text, all blocks */
#define DEMO_MARKUP_MAX_ROWS 64
#define DEMO_MARKUP_MAX_COLS 16
#define DEMO_MARKUP_MAX_NAME 48 /* license and attack names, NUL included */

/* Inline styles, one byte per character of a block's text. */
enum {
  DEMO_STYLE_EM = 1,
  DEMO_STYLE_STRONG = 2,
  DEMO_STYLE_CODE = 4,
};

/* Stands for &nbsp; inside decoded text: a space lines never break at. */
#define DEMO_NBSP '\x01'

typedef enum {
  DEMO_BLOCK_HEADING,   /* level 1..3, text */
  DEMO_BLOCK_PARAGRAPH, /* text; '\n' is a forced break (<br>) */
  DEMO_BLOCK_ITEM,      /* level = list depth, number (0: bullet), text */
  DEMO_BLOCK_PRE,       /* text verbatim */
  DEMO_BLOCK_TABLE,     /* rows */
  DEMO_BLOCK_RULE,
  DEMO_BLOCK_LICENSE, /* name; text filled in by the renderer */
  DEMO_BLOCK_ESCAPE,  /* name */
} demo_block_kind;

typedef struct {
  demo_block_kind kind;
  int line; /* where the block starts in the page, from 1 */
  int level;
  int number;
  GString *text;     /* decoded, ASCII only */
  GByteArray *style; /* one DEMO_STYLE_* mask per byte of text */
  GPtrArray *rows;   /* TABLE: each row a GPtrArray of cell strings */
  char name[DEMO_MARKUP_MAX_NAME];
} demo_block;

typedef struct {
  GString *title;
  GPtrArray *blocks; /* demo_block *, in page order */
} demo_document;

/* Parses len bytes of page text (need not be NUL-terminated). page_name is
 * used in error messages only. Returns NULL with *error set (domain
 * G_MARKUP_ERROR, code G_MARKUP_ERROR_INVALID_CONTENT) when a limit is
 * exceeded; the caller frees the result with demo_document_free. */
demo_document *demo_markup_parse(const char *page_name, const char *data,
                                 size_t len, GError **error);

void demo_document_free(demo_document *doc);

/* Number of blocks of kind, and the n-th one (from 0) or NULL. */
size_t demo_document_count(const demo_document *doc, demo_block_kind kind);
demo_block *demo_document_nth(const demo_document *doc, demo_block_kind kind,
                              size_t n);

#endif /* SBX_EXAMPLES_RENDERER_MARKUP_H_ */
