/* Renderer worker benchmarks through the public API; see worker_bench.h.
 *
 * Why it exists: the zygote's promise is that a worker with every layer
 * costs little more than a fork, and that code inside it runs at nearly
 * native speed. These functions measure exactly that, with workers a host
 * would get from sbx_sandbox_spawn (the renderer profile, layer 1 and a
 * broker channel of their own), and a floor taken in the same run.
 *
 * What it trusts: the clock, and what workers write back on the pipes the
 * host passes them. What it refuses: to report a number it could not
 * measure - a worker that ends without writing, a bwrap that does not
 * run, a /proc file the kernel will not open, each becomes an error or a
 * "skipped: " reason instead.
 */
#include "tools/sbx-bench/worker_bench.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/kernel/namespaces/status.h"
#include "tools/sbx-bench/measure.h"
#include "sbx/sbx.h"

#define PROFILE "renderer"
#define SPAWN_ROUNDS 60
#define BWRAP_ROUNDS 10
#define SPAWNS_PER_BWRAP 4
#define IDLE_WORKERS 5
#define LOOP_REPS 5
#define GETPID_CALLS 100000
#define ARGCHECK_CALLS 50000
#define WAIT_MS 20000
/* The worker's descriptors: stdio, the host's pipe, the release pipe. */
#define REPORT_FD 3
#define RELEASE_FD 4

/* What a worker does, chosen by the first payload byte. */
enum {
  MODE_STAMP,    /* write the time the entry function started, exit */
  MODE_GETPID,   /* time the getpid loop, write ns per call, exit */
  MODE_ARGCHECK, /* time the fcntl + futex loop, write ns per pair, exit */
  MODE_IDLE,     /* write one byte, wait for one byte, exit */
  MODE_OPEN,     /* time the open + close loop of DIRECT_FILE, ns per pair */
};

/* The measured loop, run unchanged in the host (the floor) and in the
 * worker. Raw syscall() so that no libc caching stands between the loop
 * and the filter. Returns the median over LOOP_REPS, in ns per iteration. */
/* A file under a tree renderer.profile marks direct (libc itself). */
#define DIRECT_FILE "/usr/lib/x86_64-linux-gnu/libc.so.6"
#define OPEN_CALLS 2000

