/*
 * lapif_handlers.c - Fortran handlers run by the dispatcher.
 *
 * LAPI calls handlers as C functions; a Fortran handler is reached
 * through a C trampoline that hands it Fortran arguments: its own
 * INTEGER copy of the handle and of uhdr_len, the header without the
 * binding's envelope, INTEGER(KIND=LAPI_ADDR_TYPE) variables comp_h and
 * user_info (LAPI_ADDR_NULL to start with), and never a NULL reference.
 *
 * Header handlers.  A message whose handler is Fortran carries a
 * 16-byte envelope in front of the user header: a magic word, and
 * either the Addr_set index the handler is registered under or the
 * handler's address (as a module and an offset, like the core's own
 * handler addresses between processes).  The C handler LAPI calls at the
 * target is lapif_hdr_entry (directly, or from the Addr_set slot where the
 * binding put it); it reads the envelope, finds the Fortran function (by
 * index in the target handle's own table, so it works whatever the address
 * layout of each process) and calls it.  A handler passed by name that
 * is registered under an index travels as that index.
 *
 * Completion, send completion and error handlers get a slot: one of
 * LAPIF_SLOTS static trampolines bound to the Fortran procedure, so the
 * user_info the header handler chose goes through untouched and no
 * memory is allocated per message.
 */
#include <stdlib.h>
#include <string.h>

#include "am/lapi_am.h"
#include "lapif_glue.h"
#include "transport/ofi/ofi.h"

#define LAPIF_MAGIC 0x464cu /* "LF" */

/*
 * fn travels as the core's handler addresses do between processes with
 * address-space randomisation: an offset in a module (named by a hash),
 * which the target adds to its own base of that module (ofi_hdl.c).
 */
struct lapif_envelope {
  uint16_t magic;
  uint16_t index;  /* Addr_set index, or 0: use fn */
  uint32_t module; /* fn's module, 0: fn is an address */
  uint64_t fn;     /* the Fortran header handler */
};
_Static_assert(sizeof(struct lapif_envelope) == LAPIF_ENVELOPE,
               "envelope size");

/* What a Fortran handler gets for an absent uhdr or user_info. */
static lapif_addr lapif_nothing[2];

/* --------------------------------------- Fortran header handler table */

/*
 * ftab[slot][i]: the Fortran handler registered under index i of the
 * handle instance in that slot of the core's table (CPE tasks of one
 * process share handle values, not slots).  A table is allocated on the
 * first LAPI_ADDR_SET of its slot and kept, like the slot; entries are
 * atomic (the dispatcher reads them while the program sets them).  An
 * entry counts only while the C slot of the index holds lapif_hdr_entry,
 * so what a handle registered from C is never taken for Fortran.
 */
#define LAPIF_MAX_SLOTS (64 * LAPI_AM_MAX_HANDLES) /* the core's table */

static lapif_addr *ftab[LAPIF_MAX_SLOTS];

static void *lapif_hdr_entry(lapi_handle_t *hndl, void *uhdr, uint *uhdr_len,
                             ulong *len, compl_hndlr_t **comp_h, void **uinfo);

