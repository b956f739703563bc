/*
 * ofi_fabric.c - the endpoint of this core group: provider choice,
 * fabric / domain / CQ / AV / endpoint, the address exchange, memory
 * registration, and the transport's LAPI_Init / LAPI_Term.
 *
 * The endpoint opens with the first handle and closes with the last.
 * Provider: LAPI_PROVIDER, else FI_PROVIDER, else "shm" when every CG of
 * the job is on this host (bootstrap local_size == size) and
 * "tcp;ofi_rxm" otherwise.  A network provider binds to LAPI_OFI_IFACE
 * (a libfabric domain name such as eth0) when set, else to 127.0.0.1
 * when the whole job is on this host, else to the provider's default.
 * Every handle's init ends with a bootstrap barrier, so no task sends on
 * a handle before every task serves it; the last fini flushes our sends
 * and meets the others in a barrier before the endpoint closes, so no
 * FIN in flight is lost.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "transport/boot/boot.h"
#include "transport/ofi/ofi.h"
#include "transport/ofi/ofi_shm_sweep.h"

#define ADDR_REC 256 /* bytes per CG in the address all-gather */
/* ... followed by its CMA card (ofi_cma.c) */
#define CARD_REC (ADDR_REC + sizeof(struct ofi_cma_card))

struct ofi_state ofi = {.lock = PTHREAD_MUTEX_INITIALIZER, .wait_fd = -1,
                        .kick_fd = -1, .tpc = 1};

/* Coarse (a few ms): it stamps every packet received, and what it times
 * is counted in seconds (silence, TIMEOUT) or hundreds of ms. */
int64_t ofi_now_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static size_t env_size(const char *name, size_t dflt, size_t lo, size_t hi)
{
  const char *s = getenv(name);
  if (s == NULL || *s == '\0')
    return dflt;
  char *end;
  unsigned long long v = strtoull(s, &end, 0);
  if (*end == 'k' || *end == 'K')
    v <<= 10, end++;
  else if (*end == 'm' || *end == 'M')
    v <<= 20, end++;
  if (*end != '\0' || v < lo || v > hi) {
    LAPI_LOG(LAPI_LOG_ASYNC, "ofi: %s=%s is not a number in %zu..%zu; "
             "using %zu", name, s, lo, hi, dflt);
    return dflt;
  }
  return (size_t)v;
}

/* A yes/no setting: unset or empty -> dflt, "0" -> no, else yes. */
static int env_flag(const char *name, int dflt)
{
  const char *s = getenv(name);
  if (s == NULL || *s == '\0')
    return dflt;
  return strcmp(s, "0") != 0;
}

int ofi_timeout_s(void)
{
  int t = LAPI_AM_TIMEOUT_MAX;
  for (unsigned i = 0; i < lapi_hndl_limit(); i++)
    if (ofi.hmap[i]) {
      int v = __atomic_load_n(&ofi.hmap[i]->timeout, __ATOMIC_RELAXED);
      if (v > 0 && v < t)
        t = v;
    }
  return t;
}

/* ------------------------------------------------------ registration */

int ofi_mr_reg(void *addr, size_t len, uint64_t access, struct fid_mr **mr)
{
  int rc = fi_mr_reg(ofi.domain, addr, len, access, 0, ofi.next_key++, 0, mr,
                     NULL);
  if (rc)
    return rc;
  if (ofi.mr_mode & FI_MR_ENDPOINT) {
    rc = fi_mr_bind(*mr, &ofi.ep->fid, 0);
    if (rc == 0)
      rc = fi_mr_enable(*mr);
    if (rc) {
      fi_close(&(*mr)->fid);
      *mr = NULL;
    }
  }
  return rc;
}

void ofi_mr_close(struct fid_mr *mr)
{
  if (mr)
    fi_close(&mr->fid);
}

/* ------------------------------------------------------ provider choice */

static struct fi_info *try_info(const char *prov, const char *node,
                                const char *iface, uint64_t caps, int safe)
{
  struct fi_info *hints = fi_allocinfo(), *info = NULL;
  if (hints == NULL)
    return NULL;
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps = caps;
  hints->mode = FI_CONTEXT | FI_CONTEXT2;
  hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
                                FI_MR_PROV_KEY | FI_MR_ALLOCATED |
                                FI_MR_ENDPOINT;
  hints->domain_attr->threading = safe ? FI_THREAD_SAFE : FI_THREAD_DOMAIN;
  if (prov)
    hints->fabric_attr->prov_name = strdup(prov);
  if (iface)
    hints->domain_attr->name = strdup(iface);
  int rc = fi_getinfo(FI_VERSION(1, 9), node, NULL, node ? FI_SOURCE : 0,
                      hints, &info);
  fi_freeinfo(hints);
  return rc ? NULL : info;
}

/* Between hosts a loopback domain reaches nobody: take the first other
 * one.  Returns the list with the chosen entry first (the rest freed). */
static struct fi_info *not_loopback(struct fi_info *list)
{
  struct fi_info *pick = list;
  for (struct fi_info *i = list; i; i = i->next)
    if (i->domain_attr->name && strcmp(i->domain_attr->name, "lo") != 0) {
      pick = i;
      break;
    }
  struct fi_info *one = fi_dupinfo(pick);
  fi_freeinfo(list);
  return one;
}

static struct fi_info *choose(const char *prov, int local)
{
  const char *iface = getenv("LAPI_OFI_IFACE");
  if (iface && *iface == '\0')
    iface = NULL;
  int shm = prov && strcmp(prov, "shm") == 0;
  const char *node = (!shm && !iface && local) ? "127.0.0.1" : NULL;
  static const uint64_t caps[2] = {FI_MSG | FI_RMA, FI_MSG};
  for (int c = 0; c < 2; c++)
    for (int safe = 1; safe >= 0; safe--) {
      struct fi_info *i = try_info(prov, node, shm ? NULL : iface, caps[c],
                                   safe);
      if (i)
        return !shm && !iface && !local ? not_loopback(i) : i;
    }
  return NULL;
}

