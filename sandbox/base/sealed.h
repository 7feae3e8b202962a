/* A sealed memory file: bytes that no one, the writer included, can
 * change once it is made.
 *
 * Why it exists: a process that hands bytes to another it starts (the
 * broker's program image, the fresh zygote's start data) must know the
 * reader sees exactly what was written, whoever else holds the file.
 * Sealing against shrink, grow and write, then sealing the seals, gives
 * that; the reader checks the seals (F_GET_SEALS) before it trusts them.
 *
 * Async-signal-safe; allocates nothing.
 */
#ifndef SBX_BASE_SEALED_H_
#define SBX_BASE_SEALED_H_

#include <fcntl.h>
#include <stddef.h>
#include <sys/mman.h>

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U /* Linux 6.3 */
#endif

/* Every seal sbx puts on a memory file it hands on, and checks. */
#define SBX_SEALED_ALL \
  (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL)

/* memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING | flags), data
 * written whole, then SBX_SEALED_ALL added. flags may ask for MFD_EXEC;
 * a kernel older than 6.3, which refuses the flag, gets a plain memory
 * file (executable by default there). Returns the descriptor, or -1 with
 * errno set (and nothing left open). */
int sbx_sealed_file(const char *name, unsigned flags, const void *data,
                    size_t len);

#endif /* SBX_BASE_SEALED_H_ */
