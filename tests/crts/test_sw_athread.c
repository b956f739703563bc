/*
 * test_sw_athread.c - the older SW26010 athread API (athread.h, slave.h):
 * PE_MODE gets and puts, plain and strided, with int and unsigned long
 * reply words; BCAST_MODE gets to all rows and to some, raising only the
 * issuer's reply word; athread_syn over a row, a column and the array
 * (each checked to hold every member back); _MYID / _ROW / _COL and
 * athread_get_id; the spawn and create macros taking void f(void *); the
 * dma.h descriptors (dma_set_*, dma(), dma_wait); and the modes, masks and
 * descriptors that are not usable failing without effect.
 */
#include <athread.h>
#include <dma.h>
#include <slave.h>

#include <criterion/criterion.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "crts_test_util.h"

#define WORDS 256
#define SENTINEL 0xA5A5A5A5u

static uint32_t mem_src[2 * WORDS];        /* main memory */
static uint32_t mem_dst[CRTS_MAX_SPE_NUM][2 * WORDS];
static __thread_local uint32_t ldm[WORDS]; /* every CPE's LDM */
static __thread_local volatile int reply;
static __thread_local volatile unsigned long lreply;

static uint32_t pattern(int i) { return (uint32_t)i * 0x9E3779B9u + 7u; }

static void fill_src(void)
{
  for (int i = 0; i < 2 * WORDS; i++)
    mem_src[i] = pattern(i);
  memset(mem_dst, 0, sizeof mem_dst);
}

static void ldm_reset(void)
{
  for (int i = 0; i < WORDS; i++)
    ldm[i] = SENTINEL;
}

/* On the CPE: LDM words from `from` on and CPE tid's output row untouched. */
static void check_untouched(int from, int tid)
{
  for (int i = from; i < WORDS; i++)
    CPE_CHECK(ldm[i] == SENTINEL);
  for (int i = 0; i < 2 * WORDS; i++)
    CPE_CHECK(mem_dst[tid][i] == 0);
}

/* Fresh sources, fn on every CPE, no CPE failure. */
static void run_checked(void (*fn)(void *), void *arg)
{
  fill_src();
  crts_test_run(fn, arg);
  CRTS_ASSERT_NO_CPE_FAILURE();
}

/* On the MPE, after pe_mode or descriptors: each CPE put 8 words of its
 * 3-in-4 strided get contiguously, then in blocks of 2 with 1-word gaps. */
static void assert_puts_landed(void)
{
  for (int t = 0; t < CRTS_athread_get_max_threads(); t++) {
    for (int j = 0; j < 8; j++) {
      uint32_t want = pattern(j / 3 * 4 + j % 3);
      cr_assert_eq(mem_dst[t][j], want, "CPE %d word %d", t, j);
      cr_assert_eq(mem_dst[t][WORDS + j / 2 * 3 + j % 2], want,
                   "CPE %d strided word %d", t, j);
    }
    for (int k = 0; k < 4; k++)
      cr_assert_eq(mem_dst[t][WORDS + 3 * k + 2], 0u, "gap %d overwritten",
                   k);
  }
}

/* ---------------------------------------------------------- PE_MODE */

static void pe_mode(void *arg)
{
  (void)arg;
  ldm_reset();
  reply = 0;
  lreply = 0;
  /* contiguous: 64 words from this CPE's offset */
  CPE_CHECK(athread_get(PE_MODE, &mem_src[_MYID], ldm, 64 * 4, (void *)&reply,
                        0, 0, 0) == 0);
  while (reply != 1)
    ;
  for (int i = 0; i < 64; i++)
    CPE_CHECK(ldm[i] == pattern(_MYID + i));
  CPE_CHECK(ldm[64] == SENTINEL);
  /* strided into an unsigned long reply word: blocks of 3 words, 1
   * skipped (stride and bsize differ, so swapping them shows) */
  CPE_CHECK(athread_get(PE_MODE, mem_src, ldm, 30 * 4, (void *)&lreply, 0,
                        1 * 4, 3 * 4) == 0);
  CPE_CHECK(athread_get(PE_MODE, mem_src, &ldm[32], 4 * 4, (void *)&lreply,
                        0, 0, 0) == 0);
  while (lreply != 2)
    ;
  for (int j = 0; j < 30; j++)
    CPE_CHECK(ldm[j] == pattern(j / 3 * 4 + j % 3));
  CPE_CHECK(ldm[32] == pattern(0) && ldm[35] == pattern(3));
  /* put back: contiguous, then strided: blocks of 2 words, 1 skipped */
  CPE_CHECK(athread_put(PE_MODE, ldm, mem_dst[_MYID], 8 * 4, (void *)&reply,
                        0, 0) == 0);
  CPE_CHECK(athread_put(PE_MODE, ldm, &mem_dst[_MYID][WORDS], 8 * 4,
                        (void *)&reply, 1 * 4, 2 * 4) == 0);
  CPE_CHECK(athread_syn(ARRAY_SCOPE, 0xffff) == 0);
  CPE_CHECK(reply == 3);
}

