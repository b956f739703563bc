/*
 * crts_mpe_service.h - the emulated MPE context that serves CPE requests.
 *
 * On the chip a CPE raises a signal and the MPE runs a handler for it.  The
 * emulator gives that MPE context its own thread, one per process, started
 * on first use: any thread posts a job, the service thread runs the jobs one
 * at a time in arrival order.  crts_self is NULL on it, as on the MPE.
 * CRTS_ssig_host is the first client; the LAPI dispatcher reuses it.
 */
#ifndef CRTS_MPE_SERVICE_H
#define CRTS_MPE_SERVICE_H

#include <stdatomic.h>

/*
 * One request.  The poster fills run (and whatever surrounds the job in its
 * own struct); the other fields belong to the service.
 */
struct crts_mpe_job {
  void (*run)(struct crts_mpe_job *job); /* called on the service thread */
  struct crts_mpe_job *next;             /* queue link */
  volatile int done;                     /* 1 once run returned (call) */
  struct crts_waiter *waiter_slot;    /* caller's wait slot, or NULL */
};

/* Start the service thread unless it runs; 0, or -1 after reporting. */
int crts_mpe_service_start(const char *call);
/* 1 if the service thread is running. */
int crts_mpe_service_running(void);
/* 1 if the calling thread is the service thread. */
int crts_mpe_service_is_self(void);

/*
 * Queue job without waiting.  The service never touches job after run()
 * returns, so run() may free or reuse it.  The service must be running.
 */
void crts_mpe_service_post(struct crts_mpe_job *job);
/*
 * Queue job and sleep until run() has returned; job may live on the
 * caller's stack.  Must not be called on the service thread itself.
 */
void crts_mpe_service_call(struct crts_mpe_job *job);

#endif /* CRTS_MPE_SERVICE_H */
