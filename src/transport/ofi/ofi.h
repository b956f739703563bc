/*
 * ofi.h - internals of the libfabric transport (src/transport/ofi).
 *
 * One RDM endpoint per core group (process), shared by every LAPI handle
 * of the process: packets name the handle index, instance k talks to
 * instance k.  One completion queue, one address vector holding every
 * CG's address (exchanged with the bootstrap's all-gather), one lock
 * (`ofi.lock`) over every libfabric call and every field below, and one
 * progress thread that alone reads the CQ.  docs/PROTOCOL.md describes
 * the wire format and the protocols; the files are:
 *   ofi_fabric.c   provider choice, endpoint, AV, memory registration,
 *                  LAPI_Init / LAPI_Term of the transport
 *   ofi_progress.c the progress thread, CQ completions, timeouts, faults
 *   ofi_send.c     packet buffers, credits, sends with -FI_EAGAIN retry
 *   ofi_origin.c   the tp ops: AM, put, get, rmw at the origin; FIN
 *   ofi_ack.c      acknowledgements of messages sent without a FIN
 *   ofi_fin.c      FINs a sink finished in one pass, sent as one list
 *   ofi_ask.c      ASK about a transfer whose answer may have been lost
 *   ofi_sink.c     arrivals: header handlers, eager data, RMA reads and
 *                  the pipelined packed path, completion
 *   ofi_cma.c      RMA reads within the host by process_vm_readv (and
 *                  a GET target's writes, process_vm_writev)
 *   ofi_packref.c  packed chunks by reference to the source's shared
 *                  stage arena (shm)
 *   ofi_wire.c     packet layouts, checks and vector descriptions
 */
#ifndef LAPI_OFI_H
#define LAPI_OFI_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include "am/lapi_am.h"
#include "vec/lapi_vec.h"

/* ------------------------------------------------------------- the wire */

#define OFI_WIRE_MAGIC 0x4c4f4638u /* "LOF8": magic and wire version */

/* Sequence numbers of no-FIN messages a target tracks per origin beyond
 * the last one acknowledged in order (a wire constant: both sides). */
#define OFI_NOFIN_WINDOW 256

enum ofi_msg_type {
  OFI_M_RTS = 1,   /* a data transfer starts: AM, PUT or GET reply */
  OFI_M_GET,       /* origin asks the target for data */
  OFI_M_RMW,       /* atomic at the target */
  OFI_M_RMW_REPLY, /* its previous value */
  OFI_M_PULL,      /* sink asks the source for a chunk (packed path) */
  OFI_M_DATA,      /* the chunk */
  OFI_M_FIN,       /* sink is done with a source's transfer */
  OFI_M_PING,      /* liveness probe of the progress thread */
  OFI_M_PONG,
  OFI_M_ACK,       /* acknowledgement of no-FIN messages (header only) */
  OFI_M_ACK_REQ,   /* asks for one once id no-FIN messages completed */
  OFI_M_SHORT,     /* an eager no-FIN Amsend in a compact header */
  OFI_M_NAK,       /* a no-FIN message failed at its target */
  OFI_M_FIN_LIST,  /* the FINs of several transfers (ofi_fin.c) */
  OFI_M_ASK,       /* do you still hold the other end of this transfer? */
  OFI_M_UNKNOWN,   /* the answer: no (its FIN or reply was lost) */
  OFI_M_BARRIER,   /* a round of LAPI_Gfence's barrier (ofi_barrier.c) */
  OFI_M_LAST
};

/* What an RTS carries. */
enum ofi_kind { OFI_K_AM = 1, OFI_K_PUT, OFI_K_GETREPLY };

/* How the sink gets the data of an RTS. */
enum ofi_mode {
  OFI_MODE_EAGER = 0, /* in the packet */
  OFI_MODE_RMA,       /* RMA reads of the source's registered segments */
  OFI_MODE_PULL,      /* PULL / DATA chunks, packed by the source */
};

/* Streams a sink may pull from a source transfer. */
enum { OFI_STREAM_DATA = 0, OFI_STREAM_DESC = 1 };

/* Every packet starts with this (little-endian hosts only, as libfabric's
 * own RDM providers between like hosts). */
struct ofi_hdr {
  uint32_t magic;
  uint8_t type;
  uint8_t src_local; /* sending task's index in its CG (CPE tasks; else 0) */
  uint16_t hndl;  /* the receiving handle's key (lapi_hndl_key: its task's
                     index in its CG << 8 | the handle value, the same on
                     both sides) */
  uint32_t src;   /* sending core group */
  uint32_t len;   /* packet bytes, this header included */
  uint64_t id;    /* transfer id (see each type) */
  /* Piggybacked on every packet: of the no-FIN messages the receiver
   * sent us, how many we completed, and below which sequence number all
   * did (cumulative, modulo 2^32; ofi_ack.c). */
  uint32_t ack_done;
  uint32_t ack_seq;
};

/* Why an arrival was dropped (ofi_drop); the same classes name the
 * faults the test hook LAPI_OFI_TEST_MANGLE puts into copies of real
 * packets (ofi_fault.c), so a test can match the two. */
enum ofi_bad {
  OFI_BAD_OTHER = 0, /* any check not listed below */
  OFI_BAD_MAGIC,     /* not our magic */
  OFI_BAD_LEN,       /* length field differs from the bytes received */
  OFI_BAD_SHORT,     /* shorter than a header or its type's fixed part */
  OFI_BAD_TYPE,      /* unknown type */
  OFI_BAD_SENDER,    /* sender not another task of the job */
  OFI_BAD_HNDL,      /* handle key or sending task out of range */
  OFI_BAD_ACK,       /* acknowledges more than was sent */
  OFI_BAD_STALE,     /* quotes a transfer that is gone or never was */
  OFI_BAD_DATA,      /* DATA outside what was pulled */
  OFI_BAD_RTS,       /* RTS fields or sizes wrong */
  OFI_BAD_NAK,       /* NAK of a message not awaited, or not a failure */
  OFI_BAD_CHUNK,     /* DATA longer than one chunk */
  OFI_BAD_REF,       /* DATA reference not to its sender's own memory */
  OFI_BAD_N
};

/* A registered piece of the source, for RMA reads. */
struct ofi_seg {
  uint64_t addr;  /* the source's virtual address */
  uint64_t len;
  uint64_t key;
};

/*
 * RTS, id = the source transfer.  Followed by, each 8-aligned:
 * nseg ofi_seg, uhdr (uhdr_len), desc (desc_len when inline), data
 * (data_len when EAGER).
 */
struct ofi_rts {
  struct ofi_hdr h;
  uint8_t kind, mode, desc_inline, strided; /* strided: segs[0] is an
                                              extent read as blocks */
  uint32_t uhdr_len;
  uint64_t hdr_hdl;
  uint64_t tgt_cntr;
  uint64_t cookie;    /* GETREPLY: the origin's get transfer */
  uint64_t data_len;  /* stream bytes */
  uint64_t desc_len;
  uint32_t nseg;
  uint32_t shape;     /* AM: 0 Amsend, else 1 + the origin's vec_type */
  uint64_t s_block, s_stride, s_num; /* strided RMA source */
  uint32_t hdl_module;  /* hdr_hdl is an offset in this module (ofi_hdl.c) */
  uint32_t flags;       /* OFI_RTS_NO_FIN */
  uint32_t seq;         /* NO_FIN: its number among those to this target */
  uint32_t pad;
};

/* SHORT: the common small message (an eager LAPI_Amsend without
 * cmpl_cntr nor send handler, acknowledged by count) in a header half
 * the size of an RTS, so that a few bytes of it still fit the inline
 * part of a shm command (a longer packet goes through shm's inject
 * buffers: a copy and a lock more at each end).  id = the handler's
 * module (ofi_hdl.c) << 32 | the no-FIN number.  Followed by the uhdr
 * (padded to 8 bytes) and the data, whose length is what is left. */
