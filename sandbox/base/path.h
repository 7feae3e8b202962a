/* Path strings as the broker accepts them.
 *
 * Why it exists: a worker's path is a string the broker must not interpret
 * loosely. Only absolute, normalised paths are accepted, so every later
 * step (matching against the allowlist, resolving beneath a root) sees one
 * spelling per name and nothing has to guess what `..` would mean on a
 * file system that can change underneath.
 *
 * What it trusts: nothing; the bytes come from a sandboxed process.
 * What it refuses: relative paths, empty components (`//`), `.` and `..`
 * components, a trailing `/` (except the root itself), embedded NUL bytes,
 * and anything of PATH_MAX bytes or more.
 *
 * Everything here is pure computation on caller-provided buffers:
 * async-signal-safe, no allocation, so the client's SIGSYS path may use it
 * as a pre-check.
 */
#ifndef SBX_BASE_PATH_H_
#define SBX_BASE_PATH_H_

#include <stdbool.h>
#include <stddef.h>

/* Validates `len` bytes at `path` (no terminating NUL counted; the bytes
 * need not be terminated). Returns 0 when the path is absolute and
 * normalised, -ENAMETOOLONG when len >= PATH_MAX, -EACCES otherwise. If
 * `reason` is not NULL it receives a static description of the first
 * problem found ("relative path", "empty component", ...).
 * Async-signal-safe. */
int sbx_path_validate(const char *path, size_t len, const char **reason);

/* True when `path` (of length len) is `prefix` or lies below it on a
 * component boundary: `/a/b` is below `/a` and `/`, never below `/a/` or
 * `/a/b-c`'s sibling `/a/b`. Both must be validated paths.
 * Async-signal-safe. */
bool sbx_path_is_within(const char *path, size_t len, const char *prefix,
                        size_t prefix_len);

/* Lexically joins `target` (a symlink's contents) onto the directory `dir`
 * (a validated absolute path, the directory holding the link) and
 * normalises the result: empty and `.` components vanish, `..` removes one
 * component (never climbing above `/`). An absolute target ignores `dir`.
 * Writes a NUL-terminated, validated path to out (size PATH_MAX) and
 * returns its length, or -ENAMETOOLONG / -ENOENT (empty target).
 *
 * Lexical `..` is only correct when every component of `dir` is a real
 * directory (not a symlink) at the time of the join; callers use it on
 * prefixes they have just walked, and always re-check the result.
 * Async-signal-safe. */
int sbx_path_join_link(const char *dir, size_t dir_len, const char *target,
                       size_t target_len, char *out, size_t out_size);

/* True when s (len bytes) has a `..` component, which only a walk that
 * knows which components are symbolic links can apply as the kernel
 * does. Async-signal-safe. */
bool sbx_path_has_dotdot(const char *s, size_t len);

#endif /* SBX_BASE_PATH_H_ */
