/* The built-in policies and profiles: each one parses, compiles and loads,
 * and the compiled programs give the verdicts docs/policies.md promises,
 * checked by running the real BPF (sbx_bpf_run) on the inputs. The same
 * verdicts are checked again in real workers by escape_test.c. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/futex.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <glib.h>

#include "sandbox/kernel/namespaces/namespaces.h"
#include "sandbox/kernel/seccomp/bpf.h"
#include "sandbox/policy/compiler.h"
#include "sandbox/policy/builtin/builtin.h"
#include "sandbox/policy/builtin/profile.h"
#include "sandbox/policy/policy.h"
#include "sandbox/base/syscalls.h"
#include "sandbox/files/fs_calls.h"

#define THREAD_FLAGS                                                  \
  (CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | \
   CLONE_SYSVSEM | CLONE_SETTLS | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID)

static const char *const kTypes[] = {"baseline", "renderer", "utility"};

static sbx_bpf_program compile_builtin(const char *name) {
  GError *error = NULL;
  sbx_policy *p = sbx_builtin_policy(name, &error);
  if (!p)
    ck_abort_msg("%s: %s", name, error->message);
  sbx_bpf_program prog = {0};
  if (!sbx_bpf_compile(p, &prog, &error))
    ck_abort_msg("%s: compile: %s", name, error->message);
  sbx_policy_free(p);
  return prog;
}

static uint32_t run(const sbx_bpf_program *prog, int nr, uint64_t a0,
                    uint64_t a1, uint64_t a2, uint64_t a3) {
  struct seccomp_data d = {.nr = nr, .arch = AUDIT_ARCH_X86_64};
  d.args[0] = a0;
  d.args[1] = a1;
  d.args[2] = a2;
  d.args[3] = a3;
  return sbx_bpf_run(prog->insns, prog->len, &d, NULL);
}

#define ERRNO(e) (SECCOMP_RET_ERRNO | (e))

START_TEST(every_builtin_policy_parses_and_compiles) {
  for (size_t i = 0; i < G_N_ELEMENTS(kTypes); i++) {
    sbx_bpf_program p = compile_builtin(kTypes[i]);
    ck_assert_uint_gt(p.len, 10);
    ck_assert_uint_le(p.len, BPF_MAXINSNS);
    /* kill, tgkill, rt_sigqueueinfo, rt_tgsigqueueinfo compare their
     * int-sized first argument with SBX_SELF_PID: one jump each. */
    ck_assert_uint_eq(p.n_self_pid_relocs, 4);
    for (size_t r = 0; r < p.n_self_pid_relocs; r++) {
      const struct sock_filter *insn = &p.insns[p.self_pid_relocs[r]];
      ck_assert_uint_eq(BPF_CLASS(insn->code), BPF_JMP);
      ck_assert_uint_eq(insn->k, SBX_BPF_SELF_PID_UNPATCHED);
    }
    sbx_bpf_program_clear(&p);
  }
}
END_TEST

START_TEST(every_builtin_profile_loads_with_every_layer) {
  for (size_t i = 0; i < G_N_ELEMENTS(kTypes); i++) {
    GError *error = NULL;
    g_autoptr(sbx_profile) p = sbx_profile_load(kTypes[i], NULL, &error);
    if (!p)
      ck_abort_msg("%s: %s", kTypes[i], error->message);
    ck_assert_str_eq(p->name, kTypes[i]);
    ck_assert(p->landlock);
    /* Every layer is used; only seccomp and the broker are required, so
     * the types run (with a warning) where a kernel lacks the others. */
    ck_assert_uint_eq(p->require, SBX_REQUIRE_SECCOMP | SBX_REQUIRE_BROKER);
    ck_assert(p->landlock_optional);
    ck_assert_uint_eq(p->namespaces, SBX_NS_ALL);
    ck_assert(p->empty_root);
    char **names = NULL;
    GPtrArray *policies = sbx_profile_policies(p, &names, &error);
    if (!policies)
      ck_abort_msg("%s: %s", kTypes[i], error->message);
    ck_assert_uint_eq(policies->len, 1);
    g_autofree char *want = g_strconcat(kTypes[i], ".policy", NULL);
    ck_assert_str_eq(names[0], want);
    g_strfreev(names);
    g_ptr_array_unref(policies);
  }
}
END_TEST