struct ofi_short {
  struct ofi_hdr h;
  uint64_t hdr_hdl;
  uint64_t tgt_cntr;
  uint16_t uhdr_len;
  uint16_t flags; /* OFI_RTS_NO_FIN, and nothing else */
  uint32_t pad;
};

/* An eager AM or put that the origin forgot once sent: no FIN; the
 * target acknowledges it by count (ofi_ack.c).  id is then unused. */
#define OFI_RTS_NO_FIN 1u
/* A PULL-mode AM or put whose whole stream the origin packed into one
 * stage of its arena (ofi_packref.c): one struct ofi_data_ref follows
 * the uhdr and the description, and the sink copies the stream from
 * there instead of pulling it (no system call for a mid-size message
 * on shm); it pulls as usual if it cannot map the arena. */
#define OFI_RTS_STAGED 2u

/* GET, id = the origin's transfer.  Followed by desc when inline, and
 * for OFI_GET_WRITE by one ofi_seg at the next 8-byte boundary. */
struct ofi_get {
  struct ofi_hdr h;
  uint64_t tgt_cntr;
  uint64_t data_len;  /* bytes the origin takes */
  uint64_t desc_len;  /* description of the target's memory */
  uint8_t desc_inline, flags, pad[6];
};

/* The origin's buffer is the ofi_seg {addr, data_len, key} after the
 * (inline) description: the target writes the data there (by CMA, key
 * 0; else by an RMA write into the origin's registration, whose key it
 * is) and answers with a FIN (LAPI_SUCCESS: it is in place), instead of
 * an RTS for the origin to read (ofi_sink.c, ofi_cma.c). */
#define OFI_GET_WRITE 1u

struct ofi_rmw {
  struct ofi_hdr h;   /* id = the origin's transfer */
  uint32_t op, size;
  uint64_t tgt_var;
  int64_t in[2];
};

struct ofi_rmw_reply {
  struct ofi_hdr h;   /* id = the origin's transfer */
  int64_t prev;
  int32_t status, pad;
};

struct ofi_pull {
  struct ofi_hdr h;   /* id = the source transfer */
  uint64_t sink;      /* the sink's transfer */
  uint64_t offset;
  uint32_t len;       /* at most the source's chunk; a carried DATA PULL
                         up to OFI_PULL_BATCH_MAX of them (one DATA each) */
  uint16_t stream;
  uint16_t flags;     /* OFI_PULL_REF */
  uint32_t ref_landed; /* REF: every staged chunk numbered below this
                          landed (the source may reuse its stage) */
  uint32_t pad;
};

/* The sink can read the source's memory (same host, CMA): the source may
 * answer with a reference to the packed chunk (ofi_packref.c). */
#define OFI_PULL_REF 1u

/* The most chunks one PULL may ask (LAPI_OFI_PULL_BATCH is clamped to it;
 * a source refuses more). */
#define OFI_PULL_BATCH_MAX 16

struct ofi_data {
  struct ofi_hdr h;   /* id = the sink's transfer */
  uint64_t offset;
  uint32_t stream;
  uint32_t flags;     /* OFI_DATA_REF */
  /* bytes follow, or for OFI_DATA_REF one struct ofi_data_ref */
};

/* The chunk is not in the packet: it is packed in the source's stage
 * arena (shared memory), where the sink unpacks it from, then says so in
 * a later PULL's ref_landed. */
#define OFI_DATA_REF 1u

struct ofi_data_ref {
  uint64_t off;       /* in the source's arena */
  uint64_t len;       /* stream bytes */
  uint32_t pid;       /* the source process */
  uint32_t fd;        /* its arena's descriptor there */
  uint32_t seq;       /* the transfer's staged chunk number */
  uint32_t pad;
};

struct ofi_fin {
  struct ofi_hdr h;   /* id = the source transfer */
  int32_t status;     /* LAPI_SUCCESS or the code the sink reported */
  int32_t pad;
};

/* FINs of up to OFI_FIN_LIST_MAX transfers to one origin, finished in
 * one pass of the sink (ofi_fin.c); each entry is taken as the FIN it
 * stands for.  Header id 0, hndl 0 (each entry names its own). */
#define OFI_FIN_LIST_MAX 32

struct ofi_fin_entry {
  uint64_t id;        /* the source transfer */
  uint16_t hndl;      /* the origin handle's key */
  uint16_t pad;       /* 0 */
  int32_t status;     /* as in struct ofi_fin */
};

struct ofi_fin_list {
  struct ofi_hdr h;
  uint32_t n;         /* entries that follow: 2 .. OFI_FIN_LIST_MAX */
  uint32_t pad;       /* 0 */
};

/* ASK, id = the asker's transfer, which waited long for its peer's
 * answer (ofi_ask.c): does the peer still hold the
 * other end?  UNKNOWN, the same layout, says it does not: its FIN or
 * reply was lost (a connection closed under it), nothing more will come.
 * hndl 0 (the id names the transfer).  A peer that holds it says
 * nothing; the asker asks again later. */
enum {
  OFI_ASK_SINK = 1, /* the asker is a source: a sink whose src_xfer is id */
  OFI_ASK_GET,      /* the asker's GET: a GET target whose cookie is id */
  OFI_ASK_RMW,      /* the asker's RMW: never held (answered at once) */
  OFI_ASK_NOFIN,    /* the asker's no-FIN message numbered id (its seq):
                       did it arrive?  (ofi_ack.c's window answers) */
  OFI_ASK_DATA,     /* the asker is the sink id (or the GET target id
                       pulling the description), pulling from its peer:
                       UNKNOWN says every PULL before the ASK was
                       answered (never held) */
};

struct ofi_ask {
  struct ofi_hdr h;
  uint32_t what;      /* OFI_ASK_* */
  uint32_t ask_no;    /* DATA: the sink's number for this ASK (not 0),
                         echoed by its UNKNOWN; else 0 */
};

/* A no-FIN message (eager AM or put) the target refused or found
 * malformed: what a FIN's status would have said.  Sent before the
 * message counts as completed (ofi_ack.c). */
struct ofi_nak {
  struct ofi_hdr h;   /* id = the message's seq; hndl = the origin's key */
  int32_t status;     /* a LAPI error code */
  uint32_t kind;      /* OFI_K_AM or OFI_K_PUT */
};

/* Vector descriptions (desc): u32 vec_type, u32 num_vecs, then
 *   IOVECTOR, GENERIC  num_vecs pairs {u64 addr, u64 len}
 *   STRIDED            u64 base, u64 block, u64 stride
 * An Amsend (contiguous) shape is IOVECTOR of one segment.  The addresses
 * are the describing side's (0 where the reader must not use them). */
#define OFI_DESC_HEAD 8
/* Where a whole packet buffer of data goes eagerly (ofi_fabric.c,
 * eager_whole_buffers), the buffer is this much longer for the headers
 * in front of it: an RTS, the largest uhdr, a description's head. */
#define OFI_EAGER_HEADROOM 2048
/* Where reads are messages and a GET's target can write the origin's
 * buffer by RMA (tcp;ofi_rxm), a get beyond this is written, not
 * answered eagerly (ofi_fabric.c, eager_whole_buffers). */
#define OFI_GET_EAGER_WRITTEN 4096

/* Over sockets (tcp, sockets, net, udp) eager data of at least this many
 * bytes in one piece is sent from the caller's memory, not packed first
 * (LAPI_OFI_ZCOPY, ofi_send.c). */
#define OFI_ZCOPY_DEFAULT 16384

static inline size_t ofi_align8(size_t n)
{
  return (n + 7) & ~(size_t)7;
}

/* ---------------------------------------------------------- transfers */

