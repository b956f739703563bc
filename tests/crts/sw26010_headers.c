/*
 * sw26010_headers.c - athread.h, slave.h and dma.h together compile
 * warning-free as strict C99 / C11 and as C++11 (a compile check: ctest
 * runs the compiler with -fsyntax-only, tests/CMakeLists.txt).
 */
#include <athread.h>
#include <dma.h>
#include <slave.h>

static void cpe_work(void *arg) { (void)arg; }

int main(void)
{
  dma_desc desc = 0;
  dma_set_op(&desc, DMA_GET);
  dma_set_mode(&desc, PE_MODE);
  athread_scope scope = ARRAY_SCOPE;
  (void)scope;
  (void)desc;
  if (athread_init() != 0)
    return 1;
  return athread_spawn(SLAVE_FUN(cpe_work), 0) + athread_join();
}
