/*
 * ofi_hdl_module.c - header handlers of the main program and of a module
 * loaded after LAPI_Init, alternated, reach the right function.
 *
 * A handler's address travels as (module, offset) (ofi_hdl.c), and each
 * thread keeps its last translation each way.  Here each task first
 * sends with a handler of the program (kept), then loads the module
 * argv[1] (dlopen: at another base in each process), and sends ROUNDS
 * messages alternating the program's handler and the module's, each
 * carrying its round in the uhdr.  A translation kept from before the
 * module was known, or one kept for the other handler, would send a
 * message to the wrong function or to none (a missing handler is an
 * asynchronous error, counted by the error handler).  Each handler
 * counts the rounds that reached it; every message moves tgt_cntr.
 */
#include "ofi_test.h"

#include <dlfcn.h>

#define ROUNDS 200

typedef void *(plugin_hdr_fn)(lapi_handle_t *, void *, uint *, ulong *,
                              compl_hndlr_t **, void **);

static int main_seen[ROUNDS + 1]; /* [0]: the message before the module */
static int async_errors;

static void *main_hdr(lapi_handle_t *h, void *uhdr, uint *uhdr_len,
                      ulong *len, compl_hndlr_t **ch, void **info)
{
  (void)h;
  (void)len;
  int r = *uhdr_len == sizeof(int) ? *(const int *)uhdr : -2;
  if (r >= -1 && r < ROUNDS)
    __atomic_add_fetch(&main_seen[r + 1], 1, __ATOMIC_SEQ_CST);
  *ch = NULL;
  *info = NULL;
  return NULL;
}

static void count_errors(lapi_handle_t *h, int *code, lapi_err_t *type,
                         int *task, int *src)
{
  (void)h;
  (void)type;
  (void)task;
  (void)src;
  if (*code != LAPI_SUCCESS)
    __atomic_add_fetch(&async_errors, 1, __ATOMIC_SEQ_CST);
}

/* One message with handler hdl, carrying round; then waits for the one
 * of the same round from our source. */
static void round_trip(void *hdl, int round, lapi_cntr_t *tgt,
                       void *tgt_there)
{
  OT_OK(LAPI_Amsend(ot.h, (uint)ot.tgt, hdl, &round, sizeof round, NULL, 0,
                    tgt_there, NULL, NULL));
  OT_OK(LAPI_Waitcntr(ot.h, tgt, 1, NULL));
}

int main(int argc, char **argv)
{
  if (argc < 2) {
    fprintf(stderr, "usage: ofi_hdl_module PLUGIN.so\n");
    return 2;
  }
  ot_init(count_errors, 60);
  lapi_cntr_t tgt;
  OT_OK(LAPI_Setcntr(ot.h, &tgt, 0));
  void **tgts = ot_addrs(&tgt);

  round_trip((void *)main_hdr, -1, &tgt, tgts[ot.tgt]);
  OT_CHECK(main_seen[0] == 1, "the program's handler ran %d times before "
           "the module was loaded", main_seen[0]);

  void *mod = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  OT_CHECK(mod != NULL, "dlopen %s: %s", argv[1], dlerror());
  plugin_hdr_fn *phdr = mod ? (plugin_hdr_fn *)dlsym(mod, "plugin_hdr")
                            : NULL;
  int (*pseen)(int) = mod ? (int (*)(int))dlsym(mod, "plugin_seen") : NULL;
  OT_CHECK(phdr && pseen, "the module lacks its functions");
  /* Every task has the module before any message names it. */
  OT_OK(LAPI_Gfence(ot.h));
  if (phdr && pseen) {
    for (int r = 0; r < ROUNDS; r++)
      round_trip(r % 2 ? (void *)phdr : (void *)main_hdr, r, &tgt,
                 tgts[ot.tgt]);
    /* Every message from our source has landed (tgt moved for each). */
    for (int r = 0; r < ROUNDS; r++) {
      int in_main = __atomic_load_n(&main_seen[r + 1], __ATOMIC_SEQ_CST);
      int in_mod = pseen(r);
      OT_CHECK(in_main == !(r % 2) && in_mod == r % 2,
               "round %d (for the %s's handler) reached the program's "
               "handler %d times and the module's %d times", r,
               r % 2 ? "module" : "program", in_main, in_mod);
    }
  }
  OT_CHECK(__atomic_load_n(&async_errors, __ATOMIC_SEQ_CST) == 0,
           "%d asynchronous errors (a handler not found?)", async_errors);
  free(tgts);
  return ot_finish("ofi_hdl_module");
}
