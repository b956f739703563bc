/*
 * test_am_errors.c - every error code the reference and the LAPI_Amsendv
 * page list, for every call, from one table.
 *
 * Each row is a call with exactly one thing wrong (or, for the precedence
 * rows, several things in a known order) and the code it must return.
 * After every row the harness fences the handle and checks that nothing
 * happened: the origin data, the target memory, the user header, the
 * vectors, the RMW variables and the previous-value slots are untouched,
 * the counters still read 0, no header, completion or error handler ran,
 * the settings and the address table are unchanged.  At the end a valid
 * message goes through, to show the refused calls left no state behind.
 *
 * Rows are an X-macro: ROW(name, expected code, call).  The calls use the
 * short names defined below (H live handle, DEAD a terminated one, T the
 * target task, SELF this task, NT = NUM_TASKS, ...).  Vector rows that
 * need the target's vector description (Putv/Getv) target SELF.
 *
 * Where neither the reference nor the seed page fixes the code, the rows
 * follow the project brief: a negative Waitcntr value is CNTR_VAL, a NULL
 * lapi_xfer_t / lapi_util_t is XFER_CMD / UTIL_CMD, a NULL handle pointer
 * in LAPI_Init is RET_PTR_NULL, an Addr_set index that holds no handler
 * is HDR_HNDLR_NULL (checked here only towards SELF); LAPI_Address takes
 * IBM's codes (ORG_ADDR_NULL for my_addr, TGT_ADDR_NULL for ret_addr).
 */
#include <stddef.h>

#include "lapi_test_util.h"

TestSuite(am_errors, .timeout = LT_TIMEOUT);

#define SEG 16

/* Everything a row may touch. */
struct ectx {
  lapi_handle_t h, dead;
  uint tgt, self, n;
  int max_uhdr, tbl_sz;
  void *hh, *vh;                 /* header handlers at the target */
  lapi_cntr_t *tc;               /* the target's recv counter */
  unsigned char *rmem;           /* the target's tmem */
  int *rvar32;
  long long *rvar64;
  lapi_cntr_t oc, cc;
  uint32_t uhdr[272];                /* > MAX_UHDR_SZ + 4 */
  int in32[2];
  long long in64[2];
  int prev32;
  long long prev64;
  lapi_msg_info_t minfo;
  void *tab[1];                  /* Address_init rows never fill it */
  ulong addr_out;
  int qout;
  void *got;
  /* vectors: o* describe origin memory, t* target memory (SELF) */
  void *oi_ok[2], *ti_ok[2], *ti_3[3], *oi_segnull[2], *oi_big[2];
  void *ti_segnull[2], *ti_big[2];
  ulong ol_ok[2], tl_3[3], tl_diff[2], tl_diff0[2], ol_big[2];
  void *os_ok[3], *ts_ok[3], *os_base[3], *ts_base[3], *os_stride[3],
      *ts_stride[3], *os_extent[3], *ts_extent[3], *ts_block[3],
      *os_block[3];
  lapi_vec_t o_ok, o_gen, t_ok, t_3, t_diff, t_gen, o_type, t_type, o_type_neg,
      o_segnull, t_segnull, o_big, t_big, o_noinfo, t_noinfo,
      os, ts, o_base, t_base, o_stride, t_stride, o_extent, t_extent,
      t_block, o_block, ts_2, t_diff0;
  lapi_xfer_t x;
  lapi_util_t u;
};

static unsigned char org[4 * SEG];   /* origin data (pattern) */
static unsigned char tmem[4 * SEG];  /* target memory (guard) */
static unsigned char omem[4 * SEG];  /* Get destination (guard) */
static int var32 = 17;
static long long var64 = 17;
static lapi_cntr_t recv_cntr;
static int hdr_runs, cmpl_runs, err_runs;

static void e_cmpl(lapi_handle_t *hndl, void *param)
{
  (void)hndl, (void)param;
  lt_inc(&cmpl_runs);
}

static void *e_hdr(lapi_handle_t *hndl, void *uhdr, uint *uhdr_len,
                   ulong *msg_len, compl_hndlr_t **comp_h, void **uinfo)
{
  (void)hndl, (void)uhdr, (void)uhdr_len, (void)uinfo;
  lt_inc(&hdr_runs);
  *comp_h = e_cmpl;
  return *msg_len <= sizeof tmem ? tmem : NULL;
}

static lapi_vec_t e_tvec;
static void *e_tinfo[2];
static ulong e_tlen[2];

static lapi_vec_t *e_vhdr(lapi_handle_t *hndl, void *uhdr, uint *uhdr_len,
                          ulong *len_vec, compl_hndlr_t **comp_h,
                          void **uinfo)
{
  (void)hndl, (void)uhdr, (void)uhdr_len, (void)len_vec, (void)uinfo;
  lt_inc(&hdr_runs);
  e_tinfo[0] = tmem;
  e_tinfo[1] = tmem + SEG;
  e_tlen[0] = e_tlen[1] = SEG;
  e_tvec = (lapi_vec_t){LAPI_GEN_IOVECTOR, 2, e_tinfo, e_tlen};
  *comp_h = e_cmpl;
  return &e_tvec;
}

static void e_err(lapi_handle_t *hndl, int *code, lapi_err_t *type,
                  int *task, int *src)
{
  (void)hndl, (void)code, (void)type, (void)task, (void)src;
  lt_inc(&err_runs);
}

#define PV(x) ((void *)(uintptr_t)(x))

static void set_vec(lapi_vec_t *v, lapi_vectype_t t, uint n, void **info,
                    ulong *len)
{
  v->vec_type = t;
  v->num_vecs = n;
  v->info = info;
  v->len = len;
}

static void strided(void **info, void *base, uintptr_t block, uintptr_t pitch)
{
  info[0] = base;
  info[1] = PV(block);
  info[2] = PV(pitch);
}

