/* The broker under load; see broker_load_bench.h.
 *
 * Why it exists: one client's round trip says little about a broker that
 * serves every worker of a host. These figures come from real renderer
 * workers whose threads call open(2) as any code would (layer 1 traps the
 * call and asks the broker on the worker's channel), against a floor that
 * does the least a broker could: a plain SEQPACKET server, one process,
 * that opens the file named in each request and sends the descriptor
 * back, driven by the same number of processes and threads.
 *
 * What it trusts: the clock (CLOCK_MONOTONIC is one clock for every
 * namespace sbx enters) and what workers and floor clients write back on
 * their pipes. What it refuses: a figure from a run in which an open
 * failed, or a process that did not report.
 */
#include "tools/sbx-bench/broker_load_bench.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sbx/sbx.h"
#include "tools/sbx-bench/measure.h"

#define PROFILE "renderer"
#define LOAD_PROCS 4
#define LOAD_THREADS 4
#define LOAD_OPENS 1000 /* per thread and round */
#define LOAD_ROUNDS 3   /* floor and broker rounds, alternating */
#define TAIL_OPENS 2000
#define FLOOD_THREADS 12
#define FLOOD_WARM_OPENS 20 /* per flooding thread before the victim starts */
#define VICTIM_OPENS 2000
#define WAIT_MS 60000
#define MAX_CLIENTS (LOAD_PROCS * LOAD_THREADS)
/* The descriptors of a worker or floor client: stdio, the report pipe,
 * the go pipe. */
#define REPORT_FD 3
#define GO_FD 4

/* The file every open names. Set before sbx_sandbox_start, so workers
 * (forks of the host as it was then) see it too. */
static char g_file[PATH_MAX];

enum { MODE_LOAD = 1, MODE_VICTIM, MODE_FLOOD };

typedef struct {
  uint8_t mode;
  uint8_t threads;
  uint16_t pad;
  uint32_t opens;
  /* The file to open: a worker may be a fresh exec of sbx-bench, which
   * holds nothing the host set. */
  char file[PATH_MAX];
} job_spec;

/* What a client process writes when it is done: this header, then `n`
 * latencies (microseconds, doubles). */
typedef struct {
  double t_start;
  double t_end;
  int32_t failures;
  int32_t first_errno; /* of the first failure */
  int32_t n;
  int32_t pad;
} report_header;

static gboolean write_all(int fd, const void *buf, size_t len) {
  const char *p = buf;
  while (len) {
    ssize_t n = write(fd, p, len);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return FALSE;
    p += n;
    len -= (size_t)n;
  }
  return TRUE;
}

static double percentile(double *v, size_t n, int pct) {
  sbx_bench_median(v, n); /* sorts */
  return v[(n * (size_t)pct) / 100];
}

/* ---- Client processes: threads doing one operation in a loop ---------- */

/* One operation of thread `idx`: 0, or -errno when it failed. */
typedef int (*op_fn)(void *ctx, int idx);

typedef struct {
  op_fn op;
  void *ctx;
  int idx;
  int opens;
  double *lat;
  double t_end;
  int failures;
  int first_errno;
  pthread_barrier_t *start;
} job;

static void *job_main(void *p) {
  job *j = p;
  pthread_barrier_wait(j->start);
  for (int i = 0; i < j->opens; i++) {
    double t0 = sbx_bench_now_us();
    int rc = j->op(j->ctx, j->idx);
    j->lat[i] = sbx_bench_now_us() - t0;
    if (rc < 0 && j->failures++ == 0)
      j->first_errno = -rc;
  }
  j->t_end = sbx_bench_now_us();
  return NULL;
}

/* Starts `threads` threads, says it is ready (a byte on REPORT_FD), waits
 * for the go byte on GO_FD, lets every thread do `opens` operations and
 * writes the report. Returns the exit code. */
