/*
 * cpe_rma.c - point-to-point RMA (CRTS_rma_get/iget/put/iput), its waits and
 * fences, CRTS_sldm_get, and the checks shared with cpe_rma_bcast.c.
 *
 * Completion is instant: the issuing CPE copies the bytes itself before the
 * call returns and then raises the reply words, so only counting and
 * ordering are modelled (see crts_rma.h).  The words that rise, as in the
 * manual (section 3.6):
 *
 *   put / iput   r_rply on r_tid +1 once the data has landed there; iput's
 *                l_rply +1 once the local buffer may be reused.
 *   get / iget   r_rply on r_tid +1 once its data has been taken (it may
 *                then overwrite r_addr); iget's l_rply +1 once the data is
 *                in l_addr.
 *
 * The manual asks for reply words in LDM; a NULL reply word is accepted here
 * and means "no reply".  A remote address (r_addr, r_rply) names the same
 * LDM location on r_tid: an address of any slice is taken by its offset, so
 * the address of one's own __thread_local variable is the usual argument.
 * r_tid must run in the spawned group; the caller must be a CPE of it.
 *
 * CRTS_sldm_get: the LDM shared by a cluster (2x2 CPEs, spc_tid 4n..4n+3)
 * is modelled as the union of the four members' slices; an address names
 * its place by the slice it lies in (one's own __thread_local_share
 * variable is one's own quarter).  Every member of the cluster calls; each
 * copies its own len bytes from src to dst, both of which may lie in any
 * member's slice.  A barrier of the cluster before the copy makes the data
 * the members wrote before the call visible; one after it guarantees that
 * on return every member's copy is done (so dst can be read and src reused
 * by all).
 *
 * CRTS_rma_barrier / CRTS_rma_all_barrier: every earlier RMA (and DMA) of
 * the caller has already completed when its call returned, so what is left
 * of "order my earlier transfers before my later ones" is the memory
 * ordering of the plain copies against later accesses: a full fence.
 */
#include <string.h>

#include "bulk_copy.h"
#include "crts_rma.h"

/* ------------------------------------------------------------ checks */

struct crts_cpe *crts_rma_caller(const char *call)
{
  struct crts_cpe *self = crts_check_cpe(call);
  if (!self)
    return NULL;
  if (!self->in_group) {
    crts_report(call, "RMA addresses the CPEs of a spawned group: start this "
                "code with CRTS_athread_spawn, not CRTS_athread_create");
    return NULL;
  }
  return self;
}

int crts_rma_check_len(const char *call, int len)
{
  if (len < 0) {
    crts_report(call, "len %d is negative", len);
    return -1;
  }
  if (len % 4 != 0) {
    crts_report(call, "len %d is not a multiple of 4: RMA moves whole "
                "4-byte words", len);
    return -1;
  }
  return 0;
}

static int check_aligned(const char *call, const char *name, const void *p)
{
  if ((uintptr_t)p % 4 != 0) {
    crts_report(call, "%s %p is not 4-byte aligned", name, p);
    return -1;
  }
  return 0;
}

/* p must be an LDM address (any slice); its owner or -1 after a report. */
static int ldm_owner(const char *call, const char *name, const void *p)
{
  int owner = crts_ldm_owner(p);
  if (owner < 0)
    crts_report(call, "%s %p is not LDM: RMA moves LDM <-> LDM (use a "
                "__thread_local variable or CRTS_pldm_malloc; main memory "
                "goes through CRTS_dma_*)", name, p);
  return owner;
}

int crts_rma_check_local(const char *call, const char *name, const void *p,
                         int len, const struct crts_cpe *self)
{
  if (check_aligned(call, name, p) != 0)
    return -1;
  int owner = ldm_owner(call, name, p);
  if (owner < 0)
    return -1;
  if (owner != self->tid) {
    crts_report(call, "%s %p lies in the LDM of CPE %d: pass an address of "
                "this CPE's own LDM", name, p, owner);
    return -1;
  }
  if (!crts_ldm_range(p, (size_t)len, NULL)) {
    crts_report(call, "%s [%p, +%d bytes) runs out of the usable LDM (into a "
                "guard page or past the slice end)", name, p, len);
    return -1;
  }
  return 0;
}