static void build_vectors(struct ectx *c)
{
  const ulong huge = (ulong)LAPI_MAX_MSG_SZ;
  c->oi_ok[0] = org, c->oi_ok[1] = org + SEG;
  c->ol_ok[0] = c->ol_ok[1] = SEG;
  set_vec(&c->o_ok, LAPI_GEN_IOVECTOR, 2, c->oi_ok, c->ol_ok);
  set_vec(&c->o_gen, LAPI_GEN_GENERIC, 2, c->oi_ok, c->ol_ok);
  c->ti_ok[0] = tmem, c->ti_ok[1] = tmem + SEG;
  set_vec(&c->t_ok, LAPI_GEN_IOVECTOR, 2, c->ti_ok, c->ol_ok);
  c->ti_3[0] = tmem, c->ti_3[1] = tmem + SEG, c->ti_3[2] = tmem + 2 * SEG;
  c->tl_3[0] = c->tl_3[1] = c->tl_3[2] = SEG;
  set_vec(&c->t_3, LAPI_GEN_IOVECTOR, 3, c->ti_3, c->tl_3);
  c->tl_diff[0] = SEG, c->tl_diff[1] = SEG - 1;
  set_vec(&c->t_diff, LAPI_GEN_IOVECTOR, 2, c->ti_ok, c->tl_diff);
  c->tl_diff0[0] = SEG - 1, c->tl_diff0[1] = SEG; /* the first differs */
  set_vec(&c->t_diff0, LAPI_GEN_IOVECTOR, 2, c->ti_ok, c->tl_diff0);
  set_vec(&c->t_gen, LAPI_GEN_GENERIC, 2, c->ti_ok, c->ol_ok);
  set_vec(&c->o_type, (lapi_vectype_t)3, 2, c->oi_ok, c->ol_ok);
  set_vec(&c->t_type, (lapi_vectype_t)3, 2, c->ti_ok, c->ol_ok);
  set_vec(&c->o_type_neg, (lapi_vectype_t)-1, 2, c->oi_ok, c->ol_ok);
  c->oi_segnull[0] = org, c->oi_segnull[1] = NULL;
  set_vec(&c->o_segnull, LAPI_GEN_GENERIC, 2, c->oi_segnull, c->ol_ok);
  c->ti_segnull[0] = NULL, c->ti_segnull[1] = tmem;
  set_vec(&c->t_segnull, LAPI_GEN_IOVECTOR, 2, c->ti_segnull, c->ol_ok);
  /* lengths adding up past LAPI_MAX_MSG_SZ (never read: refused first) */
  c->oi_big[0] = org, c->oi_big[1] = org;
  c->ol_big[0] = huge, c->ol_big[1] = 1;
  set_vec(&c->o_big, LAPI_GEN_GENERIC, 2, c->oi_big, c->ol_big);
  c->ti_big[0] = tmem, c->ti_big[1] = tmem;
  set_vec(&c->t_big, LAPI_GEN_GENERIC, 2, c->ti_big, c->ol_big);
  set_vec(&c->o_noinfo, LAPI_GEN_IOVECTOR, 2, NULL, c->ol_ok);
  set_vec(&c->t_noinfo, LAPI_GEN_IOVECTOR, 2, NULL, c->ol_ok);
  /* strided: 3 blocks of 5 at pitch 8 */
  strided(c->os_ok, org, 5, 8);
  set_vec(&c->os, LAPI_GEN_STRIDED_XFER, 3, c->os_ok, NULL);
  strided(c->ts_ok, tmem, 5, 8);
  set_vec(&c->ts, LAPI_GEN_STRIDED_XFER, 3, c->ts_ok, NULL);
  set_vec(&c->ts_2, LAPI_GEN_STRIDED_XFER, 2, c->ts_ok, NULL);
  strided(c->ts_block, tmem, 4, 8);
  set_vec(&c->t_block, LAPI_GEN_STRIDED_XFER, 3, c->ts_block, NULL);
  strided(c->os_block, org, 4, 8); /* the origin's block the smaller */
  set_vec(&c->o_block, LAPI_GEN_STRIDED_XFER, 3, c->os_block, NULL);
  strided(c->os_base, NULL, 5, 8);
  set_vec(&c->o_base, LAPI_GEN_STRIDED_XFER, 3, c->os_base, NULL);
  strided(c->ts_base, NULL, 5, 8);
  set_vec(&c->t_base, LAPI_GEN_STRIDED_XFER, 3, c->ts_base, NULL);
  strided(c->os_stride, org, 5, 4);
  set_vec(&c->o_stride, LAPI_GEN_STRIDED_XFER, 3, c->os_stride, NULL);
  strided(c->ts_stride, tmem, 5, 4);
  set_vec(&c->t_stride, LAPI_GEN_STRIDED_XFER, 3, c->ts_stride, NULL);
  /* 4 blocks of 1 byte, 2^62 apart: the extent passes LAPI_MAX_MSG_SZ */
  strided(c->os_extent, org, 1, (uintptr_t)1 << 62);
  set_vec(&c->o_extent, LAPI_GEN_STRIDED_XFER, 4, c->os_extent, NULL);
  strided(c->ts_extent, tmem, 1, (uintptr_t)1 << 62);
  set_vec(&c->t_extent, LAPI_GEN_STRIDED_XFER, 4, c->ts_extent, NULL);
}

/* ------------------------------------------------ rows that need code */

static int purged(struct ectx *c, int which)
{
  int rc;
  LT_OK(LAPI_Purge_totask(c->h, c->tgt));
  switch (which) {
  case 0:
    rc = LAPI_Amsend(c->h, c->tgt, c->hh, c->uhdr, 4, org, SEG, c->tc, &c->oc,
                     &c->cc);
    break;
  case 1:
    rc = LAPI_Amsendv(c->h, c->tgt, c->vh, c->uhdr, 4, &c->o_ok, c->tc,
                      &c->oc, &c->cc);
    break;
  case 2:
    rc = LAPI_Put(c->h, c->tgt, SEG, c->rmem, org, c->tc, &c->oc, &c->cc);
    break;
  case 3:
    rc = LAPI_Get(c->h, c->tgt, SEG, c->rmem, omem, c->tc, &c->oc);
    break;
  case 4:
    rc = LAPI_Rmw(c->h, FETCH_AND_ADD, c->tgt, c->rvar32, c->in32,
                  &c->prev32, &c->oc);
    break;
  default:
    rc = LAPI_Rmw64(c->h, SWAP, c->tgt, c->rvar64, c->in64, &c->prev64,
                    &c->oc);
    break;
  }
  LT_OK(LAPI_Resume_totask(c->h, c->tgt));
  return rc;
}

static int purged_self_vec(struct ectx *c, int get)
{
  LT_OK(LAPI_Purge_totask(c->h, c->self));
  int rc = get ? LAPI_Getv(c->h, c->self, &c->t_ok, &c->o_ok, c->tc, &c->oc)
               : LAPI_Putv(c->h, c->self, &c->t_ok, &c->o_ok, c->tc, &c->oc,
                           &c->cc);
  LT_OK(LAPI_Resume_totask(c->h, c->self));
  return rc;
}

static int init_null_info(struct ectx *c)
{
  (void)c;
  lapi_handle_t nh = 0x77;
  int rc = LAPI_Init(&nh, NULL);
  if (rc == LAPI_SUCCESS)
    LAPI_Term(nh);
  return rc;
}

static int init_null_hndl(struct ectx *c)
{
  (void)c;
  lapi_info_t info;
  memset(&info, 0, sizeof info);
  return LAPI_Init(NULL, &info);
}

static int init_nonzero(struct ectx *c)
{
  (void)c;
  lapi_handle_t nh = 0x77;
  lapi_info_t info;
  memset(&info, 0, sizeof info);
  info.info6 = 5;
  int rc = LAPI_Init(&nh, &info);
  if (rc == LAPI_SUCCESS)
    LAPI_Term(nh);
  return rc;
}

/* An Xfer of the given kind whose body is otherwise a valid AM/PUT... */
static lapi_xfer_t *xf(struct ectx *c, lapi_xfer_type_t t)
{
  memset(&c->x, 0, sizeof c->x);
  c->x.Xfer_type = t;
  switch (t) {
  case LAPI_AM_XFER:
  case LAPI_DGSP_XFER:
  case LAPI_RDMA_XFER:
    c->x.Am.Xfer_type = t;
    c->x.Am.tgt = c->tgt;
    c->x.Am.hdr_hdl = (lapi_long_t)(uintptr_t)c->hh;
    c->x.Am.uhdr = c->uhdr;
    c->x.Am.uhdr_len = 4;
    c->x.Am.udata = org;
    c->x.Am.udata_len = SEG;
    c->x.Am.tgt_cntr = (lapi_long_t)(uintptr_t)c->tc;
    c->x.Am.org_cntr = &c->oc;
    c->x.Am.cmpl_cntr = &c->cc;
    break;
  case LAPI_AMV_XFER:
    c->x.Amv.tgt = c->tgt;
    c->x.Amv.hdr_hdl = (lapi_long_t)(uintptr_t)c->vh;
    c->x.Amv.org_vec = &c->o_ok;
    c->x.Amv.tgt_cntr = (lapi_long_t)(uintptr_t)c->tc;
    c->x.Amv.org_cntr = &c->oc;
    break;
  case LAPI_PUT_XFER:
    c->x.Put.tgt = c->tgt;
    c->x.Put.tgt_addr = (lapi_long_t)(uintptr_t)c->rmem;
    c->x.Put.org_addr = org;
    c->x.Put.len = SEG;
    c->x.Put.tgt_cntr = (lapi_long_t)(uintptr_t)c->tc;
    c->x.Put.org_cntr = &c->oc;
    c->x.Put.cmpl_cntr = &c->cc;
    break;
  case LAPI_GET_XFER:
    c->x.Get.tgt = c->tgt;
    c->x.Get.tgt_addr = (lapi_long_t)(uintptr_t)c->rmem;
    c->x.Get.org_addr = omem;
    c->x.Get.len = SEG;
    c->x.Get.org_cntr = &c->oc;
    break;
  case LAPI_PUTV_XFER:
    c->x.Putv.tgt = c->self;
    c->x.Putv.org_vec = &c->o_ok;
    c->x.Putv.tgt_vec = &c->t_ok;
    c->x.Putv.org_cntr = &c->oc;
    break;
  case LAPI_GETV_XFER:
    c->x.Getv.tgt = c->self;
    c->x.Getv.org_vec = &c->o_ok;
    c->x.Getv.tgt_vec = &c->t_ok;
    c->x.Getv.org_cntr = &c->oc;
    break;
  case LAPI_RMW_XFER:
    c->x.Rmw.op = FETCH_AND_ADD;
    c->x.Rmw.tgt = c->tgt;
    c->x.Rmw.size = 32;
    c->x.Rmw.tgt_var = (lapi_long_t)(uintptr_t)c->rvar32;
    c->x.Rmw.in_val = c->in32;
    c->x.Rmw.prev_tgt_val = &c->prev32;
    c->x.Rmw.org_cntr = &c->oc;
    break;
  default:
    break;
  }
  return &c->x;
}

