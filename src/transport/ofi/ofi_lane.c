/*
 * ofi_lane.c - a shared-memory lane between the core groups of one host.
 *
 * On shm every packet went through libfabric's shm provider, whose inject
 * and CQ read are ~650 instructions of a message's path; a ring between
 * two processes moves a packet in ~0.10 us a half round trip where the
 * provider takes ~0.27 (docs/PERFORMANCE.md, "Session 26").  So each CG
 * publishes one shared-memory object (named after the job key and its
 * rank, like the doorbell) with a ring per sending CG: one producer, the
 * sender under its ofi.lock, one consumer, us under ours.  Once a peer's
 * ring is mapped, every packet to that peer goes through it, never some
 * through the provider: packets to a peer keep the order they were posted
 * in, which the protocol relies on (docs/PROTOCOL.md, "Faults").
 * RMA and cross-memory reads and writes stay as they are.  The lane lives
 * only where the doorbell does (shm, every CG on this host): a sender
 * rings after it posts, and a sleeper reads the rings when it reads the CQ.
 *
 * A ring holds records: a 16-byte header (the packet's length, or WRAP:
 * the rest of the ring is unused) and the packet, padded to 64 bytes so
 * that the sender writing one record and the reader reading the one
 * before share no cache line.  head (bytes published) and tail (bytes
 * consumed) only grow, each on a line of its own.
 *
 * Nothing in a ring is trusted: a length or a head that points outside
 * what was published or outside the ring is a corrupt lane, and its
 * sender is declared gone (we can no longer tell where its packets
 * begin).  The packets themselves are checked as any arrival
 * (packet_run).  A peer that could write the ring could also write our
 * memory by cross-memory attach (ofi_cma.c): the checks guard against
 * bugs and garbage, not against a hostile process of the same user.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/statvfs.h>

#include "transport/boot/boot.h"
#include "transport/ofi/ofi.h"
#include "transport/ofi/ofi_shm_sweep.h"

#define LANE_MAGIC 0x454e414c69706c6fULL /* "olpiLANE" */
#define LANE_PAGE 4096       /* the object's header page */
#define LANE_RING_HDR 128    /* head and tail, a line each */
#define LANE_REC 16          /* a record's header */
#define LANE_ALIGN 64
#define LANE_WRAP 0xffffffffu
#define LANE_BATCH 64        /* records read from one ring per pass */
/* A CG's rings together stay under this unless a ring must be larger
 * to hold its packets: many CGs on one host get smaller rings. */
#define LANE_TOTAL_MAX ((size_t)64 << 20)

struct lane_head {
  uint64_t magic;
  uint64_t ntasks;
  uint64_t ring_bytes; /* data bytes of each ring, a power of 2 */
};

struct lane_ring {
  uint64_t head; /* written by the sender */
  unsigned char pad[LANE_ALIGN - sizeof(uint64_t)];
  uint64_t tail; /* written by us */
};

struct lane_rec {
  uint32_t len; /* the packet's bytes, or LANE_WRAP */
  uint32_t zero;
  uint64_t pad;
};

struct lane_out {
  struct lane_ring *r;
  unsigned char *seg; /* the peer's whole object, mapped */
  size_t seg_len;
  uint64_t size;      /* its ring bytes */
  uint64_t head;      /* what we published */
  uint64_t tail_seen; /* the peer's tail when we last looked */
};

struct lane_in {
  struct lane_ring *r;
  uint64_t tail;
  uint src;
};

static unsigned char *in_seg; /* ours */
static size_t in_len;
static uint64_t in_size;      /* our rings' data bytes */
static struct lane_in *ins;   /* one per peer */
static uint nins;
static struct lane_out *outs; /* [ntasks]; r NULL: no lane to that peer */
static char my_name[128];
int ofi_lane_corrupt_next;

static void name_of(char *out, size_t n, const struct lapi_boot *b, int rank)
{
  ofi_cg_object_name(out, n, "lane", b->job_key, rank);
}

static size_t seg_bytes(uint64_t ntasks, uint64_t ring)
{
  return LANE_PAGE + (size_t)ntasks * (LANE_RING_HDR + ring);
}

static struct lane_ring *ring_of(unsigned char *seg, uint64_t ring, uint t)
{
  return (struct lane_ring *)(seg + LANE_PAGE +
                              (size_t)t * (LANE_RING_HDR + ring));
}

static unsigned char *ring_data(struct lane_ring *r)
{
  return (unsigned char *)r + LANE_RING_HDR;
}

/* The ring size: LAPI_OFI_LANE_BYTES rounded up to a power of 2, at
 * least four of the largest packet, and halved while a CG's rings
 * together exceed LANE_TOTAL_MAX (never below those four packets). */
