/*
 * test_bulk_copy.c - util/bulk_copy.h: the copies of the data paths give
 * memcpy's and memmove's bytes whichever way they go (glibc's memcpy, or
 * the vector loop for a destination 1-63 bytes after its source modulo
 * 4 KiB), and touch nothing outside the destination.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/bulk_copy.h"

#define AREA (3 * 65536 + 3 * 4096)

static unsigned char *area_src, *area_dst, *want;

static void setup(void)
{
  area_src = aligned_alloc(4096, AREA);
  area_dst = aligned_alloc(4096, AREA);
  want = malloc(AREA);
  cr_assert(area_src && area_dst && want);
  for (size_t i = 0; i < AREA; i++)
    area_src[i] = (unsigned char)(i * 13 + (i >> 8) + 5);
}

static void teardown(void)
{
  free(area_src);
  free(area_dst);
  free(want);
}

TestSuite(bulk_copy, .init = setup, .fini = teardown);

/* Copy n bytes from area_src + so to area_dst + dof; the whole
 * destination area must equal what memcpy gives. */
static void one_copy(size_t so, size_t dof, size_t n)
{
  memset(area_dst, 0xA5, AREA);
  memset(want, 0xA5, AREA);
  memcpy(want + dof, area_src + so, n);
  bulk_copy(area_dst + dof, area_src + so, n);
  cr_assert(memcmp(area_dst, want, AREA) == 0,
            "bulk_copy of %zu bytes, source +%zu, destination +%zu", n, so,
            dof);
}

Test(bulk_copy, the_aliased_distances_take_the_loop)
{
  /* The predicate itself: only 1-63 bytes ahead modulo 4 KiB, and only
   * from BULK_COPY_MIN bytes. */
  for (size_t d = 0; d < 4096; d++) {
    int want_loop = d >= 1 && d < 64;
    cr_assert_eq(bulk_copy_aliased(area_dst + 4096 + d, area_dst, 4096),
                 want_loop, "distance %zu", d);
  }
  cr_assert(!bulk_copy_aliased(area_dst + 16, area_dst, BULK_COPY_MIN - 1));
  cr_assert(bulk_copy_aliased(area_dst + 16, area_dst, BULK_COPY_MIN));
}

Test(bulk_copy, every_distance_gives_memcpy_bytes)
{
  static const size_t sizes[] = {1, 63, 64, 1023, 1024, 1025, 4096, 10007,
                                 65536};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
    for (size_t d = 0; d < 4096; d += sizes[k] > 4096 ? 61 : 7)
      one_copy(100, 100 + 65536 + 4096 + d, sizes[k]);
  /* the distances of the loop, each one, and both source alignments of
   * the data paths (a page-aligned stage, a malloc'ed buffer) */
  for (size_t d = 1; d < 64; d++) {
    one_copy(0, 65536 + 4096 + d, 16384 + 5);
    one_copy(16, 65536 + 4096 + 16 + d, 4096);
  }
}

Test(bulk_copy, move_handles_overlap_both_ways)
{
  static const size_t sizes[] = {5, 1024, 4096, 20000};
  static const long shifts[] = {-4096, -63, -16, -1, 1, 16, 63, 4096};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
    for (size_t s = 0; s < sizeof shifts / sizeof shifts[0]; s++) {
      size_t from = 65536, to = (size_t)((long)from + shifts[s]);
      memcpy(area_dst, area_src, AREA);
      memcpy(want, area_src, AREA);
      memmove(want + to, want + from, sizes[k]);
      bulk_move(area_dst + to, area_dst + from, sizes[k]);
      cr_assert(memcmp(area_dst, want, AREA) == 0,
                "bulk_move of %zu bytes by %ld", sizes[k], shifts[s]);
    }
}
