/*
 * ofi_fault.c - test hooks that put faults on the wire and into memory.
 *
 * LAPI_OFI_TEST_MANGLE=N: every Nth packet this process sends is followed
 * by a deliberately invalid copy of it (the real packet is sent unchanged,
 * so nothing is lost).  Each copy carries one fault of enum ofi_bad, the
 * class injected least so far among those the packet's type allows:
 *   MAGIC   the magic flipped
 *   LEN     the length field 8 more than the bytes sent
 *   SHORT   cut below its type's fixed part (or below a header)
 *   TYPE    a type that does not exist
 *   SENDER  a sender outside the job
 *   HNDL    a handle value beyond LAPI_AM_MAX_HANDLES
 *   ACK     ack_done 2^30 beyond what was stamped
 *   STALE   FIN, DATA, PULL, RMW_REPLY, UNKNOWN: the id of a transfer
 *           that is gone (an older generation of its slot) or never was
 *           (a slot far beyond any table); FIN_LIST: every entry's id so;
 *           UNKNOWN DATA: every other one the id kept and the ask
 *           number one the sink never sent (2^31 away from it)
 *   DATA    DATA at an offset 2^62 beyond the one pulled
 *   CHUNK   DATA one chunk and 8 bytes long (no PULL is answered by more
 *           than a chunk per DATA): its bytes padded when the buffer has
 *           room (the headroom of the default sizes), else a reference
 *           (OFI_DATA_REF) of that length
 *   RTS     RTS whose uhdr, inline description or eager data length is 8
 *           more than the packet holds (sent without NO_FIN, so that a
 *           copy overtaking the real one cannot take its number); SHORT
 *           whose uhdr runs past its end, numbered 2^31 beyond the real
 *           one (outside the window) for the same reason
 *   NAK     NAK with status LAPI_SUCCESS, or quoting a message numbered
 *           2^31 beyond the real one (never sent)
 * Every copy is invalid whatever arrived before it: a receiver that
 * accepted one would be wrong.  Copies are counted by class; the
 * receiver's drops are counted by the same classes (ofi_drop), so a test
 * can compare the two (ofi_fault_counts).
 *
 * LAPI_OFI_TEST_NOMEM=N: every Nth packet buffer allocation
 * (ofi_buf_get) fails, as under memory exhaustion; everything that must
 * still be sent is owed and sent later (ofi_send.c).
 *
 * LAPI_OFI_TEST_BAD_KEY=N: every Nth RTS that hands its data over by RMA
 * and every Nth GET the target writes back (OFI_GET_WRITE) advertises a
 * region the peer cannot use: with provider RMA a wrong key (tcp;ofi_rxm
 * then stops serving that connection, no error completion ever comes),
 * with CMA an address not mapped here (the read or write fails at once).
 * Only the packet's copy is changed: our own region stays registered.
 *
 * LAPI_OFI_TEST_DROP_NOFIN=N: the Nth message this process sends without
 * a FIN (a no-FIN RTS or a SHORT, counted from 1) is never posted, as if
 * a connection closed under it: it is counted as sent here and never
 * arrives (ofi_ask.c must find it lost).  Counted only while the hook
 * is on, once: a white-box test may set ofi_dropnofin_at again.
 *
 * LAPI_OFI_TEST_DROP_DATA=N: the Nth DATA this process sends (an answer
 * to a PULL, carried or by reference, counted from 1 while the hook is
 * on) is never sent: its sink waits for it (ofi_ask.c must find it
 * lost).  Tested where PULLs are answered (ofi_origin.c, ofi_packref.c),
 * not on every packet's way.  Once, like DROP_NOFIN; a white-box test
 * may set ofi_dropdata_at again.
 *
 * LAPI_OFI_TEST_OWED_NOMEM=N: the Nth UNKNOWN this process owes behind
 * packets owed to its asker (ofi_owe_unknown, counted from 1 while the
 * hook is on; not one owed again by the retry pass, whose record is
 * always at hand) finds no record to be owed in, as if no spare were
 * left and malloc failed: it is dropped (ofi.st.unknowns_dropped) and
 * the asker must ask again; the peer must not fail.  Once, like
 * DROP_NOFIN; a white-box test may set ofi_owednomem_at again.
 *
 * LAPI_OFI_TEST_DEAF_ACKS=1: ACK_REQs and ASKs about no-FIN messages
 * that arrive here get no answer (ofi_ack.c), as if they came after this
 * task closed; its counts still ride on every packet it sends, and
 * LAPI_Term sends what the peers have not heard (ofi_ack_final).  A
 * white-box test may set ofi_deaf_acks in one task.
 *
 * LAPI_OFI_TEST_FOREIGN_REF=KIND: every DATA by reference this process
 * sends (ofi_packref.c) is preceded by a forged copy that names a decoy
 * instead of our stage arena: a memfd of the arena's size, full of
 * DECOY_BYTE.  KIND 1: the decoy is named lapi-stage, as an arena is, and
 * a child process of ours holds it open (another pid); KIND 2: we hold it
 * (our pid, another fd), named lapi-decoy.  A sink that trusted the pid
 * or the fd a reference names would unpack the decoy's bytes (the very
 * first reference is a forged one), then drop the real reference as
 * landed twice; it must drop the copy (OFI_BAD_REF) and land the real
 * one.  Counted as injected class OFI_BAD_REF (ofi_fault_counts).
 *
 * Everything here runs under ofi.lock.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "transport/ofi/ofi.h"

int ofi_mangle_every;
int ofi_nomem_every;
int ofi_badkey_every;
int ofi_dropnofin_at;
int ofi_deaf_acks;
int ofi_dropdata_at;
int ofi_owednomem_at;
int ofi_foreignref_kind;
#define DECOY_BYTE 0xd5
static pid_t decoy_pid; /* who holds the decoy, 0: none yet */
static int decoy_fd = -1;
static int decoy_child; /* decoy_pid is a child of ours */
static unsigned long mangle_count, nomem_count, badkey_count, nofin_count;
static unsigned long data_count, owednomem_count;
static uint64_t injected[OFI_BAD_N];
static unsigned stale_flip; /* alternates gone / never existed */
static unsigned nak_flip;   /* alternates the two NAK faults */
static unsigned ask_flip;   /* alternates the two UNKNOWN DATA faults */

