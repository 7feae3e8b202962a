/* The program's own terminal; see terminal.h.
 *
 * Trusts the user's terminal. The relay never blocks on the program's
 * side: the pseudo-terminal's master is non-blocking, and input is read
 * from the user only when the last chunk has been passed on, so a program
 * that stops reading its terminal stalls neither the supervisor nor
 * anything else.
 */
#include "sandbox/runner/terminal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include "sandbox/runner/plan.h"

struct sbx_run_terminal {
  int user;   /* the controlling terminal sbx-run was started on */
  bool input; /* standard input is that terminal: relay input */
  int out;    /* where the program's terminal output goes */
  int master; /* non-blocking */
  int slave;  /* until init has its copy */
  unsigned replaces;
  struct termios saved; /* the user's terminal as sbx-run found it */
  bool have_saved;
  bool raw;
  char pending[4096]; /* input read, not yet taken by the master */
  size_t pending_len, pending_off;
};

static bool same_terminal(int a, int b) {
  struct stat sa, sb;
  return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_rdev == sb.st_rdev &&
         S_ISCHR(sa.st_mode);
}

/* The program's terminal starts as the user's was when sbx-run started:
 * its modes and size, set through the master, which sets the slave's. */
static void shape_like_users(sbx_run_terminal *t) {
  fcntl(t->master, F_SETFL, fcntl(t->master, F_GETFL) | O_NONBLOCK);
  if (t->have_saved)
    tcsetattr(t->master, TCSANOW, &t->saved);
  sbx_run_terminal_winch(t);
}

sbx_run_terminal *sbx_run_terminal_new(GError **error) {
  int user = -1;
  for (int fd = 0; fd <= 2 && user < 0; fd++)
    if (isatty(fd) && tcgetpgrp(fd) >= 0)
      user = fd;
  if (user < 0)
    return NULL;
  int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  const char *name = NULL;
  int slave = -1;
  if (master >= 0 && grantpt(master) == 0 && unlockpt(master) == 0 &&
      (name = ptsname(master)) != NULL)
    slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (slave < 0) {
    int err = errno;
    g_set_error(error, SBX_RUN_ERROR, SBX_RUN_ERROR_SETUP,
                "a terminal for the program (posix_openpt, %s): %s",
                name ? name : "/dev/ptmx", g_strerror(err));
    if (master >= 0)
      close(master);
    return NULL;
  }
  sbx_run_terminal *t = g_new0(sbx_run_terminal, 1);
  t->user = user;
  t->master = master;
  t->slave = slave;
  t->out = user;
  for (int fd = 0; fd <= 2; fd++) {
    if (isatty(fd) && same_terminal(fd, user)) {
      t->replaces |= 1u << fd;
      if (fd == 0)
        t->input = true;
      if (fd == 1 || (fd == 2 && !(t->replaces & 2u)))
        t->out = fd;
    }
  }
  /* Read now: raw mode comes before a master made by init. */
  t->have_saved = tcgetattr(user, &t->saved) == 0;
  shape_like_users(t);
  return t;
}

void sbx_run_terminal_take_master(sbx_run_terminal *t, int master) {
  if (t->master >= 0)
    close(t->master);
  t->master = master;
  shape_like_users(t);
}

int sbx_run_terminal_slave(const sbx_run_terminal *t) {
  return t->slave;
}

int sbx_run_terminal_master(const sbx_run_terminal *t) {
  return t->master;
}

unsigned sbx_run_terminal_replaces(const sbx_run_terminal *t) {
  return t->replaces;
}

static bool in_foreground(const sbx_run_terminal *t) {
  return tcgetpgrp(t->user) == getpgrp();
}

/* Raw mode on the user's terminal, only with input to relay and only in
 * the foreground (a background process changing it would be stopped). */
static void go_raw(sbx_run_terminal *t) {
  if (t->raw || !t->input || !t->have_saved || !in_foreground(t))
    return;
  struct termios raw = t->saved;
  cfmakeraw(&raw);
  if (tcsetattr(t->user, TCSADRAIN, &raw) == 0)
    t->raw = true;
}

static void restore(sbx_run_terminal *t) {
  if (t->raw)
    tcsetattr(t->user, TCSADRAIN, &t->saved);
  t->raw = false;
}

void sbx_run_terminal_after_start(sbx_run_terminal *t) {
  if (t->slave >= 0)
    close(t->slave);
  t->slave = -1;
  go_raw(t);
}

int sbx_run_terminal_poll_fds(const sbx_run_terminal *t, struct pollfd *fds) {
  int n = 0;
  short master_events = POLLIN;
  if (t->pending_len > t->pending_off)
    master_events |= POLLOUT;
  fds[n++] = (struct pollfd){.fd = t->master, .events = master_events};
  /* Input only in the foreground, one chunk at a time. */
  bool want_input =
      t->input && t->pending_len == t->pending_off && in_foreground(t);
  fds[n++] = (struct pollfd){.fd = want_input ? 0 : -1, .events = POLLIN};
  return n;
}

static void write_all(int fd, const char *buf, size_t len) {
  while (len > 0) {
    ssize_t w = write(fd, buf, len);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return;
    buf += w;
    len -= (size_t)w;
  }
}

/* The program's output to the user; false when nothing more will come. */
static bool relay_output(sbx_run_terminal *t) {
  char buf[4096];
  ssize_t n = read(t->master, buf, sizeof(buf));
  if (n > 0) {
    write_all(t->out, buf, (size_t)n);
    return true;
  }
  return n < 0 && (errno == EAGAIN || errno == EINTR);
}

static void relay_input(sbx_run_terminal *t) {
  while (t->pending_off < t->pending_len) {
    ssize_t w = write(t->master, t->pending + t->pending_off,
                      t->pending_len - t->pending_off);
    if (w <= 0)
      break;
    t->pending_off += (size_t)w;
  }
  if (t->pending_off == t->pending_len)
    t->pending_off = t->pending_len = 0;
}

void sbx_run_terminal_pump(sbx_run_terminal *t, const struct pollfd *fds,
                           int n) {
  if (n > 0 && (fds[0].revents & (POLLIN | POLLHUP | POLLERR)))
    relay_output(t);
  if (n > 1 && (fds[1].revents & (POLLIN | POLLHUP))) {
    ssize_t got = read(0, t->pending, sizeof(t->pending));
    if (got > 0)
      t->pending_len = (size_t)got;
    else if (got == 0 || (errno != EAGAIN && errno != EINTR))
      t->input = false; /* end of input: the program keeps its terminal */
  }
  if (t->pending_len > t->pending_off)
    relay_input(t);
}

void sbx_run_terminal_suspend(sbx_run_terminal *t) {
  while (relay_output(t)) {
    struct pollfd p = {.fd = t->master, .events = POLLIN};
    if (poll(&p, 1, 0) <= 0)
      break;
  }
  restore(t);
}

void sbx_run_terminal_resume(sbx_run_terminal *t) {
  go_raw(t);
}

void sbx_run_terminal_winch(sbx_run_terminal *t) {
  struct winsize ws;
  if (ioctl(t->user, TIOCGWINSZ, &ws) == 0)
    ioctl(t->master, TIOCSWINSZ, &ws);
}

void sbx_run_terminal_free(sbx_run_terminal *t) {
  if (!t)
    return;
  /* What the program wrote before it ended. */
  while (relay_output(t)) {
    struct pollfd p = {.fd = t->master, .events = POLLIN};
    if (poll(&p, 1, 0) <= 0)
      break;
  }
  restore(t);
  if (t->slave >= 0)
    close(t->slave);
  if (t->master >= 0)
    close(t->master);
  g_free(t);
}
