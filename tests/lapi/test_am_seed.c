/*
 * test_am_seed.c - the examples of the LAPI_Amsendv page
 * (shared/seeds/lapi-amsendv.fr.txt), verbatim, through LAPI_Amsendv.
 *
 *   GENERIC  origin {5,10,5} into target {12,2,4,2}: the five copy steps
 *   GENERIC  origin {20} into target {5,10}: 15 bytes copied, 5 dropped
 *   IOVECTOR the page's NUM_VECS ints into data_buffer[i], and a second
 *            one with lengths of every size (an empty one included)
 *   STRIDED  3 blocks of 5 bytes at pitch 8, into the same shape
 *
 * As on the page, the header handler's address is exchanged with
 * LAPI_Address_init (hdr_hndlr_list[buddy]) and the handler returns the
 * target vector.  Each target region sits in a guard-filled area: every
 * byte inside must be the origin byte the page names, every byte around
 * it must still be the guard.  The test thread checks after its own target
 * counter (given to the sender via Address_init) reached 1; with one task
 * sender and receiver are the same task.
 */
#include "lapi_test_util.h"

TestSuite(am_seed, .timeout = LT_TIMEOUT);

#define AREA 64  /* one guarded target area */
#define AT 16    /* where the target region starts in its area */

/* Which page example a message carries (uhdr word 1). */
enum seed_case { C_GEN_5_10_5, C_GEN_20, C_IOV_INTS, C_IOV_MIXED, C_STRIDED };

#define UHDR_MAGIC 0x5eed0001u
#define NUM_VECS 8 /* the IOVECTOR example's NUM_VECS */

/* Origin stream bytes of task t: pattern seed 1000 + t. */
static uint64_t org_seed(uint t) { return 1000 + t; }

/* ------------------------------------------------------ target side */

static unsigned char tarea[5][AREA];  /* GENERIC and mixed IOVECTOR */
static int data_buffer[NUM_VECS + 2]; /* [0] and [NUM_VECS+1] are guards */
static unsigned char sarea[AREA];     /* STRIDED */

static lapi_vec_t tvec;
static void *tinfo[NUM_VECS];
static ulong tlen[NUM_VECS];

static lapi_cntr_t recv_cntr;  /* my target counter */
static int hdr_calls, cmpl_calls;
static int cmpl_saw_data;      /* the completion handler found data landed */

/* The mixed IOVECTOR example: lengths of every size, one empty. */
static const ulong mixed_len[5] = {3, 0, 17, 1, 8};

static void reset_target(void)
{
  memset(tarea, LT_GUARD, sizeof tarea);
  memset(sarea, LT_GUARD, sizeof sarea);
  memset(data_buffer, LT_GUARD, sizeof data_buffer);
  memset(&tvec, 0, sizeof tvec);
}

static uint got_uhdr_len;
static uint32_t got_uhdr[2];
static ulong got_len_vec[NUM_VECS];

static int data_in_place(enum seed_case c, uint src);

static void seed_cmpl(lapi_handle_t *hndl, void *param)
{
  (void)hndl;
  uint src = (uint)(uintptr_t)param >> 8;
  enum seed_case c = (enum seed_case)((uintptr_t)param & 0xff);
  /* The data landed before the completion handler runs. */
  if (data_in_place(c, src))
    lt_store(&cmpl_saw_data, 1);
  LT_CHECK_EQ(lt_load(&hdr_calls), 1);
  lt_inc(&cmpl_calls);
}