static int run_clients(int threads, int opens, op_fn op, void *ctx) {
  job jobs[MAX_CLIENTS];
  pthread_t th[MAX_CLIENTS];
  if (threads < 1 || threads > MAX_CLIENTS || opens < 1)
    return 2;
  size_t n = (size_t)threads * (size_t)opens;
  double *lat = malloc(n * sizeof(double));
  if (!lat)
    return 3;
  pthread_barrier_t start;
  pthread_barrier_init(&start, NULL, (unsigned)threads + 1);
  for (int i = 0; i < threads; i++) {
    jobs[i] =
        (job){op, ctx, i, opens, lat + (size_t)i * opens, 0, 0, 0, &start};
    if (pthread_create(&th[i], NULL, job_main, &jobs[i]) != 0)
      return 4;
  }
  char c = 1;
  if (!write_all(REPORT_FD, &c, 1) || read(GO_FD, &c, 1) != 1)
    return 5;
  report_header h = {.t_start = sbx_bench_now_us(), .n = (int32_t)n};
  pthread_barrier_wait(&start);
  for (int i = 0; i < threads; i++) {
    pthread_join(th[i], NULL);
    if (jobs[i].failures && !h.first_errno)
      h.first_errno = jobs[i].first_errno;
    h.failures += jobs[i].failures;
    if (jobs[i].t_end > h.t_end)
      h.t_end = jobs[i].t_end;
  }
  gboolean ok =
      write_all(REPORT_FD, &h, sizeof h) && write_all(REPORT_FD, lat, n * 8);
  free(lat);
  return ok ? 0 : 6;
}