/* ---------------------------------------------------------- open/close */

static void settings(void)
{
  ofi.buf_size = env_size("LAPI_OFI_BUF_SIZE", 65536, 4096, 1u << 24);
  /* SIZE_MAX: not set (read_defaults lowers the default on shm) */
  ofi.eager_limit = env_size("LAPI_EAGER_LIMIT", SIZE_MAX, 0, 1u << 24);
  ofi.eager_user = ofi.eager_limit != SIZE_MAX;
  if (!ofi.eager_user)
    ofi.eager_limit = 16384;
  /* 0: not set (the provider decides the default) */
  ofi.min_rma_block = env_size("LAPI_RDV_MIN_BLOCK", 0, 1, SIZE_MAX);
  ofi.min_block_user = ofi.min_rma_block != 0;
  ofi.nrecv = (int)env_size("LAPI_OFI_RECV_BUFS", 64, 4, 4096);
  ofi.credits = (int)env_size("LAPI_OFI_CREDITS", 64, 1, 65536);
  ofi.read_window = (int)env_size("LAPI_OFI_WINDOW", 8, 1, 256);
  /* 0: not set (by the provider, below) */
  ofi.pull_window = (int)env_size("LAPI_OFI_PULL_WINDOW", 0, 1, 256);
  ofi.pull_budget = (long)env_size("LAPI_OFI_PULL_BUDGET", 0, 1, 65536);
  /* 0: not set (by the provider, below) */
  ofi.pull_batch = (int)env_size("LAPI_OFI_PULL_BATCH", 0, 1,
                                 OFI_PULL_BATCH_MAX);
  /* SIZE_MAX: not set (half the posted receive buffers, below) */
  ofi.rx_hold_max = (int)env_size("LAPI_OFI_RX_HOLD", SIZE_MAX, 0, 4096);
  ofi.ref_budget = (long)env_size("LAPI_OFI_REF_BUDGET", 8, 1, 65536);
  ofi.pack_ref = (int)env_size("LAPI_OFI_PACK_REF", 1, 0, 2);
  ofi.pack_stages = (uint32_t)env_size("LAPI_OFI_PACK_STAGES", 256, 1,
                                          OFI_PACK_STAGES_MAX);
  ofi.staged_max = env_size("LAPI_OFI_STAGED_MAX", 16384, 0, 1u << 30);
  /* SIZE_MAX: not set (read_defaults: 1 MiB over tcp, else 4 MiB) */
  ofi.max_read = env_size("LAPI_OFI_MAX_READ", SIZE_MAX, 4096, 1u << 30);
  /* SIZE_MAX: not set (the provider decides the default) */
  ofi.fast_read = env_size("LAPI_OFI_FAST_READ", SIZE_MAX, 0, 1u << 30);
  ofi.fin_always = env_flag("LAPI_OFI_FIN_ALWAYS", 0);
  ofi.cmpl_by_count = env_flag("LAPI_OFI_CMPL_BY_COUNT", 1);
  ofi.fin_list = env_flag("LAPI_OFI_FIN_LIST", 1);
  ofi.fin_list_bytes =
      env_size("LAPI_OFI_FIN_LIST_BYTES", 1u << 20, 0, SIZE_MAX);
  ofi.direct = env_flag("LAPI_OFI_DIRECT", 1);
  ofi.lane_want = env_flag("LAPI_OFI_LANE", 1);
  ofi.lane_bytes = env_size("LAPI_OFI_LANE_BYTES", 262144, 16384, 1u << 30);
  ofi.get_write_ok = env_flag("LAPI_OFI_GET_WRITE", 1);
  /* SIZE_MAX: not set (send_defaults) */
  ofi.zcopy_min = env_size("LAPI_OFI_ZCOPY", SIZE_MAX, 0, SIZE_MAX - 1);
  ofi.write_fault = (long)env_size("LAPI_OFI_TEST_WRITE_FAULT", 0, 0,
                                   1u << 30);
  ofi_fault_settings();
}

/* ofi_rxm sends a message above its eager limit (16 KiB) by rendezvous:
 * a request, the receiver's RMA read of it, a done message.  For a
 * packed chunk (a DATA of up to LAPI_OFI_BUF_SIZE) that is a second
 * round trip, through both sides' progress, per chunk: the STRIDED 1 MiB
 * in 64 B ping-pong over tcp;ofi_rxm took ~850 us with it, ~450 us
 * without (docs/PERFORMANCE.md).  Our messages are never longer than a
 * packet buffer and every one lands in a posted buffer of that size
 * (the sink bounds its PULLs, ofi_sink.c), so rxm may send all of them
 * eagerly: over tcp it then writes the buffer straight to the socket and
 * the receiver reads it straight into the posted buffer.  Read by rxm
 * when it loads, at the first fi_getinfo: set before it, and only when
 * the user did not set it.  LAPI_OFI_RXM_EAGER=0 leaves rxm's default. */
static void rxm_eager_packets(void)
{
  if (!env_flag("LAPI_OFI_RXM_EAGER", 1) ||
      getenv("FI_OFI_RXM_EAGER_LIMIT"))
    return;
  char v[32];
  /* With the headroom eager_whole_buffers may add: rxm loads before we
   * know which provider we get. */
  snprintf(v, sizeof v, "%zu",
           ofi.buf_size + (ofi.eager_user ? 0 : OFI_EAGER_HEADROOM));
  setenv("FI_OFI_RXM_EAGER_LIMIT", v, 0);
}

