/*
 * lr_opts.c - lapirun's command line.
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lapirun.h"

static void usage(FILE *f)
{
  fprintf(f,
    "usage: lapirun -n CGS [options] program [args...]\n"
    "Start a job of CGS core groups (processes) of program on this host.\n"
    "\n"
    "  -n, --cgs CGS           core groups (processes) in the job, 1..4096\n"
    "  -c, --tasks-per-cg N    LAPI tasks per core group, 1..64 (default 1)\n"
    "      --provider P        libfabric provider of the job (FI_PROVIDER)\n"
    "      --prefix, --label   prefix every output line with \"[rank] \"\n"
    "      --timeout S         bootstrap and LAPI timeout in seconds\n"
    "                          (LAPI_TIMEOUT; default $LAPI_TIMEOUT or 30)\n"
    "      --host-cmd 'CMD'    run each CG through CMD, {rank} replaced by\n"
    "                          its rank (e.g. 'ssh node{rank}' or\n"
    "                          'ip netns exec ns{rank}')\n"
    "      --exchange-addr IP  serve the exchange on IP (default 127.0.0.1)\n"
    "  -v, --verbose           say what lapirun does\n"
    "  -h, --help              this text\n"
    "\n"
    "Exit status: 0 when every CG exits 0; else the first non-zero exit\n"
    "code of a CG (128+N for a CG killed by signal N, 128+N as well when\n"
    "lapirun itself gets signal N); 64 bad command line; 71 a system call\n"
    "of lapirun failed.  See docs/LAPIRUN.md.\n");
}

static void bad(const char *fmt, ...) __attribute__((format(printf, 1, 2),
                                                       noreturn));

static void bad(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "lapirun: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\nTry 'lapirun --help'.\n");
  va_end(ap);
  exit(LR_EXIT_USAGE);
}

static int int_arg(const char *s, int lo, int hi, const char *what)
{
  char *end;
  long v = strtol(s, &end, 10);
  if (*s == '\0' || *end != '\0' || v < lo || v > hi)
    bad("%s must be an integer in %d..%d, not \"%s\"", what, lo, hi, s);
  return (int)v;
}

void lr_parse(int argc, char **argv, struct lr_opts *o)
{
  enum { O_PROVIDER = 256, O_PREFIX, O_TIMEOUT, O_HOSTCMD, O_XADDR };
  static const struct option longs[] = {
    {"cgs", required_argument, NULL, 'n'},
    {"tasks-per-cg", required_argument, NULL, 'c'},
    {"provider", required_argument, NULL, O_PROVIDER},
    {"prefix", no_argument, NULL, O_PREFIX},
    {"label", no_argument, NULL, O_PREFIX},
    {"timeout", required_argument, NULL, O_TIMEOUT},
    {"host-cmd", required_argument, NULL, O_HOSTCMD},
    {"exchange-addr", required_argument, NULL, O_XADDR},
    {"verbose", no_argument, NULL, 'v'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  memset(o, 0, sizeof *o);
  o->tasks_per_cg = 1;
  o->timeout_s = 30;
  const char *env = getenv("LAPI_TIMEOUT");
  if (env && *env) {
    char *end;
    long v = strtol(env, &end, 10);
    if (*end == '\0' && v >= 1 && v <= 86400)
      o->timeout_s = (int)v;
    else
      fprintf(stderr, "lapirun: LAPI_TIMEOUT=\"%s\" is not 1..86400 "
              "seconds: using %d\n", env, o->timeout_s);
  }
  int ch;
  /* "+": options end at the program's name. */
  while ((ch = getopt_long(argc, argv, "+n:c:vh", longs, NULL)) != -1) {
    switch (ch) {
    case 'n': o->ncg = int_arg(optarg, 1, 4096, "-n CGS"); break;
    case 'c': o->tasks_per_cg = int_arg(optarg, 1, 64, "-c TASKS_PER_CG");
      break;
    case O_PROVIDER:
      if (*optarg == '\0')
        bad("--provider needs a provider name (e.g. \"%s\")", "shm");
      o->provider = optarg;
      break;
    case O_PREFIX: o->label = 1; break;
    case O_TIMEOUT:
      o->timeout_s = int_arg(optarg, 1, 86400, "--timeout S");
      break;
    case O_HOSTCMD:
      if (*optarg == '\0')
        bad("--host-cmd needs a command, e.g. %s", "'ssh node{rank}'");
      o->host_cmd = optarg;
      break;
    case O_XADDR: o->xaddr = optarg; break;
    case 'v': o->verbose = 1; break;
    case 'h': usage(stdout); exit(0);
    default:
      fprintf(stderr, "Try 'lapirun --help'.\n");
      exit(LR_EXIT_USAGE);
    }
  }
  if (o->ncg == 0)
    bad("-n CGS is required (how many core groups to start)");
  if (optind >= argc)
    bad("no program to run");
  o->argv = argv + optind;
}