/* A brokered open: the worker's open(2), trapped by layer 1. */
static int brokered_open(void *ctx, int idx) {
  (void)ctx;
  (void)idx;
  int fd = open(g_file, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  close(fd);
  return 0;
}

/* The floor's client side: the request on this thread's socket, the
 * descriptor back, closed. */
static int floor_open(void *ctx, int idx) {
  int sock = ((const int *)ctx)[idx];
  if (send(sock, g_file, strlen(g_file) + 1, MSG_NOSIGNAL) < 0)
    return -errno;
  char rep[8];
  struct iovec iov = {.iov_base = rep, .iov_len = sizeof rep};
  union {
    char c[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } cb;
  struct msghdr m = {.msg_iov = &iov,
                     .msg_iovlen = 1,
                     .msg_control = cb.c,
                     .msg_controllen = sizeof cb.c};
  ssize_t n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
  if (n < 0)
    return -errno;
  struct cmsghdr *c = CMSG_FIRSTHDR(&m);
  if (n == 0 || !c || c->cmsg_type != SCM_RIGHTS)
    return -EIO; /* the server could not open the file */
  int fd;
  memcpy(&fd, CMSG_DATA(c), sizeof fd);
  close(fd);
  return 0;
}

/* ---- The floor's server ------------------------------------------------ */

/* One process serving every socket: epoll (level-triggered), then for each
 * readable socket one request: open the path it names, send the
 * descriptor, close it. Ends when every client has gone. */
static void G_GNUC_NORETURN floor_server(const int *socks, int n) {
  int ep = epoll_create1(EPOLL_CLOEXEC);
  for (int i = 0; i < n; i++) {
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = socks[i]};
    epoll_ctl(ep, EPOLL_CTL_ADD, socks[i], &ev);
  }
  char path[PATH_MAX + 1];
  int open_socks = n;
  while (open_socks > 0) {
    struct epoll_event evs[64];
    int k = epoll_wait(ep, evs, 64, -1);
    for (int e = 0; e < k; e++) {
      int s = evs[e].data.fd;
      ssize_t len = recv(s, path, PATH_MAX, MSG_DONTWAIT);
      if (len < 0 && errno == EAGAIN)
        continue;
      if (len <= 0) {
        epoll_ctl(ep, EPOLL_CTL_DEL, s, NULL);
        close(s);
        open_socks--;
        continue;
      }
      path[len] = '\0';
      int fd = open(path, O_RDONLY | O_CLOEXEC);
      char rep[8] = {0};
      struct iovec iov = {.iov_base = rep, .iov_len = sizeof rep};
      union {
        char c[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
      } cb;
      memset(&cb, 0, sizeof cb);
      struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
      if (fd >= 0) {
        m.msg_control = cb.c;
        m.msg_controllen = sizeof cb.c;
        struct cmsghdr *c = CMSG_FIRSTHDR(&m);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof fd);
      }
      sendmsg(s, &m, MSG_NOSIGNAL);
      if (fd >= 0)
        close(fd);
    }
  }
  _exit(0);
}

/* ---- Collecting reports ------------------------------------------------ */

typedef struct {
  double t_start; /* earliest start */
  double t_end;   /* latest end */
  int failures;
  int first_errno;
  GArray *lat; /* double */
} load_result;

static void load_result_init(load_result *r) {
  r->t_start = 0;
  r->t_end = 0;
  r->failures = 0;
  r->first_errno = 0;
  r->lat = g_array_new(FALSE, FALSE, sizeof(double));
}

static void load_result_clear(load_result *r) {
  if (r->lat)
    g_array_free(r->lat, TRUE);
  r->lat = NULL;
}

static gboolean read_report(int fd, load_result *r, const char *who,
                            GError **error) {
  report_header h;
  if (!sbx_bench_read_exact(fd, &h, sizeof h) || h.n < 0 || h.n > 1 << 24) {
    g_set_error(error, SBX_ERROR, SBX_ERROR_FAILED,
                "bench: %s ended without its report", who);
    return FALSE;
  }
  guint old = r->lat->len;
  g_array_set_size(r->lat, old + (guint)h.n);
  if (!sbx_bench_read_exact(fd, &g_array_index(r->lat, double, old),
                            (size_t)h.n * sizeof(double))) {
    g_set_error(error, SBX_ERROR, SBX_ERROR_FAILED,
                "bench: %s sent a short report", who);
    return FALSE;
  }
  if (r->t_start == 0 || h.t_start < r->t_start)
    r->t_start = h.t_start;
  if (h.t_end > r->t_end)
    r->t_end = h.t_end;
  if (h.failures && !r->failures)
    r->first_errno = h.first_errno;
  r->failures += h.failures;
  return TRUE;
}

static gboolean wait_ready(int fd, const char *who, GError **error) {
  char c;
  if (sbx_bench_read_exact(fd, &c, 1))
    return TRUE;
  g_set_error(error, SBX_ERROR, SBX_ERROR_FAILED,
              "bench: %s never became ready", who);
  return FALSE;
}

static double throughput(const load_result *r) {
  double secs = (r->t_end - r->t_start) / 1e6;
  return secs > 0 ? r->lat->len / secs : 0;
}

/* ---- The floor's round --------------------------------------------------- */

/* LOAD_PROCS processes of LOAD_THREADS threads against one floor server,
 * each thread on a socket of its own. */
static gboolean floor_round(int opens, load_result *out, GError **error) {
  int cli[MAX_CLIENTS], srv[MAX_CLIENTS];
  for (int i = 0; i < MAX_CLIENTS; i++) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
      g_set_error(error, SBX_ERROR, SBX_ERROR_FAILED, "bench: socketpair: %s",
                  g_strerror(errno));
      for (int k = 0; k < i; k++) {
        close(cli[k]);
        close(srv[k]);
      }
      return FALSE;
    }
    cli[i] = sv[0];
    srv[i] = sv[1];
  }
  pid_t server = fork();
  if (server == 0) {
    for (int i = 0; i < MAX_CLIENTS; i++)
      close(cli[i]);
    floor_server(srv, MAX_CLIENTS);
  }
  for (int i = 0; i < MAX_CLIENTS; i++)
    close(srv[i]);
  int go[2] = {-1, -1};
  int report[LOAD_PROCS];
  pid_t procs[LOAD_PROCS];
  gboolean ok = server > 0 && pipe2(go, O_CLOEXEC) == 0;
  int started = 0;
  for (int p = 0; ok && p < LOAD_PROCS; p++) {
    int rp[2];
    if (pipe2(rp, O_CLOEXEC) < 0) {
      ok = FALSE;
      break;
    }
    procs[p] = fork();
    if (procs[p] == 0) {
      /* Above both targets first: either pipe may sit on 3 or 4. */
      int r = fcntl(rp[1], F_DUPFD, GO_FD + 1);
      int g = fcntl(go[0], F_DUPFD, GO_FD + 1);
      if (r < 0 || g < 0 || dup2(r, REPORT_FD) < 0 || dup2(g, GO_FD) < 0)
        _exit(7);
      _exit(
          run_clients(LOAD_THREADS, opens, floor_open, &cli[p * LOAD_THREADS]));
    }
    close(rp[1]);
    report[p] = rp[0];
    if (procs[p] < 0) {
      close(rp[0]);
      ok = FALSE;
      break;
    }
    started++;
  }
  for (int i = 0; i < MAX_CLIENTS; i++)
    close(cli[i]);
  for (int p = 0; ok && p < started; p++)
    ok = wait_ready(report[p], "a floor client", error);
  if (ok) {
    char bytes[LOAD_PROCS] = {0};
    ok = write_all(go[1], bytes, (size_t)started);
  }
  for (int p = 0; p < started; p++) {
    if (ok)
      ok = read_report(report[p], out, "a floor client", error);
    close(report[p]);
  }
  for (int i = 0; i < 2; i++)
    if (go[i] >= 0)
      close(go[i]);
  for (int p = 0; p < started; p++)
    waitpid(procs[p], NULL, 0);
  if (server > 0)
    waitpid(server, NULL, 0);
  if (!ok && error && !*error)
    g_set_error(error, SBX_ERROR, SBX_ERROR_FAILED,
                "bench: the floor's round could not run: %s",
                g_strerror(errno));
  return ok;
}

