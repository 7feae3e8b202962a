/* The page parser (see markup.h): one pass over the bytes, a stack of open
 * inline and list elements, and the block being filled. Every loop is
 * bounded by the input length; every container by a DEMO_MARKUP_MAX_*
 * limit, checked before it grows.
 */
#include "examples/renderer/markup.h"

#include <stdbool.h>
#include <string.h>

typedef struct {
  char name[16];
  int counter; /* ol: the next item's number */
} open_element;

typedef struct {
  const char *page;
  const char *p, *end;
  int line;
  demo_document *doc;
  demo_block *block; /* receives text; NULL between blocks */
  demo_block *table; /* open table, or NULL */
  GString *cell;     /* open cell of the table, or NULL */
  bool in_title;
  bool in_pre;
  open_element stack[DEMO_MARKUP_MAX_DEPTH];
  int depth;
  size_t text_bytes;
  GError **error;
} parser;

static gboolean fail(parser *ps, const char *what) {
  g_set_error(ps->error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
              "%s:%d: %s", ps->page, ps->line, what);
  return FALSE;
}

static void block_free(gpointer data) {
  demo_block *b = data;
  if (b->text)
    g_string_free(b->text, TRUE);
  if (b->style)
    g_byte_array_unref(b->style);
  if (b->rows)
    g_ptr_array_unref(b->rows);
  g_free(b);
}

static void row_free(gpointer data) {
  g_ptr_array_unref(data);
}

static void cell_free(gpointer data) {
  g_string_free(data, TRUE);
}

static demo_block *new_block(parser *ps, demo_block_kind kind) {
  if (ps->doc->blocks->len >= DEMO_MARKUP_MAX_BLOCKS) {
    fail(ps, "more than " G_STRINGIFY(DEMO_MARKUP_MAX_BLOCKS) " blocks");
    return NULL;
  }
  demo_block *b = g_new0(demo_block, 1);
  b->kind = kind;
  b->line = ps->line;
  b->text = g_string_new(NULL);
  b->style = g_byte_array_new();
  if (kind == DEMO_BLOCK_TABLE)
    b->rows = g_ptr_array_new_with_free_func(row_free);
  g_ptr_array_add(ps->doc->blocks, b);
  return b;
}

/* A block that is still empty when closed leaves no trace. */
static void close_block(parser *ps) {
  demo_block *b = ps->block;
  ps->block = NULL;
  ps->in_pre = false;
  if (!b || b->kind == DEMO_BLOCK_PRE)
    return;
  while (b->text->len && (b->text->str[b->text->len - 1] == ' ' ||
                          b->text->str[b->text->len - 1] == '\n')) {
    g_string_truncate(b->text, b->text->len - 1);
    g_byte_array_set_size(b->style, b->text->len);
  }
  if (b->text->len == 0 && b->kind != DEMO_BLOCK_ITEM) {
    g_ptr_array_remove(ps->doc->blocks, b);
  }
}

static void close_table(parser *ps) {
  ps->table = NULL;
  ps->cell = NULL;
}

static unsigned current_style(const parser *ps) {
  unsigned s = 0;
  for (int i = 0; i < ps->depth; i++) {
    const char *n = ps->stack[i].name;
    if (!strcmp(n, "em") || !strcmp(n, "i"))
      s |= DEMO_STYLE_EM;
    else if (!strcmp(n, "strong") || !strcmp(n, "b"))
      s |= DEMO_STYLE_STRONG;
    else if (!strcmp(n, "code") || !strcmp(n, "tt"))
      s |= DEMO_STYLE_CODE;
  }
  return s;
}

static int list_depth(parser *ps, open_element **innermost) {
  int n = 0;
  *innermost = NULL;
  for (int i = 0; i < ps->depth; i++) {
    if (!strcmp(ps->stack[i].name, "ul") || !strcmp(ps->stack[i].name, "ol")) {
      n++;
      *innermost = &ps->stack[i];
    }
  }
  return n;
}

/* One decoded character of text, wherever text currently goes. Outside
 * <pre>, runs of white space collapse to one space. */