/* Roles of a transfer record. */
enum ofi_role {
  OFI_R_SOURCE = 1, /* our memory is read: AM/PUT origin, GET target */
  OFI_R_SINK,       /* our memory is written: AM/PUT target, GET origin */
  OFI_R_GET,        /* a get request at the origin (then a SINK) */
  OFI_R_RMW,        /* an rmw request at the origin */
};

/* Kinds of completions: the first two fields of every posted context. */
enum ofi_ctx_kind { OFI_C_SEND = 1, OFI_C_RECV, OFI_C_READ };

struct ofi_ctx {
  struct fi_context2 fi; /* first: FI_CONTEXT / FI_CONTEXT2 mode */
  int kind;
};

/* A packet buffer: sends and posted receives. */
struct ofi_buf {
  struct ofi_ctx c;
  struct ofi_buf *next;  /* free list, retry queue */
  uint peer;             /* send: destination task */
  size_t len;            /* send: bytes to send */
  struct fid_mr *mr;
  void *desc;
  uint64_t xfer;         /* send: transfer to fail if the send fails */
  unsigned char *mem;    /* OFI.buf_size bytes */
  /* send: the last zc_len of the len bytes are the caller's data, sent
   * from where they are (LAPI_OFI_ZCOPY; ofi_send.c); 0: all in mem */
  const void *zc_data;
  size_t zc_len;
  /* an AM's data sent so: its org_cntr moves (lapi_am_origin_sent) when
   * the buffer comes back, sent or not; zc_h NULL: nothing to tell */
  struct lapi_hndl *zc_h;
  lapi_cntr_t *zc_org;
  uint zc_task;
};

struct ofi_xfer;

/* An RMA read in flight (sink side). */
#define OFI_READ_IOV 8
struct ofi_read {
  struct ofi_ctx c;
  struct ofi_read *next;             /* spare list */
  struct ofi_xfer *x;
  uint64_t xid;
  size_t bytes;
  int niov;
  int write;                 /* an RMA write of a GET's target instead */
  int fault;                 /* LAPI_OFI_TEST_WRITE_FAULT: fail it */
  struct fid_mr *lmr[OFI_READ_IOV]; /* FI_MR_LOCAL registrations */
};

/* RTS bytes a transfer record holds itself (an 8-byte AM takes 136). */
#define OFI_PKT_INLINE 256

/* A description rebuilt from the wire: a vector and its arrays. */
struct ofi_vec {
  lapi_vec_t v;
  void **info;
  ulong *len;
  void *one_info[3];
  ulong one_len[3];
};

struct ofi_xfer {
  struct lapi_item it;       /* first: MPE work of this transfer */
  int item_queued;           /* an item owns it: queued or running */
  int in_ready;              /* on ofi.ready_head (sink work to issue) */
  int exposed;               /* counted in ofi.exposed */
  int pull_src;              /* a packed source: counted in
                                ofi.pull_sources */
  long reads_out;            /* its RMA reads in ofi.reads_posted */
  uint64_t id;               /* (generation << 32) | slot */
  enum ofi_role role;
  int kind;                  /* enum ofi_kind for SOURCE / SINK */
  uint peer;                 /* the other end's core group */
  uint task;                 /* the other end's LAPI task (in peer) */
  struct lapi_hndl *h;
  struct ofi_xfer *next;     /* credit queue, ready list, spare list */

  /* Origin counters and handlers (AM, PUT: SOURCE; GET: R_GET; RMW). */
  uint64_t tgt_cntr;         /* counter in the other task, or at the GET
                                target ours */
  lapi_cntr_t *org_cntr, *cmpl_cntr;
  scompl_hndlr_t *shdlr;
  void *sinfo;
  compl_hndlr_t *chndlr;
  void *cinfo;
  int sent_fired;            /* org_cntr / shdlr done */
  void *sent_item;           /* a send handler's item, reserved at the
                                call: it cannot be lost when it fires */
  struct lapi_am_notify note; /* PUT, GET, RMW completion at the origin */
  int holds_credit;

  /* SOURCE: the stream we serve and how. */
  const lapi_vec_t *src;     /* user vector, or &one below */
  struct ofi_vec one;        /* a contiguous buffer as a vector */
  uint64_t hdr_hdl;
  uint32_t hdl_module;
  void *uhdr;                /* copy */
  uint uhdr_len;
  uint32_t shape;
  unsigned char *desc;       /* description sent inline or pulled */
  size_t desc_len;
  size_t data_len;
  int mode;
  struct fid_mr **mrs;       /* RMA registrations of the source */
  uint nmr;
  struct ofi_seg *segs;
  uint nseg;
  int strided_rma;
  uint64_t cookie;           /* GETREPLY: the origin's get id */

  /* SINK: where the data goes and how far it is. */
  unsigned char *pkt;        /* the RTS / GET copy (uhdr, desc, data) */
  size_t pkt_len;
  const unsigned char *p_uhdr, *p_desc, *p_data; /* into pkt */
  struct ofi_buf *rx_buf;    /* eager AM: its receive buffer, held until
                                the data is copied out (ofi_rx_release) */
  uint64_t src_xfer;         /* the source's id on the peer */
  uint64_t cntr_remote;      /* tgt_cntr to bump here when done */
  struct ofi_vec shape_vec;  /* AM: the origin's shape */
  ulong strided_len[3];
  struct ofi_vec rdesc;      /* PUT/GET: described target memory */
  struct ofi_vec dest_one;   /* contiguous destination as a vector */
  const lapi_vec_t *dest;
  size_t want;               /* bytes to move */
  size_t issued, done;       /* stream bytes requested, landed */
  int inflight;
  int pulls_out;             /* of them PULLs (counted in ofi.pulls_out) */
  int in_pwait;              /* on ofi.pwait_head: waits for the budget */
  struct ofi_xfer *pw_next;  /* its link there */
  int use_rma;
  struct ofi_seg *rsegs;     /* the source's segments (RMA) */
  uint nrseg;
  int rstrided;
  uint64_t rblock, rstride, rnum;
  uint64_t rseg_i;           /* read cursor: segment, offset in it */
  uint64_t rseg_off;
  struct lapi_vec_walk dw;   /* read cursor in the destination */
  void *lcur;                /* rest of the current destination piece */
  size_t lcur_left;
  uint32_t ref_base;         /* SINK: staged chunks below this landed */
  uint64_t ref_mask[4];      /* and these above it (bit k: ref_base + k) */
  struct ofi_stage *staged;  /* SOURCE: chunks packed for the sink to read */
  uint32_t ref_seq;          /* SOURCE: number of the next one */
  int nstaged;
  int staged_whole;          /* SOURCE: the whole stream is in one stage,
                                named in the RTS (OFI_RTS_STAGED) */
  const unsigned char *p_staged; /* SINK: that stage, mapped; NULL: pull */
  int desc_phase;            /* pulling the description first */
  unsigned char *desc_in;    /* pulled description */
  size_t desc_in_len, desc_got;
  struct lapi_am_msg msg;
  struct lapi_am_dest d;
  int status;                /* LAPI code reported in the FIN */
  int get_write;             /* GET (both ends): by OFI_GET_WRITE */
  struct ofi_seg wseg;       /* GET target: the origin's buffer */
  int failed;
  int no_fin;                /* SINK: acknowledge by count, seq nf_seq */
  uint32_t nf_seq;
  int nf_soon;               /* SOURCE: no-FIN but waited for: kept until
                                the counts cover nf_seq (peer's nf_xfer) */
  int nf_status;             /* nf_soon: its NAK's status, if one came */
  int64_t watch_ms;          /* when the watchdog first saw it waiting,
                                or last asked about it (ask_watch) */
  int asked;                 /* an ASK about it went to its peer */
  uint32_t data_ask_no;      /* SINK, or a GET target pulling the
                                description: our newest ASK DATA */
  uint64_t ask_issued;       /* the same: issued when it left (0:
                                answered or voided) */