static lapi_vec_t *seed_hdr(lapi_handle_t *hndl, void *uhdr, uint *uhdr_len,
                            ulong *len_vec, compl_hndlr_t **comp_h,
                            void **uinfo)
{
  (void)hndl;
  lt_inc(&hdr_calls);
  LT_CHECK(uhdr_len != NULL && uhdr != NULL);
  if (!uhdr_len || !uhdr)
    return NULL;
  got_uhdr_len = *uhdr_len;
  memcpy(got_uhdr, uhdr, sizeof got_uhdr);
  enum seed_case c = (enum seed_case)got_uhdr[1];
  uint src = got_uhdr[0] & 0xffff;
  LT_CHECK_EQ(got_uhdr[0] >> 16, UHDR_MAGIC & 0xffff);

  switch (c) {
  case C_GEN_5_10_5:
    for (int i = 0; i < 3; i++)
      got_len_vec[i] = len_vec ? len_vec[i] : 0;
    tvec.vec_type = LAPI_GEN_GENERIC;
    tvec.num_vecs = 4;
    tlen[0] = 12, tlen[1] = 2, tlen[2] = 4, tlen[3] = 2;
    for (int i = 0; i < 4; i++)
      tinfo[i] = &tarea[i][AT];
    break;
  case C_GEN_20:
    got_len_vec[0] = len_vec ? len_vec[0] : 0;
    tvec.vec_type = LAPI_GEN_GENERIC;
    tvec.num_vecs = 2;
    tlen[0] = 5, tlen[1] = 10;
    tinfo[0] = &tarea[0][AT];
    tinfo[1] = &tarea[1][AT];
    break;
  case C_IOV_INTS:
    /* As on the page: info[i] = &data_buffer[i], len[i] = sizeof(int). */
    for (int i = 0; i < NUM_VECS; i++)
      got_len_vec[i] = len_vec ? len_vec[i] : 0;
    tvec.vec_type = LAPI_GEN_IOVECTOR;
    tvec.num_vecs = NUM_VECS;
    for (int i = 0; i < NUM_VECS; i++) {
      tinfo[i] = &data_buffer[i + 1];
      tlen[i] = sizeof(int);
    }
    break;
  case C_IOV_MIXED:
    for (int i = 0; i < 5; i++)
      got_len_vec[i] = len_vec ? len_vec[i] : 0;
    tvec.vec_type = LAPI_GEN_IOVECTOR;
    tvec.num_vecs = 5;
    for (int i = 0; i < 5; i++) {
      tinfo[i] = &tarea[i][AT];
      tlen[i] = mixed_len[i];
    }
    break;
  case C_STRIDED:
    tvec.vec_type = LAPI_GEN_STRIDED_XFER;
    tvec.num_vecs = 3;
    tinfo[0] = &sarea[AT];
    tinfo[1] = (void *)(uintptr_t)5;
    tinfo[2] = (void *)(uintptr_t)8;
    break;
  default:
    lt_fail("unknown case %u", (uint)c);
    return NULL;
  }
  tvec.info = tinfo;
  tvec.len = c == C_STRIDED ? NULL : tlen;
  *comp_h = seed_cmpl;
  *uinfo = (void *)(uintptr_t)((src << 8) | (uint)c);
  return &tvec;
}

/* Does target region `p` hold origin stream bytes [from, from + len) of
 * task src? */
static int same(const unsigned char *p, uint src, size_t from, size_t len)
{
  return lt_find_diff(p, len, org_seed(src), from) < 0;
}

/* Is area a guard everywhere except [AT, AT + len)? */
static int guarded(const unsigned char *a, size_t len)
{
  return lt_find_nonguard(a, AT) < 0 &&
         lt_find_nonguard(a + AT + len, AREA - AT - len) < 0;
}

/* The whole expected picture of case c (used by the completion handler;
 * the test thread checks the same facts step by step with messages). */
static int data_in_place(enum seed_case c, uint src)
{
  switch (c) {
  case C_GEN_5_10_5:
    return same(&tarea[0][AT], src, 0, 12) && same(&tarea[1][AT], src, 12, 2)
        && same(&tarea[2][AT], src, 14, 4) && same(&tarea[3][AT], src, 18, 2);
  case C_GEN_20:
    return same(&tarea[0][AT], src, 0, 5) && same(&tarea[1][AT], src, 5, 10);
  case C_IOV_INTS:
    return same((unsigned char *)&data_buffer[1], src, 0,
                NUM_VECS * sizeof(int));
  case C_IOV_MIXED: {
    size_t off = 0;
    for (int i = 0; i < 5; i++) {
      if (!same(&tarea[i][AT], src, off, mixed_len[i]))
        return 0;
      off += mixed_len[i];
    }
    return 1;
  }
  case C_STRIDED:
    for (size_t b = 0; b < 3; b++)
      if (!same(&sarea[AT + 8 * b], src, 8 * b, 5))
        return 0;
    return 1;
  }
  return 0;
}

