/*
 * lapi_setting.c - numeric LAPI_* environment settings.
 *
 * One reader for the counts and durations the library takes from the
 * environment, so that each says the same thing about a bad value: what
 * it expected and what it uses instead.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "am/lapi_am.h"
#include "am/lapi_cpe.h"
#include "am/lapi_setting.h"
#include "am/lapi_wait.h"

int lapi_setting_int(const char *name, int dflt, long max, const char *what,
                     int *set)
{
  const char *s = getenv(name);
  if (set)
    *set = 0;
  if (s == NULL || *s == '\0')
    return dflt;
  char *end;
  long v = strtol(s, &end, 10);
  if (*end != '\0' || v < 0 || v > max) {
    fprintf(stderr, "lapi: %s=%s is not %s (0..%ld); using %d\n", name, s,
            what, max, dflt);
    return dflt;
  }
  if (set)
    *set = 1;
  return (int)v;
}

static pthread_once_t read_all_once = PTHREAD_ONCE_INIT;

static void read_all(void)
{
  (void)lapi_log_level_read();
  (void)lapi_spin_limit();
  (void)lapi_tight_us(0);
  lapi_cpe_settings_read();
  lapi_tp_settings_read();
}

void lapi_settings_read_all(void)
{
  pthread_once(&read_all_once, read_all);
}
