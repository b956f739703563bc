/*
 * fuzz_seeds.c - writes the wire fuzzer's seed corpus (tests/fuzz/corpus):
 * one well-formed input per packet type and protocol (fuzz_wire.h's input
 * layout: a control byte, then the packet).  The header fields the
 * shaping fixes (magic, len, src, hndl) are left 0 here; addresses are
 * small offsets the shaping moves into the sandboxes.  Built on demand
 * (target fuzz_wire_seeds), not by the tests:
 *
 *   fuzz_wire_seeds tests/fuzz/corpus
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_wire.h"
#include "transport/ofi/ofi.h"

static const char *dir;
static unsigned char pkt[16384] __attribute__((aligned(8)));

static void hdr(int type)
{
  memset(pkt, 0, sizeof pkt);
  ((struct ofi_hdr *)pkt)->type = (uint8_t)type;
  ((struct ofi_hdr *)pkt)->id = 0x100000001ull;
}

/* An IOVECTOR (or GENERIC) description of n pieces of len at p. */
static size_t desc_iov(unsigned char *p, uint32_t type, uint32_t n,
                       uint64_t len)
{
  uint32_t head[2] = {type, n};
  memcpy(p, head, 8);
  for (uint32_t i = 0; i < n; i++) {
    uint64_t e[2] = {0x40 + i * 0x1000, len};
    memcpy(p + 8 + 16 * i, e, 16);
  }
  return 8 + 16 * (size_t)n;
}

static size_t desc_strided(unsigned char *p, uint32_t num, uint64_t block,
                           uint64_t stride)
{
  uint32_t head[2] = {LAPI_GEN_STRIDED_XFER, num};
  uint64_t e[3] = {0x80, block, stride};
  memcpy(p, head, 8);
  memcpy(p + 8, e, 24);
  return 32;
}

/* Inputs of several records (fuzz_wire.h): rec() appends pkt[0..len)
 * with its control byte, emit_recs() writes them. */
static unsigned char acc[65536];
static size_t acc_n;

static void rec(unsigned ctl, size_t len, int more)
{
  acc[acc_n++] = (unsigned char)(ctl | (more ? FZ_CTL_MORE : 0));
  if (more) {
    acc[acc_n++] = (unsigned char)(len & 0xff);
    acc[acc_n++] = (unsigned char)(len >> 8);
  }
  memcpy(acc + acc_n, pkt, len);
  acc_n += len;
}

static void emit_recs(const char *name)
{
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  if (f == NULL) {
    perror(path);
    exit(1);
  }
  fwrite(acc, 1, acc_n, f);
  fclose(f);
  acc_n = 0;
}

/* An input of one record: pkt[0..len) behind a control byte of 0. */
static void emit(const char *name, size_t len)
{
  rec(0, len, 0);
  emit_recs(name);
}

static size_t rts_build(int kind, int mode, uint32_t shape, uint32_t nseg,
                        uint32_t uhdr, const unsigned char *desc,
                        size_t desc_len, uint64_t data_len, uint32_t flags);

/* An RTS: kind, mode, segs (RMA), uhdr bytes, a description, data. */
static void rts(const char *name, int kind, int mode, uint32_t shape,
                uint32_t nseg, uint32_t uhdr, const unsigned char *desc,
                size_t desc_len, uint64_t data_len, uint32_t flags)
{
  emit(name, rts_build(kind, mode, shape, nseg, uhdr, desc, desc_len,
                       data_len, flags));
}

/* A DATA of len bytes at offset of stream. */
static size_t data_build(uint64_t offset, uint32_t stream, size_t len)
{
  hdr(OFI_M_DATA);
  struct ofi_data *d = (struct ofi_data *)pkt;
  d->offset = offset;
  d->stream = stream;
  for (size_t i = 0; i < len; i++)
    pkt[sizeof *d + i] = (unsigned char)(i * 7);
  return sizeof *d + len;
}