/* ------------------------------------------------------ origin side */

static unsigned char o0[5], o1[10], o2[5]; /* {5,10,5} */
static unsigned char o20[20];              /* {20} */
static int org_ints[3 * NUM_VECS];         /* NUM_VECS scattered ints */
static unsigned char omix[64];             /* mixed IOVECTOR */
static unsigned char ostr[24];             /* strided: 3 blocks, pitch 8 */

static lapi_vec_t ovec;
static void *oinfo[NUM_VECS];
static ulong olen[NUM_VECS];

/* Build the origin vector of case c; its stream bytes are pattern
 * org_seed(me) at the stream offset (strided: at the area offset, so the
 * bytes between the blocks are pattern too and must not travel). */
static void build_origin(enum seed_case c, uint me)
{
  uint64_t s = org_seed(me);
  memset(&ovec, 0, sizeof ovec);
  ovec.info = oinfo;
  ovec.len = olen;
  switch (c) {
  case C_GEN_5_10_5:
    lt_fill(o0, 5, s);
    for (size_t i = 0; i < 10; i++)
      o1[i] = lt_byte(s, 5 + i);
    for (size_t i = 0; i < 5; i++)
      o2[i] = lt_byte(s, 15 + i);
    ovec.vec_type = LAPI_GEN_GENERIC;
    ovec.num_vecs = 3;
    oinfo[0] = o0, oinfo[1] = o1, oinfo[2] = o2;
    olen[0] = 5, olen[1] = 10, olen[2] = 5;
    break;
  case C_GEN_20:
    lt_fill(o20, 20, s);
    ovec.vec_type = LAPI_GEN_GENERIC;
    ovec.num_vecs = 1;
    oinfo[0] = o20;
    olen[0] = 20;
    break;
  case C_IOV_INTS:
    memset(org_ints, 0, sizeof org_ints);
    ovec.vec_type = LAPI_GEN_IOVECTOR;
    ovec.num_vecs = NUM_VECS;
    for (int i = 0; i < NUM_VECS; i++) {
      /* every third int, in reverse order: nothing contiguous */
      int *p = &org_ints[3 * (NUM_VECS - 1 - i) + 1];
      for (size_t k = 0; k < sizeof(int); k++)
        ((unsigned char *)p)[k] = lt_byte(s, i * sizeof(int) + k);
      oinfo[i] = p;
      olen[i] = sizeof(int);
    }
    break;
  case C_IOV_MIXED: {
    ovec.vec_type = LAPI_GEN_IOVECTOR;
    ovec.num_vecs = 5;
    size_t off = 0;
    memset(omix, 0, sizeof omix);
    for (int i = 0; i < 5; i++) {
      /* segments out of order in omix; the empty one has no address */
      unsigned char *p = i == 1 ? NULL : &omix[(size_t)(4 - i) * 12];
      for (size_t k = 0; k < mixed_len[i]; k++)
        p[k] = lt_byte(s, off + k);
      oinfo[i] = p;
      olen[i] = mixed_len[i];
      off += mixed_len[i];
    }
    break;
  }
  case C_STRIDED:
    lt_fill(ostr, sizeof ostr, s);
    ovec.vec_type = LAPI_GEN_STRIDED_XFER;
    ovec.num_vecs = 3;
    oinfo[0] = ostr;
    oinfo[1] = (void *)(uintptr_t)5;
    oinfo[2] = (void *)(uintptr_t)8;
    ovec.len = NULL; /* unused for strided */
    break;
  }
}

