/* Relaying standard input, output and error; see relay.h.
 *
 * Output moves with splice(2), page by page and without a copy in this
 * process, where the caller's file takes it (not an O_APPEND file, for
 * which the kernel refuses splice: then read and write). Input is read
 * and written in pipe-sized pieces, which a pipe with room takes whole.
 */
#include "sandbox/runner/relay.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox/runner/plan.h"

#define CHUNK (1 << 20)  /* one pipe's worth, at most, per splice */
#define PIECE 4096       /* PIPE_BUF: a write of it is never split */
#define KCMP_FILE_TYPE 0 /* linux/kcmp.h's KCMP_FILE */

typedef struct {
  int user;   /* the caller's descriptor (0, 1, 2) */
  int ours;   /* the launcher's end of the pipe, or -1 when done */
  int theirs; /* the program's end, until started */
  bool input;
  bool can_splice;
  bool await_room; /* input: the pipe was full */
  char pending[PIECE];
  size_t n_pending;
} stream;

struct sbx_run_relay {
  stream s[3];
  int n;
};

static const char *const stream_names[] = {"standard input", "standard output",
                                           "standard error"};

/* Whether fds a and b of this process are one open file (kcmp), or, where
 * the kernel cannot say, one file. */
static bool same_open_file(int a, int b) {
  pid_t self = getpid();
  long rc = syscall(SYS_kcmp, self, self, KCMP_FILE_TYPE, a, b);
  if (rc >= 0)
    return rc == 0;
  struct stat x, y;
  return fstat(a, &x) == 0 && fstat(b, &y) == 0 && x.st_dev == y.st_dev &&
         x.st_ino == y.st_ino;
}

static void end_stream(stream *s, const char *why) {
  if (why)
    fprintf(stderr, "sbx-run: %s: %s; the program's further %s is lost\n",
            stream_names[s->user], why, s->input ? "input" : "output");
  if (s->ours >= 0)
    close(s->ours);
  s->ours = -1;
}

sbx_run_relay *sbx_run_relay_new(unsigned mask, int child_fd[3],
                                 GError **error) {
  for (int fd = 0; fd <= 2; fd++)
    child_fd[fd] = -1;
  if (!mask)
    return NULL;
  sbx_run_relay *r = g_new0(sbx_run_relay, 1);
  for (int fd = 0; fd <= 2; fd++) {
    if (!(mask & (1u << fd)))
      continue;
    if (fd == 2 && (mask & 2u) && same_open_file(1, 2)) {
      child_fd[2] = child_fd[1]; /* one pipe keeps their order */
      continue;
    }
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0) {
      int err = errno;
      g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_SETUP,
                  "a pipe to relay %s: %s", stream_names[fd], g_strerror(err));
      sbx_run_relay_free(r);
      return NULL;
    }
    stream *s = &r->s[r->n++];
    s->user = fd;
    s->input = fd == 0;
    s->ours = s->input ? p[1] : p[0];
    s->theirs = s->input ? p[0] : p[1];
    s->can_splice = !s->input;
    /* Fewer wake-ups for a program that writes much; the default size
     * where the kernel refuses more. */
    (void)fcntl(s->ours, F_SETPIPE_SZ, CHUNK);
    (void)fcntl(s->ours, F_SETFL, O_NONBLOCK);
    child_fd[fd] = s->theirs;
  }
  return r;
}

void sbx_run_relay_started(sbx_run_relay *r) {
  for (int i = 0; r && i < r->n; i++) {
    if (r->s[i].theirs >= 0)
      close(r->s[i].theirs);
    r->s[i].theirs = -1;
  }
}

int sbx_run_relay_poll_fds(sbx_run_relay *r, struct pollfd *fds) {
  int n = 0;
  for (int i = 0; r && i < r->n; i++) {
    stream *s = &r->s[i];
    if (s->ours < 0)
      continue;
    if (!s->input)
      fds[n++] = (struct pollfd){.fd = s->ours, .events = POLLIN};
    else if (s->await_room || s->n_pending)
      fds[n++] = (struct pollfd){.fd = s->ours, .events = POLLOUT};
    else
      fds[n++] = (struct pollfd){.fd = s->user, .events = POLLIN};
  }
  return n;
}