static int env_every(const char *name)
{
  const char *v = getenv(name);
  if (v == NULL || *v == '\0')
    return 0;
  long n = strtol(v, NULL, 10);
  return n > 0 && n < 1000000 ? (int)n : 0;
}

void ofi_fault_settings(void)
{
  ofi_mangle_every = env_every("LAPI_OFI_TEST_MANGLE");
  ofi_nomem_every = env_every("LAPI_OFI_TEST_NOMEM");
  ofi_badkey_every = env_every("LAPI_OFI_TEST_BAD_KEY");
  ofi_dropnofin_at = env_every("LAPI_OFI_TEST_DROP_NOFIN");
  ofi_deaf_acks = env_every("LAPI_OFI_TEST_DEAF_ACKS") != 0;
  ofi_dropdata_at = env_every("LAPI_OFI_TEST_DROP_DATA");
  ofi_owednomem_at = env_every("LAPI_OFI_TEST_OWED_NOMEM");
  ofi_foreignref_kind = env_every("LAPI_OFI_TEST_FOREIGN_REF");
  if (ofi_foreignref_kind > 2)
    ofi_foreignref_kind = 0;
  mangle_count = nomem_count = badkey_count = nofin_count = 0;
  data_count = owednomem_count = 0;
  stale_flip = nak_flip = ask_flip = 0;
  memset(injected, 0, sizeof injected);
  if (ofi_mangle_every || ofi_nomem_every)
    LAPI_LOG(LAPI_LOG_INFO, "ofi: test hooks on: an invalid copy after "
             "every %d-th packet, every %d-th buffer allocation fails",
             ofi_mangle_every, ofi_nomem_every);
  if (ofi_badkey_every)
    LAPI_LOG(LAPI_LOG_INFO, "ofi: test hook on: every %d-th RMA offer "
             "names a region the peer cannot use", ofi_badkey_every);
  if (ofi_dropnofin_at)
    LAPI_LOG(LAPI_LOG_INFO, "ofi: test hook on: no-FIN message %d is "
             "never sent", ofi_dropnofin_at);
  if (ofi_owednomem_at)
    LAPI_LOG(LAPI_LOG_INFO, "ofi: test hook on: UNKNOWN %d owed behind "
             "packets to its asker finds no record", ofi_owednomem_at);
  if (ofi_deaf_acks)
    LAPI_LOG(LAPI_LOG_INFO, "ofi: test hook on: ACK_REQs and ASKs about "
             "no-FIN messages are not answered");
  if (ofi_foreignref_kind)
    LAPI_LOG(LAPI_LOG_INFO, "ofi: test hook on: every DATA by reference "
             "follows a forged one naming %s", ofi_foreignref_kind == 1 ?
             "another process's file" : "another file of ours");
}