static uint64_t ring_size(void)
{
  uint64_t want = ofi.lane_bytes;
  uint64_t least = 4 * ((ofi.buf_size + LANE_REC + LANE_ALIGN - 1) &
                        ~(uint64_t)(LANE_ALIGN - 1));
  while (want > least && (uint64_t)ofi.ntasks * want > LANE_TOTAL_MAX)
    want /= 2;
  uint64_t r = 1;
  while (r < want || r < least)
    r <<= 1;
  return r;
}

/* The job's lanes (every CG's object, all on this host) take at most
 * half of what /dev/shm has free: the provider's own regions, and the
 * CGs that start a moment later, need it too (a container's /dev/shm
 * is often 64 MiB). */
static int room_in_dev_shm(size_t one)
{
  struct statvfs v;
  if (statvfs("/dev/shm", &v) != 0)
    return 1; /* cannot tell: posix_fallocate decides */
  double avail = (double)v.f_bavail * (double)v.f_frsize;
  double job = (double)ofi.ntasks * (double)one;
  if (job <= avail / 2)
    return 1;
  LAPI_LOG(LAPI_LOG_INFO, "ofi: no shared-memory lane: the job's rings "
           "need %.0f MiB of /dev/shm, %.0f MiB are free (at most half "
           "is taken); packets go through the provider.  A larger "
           "/dev/shm, or smaller LAPI_OFI_BUF_SIZE and LAPI_OFI_LANE_BYTES, "
           "bring it back", job / 1048576, avail / 1048576);
  return 0;
}

void ofi_lane_create(const struct lapi_boot *b)
{
  if (!ofi.lane_want || !ofi_bell_on())
    return;
  in_size = ring_size();
  in_len = seg_bytes(ofi.ntasks, in_size);
  if (!room_in_dev_shm(in_len))
    return;
  outs = calloc(ofi.ntasks, sizeof *outs);
  ins = calloc(ofi.ntasks, sizeof *ins);
  char name[128];
  name_of(name, sizeof name, b, b->rank);
  in_seg = outs && ins ? ofi_cgobj_create(name, in_len) : NULL;
  if (in_seg == NULL) {
    LAPI_LOG(LAPI_LOG_INFO, "ofi: no shared-memory lane (%zu bytes in "
             "/dev/shm: %s); packets go through the provider", in_len,
             strerror(errno));
    free(outs);
    free(ins);
    outs = NULL;
    ins = NULL;
    return;
  }
  snprintf(my_name, sizeof my_name, "%s", name);
  struct lane_head *hd = (struct lane_head *)in_seg;
  hd->ntasks = ofi.ntasks;
  hd->ring_bytes = in_size;
  __atomic_store_n(&hd->magic, LANE_MAGIC, __ATOMIC_RELEASE);
  for (uint t = 0; t < ofi.ntasks; t++)
    if (t != ofi.me)
      ins[nins++] = (struct lane_in){ring_of(in_seg, in_size, t), 0, t};
}

/* Map peer t's object and find our ring in it; -1 if it has none or it
 * does not describe itself as we expect. */
static int attach_one(const struct lapi_boot *b, uint t)
{
  char name[128];
  name_of(name, sizeof name, b, (int)t);
  size_t len;
  unsigned char *p = ofi_cgobj_open(name, &len);
  if (p == NULL)
    return -1;
  const struct lane_head *hd = (const struct lane_head *)p;
  uint64_t ring = len > LANE_PAGE ? hd->ring_bytes : 0;
  if (ring == 0 ||
      __atomic_load_n(&hd->magic, __ATOMIC_ACQUIRE) != LANE_MAGIC ||
      hd->ntasks != ofi.ntasks || ring < 4096 || (ring & (ring - 1)) ||
      seg_bytes(hd->ntasks, ring) != len) {
    munmap(p, len);
    return -1;
  }
  struct lane_out *o = &outs[t];
  o->seg = p;
  o->seg_len = len;
  o->size = ring;
  o->r = ring_of(p, ring, ofi.me);
  return 0;
}

void ofi_lane_attach(const struct lapi_boot *b)
{
  if (in_seg == NULL)
    return;
  ofi.lane = 1;
  uint missing = 0;
  for (uint t = 0; t < ofi.ntasks; t++)
    if (t != ofi.me && attach_one(b, t) != 0)
      missing++;
  if (missing)
    LAPI_LOG(LAPI_LOG_INFO, "ofi: %u peers have no shared-memory lane: "
             "packets to them go through the provider", missing);
}

void ofi_lane_unlink(void)
{
  if (my_name[0]) {
    shm_unlink(my_name);
    my_name[0] = '\0';
  }
}