static gboolean add_char(parser *ps, char c) {
  if (ps->text_bytes >= DEMO_MARKUP_MAX_TEXT)
    return fail(
        ps, "more than " G_STRINGIFY(DEMO_MARKUP_MAX_TEXT) " bytes of text");
  bool space = c == ' ' || c == '\n' || c == '\t';
  if (ps->in_title) {
    if (space && (ps->doc->title->len == 0 ||
                  ps->doc->title->str[ps->doc->title->len - 1] == ' '))
      return TRUE;
    if (ps->doc->title->len < 200)
      g_string_append_c(ps->doc->title, space ? ' ' : c);
    ps->text_bytes++;
    return TRUE;
  }
  if (ps->cell) {
    if (space &&
        (ps->cell->len == 0 || ps->cell->str[ps->cell->len - 1] == ' '))
      return TRUE;
    if (ps->cell->len < 1024)
      g_string_append_c(ps->cell, space ? ' ' : c);
    ps->text_bytes++;
    return TRUE;
  }
  if (ps->table)
    return TRUE; /* text between cells */
  if (!ps->block) {
    if (space)
      return TRUE;
    ps->block = new_block(ps, DEMO_BLOCK_PARAGRAPH);
    if (!ps->block)
      return FALSE;
  }
  GString *t = ps->block->text;
  if (!ps->in_pre && space) {
    if (t->len == 0 || t->str[t->len - 1] == ' ' || t->str[t->len - 1] == '\n')
      return TRUE;
    c = ' ';
  }
  if (ps->in_pre && c == '\t') {
    /* Tabs expand to the next multiple of 8 so the layout sees columns. */
    size_t col = 0;
    const char *nl = memrchr(t->str, '\n', t->len);
    col = nl ? t->len - (size_t)(nl - t->str) - 1 : t->len;
    size_t n = 8 - col % 8;
    for (size_t i = 0; i < n; i++)
      if (!add_char(ps, ' '))
        return FALSE;
    return TRUE;
  }
  guint8 style = (guint8)current_style(ps);
  g_string_append_c(t, c);
  g_byte_array_append(ps->block->style, &style, 1);
  ps->text_bytes++;
  return TRUE;
}

static gboolean add_text(parser *ps, const char *s) {
  for (; *s; s++)
    if (!add_char(ps, *s))
      return FALSE;
  return TRUE;
}

/* Entities; p points after '&'. On success *p is past the ';'. A broken
 * or unknown entity is kept as a literal '&'. */
static gboolean decode_entity(parser *ps) {
  static const struct {
    const char *name;
    const char *text;
  } named[] = {
      {"amp", "&"},    {"lt", "<"},       {"gt", ">"},
      {"quot", "\""},  {"apos", "'"},     {"copy", "(c)"},
      {"mdash", "--"}, {"hellip", "..."}, {"nbsp", "\x01"},
  };
  const char *q = ps->p;
  char buf[12];
  size_t n = 0;
  while (q < ps->end && *q != ';' && n < sizeof buf - 1 &&
         (g_ascii_isalnum(*q) || *q == '#'))
    buf[n++] = *q++;
  buf[n] = '\0';
  if (q >= ps->end || *q != ';' || n == 0)
    return add_char(ps, '&');
  if (buf[0] == '#') {
    const char *digits = buf + 1;
    int base = 10;
    if (*digits == 'x' || *digits == 'X') {
      base = 16;
      digits++;
    }
    char *stop = NULL;
    if (!*digits)
      return add_char(ps, '&');
    guint64 v = g_ascii_strtoull(digits, &stop, base);
    if (*stop)
      return add_char(ps, '&');
    ps->p = q + 1;
    if (v == 0xa0)
      return add_char(ps, DEMO_NBSP);
    if (v == '\n' || v == '\t')
      return add_char(ps, (char)v);
    return add_char(ps, v >= 0x20 && v < 0x7f ? (char)v : '?');
  }
  for (size_t i = 0; i < G_N_ELEMENTS(named); i++) {
    if (!strcmp(buf, named[i].name)) {
      ps->p = q + 1;
      return add_text(ps, named[i].text);
    }
  }
  return add_char(ps, '&');
}

typedef struct {
  char name[16];
  bool closing;
  char attr_name[16];
  char attr_value[DEMO_MARKUP_MAX_NAME];
  bool has_attr;
} tag;

/* Reads one tag starting at '<' (ps->p points after it). Returns FALSE
 * (without error) when this is not a tag: no name, or no closing '>'
 * before the end of the page; the caller then keeps '<' as text. Only the
 * first attribute named "name" or "attack" is kept. */
