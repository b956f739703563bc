/*
 * ofi_packref.c - packed chunks the sink unpacks straight out of the
 * source's shared memory (the packed path between CGs of one host).
 *
 * The plain packed path copies every byte three times: the source packs
 * a chunk into a DATA packet, shm copies the packet into the sink's
 * receive buffer (CMA, by the sink, while shm's lock on the sink's region
 * keeps the source from sending anything), the sink unpacks.  The sink did
 * two of the three copies and the source mostly waited.  Here the source
 * packs the chunk into a stage of its stage arena, a memfd mapped shared,
 * and sends a small DATA that names it (OFI_DATA_REF: pid, fd, offset,
 * length, number); the sink maps that arena once per peer (read-only,
 * through /proc/PID/fd/FD, which needs the same permission as CMA) and
 * unpacks from it.  Two copies, one on each core, overlapping from chunk
 * to chunk, and no system call per chunk.
 *
 * A stage stays the source's until the sink says the chunk landed: each
 * PULL carries ref_landed, the number below which every staged chunk of
 * the transfer landed, and the source takes those stages back; the
 * transfer's end (FIN, failure) takes back all of its stages.  A sink
 * asks for references (OFI_PULL_REF) only when the provider is shm (same
 * host) and LAPI_OFI_PACK_REF is not 0.  If it cannot map the arena, or a
 * reference falls outside it, it asks for that range again in a packet
 * and never flags a PULL to that peer again.  A source out of stages
 * answers with the bytes in the packet, as before.
 *
 * A reference is an address in another process, so the sink trusts none
 * that a packet alone vouches for: it asks for references only from a
 * peer whose pid start-up proved (its probe word read back by CMA,
 * ofi_cma.c), drops one naming any other pid (OFI_BAD_REF: whoever sent
 * it, we would otherwise open a file of any process we may ptrace), and
 * drops one naming a file of that peer other than its stage arena (the
 * one mapped; before that, a memfd named lapi-stage).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "am/lapi_log.h"
#include "transport/ofi/ofi.h"

/* Stages in our arena (LAPI_OFI_PACK_STAGES, ofi.pack_stages): by
 * default 256, 32 transfers' windows of 8 chunks, 16 MiB of shared
 * memory whose pages are touched only when used. */
/* Stages one transfer may hold (the sink's window is 8 by default). */
#define OFI_STAGES_PER_XFER 16

struct ofi_stage {
  struct ofi_stage *next;
  uint32_t seq;
  uint32_t slot;
};

static struct ofi_stage stages[OFI_PACK_STAGES_MAX];
static uint32_t arena_pid; /* ours, taken with the arena (a system call
                              per chunk otherwise) */

/* ofi.pack_ref, LAPI_OFI_PACK_REF (0 unless shm): 1 (default) or 0;
 * 2 (tests) as 1, but every sink fails to map its peer's arena: the
 * fallback runs. */
int ofi_ref_wanted(const struct ofi_xfer *x)
{
  const struct ofi_peer *p = &ofi.peers[x->peer];
  return ofi.pack_ref && p->pid != 0 && !p->ref_off;
}

int ofi_ref_trusted(uint peer, const struct ofi_data_ref *r)
{
  int pid = ofi.peers[peer].pid;
  return pid != 0 && r->pid == (uint32_t)pid;
}

/* ------------------------------------------------------------- source */

static size_t arena_len(void)
{
  return (size_t)ofi.pack_stages * ofi.chunk;
}