Test(sw_athread, pe_mode_get_and_put, .timeout = 60)
{
  run_checked(pe_mode, NULL);
  assert_puts_landed();
}

/* -------------------------------------------------------- BCAST_MODE */

/* CPE 0 broadcasts to the rows of rows_bits; only its reply word moves. */
static void bcast(void *arg)
{
  int rows_bits = *(const int *)arg;
  ldm_reset();
  reply = 0;
  CPE_CHECK(athread_syn(ARRAY_SCOPE, 0xffff) == 0);
  if (_MYID == 0) {
    CPE_CHECK(athread_get(BCAST_MODE, mem_src, ldm, WORDS * 4, (void *)&reply,
                          rows_bits, 0, 0) == 0);
    while (reply != 1)
      ;
  }
  CPE_CHECK(athread_syn(ARRAY_SCOPE, 0xffff) == 0);
  CPE_CHECK(reply == (_MYID == 0));
  int receives = (rows_bits >> _ROW) & 1;
  for (int i = 0; i < WORDS; i++)
    CPE_CHECK(ldm[i] == (receives ? pattern(i) : SENTINEL));
}

Test(sw_athread, bcast_mode_reaches_every_row, .timeout = 60)
{
  static int all = 0xff;
  run_checked(bcast, &all);
}

Test(sw_athread, bcast_mode_reaches_the_masked_rows_alone, .timeout = 60)
{
  static int some = 0x26; /* rows 1, 2 and 5; not the issuer's row 0 */
  run_checked(bcast, &some);
}

/* A group of 8 CPEs is row 0 alone: a mask of other rows reaches nobody
 * and fails; one that names row 0 too loads row 0. */
static void bcast_small_group(void *arg)
{
  (void)arg;
  ldm_reset();
  reply = 0;
  CPE_CHECK(athread_syn(ARRAY_SCOPE, 0xffff) == 0);
  if (_MYID == 3) {
    CPE_CHECK(athread_get(BCAST_MODE, mem_src, ldm, 64, (void *)&reply, 0x80,
                          0, 0) == -1);
    CPE_CHECK(reply == 0);
    CPE_CHECK(athread_get(BCAST_MODE, mem_src, ldm, 64, (void *)&reply, 0x81,
                          0, 0) == 0);
    CPE_CHECK(reply == 1);
  }
  CPE_CHECK(athread_syn(ARRAY_SCOPE, 0xffff) == 0);
  for (int i = 0; i < 16; i++)
    CPE_CHECK(ldm[i] == pattern(i));
}

Test(sw_athread, bcast_mode_to_rows_without_cpes_fails, .timeout = 60)
{
  setenv("CRTS_NUM_CPES", "8", 1);
  run_checked(bcast_small_group, NULL);
  cr_assert_eq(CRTS_athread_get_max_threads(), 8);
}

/* --------------------------------------------------------- athread_syn */

static volatile int round_of[CRTS_MAX_SPE_NUM];

/* Every member writes the round, meets, and must see all members' writes;
 * the slowest CPE (the last of the scope) dawdles first, so a barrier that
 * let anybody through early is caught. */