static bool read_tag(parser *ps, tag *t, const char **after) {
  memset(t, 0, sizeof *t);
  const char *q = ps->p;
  if (q < ps->end && *q == '/') {
    t->closing = true;
    q++;
  }
  size_t n = 0;
  if (q >= ps->end || !g_ascii_isalpha(*q))
    return false;
  while (q < ps->end && (g_ascii_isalnum(*q) || *q == '-')) {
    if (n < sizeof t->name - 1)
      t->name[n++] = g_ascii_tolower(*q);
    q++;
  }
  while (q < ps->end && *q != '>') {
    if (g_ascii_isspace(*q) || *q == '/') {
      q++;
      continue;
    }
    char an[16];
    size_t an_len = 0;
    while (q < ps->end && *q != '=' && *q != '>' && !g_ascii_isspace(*q)) {
      if (an_len < sizeof an - 1)
        an[an_len++] = g_ascii_tolower(*q);
      q++;
    }
    an[an_len] = '\0';
    char value[DEMO_MARKUP_MAX_NAME];
    size_t v_len = 0;
    if (q < ps->end && *q == '=') {
      q++;
      char quote = 0;
      if (q < ps->end && (*q == '"' || *q == '\'')) {
        quote = *q++;
      }
      while (q < ps->end &&
             (quote ? *q != quote : (*q != '>' && !g_ascii_isspace(*q)))) {
        if (v_len < sizeof value - 1 && *q >= 0x20 && *q < 0x7f)
          value[v_len++] = *q;
        q++;
      }
      if (quote && q < ps->end)
        q++;
    }
    value[v_len] = '\0';
    if (!t->has_attr && (!strcmp(an, "name") || !strcmp(an, "attack"))) {
      t->has_attr = true;
      g_strlcpy(t->attr_name, an, sizeof t->attr_name);
      g_strlcpy(t->attr_value, value, sizeof t->attr_value);
    }
  }
  if (q >= ps->end)
    return false;
  *after = q + 1;
  return true;
}

static bool is(const tag *t, const char *name) {
  return !strcmp(t->name, name);
}

static bool is_inline_container(const tag *t) {
  static const char *const names[] = {
      "em",  "i",  "strong", "b",    "code", "tt",   "span",   "a",
      "div", "ul", "ol",     "body", "html", "head", "section"};
  for (size_t i = 0; i < G_N_ELEMENTS(names); i++)
    if (is(t, names[i]))
      return true;
  return false;
}

/* Skips everything up to and including "</name>" (script, style). */
static void skip_raw(parser *ps, const char *name) {
  size_t n = strlen(name);
  while (ps->p < ps->end) {
    if (*ps->p == '\n')
      ps->line++;
    if (*ps->p == '<' && ps->end - ps->p >= (ptrdiff_t)(n + 3) &&
        ps->p[1] == '/' && !g_ascii_strncasecmp(ps->p + 2, name, n) &&
        ps->p[n + 2] == '>') {
      ps->p += n + 3;
      return;
    }
    ps->p++;
  }
}

