/*
 * test_cpe_calls.c - every LAPI call between the CPE tasks of one core
 * group (CPE-task mode, the crts transport), with 2, 8 and 64 tasks, and
 * every handler checked to run on the MPE dispatcher.
 *
 * Each task sends to the next one (me + 1) and receives from the previous
 * one; buffers are in LDM (__thread_local) and in main memory; every byte
 * and every counter is checked.
 */
#include "cpe_test_util.h"

#define MSG 96 /* bytes of the AM payloads: not a multiple of 4 on purpose */

struct shared {
  int ncpes;
  void *inbox[64];        /* each task's LDM inbox (Amsend target) */
  long long total;        /* Rmw64 target, on task 0 */
  int hits;               /* Rmw target, on task 0 */
  int shdlr_calls, chndlr_calls, compl_calls; /* atomic */
};

static struct shared S;

static __thread_local char inbox[MSG + 8];
static __thread_local char ldm_buf[MSG + 8];
static __thread_local char ldm_get[256];
static __thread_local lapi_cntr_t tgt_c, org_c, cmpl_c;
static __thread_local int shm_tasks[64];
static __thread_local void *tab[64];

static uint32_t tag_of(int task, int what)
{
  return (uint32_t)(task * 16 + what + 1);
}

/* ---------------------------------------------------------- handlers */

static void am_done(lapi_handle_t *hndl, void *uinfo)
{
  ct_on_mpe();
  int me = -1;
  CT_OK(LAPI_Qenv(*hndl, TASK_ID, &me)); /* the handle means the target */
  CT_CHECK_EQ((intptr_t)uinfo, me);
  __atomic_add_fetch(&S.compl_calls, 1, __ATOMIC_SEQ_CST);
}

static void *am_header(lapi_handle_t *hndl, void *uhdr, uint *uhdr_len,
                       ulong *msg_len, compl_hndlr_t **comp_h, void **uinfo)
{
  ct_on_mpe();
  lapi_return_info_t *ri = (lapi_return_info_t *)msg_len;
  int me = -1;
  CT_OK(LAPI_Qenv(*hndl, TASK_ID, &me));
  CT_CHECK_EQ(*uhdr_len, 8);
  const int *u = uhdr;
  CT_CHECK_EQ(u[0], ri->src);
  CT_CHECK_EQ(u[1], me);
  CT_CHECK_EQ(ri->msg_len, MSG);
  *comp_h = am_done;
  *uinfo = (void *)(intptr_t)me;
  return S.inbox[me];
}

/* Amsendv: the data goes to main memory, reversed in two segments. */
static char *vbox[64];
static __thread_local void *vinfo[2];
static __thread_local ulong vlen[2];
static void *vinfo_mpe[64][2];
static ulong vlen_mpe[64][2];
static lapi_vec_t vvec_mpe[64];

static lapi_vec_t *amv_header(lapi_handle_t *hndl, void *uhdr,
                              uint *uhdr_len, ulong *len_vec,
                              compl_hndlr_t **comp_h, void **uinfo)
{
  ct_on_mpe();
  (void)uhdr;
  (void)uhdr_len;
  int me = -1;
  CT_OK(LAPI_Qenv(*hndl, TASK_ID, &me));
  CT_CHECK_EQ(len_vec[0], 40);
  CT_CHECK_EQ(len_vec[1], MSG - 40);
  /* Same lengths (IOVECTOR), other places. */
  vinfo_mpe[me][0] = vbox[me] + 100;
  vlen_mpe[me][0] = 40;
  vinfo_mpe[me][1] = vbox[me] + 3;
  vlen_mpe[me][1] = MSG - 40;
  vvec_mpe[me].vec_type = LAPI_GEN_IOVECTOR;
  vvec_mpe[me].num_vecs = 2;
  vvec_mpe[me].info = vinfo_mpe[me];
  vvec_mpe[me].len = vlen_mpe[me];
  *comp_h = NULL;
  *uinfo = NULL;
  return &vvec_mpe[me];
}

static void send_done(lapi_handle_t *hndl, void *sinfo, lapi_sh_info_t *info)
{
  ct_on_mpe();
  (void)hndl;
  CT_CHECK_EQ(info->reason, LAPI_SUCCESS);
  CT_CHECK(sinfo == (void *)&S);
  __atomic_add_fetch(&S.shdlr_calls, 1, __ATOMIC_SEQ_CST);
}

