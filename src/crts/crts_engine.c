/*
 * crts_engine.c - MPE-side engine commands (DMA, RMA, MPE copy), the 2-D
 * mover that splits any copy into commands the 4-byte rule allows, their
 * statistics, and read-only facts about the core group for the layers
 * built on libcrts.  See crts_engine.h.
 *
 * Like the CPE calls, a command completes while it is issued: the bytes
 * are copied synchronously by the issuing (MPE) thread.  What the engines
 * model exactly is which commands a transfer needs and what each moves.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "bulk_copy.h"
#include "crts_engine.h"

/*
 * Commands issued by the MPE.  Any thread may issue, so each issuing
 * thread counts in a block of its own (one writer: a plain load and
 * store, as crts_stat_add does for a CPE) and a snapshot sums the blocks.
 * A locked add would be worse than contended: issued right after a copy,
 * it waits until every store of the copy has drained.  When a thread ends
 * (a pthread key destructor) its counts move to mpe_shared and its block
 * is freed, so a process that starts and ends dispatchers (LAPI_Init /
 * LAPI_Term cycles) or helper threads keeps no block per thread it ever
 * had.  The list is under blocks_lock: a thread joins and leaves it once,
 * snapshots are rare, and the counting itself never takes the lock.
 */
/* A line of its own: blocks of two threads never share one. */
struct mpe_counts {
  _Alignas(64) _Atomic uint64_t ops[CRTS_STAT_KINDS];
  _Atomic uint64_t bytes[CRTS_STAT_KINDS];
  struct mpe_counts *next;
};

static pthread_mutex_t blocks_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mpe_counts *mpe_blocks; /* under blocks_lock */
/* Counts of ended threads and of a thread without a block: atomic. */
static struct mpe_counts mpe_shared;
/* Read by every command: initial-exec spares the shared library's
 * __tls_get_addr call (as lapi_cpe.c's ctx_local). */
static __thread struct mpe_counts *mpe_mine
    __attribute__((tls_model("initial-exec")));
static pthread_once_t blocks_once = PTHREAD_ONCE_INIT;
static pthread_key_t blocks_key;
static int blocks_key_ok;

static const char *const kind_names[CRTS_STAT_KINDS] = {
  [CRTS_STAT_DMA_GET] = "dma_get",
  [CRTS_STAT_DMA_PUT] = "dma_put",
  [CRTS_STAT_RMA] = "rma",
  [CRTS_STAT_MPE_COPY] = "mpe_copy",
};

/* ---------------------------------------------------------- core group */

int crts_engine_cpe_tid(void)
{
  return crts_self ? crts_self->tid : -1;
}

int crts_engine_initialized(void)
{
  return atomic_load_explicit(&crts_cg.initialized, memory_order_acquire);
}

int crts_engine_cpe_spawned(void)
{
  return crts_self ? crts_self->in_group : 0;
}

int crts_engine_group_size(void)
{
  return crts_cg.group_size;
}

uint64_t crts_engine_group_mask(void)
{
  return crts_cg.group_mask;
}

int crts_engine_spin_limit(void)
{
  return crts_spin_limit();
}

void crts_engine_relax(void)
{
  crts_cpu_relax();
}

void crts_engine_barrier(struct crts_barrier *b, uint32_t count)
{
  crts_barrier_wait(b, count, 0);
}

/* ------------------------------------------------------------ memory */

int crts_engine_where(const void *p, size_t len)
{
  if (!crts_cg.arena)
    return CRTS_ENGINE_MEM;
  uintptr_t lo = (uintptr_t)p, hi;
  if (__builtin_add_overflow(lo, len ? len : 1, &hi))
    return CRTS_ENGINE_BAD;
  /* The mapping starts one (inaccessible) stride before slice 0. */
  uintptr_t a = (uintptr_t)crts_cg.arena - crts_cg.slice_stride;
  uintptr_t b = (uintptr_t)crts_cg.arena + crts_cg.arena_len;
  if (hi <= a || lo >= b)
    return CRTS_ENGINE_MEM;
  int owner = -1;
  if (crts_ldm_range(p, len ? len : 1, &owner))
    return owner;
  return CRTS_ENGINE_BAD;
}

