/* What the demo's host and its renderer workers say to each other.
 *
 * Why it exists: the host hands a worker a page and the paths an attack
 * needs in the spawn payload, and reads the worker's answer from a
 * socketpair it passed as descriptor 3. The host treats the answer as
 * hostile: a result is accepted only when the magic, every length and
 * every string check out (demo_result_check), so a compromised renderer
 * can lie about its page but cannot make the host read out of bounds.
 */
#ifndef SBX_EXAMPLES_RENDERER_PROTOCOL_H_
#define SBX_EXAMPLES_RENDERER_PROTOCOL_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <glib.h>

#define DEMO_REQUEST_MAGIC 0x53425852u /* "SBXR" */
#define DEMO_RESULT_MAGIC 0x53425841u  /* "SBXA" */
#define DEMO_MAX_ESCAPES 16
#define DEMO_PATH_MAX 256
#define DEMO_TEXT_MAX (1u << 20)
#define DEMO_IMAGE_MAX (16u << 20)
#define DEMO_STATUS_MAX 4096

/* The spawn payload: this header, then page_len bytes of the page. */
typedef struct {
  uint32_t magic;
  uint32_t width;
  /* 0: render the page. n > 0: carry out the page's n-th escape request
   * (<x-escape attack=...>, counted from 1). */
  uint32_t escape;
  uint32_t page_len;
  char page_name[64];
  char home[DEMO_PATH_MAX];         /* the worker's writable home */
  char secret_path[DEMO_PATH_MAX];  /* /etc/shadow, or a canary */
  char outside_path[DEMO_PATH_MAX]; /* a file to create outside home */
  char link_path[DEMO_PATH_MAX];    /* a symlink in home to the canary */
  char abstract_name[100];          /* the host's listening socket */
  int32_t broker_pid, zygote_pid;   /* as the host sees them */
} demo_request;

/* The worker's answer, one message on its channel: this header, then
 * text_len bytes of text, image_len of PNG and status_len of status
 * report. */
typedef struct {
  uint32_t magic;
  int32_t rendered; /* 1: the page was rendered */
  char error[256];  /* why not, when rendered == 0 */
  uint32_t text_len, image_len, status_len;
  uint32_t lines;
  uint32_t text_crc, image_crc; /* libz's crc32, dlopen()ed by the worker */
  uint32_t cache_bytes;         /* the compressed cache file in home */
  uint32_t license_bytes;       /* read from /usr/share/common-licenses */
  uint32_t n_escapes;
  char escapes[DEMO_MAX_ESCAPES][48];
  /* An escape attempt: what the call returned and its errno. */
  int32_t attempted;
  int64_t attack_ret;
  int32_t attack_errno;
  char attack_detail[128];
} demo_result;

/* Checks a result read from a worker; fixes nothing. On failure *why
 * says what was wrong. */
bool demo_result_check(const demo_result *r, size_t header_len,
                       const char **why);

/* Writes all of buf to fd, retrying short writes; false on error. */
bool demo_write_all(int fd, const void *buf, size_t len);

/* Reads exactly len bytes unless EOF comes first; returns the count, or
 * -1 on error. Gives up after timeout_ms of silence. */
ssize_t demo_read_full(int fd, void *buf, size_t len, int timeout_ms);

#endif /* SBX_EXAMPLES_RENDERER_PROTOCOL_H_ */
