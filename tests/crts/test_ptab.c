/*
 * test_ptab.c - parallel table lookup: the manual's DES example, the two
 * copy layouts of CRTS_ptab_cpy, writes, and refused calls.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "crts_cg.h"
#include "crts_test_util.h"

/* The manual's example (3.11.4), as a CPE kernel. */
static unsigned int DES_IPTAB1[16] = {
  0x00000060, 0x00000002, 0x00000200, 0x00000202,
  0x00020000, 0x00020002, 0x00020200, 0x00020202,
  0x02000000, 0x02000002, 0x02000200, 0x02000202,
  0x02020000, 0x02020002, 0x02020200, 0x02020202 };
static __thread_local uintv16 VDES_IPTAB1;
static __thread_local uintv16 d0;
static __thread_local uintv16 t0;
static __thread_local uintv16 P_IPTAB1[16];

static void des_kernel(void *arg)
{
  (void)arg;
  VDES_IPTAB1 = CRTS_ptab_cpy16(DES_IPTAB1, 16, (unsigned int *)P_IPTAB1);
  t0 = simd_set_uintv16(4, 8, 12, 0, 4, 0, 16, 20, 24, 0, 28, 0, 36, 0, 0, 0);
  d0 = CRTS_ptab_lookup(t0, VDES_IPTAB1);
  int ok = 1;
  for (int i = 0; i < 16; i++)
    ok &= d0.v[i] == DES_IPTAB1[t0.v[i] / 4];
  CPE_CHECK(ok);
  /* Interleaved copies: row k holds element k of all 16 copies. */
  ok = 1;
  for (int k = 0; k < 16; k++)
    for (int i = 0; i < 16; i++)
      ok &= P_IPTAB1[k].v[i] == DES_IPTAB1[k];
  CPE_CHECK(ok);
  /* The parallel address is the table's own. */
  uintv16 a = CRTS_get_ptab_addr((unsigned int *)P_IPTAB1);
  CPE_CHECK(memcmp(&a, &VDES_IPTAB1, sizeof a) == 0);
}

