/*
 * lapi_addr.c - the header handler table (LAPI_Addr_set, LAPI_Addr_get)
 * and address exchange (LAPI_Address, LAPI_Address_init, _init64).
 *
 * Each handle has LOC_ADDRTBL_SZ (256) slots; indexes 1..255 may hold a
 * header handler, and a hdr_hdl below 256 given to LAPI_Amsend,
 * LAPI_Amsendv or LAPI_Xfer names the slot of that index in the target's
 * table (the value 0 is the NULL handler).  Slots are read by the
 * dispatcher while the program may write them, hence atomic accesses.
 */
#include <stdlib.h>

#include "am/lapi_am.h"

static int check_index(int addr_hndl, const char *api)
{
  if (addr_hndl < 1 || addr_hndl >= LAPI_AM_ADDRTBL_SZ)
    return LAPI_FAIL_IN(api, LAPI_ERR_ADDR_HNDL_RANGE,
                        "addr_hndl %d is outside 1..%d (LOC_ADDRTBL_SZ - 1)",
                        addr_hndl, LAPI_AM_ADDRTBL_SZ - 1);
  return 0;
}

int PLAPI_Addr_set(lapi_handle_t hndl, void *addr, int addr_hndl)
{
  struct lapi_hndl *h = lapi_hndl_get(hndl);
  if (h == NULL)
    return LAPI_FAIL(LAPI_ERR_HNDL_INVALID,
                     "handle %u is not initialised or already terminated",
                     hndl);
  int rc = check_index(addr_hndl, __func__);
  if (rc)
    return rc;
  /* NULL is allowed: it clears the slot. */
  __atomic_store_n(&h->addr_tbl[addr_hndl], addr, __ATOMIC_RELEASE);
  return LAPI_SUCCESS;
}

int PLAPI_Addr_get(lapi_handle_t hndl, void **addr, int addr_hndl)
{
  struct lapi_hndl *h = lapi_hndl_get(hndl);
  if (h == NULL)
    return LAPI_FAIL(LAPI_ERR_HNDL_INVALID,
                     "handle %u is not initialised or already terminated",
                     hndl);
  if (addr == NULL)
    return LAPI_FAIL(LAPI_ERR_RET_PTR_NULL,
                     "addr is NULL: pass where to store the address");
  int rc = check_index(addr_hndl, __func__);
  if (rc)
    return rc;
  *addr = __atomic_load_n(&h->addr_tbl[addr_hndl], __ATOMIC_ACQUIRE);
  return LAPI_SUCCESS;
}

int PLAPI_Address(void *my_addr, ulong *ret_addr)
{
  if (my_addr == NULL)
    return LAPI_FAIL(LAPI_ERR_ORG_ADDR_NULL,
                     "my_addr is NULL: pass the address to convert");
  if (ret_addr == NULL)
    return LAPI_FAIL(LAPI_ERR_TGT_ADDR_NULL,
                     "ret_addr is NULL: pass where to store the address");
  *ret_addr = (ulong)(uintptr_t)my_addr;
  return LAPI_SUCCESS;
}

static int address_exchange(lapi_handle_t hndl, const void *add_tab,
                            const char *api, struct lapi_hndl **hp)
{
  struct lapi_hndl *h = lapi_hndl_get(hndl);
  if (h == NULL)
    return LAPI_FAIL_IN(api, LAPI_ERR_HNDL_INVALID,
                        "handle %u is not initialised or already terminated",
                        hndl);
  if (add_tab == NULL)
    return LAPI_FAIL_IN(api, LAPI_ERR_ADDR_TBL_NULL,
                        "add_tab is NULL: pass an array of NUM_TASKS (%u) "
                        "entries", h->num_tasks);
  *hp = h;
  return 0;
}

int PLAPI_Address_init(lapi_handle_t hndl, void *my_tab, void *add_tab[])
{
  struct lapi_hndl *h;
  int rc = address_exchange(hndl, add_tab, __func__, &h);
  if (rc)
    return rc;
  lapi_long_t *all = malloc(h->num_tasks * sizeof *all);
  if (all == NULL)
    return LAPI_FAIL(LAPI_ERR_MEMORY_EXHAUSTED,
                     "no memory for a table of %u tasks", h->num_tasks);
  rc = lapi_coll_allgather64(h, lapi_addr_u64(my_tab), all);
  if (rc == LAPI_SUCCESS)
    for (uint t = 0; t < h->num_tasks; t++)
      add_tab[t] = lapi_addr_ptr(all[t]);
  free(all);
  return rc ? LAPI_FAIL(rc, "the job's all-gather failed") : LAPI_SUCCESS;
}

int PLAPI_Address_init64(lapi_handle_t hndl, lapi_long_t my_tab,
                         lapi_long_t *add_tab)
{
  struct lapi_hndl *h;
  int rc = address_exchange(hndl, add_tab, __func__, &h);
  if (rc)
    return rc;
  rc = lapi_coll_allgather64(h, my_tab, add_tab);
  return rc ? LAPI_FAIL(rc, "the job's all-gather failed") : LAPI_SUCCESS;
}

int LAPI_Addr_set(lapi_handle_t hndl, void *addr, int addr_hndl)
    __attribute__((weak, alias("PLAPI_Addr_set")));
int LAPI_Addr_get(lapi_handle_t hndl, void **addr, int addr_hndl)
    __attribute__((weak, alias("PLAPI_Addr_get")));
int LAPI_Address(void *my_addr, ulong *ret_addr)
    __attribute__((weak, alias("PLAPI_Address")));
int LAPI_Address_init(lapi_handle_t hndl, void *my_tab, void *add_tab[])
    __attribute__((weak, alias("PLAPI_Address_init")));
int LAPI_Address_init64(lapi_handle_t hndl, lapi_long_t my_tab,
                        lapi_long_t *add_tab)
    __attribute__((weak, alias("PLAPI_Address_init64")));
