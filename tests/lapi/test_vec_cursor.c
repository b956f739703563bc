/*
 * test_vec_cursor.c - the pair cursor, the one-sided walker and
 * pack/unpack, on the examples of the LAPI_Amsendv page verbatim (GENERIC
 * 5/10/5 into 12/2/4/2, GENERIC 20 into 5/10, IOVECTOR, STRIDED 3 blocks of
 * 5 at pitch 8) and on the corner cases of merging and empty segments.
 *
 * Segments of one side live in rows of a 2-D array, so two segments are
 * never adjacent in memory unless a test wants them to be.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "vec/lapi_vec.h"

#define IV(x) ((void *)(uintptr_t)(x))
#define GUARD 0xEE

struct run {
  const void *src;
  void *dst;
  size_t len;
};

/* Walk the pair and compare its runs with `want`. */
static void expect_runs(const lapi_vec_t *org, const lapi_vec_t *tgt,
                        const struct run *want, size_t nwant)
{
  struct lapi_vec_cursor c;
  const void *src;
  void *dst;
  size_t len, k = 0;
  lapi_vec_cursor_init(&c, org, tgt);
  while (lapi_vec_cursor_next(&c, &src, &dst, &len)) {
    cr_assert_lt(k, nwant, "more runs than the %zu expected", nwant);
    cr_expect(src == want[k].src && dst == want[k].dst && len == want[k].len,
              "run %zu: (%p, %p, %zu), want (%p, %p, %zu)", k, src, dst, len,
              want[k].src, want[k].dst, want[k].len);
    k++;
  }
  cr_expect_eq(k, nwant, "%zu runs, want %zu", k, nwant);
  /* An exhausted cursor stays exhausted. */
  cr_expect_not(lapi_vec_cursor_next(&c, &src, &dst, &len));
}

static void fill_pattern(void *p, size_t n, unsigned seed)
{
  unsigned char *b = p;
  for (size_t i = 0; i < n; i++)
    b[i] = (unsigned char)(seed + 7 * i + 1);
}

static void expect_guard(const unsigned char *p, size_t from, size_t to,
                         const char *what)
{
  for (size_t i = from; i < to; i++)
    cr_expect_eq(p[i], GUARD, "%s: byte %zu overwritten", what, i);
}

/* ------------------------------------------------------------- GENERIC */

Test(vec_cursor, seed_generic_5_10_5_into_12_2_4_2)
{
  static unsigned char o[3][32], t[4][32];
  fill_pattern(o, sizeof o, 3);
  memset(t, GUARD, sizeof t);
  lapi_vec_t org = {LAPI_GEN_GENERIC, 3, (void *[]){o[0], o[1], o[2]},
                    (ulong[]){5, 10, 5}};
  lapi_vec_t tgt = {LAPI_GEN_GENERIC, 4, (void *[]){t[0], t[1], t[2], t[3]},
                    (ulong[]){12, 2, 4, 2}};
  cr_assert_eq(lapi_vec_check_origin(&org), LAPI_SUCCESS);
  cr_assert_eq(lapi_vec_check_target(&tgt), LAPI_SUCCESS);
  cr_assert_eq(lapi_vec_check_pair(&org, &tgt), LAPI_SUCCESS);

  /* The seed's steps; its step 4 (1 B of o1 then 3 B of o2 into t2) is
   * two runs, because a run is contiguous on both sides. */
  const struct run want[] = {
    {o[0], t[0], 5},          /* 1. 5 B o0 -> t0 */
    {o[1], t[0] + 5, 7},      /* 2. 7 B o1 -> rest of t0 */
    {o[1] + 7, t[1], 2},      /* 3. 2 B o1 -> t1 */
    {o[1] + 9, t[2], 1},      /* 4. 1 B o1 -> t2 */
    {o[2], t[2] + 1, 3},      /*    3 B o2 -> t2 + 1 */
    {o[2] + 3, t[3], 2},      /* 5. 2 B o2 -> t3 */
  };
  expect_runs(&org, &tgt, want, sizeof want / sizeof want[0]);

  cr_assert_eq(lapi_vec_pair_bytes(&org, &tgt), 20);
  cr_assert_eq(lapi_vec_copy(&org, &tgt), 20);
  cr_expect_arr_eq(t[0], o[0], 5);
  cr_expect_arr_eq(t[0] + 5, o[1], 7);
  cr_expect_arr_eq(t[1], o[1] + 7, 2);
  cr_expect_eq(t[2][0], o[1][9]);
  cr_expect_arr_eq(t[2] + 1, o[2], 3);
  cr_expect_arr_eq(t[3], o[2] + 3, 2);
  expect_guard(t[0], 12, 32, "t0");
  expect_guard(t[1], 2, 32, "t1");
  expect_guard(t[2], 4, 32, "t2");
  expect_guard(t[3], 2, 32, "t3");
}

