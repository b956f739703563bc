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
 * Before that, task 0 names the module's handler to task 1 before task 1
 * loaded it: that message fails, and the later ones must not.
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

  /* Task 0 loads the module first and names its handler to task 1,
   * which has not: the message fails there (an asynchronous error), and
   * once task 1 has loaded it too the same handler must be found (a
   * failed translation is not kept). */
  void *mod = NULL;
  if (ot.me == 0) {
    mod = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    void *early = mod ? dlsym(mod, "plugin_hdr") : NULL;
    int round = ROUNDS;
    if (early)
      OT_OK(LAPI_Amsend(ot.h, 1, early, &round, sizeof round, NULL, 0, NULL,
                        NULL, NULL));
  }
  OT_OK(LAPI_Gfence(ot.h));
  int early_errors = 0;
  if (ot.me == 1) {
    early_errors = ot_await_count(&async_errors, 1, 10);
    OT_CHECK(early_errors == 1, "a message for a module not loaded here "
             "gave %d asynchronous errors, not 1", early_errors);
  }
  if (mod == NULL)
    mod = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  OT_CHECK(mod != NULL, "dlopen %s: %s", argv[1], dlerror());
  plugin_hdr_fn *phdr = mod ? (plugin_hdr_fn *)dlsym(mod, "plugin_hdr")
                            : NULL;
  int (*pseen)(int) = mod ? (int (*)(int))dlsym(mod, "plugin_seen") : NULL;
  OT_CHECK(phdr && pseen, "the module lacks its functions");
  /* Every task has the module before any more messages name it; an
   * origin may hear of its early message's failure too. */
  OT_OK(LAPI_Gfence(ot.h));
  if (ot.me == 0)
    early_errors = __atomic_load_n(&async_errors, __ATOMIC_SEQ_CST);
  /* The same handler again, before task 1 translates any of the
   * module's addresses itself (its own sends would rescan). */
  if (ot.me == 0 && phdr) {
    int round = ROUNDS + 1;
    OT_OK(LAPI_Amsend(ot.h, 1, (void *)phdr, &round, sizeof round, NULL, 0,
                      tgts[1], NULL, NULL));
  }
  if (ot.me == 1 && pseen) {
    /* A wait, so that this thread may read the message as it read the
     * early one (in polling mode it reads both): a failure kept for it
     * fails this one, tgt never moves and the alarm ends the test. */
    alarm(30);
    OT_OK(LAPI_Waitcntr(ot.h, &tgt, 1, NULL));
    alarm(60);
    OT_CHECK(pseen(ROUNDS + 1) == 1, "after the module was loaded here, "
             "its handler got %d messages of 1", pseen(ROUNDS + 1));
  }
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
  OT_CHECK(__atomic_load_n(&async_errors, __ATOMIC_SEQ_CST) == early_errors,
           "%d asynchronous errors after the module was loaded everywhere "
           "(a handler not found?)", async_errors - early_errors);
  free(tgts);
  return ot_finish("ofi_hdl_module");
}
