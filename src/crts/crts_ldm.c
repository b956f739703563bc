/*
 * crts_ldm.c - the LDM arena: 64 slices of 256 KiB, each a CPE's LDM.
 *
 * A guard page precedes every slice, so an overrun of one CPE's LDM faults
 * instead of corrupting its neighbour.  Inside a slice a second guard page
 * (placed by the CPE thread once it knows its TLS size) separates the heap
 * from the stack; see crts_cg.h for the layout.
 */

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "crts_cg.h"

static size_t page_size(void) { return (size_t)sysconf(_SC_PAGESIZE); }

int crts_ldm_arena_init(void)
{
  size_t page = page_size();
  crts_cg.slice_stride = CRTS_MAX_LDM_SIZE + page;
  crts_cg.arena_len = crts_cg.slice_stride * CRTS_MAX_SPE_NUM;
  void *a = mmap(NULL, crts_cg.arena_len, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (a == MAP_FAILED) {
    crts_report("CRTS_init", "cannot map %zu bytes of LDM: %s",
                crts_cg.arena_len, strerror(errno));
    return -1;
  }
  crts_cg.arena = a;
  for (int i = 0; i < CRTS_MAX_SPE_NUM; i++) {
    char *guard = crts_cg.arena + (size_t)i * crts_cg.slice_stride;
    if (mprotect(guard, page, PROT_NONE) != 0) {
      crts_report("CRTS_init", "cannot protect LDM guard page: %s",
                  strerror(errno));
      munmap(a, crts_cg.arena_len);
      crts_cg.arena = NULL;
      return -1;
    }
    crts_cg.cpe[i].ldm = guard + page;
  }
  return 0;
}

int crts_ldm_owner(const void *p)
{
  const char *c = p;
  if (!crts_cg.arena || c < crts_cg.arena ||
      c >= crts_cg.arena + crts_cg.arena_len)
    return -1;
  size_t off = (size_t)(c - crts_cg.arena);
  int tid = (int)(off / crts_cg.slice_stride);
  if (c < crts_cg.cpe[tid].ldm)
    return -1; /* the guard page in front of the slice */
  return tid;
}

int crts_ldm_range(const void *p, size_t len, int *owner)
{
  int tid = crts_ldm_owner(p);
  if (tid < 0)
    return 0;
  const struct crts_cpe *cpe = &crts_cg.cpe[tid];
  const char *c = p;
  const char *top = cpe->ldm + CRTS_MAX_LDM_SIZE;
  int in_heap = c + len <= cpe->heap_limit;
  int in_stack = c >= cpe->stack_lo && c + len <= top;
  if (!cpe->heap_limit) /* thread not started yet: whole slice */
    in_heap = c + len <= top;
  if (!in_heap && !in_stack)
    return 0;
  if (owner)
    *owner = tid;
  return 1;
}

void *crts_ldm_translate(const void *p, int tid)
{
  int from = crts_ldm_owner(p);
  if (from < 0 || tid < 0 || tid >= CRTS_MAX_SPE_NUM)
    return NULL;
  return (char *)p + ((ptrdiff_t)tid - from) * (ptrdiff_t)crts_cg.slice_stride;
}

void crts_ldm_heap_reset(struct crts_cpe *cpe)
{
  cpe->heap_top = cpe->ldm;
  cpe->nholes = 0;
}