static void get_done(lapi_handle_t *hndl, void *cinfo)
{
  ct_on_mpe();
  (void)hndl;
  CT_CHECK(cinfo == (void *)&S);
  __atomic_add_fetch(&S.chndlr_calls, 1, __ATOMIC_SEQ_CST);
}

/* ----------------------------------------------------------- the tasks */

static void check_bytes(const void *p, size_t n, uint32_t tag, const char *what)
{
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++)
    if (b[i] != ct_byte(tag, i)) {
      ct_fail("CPE %d: %s: byte %zu is %u, not %u", crts_engine_cpe_tid(),
              what, i, b[i], ct_byte(tag, i));
      return;
    }
}

static void identity(struct ct_task *t)
{
  int v = -1;
  CT_CHECK_EQ(t->h, 0); /* handle values are per task */
  CT_CHECK_EQ(t->me, CRTS_tid);
  CT_CHECK_EQ(t->n, S.ncpes);
  CT_OK(LAPI_Qenv(t->h, QUERY_SHM_ENABLED, &v));
  CT_CHECK_EQ(v, S.ncpes > 1);
  CT_OK(LAPI_Qenv(t->h, QUERY_SHM_NUM_TASKS, &v));
  CT_CHECK_EQ(v, S.ncpes);
  CT_OK(LAPI_Qenv(t->h, QUERY_SHM_TASKS, shm_tasks));
  for (int i = 0; i < S.ncpes; i++)
    CT_CHECK_EQ(shm_tasks[i], i);
  CT_OK(LAPI_Qenv(t->h, INTERRUPT_SET, &v));
  CT_CHECK_EQ(v, 1);
}

static void active_messages(struct ct_task *t, lapi_cntr_t *next_tgt)
{
  /* Amsend by Addr_set index: LDM -> LDM (RMA, heads/tails by the MPE). */
  CT_OK(LAPI_Addr_set(t->h, (void *)am_header, 7));
  void *got = NULL;
  CT_OK(LAPI_Addr_get(t->h, &got, 7));
  CT_CHECK(got == (void *)am_header);
  S.inbox[t->me] = inbox;
  memset(inbox, 0, sizeof inbox);
  ct_fill(ldm_buf, MSG, tag_of(t->me, 1));
  CT_OK(LAPI_Gfence(t->h)); /* every inbox is published */
  int uhdr[2] = {t->me, (int)t->next};
  ct_zero(t, &org_c);
  ct_zero(t, &cmpl_c);
  CT_OK(LAPI_Amsend(t->h, t->next, (void *)(uintptr_t)7, uhdr, sizeof uhdr,
                    ldm_buf, MSG, next_tgt, &org_c, &cmpl_c));
  ct_wait(t, &org_c, 1);
  ct_wait(t, &cmpl_c, 1);
  ct_wait(t, &tgt_c, 1);
  check_bytes(inbox, MSG, tag_of((int)t->prev, 1), "Amsend inbox");

  /* Amsendv: main memory -> main memory, by handler address. */
  vbox[t->me] = calloc(1, 256);
  char *src = malloc(MSG);
  ct_fill(src, MSG, tag_of(t->me, 2));
  vinfo[0] = src;
  vlen[0] = 40;
  vinfo[1] = src + 40;
  vlen[1] = MSG - 40;
  lapi_vec_t ov = {LAPI_GEN_IOVECTOR, 2, vinfo, vlen};
  CT_OK(LAPI_Gfence(t->h));
  CT_OK(LAPI_Amsendv(t->h, t->next, (void *)amv_header, NULL, 0, &ov,
                     next_tgt, &org_c, &cmpl_c));
  ct_wait(t, &cmpl_c, 1);
  ct_wait(t, &org_c, 1);
  ct_wait(t, &tgt_c, 1);
  char *mine = vbox[t->me], want[MSG];
  ct_fill(want, MSG, tag_of((int)t->prev, 2));
  CT_CHECK(memcmp(mine + 100, want, 40) == 0);
  CT_CHECK(memcmp(mine + 3, want + 40, MSG - 40) == 0);
  CT_OK(LAPI_Gfence(t->h));
  free(src);
}

