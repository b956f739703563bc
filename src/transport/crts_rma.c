/*
 * crts_rma.c - puts, gets and read-modify-writes between the tasks of a
 * core group.
 *
 * The origin checks both sides (LDM rules, crts_tp.h), reserves the origin
 * notification (a LAPI_Xfer handler needs an item), counts the operation
 * as outstanding (LAPI_Fence waits for it), copies what the MPE will read
 * later (vector descriptions, Rmw operands) into the op and pushes it.  No
 * handler runs at the target, so the dispatcher does the whole operation
 * when it pops it:
 *   put   engines move org -> tgt, tgt_cntr, then org_cntr and cmpl_cntr
 *   get   engines move tgt -> org, tgt_cntr (the data left the target),
 *         then the origin completion handler and org_cntr
 *   rmw   the MPE's atomic on the target variable, prev_tgt_val, org_cntr
 * Statistics: the target handle counts a put or rmw as received, the
 * origin a get (the bytes land at the origin).  The completions of a run
 * of plain puts or gets of one origin popped together move once for the
 * whole run (struct crts_done).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "am/lapi_cpe.h"
#include "crts/crts_engine.h"
#include "transport/crts_tp.h"

#define ALIGN16(n) (((n) + 15) & ~(size_t)15)

static struct lapi_hndl *peer(struct lapi_hndl *h, uint tgt, const char *api)
{
  struct lapi_hndl *t = lapi_hndl_peer(h, tgt);
  if (t == NULL)
    LAPI_FAIL_IN(api, LAPI_ERR_TGT_CONTEXT,
                 "task %u has no active handle %u (it has not called "
                 "LAPI_Init, or has terminated it)", tgt, h->index);
  return t;
}

/* Both sides of a put or get; LAPI_SUCCESS or the logged code. */
static int check_sides(struct lapi_hndl *h, struct lapi_hndl *t,
                       const struct lapi_tp_rma *op, void *tgt_addr,
                       const char *api)
{
  char why[256];
  int rc;
  if (op->org_vec) {
    rc = crts_tp_check_vec(op->org_vec, h->cg_tasks, CRTS_SIDE_ORG, 0, -1,
                           -1, why, sizeof why);
    if (rc == LAPI_SUCCESS)
      rc = crts_tp_check_vec(op->tgt_vec, h->cg_tasks, CRTS_SIDE_TGT, 1,
                             h->cpe, t->cpe, why, sizeof why);
  } else {
    rc = crts_tp_check_buf(op->org_addr, op->len, h->cg_tasks,
                           CRTS_SIDE_ORG, why, sizeof why);
    if (rc == LAPI_SUCCESS)
      rc = crts_tp_check_buf(tgt_addr, op->len, h->cg_tasks, CRTS_SIDE_TGT,
                             why, sizeof why);
  }
  if (rc)
    return LAPI_FAIL_IN(api, rc, "%s", why);
  return LAPI_SUCCESS;
}

/*
 * Large contiguous puts and gets are moved by the origin CPE itself, with
 * the DMA or RMA command the MPE would have issued (on the chip too the
 * CPE drives its own transfers): handing them to the MPE would only make
 * the origin wait while another thread copies the same bytes, and would
 * serialise the copies of every task of the core group on one MPE.  Only
 * when nothing can run at the MPE: no LAPI_Xfer handler to call, and no
 * earlier transfer of the handle still on its way (so the transfers of a
 * handle still land in the order they were issued).
 * LAPI_CPE_DIRECT_MIN: the smallest such transfer in bytes (0: never).
 */
#define DIRECT_MIN_DEFAULT 16384

static long direct_min = -1; /* atomic; -1: not read yet */