static double loop_ns(int mode) {
  double v[LOOP_REPS];
  int futex_word = 0;
  long calls = mode == MODE_GETPID ? GETPID_CALLS
               : mode == MODE_OPEN ? OPEN_CALLS
                                   : ARGCHECK_CALLS;
  for (int r = 0; r < LOOP_REPS; r++) {
    double t0 = sbx_bench_now_us();
    if (mode == MODE_OPEN) {
      /* open(2) as libc issues it (openat): trapped in a worker. */
      for (long i = 0; i < calls; i++) {
        int fd = open(DIRECT_FILE, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
          return -1;
        close(fd);
      }
    } else if (mode == MODE_GETPID) {
      for (long i = 0; i < calls; i++)
        syscall(__NR_getpid);
    } else {
      for (long i = 0; i < calls; i++) {
        syscall(__NR_fcntl, 0, F_GETFD);
        syscall(__NR_futex, &futex_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
      }
    }
    v[r] = (sbx_bench_now_us() - t0) * 1e3 / (double)calls;
  }
  return sbx_bench_median(v, LOOP_REPS);
}

static gboolean write_full(int fd, const void *buf, size_t len) {
  return write(fd, buf, len) == (ssize_t)len;
}

/* Inside the worker, after every layer: REPORT_FD is the host's pipe,
 * RELEASE_FD (in MODE_IDLE) the release pipe. */
static int bench_entry(const sbx_worker_args *args) {
  int mode = args->payload_len ? *(const unsigned char *)args->payload : -1;
  switch (mode) {
    case MODE_STAMP: {
      double t = sbx_bench_now_us();
      return write_full(REPORT_FD, &t, sizeof t) ? 0 : 1;
    }
    case MODE_GETPID:
    case MODE_OPEN:
    case MODE_ARGCHECK: {
      double ns = loop_ns(mode);
      return write_full(REPORT_FD, &ns, sizeof ns) ? 0 : 1;
    }
    case MODE_IDLE: {
      char c = 1;
      if (!write_full(REPORT_FD, &c, 1))
        return 1;
      return read(RELEASE_FD, &c, 1) == 1 ? 0 : 1;
    }
    default:
      return 2;
  }
}

typedef struct {
  sbx_sandbox *sandbox;
  int devnull; /* the workers' stdio */
} bench_host;

static void bench_host_stop(bench_host *b) {
  sbx_sandbox_stop(b->sandbox);
  if (b->devnull >= 0)
    close(b->devnull);
}

/* A host with one process type, "renderer", under the built-in renderer
 * profile, started as any host starts one; pool workers forked ahead. */
static gboolean bench_host_start_pooled(bench_host *b, unsigned pool,
                                        GError **error) {
  b->sandbox = NULL;
  b->devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (b->devnull < 0) {
    g_set_error(error, SBX_ERROR, SBX_ERROR_FAILED, "bench: open /dev/null: %s",
                g_strerror(errno));
    return FALSE;
  }
  sbx_process_type type =
      SBX_PROCESS_TYPE_INIT(.name = PROFILE, .entry = bench_entry,
                            .pool = pool);
  sbx_sandbox_config config =
      SBX_SANDBOX_CONFIG_INIT(.types = &type, .n_types = 1);
  if (!sbx_sandbox_start(&config, &b->sandbox, error)) {
    bench_host_stop(b);
    return FALSE;
  }
  return TRUE;
}

static gboolean bench_host_start(bench_host *b, GError **error) {
  return bench_host_start_pooled(b, 0, error);
}

/* The zygote's children that are ready for a job: asleep (state S, as
 * /proc/PID/stat gives it with their parent) with their filters on. A
 * pooled worker sleeps only in the receive of its job, once every layer
 * is on; one still putting its layers on runs (R, also when preempted)
 * and would take CPU from the spawn being timed. */
static unsigned zygote_ready_children(pid_t zygote) {
  unsigned n = 0;
  GDir *d = g_dir_open("/proc", 0, NULL);
  const char *name;
  while (d && (name = g_dir_read_name(d))) {
    if (!g_ascii_isdigit(name[0]))
      continue;
    g_autofree char *path = g_strdup_printf("/proc/%s/stat", name);
    g_autofree char *text = NULL;
    if (!g_file_get_contents(path, &text, NULL, NULL))
      continue;
    const char *after = strrchr(text, ')');
    char state;
    long ppid;
    if (after && sscanf(after + 1, " %c %ld", &state, &ppid) == 2 &&
        ppid == zygote && state == 'S' &&
        sbx_status_seccomp_filters((pid_t)atoi(name)) > 0)
      n++;
  }
  if (d)
    g_dir_close(d);
  return n;
}

/* Until the pool is full of ready workers (the zygote refills it when
 * idle), or 10 s. */
static gboolean await_pool(bench_host *b, unsigned pool, GError **error) {
  for (int i = 0; i < 1000; i++) {
    if (zygote_ready_children(sbx_sandbox_zygote_pid(b->sandbox)) >= pool)
      return TRUE;
    g_usleep(10000);
  }
  g_set_error(error, SBX_ERROR, SBX_ERROR_FAILED,
              "bench: the zygote did not fill its pool of %u ready workers "
              "in 10 s",
              pool);
  return FALSE;
}

/* Waits for a worker and insists that it exited 0. */
static gboolean bench_reap(bench_host *b, pid_t pid, GError **error) {
  sbx_worker_exit e = SBX_WORKER_EXIT_INIT();
  if (!sbx_sandbox_wait(b->sandbox, pid, WAIT_MS, &e, error))
    return FALSE;
  if (e.reason != SBX_EXIT_NORMAL || e.exit_code != 0) {
    g_set_error(error, SBX_ERROR, SBX_ERROR_FAILED,
                "bench: renderer worker %d ended badly: %s", (int)pid,
                e.detail);
    return FALSE;
  }
  return TRUE;
}

/* Spawns a worker in mode with the write end of a new pipe as REPORT_FD
 * (and release_fd as RELEASE_FD when >= 0); the read end goes to
 * *report_fd. */
static gboolean bench_spawn(bench_host *b, int mode, int release_fd, pid_t *pid,
                            int *report_fd, GError **error) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) < 0) {
    g_set_error(error, SBX_ERROR, SBX_ERROR_FAILED, "bench: pipe2: %s",
                g_strerror(errno));
    return FALSE;
  }
  unsigned char m = (unsigned char)mode;
  int fds[] = {b->devnull, b->devnull, b->devnull, p[1], release_fd};
  sbx_spawn_config spawn =
      SBX_SPAWN_CONFIG_INIT(.process_type = PROFILE, .payload = &m,
                            .payload_len = 1, .fds = fds,
                            .n_fds = release_fd >= 0 ? RELEASE_FD + 1
                                                     : REPORT_FD + 1);
  gboolean ok = sbx_sandbox_spawn(b->sandbox, &spawn, pid, error);
  close(p[1]);
  if (!ok) {
    close(p[0]);
    return FALSE;
  }
  *report_fd = p[0];
  return TRUE;
}