/* Our arena, made at the first reference: 0, or -1 if it cannot be. */
static int arena_make(void)
{
  if (ofi.arena)
    return 0;
  if (ofi.arena_fd < 0)
    return -1; /* tried before */
  ofi.arena_fd = -1;
  int fd = memfd_create("lapi-stage", MFD_CLOEXEC);
  if (fd < 0)
    return -1;
  void *m = MAP_FAILED;
  if (ftruncate(fd, (off_t)arena_len()) == 0)
    m = mmap(NULL, arena_len(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED) {
    close(fd);
    return -1;
  }
  ofi.arena = m;
  ofi.arena_fd = fd;
  arena_pid = (uint32_t)getpid();
  ofi.stage_spare = NULL;
  for (uint32_t k = ofi.pack_stages; k-- > 0;) {
    stages[k].slot = k;
    stages[k].next = ofi.stage_spare;
    ofi.stage_spare = &stages[k];
  }
  return 0;
}

/* Take back the stages of chunks numbered below `landed` (modulo 2^32). */
static void release_landed(struct ofi_xfer *x, uint32_t landed)
{
  struct ofi_stage **pp = &x->staged;
  while (*pp) {
    struct ofi_stage *s = *pp;
    if ((int32_t)(s->seq - landed) < 0) {
      *pp = s->next;
      x->nstaged--;
      s->next = ofi.stage_spare;
      ofi.stage_spare = s;
    } else {
      pp = &s->next;
    }
  }
}

/* Bytes [offset, offset + len) of x's stream packed into a free stage,
 * which x then holds (its newest); NULL if no stage can be had. */
static struct ofi_stage *stage_take(struct ofi_xfer *x, size_t offset,
                                    size_t len)
{
  if (arena_make() != 0 || ofi.stage_spare == NULL)
    return NULL;
  struct ofi_stage *s = ofi.stage_spare;
  ofi.stage_spare = s->next;
  s->seq = x->ref_seq++;
  s->next = x->staged;
  x->staged = s;
  x->nstaged++;
  lapi_vec_pack(x->src, ofi.arena + (size_t)s->slot * ofi.chunk, offset,
                len);
  return s;
}

/* The reference naming len bytes at the start of stage s. */
static void stage_ref(const struct ofi_stage *s, size_t len,
                      struct ofi_data_ref *r)
{
  memset(r, 0, sizeof *r);
  r->off = (size_t)s->slot * ofi.chunk;
  r->len = len;
  r->pid = arena_pid;
  r->fd = (uint32_t)ofi.arena_fd;
  r->seq = s->seq;
}

int ofi_ref_answer(struct ofi_xfer *x, const struct ofi_pull *p)
{
  if (x->staged)
    release_landed(x, p->ref_landed);
  if (!(p->flags & OFI_PULL_REF) || p->stream != OFI_STREAM_DATA ||
      !ofi.pack_ref || x->nstaged >= OFI_STAGES_PER_XFER)
    return -1;
  struct ofi_stage *s = stage_take(x, p->offset, p->len);
  if (s == NULL)
    return -1;
  struct {
    struct ofi_data d;
    struct ofi_data_ref r;
  } m;
  memset(&m, 0, sizeof m);
  ofi_hdr_init(&m.d.h, OFI_M_DATA, p->h.hndl, p->sink, sizeof m);
  m.d.offset = p->offset;
  m.d.stream = OFI_STREAM_DATA;
  m.d.flags = OFI_DATA_REF;
  stage_ref(s, p->len, &m.r);
  if (__builtin_expect(ofi_dropdata_at, 0) && ofi_dropdata_now(x->peer))
    return 0; /* the test hook: lost on the way */
  if (__builtin_expect(ofi_foreignref_kind, 0))
    ofi_fault_foreign_ref(x->peer, &m, sizeof m); /* the test hook */
  ofi_send_small(x->peer, &m, sizeof m); /* owed if no buffer is free */
  return 0;
}

/* A whole mid-size stream in one stage, named in the RTS: the sink
 * copies it from there once its header handler named the destination.
 * Over shm with cross-memory attach a message beyond the eager limit
 * was read by one process_vm_readv, whose fixed cost (2-2.5 us on the
 * AMD guest of docs/PERFORMANCE.md) was most of a 4-16 KiB message's
 * time; two copies and no system call cost less up to a stage.  The
 * stage comes back with the FIN, like any of the transfer's.  The
 * origin's memory stays the transfer's until then, as for a read: a
 * sink that cannot map our arena pulls the stream from it instead. */
int ofi_ref_whole_fits(size_t len)
{
  return ofi.pack_ref && len != 0 && len <= ofi.staged_max &&
         len <= ofi.chunk;
}

int ofi_ref_stage_whole(struct ofi_xfer *x)
{
  const struct ofi_peer *p = &ofi.peers[x->peer];
  if (!ofi_ref_whole_fits(x->data_len) || p->pid == 0 || p->staged_off ||
      stage_take(x, 0, x->data_len) == NULL)
    return -1;
  ofi.st.staged_out++;
  return 0;
}

void ofi_ref_whole_ref(const struct ofi_xfer *x, struct ofi_data_ref *r)
{
  /* its only stage: a sink that pulls it instead flags no REF */
  stage_ref(x->staged, x->data_len, r);
}

void ofi_ref_release_all(struct ofi_xfer *x)
{
  while (x->staged) {
    struct ofi_stage *s = x->staged;
    x->staged = s->next;
    s->next = ofi.stage_spare;
    ofi.stage_spare = s;
  }
  x->nstaged = 0;
}

void ofi_ref_fini(void)
{
  if (ofi.st.ref_chunks)
    LAPI_LOG(LAPI_LOG_INFO, "ofi: %llu packed chunks unpacked from a peer's "
             "stage arena", (unsigned long long)ofi.st.ref_chunks);
  if (ofi.st.staged_out || ofi.st.staged_in || ofi.st.staged_pulled)
    LAPI_LOG(LAPI_LOG_INFO, "ofi: messages staged whole: %llu sent, %llu "
             "copied from a peer's stage, %llu pulled instead",
             (unsigned long long)ofi.st.staged_out,
             (unsigned long long)ofi.st.staged_in,
             (unsigned long long)ofi.st.staged_pulled);
  for (uint k = 0; ofi.peers && k < ofi.ntasks; k++)
    if (ofi.peers[k].arena) {
      munmap(ofi.peers[k].arena, ofi.peers[k].arena_len);
      ofi.peers[k].arena = NULL;
    }
  if (ofi.arena) {
    munmap(ofi.arena, arena_len());
    close(ofi.arena_fd);
  }
  ofi.arena = NULL;
  ofi.arena_fd = 0;
  ofi.stage_spare = NULL;
  ofi_fault_decoy_end();
}

/* --------------------------------------------------------------- sink */

/* Note chunk seq landed; -1 if it is outside the window or came twice. */
static int mark_landed(struct ofi_xfer *x, uint32_t seq)
{
  uint32_t k = seq - x->ref_base;
  if (k >= 256 || (x->ref_mask[k / 64] >> (k % 64) & 1))
    return -1;
  x->ref_mask[k / 64] |= (uint64_t)1 << (k % 64);
  while (x->ref_mask[0] & 1) {
    for (int i = 0; i < 4; i++)
      x->ref_mask[i] = x->ref_mask[i] >> 1 |
                       (i < 3 ? x->ref_mask[i + 1] << 63 : 0);
    x->ref_base++;
  }
  return 0;
}

/* 1 if r may name peer p's stage arena: the one we mapped, or before
 * that a file that is one (arena_make's memfd, seen through /proc), or
 * anything while references from p are off (nothing is opened then).
 * Its pid is p's own (ofi_ref_trusted), and a source keeps one arena for
 * its endpoint's life: another fd is another of its files, whose bytes
 * would land as the chunk's. */
static int names_arena(const struct ofi_peer *p, const struct ofi_data_ref *r)
{
  if (p->arena)
    return p->arena_fd == r->fd;
  if (p->ref_off)
    return 1;
  static const char name[] = "/memfd:lapi-stage";
  char path[64], to[64];
  snprintf(path, sizeof path, "/proc/%u/fd/%u", r->pid, r->fd);
  ssize_t n = readlink(path, to, sizeof to - 1);
  if (n < 0)
    return 1; /* cannot tell: mapping it fails too, and it is asked again */
  to[n] = 0;
  return strncmp(to, name, sizeof name - 1) == 0;
}

/* The peer's arena named by r (checked by names_arena), mapped once:
 * NULL if it cannot be. */
static const unsigned char *peer_arena(uint peer,
                                       const struct ofi_data_ref *r)
{
  struct ofi_peer *p = &ofi.peers[peer];
  if (p->arena)
    return p->arena;
  if (ofi.pack_ref == 2) /* the test setting: every map fails */
    return NULL;
  char path[64];
  snprintf(path, sizeof path, "/proc/%u/fd/%u", r->pid, r->fd);
  /* Non-blocking: a wrong fd naming a FIFO must not stop us. */
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0)
    return NULL;
  struct stat st;
  void *m = MAP_FAILED;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
    m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  if (m == MAP_FAILED)
    return NULL;
  p->arena = m;
  p->arena_len = (size_t)st.st_size;
  p->arena_fd = r->fd;
  return p->arena;
}