int crts_rma_check_local_rply(const char *call, const char *name,
                              crts_rply_t *rply, const struct crts_cpe *self)
{
  if (!rply)
    return 0;
  return crts_rma_check_local(call, name, (const void *)rply,
                              (int)sizeof *rply, self);
}

int crts_rma_remote(const char *call, const char *name, const void *p,
                    int len, int tid, void **out)
{
  if (check_aligned(call, name, p) != 0 || ldm_owner(call, name, p) < 0)
    return -1;
  void *q = crts_ldm_translate(p, tid);
  int owner = -1;
  if (!q || !crts_ldm_range(q, (size_t)len, &owner) || owner != tid) {
    crts_report(call, "%s [%p, +%d bytes) does not fit in the usable LDM of "
                "CPE %d", name, p, len, tid);
    return -1;
  }
  *out = q;
  return 0;
}

int crts_rma_remote_rply(const char *call, const char *name,
                         crts_rply_t *rply, int tid, crts_rply_t **out)
{
  void *q = NULL;
  if (rply && crts_rma_remote(call, name, (const void *)rply,
                              (int)sizeof *rply, tid, &q) != 0)
    return -1;
  *out = q;
  return 0;
}

int crts_rma_check_tid(const char *call, int tid)
{
  if (tid < 0 || tid >= CRTS_MAX_SPE_NUM) {
    crts_report(call, "r_tid %d is outside 0..%d", tid, CRTS_MAX_SPE_NUM - 1);
    return -1;
  }
  if (!crts_in_group(tid)) {
    crts_report(call, "CPE %d does not run in the spawned group (beyond "
                "CRTS_NUM_CPES=%d or ended)", tid, crts_cg.ncpes);
    return -1;
  }
  return 0;
}

void crts_rma_deliver(struct crts_cpe *self, void *dst, const void *src,
                      size_t len, crts_rply_t *rply, int to_tid)
{
  if (len && dst != src)
    bulk_move(dst, src, len); /* a CPE may copy within its own LDM */
  crts_stat_add(self, CRTS_STAT_RMA, len);
  crts_rma_reply(rply, to_tid);
}

uint64_t crts_rma_cluster_bits(int tid)
{
  int r = (tid / CRTS_COL_NUM) & ~1, c = (tid % CRTS_COL_NUM) & ~1;
  uint64_t pair = (uint64_t)3 << c;
  return (pair << (r * CRTS_COL_NUM)) | (pair << ((r + 1) * CRTS_COL_NUM));
}

/* ------------------------------------------------------- get and put */

enum rma_dir { RMA_GET, RMA_PUT };

static int rma_p2p(const char *call, enum rma_dir dir, void *l_addr,
                   crts_rply_t *l_rply, int len, int r_tid, void *r_addr,
                   crts_rply_t *r_rply)
{
  struct crts_cpe *self = crts_rma_caller(call);
  if (!self)
    return -1;
  void *remote = NULL;
  crts_rply_t *rr = NULL;
  if (crts_rma_check_len(call, len) != 0 ||
      crts_rma_check_tid(call, r_tid) != 0 ||
      crts_rma_check_local(call, "l_addr", l_addr, len, self) != 0 ||
      crts_rma_check_local_rply(call, "l_rply", l_rply, self) != 0 ||
      crts_rma_remote(call, "r_addr", r_addr, len, r_tid, &remote) != 0 ||
      crts_rma_remote_rply(call, "r_rply", r_rply, r_tid, &rr) != 0)
    return -1;
  if (dir == RMA_PUT) {
    crts_rma_deliver(self, remote, l_addr, (size_t)len, rr, r_tid);
  } else {
    crts_rma_deliver(self, l_addr, remote, (size_t)len, NULL, self->tid);
    crts_rma_reply(rr, r_tid); /* the source's data has been taken */
  }
  crts_rma_reply(l_rply, self->tid);
  return 0;
}

int CRTS_rma_get(void *l_addr, int len, int r_tid, void *r_addr,
                 crts_rply_t *r_rply)
{
  return rma_p2p("CRTS_rma_get", RMA_GET, l_addr, NULL, len, r_tid, r_addr,
                 r_rply);
}

