/* What one worker may learn of another, and how much of the machine it may
 * take, inside real workers under the built-in renderer profile: S36 (no
 * buffer carries one worker's input into the next), S38 (limits bound one
 * worker's memory and threads, and its siblings keep working), S39
 * (capget is no oracle of which pids exist), S18 (datagram socket pairs,
 * which could send to any pathname socket), and the report of a worker
 * killed before any handler ran. Each attack has a positive control in
 * which the same operation works, or the same scan finds what it looks
 * for.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/capability.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "sandbox/tests/zygote/escape_util.h"

#if defined(__SANITIZE_ADDRESS__)
#define ASAN_BUILD 1
#endif

enum {
  A_HOLD = 1,     /* just receive the payload */
  A_SCAN_PAYLOAD, /* look for the pattern in the rest of the payload buffer */
  A_SCAN_MEMORY,  /* look for it in every writable mapping */
  A_CAPGET,       /* capget(pid) */
  A_SOCKETPAIR,   /* socketpair(AF_UNIX, type) */
  A_MAP,          /* mmap `bytes` of address space */
  A_THREADS,      /* start up to `count` threads that wait */
  A_X32,          /* an x32 system call */
  A_RLIMIT,       /* getrlimit(resource) */
  A_METADATA,     /* change fd 4's metadata, the way `arg` names */
};

/* The pattern a scan looks for is sent XORed with this, so that the
 * scanning worker never holds the plain bytes itself. */
#define MASK 0x5a
#define SECRET_LEN 48

typedef struct {
  int id;
  long arg;
  size_t pattern_len;
  unsigned char pattern[SECRET_LEN]; /* XORed with MASK */
} request;

typedef struct {
  long ret;
  long err;
  long found;   /* scans: how many places hold the pattern */
  long scanned; /* scans: bytes looked at */
  uint32_t data[4];
} reply;

/* ---- Worker side (no Check calls) --------------------------------------- */

/* Reads memory the sanitizer calls poisoned (redzones, freed blocks):
 * that is where stale bytes would be. */
__attribute__((no_sanitize_address)) static long count_pattern(
    const unsigned char *p, size_t len, const request *q) {
  long found = 0;
  size_t n = q->pattern_len;
  for (size_t i = 0; n && i + n <= len; i++) {
    size_t j = 0;
    while (j < n && (unsigned char)(p[i + j] ^ MASK) == q->pattern[j])
      j++;
    found += j == n;
  }
  return found;
}

/* Every readable, writable mapping of the worker: where a copy of another
 * worker's bytes would live (heap, stacks, data, buffers). */
static void scan_memory(const request *q, reply *r) {
  FILE *maps = fopen("/proc/self/maps", "re");
  if (!maps) {
    r->ret = -1;
    r->err = errno;
    return;
  }
  char line[512];
  while (fgets(line, sizeof line, maps)) {
    unsigned long lo, hi;
    char perms[5];
    if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) != 3)
      continue;
    if (perms[0] != 'r' || perms[1] != 'w' || strstr(line, "[v"))
      continue;
    /* Reservations larger than anything these workers allocate (a
     * sanitizer's shadow memory: terabytes of untouched pages). */
    if (hi - lo > (256ul << 20))
      continue;
    const unsigned char *p = (const unsigned char *)lo;
    size_t len = hi - lo;
    /* The request itself holds the masked pattern, never the plain one. */
    r->found += count_pattern(p, len, q);
    r->scanned += (long)len;
  }
  fclose(maps);
}

/* The calls that change a file's metadata through a descriptor (S26a). */
enum {
  M_FCHMOD,
  M_FCHOWN,
  M_FSETXATTR,
  M_FREMOVEXATTR,
  M_FUTIMENS,
  M_SETFLAGS,
  M_FALLOCATE,
  M_COUNT,
};

static const char *const kMetadataCalls[M_COUNT] = {
    "fchmod",   "fchown",          "fsetxattr", "fremovexattr",
    "futimens", "FS_IOC_SETFLAGS", "fallocate",
};

