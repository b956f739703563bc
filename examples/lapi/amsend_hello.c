/*
 * amsend_hello.c - an active message to the next task, with a header
 * handler, a completion handler and all three counters.
 *
 * Build and run:  make            then  ./build/examples/lapi_amsend_hello
 * Outside this tree:  cc amsend_hello.c -llapi -lcrts -lpthread -o amsend_hello
 *
 * Every task sends "hello from task <me>" to task (me + 1) % NUM_TASKS.
 * At the target the header handler runs first: it reads the user header,
 * says where the data goes (inbox) and names the completion handler,
 * which runs once the data is there.  Started without a launcher, the
 * program is one task, which sends to itself through the same path.
 *
 * The counters say when each step is done:
 *   org_cntr   our message buffer may be reused
 *   tgt_cntr   (in the target) the message arrived and its completion
 *              handler returned; its address comes from LAPI_Address_init
 *   cmpl_cntr  the target finished with our message
 */
#include <lapi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The user header: a multiple of 4 bytes, at most MAX_UHDR_SZ. */
struct hello_hdr {
  int from;
  int len;
};

static char inbox[128];          /* where the header handler puts the text */
static int inbox_from = -1;      /* filled in by the completion handler */
static struct hello_hdr arrived; /* the header, kept for the completion */

/* Runs after the data has landed in inbox; the uhdr is gone by now, so
 * the header handler passed what we need through user_info. */
static void hello_done(lapi_handle_t *hndl, void *user_info)
{
  (void)hndl;
  struct hello_hdr *h = user_info;
  inbox_from = h->from;
}

/* Runs when the message arrives; must not wait on LAPI calls. */
static void *hello_header(lapi_handle_t *hndl, void *uhdr, uint *uhdr_len,
                          ulong *msg_len, compl_hndlr_t **comp_h,
                          void **user_info)
{
  (void)hndl;
  (void)uhdr_len;
  lapi_return_info_t *ri = (lapi_return_info_t *)msg_len;
  arrived = *(struct hello_hdr *)uhdr;
  if (ri->msg_len > sizeof inbox) { /* too long for us: throw it away */
    ri->ctl_flags = LAPI_BURY_MSG;
    return NULL;
  }
  *comp_h = hello_done;
  *user_info = &arrived;
  return inbox;
}

int main(void)
{
  lapi_handle_t hndl;
  lapi_info_t info;
  memset(&info, 0, sizeof info); /* LAPI_Init wants it zeroed */
  int rc = LAPI_Init(&hndl, &info);
  if (rc != LAPI_SUCCESS) {
    char msg[LAPI_MAX_ERR_STRING];
    LAPI_Msg_string(rc, msg);
    fprintf(stderr, "LAPI_Init: %s\n", msg);
    return 1;
  }
  int me, ntasks;
  LAPI_Qenv(hndl, TASK_ID, &me);
  LAPI_Qenv(hndl, NUM_TASKS, &ntasks);

  /* Every task registers the handler under the same index, and learns
   * where every other task's target counter is. */
  LAPI_Addr_set(hndl, (void *)hello_header, 1);
  lapi_cntr_t tgt_cntr, org_cntr, cmpl_cntr;
  LAPI_Setcntr(hndl, &tgt_cntr, 0);
  LAPI_Setcntr(hndl, &org_cntr, 0);
  LAPI_Setcntr(hndl, &cmpl_cntr, 0);
  void **tgt_cntrs = malloc(ntasks * sizeof *tgt_cntrs);
  LAPI_Address_init(hndl, &tgt_cntr, tgt_cntrs); /* collective */

  int to = (me + 1) % ntasks;
  char text[64];
  snprintf(text, sizeof text, "hello from task %d", me);
  struct hello_hdr hdr = {me, (int)strlen(text) + 1};
  rc = LAPI_Amsend(hndl, to, (void *)1 /* Addr_set index */, &hdr,
                   sizeof hdr, text, (ulong)hdr.len, tgt_cntrs[to],
                   &org_cntr, &cmpl_cntr);
  if (rc != LAPI_SUCCESS) {
    char msg[LAPI_MAX_ERR_STRING];
    LAPI_Msg_string(rc, msg);
    fprintf(stderr, "LAPI_Amsend: %s\n", msg);
    return 1;
  }
  LAPI_Waitcntr(hndl, &org_cntr, 1, NULL);  /* text may be reused */
  LAPI_Waitcntr(hndl, &cmpl_cntr, 1, NULL); /* task `to` is done with it */
  LAPI_Waitcntr(hndl, &tgt_cntr, 1, NULL);  /* our own message is here */

  int from = (me + ntasks - 1) % ntasks;
  char want[64];
  snprintf(want, sizeof want, "hello from task %d", from);
  int ok = inbox_from == from && strcmp(inbox, want) == 0;
  printf("task %d of %d received \"%s\" from task %d\n", me, ntasks, inbox,
         inbox_from);

  LAPI_Gfence(hndl); /* nobody leaves while others may still send */
  LAPI_Term(hndl);
  free(tgt_cntrs);
  printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