int crts_engine_ldm_owner(const void *p)
{
  return crts_ldm_owner(p);
}

void *crts_engine_ldm_translate(const void *p, int tid)
{
  return crts_ldm_translate(p, tid);
}

/* ------------------------------------------------------------ commands */

/* Bytes from the first byte of block 0 to the end of the last block. */
static size_t extent(size_t block, size_t nblocks, size_t pitch)
{
  if (nblocks == 0 || block == 0)
    return 0;
  return (nblocks - 1) * pitch + block;
}

static int contiguous(size_t block, size_t nblocks, size_t pitch)
{
  return nblocks <= 1 || pitch == block;
}

/* The thread that owned block p ended: its counts stay, the block goes. */
static void block_retire(void *p)
{
  struct mpe_counts *c = p;
  pthread_mutex_lock(&blocks_lock);
  for (int k = 0; k < CRTS_STAT_KINDS; k++) {
    atomic_fetch_add_explicit(&mpe_shared.ops[k],
                              atomic_load_explicit(&c->ops[k],
                                                   memory_order_relaxed),
                              memory_order_relaxed);
    atomic_fetch_add_explicit(&mpe_shared.bytes[k],
                              atomic_load_explicit(&c->bytes[k],
                                                   memory_order_relaxed),
                              memory_order_relaxed);
  }
  struct mpe_counts **at = &mpe_blocks;
  while (*at && *at != c)
    at = &(*at)->next;
  if (*at)
    *at = c->next;
  pthread_mutex_unlock(&blocks_lock);
  mpe_mine = NULL; /* a later command of this thread makes a new block */
  free(c);
}

/* A fork while another thread holds blocks_lock (a snapshot, a thread
 * ending) would leave the child's copy locked for good, and its first
 * snapshot or command of a new thread would hang: the forking thread
 * holds the lock across the fork instead.  Registered before the lock is
 * first taken (a block made, a snapshot). */
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static void blocks_fork_prepare(void)
{
  pthread_mutex_lock(&blocks_lock);
}

static void blocks_fork_done(void)
{
  pthread_mutex_unlock(&blocks_lock);
}

static void blocks_fork_register(void)
{
  pthread_atfork(blocks_fork_prepare, blocks_fork_done, blocks_fork_done);
}

static void blocks_key_create(void)
{
  blocks_key_ok = pthread_key_create(&blocks_key, block_retire) == 0;
}

static struct mpe_counts *my_counts(void)
{
  struct mpe_counts *c = mpe_mine;
  if (c)
    return c;
  c = aligned_alloc(_Alignof(struct mpe_counts), sizeof *c);
  if (c == NULL)
    return NULL;
  memset(c, 0, sizeof *c);
  /* Without the key the block is never freed: it still counts. */
  pthread_once(&blocks_once, blocks_key_create);
  pthread_once(&fork_once, blocks_fork_register);
  if (blocks_key_ok)
    pthread_setspecific(blocks_key, c);
  pthread_mutex_lock(&blocks_lock);
  c->next = mpe_blocks;
  mpe_blocks = c;
  pthread_mutex_unlock(&blocks_lock);
  mpe_mine = c;
  return c;
}

static void add1(_Atomic uint64_t *v, uint64_t n)
{
  atomic_store_explicit(v, atomic_load_explicit(v, memory_order_relaxed) + n,
                        memory_order_relaxed);
}

static void count(enum crts_stat_kind k, uint64_t bytes)
{
  struct mpe_counts *c = my_counts();
  if (c == NULL) {
    atomic_fetch_add_explicit(&mpe_shared.ops[k], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&mpe_shared.bytes[k], bytes,
                              memory_order_relaxed);
    return;
  }
  add1(&c->ops[k], 1);
  add1(&c->bytes[k], bytes);
}