START_TEST(builtin_texts_are_reachable_by_file_name) {
  ck_assert_ptr_nonnull(sbx_builtin_find("renderer.profile"));
  ck_assert_ptr_nonnull(sbx_builtin_find("common.policy"));
  ck_assert_ptr_null(sbx_builtin_find("missing.policy"));
  /* Includes are resolved at build time: no @include is left. */
  ck_assert_ptr_null(
      strstr(sbx_builtin_find("renderer.policy")->text, "\n@include"));
}
END_TEST

/* S3: every built-in policy is an allowlist whose default refuses. Found
 * by walking the embedded files, so a policy added later is held to it. */
START_TEST(every_builtin_policy_is_an_allowlist_with_a_refusing_default) {
  static const char *const kRequired[] = {"baseline", "renderer", "utility",
                                          "common",   "broker",   "sbx-run"};
  for (size_t i = 0; i < G_N_ELEMENTS(kRequired); i++) {
    g_autofree char *file = g_strconcat(kRequired[i], ".policy", NULL);
    ck_assert_msg(sbx_builtin_find(file), "%s is not built in", file);
  }
  size_t checked = 0;
  for (size_t i = 0; i < sbx_builtin_n_files; i++) {
    const char *name = sbx_builtin_files[i].name;
    if (!g_str_has_suffix(name, ".policy"))
      continue;
    GError *error = NULL;
    sbx_policy *p = sbx_builtin_policy(name, &error);
    if (!p)
      ck_abort_msg("%s: %s", name, error->message);
    sbx_action_kind d = p->default_action.kind;
    if (strcmp(name, "broker-client.policy") == 0) {
      /* The documented exception: layer 1 traps file calls and allows the
       * rest, because layer 2 (an allowlist) is always stacked on it. */
      ck_assert_int_eq(d, SBX_ACTION_ALLOW);
    } else if (strcmp(name, "sbx-run.policy") == 0) {
      /* Unlisted calls go to sbx-run's supervisor, which refuses them. */
      ck_assert_int_eq(d, SBX_ACTION_USER_NOTIF);
    } else if (strcmp(name, "sbx-run-kernel.policy") == 0) {
      /* sbx-run's default mode has no supervisor: unlisted calls fail
       * with ENOSYS, as the supervisor answers them. */
      ck_assert_int_eq(d, SBX_ACTION_ERRNO);
      ck_assert_int_eq(p->default_action.data, ENOSYS);
    } else {
      /* Worker policies trap (the policy-kill handler reports and dies);
       * the broker's own policy kills outright. */
      ck_assert_msg(d == SBX_ACTION_TRAP || d == SBX_ACTION_KILL_PROCESS ||
                        d == SBX_ACTION_KILL_THREAD,
                    "%s: default action %d does not kill", name, (int)d);
    }
    sbx_policy_free(p);
    checked++;
  }
  ck_assert_uint_ge(checked, G_N_ELEMENTS(kRequired));
}
END_TEST

/* S1, S2, S3, S21: arch, x32 and unknown numbers. */
START_TEST(builtin_policies_kill_foreign_abis_and_unknown_calls) {
  for (size_t i = 0; i < G_N_ELEMENTS(kTypes); i++) {
    sbx_bpf_program p = compile_builtin(kTypes[i]);
    struct seccomp_data d = {.nr = __NR_getpid, .arch = AUDIT_ARCH_I386};
    ck_assert_uint_eq(sbx_bpf_run(p.insns, p.len, &d, NULL),
                      SECCOMP_RET_KILL_PROCESS);
    ck_assert_uint_eq(run(&p, __NR_getpid, 0, 0, 0, 0), SECCOMP_RET_ALLOW);
    ck_assert_uint_eq(run(&p, 0x40000000 | __NR_getpid, 0, 0, 0, 0),
                      SECCOMP_RET_KILL_PROCESS);
    /* Unknown and unlisted numbers trap (the worker dies with a report). */
    ck_assert_uint_eq(run(&p, 1000, 0, 0, 0, 0), SECCOMP_RET_TRAP);
    ck_assert_uint_eq(run(&p, 470, 0, 0, 0, 0), SECCOMP_RET_TRAP);
    sbx_bpf_program_clear(&p);
  }
}
END_TEST