/* ------------------------------------------------------------- driver */

struct sent {
  struct lt_job j;
  lapi_cntr_t org, cmpl;
};

/* Send case c to my buddy and wait until my own predecessor's message of
 * the same case has fully arrived here. */
static void run_case(struct sent *s, enum seed_case c)
{
  struct lt_job *j = &s->j;
  lt_open(j);
  reset_target();
  lt_store(&hdr_calls, 0);
  lt_store(&cmpl_calls, 0);
  lt_store(&cmpl_saw_data, 0);
  LT_OK(LAPI_Setcntr(j->h, &recv_cntr, 0));
  LT_OK(LAPI_Setcntr(j->h, &s->org, 0));
  LT_OK(LAPI_Setcntr(j->h, &s->cmpl, 0));
  build_origin(c, (uint)j->me);

  /* hdr_hndlr_list[buddy], as on the page; Address_init is collective,
   * so every target area is ready before anyone sends. */
  void *hdr_at_tgt = lt_at_tgt(j, (void *)seed_hdr);
  lapi_cntr_t *tgt_cntr = lt_cntr_at_tgt(j, &recv_cntr);
  uint32_t uhdr[2] = {(UHDR_MAGIC & 0xffff) << 16 | (uint32_t)j->me,
                      (uint32_t)c};
  LT_OK(LAPI_Amsendv(j->h, j->tgt, hdr_at_tgt, uhdr, sizeof uhdr, &ovec,
                     tgt_cntr, &s->org, &s->cmpl));
  cr_assert_eq(lt_wait(j, &recv_cntr, 1), 0);
  cr_assert_eq(lt_wait(j, &s->org, 1), 0);
  cr_assert_eq(lt_wait(j, &s->cmpl, 1), 0);
  cr_assert_eq(lt_load(&hdr_calls), 1, "header handler ran %d times",
               lt_load(&hdr_calls));
  cr_assert_eq(lt_load(&cmpl_calls), 1, "completion handler ran %d times",
               lt_load(&cmpl_calls));
  cr_assert_eq(lt_load(&cmpl_saw_data), 1,
               "the completion handler ran before all data had landed");
  cr_assert_eq(got_uhdr_len, sizeof uhdr);
  cr_assert_eq(got_uhdr[0], (UHDR_MAGIC & 0xffff) << 16 | j->src);
  cr_assert_eq(got_uhdr[1], (uint32_t)c);
  LT_ASSERT_HANDLERS_OK();
}

static void finish(struct sent *s)
{
  /* the origin was only read */
  lt_close(&s->j);
}

/* Assert target region p holds origin stream bytes [from, from+len) of
 * src, naming the page's step. */
#define STEP(p, from, len, what)                                             \
  do {                                                                       \
    long d_ = lt_find_diff((p), (len), org_seed(s.j.src), (from));           \
    cr_assert_lt(d_, 0, "%s: byte %ld differs", what, d_);                   \
  } while (0)

#define GUARDED(a, len, what)                                                \
  cr_assert(guarded((a), (len)), "%s: a byte outside the region changed",    \
            what)

Test(am_seed, generic_5_10_5_into_12_2_4_2)
{
  struct sent s;
  run_case(&s, C_GEN_5_10_5);
  cr_assert_eq(got_len_vec[0], 5);
  cr_assert_eq(got_len_vec[1], 10);
  cr_assert_eq(got_len_vec[2], 5);
  /* origin stream: o0 = bytes 0..4, o1 = 5..14, o2 = 15..19 */
  STEP(&tarea[0][AT], 0, 5, "1. 5 bytes of orgaddr_0 to tgtaddr_0");
  STEP(&tarea[0][AT + 5], 5, 7, "2. 7 bytes of orgaddr_1 to tgtaddr_0+5");
  STEP(&tarea[1][AT], 12, 2, "3. 2 bytes of orgaddr_1+7 to tgtaddr_1");
  STEP(&tarea[2][AT], 14, 1, "4. 1 byte of orgaddr_1+9 to tgtaddr_2");
  STEP(&tarea[2][AT + 1], 15, 3, "4. then 3 bytes of orgaddr_2 to tgtaddr_2+1");
  STEP(&tarea[3][AT], 18, 2, "5. 2 bytes of orgaddr_2+3 to tgtaddr_3");
  GUARDED(tarea[0], 12, "tgtaddr_0");
  GUARDED(tarea[1], 2, "tgtaddr_1");
  GUARDED(tarea[2], 4, "tgtaddr_2");
  GUARDED(tarea[3], 2, "tgtaddr_3");
  GUARDED(tarea[4], 0, "unused area");
  finish(&s);
}