/* The side `name` of command c lies where its kind needs it: ldm 1 in one
 * CPE's usable LDM, ldm 0 in main memory; -1 after a report. */
static int check_side(const char *call, const struct crts_engine_cmd *c,
                      const char *name, const void *p, size_t pitch, int ldm)
{
  size_t span = extent(c->block, c->nblocks, pitch);
  int w = crts_engine_where(p, span);
  if (w == CRTS_ENGINE_BAD) {
    crts_report(call, "%s %s [%p, +%zu bytes) is not inside the usable LDM "
                "of one CPE (guard page, slice end or two slices)",
                kind_names[c->kind], name, p, span);
    return -1;
  }
  if (ldm && w < 0) {
    crts_report(call, "%s %s %p is main memory: this side must be LDM",
                kind_names[c->kind], name, p);
    return -1;
  }
  if (!ldm && w >= 0) {
    crts_report(call, "%s %s %p is in CPE %d's LDM: this side must be main "
                "memory", kind_names[c->kind], name, p, w);
    return -1;
  }
  if (ldm && !contiguous(c->block, c->nblocks, pitch)) {
    crts_report(call, "%s %s is strided in LDM: only the main-memory side "
                "of a DMA may be strided, and RMA is contiguous",
                kind_names[c->kind], name);
    return -1;
  }
  return 0;
}

/* The 4-byte rule of DMA and RMA: addresses, block and strides. */
static int check_words(const char *call, const struct crts_engine_cmd *c)
{
  uintptr_t bits = (uintptr_t)c->dst | (uintptr_t)c->src | c->block;
  if (c->nblocks > 1)
    bits |= c->dpitch | c->spitch;
  if (bits % 4 != 0) {
    crts_report(call, "%s of %zu x %zu bytes from %p to %p: addresses, block "
                "and strides must be multiples of 4 (copy the rest with the "
                "MPE)", kind_names[c->kind], c->nblocks, c->block, c->src,
                c->dst);
    return -1;
  }
  return 0;
}

static int check_cmd(const char *call, const struct crts_engine_cmd *c)
{
  if (c->kind >= CRTS_STAT_KINDS) {
    crts_report(call, "engine command kind %d does not exist", (int)c->kind);
    return -1;
  }
  if (c->nblocks > 1 && (c->dpitch < c->block || c->spitch < c->block)) {
    crts_report(call, "%s pitches %zu / %zu are smaller than the block %zu",
                kind_names[c->kind], c->dpitch, c->spitch, c->block);
    return -1;
  }
  if (c->block == 0 || c->nblocks == 0)
    return 0;
  if (!c->dst || !c->src) {
    crts_report(call, "%s with a NULL address", kind_names[c->kind]);
    return -1;
  }
  switch (c->kind) {
  case CRTS_STAT_DMA_GET:
    return check_words(call, c) ||
           check_side(call, c, "source", c->src, c->spitch, 0) ||
           check_side(call, c, "destination", c->dst, c->dpitch, 1) ? -1 : 0;
  case CRTS_STAT_DMA_PUT:
    /* LDM -> memory, or memory -> memory: the source may be either. */
    if (check_words(call, c) ||
        check_side(call, c, "destination", c->dst, c->dpitch, 0))
      return -1;
    if (crts_engine_where(c->src, extent(c->block, c->nblocks, c->spitch)) >=
        0)
      return check_side(call, c, "source", c->src, c->spitch, 1);
    return check_side(call, c, "source", c->src, c->spitch, 0);
  case CRTS_STAT_RMA:
    return check_words(call, c) ||
           check_side(call, c, "source", c->src, c->spitch, 1) ||
           check_side(call, c, "destination", c->dst, c->dpitch, 1) ? -1 : 0;
  default: /* MPE copy: any alignment, any side, but real memory */
    if (crts_engine_where(c->src, extent(c->block, c->nblocks, c->spitch)) ==
            CRTS_ENGINE_BAD ||
        crts_engine_where(c->dst, extent(c->block, c->nblocks, c->dpitch)) ==
            CRTS_ENGINE_BAD) {
      crts_report(call, "mpe_copy from %p to %p (%zu x %zu bytes) touches "
                  "LDM that no CPE may use", c->src, c->dst, c->nblocks,
                  c->block);
      return -1;
    }
    return 0;
  }
}

