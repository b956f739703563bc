/*
 * fuzz_wire.h - a fuzzer for what arrives from the wire (issue 4, item 6).
 *
 * A 2-task LAPI job: task 1 runs arbitrary inputs as packets that just
 * arrived from task 0 (ofi_test_arrival, the receive path itself); task
 * 0 is a real peer that only serves until task 1 says the run is over.
 * Then task 0 sends task 1 a real Amsend and a Put, and task 1 checks
 * that they land with the right bytes and counters, that the bad inputs
 * were counted, and that task 0 was never declared gone.
 *
 * Run as 3 tasks (lapirun -n 3) the inputs claim task 2 instead, a task
 * that sends nothing during the run and serves: then they may carry
 * task 1's own no-FIN numbers of task 2 (a SHORT is delivered, task 1
 * acknowledges numbers task 2 never used and task 2 drops task 1's
 * packets from then on, BAD_ACK, rightly) and any BARRIER, FAIL
 * included.  Task 1 and task 2 can then never meet in a barrier again:
 * task 2 leaves without LAPI_Term once the run is over, and the final
 * check (task 0's Amsend and Put) ends in a Gfence that fails at once
 * on both tasks left (a CG gone breaks every barrier), then LAPI_Term.
 *
 *   fuzz_shape.c     input -> packet: a mostly valid header, and every
 *                    address a legal operation would use moved into a
 *                    sandbox of the harness
 *   fuzz_job.c       the job: every task's set-up, task 0's and task
 *                    2's service, the header handlers, the final check
 *   fuzz_replay.c    main of the ctest: a seed corpus and deterministic
 *                    mutations of it (gcc, no libFuzzer)
 *   fuzz_libfuzzer.c main of the coverage-guided build (clang's libFuzzer,
 *                    tools/fuzz-wire.sh)
 */
#ifndef FUZZ_WIRE_H
#define FUZZ_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include <lapi.h>

/* The sandboxes: task 1's (put and get targets, RMW variables, AM
 * buffers) and task 0's (what task 1 reads or writes there). */
#define FZ_SANDBOX 65536

/* Addr_set indexes of task 1's header handlers (fuzzed hdr_hdl picks one
 * of 0..FZ_HDL_SPAN-1; 0 and the unused ones are empty slots). */
enum { FZ_HDL_AM = 1, FZ_HDL_AMV = 2, FZ_HDL_SPAN = 4 };
/* Task 0's handler of "the run is over", task 1's of the final Amsend,
 * task 2's of "leave now". */
enum { FZ_HDL_OVER = 5, FZ_HDL_CHECK = 6, FZ_HDL_LEAVE = 7 };
/* The task the inputs claim to come from in a 3-task job. */
#define FZ_FORGED 2

/* What a forged sender looks like to task 1: its sandbox, its process
 * and (without CMA) the key of its sandbox's registration. */
struct fz_peer {
  uint64_t sb;
  uint32_t pid;
  uint64_t rkey;
};

/* What the shaping needs from the job (set before the first input). */
struct fz_env {
  uint16_t key;          /* task 1's handle key on the wire */
  uint32_t ack_done, ack_seq; /* valid acknowledgement counts */
  uint32_t nofin_base;   /* task 1's window of task 0's no-FIN numbers */
  uint32_t bar_seq;      /* task 1's next Gfence barrier number */
  int third;             /* 3 tasks: inputs claim task FZ_FORGED */
  uint32_t forged_base;  /* task 1's window of its numbers (this input) */
  int keys;              /* no CMA: RMA segments carry the owner's key */
  struct fz_peer peer[3]; /* task 0's and task 2's (by task) */
  unsigned char *sb1;    /* task 1's sandbox */
  lapi_cntr_t *cntr;     /* a counter of task 1 that packets may name */
};
extern struct fz_env fz_env;

/* Input layout: records, each a control byte (FZ_CTL_*) and a packet.
 * With FZ_CTL_MORE the next 2 bytes (little-endian) give the packet's
 * length and another record follows; without it the packet is the rest.
 * At most FZ_RECORDS records an input. */
enum {
  FZ_CTL_RAW_HDR = 1,  /* magic, len, src, src_local, hndl, type as input */
  FZ_CTL_RAW_ACK = 2,  /* ack_done, ack_seq as input */
  FZ_CTL_LIVE_ID = 4,  /* transfer ids name live transfers of task 1 */
  FZ_CTL_DIRECT = 8,   /* read as a tight poller's pass (ofi_direct.c) */
  FZ_CTL_MORE = 0x80,
};
#define FZ_RECORDS 8

/* Task 1's live transfers with the claimed sender, for FZ_CTL_LIVE_ID. */
struct fz_live {
  uint64_t id[64];
  unsigned n;
};

/* Record (ctl, pkt[0..n)) -> packet in out (room: cap bytes); returns
 * its length. */
size_t fz_shape(unsigned ctl, const uint8_t *pkt, size_t n,
                const struct fz_live *live, unsigned char *out, size_t cap);

/* fuzz_job.c.  fz_start: LAPI_Init and the set-up of every task, with
 * an alarm of limit_s seconds (0: none); returns the task id.  fz_one:
 * one input (task 1).  fz_finish: task 1's end of the run and the final
 * check; fz_serve: task 0's or task 2's part, for a run of at most run_s
 * seconds; both return the exit code (task 2 leaves instead).  With
 * fz_strict (the replay) the end also checks that the seed corpus
 * reached what it is there for. */
extern int fz_strict;
int fz_start(int limit_s);
void fz_one(const uint8_t *in, size_t n);
int fz_finish(void);
int fz_serve(int run_s);

#endif /* FUZZ_WIRE_H */