void ofi_badkey_apply(struct ofi_seg *segs, uint32_t nseg)
{
  if (!ofi_badkey_every || nseg == 0 ||
      ++badkey_count % (unsigned)ofi_badkey_every)
    return;
  if (ofi.cma)
    segs[0].addr = 4096; /* below mmap_min_addr: never mapped */
  else
    segs[0].key ^= 0x5a5a5a5a00000000ull | 0x3c3c;
}

int ofi_dropnofin_now(const struct ofi_buf *b)
{
  const struct ofi_hdr *hd = (const struct ofi_hdr *)b->mem;
  if (hd->type == OFI_M_SHORT ||
      (hd->type == OFI_M_RTS &&
       (((const struct ofi_rts *)b->mem)->flags & OFI_RTS_NO_FIN))) {
    if (++nofin_count != (unsigned long)ofi_dropnofin_at)
      return 0;
    ofi_dropnofin_at = 0; /* once (a test may set it again) */
    nofin_count = 0;
    LAPI_LOG(LAPI_LOG_INFO, "ofi: test hook: no-FIN message %u to task "
             "%u not sent", (unsigned)hd->id, b->peer);
    return 1;
  }
  return 0;
}

int ofi_dropdata_now(uint peer)
{
  if (++data_count != (unsigned long)ofi_dropdata_at)
    return 0;
  ofi_dropdata_at = 0; /* once (a test may set it again) */
  data_count = 0;
  LAPI_LOG(LAPI_LOG_INFO, "ofi: test hook: a DATA to task %u not sent",
           peer);
  return 1;
}

int ofi_owednomem_now(uint peer)
{
  if (++owednomem_count != (unsigned long)ofi_owednomem_at)
    return 0;
  ofi_owednomem_at = 0; /* once (a test may set it again) */
  owednomem_count = 0;
  LAPI_LOG(LAPI_LOG_INFO, "ofi: test hook: an UNKNOWN owed to task %u "
           "finds no record", peer);
  return 1;
}

int ofi_nomem_now(void)
{
  return ofi_nomem_every && ++nomem_count % (unsigned)ofi_nomem_every == 0;
}

/* Can a copy of this packet carry fault cls? */
static int class_fits(enum ofi_bad cls, int type)
{
  switch (cls) {
  case OFI_BAD_STALE:
    return type == OFI_M_FIN || type == OFI_M_DATA || type == OFI_M_PULL ||
           type == OFI_M_RMW_REPLY || type == OFI_M_FIN_LIST ||
           type == OFI_M_UNKNOWN;
  case OFI_BAD_DATA:
  case OFI_BAD_CHUNK: return type == OFI_M_DATA;
  case OFI_BAD_RTS: return type == OFI_M_RTS || type == OFI_M_SHORT;
  case OFI_BAD_NAK: return type == OFI_M_NAK;
  case OFI_BAD_OTHER:
  case OFI_BAD_REF: /* its own hook: ofi_fault_foreign_ref */
  case OFI_BAD_N: return 0;
  default: return 1;
  }
}

/* The fitting class injected least so far (the rare types' classes get
 * their turn whenever such a packet comes). */
static enum ofi_bad pick_class(int type)
{
  enum ofi_bad best = OFI_BAD_OTHER;
  for (int c = OFI_BAD_OTHER + 1; c < OFI_BAD_N; c++)
    if (class_fits((enum ofi_bad)c, type) &&
        (best == OFI_BAD_OTHER || injected[c] < injected[best]))
      best = (enum ofi_bad)c;
  return best;
}

