/*
 * tp_select.c - which transport serves a target, and the named stubs.
 *
 * The selector is the only code that knows the topology: the caller's
 * own task goes through the loopback; a task of the caller's core group
 * through the CRTS engines; any other task (another core group, another
 * process) over libfabric (src/transport/ofi), which answers
 * LAPI_ERR_NO_CONNECTIVITY for a task it cannot reach.
 */
#include "am/lapi_am.h"
#include "transport/crts_tp.h"

/* src/transport/ofi/ofi_origin.c */
extern const struct lapi_tp_ops lapi_tp_ofi;

int lapi_tp_no_init(struct lapi_hndl *h)
{
  (void)h;
  return LAPI_SUCCESS;
}

void lapi_tp_no_fini(struct lapi_hndl *h)
{
  (void)h;
}

void lapi_tp_no_caps(struct lapi_tp_caps *caps)
{
  caps->max_eager = 0;
  caps->max_pkt = 0;
  caps->max_iov = 0;
  caps->strided = 0;
  caps->atomics = 0;
}

int lapi_tp_no_am_send(struct lapi_hndl *h, const struct lapi_tp_am *am)
{
  (void)h;
  (void)am;
  return LAPI_ERR_NO_CONNECTIVITY;
}

int lapi_tp_no_put(struct lapi_hndl *h, const struct lapi_tp_rma *op)
{
  (void)h;
  (void)op;
  return LAPI_ERR_NO_CONNECTIVITY;
}

int lapi_tp_no_get(struct lapi_hndl *h, const struct lapi_tp_rma *op)
{
  (void)h;
  (void)op;
  return LAPI_ERR_NO_CONNECTIVITY;
}

int lapi_tp_no_rmw(struct lapi_hndl *h, const struct lapi_tp_rmw *op)
{
  (void)h;
  (void)op;
  return LAPI_ERR_NO_CONNECTIVITY;
}

int lapi_tp_no_progress(struct lapi_hndl *h)
{
  (void)h;
  return 0;
}

int lapi_tp_no_tight(struct lapi_hndl *h, int on)
{
  (void)h;
  (void)on;
  return 0;
}

void lapi_tp_no_flush(struct lapi_hndl *h)
{
  (void)h;
}

void lapi_tp_no_sync(void) {}

const struct lapi_tp_ops *const lapi_tp_all[] = {
  &lapi_tp_self,
  &lapi_tp_crts, /* crts: tasks of the caller's core group */
  &lapi_tp_ofi,  /* ofi: tasks of other core groups */
};
const unsigned lapi_tp_count = sizeof lapi_tp_all / sizeof lapi_tp_all[0];

/* Subsets of lapi_tp_all for the small-message path, where a loop over
 * every transport cost indirect calls that only return (~30-45
 * instructions a call): the transports with a network to poll (a tight
 * op other than lapi_tp_no_tight), and those with a drained op.
 * tests/lapi/test_core_internals.c checks both against lapi_tp_all. */
const struct lapi_tp_ops *const lapi_tp_net[] = {&lapi_tp_ofi};
const unsigned lapi_tp_net_count = sizeof lapi_tp_net / sizeof lapi_tp_net[0];
const struct lapi_tp_ops *const lapi_tp_draining[] = {&lapi_tp_ofi};
const unsigned lapi_tp_draining_count =
    sizeof lapi_tp_draining / sizeof lapi_tp_draining[0];

const struct lapi_tp_ops *lapi_tp_select(const struct lapi_hndl *h, uint tgt)
{
  if (tgt == h->task_id)
    return &lapi_tp_self;
  /* crts: another CPE task of the caller's core group. */
  if (tgt >= h->cg_first && tgt - h->cg_first < h->cg_tasks)
    return &lapi_tp_crts;
  return &lapi_tp_ofi;
}

int lapi_tp_tight(struct lapi_hndl *h, int on)
{
  int n = 0;
  for (unsigned t = 0; t < lapi_tp_net_count; t++)
    n += lapi_tp_net[t]->tight(h, on);
  return n;
}

int lapi_tp_tight_progress(struct lapi_hndl *h)
{
  int n = 0;
  for (unsigned t = 0; t < lapi_tp_net_count; t++)
    n += lapi_tp_net[t]->progress(h);
  return n;
}

void lapi_tp_flush(struct lapi_hndl *h)
{
  for (unsigned t = 0; t < lapi_tp_count; t++)
    lapi_tp_all[t]->flush(h);
}

void lapi_tp_sync(void)
{
  for (unsigned t = 0; t < lapi_tp_count; t++)
    lapi_tp_all[t]->sync();
}

void lapi_tp_settings_read(void)
{
  crts_tp_settings_read();
}
