/*
 * ofi_put_items.c - a LAPI_Xfer put with a send handler allocates one
 * item on its way, not two.
 *
 * The put reserves, when it is called, the item its handlers run in
 * (lapi_am_notify_reserve): fired when the put completes, or, when it
 * fails, carrying the failure to the send handler
 * (lapi_am_notify_fail).  It used to reserve a second item for the
 * failure alone.  Linked with -Wl,--wrap=malloc (and lapi_static), this
 * test counts the malloc calls the calling thread makes inside LAPI_Xfer:
 * the fewest over ROUNDS puts with a send handler must be exactly one
 * more than the fewest over ROUNDS puts without one.  Every send handler
 * runs once with LAPI_SUCCESS, every byte arrives.  Two tasks: task 0
 * puts, task 1 waits.  (The failure path under memory exhaustion and
 * failed reads: ofi_faults with LAPI_OFI_TEST_NOMEM, ofi_cma_fault.)
 */
#include "ofi_test.h"

#include "transport/ofi/ofi.h"

#define ROUNDS 50
#define LEN 3000

void *__real_malloc(size_t n);
void *__wrap_malloc(size_t n);

static __thread int counting;
static __thread long mallocs;

void *__wrap_malloc(size_t n)
{
  if (counting)
    mallocs++;
  return __real_malloc(n);
}

static int shdlr_calls; /* atomic */

static void shdlr(lapi_handle_t *h, void *info, lapi_sh_info_t *si)
{
  (void)h;
  (void)info;
  OT_CHECK(si->reason == LAPI_SUCCESS, "send handler reason %u",
           si->reason);
  __atomic_add_fetch(&shdlr_calls, 1, __ATOMIC_SEQ_CST);
}

static unsigned char data[LEN], box[LEN];
static lapi_cntr_t tgt_cntr;

/* One put of data into task 1's box; the mallocs LAPI_Xfer made here. */
static long put_once(void *tbox, void *tcntr, int with_shdlr)
{
  lapi_cntr_t org;
  LAPI_Setcntr(ot.h, &org, 0);
  lapi_xfer_t x = ot_xfer_put(1, tbox, data, LEN, with_shdlr ? shdlr : NULL,
                              tcntr, &org);
  mallocs = 0;
  counting = 1;
  int rc = LAPI_Xfer(ot.h, &x);
  counting = 0;
  OT_CHECK(rc == LAPI_SUCCESS, "LAPI_Xfer PUT returned %d", rc);
  OT_OK(LAPI_Waitcntr(ot.h, &org, 1, NULL));
  return mallocs;
}

int main(void)
{
  ot_init(NULL, 60);
  if (ot.n != 2) {
    fprintf(stderr, "ofi_put_items needs 2 CGs\n");
    return 2;
  }
  LAPI_Setcntr(ot.h, &tgt_cntr, 0);
  void **boxes = ot_addrs(box);
  void **cntrs = ot_addrs(&tgt_cntr);
  ot_fill(data, LEN, 77);
  if (ot.me == 0) {
    long least_plain = -1, least_shdlr = -1;
    for (int r = 0; r < ROUNDS; r++) {
      long p = put_once(boxes[1], cntrs[1], 0);
      long s = put_once(boxes[1], cntrs[1], 1);
      if (least_plain < 0 || p < least_plain)
        least_plain = p;
      if (least_shdlr < 0 || s < least_shdlr)
        least_shdlr = s;
    }
    OT_CHECK(least_shdlr - least_plain == 1, "a put with a send handler "
             "allocated %ld times, one without %ld times (want one more)",
             least_shdlr, least_plain);
    printf("ofi_put_items: mallocs per put: %ld without a send handler, "
           "%ld with\n", least_plain, least_shdlr);
    OT_OK(LAPI_Fence(ot.h));
    while (__atomic_load_n(&shdlr_calls, __ATOMIC_SEQ_CST) < ROUNDS) {
      LAPI_Probe(ot.h); /* they run in MPE context */
      usleep(1000); /* one core: leave it to the dispatcher */
    }
  } else {
    OT_OK(LAPI_Waitcntr(ot.h, &tgt_cntr, 2 * ROUNDS, NULL));
    size_t bad = ot_verify(box, LEN, 77);
    OT_CHECK(bad == LEN, "byte %zu wrong", bad);
  }
  OT_OK(LAPI_Gfence(ot.h));
  OT_CHECK(__atomic_load_n(&shdlr_calls, __ATOMIC_SEQ_CST) ==
               (ot.me == 0 ? ROUNDS : 0),
           "send handlers ran %d times",
           __atomic_load_n(&shdlr_calls, __ATOMIC_SEQ_CST));
  free(boxes);
  free(cntrs);
  return ot_finish("ofi_put_items");
}
