/*
 * ofi_get_refused.c - a GET its target refuses fails at its origin at
 * once, and a FIN that is no answer does not end a GET.
 *
 * Two tasks, white box (links lapi_static to build packets and a GET
 * transfer of its own).  Task 0 makes an origin GET transfer toward task
 * 1 as LAPI_Get would (counted outstanding, so LAPI_Fence waits for it),
 * but sends nothing for it yet; its id reaches task 1 by an all-gather.
 *  1. Task 1 sends a FIN with LAPI_SUCCESS naming it: a GET that is not
 *     a write is answered by data, never by such a FIN, so task 0 must
 *     count the FIN as a bad packet and drop it; the transfer lives on
 *     and no error is reported.  (It used to be taken for a refusal.)
 *  2. Task 0 sends, for that transfer, GETs whose sizes are wrong: first
 *     a description length of 0 out of line, later (a second transfer)
 *     data_len beyond LAPI_MAX_MSG_SZ.  Task 1 must count each as a bad
 *     packet and answer with a FIN carrying an error, so that task 0's
 *     error handler hears GET_ERR from task 1 and LAPI_Fence returns:
 *     before, such a GET was dropped without a word and the origin
 *     waited forever (its peer answers PINGs, so not even TIMEOUT came;
 *     the alarm of ot_init ends the test then).
 */
#include "ofi_test.h"

#include "transport/ofi/ofi.h"

static int get_errs;   /* atomic: GET_ERR from task 1 */
static int other_errs; /* atomic */

static void errh(lapi_handle_t *h, int *code, lapi_err_t *type, int *task,
                 int *src)
{
  (void)h;
  (void)task;
  if (*type == GET_ERR && *src == 1 && *code == LAPI_ERR_UNKNOWN)
    __atomic_add_fetch(&get_errs, 1, __ATOMIC_SEQ_CST);
  else
    __atomic_add_fetch(&other_errs, 1, __ATOMIC_SEQ_CST);
}

static uint64_t bad_count(void)
{
  pthread_mutex_lock(&ofi.lock);
  uint64_t n = ofi.st.bad_pkts;
  pthread_mutex_unlock(&ofi.lock);
  return n;
}

/* Under ofi.lock: our handle (the only one). */
static struct lapi_hndl *our_hndl(void)
{
  struct lapi_hndl *h = NULL;
  for (unsigned i = 0; i < lapi_hndl_limit() && h == NULL; i++)
    h = ofi.hmap[i];
  return h;
}

/* Under ofi.lock: the key a packet to the peer's handle carries. */
static uint16_t peer_key(void)
{
  struct lapi_hndl *h = our_hndl();
  return lapi_hndl_key(0, h ? h->index : 0);
}

/* Task 0: an origin GET toward task 1 that nothing has been sent for. */
static uint64_t get_xfer_new(void)
{
  pthread_mutex_lock(&ofi.lock);
  struct lapi_hndl *h = our_hndl();
  struct ofi_xfer *x = h ? ofi_xfer_new(OFI_R_GET, 1, h) : NULL;
  uint64_t id = 0;
  if (x) {
    x->kind = OFI_K_GETREPLY;
    x->data_len = 8;
    __atomic_add_fetch(&h->outstanding, 1, __ATOMIC_SEQ_CST);
    id = x->id;
  }
  pthread_mutex_unlock(&ofi.lock);
  OT_CHECK(id != 0, "no transfer could be made");
  return id;
}

static int xfer_alive(uint64_t id)
{
  pthread_mutex_lock(&ofi.lock);
  int alive = ofi_xfer_find(id) != NULL;
  pthread_mutex_unlock(&ofi.lock);
  return alive;
}

