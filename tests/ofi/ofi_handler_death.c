/*
 * ofi_handler_death.c - the origin dies while the target's handler runs.
 *
 * Started by lapirun with 2 CGs: `ofi_handler_death cmpl` or `... hdr`.
 * Task 1 sends task 0 an active message whose handler runs longer than
 * TIMEOUT (cmpl: an eager message's completion handler; hdr: a
 * rendezvous message's header handler), then leaves (_exit(0)).  Task 0,
 * with TIMEOUT 2 s, declares it gone while the handler still runs: the
 * transfer the handler belongs to must outlive it (one freed under a
 * running handler was read after the free and freed twice), the error
 * handler must name task 1, the counter waited on must end its wait (the
 * eager message may complete: its data had arrived; the rendezvous one
 * cannot), and LAPI_Term must work.  The alarm of ot_init bounds it all.
 * Task 1 leaves only once the slow handler has begun (it creates a file
 * named after the job): a message still queued in the provider (over
 * tcp, behind the connection its first send opens) dies with its
 * sender, and then nothing would be running at task 0 to time out.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ofi_test.h"

#define TIMEOUT_S 2
#define SLOW_US (3 * TIMEOUT_S * 1000000)
#define BIG 300000

static lapi_cntr_t tgt_small, tgt_big;
static char began_path[256]; /* exists once a slow handler runs */

static void mark_began(void)
{
  FILE *f = fopen(began_path, "w");
  if (f)
    fclose(f);
}

static void unmark_began(void)
{
  unlink(began_path);
}

/* Task 1: until task 0's slow handler runs, at most 60 s. */
static void await_began(void)
{
  for (int i = 0; i < 6000 && access(began_path, F_OK) != 0; i++)
    usleep(10000);
}
static unsigned char inbox[BIG], payload[BIG];
static int cmpl_runs, big_headers;

/* The eager message: its completion handler outlasts TIMEOUT. */
static void slow_cmpl(lapi_handle_t *h, void *uinfo)
{
  (void)h;
  (void)uinfo;
  mark_began();
  usleep(SLOW_US);
  __atomic_add_fetch(&cmpl_runs, 1, __ATOMIC_SEQ_CST);
}

static void *small_hdr(lapi_handle_t *h, void *uhdr, uint *uhdr_len,
                       ulong *msg_len, compl_hndlr_t **comp_h, void **uinfo)
{
  (void)h;
  (void)uhdr;
  (void)uhdr_len;
  (void)msg_len;
  *comp_h = slow_cmpl;
  *uinfo = NULL;
  return inbox;
}

/* The rendezvous message: its header handler outlasts TIMEOUT, so the
 * data phase would start after its origin is gone. */
static void *slow_big_hdr(lapi_handle_t *h, void *uhdr, uint *uhdr_len,
                          ulong *msg_len, compl_hndlr_t **comp_h,
                          void **uinfo)
{
  (void)h;
  (void)uhdr;
  (void)uhdr_len;
  (void)msg_len;
  __atomic_add_fetch(&big_headers, 1, __ATOMIC_SEQ_CST);
  mark_began();
  usleep(SLOW_US);
  *comp_h = NULL;
  *uinfo = NULL;
  return inbox;
}

int main(int argc, char **argv)
{
  int hdr_mode = argc > 1 && strcmp(argv[1], "hdr") == 0;
  ot_init(ot_errh_watch, 120);
  ot_watch = 1;
  if (ot.n != 2) {
    fprintf(stderr, "ofi_handler_death needs 2 CGs\n");
    return 2;
  }
  const char *key = getenv("LAPIRUN_JOB_KEY");
  snprintf(began_path, sizeof began_path, "/tmp/ofi_handler_death-%s",
           key ? key : "nokey");
  if (ot.me == 0)
    atexit(unmark_began); /* a failed check exits too */
  OT_OK(LAPI_Senv(ot.h, TIMEOUT, TIMEOUT_S));
  OT_OK(LAPI_Addr_set(ot.h, (void *)small_hdr, 1));
  OT_OK(LAPI_Addr_set(ot.h, (void *)slow_big_hdr, 2));
  LAPI_Setcntr(ot.h, &tgt_small, 0);
  LAPI_Setcntr(ot.h, &tgt_big, 0);
  void **small_c = ot_addrs(&tgt_small);
  void **big_c = ot_addrs(&tgt_big);
  OT_OK(LAPI_Gfence(ot.h));

  if (ot.me == 1) {
    lapi_cntr_t org;
    LAPI_Setcntr(ot.h, &org, 0);
    if (hdr_mode) {
      OT_OK(LAPI_Amsend(ot.h, 0, (void *)2, NULL, 0, payload, BIG,
                        big_c[0], NULL, NULL));
    } else {
      OT_OK(LAPI_Amsend(ot.h, 0, (void *)1, NULL, 0, payload, 64,
                        small_c[0], &org, NULL));
      OT_OK(LAPI_Waitcntr(ot.h, &org, 1, NULL));
    }
    await_began();
    usleep(300000); /* its handler runs at task 0 */
    fflush(stdout);
    _exit(0); /* gone, without a word */
  }

  int rc;
  if (hdr_mode) {
    /* The data stayed with the dead task: the wait must give up. */
    rc = LAPI_Waitcntr(ot.h, &tgt_big, 1, NULL);
    OT_CHECK(rc == LAPI_ERR_TIMEOUT, "Waitcntr on the rendezvous message "
             "returned %d", rc);
  } else {
    /* The handler had all the data: completing is right, and so is
     * giving up after TIMEOUT while it still runs. */
    rc = LAPI_Waitcntr(ot.h, &tgt_small, 1, NULL);
    OT_CHECK(rc == LAPI_SUCCESS || rc == LAPI_ERR_TIMEOUT,
             "Waitcntr on the eager message returned %d", rc);
  }
  /* The dispatcher runs the error handler after the slow one. */
  int *ran = hdr_mode ? &big_headers : &cmpl_runs;
  for (int i = 0; i < 500 && __atomic_load_n(ran, __ATOMIC_SEQ_CST) == 0;
       i++) {
    LAPI_Probe(ot.h);
    usleep(20000);
  }
  OT_CHECK(__atomic_load_n(ran, __ATOMIC_SEQ_CST) == 1,
           "the slow handler ran %d times", *ran);
  OT_CHECK(ot_await_watch_error(15) > 0, "the error handler never named "
           "task 1");
  OT_OK(LAPI_Term(ot.h));
  free(small_c);
  free(big_c);
  int bad = __atomic_load_n(&ot.failures, __ATOMIC_SEQ_CST);
  printf("ofi_handler_death %s task %d of %d: %s\n", hdr_mode ? "hdr" : "cmpl",
         ot.me, ot.n, bad ? "FAIL" : "PASS");
  fflush(stdout);
  return bad ? 1 : 0;
}