static int rma_by_messages(void);

/* Where an RMA read is a request and a response through both sides'
 * progress (tcp), the rendezvous of a message of up to a packet buffer
 * (RTS, read request, read response, FIN) cost four trips through both
 * kernels against raw libfabric's one: such messages go eagerly, one
 * packet (a copy at each end), in a buffer grown by the headroom their
 * headers need, unless LAPI_EAGER_LIMIT was set.  GETs do not follow:
 * where their target may write the origin's buffer by RMA
 * (OFI_GET_WRITE), a get beyond OFI_GET_EAGER_WRITTEN is written, two
 * messages and no copy, which beat an eager answer (64 KiB Get streamed
 * over tcp;ofi_rxm ~0.73 of raw written, ~0.5 eager: docs/PERFORMANCE.md,
 * "Mid-size messages over tcp, session 10"; 6-16 KiB too, "Session 19");
 * elsewhere they keep the default limit. */
static void eager_whole_buffers(void)
{
  ofi.get_eager_limit = ofi.eager_limit;
  if (ofi.eager_user || !rma_by_messages() ||
      ofi.buf_size + OFI_EAGER_HEADROOM > ofi.max_msg)
    return;
  ofi.eager_limit = ofi.buf_size;
  ofi.buf_size += OFI_EAGER_HEADROOM;
  if (ofi.rma_write && ofi.get_write_ok &&
      ofi.get_eager_limit > OFI_GET_EAGER_WRITTEN)
    ofi.get_eager_limit = OFI_GET_EAGER_WRITTEN;
}

static int provider_up(struct lapi_boot *b)
{
  rxm_eager_packets();
  const char *prov = getenv("LAPI_PROVIDER");
  if (prov == NULL || *prov == '\0')
    prov = getenv("FI_PROVIDER");
  if (prov && *prov == '\0')
    prov = NULL;
  int local = b->local_size == b->size;
  const char *dflt = local ? "shm" : "tcp;ofi_rxm";
  ofi.info = choose(prov ? prov : dflt, local);
  if (ofi.info == NULL && prov == NULL && local)
    ofi.info = choose("tcp;ofi_rxm", local);
  if (ofi.info == NULL) {
    LAPI_LOG(LAPI_LOG_ASYNC, "ofi: no libfabric provider \"%s\" gives a "
             "reliable datagram (FI_EP_RDM) endpoint here: check `fi_info "
             "-t FI_EP_RDM` and choose one with lapirun's --provider or "
             "LAPI_PROVIDER (shm, tcp;ofi_rxm, udp;ofi_rxd, sockets, net)",
             prov ? prov : dflt);
    return LAPI_ERR_NO_CONNECTIVITY;
  }
  struct fi_info *i = ofi.info;
  snprintf(ofi.prov, sizeof ofi.prov, "%s", i->fabric_attr->prov_name);
  ofi.has_rma = (i->caps & FI_RMA) && (i->caps & FI_READ) &&
                !getenv("LAPI_OFI_NO_RMA");
  /* A GET's target may write the origin's buffer by RMA (OFI_GET_WRITE)
   * where its FIN, sent once the write completed, cannot overtake the
   * written data (FI_ORDER_SAW: tcp;ofi_rxm has it, one connection per
   * pair of endpoints).  On both sides: ordering holds only where the
   * receiving side (the origin, which takes the write, then the FIN)
   * orders too (fi_endpoint(3), msg_order). */
  ofi.rma_write = ofi.has_rma && (i->caps & FI_WRITE) &&
                  (i->caps & FI_REMOTE_WRITE) &&
                  (i->tx_attr->msg_order & FI_ORDER_SAW) &&
                  (i->rx_attr->msg_order & FI_ORDER_SAW);
  ofi.mr_mode = (uint64_t)i->domain_attr->mr_mode;
  ofi.inject_size = i->tx_attr->inject_size;
  ofi.iov_limit = i->tx_attr->iov_limit ? i->tx_attr->iov_limit : 1;
  ofi.rma_iov_limit = i->tx_attr->rma_iov_limit ? i->tx_attr->rma_iov_limit
                                                 : 1;
  if (ofi.iov_limit > OFI_READ_IOV)
    ofi.iov_limit = OFI_READ_IOV;
  if (ofi.rma_iov_limit > OFI_READ_IOV)
    ofi.rma_iov_limit = OFI_READ_IOV;
  ofi.max_msg = i->ep_attr->max_msg_size;
  if (ofi.buf_size > ofi.max_msg)
    ofi.buf_size = ofi.max_msg;
  ofi.chunk = ofi.buf_size - sizeof(struct ofi_data);
  eager_whole_buffers();
  /* The headroom holds a DATA's header too: the chunk is then the whole
   * LAPI_OFI_BUF_SIZE, a power of two by default, so 1 MiB is 16 chunks
   * that end on block boundaries instead of 16 and a 17th of 640 B, a
   * PULL round trip more on the packed path (docs/PERFORMANCE.md, "The
   * packed pipeline, session 11"). */
  if (ofi.buf_size - ofi.chunk >= OFI_EAGER_HEADROOM)
    ofi.chunk = ofi.buf_size - OFI_EAGER_HEADROOM;
  size_t room = ofi.buf_size - sizeof(struct ofi_rts) - LAPI_AM_MAX_UHDR -
                OFI_DESC_HEAD - 16;
  if (ofi.eager_limit > room)
    ofi.eager_limit = room;
  if (ofi.get_eager_limit > ofi.eager_limit)
    ofi.get_eager_limit = ofi.eager_limit;
  return LAPI_SUCCESS;
}

