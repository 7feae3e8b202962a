/* Broker benchmarks; see broker_bench.h. Trusts nothing but the clock:
 * every figure is a median of repetitions, against a floor measured in the
 * same run. */
#include "tools/sbx-bench/broker_bench.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/broker/broker.h"
#include "sandbox/broker/client.h"
#include "sandbox/broker/protocol.h"

#define ITERS 2000
#define REPS 5

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, size_t n) {
  qsort(v, n, sizeof(double), cmp_double);
  return v[n / 2];
}

typedef struct {
  char *dir;
  char *file;
  sbx_allowlist *list;
  sbx_broker *broker;
} bench_env;

static gboolean env_start(bench_env *e, GError **error) {
  memset(e, 0, sizeof(*e));
  e->dir = g_dir_make_tmp("sbx-bench-broker-XXXXXX", error);
  if (!e->dir)
    return FALSE;
  e->file = g_build_filename(e->dir, "file", NULL);
  if (!g_file_set_contents(e->file, "bench", -1, error))
    return FALSE;
  e->list = sbx_allowlist_new("bench");
  g_autofree char *rule = g_strconcat(e->dir, "/", NULL);
  if (!sbx_allowlist_add(e->list, rule, SBX_PERM_READ_ONLY, error))
    return FALSE;
  const sbx_allowlist *lists[] = {e->list};
  sbx_broker_config cfg = {
      .allowlists = lists, .n_allowlists = 1, .audit_fd = -1};
  e->broker = sbx_broker_start(&cfg, error);
  return e->broker != NULL;
}

static void env_stop(bench_env *e) {
  if (e->broker)
    sbx_broker_stop(e->broker, NULL, NULL);
  sbx_allowlist_free(e->list);
  if (e->file)
    unlink(e->file);
  if (e->dir)
    rmdir(e->dir);
  g_free(e->file);
  g_free(e->dir);
}

/* The floor's server: answers each datagram with one carrying an fd. */
static void G_GNUC_NORETURN echo_fd_server(int sock, int fd) {
  char buf[SBX_BROKER_MAX_REQUEST];
  for (;;) {
    ssize_t n = recv(sock, buf, sizeof(buf), 0);
    if (n <= 0)
      _exit(0);
    struct iovec iov = {.iov_base = buf, .iov_len = sizeof(sbx_broker_reply)};
    sbx_broker_fd_cmsg cb;
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
    sbx_broker_msg_attach_fd(&m, &cb, fd);
    if (sendmsg(sock, &m, MSG_NOSIGNAL) < 0)
      _exit(0);
  }
}

static double floor_once(int sock, const char *file) {
  size_t plen = strlen(file) + 1;
  char req[sizeof(sbx_broker_request) + PATH_MAX];
  memset(req, 0, sizeof(sbx_broker_request));
  memcpy(req + sizeof(sbx_broker_request), file, plen);
  double t0 = now_us();
  for (int i = 0; i < ITERS; i++) {
    send(sock, req, sizeof(sbx_broker_request) + plen, MSG_NOSIGNAL);
    char rep[sizeof(sbx_broker_reply)];
    struct iovec iov = {.iov_base = rep, .iov_len = sizeof(rep)};
    union {
      char c[CMSG_SPACE(sizeof(int))];
      struct cmsghdr align;
    } cb;
    struct msghdr m = {.msg_iov = &iov,
                       .msg_iovlen = 1,
                       .msg_control = cb.c,
                       .msg_controllen = sizeof(cb.c)};
    if (recvmsg(sock, &m, MSG_CMSG_CLOEXEC) > 0) {
      struct cmsghdr *c = CMSG_FIRSTHDR(&m);
      if (c) {
        int fd;
        memcpy(&fd, CMSG_DATA(c), sizeof(int));
        close(fd);
      }
    }
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd >= 0)
      close(fd);
  }
  return (now_us() - t0) / ITERS;
}