Test(vec_cursor, seed_generic_20_into_5_10_copies_15)
{
  static unsigned char o[20], t[2][32];
  fill_pattern(o, sizeof o, 11);
  memset(t, GUARD, sizeof t);
  lapi_vec_t org = {LAPI_GEN_GENERIC, 1, (void *[]){o}, (ulong[]){20}};
  lapi_vec_t tgt = {LAPI_GEN_GENERIC, 2, (void *[]){t[0], t[1]},
                    (ulong[]){5, 10}};
  cr_assert_eq(lapi_vec_check_pair(&org, &tgt), LAPI_SUCCESS);
  const struct run want[] = {{o, t[0], 5}, {o + 5, t[1], 10}};
  expect_runs(&org, &tgt, want, 2);
  cr_assert_eq(lapi_vec_pair_bytes(&org, &tgt), 15);
  cr_assert_eq(lapi_vec_copy(&org, &tgt), 15);
  cr_expect_arr_eq(t[0], o, 5);
  cr_expect_arr_eq(t[1], o + 5, 10);
  expect_guard(t[0], 5, 32, "t0");
  expect_guard(t[1], 10, 32, "t1: the last 5 origin bytes are dropped");
}

Test(vec_cursor, generic_origin_shorter_than_target)
{
  static unsigned char o[2][16], t[32];
  fill_pattern(o, sizeof o, 5);
  memset(t, GUARD, sizeof t);
  lapi_vec_t org = {LAPI_GEN_GENERIC, 2, (void *[]){o[0], o[1]},
                    (ulong[]){3, 4}};
  lapi_vec_t tgt = {LAPI_GEN_GENERIC, 1, (void *[]){t}, (ulong[]){30}};
  const struct run want[] = {{o[0], t, 3}, {o[1], t + 3, 4}};
  expect_runs(&org, &tgt, want, 2);
  cr_assert_eq(lapi_vec_copy(&org, &tgt), 7);
  cr_expect_arr_eq(t, o[0], 3);
  cr_expect_arr_eq(t + 3, o[1], 4);
  expect_guard(t, 7, 32, "target beyond the origin's 7 bytes");
}

/* ------------------------------------------------------------ IOVECTOR */

