/*
 * cpe_scoll.c - collectives of the CPE array: alltoall and allreduce.
 *
 * Every CPE of the spawned group calls, with the same sizes.  CPEs are
 * numbered by rank: their position among the group's CPEs in tid order
 * (rank == tid unless CPEs were ended).  "Thread total" of the manual is
 * the group size G.
 *
 * Each call first publishes its arguments in a slot, then all meet at a
 * barrier and every CPE checks every slot: if any CPE rejected its own
 * arguments or the CPEs disagree (sizes, type, operation, which call), all
 * return non-zero having moved nothing.  Data then moves by plain loads and
 * stores between the LDM slices (counted as RMA), and a final barrier keeps
 * slots and buffers stable until every CPE is done with them.  One barrier
 * object serves every call: it is reusable episode after episode, and a
 * CPE cannot publish its next slot before the others passed the barrier
 * that ends their reading of the current one.
 *
 * alltoall:  unit j of rank i's src ends at offset i*units_size of rank j's
 *            dest.
 * inplace:   the same exchange is a transpose of a G x G matrix of units
 *            held by rows, i.e. disjoint swaps of (i,j) with (j,i).  Each
 *            pair is swapped by one of its two CPEs (about G/2 pairs each),
 *            staging through buf in rounds of at most buf_item units, so
 *            buf_item = 1 works.
 * redurt:    in chunks of buf_item * G elements: rank r reduces its share
 *            (at most buf_item elements) of the chunk from every CPE's src
 *            into its redu_buf, in rank order 0, 1, ..., G-1; after a
 *            barrier every CPE copies all shares into its dest; after
 *            another barrier the next chunk may reuse the buffers.  The
 *            fixed order makes floating sums identical on every CPE.
 */
#include <string.h>

#include "bulk_copy.h"
#include "crts_cg.h"
#include "crts_scoll.h"

enum scoll_kind { SCOLL_ALLTOALL = 1, SCOLL_INPLACE, SCOLL_REDURT };

struct scoll_slot {
  int kind;
  int ok;            /* this CPE's arguments passed its own checks */
  int tid;
  int units;         /* units_size (alltoall) or element count (redurt) */
  int dtype, optype; /* redurt */
  int buf_item;
  char *src, *dest, *buf;
} __attribute__((aligned(64)));

static struct scoll_slot slots[CRTS_MAX_SPE_NUM];
static struct crts_barrier scoll_barrier;

static const char *const kind_names[] = {
  [SCOLL_ALLTOALL] = "CRTS_scoll_alltoall",
  [SCOLL_INPLACE] = "CRTS_scoll_alltoall_inplace",
  [SCOLL_REDURT] = "CRTS_scoll_redurt",
};

struct scoll_ctx {
  struct crts_cpe *self;
  int rank, size;
};

static void group_barrier(const struct scoll_ctx *c)
{
  crts_barrier_wait(&scoll_barrier, (uint32_t)c->size, 0);
}

/* The caller's rank in the spawned group; -1 (reported) when not in one. */
static int enter(const char *call, struct scoll_ctx *c)
{
  if (!crts_check_init(call) || !(c->self = crts_check_cpe(call)))
    return -1;
  int tid = c->self->tid;
  if (!c->self->in_group || !crts_in_group(tid)) {
    crts_report(call, "is collective over a spawned group: call it from a "
                      "function started by CRTS_athread_spawn");
    return -1;
  }
  uint64_t below = crts_cg.group_mask & (((uint64_t)1 << tid) - 1);
  c->rank = __builtin_popcountll(below);
  c->size = crts_cg.group_size;
  return 0;
}

/* 1 if p is 4-byte aligned and [p, p+len) lies in the caller's LDM. */
static int check_ldm(const char *call, const char *what, const void *p,
                     size_t len, const struct crts_cpe *self)
{
  int owner = -1;
  if ((uintptr_t)p % 4 != 0) {
    crts_report(call, "%s %p is not 4-byte aligned", what, p);
    return 0;
  }
  if (!crts_ldm_range(p, len ? len : 1, &owner) || owner != self->tid) {
    crts_report(call, "%s %p (%zu bytes) is not inside this CPE's LDM: use "
                "a __thread_local array or CRTS_pldm_malloc memory", what, p,
                len);
    return 0;
  }
  return 1;
}

static int overlap(const char *a, size_t alen, const char *b, size_t blen)
{
  return a < b + blen && b < a + alen;
}

static int check_unit(const char *call, int units_size)
{
  if (units_size <= 0 || units_size % 4 != 0) {
    crts_report(call, "units_size %d must be a positive multiple of 4",
                units_size);
    return 0;
  }
  return 1;
}

/*
 * Publish mine, meet, and check that every CPE accepted its arguments and
 * agrees with rank 0.  On failure the second barrier is passed here too,
 * so the caller just returns.  1 = go ahead.
 */
