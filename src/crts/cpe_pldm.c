/*
 * cpe_pldm.c - the LDM heap of a CPE (CRTS_pldm_* and the ldm_* twins).
 *
 * A bump allocator over the heap part of the caller's slice.  Freeing the
 * topmost block lowers the top at once; other frees become holes that are
 * reused first-fit and folded back into the top when it reaches them.
 */
#include <stdint.h>

#include "crts_cg.h"

/* Allocation granule: keeps 256-bit SIMD data and doubles aligned. */
#define PLDM_ALIGN 32

static size_t round_up(size_t n)
{
  return (n + PLDM_ALIGN - 1) & ~(size_t)(PLDM_ALIGN - 1);
}

/* Fold holes that now touch the top back into it. */
static void fold_top(struct crts_cpe *cpe)
{
  int again = 1;
  while (again) {
    again = 0;
    for (int i = 0; i < cpe->nholes; i++) {
      if (cpe->holes[i].p + cpe->holes[i].len == cpe->heap_top) {
        cpe->heap_top = cpe->holes[i].p;
        cpe->holes[i] = cpe->holes[--cpe->nholes];
        again = 1;
        break;
      }
    }
  }
}

void *CRTS_pldm_malloc(size_t size)
{
  struct crts_cpe *cpe = crts_check_cpe("CRTS_pldm_malloc");
  if (!cpe)
    return NULL;
  if (size == 0)
    size = 1;
  size_t need = round_up(size);
  if (need < size)
    return NULL;
  for (int i = 0; i < cpe->nholes; i++) {
    if (cpe->holes[i].len >= need) {
      char *p = cpe->holes[i].p;
      cpe->holes[i].p += need;
      cpe->holes[i].len -= need;
      if (cpe->holes[i].len == 0)
        cpe->holes[i] = cpe->holes[--cpe->nholes];
      return p;
    }
  }
  if ((size_t)(cpe->heap_limit - cpe->heap_top) < need)
    return NULL;
  char *p = cpe->heap_top;
  cpe->heap_top += need;
  return p;
}

void *ldm_malloc(size_t size) { return CRTS_pldm_malloc(size); }

void CRTS_pldm_free(void *p, size_t size)
{
  struct crts_cpe *cpe = crts_check_cpe("CRTS_pldm_free");
  if (!cpe || !p)
    return;
  char *c = p;
  size_t len = round_up(size ? size : 1);
  if (c < cpe->ldm || c + len > cpe->heap_top) {
    crts_report("CRTS_pldm_free", "%p (+%zu bytes) is not a block of this "
                "CPE's LDM heap; ignored", p, size);
    return;
  }
  if (c + len == cpe->heap_top) {
    cpe->heap_top = c;
    fold_top(cpe);
    return;
  }
  if (cpe->nholes == (int)(sizeof cpe->holes / sizeof cpe->holes[0])) {
    crts_report("CRTS_pldm_free", "too many out-of-order frees; %zu bytes at "
                "%p stay allocated until CRTS_pldm_free_all", size, p);
    return;
  }
  cpe->holes[cpe->nholes].p = c;
  cpe->holes[cpe->nholes].len = len;
  cpe->nholes++;
}

void ldm_free(void *p, size_t size) { CRTS_pldm_free(p, size); }

void *CRTS_pldm_malloc_max(size_t *size)
{
  struct crts_cpe *cpe = crts_check_cpe("CRTS_pldm_malloc_max");
  if (!cpe || !size)
    return NULL;
  size_t left = (size_t)(cpe->heap_limit - cpe->heap_top);
  left &= ~(size_t)(PLDM_ALIGN - 1);
  if (left == 0) {
    *size = 0;
    return NULL;
  }
  char *p = cpe->heap_top;
  cpe->heap_top += left;
  *size = left;
  return p;
}

void *ldm_malloc_max(size_t *size) { return CRTS_pldm_malloc_max(size); }

void CRTS_pldm_free_all(void)
{
  struct crts_cpe *cpe = crts_check_cpe("CRTS_pldm_free_all");
  if (cpe)
    crts_ldm_heap_reset(cpe);
}

void ldm_free_all(void) { CRTS_pldm_free_all(); }

int CRTS_pldm_get_free_size(void)
{
  struct crts_cpe *cpe = crts_check_cpe("CRTS_pldm_get_free_size");
  if (!cpe)
    return -1;
  return (int)((size_t)(cpe->heap_limit - cpe->heap_top) &
               ~(size_t)(PLDM_ALIGN - 1));
}

int get_allocatable_size(void) { return CRTS_pldm_get_free_size(); }

void *CRTS_get_free_addr(void)
{
  struct crts_cpe *cpe = crts_check_cpe("CRTS_get_free_addr");
  return cpe ? cpe->heap_top : NULL;
}