static lapi_util_t *util(struct ectx *c, int t)
{
  memset(&c->u, 0, sizeof c->u);
  c->u.Util_type = (lapi_util_type_t)t;
  return &c->u;
}

/* ---------------------------------------------------------------- rows */

#define H c->h
#define DEAD c->dead
#define T c->tgt
#define SELF c->self
#define NT c->n
#define HH c->hh
#define VH c->vh
#define TC c->tc
#define OC (&c->oc)
#define CC (&c->cc)
#define UH c->uhdr
#define RM c->rmem
#define MAXMSG ((ulong)LAPI_MAX_MSG_SZ)
#define UMAX 0xffffffffu

#define ROWS(ROW)                                                            \
  /* LAPI_Amsend */                                                          \
  ROW(amsend_hndl_dead, LAPI_ERR_HNDL_INVALID,                               \
      LAPI_Amsend(DEAD, T, HH, UH, 4, org, SEG, TC, OC, CC))                 \
  ROW(amsend_hndl_void, LAPI_ERR_HNDL_INVALID,                               \
      LAPI_Amsend(LAPI_VOID_HANDLE, T, HH, UH, 4, org, SEG, TC, OC, CC))     \
  ROW(amsend_tgt_ntasks, LAPI_ERR_TGT,                                       \
      LAPI_Amsend(H, NT, HH, UH, 4, org, SEG, TC, OC, CC))                   \
  ROW(amsend_tgt_max, LAPI_ERR_TGT,                                          \
      LAPI_Amsend(H, UMAX, HH, UH, 4, org, SEG, TC, OC, CC))                 \
  ROW(amsend_hdr_null, LAPI_ERR_HDR_HNDLR_NULL,                              \
      LAPI_Amsend(H, T, NULL, UH, 4, org, SEG, TC, OC, CC))                  \
  ROW(amsend_uhdr_null, LAPI_ERR_UHDR_NULL,                                  \
      LAPI_Amsend(H, T, HH, NULL, 4, org, SEG, TC, OC, CC))                  \
  ROW(amsend_uhdr_len_6, LAPI_ERR_UHDR_LEN,                                  \
      LAPI_Amsend(H, T, HH, UH, 6, org, SEG, TC, OC, CC))                    \
  ROW(amsend_uhdr_len_2, LAPI_ERR_UHDR_LEN,                                  \
      LAPI_Amsend(H, T, HH, UH, 2, org, SEG, TC, OC, CC))                    \
  ROW(amsend_uhdr_len_max, LAPI_ERR_UHDR_LEN,                                \
      LAPI_Amsend(H, T, HH, UH, (uint)c->max_uhdr + 4, org, SEG, TC, OC, CC))\
  ROW(amsend_udata_null, LAPI_ERR_ORG_ADDR_NULL,                             \
      LAPI_Amsend(H, T, HH, UH, 4, NULL, SEG, TC, OC, CC))                   \
  ROW(amsend_data_len, LAPI_ERR_DATA_LEN,                                    \
      LAPI_Amsend(H, T, HH, UH, 4, org, MAXMSG + 1, TC, OC, CC))             \
  ROW(amsend_purged, LAPI_ERR_TGT_PURGED, purged(c, 0))                      \
  ROW(amsend_index_empty, LAPI_ERR_HDR_HNDLR_NULL,                           \
      LAPI_Amsend(H, SELF, PV(7), UH, 4, org, SEG, TC, OC, CC))              \
  ROW(amsend_first_hndl, LAPI_ERR_HNDL_INVALID,                              \
      LAPI_Amsend(DEAD, NT, NULL, NULL, 6, NULL, SEG, TC, OC, CC))           \
  ROW(amsend_then_tgt, LAPI_ERR_TGT,                                         \
      LAPI_Amsend(H, NT, NULL, NULL, 6, NULL, SEG, TC, OC, CC))              \
  ROW(amsend_then_hdr, LAPI_ERR_HDR_HNDLR_NULL,                              \
      LAPI_Amsend(H, T, NULL, NULL, 6, NULL, SEG, TC, OC, CC))               \
  ROW(amsend_then_uhdr, LAPI_ERR_UHDR_NULL,                                  \
      LAPI_Amsend(H, T, HH, NULL, 4, NULL, SEG, TC, OC, CC))                 \
  /* LAPI_Amsendv (the seed page's list) */                                  \
  ROW(amsendv_hndl_dead, LAPI_ERR_HNDL_INVALID,                              \
      LAPI_Amsendv(DEAD, T, VH, UH, 4, &c->o_ok, TC, OC, CC))                \
  ROW(amsendv_tgt, LAPI_ERR_TGT,                                             \
      LAPI_Amsendv(H, NT, VH, UH, 4, &c->o_ok, TC, OC, CC))                  \
  ROW(amsendv_hdr_null, LAPI_ERR_HDR_HNDLR_NULL,                             \
      LAPI_Amsendv(H, T, NULL, UH, 4, &c->o_ok, TC, OC, CC))                 \
  ROW(amsendv_uhdr_null, LAPI_ERR_UHDR_NULL,                                 \
      LAPI_Amsendv(H, T, VH, NULL, 8, &c->o_ok, TC, OC, CC))                 \
  ROW(amsendv_uhdr_len_odd, LAPI_ERR_UHDR_LEN,                               \
      LAPI_Amsendv(H, T, VH, UH, 7, &c->o_ok, TC, OC, CC))                   \
  ROW(amsendv_uhdr_len_max, LAPI_ERR_UHDR_LEN,                               \
      LAPI_Amsendv(H, T, VH, UH, (uint)c->max_uhdr + 4, &c->o_ok, TC, OC,    \
                   CC))                                                      \
  ROW(amsendv_vec_null, LAPI_ERR_ORG_VEC_NULL,                               \
      LAPI_Amsendv(H, T, VH, UH, 4, NULL, TC, OC, CC))                       \
  ROW(amsendv_vec_type, LAPI_ERR_ORG_VEC_TYPE,                               \
      LAPI_Amsendv(H, T, VH, UH, 4, &c->o_type, TC, OC, CC))                 \
  ROW(amsendv_vec_type_neg, LAPI_ERR_ORG_VEC_TYPE,                           \
      LAPI_Amsendv(H, T, VH, UH, 4, &c->o_type_neg, TC, OC, CC))             \
  ROW(amsendv_vec_addr, LAPI_ERR_ORG_VEC_ADDR,                               \
      LAPI_Amsendv(H, T, VH, UH, 4, &c->o_segnull, TC, OC, CC))              \
  ROW(amsendv_vec_info_null, LAPI_ERR_ORG_VEC_ADDR,                          \
      LAPI_Amsendv(H, T, VH, UH, 4, &c->o_noinfo, TC, OC, CC))               \
  ROW(amsendv_vec_len, LAPI_ERR_ORG_VEC_LEN,                                 \
      LAPI_Amsendv(H, T, VH, UH, 4, &c->o_big, TC, OC, CC))                  \
  ROW(amsendv_stride_base, LAPI_ERR_STRIDE_ORG_VEC_ADDR_NULL,                \
      LAPI_Amsendv(H, T, VH, UH, 4, &c->o_base, TC, OC, CC))                 \
  ROW(amsendv_stride, LAPI_ERR_ORG_STRIDE,                                   \
      LAPI_Amsendv(H, T, VH, UH, 4, &c->o_stride, TC, OC, CC))               \
  ROW(amsendv_extent, LAPI_ERR_ORG_EXTENT,                                   \
      LAPI_Amsendv(H, T, VH, UH, 4, &c->o_extent, TC, OC, CC))               \
  ROW(amsendv_purged, LAPI_ERR_TGT_PURGED, purged(c, 1))                     \
  ROW(amsendv_then_tgt, LAPI_ERR_TGT,                                        \
      LAPI_Amsendv(H, NT, NULL, NULL, 4, NULL, TC, OC, CC))                  \
  ROW(amsendv_then_hdr, LAPI_ERR_HDR_HNDLR_NULL,                             \
      LAPI_Amsendv(H, T, NULL, NULL, 4, NULL, TC, OC, CC))                   \
  ROW(amsendv_then_uhdr, LAPI_ERR_UHDR_NULL,                                 \
      LAPI_Amsendv(H, T, VH, NULL, 4, NULL, TC, OC, CC))                     \
  ROW(amsendv_then_uhdr_len, LAPI_ERR_UHDR_LEN,                              \
      LAPI_Amsendv(H, T, VH, UH, 6, NULL, TC, OC, CC))                       \
  /* LAPI_Put, LAPI_Get */                                                   \
  ROW(put_hndl, LAPI_ERR_HNDL_INVALID,                                       \
      LAPI_Put(DEAD, T, SEG, RM, org, TC, OC, CC))                           \
  ROW(put_tgt, LAPI_ERR_TGT, LAPI_Put(H, NT, SEG, RM, org, TC, OC, CC))      \
  ROW(put_tgt_addr_null, LAPI_ERR_TGT_ADDR_NULL,                             \
      LAPI_Put(H, T, SEG, NULL, org, TC, OC, CC))                            \
  ROW(put_org_addr_null, LAPI_ERR_ORG_ADDR_NULL,                             \
      LAPI_Put(H, T, SEG, RM, NULL, TC, OC, CC))                             \
  ROW(put_data_len, LAPI_ERR_DATA_LEN,                                       \
      LAPI_Put(H, T, MAXMSG + 1, RM, org, TC, OC, CC))                       \
  ROW(put_purged, LAPI_ERR_TGT_PURGED, purged(c, 2))                         \
  ROW(get_hndl, LAPI_ERR_HNDL_INVALID,                                       \
      LAPI_Get(DEAD, T, SEG, RM, omem, TC, OC))                              \
  ROW(get_tgt, LAPI_ERR_TGT, LAPI_Get(H, NT, SEG, RM, omem, TC, OC))         \
  ROW(get_tgt_addr_null, LAPI_ERR_TGT_ADDR_NULL,                             \
      LAPI_Get(H, T, SEG, NULL, omem, TC, OC))                               \
  ROW(get_org_addr_null, LAPI_ERR_ORG_ADDR_NULL,                             \
      LAPI_Get(H, T, SEG, RM, NULL, TC, OC))                                 \
  ROW(get_data_len, LAPI_ERR_DATA_LEN,                                       \
      LAPI_Get(H, T, MAXMSG + 1, RM, omem, TC, OC))                          \
  ROW(get_purged, LAPI_ERR_TGT_PURGED, purged(c, 3))                         \
  /* LAPI_Putv (to SELF: both vectors are checked here) */                   \
  ROW(putv_hndl, LAPI_ERR_HNDL_INVALID,                                      \
      LAPI_Putv(DEAD, SELF, &c->t_ok, &c->o_ok, TC, OC, CC))                 \
  ROW(putv_tgt, LAPI_ERR_TGT,                                                \
      LAPI_Putv(H, NT, &c->t_ok, &c->o_ok, TC, OC, CC))                      \
  ROW(putv_org_null, LAPI_ERR_ORG_VEC_NULL,                                  \
      LAPI_Putv(H, SELF, &c->t_ok, NULL, TC, OC, CC))                        \
  ROW(putv_tgt_null, LAPI_ERR_TGT_VEC_NULL,                                  \
      LAPI_Putv(H, SELF, NULL, &c->o_ok, TC, OC, CC))                        \
  ROW(putv_org_type, LAPI_ERR_ORG_VEC_TYPE,                                  \
      LAPI_Putv(H, SELF, &c->t_ok, &c->o_type, TC, OC, CC))                  \
  ROW(putv_tgt_type, LAPI_ERR_TGT_VEC_TYPE,                                  \
      LAPI_Putv(H, SELF, &c->t_type, &c->o_ok, TC, OC, CC))                  \
  ROW(putv_org_addr, LAPI_ERR_ORG_VEC_ADDR,                                  \
      LAPI_Putv(H, SELF, &c->t_gen, &c->o_segnull, TC, OC, CC))              \
  ROW(putv_tgt_addr, LAPI_ERR_TGT_VEC_ADDR,                                  \
      LAPI_Putv(H, SELF, &c->t_segnull, &c->o_ok, TC, OC, CC))               \
  ROW(putv_org_len, LAPI_ERR_ORG_VEC_LEN,                                    \
      LAPI_Putv(H, SELF, &c->t_gen, &c->o_big, TC, OC, CC))                  \
  ROW(putv_tgt_len, LAPI_ERR_TGT_VEC_LEN,                                    \
      LAPI_Putv(H, SELF, &c->t_big, &c->o_gen, TC, OC, CC))                  \
  ROW(putv_org_stride_base, LAPI_ERR_STRIDE_ORG_VEC_ADDR_NULL,               \
      LAPI_Putv(H, SELF, &c->ts, &c->o_base, TC, OC, CC))                    \
  ROW(putv_tgt_stride_base, LAPI_ERR_STRIDE_TGT_VEC_ADDR_NULL,               \
      LAPI_Putv(H, SELF, &c->t_base, &c->os, TC, OC, CC))                    \
  ROW(putv_org_stride, LAPI_ERR_ORG_STRIDE,                                  \
      LAPI_Putv(H, SELF, &c->ts, &c->o_stride, TC, OC, CC))                  \
  ROW(putv_tgt_stride, LAPI_ERR_TGT_STRIDE,                                  \
      LAPI_Putv(H, SELF, &c->t_stride, &c->os, TC, OC, CC))                  \
  ROW(putv_org_extent, LAPI_ERR_ORG_EXTENT,                                  \
      LAPI_Putv(H, SELF, &c->ts, &c->o_extent, TC, OC, CC))                  \
  ROW(putv_tgt_extent, LAPI_ERR_TGT_EXTENT,                                  \
      LAPI_Putv(H, SELF, &c->t_extent, &c->os, TC, OC, CC))                  \
  ROW(putv_type_diff, LAPI_ERR_VEC_TYPE_DIFF,                                \
      LAPI_Putv(H, SELF, &c->t_gen, &c->o_ok, TC, OC, CC))                   \
  ROW(putv_num_diff, LAPI_ERR_VEC_NUM_DIFF,                                  \
      LAPI_Putv(H, SELF, &c->t_3, &c->o_ok, TC, OC, CC))                     \
  ROW(putv_len_diff, LAPI_ERR_VEC_LEN_DIFF,                                  \
      LAPI_Putv(H, SELF, &c->t_diff, &c->o_ok, TC, OC, CC))                  \
  ROW(putv_strided_num_diff, LAPI_ERR_VEC_NUM_DIFF,                          \
      LAPI_Putv(H, SELF, &c->ts_2, &c->os, TC, OC, CC))                      \
  ROW(putv_strided_block_diff, LAPI_ERR_VEC_LEN_DIFF,                        \
      LAPI_Putv(H, SELF, &c->t_block, &c->os, TC, OC, CC))                   \
  ROW(putv_strided_block_diff_org, LAPI_ERR_VEC_LEN_DIFF,                    \
      LAPI_Putv(H, SELF, &c->ts, &c->o_block, TC, OC, CC))                   \
  ROW(putv_purged, LAPI_ERR_TGT_PURGED, purged_self_vec(c, 0))               \
  /* LAPI_Getv: org_vec is the local destination, tgt_vec the source */      \
  ROW(getv_hndl, LAPI_ERR_HNDL_INVALID,                                      \
      LAPI_Getv(DEAD, SELF, &c->t_ok, &c->o_ok, TC, OC))                     \
  ROW(getv_tgt, LAPI_ERR_TGT, LAPI_Getv(H, NT, &c->t_ok, &c->o_ok, TC, OC))  \
  ROW(getv_org_null, LAPI_ERR_ORG_VEC_NULL,                                  \
      LAPI_Getv(H, SELF, &c->t_ok, NULL, TC, OC))                            \
  ROW(getv_tgt_null, LAPI_ERR_TGT_VEC_NULL,                                  \
      LAPI_Getv(H, SELF, NULL, &c->o_ok, TC, OC))                            \
  ROW(getv_org_type, LAPI_ERR_ORG_VEC_TYPE,                                  \
      LAPI_Getv(H, SELF, &c->t_ok, &c->o_type, TC, OC))                      \
  ROW(getv_tgt_type, LAPI_ERR_TGT_VEC_TYPE,                                  \
      LAPI_Getv(H, SELF, &c->t_type, &c->o_ok, TC, OC))                      \
  ROW(getv_org_addr, LAPI_ERR_ORG_VEC_ADDR,                                  \
      LAPI_Getv(H, SELF, &c->t_gen, &c->o_segnull, TC, OC))                  \
  ROW(getv_tgt_addr, LAPI_ERR_TGT_VEC_ADDR,                                  \
      LAPI_Getv(H, SELF, &c->t_segnull, &c->o_ok, TC, OC))                   \
  ROW(getv_org_stride_base, LAPI_ERR_STRIDE_ORG_VEC_ADDR_NULL,               \
      LAPI_Getv(H, SELF, &c->ts, &c->o_base, TC, OC))                        \
  ROW(getv_tgt_stride, LAPI_ERR_TGT_STRIDE,                                  \
      LAPI_Getv(H, SELF, &c->t_stride, &c->os, TC, OC))                      \
  ROW(getv_tgt_extent, LAPI_ERR_TGT_EXTENT,                                  \
      LAPI_Getv(H, SELF, &c->t_extent, &c->os, TC, OC))                      \
  ROW(getv_num_diff, LAPI_ERR_VEC_NUM_DIFF,                                  \
      LAPI_Getv(H, SELF, &c->t_3, &c->o_ok, TC, OC))                         \
  ROW(getv_len_diff, LAPI_ERR_VEC_LEN_DIFF,                                  \
      LAPI_Getv(H, SELF, &c->t_diff, &c->o_ok, TC, OC))                      \
  ROW(getv_len_diff_first, LAPI_ERR_VEC_LEN_DIFF,                            \
      LAPI_Getv(H, SELF, &c->t_diff0, &c->o_ok, TC, OC))                     \
  ROW(getv_type_diff, LAPI_ERR_VEC_TYPE_DIFF,                                \
      LAPI_Getv(H, SELF, &c->t_gen, &c->o_ok, TC, OC))                       \
  ROW(getv_purged, LAPI_ERR_TGT_PURGED, purged_self_vec(c, 1))               \
  /* LAPI_Rmw, LAPI_Rmw64 */                                                 \
  ROW(rmw_hndl, LAPI_ERR_HNDL_INVALID,                                       \
      LAPI_Rmw(DEAD, SWAP, T, c->rvar32, c->in32, &c->prev32, OC))           \
  ROW(rmw_tgt, LAPI_ERR_TGT,                                                 \
      LAPI_Rmw(H, SWAP, NT, c->rvar32, c->in32, &c->prev32, OC))             \
  ROW(rmw_op_4, LAPI_ERR_RMW_OP,                                             \
      LAPI_Rmw(H, (RMW_ops_t)4, T, c->rvar32, c->in32, &c->prev32, OC))      \
  ROW(rmw_op_neg, LAPI_ERR_RMW_OP,                                           \
      LAPI_Rmw(H, (RMW_ops_t)-1, T, c->rvar32, c->in32, &c->prev32, OC))     \
  ROW(rmw_tgt_var_null, LAPI_ERR_TGT_VAR_NULL,                               \
      LAPI_Rmw(H, SWAP, T, NULL, c->in32, &c->prev32, OC))                   \
  ROW(rmw_in_val_null, LAPI_ERR_IN_VAL_NULL,                                 \
      LAPI_Rmw(H, FETCH_AND_ADD, T, c->rvar32, NULL, &c->prev32, OC))        \
  ROW(rmw_cas_in_val_null, LAPI_ERR_IN_VAL_NULL,                             \
      LAPI_Rmw(H, COMPARE_AND_SWAP, T, c->rvar32, NULL, &c->prev32, OC))     \
  ROW(rmw_purged, LAPI_ERR_TGT_PURGED, purged(c, 4))                         \
  ROW(rmw64_hndl, LAPI_ERR_HNDL_INVALID,                                     \
      LAPI_Rmw64(DEAD, SWAP, T, c->rvar64, c->in64, &c->prev64, OC))         \
  ROW(rmw64_tgt, LAPI_ERR_TGT,                                               \
      LAPI_Rmw64(H, SWAP, UMAX, c->rvar64, c->in64, &c->prev64, OC))         \
  ROW(rmw64_op, LAPI_ERR_RMW_OP,                                             \
      LAPI_Rmw64(H, (RMW_ops_t)7, T, c->rvar64, c->in64, &c->prev64, OC))    \
  ROW(rmw64_tgt_var_null, LAPI_ERR_TGT_VAR_NULL,                             \
      LAPI_Rmw64(H, SWAP, T, NULL, c->in64, &c->prev64, OC))                 \
  ROW(rmw64_in_val_null, LAPI_ERR_IN_VAL_NULL,                               \
      LAPI_Rmw64(H, FETCH_AND_OR, T, c->rvar64, NULL, &c->prev64, OC))       \
  ROW(rmw64_purged, LAPI_ERR_TGT_PURGED, purged(c, 5))                       \
  /* counters */                                                             \
  ROW(setcntr_hndl, LAPI_ERR_HNDL_INVALID, LAPI_Setcntr(DEAD, OC, 5))        \
  ROW(setcntr_null, LAPI_ERR_CNTR_NULL, LAPI_Setcntr(H, NULL, 5))            \
  ROW(getcntr_hndl, LAPI_ERR_HNDL_INVALID, LAPI_Getcntr(DEAD, OC, &c->qout)) \
  ROW(getcntr_null, LAPI_ERR_CNTR_NULL, LAPI_Getcntr(H, NULL, &c->qout))     \
  ROW(getcntr_val_null, LAPI_ERR_RET_PTR_NULL, LAPI_Getcntr(H, OC, NULL))    \
  ROW(waitcntr_hndl, LAPI_ERR_HNDL_INVALID,                                  \
      LAPI_Waitcntr(DEAD, OC, 0, &c->qout))                                  \
  ROW(waitcntr_null, LAPI_ERR_CNTR_NULL, LAPI_Waitcntr(H, NULL, 0, &c->qout))\
  ROW(waitcntr_val_neg, LAPI_ERR_CNTR_VAL,                                   \
      LAPI_Waitcntr(H, OC, -1, &c->qout))                                    \
  ROW(nopoll_val_neg, LAPI_ERR_CNTR_VAL,                                     \
      LAPI_Nopoll_wait(H, OC, -2, &c->qout))                                 \
  ROW(nopoll_hndl, LAPI_ERR_HNDL_INVALID,                                    \
      LAPI_Nopoll_wait(DEAD, OC, 0, &c->qout))                               \
  ROW(nopoll_null, LAPI_ERR_CNTR_NULL,                                       \
      LAPI_Nopoll_wait(H, NULL, 0, &c->qout))                                \
  ROW(wstatus_hndl, LAPI_ERR_HNDL_INVALID,                                   \
      LAPI_Setcntr_wstatus(DEAD, OC, 0, NULL, NULL))                         \
  ROW(wstatus_null, LAPI_ERR_CNTR_NULL,                                      \
      LAPI_Setcntr_wstatus(H, NULL, 0, NULL, NULL))                          \
  /* Qenv, Senv */                                                           \
  ROW(qenv_hndl, LAPI_ERR_HNDL_INVALID, LAPI_Qenv(DEAD, TASK_ID, &c->qout))  \
  ROW(qenv_last, LAPI_ERR_QUERY_TYPE, LAPI_Qenv(H, LAST_QUERY, &c->qout))    \
  ROW(qenv_neg, LAPI_ERR_QUERY_TYPE,                                         \
      LAPI_Qenv(H, (lapi_query_t)-1, &c->qout))                              \
  ROW(qenv_ret_null, LAPI_ERR_RET_PTR_NULL, LAPI_Qenv(H, TASK_ID, NULL))     \
  ROW(senv_hndl, LAPI_ERR_HNDL_INVALID, LAPI_Senv(DEAD, INTERRUPT_SET, 0))   \
  ROW(senv_task_id, LAPI_ERR_QUERY_TYPE, LAPI_Senv(H, TASK_ID, 3))           \
  ROW(senv_max_uhdr, LAPI_ERR_QUERY_TYPE, LAPI_Senv(H, MAX_UHDR_SZ, 8))      \
  ROW(senv_last, LAPI_ERR_QUERY_TYPE, LAPI_Senv(H, LAST_QUERY, 0))           \
  ROW(senv_interrupt_val, LAPI_ERR_SET_VAL, LAPI_Senv(H, INTERRUPT_SET, -1)) \
  ROW(senv_error_chk_val, LAPI_ERR_SET_VAL, LAPI_Senv(H, ERROR_CHK, -1))     \
  ROW(senv_timeout_val, LAPI_ERR_SET_VAL, LAPI_Senv(H, TIMEOUT, -1))         \
  /* Addr_set, Addr_get, Address, Address_init(64) */                        \
  ROW(addr_set_hndl, LAPI_ERR_HNDL_INVALID, LAPI_Addr_set(DEAD, HH, 2))      \
  ROW(addr_set_zero, LAPI_ERR_ADDR_HNDL_RANGE, LAPI_Addr_set(H, HH, 0))      \
  ROW(addr_set_neg, LAPI_ERR_ADDR_HNDL_RANGE, LAPI_Addr_set(H, HH, -3))      \
  ROW(addr_set_size, LAPI_ERR_ADDR_HNDL_RANGE,                               \
      LAPI_Addr_set(H, HH, c->tbl_sz))                                       \
  ROW(addr_get_hndl, LAPI_ERR_HNDL_INVALID, LAPI_Addr_get(DEAD, &c->got, 1)) \
  ROW(addr_get_range, LAPI_ERR_ADDR_HNDL_RANGE,                              \
      LAPI_Addr_get(H, &c->got, c->tbl_sz))                                  \
  ROW(addr_get_zero, LAPI_ERR_ADDR_HNDL_RANGE, LAPI_Addr_get(H, &c->got, 0)) \
  ROW(addr_get_null, LAPI_ERR_RET_PTR_NULL, LAPI_Addr_get(H, NULL, 1))       \
  ROW(address_my_null, LAPI_ERR_ORG_ADDR_NULL,                               \
      LAPI_Address(NULL, &c->addr_out))                                      \
  ROW(address_ret_null, LAPI_ERR_TGT_ADDR_NULL, LAPI_Address(org, NULL))     \
  ROW(address_init_hndl, LAPI_ERR_HNDL_INVALID,                              \
      LAPI_Address_init(DEAD, org, c->tab))                                  \
  ROW(address_init_tab_null, LAPI_ERR_ADDR_TBL_NULL,                         \
      LAPI_Address_init(H, org, NULL))                                       \
  ROW(address_init64_hndl, LAPI_ERR_HNDL_INVALID,                            \
      LAPI_Address_init64(DEAD, 1, (lapi_long_t *)c->tab))                   \
  ROW(address_init64_tab_null, LAPI_ERR_ADDR_TBL_NULL,                       \
      LAPI_Address_init64(H, 1, NULL))                                       \
  /* Msgpoll, Probe, Fence, Gfence, Purge, Resume, Term */                   \
  ROW(msgpoll_hndl, LAPI_ERR_HNDL_INVALID, LAPI_Msgpoll(DEAD, 1, &c->minfo)) \
  ROW(msgpoll_info_null, LAPI_ERR_MSG_INFO_NULL, LAPI_Msgpoll(H, 1, NULL))   \
  ROW(probe_hndl, LAPI_ERR_HNDL_INVALID, LAPI_Probe(DEAD))                   \
  ROW(fence_hndl, LAPI_ERR_HNDL_INVALID, LAPI_Fence(DEAD))                   \
  ROW(gfence_hndl, LAPI_ERR_HNDL_INVALID, LAPI_Gfence(DEAD))                 \
  ROW(purge_hndl, LAPI_ERR_HNDL_INVALID, LAPI_Purge_totask(DEAD, T))         \
  ROW(purge_tgt, LAPI_ERR_TGT, LAPI_Purge_totask(H, NT))                     \
  ROW(resume_hndl, LAPI_ERR_HNDL_INVALID, LAPI_Resume_totask(DEAD, T))       \
  ROW(resume_tgt, LAPI_ERR_TGT, LAPI_Resume_totask(H, UMAX))                 \
  ROW(term_hndl, LAPI_ERR_HNDL_INVALID, LAPI_Term(DEAD))                     \
  /* LAPI_Xfer */                                                            \
  ROW(xfer_hndl, LAPI_ERR_HNDL_INVALID, LAPI_Xfer(DEAD, xf(c, LAPI_AM_XFER)))\
  ROW(xfer_dgsp, LAPI_ERR_XFER_CMD, LAPI_Xfer(H, xf(c, LAPI_DGSP_XFER)))     \
  ROW(xfer_rdma, LAPI_ERR_XFER_CMD, LAPI_Xfer(H, xf(c, LAPI_RDMA_XFER)))     \
  ROW(xfer_last, LAPI_ERR_XFER_CMD, LAPI_Xfer(H, xf(c, LAPI_LAST_XFER)))     \
  ROW(xfer_null, LAPI_ERR_XFER_CMD, LAPI_Xfer(H, NULL))                      \
  ROW(xfer_am_tgt, LAPI_ERR_TGT,                                             \
      (xf(c, LAPI_AM_XFER)->Am.tgt = NT, LAPI_Xfer(H, &c->x)))               \
  ROW(xfer_am_hdr_null, LAPI_ERR_HDR_HNDLR_NULL,                             \
      (xf(c, LAPI_AM_XFER)->Am.hdr_hdl = 0, LAPI_Xfer(H, &c->x)))            \
  ROW(xfer_am_uhdr_len, LAPI_ERR_UHDR_LEN,                                   \
      (xf(c, LAPI_AM_XFER)->Am.uhdr_len = 6, LAPI_Xfer(H, &c->x)))           \
  ROW(xfer_am_udata_null, LAPI_ERR_ORG_ADDR_NULL,                            \
      (xf(c, LAPI_AM_XFER)->Am.udata = NULL, LAPI_Xfer(H, &c->x)))           \
  ROW(xfer_amv_vec_null, LAPI_ERR_ORG_VEC_NULL,                              \
      (xf(c, LAPI_AMV_XFER)->Amv.org_vec = NULL, LAPI_Xfer(H, &c->x)))       \
  ROW(xfer_amv_stride, LAPI_ERR_ORG_STRIDE,                                  \
      (xf(c, LAPI_AMV_XFER)->Amv.org_vec = &c->o_stride,                     \
       LAPI_Xfer(H, &c->x)))                                                 \
  ROW(xfer_put_tgt_addr, LAPI_ERR_TGT_ADDR_NULL,                             \
      (xf(c, LAPI_PUT_XFER)->Put.tgt_addr = 0, LAPI_Xfer(H, &c->x)))         \
  ROW(xfer_get_org_addr, LAPI_ERR_ORG_ADDR_NULL,                             \
      (xf(c, LAPI_GET_XFER)->Get.org_addr = NULL, LAPI_Xfer(H, &c->x)))      \
  ROW(xfer_putv_tgt_vec, LAPI_ERR_TGT_VEC_NULL,                              \
      (xf(c, LAPI_PUTV_XFER)->Putv.tgt_vec = NULL, LAPI_Xfer(H, &c->x)))     \
  ROW(xfer_getv_len_diff, LAPI_ERR_VEC_LEN_DIFF,                             \
      (xf(c, LAPI_GETV_XFER)->Getv.tgt_vec = &c->t_diff,                     \
       LAPI_Xfer(H, &c->x)))                                                 \
  ROW(xfer_rmw_size, LAPI_ERR_OP_SZ,                                         \
      (xf(c, LAPI_RMW_XFER)->Rmw.size = 16, LAPI_Xfer(H, &c->x)))            \
  ROW(xfer_rmw_op, LAPI_ERR_RMW_OP,                                          \
      (xf(c, LAPI_RMW_XFER)->Rmw.op = (RMW_ops_t)9, LAPI_Xfer(H, &c->x)))    \
  ROW(xfer_rmw_var_null, LAPI_ERR_TGT_VAR_NULL,                              \
      (xf(c, LAPI_RMW_XFER)->Rmw.tgt_var = 0, LAPI_Xfer(H, &c->x)))          \
  ROW(xfer_rmw_in_null, LAPI_ERR_IN_VAL_NULL,                                \
      (xf(c, LAPI_RMW_XFER)->Rmw.in_val = NULL, LAPI_Xfer(H, &c->x)))        \
  /* LAPI_Util, LAPI_Init */                                                 \
  ROW(util_hndl, LAPI_ERR_HNDL_INVALID,                                      \
      LAPI_Util(DEAD, util(c, LAPI_GET_THREAD_FUNC)))                        \
  ROW(util_dgsp, LAPI_ERR_UTIL_CMD, LAPI_Util(H, util(c, LAPI_REGISTER_DGSP)))\
  ROW(util_last, LAPI_ERR_UTIL_CMD, LAPI_Util(H, util(c, LAPI_LAST_UTIL)))   \
  ROW(util_null, LAPI_ERR_UTIL_CMD, LAPI_Util(H, NULL))                      \
  ROW(init_hndl_null, LAPI_ERR_RET_PTR_NULL, init_null_hndl(c))              \
  ROW(init_info_null, LAPI_ERR_INFO_NULL, init_null_info(c))                 \
  ROW(init_info_nonzero, LAPI_ERR_INFO_NONZERO, init_nonzero(c))

