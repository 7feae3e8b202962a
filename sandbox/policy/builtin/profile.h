/* Profiles: everything about one process type in one GKeyFile.
 *
 * Why it exists: a process type is more than a seccomp policy. Which
 * filters stack in which order, what the broker lets it open, which
 * namespaces it lives in, whether Landlock must be there, its resource
 * limits - one file says all of it, so a reviewer reads one place. The
 * format is defined in docs/policies.md; in short:
 *
 *   [profile]     description=TEXT
 *                 seccomp=POLICY;POLICY...   stacked in this order, after
 *                                            the broker-client layer
 *                 require=seccomp;broker;userns;landlock
 *                                            layers that must be in place;
 *                                            absent: every enabled layer
 *   [broker]      rules=KIND PATH;...        the broker's allowlist rules
 *                 include=fonts;locale       named permission sets: the
 *                                            rules of builtin NAME.rules
 *                 umask=077                  for files the broker creates
 *                 denied-errno=EACCES        EACCES, EPERM or ENOENT
 *   [namespaces]  enter=user;pid;net;ipc;uts;mount;cgroup
 *                 empty-root=true
 *   [landlock]    enabled=true  min-abi=N  optional=false
 *   [rlimits]     NAME=VALUE                 nofile=64, core=0, as=4G, ...
 *   [network]     connect-ports=53;443       when given, network sockets
 *                 bind-ports=8080            connect (bind) to these ports
 *                                            only (sbx-run's supervisor)
 *   [worker]      status=true                fill sbx_worker_args.status
 *                 pool=4                     workers kept forked ahead,
 *                                            every layer on (warm pool)
 *
 * A POLICY is a built-in policy name ("renderer.policy") or a path,
 * relative to the profile's own directory; built-in names win, so no file
 * can shadow one.
 *
 * What it refuses: unknown groups and keys (a typo must not silently drop
 * a restriction), malformed values, an empty seccomp list, namespaces
 * without "user". A profile that fails to load never half-loads; the error
 * names the file, group and key.
 */
#ifndef SBX_POLICY_BUILTIN_PROFILE_H_
#define SBX_POLICY_BUILTIN_PROFILE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <glib.h>

#include "sandbox/kernel/namespaces/rlimits.h"
#include "sandbox/policy/policy.h"

#define SBX_PROFILE_MAX_RLIMITS 16
/* [worker] pool: at most this many workers of a type wait forked ahead. */
#define SBX_PROFILE_MAX_POOL 64
/* "direct,read" trees of one profile: each is a bind mount in the
 * zygote's empty root and a Landlock rule. */
#define SBX_PROFILE_MAX_DIRECT 16

/* Layers a profile can require ([profile] require). A required layer the
 * kernel lacks makes start, spawn or sbx-run fail and say why; a layer
 * that is not required is left out with a warning and the status report
 * says it is off. Seccomp and the broker are always in place where sbx
 * runs at all; they are named so that a profile can say so. */
enum {
  SBX_REQUIRE_SECCOMP = 1u << 0,
  SBX_REQUIRE_BROKER = 1u << 1,
  SBX_REQUIRE_USERNS = 1u << 2, /* and the namespaces and empty root in it */
  SBX_REQUIRE_LANDLOCK = 1u << 3,
};

#define SBX_PROFILE_ERROR (sbx_profile_error_quark())
GQuark sbx_profile_error_quark(void);

typedef enum {
  SBX_PROFILE_ERROR_NOT_FOUND, /* no such built-in or file */
  SBX_PROFILE_ERROR_INVALID,   /* the file is wrong; the message says where */
} sbx_profile_error_code;

/* Ports a [network] key lists. */
#define SBX_PROFILE_MAX_PORTS 64
typedef struct {
  bool set; /* the key was given (an empty list allows no port) */
  uint16_t ports[SBX_PROFILE_MAX_PORTS];
  size_t n;
} sbx_profile_ports;

typedef struct {
  char *name;          /* "renderer": the file name without ".profile" */
  char *source;        /* "builtin:renderer.profile" or the path read */
  char *dir;           /* where relative policy paths resolve; NULL: built-in */
  char *description;   /* may be NULL */
  char **seccomp;      /* NULL-terminated, at least one */
  char **broker_rules; /* NULL-terminated, may be empty; [broker] rules,
                        * then the rules of each included set */
  char **includes;     /* [broker] include: the sets' names */
  /* Trees of "direct,read /tree/" rules, NULL-terminated, may be empty:
   * with Landlock, a worker opens files under them read-only itself
   * (docs/design.md, "Direct opens"); broker_rules has them as read. */
  char **direct_trees;
  bool umask_set;
  mode_t umask;
  int denied_errno;    /* 0: the broker's default (EACCES) */
  unsigned namespaces; /* SBX_NS_* bits */
  bool empty_root;
  bool landlock;
  int landlock_min_abi;   /* 0: any */
  bool landlock_optional; /* run without Landlock on a kernel that lacks it */
  unsigned require;       /* SBX_REQUIRE_* bits */
  sbx_rlimit rlimits[SBX_PROFILE_MAX_RLIMITS];
  size_t n_rlimits;
  bool status;   /* collect the status report for the entry function */
  unsigned pool; /* [worker] pool: workers kept forked ahead; 0: none */
  sbx_profile_ports connect_ports; /* [network] connect-ports */
  sbx_profile_ports bind_ports;    /* [network] bind-ports */
} sbx_profile;

/* Parses profile text. source names it in messages; dir is where its
 * relative policy paths resolve (NULL: only built-in policies). */
sbx_profile *sbx_profile_parse(const char *text, const char *name,
                               const char *source, const char *dir,
                               GError **error);

/* A built-in profile ("renderer", "renderer.profile") or, when no built-in
 * has that name, a file: name itself if it contains a '/', else
 * search_dir/name (search_dir NULL: the current directory). */
sbx_profile *sbx_profile_load(const char *name, const char *search_dir,
                              GError **error);

void sbx_profile_free(sbx_profile *profile);

/* Layer names ("seccomp", "broker", "userns", "landlock") to
 * SBX_REQUIRE_* bits; an unknown name is an error that lists the known
 * ones. Shared by [profile] require and sbx-run --require. */
gboolean sbx_profile_parse_require(const char *const *names, unsigned *out,
                                   GError **error);

/* Appends the rules of the permission set name ("fonts", "locale",
 * "certificates", "random": the built-in NAME.rules, docs/policies.md) to
 * rules (g_strdup'd strings). An unknown name is an error that lists the
 * known ones. */
gboolean sbx_profile_permission_set(const char *name, GPtrArray *rules,
                                    GError **error);

/* The name of one SBX_REQUIRE_* bit; NULL for anything else. */
const char *sbx_profile_require_name(unsigned bit);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(sbx_profile, sbx_profile_free)

/* Parses the profile's seccomp layers in order: a GPtrArray of sbx_policy
 * that frees them. *names (may be NULL) receives each layer's display
 * name ("renderer.policy"), NULL-terminated, for g_strfreev. */
GPtrArray *sbx_profile_policies(const sbx_profile *profile, char ***names,
                                GError **error);

#endif /* SBX_POLICY_BUILTIN_PROFILE_H_ */