static void one_sided(struct ct_task *t, lapi_cntr_t *next_tgt)
{
  /* Put LDM -> LDM with the "same address" idiom: our own ldm_get names
   * the next task's ldm_get. */
  memset(ldm_get, 0, sizeof ldm_get);
  ct_fill(ldm_buf, MSG, tag_of(t->me, 3));
  CT_OK(LAPI_Gfence(t->h));
  CT_OK(LAPI_Put(t->h, t->next, MSG, ldm_get, ldm_buf, &tgt_c, &org_c,
                 &cmpl_c)); /* tgt_cntr: our own, translated as well */
  ct_wait(t, &cmpl_c, 1);
  ct_wait(t, &org_c, 1);
  ct_wait(t, &tgt_c, 1); /* the previous task's put landed here */
  check_bytes(ldm_get, MSG, tag_of((int)t->prev, 3), "Put into LDM");

  /* Get main memory of the next task -> our LDM; Fence covers it. */
  char *mem = malloc(256);
  ct_fill(mem, 256, tag_of(t->me, 4));
  ct_gather(t, mem, tab);
  char *theirs = tab[t->next];
  CT_OK(LAPI_Gfence(t->h));
  memset(ldm_get, 0, sizeof ldm_get);
  CT_OK(LAPI_Get(t->h, t->next, 200, theirs + 8, ldm_get, next_tgt,
                 &org_c));
  CT_OK(LAPI_Fence(t->h));
  int v = -1;
  CT_OK(LAPI_Getcntr(t->h, &org_c, &v));
  CT_CHECK_EQ(v, 1);
  CT_OK(LAPI_Nopoll_wait(t->h, &org_c, 1, &v));
  CT_CHECK_EQ(v, 0);
  ct_wait(t, &tgt_c, 1); /* our memory was read */
  for (int i = 0; i < 200; i++)
    if ((unsigned char)ldm_get[i] != ct_byte(tag_of((int)t->next, 4),
                                             (size_t)i + 8)) {
      ct_fail("CPE %d: Get byte %d", t->me, i);
      break;
    }

  /* Putv and Getv, strided main memory <-> LDM. */
  char *blocks = calloc(1, 1024);
  ct_gather(t, blocks, tab);
  char *next_blocks = tab[t->next];
  ct_fill(ldm_get, 128, tag_of(t->me, 5));
  void *oi[3] = {ldm_get, (void *)(uintptr_t)16, (void *)(uintptr_t)16};
  void *ti[3] = {next_blocks, (void *)(uintptr_t)16, (void *)(uintptr_t)64};
  lapi_vec_t ov = {LAPI_GEN_STRIDED_XFER, 8, oi, NULL};
  lapi_vec_t tv = {LAPI_GEN_STRIDED_XFER, 8, ti, NULL};
  CT_OK(LAPI_Gfence(t->h));
  CT_OK(LAPI_Putv(t->h, t->next, &tv, &ov, next_tgt, &org_c, &cmpl_c));
  ct_wait(t, &cmpl_c, 1);
  ct_wait(t, &org_c, 1);
  ct_wait(t, &tgt_c, 1);
  for (int b = 0; b < 8; b++)
    for (int i = 0; i < 16; i++)
      if ((unsigned char)blocks[b * 64 + i] !=
          ct_byte(tag_of((int)t->prev, 5), (size_t)(b * 16 + i))) {
        ct_fail("CPE %d: Putv block %d byte %d", t->me, b, i);
        b = 8;
        break;
      }
  CT_OK(LAPI_Gfence(t->h));
  /* Read the blocks back from the next task into a dense LDM buffer. */
  memset(ldm_get, 0, sizeof ldm_get);
  CT_OK(LAPI_Getv(t->h, t->next, &tv, &ov, NULL, &org_c));
  ct_wait(t, &org_c, 1);
  check_bytes(ldm_get, 128, tag_of(t->me, 5), "Getv back");
  CT_OK(LAPI_Gfence(t->h));
  free(blocks);
  free(mem);
}

