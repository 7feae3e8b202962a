/* The renderer worker (see renderer.h). */
#include "examples/renderer/renderer.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "examples/renderer/attacks.h"
#include "examples/renderer/layout.h"
#include "examples/renderer/markup.h"
#include "examples/renderer/protocol.h"
#include "examples/renderer/raster.h"

#define LICENSE_DIR "/usr/share/common-licenses/"
#define LICENSE_MAX_LINES 12

/* libz, loaded at run time through the broker: the host does not link
 * it, so a working dlopen() shows the loader's opens were brokered. The
 * full path spares the broker the loader's search of the binary's own
 * directory (its rpath), which the renderer may not read. */
#define ZLIB_PATH "/usr/lib/x86_64-linux-gnu/libz.so.1"
typedef struct {
  void *handle;
  __typeof__(&crc32) crc32;
  __typeof__(&compress2) compress2;
  __typeof__(&compressBound) compress_bound;
  __typeof__(&uncompress) uncompress;
} zlib_api;

static bool load_zlib(zlib_api *z, char *err, size_t len) {
  z->handle = dlopen(ZLIB_PATH, RTLD_NOW | RTLD_LOCAL);
  if (!z->handle) {
    g_snprintf(err, len, "dlopen " ZLIB_PATH ": %s", dlerror());
    return false;
  }
  z->crc32 = (__typeof__(&crc32))dlsym(z->handle, "crc32");
  z->compress2 = (__typeof__(&compress2))dlsym(z->handle, "compress2");
  z->compress_bound =
      (__typeof__(&compressBound))dlsym(z->handle, "compressBound");
  z->uncompress = (__typeof__(&uncompress))dlsym(z->handle, "uncompress");
  if (!z->crc32 || !z->compress2 || !z->compress_bound || !z->uncompress) {
    g_snprintf(err, len, "libz.so.1 lacks a symbol: %s", dlerror());
    return false;
  }
  return true;
}

/* The first lines of a license the page names. A name is a file name
 * under LICENSE_DIR, never a path: the broker would refuse one anyway,
 * but a renderer should not ask. */
static bool read_license(demo_block *b, uint32_t *bytes, char *err,
                         size_t len) {
  if (strchr(b->name, '/') || b->name[0] == '.') {
    g_snprintf(err, len, "license name \"%s\" is not a file name", b->name);
    return false;
  }
  char path[sizeof LICENSE_DIR + DEMO_MARKUP_MAX_NAME];
  g_snprintf(path, sizeof path, "%s%s", LICENSE_DIR, b->name);
  FILE *f = fopen(path, "re");
  if (!f) {
    g_snprintf(err, len, "%s: %s", path, g_strerror(errno));
    return false;
  }
  char line[256];
  for (int i = 0; i < LICENSE_MAX_LINES && fgets(line, sizeof line, f);) {
    *bytes += (uint32_t)strlen(line);
    for (char *c = line; *c; c++)
      if (*c == '\t')
        *c = ' ';
      else if ((*c < 0x20 && *c != '\n') || *c > 0x7e)
        *c = '?';
    if (b->text->len == 0 && line[strspn(line, " \n")] == '\0')
      continue; /* leading blank lines */
    g_string_append(b->text, line);
    i++;
  }
  fclose(f);
  return true;
}

/* Writes the compressed text to the cache file in home and reads it back;
 * the page counts as rendered only when both agree. */
static bool keep_cache(const zlib_api *z, const demo_request *req,
                       const char *text, size_t text_len, uint32_t crc,
                       demo_result *res) {
  char path[DEMO_PATH_MAX + 96];
  g_snprintf(path, sizeof path, "%s/%.64s.%08x.z", req->home, req->page_name,
             crc);
  uLongf clen = z->compress_bound(text_len);
  Bytef *packed = g_malloc(clen);
  bool ok = false;
  if (z->compress2(packed, &clen, (const Bytef *)text, text_len, 9) != Z_OK) {
    g_snprintf(res->error, sizeof res->error, "compress2 failed");
    goto out;
  }
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0 || !demo_write_all(fd, packed, clen) || fsync(fd) != 0) {
    g_snprintf(res->error, sizeof res->error, "cache %s: %s", path,
               g_strerror(errno));
    if (fd >= 0)
      close(fd);
    goto out;
  }
  close(fd);
  gchar *back = NULL;
  gsize back_len = 0;
  GError *error = NULL;
  if (!g_file_get_contents(path, &back, &back_len, &error)) {
    g_snprintf(res->error, sizeof res->error, "cache: %s", error->message);
    g_error_free(error);
    goto out;
  }
  uLongf plain_len = text_len;
  Bytef *plain = g_malloc(text_len + 1);
  ok =
      z->uncompress(plain, &plain_len, (const Bytef *)back, back_len) == Z_OK &&
      plain_len == text_len && memcmp(plain, text, text_len) == 0;
  if (!ok)
    g_snprintf(res->error, sizeof res->error,
               "cache %s did not read back as written", path);
  res->cache_bytes = (uint32_t)clen;
  g_free(plain);
  g_free(back);
out:
  g_free(packed);
  return ok;
}

/* One message on the worker's channel: the result, then its text, image
 * and status, written piece by piece. */