static int agree(const char *call, const struct scoll_ctx *c,
                 const struct scoll_slot *mine)
{
  slots[c->rank] = *mine;
  group_barrier(c);
  const struct scoll_slot *lead = &slots[0];
  int all_ok = 1;
  for (int r = 0; r < c->size; r++) {
    const struct scoll_slot *s = &slots[r];
    all_ok &= s->ok && s->kind == lead->kind && s->units == lead->units &&
              s->dtype == lead->dtype && s->optype == lead->optype;
  }
  if (all_ok)
    return 1;
  if (mine->ok && lead->ok && c->rank != 0) {
    if (mine->kind != lead->kind)
      crts_report(call, "CPE %d called %s at the same time: every CPE of "
                  "the group must make the same collective call", lead->tid,
                  kind_names[lead->kind]);
    else if (mine->units != lead->units || mine->dtype != lead->dtype ||
             mine->optype != lead->optype)
      crts_report(call, "arguments differ from CPE %d's (units %d vs %d, "
                  "dtype %d vs %d, optype %d vs %d): they must match on "
                  "every CPE", lead->tid, mine->units, lead->units,
                  mine->dtype, lead->dtype, mine->optype, lead->optype);
  }
  group_barrier(c);
  return 0;
}

/* --------------------------------------------------------------- alltoall */

int CRTS_scoll_alltoall(void *src_addr, void *dest_addr, int units_size)
{
  const char *call = "CRTS_scoll_alltoall";
  struct scoll_ctx c;
  if (enter(call, &c) != 0)
    return -1;
  struct scoll_slot s = { .kind = SCOLL_ALLTOALL, .tid = c.self->tid,
                          .units = units_size, .src = src_addr,
                          .dest = dest_addr };
  size_t unit = units_size > 0 ? (size_t)units_size : 0;
  size_t total = unit * (size_t)c.size;
  s.ok = check_unit(call, units_size) &&
         check_ldm(call, "src_addr", src_addr, total, c.self) &&
         check_ldm(call, "dest_addr", dest_addr, total, c.self);
  if (s.ok && overlap(s.src, total, s.dest, total)) {
    crts_report(call, "src_addr %p and dest_addr %p overlap: they must be "
                "different buffers (or use CRTS_scoll_alltoall_inplace)",
                src_addr, dest_addr);
    s.ok = 0;
  }
  if (!agree(call, &c, &s))
    return -1;
  /* Start with the next rank so that the CPEs do not all read rank 0. */
  for (int k = 0; k < c.size; k++) {
    int r = (c.rank + k) % c.size;
    bulk_copy(s.dest + (size_t)r * unit,
              slots[r].src + (size_t)c.rank * unit, unit);
    if (r != c.rank)
      crts_stat_add(c.self, CRTS_STAT_RMA, unit);
  }
  group_barrier(&c);
  return 0;
}

/* ------------------------------------------------------- alltoall_inplace */

/* 1 if rank me swaps its pair with rank (me + d) % size. */
static int swaps_pair(int me, int d, int size)
{
  if (2 * d < size)
    return 1;
  return 2 * d == size && me < (me + d) % size;
}

int CRTS_scoll_alltoall_inplace(void *src_addr, int units_size, void *buf,
                                int buf_item)
{
  const char *call = "CRTS_scoll_alltoall_inplace";
  struct scoll_ctx c;
  if (enter(call, &c) != 0)
    return -1;
  struct scoll_slot s = { .kind = SCOLL_INPLACE, .tid = c.self->tid,
                          .units = units_size, .src = src_addr, .buf = buf,
                          .buf_item = buf_item };
  size_t unit = units_size > 0 ? (size_t)units_size : 0;
  size_t total = unit * (size_t)c.size;
  size_t items = buf_item > 0 ? (size_t)buf_item : 0;
  s.ok = check_unit(call, units_size) &&
         check_ldm(call, "src_addr", src_addr, total, c.self);
  if (s.ok && buf_item <= 0) {
    crts_report(call, "buf_item %d: buf must hold at least one unit",
                buf_item);
    s.ok = 0;
  }
  s.ok = s.ok && check_ldm(call, "buf", buf, unit * items, c.self);
  if (s.ok && overlap(s.src, total, s.buf, unit * items)) {
    crts_report(call, "buf %p overlaps src_addr %p", buf, src_addr);
    s.ok = 0;
  }
  if (!agree(call, &c, &s))
    return -1;
  /* Pairs in rounds of buf_item: fetch the peers' units, then swap. */
  int d = 1;
  int last = c.size / 2;
  while (d <= last) {
    int peer[CRTS_MAX_SPE_NUM];
    size_t n = 0;
    for (; d <= last && n < items; d++)
      if (swaps_pair(c.rank, d, c.size))
        peer[n++] = (c.rank + d) % c.size;
    for (size_t k = 0; k < n; k++)
      bulk_copy(s.buf + k * unit,
                slots[peer[k]].src + (size_t)c.rank * unit, unit);
    for (size_t k = 0; k < n; k++) {
      char *mine = s.src + (size_t)peer[k] * unit;
      bulk_copy(slots[peer[k]].src + (size_t)c.rank * unit, mine, unit);
      bulk_copy(mine, s.buf + k * unit, unit);
      crts_stat_add(c.self, CRTS_STAT_RMA, unit); /* the get */
      crts_stat_add(c.self, CRTS_STAT_RMA, unit); /* the put */
    }
  }
  group_barrier(&c);
  return 0;
}

