/*
 * ofi_wire.c - packet checks and vector descriptions.
 *
 * Nothing that arrives is trusted: a packet must carry our magic, its
 * length field must equal what the CQ says arrived, its type must be
 * known and long enough for its fixed part, and its sender must be
 * another task of the job.  A description must have exactly the size its
 * count implies.  Anything else is counted (ofi.st.bad_pkts) and dropped.
 */
#include <stdlib.h>
#include <string.h>

#include "transport/ofi/ofi.h"

static const size_t min_len[OFI_M_LAST] = {
  [OFI_M_RTS] = sizeof(struct ofi_rts),
  [OFI_M_GET] = sizeof(struct ofi_get),
  [OFI_M_RMW] = sizeof(struct ofi_rmw),
  [OFI_M_RMW_REPLY] = sizeof(struct ofi_rmw_reply),
  [OFI_M_PULL] = sizeof(struct ofi_pull),
  [OFI_M_DATA] = sizeof(struct ofi_data),
  [OFI_M_FIN] = sizeof(struct ofi_fin),
  [OFI_M_PING] = sizeof(struct ofi_hdr),
  [OFI_M_PONG] = sizeof(struct ofi_hdr),
  [OFI_M_ACK] = sizeof(struct ofi_hdr),
  [OFI_M_ACK_REQ] = sizeof(struct ofi_hdr),
  [OFI_M_SHORT] = sizeof(struct ofi_short),
  [OFI_M_NAK] = sizeof(struct ofi_nak),
  [OFI_M_FIN_LIST] = sizeof(struct ofi_fin_list),
  [OFI_M_ASK] = sizeof(struct ofi_ask),
  [OFI_M_UNKNOWN] = sizeof(struct ofi_ask),
  [OFI_M_BARRIER] = sizeof(struct ofi_hdr),
};

size_t ofi_pkt_min(int type)
{
  return type > 0 && type < OFI_M_LAST ? min_len[type] : 0;
}

void ofi_drop(enum ofi_bad cls, const char *why, uint src)
{
  ofi.st.bad_pkts++;
  ofi.st.dropped[cls]++;
  if (!ofi_mangle_every) /* else thousands: the counts tell */
    LAPI_LOG(LAPI_LOG_ASYNC, "ofi: dropped a malformed packet (claimed "
             "sender %u): %s", src, why);
}

void ofi_bad_pkt(const char *why, uint src)
{
  ofi_drop(OFI_BAD_OTHER, why, src);
}

int ofi_pkt_check(const struct ofi_hdr *hd, size_t got)
{
  if (got < sizeof *hd) {
    ofi_drop(OFI_BAD_SHORT, "shorter than a header", UINT32_MAX);
    return -1;
  }
  if (hd->magic != OFI_WIRE_MAGIC) {
    ofi_drop(OFI_BAD_MAGIC, "bad magic (another program or wire version?)",
             hd->src);
    return -1;
  }
  if (hd->len != got) {
    ofi_drop(OFI_BAD_LEN, "length field differs from the bytes received",
             hd->src);
    return -1;
  }
  if (hd->type == 0 || hd->type >= OFI_M_LAST) {
    ofi_drop(OFI_BAD_TYPE, "unknown type", hd->src);
    return -1;
  }
  if (got < min_len[hd->type]) {
    ofi_drop(OFI_BAD_SHORT, "truncated fixed part", hd->src);
    return -1;
  }
  if (hd->src >= ofi.ntasks || hd->src == ofi.me) {
    ofi_drop(OFI_BAD_SENDER, "sender is not another task of the job",
             hd->src);
    return -1;
  }
  if ((hd->hndl & 0xff) >= LAPI_AM_MAX_HANDLES || (hd->hndl >> 8) >= ofi.tpc ||
      hd->src_local >= ofi.tpc) {
    ofi_drop(OFI_BAD_HNDL, "handle key or task out of range", hd->src);
    return -1;
  }
  return 0;
}

/* ------------------------------------------------------- descriptions */

