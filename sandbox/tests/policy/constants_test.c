/* Named constants: every name the corpus uses resolves, values are the
 * headers' own, the tables agree with one another, and the supplement
 * covers what the build headers are too old to know.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/futex.h>
#include <linux/random.h>
#include <linux/seccomp.h>
#include <linux/sockios.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>

/* After the glibc headers: asm/termbits.h declares struct termios2, which
 * TCGETS2's value depends on, and does not clash with sys/ioctl.h. */
#include <asm/termbits.h>

#include <glib.h>

#include "sandbox/policy/constants.h"
#include "sandbox/base/syscalls.h"
#include "sandbox/tests/policy/policy_test_util.h"

static uint64_t lookup(const char *name) {
  uint64_t v = 0xdeadbeef;
  ck_assert_msg(sbx_constant_lookup(name, &v), "%s does not resolve", name);
  return v;
}

/* Collects every name a policy file uses as a constant: words outside
 * comments with an upper-case letter (syscall names, actions and argN are
 * lower case). */
static void collect_constant_names(const char *path, GHashTable *names) {
  char *text = NULL;
  ck_assert(g_file_get_contents(path, &text, NULL, NULL));
  char **lines = g_strsplit(text, "\n", -1);
  for (char **l = lines; *l != NULL; l++) {
    char *hash = strchr(*l, '#');
    if (hash != NULL)
      *hash = '\0';
    const char *p = *l;
    while (*p != '\0') {
      if (g_ascii_isalpha(*p) || *p == '_') {
        const char *start = p;
        gboolean upper = FALSE;
        while (g_ascii_isalnum(*p) || *p == '_') {
          upper |= g_ascii_isupper(*p);
          p++;
        }
        if (upper)
          g_hash_table_add(names, g_strndup(start, (gsize)(p - start)));
      } else if (g_ascii_isdigit(*p)) {
        while (g_ascii_isalnum(*p))
          p++;
      } else {
        p++;
      }
    }
  }
  g_strfreev(lines);
  g_free(text);
}

START_TEST(constants_resolve_every_name_the_corpus_uses) {
  POLICY_TEST_NEEDS_CORPUS();
  GHashTable *names =
      g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  const char *dirs[] = {"chromeos", "minijail"};
  for (size_t d = 0; d < G_N_ELEMENTS(dirs); d++) {
    GPtrArray *files = policy_test_corpus_files(dirs[d]);
    ck_assert_uint_gt(files->len, 0);
    for (guint i = 0; i < files->len; i++)
      collect_constant_names(g_ptr_array_index(files, i), names);
    g_ptr_array_unref(files);
  }
  /* The corpus names about 50 distinct constants; a scan that finds far
   * fewer is broken, not passing. */
  ck_assert_uint_ge(g_hash_table_size(names), 40);
  GString *missing = g_string_new(NULL);
  GHashTableIter it;
  gpointer key;
  g_hash_table_iter_init(&it, names);
  while (g_hash_table_iter_next(&it, &key, NULL)) {
    uint64_t v;
    if (!sbx_constant_lookup(key, &v))
      g_string_append_printf(missing, " %s", (char *)key);
  }
  ck_assert_msg(missing->len == 0, "unresolved corpus constants:%s",
                missing->str);
  g_string_free(missing, TRUE);
  g_hash_table_destroy(names);
}
END_TEST

