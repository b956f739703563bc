/*
 * boot_crts.c - lend the bootstrap to libcrts: CRTS_task_fetch counts tasks
 * with the job-wide counters and barrier of lapi_boot_get().
 *
 * libcrts holds no LAPI code; it calls the table registered here (see
 * src/crts/crts_job.h).  Registration happens when liblapi is loaded and
 * costs nothing: the job is joined only when libcrts first asks, which may
 * be before or after LAPI_Init (both share the one process-wide boot).
 */
#include "crts/crts_job.h"
#include "transport/boot/boot.h"

static int crts_join(int *rank, int *size)
{
  struct lapi_boot *b = lapi_boot_get();
  if (!b)
    return -1; /* lapi_boot_get has said why */
  *rank = b->rank;
  *size = b->size;
  return 0;
}

static long crts_fetch_add(int id, long add)
{
  struct lapi_boot *b = lapi_boot_get();
  return b ? b->fetch_add(b, id, add) : -1;
}

static int crts_barrier(void)
{
  struct lapi_boot *b = lapi_boot_get();
  return b ? b->barrier(b) : -1;
}

static const struct crts_job_services boot_services = {
  .name = "the LAPI bootstrap",
  .join = crts_join,
  .fetch_add = crts_fetch_add,
  .barrier = crts_barrier,
};

/*
 * External, so that a program linked with the static liblapi.a, where
 * nothing else pulls this object in, can ask for it:
 * -Wl,-u,lapi_boot_crts_register.
 */
void lapi_boot_crts_register(void);

__attribute__((constructor)) void lapi_boot_crts_register(void)
{
  crts_job_services_set(&boot_services);
}