static long change_metadata(int fd, int how) {
  switch (how) {
    case M_FCHMOD:
      return fchmod(fd, 06777);
    case M_FCHOWN:
      return fchown(fd, getuid(), getgid());
    case M_FSETXATTR:
      return fsetxattr(fd, "user.sbx", "x", 1, 0);
    case M_FREMOVEXATTR:
      return fremovexattr(fd, "user.sbx");
    case M_FUTIMENS: {
      const struct timespec t[2] = {{.tv_sec = 1}, {.tv_sec = 1}};
      return futimens(fd, t);
    }
    case M_SETFLAGS: {
      /* The flags it has: a change the owner may always make. */
      int flags = 0;
      if (ioctl(fd, FS_IOC_GETFLAGS, &flags) != 0)
        flags = 0;
      return ioctl(fd, FS_IOC_SETFLAGS, &flags);
    }
    case M_FALLOCATE:
      return fallocate(fd, 0, 0, 4096);
    default:
      errno = EINVAL;
      return -1;
  }
}

static void *wait_forever(void *arg) {
  (void)arg;
  for (;;)
    pause();
  return NULL;
}

static void run_attack(const sbx_zygote_worker *args, reply *r) {
  const request *q = args->payload;
  errno = 0;
  switch (q->id) {
    case A_HOLD:
      r->ret = 0;
      break;
    case A_SCAN_PAYLOAD: {
      /* The receive buffer goes on for the largest payload after this
       * one's end: exactly where an earlier, longer payload would be. */
      const unsigned char *p = args->payload;
      r->found = count_pattern(p, SBX_ZYGOTE_MAX_PAYLOAD, q);
      r->scanned = SBX_ZYGOTE_MAX_PAYLOAD;
      break;
    }
    case A_SCAN_MEMORY:
      scan_memory(q, r);
      break;
    case A_CAPGET: {
      struct __user_cap_header_struct h = {
          .version = _LINUX_CAPABILITY_VERSION_3, .pid = (int)q->arg};
      struct __user_cap_data_struct d[2];
      memset(d, 0xff, sizeof d);
      r->ret = syscall(SYS_capget, &h, d);
      for (int i = 0; i < 2; i++)
        r->data[i] = d[i].effective | d[i].permitted | d[i].inheritable;
      break;
    }
    case A_SOCKETPAIR: {
      int sv[2];
      r->ret = socketpair(AF_UNIX, (int)q->arg | SOCK_CLOEXEC, 0, sv);
      break;
    }
    case A_MAP: {
      void *p = mmap(NULL, (size_t)q->arg, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      r->ret = p == MAP_FAILED ? -1 : 0;
      break;
    }
    case A_THREADS: {
      long started = 0;
      int rc = 0;
      while (started < q->arg) {
        pthread_t t;
        rc = pthread_create(&t, NULL, wait_forever, NULL);
        if (rc != 0)
          break;
        started++;
      }
      r->ret = started;
      r->err = rc;
      escape_reply(r, sizeof *r);
      _exit(0); /* the waiting threads end with the process */
    }
    case A_X32:
      r->ret = syscall(0x40000000 | __NR_getpid);
      break;
    case A_METADATA:
      r->ret = change_metadata(4, (int)q->arg);
      break;
    case A_RLIMIT: {
      struct rlimit lim;
      r->ret = getrlimit((int)q->arg, &lim);
      r->data[0] = (uint32_t)(lim.rlim_cur >> 20); /* MiB */
      break;
    }
    default:
      r->ret = -2;
  }
  if (r->ret == -1)
    r->err = errno;
}

static int entry(const sbx_zygote_worker *args) {
  reply r;
  memset(&r, 0, sizeof r);
  if (args->payload_len < sizeof(request))
    return 90;
  run_attack(args, &r);
  escape_reply(&r, sizeof r);
  return 0;
}

/* ---- Host side ----------------------------------------------------------- */

static void setup(void) {
  escape_start(entry);
}

static void teardown(void) {
  escape_stop();
}

/* The same attacks on pooled workers: forked ahead, every layer on, then
 * handed their job. */
static void setup_pooled(void) {
  escape_set_pool(2);
  escape_start(entry);
}

static void teardown_pooled(void) {
  escape_stop();
  escape_set_pool(0);
}

static reply run(const char *type, const request *q, size_t len) {
  reply r;
  memset(&r, 0, sizeof r);
  escape_outcome o = escape_run(type, q, len, &r, sizeof r);
  ck_assert_msg(o.wrote, "%s worker ended without a reply: %s", type,
                o.exit.detail);
  return r;
}

static request request_for(int id, long arg) {
  request q;
  memset(&q, 0, sizeof q);
  q.id = id;
  q.arg = arg;
  return q;
}

/* A secret made now, after the zygote started: it exists nowhere but here
 * and in what this test sends. */
static void make_secret(unsigned char *secret) {
  for (size_t i = 0; i < SECRET_LEN; i++)
    secret[i] = (unsigned char)g_random_int_range(1, 256);
}

static request scan_request(int id, const unsigned char *secret) {
  request q = request_for(id, 0);
  q.pattern_len = SECRET_LEN;
  for (size_t i = 0; i < SECRET_LEN; i++)
    q.pattern[i] = secret[i] ^ MASK;
  return q;
}

/* A payload of 32 KiB whose request holds the secret, repeated after it. */
static unsigned char *secret_payload(int id, const unsigned char *secret,
                                     size_t *len) {
  *len = 32 * 1024;
  unsigned char *payload = g_malloc0(*len);
  request q = scan_request(id, secret);
  memcpy(payload, &q, sizeof q);
  for (size_t off = sizeof q; off + SECRET_LEN <= *len; off += 4096)
    memcpy(payload + off, secret, SECRET_LEN);
  return payload;
}

/* ---- S36 ----------------------------------------------------------------- */

START_TEST(worker_cannot_read_an_earlier_workers_payload) {
  unsigned char secret[SECRET_LEN];
  make_secret(secret);
  size_t len;
  g_autofree unsigned char *held = secret_payload(A_HOLD, secret, &len);
  const char *const types[] = {"sandboxed", "control"};
  for (size_t t = 0; t < G_N_ELEMENTS(types); t++) {
    /* The first worker receives the secret and ends. */
    reply first = run(types[t], (const request *)held, len);
    ck_assert_int_eq(first.ret, 0);
    /* The next, with a short payload, looks where it would be. */
    request scan = scan_request(A_SCAN_PAYLOAD, secret);
    reply next = run(types[t], &scan, sizeof scan);
    ck_assert_int_eq(next.scanned, SBX_ZYGOTE_MAX_PAYLOAD);
    ck_assert_msg(next.found == 0, "%s: %ld copies of the secret", types[t],
                  next.found);
  }
  /* Anywhere in its memory (the control type may read /proc/self/maps). */
  reply again = run("control", (const request *)held, len);
  ck_assert_int_eq(again.ret, 0);
  request scan = scan_request(A_SCAN_MEMORY, secret);
  reply whole = run("control", &scan, sizeof scan);
  ck_assert_msg(whole.ret == 0, "maps: errno %ld", whole.err);
  ck_assert_int_gt(whole.scanned, 0);
  ck_assert_msg(whole.found == 0, "%ld copies of the secret in memory",
                whole.found);

  /* Control: the same scans find the secret where it really is. */
  g_autofree unsigned char *own = secret_payload(A_SCAN_PAYLOAD, secret, &len);
  reply self = run("sandboxed", (const request *)own, len);
  ck_assert_int_ge(self.found, 7);
  g_autofree unsigned char *own_mem =
      secret_payload(A_SCAN_MEMORY, secret, &len);
  reply self_mem = run("control", (const request *)own_mem, len);
  ck_assert_int_ge(self_mem.found, 7);
}
END_TEST

/* ---- S37 ---------------------------------------------------------------- */

/* The start of the first mapping of libc in a maps file, or 0. */
static unsigned long libc_base(const char *maps_path) {
  g_autofree char *maps = NULL;
  if (!g_file_get_contents(maps_path, &maps, NULL, NULL))
    return 0;
  g_auto(GStrv) lines = g_strsplit(maps, "\n", -1);
  for (char **l = lines; *l; l++) {
    if (strstr(*l, "/libc.so"))
      return strtoul(*l, NULL, 16);
  }
  return 0;
}

static void probe_libc_base(int reply_fd, const void *arg) {
  (void)arg;
  reply r = {.ret = (long)libc_base("/proc/self/maps")};
  escape_reply_to(reply_fd, &r, sizeof r);
}

START_TEST(the_broker_has_a_layout_of_its_own) {
  pid_t broker = escape_broker_pid();
  /* A program of its own, started by exec, not a fork of the host. */
  g_autofree char *comm_path = g_strdup_printf("/proc/%d/comm", (int)broker);
  g_autofree char *comm = NULL;
  ck_assert(g_file_get_contents(comm_path, &comm, NULL, NULL));
  ck_assert_str_eq(g_strstrip(comm), "sbx-broker");
  if (geteuid() != 0)
    return; /* the broker is undumpable: only root may read its maps */
  g_autofree char *maps = g_strdup_printf("/proc/%d/maps", (int)broker);
  unsigned long here = libc_base("/proc/self/maps");
  unsigned long there = libc_base(maps);
  ck_assert_uint_ne(here, 0);
  ck_assert_uint_ne(there, 0);
  ck_assert_msg(here != there, "libc at %#lx in both", here);
  /* Control: a fork of this test has libc where this test has it, so the
   * comparison does see a shared layout. */
  reply forked;
  ck_assert(escape_run_unsandboxed(false, probe_libc_base, NULL, &forked,
                                   sizeof forked));
  ck_assert_uint_eq((unsigned long)forked.ret, here);
}
END_TEST

/* ---- S26a ---------------------------------------------------------------- */

static reply run_with_fd(const char *type, const request *q, int fd) {
  reply r;
  memset(&r, 0, sizeof r);
  int reply_fd;
  pid_t pid = escape_spawn(type, q, sizeof *q, &fd, 1, &reply_fd);
  bool wrote = escape_read_reply(reply_fd, &r, sizeof r);
  close(reply_fd);
  sbx_zygote_exit e = escape_wait(pid);
  ck_assert_msg(wrote, "%s worker ended without a reply: %s", type, e.detail);
  return r;
}

START_TEST(worker_cannot_change_metadata_through_a_descriptor) {
  /* A file the worker's user owns, handed over read-write: the kernel
   * itself would let the owner change every one of these. */
  g_autofree char *dir = g_dir_make_tmp("sbx-meta-XXXXXX", NULL);
  ck_assert_ptr_nonnull(dir);
  g_autofree char *file = g_build_filename(dir, "owned", NULL);
  int fd = open(file, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(fchown(fd, escape_expected_uid(), escape_expected_gid()), 0);
  ck_assert_int_eq(fsetxattr(fd, "user.sbx", "x", 1, 0) == 0 ||
                       errno == ENOTSUP || errno == EOPNOTSUPP,
                   1);
  for (int how = 0; how < M_COUNT; how++) {
    request q = request_for(A_METADATA, how);
    struct stat before, after;
    ck_assert_int_eq(fstat(fd, &before), 0);
    const char *const types[] = {"sandboxed", "brokered"};
    for (size_t t = 0; t < G_N_ELEMENTS(types); t++) {
      reply r = run_with_fd(types[t], &q, fd);
      ck_assert_msg(r.ret == -1 && r.err == EPERM, "%s in %s: %ld (errno %ld)",
                    kMetadataCalls[how], types[t], r.ret, r.err);
    }
    ck_assert_int_eq(fstat(fd, &after), 0);
    ck_assert_int_eq(after.st_mode, before.st_mode);
    ck_assert_int_eq(after.st_size, before.st_size);
    ck_assert_int_eq(after.st_mtim.tv_sec, before.st_mtim.tv_sec);
    /* Control: the same call in a worker without the layers reaches the
     * kernel, which lets the owner make it (or says the file system cannot:
     * then there was nothing to refuse). */
    reply c = run_with_fd("control", &q, fd);
    if (c.ret == -1 && (c.err == ENOTSUP || c.err == EOPNOTSUPP ||
                        c.err == ENOTTY || c.err == ENODATA))
      continue;
    ck_assert_msg(c.ret == 0, "control %s: errno %ld", kMetadataCalls[how],
                  c.err);
  }
  close(fd);
  g_unlink(file);
  g_rmdir(dir);
}
END_TEST

/* ---- S39 ---------------------------------------------------------------- */

START_TEST(capget_is_no_oracle_of_which_pids_exist) {
  /* In the worker's pid namespace the zygote is 1; 4000000 is beyond
   * pid_max, so it exists nowhere. */
  const char *const types[] = {"sandboxed", "brokered"};
  for (size_t t = 0; t < G_N_ELEMENTS(types); t++) {
    request q = request_for(A_CAPGET, 1);
    reply zygote = run(types[t], &q, sizeof q);
    q.arg = 4000000;
    reply none = run(types[t], &q, sizeof q);
    ck_assert_int_eq(zygote.ret, -1);
    ck_assert_int_eq(zygote.err, EPERM);
    ck_assert_int_eq(none.ret, -1);
    ck_assert_int_eq(none.err, EPERM);
    /* Its own sets: answered, and empty (S33). */
    q.arg = 0;
    reply self = run(types[t], &q, sizeof q);
    ck_assert_int_eq(self.ret, 0);
    ck_assert_uint_eq(self.data[0] | self.data[1], 0);
  }
  /* Control: without the layers the kernel tells the two apart. */
  request q = request_for(A_CAPGET, 1);
  reply zygote = run("control", &q, sizeof q);
  ck_assert_int_eq(zygote.ret, 0);
  q.arg = 4000000;
  reply none = run("control", &q, sizeof q);
  ck_assert_int_eq(none.ret, -1);
  ck_assert_int_eq(none.err, ESRCH);
}
END_TEST

/* ---- S18 ----------------------------------------------------------------- */

START_TEST(worker_cannot_make_a_datagram_socket_pair) {
  request q = request_for(A_SOCKETPAIR, SOCK_DGRAM);
  reply dgram = run("sandboxed", &q, sizeof q);
  ck_assert_int_eq(dgram.ret, -1);
  ck_assert_int_eq(dgram.err, EPERM);
  /* Stream and seqpacket pairs stay: the broker client needs them. */
  q.arg = SOCK_SEQPACKET;
  ck_assert_int_eq(run("sandboxed", &q, sizeof q).ret, 0);
  q.arg = SOCK_STREAM;
  ck_assert_int_eq(run("sandboxed", &q, sizeof q).ret, 0);
  /* Control: the kernel makes datagram pairs. */
  q.arg = SOCK_DGRAM;
  ck_assert_int_eq(run("control", &q, sizeof q).ret, 0);
}
END_TEST

/* ---- S38 ----------------------------------------------------------------- */

#ifndef ASAN_BUILD
static void probe_map(int reply_fd, const void *arg) {
  const request *q = arg;
  void *p = mmap(NULL, (size_t)q->arg, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  reply r = {.ret = p == MAP_FAILED ? -1 : 0};
  escape_reply_to(reply_fd, &r, sizeof r);
}

static void probe_threads(int reply_fd, const void *arg) {
  const request *q = arg;
  long started = 0;
  while (started < q->arg) {
    pthread_t t;
    if (pthread_create(&t, NULL, wait_forever, NULL) != 0)
      break;
    started++;
  }
  reply r = {.ret = started};
  escape_reply_to(reply_fd, &r, sizeof r);
  _exit(0);
}

#endif

START_TEST(limits_bound_one_workers_memory_and_threads) {
  request q = request_for(A_RLIMIT, RLIMIT_AS);
  reply as = run("sandboxed", &q, sizeof q);
  ck_assert_int_eq(as.ret, 0);
#ifdef ASAN_BUILD
  /* The sanitizer's shadow memory leaves no room for an address-space
   * limit (rlimits.h): only the other limits apply here. */
  ck_assert_uint_gt(as.data[0], 2048);
#else
  ck_assert_uint_eq(as.data[0], 2048); /* renderer.profile: as=2G */
  /* 3 GiB of address space, even untouched, is refused. */
  q = request_for(A_MAP, 3l << 30);
  reply big = run("sandboxed", &q, sizeof q);
  ck_assert_int_eq(big.ret, -1);
  ck_assert_int_eq(big.err, ENOMEM);
  /* A thousand threads do not start: each needs a stack. */
  q = request_for(A_THREADS, 1000);
  reply threads = run("sandboxed", &q, sizeof q);
  ck_assert_int_gt(threads.ret, 0);
  ck_assert_int_lt(threads.ret, 1000);
  ck_assert_int_eq(threads.err, EAGAIN);
  /* Controls: unlimited, the same requests succeed. */
  reply control;
  q = request_for(A_MAP, 3l << 30);
  ck_assert(
      escape_run_unsandboxed(false, probe_map, &q, &control, sizeof control));
  ck_assert_int_eq(control.ret, 0);
  q = request_for(A_THREADS, 1000);
  ck_assert(escape_run_unsandboxed(false, probe_threads, &q, &control,
                                   sizeof control));
  ck_assert_int_eq(control.ret, 1000);
#endif
  /* The exhausted worker is gone; a sibling still works. */
  q = request_for(A_HOLD, 0);
  ck_assert_int_eq(run("sandboxed", &q, sizeof q).ret, 0);
  q = request_for(A_SOCKETPAIR, SOCK_STREAM);
  ck_assert_int_eq(run("brokered", &q, sizeof q).ret, 0);
}
END_TEST

/* ---- Reports of kills no handler saw ------------------------------------- */

START_TEST(kills_before_any_handler_are_reported_for_what_they_are) {
  request q = request_for(A_X32, 0);
  reply r;
  escape_outcome x32 = escape_run("sandboxed", &q, sizeof q, &r, sizeof r);
  ck_assert(!x32.wrote);
  ck_assert_int_eq(x32.exit.signal, SIGSYS);
  ck_assert_msg(strstr(x32.exit.detail, "kill verdict"), "%s", x32.exit.detail);
  ck_assert_msg(strstr(x32.exit.detail, "another architecture"), "%s",
                x32.exit.detail);
  /* Control: an x32 call without the layers is no kill at all. */
  q = request_for(A_X32, 0);
  escape_outcome control = escape_run("control", &q, sizeof q, &r, sizeof r);
  ck_assert_msg(control.wrote, "%s", control.exit.detail);
}
END_TEST

static Suite *escape_isolation_suite(void) {
  Suite *s = suite_create("escape_isolation");
  TCase *tc = tcase_create("renderer");
  tcase_set_timeout(tc, 60);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, worker_cannot_read_an_earlier_workers_payload);
  tcase_add_test(tc, the_broker_has_a_layout_of_its_own);
  tcase_add_test(tc, worker_cannot_change_metadata_through_a_descriptor);
  tcase_add_test(tc, capget_is_no_oracle_of_which_pids_exist);
  tcase_add_test(tc, worker_cannot_make_a_datagram_socket_pair);
  tcase_add_test(tc, limits_bound_one_workers_memory_and_threads);
  tcase_add_test(tc, kills_before_any_handler_are_reported_for_what_they_are);
  suite_add_tcase(s, tc);
  TCase *pooled = tcase_create("renderer_pooled");
  tcase_set_timeout(pooled, 60);
  tcase_add_checked_fixture(pooled, setup_pooled, teardown_pooled);
  tcase_add_test(pooled, worker_cannot_read_an_earlier_workers_payload);
  tcase_add_test(pooled, the_broker_has_a_layout_of_its_own);
  tcase_add_test(pooled, worker_cannot_change_metadata_through_a_descriptor);
  tcase_add_test(pooled, capget_is_no_oracle_of_which_pids_exist);
  tcase_add_test(pooled, worker_cannot_make_a_datagram_socket_pair);
  tcase_add_test(pooled, limits_bound_one_workers_memory_and_threads);
  tcase_add_test(pooled,
                 kills_before_any_handler_are_reported_for_what_they_are);
  suite_add_tcase(s, pooled);
  return s;
}

int main(void) {
  return escape_main(escape_isolation_suite());
}
