/*
 * athread.h - the MPE side of the older SW26010 athread API, over libcrts.
 *
 * On the SW26010 the CPE code is compiled apart (-mslave), its functions
 * get a slave_ prefix, and the MPE names one as SLAVE_FUN(f) and starts it
 * with athread_spawn(f, arg), a macro.  Here the MPE and CPE code are one
 * program, so SLAVE_FUN(f) is f itself, and athread_spawn / athread_create
 * accept any function (void f(void *) as usual) as the machine's macros
 * do.  Everything else (athread_init, athread_join, athread_halt, ...) is
 * crts.h's.  docs/CRTS.md, "The SW26010 athread API".
 */
#ifndef OPENLAPI_ATHREAD_H
#define OPENLAPI_ATHREAD_H

#include <crts.h>

/** The name of CPE function f on the MPE side: f itself here. */
#define SLAVE_FUN(f) f

/** Run f(arg) on every CPE of the group (crts.h's athread_spawn). */
#define athread_spawn(f, arg)                                                \
  (athread_spawn)((void (*)(void))(f), (void *)(arg))

/** Run f(arg) on CPE id alone (crts.h's athread_create). */
#define athread_create(id, f, arg)                                           \
  (athread_create)((id), (void (*)(void))(f), (void *)(arg))

#endif /* OPENLAPI_ATHREAD_H */
