/*
 * ofi_held.h - a message held at its target until its origin asked
 * about it (ASK, src/transport/ofi/ofi_ask.c): the tests of ASK register
 * held_hdr, whose completion handler waits until this process has kept
 * silent on an ASK about a transfer it holds.  White box: include after
 * ofi_test.h and transport/ofi/ofi.h; set held_len and held_box first.
 */
#ifndef OFI_HELD_H
#define OFI_HELD_H

static unsigned long held_len; /* the message's length, checked */
static void *held_box;         /* where it lands */

/* ASKs about a transfer we hold, answered by silence. */
static uint64_t held_asks(void)
{
  pthread_mutex_lock(&ofi.lock);
  uint64_t n = ofi.st.asks_held;
  pthread_mutex_unlock(&ofi.lock);
  return n;
}

/* Holds the message (its FIN or its count waits) until asked about. */
static void held_done(lapi_handle_t *h, void *info)
{
  (void)h;
  (void)info;
  while (held_asks() == 0)
    usleep(10000); /* the alarm bounds it */
}

static void *held_hdr(lapi_handle_t *h, void *uhdr, uint *uhdr_len,
                      ulong *msg_len, compl_hndlr_t **comp_h, void **uinfo)
{
  (void)h;
  (void)uhdr;
  (void)uhdr_len;
  OT_CHECK(*msg_len == held_len, "Amsend of %lu bytes, want %lu",
           *msg_len, held_len);
  *comp_h = held_done;
  *uinfo = NULL;
  return held_box;
}

#endif