  /* R_GET: the origin's destination. */
  const lapi_vec_t *org_dst;
  /* R_RMW */
  void *prev;
  int rmw_size;

  /* SOURCE: mrs and segs of a one-piece source point here (most
   * rendezvous sources): two callocs and frees less per transfer. */
  struct fid_mr *mr_one;
  struct ofi_seg seg_one;

  /* SINK: a small RTS is copied here rather than into a malloc'd pkt. */
  unsigned char pkt_inline[OFI_PKT_INLINE] __attribute__((aligned(8)));
};

/* ------------------------------------------------------------- globals */

struct ofi_peer {
  fi_addr_t addr;
  int credits;               /* requests we may still start */
  struct ofi_xfer *wq_head, *wq_tail; /* waiting for a credit */
  int failed;                /* LAPI code once the peer is gone */
  int64_t wait_from_ms;      /* watchdog: since when we wait for it (0:
                                not waiting) */
  int64_t last_rx_ms;
  int64_t ping_ms;
  int queued;                /* our packets in the retry queue */
  int owed;                  /* its entries in ofi.owed_head */
  long tx_posted;            /* our sends to it awaiting completion */
  unsigned blocked_pass;     /* retry pass in which a post got EAGAIN */
  int fail_pending;          /* a send to it failed: ofi_fail_pending */
  int ref_off;               /* we cannot map its arena: no OFI_PULL_REF */
  unsigned char *arena;      /* its stage arena, mapped read-only */
  size_t arena_len;
  uint32_t arena_fd;         /* its fd there (in process pid, below) */
  int staged_off;            /* it pulled a staged message: it cannot map
                                our arena, stage nothing more for it */
  char fail_why[96];

  /* No-FIN messages we sent it (ofi_ack.c); counts modulo 2^32. */
  uint32_t nf_next;          /* sequence number of the next: count sent */
  uint32_t nf_acked;         /* all below this completed there */
  uint32_t nf_done;          /* how many it said it completed (credits) */
  uint32_t nf_asked;         /* what our last ACK_REQ waits for */
  int nf_asking;             /* it is not answered yet */
  int nf_soon_new;           /* kept messages sent since ofi_soon_ask */
  uint32_t nf_watched;       /* nf_acked at the watchdog's last look */
  uint32_t nf_ask_seq;       /* the oldest unacknowledged no-FIN message
                                when nf_ask_ms was set (ofi_ask.c) */
  int64_t nf_ask_ms;         /* since then it did not move; 0: not watched */
  int nf_ask_sent;           /* an ASK about nf_ask_seq left */
  /* The counts of a SHORT read by a tight poller, applied at the owed
   * end of its pass (ofi_ack_settle): valid while ofi.ack_owed names
   * this peer. */
  uint32_t owed_ack_done, owed_ack_seq;
  struct lapi_hndl **nf_hndl; /* by seq % window: whose Fence waits */
  struct ofi_xfer **nf_xfer;  /* by seq % window: the nf_soon ones,
                                 finished when acknowledged */
  uint64_t nf_naked[OFI_NOFIN_WINDOW / 64]; /* NAK heard, by seq */
  /* No-FIN messages it sent us. */
  uint32_t in_done;          /* completed */
  uint32_t in_base;          /* all below this completed */
  uint32_t told_done, told_base; /* last stamped on a packet to it */
  uint32_t in_want;          /* an ACK_REQ waits for in_base >= in_want */
  uint32_t in_want_hi;       /* the most an ACK_REQ pending asked for */
  int in_asked;
  uint64_t in_seen[OFI_NOFIN_WINDOW / 64]; /* arrived, by seq, >= in_base */
  uint64_t in_end[OFI_NOFIN_WINDOW / 64];  /* completed, likewise */

  int pid;                   /* its pid, proven at start-up by reading
                                its probe word (ofi_cma.c); 0: unproven */

  /* FINs to it held for one list (ofi_fin.c); allocated at first use. */
  struct ofi_fin_entry *fins;
  uint nfins;
  size_t fin_bytes;          /* the data of their transfers */
};

struct ofi_stats {
  uint64_t bad_pkts;         /* malformed, truncated, unknown: dropped */
  uint64_t acks;             /* standalone ACK packets sent */
  uint64_t barrier_rounds;   /* BARRIER packets of Gfence rounds sent */
  uint64_t stale_pkts;       /* for a transfer or handle that is gone */
  uint64_t eagain;           /* -FI_EAGAIN retries */
  uint64_t kicks_spared;     /* left to a polling thread (ofi_kick_unpolled) */
  uint64_t zc_sends;         /* eager data sent from the caller's memory */
  uint64_t eager, rma, pull; /* transfers by protocol (sink side) */
  uint64_t rx_holds;         /* eager AMs that kept their receive buffer */
  uint64_t rx_hold_full;     /* eager AMs copied: the held share was full */
  uint64_t reads;            /* RMA read operations */
  uint64_t cma_reads;        /* of them, process_vm_readv calls (ofi_cma.c) */
  uint64_t cma_writes;       /* process_vm_writev calls (OFI_GET_WRITE) */
  uint64_t rma_writes;       /* RMA writes posted (OFI_GET_WRITE) */
  uint64_t direct;           /* SHORTs run by their poller (ofi_direct.c) */
  size_t direct_largest;     /* the longest of them, bytes of packet */
  uint64_t ref_chunks;       /* packed chunks copied from the source's
                                stage (sink side) */
  uint64_t staged_out;       /* messages sent staged whole (source) */
  uint64_t staged_in;        /* of them copied from the stage (sink) */
  uint64_t staged_pulled;    /* staged ones the sink pulled instead */
  uint64_t pull_waits;       /* sinks that waited for the PULL budget */
  long pulls_peak;           /* most PULLs in flight at once (sink) */
  uint64_t batch_pulls;      /* carried DATA PULLs sent (sink side) */
  uint64_t batch_chunks;     /* the chunks they asked for */
  long batch_peak;           /* most chunks one of them asked for */
  uint64_t dropped[OFI_BAD_N]; /* bad_pkts by class (STALE: stale_pkts) */
  uint64_t naks_sent;        /* no-FIN messages that failed here */
  uint64_t remote_fails;     /* ours that failed at the target (NAK, or
                                a FIN with a failure status) */
  uint64_t fins;             /* FINs sent alone (sink side) */
  uint64_t fin_lists;        /* FIN lists sent (ofi_fin.c) */
  uint64_t fins_listed;      /* FINs that went in them */
  uint64_t asks;             /* ASKs sent about long-waiting transfers */
  uint64_t unknowns;         /* UNKNOWN answers sent, or owed and not
                                voided (we held no such transfer) */
  uint64_t asks_held;        /* ASKs about a transfer we held (no answer) */
  uint64_t asks_owed;        /* ASKs whose UNKNOWN was owed behind the
                                packets owed to the asker */
  uint64_t unknowns_dropped; /* of those, UNKNOWNs that found no record to
                                be owed in (out of memory): not sent, the
                                asker asks again */
  uint64_t lane_sent;        /* packets sent through the lane (ofi_lane.c) */
  uint64_t lane_recv;        /* packets read from our lane */
  uint64_t lane_full;        /* sends that found a peer's ring full */
  uint64_t lane_wraps;       /* records that started a ring over at 0 */
};

struct ofi_owed;

/* LAPI_Gfence's barrier of one handle value (ofi_barrier.c; under
 * ofi.lock, but for what its waiter reads atomically). */
struct ofi_barrier {
  uint32_t seq;     /* the number of this handle's next (or current) one */
  uint32_t seen[2]; /* atomic: rounds arrived, by parity of the number */
  uint broken;      /* atomic: 1 + the CG that broke it (gone, or its
                       FAIL), 0 while whole: then its waits end */
  int broken_fail;  /* that CG sent a FAIL (else it is gone) */
  int told;         /* our FAIL went to every peer */
  uint waiting;     /* 1 + the peer a round waits for (the watchdog), 0 */
};

