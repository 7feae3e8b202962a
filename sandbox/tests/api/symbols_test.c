/* libsbx exports exactly its public API: the functions sbx/sbx.h declares,
 * each marked SBX_EXPORT, are the dynamic symbols libsbx.so.0 defines; no
 * more (an internal function a host could start to depend on) and no
 * fewer (a declared function a host could not link). The header is read
 * as text and the library's ELF dynamic symbol table as bytes, so neither
 * side is taken on trust from the other. */
#include <check.h>
#include <elf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "sandbox/tests/api/api_test_util.h"

static const char *build_dir(void) {
  const char *env = getenv("SBX_BUILD_DIR");
  return env && *env ? env : SBX_TEST_BUILD_DIR;
}

/* The header without comments and preprocessor lines (a macro may name a
 * function it does not declare, as SBX_ERROR does). g_free. */
static char *header_declarations(void) {
  g_autofree char *path =
      g_build_filename(SBX_TEST_SOURCE_ROOT, "sandbox/include/sbx/sbx.h", NULL);
  g_autofree char *text = NULL;
  ck_assert_msg(g_file_get_contents(path, &text, NULL, NULL), "%s", path);
  GString *out = g_string_new(NULL);
  bool line_start = true, directive = false;
  for (const char *p = text; *p; p++) {
    if (p[0] == '/' && p[1] == '*') {
      const char *end = strstr(p + 2, "*/");
      ck_assert_msg(end, "unterminated comment in sbx.h");
      p = end + 1;
      g_string_append_c(out, ' ');
      continue;
    }
    if (p[0] == '/' && p[1] == '/') {
      while (p[1] && p[1] != '\n')
        p++;
      continue;
    }
    if (line_start && *p == '#')
      directive = true;
    if (*p == '\n') {
      bool continued = directive && p > text && p[-1] == '\\';
      directive = directive && continued;
      line_start = !continued;
      g_string_append_c(out, '\n');
      continue;
    }
    if (*p != ' ' && *p != '\t')
      line_start = false;
    if (!directive)
      g_string_append_c(out, *p);
  }
  return g_string_free(out, FALSE);
}

/* Every match of pattern's first group in text, as a set. */
static GHashTable *matches(const char *text, const char *pattern) {
  GHashTable *set =
      g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GRegex) re = g_regex_new(pattern, G_REGEX_MULTILINE, 0, NULL);
  ck_assert_ptr_nonnull(re);
  GMatchInfo *info = NULL;
  g_regex_match(re, text, 0, &info);
  while (g_match_info_matches(info)) {
    g_hash_table_add(set, g_match_info_fetch(info, 1));
    g_match_info_next(info, NULL);
  }
  g_match_info_free(info);
  return set;
}

/* The names of the functions sbx.h declares with SBX_EXPORT; fails the
 * test if any sbx_ function is declared without it. */
static GHashTable *declared_functions(void) {
  g_autofree char *text = header_declarations();
  GHashTable *exported =
      matches(text, "\\bSBX_EXPORT\\b[^;{}()]*?\\b(sbx_[a-z0-9_]+)\\s*\\(");
  g_autoptr(GHashTable) named = matches(text, "\\b(sbx_[a-z0-9_]+)\\s*\\(");
  GHashTableIter it;
  gpointer name;
  g_hash_table_iter_init(&it, named);
  while (g_hash_table_iter_next(&it, &name, NULL))
    ck_assert_msg(g_hash_table_contains(exported, name),
                  "sbx.h declares %s without SBX_EXPORT", (char *)name);
  return exported;
}

/* The names of the symbols the shared object at path defines in its
 * dynamic symbol table (what a program linking it can reach). */
