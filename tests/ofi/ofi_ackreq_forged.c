/*
 * ofi_ackreq_forged.c - an ACK_REQ that asks for more than its sender
 * sent does not hold back the answer a real one waits for (ofi_ack.c,
 * ofi_on_ack_req; issue 4 item 6: nothing from the wire is trusted).
 *
 * A no-FIN message (an eager Amsend without cmpl_cntr) is acknowledged
 * by counts; LAPI_Fence at its origin sends an ACK_REQ and waits for
 * them.  Task 1 first runs, as if task 0 had sent it, an ACK_REQ for 100
 * messages more than task 0 ever sent: inside the window, so it passes
 * every check (ofi_test_arrival, white box).  Then task 0 sends one
 * Amsend whose completion handler at task 1 takes SLOW_MS, and fences:
 * its real ACK_REQ arrives while the message is still held, so it waits
 * in task 1's pending answer beside the forged one.  Task 1 sends
 * nothing else to task 0 until task 0's Fence returned (a sign through a
 * file, not LAPI: its Gfence would carry the counts too).  Its answer
 * must leave when the message completes (the counts it last told task 0
 * reach the message within ANSWER_S), not with the reply to task 0's
 * PING or ASK a ping interval (TIMEOUT / 4, 30 s here) later, as when
 * the forged number alone was kept.
 */
#include "ofi_test.h"

#include "transport/ofi/ofi.h"

#define SLOW_MS 300
#define ANSWER_S 10

static int cmpl_done; /* atomic */
static char landing[64];

static void slow_cmpl(lapi_handle_t *h, void *uinfo)
{
  (void)h;
  (void)uinfo;
  usleep(SLOW_MS * 1000);
  __atomic_store_n(&cmpl_done, 1, __ATOMIC_SEQ_CST);
}

static void *hdr(lapi_handle_t *h, void *uhdr, uint *uhdr_len,
                 ulong *msg_len, compl_hndlr_t **comp_h, void **uinfo)
{
  (void)h;
  (void)uhdr;
  (void)uhdr_len;
  OT_CHECK(*msg_len <= sizeof landing, "msg_len %lu", *msg_len);
  *comp_h = slow_cmpl;
  *uinfo = NULL;
  return landing;
}

/* Task 1: an ACK_REQ from task 0 for `ahead` messages past what task 0
 * sent, with the counts task 0 would stamp; returns task 0's count of
 * messages completed here until then. */
static uint32_t forge_ack_req(uint32_t ahead)
{
  struct ofi_hdr hd;
  pthread_mutex_lock(&ofi.lock);
  uint32_t base = ofi.peers[0].in_base;
  ofi_hdr_init(&hd, OFI_M_ACK_REQ, 0, base + ahead, sizeof hd);
  hd.src = 0;
  hd.ack_done = hd.ack_seq = ofi.peers[0].nf_acked;
  pthread_mutex_unlock(&ofi.lock);
  OT_CHECK(ofi_test_arrival(&hd, sizeof hd, 0) == 0, "the forged ACK_REQ "
           "could not be run");
  return base;
}

int main(void)
{
  ot_init(NULL, 60);
  if (ot.n != 2) {
    if (ot.me == 0)
      printf("ofi_ackreq_forged: needs 2 tasks: SKIP\n");
    return ot_finish("ofi_ackreq_forged") == 0 ? 77 : 1;
  }
  OT_OK(LAPI_Addr_set(ot.h, (void *)hdr, 1));
  void **hdrs = ot_addrs((void *)hdr);
  OT_OK(LAPI_Gfence(ot.h));
  /* Counted before the Gfence that lets task 0 send: its waiter may run
   * the whole message, slow handler included, before it returns. */
  uint32_t want = 0;
  if (ot.me == 1)
    want = forge_ack_req(100) + 1;
  OT_OK(LAPI_Gfence(ot.h));
  if (ot.me == 0) {
    char msg[8] = "forged?";
    OT_OK(LAPI_Amsend(ot.h, 1, hdrs[1], NULL, 0, msg, sizeof msg, NULL,
                      NULL, NULL));
    OT_OK(LAPI_Fence(ot.h));
    ot_sign_give("fenced");
  } else {
    /* Out of LAPI until task 0's Fence ended: nothing of ours may carry
     * the counts meanwhile but the answer under test. */
    for (int i = 0; i < 3000 && !__atomic_load_n(&cmpl_done,
                                                   __ATOMIC_SEQ_CST); i++)
      usleep(10000);
    OT_CHECK(__atomic_load_n(&cmpl_done, __ATOMIC_SEQ_CST), "the message "
             "was not completed in 30 s");
    int told = 0;
    for (int i = 0; i < ANSWER_S * 100 && !told; i++) {
      pthread_mutex_lock(&ofi.lock);
      told = (int32_t)(ofi.peers[0].told_base - want) >= 0;
      pthread_mutex_unlock(&ofi.lock);
      if (!told)
        usleep(10000);
    }
    OT_CHECK(told, "the answer to task 0's ACK_REQ did not leave within "
             "%d s of the message's end: held back by the forged one",
             ANSWER_S);
    OT_CHECK(ot_sign_take("fenced", 60), "task 0's Fence did not end in "
             "60 s");
    OT_CHECK(memcmp(landing, "forged?", 8) == 0, "wrong bytes landed");
  }
  OT_OK(LAPI_Gfence(ot.h));
  free(hdrs);
  return ot_finish("ofi_ackreq_forged");
}
