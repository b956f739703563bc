/*
 * lapirun.h - the launcher's shared state (tools/lapirun).
 *
 * lapirun starts the CGs of a job, serves their exchange, forwards their
 * output and ends the job as one: see docs/LAPIRUN.md.
 */
#ifndef LAPIRUN_H
#define LAPIRUN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* lapirun's own exit codes (a CG's code is passed through otherwise). */
#define LR_EXIT_USAGE 64   /* bad command line */
#define LR_EXIT_OSERR 71   /* a system call failed (socket, fork, pipe) */
#define LR_EXIT_NOTERM 70  /* a CG exited with 0 but without LAPI_Term */

#define LR_GRACE_MS 3000   /* SIGTERM, then SIGKILL after this */
#define LR_DRAIN_MS 1000   /* output kept after the last CG ended */

struct lr_opts {
  int ncg;                 /* -n */
  int tasks_per_cg;        /* -c */
  const char *provider;    /* --provider: FI_PROVIDER of the job */
  int label;               /* --prefix / --label */
  int timeout_s;           /* --timeout, else LAPI_TIMEOUT, else 30 */
  const char *host_cmd;    /* --host-cmd 'CMD {rank}' */
  const char *xaddr;       /* --exchange-addr IP */
  int verbose;             /* --verbose */
  char **argv;             /* the program and its arguments */
};

/* One output pipe of a CG, forwarded line by line. */
struct lr_stream {
  int fd;                  /* -1 once closed */
  int out_fd;              /* 1 or 2 */
  int rank;
  char *buf;
  size_t len;
};

struct lr_cg {
  int rank;
  pid_t pid;
  int running;
  int group;               /* host group (same host-cmd string) */
  int local_rank, local_size;
  char *host_cmd;          /* substituted, or NULL */
  struct lr_stream out, err;
};

/* Parse the command line; exits with LR_EXIT_USAGE on a bad one. */
void lr_parse(int argc, char **argv, struct lr_opts *o);

/* Set local ranks and host groups of all CGs; returns the group count. */
int lr_groups(const struct lr_opts *o, struct lr_cg *cg);

/*
 * Start CG c: its environment, pipes, own process group.  Returns 0, or
 * -1 after printing why (fork/pipe failed).
 */
int lr_spawn(const struct lr_opts *o, struct lr_cg *c, const char *addr,
             const char *key, int ngroups);

/* Read what the stream has and forward whole lines; 0 at EOF (closed). */
int lr_stream_read(struct lr_stream *s, int label);
/* Forward what is left (a last line without newline) and close. */
void lr_stream_close(struct lr_stream *s, int label);

/* The node-scope key of a host group (CRTS_JOB_KEY). */
void lr_crts_key(char *buf, size_t len, const char *key, int group,
                 int ngroups);

#endif /* LAPIRUN_H */