Test(ptab, manual_des_example)
{
  crts_test_run(des_kernel, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
}

/* Four 1 KiB tables (256 elements) as in the manual's CRTS_ptab_cpy text. */
#define UNIT 256
static unsigned int T[4][UNIT];
static __thread_local unsigned int ptable[16 * UNIT];

static unsigned int tval(int table, int k)
{
  return (unsigned)table << 24 | (unsigned)k << 8 | 0x5a;
}

static uintv16 offsets(int seed)
{
  uintv16 o;
  for (int i = 0; i < 16; i++)
    o.v[i] = 4u * (unsigned)((seed * 37 + i * 53) % UNIT);
  return o;
}

static void copy_kernel(void *arg)
{
  (void)arg;
  unsigned int *orig[16];
  /* Alternating: copies T0 T1 T2 T3 T0 T1 ... */
  for (int i = 0; i < 16; i += 4)
    for (int j = 0; j < 4; j++)
      orig[i + j] = T[j];
  uintv16 pt1 = CRTS_ptab_cpy(orig, UNIT, 16, ptable);
  int ok = 1;
  for (int s = 0; s < 20; s++) {
    uintv16 o = offsets(s + CRTS_tid);
    uintv16 r = CRTS_ptab_lookup(o, pt1);
    for (int i = 0; i < 16; i++)
      ok &= r.v[i] == tval(i % 4, (int)o.v[i] / 4);
  }
  CPE_CHECK(ok);
  CPE_CHECK(ptable[16 * 5 + 6] == tval(2, 5)); /* row 5, lane 6 */

  /* Sequential, parallelism 8: T0 T0 T1 T1 T2 T2 T3 T3. */
  for (int i = 0; i < 8; i++)
    orig[i] = T[i / 2];
  pt1 = CRTS_ptab_cpy(orig, UNIT, 8, ptable);
  ok = 1;
  for (int s = 0; s < 20; s++) {
    uintv16 o = offsets(s);
    uintv16 r = CRTS_ptab_lookup(o, pt1);
    for (int i = 0; i < 16; i++) /* lanes 8..15 repeat copies 0..7 */
      ok &= r.v[i] == tval((i % 8) / 2, (int)o.v[i] / 4);
  }
  CPE_CHECK(ok);

  /* Write lane-wise, then read back; other copies keep their values. */
  uintv16 o = offsets(3), v;
  for (int i = 0; i < 16; i++)
    v.v[i] = 0xc0de0000u + (unsigned)(i * 16 + CRTS_tid);
  CRTS_ptab_write(o, pt1, v);
  uintv16 r = CRTS_ptab_lookup(o, pt1);
  CPE_CHECK(memcmp(&r, &v, sizeof r) == 0);
  ok = 1;
  for (int i = 0; i < 16; i++) {
    /* Lane (i + 1) % 16 at lane i's offset still sees its own copy. */
    int other = (i + 1) % 16;
    uintv16 probe = o, q;
    for (int l = 0; l < 16; l++)
      probe.v[l] = o.v[i];
    q = CRTS_ptab_lookup(probe, pt1);
    if (o.v[other] != o.v[i])
      ok &= q.v[other] == tval((other % 8) / 2, (int)o.v[i] / 4);
    ok &= q.v[i] == v.v[i];
  }
  CPE_CHECK(ok);
  CPE_CHECK(ptable[16 * (o.v[0] / 4) + 0] == v.v[0]);
}

Test(ptab, copy_layouts_lookup_and_write)
{
  for (int t = 0; t < 4; t++)
    for (int k = 0; k < UNIT; k++)
      T[t][k] = tval(t, k);
  crts_test_run(copy_kernel, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
}

static int is_bad(uintv16 v)
{
  for (int i = 0; i < 16; i++)
    if (v.v[i] != 0xffffffffu)
      return 0;
  return 1;
}

static __thread_local unsigned int small_table[16 * 4];
static unsigned int main_table[16 * 4];

static void error_kernel(void *arg)
{
  (void)arg;
  unsigned int src[4] = { 1, 2, 3, 4 };
  unsigned int *orig[16] = { src, src };
  memset(small_table, 0x11, sizeof small_table);
  CPE_CHECK(is_bad(CRTS_get_ptab_addr(main_table)));
  CPE_CHECK(is_bad(CRTS_get_ptab_addr(NULL)));
  CPE_CHECK(is_bad(CRTS_get_ptab_addr(
      (unsigned int *)((char *)small_table + 2))));
  CPE_CHECK(is_bad(CRTS_ptab_cpy16(src, 4, main_table)));
  CPE_CHECK(is_bad(CRTS_ptab_cpy16(src, 100000, small_table))); /* > LDM */
  CPE_CHECK(is_bad(CRTS_ptab_cpy16(src, 0, small_table)));
  CPE_CHECK(is_bad(CRTS_ptab_cpy16(NULL, 4, small_table)));
  CPE_CHECK(is_bad(CRTS_ptab_cpy16(small_table, 4, small_table)));
  CPE_CHECK(is_bad(CRTS_ptab_cpy(orig, 4, 0, small_table)));
  CPE_CHECK(is_bad(CRTS_ptab_cpy(orig, 4, 17, small_table)));
  CPE_CHECK(is_bad(CRTS_ptab_cpy(orig, 4, 3, small_table))); /* orig[2] NULL */
  CPE_CHECK(is_bad(CRTS_ptab_cpy(NULL, 4, 2, small_table)));
  /* Another CPE's LDM is not where this CPE builds its table. */
  CPE_CHECK(is_bad(CRTS_ptab_cpy16(
      src, 4, crts_ldm_translate(small_table, (CRTS_tid + 1) % 64))));
  int same = 1;
  for (int i = 0; i < 16 * 4; i++)
    same &= small_table[i] == 0x11111111u;
  CPE_CHECK(same);

  /* A valid table; then lookups and writes off its end or with a bad base. */
  uintv16 b = CRTS_ptab_cpy(orig, 4, 2, small_table);
  CPE_CHECK(!is_bad(b));
  uintv16 o = simd_set_uintv16(0, 4, 8, 12, 0, 4, 8, 12, 0, 4, 8, 12, 0, 4, 8,
                               12);
  uintv16 r = CRTS_ptab_lookup(o, b);
  int ok = 1;
  for (int i = 0; i < 16; i++)
    ok &= r.v[i] == src[o.v[i] / 4];
  CPE_CHECK(ok);
  r = CRTS_ptab_lookup(o, CRTS_get_ptab_addr(main_table));
  ok = 1;
  for (int i = 0; i < 16; i++)
    ok &= r.v[i] == 0;
  CPE_CHECK(ok);
  uintv16 far = o;
  far.v[3] = 0x7fffffffu;
  r = CRTS_ptab_lookup(far, b);
  CPE_CHECK(r.v[3] == 0 && r.v[2] == src[2]);
  uintv16 v = simd_set_uintv16(9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9);
  CRTS_ptab_write(far, b, v); /* one lane out of range: nothing written */
  r = CRTS_ptab_lookup(o, b);
  ok = 1;
  for (int i = 0; i < 16; i++)
    ok &= r.v[i] == src[o.v[i] / 4];
  CPE_CHECK(ok);
}

Test(ptab, bad_tables_and_lanes_are_refused)
{
  crts_test_run(error_kernel, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
}

Test(ptab, simd_set_uintv16_keeps_lane_order)
{
  uintv16 v = simd_set_uintv16(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
                               14, 15);
  for (unsigned i = 0; i < 16; i++)
    cr_assert_eq(v.v[i], i);
}

Test(ptab, lookups_need_a_cpe)
{
  cr_assert_eq(CRTS_init(), 0);
  uintv16 z = simd_set_uintv16(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
  uintv16 r = CRTS_ptab_lookup(z, z);
  for (int i = 0; i < 16; i++)
    cr_assert_eq(r.v[i], 0);
  cr_assert(is_bad(CRTS_get_ptab_addr(main_table)));
}