/* Providers whose RMA read is a request and a response over their
 * message transport, served by the owner's progress (tcp, and the
 * sockets / net / udp ones): no NIC reads for them. */
static int rma_by_messages(void)
{
  static const char *const soft[] = {"tcp", "sockets", "net", "udp"};
  for (size_t k = 0; k < sizeof soft / sizeof soft[0]; k++)
    if (strstr(ofi.prov, soft[k]))
      return 1;
  return 0;
}

/* There a read costs about what a packed chunk costs (one message each
 * way through both sides' progress) but carries at most
 * min(iov_limit, rma_iov_limit) pieces (4 on tcp): reading pays once a
 * read of that many pieces carries a chunk, i.e. pieces of at least
 * chunk / pieces (16 KiB on tcp).  Measured over tcp;ofi_rxm, 1 MiB
 * streamed: 4 KiB pieces packed ~2x the rate of reading them, 8 KiB
 * about even, 16-32 KiB read ahead (docs/PERFORMANCE.md). */
static size_t rma_break_even(void)
{
  size_t pieces = ofi.iov_limit < ofi.rma_iov_limit ? ofi.iov_limit
                                                     : ofi.rma_iov_limit;
  return ofi.chunk / (pieces ? pieces : 1);
}

/* How the sink reads, once the provider and CMA are known. */
static void read_defaults(void)
{
  /* shm copies a read of one remote piece inline, in the reader's call
   * (one process_vm_readv), but hands one of several remote pieces to
   * the owner, whose progress copies it through bounce buffers and
   * holds off every other operation to that peer meanwhile.  A long
   * remote run is worth a read of its own; short fragments still share
   * a read (measured: 4 KiB blocks one per read cost a 1 MiB ping-pong
   * ~30% more than four per read). */
  if (ofi.fast_read == SIZE_MAX)
    ofi.fast_read = strcmp(ofi.prov, "shm") == 0 ? 8192 : 0;
  /* Where a read is a request and a response (tcp), one read of 4 MiB
   * streamed slower than raw libfabric's one message; 1 MiB pieces, a
   * window of them in flight, outran both (4 MiB Put/Amsend/Get
   * streamed ~4700 -> ~7000 MB/s over tcp;ofi_rxm: docs/PERFORMANCE.md,
   * "Read pieces over tcp"). */
  if (ofi.max_read == SIZE_MAX)
    ofi.max_read = rma_by_messages() ? OFI_MAX_READ_BY_MESSAGES
                                     : OFI_MAX_READ_DEFAULT;
  if (ofi.max_read > ofi.max_msg)
    ofi.max_read = ofi.max_msg;
  /* The packed path's defaults (ofi_sink.c, ofi_packref.c say why). */
  if (ofi.pull_window == 0)
    ofi.pull_window = strcmp(ofi.prov, "shm") != 0 ? ofi.read_window
                      : ofi.pack_ref                ? 8
                                                    : 4;
  if (ofi.pull_budget == 0)
    ofi.pull_budget = ofi.nrecv / 2;
  /* Half the window a PULL where chunks ride in packets: the sink sends
   * and the source receives half the PULLs or fewer, and the source
   * still has chunks asked for when the next PULL comes (ofi_sink.c). */
  if (ofi.pull_batch == 0)
    ofi.pull_batch = ofi.pull_window / 2 > 1 ? ofi.pull_window / 2 : 1;
  if (ofi.pull_batch > OFI_PULL_BATCH_MAX)
    ofi.pull_batch = OFI_PULL_BATCH_MAX;
  /* More than the window never fits beside a PULL in flight: the sink
   * would wait for the whole window to drain before each PULL. */
  if (ofi.pull_batch > ofi.pull_window)
    ofi.pull_batch = ofi.pull_window;
  if (ofi.rx_hold_max > ofi.nrecv / 2 || ofi.rx_hold_max < 0)
    ofi.rx_hold_max = ofi.nrecv / 2; /* the rest keep the CQ receiving */
  if (strcmp(ofi.prov, "shm") != 0)
    ofi.pack_ref = 0; /* stage arenas are shared memory */
  /* shm, libfabric reads: pieces under 8 KiB go packed.  Read several
   * to a read, they take shm's slow path above; one to a read, a system
   * call each; the packed path (pack, one CMA copy per 64 KiB packet,
   * unpack) moved 1 MiB in 4 KiB blocks at 1.6-2.4x the rate (medians of
   * alternating runs; 16 KiB pieces read by RMA stay ahead of packing
   * them).
   * Reads by CMA (ofi_cma.c) take up to 1024 pieces a side in one
   * system call and never involve the owner, but the kernel pins each
   * remote piece on its own: pieces under 16 KiB go packed, by stage
   * reference (ofi_packref.c), whose two copies (one per core) outran
   * the reads up to that size (1 MiB streamed in 4 KiB blocks 0.45 ->
   * ~0.7 of the contiguous Amsend, ping-pong ~200 -> ~125 us; 16 KiB
   * blocks stream faster packed too, but their ping-pong is faster
   * read: docs/PROTOCOL.md, RMA rendezvous). */
  if (ofi.min_rma_block == 0)
    ofi.min_rma_block = ofi.cma ? OFI_CMA_MIN_BLOCK
                        : strcmp(ofi.prov, "shm") == 0 ? 8192
                        : rma_by_messages() ? rma_break_even()
                                            : 2048;
  /* With CMA, data past what shm injects goes by rendezvous: a packet
   * over inject_size takes shm's own large-message protocol, slower than
   * our read of one piece (4-16 KiB Amsend ping-pong 3.3-7.0 us eager
   * against 2.7-3.9 us read, a 16 KiB stream 1.8-3.5 against 5.2-8.8
   * GB/s: docs/PROTOCOL.md, Protocols).  Unless the user chose it. */
  size_t fits = ofi.inject_size > sizeof(struct ofi_short)
                    ? ofi.inject_size - sizeof(struct ofi_short)
                    : 0;
  if (ofi.cma && !ofi.eager_user && fits && ofi.eager_limit > fits)
    ofi.eager_limit = fits;
  if (ofi.get_eager_limit > ofi.eager_limit)
    ofi.get_eager_limit = ofi.eager_limit;
}