/* An id no live transfer of the receiver has. */
static uint64_t dead_id(uint64_t id)
{
  uint32_t gen = (uint32_t)(id >> 32), slot = (uint32_t)id;
  if (stale_flip++ % 2)
    return (uint64_t)gen << 32 | 0xfffffff0u; /* never existed */
  return (uint64_t)(gen - 1) << 32 | slot;    /* gone: older generation */
}

static void rts_overflow(struct ofi_rts *r)
{
  r->flags = 0; /* its number stays the real packet's */
  r->seq = 0;
  if (r->desc_inline && r->desc_len && r->h.id % 3 == 1)
    r->desc_len += 8;
  else if (r->mode == OFI_MODE_EAGER && r->h.id % 3 == 2)
    r->data_len += 8;
  else
    r->uhdr_len += 8;
}

/* The DATA copy m of len bytes made a chunk and 8 bytes long; returns
 * its length. */
static size_t data_overlong(unsigned char *m, size_t len)
{
  struct ofi_data *d = (struct ofi_data *)m;
  size_t carried = sizeof *d + ofi.chunk + 8;
  if (d->flags == 0 && carried <= ofi.buf_size) {
    memset(m + len, 0xa5, carried - len);
    d->h.len = (uint32_t)carried;
    return carried;
  }
  struct ofi_data_ref *r = (struct ofi_data_ref *)(d + 1);
  if (d->flags != OFI_DATA_REF) {
    memset(r, 0, sizeof *r);
    d->flags = OFI_DATA_REF;
    len = sizeof *d + sizeof *r;
    d->h.len = (uint32_t)len;
  }
  r->len = ofi.chunk + 8;
  return len;
}

/* Puts fault cls into the copy m of len bytes; returns its length. */
static size_t mangle(unsigned char *m, size_t len, enum ofi_bad cls)
{
  struct ofi_hdr *hd = (struct ofi_hdr *)m;
  switch (cls) {
  case OFI_BAD_MAGIC: hd->magic ^= 0x00ff00ffu; break;
  case OFI_BAD_LEN: hd->len = (uint32_t)len + 8; break;
  case OFI_BAD_SHORT: {
    size_t fixed = ofi_pkt_min(hd->type);
    len = fixed > sizeof *hd ? fixed - 8 : sizeof *hd - 8;
    hd->len = (uint32_t)len;
    break;
  }
  case OFI_BAD_TYPE: hd->type = (uint8_t)(OFI_M_LAST + 7); break;
  case OFI_BAD_SENDER: hd->src = ofi.ntasks + 5; break;
  case OFI_BAD_HNDL:
    hd->hndl = (uint16_t)((hd->hndl & 0xff00) | 0xff);
    break;
  case OFI_BAD_ACK: hd->ack_done += 0x40000000u; break;
  case OFI_BAD_STALE:
    if (hd->type == OFI_M_FIN_LIST) {
      /* every entry: none may end a live transfer a second time */
      struct ofi_fin_list *l = (struct ofi_fin_list *)m;
      struct ofi_fin_entry *e = (struct ofi_fin_entry *)(l + 1);
      for (uint32_t i = 0; i < l->n && sizeof *l + (i + 1) * sizeof *e <= len;
           i++)
        e[i].id = dead_id(e[i].id);
    } else if (hd->type == OFI_M_UNKNOWN &&
               ((struct ofi_ask *)m)->what == OFI_ASK_DATA && ask_flip++ % 2)
      ((struct ofi_ask *)m)->ask_no ^= 0x80000000u; /* never 0 */
    else
      hd->id = dead_id(hd->id);
    break;
  case OFI_BAD_DATA:
    ((struct ofi_data *)m)->offset += (uint64_t)1 << 62;
    break;
  case OFI_BAD_CHUNK: len = data_overlong(m, len); break;
  case OFI_BAD_RTS:
    if (hd->type == OFI_M_SHORT) {
      /* its uhdr runs past the end; its number lies outside the window,
       * so that the copy cannot take (and NAK) the real one's */
      ((struct ofi_short *)m)->uhdr_len = (uint16_t)(len & ~(size_t)3);
      hd->id = (hd->id & ~(uint64_t)UINT32_MAX) |
               (uint32_t)((uint32_t)hd->id + 0x80000000u);
    } else
      rts_overflow((struct ofi_rts *)m);
    break;
  case OFI_BAD_NAK: {
    struct ofi_nak *n = (struct ofi_nak *)m;
    if (nak_flip++ % 2)
      n->status = LAPI_SUCCESS;
    else
      n->h.id = (uint32_t)(n->h.id + 0x80000000u);
    break;
  }
  default: break;
  }
  return len;
}