static lapif_addr *ftab_of(const struct lapi_hndl *h, int create)
{
  if (h == NULL || h->slot >= LAPIF_MAX_SLOTS)
    return NULL;
  lapif_addr *t = __atomic_load_n(&ftab[h->slot], __ATOMIC_ACQUIRE);
  if (t != NULL || !create)
    return t;
  lapif_addr *fresh = calloc(LAPI_AM_ADDRTBL_SZ, sizeof *fresh);
  if (fresh == NULL)
    return NULL;
  if (!__atomic_compare_exchange_n(&ftab[h->slot], &t, fresh, 0,
                                   __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    free(fresh); /* another thread was first: t is its table */
    return t;
  }
  return fresh;
}

/* The Fortran handler under index idx of h, or 0. */
static lapif_addr ftab_get(const struct lapi_hndl *h, uint64_t idx)
{
  if (idx == 0 || idx >= LAPI_AM_ADDRTBL_SZ)
    return 0;
  lapif_addr *t = ftab_of(h, 0);
  if (t == NULL || __atomic_load_n(&h->addr_tbl[idx], __ATOMIC_ACQUIRE) !=
                       (void *)lapif_hdr_entry)
    return 0;
  return __atomic_load_n(&t[idx], __ATOMIC_ACQUIRE);
}

/* The index fn is registered under on h, or 0. */
static uint32_t ftab_find(const struct lapi_hndl *h, lapif_addr fn)
{
  if (ftab_of(h, 0) == NULL)
    return 0;
  for (uint32_t i = 1; i < LAPI_AM_ADDRTBL_SZ; i++)
    if (ftab_get(h, i) == fn)
      return i;
  return 0;
}

void lapif_handle_reset(lapi_handle_t hndl)
{
  lapif_addr *t = ftab_of(lapi_hndl_get(hndl), 0);
  if (t == NULL)
    return;
  for (int i = 0; i < LAPI_AM_ADDRTBL_SZ; i++)
    __atomic_store_n(&t[i], 0, __ATOMIC_RELEASE);
}

/* --------------------------------------------------- header trampoline */

static void *lapif_hdr_entry(lapi_handle_t *hndl, void *uhdr, uint *uhdr_len,
                             ulong *len, compl_hndlr_t **comp_h, void **uinfo)
{
  struct lapif_envelope env;
  struct lapi_hndl *h = lapi_hndl_get(*hndl);
  if (uhdr == NULL || *uhdr_len < sizeof env) {
    if (h != NULL)
      LAPI_ASYNC_ERROR(h, LAPI_ERR_HDR_HNDLR_NULL, AM_ERR, -1,
                       "an active message for a Fortran header handler "
                       "came without the binding's header (sent from C "
                       "to an index registered from Fortran?); its data "
                       "is discarded");
    return NULL;
  }
  memcpy(&env, uhdr, sizeof env);
  lapif_addr fn = 0;
  if (env.magic == LAPIF_MAGIC)
    fn = env.index ? ftab_get(h, env.index)
                   : (lapif_addr)ofi_hdl_decode(env.fn, env.module);
  if (fn == 0) {
    if (h != NULL)
      LAPI_ASYNC_ERROR(h, LAPI_ERR_HDR_HNDLR_NULL, AM_ERR, -1,
                       "no Fortran header handler is registered under "
                       "index %u of handle %u (call LAPI_ADDR_SET on "
                       "every task); the message's data is discarded",
                       env.magic == LAPIF_MAGIC ? env.index : 0, *hndl);
    return NULL;
  }

  lapif_int fh = (lapif_int)*hndl;
  lapif_int flen = (lapif_int)(*uhdr_len - sizeof env);
  lapif_addr fcomp = 0, finfo = 0;
  void *fuhdr = flen ? (char *)uhdr + sizeof env : (void *)lapif_nothing;
  lapif_hdr_fn *f = (lapif_hdr_fn *)(intptr_t)fn;
  lapif_addr ret = f(&fh, fuhdr, &flen, (lapif_long *)len, &fcomp, &finfo);

  *uinfo = (void *)(intptr_t)finfo;
  *comp_h = NULL;
  if (fcomp != 0) {
    *comp_h = lapif_cmpl_tramp(fcomp);
    if (*comp_h == NULL) {
      /* No slot left: gfortran passes a SUBROUTINE's two arguments as a
       * C function gets them, so call it directly rather than lose it. */
      static int told;
      if (!__atomic_exchange_n(&told, 1, __ATOMIC_RELAXED))
        LAPI_LOG(LAPI_LOG_ASYNC, "more than %d Fortran completion or error "
                 "handlers: the next ones are called without a trampoline",
                 LAPIF_SLOTS);
      *comp_h = (compl_hndlr_t *)(intptr_t)fcomp;
    }
  }
  return (void *)(intptr_t)ret;
}

int lapif_max_uhdr(void)
{
  return LAPI_AM_MAX_UHDR - LAPIF_ENVELOPE;
}

void lapif_am_prepare(lapi_handle_t hndl, lapif_addr hdr, void *uhdr,
                      uint uhdr_len, struct lapif_am *am)
{
  am->hdr_hdl = (void *)(intptr_t)hdr;
  am->uhdr = uhdr;
  am->uhdr_len = uhdr_len;
  if (hdr == 0)
    return; /* LAPI_ERR_HDR_HNDLR_NULL, in the C order of checks */

  const struct lapi_hndl *h = lapi_hndl_get(hndl);
  uint32_t index;
  if ((uint64_t)hdr < LAPI_AM_ADDRTBL_SZ) {
    if (ftab_get(h, (uint64_t)hdr) == 0)
      return; /* a C handler, or an empty slot the C call reports */
    index = (uint32_t)hdr;
  } else {
    index = ftab_find(h, hdr);
  }
  if (uhdr_len % 4 != 0 || uhdr_len > LAPI_AM_MAX_UHDR ||
      (uhdr == NULL && uhdr_len != 0))
    return; /* the C call refuses the header itself */
  if (uhdr_len > (uint)lapif_max_uhdr()) {
    LAPI_LOG(LAPI_LOG_CALL, "uhdr_len %u: a Fortran header handler gets at "
             "most %d bytes (MAX_UHDR_SZ less %d for the Fortran binding)",
             uhdr_len, lapif_max_uhdr(), LAPIF_ENVELOPE);
    /* A length the C call refuses with LAPI_ERR_UHDR_LEN, after the
     * checks that come before it. */
    am->uhdr_len = LAPI_AM_MAX_UHDR + 4;
    return;
  }

  struct lapif_envelope env = {.magic = LAPIF_MAGIC, .index = (uint16_t)index};
  if (index == 0)
    env.fn = ofi_hdl_encode((uint64_t)hdr, &env.module);
  memcpy(am->buf, &env, sizeof env);
  if (uhdr_len)
    memcpy(am->buf + sizeof env, uhdr, uhdr_len);
  am->uhdr = am->buf;
  am->uhdr_len = uhdr_len + sizeof env;
  am->hdr_hdl = index ? (void *)(uintptr_t)index : (void *)lapif_hdr_entry;
}

int lapif_addr_set(lapi_handle_t hndl, lapif_addr fn, int idx)
{
  lapif_addr *t = NULL, old = 0;
  if (idx >= 1 && idx < LAPI_AM_ADDRTBL_SZ) {
    struct lapi_hndl *h = lapi_hndl_get(hndl);
    t = ftab_of(h, fn != 0);
    if (h != NULL && fn != 0 && t == NULL)
      return LAPI_FAIL(LAPI_ERR_MEMORY_EXHAUSTED,
                       "LAPI_ADDR_SET: no memory for the Fortran handler "
                       "table of handle %u", hndl);
  }
  /* The Fortran entry first: a message may arrive the moment the C
   * slot holds the trampoline. */
  if (t != NULL)
    old = __atomic_exchange_n(&t[idx], fn, __ATOMIC_ACQ_REL);
  int rc = LAPI_Addr_set(hndl, fn ? (void *)lapif_hdr_entry : NULL, idx);
  if (rc != LAPI_SUCCESS && t != NULL)
    __atomic_store_n(&t[idx], old, __ATOMIC_RELEASE);
  return rc;
}

int lapif_addr_get(lapi_handle_t hndl, lapif_addr *out, int idx)
{
  void *a = NULL;
  int rc = LAPI_Addr_get(hndl, out ? &a : NULL, idx);
  if (rc != LAPI_SUCCESS)
    return rc;
  if (a == (void *)lapif_hdr_entry)
    *out = ftab_get(lapi_hndl_get(hndl), (uint64_t)idx);
  else
    *out = (lapif_addr)(intptr_t)a;
  return LAPI_SUCCESS;
}

/* -------------------------------------------------------------- slots */

/* slot_fn[k]: the Fortran procedure slot k calls (atomic, set once). */
static lapif_addr slot_fn[LAPIF_SLOTS];

static int slot_of(lapif_addr fn)
{
  for (int k = 0; k < LAPIF_SLOTS; k++) {
    lapif_addr cur = __atomic_load_n(&slot_fn[k], __ATOMIC_ACQUIRE);
    if (cur == 0 &&
        __atomic_compare_exchange_n(&slot_fn[k], &cur, fn, 0,
                                    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
      return k;
    if (cur == fn)
      return k;
  }
  return -1;
}

static void run_cmpl(int k, lapi_handle_t *h, void *user_info)
{
  lapif_cmpl_fn *f = (lapif_cmpl_fn *)(intptr_t)__atomic_load_n(
      &slot_fn[k], __ATOMIC_ACQUIRE);
  lapif_int fh = (lapif_int)*h;
  f(&fh, user_info ? user_info : (void *)lapif_nothing);
}

static void run_shdlr(int k, lapi_handle_t *h, void *sinfo,
                      lapi_sh_info_t *info)
{
  lapif_shdlr_fn *f = (lapif_shdlr_fn *)(intptr_t)__atomic_load_n(
      &slot_fn[k], __ATOMIC_ACQUIRE);
  lapif_int fh = (lapif_int)*h;
  f(&fh, sinfo ? sinfo : (void *)lapif_nothing, info);
}

static void run_err(int k, lapi_handle_t *h, int *code, lapi_err_t *type,
                    int *task, int *src)
{
  lapif_err_fn *f = (lapif_err_fn *)(intptr_t)__atomic_load_n(
      &slot_fn[k], __ATOMIC_ACQUIRE);
  lapif_int fh = (lapif_int)*h, fcode = *code, ftype = (lapif_int)*type;
  lapif_int ftask = *task, fsrc = *src;
  f(&fh, &fcode, &ftype, &ftask, &fsrc);
}

/* One trampoline of each kind per slot. */
#define LAPIF_SLOT_LIST(X)                                                 \
  X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12)      \
  X(13) X(14) X(15) X(16) X(17) X(18) X(19) X(20) X(21) X(22) X(23) X(24)  \
  X(25) X(26) X(27) X(28) X(29) X(30) X(31) X(32) X(33) X(34) X(35) X(36)  \
  X(37) X(38) X(39) X(40) X(41) X(42) X(43) X(44) X(45) X(46) X(47) X(48)  \
  X(49) X(50) X(51) X(52) X(53) X(54) X(55) X(56) X(57) X(58) X(59) X(60)  \
  X(61) X(62) X(63)

#define LAPIF_DEFINE_SLOT(k)                                               \
  static void cmpl_##k(lapi_handle_t *h, void *p) { run_cmpl(k, h, p); }   \
  static void shdlr_##k(lapi_handle_t *h, void *p, lapi_sh_info_t *i)      \
  {                                                                        \
    run_shdlr(k, h, p, i);                                                 \
  }                                                                        \
  static void err_##k(lapi_handle_t *h, int *c, lapi_err_t *t, int *task,  \
                      int *src)                                            \
  {                                                                        \
    run_err(k, h, c, t, task, src);                                        \
  }
LAPIF_SLOT_LIST(LAPIF_DEFINE_SLOT)

#define LAPIF_CMPL_ENTRY(k) cmpl_##k,
#define LAPIF_SHDLR_ENTRY(k) shdlr_##k,
#define LAPIF_ERR_ENTRY(k) err_##k,
static compl_hndlr_t *const cmpl_tramp[] = {LAPIF_SLOT_LIST(LAPIF_CMPL_ENTRY)};
static scompl_hndlr_t *const shdlr_tramp[] = {
    LAPIF_SLOT_LIST(LAPIF_SHDLR_ENTRY)};
static LAPI_err_hndlr *const err_tramp[] = {LAPIF_SLOT_LIST(LAPIF_ERR_ENTRY)};
_Static_assert(sizeof cmpl_tramp / sizeof cmpl_tramp[0] == LAPIF_SLOTS,
               "one trampoline per slot");

compl_hndlr_t *lapif_cmpl_tramp(lapif_addr fn)
{
  if (fn == 0)
    return NULL;
  int k = slot_of(fn);
  return k < 0 ? NULL : cmpl_tramp[k];
}

scompl_hndlr_t *lapif_shdlr_tramp(lapif_addr fn)
{
  if (fn == 0)
    return NULL;
  int k = slot_of(fn);
  return k < 0 ? NULL : shdlr_tramp[k];
}

LAPI_err_hndlr *lapif_err_tramp(lapif_addr fn)
{
  if (fn == 0)
    return NULL;
  int k = slot_of(fn);
  return k < 0 ? NULL : err_tramp[k];
}
