/*
 * crts_ldm.c - the LDM arena: 64 slices of 256 KiB, each a CPE's LDM.
 *
 * Slices sit a power-of-two stride (512 KiB) apart, so finding the owner of
 * an address is a shift, and the unused half of every stride (and one
 * stride in front of slice 0) is an inaccessible guard: an overrun of one
 * CPE's LDM faults instead of corrupting its neighbour.  Inside a slice a
 * guard page (placed by the CPE thread once it knows its TLS size)
 * separates the heap from the stack; see crts_cg.h for the layout.  The
 * guards cost address space only.
 */

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "crts_cg.h"

/* log2 of the slice stride: the next power of two above one LDM. */
#define SLICE_SHIFT 19

int crts_ldm_arena_init(void)
{
  size_t stride = (size_t)1 << SLICE_SHIFT;
  _Static_assert(((size_t)1 << SLICE_SHIFT) >= 2 * CRTS_MAX_LDM_SIZE,
                 "the stride must leave a guard after every slice");
  crts_cg.slice_stride = stride;
  crts_cg.arena_len = stride * CRTS_MAX_SPE_NUM;
  size_t map_len = crts_cg.arena_len + stride;
  char *map = mmap(NULL, map_len, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (map == MAP_FAILED) {
    crts_report("CRTS_init", "cannot map %zu bytes of LDM: %s", map_len,
                strerror(errno));
    return -1;
  }
  crts_cg.arena = map + stride;
  for (int i = 0; i < CRTS_MAX_SPE_NUM; i++) {
    char *ldm = crts_cg.arena + (size_t)i * stride;
    if (mprotect(ldm, CRTS_MAX_LDM_SIZE, PROT_READ | PROT_WRITE) != 0) {
      crts_report("CRTS_init", "cannot map the LDM of CPE %d: %s", i,
                  strerror(errno));
      munmap(map, map_len);
      crts_cg.arena = NULL;
      return -1;
    }
    crts_cg.cpe[i].ldm = ldm;
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
  if ((off & (crts_cg.slice_stride - 1)) >= CRTS_MAX_LDM_SIZE)
    return -1; /* the guard after the slice */
  return (int)(off >> SLICE_SHIFT);
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
  return (char *)p + ((ptrdiff_t)tid - from) * ((ptrdiff_t)1 << SLICE_SHIFT);
}

void crts_ldm_heap_reset(struct crts_cpe *cpe)
{
  cpe->heap_top = cpe->ldm;
  cpe->nholes = 0;
}