/* Runs one worker that writes len bytes and exits. */
static gboolean bench_run(bench_host *b, int mode, void *out, size_t len,
                          GError **error) {
  pid_t pid;
  int fd;
  if (!bench_spawn(b, mode, -1, &pid, &fd, error))
    return FALSE;
  gboolean wrote = sbx_bench_read_exact(fd, out, len);
  close(fd);
  if (!bench_reap(b, pid, error))
    return FALSE;
  if (!wrote) {
    g_set_error(error, SBX_ERROR, SBX_ERROR_FAILED,
                "bench: renderer worker %d exited without its measurement",
                (int)pid);
    return FALSE;
  }
  return TRUE;
}

/* sbx_sandbox_spawn (its broker connect included) to the worker's entry,
 * in microseconds: the worker stamps the clock (CLOCK_MONOTONIC is one
 * clock for every namespace sbx enters). */
static gboolean spawn_latency_us(bench_host *b, double *us, GError **error) {
  double t0 = sbx_bench_now_us(), entered;
  if (!bench_run(b, MODE_STAMP, &entered, sizeof entered, error))
    return FALSE;
  *us = entered - t0;
  return TRUE;
}

static double bare_fork_us(void) {
  double t0 = sbx_bench_now_us();
  pid_t child = fork();
  if (child == 0)
    _exit(0);
  if (child > 0)
    waitpid(child, NULL, 0);
  return sbx_bench_now_us() - t0;
}

gboolean sbx_bench_zygote_spawn(double *value, double *floor, GError **error) {
  bench_host b;
  if (!bench_host_start(&b, error))
    return FALSE;
  double spawn[SPAWN_ROUNDS], bare[SPAWN_ROUNDS], warm;
  /* One untimed worker: the zygote's first fork touches cold pages. */
  gboolean ok = spawn_latency_us(&b, &warm, error);
  for (int i = 0; ok && i < SPAWN_ROUNDS; i++) {
    ok = spawn_latency_us(&b, &spawn[i], error);
    bare[i] = bare_fork_us();
  }
  bench_host_stop(&b);
  if (!ok)
    return FALSE;
  *value = sbx_bench_median(spawn, SPAWN_ROUNDS);
  *floor = sbx_bench_median(bare, SPAWN_ROUNDS);
  return TRUE;
}