static void send_result(sbx_channel *ch, demo_result *res, const char *text,
                        const void *image, const char *status) {
  res->magic = DEMO_RESULT_MAGIC;
  uint64_t total =
      sizeof *res + (uint64_t)res->text_len + res->image_len + res->status_len;
  if (!sbx_channel_send_begin(ch, total, NULL, 0, -1, NULL) ||
      !sbx_channel_write(ch, res, sizeof *res, -1, NULL))
    return;
  if (res->text_len && !sbx_channel_write(ch, text, res->text_len, -1, NULL))
    return;
  if (res->image_len && !sbx_channel_write(ch, image, res->image_len, -1, NULL))
    return;
  if (res->status_len)
    sbx_channel_write(ch, status, res->status_len, -1, NULL);
}

static int render(const demo_request *req, demo_document *doc,
                  const sbx_worker_args *args, demo_result *res) {
  for (uint32_t i = 0; i < doc->blocks->len; i++) {
    demo_block *b = g_ptr_array_index(doc->blocks, i);
    if (b->kind == DEMO_BLOCK_ESCAPE && res->n_escapes < DEMO_MAX_ESCAPES)
      g_strlcpy(res->escapes[res->n_escapes++], b->name,
                sizeof res->escapes[0]);
    if (b->kind == DEMO_BLOCK_LICENSE &&
        !read_license(b, &res->license_bytes, res->error, sizeof res->error))
      return 1;
  }
  GError *error = NULL;
  demo_layout *layout = demo_layout_document(doc, (int)req->width, &error);
  if (!layout) {
    g_snprintf(res->error, sizeof res->error, "%s", error->message);
    g_error_free(error);
    return 1;
  }
  size_t text_len = 0, image_len = 0;
  char *text = demo_layout_to_text(layout, &text_len);
  uint8_t *image = demo_raster_png(layout, &image_len, &error);
  res->lines = layout->lines->len;
  demo_layout_free(layout);
  zlib_api z;
  int rc = 1;
  if (!image) {
    g_snprintf(res->error, sizeof res->error, "%s", error->message);
    g_error_free(error);
    goto out;
  }
  if (!load_zlib(&z, res->error, sizeof res->error))
    goto out;
  res->text_crc = (uint32_t)z.crc32(0, (const Bytef *)text, (uInt)text_len);
  res->image_crc = (uint32_t)z.crc32(0, (const Bytef *)image, (uInt)image_len);
  if (!keep_cache(&z, req, text, text_len, res->text_crc, res))
    goto out;
  if (text_len > DEMO_TEXT_MAX || image_len > DEMO_IMAGE_MAX) {
    g_snprintf(res->error, sizeof res->error, "output too large");
    goto out;
  }
  char status[DEMO_STATUS_MAX];
  size_t status_len = 0;
  if (args->status) {
    status_len = sbx_sandbox_status_format(args->status, status, sizeof status);
    status_len = MIN(status_len, sizeof status - 1);
  }
  res->rendered = 1;
  res->text_len = (uint32_t)text_len;
  res->image_len = (uint32_t)image_len;
  res->status_len = (uint32_t)status_len;
  send_result(args->channel, res, text, image, status);
  rc = 0;
out:
  g_free(text);
  g_free(image);
  return rc;
}

static int escape(const demo_request *req, demo_document *doc,
                  const sbx_worker_args *args, demo_result *res) {
  demo_block *b = demo_document_nth(doc, DEMO_BLOCK_ESCAPE, req->escape - 1);
  const demo_attack *a = b ? demo_attack_find(b->name) : NULL;
  if (!a) {
    g_snprintf(res->error, sizeof res->error, "no such escape request");
    return 1;
  }
  errno = 0;
  long ret = a->run(req, false);
  res->attempted = 1;
  res->attack_ret = ret;
  res->attack_errno = ret < 0 ? errno : 0;
  send_result(args->channel, res, NULL, NULL, NULL);
  return 0;
}

int demo_renderer_main(const sbx_worker_args *args) {
  demo_result res;
  memset(&res, 0, sizeof res);
  demo_request req;
  if (args->payload_len < sizeof req) {
    g_snprintf(res.error, sizeof res.error, "payload too short");
    send_result(args->channel, &res, NULL, NULL, NULL);
    return 2;
  }
  memcpy(&req, args->payload, sizeof req);
  req.page_name[sizeof req.page_name - 1] = '\0';
  req.home[sizeof req.home - 1] = '\0';
  if (req.magic != DEMO_REQUEST_MAGIC ||
      req.page_len != args->payload_len - sizeof req) {
    g_snprintf(res.error, sizeof res.error, "malformed payload");
    send_result(args->channel, &res, NULL, NULL, NULL);
    return 2;
  }
  const char *page = (const char *)args->payload + sizeof req;
  GError *error = NULL;
  demo_document *doc =
      demo_markup_parse(req.page_name, page, req.page_len, &error);
  if (!doc) {
    g_snprintf(res.error, sizeof res.error, "%s", error->message);
    g_error_free(error);
    send_result(args->channel, &res, NULL, NULL, NULL);
    return 1;
  }
  int rc = req.escape ? escape(&req, doc, args, &res)
                      : render(&req, doc, args, &res);
  if (rc != 0 && !res.attempted)
    send_result(args->channel, &res, NULL, NULL, NULL);
  demo_document_free(doc);
  return rc;
}
