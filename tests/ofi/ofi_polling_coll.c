/*
 * ofi_polling_coll.c - collectives keep a polling-mode task's handlers
 * running.
 *
 * In polling mode a handler runs only in a LAPI call of its task.  A task
 * that enters a collective (LAPI_Gfence, LAPI_Address_init) while a peer
 * waits for the completion of a message to it must still run that
 * message's handlers inside the collective, or the peer never joins and
 * both wait for ever.  Each round, every task but the last sends the last
 * one an active message and waits for its cmpl_cntr before it joins the
 * collective; the last task joins at once.  The alarm of ot_init turns a
 * hang into a failure.
 */
#include "ofi_test.h"

static int arrived; /* atomic */

static void *hdr(lapi_handle_t *h, void *uhdr, uint *uhdr_len,
                 ulong *msg_len, compl_hndlr_t **comp_h, void **uinfo)
{
  (void)h;
  (void)uhdr;
  (void)uhdr_len;
  (void)msg_len;
  *comp_h = ot_cmpl_count;
  *uinfo = &arrived;
  return ot_inbox;
}

int main(void)
{
  ot_init(NULL, 60);
  OT_OK(LAPI_Senv(ot.h, INTERRUPT_SET, 0));
  OT_OK(LAPI_Addr_set(ot.h, (void *)hdr, 1));
  OT_OK(LAPI_Gfence(ot.h));
  int last = ot.n - 1;
  lapi_cntr_t cmpl;
  LAPI_Setcntr(ot.h, &cmpl, 0);
  for (int round = 0; round < 3; round++) {
    if (ot.me != last) {
      int word = round;
      size_t len = round == 1 ? 100000 : sizeof word; /* rendezvous too */
      OT_OK(LAPI_Amsend(ot.h, (uint)last, (void *)1, NULL, 0,
                        round == 1 ? (void *)ot_inbox : (void *)&word, len,
                        NULL, NULL, &cmpl));
      OT_OK(LAPI_Waitcntr(ot.h, &cmpl, 1, NULL));
    }
    if (round % 2 == 0) {
      OT_OK(LAPI_Gfence(ot.h));
    } else {
      void **tab = ot_addrs(&cmpl);
      free(tab);
    }
  }
  if (ot.me == last)
    OT_CHECK(__atomic_load_n(&arrived, __ATOMIC_SEQ_CST) == 3 * (ot.n - 1),
             "%d completion handlers ran, expected %d", arrived,
             3 * (ot.n - 1));
  return ot_finish("ofi_polling_coll");
}