static void put64(unsigned char *p, uint64_t v)
{
  memcpy(p, &v, 8);
}

static uint64_t get64(const unsigned char *p)
{
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

size_t ofi_desc_size(const lapi_vec_t *v, int with_addr)
{
  (void)with_addr; /* same layout; the addresses are zero without */
  if (v->vec_type == LAPI_GEN_STRIDED_XFER)
    return OFI_DESC_HEAD + 24;
  return OFI_DESC_HEAD + 16 * (size_t)v->num_vecs;
}

void ofi_desc_write(const lapi_vec_t *v, unsigned char *out)
{
  uint32_t head[2] = {(uint32_t)v->vec_type, v->num_vecs};
  memcpy(out, head, sizeof head);
  out += OFI_DESC_HEAD;
  if (v->vec_type == LAPI_GEN_STRIDED_XFER) {
    put64(out, v->num_vecs ? (uint64_t)(uintptr_t)v->info[0] : 0);
    put64(out + 8, v->num_vecs ? (uint64_t)(uintptr_t)v->info[1] : 0);
    put64(out + 16, v->num_vecs ? (uint64_t)(uintptr_t)v->info[2] : 0);
    return;
  }
  for (uint i = 0; i < v->num_vecs; i++) {
    put64(out + 16 * (size_t)i, (uint64_t)(uintptr_t)v->info[i]);
    put64(out + 16 * (size_t)i + 8, v->len[i]);
  }
}

void ofi_vec_free(struct ofi_vec *ov)
{
  if (ov->info && ov->info != ov->one_info)
    free(ov->info);
  if (ov->len && ov->len != ov->one_len)
    free(ov->len);
  ov->info = NULL;
  ov->len = NULL;
}

void ofi_vec_one(struct ofi_vec *ov, void *addr, size_t len)
{
  ov->info = ov->one_info;
  ov->len = ov->one_len;
  ov->one_info[0] = addr;
  ov->one_len[0] = len;
  ov->v.vec_type = LAPI_GEN_IOVECTOR;
  ov->v.num_vecs = 1;
  ov->v.info = ov->info;
  ov->v.len = ov->len;
}

int ofi_desc_read(const unsigned char *in, size_t len, struct ofi_vec *ov)
{
  memset(ov, 0, sizeof *ov);
  if (len < OFI_DESC_HEAD)
    return -1;
  uint32_t head[2];
  memcpy(head, in, sizeof head);
  in += OFI_DESC_HEAD;
  ov->v.vec_type = (lapi_vectype_t)head[0];
  ov->v.num_vecs = head[1];
  if (head[0] == LAPI_GEN_STRIDED_XFER) {
    if (len != OFI_DESC_HEAD + 24)
      return -1;
    ov->info = ov->one_info;
    for (int i = 0; i < 3; i++)
      ov->one_info[i] = (void *)(uintptr_t)get64(in + 8 * i);
    ov->v.info = ov->info;
    ov->v.len = NULL;
    return 0;
  }
  if (head[0] != LAPI_GEN_IOVECTOR && head[0] != LAPI_GEN_GENERIC)
    return -1;
  if ((len - OFI_DESC_HEAD) % 16 != 0 ||
      (len - OFI_DESC_HEAD) / 16 != head[1])
    return -1;
  uint n = head[1];
  if (n <= 3) {
    ov->info = ov->one_info;
    ov->len = ov->one_len;
  } else {
    ov->info = malloc(sizeof(void *) * n);
    ov->len = malloc(sizeof(ulong) * n);
    if (ov->info == NULL || ov->len == NULL) {
      ofi_vec_free(ov);
      return -2;
    }
  }
  for (uint i = 0; i < n; i++) {
    ov->info[i] = (void *)(uintptr_t)get64(in + 16 * (size_t)i);
    ov->len[i] = (ulong)get64(in + 16 * (size_t)i + 8);
  }
  ov->v.info = ov->info;
  ov->v.len = ov->len;
  return 0;
}