static long direct_threshold(void)
{
  long v = __atomic_load_n(&direct_min, __ATOMIC_RELAXED);
  if (v >= 0)
    return v;
  v = DIRECT_MIN_DEFAULT;
  const char *e = getenv("LAPI_CPE_DIRECT_MIN");
  if (e && *e) {
    char *end;
    long n = strtol(e, &end, 10);
    if (*end == '\0' && n >= 0)
      v = n;
    else
      fprintf(stderr, "lapi: LAPI_CPE_DIRECT_MIN=%s is not a count of "
              "bytes; using %ld\n", e, v);
  }
  __atomic_store_n(&direct_min, v, __ATOMIC_RELAXED);
  return v;
}

void crts_tp_settings_read(void)
{
  (void)direct_threshold();
}

/* Moved and completed by the calling CPE: 1; else 0 (the MPE will). */
static int direct(struct lapi_hndl *h, struct lapi_hndl *t,
                  const struct lapi_tp_rma *op, enum crts_op_kind kind,
                  void *tgt_addr, lapi_cntr_t *tc,
                  struct lapi_am_notify *note, const char *api)
{
  long min = direct_threshold();
  if (op->org_vec || note->item || min == 0 || op->len < (size_t)min ||
      h->cpe < 0 || crts_engine_cpe_tid() != h->cpe ||
      __atomic_load_n(&h->outstanding, __ATOMIC_ACQUIRE) != 0)
    return 0;
  int put = kind == CRTS_OP_PUT;
  if (crts_engine_cpe_move(put ? tgt_addr : op->org_addr,
                           put ? op->org_addr : tgt_addr, op->len, api) != 0)
    return 0; /* unaligned: the MPE copies the odd bytes */
  /* As crts_tp_rma_run does once the bytes landed. */
  lapi_am_stat_recv(put ? t : h, LAPI_TP_CRTS, op->len);
  if (tc)
    lapi_cntr_bump(tc, (int)h->task_id);
  lapi_am_notify_fire(h, note);
  if (tc)
    lapi_cpe_served(t);
  return 1;
}

static int rma_submit(struct lapi_hndl *h, const struct lapi_tp_rma *op,
                      enum crts_op_kind kind)
{
  const char *api = kind == CRTS_OP_PUT ? (op->org_vec ? "PLAPI_Putv"
                                                       : "PLAPI_Put")
                                        : (op->org_vec ? "PLAPI_Getv"
                                                       : "PLAPI_Get");
  struct lapi_hndl *t = peer(h, op->tgt, api);
  if (t == NULL)
    return LAPI_ERR_TGT_CONTEXT;
  void *tgt_addr = crts_tp_target_addr(op->tgt_addr, h->cpe, t->cpe);
  void *tc = crts_tp_target_addr(op->tgt_cntr, h->cpe, t->cpe);
  int rc = check_sides(h, t, op, tgt_addr, api);
  if (rc == LAPI_SUCCESS)
    rc = crts_tp_check_cntr(tc, h->cg_tasks, api);
  if (rc)
    return rc;
  struct lapi_am_notify note = {
    .tgt = op->tgt, .org_cntr = op->org_cntr,
  };
  if (kind == CRTS_OP_PUT) {
    note.shdlr = op->shdlr;
    note.sinfo = op->sinfo;
    note.cmpl_cntr = op->cmpl_cntr;
  } else {
    note.chndlr = op->chndlr;
    note.cinfo = op->cinfo;
  }
  rc = lapi_am_notify_reserve(&note);
  if (rc)
    return rc;
  if (direct(h, t, op, kind, tgt_addr, tc, &note, api))
    return LAPI_SUCCESS;
  size_t extra = 0;
  if (op->org_vec)
    extra = crts_tp_vec_size(op->org_vec) + crts_tp_vec_size(op->tgt_vec);
  struct crts_op *c = crts_tp_op_new(extra);
  if (c == NULL) {
    free(note.item);
    return LAPI_ERR_MEMORY_EXHAUSTED;
  }
  c->kind = kind;
  c->org = h;
  c->tgt = t;
  c->tgt_task = op->tgt;
  c->org_cpe = h->cpe;
  c->tgt_cpe = t->cpe;
  c->tgt_cntr = tc;
  c->note = note;
  c->rma = *op;
  c->rma.tgt_addr = lapi_addr_u64(tgt_addr);
  if (op->org_vec) {
    c->rma.org_vec = crts_tp_vec_copy(op->org_vec, c->uhdr);
    c->rma.tgt_vec = crts_tp_vec_copy(op->tgt_vec,
                                      c->uhdr +
                                          crts_tp_vec_size(op->org_vec));
  }
  __atomic_add_fetch(&h->outstanding, 1, __ATOMIC_SEQ_CST);
  crts_tp_push(c);
  return LAPI_SUCCESS;
}

