/*
 * test_scoll.c - CRTS_scoll_alltoall, _alltoall_inplace and _redurt: the
 * bytes every CPE ends with, for each element type and operation, against
 * a reference computed on the MPE; and the calls that must be refused.
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crts_cg.h"
#include "crts_test_util.h"

/* ------------------------------------------------------------ alltoall */

#define MAX_UNIT_WORDS 8
static __thread_local int a2a_src[64 * MAX_UNIT_WORDS];
static __thread_local int a2a_dst[64 * MAX_UNIT_WORDS];
static __thread_local int a2a_buf[64 * MAX_UNIT_WORDS];

/* Word w of the unit that rank `from` sends to rank `to`. */
static int a2a_word(int from, int to, int w)
{
  return from * 1000003 + to * 1009 + w + 1;
}

static void a2a_fill(int *p, int me, int size, int words)
{
  for (int to = 0; to < size; to++)
    for (int w = 0; w < words; w++)
      p[to * words + w] = a2a_word(me, to, w);
}

/* 1 if p holds, at unit j, what rank j sent to me. */
static int a2a_received(const int *p, int me, int size, int words)
{
  for (int from = 0; from < size; from++)
    for (int w = 0; w < words; w++)
      if (p[from * words + w] != a2a_word(from, me, w))
        return 0;
  return 1;
}

static int group_size(void) { return crts_cg.group_size; }

static void alltoall_kernel(void *arg)
{
  int words = *(int *)arg;
  int me = CRTS_tid, size = group_size();
  a2a_fill(a2a_src, me, size, words);
  memset(a2a_dst, 0x5a, sizeof a2a_dst);
  CPE_CHECK(CRTS_scoll_alltoall(a2a_src, a2a_dst, words * 4) == 0);
  CPE_CHECK(a2a_received(a2a_dst, me, size, words));
  /* The source is left alone and nothing is written past the result. */
  int intact = 1;
  for (int to = 0; to < size; to++)
    for (int w = 0; w < words; w++)
      intact &= a2a_src[to * words + w] == a2a_word(me, to, w);
  CPE_CHECK(intact);
  CPE_CHECK(((unsigned char *)a2a_dst)[size * words * 4] == 0x5a);
  /* A second call right away: barrier reuse across calls. */
  a2a_fill(a2a_src, me, size, words);
  CPE_CHECK(CRTS_scoll_alltoall(a2a_src, a2a_dst, words * 4) == 0);
  CPE_CHECK(a2a_received(a2a_dst, me, size, words));
}

static void run_alltoall(int words, int size)
{
  crts_test_run(alltoall_kernel, &words);
  CRTS_ASSERT_NO_CPE_FAILURE();
  /* Each CPE read words*4 bytes from each of the others, twice. */
  uint64_t want = 2ull * (uint64_t)(size - 1) * (uint64_t)words * 4;
  for (int t = 0; t < size; t++)
    cr_assert_eq(crts_cg.cpe[t].stat_bytes[CRTS_STAT_RMA], want,
                 "CPE %d counted %llu RMA bytes", t,
                 (unsigned long long)crts_cg.cpe[t].stat_bytes[CRTS_STAT_RMA]);
}

Test(scoll, alltoall_64_cpes) { run_alltoall(4, 64); }

Test(scoll, alltoall_8_cpes)
{
  setenv("CRTS_NUM_CPES", "8", 1);
  run_alltoall(3, 8);
}

Test(scoll, alltoall_7_cpes_one_word)
{
  setenv("CRTS_NUM_CPES", "7", 1);
  run_alltoall(1, 7);
}

static void inplace_kernel(void *arg)
{
  int words = *(int *)arg;
  int me = CRTS_tid, size = group_size();
  static const int items[] = { 1, 2, 5, 64 };
  for (unsigned k = 0; k < sizeof items / sizeof items[0]; k++) {
    a2a_fill(a2a_src, me, size, words);
    CPE_CHECK(CRTS_scoll_alltoall_inplace(a2a_src, words * 4, a2a_buf,
                                          items[k]) == 0);
    CPE_CHECK(a2a_received(a2a_src, me, size, words));
  }
  /* Different buf sizes on different CPEs are fine too. */
  a2a_fill(a2a_src, me, size, words);
  CPE_CHECK(CRTS_scoll_alltoall_inplace(a2a_src, words * 4, a2a_buf,
                                        1 + me % 3) == 0);
  CPE_CHECK(a2a_received(a2a_src, me, size, words));
}

