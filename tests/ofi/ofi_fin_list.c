/*
 * ofi_fin_list.c - FINs of several transfers in one FIN_LIST packet
 * (src/transport/ofi/ofi_fin.c): every counter stays exact, and a
 * malformed list is dropped and counted, entry by entry.
 *
 * Two tasks, white box (links lapi_static for the transport's counts
 * and to build packets).
 *  1. Task 0 streams ROUNDS windows of WINDOW rendezvous Amsends (64 KiB,
 *     with a completion handler), WINDOW puts and WINDOW gets to task 1,
 *     all counted on org_cntr, tgt_cntr and cmpl_cntr (gets: org_cntr
 *     and tgt_cntr).  After each window every counter holds exactly its
 *     window's count, the completion handler ran once per Amsend and
 *     the bytes are right.  Which FINs share a list depends on timing
 *     (how many arrive in one pass): the job's FINs, alone or listed,
 *     must add up to one per transfer either way, and some lists must
 *     go (they are printed).
 *     With LAPI_OFI_FIN_LIST=0 (ctest variant) no list is sent at all.
 *  2. Task 1 sends task 0 FIN lists that are wrong: a count of 1, a
 *     count beyond OFI_FIN_LIST_MAX, a count the length does not hold,
 *     header padding not 0 (each dropped whole, one bad packet), then a
 *     list of four entries: padding not 0 and a handle key out of range
 *     (each dropped: two bad packets) and two ids of no live transfer
 *     (stale).  Task 0 must count exactly those, report no error and go
 *     on working (part 1 runs again after it).
 */
#include "ofi_test.h"

#include "transport/ofi/ofi.h"

#define WINDOW 64
#define ROUNDS 8
#define SIZE (64 * 1024)

static unsigned char *src_buf, *am_box, *put_box, *get_back;
static int completions; /* atomic: Amsend completion handlers run */
static int errors;      /* atomic: error handler calls */

static void errh(lapi_handle_t *h, int *code, lapi_err_t *type, int *task,
                 int *src)
{
  (void)h;
  (void)code;
  (void)type;
  (void)task;
  (void)src;
  __atomic_add_fetch(&errors, 1, __ATOMIC_SEQ_CST);
}

static void *am_hdr(lapi_handle_t *h, void *uhdr, uint *uhdr_len,
                    ulong *msg_len, compl_hndlr_t **comp_h, void **uinfo)
{
  (void)h;
  (void)uhdr;
  (void)uhdr_len;
  OT_CHECK(*msg_len == SIZE, "Amsend of %lu bytes", *msg_len);
  *comp_h = ot_cmpl_count;
  *uinfo = &completions;
  return am_box;
}

static void fill(unsigned char *p, size_t n, unsigned seed)
{
  for (size_t i = 0; i < n; i++)
    p[i] = (unsigned char)(i * 131u + seed);
}

static int same(const unsigned char *p, size_t n, unsigned seed)
{
  for (size_t i = 0; i < n; i += 4093)
    if (p[i] != (unsigned char)(i * 131u + seed))
      return 0;
  return p[n - 1] == (unsigned char)((n - 1) * 131u + seed);
}

static void counts(uint64_t *bad, uint64_t *stale, uint64_t *fins,
                   uint64_t *listed, uint64_t *lists)
{
  pthread_mutex_lock(&ofi.lock);
  *bad = ofi.st.bad_pkts;
  *stale = ofi.st.stale_pkts;
  *fins = ofi.st.fins;
  *listed = ofi.st.fins_listed;
  *lists = ofi.st.fin_lists;
  pthread_mutex_unlock(&ofi.lock);
}