struct ofi_state {
  pthread_mutex_t lock;
  int users;                 /* handles using the endpoint */
  int up;
  uint me, ntasks;           /* this core group, core groups (peers) */
  uint tpc;                  /* LAPI tasks per core group (CPE tasks) */
  int soon_unasked;          /* nf_soon transfers sent since we asked */

  /* Settings, fixed while up. */
  size_t buf_size;           /* packet buffer bytes */
  size_t eager_limit;        /* data bytes sent eagerly */
  size_t get_eager_limit;    /* GETs up to this are answered eagerly */
  size_t min_rma_block;      /* smaller pieces go packed */
  int min_block_user;        /* LAPI_RDV_MIN_BLOCK was set */
  int eager_user;            /* LAPI_EAGER_LIMIT was set (validly) */
  size_t chunk;              /* PULL chunk */
  size_t max_read;           /* bytes of one RMA read */
  size_t fast_read;          /* a remote run this long is read alone
                                (shm copies it inline); 0: never */
  int nrecv;                 /* posted receives */
  int credits;               /* requests in flight per peer */
  int read_window;           /* reads / pulls in flight per transfer */
  int pull_window;           /* PULLs in flight per transfer */
  int pull_batch;            /* chunks asked by one carried PULL */
  long pull_budget;          /* PULLs in flight from all sinks (ofi_sink.c) */
  int rx_hold_max;           /* receive buffers eager AMs may hold */
  long ref_budget;           /* PULLs in flight beyond which a transfer
                                pulling by reference keeps to one */
  int pack_ref;              /* LAPI_OFI_PACK_REF on this provider: 0, 1,
                                2 (ofi_packref.c) */
  uint32_t pack_stages;      /* chunks in our stage arena */
  size_t staged_max;         /* LAPI_OFI_STAGED_MAX: a message beyond the
                                eager limit up to this goes staged whole
                                (OFI_RTS_STAGED; 0: never) */
  size_t inject_size;
  size_t zcopy_min;          /* LAPI_OFI_ZCOPY: eager data of at least this
                                many bytes in one piece is sent from the
                                caller's memory, not packed; 0: never */
  size_t iov_limit, rma_iov_limit, max_msg;
  uint64_t mr_mode;
  int has_rma;
  int direct;                /* LAPI_OFI_DIRECT: ofi_direct.c on */
  int lane_want;             /* LAPI_OFI_LANE: ofi_lane.c wanted */
  size_t lane_bytes;         /* LAPI_OFI_LANE_BYTES: bytes of one ring */
  int lane;                  /* our lane exists: packets to peers whose
                                ring we mapped go through it (ofi_lane.c) */
  int get_write_ok;          /* LAPI_OFI_GET_WRITE: a GET's target may
                                write our buffer (CMA or rma_write) */
  int rma_write;             /* RMA writes for OFI_GET_WRITE: FI_WRITE,
                                FI_REMOTE_WRITE and FI_ORDER_SAW */
  long write_fault;          /* LAPI_OFI_TEST_WRITE_FAULT: every Nth
                                RMA write of a GET fails (testing aid) */
  int polling_start;         /* the first handle started in polling mode */
  int fin_always;            /* LAPI_OFI_FIN_ALWAYS: no no-FIN messages */
  int cmpl_by_count;         /* LAPI_OFI_CMPL_BY_COUNT: waited-for eager
                                messages acknowledged by count */
  int fin_list;              /* LAPI_OFI_FIN_LIST: FINs batched (ofi_fin.c) */
  size_t fin_list_bytes;     /* LAPI_OFI_FIN_LIST_BYTES: a list goes once
                                its transfers moved this much */
  int cma;                   /* RMA reads by cross-memory attach, job-wide
                                (ofi_cma.c); sources register nothing */
  char prov[64];

  struct fi_info *info;
  struct fid_fabric *fabric;
  struct fid_domain *domain;
  struct fid_av *av;
  struct fid_cq *cq;
  struct fid_ep *ep;
  int wait_fd;               /* CQ wait fd or -1 */
  int kick_fd;               /* eventfd that wakes the progress thread */
  int kick_word;             /* futex word when there is no fd */
  uint64_t next_key;

  struct ofi_peer *peers;
  struct ofi_buf *free_bufs;
  struct ofi_buf *retry_head, *retry_tail; /* sends that got EAGAIN */
  struct ofi_owed *owed_head, *owed_tail;  /* work that found no buffer */
  struct ofi_buf *repost_owed; /* receive buffers of direct deliveries */
  struct ofi_buf *rx_cur;      /* the receive buffer being parsed */
  int rx_kept;                 /* rx_cur is held: not reposted now */
  int rx_held;                 /* receive buffers eager AMs hold */
  uint32_t ack_owed;           /* 1 + the peer whose counts wait, or 0 */
  long fins_held;              /* FINs in peers' lists, not yet sent
                                  (atomic reads: ofi_tp_drained) */
  int fin_hold;                /* a FIN now may wait (ofi_fin.c) */
  struct ofi_owed *owed_spare;
  struct ofi_buf *recv_bufs; /* all posted receive buffers (array) */
  long tx_posted;            /* sends waiting for their completion */
  long reads_posted;         /* RMA reads waiting for their completion */
  long exposed;              /* source transfers peers read by RMA */
  long pull_sources;         /* source transfers peers PULL from */
  int fail_pending;          /* some peer has fail_pending set */
  long nf_unacked;           /* no-FIN messages sent, not acknowledged */
  int nf_unasked;            /* atomic: some left since ofi_tp_flush asked */
  unsigned gen;              /* endpoint lives so far (tight pollers) */

  struct ofi_xfer **xtab;    /* transfers by slot */
  struct ofi_xfer *xspare;   /* freed records kept for reuse */
  int nspare;
  uint32_t *xgen;
  uint32_t xcap, xfree_hint;
  long xlive;

  struct ofi_xfer *ready_head, *ready_tail; /* sinks with work to issue */
  /* PULLs in flight from all our sinks, and the sinks waiting for that
   * number to fall under the budget (ofi_sink.c, pull_budget) */
  long pulls_out;
  struct ofi_xfer *pwait_head, *pwait_tail;
  struct ofi_read *rd_spare; /* finished read records kept for reuse */
  struct ofi_stage *stage_spare; /* free stages (ofi_packref.c) */
  unsigned char *arena;      /* our stage arena (shared memory) or NULL */
  int arena_fd;              /* its memfd, 0 before the first use */
  int nrd_spare;

  /* Handles the transport serves, by slot (CPE tasks of a process share
   * handle values); a packet names its handle by key (ofi_hndl). */
  struct lapi_hndl *hmap[LAPI_AM_MAX_SLOTS];
  /* Gfence's barriers, by handle value; rounds now waiting */
  struct ofi_barrier bar[LAPI_AM_MAX_HANDLES];
  int bar_waits;

  pthread_t thread;
  int thread_on;
  int stop;                  /* atomic */
  struct ofi_stats st;
};

extern struct ofi_state ofi;

/* ---------------------------------------------------------- functions */

/* ofi_fabric.c */
int ofi_tp_init(struct lapi_hndl *h);
void ofi_tp_fini(struct lapi_hndl *h);
int64_t ofi_now_ms(void);
int ofi_mr_reg(void *addr, size_t len, uint64_t access, struct fid_mr **mr);
void ofi_mr_close(struct fid_mr *mr);
int ofi_timeout_s(void);     /* smallest TIMEOUT of the served handles */

/* ofi_cgobj.c: a CG's own object in /dev/shm (ofi_cg_object_name).
 * create: len bytes, reserved and mapped, replacing a leftover of a
 * crashed job; NULL with errno, nothing left behind.  open: an existing
 * one mapped whole, its size in *len; NULL if it cannot be. */
