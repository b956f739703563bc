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
 * Each thread keeps its last translation each way: a program passes the
 * same handler message after message, and the table's lock and search
 * (two locked instructions and ~90 instructions a side) were on every
 * small Amsend's path to the wire and from it to its handler.  A rescan
 * (a module loaded since) makes every thread's kept translation stale.
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
/* Rescans so far (atomic); a kept translation of another count is
 * stale.  0 is never current: the first translation rescans. */
static unsigned mods_gen;

/* A thread's last translation one way: encoding, from -> (to, module);
 * decoding, (from, module) -> to. */
struct hdl_kept {
  unsigned gen;
  uint32_t module;
  uint64_t from, to;
};
static __thread __attribute__((tls_model("initial-exec")))
struct hdl_kept kept_enc, kept_dec;

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

/* Under mod_lock. */
static void rescan(void)
{
  nmods = 0;
  dl_iterate_phdr(scan_one, NULL);
  __atomic_add_fetch(&mods_gen, 1, __ATOMIC_RELEASE);
}

/* 1 if k holds a translation of from as of the current table. */
static int kept(const struct hdl_kept *k, uint64_t from)
{
  return k->from == from && k->gen != 0 &&
         k->gen == __atomic_load_n(&mods_gen, __ATOMIC_ACQUIRE);
}

/* Under mod_lock: keep from -> (to, module) as of the current table. */
static void keep(struct hdl_kept *k, uint64_t from, uint64_t to,
                 uint32_t module)
{
  k->gen = __atomic_load_n(&mods_gen, __ATOMIC_RELAXED);
  k->from = from;
  k->to = to;
  k->module = module;
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
  if (kept(&kept_enc, hdr_hdl)) {
    *module = kept_enc.module;
    return kept_enc.to;
  }
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
  keep(&kept_enc, hdr_hdl, out, *module);
  pthread_mutex_unlock(&mod_lock);
  return out;
}

uint64_t ofi_hdl_decode(uint64_t wire, uint32_t module)
{
  if (module == 0)
    return wire;
  if (kept(&kept_dec, wire) && kept_dec.module == module)
    return kept_dec.to;
  pthread_mutex_lock(&mod_lock);
  const struct mod *m = by_hash(module);
  if (m == NULL) {
    rescan();
    m = by_hash(module);
  }
  /* No such module here: 0 makes the core report a missing handler.
   * Not kept: the next message looks again (the module may be loaded
   * by then). */
  uint64_t out = m ? wire + m->base : 0;
  if (m)
    keep(&kept_dec, wire, out, module);
  pthread_mutex_unlock(&mod_lock);
  return out;
}