static void atomics(struct ct_task *t)
{
  /* Everyone adds to task 0's variables. */
  if (t->me == 0) {
    S.hits = 0;
    S.total = 0;
  }
  CT_OK(LAPI_Gfence(t->h));
  int one = 1, prev = -1;
  long long add = 1000 + t->me, prev64 = -1;
  ct_zero(t, &org_c);
  CT_OK(LAPI_Rmw(t->h, FETCH_AND_ADD, 0, &S.hits, &one, &prev, &org_c));
  CT_OK(LAPI_Rmw64(t->h, FETCH_AND_ADD, 0, &S.total, &add, &prev64, &org_c));
  ct_wait(t, &org_c, 2);
  CT_CHECK(prev >= 0 && prev < S.ncpes);
  CT_CHECK(prev64 >= 0);
  CT_OK(LAPI_Gfence(t->h));
  if (t->me == 0) {
    CT_CHECK_EQ(S.hits, S.ncpes);
    long long want = 0;
    for (int i = 0; i < S.ncpes; i++)
      want += 1000 + i;
    CT_CHECK_EQ(S.total, want);
  }
  CT_OK(LAPI_Gfence(t->h));
  /* Compare-and-swap: exactly one task wins. */
  int cas[2] = {S.ncpes, -1 - t->me};
  CT_OK(LAPI_Rmw(t->h, COMPARE_AND_SWAP, 0, &S.hits, cas, &prev, &org_c));
  ct_wait(t, &org_c, 1);
  CT_OK(LAPI_Gfence(t->h));
  CT_CHECK(S.hits < 0 && S.hits >= -S.ncpes);
  if (prev == TRUE)
    CT_CHECK_EQ(S.hits, -1 - t->me);
  CT_OK(LAPI_Gfence(t->h));
}

static void xfer(struct ct_task *t, lapi_cntr_t *next_tgt)
{
  lapi_xfer_t x;
  memset(&x, 0, sizeof x);
  ct_fill(ldm_buf, MSG, tag_of(t->me, 6));
  memset(inbox, 0, sizeof inbox);
  CT_OK(LAPI_Gfence(t->h));
  int uhdr[2] = {t->me, (int)t->next};
  x.Am.Xfer_type = LAPI_AM_XFER;
  x.Am.tgt = t->next;
  x.Am.hdr_hdl = (lapi_long_t)(uintptr_t)am_header;
  x.Am.uhdr = uhdr;
  x.Am.uhdr_len = sizeof uhdr;
  x.Am.udata = ldm_buf;
  x.Am.udata_len = MSG;
  x.Am.shdlr = send_done;
  x.Am.sinfo = &S;
  x.Am.tgt_cntr = (lapi_long_t)(uintptr_t)next_tgt;
  x.Am.org_cntr = &org_c;
  x.Am.cmpl_cntr = &cmpl_c;
  CT_OK(LAPI_Xfer(t->h, &x));
  ct_wait(t, &org_c, 1);
  ct_wait(t, &cmpl_c, 1);
  ct_wait(t, &tgt_c, 1);
  check_bytes(inbox, MSG, tag_of((int)t->prev, 6), "Xfer AM inbox");

  memset(&x, 0, sizeof x);
  x.Get.Xfer_type = LAPI_GET_XFER;
  x.Get.tgt = t->next;
  x.Get.len = MSG;
  x.Get.tgt_addr = (lapi_long_t)(uintptr_t)ldm_buf; /* translated */
  x.Get.org_addr = ldm_get;
  x.Get.chndlr = get_done;
  x.Get.cinfo = &S;
  x.Get.org_cntr = &org_c;
  CT_OK(LAPI_Xfer(t->h, &x));
  ct_wait(t, &org_c, 1);
  check_bytes(ldm_get, MSG, tag_of((int)t->next, 6), "Xfer GET");

  memset(&x, 0, sizeof x);
  x.Put.Xfer_type = LAPI_PUT_XFER;
  x.Put.tgt = t->next;
  x.Put.len = 4;
  x.Put.tgt_addr = (lapi_long_t)(uintptr_t)(ldm_get + 200);
  x.Put.org_addr = ldm_buf;
  x.Put.shdlr = send_done;
  x.Put.sinfo = &S;
  x.Put.org_cntr = &org_c;
  x.Put.cmpl_cntr = &cmpl_c;
  CT_OK(LAPI_Xfer(t->h, &x));
  ct_wait(t, &org_c, 1);
  ct_wait(t, &cmpl_c, 1);

  memset(&x, 0, sizeof x);
  int one = 1, prev = 0;
  x.Rmw.Xfer_type = LAPI_RMW_XFER;
  x.Rmw.op = FETCH_AND_ADD;
  x.Rmw.tgt = 0;
  x.Rmw.size = 32;
  x.Rmw.tgt_var = (lapi_long_t)(uintptr_t)&S.compl_calls;
  x.Rmw.in_val = &one;
  x.Rmw.prev_tgt_val = &prev;
  x.Rmw.shdlr = send_done;
  x.Rmw.sinfo = &S;
  x.Rmw.org_cntr = &org_c;
  CT_OK(LAPI_Xfer(t->h, &x));
  ct_wait(t, &org_c, 1);
  CT_OK(LAPI_Gfence(t->h));
}

