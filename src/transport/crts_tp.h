/*
 * crts_tp.h - internals of the CRTS transport (tasks of one core group).
 *
 * Every operation between two CPE tasks of this process is one `crts_op`:
 *   origin   checks the request (LDM rules below), builds the op and pushes
 *            it on the core group's queue (crts.c), a lock-free stack the
 *            dispatcher empties; no lock is taken on the way;
 *   MPE      the dispatcher pops the ops in the order they were pushed.
 *            A put, get or rmw runs at once (crts_rma.c): the engines move
 *            the bytes, then the counters move.  An active message is queued
 *            on the target handle (crts_am.c), so that its header and
 *            completion handlers run under that handle's lock, as every
 *            handler does; the engines move its bytes in between.
 *
 * The bytes move with the libcrts engines driven by the MPE (crts_move.c,
 * crts/crts_engine.h): LDM to LDM by RMA, main memory to or from LDM by DMA
 * (one strided DMA for a strided LAPI block list whose other side is
 * contiguous), main memory to main memory by DMA, and what the 4-byte rule
 * keeps off the engines by the MPE itself.
 *
 * Addresses: main memory is shared by all tasks of the CG.  An LDM address
 * must lie in the usable LDM (heap or stack area) of a CPE that is a task
 * of the job, and a transfer must fit in it.  An LDM address of the
 * origin's own slice given as a *target* address (target buffer, target
 * vector, tgt_cntr, Rmw variable) names the same LDM location on the
 * target, as an RMA address does on the chip (the same __thread_local
 * variable, the same heap offset); an address of the target's own slice
 * (from LAPI_Address_init) is used as it is.
 */
#ifndef LAPI_CRTS_TP_H
#define LAPI_CRTS_TP_H

#include <stddef.h>
#include <stdint.h>

#include "am/lapi_am.h"

enum crts_op_kind { CRTS_OP_AM, CRTS_OP_PUT, CRTS_OP_GET, CRTS_OP_RMW };

struct crts_op_cache;

struct crts_op {
  struct lapi_item it;        /* first: an item of the target's queue */
  struct crts_op *qnext;      /* link on the core group's queue */
  struct crts_op_cache *home; /* where it goes back when freed, or NULL */
  enum crts_op_kind kind;
  struct lapi_hndl *org;      /* origin handle */
  struct lapi_hndl *tgt;      /* target handle (same value, target task) */
  uint tgt_task;
  int org_cpe, tgt_cpe;       /* CPE numbers, for LDM translation */
  lapi_cntr_t *tgt_cntr;      /* translated; NULL: none */
  lapi_cntr_t *org_cntr;
  lapi_cntr_t *cmpl_cntr;
  struct lapi_am_notify note; /* put/get/rmw origin completion */

  /* What one kind needs (an op is of one kind): fewer cache lines for
   * the origin to clear and the MPE to read. */
  union {
    struct { /* Active message. */
      struct lapi_am_msg msg;
      const void *udata;
      const lapi_vec_t *org_vec;
      scompl_hndlr_t *shdlr;
      void *sinfo;
      struct lapi_item *sent_item; /* shdlr + org_cntr at the origin */
      struct lapi_item cmpl_item;  /* cmpl_cntr after it (shdlr case) */
      ulong strided_len[3];
    };
    /* Put / get: contiguous (vectors NULL) or vectors; tgt_addr already
     * translated. */
    struct lapi_tp_rma rma;
    struct { /* Rmw. */
      struct lapi_tp_rmw rmw;     /* tgt_var already translated */
      long long in[2];            /* operands, copied */
    };
  };

  unsigned char uhdr[] __attribute__((aligned(16)));
};

/* ---- the core group's queue (crts.c) */

/* Hand op to the dispatcher (any thread). */
void crts_tp_push(struct crts_op *op);
/* A new zeroed op with `extra` bytes behind it (op->uhdr), or NULL.  Small ops
 * come from a cache of the calling thread and go back to it when freed
 * (by the dispatcher, usually), so the data path does not malloc. */
struct crts_op *crts_tp_op_new(size_t extra);
void crts_tp_op_free(struct crts_op *op);
/* Free the ops first..last (linked by qnext), all of one home. */
void crts_tp_op_free_run(struct crts_op *first, struct crts_op *last);

/* ---- active messages (crts_am.c) */

int crts_tp_am_send(struct lapi_hndl *h, const struct lapi_tp_am *am);
/* Reads LAPI_CPE_DIRECT_MIN now (lapi_tp_settings_read). */
void crts_tp_settings_read(void);
/* The dispatcher popped an active message: queue it on its target. */
void crts_tp_am_arrive(struct crts_op *op);