gboolean sbx_bench_warm_spawn(double *value, double *floor, GError **error) {
  bench_host b;
  if (!bench_host_start_pooled(&b, SBX_BENCH_POOL, error))
    return FALSE;
  double spawn[SPAWN_ROUNDS], bare[SPAWN_ROUNDS], warm;
  gboolean ok = await_pool(&b, SBX_BENCH_POOL, error) &&
                spawn_latency_us(&b, &warm, error);
  /* Each spawn takes a pooled worker; the zygote forks its replacement
   * while the host reaps, so the next spawn finds the pool full again. */
  for (int i = 0; ok && i < SPAWN_ROUNDS; i++) {
    ok = await_pool(&b, SBX_BENCH_POOL, error) &&
         spawn_latency_us(&b, &spawn[i], error);
    bare[i] = bare_fork_us();
  }
  bench_host_stop(&b);
  if (!ok)
    return FALSE;
  *value = sbx_bench_median(spawn, SPAWN_ROUNDS);
  *floor = sbx_bench_median(bare, SPAWN_ROUNDS);
  return TRUE;
}

/* The loop in a worker, and in the host before and after it. */
static gboolean syscall_bench(int mode, double *value, double *floor,
                              GError **error) {
  bench_host b;
  if (!bench_host_start(&b, error))
    return FALSE;
  double before = loop_ns(mode), inside = 0;
  gboolean ok = bench_run(&b, mode, &inside, sizeof inside, error);
  bench_host_stop(&b);
  if (!ok)
    return FALSE;
  double after = loop_ns(mode);
  *value = inside;
  *floor = (before + after) / 2;
  return TRUE;
}

gboolean sbx_bench_syscall_getpid(double *value, double *floor,
                                  GError **error) {
  return syscall_bench(MODE_GETPID, value, floor, error);
}

gboolean sbx_bench_syscall_argcheck(double *value, double *floor,
                                    GError **error) {
  return syscall_bench(MODE_ARGCHECK, value, floor, error);
}

gboolean sbx_bench_direct_open(double *value, double *floor, GError **error) {
  if (!syscall_bench(MODE_OPEN, value, floor, error))
    return FALSE;
  if (*value < 0 || *floor < 0) {
    g_set_error(error, SBX_ERROR, SBX_ERROR_FAILED,
                "bench: opening " DIRECT_FILE " failed %s",
                *value < 0 ? "in the renderer worker" : "unsandboxed");
    return FALSE;
  }
  return TRUE;
}

/* One bwrap run: its wall time in microseconds, or FALSE with the reason
 * (and what bwrap printed) in *error. */
static gboolean bwrap_us(char **argv, double *us, GError **error) {
  g_autofree char *err = NULL;
  int status = 0;
  GError *local = NULL;
  double t0 = sbx_bench_now_us();
  if (!g_spawn_sync(NULL, argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL,
                    NULL, &err, &status, &local)) {
    g_set_error(error, SBX_ERROR, SBX_ERROR_UNSUPPORTED,
                "skipped: cannot run %s: %s", argv[0], local->message);
    g_error_free(local);
    return FALSE;
  }
  *us = sbx_bench_now_us() - t0;
  if (!g_spawn_check_wait_status(status, &local)) {
    g_strstrip(err);
    g_set_error(error, SBX_ERROR, SBX_ERROR_UNSUPPORTED,
                "skipped: `bwrap --unshare-all --ro-bind / / /bin/true` "
                "fails here (%s): %s",
                local->message, err && *err ? err : "no message");
    g_error_free(local);
    return FALSE;
  }
  return TRUE;
}

