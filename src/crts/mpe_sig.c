/*
 * mpe_sig.c - CRTS_sig_user_init: the MPE's handler of CPE signals.
 *
 * Installing a handler starts the MPE service thread (crts_mpe_service.h);
 * each CRTS_ssig_host then runs the handler there, one signal at a time in
 * arrival order.  A later call replaces the handler for signals sent after
 * it; signals already queued keep the handler they were sent to.
 */
#include "crts_cg.h"
#include "crts_mpe_service.h"
#include "crts_sig.h"

static _Atomic(crts_sig_handler_fn) sig_handler;

crts_sig_handler_fn crts_sig_handler(void)
{
  return atomic_load_explicit(&sig_handler, memory_order_acquire);
}

void CRTS_sig_user_init(void *(*funp)(void *))
{
  const char *call = "CRTS_sig_user_init";
  /* Allowed before CRTS_init: it touches no CPE state. */
  if (crts_self) {
    crts_report(call, "is an MPE call; a CPE signals the MPE with "
                      "CRTS_ssig_host");
    return;
  }
  if (crts_mpe_service_is_self()) {
    crts_report(call, "cannot be called from a signal handler");
    return;
  }
  if (!funp) {
    crts_report(call, "funp is NULL; the handler is left as it was");
    return;
  }
  if (crts_mpe_service_start(call) != 0)
    return;
  atomic_store_explicit(&sig_handler, funp, memory_order_release);
}