/* ---- Workers ------------------------------------------------------------- */

static volatile int g_stop;

typedef struct {
  pthread_barrier_t *warm;
  long opens;
} flood_job;

static void *flood_main(void *p) {
  flood_job *j = p;
  for (int i = 0; i < FLOOD_WARM_OPENS; i++)
    j->opens += brokered_open(NULL, 0) == 0;
  pthread_barrier_wait(j->warm);
  while (!__atomic_load_n(&g_stop, __ATOMIC_RELAXED))
    j->opens += brokered_open(NULL, 0) == 0;
  return NULL;
}

/* FLOOD: opens from `threads` threads until the stop byte; says "flooding"
 * (a byte on REPORT_FD) once every thread is under way, and reports the
 * opens it made. */
static int flood(int threads) {
  flood_job jobs[MAX_CLIENTS];
  pthread_t th[MAX_CLIENTS];
  if (threads < 1 || threads > MAX_CLIENTS)
    return 2;
  pthread_barrier_t warm;
  pthread_barrier_init(&warm, NULL, (unsigned)threads + 1);
  for (int i = 0; i < threads; i++) {
    jobs[i] = (flood_job){&warm, 0};
    if (pthread_create(&th[i], NULL, flood_main, &jobs[i]) != 0)
      return 4;
  }
  pthread_barrier_wait(&warm);
  char c = 1;
  if (!write_all(REPORT_FD, &c, 1) || read(GO_FD, &c, 1) != 1)
    return 5;
  __atomic_store_n(&g_stop, 1, __ATOMIC_RELAXED);
  long total = 0;
  for (int i = 0; i < threads; i++) {
    pthread_join(th[i], NULL);
    total += jobs[i].opens;
  }
  return write_all(REPORT_FD, &total, sizeof total) ? 0 : 6;
}

/* VICTIM: `opens` opens alone and reported at once, then, after the go
 * byte, `opens` more (while another worker floods) and reported. */
static int victim(int opens) {
  double *lat = malloc((size_t)opens * sizeof(double));
  if (!lat)
    return 3;
  for (int phase = 0; phase < 2; phase++) {
    report_header h = {.t_start = sbx_bench_now_us(), .n = opens};
    for (int i = 0; i < opens; i++) {
      double t0 = sbx_bench_now_us();
      int rc = brokered_open(NULL, 0);
      if (rc < 0 && h.failures++ == 0)
        h.first_errno = -rc;
      lat[i] = sbx_bench_now_us() - t0;
    }
    h.t_end = sbx_bench_now_us();
    if (!write_all(REPORT_FD, &h, sizeof h) ||
        !write_all(REPORT_FD, lat, (size_t)opens * sizeof(double)))
      return 6;
    char c;
    if (phase == 0 && read(GO_FD, &c, 1) != 1)
      return 5;
  }
  free(lat);
  return 0;
}

