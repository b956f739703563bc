/*
 * ofi_raw.h - the raw libfabric baseline: one FI_EP_RDM endpoint per
 * process, fi_send / fi_recv only, between the two processes of a
 * two-process job.  ofi_pingpong prints its figures on their own;
 * lapi_bench times them in turn with LAPI's, repetition by repetition, so
 * that a ratio compares two figures of the same moment.
 *
 * The endpoint uses the provider FI_PROVIDER names (lapirun --provider
 * sets it).  The caller supplies how the two processes exchange their
 * addresses and meet (a bootstrap's all-gather and barrier, or LAPI's).
 * A libfabric error, or a peer silent for 30 s, ends the process with a
 * message: a baseline that cannot run has no figure to give.
 */
#ifndef OFI_RAW_H
#define OFI_RAW_H

#include <stddef.h>

/* How the two processes meet: ctx is passed back to both calls. */
struct ofi_raw_peers {
  /* Every process's `len` bytes of `mine`, in rank order, into `all`;
     0 on success. */
  int (*allgather)(void *ctx, const void *mine, size_t len, void *all);
  /* Returns when both processes have called it. */
  void (*barrier)(void *ctx);
  void *ctx;
};

/* Opens the endpoint of process `rank` (0 or 1) and learns the other's
   address; writes "provider P, fabric F" into desc.  0 on success, else
   -1 with a message on stderr (no endpoint, no figures).  Collective. */
int ofi_raw_open(int rank, const struct ofi_raw_peers *peers, char *desc,
                 size_t desc_len);

/* The largest message the provider sends (larger sizes have no figure). */
size_t ofi_raw_max_msg(void);

/* Ping-pong of `size` bytes: seconds for `iters` round trips, as process
   0 saw them.  Every receive is posted before the message that fills it
   can leave.  Collective. */
double ofi_raw_pingpong(size_t size, long iters);

/* `windows` windows of BENCH_WINDOW sends of `size` bytes from process 0,
   each window acknowledged by a 0-byte send after the receiver posted the
   next window's receives: seconds, as process 0 saw them.  Collective. */
double ofi_raw_stream(size_t size, long windows);

/* Closes the endpoint. */
void ofi_raw_close(void);

#endif /* OFI_RAW_H */