#define DEFINE_ROW(name, code, call)                                         \
  static int row_##name(struct ectx *c)                                      \
  {                                                                          \
    (void)c;                                                                 \
    return (call);                                                           \
  }
ROWS(DEFINE_ROW)

struct row {
  const char *name, *call;
  int code;
  int (*run)(struct ectx *);
};

#define TABLE_ROW(name, code, call) {#name, #call, code, row_##name},
static const struct row rows[] = {ROWS(TABLE_ROW)};

/* ---------------------------------------------------------- harness */

static int qget(lapi_handle_t h, lapi_query_t q)
{
  int v = INT_MIN;
  LT_OK(LAPI_Qenv(h, q, &v));
  return v;
}

static void setup(struct ectx *c, struct lt_job *j)
{
  memset(c, 0, sizeof *c);
  lt_open_err(j, e_err);
  c->h = j->h;
  c->tgt = j->tgt;
  c->self = (uint)j->me;
  c->n = (uint)j->n;
  c->max_uhdr = qget(c->h, MAX_UHDR_SZ);
  c->tbl_sz = qget(c->h, LOC_ADDRTBL_SZ);
  cr_assert_lt(c->max_uhdr + 4, (int)sizeof c->uhdr,
               "MAX_UHDR_SZ %d: enlarge uhdr in this test", c->max_uhdr);
  /* a handle that existed and was terminated */
  lapi_info_t info;
  memset(&info, 0, sizeof info);
  LT_OK(LAPI_Init(&c->dead, &info));
  LT_OK(LAPI_Term(c->dead));
  cr_assert_neq(c->dead, c->h);
  lt_fill(org, sizeof org, 123);
  memset(tmem, LT_GUARD, sizeof tmem);
  memset(omem, LT_GUARD, sizeof omem);
  lt_fill(c->uhdr, sizeof c->uhdr, 321);
  LT_OK(LAPI_Setcntr(c->h, &recv_cntr, 0));
  LT_OK(LAPI_Setcntr(c->h, &c->oc, 0));
  LT_OK(LAPI_Setcntr(c->h, &c->cc, 0));
  c->hh = lt_at_tgt(j, (void *)e_hdr);
  c->vh = lt_at_tgt(j, (void *)e_vhdr);
  c->tc = lt_cntr_at_tgt(j, &recv_cntr);
  c->rmem = lt_at_tgt(j, tmem);
  c->rvar32 = lt_at_tgt(j, &var32);
  c->rvar64 = lt_at_tgt(j, &var64);
  c->in32[0] = 1000, c->in32[1] = 2000;
  c->in64[0] = 1000, c->in64[1] = 2000;
  c->prev32 = -3;
  c->prev64 = -3;
  build_vectors(c);
  LT_OK(LAPI_Addr_set(c->h, (void *)e_hdr, 1));
  LT_OK(LAPI_Gfence(c->h));
}