static void run_inplace(int words)
{
  crts_test_run(inplace_kernel, &words);
  CRTS_ASSERT_NO_CPE_FAILURE();
}

Test(scoll, alltoall_inplace_64_cpes) { run_inplace(2); }

Test(scoll, alltoall_inplace_8_cpes)
{
  setenv("CRTS_NUM_CPES", "8", 1);
  run_inplace(MAX_UNIT_WORDS);
}

Test(scoll, alltoall_inplace_odd_groups)
{
  setenv("CRTS_NUM_CPES", "5", 1);
  run_inplace(3);
}

Test(scoll, alltoall_inplace_two_and_one)
{
  setenv("CRTS_NUM_CPES", "2", 1);
  run_inplace(1);
}

Test(scoll, alltoall_single_cpe)
{
  setenv("CRTS_NUM_CPES", "1", 1);
  run_alltoall(2, 1);
  run_inplace(2);
}

/* With CPE 5 ended the group has 63 CPEs, numbered by rank in tid order. */
static void ranked_kernel(void *arg)
{
  (void)arg;
  uint64_t below = crts_cg.group_mask & ((1ull << CRTS_tid) - 1);
  int me = __builtin_popcountll(below), size = group_size();
  CPE_CHECK(size == 63 && CRTS_tid != 5);
  a2a_fill(a2a_src, me, size, 2);
  CPE_CHECK(CRTS_scoll_alltoall(a2a_src, a2a_dst, 8) == 0);
  CPE_CHECK(a2a_received(a2a_dst, me, size, 2));
  CPE_CHECK(CRTS_scoll_alltoall_inplace(a2a_src, 8, a2a_buf, 3) == 0);
  CPE_CHECK(a2a_received(a2a_src, me, size, 2));
  static __thread_local int rbuf[4];
  int one = 1, count = 0;
  CPE_CHECK(CRTS_scoll_redurt(&one, &count, 1, CRTS_int, OP_add, rbuf, 4)
            == 0);
  CPE_CHECK(count == 63);
}