/* How eager data leaves, once the provider is known.  Where the
 * provider's send is itself a copy through the kernel (sockets), packing
 * the data first copied it twice on the origin's CPU, which a stream of
 * eager messages is bound by: 64 KiB Put / Amsend streamed over
 * tcp;ofi_rxm at 0.78-0.87 of raw libfabric packed, 0.96-0.97 without
 * the pack (docs/PERFORMANCE.md, "Session 20").  The caller's memory is
 * then an iovec entry of the send, which needs an iovec of two and no
 * local registration (FI_MR_LOCAL); whatever the user set otherwise. */
static void send_defaults(void)
{
  if (ofi.zcopy_min == SIZE_MAX)
    ofi.zcopy_min = rma_by_messages() ? OFI_ZCOPY_DEFAULT : 0;
  if (ofi.iov_limit < 2 || (ofi.mr_mode & FI_MR_LOCAL))
    ofi.zcopy_min = 0;
  else if (ofi.zcopy_min && ofi.zcopy_min <= ofi.inject_size)
    ofi.zcopy_min = ofi.inject_size + 1; /* what an inject would carry
                                            goes packed and injected */
}

static int fab_fail(const char *what, int rc)
{
  LAPI_LOG(LAPI_LOG_ASYNC, "ofi: %s failed on provider %s: %s", what,
           ofi.prov, fi_strerror(-rc));
  return LAPI_ERR_NO_CONNECTIVITY;
}

/* A CQ wait fd lets the progress thread sleep until a packet comes, but
 * tcp;ofi_rxm then runs its progress in every CQ read through epoll
 * (epoll_wait, and the kernel's epoll callbacks on each arrival) instead
 * of poll(): 8-byte ping-pong 5.76 -> 5.06 us without, in either mode
 * (docs/PERFORMANCE.md, "Interrupt mode over tcp, session 13").  A job
 * that starts in polling mode (LAPI_INTERRUPT=0 or LAPI_INTERRUPT_OFF)
 * runs its handlers in its own LAPI calls anyway: its progress thread
 * naps instead (50 us to 1 ms while transfers are in flight, 20 ms
 * idle).  LAPI_OFI_WAIT_FD=1 or 0 decides for any job. */
static int want_wait_fd(void)
{
  return !getenv("LAPI_OFI_NO_WAIT_FD") &&
         env_flag("LAPI_OFI_WAIT_FD", !ofi.polling_start);
}

static int open_objects(void)
{
  struct fi_info *i = ofi.info;
  static int swept;
  if (!swept && strcmp(ofi.prov, "shm") == 0) {
    /* Our first shm endpoint: a region named after our pid is a dead
     * process's (ofi_shm_sweep.h) and would make fi_enable fail. */
    swept = 1;
    int gone = ofi_shm_sweep_pid(getpid());
    if (gone)
      LAPI_LOG(LAPI_LOG_INFO, "ofi: removed %d stale shm region(s) of an "
               "earlier process with pid %ld", gone, (long)getpid());
  }
  int rc = fi_fabric(i->fabric_attr, &ofi.fabric, NULL);
  if (rc)
    return fab_fail("fi_fabric", rc);
  rc = fi_domain(ofi.fabric, i, &ofi.domain, NULL);
  if (rc)
    return fab_fail("fi_domain", rc);
  struct fi_cq_attr ca;
  memset(&ca, 0, sizeof ca);
  ca.format = FI_CQ_FORMAT_MSG;
  ca.wait_obj = FI_WAIT_FD;
  ofi.wait_fd = -1;
  if (want_wait_fd() && fi_cq_open(ofi.domain, &ca, &ofi.cq, NULL) == 0) {
    int fd = -1;
    if (fi_control(&ofi.cq->fid, FI_GETWAIT, &fd) == 0 && fd >= 0) {
      ofi.wait_fd = fd;
    } else {
      fi_close(&ofi.cq->fid);
      ofi.cq = NULL;
    }
  }
  if (ofi.cq == NULL) {
    ca.wait_obj = FI_WAIT_NONE;
    rc = fi_cq_open(ofi.domain, &ca, &ofi.cq, NULL);
    if (rc)
      return fab_fail("fi_cq_open", rc);
  }
  struct fi_av_attr aa;
  memset(&aa, 0, sizeof aa);
  aa.type = FI_AV_TABLE;
  aa.count = ofi.ntasks;
  rc = fi_av_open(ofi.domain, &aa, &ofi.av, NULL);
  if (rc)
    return fab_fail("fi_av_open", rc);
  rc = fi_endpoint(ofi.domain, i, &ofi.ep, NULL);
  if (rc)
    return fab_fail("fi_endpoint", rc);
  rc = fi_ep_bind(ofi.ep, &ofi.av->fid, 0);
  if (rc == 0)
    rc = fi_ep_bind(ofi.ep, &ofi.cq->fid, FI_TRANSMIT | FI_RECV);
  if (rc)
    return fab_fail("fi_ep_bind", rc);
  rc = fi_enable(ofi.ep);
  if (rc)
    return fab_fail("fi_enable", rc);
  ofi.kick_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  return LAPI_SUCCESS;
}