/* A copy of the vectors to see that no call wrote into them. */
static unsigned char vec_snapshot[sizeof(struct ectx)];

static void snapshot(const struct ectx *c)
{
  memcpy(vec_snapshot, c, sizeof *c);
}

/* Nothing happened: returns a description of the first change, or NULL. */
static const char *what_changed(struct ectx *c, int chk, int intr, int tmo)
{
  static char why[160];
  LT_OK(LAPI_Fence(c->h));
  long d;
  if ((d = lt_find_diff(org, sizeof org, 123, 0)) >= 0)
    return snprintf(why, sizeof why, "origin byte %ld", d), why;
  if ((d = lt_find_nonguard(tmem, sizeof tmem)) >= 0)
    return snprintf(why, sizeof why, "target byte %ld", d), why;
  if ((d = lt_find_nonguard(omem, sizeof omem)) >= 0)
    return snprintf(why, sizeof why, "get destination byte %ld", d), why;
  if ((d = lt_find_diff(c->uhdr, sizeof c->uhdr, 321, 0)) >= 0)
    return snprintf(why, sizeof why, "uhdr byte %ld", d), why;
  /* vectors and operands: compare the ctx fields up to the scratch part */
  size_t stable = offsetof(struct ectx, x);
  if (memcmp(vec_snapshot + offsetof(struct ectx, oi_ok),
             (unsigned char *)c + offsetof(struct ectx, oi_ok),
             stable - offsetof(struct ectx, oi_ok)))
    return "a vector description";
  if (c->in32[0] != 1000 || c->in32[1] != 2000 || c->in64[0] != 1000 ||
      c->in64[1] != 2000)
    return "in_val";
  if (c->prev32 != -3 || c->prev64 != -3)
    return "prev_tgt_val";
  if (var32 != 17 || var64 != 17)
    return "the RMW target variable";
  if (lt_get(&(struct lt_job){.h = c->h}, &recv_cntr) != 0)
    return "tgt_cntr";
  if (lt_get(&(struct lt_job){.h = c->h}, &c->oc) != 0)
    return "org_cntr";
  if (lt_get(&(struct lt_job){.h = c->h}, &c->cc) != 0)
    return "cmpl_cntr";
  if (lt_load(&hdr_runs) || lt_load(&cmpl_runs))
    return "a header or completion handler ran";
  if (lt_load(&err_runs))
    return "the error handler ran";
  if (qget(c->h, ERROR_CHK) != chk || qget(c->h, INTERRUPT_SET) != intr ||
      qget(c->h, TIMEOUT) != tmo)
    return "a LAPI_Senv setting";
  void *a = NULL;
  LT_OK(LAPI_Addr_get(c->h, &a, 1));
  if (a != (void *)e_hdr)
    return "the address table";
  return NULL;
}