static gboolean start_tag(parser *ps, const tag *t) {
  if (is(t, "script") || is(t, "style")) {
    skip_raw(ps, t->name);
    return TRUE;
  }
  if (is(t, "title")) {
    ps->in_title = true;
    return TRUE;
  }
  if (t->name[0] == 'h' && t->name[1] >= '1' && t->name[1] <= '6' &&
      !t->name[2]) {
    close_block(ps);
    close_table(ps);
    if (!(ps->block = new_block(ps, DEMO_BLOCK_HEADING)))
      return FALSE;
    ps->block->level = MIN(t->name[1] - '0', 3);
    return TRUE;
  }
  if (is(t, "p")) {
    close_block(ps);
    return TRUE; /* the paragraph starts with its first character */
  }
  if (is(t, "br")) {
    if (ps->block && !ps->in_pre) {
      guint8 s = 0;
      g_string_append_c(ps->block->text, '\n');
      g_byte_array_append(ps->block->style, &s, 1);
    } else if (ps->cell) {
      return add_char(ps, ' ');
    }
    return TRUE;
  }
  if (is(t, "hr")) {
    close_block(ps);
    close_table(ps);
    return new_block(ps, DEMO_BLOCK_RULE) != NULL;
  }
  if (is(t, "li")) {
    close_block(ps);
    close_table(ps);
    open_element *list;
    int depth = list_depth(ps, &list);
    if (!(ps->block = new_block(ps, DEMO_BLOCK_ITEM)))
      return FALSE;
    ps->block->level = MAX(depth, 1);
    if (list && !strcmp(list->name, "ol"))
      ps->block->number = list->counter++;
    return TRUE;
  }
  if (is(t, "pre")) {
    close_block(ps);
    close_table(ps);
    if (!(ps->block = new_block(ps, DEMO_BLOCK_PRE)))
      return FALSE;
    ps->in_pre = true;
    /* A newline right after <pre> is not content, as in HTML. */
    if (ps->p < ps->end && *ps->p == '\n') {
      ps->p++;
      ps->line++;
    }
    return TRUE;
  }
  if (is(t, "table")) {
    if (ps->table)
      return TRUE; /* no nested tables: its cells join the outer table */
    close_block(ps);
    if (!(ps->table = new_block(ps, DEMO_BLOCK_TABLE)))
      return FALSE;
    return TRUE;
  }
  if (is(t, "tr") && ps->table) {
    if (ps->table->rows->len >= DEMO_MARKUP_MAX_ROWS)
      return fail(ps, "table with more than " G_STRINGIFY(
                          DEMO_MARKUP_MAX_ROWS) " rows");
    g_ptr_array_add(ps->table->rows, g_ptr_array_new_with_free_func(cell_free));
    ps->cell = NULL;
    return TRUE;
  }
  if ((is(t, "td") || is(t, "th")) && ps->table) {
    if (ps->table->rows->len == 0) {
      g_ptr_array_add(ps->table->rows,
                      g_ptr_array_new_with_free_func(cell_free));
    }
    GPtrArray *row =
        g_ptr_array_index(ps->table->rows, ps->table->rows->len - 1);
    if (row->len >= DEMO_MARKUP_MAX_COLS)
      return fail(ps, "table row with more than " G_STRINGIFY(
                          DEMO_MARKUP_MAX_COLS) " cells");
    ps->cell = g_string_new(NULL);
    g_ptr_array_add(row, ps->cell);
    return TRUE;
  }
  if (is(t, "license") || is(t, "x-escape")) {
    bool license = is(t, "license");
    if (!t->has_attr || strcmp(t->attr_name, license ? "name" : "attack") ||
        !t->attr_value[0])
      return TRUE; /* nothing named: nothing to do */
    close_block(ps);
    close_table(ps);
    demo_block *b =
        new_block(ps, license ? DEMO_BLOCK_LICENSE : DEMO_BLOCK_ESCAPE);
    if (!b)
      return FALSE;
    g_strlcpy(b->name, t->attr_value, sizeof b->name);
    return TRUE;
  }
  if (is_inline_container(t)) {
    if (ps->depth >= DEMO_MARKUP_MAX_DEPTH)
      return fail(ps, "elements nested deeper than " G_STRINGIFY(
                          DEMO_MARKUP_MAX_DEPTH));
    open_element *e = &ps->stack[ps->depth++];
    memset(e, 0, sizeof *e);
    g_strlcpy(e->name, t->name, sizeof e->name);
    e->counter = 1;
    if (is(t, "ul") || is(t, "ol") || is(t, "div") || is(t, "section"))
      close_block(ps);
    return TRUE;
  }
  return TRUE; /* unknown element: its text is kept */
}

static void end_tag(parser *ps, const tag *t) {
  if (is(t, "title")) {
    ps->in_title = false;
    return;
  }
  /* A block's end tag closes only a block of its own kind: a stray </li>
   * does not cut a paragraph in two. */
  bool heading = t->name[0] == 'h' && t->name[1] >= '1' && t->name[1] <= '6' &&
                 !t->name[2];
  if (heading || is(t, "p") || is(t, "li") || is(t, "pre")) {
    demo_block_kind kind = heading       ? DEMO_BLOCK_HEADING
                           : is(t, "p")  ? DEMO_BLOCK_PARAGRAPH
                           : is(t, "li") ? DEMO_BLOCK_ITEM
                                         : DEMO_BLOCK_PRE;
    if (ps->block && ps->block->kind == kind)
      close_block(ps);
    return;
  }
  if (is(t, "table")) {
    close_table(ps);
    return;
  }
  if (is(t, "td") || is(t, "th")) {
    ps->cell = NULL;
    return;
  }
  for (int i = ps->depth - 1; i >= 0; i--) {
    if (!strcmp(ps->stack[i].name, t->name)) {
      ps->depth = i; /* closes everything opened inside it, too */
      if (is(t, "ul") || is(t, "ol") || is(t, "div") || is(t, "section"))
        close_block(ps);
      return;
    }
  }
  /* A stray end tag closes nothing. */
}