void *ofi_cgobj_create(const char *name, size_t len);
void *ofi_cgobj_open(const char *name, size_t *len);

struct lapi_boot;
/* ofi_lane.c: rings in shared memory between the CGs of one host (shm),
 * which carry every packet to a peer whose ring we mapped.  create
 * (before the address exchange, where the doorbell is), attach (after
 * it; sets ofi.lane), unlink (once every peer attached), close. */
void ofi_lane_create(const struct lapi_boot *b);
void ofi_lane_attach(const struct lapi_boot *b);
void ofi_lane_unlink(void);
void ofi_lane_close(void);
/* The packet a[0..alen) followed by z[0..zlen) into peer's ring (under
 * ofi.lock): 0, or -FI_EAGAIN while the ring is full; 1: no lane to
 * that peer, the provider carries its packets. */
int ofi_lane_push(uint peer, const void *a, size_t alen, const void *z,
                  size_t zlen);
/* Every packet published to us so far, up to a batch per sender, given
 * to run (under ofi.lock); returns how many. */
int ofi_lane_drain(void (*run)(const unsigned char *pkt, size_t len));
/* Test hook for white-box tests (under ofi.lock): set, the next packet
 * into any ring gets a length past what its record publishes, which its
 * reader must take for a corrupt lane (tests/ofi/ofi_lane_corrupt.c). */
extern int ofi_lane_corrupt_next;

/* ofi_bell.c: the doorbell between the CGs of one host */
struct lapi_boot;
int ofi_bell_create(const struct lapi_boot *b);
void ofi_bell_attach(const struct lapi_boot *b);
void ofi_bell_unlink(void);
void ofi_bell_close(void);
int ofi_bell_on(void);
void ofi_bell_ring(uint peer);
void ofi_bell_polled(int delta);
void ofi_bell_polled_soon(void);
void ofi_bell_wake_self(void);
void ofi_bell_kick(void);
void ofi_bell_sleep(int ms, int (*poll)(void));

/* LAPI_OFI_PACK_STAGES at most (ofi_packref.c's stage records) */
#define OFI_PACK_STAGES_MAX 4096

/* Default LAPI_OFI_MAX_READ (bytes of one RMA read): where a read is a
 * request and a response over the provider's messages (tcp), and
 * elsewhere (ofi_fabric.c, read_defaults). */
#define OFI_MAX_READ_BY_MESSAGES ((size_t)1 << 20)
#define OFI_MAX_READ_DEFAULT ((size_t)4 << 20)

/* ofi_cma.c: RMA reads within the host by process_vm_readv.  A card
 * travels in the address exchange: pid 0 means no CMA toward us. */
#define OFI_CMA_IOV 1024     /* pieces a side per call (the kernel's
                                UIO_MAXIOV) */
/* Default LAPI_RDV_MIN_BLOCK with CMA: smaller pieces go packed. */
#define OFI_CMA_MIN_BLOCK 16384
/* The piece rule is about many small pieces (the kernel pins each on
 * its own): one piece, read by CMA, is one system call however small,
 * and beats packing it (ofi_fabric.c, read_defaults), unless the user
 * set LAPI_RDV_MIN_BLOCK. */
static inline int ofi_one_read(unsigned pieces)
{
  return ofi.cma && pieces == 1 && !ofi.min_block_user;
}
struct ofi_cma_card {
  uint64_t pid;
  uint64_t probe_addr;       /* a word of ours peers read ... */
  uint64_t probe_val;        /* ... and find this in */
};
int ofi_cma_wanted(void);    /* shm, and LAPI_OFI_CMA is not 0 */
/* Our card: pid and probe word on shm (whether or not CMA is wanted: the
 * probe also proves a peer's pid for stage references), else zero. */
void ofi_cma_card(struct ofi_cma_card *mine);
/* 1 if peer's probe word reads back by CMA (its pid is kept as proven),
 * else 0 (logged). */
int ofi_cma_probe(uint peer, const struct ofi_cma_card *c);
/* Reads the bytes of r[0..nr) of peer into l[0..nl) (the arrays are
 * consumed); 0, or -errno (EFAULT, ESRCH, EPERM ...). */
int ofi_cma_read(uint peer, struct iovec *l, size_t nl, struct iovec *r,
                 size_t nr, size_t bytes);
/* The same, writing l into peer's r (process_vm_writev). */
int ofi_cma_write(uint peer, struct iovec *l, size_t nl, struct iovec *r,
                  size_t nr, size_t bytes);

/* ofi_progress.c */
int ofi_tp_progress(struct lapi_hndl *h);
int ofi_tp_tight(struct lapi_hndl *h, int on);
/* Threads of ours registered as tight pollers, lingering ones included
 * (tests: all end once nobody waits). */
int ofi_tight_registered(void);
/* The CQ read a tight poller of this thread skipped when it stopped
 * (wait-fd providers), done after its next send; under ofi.lock. */
void ofi_owed_pass(void);
int ofi_progress_start(void);
void ofi_progress_stop(void);
/* Wakes the progress thread (if it sleeps) to look at our work. */
void ofi_kick(void);
/* ofi_kick, unless an application thread of ours polls now: its next
 * pass (progress_pass: the CQ, retries, owed packets, reads to issue)
 * does the work the kick was for.  Under ofi.lock. */
void ofi_kick_unpolled(void);
/* For tests only (tests/fuzz): the packet pkt[0..len) as if it had just
 * arrived in a receive buffer from the CQ: checked and run under
 * ofi.lock by the same code as a real arrival (an eager AM may keep the
 * buffer; a few such buffers become posted receives).  Nothing of it is
 * trusted, as with any arrival.  Takes ofi.lock; 0 once run, -1 if it
 * could not be (transport down, longer than a receive buffer, provider
 * with FI_MR_LOCAL, no memory).  The real path never calls it.  With
 * direct, the arrival is read as a tight poller's pass reads one
 * (ofi_direct_armed): a SHORT may be delivered by the caller itself,
 * after the lock (ofi_direct.c). */
int ofi_test_arrival(const void *pkt, size_t len, int direct);
void ofi_peer_fail(uint peer, int code, const char *why);
/* Declare gone the peers whose sends failed (never from inside a send:
 * its callers hold transfers the sweep would free). */
void ofi_fail_pending(void);
/* The handle's error handler hears of it, in MPE context. */
void ofi_report(struct lapi_hndl *h, int code, lapi_err_t type, uint peer,
                const char *why);

/* ofi_packref.c: packed chunks the sink copies from the source's memory
 * (all under ofi.lock) */
struct ofi_stage;
int ofi_ref_wanted(const struct ofi_xfer *x);  /* sink: flag the PULL */
/* Sink: 1 if reference r from peer names the process proven at start-up
 * to be that peer (ofi.peers[].pid), else 0: drop it (OFI_BAD_REF). */
int ofi_ref_trusted(uint peer, const struct ofi_data_ref *r);
/* Source: answer p by a staged chunk; 0 if sent (or owed), -1 to answer
 * with the bytes in the packet instead. */
int ofi_ref_answer(struct ofi_xfer *x, const struct ofi_pull *p);
void ofi_ref_release_all(struct ofi_xfer *x);  /* source: transfer ends */
/* 1 if a stream of len bytes may go staged whole (OFI_RTS_STAGED): stage
 * references on, and it fits LAPI_OFI_STAGED_MAX and one stage. */
int ofi_ref_whole_fits(size_t len);
/* Source, choosing x's mode: pack x's whole stream into a stage of our
 * arena for an OFI_RTS_STAGED RTS; 0, or -1 if it cannot (it does not
 * fit, no stage is free, the peer cannot read our arena). */