/* Part 1: streamed windows, every counter checked after each. */
static void stream(void **tgt_cntrs, void **boxes, void **puts,
                   lapi_cntr_t *tgt, unsigned seed)
{
  lapi_cntr_t org, cmpl, gorg;
  double t0 = ot_now_s();
  OT_OK(LAPI_Setcntr(ot.h, &org, 0));
  OT_OK(LAPI_Setcntr(ot.h, &cmpl, 0));
  OT_OK(LAPI_Setcntr(ot.h, &gorg, 0));
  for (int r = 0; r < ROUNDS; r++) {
    if (ot.me == 0) {
      fill(src_buf, SIZE, seed + (unsigned)r);
      for (int i = 0; i < WINDOW; i++) {
        OT_OK(LAPI_Amsend(ot.h, 1, (void *)1, NULL, 0, src_buf, SIZE,
                          tgt_cntrs[1], &org, &cmpl));
        OT_OK(LAPI_Put(ot.h, 1, SIZE, puts[1], src_buf, tgt_cntrs[1], &org,
                       &cmpl));
        OT_OK(LAPI_Get(ot.h, 1, SIZE, boxes[1], get_back, tgt_cntrs[1],
                       &gorg));
      }
      int v;
      OT_OK(LAPI_Waitcntr(ot.h, &cmpl, 2 * WINDOW, &v));
      OT_CHECK(v == 0, "cmpl_cntr %d after its wait, want 0", v);
      OT_OK(LAPI_Waitcntr(ot.h, &gorg, WINDOW, &v));
      OT_CHECK(v == 0, "get org_cntr %d after its wait, want 0", v);
      /* cmpl came after org (memory reusable before the target is done) */
      OT_OK(LAPI_Getcntr(ot.h, &org, &v));
      OT_CHECK(v == 2 * WINDOW, "org_cntr %d, want %d", v, 2 * WINDOW);
      OT_OK(LAPI_Setcntr(ot.h, &org, 0));
      OT_CHECK(same(get_back, SIZE, 7), "get brought wrong bytes");
    } else {
      int v;
      /* Amsend and put bump it on arrival, get once its data left */
      OT_OK(LAPI_Waitcntr(ot.h, tgt, 3 * WINDOW, &v));
      OT_CHECK(v == 0, "tgt_cntr %d after its wait, want 0", v);
      OT_OK(LAPI_Getcntr(ot.h, tgt, &v));
      OT_CHECK(v == 0, "tgt_cntr moved to %d past the window", v);
      /* before the fence: the next round overwrites them after it */
      OT_CHECK(same(am_box, SIZE, seed + (unsigned)r),
               "Amsend bytes, round %d", r);
      OT_CHECK(same(put_box, SIZE, seed + (unsigned)r), "put bytes, round %d",
               r);
    }
    OT_OK(LAPI_Gfence(ot.h));
  }
  if (ot.me == 1)
    OT_CHECK(__atomic_load_n(&completions, __ATOMIC_SEQ_CST) ==
                 ROUNDS * WINDOW,
             "%d completion handlers, want %d",
             __atomic_load_n(&completions, __ATOMIC_SEQ_CST), ROUNDS * WINDOW);
  __atomic_store_n(&completions, 0, __ATOMIC_SEQ_CST);
  /* Under a second here: a held FIN that waits for a watchdog pass (the
   * dispatcher's drained op not sending it) makes it 15 s or more. */
  double took = ot_now_s() - t0;
  OT_CHECK(took < 8, "the stream took %.1f s: held FINs waited?", took);
}

/* Part 2, task 1: a list of n entries claiming count `claim`. */
static void send_list(uint32_t claim, uint32_t n, uint32_t pad,
                      const struct ofi_fin_entry *e)
{
  unsigned char pkt[sizeof(struct ofi_fin_list) +
                    (OFI_FIN_LIST_MAX + 1) * sizeof(struct ofi_fin_entry)]
      __attribute__((aligned(8)));
  size_t len = sizeof(struct ofi_fin_list) + n * sizeof *e;
  struct ofi_fin_list *l = (struct ofi_fin_list *)pkt;
  pthread_mutex_lock(&ofi.lock);
  ofi_hdr_init(&l->h, OFI_M_FIN_LIST, 0, 0, len);
  l->n = claim;
  l->pad = pad;
  memcpy(l + 1, e, n * sizeof *e);
  ofi_send_small(0, pkt, len);
  pthread_mutex_unlock(&ofi.lock);
}

static void bad_lists(void)
{
  struct ofi_fin_entry e[OFI_FIN_LIST_MAX + 1];
  memset(e, 0, sizeof e);
  for (uint32_t i = 0; i <= OFI_FIN_LIST_MAX; i++) {
    /* slots far beyond any table: no live transfer */
    e[i].id = (uint64_t)1 << 32 | (0xfffff000u + i);
    e[i].status = LAPI_SUCCESS;
  }
  send_list(1, 1, 0, e);                                 /* count 1 */
  send_list(OFI_FIN_LIST_MAX + 1, OFI_FIN_LIST_MAX + 1, 0, e); /* too many */
  send_list(3, 2, 0, e);                                 /* length */
  send_list(2, 2, 1, e);                                 /* padding */
  e[0].pad = 7;                                          /* entry padding */
  e[1].hndl = 0xff;                                      /* handle key */
  send_list(4, 4, 0, e);                                 /* + 2 stale */
}