/* Every verdict promised in docs/policies.md for the common part. */
START_TEST(builtin_policies_give_the_documented_verdicts) {
  for (size_t i = 0; i < G_N_ELEMENTS(kTypes); i++) {
    sbx_bpf_program p = compile_builtin(kTypes[i]);
    /* S7 */
    ck_assert_uint_eq(run(&p, __NR_clone, THREAD_FLAGS, 0, 0, 0),
                      SECCOMP_RET_ALLOW);
    ck_assert_uint_eq(run(&p, __NR_clone, SIGCHLD, 0, 0, 0), ERRNO(EPERM));
    ck_assert_uint_eq(
        run(&p, __NR_clone, CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID | SIGCHLD,
            0, 0, 0),
        ERRNO(EPERM));
    /* The kernel reads only the low 32 bits of clone's flags; so does the
     * filter (S4). */
    ck_assert_uint_eq(run(&p, __NR_clone, THREAD_FLAGS | (1ull << 32), 0, 0, 0),
                      SECCOMP_RET_ALLOW);
    ck_assert_uint_eq(run(&p, __NR_fork, 0, 0, 0, 0), ERRNO(EPERM));
    ck_assert_uint_eq(run(&p, __NR_vfork, 0, 0, 0, 0), ERRNO(EPERM));
    ck_assert_uint_eq(run(&p, __NR_clone3, 0, 0, 0, 0), ERRNO(ENOSYS));
    /* S8 */
    ck_assert_uint_eq(
        run(&p, __NR_clone, THREAD_FLAGS | CLONE_NEWUSER, 0, 0, 0),
        ERRNO(EPERM));
    ck_assert_uint_eq(run(&p, __NR_unshare, CLONE_NEWUSER, 0, 0, 0),
                      ERRNO(EPERM));
    ck_assert_uint_eq(run(&p, __NR_setns, 3, 0, 0, 0), ERRNO(EPERM));
    /* S18 */
    ck_assert_uint_eq(run(&p, __NR_socket, AF_INET, SOCK_STREAM, 0, 0),
                      ERRNO(EPERM));
    ck_assert_uint_eq(run(&p, __NR_socket, AF_UNIX, SOCK_STREAM, 0, 0),
                      ERRNO(EPERM));
    ck_assert_uint_eq(run(&p, __NR_connect, 3, 0, 0, 0), ERRNO(EPERM));
    ck_assert_uint_eq(run(&p, __NR_socketpair, AF_UNIX, SOCK_STREAM, 0, 0),
                      SECCOMP_RET_ALLOW);
    ck_assert_uint_eq(run(&p, __NR_socketpair, AF_INET, SOCK_STREAM, 0, 0),
                      ERRNO(EPERM));
    /* S4: junk above a 32-bit family matches what the kernel reads. */
    ck_assert_uint_eq(
        run(&p, __NR_socketpair, AF_UNIX | (1ull << 32), SOCK_STREAM, 0, 0),
        SECCOMP_RET_ALLOW);
    /* S5, S6, S9, S11-S14, S20 */
    ck_assert_uint_eq(run(&p, __NR_ptrace, 16, 1, 0, 0), ERRNO(EPERM));
    ck_assert_uint_eq(run(&p, __NR_process_vm_readv, 1, 0, 0, 0), ERRNO(EPERM));
    ck_assert_uint_eq(run(&p, __NR_io_uring_setup, 1, 0, 0, 0), ERRNO(ENOSYS));
    ck_assert_uint_eq(run(&p, __NR_mount, 0, 0, 0, 0), ERRNO(EPERM));
    ck_assert_uint_eq(run(&p, __NR_chroot, 0, 0, 0, 0), ERRNO(EPERM));
    ck_assert_uint_eq(run(&p, __NR_open_by_handle_at, 0, 0, 0, 0),
                      ERRNO(EPERM));
    ck_assert_uint_eq(run(&p, __NR_userfaultfd, 0, 0, 0, 0), ERRNO(EPERM));
    ck_assert_uint_eq(run(&p, __NR_bpf, 0, 0, 0, 0), ERRNO(EPERM));
    ck_assert_uint_eq(run(&p, __NR_perf_event_open, 0, 0, 0, 0), ERRNO(EPERM));
    ck_assert_uint_eq(run(&p, __NR_memfd_create, 0, 0, 0, 0), ERRNO(EPERM));
    ck_assert_uint_eq(run(&p, __NR_execve, 0, 0, 0, 0), ERRNO(EPERM));
    ck_assert_uint_eq(run(&p, __NR_execveat, 0, 0, 0, 0), ERRNO(EPERM));
    ck_assert_uint_eq(run(&p, __NR_shmget, 0, 0, 0, 0), ERRNO(EPERM));
    /* S15 */
    ck_assert_uint_eq(run(&p, __NR_prctl, PR_SET_NAME, 0, 0, 0),
                      SECCOMP_RET_ALLOW);
    ck_assert_uint_eq(run(&p, __NR_prctl, PR_SET_PTRACER, -1ul, 0, 0),
                      ERRNO(EPERM));
    ck_assert_uint_eq(run(&p, __NR_prctl, PR_SET_MM, 0, 0, 0), ERRNO(EPERM));
    ck_assert_uint_eq(run(&p, __NR_prctl, PR_SET_DUMPABLE, 1, 0, 0),
                      ERRNO(EPERM));
    ck_assert_uint_eq(run(&p, __NR_prctl, PR_SET_DUMPABLE, 0, 0, 0),
                      SECCOMP_RET_ALLOW);
    /* S33: the capability sets may be read, never changed. */
    ck_assert_uint_eq(run(&p, __NR_prctl, PR_CAPBSET_READ, CAP_SYS_ADMIN, 0, 0),
                      SECCOMP_RET_ALLOW);
    ck_assert_uint_eq(run(&p, __NR_prctl, PR_CAPBSET_DROP, CAP_SYS_ADMIN, 0, 0),
                      ERRNO(EPERM));
    ck_assert_uint_eq(run(&p, __NR_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET,
                          CAP_SYS_ADMIN, 0),
                      SECCOMP_RET_ALLOW);
    ck_assert_uint_eq(run(&p, __NR_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE,
                          CAP_SYS_ADMIN, 0),
                      ERRNO(EPERM));
    ck_assert_uint_eq(run(&p, __NR_personality, 0x0400000, 0, 0, 0),
                      ERRNO(EPERM));
    ck_assert_uint_eq(run(&p, __NR_personality, 0xffffffff, 0, 0, 0),
                      SECCOMP_RET_ALLOW);
    /* S19: only the patched self pid passes. */
    ck_assert_uint_eq(run(&p, __NR_kill, SBX_BPF_SELF_PID_UNPATCHED, 0, 0, 0),
                      SECCOMP_RET_ALLOW);
    ck_assert_uint_eq(run(&p, __NR_kill, 1, 9, 0, 0), ERRNO(EPERM));
    ck_assert_uint_eq(run(&p, __NR_kill, (uint64_t)-1, 9, 0, 0), ERRNO(EPERM));
    ck_assert_uint_eq(run(&p, __NR_tkill, 1, 9, 0, 0), ERRNO(EPERM));
    ck_assert_uint_eq(run(&p, __NR_pidfd_open, 1, 0, 0, 0), ERRNO(ENOSYS));
    /* Argument limits */
    ck_assert_uint_eq(run(&p, __NR_fcntl, 0, F_GETFD, 0, 0), SECCOMP_RET_ALLOW);
    ck_assert_uint_eq(run(&p, __NR_fcntl, 0, F_SETOWN, 1, 0), ERRNO(EPERM));
    ck_assert_uint_eq(run(&p, __NR_futex, 0, FUTEX_WAKE_PRIVATE, 1, 0),
                      SECCOMP_RET_ALLOW);
    ck_assert_uint_eq(run(&p, __NR_futex, 0, FUTEX_LOCK_PI, 0, 0),
                      ERRNO(ENOSYS));
    ck_assert_uint_eq(run(&p, __NR_madvise, 0, 0, MADV_DONTNEED, 0),
                      SECCOMP_RET_ALLOW);
    ck_assert_uint_eq(run(&p, __NR_madvise, 0, 0, MADV_HWPOISON, 0),
                      ERRNO(EPERM));
    ck_assert_uint_eq(run(&p, __NR_clock_gettime, CLOCK_MONOTONIC, 0, 0, 0),
                      SECCOMP_RET_ALLOW);
    ck_assert_uint_eq(run(&p, __NR_clock_gettime, (uint32_t)-6, 0, 0, 0),
                      ERRNO(EPERM));
    ck_assert_uint_eq(run(&p, __NR_getrandom, 0, 8, GRND_NONBLOCK, 0),
                      SECCOMP_RET_ALLOW);
    ck_assert_uint_eq(run(&p, __NR_getrandom, 0, 8, 0x80, 0), ERRNO(EPERM));
    ck_assert_uint_eq(run(&p, __NR_sched_setaffinity, 0, 0, 0, 0),
                      SECCOMP_RET_ALLOW);
    ck_assert_uint_eq(run(&p, __NR_sched_setaffinity, 1, 0, 0, 0),
                      ERRNO(EPERM));
    ck_assert_uint_eq(run(&p, __NR_mmap, 0, 4096, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS),
                      SECCOMP_RET_ALLOW);
    ck_assert_uint_eq(run(&p, __NR_mmap, 0, 4096, PROT_READ,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB),
                      ERRNO(EPERM));
    /* File system: the broker decides. */
    ck_assert_uint_eq(run(&p, __NR_openat, AT_FDCWD, 0, O_RDONLY, 0),
                      SECCOMP_RET_TRAP);
    ck_assert_uint_eq(run(&p, __NR_chmod, 0, 0, 0, 0), ERRNO(EPERM));
    ck_assert_uint_eq(run(&p, __NR_openat2, 0, 0, 0, 0), ERRNO(ENOSYS));
    /* S21, a sample of the modern-syscall table. */
    ck_assert_uint_eq(run(&p, __NR_close_range, 3, ~0u, 0, 0),
                      SECCOMP_RET_ALLOW);
    ck_assert_uint_eq(run(&p, __NR_rseq, 0, 0, 0, 0), SECCOMP_RET_ALLOW);
    ck_assert_uint_eq(run(&p, sbx_syscall_number("mseal"), 0, 0, 0, 0),
                      SECCOMP_RET_ALLOW);
    ck_assert_uint_eq(run(&p, sbx_syscall_number("cachestat"), 0, 0, 0, 0),
                      ERRNO(ENOSYS));
    ck_assert_uint_eq(
        run(&p, sbx_syscall_number("map_shadow_stack"), 0, 0, 0, 0),
        ERRNO(ENOSYS));
    ck_assert_uint_eq(run(&p, __NR_futex_waitv, 0, 0, 0, 0), ERRNO(ENOSYS));
    ck_assert_uint_eq(run(&p, __NR_landlock_restrict_self, 3, 0, 0, 0),
                      SECCOMP_RET_ALLOW);
    sbx_bpf_program_clear(&p);
  }
}
END_TEST