static size_t rts_build(int kind, int mode, uint32_t shape, uint32_t nseg,
                        uint32_t uhdr, const unsigned char *desc,
                        size_t desc_len, uint64_t data_len, uint32_t flags)
{
  hdr(OFI_M_RTS);
  struct ofi_rts *r = (struct ofi_rts *)pkt;
  r->kind = (uint8_t)kind;
  r->mode = (uint8_t)mode;
  r->desc_inline = desc_len != 0;
  r->uhdr_len = uhdr;
  r->hdr_hdl = shape ? 2 : 1;
  r->tgt_cntr = 1;
  r->data_len = data_len;
  r->desc_len = desc_len;
  r->nseg = nseg;
  r->shape = shape;
  r->flags = flags;
  size_t at = sizeof *r;
  for (uint32_t i = 0; i < nseg; i++) {
    struct ofi_seg s = {0x100 + i * 0x2000, data_len / nseg, 0};
    memcpy(pkt + at, &s, sizeof s);
    at += sizeof s;
  }
  for (uint32_t i = 0; i < uhdr; i++)
    pkt[at + i] = (unsigned char)(0x10 + i);
  at += ofi_align8(uhdr);
  if (desc_len)
    memcpy(pkt + at, desc, desc_len);
  at += ofi_align8(desc_len);
  if (mode == OFI_MODE_EAGER) {
    for (uint64_t i = 0; i < data_len; i++)
      pkt[at + i] = (unsigned char)i;
    at += data_len;
  }
  if (flags & OFI_RTS_STAGED) {
    /* the stage it names (pid: the sender's, fuzz_shape.c) */
    struct ofi_data_ref ref = {.off = 0, .len = data_len, .fd = 3};
    memcpy(pkt + at, &ref, sizeof ref);
    at += sizeof ref;
  }
  return at;
}

