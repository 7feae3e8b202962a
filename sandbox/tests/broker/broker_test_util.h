/* Shared fixtures for the broker suites: a real directory tree under /tmp
 * with allowed and forbidden parts, and helpers to run code in children.
 *
 * The tree (all under a fresh g_dir_make_tmp directory):
 *   good/file            "good"      read tree (good/ recursive)
 *   good/sub/deep        "deep"
 *   good_extra_stuff     "sibling"   a sibling prefix of good/
 *   rw/                              create tree
 *   rw/existing          "existing"
 *   tmp/                             temporary tree
 *   canary               "canary"    never to be reached from a worker
 */
#ifndef SBX_TESTS_BROKER_BROKER_TEST_UTIL_H_
#define SBX_TESTS_BROKER_BROKER_TEST_UTIL_H_

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "sandbox/files/permissions.h"

typedef struct {
  char *root;
  char *good;
  char *good_file;
  char *deep;
  char *sibling;
  char *rw;
  char *existing;
  char *tmp;
  char *canary;
  struct stat canary_st;
} broker_test_tree;

void broker_test_tree_make(broker_test_tree *t);
void broker_test_tree_free(broker_test_tree *t);

/* read good/, create rw/, temporary tmp/ for worker type `type`. */
sbx_allowlist *broker_test_tree_allowlist(const broker_test_tree *t,
                                          const char *type);

/* g_build_filename(t->root, rel) */
char *broker_test_path(const broker_test_tree *t, const char *rel);

void broker_test_write(const char *path, const char *text);

/* The whole contents of fd from offset 0 (NUL-terminated; g_free). */
char *broker_test_read_fd(int fd);

/* Runs fn(arg) in a forked child; returns its exit status, or 128+signal. */
int broker_test_run_in_child(int (*fn)(void *arg), void *arg);

/* True when fd refers to the same object as st. */
bool broker_test_same_file(int fd, const struct stat *st);

/* Sends raw bytes (and up to 4 descriptors in one SCM_RIGHTS block) as
 * one datagram on ch; fails the test if the send fails. */
void broker_test_send_raw(int ch, const void *buf, size_t len, const int *fds,
                          size_t n_fds);

/* True when the broker closed its end of ch (end of file within 3 s). */
bool broker_test_channel_closed(int ch);

#endif /* SBX_TESTS_BROKER_BROKER_TEST_UTIL_H_ */
