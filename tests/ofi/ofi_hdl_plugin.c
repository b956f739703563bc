/*
 * ofi_hdl_plugin.c - a module that ofi_hdl_module.c loads after
 * LAPI_Init, with a header handler of its own: its address is known to
 * no table of the library until then.
 */
#include <lapi.h>
#include <stddef.h>

#define PLUGIN_ROUNDS 1024

/* The rounds (the uhdr) of the messages that reached this handler. */
static int plugin_seen_in[PLUGIN_ROUNDS];

void *plugin_hdr(lapi_handle_t *h, void *uhdr, uint *uhdr_len, ulong *len,
                 compl_hndlr_t **ch, void **info)
{
  (void)h;
  (void)len;
  int r = *uhdr_len == sizeof(int) ? *(const int *)uhdr : -1;
  if (r >= 0 && r < PLUGIN_ROUNDS)
    __atomic_add_fetch(&plugin_seen_in[r], 1, __ATOMIC_SEQ_CST);
  *ch = NULL;
  *info = NULL;
  return NULL;
}

/* How many messages of round r reached plugin_hdr. */
int plugin_seen(int r)
{
  return r >= 0 && r < PLUGIN_ROUNDS
             ? __atomic_load_n(&plugin_seen_in[r], __ATOMIC_SEQ_CST)
             : -1;
}
