/*
 * lapi_env.c - LAPI_Qenv and LAPI_Senv.
 *
 * Every query 0..LAST_QUERY-1 answers.  Values that have a meaning here:
 *   TASK_ID, NUM_TASKS       from the job (one task without a launcher)
 *   MAX_UHDR_SZ              1024
 *   MAX_DATA_SZ              INT_MAX: the true limit, LAPI_MAX_MSG_SZ,
 *                            does not fit the int ret_val
 *   ERROR_CHK, TIMEOUT, INTERRUPT_SET, ACK_THRESHOLD   settable (below)
 *   MIN_TIMEOUT, MAX_TIMEOUT 1 and 86400 seconds
 *   MAX_PKT_SZ, REX_BUF_SZ   the smallest packet of the transports
 *   LOC_ADDRTBL_SZ           256 (Addr_set indexes 1..255)
 *   EPOCH_NUM                lapi_info_t.epoch_num given to LAPI_Init
 *   BUF_CP_SIZE              0: data is never copied into a LAPI buffer
 *   QUERY_SHM_ENABLED        1 if other tasks share this core group
 *   QUERY_SHM_NUM_TASKS      tasks of the caller's core group (its CPE
 *                            tasks in CPE-task mode, else 1)
 *   QUERY_SHM_TASKS          their ids, written to ret_val[0..n-1]
 * Without a meaning here: MAX_PORTS 1, NUM_REX_BUFS and MAX_PKTS_OUT 32,
 * USE_THRESH 1, RCV_FIFO_SIZE 1 MiB, MAX_ATOM_SIZE 0 (no DGSP), BULK_*,
 * RDMA_*, RC_* 0.
 *
 * Statistics: ret_val is really a lapi_statistics_t * (the usual cast).
 *   QUERY_STATISTICS             all transports of the handle together
 *   QUERY_SHM_STATISTICS         the core-group (CRTS) transport
 *   QUERY_LOCAL_SEND_STATISTICS  the loopback (messages to oneself)
 * Field use: Tot_pkt_sent_cnt / Tot_data_sent count the operations this
 * handle issued (Amsend, Amsendv, Put, Get, Rmw, their vector and Xfer
 * forms) and their payload bytes; Tot_pkt_recv_cnt / Tot_data_recv the
 * operations delivered to this handle and the bytes written there (a
 * loopback operation counts on both sides); a get's payload is counted
 * as sent.  The other fields (duplicates, retransmissions, ghosts,
 * acknowledgements) are 0: no transport here retransmits.
 * PRINT_STATISTICS prints one line per transport on stderr, and for a CPE
 * task the core group's engine counters (DMA get/put, RMA, MPE copy).
 *
 * LAPI_Senv: ERROR_CHK 0|1 (argument checks stay on: they are cheap),
 * TIMEOUT MIN_TIMEOUT..MAX_TIMEOUT, INTERRUPT_SET 0|1, ACK_THRESHOLD
 * 1..MAX_PKTS_OUT; other values LAPI_ERR_SET_VAL, other queries
 * LAPI_ERR_QUERY_TYPE.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "am/lapi_am.h"

static const char *const tp_names[LAPI_TP_COUNT] = {"self", "crts", "ofi"};

static void stats_of(const struct lapi_hndl *h, int tp, lapi_statistics_t *s)
{
  lapi_tp_sync(); /* counts a transport keeps owed (ofi_direct.c) */
  memset(s, 0, sizeof *s);
  for (int t = 0; t < LAPI_TP_COUNT; t++) {
    if (tp >= 0 && t != tp)
      continue;
    const struct lapi_tp_count *o = &h->sent[t], *i = &h->recv[t];
    s->Tot_pkt_sent_cnt += __atomic_load_n(&o->msgs, __ATOMIC_RELAXED);
    s->Tot_data_sent += __atomic_load_n(&o->bytes, __ATOMIC_RELAXED);
    s->Tot_pkt_recv_cnt += __atomic_load_n(&i->msgs, __ATOMIC_RELAXED);
    s->Tot_data_recv += __atomic_load_n(&i->bytes, __ATOMIC_RELAXED);
  }
}

static void stats_print(const struct lapi_hndl *h)
{
  fprintf(stderr, "lapi: task %u handle %u statistics\n", h->task_id,
          h->index);
  fprintf(stderr, "lapi:   %-5s %12s %14s %12s %14s\n", "path", "msgs sent",
          "bytes sent", "msgs recv", "bytes recv");
  for (int t = 0; t < LAPI_TP_COUNT; t++) {
    lapi_statistics_t s;
    stats_of(h, t, &s);
    fprintf(stderr, "lapi:   %-5s %12llu %14llu %12llu %14llu\n",
            tp_names[t], s.Tot_pkt_sent_cnt, s.Tot_data_sent,
            s.Tot_pkt_recv_cnt, s.Tot_data_recv);
  }
  if (h->cpe >= 0)
    lapi_cpe_print_engine(); /* which engines moved the CG's bytes */
}

static int max_pkt(void)
{
  size_t best = 0;
  for (unsigned t = 0; t < lapi_tp_count; t++) {
    struct lapi_tp_caps c;
    lapi_tp_all[t]->caps(&c);
    if (c.max_pkt && (best == 0 || c.max_pkt < best))
      best = c.max_pkt;
  }
  return best > INT_MAX ? INT_MAX : (int)best;
}

