/*
 * crts.c - the CRTS transport: LAPI between the tasks of one core group.
 *
 * The tasks of a core group are the spawned CPEs of one process (CPE-task
 * mode, see am/lapi_cpe.c).  An origin task hands each request to the
 * core group's dispatcher, the emulated MPE, through one lock-free queue:
 * a stack pushed with compare-and-swap that the dispatcher takes whole
 * with one exchange and reverses into arrival order.  No lock is taken
 * between the origin's call and the dispatcher's pop, and 64 origins
 * contend on one cache line only for the push itself.
 *
 * The dispatcher drains the queue in lapi_progress (its own loop polls
 * every transport, see lapi_dispatch.c): puts, gets and read-modify-writes
 * run at once, active messages go to their target handle's queue so that
 * the handlers run under that handle's lock (crts_tp.h); the completions
 * of a run of puts or gets of one origin move together (struct
 * crts_done).  A pusher rings the process doorbell, which costs nothing
 * unless the dispatcher sleeps; the dispatcher polls for a spin window
 * before it does.
 */
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "am/lapi_cpe.h"
#include "transport/crts_tp.h"

#define CRTS_MAX_PKT 65536

static struct {
  _Atomic(struct crts_op *) head __attribute__((aligned(64)));
} queue;

/*
 * Ops of up to CACHED_EXTRA bytes of header and vectors are recycled per
 * thread: the thread that allocates takes them from its private list;
 * whoever frees one (the dispatcher) pushes it on the owner's `returned`
 * stack, which the owner takes whole when its list is empty.  One thread
 * pops, so the stack needs no ABA care.  Caches are never freed (the CPE
 * threads and the dispatcher live as long as the process, and an op may
 * come back after its thread ended).
 */
#define CACHED_EXTRA 256

struct crts_op_cache {
  struct crts_op *mine;                /* the owner's free ops */
  _Atomic(struct crts_op *) returned;  /* freed by other threads */
};

static __thread struct crts_op_cache *my_cache;

/* The dispatcher read the op last: ask for its lines back now, so that a
 * stream of requests does not wait for them at each memset. */
static void prefetch_for_write(const struct crts_op *op)
{
  const char *p = (const char *)op;
  for (size_t off = 0; off < sizeof *op; off += 64)
    __builtin_prefetch(p + off, 1);
}

struct crts_op *crts_tp_op_new(size_t extra)
{
  if (extra > CACHED_EXTRA) {
    struct crts_op *op = malloc(sizeof *op + extra);
    if (op) {
      memset(op, 0, sizeof *op);
      op->home = NULL;
    }
    return op;
  }
  struct crts_op_cache *c = my_cache;
  if (c == NULL) {
    c = calloc(1, sizeof *c);
    if (c == NULL)
      return NULL;
    my_cache = c;
  }
  if (c->mine == NULL)
    c->mine = atomic_exchange_explicit(&c->returned, NULL,
                                       memory_order_acquire);
  struct crts_op *op = c->mine;
  if (op) {
    c->mine = op->qnext;
    if (c->mine)
      prefetch_for_write(c->mine);
  } else {
    op = malloc(sizeof *op + CACHED_EXTRA);
    if (op == NULL)
      return NULL;
  }
  memset(op, 0, sizeof *op);
  op->home = c;
  return op;
}

void crts_tp_op_free(struct crts_op *op)
{
  crts_tp_op_free_run(op, op);
}

void crts_tp_op_free_run(struct crts_op *first, struct crts_op *last)
{
  struct crts_op_cache *c = first->home;
  if (c == NULL) {
    for (struct crts_op *op = first, *next; op; op = next) {
      next = op == last ? NULL : op->qnext;
      free(op);
    }
    return;
  }
  struct crts_op *old = atomic_load_explicit(&c->returned,
                                             memory_order_relaxed);
  do
    last->qnext = old;
  while (!atomic_compare_exchange_weak_explicit(&c->returned, &old, first,
                                                memory_order_release,
                                                memory_order_relaxed));
}

void crts_tp_push(struct crts_op *op)
{
  struct crts_op *old = atomic_load_explicit(&queue.head,
                                             memory_order_relaxed);
  do
    op->qnext = old;
  while (!atomic_compare_exchange_weak_explicit(&queue.head, &old, op,
                                                memory_order_seq_cst,
                                                memory_order_relaxed));
  /* Seq_cst push, then the doorbell's sleeper count: a dispatcher that
   * armed the bell before polls again and finds the op (lapi_wait.h). */
  lapi_bell_ring();
  lapi_cpe_running(); /* where the sender runs (keep_core), after the op */
}

int crts_tp_queued(void)
{
  return atomic_load_explicit(&queue.head, memory_order_relaxed) != NULL;
}

static void run(struct crts_op *op, struct crts_done *done)
{
  if (op->kind == CRTS_OP_AM) {
    crts_tp_rma_flush(done); /* counters move in the order of the requests */
    crts_tp_am_arrive(op);
  } else {
    crts_tp_rma_run(op, done);
  }
}

/* The origin wrote the op on its core: ask for the lines the dispatcher
 * reads now, so that their transfers overlap the walk of the batch and
 * the moves of the ops before it (one miss after another otherwise). */
static void prefetch_op(const struct crts_op *op)
{
  const char *p = (const char *)op;
  for (size_t off = 64; off < offsetof(struct crts_op, rma) + sizeof op->rma;
       off += 64)
    __builtin_prefetch(p + off);
}

/* Only the dispatcher pops (the queue has one consumer): CPE tasks never
 * run handlers or move bytes themselves. */
static int crts_progress(struct lapi_hndl *h)
{
  if (!lapi_dispatch_on_thread()) {
    if (h && h->cpe >= 0)
      lapi_cpe_polls_any(); /* a waiting task: see keep_core */
    return 0;
  }
  if (atomic_load_explicit(&queue.head, memory_order_relaxed) == NULL)
    return 0;
  struct crts_op *lifo = atomic_exchange_explicit(&queue.head, NULL,
                                                  memory_order_acquire);
  struct crts_op *fifo = NULL;
  while (lifo) {
    struct crts_op *next = lifo->qnext;
    prefetch_op(lifo);
    lifo->qnext = fifo;
    fifo = lifo;
    lifo = next;
  }
  int n = 0;
  struct crts_done done = {0};
  while (fifo) {
    struct crts_op *next = fifo->qnext;
    run(fifo, &done);
    fifo = next;
    n++;
  }
  crts_tp_rma_flush(&done);
  return n;
}

static void crts_caps(struct lapi_tp_caps *caps)
{
  caps->max_eager = SIZE_MAX; /* the MPE reads the data where it lies */
  caps->max_pkt = CRTS_MAX_PKT;
  caps->max_iov = UINT32_MAX;
  caps->strided = 1;
  caps->atomics = 1;
}

const struct lapi_tp_ops lapi_tp_crts = {
  .name = "crts",
  .id = LAPI_TP_CRTS,
  .init = lapi_tp_no_init,
  .fini = lapi_tp_no_fini,
  .caps = crts_caps,
  .am_send = crts_tp_am_send,
  .put = crts_tp_put,
  .get = crts_tp_get,
  .rmw = crts_tp_rmw,
  .progress = crts_progress,
  .tight = lapi_tp_no_tight, /* no network to poll */
  .flush = lapi_tp_no_flush, /* completions are always reported */
  .sync = lapi_tp_no_sync,   /* every transfer ends with a counter */
};
