/* The broker's allowlist: which paths one type of worker may reach, and how.
 *
 * Why it exists: the broker (and sbx-run's user-notification supervisor,
 * which applies the same rules to unmodified programs) decide every file
 * request against one list of entries. Keeping the list, its kinds and its
 * matching in one library means both enforce exactly the same rules.
 *
 * What it trusts: the entries it is given come from the host (a profile,
 * command-line flags), not from a worker. What it refuses: relative or
 * non-normalised entries, unknown kinds, entries naming another process's
 * /proc directory.
 *
 * Life cycle:
 *   1. sbx_allowlist_new(type) in the host, before any worker exists.
 *   2. sbx_allowlist_add() / sbx_allowlist_add_rule() / sbx_allowlist_parse()
 *      for each entry. Entries are canonicalised as they are added: symlinks
 *      in the directory part are resolved now, so `/lib/` on a merged-/usr
 *      system is stored as `/usr/lib/`. Nothing is opened.
 *   3. Hand the list to the broker (sbx_broker_start) or to a resolver
 *      (resolver.h), which opens one directory per entry.
 * After step 3 the list must not change.
 *
 * Kinds (rights) of an entry, combined as a bit mask:
 *   STAT          stat/lstat/statx, access(F_OK), readlink
 *   READ          open O_RDONLY, access(R_OK)                  (+STAT)
 *   WRITE         open for writing, O_TRUNC, O_APPEND, W_OK      (+STAT)
 *   CREATE        O_CREAT, O_TMPFILE, mkdir, unlink, rmdir, rename: the
 *                 entry itself, or anything below a recursive one (+STAT)
 *   TEMPORARY     O_CREAT|O_EXCL only; the file is unlinked as it is
 *                 opened, so nothing stays behind                (+STAT)
 *   INTERMEDIATE  stat of every directory above the entry        (+STAT)
 *   GRANTABLE     grants nothing itself: the entry is the ceiling for
 *                 rules given to one worker at its spawn
 *                 (sbx_allowlist_grant_ceiling); its other kinds are the
 *                 most such a rule may have there
 * An entry is recursive when written with a trailing slash (`/usr/lib/`):
 * it then covers the directory and everything below it. Without the slash
 * it covers exactly that name.
 */
#ifndef SBX_FILES_PERMISSIONS_H_
#define SBX_FILES_PERMISSIONS_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <glib.h>

enum {
  SBX_PERM_STAT = 1u << 0,
  SBX_PERM_READ = 1u << 1,
  SBX_PERM_WRITE = 1u << 2,
  SBX_PERM_CREATE = 1u << 3,
  SBX_PERM_TEMPORARY = 1u << 4,
  SBX_PERM_INTERMEDIATE = 1u << 5,
  SBX_PERM_GRANTABLE = 1u << 6,
  SBX_PERM_ALL = (1u << 7) - 1,
};

/* Shorthands matching the kind names of the text form. */
#define SBX_PERM_READ_ONLY (SBX_PERM_STAT | SBX_PERM_READ)
#define SBX_PERM_READ_WRITE (SBX_PERM_STAT | SBX_PERM_READ | SBX_PERM_WRITE)
#define SBX_PERM_READ_WRITE_CREATE (SBX_PERM_READ_WRITE | SBX_PERM_CREATE)
#define SBX_PERM_READ_WRITE_TEMPORARY (SBX_PERM_READ_WRITE | SBX_PERM_TEMPORARY)
#define SBX_PERM_STAT_INTERMEDIATE (SBX_PERM_STAT | SBX_PERM_INTERMEDIATE)

#define SBX_BROKER_ERROR (sbx_broker_error_quark())
GQuark sbx_broker_error_quark(void);

typedef enum {
  SBX_BROKER_ERROR_INVALID, /* the input (entry, rule, message) is wrong */
  SBX_BROKER_ERROR_FAILED,  /* a system call failed */
} sbx_broker_error_code;

typedef struct {
  char *path;    /* canonical; no trailing slash except for "/" itself */
  size_t len;    /* strlen(path) */
  char *written; /* as the host wrote it, for messages */
  unsigned rights;
  bool recursive;
  /* Below /proc/self: resolved against the requesting worker's /proc
   * directory, never the broker's. `path` then holds the part after
   * "/proc/self" ("" for /proc/self itself). */
  bool proc_self;
} sbx_allow_entry;

/* Whether the entry lets the worker change what it names: write, create
 * or temporary files. */
static inline bool sbx_allow_entry_writes(const sbx_allow_entry *e) {
  return (e->rights &
          (SBX_PERM_WRITE | SBX_PERM_CREATE | SBX_PERM_TEMPORARY)) != 0;
}

typedef struct sbx_allowlist sbx_allowlist;