Test(vec_cursor, seed_iovector_segment_by_segment)
{
  static unsigned char o[3][16], t[3][16];
  fill_pattern(o, sizeof o, 21);
  memset(t, GUARD, sizeof t);
  /* Targets in another order than the origins: byte i of segment k still
   * goes to byte i of target segment k. */
  lapi_vec_t org = {LAPI_GEN_IOVECTOR, 3, (void *[]){o[0], o[1], o[2]},
                    (ulong[]){4, 9, 1}};
  lapi_vec_t tgt = {LAPI_GEN_IOVECTOR, 3, (void *[]){t[2], t[0], t[1]},
                    (ulong[]){4, 9, 1}};
  cr_assert_eq(lapi_vec_check_pair(&org, &tgt), LAPI_SUCCESS);
  const struct run want[] = {{o[0], t[2], 4}, {o[1], t[0], 9},
                             {o[2], t[1], 1}};
  expect_runs(&org, &tgt, want, 3);
  cr_assert_eq(lapi_vec_copy(&org, &tgt), 14);
  cr_expect_arr_eq(t[2], o[0], 4);
  cr_expect_arr_eq(t[0], o[1], 9);
  cr_expect_eq(t[1][0], o[2][0]);
  expect_guard(t[2], 4, 16, "t2");
  expect_guard(t[0], 9, 16, "t0");
  expect_guard(t[1], 1, 16, "t1");
}

Test(vec_cursor, zero_length_segments_are_skipped)
{
  static unsigned char o[3][16], t[2][16];
  fill_pattern(o, sizeof o, 1);
  lapi_vec_t org = {LAPI_GEN_IOVECTOR, 6,
                    (void *[]){NULL, o[0], NULL, o[1], o[2], NULL},
                    (ulong[]){0, 3, 0, 2, 0, 0}};
  lapi_vec_t tgt = {LAPI_GEN_IOVECTOR, 6,
                    (void *[]){t[0], t[0], NULL, t[1], NULL, t[1]},
                    (ulong[]){0, 3, 0, 2, 0, 0}};
  cr_assert_eq(lapi_vec_check_origin(&org), LAPI_SUCCESS);
  cr_assert_eq(lapi_vec_check_target(&tgt), LAPI_SUCCESS);
  cr_assert_eq(lapi_vec_check_pair(&org, &tgt), LAPI_SUCCESS);
  const struct run want[] = {{o[0], t[0], 3}, {o[1], t[1], 2}};
  expect_runs(&org, &tgt, want, 2);

  lapi_vec_t none = {LAPI_GEN_GENERIC, 3, (void *[]){NULL, o[0], NULL},
                     (ulong[]){0, 0, 0}};
  lapi_vec_t some = {LAPI_GEN_GENERIC, 1, (void *[]){t[0]}, (ulong[]){5}};
  expect_runs(&none, &some, NULL, 0);
  expect_runs(&some, &none, NULL, 0);
  lapi_vec_t empty = {LAPI_GEN_GENERIC, 0, NULL, NULL};
  expect_runs(&empty, &some, NULL, 0);
  cr_expect_eq(lapi_vec_copy(&empty, &some), 0);
}

Test(vec_cursor, adjacent_segments_merge_into_one_run)
{
  static unsigned char o[64], t[64];
  fill_pattern(o, sizeof o, 9);
  memset(t, GUARD, sizeof t);
  /* Origin o[0..10) split 4 + 0 + 6 (the empty one elsewhere), then a gap;
   * target t[0..6) then t[6..14) in one piece split 6 + 8. */
  lapi_vec_t org = {LAPI_GEN_GENERIC, 4, (void *[]){o, o + 40, o + 4, o + 20},
                    (ulong[]){4, 0, 6, 4}};
  lapi_vec_t tgt = {LAPI_GEN_GENERIC, 2, (void *[]){t, t + 6},
                    (ulong[]){6, 8}};
  const struct run want[] = {{o, t, 10}, {o + 20, t + 10, 4}};
  expect_runs(&org, &tgt, want, 2);
  cr_assert_eq(lapi_vec_copy(&org, &tgt), 14);
  cr_expect_arr_eq(t, o, 10);
  cr_expect_arr_eq(t + 10, o + 20, 4);
  expect_guard(t, 14, 64, "t");
}