static void run_cmd(const struct crts_engine_cmd *c)
{
  char *d = c->dst;
  const char *s = c->src;
  size_t n = c->nblocks, b = c->block;
  if (contiguous(b, n, c->dpitch) && contiguous(b, n, c->spitch)) {
    b *= n; /* one piece */
    n = 1;
  }
  /* Only main memory can overlap (LDM slices of two CPEs never do). */
  int may_overlap = c->kind == CRTS_STAT_DMA_PUT ||
                    c->kind == CRTS_STAT_MPE_COPY;
  for (size_t i = 0; i < n; i++) {
    if (may_overlap)
      bulk_move(d, s, b);
    else
      bulk_copy(d, s, b);
    d += c->dpitch;
    s += c->spitch;
  }
}

int crts_engine_issue(const struct crts_engine_cmd *c, const char *call)
{
  if (check_cmd(call, c) != 0)
    return -1;
  if (c->block && c->nblocks)
    run_cmd(c);
  count(c->kind, (uint64_t)c->block * c->nblocks);
  return 0;
}

/* ---------------------------------------------------------------- mover */

/* Checked sides, no report on the fast path: issue without re-checking. */
static void issue_unchecked(enum crts_stat_kind kind, char *dst, size_t dpitch,
                            const char *src, size_t spitch, size_t block,
                            size_t nblocks)
{
  struct crts_engine_cmd c = {kind, dst, src, block, nblocks, dpitch, spitch};
  run_cmd(&c);
  count(kind, (uint64_t)block * nblocks);
}

/*
 * Aligned body of every block (addresses and sizes multiples of 4): as one
 * command where the LDM side is contiguous (or both are main memory), else
 * one command per block, as a CPE would have to issue them.
 */
static void move_words(enum crts_stat_kind kind, int src_ldm, int dst_ldm,
                       char *dst, size_t dpitch, const char *src,
                       size_t spitch, size_t block, size_t nblocks)
{
  int one = (!src_ldm || contiguous(block, nblocks, spitch)) &&
            (!dst_ldm || contiguous(block, nblocks, dpitch));
  if (kind == CRTS_STAT_RMA)
    one = contiguous(block, nblocks, spitch) &&
          contiguous(block, nblocks, dpitch);
  if (one) {
    issue_unchecked(kind, dst, dpitch, src, spitch, block, nblocks);
    return;
  }
  for (size_t i = 0; i < nblocks; i++)
    issue_unchecked(kind, dst + i * dpitch, dpitch, src + i * spitch, spitch,
                    block, 1);
}

int crts_engine_move(void *dst, size_t dpitch, const void *src, size_t spitch,
                     size_t block, size_t nblocks, const char *call)
{
  if (block == 0 || nblocks == 0)
    return 0;
  if (nblocks == 1)
    dpitch = spitch = block;
  int ws = crts_engine_where(src, extent(block, nblocks, spitch));
  int wd = crts_engine_where(dst, extent(block, nblocks, dpitch));
  if (ws == CRTS_ENGINE_BAD || wd == CRTS_ENGINE_BAD) {
    crts_report(call, "the %s [%p, %zu x %zu bytes) is not inside the usable "
                "LDM of one CPE", ws == CRTS_ENGINE_BAD ? "source"
                                                        : "destination",
                ws == CRTS_ENGINE_BAD ? src : dst, nblocks, block);
    return -1;
  }
  enum crts_stat_kind kind = ws >= 0 && wd >= 0 ? CRTS_STAT_RMA
                             : wd >= 0          ? CRTS_STAT_DMA_GET
                                                : CRTS_STAT_DMA_PUT;
  char *d = dst;
  const char *s = src;
  uintptr_t skew = ((uintptr_t)d ^ (uintptr_t)s) & 3;
  if (nblocks > 1)
    skew |= (dpitch | spitch) & 3;
  size_t head = (size_t)(-(uintptr_t)s & 3);
  if (head > block)
    head = block;
  size_t body = (block - head) & ~(size_t)3;
  size_t tail = block - head - body;
  if (skew || body == 0) {
    /* No word of it can go to an engine. */
    issue_unchecked(CRTS_STAT_MPE_COPY, d, dpitch, s, spitch, block, nblocks);
    return 0;
  }
  if (head)
    issue_unchecked(CRTS_STAT_MPE_COPY, d, dpitch, s, spitch, head, nblocks);
  move_words(kind, ws >= 0, wd >= 0, d + head, dpitch, s + head, spitch, body,
             nblocks);
  if (tail)
    issue_unchecked(CRTS_STAT_MPE_COPY, d + head + body, dpitch,
                    s + head + body, spitch, tail, nblocks);
  return 0;
}