Test(am_seed, generic_20_into_5_10_drops_5)
{
  struct sent s;
  run_case(&s, C_GEN_20);
  cr_assert_eq(got_len_vec[0], 20);
  STEP(&tarea[0][AT], 0, 5, "5 bytes of orgaddr_0 to tgtaddr_0");
  STEP(&tarea[1][AT], 5, 10, "the next 10 bytes to tgtaddr_1");
  /* the remaining 5 bytes are not copied anywhere */
  GUARDED(tarea[0], 5, "tgtaddr_0");
  GUARDED(tarea[1], 10, "tgtaddr_1");
  GUARDED(tarea[2], 0, "unused area 2");
  GUARDED(tarea[3], 0, "unused area 3");
  GUARDED(tarea[4], 0, "unused area 4");
  finish(&s);
}

Test(am_seed, iovector_ints_into_data_buffer)
{
  struct sent s;
  run_case(&s, C_IOV_INTS);
  for (int i = 0; i < NUM_VECS; i++) {
    cr_assert_eq(got_len_vec[i], sizeof(int), "len_vec[%d] = %lu", i,
                 got_len_vec[i]);
    /* len[i] bytes from origin info[i] to target info[i] */
    long d = lt_find_diff(&data_buffer[i + 1], sizeof(int),
                          org_seed(s.j.src), i * sizeof(int));
    cr_assert_lt(d, 0, "data_buffer[%d] byte %ld differs", i, d);
  }
  cr_assert_eq(lt_find_nonguard(&data_buffer[0], sizeof(int)), -1,
               "the int before data_buffer changed");
  cr_assert_eq(lt_find_nonguard(&data_buffer[NUM_VECS + 1], sizeof(int)), -1,
               "the int after data_buffer changed");
  finish(&s);
}

Test(am_seed, iovector_mixed_lengths)
{
  struct sent s;
  run_case(&s, C_IOV_MIXED);
  size_t off = 0;
  for (int i = 0; i < 5; i++) {
    char what[64];
    snprintf(what, sizeof what, "segment %d (%lu bytes)", i, mixed_len[i]);
    cr_assert_eq(got_len_vec[i], mixed_len[i], "len_vec[%d] = %lu", i,
                 got_len_vec[i]);
    STEP(&tarea[i][AT], off, mixed_len[i], what);
    GUARDED(tarea[i], mixed_len[i], what);
    off += mixed_len[i];
  }
  finish(&s);
}

Test(am_seed, strided_3_blocks_of_5_pitch_8)
{
  struct sent s;
  run_case(&s, C_STRIDED);
  /* 5 bytes from orgaddr, orgaddr+8, orgaddr+16 to the same places */
  STEP(&sarea[AT], 0, 5, "block 0");
  STEP(&sarea[AT + 8], 8, 5, "block 1 (orgaddr+8)");
  STEP(&sarea[AT + 16], 16, 5, "block 2 (orgaddr+16)");
  /* the gaps between the blocks were not copied */
  for (size_t k = 0; k < AREA; k++) {
    size_t r = k - AT;
    int inside = k >= AT && r < 21 && r % 8 < 5;
    if (!inside)
      cr_assert_eq(sarea[k], LT_GUARD, "strided target byte %zu (offset %ld "
                   "from the base) changed", k, (long)k - AT);
  }
  finish(&s);
}
