/*
 * lapi_setting.c - numeric LAPI_* environment settings.
 *
 * One reader for the counts and durations the library takes from the
 * environment, so that each says the same thing about a bad value: what
 * it expected and what it uses instead.
 */
#include <stdio.h>
#include <stdlib.h>

#include "am/lapi_setting.h"

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
