/* Named permission sets ([broker] include=fonts, docs/policies.md) on a
 * real library: a worker under the built-in renderer policy lays out and
 * draws text with pango and cairo, fontconfig finding the system's fonts
 * through the broker. With include=fonts and no other rule it knows the
 * fonts and draws every glyph; the control, the same profile without the
 * set, finds no font at all (and the broker's audit log says what was
 * refused). */
#include <check.h>
#include <fcntl.h>
#include <fontconfig/fontconfig.h>
#include <pango/pangocairo.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>

#include "sandbox/tests/api/api_test_util.h"
#include "sbx/sbx.h"

static api_dirs dirs;

typedef struct {
  int fonts;          /* fonts fontconfig lists */
  int unknown_glyphs; /* glyphs pango had no font for */
  int inked;          /* pixels the text covered */
} render_report;

/* Draws a line of text into an image in memory and reports on fd 3. */
static int entry_render(const sbx_worker_args *args) {
  render_report r = {0};
  FcPattern *pat = FcPatternCreate();
  FcObjectSet *os = FcObjectSetBuild(FC_FAMILY, NULL);
  FcFontSet *set = FcFontList(NULL, pat, os);
  r.fonts = set ? set->nfont : -1;
  cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_A8, 320, 64);
  cairo_t *cr = cairo_create(s);
  PangoLayout *layout = pango_cairo_create_layout(cr);
  pango_layout_set_text(layout, "Sandboxed text, drawn", -1);
  PangoFontDescription *d = pango_font_description_from_string("Sans 20");
  pango_layout_set_font_description(layout, d);
  pango_cairo_show_layout(cr, layout);
  cairo_surface_flush(s);
  r.unknown_glyphs = pango_layout_get_unknown_glyphs_count(layout);
  const unsigned char *px = cairo_image_surface_get_data(s);
  int stride = cairo_image_surface_get_stride(s);
  for (int y = 0; y < 64; y++)
    for (int x = 0; x < 320; x++)
      r.inked += px[y * stride + x] != 0;
  return write(3, &r, sizeof r) == (ssize_t)sizeof r ? 0 : 90;
}

static char *write_profile(const char *include) {
  g_autofree char *text = g_strdup_printf(
      "[profile]\n"
      "seccomp=renderer.policy\n"
      "[broker]\n"
      "%s%s%s"
      "[worker]\n"
      "status=false\n",
      include ? "include=" : "", include ? include : "", include ? "\n" : "");
  char *path = g_build_filename(dirs.outside, "text.profile", NULL);
  ck_assert(g_file_set_contents(path, text, -1, NULL));
  return path;
}

static render_report render_with(const char *profile) {
  sbx_process_type t = SBX_PROCESS_TYPE_INIT(.name = "text", .profile = profile,
                                             .entry = entry_render);
  sbx_sandbox_config config =
      SBX_SANDBOX_CONFIG_INIT(.types = &t, .n_types = 1,
                              .audit_log = dirs.audit_log);
  sbx_sandbox *s = NULL;
  GError *error = NULL;
  if (!sbx_sandbox_start(&config, &s, &error))
    ck_abort_msg("start: %s", error->message);
  int out[2];
  ck_assert_int_eq(pipe(out), 0);
  /* fontconfig complains on stderr when it finds no font: not here. */
  int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
  ck_assert_int_ge(devnull, 0);
  int fds[] = {0, 1, devnull, out[1]};
  sbx_spawn_config spawn =
      SBX_SPAWN_CONFIG_INIT(.process_type = "text", .fds = fds, .n_fds = 4);
  pid_t pid = -1;
  if (!sbx_sandbox_spawn(s, &spawn, &pid, &error))
    ck_abort_msg("spawn: %s", error->message);
  close(out[1]);
  close(devnull);
  render_report r;
  api_read_all(out[0], &r, sizeof r);
  close(out[0]);
  sbx_worker_exit exit = SBX_WORKER_EXIT_INIT();
  if (!sbx_sandbox_wait(s, pid, 30000, &exit, &error))
    ck_abort_msg("wait: %s", error->message);
  ck_assert_msg(exit.reason == SBX_EXIT_NORMAL && exit.exit_code == 0, "%s",
                exit.detail);
  sbx_sandbox_stop(s);
  return r;
}

static void setup(void) {
  api_dirs_make(&dirs);
}

static void teardown(void) {
  api_dirs_remove(&dirs);
}

START_TEST(include_fonts_lets_pango_draw_text_with_no_other_rule) {
  g_autofree char *fonts = write_profile("fonts");
  render_report r = render_with(fonts);
  ck_assert_int_gt(r.fonts, 0);
  ck_assert_int_eq(r.unknown_glyphs, 0);
  ck_assert_int_gt(r.inked, 100);
}
END_TEST

START_TEST(without_the_set_fontconfig_finds_no_font) {
  g_autofree char *bare = write_profile(NULL);
  render_report r = render_with(bare);
  ck_assert_int_eq(r.fonts, 0);
  ck_assert_int_gt(r.unknown_glyphs, 0);
  /* The refusals are in the audit log: the broker saw fontconfig ask. */
  g_autofree char *log = NULL;
  ck_assert(g_file_get_contents(dirs.audit_log, &log, NULL, NULL));
  ck_assert_msg(strstr(log, "/etc/fonts/"), "%s", log);
}
END_TEST

START_TEST(every_set_loads_and_an_unknown_one_is_named) {
  static const char *const sets[] = {"fonts", "locale", "certificates",
                                     "random"};
  for (size_t i = 0; i < G_N_ELEMENTS(sets); i++) {
    g_autofree char *p = write_profile(sets[i]);
    sbx_process_type t = SBX_PROCESS_TYPE_INIT(.name = "text", .profile = p,
                                               .entry = entry_render);
    sbx_sandbox_config config =
        SBX_SANDBOX_CONFIG_INIT(.types = &t, .n_types = 1,
                                .audit_log = dirs.audit_log);
    sbx_sandbox *s = NULL;
    GError *error = NULL;
    if (!sbx_sandbox_start(&config, &s, &error))
      ck_abort_msg("%s: %s", sets[i], error->message);
    sbx_sandbox_stop(s);
  }
  g_autofree char *bad = write_profile("fonts;emoji");
  sbx_process_type t = SBX_PROCESS_TYPE_INIT(.name = "text", .profile = bad,
                                             .entry = entry_render);
  sbx_sandbox_config config =
      SBX_SANDBOX_CONFIG_INIT(.types = &t, .n_types = 1,
                              .audit_log = dirs.audit_log);
  sbx_sandbox *s = NULL;
  GError *error = NULL;
  ck_assert(!sbx_sandbox_start(&config, &s, &error));
  api_assert_error(error, SBX_ERROR, SBX_ERROR_INVALID);
  ck_assert_msg(strstr(error->message, "[broker] include") &&
                    strstr(error->message, "no permission set \"emoji\""),
                "%s", error->message);
  g_error_free(error);
}
END_TEST

static Suite *sets_suite(void) {
  Suite *s = suite_create("permission_sets");
  TCase *tc = tcase_create("sets");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, include_fonts_lets_pango_draw_text_with_no_other_rule);
  tcase_add_test(tc, without_the_set_fontconfig_finds_no_font);
  tcase_add_test(tc, every_set_loads_and_an_unknown_one_is_named);
  suite_add_tcase(s, tc);
  return s;
}

int main(int argc, char **argv) {
  sbx_main_hook(argc, argv);
  return api_run_suite(sets_suite());
}
