/*
 * cpe_ssig.c - CRTS_ssig_host: a CPE hands a main-memory address to the
 * MPE's signal handler.
 *
 * The handler runs on the MPE service thread and the CPE sleeps until it
 * has returned, so the content the CPE passed stays valid throughout and
 * whatever the handler wrote there is visible when the call returns.
 */
#include <stddef.h>

#include "crts_cg.h"
#include "crts_mpe_service.h"
#include "crts_sig.h"

struct ssig_job {
  struct crts_mpe_job job;
  crts_sig_handler_fn handler;
  void *content;
};

static void ssig_run(struct crts_mpe_job *job)
{
  struct ssig_job *s =
      (struct ssig_job *)((char *)job - offsetof(struct ssig_job, job));
  s->handler(s->content);
}

int CRTS_ssig_host(void *content)
{
  const char *call = "CRTS_ssig_host";
  if (!crts_check_init(call) || !crts_check_cpe(call))
    return -1;
  if (!content) {
    crts_report(call, "content is NULL: pass the main-memory address of the "
                      "data the MPE handler should read");
    return -1;
  }
  if (crts_ldm_owner(content) >= 0) {
    crts_report(call, "content %p is in LDM, which the MPE cannot read: pass "
                      "a main-memory address", content);
    return -1;
  }
  crts_sig_handler_fn handler = crts_sig_handler();
  if (!handler || !crts_mpe_service_running()) {
    crts_report(call, "no signal handler is installed: the MPE must call "
                      "CRTS_sig_user_init first");
    return -1;
  }
  struct ssig_job s = { .job.run = ssig_run, .handler = handler,
                        .content = content };
  crts_mpe_service_call(&s.job);
  return 0;
}