int PLAPI_Qenv(lapi_handle_t hndl, lapi_query_t query, int *ret_val)
{
  struct lapi_hndl *h = lapi_hndl_get(hndl);
  if (h == NULL)
    return LAPI_FAIL(LAPI_ERR_HNDL_INVALID,
                     "handle %u is not initialised or already terminated",
                     hndl);
  if ((int)query < 0 || query >= LAST_QUERY)
    return LAPI_FAIL(LAPI_ERR_QUERY_TYPE, "query %d is not a lapi_query_t",
                     (int)query);
  if (ret_val == NULL)
    return LAPI_FAIL(LAPI_ERR_RET_PTR_NULL,
                     "ret_val is NULL: pass where to store the answer");

  int v = 0;
  switch (query) {
  case TASK_ID: v = (int)h->task_id; break;
  case NUM_TASKS: v = (int)h->num_tasks; break;
  case MAX_UHDR_SZ: v = LAPI_AM_MAX_UHDR; break;
  case MAX_DATA_SZ: v = INT_MAX; break;
  case ERROR_CHK: v = __atomic_load_n(&h->error_chk, __ATOMIC_RELAXED); break;
  case TIMEOUT: v = __atomic_load_n(&h->timeout, __ATOMIC_RELAXED); break;
  case MIN_TIMEOUT: v = LAPI_AM_TIMEOUT_MIN; break;
  case MAX_TIMEOUT: v = LAPI_AM_TIMEOUT_MAX; break;
  case INTERRUPT_SET: v = lapi_hndl_interrupt(h); break;
  case MAX_PORTS: v = 1; break;
  case MAX_PKT_SZ: v = max_pkt(); break;
  case NUM_REX_BUFS: v = LAPI_AM_MAX_PKTS_OUT; break;
  case REX_BUF_SZ: v = max_pkt(); break;
  case LOC_ADDRTBL_SZ: v = LAPI_AM_ADDRTBL_SZ; break;
  case EPOCH_NUM: v = (int)h->epoch; break;
  case USE_THRESH: v = 1; break;
  case RCV_FIFO_SIZE: v = 1 << 20; break;
  case MAX_ATOM_SIZE: v = 0; break;
  case BUF_CP_SIZE: v = 0; break;
  case MAX_PKTS_OUT: v = LAPI_AM_MAX_PKTS_OUT; break;
  case ACK_THRESHOLD:
    v = __atomic_load_n(&h->ack_threshold, __ATOMIC_RELAXED);
    break;
  case QUERY_SHM_ENABLED: v = h->cg_tasks > 1; break;
  case QUERY_SHM_NUM_TASKS: v = (int)h->cg_tasks; break;
  case QUERY_SHM_TASKS:
    for (uint t = 0; t < h->cg_tasks; t++)
      ret_val[t] = (int)(h->cg_first + t);
    return LAPI_SUCCESS;
  case QUERY_STATISTICS:
    stats_of(h, -1, (lapi_statistics_t *)(void *)ret_val);
    return LAPI_SUCCESS;
  case QUERY_SHM_STATISTICS:
    stats_of(h, LAPI_TP_CRTS, (lapi_statistics_t *)(void *)ret_val);
    return LAPI_SUCCESS;
  case QUERY_LOCAL_SEND_STATISTICS:
    stats_of(h, LAPI_TP_SELF, (lapi_statistics_t *)(void *)ret_val);
    return LAPI_SUCCESS;
  case PRINT_STATISTICS: stats_print(h); v = 0; break;
  default: v = 0; break; /* BULK_*, RDMA_*, RC_*: nothing of the kind */
  }
  *ret_val = v;
  return LAPI_SUCCESS;
}

static int set_range(int *field, int val, int lo, int hi, const char *what)
{
  if (val < lo || val > hi)
    return LAPI_FAIL_IN("PLAPI_Senv", LAPI_ERR_SET_VAL,
                        "%s may be %d..%d, not %d", what, lo, hi, val);
  __atomic_store_n(field, val, __ATOMIC_RELEASE);
  return LAPI_SUCCESS;
}

int PLAPI_Senv(lapi_handle_t hndl, lapi_query_t query, int set_val)
{
  struct lapi_hndl *h = lapi_hndl_get(hndl);
  if (h == NULL)
    return LAPI_FAIL(LAPI_ERR_HNDL_INVALID,
                     "handle %u is not initialised or already terminated",
                     hndl);
  int rc;
  switch (query) {
  case ERROR_CHK:
    return set_range(&h->error_chk, set_val, 0, 1, "ERROR_CHK");
  case TIMEOUT:
    return set_range(&h->timeout, set_val, LAPI_AM_TIMEOUT_MIN,
                     LAPI_AM_TIMEOUT_MAX, "TIMEOUT");
  case ACK_THRESHOLD:
    return set_range(&h->ack_threshold, set_val, 1, LAPI_AM_MAX_PKTS_OUT,
                     "ACK_THRESHOLD");
  case INTERRUPT_SET:
    rc = set_range(&h->interrupt, set_val, 0, 1, "INTERRUPT_SET");
    /* Whoever must now run the queued work may be asleep. */
    if (rc == LAPI_SUCCESS) {
      lapi_bell_ring();
      LAPI_LOG(LAPI_LOG_INFO, "handle %u: %s mode", hndl,
               set_val ? "interrupt" : "polling");
    }
    return rc;
  default:
    return LAPI_FAIL(LAPI_ERR_QUERY_TYPE,
                     "query %d cannot be set: LAPI_Senv sets ERROR_CHK, "
                     "TIMEOUT, INTERRUPT_SET and ACK_THRESHOLD", (int)query);
  }
}

int LAPI_Qenv(lapi_handle_t hndl, lapi_query_t query, int *ret_val)
    __attribute__((weak, alias("PLAPI_Qenv")));
int LAPI_Senv(lapi_handle_t hndl, lapi_query_t query, int set_val)
    __attribute__((weak, alias("PLAPI_Senv")));