static int load_entry(const sbx_worker_args *args) {
  job_spec spec;
  if (args->payload_len != sizeof spec)
    return 2;
  memcpy(&spec, args->payload, sizeof spec);
  if (!memchr(spec.file, '\0', sizeof spec.file))
    return 2;
  g_strlcpy(g_file, spec.file, sizeof g_file);
  switch (spec.mode) {
    case MODE_LOAD:
      return run_clients(spec.threads, (int)spec.opens, brokered_open, NULL);
    case MODE_VICTIM:
      return victim((int)spec.opens);
    case MODE_FLOOD:
      return flood(spec.threads);
    default:
      return 2;
  }
}

/* ---- The host ------------------------------------------------------------ */

typedef struct {
  char *dir;
  sbx_sandbox *sandbox;
  int devnull;
} load_host;

static void load_host_stop(load_host *h) {
  sbx_sandbox_stop(h->sandbox);
  h->sandbox = NULL;
  if (h->devnull >= 0)
    close(h->devnull);
  if (g_file[0])
    unlink(g_file);
  if (h->dir)
    rmdir(h->dir);
  g_free(h->dir);
  g_file[0] = '\0';
}

/* A directory with one file, and a sandbox whose renderer type may read
 * that directory (a recursive read rule, as a host grants an input
 * directory). */
static gboolean load_host_start(load_host *h, GError **error) {
  memset(h, 0, sizeof *h);
  h->devnull = -1;
  h->dir = g_dir_make_tmp("sbx-bench-load-XXXXXX", error);
  if (!h->dir) {
    load_host_stop(h);
    return FALSE;
  }
  h->devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (h->devnull < 0) {
    g_set_error(error, SBX_ERROR, SBX_ERROR_FAILED, "bench: open /dev/null: %s",
                g_strerror(errno));
    load_host_stop(h);
    return FALSE;
  }
  g_snprintf(g_file, sizeof g_file, "%s/file", h->dir);
  if (!g_file_set_contents(g_file, "bench", -1, error)) {
    load_host_stop(h);
    return FALSE;
  }
  g_autofree char *rule = g_strdup_printf("read %s/", h->dir);
  const char *rules[] = {rule, NULL};
  sbx_process_type type =
      SBX_PROCESS_TYPE_INIT(.name = PROFILE, .entry = load_entry,
                            .extra_rules = rules);
  sbx_sandbox_config config =
      SBX_SANDBOX_CONFIG_INIT(.types = &type, .n_types = 1);
  if (!sbx_sandbox_start(&config, &h->sandbox, error)) {
    load_host_stop(h);
    return FALSE;
  }
  return TRUE;
}

/* Spawns a worker running spec, with a new report pipe (its read end in
 * *report) and go_fd as GO_FD. */
static gboolean spawn_job(load_host *h, const job_spec *spec_in, int go_fd,
                          pid_t *pid, int *report, GError **error) {
  g_autofree job_spec *spec = g_new(job_spec, 1);
  *spec = *spec_in;
  g_strlcpy(spec->file, g_file, sizeof spec->file);
  int rp[2];
  if (pipe2(rp, O_CLOEXEC) < 0) {
    g_set_error(error, SBX_ERROR, SBX_ERROR_FAILED, "bench: pipe2: %s",
                g_strerror(errno));
    return FALSE;
  }
  int fds[] = {h->devnull, h->devnull, h->devnull, rp[1], go_fd};
  sbx_spawn_config spawn =
      SBX_SPAWN_CONFIG_INIT(.process_type = PROFILE, .payload = spec,
                            .payload_len = sizeof *spec, .fds = fds,
                            .n_fds = G_N_ELEMENTS(fds));
  gboolean ok = sbx_sandbox_spawn(h->sandbox, &spawn, pid, error);
  close(rp[1]);
  if (!ok) {
    close(rp[0]);
    return FALSE;
  }
  *report = rp[0];
  return TRUE;
}