/* CMA toward every peer (ofi_cma.c): each CG probes its peers with the
 * cards of the address exchange, then the job agrees, so that sources
 * and sinks take the same path.  A failed agreement leaves it off.
 * Every peer is probed even when CMA will not be used: a probe that
 * reads back proves the peer's pid (stage references, ofi_packref.c). */
static void cma_agree(struct lapi_boot *b, const unsigned char *all,
                      const struct ofi_cma_card *mine)
{
  uint64_t ok = mine->pid != 0 && ofi_cma_wanted();
  for (uint t = 0; t < ofi.ntasks && mine->pid != 0; t++) {
    struct ofi_cma_card c;
    memcpy(&c, all + (size_t)CARD_REC * t + ADDR_REC, sizeof c);
    if (t != ofi.me && !ofi_cma_probe(t, &c))
      ok = 0;
  }
  uint64_t *votes = malloc(sizeof *votes * ofi.ntasks);
  if (votes == NULL || b->allgather(b, &ok, sizeof ok, votes) != 0)
    ok = 0;
  for (uint t = 0; t < ofi.ntasks && ok; t++)
    ok = votes[t] == 1;
  free(votes);
  ofi.cma = (int)ok;
  if (ofi_cma_wanted())
    LAPI_LOG(LAPI_LOG_INFO, "ofi: RMA reads by %s", ok ? "cross-memory "
             "attach (process_vm_readv)" : "libfabric (CMA not usable "
             "toward every core group)");
}

static int exchange(struct lapi_boot *b)
{
  unsigned char mine[CARD_REC];
  memset(mine, 0, sizeof mine);
  struct ofi_cma_card card;
  ofi_cma_card(&card);
  memcpy(mine + ADDR_REC, &card, sizeof card);
  size_t alen = ADDR_REC - 4;
  int rc = fi_getname(&ofi.ep->fid, mine + 4, &alen);
  if (rc)
    return fab_fail("fi_getname", rc);
  uint32_t l32 = (uint32_t)alen;
  memcpy(mine, &l32, 4);
  unsigned char *all = malloc((size_t)CARD_REC * ofi.ntasks);
  ofi.peers = calloc(ofi.ntasks, sizeof *ofi.peers);
  if (all == NULL || ofi.peers == NULL) {
    free(all);
    return LAPI_ERR_MEMORY_EXHAUSTED;
  }
  if (b->allgather(b, mine, CARD_REC, all) != 0) {
    free(all);
    LAPI_LOG(LAPI_LOG_ASYNC, "ofi: the address exchange of the bootstrap "
             "(%s) failed: a core group did not start or cannot reach the "
             "exchange", b->kind);
    return LAPI_ERR_NO_CONNECTIVITY;
  }
  int64_t now = ofi_now_ms();
  for (uint t = 0; t < ofi.ntasks; t++) {
    unsigned char *rec = all + (size_t)CARD_REC * t;
    memcpy(&l32, rec, 4);
    struct ofi_peer *p = &ofi.peers[t];
    p->credits = ofi.credits;
    p->last_rx_ms = now;
    if (l32 == 0 || l32 > ADDR_REC - 4 ||
        fi_av_insert(ofi.av, rec + 4, 1, &p->addr, 0, NULL) != 1) {
      free(all);
      LAPI_LOG(LAPI_LOG_ASYNC, "ofi: the address of task %u is not usable "
               "by provider %s (do all CGs use the same provider?)", t,
               ofi.prov);
      return LAPI_ERR_NO_CONNECTIVITY;
    }
  }
  cma_agree(b, all, &card);
  free(all);
  return LAPI_SUCCESS;
}

static int post_recvs(void)
{
  ofi.recv_bufs = calloc((size_t)ofi.nrecv, sizeof *ofi.recv_bufs);
  if (ofi.recv_bufs == NULL)
    return LAPI_ERR_MEMORY_EXHAUSTED;
  for (int k = 0; k < ofi.nrecv; k++) {
    struct ofi_buf *b = &ofi.recv_bufs[k];
    b->c.kind = OFI_C_RECV;
    b->mem = aligned_alloc(64, ofi_align8(ofi.buf_size + 63) & ~(size_t)63);
    if (b->mem == NULL)
      return LAPI_ERR_MEMORY_EXHAUSTED;
    if (ofi.mr_mode & FI_MR_LOCAL) {
      if (ofi_mr_reg(b->mem, ofi.buf_size, FI_RECV, &b->mr))
        return LAPI_ERR_MEMORY_EXHAUSTED;
      b->desc = fi_mr_desc(b->mr);
    }
    int rc;
    while ((rc = (int)fi_recv(ofi.ep, b->mem, ofi.buf_size, b->desc,
                              FI_ADDR_UNSPEC, &b->c.fi)) == -FI_EAGAIN)
      fi_cq_read(ofi.cq, NULL, 0);
    if (rc)
      return fab_fail("fi_recv", rc);
  }
  return LAPI_SUCCESS;
}