/* A new, empty list for workers of type `type_name` (the name audit lines
 * carry). Denials default to EACCES, the create umask to 022. */
sbx_allowlist *sbx_allowlist_new(const char *type_name);
void sbx_allowlist_free(sbx_allowlist *list);

/* Adds one entry. `path` is absolute and normalised; a trailing slash makes
 * it recursive. `rights` is a mask of SBX_PERM_*; every kind implies STAT.
 * An exact entry whose last component is a symlink also admits the
 * symlink's resolved target with the same rights (the host named the
 * object, as it is when the list is loaded). */
gboolean sbx_allowlist_add(sbx_allowlist *list, const char *path,
                           unsigned rights, GError **error);

/* Adds one rule in text form: `KIND[,KIND...] PATH`, kinds being `stat`,
 * `stat-intermediate`, `read`, `write`, `read-write`, `create` (read-write
 * and create), `temporary` (read-write and temporary), and `grantable`
 * with at least one other kind (`grantable,create /srv/out/`). */
gboolean sbx_allowlist_add_rule(sbx_allowlist *list, const char *rule,
                                GError **error);

/* Adds one rule per line of `text` (blank lines and `#` comments ignored).
 * Errors name `source_name` and the line. All or nothing: on error the
 * list is unchanged. */
gboolean sbx_allowlist_parse(sbx_allowlist *list, const char *text,
                             const char *source_name, GError **error);

/* A new list with base's name, umask, denied errno and entries, followed
 * by extra's entries (taken as they were canonicalised). */
sbx_allowlist *sbx_allowlist_merged(const sbx_allowlist *base,
                                    const sbx_allowlist *extra);

/* The list as a GVariant (floating reference sunk: the caller owns it),
 * and back: for handing a list to a broker that was started by exec. The
 * entries stay as they were canonicalised; from_variant checks only their
 * shape and fails with SBX_BROKER_ERROR_INVALID on anything malformed. */
GVariant *sbx_allowlist_to_variant(const sbx_allowlist *list);
sbx_allowlist *sbx_allowlist_from_variant(GVariant *v, GError **error);

/* Permission bits that are never granted on files and directories the
 * broker creates (mode & ~umask); setuid, setgid and sticky are always
 * cleared. */
void sbx_allowlist_set_umask(sbx_allowlist *list, mode_t umask);

/* What a worker is told when the list does not allow a request: EACCES
 * (default), EPERM or ENOENT (the path looks absent). Others are refused. */
gboolean sbx_allowlist_set_denied_errno(sbx_allowlist *list, int err,
                                        GError **error);

const char *sbx_allowlist_name(const sbx_allowlist *list);
size_t sbx_allowlist_n_entries(const sbx_allowlist *list);
const sbx_allow_entry *sbx_allowlist_entry(const sbx_allowlist *list, size_t i);
mode_t sbx_allowlist_umask(const sbx_allowlist *list);
int sbx_allowlist_denied_errno(const sbx_allowlist *list);
/* True if any entry has the INTERMEDIATE right (the resolver then holds a
 * descriptor for "/"). */
bool sbx_allowlist_needs_root(const sbx_allowlist *list);

typedef enum {
  SBX_MATCH_NONE,
  SBX_MATCH_ENTRY,        /* entry covers the path with every right asked */
  SBX_MATCH_INTERMEDIATE, /* path is a directory above an INTERMEDIATE entry */
} sbx_match_kind;

typedef struct {
  sbx_match_kind kind;
  size_t entry; /* index of the entry (ENTRY and INTERMEDIATE) */
} sbx_match;

/* Finds the entry granting every right in `need` for `path` (a validated
 * path of length len), preferring the most specific. When the path lies
 * below the requesting worker's /proc/<pid> directory, `proc_prefix_len`
 * is the length of that "/proc/<pid>" prefix, and /proc/self entries are
 * matched against the rest; otherwise it is 0. INTERMEDIATE matches are
 * only returned when `need` is STAT alone; GRANTABLE entries never match.
 * Allocates nothing. */
bool sbx_allowlist_match(const sbx_allowlist *list, const char *path,
                         size_t len, size_t proc_prefix_len, unsigned need,
                         sbx_match *out);

/* The GRANTABLE entry of list under which entry e (of another list, not
 * itself GRANTABLE) may be granted to one worker: one whose path covers
 * e's (a recursive entry covers everything below it, an exact one only the
 * same exact entry) and whose kinds include all of e's. NULL if none. The
 * broker's Landlock ruleset covers GRANTABLE entries as if they granted,
 * so a worker's own rules stay within what the kernel lets the broker do. */
const sbx_allow_entry *sbx_allowlist_grant_ceiling(const sbx_allowlist *list,
                                                   const sbx_allow_entry *e);

#endif /* SBX_FILES_PERMISSIONS_H_ */
