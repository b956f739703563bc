/*
 * fuzz_shape.c - an input becomes a packet from task 0 (fuzz_wire.h).
 *
 * A record's control byte chooses how much of the header stays raw.
 * Unless left raw, the header is made valid (magic, len = the
 * packet's length, src = 0, task 1's handle key, a type that mostly
 * exists, acknowledgement counts task 1 accepts), so that inputs reach
 * the type handlers.  With FZ_CTL_LIVE_ID the transfer id a DATA, PULL,
 * FIN, ASK, UNKNOWN or RMW reply names (every entry's, in a FIN list)
 * becomes that of a transfer task 1 holds with task 0 (an earlier record
 * of the input began it), as a peer that knew it would send; offsets,
 * lengths and the rest stay fuzzed.
 *
 * Then, raw or not, every field a well-formed operation names memory by
 * is moved into a sandbox: by LAPI's own semantics the origin says where
 * a put lands, where a get reads, which variable an RMW changes, which
 * counter a message bumps and which handler runs, so writing there is
 * the library's job, not a bug.  Description entries and segments keep
 * their offset in the sandbox and are cut to fit it (a length past the
 * sandbox could only be legal outside it); handler indexes are folded
 * onto task 1's Addr_set slots (the Amsend one for an Amsend, the
 * Amsendv one for an Amsendv: naming a handler of the other kind is the
 * origin's error the target cannot see).  Everything else (lengths,
 * counts, ids, offsets, types, flags, description sizes) stays as the
 * input says: that is what the library must check.
 *
 * One more rule, by construction: a no-FIN message (a SHORT, an RTS with
 * OFI_RTS_NO_FIN) carries a number outside task 1's window of task 0's
 * numbers.  A number inside it would be as valid as a real one: task 1
 * would count it and acknowledge to task 0 messages task 0 never sent,
 * and task 0 would drop task 1's every packet from then on (BAD_ACK),
 * rightly.  The fault hook (ofi_fault.c) follows the same rule.  An
 * ACK_REQ asks for any number near the window: one ahead of task 0's
 * count is answered once that count is reached, and task 0's real
 * requests for fewer are answered at theirs (ofi_on_ack_req; until
 * session 17 the forged number alone was kept, and they waited for task
 * 0's ASK, a ping interval later: tests/ofi/ofi_ackreq_forged.c).
 * And a BARRIER says no FAIL and names no barrier task 1 is in or may
 * enter next: those would break or pass its real LAPI_Gfence (the final
 * check's) as task 0's own would.
 *
 * In a 3-task job the inputs claim task 2 (FZ_FORGED), which sends
 * nothing during the run, and those rules fall away for it: a no-FIN
 * number lands mostly inside task 1's window of task 2's numbers (a few
 * fall just behind or past it), an ACK_REQ asks for any number near it,
 * and a BARRIER names the barrier before task 1's, its own, the next or
 * the one after, any round, FAIL or not.  Task 1 then acknowledges
 * numbers task 2 never used, and task 2 drops its packets (BAD_ACK):
 * the right outcome, which the job's end is built around (fuzz_wire.h);
 * the harness puts task 1's barrier state back before every input.  A
 * header left raw that says task 0 keeps task 0's rules.
 *
 * Without CMA (tcp) a segment of the sender's memory is read or written
 * by RMA with the key it carries: like its address, the key is made the
 * sender's real one (its sandbox's registration).  A made-up key is what
 * no origin sends: tcp;ofi_rxm tears the connection down on it, and task
 * 1 would rightly declare the sender gone.
 */
#include <string.h>

#include "fuzz_wire.h"
#include "transport/ofi/ofi.h"

struct fz_env fz_env;