START_TEST(constants_have_the_values_of_the_kernel_and_libc_headers) {
  static const struct {
    const char *name;
    uint64_t value;
  } kCases[] = {
#define C(x) {#x, (uint64_t)(x)}
      C(O_RDONLY),
      C(O_WRONLY),
      C(O_CLOEXEC),
      C(O_NONBLOCK),
      C(AF_UNIX),
      C(AF_LOCAL),
      C(AF_INET),
      C(AF_INET6),
      C(AF_NETLINK),
      C(AF_PACKET),
      C(AF_VSOCK),
      C(SOCK_STREAM),
      C(SOCK_CLOEXEC),
      C(SOL_SOCKET),
      C(SO_PASSCRED),
      C(SO_ATTACH_FILTER),
      C(PROT_READ),
      C(PROT_WRITE),
      C(PROT_EXEC),
      C(PROT_NONE),
      C(MAP_PRIVATE),
      C(MAP_ANONYMOUS),
      C(MADV_DONTNEED),
      C(CLONE_THREAD),
      C(CLONE_NEWUSER),
      C(CLONE_VM),
      C(EPERM),
      C(ENOSYS),
      C(EBADF),
      C(TCGETS),
      C(TCSETSF),
      C(TIOCSTI),
      C(TIOCGWINSZ),
      C(FIONREAD),
      C(FIONBIO),
      C(FIOCLEX),
      C(SIOCGIFFLAGS),
      C(SIOCSIFFLAGS),
      C(SIOCGIFINDEX),
      C(SIOCGIFHWADDR),
      C(SIOCETHTOOL),
      C(BLKGETSIZE64),
      C(BLKSSZGET),
      C(PR_SET_NO_NEW_PRIVS),
      C(PR_SET_SECCOMP),
      C(PR_SET_NAME),
      C(PR_CAPBSET_READ),
      C(PR_CAPBSET_DROP),
      C(PR_CAP_AMBIENT),
      C(PR_GET_SECUREBITS),
      C(PR_SET_SECUREBITS),
      C(SIGKILL),
      C(SIGTERM),
      C(SIGABRT),
      C(SIGSYS),
      C(GRND_RANDOM),
      C(GRND_NONBLOCK),
      C(FUTEX_WAIT),
      C(FUTEX_WAKE_PRIVATE),
      C(RLIMIT_NOFILE),
      C(SECCOMP_RET_KILL_PROCESS),
      C(SECCOMP_SET_MODE_FILTER),
      C(MS_BIND),
      C(MS_NOSUID),
      C(MS_NODEV),
      C(MS_NOEXEC),
      C(F_GETFD),
      C(F_SETFL),
      C(TCGETS2),
#undef C
  };
  for (size_t i = 0; i < G_N_ELEMENTS(kCases); i++)
    ck_assert_msg(lookup(kCases[i].name) == kCases[i].value,
                  "%s: 0x%" G_GINT64_MODIFIER
                  "x, header says 0x%" G_GINT64_MODIFIER "x",
                  kCases[i].name, lookup(kCases[i].name), kCases[i].value);
}
END_TEST

START_TEST(constants_negative_values_are_64_bit_twos_complement) {
  ck_assert_uint_eq(lookup("AT_FDCWD"), (uint64_t)(int64_t)AT_FDCWD);
  ck_assert_uint_eq(lookup("AT_FDCWD"), UINT64_C(0xffffffffffffff9c));
}
END_TEST

START_TEST(constants_supplement_knows_names_newer_than_the_headers) {
  ck_assert_uint_eq(lookup("MADV_GUARD_INSTALL"), 102);
  ck_assert_uint_eq(lookup("MADV_GUARD_REMOVE"), 103);
  ck_assert_uint_eq(lookup("MAP_DROPPABLE"), 0x08);
  ck_assert_uint_eq(lookup("MFD_NOEXEC_SEAL"), 0x08);
  ck_assert_uint_eq(lookup("MFD_EXEC"), 0x10);
  ck_assert_uint_eq(lookup("F_SEAL_EXEC"), 0x20);
  ck_assert_uint_eq(lookup("PR_SET_MDWE"), 65);
  ck_assert_uint_eq(lookup("PR_GET_MDWE"), 66);
}
END_TEST

/* The running 6.x kernel honours the supplement's values: PR_GET_MDWE is
 * a real prctl option, and MADV_GUARD_INSTALL a real madvise advice. An
 * unknown option or advice would be EINVAL (positive control below). */
START_TEST(constants_supplement_values_are_the_kernel_abi) {
  ck_assert_int_ge(prctl((int)lookup("PR_GET_MDWE"), 0, 0, 0, 0), 0);
  void *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ck_assert_ptr_ne(page, MAP_FAILED);
  ck_assert_int_eq(madvise(page, 4096, (int)lookup("MADV_GUARD_INSTALL")), 0);
  ck_assert_int_eq(madvise(page, 4096, (int)lookup("MADV_GUARD_REMOVE")), 0);
  errno = 0;
  ck_assert_int_eq(madvise(page, 4096, 999), -1);
  ck_assert_int_eq(errno, EINVAL);
  munmap(page, 4096);
}
END_TEST

START_TEST(constants_leave_out_names_libc_computes_at_run_time) {
  /* glibc's SIGRTMIN is a function call (it reserves signals for itself)
   * and the kernel's differs, so neither is offered. */
  uint64_t v;
  ck_assert(!sbx_constant_lookup("SIGRTMIN", &v));
  ck_assert(!sbx_constant_lookup("SIGRTMAX", &v));
}
END_TEST

