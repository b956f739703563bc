/*
 * test_dma.c - single-CPE DMA: get/put in every form, byte for byte;
 * strided shapes; reply-word counting; CRTS_dma_wait_value really waiting;
 * engine statistics; DMA barriers.
 */
#include <criterion/criterion.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "crts_cg.h"
#include "crts_test_util.h"

#define WORDS 1024
#define SENTINEL 0xA5

static uint32_t mem_in[CRTS_MAX_SPE_NUM][WORDS];
static uint32_t mem_out[CRTS_MAX_SPE_NUM][WORDS];
static __thread_local uint32_t ldm_buf[WORDS + 16];
static __thread_local crts_rply_t rply;

static uint32_t pattern(int tid, int i)
{
  return (uint32_t)tid * 0x01000193u + (uint32_t)i * 0x9E3779B9u + 7u;
}

static void fill_inputs(void)
{
  for (int t = 0; t < CRTS_MAX_SPE_NUM; t++)
    for (int i = 0; i < WORDS; i++) {
      mem_in[t][i] = pattern(t, i);
      mem_out[t][i] = 0xDEADBEEF;
    }
}

static int all_bytes(const void *p, size_t n, unsigned char v)
{
  const unsigned char *c = p;
  for (size_t i = 0; i < n; i++)
    if (c[i] != v)
      return 0;
  return 1;
}

/* ------------------------------------------------------ contiguous */

static void get_put_blocking(void *arg)
{
  (void)arg;
  int t = CRTS_tid;
  static const int lens[] = { 4, 8, 12, 100, 4092, 4096 };
  for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) {
    int len = lens[k];
    memset(ldm_buf, SENTINEL, sizeof ldm_buf);
    CPE_CHECK(CRTS_dma_get(ldm_buf, mem_in[t], len) == 0);
    CPE_CHECK(memcmp(ldm_buf, mem_in[t], (size_t)len) == 0);
    CPE_CHECK(all_bytes((char *)ldm_buf + len, sizeof ldm_buf - (size_t)len,
                        SENTINEL));
  }
  /* Transform in LDM and write back the whole block. */
  for (int i = 0; i < WORDS; i++)
    ldm_buf[i] = ~ldm_buf[i];
  CPE_CHECK(CRTS_dma_put(mem_out[t], ldm_buf, WORDS * 4) == 0);
  /* A short put at an offset leaves its neighbours alone. */
  ldm_buf[0] = 0x11111111;
  ldm_buf[1] = 0x22222222;
  CPE_CHECK(CRTS_dma_put(&mem_out[t][10], ldm_buf, 8) == 0);
}