Test(scoll, ranks_skip_an_ended_cpe)
{
  cr_assert_eq(CRTS_init(), 0);
  cr_assert_eq(CRTS_athread_end(5), 0);
  crts_test_run(ranked_kernel, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
}

/* -------------------------------------------------------------- redurt */

#define NTYPES 12
#define NOPS 7
#define MAX_ES 64

static const size_t elem_size[NTYPES] = {
  [CRTS_int] = 4, [CRTS_uint] = 4, [CRTS_long] = sizeof(long),
  [CRTS_ulong] = sizeof(long), [CRTS_float] = 4, [CRTS_double] = 8,
  [CRTS_intv16] = 64, [CRTS_uintv16] = 64, [CRTS_int512] = 64,
  [CRTS_uint512] = 64, [CRTS_floatv8] = 32, [CRTS_doublev8] = 64,
};

static int is_floating(int t)
{
  return t == CRTS_float || t == CRTS_double || t == CRTS_floatv8 ||
         t == CRTS_doublev8;
}

static int pair_valid(int t, int op)
{
  return !is_floating(t) || op == OP_add || op == OP_min || op == OP_max;
}

static uint64_t mix(uint64_t x)
{
  x ^= x >> 31;
  x *= 0x9e3779b97f4a7c15ull;
  x ^= x >> 29;
  x *= 0xbf58476d1ce4e5b9ull;
  return x ^ (x >> 32);
}

/* The element `e` of rank r for dtype t (also used on the MPE). */
static void gen(unsigned char *out, int t, int r, int e)
{
  uint64_t seed = ((uint64_t)t << 40) ^ ((uint64_t)r << 20) ^ (uint64_t)e;
  size_t es = elem_size[t];
  if (t == CRTS_float || t == CRTS_floatv8) {
    for (size_t i = 0; i < es / 4; i++) {
      uint64_t h = mix(seed * 131 + i);
      float f = (e % 2) ? (float)((int)(h % 2001) - 1000) / 4.0f
                        : (float)(h % 1000003) / 7.0f - 50000.0f;
      memcpy(out + 4 * i, &f, 4);
    }
    return;
  }
  if (t == CRTS_double || t == CRTS_doublev8) {
    for (size_t i = 0; i < es / 8; i++) {
      uint64_t h = mix(seed * 131 + i);
      double d = (e % 2) ? (double)((int)(h % 2001) - 1000) / 8.0
                         : (double)(h % 100000007) / 3.0 - 1e7;
      memcpy(out + 8 * i, &d, 8);
    }
    return;
  }
  if ((t == CRTS_int512 || t == CRTS_uint512) && e % 4 == 0) {
    /* Carry chains through every word: all ones on rank 0, small elsewhere. */
    memset(out, r == 0 ? 0xff : 0, es);
    if (r != 0)
      out[0] = (unsigned char)(1 + r % 3);
    return;
  }
  for (size_t i = 0; i < es; i += 8) {
    uint64_t h = mix(seed * 131 + i);
    if (e % 7 == 3)
      h = (r % 2) ? ~0ull : 0x8000000080000000ull; /* extremes */
    size_t n = es - i < 8 ? es - i : 8;
    memcpy(out + i, &h, n);
  }
}

/* ---- the MPE's reference, written independently of the library */

static void ref_int32(int op, int sgn, unsigned char *a, const unsigned char *b)
{
  uint32_t x, y, r;
  memcpy(&x, a, 4);
  memcpy(&y, b, 4);
  int lt = sgn ? (int32_t)y < (int32_t)x : y < x;
  int gt = sgn ? (int32_t)y > (int32_t)x : y > x;
  switch (op) {
  case OP_add: r = x + y; break;
  case OP_and: r = x & y; break;
  case OP_or: r = x | y; break;
  case OP_xor: r = x ^ y; break;
  case OP_eqv: r = ~x ^ y; break;
  case OP_min: r = lt ? y : x; break;
  default: r = gt ? y : x; break;
  }
  memcpy(a, &r, 4);
}

static void ref_long(int op, int sgn, unsigned char *a, const unsigned char *b)
{
  unsigned long x, y, r;
  memcpy(&x, a, sizeof x);
  memcpy(&y, b, sizeof y);
  int lt = sgn ? (long)y < (long)x : y < x;
  int gt = sgn ? (long)y > (long)x : y > x;
  switch (op) {
  case OP_add: r = x + y; break;
  case OP_and: r = x & y; break;
  case OP_or: r = x | y; break;
  case OP_xor: r = x ^ y; break;
  case OP_eqv: r = ~x ^ y; break;
  case OP_min: r = lt ? y : x; break;
  default: r = gt ? y : x; break;
  }
  memcpy(a, &r, sizeof r);
}

static void ref_float(int op, unsigned char *a, const unsigned char *b)
{
  float x, y;
  memcpy(&x, a, 4);
  memcpy(&y, b, 4);
  float r = op == OP_add ? x + y : op == OP_min ? (y < x ? y : x)
                                                : (y > x ? y : x);
  memcpy(a, &r, 4);
}

static void ref_double(int op, unsigned char *a, const unsigned char *b)
{
  double x, y;
  memcpy(&x, a, 8);
  memcpy(&y, b, 8);
  double r = op == OP_add ? x + y : op == OP_min ? (y < x ? y : x)
                                                 : (y > x ? y : x);
  memcpy(a, &r, 8);
}

/* Byte-wise 512-bit arithmetic: a different algorithm from the library's. */
static int ref_cmp512(const unsigned char *x, const unsigned char *y, int sgn)
{
  if (sgn) {
    int sx = x[63] >> 7, sy = y[63] >> 7;
    if (sx != sy)
      return sx ? -1 : 1;
  }
  for (int i = 63; i >= 0; i--)
    if (x[i] != y[i])
      return x[i] < y[i] ? -1 : 1;
  return 0;
}

static void ref_512(int op, int sgn, unsigned char *a, const unsigned char *b)
{
  unsigned carry = 0;
  int c = ref_cmp512(b, a, sgn);
  for (int i = 0; i < 64; i++) {
    switch (op) {
    case OP_add: {
      unsigned s = a[i] + b[i] + carry;
      a[i] = (unsigned char)s;
      carry = s >> 8;
      break;
    }
    case OP_and: a[i] &= b[i]; break;
    case OP_or: a[i] |= b[i]; break;
    case OP_xor: a[i] ^= b[i]; break;
    case OP_eqv: a[i] = (unsigned char)~(a[i] ^ b[i]); break;
    case OP_min: if (c < 0) a[i] = b[i]; break;
    default: if (c > 0) a[i] = b[i]; break;
    }
  }
}

static void ref_combine(int t, int op, unsigned char *a, const unsigned char *b)
{
  switch (t) {
  case CRTS_int: case CRTS_uint: case CRTS_intv16: case CRTS_uintv16:
    for (size_t i = 0; i < elem_size[t]; i += 4)
      ref_int32(op, t == CRTS_int || t == CRTS_intv16, a + i, b + i);
    break;
  case CRTS_long: case CRTS_ulong:
    ref_long(op, t == CRTS_long, a, b);
    break;
  case CRTS_float: case CRTS_floatv8:
    for (size_t i = 0; i < elem_size[t]; i += 4)
      ref_float(op, a + i, b + i);
    break;
  case CRTS_double: case CRTS_doublev8:
    for (size_t i = 0; i < elem_size[t]; i += 8)
      ref_double(op, a + i, b + i);
    break;
  default:
    ref_512(op, t == CRTS_int512, a, b);
    break;
  }
}

struct redu_plan {
  int units;
  int buf_item;
  int in_place;          /* src == dest */
  int size;              /* CPEs */
  unsigned char *expect; /* [t][op][units * MAX_ES] */
};

static unsigned char *expected(const struct redu_plan *p, int t, int op)
{
  return p->expect + ((size_t)t * NOPS + (size_t)op) * (size_t)p->units *
                         MAX_ES;
}

static void compute_reference(struct redu_plan *p)
{
  p->expect = calloc((size_t)NTYPES * NOPS * (size_t)p->units, MAX_ES);
  cr_assert_not_null(p->expect);
  unsigned char v[MAX_ES];
  for (int t = 0; t < NTYPES; t++)
    for (int op = 0; op < NOPS; op++) {
      if (!pair_valid(t, op))
        continue;
      unsigned char *x = expected(p, t, op);
      for (int e = 0; e < p->units; e++) {
        unsigned char *acc = x + (size_t)e * elem_size[t];
        gen(acc, t, 0, e);
        for (int r = 1; r < p->size; r++) {
          gen(v, t, r, e);
          ref_combine(t, op, acc, v);
        }
      }
    }
}

static void redurt_kernel(void *arg)
{
  const struct redu_plan *p = arg;
  size_t max = (size_t)p->units * MAX_ES;
  unsigned char *src = CRTS_pldm_malloc(max);
  unsigned char *dst = CRTS_pldm_malloc(max);
  unsigned char *buf = CRTS_pldm_malloc((size_t)p->buf_item * MAX_ES);
  CPE_CHECK(src && dst && buf);
  if (!src || !dst || !buf)
    return; /* every CPE allocates the same sizes: all stop here */
  for (int t = 0; t < NTYPES; t++)
    for (int op = 0; op < NOPS; op++) {
      size_t len = (size_t)p->units * elem_size[t];
      for (int e = 0; e < p->units; e++)
        gen(src + (size_t)e * elem_size[t], t, CRTS_tid, e);
      unsigned char *out = p->in_place ? src : dst;
      if (!p->in_place)
        memset(dst, 0xa5, max);
      int rc = CRTS_scoll_redurt(src, out, p->units, t, op, buf, p->buf_item);
      if (!pair_valid(t, op)) {
        CPE_CHECK(rc != 0);
        if (!p->in_place)
          CPE_CHECK(dst[0] == 0xa5 && dst[len - 1] == 0xa5);
        continue;
      }
      if (rc != 0 || memcmp(out, expected(p, t, op), len) != 0)
        crts_test_fail("CPE %d: dtype %d op %d: rc %d, result differs",
                       CRTS_tid, t, op, rc);
    }
}

static void run_redurt(int ncpes, int units, int buf_item, int in_place)
{
  char n[8];
  snprintf(n, sizeof n, "%d", ncpes);
  setenv("CRTS_NUM_CPES", n, 1);
  struct redu_plan p = { .units = units, .buf_item = buf_item,
                         .in_place = in_place, .size = ncpes };
  compute_reference(&p);
  crts_test_run(redurt_kernel, &p);
  CRTS_ASSERT_NO_CPE_FAILURE();
  free(p.expect);
}

/* 150 elements over 64 CPEs with one-element buffers: three chunks. */
Test(scoll, redurt_every_type_and_op_64_cpes_small_buffer)
{
  run_redurt(64, 150, 1, 0);
}

Test(scoll, redurt_every_type_and_op_64_cpes_in_place)
{
  run_redurt(64, 70, 3, 1);
}

Test(scoll, redurt_every_type_and_op_8_cpes)
{
  run_redurt(8, 37, 2, 0);
}

Test(scoll, redurt_every_type_and_op_odd_group_large_buffer)
{
  run_redurt(5, 23, 64, 1);
}

static void sum_double_kernel(void *arg)
{
  (void)arg;
  /* The common use in real code: one double on the stack, 64-item buffer. */
  static __thread_local double reducebuf[64];
  double local = CRTS_tid + 0.5, sum = 0;
  CPE_CHECK(CRTS_scoll_redurt(&local, &sum, 1, CRTS_double, OP_add,
                              reducebuf, 64) == 0);
  CPE_CHECK(sum == 64 * 63 / 2 + 32.0);
  long mx = -1;
  long mine = (CRTS_tid * 37) % 64 - 100;
  CPE_CHECK(CRTS_scoll_redurt(&mine, &mx, 1, CRTS_long, OP_max, reducebuf,
                              8) == 0);
  CPE_CHECK(mx == -37);
}

Test(scoll, redurt_scalar_on_the_stack)
{
  crts_test_run(sum_double_kernel, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
}

/* -------------------------------------------------------------- errors */

static int main_memory[64 * 4];

static void errors_kernel(void *arg)
{
  (void)arg;
  int me = CRTS_tid, size = group_size();
  int *src = a2a_src, *dst = a2a_dst;
  memset(dst, 0x5a, sizeof a2a_dst);
  a2a_fill(src, me, size, 2);
  /* alltoall: src == dest, overlap, bad unit sizes, misalignment, not LDM */
  CPE_CHECK(CRTS_scoll_alltoall(src, src, 8) != 0);
  CPE_CHECK(CRTS_scoll_alltoall(src, src + 2, 8) != 0);
  CPE_CHECK(CRTS_scoll_alltoall(src, dst, 6) != 0);
  CPE_CHECK(CRTS_scoll_alltoall(src, dst, 0) != 0);
  CPE_CHECK(CRTS_scoll_alltoall(src, dst, -4) != 0);
  CPE_CHECK(CRTS_scoll_alltoall((char *)src + 2, dst, 8) != 0);
  CPE_CHECK(CRTS_scoll_alltoall(src, (char *)dst + 1, 8) != 0);
  CPE_CHECK(CRTS_scoll_alltoall(main_memory, dst, 4) != 0);
  CPE_CHECK(CRTS_scoll_alltoall(src, main_memory, 4) != 0);
  /* Another CPE's LDM is not the caller's. */
  CPE_CHECK(CRTS_scoll_alltoall(crts_ldm_translate(src, (me + 1) % size),
                                dst, 4) != 0);
  /* Too big for the buffer: runs past the LDM slice. */
  CPE_CHECK(CRTS_scoll_alltoall(src, dst, 64 * 1024) != 0);
  /* One CPE alone with a bad argument fails the whole group. */
  CPE_CHECK(CRTS_scoll_alltoall(me == 5 ? (char *)src + 2 : (char *)src, dst,
                                8) != 0);
  /* Units that differ between CPEs. */
  CPE_CHECK(CRTS_scoll_alltoall(src, dst, me == 3 ? 4 : 8) != 0);
  CPE_CHECK(((unsigned char *)dst)[0] == 0x5a);
  int intact = 1;
  for (int i = 0; i < 64 * MAX_UNIT_WORDS; i++)
    intact &= ((unsigned char *)dst)[i] == 0x5a;
  CPE_CHECK(intact);

  /* inplace: buffer too small or missing, overlap, not LDM */
  CPE_CHECK(CRTS_scoll_alltoall_inplace(src, 8, a2a_buf, 0) != 0);
  CPE_CHECK(CRTS_scoll_alltoall_inplace(src, 8, main_memory, 1) != 0);
  CPE_CHECK(CRTS_scoll_alltoall_inplace(src, 8, src + 4, 1) != 0);
  CPE_CHECK(CRTS_scoll_alltoall_inplace(src, 10, a2a_buf, 1) != 0);
  CPE_CHECK(a2a_received(src, me, size, 2) == (size == 1));
  intact = 1;
  for (int to = 0; to < size; to++)
    for (int w = 0; w < 2; w++)
      intact &= src[to * 2 + w] == a2a_word(me, to, w);
  CPE_CHECK(intact);

  /* redurt: types, ops, sizes */
  static __thread_local long rbuf[8];
  long in[4] = { me, me, me, me }, out[4] = { -7, -7, -7, -7 };
  CPE_CHECK(CRTS_scoll_redurt(in, out, 4, NTYPES, OP_add, rbuf, 1) != 0);
  CPE_CHECK(CRTS_scoll_redurt(in, out, 4, -1, OP_add, rbuf, 1) != 0);
  CPE_CHECK(CRTS_scoll_redurt(in, out, 4, CRTS_long, NOPS, rbuf, 1) != 0);
  CPE_CHECK(CRTS_scoll_redurt(in, out, 4, CRTS_long, -1, rbuf, 1) != 0);
  CPE_CHECK(CRTS_scoll_redurt(in, out, 4, CRTS_double, OP_xor, rbuf, 1) != 0);
  CPE_CHECK(CRTS_scoll_redurt(in, out, 4, CRTS_float, OP_and, rbuf, 1) != 0);
  CPE_CHECK(CRTS_scoll_redurt(in, out, 4, CRTS_doublev8, OP_eqv, rbuf, 1)
            != 0);
  CPE_CHECK(CRTS_scoll_redurt(in, out, 4, CRTS_floatv8, OP_or, rbuf, 1) != 0);
  CPE_CHECK(CRTS_scoll_redurt(in, out, -1, CRTS_long, OP_add, rbuf, 1) != 0);
  CPE_CHECK(CRTS_scoll_redurt(in, out, 4, CRTS_long, OP_add, rbuf, 0) != 0);
  CPE_CHECK(CRTS_scoll_redurt(in, out, 4, CRTS_long, OP_add, main_memory, 1)
            != 0);
  CPE_CHECK(CRTS_scoll_redurt(in, out, 4, CRTS_long, OP_add, in, 1) != 0);
  CPE_CHECK(CRTS_scoll_redurt(in, in + 1, 3, CRTS_long, OP_add, rbuf, 1)
            != 0);
  CPE_CHECK(CRTS_scoll_redurt((char *)in + 2, out, 1, CRTS_int, OP_add, rbuf,
                              1) != 0);
  CPE_CHECK(CRTS_scoll_redurt(in, out, 4, CRTS_long,
                              me == size - 1 ? OP_max : OP_add, rbuf, 1) != 0);
  CPE_CHECK(CRTS_scoll_redurt(in, out, 4, me == 0 ? CRTS_ulong : CRTS_long,
                              OP_add, rbuf, 1) != 0);
  CPE_CHECK(out[0] == -7 && out[3] == -7);
  CPE_CHECK(in[0] == me && in[3] == me);

  /* Different collectives at the same time fail instead of hanging. */
  if (me == 0)
    CPE_CHECK(CRTS_scoll_redurt(in, out, 4, CRTS_long, OP_add, rbuf, 1) != 0);
  else
    CPE_CHECK(CRTS_scoll_alltoall(src, dst, 8) != 0);
  CPE_CHECK(out[0] == -7);

  /* After all that the barrier state is sound: valid calls still work. */
  CPE_CHECK(CRTS_scoll_alltoall(src, dst, 8) == 0);
  CPE_CHECK(a2a_received(dst, me, size, 2));
  CPE_CHECK(CRTS_scoll_redurt(in, out, 4, CRTS_long, OP_add, rbuf, 1) == 0);
  CPE_CHECK(out[0] == (long)size * (size - 1) / 2 && out[3] == out[0]);
}

Test(scoll, bad_calls_fail_on_every_cpe_and_move_nothing)
{
  crts_test_run(errors_kernel, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
}

Test(scoll, bad_calls_with_8_cpes)
{
  setenv("CRTS_NUM_CPES", "8", 1);
  crts_test_run(errors_kernel, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
}

static _Atomic int lone_rc = 99;

static void lone_kernel(void *arg)
{
  (void)arg;
  atomic_store(&lone_rc, CRTS_scoll_alltoall(a2a_src, a2a_dst, 4));
}

Test(scoll, not_from_the_mpe_nor_a_created_thread)
{
  cr_assert_eq(CRTS_init(), 0);
  static int x[64], y[64];
  cr_assert_neq(CRTS_scoll_alltoall(x, y, 4), 0);
  cr_assert_neq(CRTS_scoll_alltoall_inplace(x, 4, y, 1), 0);
  cr_assert_neq(CRTS_scoll_redurt(x, y, 1, CRTS_int, OP_add, y + 8, 1), 0);
  cr_assert_eq(CRTS_athread_create(3, (void (*)(void))lone_kernel, NULL), 0);
  cr_assert_eq(CRTS_athread_wait(3), 0);
  cr_assert_neq(atomic_load(&lone_rc), 0);
  cr_assert_neq(atomic_load(&lone_rc), 99);
}