gboolean sbx_bench_spawn_vs_bwrap(double *value, double *floor,
                                  GError **error) {
  g_autofree char *bwrap = g_find_program_in_path("bwrap");
  if (!bwrap) {
    g_set_error(error, SBX_ERROR, SBX_ERROR_UNSUPPORTED,
                "skipped: bwrap is not installed (Debian package bubblewrap), "
                "so there is no floor to compare with");
    return FALSE;
  }
  char *argv[] = {bwrap, "--unshare-all", "--ro-bind", "/",
                  "/",   "/bin/true",     NULL};
  double warm;
  /* Untimed first run: page cache, and the check that bwrap works here. */
  if (!bwrap_us(argv, &warm, error))
    return FALSE;
  bench_host b;
  if (!bench_host_start_pooled(&b, SBX_BENCH_POOL, error))
    return FALSE;
  double spawn[BWRAP_ROUNDS * SPAWNS_PER_BWRAP], wall[BWRAP_ROUNDS];
  gboolean ok = await_pool(&b, SBX_BENCH_POOL, error) &&
                spawn_latency_us(&b, &warm, error);
  for (int r = 0; ok && r < BWRAP_ROUNDS; r++) {
    ok = bwrap_us(argv, &wall[r], error);
    for (int i = 0; ok && i < SPAWNS_PER_BWRAP; i++)
      ok = await_pool(&b, SBX_BENCH_POOL, error) &&
           spawn_latency_us(&b, &spawn[r * SPAWNS_PER_BWRAP + i], error);
  }
  bench_host_stop(&b);
  if (!ok)
    return FALSE;
  *value = sbx_bench_median(spawn, G_N_ELEMENTS(spawn));
  *floor = sbx_bench_median(wall, BWRAP_ROUNDS);
  return TRUE;
}

/* Private_Dirty of pid, in KiB. The kernel checks ptrace read access when
 * the file is opened; for an undumpable process that needs CAP_SYS_PTRACE
 * over the user namespace its memory was created in: the sandbox's, which
 * the host owns, when the zygote was executed in it; else the host's. */
static gboolean private_dirty_kib(pid_t pid, double *kib, GError **error) {
  g_autofree char *path = g_strdup_printf("/proc/%d/smaps_rollup", (int)pid);
  g_autofree char *text = NULL;
  GError *local = NULL;
  if (!g_file_get_contents(path, &text, NULL, &local)) {
    gboolean denied =
        g_error_matches(local, G_FILE_ERROR, G_FILE_ERROR_ACCES) ||
        g_error_matches(local, G_FILE_ERROR, G_FILE_ERROR_PERM);
    if (denied)
      g_set_error(error, SBX_ERROR, SBX_ERROR_UNSUPPORTED,
                  "skipped: the kernel refuses to open %s (%s): the worker "
                  "is undumpable and its memory was made in a user namespace "
                  "this process has no CAP_SYS_PTRACE in (a zygote forked "
                  "from the host, or no user namespace of the sandbox's "
                  "own): run as root",
                  path, local->code == G_FILE_ERROR_ACCES ? "EACCES" : "EPERM");
    else
      g_set_error(error, SBX_ERROR, SBX_ERROR_FAILED, "bench: %s",
                  local->message);
    g_error_free(local);
    return FALSE;
  }
  const char *line = strstr(text, "\nPrivate_Dirty:");
  unsigned long long v;
  if (!line || sscanf(line, "\nPrivate_Dirty: %llu kB", &v) != 1) {
    g_set_error(error, SBX_ERROR, SBX_ERROR_FAILED,
                "bench: %s has no Private_Dirty line", path);
    return FALSE;
  }
  *kib = (double)v;
  return TRUE;
}

/* One idle worker: spawned, waited for at its entry function, measured,
 * released. */
