/*
 * ofi_stride4k.h - the layout of the stage-reference tests
 * (ofi_ref_window.c, ofi_ref_trust.c): STRIDE4K_TOTAL bytes in 4 KiB
 * blocks at a pitch of 8 KiB, STRIDE4K_OFF bytes past a page, the same
 * at both ends, which goes by the packed path by reference on shm.
 * Include after ofi_test.h.
 */
#ifndef OFI_STRIDE4K_H
#define OFI_STRIDE4K_H

#define STRIDE4K_TOTAL ((size_t)1 << 20)
#define STRIDE4K_BLOCK ((size_t)4096)
#define STRIDE4K_OFF 16
/* A buffer that holds the layout. */
#define STRIDE4K_SPAN (2 * STRIDE4K_TOTAL + 2 * 4096)
#define STRIDE4K_GAP 0xEE /* what the gaps of a destination hold */

/* v as the layout from base; info holds 3 pointers. */
static inline void stride4k_vec(lapi_vec_t *v, void **info,
                                unsigned char *base)
{
  v->vec_type = LAPI_GEN_STRIDED_XFER;
  v->num_vecs = (uint)(STRIDE4K_TOTAL / STRIDE4K_BLOCK);
  v->info = info;
  info[0] = base;
  info[1] = (void *)(uintptr_t)STRIDE4K_BLOCK;
  info[2] = (void *)(uintptr_t)(2 * STRIDE4K_BLOCK);
  v->len = NULL;
}

/* The blocks of buf (a SPAN) filled with the bytes of seed. */
static inline void stride4k_fill(unsigned char *buf, uint32_t seed)
{
  for (size_t i = 0; i < STRIDE4K_TOTAL / STRIDE4K_BLOCK; i++)
    for (size_t k = 0; k < STRIDE4K_BLOCK; k++)
      buf[STRIDE4K_OFF + i * 2 * STRIDE4K_BLOCK + k] =
          ot_byte(seed, i * STRIDE4K_BLOCK + k);
}

/* Checks buf's blocks hold seed's bytes and its gaps STRIDE4K_GAP; one
 * failure (named by what) at the first wrong byte.  0 if all right. */
static inline int stride4k_check(const unsigned char *buf, uint32_t seed,
                                 const char *what)
{
  for (size_t i = 0; i < STRIDE4K_TOTAL / STRIDE4K_BLOCK; i++) {
    const unsigned char *p = buf + STRIDE4K_OFF + i * 2 * STRIDE4K_BLOCK;
    for (size_t k = 0; k < STRIDE4K_BLOCK; k++) {
      int bad_block = p[k] != ot_byte(seed, i * STRIDE4K_BLOCK + k);
      if (bad_block || p[STRIDE4K_BLOCK + k] != STRIDE4K_GAP) {
        OT_CHECK(0, "%s: %s %zu wrong at byte %zu: 0x%02x", what,
                 bad_block ? "block" : "gap after block", i, k,
                 bad_block ? p[k] : p[STRIDE4K_BLOCK + k]);
        return -1;
      }
    }
  }
  return 0;
}

/* Task 0: one LAPI_Putv of the layout from src into task 1's dst (its
 * address there), bumping tgt_cntr (task 1's); n times, then waits
 * until every source is reusable. */
static inline void stride4k_putv(unsigned char *src, void *dst,
                                 void *tgt_cntr, int n)
{
  static void *o_info[3], *t_info[3];
  lapi_vec_t ov, tv;
  stride4k_vec(&ov, o_info, src + STRIDE4K_OFF);
  stride4k_vec(&tv, t_info, (unsigned char *)dst + STRIDE4K_OFF);
  lapi_cntr_t org;
  LAPI_Setcntr(ot.h, &org, 0);
  for (int k = 0; k < n; k++)
    OT_OK(LAPI_Putv(ot.h, 1, &tv, &ov, tgt_cntr, &org, NULL));
  OT_OK(LAPI_Waitcntr(ot.h, &org, n, NULL));
}

#endif