Test(vec_cursor, self_copy_with_overlap_is_a_memmove)
{
  unsigned char buf[32], ref[32];
  fill_pattern(buf, sizeof buf, 2);
  memcpy(ref, buf, sizeof buf);
  memmove(ref + 3, ref, 20);
  lapi_vec_t org = {LAPI_GEN_IOVECTOR, 1, (void *[]){buf}, (ulong[]){20}};
  lapi_vec_t tgt = {LAPI_GEN_IOVECTOR, 1, (void *[]){buf + 3},
                    (ulong[]){20}};
  cr_assert_eq(lapi_vec_copy(&org, &tgt), 20);
  cr_expect_arr_eq(buf, ref, sizeof buf);
}

/* ------------------------------------------------------------- STRIDED */

Test(vec_cursor, seed_strided_3_blocks_of_5_at_pitch_8)
{
  static unsigned char o[24], t[15], s[32];
  fill_pattern(o, sizeof o, 17);
  memset(t, GUARD, sizeof t);
  lapi_vec_t org = {LAPI_GEN_STRIDED_XFER, 3, (void *[]){o, IV(5), IV(8)},
                    NULL};
  /* A dense target (pitch == block) is one piece. */
  lapi_vec_t tgt = {LAPI_GEN_STRIDED_XFER, 3, (void *[]){t, IV(5), IV(5)},
                    NULL};
  cr_assert_eq(lapi_vec_check_pair(&org, &tgt), LAPI_SUCCESS);
  cr_assert_eq(lapi_vec_bytes(&org), 15);
  const struct run want[] = {{o, t, 5}, {o + 8, t + 5, 5},
                             {o + 16, t + 10, 5}};
  expect_runs(&org, &tgt, want, 3);
  cr_assert_eq(lapi_vec_copy(&org, &tgt), 15);
  /* "5 bytes from orgaddr, 5 from orgaddr+8 and 5 from orgaddr+16" */
  cr_expect_arr_eq(t, o, 5);
  cr_expect_arr_eq(t + 5, o + 8, 5);
  cr_expect_arr_eq(t + 10, o + 16, 5);

  /* Back into a strided target with another pitch: gaps stay untouched. */
  memset(s, GUARD, sizeof s);
  lapi_vec_t wide = {LAPI_GEN_STRIDED_XFER, 3, (void *[]){s, IV(5), IV(11)},
                     NULL};
  cr_assert_eq(lapi_vec_check_pair(&tgt, &wide), LAPI_SUCCESS);
  const struct run back[] = {{t, s, 5}, {t + 5, s + 11, 5},
                             {t + 10, s + 22, 5}};
  expect_runs(&tgt, &wide, back, 3);
  cr_assert_eq(lapi_vec_copy(&tgt, &wide), 15);
  for (int b = 0; b < 3; b++) {
    cr_expect_arr_eq(s + 11 * b, o + 8 * b, 5);
    expect_guard(s, 11 * b + 5, b < 2 ? 11 * b + 11 : 32, "stride gap");
  }
}

Test(vec_cursor, dense_strided_pair_is_one_run)
{
  static unsigned char o[3][12], t[12];
  fill_pattern(o, sizeof o, 8);
  lapi_vec_t org = {LAPI_GEN_STRIDED_XFER, 6, (void *[]){o[1], IV(2), IV(2)},
                    NULL};
  lapi_vec_t tgt = {LAPI_GEN_STRIDED_XFER, 6, (void *[]){t, IV(2), IV(2)},
                    NULL};
  const struct run want[] = {{o[1], t, 12}};
  expect_runs(&org, &tgt, want, 1);
  cr_assert_eq(lapi_vec_copy(&org, &tgt), 12);
  cr_expect_arr_eq(t, o[1], 12);
}

Test(vec_cursor, strided_block_zero_moves_nothing)
{
  static unsigned char t[16];
  memset(t, GUARD, sizeof t);
  lapi_vec_t org = {LAPI_GEN_STRIDED_XFER, 4, (void *[]){NULL, IV(0), IV(3)},
                    NULL};
  lapi_vec_t tgt = {LAPI_GEN_STRIDED_XFER, 4, (void *[]){t, IV(0), IV(0)},
                    NULL};
  cr_assert_eq(lapi_vec_check_pair(&org, &tgt), LAPI_SUCCESS);
  expect_runs(&org, &tgt, NULL, 0);
  cr_expect_eq(lapi_vec_copy(&org, &tgt), 0);
  expect_guard(t, 0, 16, "t");
}