Test(am_errors, every_error_code_without_side_effects)
{
  struct lt_job j;
  static struct ectx ctx;
  struct ectx *c = &ctx;
  setup(c, &j);
  int chk = qget(c->h, ERROR_CHK), intr = qget(c->h, INTERRUPT_SET);
  int tmo = qget(c->h, TIMEOUT);
  snapshot(c);
  size_t nrows = sizeof rows / sizeof rows[0];
  int bad = 0;
  char report[4096] = "";
  size_t used = 0;
  for (size_t i = 0; i < nrows; i++) {
    int rc = rows[i].run(c);
    const char *changed = what_changed(c, chk, intr, tmo);
    if (rc != rows[i].code || changed) {
      bad++;
      if (used < sizeof report - 200)
        used += (size_t)snprintf(report + used, sizeof report - used,
                                 "\n  %s: got %d, expected %d%s%s",
                                 rows[i].name, rc, rows[i].code,
                                 changed ? "; changed: " : "",
                                 changed ? changed : "");
      /* restore so later rows are judged on their own */
      lt_fill(org, sizeof org, 123);
      memset(tmem, LT_GUARD, sizeof tmem);
      memset(omem, LT_GUARD, sizeof omem);
      lt_fill(c->uhdr, sizeof c->uhdr, 321);
      memcpy((unsigned char *)c + offsetof(struct ectx, oi_ok),
             vec_snapshot + offsetof(struct ectx, oi_ok),
             offsetof(struct ectx, x) - offsetof(struct ectx, oi_ok));
      c->in32[0] = 1000, c->in32[1] = 2000;
      c->in64[0] = 1000, c->in64[1] = 2000;
      c->prev32 = c->prev64 = -3;
      var32 = 17, var64 = 17;
      LT_OK(LAPI_Setcntr(c->h, &recv_cntr, 0));
      LT_OK(LAPI_Setcntr(c->h, &c->oc, 0));
      LT_OK(LAPI_Setcntr(c->h, &c->cc, 0));
      lt_store(&hdr_runs, 0), lt_store(&cmpl_runs, 0), lt_store(&err_runs, 0);
      LAPI_Senv(c->h, ERROR_CHK, chk);
      LAPI_Senv(c->h, INTERRUPT_SET, intr);
      LAPI_Senv(c->h, TIMEOUT, tmo);
      LAPI_Addr_set(c->h, (void *)e_hdr, 1);
    }
  }
  /* the handle still works after all that */
  LT_OK(LAPI_Gfence(c->h));
  LT_OK(LAPI_Amsend(c->h, c->tgt, (void *)(uintptr_t)1, c->uhdr, 4, org,
                    SEG, c->tc, &c->oc, &c->cc));
  cr_assert_eq(lt_wait(&j, &c->cc, 1), 0);
  cr_assert_eq(lt_wait(&j, &recv_cntr, 1), 0);
  cr_assert_eq(lt_find_diff(tmem, SEG, 123, 0), -1);
  cr_assert_eq(bad, 0, "%d of %zu rows failed:%s", bad, nrows, report);
  lt_close(&j);
}

