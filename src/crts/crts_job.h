/*
 * crts_job.h - the job as libcrts sees it: the core groups (processes) of
 * one run, and the few job-wide services CRTS_task_fetch needs.
 *
 * libcrts knows nothing of networks or launchers.  Another library that
 * does (liblapi, through its bootstrap) registers a table of services when
 * it is loaded; libcrts calls them only when a job-wide call needs them.
 * Without a registered table the job is this process alone, unless the
 * environment shows a launcher started several processes: then libcrts
 * tries to load liblapi (whose constructor registers the table) and
 * otherwise refuses, since a job-wide counter kept in one process would
 * hand every task to every process.
 */
#ifndef CRTS_JOB_H
#define CRTS_JOB_H

/* Job-wide counters the services must offer: ids 0..CRTS_JOB_COUNTERS-1. */
#define CRTS_JOB_COUNTERS 16
/* The counter CRTS_task_fetch hands out blocks with. */
#define CRTS_JOB_COUNTER_TASK 0
/*
 * What CRTS_task_quit adds to that counter: far above any block count, so
 * every later fetch in the job sees the loop was quit.
 */
#define CRTS_JOB_TASK_QUIT_MARK (1L << 48)

struct crts_job_services {
  /* Who provides the services, for messages ("the LAPI bootstrap"). */
  const char *name;
  /*
   * Join the job if not yet done (may be slow the first time, bounded by
   * the provider's timeout) and give this process's rank (0..size-1) and
   * the number of processes.  0, or -1 after printing why.
   */
  int (*join)(int *rank, int *size);
  /*
   * Job-wide atomic add on counter id (0..CRTS_JOB_COUNTERS-1, each
   * starting at 0): returns the value before the add, or -1 on failure
   * (after printing why).  Counter values never go negative.
   */
  long (*fetch_add)(int id, long add);
  /* Barrier of every process of the job: 0, or -1 on failure. */
  int (*barrier)(void);
};

/*
 * Register the job services (NULL: forget them).  The table must stay
 * valid for the life of the process.  Called from a constructor of the
 * providing library, so it may run before main and before CRTS_init.
 */
void crts_job_services_set(const struct crts_job_services *services);

/*
 * The services to use: the registered table, else (after trying to load
 * liblapi when a launcher started this process) the one-process job.
 * NULL after reporting under call's name when this process is part of a
 * larger job that no registered service can reach.
 */
const struct crts_job_services *crts_job_services(const char *call);

/*
 * 1 if a job of size processes (as svc sees it) holds every process the
 * environment says the job has; else report under call's name and return
 * 0.  Catches a launcher the services do not know (a PMIx launcher when
 * openlapi lacks PMIx) and processes started by hand with CRTS_JOB_KEY and
 * CRTS_NODE_CGS, which the node calls treat as one job but nothing joins.
 */
int crts_job_size_ok(const char *call, const struct crts_job_services *svc,
                     int size);

/* The one-process job: rank 0 of 1, counters in this process. */
extern const struct crts_job_services crts_job_alone;

#endif /* CRTS_JOB_H */
