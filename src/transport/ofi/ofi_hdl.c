/*
 * ofi_hdl.c - header handler addresses between processes.
 *
 * LAPI programs are SPMD: every task runs the same program and passes
 * its own address of a header handler as hdr_hdl.  Between processes
 * with address-space randomisation the same function lives at different
 * addresses, so an address that falls in an executable segment of one of
 * our loaded modules travels as (module, offset): the module is named by
 * a hash of its path as the dynamic linker lists it (the main program is
 * ""), and the target adds its own base of that module.  Anything else
 * (an Addr_set index, an address the program got from the target with
 * LAPI_Address_init) travels unchanged with module 0.
 */
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "transport/ofi/ofi.h"

#define MOD_MAX 256
#define SEG_MAX 4

struct mod {
  uint32_t hash;
  uintptr_t base;
  int nseg;
  uintptr_t lo[SEG_MAX], hi[SEG_MAX]; /* executable PT_LOAD ranges */
};

static struct mod mods[MOD_MAX];
static int nmods;
static pthread_mutex_t mod_lock = PTHREAD_MUTEX_INITIALIZER;

static uint32_t hash_name(const char *s)
{
  uint32_t h = 2166136261u; /* FNV-1a; 0 is kept for "untranslated" */
  while (*s)
    h = (h ^ (unsigned char)*s++) * 16777619u;
  return h ? h : 1;
}

static int scan_one(struct dl_phdr_info *info, size_t size, void *arg)
{
  (void)size;
  (void)arg;
  if (nmods == MOD_MAX)
    return 1;
  struct mod *m = &mods[nmods];
  m->hash = hash_name(info->dlpi_name ? info->dlpi_name : "");
  m->base = (uintptr_t)info->dlpi_addr;
  m->nseg = 0;
  for (int k = 0; k < info->dlpi_phnum && m->nseg < SEG_MAX; k++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[k];
    if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
      continue;
    m->lo[m->nseg] = m->base + ph->p_vaddr;
    m->hi[m->nseg] = m->lo[m->nseg] + ph->p_memsz;
    m->nseg++;
  }
  nmods++;
  return 0;
}

static void rescan(void)
{
  nmods = 0;
  dl_iterate_phdr(scan_one, NULL);
}

static const struct mod *by_addr(uintptr_t a)
{
  for (int i = 0; i < nmods; i++)
    for (int k = 0; k < mods[i].nseg; k++)
      if (a >= mods[i].lo[k] && a < mods[i].hi[k])
        return &mods[i];
  return NULL;
}

static const struct mod *by_hash(uint32_t h)
{
  for (int i = 0; i < nmods; i++)
    if (mods[i].hash == h)
      return &mods[i];
  return NULL;
}

uint64_t ofi_hdl_encode(uint64_t hdr_hdl, uint32_t *module)
{
  *module = 0;
  if (hdr_hdl < LAPI_AM_ADDRTBL_SZ)
    return hdr_hdl;
  pthread_mutex_lock(&mod_lock);
  const struct mod *m = by_addr((uintptr_t)hdr_hdl);
  if (m == NULL) {
    rescan(); /* a module loaded since */
    m = by_addr((uintptr_t)hdr_hdl);
  }
  uint64_t out = hdr_hdl;
  if (m) {
    *module = m->hash;
    out = hdr_hdl - m->base;
  }
  pthread_mutex_unlock(&mod_lock);
  return out;
}

uint64_t ofi_hdl_decode(uint64_t wire, uint32_t module)
{
  if (module == 0)
    return wire;
  pthread_mutex_lock(&mod_lock);
  const struct mod *m = by_hash(module);
  if (m == NULL) {
    rescan();
    m = by_hash(module);
  }
  /* No such module here: 0 makes the core report a missing handler. */
  uint64_t out = m ? wire + m->base : 0;
  pthread_mutex_unlock(&mod_lock);
  return out;
}