/* ----------------------------------------------------------------- redurt */

/* First element of rank r's share of a chunk of n elements. */
static size_t share_start(size_t n, int r, int size)
{
  return n * (size_t)r / (size_t)size;
}

int CRTS_scoll_redurt(void *src_addr, void *dest_addr, int units, int dtype,
                      int optype, void *redu_buf, int buf_item)
{
  const char *call = "CRTS_scoll_redurt";
  struct scoll_ctx c;
  if (enter(call, &c) != 0)
    return -1;
  struct scoll_slot s = { .kind = SCOLL_REDURT, .tid = c.self->tid,
                          .units = units, .dtype = dtype, .optype = optype,
                          .src = src_addr, .dest = dest_addr, .buf = redu_buf,
                          .buf_item = buf_item };
  size_t es = crts_redu_elem_size(dtype);
  size_t len = units > 0 ? (size_t)units * es : 0;
  size_t items = buf_item > 0 ? (size_t)buf_item : 0;
  s.ok = 1;
  if (es == 0) {
    crts_report(call, "dtype %d is not a CRTS_* type (CRTS_int .. "
                "CRTS_doublev8)", dtype);
    s.ok = 0;
  } else if (optype < OP_add || optype > OP_max) {
    crts_report(call, "optype %d is not an OP_* operation (OP_add .. "
                "OP_max)", optype);
    s.ok = 0;
  } else if (!crts_redu_op_valid(dtype, optype)) {
    crts_report(call, "%s is not defined for %s: floating types take "
                "OP_add, OP_min and OP_max", crts_redu_op_name(optype),
                crts_redu_type_name(dtype));
    s.ok = 0;
  } else if (units < 0) {
    crts_report(call, "units %d is negative", units);
    s.ok = 0;
  } else if (buf_item <= 0) {
    crts_report(call, "buf_item %d: redu_buf must hold at least one "
                "element", buf_item);
    s.ok = 0;
  }
  s.ok = s.ok && check_ldm(call, "src_addr", src_addr, len, c.self) &&
         check_ldm(call, "dest_addr", dest_addr, len, c.self) &&
         check_ldm(call, "redu_buf", redu_buf, items * es, c.self);
  if (s.ok && s.src != s.dest && overlap(s.src, len, s.dest, len)) {
    crts_report(call, "src_addr %p and dest_addr %p overlap without being "
                "equal", src_addr, dest_addr);
    s.ok = 0;
  }
  if (s.ok && (overlap(s.buf, items * es, s.src, len) ||
               overlap(s.buf, items * es, s.dest, len))) {
    crts_report(call, "redu_buf %p overlaps src_addr or dest_addr",
                redu_buf);
    s.ok = 0;
  }
  if (!agree(call, &c, &s))
    return -1;
  /*
   * Every CPE's redu_buf holds buf_item elements, so a chunk of
   * min(buf_item) * G elements gives every rank a share that fits.
   */
  size_t fit = (size_t)slots[0].buf_item;
  for (int r = 1; r < c.size; r++)
    if ((size_t)slots[r].buf_item < fit)
      fit = (size_t)slots[r].buf_item;
  size_t chunk = fit * (size_t)c.size;
  for (size_t k = 0; k < (size_t)units; k += chunk) {
    size_t n = (size_t)units - k < chunk ? (size_t)units - k : chunk;
    size_t lo = k + share_start(n, c.rank, c.size);
    size_t cnt = k + share_start(n, c.rank + 1, c.size) - lo;
    if (cnt) {
      bulk_copy(s.buf, slots[0].src + lo * es, cnt * es);
      for (int r = 1; r < c.size; r++)
        crts_redu_apply(dtype, optype, s.buf, slots[r].src + lo * es, cnt);
      for (int r = 0; r < c.size; r++)
        if (r != c.rank)
          crts_stat_add(c.self, CRTS_STAT_RMA, cnt * es);
    }
    group_barrier(&c);
    for (int q = 0; q < c.size; q++) {
      int r = (c.rank + q) % c.size;
      size_t rlo = k + share_start(n, r, c.size);
      size_t rcnt = k + share_start(n, r + 1, c.size) - rlo;
      if (!rcnt)
        continue;
      bulk_copy(s.dest + rlo * es, slots[r].buf, rcnt * es);
      if (r != c.rank)
        crts_stat_add(c.self, CRTS_STAT_RMA, rcnt * es);
    }
    group_barrier(&c);
  }
  if (units == 0)
    group_barrier(&c);
  return 0;
}
