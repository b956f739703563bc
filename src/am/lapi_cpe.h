/*
 * lapi_cpe.h - what the dispatcher learns about the threads of CPE tasks,
 * so that its idle polls give its core away only when a task on that core
 * may have something to do (lapi_cpe.c).  The rest of CPE-task mode is
 * declared in lapi_am.h.
 */
#ifndef LAPI_CPE_H
#define LAPI_CPE_H

#include "am/lapi_am.h"

/* The calling CPE task runs (it issues a request): note on which core. */
void lapi_cpe_running(void);
/* Reads LAPI_CPE_SPIN_US and LAPI_CPE_KEEP_CORE now
 * (lapi_settings_read_all). */
void lapi_cpe_settings_read(void);

/* Work for h's task is done (a counter it may wait on moved): if it
 * polls on the dispatcher's core, the dispatcher must let it run. */
void lapi_cpe_served(const struct lapi_hndl *h);

/* A CPE task's wait polls the transports (LAPI_Fence and the like): any
 * completion of its own transfers may end it. */
void lapi_cpe_polls_any(void);

/* h's transfers have all landed (h->outstanding 0): served, if its task
 * polls such a wait. */
void lapi_cpe_landed(const struct lapi_hndl *h);

/* Whether a request is waiting in the crts queue (crts.c), for the
 * dispatcher's pauses. */
int crts_tp_queued(void);

#endif /* LAPI_CPE_H */
