/*
 * ofi_short_nak.c - a SHORT whose fields are wrong but whose number is
 * valid is NAKed, so the origin's LAPI_Fence ends.
 *
 * Two tasks, white box (links lapi_static).  Task 0 takes a no-FIN
 * number toward task 1 as a small Amsend does (ofi_nofin_take; counted
 * outstanding, a credit taken) and sends, under it, a SHORT whose user
 * header runs past the packet's end.  Task 1 must drop it (class RTS)
 * and, its number being new and in the window, count it as completed and
 * NAK it: task 0's error handler hears LAPI_ERR_UNKNOWN (AM_ERR) from
 * task 1 once and its LAPI_Fence returns.  Before, the SHORT was dropped
 * without a word and that Fence waited forever (task 1 answers ACK_REQs
 * and PINGs, so not even TIMEOUT came; the alarm of ot_init ends it).
 */
#include "ofi_test.h"

#include "transport/ofi/ofi.h"

static int naks_heard;  /* atomic */
static int other_errs;  /* atomic */

static void errh(lapi_handle_t *h, int *code, lapi_err_t *type, int *task,
                 int *src)
{
  (void)h;
  (void)task;
  if (*code == LAPI_ERR_UNKNOWN && *type == AM_ERR && *src == 1)
    __atomic_add_fetch(&naks_heard, 1, __ATOMIC_SEQ_CST);
  else
    __atomic_add_fetch(&other_errs, 1, __ATOMIC_SEQ_CST);
}

/* Task 0, under ofi.lock: the bad SHORT, numbered as a real one. */
static void send_bad_short(void)
{
  struct lapi_hndl *h = NULL;
  for (unsigned i = 0; i < lapi_hndl_limit() && h == NULL; i++)
    h = ofi.hmap[i];
  OT_CHECK(h != NULL, "no handle");
  if (h == NULL)
    return;
  unsigned char pkt[sizeof(struct ofi_short) + 8];
  memset(pkt, 0, sizeof pkt);
  struct ofi_short *s = (struct ofi_short *)pkt;
  OT_CHECK(ofi_nofin_room(1), "no room for a no-FIN message");
  __atomic_add_fetch(&h->outstanding, 1, __ATOMIC_SEQ_CST);
  ofi.peers[1].credits--; /* back when task 1 counts it done */
  uint32_t seq = ofi_nofin_take(1, h);
  ofi_hdr_init(&s->h, OFI_M_SHORT, lapi_hndl_key(0, h->index), seq,
               sizeof pkt);
  s->h.src_local = 0;
  s->hdr_hdl = 1;
  s->uhdr_len = 64; /* past the packet's 8 bytes of body */
  s->flags = OFI_RTS_NO_FIN;
  ofi_send_small(1, pkt, sizeof pkt);
}

int main(void)
{
  ot_init(errh, 60);
  if (ot.n != 2) {
    fprintf(stderr, "ofi_short_nak needs 2 CGs\n");
    return 2;
  }
  /* Counts before the fence after which task 0 sends. */
  pthread_mutex_lock(&ofi.lock);
  uint64_t rts0 = ofi.st.dropped[OFI_BAD_RTS], naks0 = ofi.st.naks_sent;
  pthread_mutex_unlock(&ofi.lock);
  OT_OK(LAPI_Gfence(ot.h));
  if (ot.me == 0) {
    pthread_mutex_lock(&ofi.lock);
    send_bad_short();
    pthread_mutex_unlock(&ofi.lock);
    OT_OK(LAPI_Fence(ot.h)); /* ends once the NAK counted it completed */
    while (__atomic_load_n(&naks_heard, __ATOMIC_SEQ_CST) < 1) {
      LAPI_Probe(ot.h); /* the report runs as an item */
      usleep(1000); /* one core: leave it to the dispatcher */
    }
  }
  OT_OK(LAPI_Gfence(ot.h));
  LAPI_Probe(ot.h);
  pthread_mutex_lock(&ofi.lock);
  uint64_t rts = ofi.st.dropped[OFI_BAD_RTS] - rts0;
  uint64_t naks = ofi.st.naks_sent - naks0;
  pthread_mutex_unlock(&ofi.lock);
  if (ot.me == 0) {
    OT_CHECK(__atomic_load_n(&naks_heard, __ATOMIC_SEQ_CST) == 1,
             "the NAK was heard %d times",
             __atomic_load_n(&naks_heard, __ATOMIC_SEQ_CST));
  } else {
    OT_CHECK(rts == 1, "%llu SHORTs dropped, want 1",
             (unsigned long long)rts);
    OT_CHECK(naks == 1, "%llu NAKs sent, want 1", (unsigned long long)naks);
  }
  OT_CHECK(__atomic_load_n(&other_errs, __ATOMIC_SEQ_CST) == 0,
           "the error handler ran %d times for something else",
           __atomic_load_n(&other_errs, __ATOMIC_SEQ_CST));
  return ot_finish("ofi_short_nak");
}
