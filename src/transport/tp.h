/*
 * tp.h - the interface every LAPI transport fills.
 *
 * A transport moves bytes between tasks; everything LAPI means (header
 * and completion handlers, vector checks, counters, the error handler)
 * stays in src/am, which transports reach through am/lapi_recv.h.  Each
 * transport is one `const struct lapi_tp_ops`; an operation it cannot do
 * is a named lapi_tp_no_* stub that returns a LAPI code, never NULL, so
 * callers never test pointers.  lapi_tp_select() is the one place that
 * decides which transport serves a (handle, target) pair:
 *   self  target == the calling task           (src/transport/self.c)
 *   crts  target in the caller's core group    (src/transport/crts.c)
 *   ofi   any other task, over libfabric       (later issue)
 *
 * Requests arrive validated: src/am checked every argument and resolved
 * nothing remote.  Remote addresses (target buffers, target counters,
 * header handlers) travel as uint64_t, so a transport never dereferences
 * a pointer of another task.  A transport returns LAPI_SUCCESS once the
 * request is accepted (its completion is reported through the counters)
 * or a LAPI code with nothing started.
 */
#ifndef LAPI_TP_H
#define LAPI_TP_H

#include <stddef.h>
#include <stdint.h>

#include <lapi.h>

struct lapi_hndl;

/* Transports by index (statistics are kept per transport). */
enum lapi_tp_id {
  LAPI_TP_SELF = 0,
  LAPI_TP_CRTS,
  LAPI_TP_OFI,
  LAPI_TP_COUNT
};

/* What a transport does natively; src/am builds the rest from AMs. */
struct lapi_tp_caps {
  size_t max_eager;  /* data bytes that travel with the header */
  size_t max_pkt;    /* MAX_PKT_SZ reported by LAPI_Qenv */
  uint max_iov;      /* segments of one vector moved natively */
  int strided;       /* strided vectors natively */
  int atomics;       /* Rmw natively */
};

/* An active message (LAPI_Amsend, LAPI_Amsendv, LAPI_Xfer AM/AMV). */
struct lapi_tp_am {
  uint tgt;
  uint64_t hdr_hdl;          /* handler address or LAPI_Addr_set index */
  const void *uhdr;
  uint uhdr_len;
  const void *udata;         /* Amsend data (org_vec == NULL) */
  size_t udata_len;
  const lapi_vec_t *org_vec; /* Amsendv origin vector, checked */
  uint64_t tgt_cntr;         /* counter in the target task, or 0 */
  lapi_cntr_t *org_cntr;
  lapi_cntr_t *cmpl_cntr;
  scompl_hndlr_t *shdlr;     /* LAPI_Xfer send completion handler */
  void *sinfo;
};

/* A put or a get, contiguous (vectors NULL) or vector (Putv/Getv). */
struct lapi_tp_rma {
  uint tgt;
  size_t len;                /* contiguous form */
  uint64_t tgt_addr;
  void *org_addr;
  const lapi_vec_t *tgt_vec; /* vector form: addresses in the target */
  const lapi_vec_t *org_vec;
  uint64_t tgt_cntr;
  lapi_cntr_t *org_cntr;
  lapi_cntr_t *cmpl_cntr;    /* put only */
  scompl_hndlr_t *shdlr;     /* put: LAPI_Xfer send completion handler */
  void *sinfo;
  compl_hndlr_t *chndlr;     /* get: LAPI_Xfer origin completion handler */
  void *cinfo;
};

/* An atomic read-modify-write of 4 or 8 bytes at the target. */
struct lapi_tp_rmw {
  uint tgt;
  RMW_ops_t op;
  int size;                  /* 4 or 8 */
  uint64_t tgt_var;
  const void *in_val;        /* one operand, two for COMPARE_AND_SWAP */
  void *prev;                /* or NULL */
  lapi_cntr_t *org_cntr;
  scompl_hndlr_t *shdlr;
  void *sinfo;
};