static gboolean parse(parser *ps) {
  while (ps->p < ps->end) {
    unsigned char c = (unsigned char)*ps->p;
    if (c == '<') {
      ps->p++;
      if (ps->end - ps->p >= 3 && !memcmp(ps->p, "!--", 3)) {
        const char *close = g_strstr_len(ps->p + 3, ps->end - ps->p - 3, "-->");
        const char *stop = close ? close + 3 : ps->end;
        for (const char *q = ps->p; q < stop; q++)
          ps->line += *q == '\n';
        ps->p = stop;
        continue;
      }
      if (ps->p < ps->end && (*ps->p == '!' || *ps->p == '?')) {
        const char *gt = memchr(ps->p, '>', ps->end - ps->p);
        ps->p = gt ? gt + 1 : ps->end;
        continue;
      }
      tag t;
      const char *after;
      if (!read_tag(ps, &t, &after)) {
        if (!add_char(ps, '<'))
          return FALSE;
        continue;
      }
      for (const char *q = ps->p; q < after; q++)
        ps->line += *q == '\n';
      ps->p = after;
      if (t.closing)
        end_tag(ps, &t);
      else if (!start_tag(ps, &t))
        return FALSE;
      continue;
    }
    ps->p++;
    if (c == '&') {
      if (!decode_entity(ps))
        return FALSE;
      continue;
    }
    if (c == '\n')
      ps->line++;
    if (c == '\r')
      continue;
    if (c >= 0x80) {
      /* One '?' per UTF-8 sequence: continuation bytes are skipped. */
      while (ps->p < ps->end && ((unsigned char)*ps->p & 0xc0) == 0x80)
        ps->p++;
      c = '?';
    } else if (c < 0x20 && c != '\n' && c != '\t') {
      continue;
    } else if (c == 0x7f) {
      continue;
    }
    if (!add_char(ps, (char)c))
      return FALSE;
  }
  close_block(ps);
  return TRUE;
}

void demo_document_free(demo_document *doc) {
  if (!doc)
    return;
  g_string_free(doc->title, TRUE);
  g_ptr_array_unref(doc->blocks);
  g_free(doc);
}

demo_document *demo_markup_parse(const char *page_name, const char *data,
                                 size_t len, GError **error) {
  if (len > DEMO_MARKUP_MAX_BYTES) {
    g_set_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                "%s: %zu bytes, more than the limit of %d", page_name, len,
                DEMO_MARKUP_MAX_BYTES);
    return NULL;
  }
  demo_document *doc = g_new0(demo_document, 1);
  doc->title = g_string_new(NULL);
  doc->blocks = g_ptr_array_new_with_free_func(block_free);
  parser ps = {.page = page_name,
               .p = data,
               .end = data + len,
               .line = 1,
               .doc = doc,
               .error = error};
  if (!parse(&ps)) {
    demo_document_free(doc);
    return NULL;
  }
  /* Tables without a single cell say nothing. */
  for (guint i = doc->blocks->len; i-- > 0;) {
    demo_block *b = g_ptr_array_index(doc->blocks, i);
    if (b->kind != DEMO_BLOCK_TABLE)
      continue;
    bool any = false;
    for (guint r = 0; r < b->rows->len && !any; r++)
      any = ((GPtrArray *)g_ptr_array_index(b->rows, r))->len > 0;
    if (!any)
      g_ptr_array_remove_index(doc->blocks, i);
  }
  return doc;
}

size_t demo_document_count(const demo_document *doc, demo_block_kind kind) {
  size_t n = 0;
  for (guint i = 0; i < doc->blocks->len; i++)
    n += ((demo_block *)g_ptr_array_index(doc->blocks, i))->kind == kind;
  return n;
}

demo_block *demo_document_nth(const demo_document *doc, demo_block_kind kind,
                              size_t n) {
  for (guint i = 0; i < doc->blocks->len; i++) {
    demo_block *b = g_ptr_array_index(doc->blocks, i);
    if (b->kind == kind && n-- == 0)
      return b;
  }
  return NULL;
}