int ofi_ref_stage_whole(struct ofi_xfer *x);
/* Source: the reference to that stage, for its RTS. */
void ofi_ref_whole_ref(const struct ofi_xfer *x, struct ofi_data_ref *r);
/* Sink, at a STAGED RTS's arrival from peer: the staged stream's first
 * byte (len bytes checked inside the mapped arena), NULL if it must be
 * pulled instead (the arena cannot be mapped: references from the peer
 * turn off), or *forged = 1 if r names another process or file than the
 * peer's arena (drop the RTS as OFI_BAD_REF). */
const unsigned char *ofi_ref_whole(uint peer, const struct ofi_data_ref *r,
                                   uint64_t len, int *forged);
/* Sink: land a REF DATA already checked against the pull; 1 if landed,
 * 0 if the copy failed and the range was asked for again in a packet,
 * -1 if the reference is out of sequence, -2 if it names a file of the
 * peer other than its stage arena (drop either). */
int ofi_ref_land(struct ofi_xfer *x, const struct ofi_data *d,
                 const struct ofi_data_ref *r);
/* ofi_sink.c: a PULL of len bytes of stream at offset (flagged
 * OFI_PULL_REF if ref); not counted as issued.  LAPI_SUCCESS, or an error
 * if the peer is failing. */
int ofi_pull_send(struct ofi_xfer *x, int stream, uint64_t offset,
                  size_t len, int ref);
void ofi_ref_fini(void);  /* before ofi.peers goes */

/* ofi_send.c: all under ofi.lock */
struct ofi_buf *ofi_buf_get(void);
struct ofi_buf *ofi_buf_take(void); /* the same, the nomem hook aside */
void ofi_buf_put(struct ofi_buf *b);
/* Zeroes hd and fills in the fields every packet has (the sender: us). */
void ofi_hdr_init(struct ofi_hdr *hd, int type, uint16_t hndl, uint64_t id,
                  size_t len);
void *ofi_pkt_init(struct ofi_buf *b, int type, uint16_t hndl, uint64_t id,
                   size_t len);
int ofi_post_raw(struct ofi_buf *b, int *injected);
void ofi_send(struct ofi_buf *b, uint peer, uint64_t xfer);
void ofi_send_retry(void);
int ofi_send_small(uint peer, const void *pkt, size_t len);
/* Out of packet buffers: what must still happen is owed and done again
 * by ofi_send_retry once buffers are free (a PULL to answer, a transfer
 * to launch); if even that record cannot be had, the peer is declared
 * gone (LAPI_ERR_MEMORY_EXHAUSTED), never silently dropped. */
void ofi_owe_pull(const struct ofi_pull *p);
void ofi_owe_launch(struct ofi_xfer *x);
void ofi_owe_nak(uint peer, const struct ofi_nak *n); /* ofi_nak_post */
/* The UNKNOWN answering an ASK that came while packets to its asker
 * were owed: sent once none of those is left (ofi_ask.c). */
void ofi_owe_unknown(uint peer, const struct ofi_ask *u);
void ofi_owed_free(void);

/* ofi_fault.c: test hooks, off unless their variables are set */
extern int ofi_mangle_every;  /* LAPI_OFI_TEST_MANGLE */
extern int ofi_nomem_every;   /* LAPI_OFI_TEST_NOMEM */
extern int ofi_badkey_every;  /* LAPI_OFI_TEST_BAD_KEY */
extern int ofi_dropnofin_at;  /* LAPI_OFI_TEST_DROP_NOFIN */
extern int ofi_deaf_acks;     /* LAPI_OFI_TEST_DEAF_ACKS */
extern int ofi_dropdata_at;   /* LAPI_OFI_TEST_DROP_DATA */
extern int ofi_owednomem_at;  /* LAPI_OFI_TEST_OWED_NOMEM */
extern int ofi_foreignref_kind;  /* LAPI_OFI_TEST_FOREIGN_REF */
/* The bad key hook: every ofi_badkey_every-th call spoils the first of
 * the segments an RTS or GET packet offers (its key, or with CMA its
 * address), so that the peer's RMA on it fails or is never served. */
void ofi_badkey_apply(struct ofi_seg *segs, uint32_t nseg);
/* 1 if the packet in b is the no-FIN message the test hook drops. */
int ofi_dropnofin_now(const struct ofi_buf *b);
/* The drop-DATA hook, where a PULL is answered: 1 if this DATA to peer
 * is not to be sent (only called while ofi_dropdata_at is set). */
int ofi_dropdata_now(uint peer);
void ofi_fault_settings(void);
/* After b was posted: every ofi_mangle_every-th packet is followed by an
 * invalid copy of it (one class of enum ofi_bad at a time). */
void ofi_mangle_after(const struct ofi_buf *b);
/* 1 when this packet buffer allocation is to fail (the nomem hook). */
int ofi_nomem_now(void);
/* The owed-nomem hook, where an ASK's handler owes an UNKNOWN to peer:
 * 1 if its record is to be missing (only called while ofi_owednomem_at
 * is set). */
int ofi_owednomem_now(uint peer);
/* For tests (lapi_static): copies made by class, arrivals dropped by
 * class (STALE includes genuine stale ones); takes ofi.lock. */
void ofi_fault_counts(uint64_t injected[OFI_BAD_N],
                      uint64_t dropped[OFI_BAD_N]);
/* For tests: no more mangled copies from this process. */
void ofi_fault_mangle_stop(void);
/* The foreign-reference hook, before a DATA by reference (pkt, len) is
 * sent to peer: a forged copy naming a decoy goes first (only called
 * while ofi_foreignref_kind is set). */
void ofi_fault_foreign_ref(uint peer, const void *pkt, size_t len);
/* The decoy's process ends (ofi_ref_fini). */
void ofi_fault_decoy_end(void);

/* ofi_xfer table (ofi_origin.c); task: the other end's LAPI task */
struct ofi_xfer *ofi_xfer_new(enum ofi_role role, uint task,
                              struct lapi_hndl *h);
struct ofi_xfer *ofi_xfer_find(uint64_t id);
void ofi_xfer_free(struct ofi_xfer *x);
void ofi_credit_release(uint peer);
void ofi_credit_give(uint peer, uint n);

/* ofi_origin.c: arrivals at the origin (under ofi.lock) */
void ofi_on_fin(const struct ofi_fin *f);
void ofi_on_pull(const struct ofi_pull *p);
void ofi_on_rmw_reply(const struct ofi_rmw_reply *r);
/* ofi_barrier.c: LAPI_Gfence's barrier of the core groups.  The tp
 * barrier op; a BARRIER packet (ofi.lock); a handle value's barrier
 * starts anew (its LAPI_Init, before the start-up barrier; ofi.lock);
 * a peer was declared gone (ofi.lock); the watchdog marks in wait[]
 * the peers that barrier rounds wait for (ofi.lock). */
int ofi_tp_barrier(struct lapi_hndl *h);
void ofi_on_barrier(const struct ofi_hdr *hd);
void ofi_barrier_reset(lapi_handle_t hv);
void ofi_barrier_peer_failed(uint peer);
void ofi_barrier_watch(unsigned char *wait);

/* ofi_ask.c: transfers whose answer may have been lost (ofi.lock) */
void ofi_ask_watch(int64_t now, int64_t after_ms);
void ofi_nofin_ask_watch(int64_t now, int64_t after_ms);
void ofi_on_ask(const struct ofi_ask *a);
void ofi_on_unknown(const struct ofi_ask *a);
void ofi_source_start(struct ofi_xfer *x);
void ofi_relaunch(struct ofi_xfer *x); /* its owed first packet */
void ofi_source_mode(struct ofi_xfer *x);
void ofi_note_fire(struct ofi_xfer *x);
void ofi_fail_xfer(struct ofi_xfer *x, int code);
void ofi_send_fin(uint peer, uint16_t hndl, uint64_t id, int status);