static void syn(void *arg)
{
  athread_scope scope = *(const athread_scope *)arg;
  int mask = scope == ARRAY_SCOPE ? 0xffff : 0xff;
  for (int r = 1; r <= 20; r++) {
    if ((scope == ROW_SCOPE && _COL == 7) ||
        (scope == COL_SCOPE && _ROW == 7) ||
        (scope == ARRAY_SCOPE && _MYID == CRTS_athread_get_max_threads() - 1))
      for (int k = 0; k < 50; k++)
        sched_yield();
    round_of[_MYID] = r;
    CPE_CHECK(athread_syn(scope, mask) == 0);
    for (int t = 0; t < CRTS_athread_get_max_threads(); t++) {
      int member = scope == ARRAY_SCOPE ||
                   (scope == ROW_SCOPE && t / CRTS_COL_NUM == _ROW) ||
                   (scope == COL_SCOPE && t % CRTS_COL_NUM == _COL);
      if (member && round_of[t] < r)
        crts_test_fail("CPE %d: round %d: CPE %d is still at %d", _MYID, r, t,
                       round_of[t]);
    }
    CPE_CHECK(athread_syn(scope, mask) == 0); /* nobody writes r + 1 early */
  }
}

Test(sw_athread, syn_row, .timeout = 60)
{
  static athread_scope s = ROW_SCOPE;
  run_checked(syn, &s);
}

Test(sw_athread, syn_col, .timeout = 60)
{
  static athread_scope s = COL_SCOPE;
  run_checked(syn, &s);
}

Test(sw_athread, syn_array, .timeout = 60)
{
  static athread_scope s = ARRAY_SCOPE;
  run_checked(syn, &s);
}

/* ---------------------------------------------------------------- ids */

static volatile int id_seen[CRTS_MAX_SPE_NUM];

static void ids(void *arg)
{
  (void)arg;
  CPE_CHECK(_MYID == CRTS_tid && _ROW == CRTS_rid && _COL == CRTS_cid);
  CPE_CHECK(_MYID == _ROW * 8 + _COL);
  CPE_CHECK(athread_get_id(-1) == _MYID);
  CPE_CHECK(athread_get_id(5) == 5);
  CPE_CHECK(athread_get_id(64) == -1);
  id_seen[_MYID]++;
}

Test(sw_athread, ids_and_the_spawn_macro, .timeout = 60)
{
  memset((void *)id_seen, 0, sizeof id_seen);
  cr_assert_eq(athread_init(), 0);
  /* the SW26010 spelling: a void f(void *) named through SLAVE_FUN */
  cr_assert_eq(athread_spawn(SLAVE_FUN(ids), 0), 0);
  cr_assert_eq(athread_join(), 0);
  CRTS_ASSERT_NO_CPE_FAILURE();
  for (int t = 0; t < CRTS_athread_get_max_threads(); t++)
    cr_assert_eq(id_seen[t], 1, "CPE %d ran %d times", t, id_seen[t]);
}

static void one(void *arg)
{
  id_seen[_MYID] += *(const int *)arg;
  /* a created thread is in no spawned group: its barriers are refused */
  CPE_CHECK(athread_syn(ARRAY_SCOPE, 0xffff) == -1);
  CPE_CHECK(athread_syn(ROW_SCOPE, 0xff) == -1);
}

Test(sw_athread, create_macro, .timeout = 60)
{
  static int ten = 10;
  memset((void *)id_seen, 0, sizeof id_seen);
  cr_assert_eq(athread_init(), 0);
  cr_assert_eq(athread_create(3, one, &ten), 0);
  cr_assert_eq(athread_wait(3), 0);
  cr_assert_eq(id_seen[3], 10);
  cr_assert_eq(id_seen[2], 0);
  CRTS_ASSERT_NO_CPE_FAILURE();
}

/* ------------------------------------------------------------- errors */