struct lapi_tp_ops {
  const char *name;
  enum lapi_tp_id id;
  /* Per handle set-up and tear-down (LAPI_Init / LAPI_Term). */
  int (*init)(struct lapi_hndl *h);
  void (*fini)(struct lapi_hndl *h);
  void (*caps)(struct lapi_tp_caps *caps);
  int (*am_send)(struct lapi_hndl *h, const struct lapi_tp_am *am);
  /* 1: am_send counts a message it accepts in h->outstanding itself,
   * before anything can land it (ofi: under ofi.lock, which every landing
   * takes, and after the packet left, off the path of an answer), and
   * counts nothing when it refuses one; 0: lapi_am_submit counts it
   * before the call. */
  int am_counts_outstanding;
  int (*put)(struct lapi_hndl *h, const struct lapi_tp_rma *op);
  int (*get)(struct lapi_hndl *h, const struct lapi_tp_rma *op);
  int (*rmw)(struct lapi_hndl *h, const struct lapi_tp_rmw *op);
  /* Poll the wire once; returns the events handled (0: nothing).  h is
   * the handle a thread waits on, or NULL when the dispatcher polls for
   * the whole process. */
  int (*progress)(struct lapi_hndl *h);
  /* A thread that waits on h and runs h's work itself is about to poll
   * in a tight loop (on = LAPI_TIGHT_START) or has stopped
   * (LAPI_TIGHT_STOP, or LAPI_TIGHT_PAUSE: its wait ended in polling
   * mode and it is likely back soon, or LAPI_TIGHT_SLEEP: its wait gave
   * up and it goes to sleep, so whatever comes is the transport's own
   * progress's to find, at once).  Returns 1 if the transport has a
   * network worth polling that way (then the thread's progress calls
   * read it every time, and peers need not wake a sleeping progress
   * thread meanwhile), 0 if not (lapi_tp_no_tight). */
  int (*tight)(struct lapi_hndl *h, int on);
  /* h waits until its messages landed (LAPI_Fence, LAPI_Gfence,
   * LAPI_Term): ask the targets for what would tell (a transport whose
   * messages can land without a word to the origin: ofi's no-FIN
   * messages).  Cheap when there is nothing to ask (lapi_tp_no_flush:
   * never anything). */
  void (*flush)(struct lapi_hndl *h);
  /* The caller learnt by another way (the bootstrap's barrier of
   * LAPI_Gfence) that messages to it have landed: order the transport's
   * writes of their data before what the caller reads next (their
   * threads wrote it; lapi_tp_no_sync where counters already do), and
   * settle any count it keeps owed (the statistics read it next). */
  void (*sync)(void);
  /* Items of h ran back to back (a drain, a run, a purge's cancels):
   * send what the transport held for the end of such a run (ofi: FIN
   * lists, ofi_fin.c).  NULL: it holds nothing. */
  void (*drained)(struct lapi_hndl *h);
  /* LAPI_Gfence's barrier of the job's core groups, over the transport's
   * own messages (one calling task per CG and handle value, every CG in
   * the same order): LAPI_SUCCESS, LAPI_ERR_TIMEOUT when it failed (a
   * core group is gone: later ones fail too, unless every packet they
   * wait for came before), or LAPI_TP_NO_BARRIER
   * when the transport does not connect this job's CGs (the bootstrap's
   * barrier serves).  NULL: the transport has none. */
  int (*barrier)(struct lapi_hndl *h);
};

#define LAPI_TP_NO_BARRIER (-1)

/* The tight op's on argument. */
#define LAPI_TIGHT_STOP 0
#define LAPI_TIGHT_START 1
#define LAPI_TIGHT_PAUSE 2
#define LAPI_TIGHT_SLEEP 3

/* The tight op of the transports with a network (lapi_tp_net; the others'
 * would return 0); returns how many have a network to poll. */
int lapi_tp_tight(struct lapi_hndl *h, int on);

/* One poll of a tight wait (lapi_wait_tight, never on the dispatcher):
 * the progress op of the transports with a network to poll (a tight op
 * other than lapi_tp_no_tight) only; off the dispatcher the others'
 * progress has nothing for a process task's waiter (crts runs its queue
 * on the dispatcher, self polls nothing).  Returns the events handled. */
int lapi_tp_tight_progress(struct lapi_hndl *h);

/* Every transport's flush op. */
void lapi_tp_flush(struct lapi_hndl *h);

/* Every transport's sync op. */
void lapi_tp_sync(void);

/* The transport that serves tgt for h (tgt already checked < NUM_TASKS). */
const struct lapi_tp_ops *lapi_tp_select(const struct lapi_hndl *h,
                                         uint tgt);

/* Every transport this build has, for init/fini/progress of a handle. */
extern const struct lapi_tp_ops *const lapi_tp_all[];
extern const unsigned lapi_tp_count;
/* The transports' settings read on first use, read now (see
 * lapi_settings_read_all). */
void lapi_tp_settings_read(void);
/* Of them, those with a network to poll (tight op not lapi_tp_no_tight)
 * and those with a drained op (tp_select.c). */
extern const struct lapi_tp_ops *const lapi_tp_net[];
extern const unsigned lapi_tp_net_count;
extern const struct lapi_tp_ops *const lapi_tp_draining[];
extern const unsigned lapi_tp_draining_count;
/* Every transport's drained op for h (lapi_dispatch.c). */
void lapi_tp_drained(struct lapi_hndl *h);

extern const struct lapi_tp_ops lapi_tp_self;
extern const struct lapi_tp_ops lapi_tp_crts;

/* Named stubs for what a transport does not do. */
int lapi_tp_no_init(struct lapi_hndl *h);
void lapi_tp_no_fini(struct lapi_hndl *h);
void lapi_tp_no_caps(struct lapi_tp_caps *caps);
int lapi_tp_no_am_send(struct lapi_hndl *h, const struct lapi_tp_am *am);
int lapi_tp_no_put(struct lapi_hndl *h, const struct lapi_tp_rma *op);
int lapi_tp_no_get(struct lapi_hndl *h, const struct lapi_tp_rma *op);
int lapi_tp_no_rmw(struct lapi_hndl *h, const struct lapi_tp_rmw *op);
int lapi_tp_no_progress(struct lapi_hndl *h);
int lapi_tp_no_tight(struct lapi_hndl *h, int on);
void lapi_tp_no_flush(struct lapi_hndl *h);
void lapi_tp_no_sync(void);

#endif /* LAPI_TP_H */