int crts_tp_put(struct lapi_hndl *h, const struct lapi_tp_rma *op)
{
  return rma_submit(h, op, CRTS_OP_PUT);
}

int crts_tp_get(struct lapi_hndl *h, const struct lapi_tp_rma *op)
{
  return rma_submit(h, op, CRTS_OP_GET);
}

int crts_tp_rmw(struct lapi_hndl *h, const struct lapi_tp_rmw *op)
{
  const char *api = "PLAPI_Rmw";
  struct lapi_hndl *t = peer(h, op->tgt, api);
  if (t == NULL)
    return LAPI_ERR_TGT_CONTEXT;
  char why[256];
  void *var = crts_tp_target_addr(op->tgt_var, h->cpe, t->cpe);
  int rc = crts_tp_check_buf(var, (size_t)op->size, h->cg_tasks,
                             CRTS_SIDE_TGT, why, sizeof why);
  if (rc == LAPI_SUCCESS && op->prev)
    rc = crts_tp_check_buf(op->prev, (size_t)op->size, h->cg_tasks,
                           CRTS_SIDE_ORG, why, sizeof why);
  if (rc == LAPI_SUCCESS && (uintptr_t)var % (uintptr_t)op->size != 0) {
    snprintf(why, sizeof why, "tgt_var %p is not aligned to its %d bytes: "
             "an atomic needs an aligned variable", var, op->size);
    rc = LAPI_ERR_TGT_VAR_NULL;
  }
  if (rc)
    return LAPI_FAIL_IN(api, rc, "%s", why);
  struct lapi_am_notify note = {
    .tgt = op->tgt, .shdlr = op->shdlr, .sinfo = op->sinfo,
    .org_cntr = op->org_cntr,
  };
  rc = lapi_am_notify_reserve(&note);
  if (rc)
    return rc;
  struct crts_op *c = crts_tp_op_new(0);
  if (c == NULL) {
    free(note.item);
    return LAPI_ERR_MEMORY_EXHAUSTED;
  }
  c->kind = CRTS_OP_RMW;
  c->org = h;
  c->tgt = t;
  c->tgt_task = op->tgt;
  c->note = note;
  c->rmw = *op;
  c->rmw.tgt_var = lapi_addr_u64(var);
  /* The operands are read later by the MPE: keep a copy (in_val is the
   * caller's and may be gone by then). */
  lapi_rmw_operands(op, c->in);
  c->rmw.in_val = NULL;
  __atomic_add_fetch(&h->outstanding, 1, __ATOMIC_SEQ_CST);
  crts_tp_push(c);
  return LAPI_SUCCESS;
}

/* ------------------------------------------------------- at the MPE */

static size_t run_rmw(struct crts_op *c)
{
  lapi_rmw_store_prev(c->rmw.prev, c->rmw.size,
                      lapi_rmw_apply(lapi_addr_ptr(c->rmw.tgt_var),
                                     c->rmw.size, c->rmw.op, c->in[0],
                                     c->in[1]));
  return (size_t)c->rmw.size;
}