/* What differs between the three types. */
START_TEST(renderer_adds_only_what_a_renderer_needs) {
  sbx_bpf_program base = compile_builtin("baseline");
  sbx_bpf_program rend = compile_builtin("renderer");
  sbx_bpf_program util = compile_builtin("utility");
  uint64_t rx = PROT_READ | PROT_EXEC;
  ck_assert_uint_eq(run(&base, __NR_mmap, 0, 4096, rx, MAP_PRIVATE),
                    ERRNO(EPERM));
  ck_assert_uint_eq(run(&util, __NR_mmap, 0, 4096, rx, MAP_PRIVATE),
                    ERRNO(EPERM));
  ck_assert_uint_eq(run(&rend, __NR_mmap, 0, 4096, rx, MAP_PRIVATE),
                    SECCOMP_RET_ALLOW);
  ck_assert_uint_eq(run(&base, __NR_mprotect, 0, 4096, rx, 0), ERRNO(EPERM));
  ck_assert_uint_eq(run(&rend, __NR_mprotect, 0, 4096, rx, 0),
                    SECCOMP_RET_ALLOW);
  ck_assert_uint_eq(run(&base, __NR_ioctl, 0, TCGETS, 0, 0), ERRNO(EPERM));
  ck_assert_uint_eq(run(&rend, __NR_ioctl, 0, TCGETS, 0, 0), SECCOMP_RET_ALLOW);
  ck_assert_uint_eq(run(&rend, __NR_ioctl, 0, FIONREAD, 0, 0),
                    SECCOMP_RET_ALLOW);
  ck_assert_uint_eq(run(&util, __NR_ioctl, 0, FIONREAD, 0, 0), ERRNO(EPERM));
  /* S10 with S4: TIOCSTI and TIOCLINUX are refused, junk bits or not. */
  ck_assert_uint_eq(run(&rend, __NR_ioctl, 0, TIOCSTI, 0, 0), ERRNO(EPERM));
  ck_assert_uint_eq(run(&rend, __NR_ioctl, 0, TIOCSTI | (1ull << 32), 0, 0),
                    ERRNO(EPERM));
  ck_assert_uint_eq(run(&rend, __NR_ioctl, 0, TIOCLINUX, 0, 0), ERRNO(EPERM));
  ck_assert_uint_eq(run(&base, __NR_mremap, 0, 0, 0, MREMAP_MAYMOVE),
                    ERRNO(EPERM));
  ck_assert_uint_eq(run(&rend, __NR_mremap, 0, 0, 0, MREMAP_MAYMOVE),
                    SECCOMP_RET_ALLOW);
  ck_assert_uint_eq(run(&util, __NR_mremap, 0, 0, 0, MREMAP_MAYMOVE),
                    SECCOMP_RET_ALLOW);
  ck_assert_uint_eq(run(&base, __NR_fsync, 3, 0, 0, 0), ERRNO(EPERM));
  ck_assert_uint_eq(run(&rend, __NR_fsync, 3, 0, 0, 0), SECCOMP_RET_ALLOW);
  sbx_bpf_program_clear(&base);
  sbx_bpf_program_clear(&rend);
  sbx_bpf_program_clear(&util);
}
END_TEST