/* ------------------------------------------------------ walker, pack */

Test(vec_cursor, walker_pieces_respect_max)
{
  static unsigned char o[3][16];
  lapi_vec_t v = {LAPI_GEN_GENERIC, 3, (void *[]){o[0], o[1], o[2]},
                  (ulong[]){5, 10, 5}};
  struct lapi_vec_walk w;
  void *p;
  size_t n;
  lapi_vec_walk_init(&w, &v);
  cr_assert(lapi_vec_walk_next(&w, 3, &p, &n) && p == o[0] && n == 3);
  cr_assert(lapi_vec_walk_next(&w, 100, &p, &n) && p == o[0] + 3 && n == 2);
  cr_assert_not(lapi_vec_walk_next(&w, 0, &p, &n), "max 0 yields nothing");
  cr_assert(lapi_vec_walk_next(&w, 100, &p, &n) && p == o[1] && n == 10);
  cr_assert_eq(lapi_vec_walk_seek(&w, 17), 17);
  cr_assert(lapi_vec_walk_next(&w, 100, &p, &n) && p == o[2] + 2 && n == 3);
  cr_assert_not(lapi_vec_walk_next(&w, 100, &p, &n));
  cr_assert_eq(lapi_vec_walk_seek(&w, 99), 20, "seek stops at the end");
  cr_assert_eq(lapi_vec_walk_seek(&w, 0), 0, "seek goes back to the start");
  cr_assert(lapi_vec_walk_next(&w, 1, &p, &n) && p == o[0] && n == 1);
}

/* The origin stream of the seed's GENERIC vector, packed and unpacked
 * again through chunk sizes that straddle every segment boundary. */
Test(vec_cursor, pack_unpack_in_odd_chunks)
{
  static unsigned char o[3][16], t[4][16], wire[32], stream[20];
  fill_pattern(o, sizeof o, 33);
  memcpy(stream, o[0], 5);
  memcpy(stream + 5, o[1], 10);
  memcpy(stream + 15, o[2], 5);
  lapi_vec_t org = {LAPI_GEN_GENERIC, 3, (void *[]){o[0], o[1], o[2]},
                    (ulong[]){5, 10, 5}};
  lapi_vec_t tgt = {LAPI_GEN_GENERIC, 4, (void *[]){t[0], t[1], t[2], t[3]},
                    (ulong[]){12, 2, 4, 2}};
  const size_t chunks[] = {1, 2, 3, 4, 6, 7, 13, 19, 20, 64};
  for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
    size_t chunk = chunks[c];
    memset(wire, GUARD, sizeof wire);
    memset(t, GUARD, sizeof t);
    size_t off = 0, n;
    while ((n = lapi_vec_pack(&org, wire + off, off, chunk)) > 0) {
      cr_assert_leq(n, chunk);
      off += n;
    }
    cr_assert_eq(off, 20, "chunk %zu: packed %zu bytes", chunk, off);
    cr_expect_arr_eq(wire, stream, 20, "chunk %zu: wrong stream", chunk);
    expect_guard(wire, 20, sizeof wire, "wire");
    for (off = 0; (n = lapi_vec_unpack(&tgt, wire + off, off, chunk)) > 0;)
      off += n;
    cr_assert_eq(off, 20, "chunk %zu: unpacked %zu bytes", chunk, off);
    cr_expect_arr_eq(t[0], stream, 12);
    cr_expect_arr_eq(t[1], stream + 12, 2);
    cr_expect_arr_eq(t[2], stream + 14, 4);
    cr_expect_arr_eq(t[3], stream + 18, 2);
    expect_guard(t[0], 12, 16, "t0");
    expect_guard(t[1], 2, 16, "t1");
    expect_guard(t[2], 4, 16, "t2");
    expect_guard(t[3], 2, 16, "t3");
  }
}

