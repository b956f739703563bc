/*
 * put_get_rmw.c - one-sided LAPI: put into the next task's buffer, get it
 * back, and atomic read-modify-writes on task 0's variables.
 *
 * Build and run:  make            then  ./build/examples/lapi_put_get_rmw
 * Outside this tree:  cc put_get_rmw.c -llapi -lcrts -lpthread -o put_get_rmw
 *
 * Remote addresses are exchanged once with LAPI_Address_init (a
 * collective), then used directly.  No handler runs anywhere: LAPI moves
 * the bytes and the counters report progress.
 *   LAPI_Put   org_cntr: our buffer is reusable; tgt_cntr (theirs): the
 *              data is there; cmpl_cntr: we know it is there
 *   LAPI_Get   org_cntr: the data has arrived here
 *   LAPI_Rmw   org_cntr: prev_tgt_val is valid
 * LAPI_Gfence separates the phases: when it returns, every task's
 * operations are complete.
 */
#include <lapi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LEN 64

static char inbox[LEN];       /* the previous task puts here */
static int ticket;            /* task 0's: FETCH_AND_ADD by everyone */
static int lock_word;         /* task 0's: COMPARE_AND_SWAP lock */
static long long big_sum;     /* task 0's: 64-bit FETCH_AND_ADD */

static void **exchange(lapi_handle_t hndl, int ntasks, void *mine)
{
  void **tab = malloc(ntasks * sizeof *tab);
  LAPI_Address_init(hndl, mine, tab);
  return tab;
}

int main(void)
{
  lapi_handle_t hndl;
  lapi_info_t info;
  memset(&info, 0, sizeof info);
  if (LAPI_Init(&hndl, &info) != LAPI_SUCCESS)
    return 1;
  int me, ntasks;
  LAPI_Qenv(hndl, TASK_ID, &me);
  LAPI_Qenv(hndl, NUM_TASKS, &ntasks);
  int to = (me + 1) % ntasks, from = (me + ntasks - 1) % ntasks;
  int ok = 1;

  lapi_cntr_t tgt_cntr, org_cntr, cmpl_cntr;
  LAPI_Setcntr(hndl, &tgt_cntr, 0);
  LAPI_Setcntr(hndl, &org_cntr, 0);
  LAPI_Setcntr(hndl, &cmpl_cntr, 0);
  void **inboxes = exchange(hndl, ntasks, inbox);
  void **tgt_cntrs = exchange(hndl, ntasks, &tgt_cntr);
  void **tickets = exchange(hndl, ntasks, &ticket);
  void **locks = exchange(hndl, ntasks, &lock_word);
  void **sums = exchange(hndl, ntasks, &big_sum);

  /* Put: our message into the next task's inbox. */
  char out[LEN];
  snprintf(out, sizeof out, "put by task %d", me);
  LAPI_Put(hndl, to, LEN, inboxes[to], out, tgt_cntrs[to], &org_cntr,
           &cmpl_cntr);
  LAPI_Waitcntr(hndl, &cmpl_cntr, 1, NULL);
  LAPI_Waitcntr(hndl, &org_cntr, 1, NULL);
  LAPI_Waitcntr(hndl, &tgt_cntr, 1, NULL); /* the previous task's put */
  char want[LEN];
  snprintf(want, sizeof want, "put by task %d", from);
  printf("task %d: inbox holds \"%s\"\n", me, inbox);
  ok &= strcmp(inbox, want) == 0;
  LAPI_Gfence(hndl);

  /* Get: read back what we put into the next task. */
  char back[LEN];
  memset(back, 0, sizeof back);
  LAPI_Get(hndl, to, LEN, inboxes[to], back, NULL, &org_cntr);
  LAPI_Waitcntr(hndl, &org_cntr, 1, NULL);
  printf("task %d: got back \"%s\"\n", me, back);
  ok &= strcmp(back, out) == 0;
  LAPI_Gfence(hndl);

  /* Rmw: take a ticket at task 0, add to a 64-bit sum there, and take
   * and release a lock word with COMPARE_AND_SWAP. */
  int one = 1, my_ticket = -1;
  LAPI_Rmw(hndl, FETCH_AND_ADD, 0, tickets[0], &one, &my_ticket, &org_cntr);
  long long add = 1000000000000LL + me, before = 0;
  LAPI_Rmw64(hndl, FETCH_AND_ADD, 0, sums[0], &add, &before, &org_cntr);
  LAPI_Waitcntr(hndl, &org_cntr, 2, NULL);
  ok &= my_ticket >= 0 && my_ticket < ntasks;

  int acquire[2] = {0, me + 1}, release[2] = {me + 1, 0}, got = FALSE;
  while (got != TRUE) { /* spin on the remote lock until ours */
    LAPI_Rmw(hndl, COMPARE_AND_SWAP, 0, locks[0], acquire, &got, &org_cntr);
    LAPI_Waitcntr(hndl, &org_cntr, 1, NULL);
  }
  LAPI_Rmw(hndl, COMPARE_AND_SWAP, 0, locks[0], release, &got, &org_cntr);
  LAPI_Waitcntr(hndl, &org_cntr, 1, NULL);
  ok &= got == TRUE;
  LAPI_Gfence(hndl);

  if (me == 0) {
    long long want_sum = 0;
    for (int t = 0; t < ntasks; t++)
      want_sum += 1000000000000LL + t;
    printf("task 0: %d tickets taken, sum %lld, lock %d\n", ticket,
           big_sum, lock_word);
    ok &= ticket == ntasks && big_sum == want_sum && lock_word == 0;
  }
  printf("task %d: my ticket was %d\n", me, my_ticket);

  LAPI_Term(hndl);
  free(inboxes);
  free(tgt_cntrs);
  free(tickets);
  free(locks);
  free(sums);
  printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