/* ---- one-sided (crts_rma.c) */

int crts_tp_put(struct lapi_hndl *h, const struct lapi_tp_rma *op);
int crts_tp_get(struct lapi_hndl *h, const struct lapi_tp_rma *op);
int crts_tp_rmw(struct lapi_hndl *h, const struct lapi_tp_rmw *op);

/*
 * Completions the dispatcher still owes: a run of puts (or gets) of one
 * origin with the same counters and no handler, moved one after the other
 * and completed together -- each counter, `outstanding` and the statistics
 * move once by the run's count, and its ops go back in one push -- instead
 * of trading those cache lines with the waiting origin once per transfer.
 * Every op of the run is an op the dispatcher popped in the same batch.
 */
struct crts_done {
  struct crts_op *first, *last; /* the run, linked by qnext; first: NULL */
  int count;
  size_t bytes;
};

/* The dispatcher popped a put, get or rmw: do it; its completion may join
 * the run of done (then it waits for crts_tp_rma_flush). */
void crts_tp_rma_run(struct crts_op *op, struct crts_done *done);
/* Complete the run of done, if any (before anything else may run). */
void crts_tp_rma_flush(struct crts_done *done);
/* How many ops were completed as part of a run of two or more so far
 * (white-box tests check that runs form at all). */
unsigned long crts_tp_rma_joined(void);

/* ---- addresses and moves (crts_move.c) */

/* Which side of a transfer an address belongs to, for messages/codes. */
enum crts_side { CRTS_SIDE_ORG, CRTS_SIDE_TGT };

/*
 * A target address as given by the origin (CPE org_cpe) for a task whose
 * CPE is tgt_cpe: an address of the origin's own LDM slice becomes the same
 * location in the target's slice; anything else is kept.
 */
void *crts_tp_target_addr(uint64_t addr, int org_cpe, int tgt_cpe);

/*
 * Check that [p, p + len) may be read or written by the MPE for a job whose
 * core groups hold cg_tasks tasks: main memory, or inside the usable LDM of
 * a CPE that is a task.  LAPI_SUCCESS, or the code for that side (contiguous
 * transfer: ORG/TGT_ADDR_NULL for an unusable address, DATA_LEN for a
 * transfer that does not fit in the LDM) with a sentence in why.
 */
int crts_tp_check_buf(const void *p, size_t len, uint cg_tasks,
                      enum crts_side side, char *why, size_t whylen);

/* A target counter (translated; NULL: none) must be usable memory:
 * LAPI_SUCCESS or LAPI_ERR_TGT_ADDR_NULL, logged under api. */
int crts_tp_check_cntr(const void *cntr, uint cg_tasks, const char *api);

/*
 * The same for every segment of a checked vector (the ORG/TGT_VEC_ADDR,
 * _VEC_LEN or _EXTENT codes).  With translate (a target vector given by the
 * origin), each segment is first translated from org_cpe to tgt_cpe.
 */
int crts_tp_check_vec(const lapi_vec_t *v, uint cg_tasks, enum crts_side side,
                      int translate, int org_cpe, int tgt_cpe, char *why,
                      size_t whylen);

/*
 * Move the bytes of a checked pair with the engines: the stream of vector
 * src flows into vector dst.  The addresses of one side may be target
 * addresses given by the origin (put: dst, get: src), translated run by run
 * from org_cpe to tgt_cpe.  Returns the bytes moved.
 */
enum crts_xlate { CRTS_XLATE_NONE, CRTS_XLATE_SRC, CRTS_XLATE_DST };
size_t crts_tp_move(const lapi_vec_t *src, const lapi_vec_t *dst,
                    enum crts_xlate xlate, int org_cpe, int tgt_cpe,
                    const char *call);
/*
 * Vectors are read by the MPE after the call returned: the op keeps its
 * own copy of their descriptions (the data itself stays where it is).
 * crts_tp_vec_size is the room a copy needs (a multiple of 16);
 * crts_tp_vec_copy builds it in mem and returns it.
 */
size_t crts_tp_vec_size(const lapi_vec_t *v);
lapi_vec_t *crts_tp_vec_copy(const lapi_vec_t *v, void *mem);

/* A contiguous move (both sides already final). */
size_t crts_tp_move_buf(void *dst, const void *src, size_t len,
                        const char *call);

#endif /* LAPI_CRTS_TP_H */