Test(dma, get_put_byte_for_byte_on_every_cpe)
{
  fill_inputs();
  crts_test_run(get_put_blocking, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
  for (int t = 0; t < CRTS_MAX_SPE_NUM; t++)
    for (int i = 0; i < WORDS; i++) {
      uint32_t want = i == 10 ? 0x11111111 : i == 11 ? 0x22222222
                                                     : ~pattern(t, i);
      cr_assert_eq(mem_out[t][i], want, "CPE %d word %d: %#x != %#x", t, i,
                   mem_out[t][i], want);
    }
}

static void nonblocking_counts(void *arg)
{
  (void)arg;
  int t = CRTS_tid;
  rply = 0;
  memset(ldm_buf, 0, sizeof ldm_buf);
  /* Four igets of 256 bytes each: the reply word counts 1, 2, 3, 4. */
  for (int k = 0; k < 4; k++) {
    CPE_CHECK(CRTS_dma_iget(&ldm_buf[k * 64], &mem_in[t][k * 64], 256,
                            &rply) == 0);
    CPE_CHECK(CRTS_dma_wait_value(&rply, k + 1) == 0);
    CPE_CHECK(rply == k + 1);
  }
  CPE_CHECK(memcmp(ldm_buf, mem_in[t], 1024) == 0);
  /* iputs share the same word: it keeps counting, 5 and 6. */
  CPE_CHECK(CRTS_dma_iput(mem_out[t], ldm_buf, 512, &rply) == 0);
  CPE_CHECK(CRTS_dma_iput(&mem_out[t][128], &ldm_buf[128], 512, &rply) == 0);
  CPE_CHECK(CRTS_dma_wait_value(&rply, 6) == 0);
  CPE_CHECK(rply == 6);
  /* Waiting for a count already reached (or 0) returns at once. */
  CPE_CHECK(CRTS_dma_wait_value(&rply, 3) == 0);
  CPE_CHECK(CRTS_dma_wait_value(&rply, 0) == 0);
  CPE_CHECK(rply == 6);
}

Test(dma, nonblocking_reply_word_counts_cumulatively)
{
  fill_inputs();
  crts_test_run(nonblocking_counts, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
  for (int t = 0; t < CRTS_MAX_SPE_NUM; t++) {
    cr_assert_eq(memcmp(mem_out[t], mem_in[t], 1024), 0, "CPE %d", t);
    cr_assert_eq(mem_out[t][256], 0xDEADBEEF, "CPE %d wrote past its put", t);
  }
}

static void zero_length(void *arg)
{
  (void)arg;
  int t = CRTS_tid;
  rply = 0;
  memset(ldm_buf, SENTINEL, sizeof ldm_buf);
  CPE_CHECK(CRTS_dma_get(ldm_buf, mem_in[t], 0) == 0);
  CPE_CHECK(CRTS_dma_iget(ldm_buf, mem_in[t], 0, &rply) == 0);
  CPE_CHECK(CRTS_dma_iget_stride(ldm_buf, mem_in[t], 0, 4, 4, &rply) == 0);
  CPE_CHECK(CRTS_dma_put(mem_out[t], ldm_buf, 0) == 0);
  CPE_CHECK(CRTS_dma_iput(mem_out[t], ldm_buf, 0, &rply) == 0);
  CPE_CHECK(CRTS_dma_wait_value(&rply, 3) == 0);
  CPE_CHECK(rply == 3);
  CPE_CHECK(all_bytes(ldm_buf, sizeof ldm_buf, SENTINEL));
}

Test(dma, zero_length_is_a_noop_that_completes)
{
  fill_inputs();
  crts_test_run(zero_length, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
  for (int t = 0; t < CRTS_MAX_SPE_NUM; t++)
    cr_assert_eq(mem_out[t][0], 0xDEADBEEF);
}

/* --------------------------------------------------------- strides */

#define REGION 20000
static unsigned char region[CRTS_MAX_SPE_NUM][REGION];

struct shape { int len, bsize, stride; };
static const struct shape shapes[] = {
  { 20, 4, 4 },      /* the manual's a[0], a[2], a[4]... */
  { 64, 4, 4 },
  { 64, 8, 12 },
  { 60, 16, 8 },     /* last block short: 12 bytes */
  { 64, 64, 100 },   /* one block */
  { 4, 8, 4 },       /* len below bsize */
  { 48, 12, 0 },     /* stride 0: contiguous, bsize ignored */
  { 48, 0, 0 },      /* stride 0 with a meaningless bsize */
  { 1024, 4, 60 },   /* many small blocks far apart */
  { 4000, 400, 1200 },
  { 0, 4, 4 },
};
#define NSHAPES (sizeof shapes / sizeof shapes[0])

/* Offset in main memory of byte i of a strided transfer. */
static size_t mem_off(const struct shape *s, size_t i)
{
  if (s->stride == 0)
    return i;
  size_t b = (size_t)s->bsize;
  return i / b * (b + (size_t)s->stride) + i % b;
}

static size_t span_of(const struct shape *s)
{
  return s->len == 0 ? 0 : mem_off(s, (size_t)s->len - 1) + 1;
}

static unsigned char *ldm_bytes(void) { return (unsigned char *)ldm_buf; }

static void strided(void *arg)
{
  (void)arg;
  int t = CRTS_tid;
  unsigned char *mem = region[t];
  unsigned char *ldm = ldm_bytes();
  rply = 0;
  int done = 0;
  for (size_t k = 0; k < NSHAPES; k++) {
    const struct shape *s = &shapes[k];
    for (int nb = 0; nb < 2; nb++) {
      /* Gather: main memory holds a pattern, LDM a sentinel. */
      for (size_t i = 0; i < REGION; i++)
        mem[i] = (unsigned char)(i * 7 + (size_t)t + k);
      memset(ldm, SENTINEL, sizeof ldm_buf);
      int rc = nb ? CRTS_dma_iget_stride(ldm, mem, s->len, s->bsize,
                                         s->stride, &rply)
                  : CRTS_dma_get_stride(ldm, mem, s->len, s->bsize,
                                        s->stride);
      CPE_CHECK(rc == 0);
      if (nb) {
        CPE_CHECK(CRTS_dma_wait_value(&rply, ++done) == 0);
        CPE_CHECK(rply == done);
      }
      for (size_t i = 0; i < (size_t)s->len; i++)
        if (ldm[i] != mem[mem_off(s, i)]) {
          crts_test_fail("CPE %d shape %zu get%s: byte %zu", t, k,
                         nb ? " (iget)" : "", i);
          break;
        }
      CPE_CHECK(all_bytes(ldm + s->len, sizeof ldm_buf - (size_t)s->len,
                          SENTINEL));

      /* Scatter: LDM holds a pattern, main memory a sentinel. */
      for (size_t i = 0; i < sizeof ldm_buf; i++)
        ldm[i] = (unsigned char)(i * 13 + 5 + k);
      memset(mem, SENTINEL, REGION);
      rc = nb ? CRTS_dma_iput_stride(mem, ldm, s->len, s->bsize, s->stride,
                                     &rply)
              : CRTS_dma_put_stride(mem, ldm, s->len, s->bsize, s->stride);
      CPE_CHECK(rc == 0);
      if (nb) {
        CPE_CHECK(CRTS_dma_wait_value(&rply, ++done) == 0);
        CPE_CHECK(rply == done);
      }
      /* Every byte of the span is either written data or an untouched gap. */
      size_t span = span_of(s), i = 0;
      for (size_t m = 0; m < REGION; m++) {
        int want_data = i < (size_t)s->len && mem_off(s, i) == m;
        unsigned char want = want_data ? ldm[i] : SENTINEL;
        if (mem[m] != want) {
          crts_test_fail("CPE %d shape %zu put%s: main-memory byte %zu "
                         "(span %zu)", t, k, nb ? " (iput)" : "", m, span);
          break;
        }
        i += want_data;
      }
    }
  }
}

Test(dma, strided_get_put_every_shape)
{
  crts_test_run(strided, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
}

/* ----------------------------------------------------- wait_value */

static _Atomic int ready, issued, returned;
static uint32_t wait_src[16];

/*
 * CPE 1 waits for a reply word that CPE 0 raises only once CPE 1 is seen
 * asleep in CRTS_dma_wait_value; CPE 1 must not return before that.
 */
static void waiter(void *arg)
{
  (void)arg;
  if (CRTS_tid == 1) {
    rply = 0;
    memset(ldm_buf, 0, 64);
    atomic_store(&ready, 1);
    CPE_CHECK(CRTS_dma_wait_value(&rply, 1) == 0);
    atomic_store(&returned, 1);
    CPE_CHECK(atomic_load(&issued) == 1);
    CPE_CHECK(rply == 1);
    CPE_CHECK(memcmp(ldm_buf, wait_src, sizeof wait_src) == 0);
  } else if (CRTS_tid == 0) {
    rply = 0;
    while (!atomic_load(&ready))
      sched_yield();
    volatile int *peer_word = crts_ldm_translate((void *)&rply, 1);
    while (atomic_load(&crts_cg.cpe[1].waiting_on.word) != peer_word &&
           !atomic_load(&returned))
      sched_yield();
    CPE_CHECK(!atomic_load(&returned));
    atomic_store(&issued, 1);
    /* Row 0 holds CPEs 0 and 1: the broadcast raises both reply words. */
    CPE_CHECK(CRTS_dma_row_ibcast(ldm_buf, wait_src, sizeof wait_src,
                                  &rply) == 0);
    CPE_CHECK(CRTS_dma_wait_value(&rply, 1) == 0);
    CPE_CHECK(memcmp(ldm_buf, wait_src, sizeof wait_src) == 0);
  }
}

Test(dma, wait_value_sleeps_until_another_cpe_completes)
{
  setenv("CRTS_NUM_CPES", "2", 1);
  for (int i = 0; i < 16; i++)
    wait_src[i] = pattern(99, i);
  crts_test_run(waiter, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
  cr_assert(atomic_load(&returned));
}

/* ------------------------------------------------------ statistics */

static void counted(void *arg)
{
  (void)arg;
  struct crts_cpe *me = crts_self;
  int t = CRTS_tid;
  uint64_t g_ops = me->stat_ops[CRTS_STAT_DMA_GET];
  uint64_t g_bytes = me->stat_bytes[CRTS_STAT_DMA_GET];
  uint64_t p_ops = me->stat_ops[CRTS_STAT_DMA_PUT];
  uint64_t p_bytes = me->stat_bytes[CRTS_STAT_DMA_PUT];
  rply = 0;
  CPE_CHECK(CRTS_dma_get(ldm_buf, mem_in[t], 64) == 0);
  CPE_CHECK(CRTS_dma_get_stride(ldm_buf, mem_in[t], 60, 16, 8) == 0);
  CPE_CHECK(CRTS_dma_iget(ldm_buf, mem_in[t], 8, &rply) == 0);
  CPE_CHECK(CRTS_dma_put(mem_out[t], ldm_buf, 32) == 0);
  CPE_CHECK(CRTS_dma_iput_stride(mem_out[t], ldm_buf, 16, 4, 4, &rply) == 0);
  /* Failed calls count nothing. */
  CPE_CHECK(CRTS_dma_get(ldm_buf, mem_in[t], 6) != 0);
  CPE_CHECK(CRTS_dma_wait_value(&rply, 2) == 0);
  CPE_CHECK(me->stat_ops[CRTS_STAT_DMA_GET] == g_ops + 3);
  CPE_CHECK(me->stat_bytes[CRTS_STAT_DMA_GET] == g_bytes + 64 + 60 + 8);
  CPE_CHECK(me->stat_ops[CRTS_STAT_DMA_PUT] == p_ops + 2);
  CPE_CHECK(me->stat_bytes[CRTS_STAT_DMA_PUT] == p_bytes + 32 + 16);
}

Test(dma, statistics_count_bytes_and_operations)
{
  setenv("CRTS_VERBOSE", "0", 1);
  fill_inputs();
  crts_test_run(counted, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
}

/* -------------------------------------------------------- barriers */

static void barriers(void *arg)
{
  (void)arg;
  int t = CRTS_tid;
  CPE_CHECK(CRTS_dma_get(ldm_buf, mem_in[t], 16) == 0);
  CPE_CHECK(CRTS_dma_barrier() == 0);
  ldm_buf[0] += 1;
  CPE_CHECK(CRTS_dma_put(mem_out[t], ldm_buf, 16) == 0);
  CPE_CHECK(CRTS_dma_all_barrier() == 0);
}

Test(dma, barriers_succeed_on_a_cpe)
{
  fill_inputs();
  crts_test_run(barriers, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
  for (int t = 0; t < CRTS_MAX_SPE_NUM; t++)
    cr_assert_eq(mem_out[t][0], pattern(t, 0) + 1);
}