static void progress_calls(struct ct_task *t, lapi_cntr_t *next_tgt)
{
  /* Polling mode on a CPE task: handlers still run on the MPE. */
  CT_OK(LAPI_Senv(t->h, INTERRUPT_SET, 0));
  int v = -1;
  CT_OK(LAPI_Qenv(t->h, INTERRUPT_SET, &v));
  CT_CHECK_EQ(v, 0);
  memset(inbox, 0, sizeof inbox);
  ct_fill(ldm_buf, MSG, tag_of(t->me, 7));
  CT_OK(LAPI_Gfence(t->h));
  int uhdr[2] = {t->me, (int)t->next};
  CT_OK(LAPI_Amsend(t->h, t->next, (void *)am_header, uhdr, sizeof uhdr,
                    ldm_buf, MSG, next_tgt, NULL, &cmpl_c));
  lapi_msg_info_t mi;
  CT_OK(LAPI_Msgpoll(t->h, 10, &mi));
  CT_OK(LAPI_Probe(t->h));
  ct_wait(t, &cmpl_c, 1);
  ct_wait(t, &tgt_c, 1);
  check_bytes(inbox, MSG, tag_of((int)t->prev, 7), "polling-mode inbox");
  CT_OK(LAPI_Senv(t->h, INTERRUPT_SET, 1));

  /* Purge and resume the next task. */
  CT_OK(LAPI_Purge_totask(t->h, t->next));
  if (t->n > 1)
    CT_CHECK_EQ(LAPI_Put(t->h, t->next, 4, ldm_get, ldm_buf, NULL, NULL,
                         NULL), LAPI_ERR_TGT_PURGED);
  CT_OK(LAPI_Resume_totask(t->h, t->next));
  CT_OK(LAPI_Gfence(t->h));

  /* Address_init64 and Setcntr_wstatus. */
  lapi_long_t *t64 = malloc(64 * sizeof *t64);
  CT_OK(LAPI_Address_init64(t->h, (lapi_long_t)t->me * 3, t64));
  for (int i = 0; i < t->n; i++)
    CT_CHECK_EQ(t64[i], (lapi_long_t)i * 3);
  free(t64);
  uint dest = t->prev;
  int status = -1;
  CT_OK(LAPI_Setcntr_wstatus(t->h, &tgt_c, 1, &dest, &status));
  CT_CHECK_EQ(status, LAPI_MSG_INITIAL);
  CT_OK(LAPI_Gfence(t->h));
  CT_OK(LAPI_Put(t->h, t->next, 4, ldm_get, ldm_buf, next_tgt, NULL, NULL));
  ct_wait(t, &tgt_c, 1);
  CT_CHECK_EQ(status, LAPI_MSG_RECVD);
  if (t->me == 0)
    CT_OK(LAPI_Qenv(t->h, PRINT_STATISTICS, &v));
  lapi_statistics_t st;
  CT_OK(LAPI_Qenv(t->h, QUERY_SHM_STATISTICS, (int *)(void *)&st));
  CT_CHECK(t->n == 1 || st.Tot_pkt_sent_cnt > 10);
  CT_OK(LAPI_Gfence(t->h));
}

/* The vector forms of LAPI_Xfer, the other Rmw operations, LAPI_Address
 * and the handle lock of LAPI_Util, between CPE tasks. */