static GHashTable *defined_dynamic_symbols(const char *path) {
  g_autofree char *bytes = NULL;
  gsize len = 0;
  ck_assert_msg(g_file_get_contents(path, &bytes, &len, NULL), "%s", path);
  ck_assert_uint_ge(len, sizeof(Elf64_Ehdr));
  const Elf64_Ehdr *eh = (const Elf64_Ehdr *)bytes;
  ck_assert_msg(memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0 &&
                    eh->e_ident[EI_CLASS] == ELFCLASS64 &&
                    eh->e_shentsize == sizeof(Elf64_Shdr),
                "%s is not a 64-bit ELF object", path);
  ck_assert_uint_le(eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr),
                    len);
  const Elf64_Shdr *sh = (const Elf64_Shdr *)(bytes + eh->e_shoff);
  GHashTable *set =
      g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  bool found = false;
  for (unsigned i = 0; i < eh->e_shnum; i++) {
    if (sh[i].sh_type != SHT_DYNSYM)
      continue;
    found = true;
    ck_assert_uint_lt(sh[i].sh_link, eh->e_shnum);
    const Elf64_Shdr *strtab = &sh[sh[i].sh_link];
    ck_assert_uint_le(sh[i].sh_offset + sh[i].sh_size, len);
    ck_assert_uint_le(strtab->sh_offset + strtab->sh_size, len);
    const Elf64_Sym *syms = (const Elf64_Sym *)(bytes + sh[i].sh_offset);
    size_t n = sh[i].sh_size / sizeof(Elf64_Sym);
    for (size_t j = 0; j < n; j++) {
      if (syms[j].st_shndx == SHN_UNDEF ||
          ELF64_ST_BIND(syms[j].st_info) == STB_LOCAL)
        continue;
      ck_assert_uint_lt(syms[j].st_name, strtab->sh_size);
      const char *name = bytes + strtab->sh_offset + syms[j].st_name;
      ck_assert_ptr_nonnull(
          memchr(name, '\0', strtab->sh_size - syms[j].st_name));
      g_hash_table_add(set, g_strdup(name));
    }
  }
  ck_assert_msg(found, "%s has no dynamic symbol table", path);
  return set;
}

static gint by_name(gconstpointer a, gconstpointer b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in a but not in b, sorted, comma-separated, the first 16 of
 * them and how many in all (Check's messages are short). g_free. */
static char *missing_from(GHashTable *a, GHashTable *b) {
  g_autoptr(GPtrArray) names = g_ptr_array_new();
  GHashTableIter it;
  gpointer name;
  g_hash_table_iter_init(&it, a);
  while (g_hash_table_iter_next(&it, &name, NULL))
    if (!g_hash_table_contains(b, name))
      g_ptr_array_add(names, name);
  g_ptr_array_sort(names, by_name);
  GString *out = g_string_new(NULL);
  for (guint i = 0; i < names->len && i < 16; i++)
    g_string_append_printf(out, "%s%s", i ? ", " : "",
                           (char *)g_ptr_array_index(names, i));
  if (names->len > 16)
    g_string_append_printf(out, ", ... (%u in all)", names->len);
  return g_string_free(out, FALSE);
}

START_TEST(the_header_declares_every_public_function_with_the_export_macro) {
  g_autoptr(GHashTable) declared = declared_functions();
  /* Control: the parser sees the declarations at all. */
  ck_assert(g_hash_table_contains(declared, "sbx_sandbox_start"));
  ck_assert(g_hash_table_contains(declared, "sbx_error_quark"));
  ck_assert(g_hash_table_contains(declared, "sbx_builtin_text"));
  ck_assert(!g_hash_table_contains(declared, "sbx_worker_entry"));
}
END_TEST

START_TEST(libsbx_exports_exactly_the_functions_the_header_declares) {
  g_autoptr(GHashTable) declared = declared_functions();
  g_autofree char *lib = g_build_filename(build_dir(), "libsbx.so.0", NULL);
  g_autoptr(GHashTable) exported = defined_dynamic_symbols(lib);
  g_autofree char *extra = missing_from(exported, declared);
  g_autofree char *absent = missing_from(declared, exported);
  ck_assert_msg(!*extra, "%s exports what sbx.h does not declare: %s", lib,
                extra);
  ck_assert_msg(!*absent, "%s does not export what sbx.h declares: %s", lib,
                absent);
  ck_assert_uint_eq(g_hash_table_size(exported), g_hash_table_size(declared));
}
END_TEST

static Suite *symbols_suite(void) {
  Suite *s = suite_create("api_symbols");
  TCase *tc = tcase_create("exports");
  tcase_add_test(
      tc, the_header_declares_every_public_function_with_the_export_macro);
  tcase_add_test(tc, libsbx_exports_exactly_the_functions_the_header_declares);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  return api_run_suite(symbols_suite());
}