void ofi_mangle_after(const struct ofi_buf *b)
{
  if (!ofi_mangle_every || ++mangle_count % (unsigned)ofi_mangle_every)
    return;
  const struct ofi_hdr *hd = (const struct ofi_hdr *)b->mem;
  enum ofi_bad cls = pick_class(hd->type);
  if (cls == OFI_BAD_OTHER)
    return;
  /* Not ofi_buf_get: the nomem hook must not cost copies. */
  struct ofi_buf *m = ofi_buf_take();
  if (m == NULL)
    return;
  memcpy(m->mem, b->mem, b->len - b->zc_len);
  if (b->zc_len) /* sent from the caller's memory (ofi_send.c) */
    memcpy(m->mem + b->len - b->zc_len, b->zc_data, b->zc_len);
  m->peer = b->peer;
  m->xfer = 0;
  m->len = mangle(m->mem, b->len, cls);
  int inj;
  int rc = ofi_post_raw(m, &inj);
  if (rc != 0 || inj)
    ofi_buf_put(m);
  if (rc == 0)
    injected[cls]++; /* -FI_EAGAIN: this one is simply not sent */
}

void ofi_fault_counts(uint64_t inj[OFI_BAD_N], uint64_t dropped[OFI_BAD_N])
{
  pthread_mutex_lock(&ofi.lock);
  memcpy(inj, injected, sizeof injected);
  memcpy(dropped, ofi.st.dropped, sizeof ofi.st.dropped);
  dropped[OFI_BAD_STALE] = ofi.st.stale_pkts;
  pthread_mutex_unlock(&ofi.lock);
}

/* The decoy: a memfd of len bytes, held open by a child (KIND 1) or by
 * us (0 on success).  The child only waits to be killed, with us at the
 * latest. */
static int decoy_make(size_t len)
{
  int child = ofi_foreignref_kind == 1;
  int fd = memfd_create(child ? "lapi-stage" : "lapi-decoy", MFD_CLOEXEC);
  if (fd < 0)
    return -1;
  void *m = MAP_FAILED;
  if (ftruncate(fd, (off_t)len) == 0)
    m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED) {
    close(fd);
    return -1;
  }
  memset(m, DECOY_BYTE, len);
  munmap(m, len);
  pid_t parent = getpid();
  if (!child) {
    decoy_pid = parent;
    decoy_fd = fd;
    return 0;
  }
  pid_t c = fork();
  if (c == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
      _exit(0);
    for (;;)
      pause();
  }
  close(fd); /* the child keeps it, by the same number */
  if (c < 0)
    return -1;
  decoy_pid = c;
  decoy_fd = fd;
  decoy_child = 1;
  return 0;
}

void ofi_fault_foreign_ref(uint peer, const void *pkt, size_t len)
{
  if (decoy_pid == 0 && decoy_make((size_t)ofi.pack_stages * ofi.chunk) != 0)
    return;
  unsigned char m[sizeof(struct ofi_data) + sizeof(struct ofi_data_ref)];
  if (len != sizeof m)
    return;
  memcpy(m, pkt, len);
  struct ofi_data_ref *r =
      (struct ofi_data_ref *)(m + sizeof(struct ofi_data));
  r->pid = (uint32_t)decoy_pid;
  r->fd = (uint32_t)decoy_fd;
  ofi_send_small(peer, m, len); /* before the real one, in order */
  injected[OFI_BAD_REF]++;
}

void ofi_fault_decoy_end(void)
{
  if (decoy_child) {
    kill(decoy_pid, SIGKILL);
    waitpid(decoy_pid, NULL, 0);
  } else if (decoy_pid > 0) {
    close(decoy_fd);
  }
  decoy_pid = 0;
  decoy_fd = -1;
  decoy_child = 0;
}

void ofi_fault_mangle_stop(void)
{
  pthread_mutex_lock(&ofi.lock);
  ofi_mangle_every = 0;
  pthread_mutex_unlock(&ofi.lock);
}