void ofi_lane_close(void)
{
  ofi.lane = 0;
  ofi_lane_unlink();
  if (outs)
    for (uint t = 0; t < ofi.ntasks; t++)
      if (outs[t].seg)
        munmap(outs[t].seg, outs[t].seg_len);
  if (in_seg)
    munmap(in_seg, in_len);
  free(outs);
  free(ins);
  outs = NULL;
  ins = NULL;
  nins = 0;
  in_seg = NULL;
}


int ofi_lane_push(uint peer, const void *a, size_t alen, const void *z,
                  size_t zlen)
{
  struct lane_out *o = &outs[peer];
  struct lane_ring *r = o->r;
  if (r == NULL)
    return 1; /* the peer has no lane: the provider carries its packets */
  size_t len = alen + zlen;
  uint64_t need = (LANE_REC + len + LANE_ALIGN - 1) &
                  ~(uint64_t)(LANE_ALIGN - 1);
  if (need > o->size / 2) {
    /* ring_size holds four of the owner's largest packets: only a CG
     * given a larger LAPI_OFI_BUF_SIZE than its peer gets here, and
     * the send fails as any other */
    LAPI_LOG(LAPI_LOG_ASYNC, "ofi: a packet of %zu bytes does not fit the "
             "lane to task %u (ring of %llu bytes)", len, peer,
             (unsigned long long)o->size);
    return -FI_EMSGSIZE;
  }
  uint64_t h = o->head;
  uint64_t pos = h & (o->size - 1);
  uint64_t skip = o->size - pos < need ? o->size - pos : 0;
  if (h + skip + need - o->tail_seen > o->size) {
    o->tail_seen = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
    if (o->tail_seen > h || h + skip + need - o->tail_seen > o->size) {
      ofi.st.lane_full++;
      return -FI_EAGAIN; /* full until the peer reads */
    }
  }
  unsigned char *data = ring_data(r);
  if (skip) {
    ((struct lane_rec *)(data + pos))->len = LANE_WRAP;
    ofi.st.lane_wraps++;
    h += skip;
    pos = 0;
  }
  struct lane_rec *rec = (struct lane_rec *)(data + pos);
  rec->len = (uint32_t)len;
  if (__builtin_expect(ofi_lane_corrupt_next, 0)) {
    ofi_lane_corrupt_next = 0;
    rec->len = (uint32_t)o->size; /* the test hook */
  }
  memcpy(rec + 1, a, alen);
  if (zlen)
    memcpy((unsigned char *)(rec + 1) + alen, z, zlen);
  o->head = h + need;
  /* Sequentially consistent: the doorbell's order is "publish, then
   * read whether the peer sleeps or polls" (ofi_bell_ring), a store
   * followed by a load that must not pass it. */
  __atomic_store_n(&r->head, o->head, __ATOMIC_SEQ_CST);
  ofi.st.lane_sent++;
  return 0;
}

static void lane_corrupt(struct lane_in *in, const char *what)
{
  ofi_drop(OFI_BAD_LEN, what, in->src);
  /* Nothing more of it can be read: stop where it broke and let the
   * peer go. */
  in->r = NULL;
  char why[128];
  snprintf(why, sizeof why, "its shared-memory lane is corrupt (%s)", what);
  ofi_peer_fail(in->src, LAPI_ERR_RECV_INCOMP, why);
}

int ofi_lane_drain(void (*run)(const unsigned char *pkt, size_t len))
{
  int n = 0;
  for (uint k = 0; k < nins; k++) {
    struct lane_in *in = &ins[k];
    if (in->r == NULL)
      continue;
    uint64_t h = __atomic_load_n(&in->r->head, __ATOMIC_ACQUIRE);
    uint64_t t = in->tail;
    if (h == t)
      continue;
    if (h - t > in_size) {
      lane_corrupt(in, "head beyond the ring");
      continue;
    }
    unsigned char *data = ring_data(in->r);
    for (int budget = LANE_BATCH; t != h && budget > 0; budget--) {
      uint64_t pos = t & (in_size - 1);
      uint32_t len = __atomic_load_n(&((struct lane_rec *)(data + pos))->len,
                                     __ATOMIC_RELAXED);
      if (len == LANE_WRAP) {
        if (in_size - pos > h - t) {
          lane_corrupt(in, "a wrap mark beyond what was published");
          break;
        }
        t += in_size - pos;
        continue;
      }
      uint64_t need = (LANE_REC + (uint64_t)len + LANE_ALIGN - 1) &
                      ~(uint64_t)(LANE_ALIGN - 1);
      if (need > h - t || need > in_size - pos) {
        lane_corrupt(in, "a record beyond what was published");
        break;
      }
      run(data + pos + LANE_REC, len);
      n++;
      t += need;
    }
    if (in->r) {
      in->tail = t;
      __atomic_store_n(&in->r->tail, t, __ATOMIC_RELEASE);
    }
  }
  ofi.st.lane_recv += (uint64_t)n;
  return n;
}