static uint64_t get64(const unsigned char *p)
{
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

static void put64(unsigned char *p, uint64_t v)
{
  memcpy(p, &v, 8);
}

/* (addr, len) into the sandbox at base: the input's offset, moved so the
 * range fits; a length past the sandbox is cut to it.  Address 0 stays
 * 0 (no address: the checks must refuse it where bytes go there). */
static void clamp(uint64_t base, uint64_t *addr, uint64_t *len)
{
  uint64_t l = *len;
  if (l > FZ_SANDBOX)
    l %= FZ_SANDBOX + 1;
  *len = l;
  if (*addr == 0)
    return;
  uint64_t off = *addr % FZ_SANDBOX;
  if (off > FZ_SANDBOX - l)
    off = FZ_SANDBOX - l;
  *addr = base + off;
}

static void clamp_at(unsigned char *p, uint64_t base)
{
  uint64_t a = get64(p), l = get64(p + 8);
  clamp(base, &a, &l);
  put64(p, a);
  put64(p + 8, l);
}

/* A vector description at d (dlen bytes) naming memory at base. */
static void desc_sandbox(unsigned char *d, uint64_t dlen, uint64_t base)
{
  if (dlen < OFI_DESC_HEAD)
    return;
  uint32_t head[2];
  memcpy(head, d, sizeof head);
  unsigned char *e = d + OFI_DESC_HEAD;
  if (head[0] == LAPI_GEN_STRIDED_XFER) {
    if (dlen < OFI_DESC_HEAD + 24)
      return;
    /* num blocks of block bytes, stride apart: the span must fit, so the
     * count is cut to what fits (the block and stride stay) */
    uint64_t a = get64(e), block = get64(e + 8), stride = get64(e + 16);
    uint64_t num = head[1];
    if (block > FZ_SANDBOX)
      block %= FZ_SANDBOX + 1;
    if (num > 1 && (unsigned __int128)(num - 1) * stride + block > FZ_SANDBOX) {
      num = stride ? (FZ_SANDBOX - block) / stride + 1 : num;
      head[1] = (uint32_t)num;
      memcpy(d, head, sizeof head);
    }
    uint64_t span = num ? (num - 1) * stride + block : 0;
    clamp(base, &a, &span);
    put64(e, a);
    put64(e + 8, block);
    return;
  }
  for (uint64_t i = 0; OFI_DESC_HEAD + 16 * (i + 1) <= dlen; i++)
    clamp_at(e + 16 * i, base);
}

/* Handler index: folded onto 0..FZ_HDL_SPAN-1, of the message's kind. */
static uint64_t hdl_index(uint64_t wire, int vector)
{
  uint64_t k = wire % FZ_HDL_SPAN;
  if (k == FZ_HDL_AM || k == FZ_HDL_AMV)
    k = vector ? FZ_HDL_AMV : FZ_HDL_AM;
  return k;
}

static uint64_t cntr_addr(uint64_t wire)
{
  return wire & 1 ? (uint64_t)(uintptr_t)fz_env.cntr : 0;
}

static uint32_t nofin_outside(uint32_t seq)
{
  return fz_env.nofin_base + OFI_NOFIN_WINDOW + (seq & 0xffff);
}

/* Does the packet claim the task whose numbers the input may use? */
static int forged(const struct ofi_hdr *hd)
{
  return fz_env.third && hd->src == FZ_FORGED;
}

/* The claimed sender as task 1 knows it (task 0's for any other). */
static const struct fz_peer *sender(const struct ofi_hdr *hd)
{
  return &fz_env.peer[forged(hd) ? FZ_FORGED : 0];
}

/* A no-FIN number: task FZ_FORGED's near task 1's window of them, mostly
 * inside; task 0's outside it. */
static uint32_t nofin_number(const struct ofi_hdr *hd, uint32_t seq)
{
  if (!forged(hd))
    return nofin_outside(seq);
  return fz_env.forged_base - 16 + (seq & 0xffff) % (OFI_NOFIN_WINDOW + 32);
}

/* A segment of the sender's memory: into its sandbox, with its key where
 * the key is used. */
static void seg_sandbox(unsigned char *p, const struct fz_peer *from)
{
  clamp_at(p, from->sb);
  if (fz_env.keys)
    put64(p + 16, from->rkey);
}

/* The tag fuzz_job.c's Amsendv handler reads the origin's shape from. */
#define FZ_TAG 0x465a5654u /* "TVZF" */

static void shape_rts(unsigned char *p, size_t len)
{
  struct ofi_rts *r = (struct ofi_rts *)p;
  r->hdl_module = 0;
  r->hdr_hdl = hdl_index(r->hdr_hdl, r->shape != 0);
  r->tgt_cntr = cntr_addr(r->tgt_cntr);
  if (r->flags & OFI_RTS_NO_FIN)
    r->seq = nofin_number(&r->h, r->seq);
  if ((r->flags & OFI_RTS_STAGED) &&
      len >= sizeof *r + sizeof(struct ofi_data_ref)) {
    /* a staged stream names the sender's stage arena: its process (the
     * reference ends the packet) */
    struct ofi_data_ref ref;
    memcpy(&ref, p + len - sizeof ref, sizeof ref);
    ref.pid = sender(&r->h)->pid;
    memcpy(p + len - sizeof ref, &ref, sizeof ref);
  }
  /* segments of the sender's memory, read by RMA */
  uint64_t at = sizeof *r;
  for (uint64_t i = 0; i < r->nseg && at + sizeof(struct ofi_seg) <= len;
       i++, at += sizeof(struct ofi_seg))
    seg_sandbox(p + at, sender(&r->h));
  if ((uint64_t)r->nseg * sizeof(struct ofi_seg) > len)
    return;
  at = sizeof *r + (uint64_t)r->nseg * sizeof(struct ofi_seg);
  uint64_t uat = at;
  at += ofi_align8(r->uhdr_len);
  int desc_here = r->desc_inline && at <= len && r->desc_len <= len - at;
  /* the Amsendv handler learns the shape from the uhdr (as a LAPI
   * program's handler would from its own header): written here, from
   * the description the library will read, or cleared */
  if (r->kind == OFI_K_AM && r->uhdr_len >= 12 && uat + 12 <= len) {
    uint32_t tag[3] = {0, 0, 0};
    if (r->shape && desc_here && r->desc_len >= OFI_DESC_HEAD) {
      tag[0] = FZ_TAG;
      memcpy(&tag[1], p + at, 8);
    }
    memcpy(p + uat, tag, sizeof tag);
  }
  if (r->kind == OFI_K_PUT && desc_here)
    desc_sandbox(p + at, r->desc_len, (uint64_t)(uintptr_t)fz_env.sb1);
}

static void shape_get(unsigned char *p, size_t len)
{
  struct ofi_get *g = (struct ofi_get *)p;
  g->tgt_cntr = cntr_addr(g->tgt_cntr);
  uint64_t at = sizeof *g;
  if (g->desc_inline && g->desc_len <= len - at) {
    desc_sandbox(p + at, g->desc_len, (uint64_t)(uintptr_t)fz_env.sb1);
    at += ofi_align8(g->desc_len);
  }
  if ((g->flags & OFI_GET_WRITE) && at <= len &&
      sizeof(struct ofi_seg) <= len - at) {
    /* the sender's buffer, written with data_len bytes */
    const struct fz_peer *from = sender(&g->h);
    struct ofi_seg s;
    memcpy(&s, p + at, sizeof s);
    if (g->data_len > FZ_SANDBOX)
      g->data_len %= FZ_SANDBOX + 1;
    uint64_t span = s.len > g->data_len ? s.len : g->data_len;
    clamp(from->sb, &s.addr, &span);
    if (s.len > span)
      s.len = span;
    if (fz_env.keys)
      s.key = from->rkey;
    memcpy(p + at, &s, sizeof s);
  }
}

static uint64_t live_id(const struct fz_live *live, uint64_t wire)
{
  return live->n ? live->id[wire % live->n] : wire;
}

static void shape_live(unsigned char *out, size_t len,
                       const struct fz_live *live)
{
  struct ofi_hdr *hd = (struct ofi_hdr *)out;
  switch (hd->type) {
  case OFI_M_DATA:
  case OFI_M_PULL:
  case OFI_M_FIN:
  case OFI_M_ASK:
  case OFI_M_UNKNOWN:
  case OFI_M_RMW_REPLY:
    hd->id = live_id(live, hd->id);
    break;
  case OFI_M_FIN_LIST:
    for (size_t at = sizeof(struct ofi_fin_list);
         at + sizeof(struct ofi_fin_entry) <= len;
         at += sizeof(struct ofi_fin_entry)) {
      uint64_t id;
      memcpy(&id, out + at, 8);
      id = live_id(live, id);
      memcpy(out + at, &id, 8);
    }
    break;
  default: break;
  }
}

size_t fz_shape(unsigned ctl, const uint8_t *pkt, size_t n,
                const struct fz_live *live, unsigned char *out, size_t cap)
{
  size_t len = n < cap ? n : cap;
  memcpy(out, pkt, len);
  if (len < sizeof(struct ofi_hdr))
    return len;
  struct ofi_hdr *hd = (struct ofi_hdr *)out;
  if (!(ctl & FZ_CTL_RAW_HDR)) {
    hd->magic = OFI_WIRE_MAGIC;
    hd->len = (uint32_t)len;
    hd->src = fz_env.third ? FZ_FORGED : 0;
    hd->src_local = 0;
    hd->hndl = fz_env.key;
    hd->type = (uint8_t)(hd->type % (OFI_M_LAST + 1)); /* 0, LAST: none */
  }
  if (!(ctl & FZ_CTL_RAW_ACK)) {
    /* (task 1 sends task FZ_FORGED no no-FIN message: 0 and 0) */
    hd->ack_done = forged(hd) ? 0 : fz_env.ack_done;
    hd->ack_seq = forged(hd) ? 0 : fz_env.ack_seq;
  }
  size_t need = ofi_pkt_min(hd->type);
  if (need == 0 || len < need)
    return len; /* no field past the header is read */
  if (ctl & FZ_CTL_LIVE_ID)
    shape_live(out, len, live);
  switch (hd->type) {
  case OFI_M_RTS: shape_rts(out, len); break;
  case OFI_M_SHORT: {
    struct ofi_short *s = (struct ofi_short *)out;
    s->h.id = nofin_number(hd, (uint32_t)s->h.id); /* module 0 */
    s->hdr_hdl = hdl_index(s->hdr_hdl, 0);
    s->tgt_cntr = cntr_addr(s->tgt_cntr);
    break;
  }
  case OFI_M_ACK_REQ: {
    /* anywhere near the window of the sender's numbers: behind its
     * count (answered at once), inside, or past (dropped) */
    uint64_t id = hd->id;
    uint32_t base = forged(hd) ? fz_env.forged_base : fz_env.nofin_base;
    hd->id = base - OFI_NOFIN_WINDOW + (uint32_t)(id % (3 * OFI_NOFIN_WINDOW));
    if (id >> 32) /* (an id past 32 bits is dropped as such) */
      hd->id |= id & ~(uint64_t)UINT32_MAX;
    break;
  }
  case OFI_M_BARRIER: {
    /* number << 8 | round: the round and flag bits stay but FAIL; task
     * FZ_FORGED's: FAIL too, and the number one of task 1's next four,
     * from the one before its next */
    uint64_t seq;
    if (forged(hd)) {
      seq = (uint32_t)(fz_env.bar_seq - 1 + (hd->id >> 8 & 3));
      hd->id = seq << 8 | (hd->id & 0xff);
    } else {
      seq = fz_env.bar_seq + 2 + (hd->id >> 8 & 0xffff);
      hd->id = seq << 8 | (hd->id & 0x7f);
    }
    break;
  }
  case OFI_M_GET: shape_get(out, len); break;
  case OFI_M_RMW: {
    struct ofi_rmw *m = (struct ofi_rmw *)out;
    if (m->tgt_var)
      m->tgt_var = (uint64_t)(uintptr_t)fz_env.sb1 +
                   m->tgt_var % (FZ_SANDBOX / 8) * 8;
    break;
  }
  case OFI_M_DATA: {
    struct ofi_data *d = (struct ofi_data *)out;
    if ((d->flags & OFI_DATA_REF) &&
        len >= sizeof *d + sizeof(struct ofi_data_ref)) {
      /* a reference names the sender's stage arena: its process */
      struct ofi_data_ref r;
      memcpy(&r, d + 1, sizeof r);
      r.pid = sender(hd)->pid;
      memcpy(d + 1, &r, sizeof r);
    }
    break;
  }
  default: break;
  }
  return len;
}