/* Task 0: a GET for transfer id whose sizes task 1 must refuse. */
static void send_bad_get(uint64_t id, int variant)
{
  struct ofi_get g;
  pthread_mutex_lock(&ofi.lock);
  ofi_hdr_init(&g.h, OFI_M_GET, peer_key(), id, sizeof g);
  g.tgt_cntr = 0;
  g.desc_inline = 0;
  g.flags = 0;
  memset(g.pad, 0, sizeof g.pad);
  if (variant == 0) {
    g.data_len = 8;
    g.desc_len = 0; /* a description out of line of no bytes */
  } else {
    g.data_len = (uint64_t)LAPI_MAX_MSG_SZ + 1;
    g.desc_len = 24;
  }
  ofi_send_small(1, &g, sizeof g);
  pthread_mutex_unlock(&ofi.lock);
}

/* Probe until the count of bad packets passes want (the alarm bounds it). */
static void await_bad(uint64_t want)
{
  while (bad_count() < want) {
    LAPI_Probe(ot.h);
    usleep(1000);
  }
}

int main(void)
{
  ot_init(errh, 60);
  if (ot.n != 2) {
    fprintf(stderr, "ofi_get_refused needs 2 CGs\n");
    return 2;
  }
  uint64_t bad0 = bad_count();
  uint64_t id = ot.me == 0 ? get_xfer_new() : 0;
  lapi_long_t ids[2];
  OT_OK(LAPI_Address_init64(ot.h, (lapi_long_t)id, ids));

  /* 1. A FIN of success for a GET that is not a write. */
  if (ot.me == 1) {
    struct ofi_fin f;
    memset(&f, 0, sizeof f);
    pthread_mutex_lock(&ofi.lock);
    ofi_hdr_init(&f.h, OFI_M_FIN, peer_key(), (uint64_t)ids[0],
                 sizeof f);
    f.status = LAPI_SUCCESS;
    ofi_send_small(0, &f, sizeof f);
    pthread_mutex_unlock(&ofi.lock);
  } else {
    await_bad(bad0 + 1);
    OT_CHECK(xfer_alive(id), "a FIN of success ended a GET that is not "
             "a write");
    LAPI_Probe(ot.h);
    OT_CHECK(__atomic_load_n(&get_errs, __ATOMIC_SEQ_CST) == 0 &&
             __atomic_load_n(&other_errs, __ATOMIC_SEQ_CST) == 0,
             "the stray FIN was reported as an error");
  }
  /* A barrier without a fence: task 0's GET is outstanding.  The count
   * before it: task 0 sends right after it. */
  uint64_t bad1 = bad_count();
  OT_OK(LAPI_Address_init64(ot.h, 0, ids));

  /* 2. GETs with wrong sizes, one per transfer: each is refused by FIN. */
  if (ot.me == 0) {
    for (int v = 0; v < 2; v++) {
      uint64_t xid = v == 0 ? id : get_xfer_new();
      send_bad_get(xid, v);
      OT_OK(LAPI_Fence(ot.h)); /* returns once the FIN(error) failed it */
      OT_CHECK(!xfer_alive(xid), "the refused GET still lives");
      while (__atomic_load_n(&get_errs, __ATOMIC_SEQ_CST) < v + 1) {
        LAPI_Probe(ot.h); /* the report runs as an item */
        usleep(1000); /* one core: leave it to the dispatcher */
      }
    }
  } else {
    await_bad(bad1 + 2);
  }
  OT_OK(LAPI_Gfence(ot.h));
  LAPI_Probe(ot.h);
  if (ot.me == 0) {
    OT_CHECK(__atomic_load_n(&get_errs, __ATOMIC_SEQ_CST) == 2,
             "GET_ERR heard %d times, want 2",
             __atomic_load_n(&get_errs, __ATOMIC_SEQ_CST));
    OT_CHECK(bad_count() == bad0 + 1, "%llu bad packets, want 1",
             (unsigned long long)(bad_count() - bad0));
  } else {
    OT_CHECK(bad_count() == bad1 + 2, "%llu bad GETs, want 2",
             (unsigned long long)(bad_count() - bad1));
  }
  OT_CHECK(__atomic_load_n(&other_errs, __ATOMIC_SEQ_CST) == 0,
           "the error handler ran %d times for something else",
           __atomic_load_n(&other_errs, __ATOMIC_SEQ_CST));
  return ot_finish("ofi_get_refused");
}