/* ofi_fin.c: FINs of a sink batched per origin (under ofi.lock) */
void ofi_fin_queue(uint peer, uint16_t hndl, uint64_t id, int status,
                   size_t bytes);
void ofi_fin_flush(void);
void ofi_on_fin_list(const struct ofi_fin_list *l, size_t len);
void ofi_fin_free(void);
void ofi_tp_drained(struct lapi_hndl *h); /* the tp drained op */

/* ofi_sink.c: arrivals at the sink (under ofi.lock) */
void ofi_on_rts(const struct ofi_rts *r, size_t len);
void ofi_on_short(const struct ofi_short *s, size_t len);
/* A checked SHORT whose number is taken: into the handle's queue. */
void ofi_short_queue(const struct ofi_short *s, size_t len);
/* An eager AM whose header handler chose DELIVER or DISCARD: its data
 * (in the packet) copied where the handler said, then its completion
 * handler and tgt_cntr.  Any thread, no lock.  The caller counts it in
 * the statistics (ofi_am_bytes of it). */
static inline size_t ofi_am_bytes(const struct lapi_am_dest *d)
{
  return d->action == LAPI_AM_DELIVER ? d->bytes : 0;
}
void ofi_am_land(struct lapi_am_msg *m, struct lapi_am_dest *d,
                 const unsigned char *data);

/* ofi_direct.c: polling mode, a SHORT delivered by the thread that polled
 * it in.  ofi_direct_armed: this thread's progress pass may take one
 * (set around it, under ofi.lock); take: 1 if it kept the checked packet
 * (then ofi_direct_held is set); deliver (after ofi.lock is released):
 * run it, or queue it as any other.  Thread-locals, not calls: they are
 * touched on every poll of a tight loop. */
extern __thread int ofi_direct_armed __attribute__((tls_model("initial-exec")));
extern __thread int ofi_direct_held __attribute__((tls_model("initial-exec")));
int ofi_direct_take(const struct ofi_short *s, size_t len);
void ofi_direct_deliver(void);
/* Under ofi.lock: settle the ends and reposts that direct deliveries
 * owe (every thread's); cheap when there are none. */
void ofi_direct_flush(void);
extern int ofi_direct_owing; /* atomic: some slot's end may be owed */
static inline void ofi_direct_settle(void)
{
  if (ofi.repost_owed || ofi.ack_owed ||
      __atomic_load_n(&ofi_direct_owing, __ATOMIC_ACQUIRE))
    ofi_direct_flush();
}
/* ofi_progress.c: post a receive buffer again */
void ofi_repost(struct ofi_buf *b);
void ofi_rx_release(struct ofi_xfer *x);
void ofi_on_get(const struct ofi_get *g, size_t len);
void ofi_on_rmw(const struct ofi_rmw *m);
void ofi_on_data(const struct ofi_data *d, size_t len);
void ofi_on_read_done(struct ofi_read *rd, int err);
void ofi_sink_issue(void);
/* x's PULLs no longer count (it is freed) and it waits no more. */
void ofi_pull_forget(struct ofi_xfer *x);
void ofi_sink_fail(struct ofi_xfer *x, int code);

/* ofi_ack.c (under ofi.lock unless said) */
int ofi_nofin_room(uint peer);
uint32_t ofi_nofin_take(uint peer, struct lapi_hndl *h);
void ofi_nofin_peer_fail(uint peer);
void ofi_nofin_starved(uint peer);
void ofi_ack_watch(void);
/* An ASK about our no-FIN message seq from peer: answer from the window. */
void ofi_nofin_asked(uint peer, uint64_t seq);
/* LAPI_Term: every peer hears the counts it has not heard yet. */
void ofi_ack_final(void);
void ofi_ack_stamp(struct ofi_hdr *hd, uint peer);
int ofi_ack_in(const struct ofi_hdr *hd);
/* Apply the counts ofi_ack_in left owed (under ofi.lock). */
void ofi_ack_settle(void);
int ofi_nofin_arrived(uint peer, uint32_t seq);
void ofi_nofin_end(uint peer, uint32_t seq);
/* Origin: x, sent without a FIN as number seq but waited for, stays
 * until the counts cover it (ofi_soon_landed) or it is freed. */
void ofi_nofin_keep(struct ofi_xfer *x, uint32_t seq);
void ofi_nofin_forget(struct ofi_xfer *x);
/* A poll found nothing to do: ask for the counts of the kept ones. */
void ofi_soon_ask(void);
/* ofi_origin.c: a kept message of ours completed at its target
 * (x->nf_status: LAPI_SUCCESS or its NAK's): what its FIN would do. */
void ofi_soon_landed(struct ofi_xfer *x);
void ofi_on_ack_req(const struct ofi_hdr *hd);
/* The no-FIN message numbered seq from peer failed here with status
 * (kind: OFI_K_AM or OFI_K_PUT; hndl: its handle key): NAK, then it
 * counts as completed (instead of ofi_nofin_end). */
void ofi_nofin_fail(uint peer, uint16_t hndl, uint32_t seq, int kind,
                    int status);
/* Posts a NAK to peer and ends its message; 0, or -1: no buffer yet. */
int ofi_nak_post(uint peer, const struct ofi_nak *n);
/* Our message to task failed there with code (NAK or FIN status). */
void ofi_remote_fail(struct lapi_hndl *h, int kind, uint task, int code);
void ofi_ack_free(void);
void ofi_tp_flush(struct lapi_hndl *h); /* the tp op; takes ofi.lock */
void ofi_tp_sync(void);                /* the tp op; takes ofi.lock */

/* A target's status the origin must hear of: a purge is the target's
 * own decision (LAPI_Purge_totask), not a failure of the message. */
static inline int ofi_status_failed(int status)
{
  return status != LAPI_SUCCESS && status != LAPI_ERR_TGT_PURGED;
}

/* ofi_hdl.c: handler addresses as (module, offset) */
uint64_t ofi_hdl_encode(uint64_t hdr_hdl, uint32_t *module);
uint64_t ofi_hdl_decode(uint64_t wire, uint32_t module);

/* Tasks and handles on the wire.  In CPE-task mode a core group holds
 * ofi.tpc tasks: a peer is a core group, a packet names the receiving
 * handle by key and carries the sending task's index in its core group;
 * in process mode tpc is 1, a task is its core group and the key is the
 * handle value. */
static inline uint16_t ofi_key(const struct ofi_xfer *x)
{
  return lapi_hndl_key(x->task % ofi.tpc, x->h->index);
}
static inline uint8_t ofi_local(const struct lapi_hndl *h)
{
  return (uint8_t)(h->task_id - h->cg_first);
}
static inline uint ofi_src_task(const struct ofi_hdr *hd)
{
  return hd->src * ofi.tpc + hd->src_local;
}
/* The served handle a key names, or NULL. */
static inline struct lapi_hndl *ofi_hndl(uint16_t key)
{
  struct lapi_hndl *h = lapi_hndl_by_key(key);
  return h && ofi.hmap[h->slot] == h ? h : NULL;
}

/* ofi_wire.c */
size_t ofi_desc_size(const lapi_vec_t *v, int with_addr);
void ofi_desc_write(const lapi_vec_t *v, unsigned char *out);
int ofi_desc_read(const unsigned char *in, size_t len, struct ofi_vec *ov);
void ofi_vec_free(struct ofi_vec *ov);
void ofi_vec_one(struct ofi_vec *ov, void *addr, size_t len);
int ofi_pkt_check(const struct ofi_hdr *hd, size_t got);
size_t ofi_pkt_min(int type); /* fixed part of a known type */
void ofi_bad_pkt(const char *why, uint src);          /* OFI_BAD_OTHER */
void ofi_drop(enum ofi_bad cls, const char *why, uint src);

#endif /* LAPI_OFI_H */