/* Waits for a worker and insists that it exited 0. */
static gboolean reap(load_host *h, pid_t pid, GError **error) {
  sbx_worker_exit e = SBX_WORKER_EXIT_INIT();
  if (!sbx_sandbox_wait(h->sandbox, pid, WAIT_MS, &e, error))
    return FALSE;
  if (e.reason != SBX_EXIT_NORMAL || e.exit_code != 0) {
    g_set_error(error, SBX_ERROR, SBX_ERROR_FAILED,
                "bench: renderer worker %d ended badly (exit code %d): %s",
                (int)pid, e.exit_code, e.detail);
    return FALSE;
  }
  return TRUE;
}

/* LOAD_PROCS workers of LOAD_THREADS threads, `opens` brokered opens per
 * thread, started together. */
static gboolean broker_round(load_host *h, int opens, load_result *out,
                             GError **error) {
  int go[2];
  if (pipe2(go, O_CLOEXEC) < 0) {
    g_set_error(error, SBX_ERROR, SBX_ERROR_FAILED, "bench: pipe2: %s",
                g_strerror(errno));
    return FALSE;
  }
  job_spec spec = {
      .mode = MODE_LOAD, .threads = LOAD_THREADS, .opens = (uint32_t)opens};
  pid_t pids[LOAD_PROCS];
  int report[LOAD_PROCS];
  int started = 0;
  gboolean ok = TRUE;
  for (int p = 0; ok && p < LOAD_PROCS; p++) {
    ok = spawn_job(h, &spec, go[0], &pids[p], &report[p], error);
    started += ok;
  }
  for (int p = 0; ok && p < started; p++)
    ok = wait_ready(report[p], "a renderer worker", error);
  if (ok) {
    char bytes[LOAD_PROCS] = {0};
    ok = write_all(go[1], bytes, (size_t)started);
  }
  for (int p = 0; p < started; p++) {
    if (ok)
      ok = read_report(report[p], out, "a renderer worker", error);
    close(report[p]);
  }
  close(go[1]);
  close(go[0]);
  for (int p = 0; p < started; p++) {
    GError *local = NULL;
    if (!reap(h, pids[p], ok ? error : &local))
      ok = FALSE;
    g_clear_error(&local);
  }
  return ok;
}

static gboolean check_failures(const load_result *r, const char *what,
                               GError **error) {
  if (r->failures == 0 && r->lat->len > 0)
    return TRUE;
  g_set_error(error, SBX_ERROR, SBX_ERROR_FAILED,
              "bench: %d of %u %s failed (the first with %s)", r->failures,
              r->lat->len, what, g_strerror(r->first_errno));
  return FALSE;
}

gboolean sbx_bench_broker_open_load(double *value, double *floor,
                                    GError **error) {
  load_host h;
  if (!load_host_start(&h, error))
    return FALSE;
  double brokered[LOAD_ROUNDS], plain[LOAD_ROUNDS];
  gboolean ok = TRUE;
  for (int r = 0; ok && r < LOAD_ROUNDS; r++) {
    load_result f, b;
    load_result_init(&f);
    load_result_init(&b);
    ok = floor_round(LOAD_OPENS, &f, error) &&
         check_failures(&f, "floor opens", error) &&
         broker_round(&h, LOAD_OPENS, &b, error) &&
         check_failures(&b, "brokered opens", error);
    if (ok) {
      plain[r] = throughput(&f);
      brokered[r] = throughput(&b);
    }
    load_result_clear(&f);
    load_result_clear(&b);
  }
  load_host_stop(&h);
  if (!ok)
    return FALSE;
  *value = sbx_bench_median(brokered, LOAD_ROUNDS);
  *floor = sbx_bench_median(plain, LOAD_ROUNDS);
  return TRUE;
}