int main(int argc, char **argv)
{
  if (argc != 2) {
    fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  dir = argv[1];
  unsigned char d[1024];
  size_t dl;

  /* RTS: AM, eager (FIN, no-FIN), one kept in its receive buffer */
  rts("rts_am_eager", OFI_K_AM, OFI_MODE_EAGER, 0, 0, 16, NULL, 0, 64, 0);
  rts("rts_am_eager_nofin", OFI_K_AM, OFI_MODE_EAGER, 0, 0, 8, NULL, 0, 32,
      OFI_RTS_NO_FIN);
  rts("rts_am_eager_held", OFI_K_AM, OFI_MODE_EAGER, 0, 0, 16, NULL, 0, 2600,
      0);
  dl = desc_iov(d, LAPI_GEN_IOVECTOR, 3, 20);
  rts("rts_amv_iovec", OFI_K_AM, OFI_MODE_EAGER, 1 + LAPI_GEN_IOVECTOR, 0, 16,
      d, dl, 60, 0);
  dl = desc_iov(d, LAPI_GEN_GENERIC, 2, 40);
  rts("rts_amv_generic", OFI_K_AM, OFI_MODE_EAGER, 1 + LAPI_GEN_GENERIC, 0, 16,
      d, dl, 80, 0);
  dl = desc_strided(d, 4, 16, 32);
  rts("rts_amv_strided", OFI_K_AM, OFI_MODE_EAGER, 1 + LAPI_GEN_STRIDED_XFER,
      0, 16, d, dl, 64, 0);
  rts("rts_am_rma", OFI_K_AM, OFI_MODE_RMA, 0, 2, 8, NULL, 0, 40000, 0);
  rts("rts_am_pull", OFI_K_AM, OFI_MODE_PULL, 0, 0, 8, NULL, 0, 50000, 0);
  rts("rts_am_staged", OFI_K_AM, OFI_MODE_PULL, 0, 0, 8, NULL, 0, 4096,
      OFI_RTS_STAGED);
  dl = desc_iov(d, LAPI_GEN_IOVECTOR, 40, 100);
  rts("rts_amv_pull_desc", OFI_K_AM, OFI_MODE_PULL, 1 + LAPI_GEN_IOVECTOR, 0,
      16, NULL, 0, 4000, 0);
  /* (its description pulled: desc_len without desc_inline) */
  {
    FILE *f;
    char path[4096];
    snprintf(path, sizeof path, "%s/rts_amv_pull_desc", dir);
    if ((f = fopen(path, "r+b")) != NULL) {
      uint64_t want = dl;
      fseek(f, 1 + (long)offsetof(struct ofi_rts, desc_len), SEEK_SET);
      fwrite(&want, 8, 1, f);
      fclose(f);
    }
  }
  /* RTS: PUT eager, RMA, strided RMA, pulled; GETREPLY */
  dl = desc_iov(d, LAPI_GEN_IOVECTOR, 1, 100);
  rts("rts_put_eager", OFI_K_PUT, OFI_MODE_EAGER, 0, 0, 0, d, dl, 100, 0);
  rts("rts_put_eager_nofin", OFI_K_PUT, OFI_MODE_EAGER, 0, 0, 0, d, dl, 100,
      OFI_RTS_NO_FIN);
  dl = desc_iov(d, LAPI_GEN_IOVECTOR, 2, 20000);
  rts("rts_put_rma", OFI_K_PUT, OFI_MODE_RMA, 0, 1, 0, d, dl, 40000, 0);
  dl = desc_strided(d, 8, 1000, 2000);
  rts("rts_put_pull_strided", OFI_K_PUT, OFI_MODE_PULL, 0, 0, 0, d, dl, 8000,
      0);
  {
    dl = desc_iov(d, LAPI_GEN_IOVECTOR, 1, 8000);
    hdr(OFI_M_RTS);
    rts("rts_put_rma_strided", OFI_K_PUT, OFI_MODE_RMA, 0, 1, 0, d, dl, 8000,
        0);
    char path[4096];
    snprintf(path, sizeof path, "%s/rts_put_rma_strided", dir);
    FILE *f = fopen(path, "r+b");
    if (f) {
      uint8_t one = 1;
      uint64_t s3[3] = {1000, 2000, 8};
      fseek(f, 1 + (long)offsetof(struct ofi_rts, strided), SEEK_SET);
      fwrite(&one, 1, 1, f);
      fseek(f, 1 + (long)offsetof(struct ofi_rts, s_block), SEEK_SET);
      fwrite(s3, 8, 3, f);
      fclose(f);
    }
  }
  rts("rts_getreply", OFI_K_GETREPLY, OFI_MODE_EAGER, 0, 0, 0, NULL, 0, 64, 0);
  dl = desc_iov(d, LAPI_GEN_IOVECTOR, 1, 8000);
  rts("rts_put_staged", OFI_K_PUT, OFI_MODE_PULL, 0, 0, 0, d, dl, 8000,
      OFI_RTS_STAGED);

  /* SHORT */
  hdr(OFI_M_SHORT);
  {
    struct ofi_short *s = (struct ofi_short *)pkt;
    s->hdr_hdl = 1;
    s->tgt_cntr = 1;
    s->uhdr_len = 8;
    s->flags = OFI_RTS_NO_FIN;
    emit("short", sizeof *s + 8 + 48);
  }
  /* GET: eager, by rendezvous, written back (OFI_GET_WRITE), strided */
  for (int k = 0; k < 4; k++) {
    hdr(OFI_M_GET);
    struct ofi_get *g = (struct ofi_get *)pkt;
    g->tgt_cntr = 1;
    g->data_len = k == 1 ? 40000 : 256;
    dl = k == 3 ? desc_strided(d, 4, 64, 128)
                : desc_iov(d, LAPI_GEN_IOVECTOR, k == 1 ? 2 : 1,
                           k == 1 ? 20000 : 256);
    g->desc_len = dl;
    g->desc_inline = 1;
    memcpy(pkt + sizeof *g, d, dl);
    size_t at = sizeof *g + ofi_align8(dl);
    if (k == 2) {
      g->flags = OFI_GET_WRITE;
      struct ofi_seg s = {0x200, 256, 0};
      memcpy(pkt + at, &s, sizeof s);
      at += sizeof s;
    }
    static const char *names[] = {"get_eager", "get_rdv", "get_write",
                                  "get_strided"};
    emit(names[k], at);
  }
  /* RMW, both sizes; its reply */
  for (int k = 0; k < 3; k++) {
    hdr(OFI_M_RMW);
    struct ofi_rmw *m = (struct ofi_rmw *)pkt;
    m->op = (uint32_t)k;
    m->size = k == 1 ? 4 : 8;
    m->tgt_var = 0x300;
    m->in[0] = 5;
    m->in[1] = 7;
    static const char *names[] = {"rmw_add", "rmw_swap4", "rmw_cas"};
    emit(names[k], sizeof *m);
  }
  hdr(OFI_M_RMW_REPLY);
  emit("rmw_reply", sizeof(struct ofi_rmw_reply));
  /* PULL, DATA (bytes, by reference), FIN, FIN list, NAK */
  hdr(OFI_M_PULL);
  ((struct ofi_pull *)pkt)->len = 4096;
  emit("pull", sizeof(struct ofi_pull));
  hdr(OFI_M_PULL);
  ((struct ofi_pull *)pkt)->len = 4 * 4096;
  ((struct ofi_pull *)pkt)->stream = OFI_STREAM_DESC;
  ((struct ofi_pull *)pkt)->flags = OFI_PULL_REF;
  emit("pull_ref_desc", sizeof(struct ofi_pull));
  hdr(OFI_M_DATA);
  emit("data", sizeof(struct ofi_data) + 512);
  hdr(OFI_M_DATA);
  {
    struct ofi_data *dd = (struct ofi_data *)pkt;
    dd->flags = OFI_DATA_REF;
    struct ofi_data_ref r = {0, 4096, 0, 3, 0, 0};
    memcpy(dd + 1, &r, sizeof r);
    emit("data_ref", sizeof *dd + sizeof r);
  }
  hdr(OFI_M_FIN);
  emit("fin", sizeof(struct ofi_fin));
  hdr(OFI_M_FIN_LIST);
  {
    struct ofi_fin_list *l = (struct ofi_fin_list *)pkt;
    l->n = 3;
    struct ofi_fin_entry e[3] = {{0x100000001ull, 0, 0, 0},
                                 {0x200000002ull, 0, 0, 0},
                                 {0x300000003ull, 0, 0, LAPI_ERR_UNKNOWN}};
    memcpy(l + 1, e, sizeof e);
    emit("fin_list", sizeof *l + sizeof e);
  }
  hdr(OFI_M_NAK);
  ((struct ofi_nak *)pkt)->status = LAPI_ERR_UNKNOWN;
  ((struct ofi_nak *)pkt)->kind = OFI_K_AM;
  ((struct ofi_hdr *)pkt)->id = 0;
  emit("nak", sizeof(struct ofi_nak));
  /* ASK (each kind), UNKNOWN; header-only types */
  for (uint32_t w = OFI_ASK_SINK; w <= OFI_ASK_DATA; w++) {
    char name[32];
    hdr(OFI_M_ASK);
    ((struct ofi_ask *)pkt)->what = w;
    ((struct ofi_ask *)pkt)->ask_no = w == OFI_ASK_DATA ? 1 : 0;
    snprintf(name, sizeof name, "ask_%u", w);
    emit(name, sizeof(struct ofi_ask));
  }
  hdr(OFI_M_UNKNOWN);
  ((struct ofi_ask *)pkt)->what = OFI_ASK_SINK;
  emit("unknown", sizeof(struct ofi_ask));
  hdr(OFI_M_UNKNOWN);
  ((struct ofi_ask *)pkt)->what = OFI_ASK_DATA;
  ((struct ofi_ask *)pkt)->ask_no = 1;
  emit("unknown_data", sizeof(struct ofi_ask));
  hdr(OFI_M_PING);
  emit("ping", sizeof(struct ofi_hdr));
  hdr(OFI_M_PONG);
  emit("pong", sizeof(struct ofi_hdr));
  hdr(OFI_M_ACK);
  emit("ack", sizeof(struct ofi_hdr));
  hdr(OFI_M_BARRIER);
  ((struct ofi_hdr *)pkt)->id = 1 << 8; /* barrier 1, round 0 */
  emit("barrier", sizeof(struct ofi_hdr));
  hdr(OFI_M_ACK_REQ);
  ((struct ofi_hdr *)pkt)->id = 0;
  emit("ack_req", sizeof(struct ofi_hdr));
  /* Several records: a transfer begun, then packets about it
   * (FZ_CTL_LIVE_ID: their ids name it). */
  dl = desc_iov(d, LAPI_GEN_IOVECTOR, 1, 8000);
  rec(0, rts_build(OFI_K_PUT, OFI_MODE_PULL, 0, 0, 0, d, dl, 8000, 0), 1);
  rec(FZ_CTL_LIVE_ID, data_build(0, OFI_STREAM_DATA, 4040), 1);
  rec(FZ_CTL_LIVE_ID, data_build(4040, OFI_STREAM_DATA, 3960), 0);
  emit_recs("multi_put_pull_data");
  rec(0, rts_build(OFI_K_AM, OFI_MODE_PULL, 0, 0, 8, NULL, 0, 5000, 0), 1);
  rec(FZ_CTL_LIVE_ID, data_build(0, OFI_STREAM_DATA, 4040), 1);
  hdr(OFI_M_ASK);
  ((struct ofi_ask *)pkt)->what = OFI_ASK_DATA;
  ((struct ofi_ask *)pkt)->ask_no = 1;
  rec(FZ_CTL_LIVE_ID, sizeof(struct ofi_ask), 1);
  hdr(OFI_M_UNKNOWN);
  ((struct ofi_ask *)pkt)->what = OFI_ASK_DATA;
  ((struct ofi_ask *)pkt)->ask_no = 1;
  rec(FZ_CTL_LIVE_ID, sizeof(struct ofi_ask), 0);
  emit_recs("multi_am_pull_ask");
  dl = desc_iov(d, LAPI_GEN_IOVECTOR, 40, 100);
  rec(0, rts_build(OFI_K_AM, OFI_MODE_PULL, 1 + LAPI_GEN_IOVECTOR, 0, 16,
                   NULL, 0, 4000, 0), 1);
  {
    uint64_t want = dl; /* pulled */
    memcpy(acc + 3 + offsetof(struct ofi_rts, desc_len), &want, 8);
  }
  memcpy(pkt, d, dl);
  memmove(pkt + sizeof(struct ofi_data), pkt, dl);
  {
    size_t n = data_build(0, OFI_STREAM_DESC, 0);
    memcpy(pkt + n, d, dl);
    rec(FZ_CTL_LIVE_ID, n + dl, 1);
  }
  rec(FZ_CTL_LIVE_ID, data_build(0, OFI_STREAM_DATA, 4000), 0);
  emit_recs("multi_amv_desc_pull");
  for (int k = 0; k < 2; k++) {
    /* a GET answered by rendezvous, then the origin's PULL or FIN list */
    hdr(OFI_M_GET);
    struct ofi_get *g = (struct ofi_get *)pkt;
    g->data_len = 40000;
    dl = desc_iov(d, LAPI_GEN_IOVECTOR, 2, 20000);
    g->desc_len = dl;
    g->desc_inline = 1;
    memcpy(pkt + sizeof *g, d, dl);
    rec(0, sizeof *g + ofi_align8(dl), 1);
    if (k == 0) {
      hdr(OFI_M_PULL);
      ((struct ofi_pull *)pkt)->len = 4096;
      ((struct ofi_pull *)pkt)->offset = 8192;
      rec(FZ_CTL_LIVE_ID, sizeof(struct ofi_pull), 1);
      hdr(OFI_M_FIN);
      rec(FZ_CTL_LIVE_ID, sizeof(struct ofi_fin), 0);
      emit_recs("multi_get_pull_fin");
    } else {
      hdr(OFI_M_FIN_LIST);
      struct ofi_fin_list *l = (struct ofi_fin_list *)pkt;
      l->n = 2;
      struct ofi_fin_entry e[2] = {{0, 0, 0, 0}, {1, 0, 0, 0}};
      memcpy(l + 1, e, sizeof e);
      rec(FZ_CTL_LIVE_ID, sizeof *l + sizeof e, 0);
      emit_recs("multi_get_fin_list");
    }
  }
  /* For the 3-task job (fuzz_wire.h): task 2's no-FIN numbers inside
   * task 1's window (16 is the window's first after the shaping), its
   * BARRIERs.  The 2-task job shapes them by task 0's rules. */
  for (int k = 0; k < 3; k++) {
    hdr(OFI_M_SHORT);
    struct ofi_short *s = (struct ofi_short *)pkt;
    ((struct ofi_hdr *)pkt)->id = 16;
    s->hdr_hdl = 1;
    s->tgt_cntr = 1;
    s->uhdr_len = k == 2 ? 24 : 8;
    s->flags = OFI_RTS_NO_FIN;
    static const char *names[] = {"window_short", "window_short_direct",
                                  "window_short_direct_uhdr"};
    unsigned ctl = k ? FZ_CTL_DIRECT : 0;
    rec(ctl, sizeof *s + ofi_align8(s->uhdr_len) + 40 * (size_t)k, 0);
    emit_recs(names[k]);
  }
  /* three SHORTs out of order (the window's base last), taken directly */
  for (int k = 0; k < 3; k++) {
    hdr(OFI_M_SHORT);
    struct ofi_short *s = (struct ofi_short *)pkt;
    ((struct ofi_hdr *)pkt)->id = (uint64_t)(k == 2 ? 16 : 18 - k);
    s->hdr_hdl = 1;
    s->uhdr_len = 8;
    s->flags = OFI_RTS_NO_FIN;
    rec(FZ_CTL_DIRECT, sizeof *s + 8 + 16, k < 2);
  }
  emit_recs("multi_window_shorts");
  {
    size_t n = rts_build(OFI_K_AM, OFI_MODE_EAGER, 0, 0, 8, NULL, 0, 32,
                         OFI_RTS_NO_FIN);
    ((struct ofi_rts *)pkt)->seq = 16;
    emit("window_rts_nofin", n);
    dl = desc_iov(d, LAPI_GEN_IOVECTOR, 1, 100);
    n = rts_build(OFI_K_PUT, OFI_MODE_EAGER, 0, 0, 0, d, dl, 100,
                  OFI_RTS_NO_FIN);
    ((struct ofi_rts *)pkt)->seq = 17;
    emit("window_rts_put_nofin", n);
  }
  hdr(OFI_M_ACK_REQ);
  ((struct ofi_hdr *)pkt)->id = OFI_NOFIN_WINDOW + 5; /* 5 ahead */
  emit("window_ack_req", sizeof(struct ofi_hdr));
  hdr(OFI_M_BARRIER);
  ((struct ofi_hdr *)pkt)->id = 1 << 8 | 0x80; /* task 1's next: FAIL */
  emit("barrier_fail", sizeof(struct ofi_hdr));
  hdr(OFI_M_BARRIER);
  ((struct ofi_hdr *)pkt)->id = 1 << 8 | 1; /* task 1's next: round 1 */
  emit("barrier_round", sizeof(struct ofi_hdr));
  /* one with a raw header (control byte 1) */
  hdr(OFI_M_FIN);
  ((struct ofi_hdr *)pkt)->magic = 0x12345678;
  emit("raw_header", sizeof(struct ofi_fin));
  return 0;
}