/* Under ofi.lock, the progress thread stopped. */
static void close_all(void)
{
  if (ofi.up)
    LAPI_LOG(LAPI_LOG_INFO, "ofi: closing; transfers received eager %llu, "
             "RMA %llu (%llu reads, %llu by CMA), packed %llu; CMA writes "
             "(gets) %llu, RMA writes %llu; run by their "
             "poller %llu; -FI_EAGAIN %llu; wake-ups left to a poller %llu; "
             "eager sends from the caller's memory %llu; "
             "malformed packets dropped %llu, stale %llu; ACKs sent %llu; "
             "packets through the lane sent %llu, read %llu",
             (unsigned long long)ofi.st.eager, (unsigned long long)ofi.st.rma,
             (unsigned long long)ofi.st.reads,
             (unsigned long long)ofi.st.cma_reads,
             (unsigned long long)ofi.st.pull,
             (unsigned long long)ofi.st.cma_writes,
             (unsigned long long)ofi.st.rma_writes,
             (unsigned long long)ofi.st.direct,
             (unsigned long long)ofi.st.eagain,
             (unsigned long long)ofi.st.kicks_spared,
             (unsigned long long)ofi.st.zc_sends,
             (unsigned long long)ofi.st.bad_pkts,
             (unsigned long long)ofi.st.stale_pkts,
             (unsigned long long)ofi.st.acks,
             (unsigned long long)ofi.st.lane_sent,
             (unsigned long long)ofi.st.lane_recv);
  if (ofi.ep)
    fi_close(&ofi.ep->fid);
  ofi.ep = NULL;
  ofi.repost_owed = NULL; /* they go with the endpoint */
  ofi.ack_owed = 0;
  if (ofi.recv_bufs) {
    for (int k = 0; k < ofi.nrecv; k++) {
      ofi_mr_close(ofi.recv_bufs[k].mr);
      free(ofi.recv_bufs[k].mem);
    }
    free(ofi.recv_bufs);
    ofi.recv_bufs = NULL;
  }
  while (ofi.retry_head) {
    struct ofi_buf *b = ofi.retry_head;
    ofi.retry_head = b->next;
    b->zc_h = NULL; /* never sent, and its handle is closing */
    ofi_buf_put(b);
  }
  ofi.retry_tail = NULL;
  ofi_owed_free();
  while (ofi.free_bufs) {
    struct ofi_buf *b = ofi.free_bufs;
    ofi.free_bufs = b->next;
    ofi_mr_close(b->mr);
    free(b->mem);
    free(b);
  }
  for (uint32_t s = 0; s < ofi.xcap; s++)
    if (ofi.xtab[s])
      ofi_xfer_free(ofi.xtab[s]);
  while (ofi.xspare) {
    struct ofi_xfer *x = ofi.xspare;
    ofi.xspare = x->next;
    free(x);
  }
  ofi.nspare = 0;
  while (ofi.rd_spare) {
    struct ofi_read *rd = ofi.rd_spare;
    ofi.rd_spare = rd->next;
    free(rd);
  }
  ofi.nrd_spare = 0;
  ofi_ref_fini();
  free(ofi.xtab);
  free(ofi.xgen);
  ofi.xtab = NULL;
  ofi.xgen = NULL;
  ofi.xcap = 0;
  ofi.xlive = 0;
  ofi.rx_held = 0; /* their buffers went with ofi.recv_bufs */
  ofi.ready_head = ofi.ready_tail = NULL;
  ofi.pwait_head = ofi.pwait_tail = NULL;
  ofi.pulls_out = 0;
  if (ofi.av)
    fi_close(&ofi.av->fid);
  if (ofi.cq)
    fi_close(&ofi.cq->fid);
  if (ofi.domain)
    fi_close(&ofi.domain->fid);
  if (ofi.fabric)
    fi_close(&ofi.fabric->fid);
  ofi.av = NULL;
  ofi.cq = NULL;
  ofi.domain = NULL;
  ofi.fabric = NULL;
  if (ofi.info)
    fi_freeinfo(ofi.info);
  ofi.info = NULL;
  if (ofi.kick_fd >= 0)
    close(ofi.kick_fd);
  ofi.kick_fd = -1;
  ofi.wait_fd = -1;
  ofi_ack_free();
  ofi_fin_free();
  free(ofi.peers);
  ofi.peers = NULL;
  ofi.tx_posted = 0;
  ofi.reads_posted = 0;
  ofi.exposed = 0;
  ofi.pull_sources = 0;
  ofi.cma = 0;
  ofi_lane_close();
  ofi_bell_close();
  __atomic_store_n(&ofi.up, 0, __ATOMIC_RELEASE);
}

static int open_endpoint(struct lapi_boot *b)
{
  const struct lapi_job *j = lapi_job();
  ofi.me = j->task_id;
  ofi.ntasks = j->num_tasks;
  memset(&ofi.st, 0, sizeof ofi.st);
  settings();
  int rc = provider_up(b);
  if (rc == LAPI_SUCCESS)
    rc = open_objects();
  if (rc == LAPI_SUCCESS && ofi.wait_fd < 0) {
    ofi_bell_create(b); /* no wait object: a doorbell if all are here */
    ofi_lane_create(b); /* and a lane where the doorbell is */
  }
  if (rc == LAPI_SUCCESS)
    rc = exchange(b);
  if (rc == LAPI_SUCCESS) {
    read_defaults();
    send_defaults();
    ofi_bell_attach(b);
    ofi_lane_attach(b);
    lapi_spin_hint_procs(b->local_size);
  }
  if (rc == LAPI_SUCCESS)
    rc = post_recvs();
  if (rc == LAPI_SUCCESS) {
    /* Tight pollers of an earlier endpoint count no more.  Before the
     * progress thread starts (it compares left registrations' lives with
     * it), under ofi.lock (its readers there read it plainly), and
     * atomic: ofi_tp_tight reads it off the lock. */
    pthread_mutex_lock(&ofi.lock);
    __atomic_store_n(&ofi.gen, ofi.gen + 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&ofi.lock);
    rc = ofi_progress_start();
  }
  if (rc == LAPI_SUCCESS)
    __atomic_store_n(&ofi.up, 1, __ATOMIC_RELEASE);
  if (rc != LAPI_SUCCESS) {
    close_all();
    return rc;
  }
  LAPI_LOG(LAPI_LOG_INFO, "ofi: task %u of %u on provider %s (%s), RMA %s, "
           "wait %s%s, eager %zu B, iov %zu, inject %zu", ofi.me,
           ofi.ntasks, ofi.prov, ofi.info->domain_attr->name,
           ofi.has_rma ? "yes" : "no", ofi.wait_fd >= 0 ? "fd" : "poll",
           ofi.lane ? ", shared-memory lane" : "", ofi.eager_limit,
           ofi.iov_limit, ofi.inject_size);
  return LAPI_SUCCESS;
}