/* Bytes of a put or get, moved by the engines. */
static size_t move_rma(struct crts_op *c)
{
  struct lapi_tp_rma *r = &c->rma;
  if (c->kind == CRTS_OP_PUT)
    return r->org_vec ? crts_tp_move(r->org_vec, r->tgt_vec, CRTS_XLATE_DST,
                                     c->org_cpe, c->tgt_cpe, "LAPI_Putv")
                      : crts_tp_move_buf(lapi_addr_ptr(r->tgt_addr),
                                         r->org_addr, r->len, "LAPI_Put");
  return r->org_vec ? crts_tp_move(r->tgt_vec, r->org_vec, CRTS_XLATE_SRC,
                                   c->org_cpe, c->tgt_cpe, "LAPI_Getv")
                    : crts_tp_move_buf(r->org_addr, lapi_addr_ptr(r->tgt_addr),
                                       r->len, "LAPI_Get");
}

/* A run's completions wait at most this many bytes of later moves. */
#define DONE_MAX_BYTES (512 * 1024)

/* May c complete together with the run of first (same origin, target,
 * kind, counters and cache; no handler to run)? */
static int same_run(const struct crts_op *first, const struct crts_op *c)
{
  return c->kind == first->kind && c->org == first->org &&
         c->tgt == first->tgt && c->tgt_cntr == first->tgt_cntr &&
         c->note.org_cntr == first->note.org_cntr &&
         c->note.cmpl_cntr == first->note.cmpl_cntr &&
         c->note.item == NULL && c->home == first->home;
}

/*
 * What every completion of a put, get or rmw does, for count of them:
 * statistics (the target handle counts a put or rmw as received, the
 * origin a get), tgt_cntr, the origin's counters, then `outstanding`.
 * Landed after its counters: a later direct move of the handle (which
 * waits for outstanding == 0) cannot complete before this one.
 */
static void complete(struct crts_op *c, int count, size_t bytes)
{
  lapi_am_stat_recv_n(c->kind == CRTS_OP_GET ? c->org : c->tgt, LAPI_TP_CRTS,
                      (unsigned long)count, bytes);
  if (c->tgt_cntr)
    lapi_cntr_add(c->tgt_cntr, (int)c->org->task_id, count);
  if (c->note.item) /* a handler: never part of a longer run */
    lapi_am_notify_fire(c->org, &c->note);
  else
    lapi_am_notify_fire_n(c->org, &c->note, count);
  lapi_am_origin_landed_n(c->org, count);
  if (c->tgt_cntr)
    lapi_cpe_served(c->tgt);
  if (c->note.org_cntr || c->note.cmpl_cntr || c->kind == CRTS_OP_GET)
    lapi_cpe_served(c->org); /* a get's data landed at the origin */
  else
    lapi_cpe_landed(c->org);
}

/* Ops completed in runs of two or more, since the start (for tests). */
static unsigned long joined;

unsigned long crts_tp_rma_joined(void)
{
  return __atomic_load_n(&joined, __ATOMIC_RELAXED);
}

void crts_tp_rma_flush(struct crts_done *d)
{
  if (d->first == NULL)
    return;
  if (d->count > 1)
    __atomic_add_fetch(&joined, (unsigned long)d->count, __ATOMIC_RELAXED);
  complete(d->first, d->count, d->bytes);
  crts_tp_op_free_run(d->first, d->last);
  d->first = d->last = NULL;
  d->count = 0;
  d->bytes = 0;
}

void crts_tp_rma_run(struct crts_op *c, struct crts_done *d)
{
  if (c->kind == CRTS_OP_RMW || c->note.item) {
    crts_tp_rma_flush(d); /* handlers and atomics see earlier completions */
    size_t moved = c->kind == CRTS_OP_RMW ? run_rmw(c) : move_rma(c);
    complete(c, 1, moved);
    crts_tp_op_free(c);
    return;
  }
  if (d->first && !same_run(d->first, c))
    crts_tp_rma_flush(d);
  size_t moved = move_rma(c);
  if (d->first == NULL)
    d->first = c;
  else
    d->last->qnext = c;
  d->last = c;
  d->count++;
  d->bytes += moved;
  if (d->bytes >= DONE_MAX_BYTES)
    crts_tp_rma_flush(d);
}