/* [profile] require: absent means every enabled layer; [landlock]
 * optional=true is the same as leaving "landlock" out. */
START_TEST(profile_require_defaults_and_spellings) {
  static const struct {
    const char *text;
    unsigned require;
    bool landlock_optional;
  } cases[] = {
      {"[profile]\nseccomp=baseline.policy\n",
       SBX_REQUIRE_SECCOMP | SBX_REQUIRE_BROKER | SBX_REQUIRE_USERNS |
           SBX_REQUIRE_LANDLOCK,
       false},
      {"[profile]\nseccomp=baseline.policy\n[landlock]\noptional=true\n",
       SBX_REQUIRE_SECCOMP | SBX_REQUIRE_BROKER | SBX_REQUIRE_USERNS, true},
      {"[profile]\nseccomp=baseline.policy\n[landlock]\nenabled=false\n",
       SBX_REQUIRE_SECCOMP | SBX_REQUIRE_BROKER | SBX_REQUIRE_USERNS, false},
      {"[profile]\nseccomp=baseline.policy\nrequire=seccomp; userns\n",
       SBX_REQUIRE_SECCOMP | SBX_REQUIRE_USERNS, true},
      {"[profile]\nseccomp=baseline.policy\nrequire=landlock;broker\n",
       SBX_REQUIRE_LANDLOCK | SBX_REQUIRE_BROKER, false},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    GError *error = NULL;
    g_autoptr(sbx_profile) p =
        sbx_profile_parse(cases[i].text, "t", "t.profile", NULL, &error);
    ck_assert_msg(p, "case %zu: %s", i, error ? error->message : "");
    ck_assert_uint_eq(p->require, cases[i].require);
    ck_assert_int_eq(p->landlock_optional, cases[i].landlock_optional);
  }
  ck_assert_str_eq(sbx_profile_require_name(SBX_REQUIRE_USERNS), "userns");
  ck_assert_ptr_null(sbx_profile_require_name(1u << 20));
}
END_TEST