int crts_engine_cpe_move(void *dst, const void *src, size_t len,
                         const char *call)
{
  struct crts_cpe *me = crts_self;
  if (me == NULL || (((uintptr_t)dst | (uintptr_t)src | len) & 3) != 0)
    return 1;
  if (len == 0)
    return 0;
  int ws = crts_engine_where(src, len), wd = crts_engine_where(dst, len);
  if (ws == CRTS_ENGINE_BAD || wd == CRTS_ENGINE_BAD) {
    crts_report(call, "the %s [%p, +%zu bytes) is not inside the usable LDM "
                "of one CPE", ws == CRTS_ENGINE_BAD ? "source"
                                                    : "destination",
                ws == CRTS_ENGINE_BAD ? src : dst, len);
    return -1;
  }
  /* Only what a CPE's own engines do: DMA between main memory and its
   * own LDM, RMA between its own LDM and another CPE's.  The rest (main
   * memory to main memory, into or out of another CPE's LDM alone) is
   * the MPE's. */
  if (ws != me->tid && wd != me->tid)
    return 1;
  enum crts_stat_kind kind = ws >= 0 && wd >= 0 ? CRTS_STAT_RMA
                             : wd == me->tid    ? CRTS_STAT_DMA_GET
                                                : CRTS_STAT_DMA_PUT;
  struct crts_engine_cmd c = {kind, dst, src, len, 1, len, len};
  run_cmd(&c);
  crts_stat_add(me, kind, len);
  return 0;
}

/* --------------------------------------------------------- statistics */

static void sum_counts(struct crts_engine_stats *s, struct mpe_counts *c)
{
  for (int k = 0; k < CRTS_STAT_KINDS; k++) {
    s->ops[k] += atomic_load_explicit(&c->ops[k], memory_order_relaxed);
    s->bytes[k] += atomic_load_explicit(&c->bytes[k], memory_order_relaxed);
  }
}

void crts_engine_stats_mpe(struct crts_engine_stats *s)
{
  memset(s, 0, sizeof *s);
  pthread_once(&fork_once, blocks_fork_register);
  pthread_mutex_lock(&blocks_lock); /* a block ending moves as a whole */
  sum_counts(s, &mpe_shared);
  for (struct mpe_counts *c = mpe_blocks; c; c = c->next)
    sum_counts(s, c);
  pthread_mutex_unlock(&blocks_lock);
}

void crts_engine_stats_cpes(struct crts_engine_stats *s)
{
  memset(s, 0, sizeof *s);
  for (int t = 0; t < CRTS_MAX_SPE_NUM; t++)
    for (int k = 0; k < CRTS_STAT_KINDS; k++) {
      s->ops[k] += atomic_load_explicit(&crts_cg.cpe[t].stat_ops[k],
                                        memory_order_relaxed);
      s->bytes[k] += atomic_load_explicit(&crts_cg.cpe[t].stat_bytes[k],
                                          memory_order_relaxed);
    }
}

const char *crts_engine_kind_name(enum crts_stat_kind k)
{
  return k < CRTS_STAT_KINDS ? kind_names[k] : "?";
}
