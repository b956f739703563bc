/*
 * crts_report.c - one-line diagnostics naming the CPE (or MPE) and the call.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "crts_cg.h"

__attribute__((format(printf, 2, 0)))
static void report_line(const char *call, const char *fmt, va_list ap)
{
  char msg[512];
  vsnprintf(msg, sizeof msg, fmt, ap);
  if (crts_self)
    fprintf(stderr, "crts: CPE %d: %s: %s\n", crts_self->tid, call, msg);
  else
    fprintf(stderr, "crts: MPE: %s: %s\n", call, msg);
}

/* CRTS_VERBOSE, also before CRTS_init has read the settings. */
static int verbosity(void)
{
  if (atomic_load(&crts_cg.initialized))
    return crts_cg.verbose;
  const char *env = getenv("CRTS_VERBOSE");
  return env && *env ? atoi(env) : 1;
}

void crts_report(const char *call, const char *fmt, ...)
{
  if (verbosity() < 1)
    return;
  va_list ap;
  va_start(ap, fmt);
  report_line(call, fmt, ap);
  va_end(ap);
}

void crts_fatal(const char *call, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  report_line(call, fmt, ap);
  va_end(ap);
  abort();
}

int crts_check_init(const char *call)
{
  if (atomic_load_explicit(&crts_cg.initialized, memory_order_acquire))
    return 1;
  crts_report(call, "the runtime is not initialised: call CRTS_init() first");
  return 0;
}

struct crts_cpe *crts_check_cpe(const char *call)
{
  if (crts_self)
    return crts_self;
  crts_report(call, "must be called on a CPE (inside a spawned function)");
  return NULL;
}
