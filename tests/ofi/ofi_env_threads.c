/*
 * ofi_env_threads.c - no thread of the library reads the environment.
 *
 * LAPI_Init sets FI_OFI_RXM_EAGER_LIMIT with setenv before libfabric
 * loads (ofi_fabric.c), and a getenv on another thread at that moment
 * can read a freed environment: the dispatcher once crashed so, reading
 * a setting on first use (lapi_setting.h, lapi_settings_read_all).  This
 * program defines getenv itself, so that the library's calls land here,
 * and counts those made on the library's threads (named "lapi-...": the
 * dispatcher, the transport's progress thread).  Two CGs, interrupt mode
 * (the dispatcher runs the handlers and waits), a ping-pong of Amsends
 * and a Gfence: no such call may happen.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <string.h>

#include "ofi_test.h"

extern char **environ;

static int from_lapi_threads; /* atomic */

char *getenv(const char *name)
{
  char me[16] = "";
  pthread_getname_np(pthread_self(), me, sizeof me);
  if (strncmp(me, "lapi-", 5) == 0 &&
      __atomic_add_fetch(&from_lapi_threads, 1, __ATOMIC_SEQ_CST) == 1)
    fprintf(stderr, "thread %s called getenv(\"%s\")\n", me, name);
  size_t n = strlen(name);
  for (char **e = environ; e && *e; e++)
    if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
      return *e + n + 1;
  return NULL;
}

#define ROUNDS 200

static lapi_cntr_t got;
static unsigned char inbox[8];

static void *pong_hdr(lapi_handle_t *h, void *uhdr, uint *uhdr_len,
                      ulong *msg_len, compl_hndlr_t **comp_h, void **uinfo)
{
  (void)h;
  (void)uhdr;
  (void)uhdr_len;
  (void)msg_len;
  *comp_h = NULL;
  *uinfo = NULL;
  return inbox;
}

int main(void)
{
  ot_init(NULL, 60);
  if (ot.n != 2) {
    fprintf(stderr, "ofi_env_threads needs 2 CGs\n");
    return 2;
  }
  OT_OK(LAPI_Addr_set(ot.h, (void *)pong_hdr, 1));
  LAPI_Setcntr(ot.h, &got, 0);
  void **cntrs = ot_addrs(&got);
  static unsigned char out[sizeof inbox];
  OT_OK(LAPI_Gfence(ot.h));
  int peer = 1 - ot.me;
  for (int i = 0; i < ROUNDS; i++) {
    if (ot.me == 1)
      OT_OK(LAPI_Waitcntr(ot.h, &got, 1, NULL));
    OT_OK(LAPI_Amsend(ot.h, peer, (void *)1, NULL, 0, out, sizeof out,
                      cntrs[peer], NULL, NULL));
    if (ot.me == 0)
      OT_OK(LAPI_Waitcntr(ot.h, &got, 1, NULL));
  }
  OT_OK(LAPI_Gfence(ot.h));
  free(cntrs);
  int n = __atomic_load_n(&from_lapi_threads, __ATOMIC_SEQ_CST);
  OT_CHECK(n == 0, "the library's threads called getenv %d times", n);
  return ot_finish("ofi_env_threads");
}