static void refused(void *arg)
{
  (void)arg;
  ldm_reset();
  reply = 0;
  if (_MYID != 9)
    return;
  static const dma_mode modes[] = { ROW_MODE, BROW_MODE, RANK_MODE };
  for (int k = 0; k < 3; k++) {
    CPE_CHECK(athread_get(modes[k], mem_src, ldm, 64, (void *)&reply, 0xff, 0,
                          0) == -1);
    CPE_CHECK(athread_put(modes[k], ldm, mem_dst[9], 64, (void *)&reply, 0,
                          0) == -1);
  }
  CPE_CHECK(athread_put(BCAST_MODE, ldm, mem_dst[9], 64, (void *)&reply, 0,
                        0) == -1);
  CPE_CHECK(athread_get(BCAST_MODE, mem_src, ldm, 64, (void *)&reply, 0, 0,
                        0) == -1);
  CPE_CHECK(athread_get(BCAST_MODE, mem_src, ldm, 64, (void *)&reply, 0x100,
                        0, 0) == -1);
  /* the CRTS checks, under athread_get's name: misaligned, LDM as src */
  CPE_CHECK(athread_get(PE_MODE, mem_src, (char *)ldm + 2, 64, (void *)&reply,
                        0, 0, 0) == -1);
  CPE_CHECK(athread_get(PE_MODE, ldm, ldm, 64, (void *)&reply, 0, 0, 0) ==
            -1);
  CPE_CHECK(athread_get(PE_MODE, mem_src, ldm, 64, NULL, 0, 0, 0) == -1);
  CPE_CHECK(athread_get(BCAST_MODE, mem_src, ldm, 64, NULL, 0xff, 0, 0) ==
            -1);
  CPE_CHECK(athread_put(PE_MODE, ldm, mem_dst[9], 64, NULL, 0, 0) == -1);
  /* partial masks and unknown scopes do not wait (CPE 9 is alone here) */
  CPE_CHECK(athread_syn(ROW_SCOPE, 0x0f) == -1);
  CPE_CHECK(athread_syn(COL_SCOPE, 0x1ff) == -1);
  CPE_CHECK(athread_syn(ARRAY_SCOPE, 0xff) == -1);
  CPE_CHECK(athread_syn((athread_scope)7, 0xff) == -1);
  CPE_CHECK(reply == 0);
  check_untouched(0, 9);
}

Test(sw_athread, modes_and_masks_not_emulated_fail_untouched, .timeout = 60)
{
  run_checked(refused, NULL);
}

Test(sw_athread, cpe_calls_on_the_mpe_fail, .timeout = 60)
{
  static uint32_t buf[16];
  static int r;
  cr_assert_eq(athread_get(PE_MODE, mem_src, buf, 64, &r, 0, 0, 0), -1);
  cr_assert_eq(athread_put(PE_MODE, buf, mem_src, 64, &r, 0, 0), -1);
  cr_assert_eq(athread_syn(ARRAY_SCOPE, 0xffff), -1);
  cr_assert_eq(athread_get_id(-1), -1);
  cr_assert_eq(r, 0);
}

/* ------------------------------------------------------- descriptors */

static void descriptors(void *arg)
{
  (void)arg;
  ldm_reset();
  reply = 0;
  dma_desc get = 0, put = 0, step;
  /* fields in any order; stepsize before size, as some codes do */
  dma_set_stepsize(&get, 0);
  dma_set_reply(&get, &reply);
  dma_set_op(&get, DMA_GET);
  dma_set_size(&get, 64 * 4);
  dma_set_mode(&get, PE_MODE);
  CPE_CHECK(dma(get, (long)&mem_src[_MYID], (long)ldm) == 0);
  CPE_CHECK(dma_wait(&reply, 1) == 0);
  for (int i = 0; i < 64; i++)
    CPE_CHECK(ldm[i] == pattern(_MYID + i));
  /* the same descriptor again, as pointers: 2 on the same word */
  CPE_CHECK(dma(get, &mem_src[1], &ldm[64]) == 0);
  CPE_CHECK(dma_wait(&reply, 2) == 0 && reply == 2);
  CPE_CHECK(ldm[64] == pattern(1) && ldm[127] == pattern(64));
  /* strided: memset-cleared, an unsigned long reply word */
  memset(&step, 0, sizeof step);
  lreply = 0;
  dma_set_op(&step, DMA_GET);
  dma_set_mode(&step, PE_MODE);
  dma_set_reply(&step, &lreply);
  dma_set_size(&step, 30 * 4);
  dma_set_bsize(&step, 3 * 4);   /* blocks of 3 words, 1 skipped */
  dma_set_stepsize(&step, 1 * 4);
  CPE_CHECK(dma(step, mem_src, ldm) == 0);
  CPE_CHECK(dma_wait(&lreply, 1) == 0 && lreply == 1);
  for (int j = 0; j < 30; j++)
    CPE_CHECK(ldm[j] == pattern(j / 3 * 4 + j % 3));
  CPE_CHECK(ldm[30] == pattern(_MYID + 30)); /* the first get's */
  /* put: a field changed between two starts of one descriptor */
  dma_set_op(&put, DMA_PUT);
  dma_set_mode(&put, PE_MODE);
  dma_set_reply(&put, &reply);
  dma_set_size(&put, 8 * 4);
  CPE_CHECK(dma(put, mem_dst[_MYID], ldm) == 0);
  dma_set_bsize(&put, 2 * 4);    /* blocks of 2 words, 1 skipped */
  dma_set_stepsize(&put, 1 * 4);
  CPE_CHECK(dma(put, &mem_dst[_MYID][WORDS], ldm) == 0);
  CPE_CHECK(dma_wait(&reply, 4) == 0 && reply == 4);
  /* no reply word: the data still moves */
  dma_desc quiet = 0;
  dma_set_op(&quiet, DMA_GET);
  dma_set_size(&quiet, 4);
  CPE_CHECK(dma(quiet, &mem_src[7], &ldm[200]) == 0);
  CPE_CHECK(ldm[200] == pattern(7));
  /* BCAST_MODE by CPE 0 to row 1 alone */
  CPE_CHECK(athread_syn(ARRAY_SCOPE, 0xffff) == 0);
  if (_MYID == 0) {
    dma_desc b = 0;
    dma_set_op(&b, DMA_GET);
    dma_set_mode(&b, BCAST_MODE);
    dma_set_mask(&b, 0x02);
    dma_set_reply(&b, &reply);
    dma_set_size(&b, 16 * 4);
    CPE_CHECK(dma(b, &mem_src[100], &ldm[128]) == 0);
    CPE_CHECK(dma_wait(&reply, 5) == 0);
  }
  CPE_CHECK(athread_syn(ARRAY_SCOPE, 0xffff) == 0);
  CPE_CHECK(reply == (_MYID == 0 ? 5 : 4));
  for (int i = 0; i < 16; i++)
    CPE_CHECK(ldm[128 + i] == (_ROW == 1 ? pattern(100 + i) : SENTINEL));
}