int main(void)
{
  ot_init(errh, 100);
  if (ot.n != 2) {
    fprintf(stderr, "ofi_fin_list needs 2 CGs\n");
    return 2;
  }
  src_buf = malloc(SIZE);
  am_box = calloc(1, SIZE);
  put_box = calloc(1, SIZE);
  get_back = calloc(1, SIZE);
  unsigned char *get_src = malloc(SIZE);
  fill(get_src, SIZE, 7);
  lapi_cntr_t tgt;
  OT_OK(LAPI_Setcntr(ot.h, &tgt, 0));
  OT_OK(LAPI_Addr_set(ot.h, (void *)am_hdr, 1));
  void **tgt_cntrs = ot_addrs(&tgt);
  void **boxes = ot_addrs(get_src);
  void **puts = ot_addrs(put_box);
  /* Before the barrier: task 1 may leave it after task 0 and its
   * progress thread may finish and FIN a window's puts before task 1's
   * own snapshot (with it after the barrier about 1 run in 15 counted
   * 62-192 FINs too few). */
  uint64_t bad0, stale0, fins0, listed0, lists0;
  counts(&bad0, &stale0, &fins0, &listed0, &lists0);
  OT_OK(LAPI_Gfence(ot.h));

  stream(tgt_cntrs, boxes, puts, &tgt, 1);
  uint64_t bad1, stale1, fins1, listed1, lists1;
  counts(&bad1, &stale1, &fins1, &listed1, &lists1);
  /* One FIN per transfer, alone or in a list, whichever end sent it (a
   * get's comes from its target when it wrote the data, else from its
   * origin when it read it): every FIN is counted when it is sent (a
   * held one when its list goes), and the last Gfence comes after every
   * FIN of the stream was sent (each side waited for the other's). */
  uint64_t sent = ot_job_sum(fins1 - fins0 + listed1 - listed0);
  uint64_t lists = ot_job_sum(lists1 - lists0);
  OT_CHECK(sent == 3ull * ROUNDS * WINDOW, "%llu FINs for %d transfers",
           (unsigned long long)sent, 3 * ROUNDS * WINDOW);
  const char *off = getenv("LAPI_OFI_FIN_LIST");
  if (off && strcmp(off, "0") == 0)
    OT_CHECK(lists == 0, "%llu FIN lists with LAPI_OFI_FIN_LIST=0",
             (unsigned long long)lists);
  else /* 1536 transfers in windows of 64: some FINs share a pass */
    OT_CHECK(lists > 0, "no FIN list in %llu FINs", (unsigned long long)sent);
  uint64_t listed = ot_job_sum(listed1 - listed0);
  if (ot.me == 0)
    printf("ofi_fin_list: %llu FINs, %llu of them in %llu lists\n",
           (unsigned long long)sent, (unsigned long long)listed,
           (unsigned long long)lists);

  /* Part 2: malformed lists from task 1 to task 0. */
  OT_CHECK(bad1 == bad0, "%llu bad packets in the stream",
           (unsigned long long)(bad1 - bad0));
  if (ot.me == 1)
    bad_lists();
  else {
    uint64_t b, s, f, li, ls;
    do {
      LAPI_Probe(ot.h);
      usleep(1000);
      counts(&b, &s, &f, &li, &ls);
    } while (b < bad1 + 6 || s < stale1 + 2); /* the alarm bounds it */
  }
  OT_OK(LAPI_Gfence(ot.h));
  uint64_t bad2, stale2, fins2, listed2, lists2;
  counts(&bad2, &stale2, &fins2, &listed2, &lists2);
  if (ot.me == 0) {
    OT_CHECK(bad2 - bad1 == 6, "%llu bad packets, want 6 (4 lists, 2 "
             "entries)", (unsigned long long)(bad2 - bad1));
    OT_CHECK(stale2 - stale1 == 2, "%llu stale FINs, want 2",
             (unsigned long long)(stale2 - stale1));
    uint64_t dropped_hndl;
    pthread_mutex_lock(&ofi.lock);
    dropped_hndl = ofi.st.dropped[OFI_BAD_HNDL];
    pthread_mutex_unlock(&ofi.lock);
    OT_CHECK(dropped_hndl >= 1, "the entry's handle key was not counted");
  }
  OT_CHECK(__atomic_load_n(&errors, __ATOMIC_SEQ_CST) == 0,
           "the error handler ran %d times",
           __atomic_load_n(&errors, __ATOMIC_SEQ_CST));

  /* Task 0 goes on working after them. */
  stream(tgt_cntrs, boxes, puts, &tgt, 2);
  free(tgt_cntrs);
  free(boxes);
  free(puts);
  int rc = ot_finish("ofi_fin_list");
  free(get_src); /* peers read it until the end */
  return rc;
}
