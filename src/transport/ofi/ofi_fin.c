/*
 * ofi_fin.c - FINs a sink finished in one pass, sent as one FIN_LIST.
 *
 * A stream of rendezvous messages (64 in flight) costs the sink one FIN
 * packet per message and the origin one receive, one CQ entry and one
 * re-posted buffer per FIN.  When several transfers end close together
 * their FINs wait here, per origin, and leave as one FIN_LIST packet
 * of up to OFI_FIN_LIST_MAX entries.  A FIN waits only where the end of
 * a run of work is sure to come soon and sends it (ofi.fin_hold):
 *   - in a progress pass, which sends every held FIN at its end (puts
 *     and GET writes done by CMA end inside the pass);
 *   - at the end of an AM's item (ofi_sink.c item_end): the dispatcher
 *     calls the drained op after the items it ran back to back (a drain
 *     of up to 64, lapi_dispatch.c), before the thread that ran them
 *     can leave LAPI or sleep.
 * Anywhere else a FIN goes at once, with any held ones.  A list that
 * fills is sent at once, and so is one whose transfers moved
 * LAPI_OFI_FIN_LIST_BYTES (1 MiB): a FIN need not wait behind many big
 * copies, beside which it costs little (streams of 1 MiB measured the
 * same either way, docs/PERFORMANCE.md).  A lone FIN goes as a FIN (the
 * same packet as without lists).  Every progress pass sends what is
 * held, so a handler that waits for an origin's answer to an earlier
 * message (a nested LAPI_Waitcntr) never waits on a held FIN.
 * LAPI_OFI_FIN_LIST=0 sends every FIN alone.
 *
 * The origin takes each entry as the FIN it stands for (ofi_on_fin: the
 * same checks).  A list whose count does not match its length, or is
 * below 2 or above OFI_FIN_LIST_MAX, is dropped whole; an entry whose
 * padding is not 0 or whose handle key is out of range is dropped and
 * counted (bad_pkts), the others are taken.
 */
#include <stdlib.h>
#include <string.h>

#include "transport/ofi/ofi.h"

/* The held FINs of peer as a list (or a FIN, or FINs when no buffer). */
static void flush_peer(uint peer)
{
  struct ofi_peer *p = &ofi.peers[peer];
  uint n = p->nfins;
  p->nfins = 0;
  p->fin_bytes = 0;
  __atomic_sub_fetch(&ofi.fins_held, (long)n, __ATOMIC_RELAXED);
  if (n == 0 || p->failed)
    return; /* a peer declared gone hears nothing more */
  struct ofi_buf *b = n > 1 ? ofi_buf_get() : NULL;
  if (b == NULL) {
    /* One FIN, or no buffer now: FINs alone (owed if need be). */
    for (uint i = 0; i < n; i++) {
      ofi_send_fin(peer, p->fins[i].hndl, p->fins[i].id, p->fins[i].status);
      ofi.st.fins++;
    }
    return;
  }
  size_t len = sizeof(struct ofi_fin_list) + n * sizeof(struct ofi_fin_entry);
  struct ofi_fin_list *l = (struct ofi_fin_list *)b->mem;
  ofi_hdr_init(&l->h, OFI_M_FIN_LIST, 0, 0, len);
  l->n = n;
  l->pad = 0;
  memcpy(l + 1, p->fins, n * sizeof(struct ofi_fin_entry));
  b->len = len;
  ofi.st.fin_lists++;
  ofi.st.fins_listed += n;
  ofi_send(b, peer, 0);
}

void ofi_fin_queue(uint peer, uint16_t hndl, uint64_t id, int status,
                   size_t bytes)
{
  struct ofi_peer *p = &ofi.peers[peer];
  int hold = ofi.fin_hold > 0;
  if (!ofi.fin_list || p->failed || (!hold && ofi.fins_held == 0)) {
    ofi_send_fin(peer, hndl, id, status); /* nothing to batch with */
    ofi.st.fins++;
    return;
  }
  if (p->fins == NULL) {
    p->fins = malloc(OFI_FIN_LIST_MAX * sizeof *p->fins);
    if (p->fins == NULL) {
      ofi_send_fin(peer, hndl, id, status);
      ofi.st.fins++;
      return;
    }
  }
  p->fins[p->nfins++] = (struct ofi_fin_entry){
    .id = id, .hndl = hndl, .pad = 0, .status = status};
  __atomic_add_fetch(&ofi.fins_held, 1, __ATOMIC_RELAXED);
  p->fin_bytes += bytes;
  if (p->nfins == OFI_FIN_LIST_MAX || p->fin_bytes >= ofi.fin_list_bytes)
    flush_peer(peer);
  if (!hold)
    ofi_fin_flush();
}

void ofi_fin_flush(void)
{
  for (uint t = 0; ofi.fins_held > 0 && t < ofi.ntasks; t++)
    if (ofi.peers[t].nfins)
      flush_peer(t);
}

void ofi_tp_drained(struct lapi_hndl *h)
{
  (void)h; /* held FINs may be any handle's: all go */
  if (__atomic_load_n(&ofi.fins_held, __ATOMIC_RELAXED) == 0)
    return; /* the common case: no lock */
  pthread_mutex_lock(&ofi.lock);
  if (ofi.up)
    ofi_fin_flush();
  pthread_mutex_unlock(&ofi.lock);
}

void ofi_on_fin_list(const struct ofi_fin_list *l, size_t len)
{
  uint src = l->h.src;
  if (l->n < 2 || l->n > OFI_FIN_LIST_MAX || l->pad != 0 ||
      len != sizeof *l + (size_t)l->n * sizeof(struct ofi_fin_entry)) {
    ofi_bad_pkt("FIN list count, length or padding", src);
    return;
  }
  const struct ofi_fin_entry *e = (const struct ofi_fin_entry *)(l + 1);
  for (uint i = 0; i < l->n; i++) {
    struct ofi_fin_entry en;
    memcpy(&en, &e[i], sizeof en);
    if (en.pad != 0) {
      ofi_bad_pkt("FIN list entry padding", src);
      continue;
    }
    struct ofi_fin f;
    memset(&f, 0, sizeof f);
    f.h = l->h;
    f.h.type = OFI_M_FIN;
    f.h.len = sizeof f;
    f.h.hndl = en.hndl;
    f.h.id = en.id;
    f.status = en.status;
    if (ofi_pkt_check(&f.h, sizeof f))
      continue; /* the handle key a FIN's header must pass */
    ofi_on_fin(&f);
  }
}

void ofi_fin_free(void)
{
  for (uint t = 0; ofi.peers && t < ofi.ntasks; t++) {
    free(ofi.peers[t].fins);
    ofi.peers[t].fins = NULL;
    ofi.peers[t].nfins = 0;
  }
  __atomic_store_n(&ofi.fins_held, 0, __ATOMIC_RELAXED);
  ofi.fin_hold = 0;
}