gboolean sbx_bench_broker_open(double *value, double *floor, GError **error) {
  bench_env e;
  if (!env_start(&e, error)) {
    env_stop(&e);
    return FALSE;
  }
  int ch = sbx_broker_connect(e.broker, "bench", error);
  if (ch < 0) {
    env_stop(&e);
    return FALSE;
  }
  sbx_broker_client c;
  sbx_broker_client_init(&c, ch);
  int sv[2];
  socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv);
  int payload = open(e.file, O_RDONLY | O_CLOEXEC);
  pid_t srv = fork();
  if (srv == 0) {
    close(sv[0]);
    echo_fd_server(sv[1], payload);
  }
  close(sv[1]);
  close(payload);
  double v[REPS], f[REPS];
  gboolean ok = TRUE;
  for (int r = 0; r < REPS && ok; r++) {
    f[r] = floor_once(sv[0], e.file);
    double t0 = now_us();
    for (int i = 0; i < ITERS; i++) {
      int fd = sbx_broker_open(&c, e.file, O_RDONLY | O_CLOEXEC, 0);
      if (fd < 0) {
        g_set_error(error, SBX_BROKER_ERROR, SBX_BROKER_ERROR_FAILED,
                    "brokered open of %s: %s", e.file, g_strerror(-fd));
        ok = FALSE;
        break;
      }
      close(fd);
    }
    v[r] = (now_us() - t0) / ITERS;
  }
  close(sv[0]);
  waitpid(srv, NULL, 0);
  close(ch);
  env_stop(&e);
  if (!ok)
    return FALSE;
  *value = median(v, REPS);
  *floor = median(f, REPS);
  return TRUE;
}

#define P99_THREADS 16
#define P99_CHANNELS 4
#define P99_OPENS 1000

typedef struct {
  sbx_broker_client *client;
  const char *file;
  double *lat;
  int failures;
} p99_job;

static void *p99_worker(void *arg) {
  p99_job *j = arg;
  for (int i = 0; i < P99_OPENS; i++) {
    double t0 = now_us();
    int fd = sbx_broker_open(j->client, j->file, O_RDONLY | O_CLOEXEC, 0);
    j->lat[i] = now_us() - t0;
    if (fd < 0)
      j->failures++;
    else
      close(fd);
  }
  return NULL;
}

gboolean sbx_bench_broker_open_p99(double *value, double *floor,
                                   GError **error) {
  bench_env e;
  if (!env_start(&e, error)) {
    env_stop(&e);
    return FALSE;
  }
  sbx_broker_client clients[P99_CHANNELS];
  for (int i = 0; i < P99_CHANNELS; i++) {
    int ch = sbx_broker_connect(e.broker, "bench", error);
    if (ch < 0) {
      for (int k = 0; k < i; k++)
        close(clients[k].channel);
      env_stop(&e);
      return FALSE;
    }
    sbx_broker_client_init(&clients[i], ch);
  }
  double *single = g_new(double, P99_OPENS);
  p99_job one = {&clients[0], e.file, single, 0};
  p99_worker(&one);
  double p50 = median(single, P99_OPENS);
  double *all = g_new(double, P99_THREADS *P99_OPENS);
  p99_job jobs[P99_THREADS];
  pthread_t th[P99_THREADS];
  for (int i = 0; i < P99_THREADS; i++) {
    jobs[i] =
        (p99_job){&clients[i % P99_CHANNELS], e.file, all + i * P99_OPENS, 0};
    pthread_create(&th[i], NULL, p99_worker, &jobs[i]);
  }
  int failures = one.failures;
  for (int i = 0; i < P99_THREADS; i++) {
    pthread_join(th[i], NULL);
    failures += jobs[i].failures;
  }
  size_t n = P99_THREADS * P99_OPENS;
  qsort(all, n, sizeof(double), cmp_double);
  double p99 = all[(n * 99) / 100];
  g_free(single);
  g_free(all);
  for (int i = 0; i < P99_CHANNELS; i++)
    close(clients[i].channel);
  env_stop(&e);
  if (failures) {
    g_set_error(error, SBX_BROKER_ERROR, SBX_BROKER_ERROR_FAILED,
                "%d brokered opens failed during the benchmark", failures);
    return FALSE;
  }
  *value = p99;
  *floor = p50;
  return TRUE;
}