/* ------------------------------------------------------ tp init / fini */

/* Opening and closing the endpoint, users and hmap changes: taken
 * before ofi.lock and before the bootstrap's own lock. */
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;

int ofi_tp_init(struct lapi_hndl *h)
{
  const struct lapi_job *j = lapi_job();
  if (j->num_tasks <= j->cg_tasks)
    return LAPI_SUCCESS; /* one core group: self and crts serve it */
  struct lapi_boot *b = lapi_boot_get();
  if (b == NULL) {
    LAPI_LOG(LAPI_LOG_ASYNC, "ofi: no bootstrap: start the job with "
             "lapirun or a PMIx launcher");
    return LAPI_ERR_NO_CONNECTIVITY;
  }
  pthread_mutex_lock(&open_lock);
  int rc = LAPI_SUCCESS;
  if (ofi.users == 0) {
    /* Not under ofi.lock: the address exchange waits in the bootstrap,
     * where a polling-mode handle's collective runs its handlers (which
     * take ofi.lock) while holding the bootstrap's lock. */
    ofi.tpc = h->cpe >= 0 ? h->cg_tasks : 1; /* CPE tasks per CG */
    ofi.polling_start = h->cpe < 0 && !lapi_hndl_interrupt(h);
    rc = open_endpoint(b);
  }
  if (rc == LAPI_SUCCESS) {
    pthread_mutex_lock(&ofi.lock);
    ofi.users++;
    ofi.hmap[h->slot] = h;
    /* before the start-up barrier: no peer's Gfence of this handle
     * value can have begun */
    ofi_barrier_reset(h->index);
    pthread_mutex_unlock(&ofi.lock);
  }
  pthread_mutex_unlock(&open_lock);
  if (rc != LAPI_SUCCESS)
    return rc;
  /* Nobody sends on this handle before every task serves it. */
  if (b->barrier(b) != 0) {
    LAPI_LOG(LAPI_LOG_ASYNC, "ofi: LAPI_Init: a core group of the job did "
             "not reach the start-up barrier (%s)", b->kind);
    ofi_tp_fini(h);
    return LAPI_ERR_NO_CONNECTIVITY;
  }
  pthread_mutex_lock(&ofi.lock);
  ofi_bell_unlink(); /* every peer has mapped our doorbell by now */
  ofi_lane_unlink();
  pthread_mutex_unlock(&ofi.lock);
  /* Peers may wait for us from now on: leaving before LAPI_Term is a
   * fault the launcher reports to them (ofi_progress.c, leavers_watch). */
  if (b->set_active)
    b->set_active(b, 1);
  return LAPI_SUCCESS;
}

/* Every packet to a peer that is not gone has left. */
static int sends_flushed(void)
{
  for (uint t = 0; t < ofi.ntasks; t++) {
    const struct ofi_peer *p = &ofi.peers[t];
    if (!p->failed && !p->fail_pending &&
        (p->tx_posted || p->queued || p->owed))
      return 0;
  }
  return 1;
}

void ofi_tp_fini(struct lapi_hndl *h)
{
  if (lapi_job()->num_tasks <= lapi_job()->cg_tasks)
    return;
  pthread_mutex_lock(&open_lock);
  pthread_mutex_lock(&ofi.lock);
  if (!ofi.hmap[h->slot]) {
    pthread_mutex_unlock(&ofi.lock);
    pthread_mutex_unlock(&open_lock);
    return;
  }
  int tmo = ofi_timeout_s(); /* this handle's TIMEOUT counts too */
  ofi.hmap[h->slot] = NULL;
  int last = --ofi.users == 0;
  pthread_mutex_unlock(&ofi.lock);
  if (!last) {
    pthread_mutex_unlock(&open_lock);
    return;
  }
  /* Our last FINs and counts must leave before the endpoint closes, for
   * at most TIMEOUT (a peer that stopped answering keeps its packets). */
  pthread_mutex_lock(&ofi.lock);
  if (ofi.up) {
    ofi_direct_settle(); /* the ends direct deliveries owe */
    ofi_ack_final();
  }
  pthread_mutex_unlock(&ofi.lock);
  int64_t end = ofi_now_ms() + 1000L * tmo;
  for (;;) {
    pthread_mutex_lock(&ofi.lock);
    /* FINs held for a list (ofi_fin.c): a dispatcher between its items'
     * end and its drained op, which finds ofi.up 0 after close_all. */
    ofi_fin_flush();
    int done = sends_flushed();
    pthread_mutex_unlock(&ofi.lock);
    if (done || ofi_now_ms() > end)
      break;
    ofi_kick();
    usleep(1000);
  }
  struct lapi_boot *b = lapi_boot_get();
  if (b && b->set_active)
    b->set_active(b, 0); /* a clean leave from now on */
  /* Close only once every survivor sent what it owed us: a dead CG
   * fails a barrier at once, the leave barrier waits for the others. */
  if (b && b->leave_barrier)
    b->leave_barrier(b);
  else if (b)
    b->barrier(b); /* a dead peer fails it: close anyway */
  ofi_progress_stop();
  pthread_mutex_lock(&ofi.lock);
  if (ofi.users == 0 && ofi.up)
    close_all();
  pthread_mutex_unlock(&ofi.lock);
  pthread_mutex_unlock(&open_lock);
}
