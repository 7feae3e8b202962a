/* The zygote's executable mappings, so that a pooled worker maps their
 * pages in before it waits for a job.
 *
 * Why: a fork copies the page tables of anonymous memory only; the pages
 * of a file mapping (the program's and the libraries' code) and the vDSO
 * are faulted in again by every child, one fault per page it runs. A
 * pooled worker runs most of its code before its job, but what the job
 * runs after that (the worker's own last steps, the entry function, the
 * clock) would still fault on the spawn's path, and a fault is dear in a
 * virtual machine. MADV_POPULATE_READ maps every page of those mappings
 * in one call per mapping while the worker waits. It only fills page
 * tables with pages that are already the process's to run: it grants and
 * changes nothing.
 *
 * Async-signal-safe: the zygote reads its mappings once at start, before
 * its root changes; pooled workers populate them after the fork.
 */
#ifndef SBX_ZYGOTE_CODE_PAGES_H_
#define SBX_ZYGOTE_CODE_PAGES_H_

#include <stddef.h>
#include <stdint.h>

#define SBX_CODE_RANGES_MAX 64
/* At most this much code in all, so that a host with a large program
 * does not give every pooled worker page tables for all of it (16 MiB
 * of pages take 32 KiB of page tables). */
#define SBX_CODE_BYTES_MAX (16u << 20)

typedef struct {
  struct {
    uintptr_t start, end;
  } range[SBX_CODE_RANGES_MAX];
  size_t n;
  size_t bytes; /* of all of them */
} sbx_code_ranges;

/* Reads the executable mappings of this process from /proc/self/maps
 * into *out, in the file's order (the program's own first), as many as
 * fit SBX_CODE_RANGES_MAX and SBX_CODE_BYTES_MAX (a mapping that would
 * go over is left out). 0, or -errno when the file cannot be opened
 * (then *out is empty). */
int sbx_code_ranges_read_raw(sbx_code_ranges *out);

/* MADV_POPULATE_READ over each range; a range the kernel refuses (an
 * older kernel, a special mapping) is left to fault as before. */
void sbx_code_ranges_populate_raw(const sbx_code_ranges *ranges);

#endif /* SBX_ZYGOTE_CODE_PAGES_H_ */