Test(sw_athread, dma_descriptors, .timeout = 60)
{
  run_checked(descriptors, NULL);
  assert_puts_landed();
}

static uint32_t not_ldm_word;

static void bad_descriptors(void *arg)
{
  (void)arg;
  ldm_reset();
  reply = 0;
  if (_MYID != 4)
    return;
  dma_desc d = 0;
  dma_set_op(&d, DMA_GET);
  dma_set_size(&d, 64);
  /* a reply word in main memory: refused when set, and at every start */
  dma_set_reply(&d, &not_ldm_word);
  CPE_CHECK(dma(d, mem_src, ldm) == -1);
  dma_set_reply(&d, &reply);
  CPE_CHECK(dma(d, mem_src, ldm) == 0 && reply == 1);
  /* ops and modes that are not */
  dma_desc e = d;
  dma_set_op(&e, (dma_op)9);
  CPE_CHECK(dma(e, mem_src, ldm) == -1);
  e = d;
  dma_set_mode(&e, (dma_mode)9);
  CPE_CHECK(dma(e, mem_src, ldm) == -1);
  e = d;
  dma_set_mode(&e, ROW_MODE);
  CPE_CHECK(dma(e, mem_src, ldm) == -1);
  e = d;
  dma_set_mode(&e, BCAST_MODE);
  dma_set_mask(&e, 0x1ff); /* row bits beyond the 8 rows */
  CPE_CHECK(dma(e, mem_src, ldm) == -1);
  e = d;
  dma_set_op(&e, DMA_PUT);
  dma_set_mode(&e, BCAST_MODE);
  CPE_CHECK(dma(e, mem_dst[4], ldm) == -1);
  /* CRTS's checks: misaligned size, LDM given as main memory */
  e = d;
  dma_set_size(&e, 6);
  CPE_CHECK(dma(e, mem_src, ldm) == -1);
  CPE_CHECK(dma(d, ldm, ldm) == -1);
  CPE_CHECK(dma_wait(&reply, -1) == -1);
  CPE_CHECK(dma_wait(&not_ldm_word, 0) == -1);
  CPE_CHECK(reply == 1);
  check_untouched(16, 4); /* the good get moved 16 words */
}

Test(sw_athread, bad_descriptors_fail_untouched, .timeout = 60)
{
  run_checked(bad_descriptors, NULL);
}
