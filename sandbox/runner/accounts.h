/* The name databases the program sees: /etc/passwd and /etc/group made
 * by sbx-run, naming only the program's own user and group and the
 * overflow ones (nobody, nogroup) that every other owner appears as
 * inside its user namespace; /etc/hosts, naming localhost and the
 * sandbox's own hostname; and /etc/nsswitch.conf, which sends every
 * lookup to those files (and host names on to DNS, for --net).
 *
 * Why it exists: programs look owners up by number (ls -l, tar, id,
 * whoami, git, ssh), and without the databases each lookup fails, so
 * they print numbers, refuse to run ("cannot find name for user ID") or
 * repeat the failed lookup for every file. The host's own files name
 * every account of the machine, its home directory and shell, which the
 * program has no need to learn. These are made from the host's entries
 * for the few numbers the program can see, without group member lists.
 * Likewise programs resolve "localhost" (a test server's client, node's
 * default listen address) and their own hostname (Java's
 * InetAddress.getLocalHost()) through /etc/hosts, and without it each
 * lookup falls through to DNS, which a sandbox without a network of the
 * host's cannot reach: name resolution fails. The host's file may name
 * machines of its network; the made one names only the loopback. And
 * every lookup reads /etc/nsswitch.conf first: the host's may send it to
 * services (sss, systemd, ldap) the sandbox cannot reach, and without
 * one each failed run's summary offered it as a grant.
 *
 * A grant that lets the program read the host's file (--allow-read
 * /etc/passwd, or /etc) wins: then nothing is made for that path. Both
 * modes show the same text: the default mode writes it into the tree's
 * root (tree.h), the supervisor answers opens and stats of the path with
 * a sealed memfd holding it (launch.c).
 */
#ifndef SBX_RUNNER_ACCOUNTS_H_
#define SBX_RUNNER_ACCOUNTS_H_

#include <stddef.h>
#include <sys/types.h>

#include <glib.h>

#include "sandbox/files/permissions.h"

#define SBX_RUN_ACCOUNT_FILES 4

typedef struct {
  const char *path; /* "/etc/passwd", "/etc/group", ... (static) */
  char *text;       /* g_free */
} sbx_run_account_file;

/* Fills out[] with the files to make for a program running as uid and
 * gid on a machine named hostname (the sandbox's own, in a UTS namespace
 * of its own), leaving out a path list lets it read; returns how many. A
 * hostname that is not a plain name (letters, digits, '-', '.') is left
 * out of /etc/hosts. */
size_t sbx_run_account_files(uid_t uid, gid_t gid, const char *hostname,
                             const sbx_allowlist *list,
                             sbx_run_account_file out[SBX_RUN_ACCOUNT_FILES]);

void sbx_run_account_files_clear(sbx_run_account_file *files, size_t n);

/* The hostname for a UTS namespace of the sandbox's own: own (the
 * namespace's default, "sbx"), unless list lets the program read the
 * host's /etc/hosts; then the host's name, which that file resolves as
 * on the host (hostname -f, Java's InetAddress.getLocalHost()), where
 * "sbx" would fall through to DNS and fail, or go out with --net. */
const char *sbx_run_hostname(const sbx_allowlist *list, const char *own);

#endif /* SBX_RUNNER_ACCOUNTS_H_ */