/* The table has a row for every code the reference and the seed name for
 * these calls: a guard against rows being dropped. */
Test(am_errors, table_covers_every_listed_code)
{
  const int listed[] = {
    LAPI_ERR_HNDL_INVALID, LAPI_ERR_TGT, LAPI_ERR_HDR_HNDLR_NULL,
    LAPI_ERR_UHDR_NULL, LAPI_ERR_UHDR_LEN, LAPI_ERR_ORG_VEC_NULL,
    LAPI_ERR_ORG_VEC_TYPE, LAPI_ERR_ORG_VEC_ADDR, LAPI_ERR_ORG_VEC_LEN,
    LAPI_ERR_STRIDE_ORG_VEC_ADDR_NULL, LAPI_ERR_ORG_STRIDE,
    LAPI_ERR_ORG_EXTENT, LAPI_ERR_TGT_PURGED, LAPI_ERR_ORG_ADDR_NULL,
    LAPI_ERR_TGT_ADDR_NULL, LAPI_ERR_DATA_LEN, LAPI_ERR_TGT_VEC_NULL,
    LAPI_ERR_TGT_VEC_TYPE, LAPI_ERR_TGT_VEC_ADDR, LAPI_ERR_TGT_VEC_LEN,
    LAPI_ERR_STRIDE_TGT_VEC_ADDR_NULL, LAPI_ERR_TGT_STRIDE,
    LAPI_ERR_TGT_EXTENT, LAPI_ERR_VEC_TYPE_DIFF, LAPI_ERR_VEC_NUM_DIFF,
    LAPI_ERR_VEC_LEN_DIFF, LAPI_ERR_CNTR_NULL, LAPI_ERR_RET_PTR_NULL,
    LAPI_ERR_QUERY_TYPE, LAPI_ERR_SET_VAL, LAPI_ERR_RMW_OP,
    LAPI_ERR_TGT_VAR_NULL, LAPI_ERR_IN_VAL_NULL, LAPI_ERR_ADDR_HNDL_RANGE,
    LAPI_ERR_ADDR_TBL_NULL, LAPI_ERR_MSG_INFO_NULL, LAPI_ERR_XFER_CMD,
    LAPI_ERR_OP_SZ, LAPI_ERR_UTIL_CMD, LAPI_ERR_INFO_NULL,
    LAPI_ERR_INFO_NONZERO, LAPI_ERR_CNTR_VAL,
  };
  for (size_t k = 0; k < sizeof listed / sizeof listed[0]; k++) {
    int found = 0;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
      found |= rows[i].code == listed[k];
    cr_assert(found, "no row for code %d", listed[k]);
  }
}