gboolean sbx_bench_broker_open_tail(double *value, double *floor,
                                    GError **error) {
  load_host h;
  if (!load_host_start(&h, error))
    return FALSE;
  load_result b;
  load_result_init(&b);
  gboolean ok = broker_round(&h, TAIL_OPENS, &b, error) &&
                check_failures(&b, "brokered opens", error);
  load_host_stop(&h);
  if (ok) {
    double *v = (double *)(void *)b.lat->data;
    *value = percentile(v, b.lat->len, 99);
    *floor = percentile(v, b.lat->len, 50);
  }
  load_result_clear(&b);
  return ok;
}

gboolean sbx_bench_broker_flood_victim(double *value, double *floor,
                                       GError **error) {
  load_host h;
  if (!load_host_start(&h, error))
    return FALSE;
  int victim_go[2], flood_stop[2];
  if (pipe2(victim_go, O_CLOEXEC) < 0) {
    g_set_error(error, SBX_ERROR, SBX_ERROR_FAILED, "bench: pipe2: %s",
                g_strerror(errno));
    load_host_stop(&h);
    return FALSE;
  }
  if (pipe2(flood_stop, O_CLOEXEC) < 0) {
    g_set_error(error, SBX_ERROR, SBX_ERROR_FAILED, "bench: pipe2: %s",
                g_strerror(errno));
    close(victim_go[0]);
    close(victim_go[1]);
    load_host_stop(&h);
    return FALSE;
  }
  job_spec vspec = {.mode = MODE_VICTIM, .threads = 1, .opens = VICTIM_OPENS};
  job_spec fspec = {.mode = MODE_FLOOD, .threads = FLOOD_THREADS};
  pid_t vpid = -1, fpid = -1;
  int vrep = -1, frep = -1;
  load_result alone, flooded;
  load_result_init(&alone);
  load_result_init(&flooded);
  long flood_opens = 0;
  /* The victim alone first; then the flood starts, and only once it is
   * under way does the victim go on. */
  gboolean ok = spawn_job(&h, &vspec, victim_go[0], &vpid, &vrep, error) &&
                read_report(vrep, &alone, "the victim worker", error) &&
                spawn_job(&h, &fspec, flood_stop[0], &fpid, &frep, error) &&
                wait_ready(frep, "the flooding worker", error) &&
                write_all(victim_go[1], "g", 1) &&
                read_report(vrep, &flooded, "the victim worker", error);
  /* The flood stops only now: it ran through the victim's whole second
   * phase. */
  if (fpid > 0) {
    (void)!write(flood_stop[1], "s", 1);
    if (ok && !sbx_bench_read_exact(frep, &flood_opens, sizeof flood_opens)) {
      g_set_error(error, SBX_ERROR, SBX_ERROR_FAILED,
                  "bench: the flooding worker did not report");
      ok = FALSE;
    }
  }
  close(victim_go[1]);
  close(flood_stop[1]);
  close(victim_go[0]);
  close(flood_stop[0]);
  if (vrep >= 0)
    close(vrep);
  if (frep >= 0)
    close(frep);
  pid_t pids[] = {vpid, fpid};
  for (size_t i = 0; i < G_N_ELEMENTS(pids); i++) {
    if (pids[i] <= 0)
      continue;
    GError *local = NULL;
    if (!reap(&h, pids[i], ok ? error : &local))
      ok = FALSE;
    g_clear_error(&local);
  }
  load_host_stop(&h);
  ok = ok && check_failures(&alone, "opens of the victim alone", error) &&
       check_failures(&flooded, "opens of the victim under the flood", error);
  if (ok && flood_opens <= 0) {
    g_set_error(error, SBX_ERROR, SBX_ERROR_FAILED,
                "bench: the flooding worker made no open");
    ok = FALSE;
  }
  if (ok) {
    *floor = percentile((double *)(void *)alone.lat->data, alone.lat->len, 50);
    *value =
        percentile((double *)(void *)flooded.lat->data, flooded.lat->len, 99);
  }
  load_result_clear(&alone);
  load_result_clear(&flooded);
  return ok;
}
