/* Resource limits that only narrow: names and the child-side apply, which
 * are async-signal-safe (prlimit64 via syscall, no allocation). The value
 * parser is rlimits.c. Refuses unknown resources. */
#include "sandbox/kernel/namespaces/rlimits.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

static const struct {
  int resource;
  const char *name; /* without the RLIMIT_ prefix */
} kLimits[] = {
    {RLIMIT_AS, "AS"},
    {RLIMIT_CORE, "CORE"},
    {RLIMIT_CPU, "CPU"},
    {RLIMIT_DATA, "DATA"},
    {RLIMIT_FSIZE, "FSIZE"},
    {RLIMIT_LOCKS, "LOCKS"},
    {RLIMIT_MEMLOCK, "MEMLOCK"},
    {RLIMIT_MSGQUEUE, "MSGQUEUE"},
    {RLIMIT_NICE, "NICE"},
    {RLIMIT_NOFILE, "NOFILE"},
    {RLIMIT_NPROC, "NPROC"},
    {RLIMIT_RSS, "RSS"},
    {RLIMIT_RTPRIO, "RTPRIO"},
    {RLIMIT_RTTIME, "RTTIME"},
    {RLIMIT_SIGPENDING, "SIGPENDING"},
    {RLIMIT_STACK, "STACK"},
};

#define N_LIMITS (sizeof(kLimits) / sizeof(kLimits[0]))

static char upper(char c) {
  return (c >= 'a' && c <= 'z') ? (char)(c - 'a' + 'A') : c;
}

static bool same_upper(const char *a, const char *b) {
  for (; *a && *b; a++, b++)
    if (upper(*a) != upper(*b))
      return false;
  return *a == *b;
}

/* Async-signal-safe. */
int sbx_rlimit_from_name(const char *name) {
  if (!name)
    return -1;
  if (upper(name[0]) == 'R' && upper(name[1]) == 'L' && upper(name[2]) == 'I' &&
      upper(name[3]) == 'M' && upper(name[4]) == 'I' && upper(name[5]) == 'T' &&
      name[6] == '_')
    name += 7;
  for (size_t i = 0; i < N_LIMITS; i++)
    if (same_upper(name, kLimits[i].name))
      return kLimits[i].resource;
  return -1;
}

/* Async-signal-safe. */
const char *sbx_rlimit_name(int resource) {
  static const char *const full[] = {
      [RLIMIT_AS] = "RLIMIT_AS",
      [RLIMIT_CORE] = "RLIMIT_CORE",
      [RLIMIT_CPU] = "RLIMIT_CPU",
      [RLIMIT_DATA] = "RLIMIT_DATA",
      [RLIMIT_FSIZE] = "RLIMIT_FSIZE",
      [RLIMIT_LOCKS] = "RLIMIT_LOCKS",
      [RLIMIT_MEMLOCK] = "RLIMIT_MEMLOCK",
      [RLIMIT_MSGQUEUE] = "RLIMIT_MSGQUEUE",
      [RLIMIT_NICE] = "RLIMIT_NICE",
      [RLIMIT_NOFILE] = "RLIMIT_NOFILE",
      [RLIMIT_NPROC] = "RLIMIT_NPROC",
      [RLIMIT_RSS] = "RLIMIT_RSS",
      [RLIMIT_RTPRIO] = "RLIMIT_RTPRIO",
      [RLIMIT_RTTIME] = "RLIMIT_RTTIME",
      [RLIMIT_SIGPENDING] = "RLIMIT_SIGPENDING",
      [RLIMIT_STACK] = "RLIMIT_STACK",
  };
  if (resource < 0 || (size_t)resource >= sizeof(full) / sizeof(full[0]))
    return NULL;
  return full[resource];
}

#if defined(__SANITIZE_ADDRESS__)
#define SBX_ASAN_BUILD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SBX_ASAN_BUILD 1
#endif
#endif

/* AddressSanitizer reserves terabytes of shadow memory when the process
 * starts; under an address-space or data limit every later mapping would
 * fail. Such builds leave those two limits out (see rlimits.h). */
static bool skipped_in_this_build(int resource) {
#ifdef SBX_ASAN_BUILD
  return resource == RLIMIT_AS || resource == RLIMIT_DATA;
#else
  (void)resource;
  return false;
#endif
}

/* Async-signal-safe. */
int sbx_rlimit_raise_nofile_raw(void) {
  struct rlimit lim;
  if (syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &lim) != 0)
    return -errno;
  if (lim.rlim_cur == lim.rlim_max)
    return 0;
  lim.rlim_cur = lim.rlim_max;
  return syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, &lim, NULL) != 0 ? -errno : 0;
}

/* Entry i against the caller's current limit: what it may be narrowed
 * to. 1 when this build skips the resource. Async-signal-safe. */
static int clamped(const sbx_rlimit *limit, struct rlimit *next) {
  struct rlimit cur;
  if (!sbx_rlimit_name(limit->resource))
    return -EINVAL;
  if (skipped_in_this_build(limit->resource))
    return 1;
  if (syscall(SYS_prlimit64, 0, limit->resource, NULL, &cur) != 0)
    return -errno;
  /* Only ever narrow: clamp to what the process already has. */
  next->rlim_max = limit->hard < cur.rlim_max ? limit->hard : cur.rlim_max;
  next->rlim_cur = limit->soft < next->rlim_max ? limit->soft : next->rlim_max;
  return 0;
}

static int set_one(int resource, const struct rlimit *next) {
  return syscall(SYS_prlimit64, 0, resource, next, NULL) != 0 ? -errno : 0;
}

/* Async-signal-safe. */
int sbx_rlimits_apply_raw(const sbx_rlimit *limits, size_t n,
                          size_t *failed_index) {
  for (size_t i = 0; i < n; i++) {
    struct rlimit next = {0, 0};
    int rc = clamped(&limits[i], &next);
    if (rc == 0)
      rc = set_one(limits[i].resource, &next);
    if (rc < 0) {
      if (failed_index)
        *failed_index = i;
      return rc;
    }
  }
  return 0;
}

/* Async-signal-safe. */
int sbx_rlimits_clamp_raw(sbx_rlimit *limits, size_t n, size_t *failed_index) {
  for (size_t i = 0; i < n; i++) {
    struct rlimit next = {0, 0};
    int rc = clamped(&limits[i], &next);
    if (rc < 0) {
      if (failed_index)
        *failed_index = i;
      return rc;
    }
    if (rc == 0) {
      limits[i].soft = next.rlim_cur;
      limits[i].hard = next.rlim_max;
    }
  }
  return 0;
}

/* Async-signal-safe. */
int sbx_rlimits_set_raw(const sbx_rlimit *limits, size_t n,
                        size_t *failed_index) {
  for (size_t i = 0; i < n; i++) {
    if (skipped_in_this_build(limits[i].resource))
      continue;
    struct rlimit next = {.rlim_cur = limits[i].soft,
                          .rlim_max = limits[i].hard};
    int rc = sbx_rlimit_name(limits[i].resource)
                 ? set_one(limits[i].resource, &next)
                 : -EINVAL;
    if (rc < 0) {
      if (failed_index)
        *failed_index = i;
      return rc;
    }
  }
  return 0;
}