static void vectors_and_misc(struct ct_task *t, lapi_cntr_t *next_tgt)
{
  ulong addr = 0;
  CT_OK(LAPI_Address(ldm_buf, &addr));
  CT_CHECK(addr == (ulong)(uintptr_t)ldm_buf);

  /* AMV_XFER: the same Amsendv as before, main memory -> main memory. */
  char *src = malloc(MSG);
  ct_fill(src, MSG, tag_of(t->me, 8));
  memset(vbox[t->me], 0, 256);
  vinfo[0] = src;
  vlen[0] = 40;
  vinfo[1] = src + 40;
  vlen[1] = MSG - 40;
  lapi_vec_t ov = {LAPI_GEN_IOVECTOR, 2, vinfo, vlen};
  CT_OK(LAPI_Gfence(t->h));
  lapi_xfer_t x;
  memset(&x, 0, sizeof x);
  x.Amv.Xfer_type = LAPI_AMV_XFER;
  x.Amv.tgt = t->next;
  x.Amv.hdr_hdl = (lapi_long_t)(uintptr_t)amv_header;
  x.Amv.org_vec = &ov;
  x.Amv.shdlr = send_done;
  x.Amv.sinfo = &S;
  x.Amv.tgt_cntr = (lapi_long_t)(uintptr_t)next_tgt;
  x.Amv.org_cntr = &org_c;
  x.Amv.cmpl_cntr = &cmpl_c;
  CT_OK(LAPI_Xfer(t->h, &x));
  ct_wait(t, &org_c, 1);
  ct_wait(t, &cmpl_c, 1);
  ct_wait(t, &tgt_c, 1);
  char want[MSG];
  ct_fill(want, MSG, tag_of((int)t->prev, 8));
  CT_CHECK(memcmp(vbox[t->me] + 100, want, 40) == 0);
  CT_CHECK(memcmp(vbox[t->me] + 3, want + 40, MSG - 40) == 0);

  /* PUTV_XFER and GETV_XFER: LDM (same-address) generic vectors. */
  static __thread_local void *pi[3], *qi[2];
  static __thread_local ulong pl[3], ql[2];
  ct_fill(ldm_buf, MSG, tag_of(t->me, 9));
  memset(ldm_get, 0, sizeof ldm_get);
  CT_OK(LAPI_Gfence(t->h));
  pi[0] = ldm_buf;       pl[0] = 10;
  pi[1] = ldm_buf + 20;  pl[1] = 30;
  pi[2] = ldm_buf + 60;  pl[2] = 6;
  qi[0] = ldm_get + 1;   ql[0] = 25; /* named by our own LDM address */
  qi[1] = ldm_get + 101; ql[1] = 21;
  lapi_vec_t gv = {LAPI_GEN_GENERIC, 3, pi, pl};
  lapi_vec_t tv = {LAPI_GEN_GENERIC, 2, qi, ql};
  memset(&x, 0, sizeof x);
  x.Putv.Xfer_type = LAPI_PUTV_XFER;
  x.Putv.tgt = t->next;
  x.Putv.org_vec = &gv;
  x.Putv.tgt_vec = &tv;
  x.Putv.tgt_cntr = (lapi_long_t)(uintptr_t)next_tgt;
  x.Putv.org_cntr = &org_c;
  x.Putv.cmpl_cntr = &cmpl_c;
  x.Putv.shdlr = send_done;
  x.Putv.sinfo = &S;
  CT_OK(LAPI_Xfer(t->h, &x));
  ct_wait(t, &cmpl_c, 1);
  ct_wait(t, &org_c, 1);
  ct_wait(t, &tgt_c, 1);
  /* 46 origin bytes (10 + 30 + 6) into 25 + 21 target bytes. */
  unsigned char stream[46];
  int k = 0;
  for (int i = 0; i < 10; i++)
    stream[k++] = ct_byte(tag_of((int)t->prev, 9), (size_t)i);
  for (int i = 20; i < 50; i++)
    stream[k++] = ct_byte(tag_of((int)t->prev, 9), (size_t)i);
  for (int i = 60; i < 66; i++)
    stream[k++] = ct_byte(tag_of((int)t->prev, 9), (size_t)i);
  CT_CHECK(memcmp(ldm_get + 1, stream, 25) == 0);
  CT_CHECK(memcmp(ldm_get + 101, stream + 25, 21) == 0);
  CT_CHECK(ldm_get[0] == 0 && ldm_get[26] == 0 && ldm_get[100] == 0 &&
           ldm_get[122] == 0);
  CT_OK(LAPI_Gfence(t->h));
  /* Back: the next task's target region into our origin pieces. */
  memset(ldm_buf, 0, MSG);
  memset(&x, 0, sizeof x);
  x.Getv.Xfer_type = LAPI_GETV_XFER;
  x.Getv.tgt = t->next;
  x.Getv.org_vec = &gv;
  x.Getv.tgt_vec = &tv;
  x.Getv.org_cntr = &org_c;
  x.Getv.chndlr = get_done;
  x.Getv.cinfo = &S;
  CT_OK(LAPI_Xfer(t->h, &x));
  ct_wait(t, &org_c, 1);
  /* The next task holds what we put there: our own pieces come back. */
  for (int i = 0; i < 66; i++) {
    int piece = i < 10 || (i >= 20 && i < 50) || i >= 60;
    unsigned char want_i = piece ? ct_byte(tag_of(t->me, 9), (size_t)i) : 0;
    if ((unsigned char)ldm_buf[i] != want_i) {
      ct_fail("CPE %d: GETV_XFER byte %d", t->me, i);
      break;
    }
  }
  CT_OK(LAPI_Gfence(t->h));

  /* SWAP and FETCH_AND_OR on the next task's LDM (same address). */
  static __thread_local int word;
  static __thread_local long long dword;
  word = 0x10;
  dword = 0x101;
  CT_OK(LAPI_Gfence(t->h));
  int v = t->me, prev = -1;
  long long v64 = (1LL << 40) | 1, prev64 = -1; /* bit 0 set twice */
  CT_OK(LAPI_Rmw(t->h, SWAP, t->next, &word, &v, &prev, &org_c));
  CT_OK(LAPI_Rmw64(t->h, FETCH_AND_OR, t->next, &dword, &v64, &prev64,
                   &org_c));
  ct_wait(t, &org_c, 2);
  CT_CHECK_EQ(prev, 0x10);
  CT_CHECK_EQ(prev64, 0x101);
  CT_OK(LAPI_Gfence(t->h));
  CT_CHECK_EQ(word, (int)t->prev);
  CT_CHECK_EQ(dword, 0x101 | (1LL << 40));

  /* The handle lock of LAPI_Util on a CPE task: handlers of the handle
   * wait while it is held. */
  lapi_util_t u;
  memset(&u, 0, sizeof u);
  u.ThreadFunc.Util_type = LAPI_GET_THREAD_FUNC;
  CT_OK(LAPI_Util(t->h, &u));
  CT_CHECK_EQ(u.ThreadFunc.mutex_lock(t->h), 0);
  CT_CHECK_EQ(u.ThreadFunc.mutex_trylock(t->h), 0); /* recursive */
  CT_CHECK_EQ(u.ThreadFunc.mutex_unlock(t->h), 0);
  CT_CHECK_EQ(u.ThreadFunc.mutex_unlock(t->h), 0);
  CT_OK(LAPI_Gfence(t->h));
  free(src);
}