/* All of buf to the caller's descriptor, which may be non-blocking.
 * Returns 0 or an errno. */
static int write_all(int fd, const char *buf, size_t len) {
  while (len > 0) {
    ssize_t w = write(fd, buf, len);
    if (w < 0 && errno == EINTR)
      continue;
    if (w < 0 && errno == EAGAIN) {
      struct pollfd p = {.fd = fd, .events = POLLOUT};
      (void)poll(&p, 1, -1);
      continue;
    }
    if (w < 0)
      return errno;
    buf += w;
    len -= (size_t)w;
  }
  return 0;
}

/* One move from the program's pipe to the caller's file. Returns false
 * when the pipe had nothing (EAGAIN) or the stream ended. */
static bool move_output(stream *s) {
  ssize_t n;
  if (s->can_splice) {
    n = splice(s->ours, NULL, s->user, NULL, CHUNK,
               SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
    if (n < 0 && errno == EINVAL) {
      s->can_splice = false; /* an O_APPEND file, or one splice cannot
                              * write to */
      return true;
    }
    if (n < 0 && errno == EAGAIN)
      return false;
    if (n < 0 && errno != EINTR) {
      end_stream(s, g_strerror(errno));
      return false;
    }
  } else {
    char buf[65536];
    n = read(s->ours, buf, sizeof buf);
    if (n < 0)
      return errno == EINTR;
    int err = n > 0 ? write_all(s->user, buf, (size_t)n) : 0;
    if (err) {
      end_stream(s, g_strerror(err));
      return false;
    }
  }
  if (n == 0) {
    end_stream(s, NULL); /* every writer in the sandbox is gone */
    return false;
  }
  return true;
}

/* One move from the caller's file into the program's pipe. */
static void move_input(stream *s) {
  if (!s->n_pending) {
    ssize_t n = read(s->user, s->pending, sizeof s->pending);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
      return;
    if (n < 0) {
      end_stream(s, g_strerror(errno));
      return;
    }
    if (n == 0) {
      end_stream(s, NULL); /* the program reads the end of its input */
      return;
    }
    s->n_pending = (size_t)n;
  }
  ssize_t w = write(s->ours, s->pending, s->n_pending);
  if (w < 0 && errno == EAGAIN) {
    s->await_room = true;
    return;
  }
  if (w < 0) {
    /* EPIPE: the program closed its input; nothing is lost. */
    end_stream(s, errno == EPIPE ? NULL : g_strerror(errno));
    return;
  }
  s->await_room = false;
  memmove(s->pending, s->pending + w, s->n_pending - (size_t)w);
  s->n_pending -= (size_t)w;
}

void sbx_run_relay_pump(sbx_run_relay *r, const struct pollfd *fds, int n) {
  for (int i = 0; r && i < n; i++) {
    if (!fds[i].revents)
      continue;
    for (int j = 0; j < r->n; j++) {
      stream *s = &r->s[j];
      if (s->ours < 0)
        continue;
      if (!s->input && fds[i].fd == s->ours)
        (void)move_output(s);
      else if (s->input && (fds[i].fd == s->ours || fds[i].fd == s->user))
        move_input(s);
    }
  }
}

void sbx_run_relay_drain(sbx_run_relay *r) {
  for (int i = 0; r && i < r->n; i++) {
    stream *s = &r->s[i];
    if (s->input) {
      end_stream(s, NULL);
      continue;
    }
    /* Every writer is gone: what they wrote is in the pipe, and the pipe
     * then reads its end (or EAGAIN, where a descriptor was passed out of
     * the sandbox: what it holds later is not waited for). */
    while (s->ours >= 0 && move_output(s)) {
    }
    end_stream(s, NULL);
  }
}

void sbx_run_relay_free(sbx_run_relay *r) {
  if (!r)
    return;
  sbx_run_relay_started(r);
  for (int i = 0; i < r->n; i++)
    end_stream(&r->s[i], NULL);
  g_free(r);
}
