/*
 * bulk_copy.h - memcpy for the data paths of libcrts and liblapi, without
 * the slow case of REP MOVSB on AMD Zen.
 *
 * glibc before 2.40 copies blocks from a few KiB up with REP MOVSB.  On
 * AMD Zen 3/4 that instruction runs about 20 times slower when the
 * destination lies 1-63 bytes after the source modulo 4 KiB (glibc bug
 * 30994; measured on the AMD EPYC guest of docs/PERFORMANCE.md: 16 KiB in
 * 6.9 us instead of 0.25, 64 KiB in 29 us instead of 1.4).  Our own
 * layouts hit it systematically: a page-aligned stage or receive buffer
 * copied into a malloc'ed user buffer, which starts 16 bytes into its
 * page.  Such copies go through 16-byte vector moves here; every other
 * copy is glibc's memcpy, unchanged.
 *
 * Shared by libcrts and liblapi (no names of either: src/crts includes
 * no LAPI header).
 */
#ifndef OPENLAPI_BULK_COPY_H
#define OPENLAPI_BULK_COPY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__SSE2__) /* every x86-64; x86-32 when built for it */
#include <emmintrin.h>
#define BULK_COPY_VECTOR 1
#endif

/* Below this glibc does not use REP MOVSB (its threshold is 2 KiB or
 * more on every x86 it supports). */
#define BULK_COPY_MIN 1024

/* 1 if memcpy(dst, src, n) may take the slow REP MOVSB case. */
static inline int bulk_copy_aliased(const void *dst, const void *src,
                                    size_t n)
{
  size_t ahead = ((uintptr_t)dst - (uintptr_t)src) & 4095;
  return n >= BULK_COPY_MIN && ahead != 0 && ahead < 64;
}

#ifdef BULK_COPY_VECTOR
/* Forward, 64 bytes a turn: the loads of a turn come before its stores,
 * and dst never overlaps src (memcpy's contract). */
static inline void bulk_copy_vector(void *dst, const void *src, size_t n)
{
  unsigned char *d = dst;
  const unsigned char *s = src;
  for (; n >= 64; n -= 64, d += 64, s += 64) {
    __m128i a = _mm_loadu_si128((const __m128i *)s);
    __m128i b = _mm_loadu_si128((const __m128i *)(s + 16));
    __m128i c = _mm_loadu_si128((const __m128i *)(s + 32));
    __m128i e = _mm_loadu_si128((const __m128i *)(s + 48));
    _mm_storeu_si128((__m128i *)d, a);
    _mm_storeu_si128((__m128i *)(d + 16), b);
    _mm_storeu_si128((__m128i *)(d + 32), c);
    _mm_storeu_si128((__m128i *)(d + 48), e);
  }
  memcpy(d, s, n); /* under 64 bytes: glibc's vector moves */
}
#endif

/* memcpy(dst, src, n): the regions must not overlap. */
static inline void bulk_copy(void *dst, const void *src, size_t n)
{
#ifdef BULK_COPY_VECTOR
  if (bulk_copy_aliased(dst, src, n)) {
    bulk_copy_vector(dst, src, n);
    return;
  }
#endif
  memcpy(dst, src, n);
}

/* memmove(dst, src, n): bulk_copy unless the regions overlap. */
static inline void bulk_move(void *dst, const void *src, size_t n)
{
  uintptr_t d = (uintptr_t)dst, s = (uintptr_t)src;
  if (d - s >= n && s - d >= n)
    bulk_copy(dst, src, n);
  else
    memmove(dst, src, n);
}

#endif