START_TEST(constants_refuse_unknown_names) {
  uint64_t v = 42;
  ck_assert(!sbx_constant_lookup("NOT_A_CONSTANT", &v));
  ck_assert(!sbx_constant_lookup("", &v));
  ck_assert(!sbx_constant_lookup(NULL, &v));
  ck_assert(!sbx_constant_lookup("o_rdonly", &v)); /* case matters */
  ck_assert(!sbx_constant_lookup("errno", &v));    /* not a constant */
  ck_assert(!sbx_constant_lookup("NULL", &v));     /* a pointer */
  ck_assert_uint_eq(v, 42);
}
END_TEST

typedef struct {
  GHashTable *seen; /* name -> "source=value" of its first definition */
  GString *conflicts;
  GHashTable *sources;
  guint entries;
} visit_state;

static void visit(const char *name, uint64_t value, const char *source,
                  void *user_data) {
  visit_state *st = user_data;
  st->entries++;
  g_hash_table_add(st->sources, g_strdup(source));
  uint64_t *first = g_hash_table_lookup(st->seen, name);
  if (first == NULL) {
    uint64_t *v = g_new(uint64_t, 1);
    *v = value;
    g_hash_table_insert(st->seen, g_strdup(name), v);
  } else if (*first != value) {
    g_string_append_printf(st->conflicts,
                           " %s (0x%" G_GINT64_MODIFIER
                           "x vs 0x%" G_GINT64_MODIFIER "x in %s)",
                           name, *first, value, source);
  }
}

/* The libc and uapi headers disagree on exactly these, and the lookup
 * gives libc's value, as minijail's table does: glibc's O_LARGEFILE is 0
 * on x86-64 (the kernel forces large files there and glibc never passes
 * the bit) and its NSIG counts 64 signals plus one. */
START_TEST(constants_tables_disagree_only_where_reviewed) {
  visit_state st = {
      .seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free),
      .conflicts = g_string_new(NULL),
      .sources = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
  };
  sbx_constant_foreach(visit, &st);
  ck_assert_str_eq(st.conflicts->str,
                   " NSIG (0x41 vs 0x20 in linux)"
                   " O_LARGEFILE (0x0 vs 0x8000 in linux)");
  ck_assert_uint_eq(lookup("O_LARGEFILE"), 0);
  ck_assert_uint_eq(lookup("NSIG"), 65);
  ck_assert(g_hash_table_contains(st.sources, "libc"));
  ck_assert(g_hash_table_contains(st.sources, "linux"));
  ck_assert(g_hash_table_contains(st.sources, "supplement"));
  ck_assert_uint_ge(g_hash_table_size(st.seen), 5000);
  ck_assert_uint_ge(st.entries, g_hash_table_size(st.seen));
  g_hash_table_destroy(st.seen);
  g_hash_table_destroy(st.sources);
  g_string_free(st.conflicts, TRUE);
}
END_TEST

static void count_lookups(const char *name, uint64_t value, const char *source,
                          void *data) {
  guint *counts = data; /* [0]: entries lookup misses, [1]: all entries */
  uint64_t v;
  if (!sbx_constant_lookup(name, &v))
    counts[0]++;
  counts[1]++;
}

START_TEST(constants_every_entry_can_be_looked_up) {
  /* Catches a table that is not sorted the way bsearch expects. */
  guint counts[2] = {0, 0};
  sbx_constant_foreach(count_lookups, counts);
  ck_assert_uint_eq(counts[0], 0);
  ck_assert_uint_gt(counts[1], 5000);
}
END_TEST

static Suite *constants_suite(void) {
  Suite *s = suite_create("policy_constants");
  TCase *tc = tcase_create("constants");
  tcase_add_test(tc, constants_resolve_every_name_the_corpus_uses);
  tcase_add_test(tc, constants_have_the_values_of_the_kernel_and_libc_headers);
  tcase_add_test(tc, constants_negative_values_are_64_bit_twos_complement);
  tcase_add_test(tc, constants_supplement_knows_names_newer_than_the_headers);
  tcase_add_test(tc, constants_supplement_values_are_the_kernel_abi);
  tcase_add_test(tc, constants_leave_out_names_libc_computes_at_run_time);
  tcase_add_test(tc, constants_refuse_unknown_names);
  tcase_add_test(tc, constants_tables_disagree_only_where_reviewed);
  tcase_add_test(tc, constants_every_entry_can_be_looked_up);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(constants_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