static void every_call(void *arg)
{
  (void)arg;
  struct ct_task t;
  ct_open(&t);
  identity(&t);
  ct_zero(&t, &tgt_c);
  ct_gather(&t, &tgt_c, tab);
  lapi_cntr_t *next_tgt = tab[t.next];
  active_messages(&t, next_tgt);
  one_sided(&t, next_tgt);
  atomics(&t);
  xfer(&t, next_tgt);
  progress_calls(&t, next_tgt);
  vectors_and_misc(&t, next_tgt);
  ct_close(&t);
}

static void run_all(int n)
{
  S.ncpes = n;
  ct_run(n, every_call, NULL);
  CT_ASSERT_NO_FAILURE();
  /* Send completion handlers: Xfer AM, PUT, RMW, AMV and PUTV; origin
   * completion handlers: Xfer GET and GETV; each once per task. */
  cr_assert_eq(S.shdlr_calls, 5 * n);
  cr_assert_eq(S.chndlr_calls, 2 * n);
}

Test(cpe_calls, two_tasks, .timeout = CT_TIMEOUT) { run_all(2); }
Test(cpe_calls, eight_tasks, .timeout = CT_TIMEOUT) { run_all(8); }
Test(cpe_calls, sixty_four_tasks, .timeout = CT_TIMEOUT) { run_all(64); }