static gboolean idle_worker_kib(bench_host *b, double *kib, GError **error) {
  int release[2];
  if (pipe2(release, O_CLOEXEC) < 0) {
    g_set_error(error, SBX_ERROR, SBX_ERROR_FAILED, "bench: pipe2: %s",
                g_strerror(errno));
    return FALSE;
  }
  pid_t pid;
  int fd;
  gboolean ok = bench_spawn(b, MODE_IDLE, release[0], &pid, &fd, error);
  close(release[0]);
  if (!ok) {
    close(release[1]);
    return FALSE;
  }
  char c;
  ok = sbx_bench_read_exact(fd, &c, 1);
  close(fd);
  if (!ok)
    g_set_error(error, SBX_ERROR, SBX_ERROR_FAILED,
                "bench: idle renderer worker %d never reached its entry",
                (int)pid);
  else
    ok = private_dirty_kib(pid, kib, error);
  c = 0;
  (void)!write(release[1], &c, 1);
  close(release[1]);
  GError *reap = NULL;
  if (!bench_reap(b, pid, ok ? error : &reap))
    ok = FALSE;
  g_clear_error(&reap);
  return ok;
}

gboolean sbx_bench_worker_private_kib(double *value, double *floor,
                                      GError **error) {
  bench_host b;
  if (!bench_host_start(&b, error))
    return FALSE;
  double kib[IDLE_WORKERS];
  gboolean ok = TRUE;
  for (int i = 0; ok && i < IDLE_WORKERS; i++)
    ok = idle_worker_kib(&b, &kib[i], error);
  bench_host_stop(&b);
  if (!ok)
    return FALSE;
  *value = sbx_bench_median(kib, IDLE_WORKERS);
  *floor = 0;
  return TRUE;
}

gboolean sbx_bench_max_workers(double *value, double *floor, GError **error) {
  bench_host b;
  if (!bench_host_start(&b, error))
    return FALSE;
  /* One report pipe and one release pipe for all: each worker writes a
   * byte when it runs, and every one ends when the release pipe closes. */
  int report[2], release[2];
  if (pipe2(report, O_CLOEXEC) < 0 || pipe2(release, O_CLOEXEC) < 0) {
    g_set_error(error, SBX_ERROR, SBX_ERROR_FAILED, "bench: pipe2: %s",
                g_strerror(errno));
    bench_host_stop(&b);
    return FALSE;
  }
  fcntl(report[1], F_SETPIPE_SZ, 1 << 20);
  unsigned char m = MODE_IDLE;
  int fds[] = {b.devnull, b.devnull, b.devnull, report[1], release[0]};
  sbx_spawn_config spawn =
      SBX_SPAWN_CONFIG_INIT(.process_type = PROFILE, .payload = &m,
                            .payload_len = 1, .fds = fds,
                            .n_fds = RELEASE_FD + 1);
  int alive = 0;
  g_autofree char *refusal = NULL;
  while (alive < SBX_BENCH_MAX_WORKERS_CAP) {
    pid_t pid;
    GError *local = NULL;
    if (!sbx_sandbox_spawn(b.sandbox, &spawn, &pid, &local)) {
      refusal = g_strdup(local->message);
      g_error_free(local);
      break;
    }
    alive++;
  }
  /* Every one of them really ran: a byte each. */
  int ran = 0;
  char buf[4096];
  while (ran < alive) {
    ssize_t n = read(report[0], buf, MIN(sizeof buf, (size_t)(alive - ran)));
    if (n <= 0)
      break;
    ran += (int)n;
  }
  close(release[1]);
  close(release[0]);
  close(report[1]);
  close(report[0]);
  gboolean ok = ran == alive;
  for (int i = 0; ok && i < alive; i++) {
    sbx_worker_exit e = SBX_WORKER_EXIT_INIT();
    ok = sbx_sandbox_wait(b.sandbox, -1, WAIT_MS, &e, error);
  }
  bench_host_stop(&b);
  if (ran != alive) {
    g_set_error(error, SBX_ERROR, SBX_ERROR_FAILED,
                "bench: %d workers spawned, %d reached their entry", alive,
                ran);
    return FALSE;
  }
  if (!ok)
    return FALSE;
  if (refusal && alive < SBX_BENCH_MAX_WORKERS_CAP)
    g_printerr("sbx-bench: max_workers: spawn %d refused: %s\n", alive + 1,
               refusal);
  *value = alive;
  *floor = 0;
  return TRUE;
}