/* The bytes r names in peer's arena (checked by names_arena), mapped
 * and inside it; else NULL, and references from peer turn off: no PULL
 * of ours flags REF to it again, what it staged is pulled. */
static const unsigned char *arena_bytes(uint peer,
                                        const struct ofi_data_ref *r)
{
  struct ofi_peer *p = &ofi.peers[peer];
  const unsigned char *a = p->ref_off ? NULL : peer_arena(peer, r);
  if (a && r->off <= p->arena_len && r->len <= p->arena_len - r->off)
    return a + r->off;
  p->ref_off = 1;
  return NULL;
}

const unsigned char *ofi_ref_whole(uint peer, const struct ofi_data_ref *r,
                                   uint64_t len, int *forged)
{
  struct ofi_peer *p = &ofi.peers[peer];
  *forged = 0;
  if (!ofi.pack_ref || p->pid == 0 || p->ref_off)
    return NULL; /* not proven, or not readable: pulled */
  if (!ofi_ref_trusted(peer, r) || !names_arena(p, r) || r->len != len) {
    *forged = 1;
    return NULL;
  }
  return arena_bytes(peer, r);
}

int ofi_ref_land(struct ofi_xfer *x, const struct ofi_data *d,
                 const struct ofi_data_ref *r)
{
  struct ofi_peer *p = &ofi.peers[x->peer];
  /* Only where we ask for them: shm, same host (a reference from a
   * peer we stopped asking was already in flight: answered below). */
  if (!ofi.pack_ref)
    return -1;
  if (!names_arena(p, r))
    return -2; /* before it counts as landed: the real one may follow */
  if (mark_landed(x, r->seq) != 0)
    return -1;
  const unsigned char *a = arena_bytes(x->peer, r);
  if (a) {
    lapi_vec_unpack(x->dest, a, (size_t)d->offset, (size_t)r->len);
    ofi.st.ref_chunks++;
    return 1;
  }
  /* Not readable: this range again, in a packet (references from this
   * peer are off now).  The pull stays in flight: that DATA answers it. */
  ofi_pull_send(x, OFI_STREAM_DATA, d->offset, (size_t)r->len, 0);
  return 0;
}