Test(vec_cursor, streaming_walkers_pack_and_unpack)
{
  static unsigned char o[24], t[3][8], wire[15];
  fill_pattern(o, sizeof o, 41);
  memset(t, GUARD, sizeof t);
  lapi_vec_t org = {LAPI_GEN_STRIDED_XFER, 3, (void *[]){o, IV(5), IV(8)},
                    NULL};
  lapi_vec_t tgt = {LAPI_GEN_IOVECTOR, 3, (void *[]){t[1], t[2], t[0]},
                    (ulong[]){6, 6, 3}};
  struct lapi_vec_walk in, out;
  lapi_vec_walk_init(&in, &org);
  lapi_vec_walk_init(&out, &tgt);
  size_t done = 0;
  while (done < 15) {
    size_t n = lapi_vec_walk_pack(&in, wire + done, 4);
    cr_assert_eq(lapi_vec_walk_unpack(&out, wire + done, n), n);
    done += n;
    cr_assert(n > 0);
  }
  cr_assert_eq(lapi_vec_walk_pack(&in, wire, 4), 0, "origin is exhausted");
  unsigned char stream[15];
  memcpy(stream, o, 5);
  memcpy(stream + 5, o + 8, 5);
  memcpy(stream + 10, o + 16, 5);
  cr_expect_arr_eq(wire, stream, 15);
  cr_expect_arr_eq(t[1], stream, 6);
  cr_expect_arr_eq(t[2], stream + 6, 6);
  cr_expect_arr_eq(t[0], stream + 12, 3);
  expect_guard(t[0], 3, 8, "t0");
  expect_guard(t[1], 6, 8, "t1");
  expect_guard(t[2], 6, 8, "t2");
}

Test(vec_cursor, pack_at_offsets)
{
  static unsigned char o[24];
  unsigned char buf[8];
  fill_pattern(o, sizeof o, 50);
  lapi_vec_t v = {LAPI_GEN_STRIDED_XFER, 3, (void *[]){o, IV(5), IV(8)},
                  NULL};
  /* Stream bytes 7..10 are block 1 bytes 2..4 and block 2 byte 0. */
  memset(buf, GUARD, sizeof buf);
  cr_assert_eq(lapi_vec_pack(&v, buf, 7, 4), 4);
  cr_expect_arr_eq(buf, o + 10, 3);
  cr_expect_eq(buf[3], o[16]);
  cr_expect_eq(buf[4], GUARD);
  /* The end of the stream cuts a chunk short; past it nothing moves. */
  cr_assert_eq(lapi_vec_pack(&v, buf, 13, 8), 2);
  cr_expect_arr_eq(buf, o + 19, 2);
  cr_assert_eq(lapi_vec_pack(&v, buf, 15, 8), 0);
  cr_assert_eq(lapi_vec_pack(&v, buf, 1000, 8), 0);
  cr_assert_eq(lapi_vec_unpack(&v, buf, 16, 8), 0);
  cr_assert_eq(lapi_vec_pack(&v, buf, 3, 0), 0);

  /* The same on a dense strided vector, which walks as one piece. */
  lapi_vec_t dense = {LAPI_GEN_STRIDED_XFER, 4, (void *[]){o, IV(6), IV(6)},
                      NULL};
  cr_assert_eq(lapi_vec_pack(&dense, buf, 9, 8), 8);
  cr_expect_arr_eq(buf, o + 9, 8);
  cr_assert_eq(lapi_vec_pack(&dense, buf, 20, 8), 4);
  cr_expect_arr_eq(buf, o + 20, 4);
}