START_TEST(profile_errors_name_the_file_group_and_key) {
  static const struct {
    const char *text;
    const char *needle;
  } cases[] = {
      {"[profile]\nseccomp=baseline.policy\n[broker]\nrulez=x\n",
       "t.profile: [broker] rulez: unknown key"},
      {"[profile]\nseccomp=baseline.policy\n[sandbox]\n",
       "[sandbox]: unknown group"},
      {"[profile]\nseccomp=\n", "[profile] seccomp: at least one policy"},
      {"[profile]\nseccomp=baseline.policy\n[namespaces]\nenter=pid;net\n",
       "\"user\" is required"},
      {"[profile]\nseccomp=baseline.policy\n[namespaces]\nenter=user;time\n",
       "unknown namespace \"time\""},
      {"[profile]\nseccomp=baseline.policy\n[rlimits]\nnofiles=3\n",
       "[rlimits] nofiles: unknown resource"},
      {"[profile]\nseccomp=baseline.policy\n[rlimits]\nnofile=lots\n",
       "[rlimits] nofile:"},
      {"[profile]\nseccomp=baseline.policy\n[landlock]\nenabled=maybe\n",
       "[landlock] enabled: expected true or false"},
      {"[profile]\nseccomp=baseline.policy\n[broker]\numask=999\n",
       "[broker] umask:"},
      {"[broker]\nrules=\n", "[profile]: the group is missing"},
      {"not a key file\n", "t.profile:"},
      {"[profile]\nseccomp=baseline.policy\nrequire=userns;seatbelt\n",
       "[profile] require: unknown layer \"seatbelt\""},
      {"[profile]\nseccomp=baseline.policy\nrequire=landlock\n"
       "[landlock]\nenabled=false\n",
       "\"landlock\" is required but [landlock] enabled=false"},
      {"[profile]\nseccomp=baseline.policy\nrequire=landlock\n"
       "[landlock]\noptional=true\n",
       "[profile] require: \"landlock\" is required but [landlock] "
       "optional=true"},
      {"[profile]\nseccomp=baseline.policy\nrequire=seccomp\n"
       "[landlock]\nmin-abi=3\n",
       "min-abi=3 demands Landlock"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    GError *error = NULL;
    sbx_profile *p =
        sbx_profile_parse(cases[i].text, "t", "t.profile", NULL, &error);
    ck_assert_msg(p == NULL, "case %zu loaded", i);
    ck_assert_msg(strstr(error->message, cases[i].needle) != NULL,
                  "case %zu: \"%s\" lacks \"%s\"", i, error->message,
                  cases[i].needle);
    g_error_free(error);
  }
}
END_TEST

START_TEST(profile_policies_resolve_next_to_the_profile_file) {
  g_autofree char *dir = g_dir_make_tmp("sbx-profile-XXXXXX", NULL);
  ck_assert_ptr_nonnull(dir);
  g_autofree char *policy = g_build_filename(dir, "mine.policy", NULL);
  g_autofree char *profile = g_build_filename(dir, "mine.profile", NULL);
  ck_assert(g_file_set_contents(policy, "@default kill-process\nread: 1\n", -1,
                                NULL));
  ck_assert(g_file_set_contents(
      profile,
      "[profile]\nseccomp=baseline.policy;mine.policy\n[rlimits]\nnofile=16\n",
      -1, NULL));
  GError *error = NULL;
  g_autoptr(sbx_profile) p = sbx_profile_load(profile, NULL, &error);
  if (!p)
    ck_abort_msg("%s", error->message);
  ck_assert_str_eq(p->name, "mine");
  ck_assert_uint_eq(p->n_rlimits, 1);
  ck_assert_uint_eq(p->rlimits[0].soft, 16);
  GPtrArray *policies = sbx_profile_policies(p, NULL, &error);
  if (!policies)
    ck_abort_msg("%s", error->message);
  ck_assert_uint_eq(policies->len, 2);
  g_ptr_array_unref(policies);
  /* A missing layer names the profile and the layer. */
  ck_assert(g_file_set_contents(profile, "[profile]\nseccomp=gone.policy\n", -1,
                                NULL));
  g_autoptr(sbx_profile) q = sbx_profile_load(profile, NULL, &error);
  ck_assert_ptr_nonnull(q);
  ck_assert_ptr_null(sbx_profile_policies(q, NULL, &error));
  ck_assert_ptr_nonnull(strstr(error->message, "mine.profile"));
  ck_assert_ptr_nonnull(strstr(error->message, "gone.policy"));
  g_error_free(error);
  unlink(policy);
  unlink(profile);
  rmdir(dir);
}
END_TEST

/* What the kernel does with two stacked verdicts: the lower action
 * value (signed) wins, so a lower rank is stricter. */
static int32_t rank(uint32_t action) {
  return (int32_t)(action & SECCOMP_RET_ACTION_FULL);
}

static uint32_t action_of(const sbx_bpf_program *prog, int nr) {
  return run(prog, nr, 0, 0, 0, 0) & SECCOMP_RET_ACTION_FULL;
}

/* The trapped-call parts of broker-client.policy (layer 1), common.policy
 * (every worker type) and sbx-run.policy (the supervisor's baseline) are
 * checked against the table of file-system calls: every row layer 1
 * serves traps in layer 1 and in every worker type; no other call traps
 * in layer 1; a path call layer 1 does not serve gets an errno there, a
 * descriptor form is left to layer 2; every worker type is as strict as
 * layer 1 or stricter on every row; every row the supervisor decides
 * reaches it. */
START_TEST(the_policies_agree_with_the_table_of_file_system_calls) {
  sbx_bpf_program layer1 = compile_builtin("broker-client");
  sbx_bpf_program supervised = compile_builtin("sbx-run");
  const char *const workers[] = {"common", "baseline", "renderer", "utility"};
  sbx_bpf_program types[G_N_ELEMENTS(workers)];
  for (size_t t = 0; t < G_N_ELEMENTS(workers); t++)
    types[t] = compile_builtin(workers[t]);
  size_t served = 0;
  for (size_t i = 0; i < sbx_fs_call_count(); i++) {
    const sbx_fs_call *c = sbx_fs_call_at(i);
    uint32_t a1 = action_of(&layer1, c->nr);
    if (c->traits & SBX_FS_LAYER1) {
      ck_assert_msg(a1 == SECCOMP_RET_TRAP, "layer 1 does not trap %s",
                    c->name);
      served++;
    } else if (sbx_fs_call_arg(c, SBX_FS_ARG_PATH) >= 0) {
      ck_assert_msg(a1 == SECCOMP_RET_ERRNO,
                    "layer 1 gives %s 0x%x, not an errno", c->name, a1);
    } else {
      ck_assert_msg(a1 == SECCOMP_RET_ALLOW,
                    "layer 1 gives the descriptor form %s 0x%x", c->name, a1);
    }
    for (size_t t = 0; t < G_N_ELEMENTS(workers); t++) {
      uint32_t a2 = action_of(&types[t], c->nr);
      if (c->traits & SBX_FS_LAYER1)
        ck_assert_msg(a2 == SECCOMP_RET_TRAP, "%s does not trap %s", workers[t],
                      c->name);
      ck_assert_msg(rank(a2) <= rank(a1),
                    "%s is less strict than layer 1 on %s (0x%x, 0x%x)",
                    workers[t], c->name, a2, a1);
    }
    if (c->traits & SBX_FS_SUPERVISED)
      ck_assert_msg(action_of(&supervised, c->nr) == SECCOMP_RET_USER_NOTIF,
                    "sbx-run.policy does not send %s to the supervisor",
                    c->name);
  }
  ck_assert_uint_eq(served, 20);
  /* The other way round: layer 1 traps nothing the table does not give it
   * (sbx_layer1_compile refuses such a program too). */
  for (int nr = 0; nr < sbx_syscall_max(); nr++) {
    if (action_of(&layer1, nr) != SECCOMP_RET_TRAP)
      continue;
    const sbx_fs_call *c = sbx_fs_call_find(nr);
    ck_assert_msg(c && (c->traits & SBX_FS_LAYER1),
                  "layer 1 traps syscall %d, which the table does not give it",
                  nr);
  }
  for (size_t t = 0; t < G_N_ELEMENTS(workers); t++)
    sbx_bpf_program_clear(&types[t]);
  sbx_bpf_program_clear(&layer1);
  sbx_bpf_program_clear(&supervised);
}
END_TEST

static Suite *builtin_suite(void) {
  Suite *s = suite_create("builtin");
  TCase *tc = tcase_create("policies");
  tcase_set_timeout(tc, 20);
  tcase_add_test(tc, every_builtin_policy_parses_and_compiles);
  tcase_add_test(tc, every_builtin_profile_loads_with_every_layer);
  tcase_add_test(tc, builtin_texts_are_reachable_by_file_name);
  tcase_add_test(tc,
                 every_builtin_policy_is_an_allowlist_with_a_refusing_default);
  tcase_add_test(tc, builtin_policies_kill_foreign_abis_and_unknown_calls);
  tcase_add_test(tc, builtin_policies_give_the_documented_verdicts);
  tcase_add_test(tc, renderer_adds_only_what_a_renderer_needs);
  tcase_add_test(tc, profile_require_defaults_and_spellings);
  tcase_add_test(tc, profile_errors_name_the_file_group_and_key);
  tcase_add_test(tc, profile_policies_resolve_next_to_the_profile_file);
  tcase_add_test(tc, the_policies_agree_with_the_table_of_file_system_calls);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(builtin_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