int CRTS_rma_iget(void *l_addr, crts_rply_t *l_rply, int len, int r_tid,
                  void *r_addr, crts_rply_t *r_rply)
{
  return rma_p2p("CRTS_rma_iget", RMA_GET, l_addr, l_rply, len, r_tid,
                 r_addr, r_rply);
}

int CRTS_rma_put(void *l_addr, int len, int r_tid, void *r_addr,
                 crts_rply_t *r_rply)
{
  return rma_p2p("CRTS_rma_put", RMA_PUT, l_addr, NULL, len, r_tid, r_addr,
                 r_rply);
}

int CRTS_rma_iput(void *l_addr, crts_rply_t *l_rply, int len, int r_tid,
                  void *r_addr, crts_rply_t *r_rply)
{
  return rma_p2p("CRTS_rma_iput", RMA_PUT, l_addr, l_rply, len, r_tid,
                 r_addr, r_rply);
}

/* ------------------------------------------------------ wait, fences */

int CRTS_rma_wait_value(crts_rply_t *rply, int value)
{
  const char *call = "CRTS_rma_wait_value";
  struct crts_cpe *self = crts_check_cpe(call);
  if (!self)
    return -1;
  /* Wake-ups go to the word's owner, so only one's own words can be waited. */
  if (crts_rma_check_local(call, "rply", (const void *)rply,
                           (int)sizeof *rply, self) != 0)
    return -1;
  if (value < 0) {
    crts_report(call, "value %d is negative: it counts completed operations "
                "(0, 1, 2, ...)", value);
    return -1;
  }
  crts_word_wait_ge(rply, value, &self->waiting_on);
  return 0;
}

static int rma_fence(const char *call)
{
  if (!crts_check_cpe(call))
    return -1;
  atomic_thread_fence(memory_order_seq_cst);
  return 0;
}

int CRTS_rma_barrier(void) { return rma_fence("CRTS_rma_barrier"); }

int CRTS_rma_all_barrier(void) { return rma_fence("CRTS_rma_all_barrier"); }

/* ------------------------------------------------------------- sldm */

/* One barrier per cluster (16 clusters of 2x2 CPEs). */
static struct crts_barrier sldm_barrier[CRTS_MAX_SPE_NUM / 4];

/* [p, p + len) must be aligned and inside the slice of a CPE in members. */
static int sldm_check(const char *call, const char *name, const void *p,
                      int len, uint64_t members)
{
  if (check_aligned(call, name, p) != 0)
    return -1;
  int owner = ldm_owner(call, name, p);
  if (owner < 0)
    return -1;
  if (!((members >> owner) & 1u)) {
    crts_report(call, "%s %p lies in the LDM of CPE %d, outside the LDM "
                "shared by this cluster", name, p, owner);
    return -1;
  }
  if (!crts_ldm_range(p, (size_t)len, NULL)) {
    crts_report(call, "%s [%p, +%d bytes) runs out of the usable LDM of CPE "
                "%d", name, p, len, owner);
    return -1;
  }
  return 0;
}

int CRTS_sldm_get(void *dst, void *src, int len)
{
  const char *call = "CRTS_sldm_get";
  struct crts_cpe *self = crts_rma_caller(call);
  if (!self)
    return -1;
  int tid = self->tid;
  uint64_t members = crts_rma_cluster_bits(tid) & crts_cg.group_mask;
  int ok = crts_rma_check_len(call, len) == 0 &&
           sldm_check(call, "dst", dst, len, members) == 0 &&
           sldm_check(call, "src", src, len, members) == 0;
  /* A caller with bad arguments still meets its cluster: no deadlock. */
  int spcn = (tid / 16) * 4 + (tid % CRTS_COL_NUM) / 2;
  struct crts_barrier *b = &sldm_barrier[spcn];
  uint32_t n = (uint32_t)crts_rma_count(members);
  crts_barrier_wait(b, n, 0);
  if (ok)
    crts_rma_deliver(self, dst, src, (size_t)len, NULL, tid);
  crts_barrier_wait(b, n, 0);
  return ok ? 0 : -1;
}
