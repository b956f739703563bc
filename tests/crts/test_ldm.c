/*
 * test_ldm.c - the LDM of a CPE: where its stack, __thread_local data and
 * heap live, and the CRTS_pldm_* allocator with its limits.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "crts_cg.h"
#include "crts_test_util.h"

static __thread_local int ldm_var[16];

static void where_things_live(void *arg)
{
  (void)arg;
  struct crts_cpe *me = crts_self;
  int stack_var = 0;
  int owner = -1;
  CPE_CHECK(crts_ldm_range(ldm_var, sizeof ldm_var, &owner) &&
            owner == CRTS_tid);
  CPE_CHECK(crts_ldm_range(&stack_var, sizeof stack_var, &owner) &&
            owner == CRTS_tid);
  char *p = CRTS_pldm_malloc(1024);
  CPE_CHECK(p && crts_ldm_range(p, 1024, &owner) && owner == CRTS_tid);
  /* The same variable on another CPE is one slice stride away. */
  int peer = (CRTS_tid + 1) % 64;
  CPE_CHECK(crts_ldm_translate(ldm_var, peer) ==
            (char *)ldm_var + (peer - CRTS_tid) * (long)crts_cg.slice_stride);
  /* Static data (TLS + thread control block) is counted against the LDM. */
  CPE_CHECK(me->static_ldm > sizeof ldm_var && me->static_ldm < 64 * 1024);
  CPE_CHECK((size_t)CRTS_pldm_get_free_size() + 1024 +
                crts_cg.stack_size + me->static_ldm <= CRTS_MAX_LDM_SIZE);
}

Test(ldm, stack_tls_and_heap_are_in_the_cpe_slice)
{
  crts_test_run(where_things_live, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
  cr_assert_eq(crts_ldm_owner(&crts_cg), -1, "main memory is not LDM");
}

static void allocator(void *arg)
{
  (void)arg;
  int free0 = CRTS_pldm_get_free_size();
  CPE_CHECK(free0 > 128 * 1024);
  CPE_CHECK(get_allocatable_size() == free0);
  char *a = CRTS_pldm_malloc(100);
  char *b = ldm_malloc(4096);
  CPE_CHECK(a && b && a != b);
  CPE_CHECK(b >= a + 100);
  CPE_CHECK(((uintptr_t)a & 31) == 0 && ((uintptr_t)b & 31) == 0);
  memset(a, 1, 100);
  memset(b, 2, 4096);
  CPE_CHECK(CRTS_get_free_addr() == b + 4096);
  /* LIFO free returns the space at once. */
  ldm_free(b, 4096);
  CPE_CHECK(CRTS_get_free_addr() == b);
  /* Out-of-order free: a hole reused first-fit, folded into the top. */
  char *c = CRTS_pldm_malloc(256);
  char *d = CRTS_pldm_malloc(256);
  CRTS_pldm_free(c, 256);
  char *e = CRTS_pldm_malloc(64);
  CPE_CHECK(e == c);
  CRTS_pldm_free(e, 64);
  CRTS_pldm_free(d, 256);
  CRTS_pldm_free(a, 100);
  CPE_CHECK(CRTS_get_free_addr() == a);
  CPE_CHECK(CRTS_pldm_get_free_size() == free0);

  /* Exhaustion: never more than the slice holds. */
  CPE_CHECK(CRTS_pldm_malloc(CRTS_MAX_LDM_SIZE) == NULL);
  CPE_CHECK(CRTS_pldm_malloc((size_t)free0 + 1) == NULL);
  char *all = CRTS_pldm_malloc((size_t)free0);
  CPE_CHECK(all != NULL);
  if (all)
    memset(all, 3, (size_t)free0); /* every byte is usable */
  CPE_CHECK(CRTS_pldm_get_free_size() == 0);
  CPE_CHECK(CRTS_pldm_malloc(4) == NULL);
  CRTS_pldm_free_all();
  CPE_CHECK(CRTS_pldm_get_free_size() == free0);

  size_t got = 0;
  char *max = ldm_malloc_max(&got);
  CPE_CHECK(max != NULL && got == (size_t)free0);
  CPE_CHECK(CRTS_pldm_malloc_max(&got) == NULL && got == 0);
  ldm_free_all();
  CPE_CHECK(CRTS_pldm_get_free_size() == free0);
}

Test(ldm, allocator_reuses_and_never_overflows)
{
  unsetenv("CRTS_LDM_STACK_SIZE");
  crts_test_run(allocator, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
}

static void leave_allocated(void *arg)
{
  (void)arg;
  CPE_CHECK(CRTS_pldm_malloc(64 * 1024) != NULL);
}

static void heap_is_fresh(void *arg)
{
  int *free0 = arg;
  CPE_CHECK(CRTS_pldm_get_free_size() == *free0);
}

static void read_free(void *arg)
{
  if (CRTS_tid == 0)
    *(int *)arg = CRTS_pldm_get_free_size();
}

Test(ldm, each_spawn_starts_with_an_empty_heap)
{
  int free0 = 0;
  crts_test_run(read_free, &free0);
  crts_test_run(leave_allocated, NULL);
  crts_test_run(heap_is_fresh, &free0);
  CRTS_ASSERT_NO_CPE_FAILURE();
}

static void stack_reserve(void *arg)
{
  int *free0 = arg;
  if (CRTS_tid == 0)
    *free0 = CRTS_pldm_get_free_size();
}

Test(ldm, stack_reserve_setting_moves_the_heap_limit)
{
  int free_default = 0;
  unsetenv("CRTS_LDM_STACK_SIZE");
  crts_test_run(stack_reserve, &free_default);
  /* The default reserve is 32 KiB; 96 KiB leaves 64 KiB less heap. */
  cr_assert_eq(crts_cg.stack_size, 32 * 1024);
  cr_assert_gt(free_default, 200 * 1024);
}

Test(ldm, bigger_stack_reserve_shrinks_the_heap)
{
  int free_big = 0;
  setenv("CRTS_LDM_STACK_SIZE", "96K", 1);
  crts_test_run(stack_reserve, &free_big);
  cr_assert_eq(crts_cg.stack_size, 96 * 1024);
  cr_assert_gt(free_big, 100 * 1024);
  cr_assert_lt(free_big, 160 * 1024);
}

Test(ldm, calls_off_a_cpe_fail)
{
  cr_assert_eq(CRTS_init(), 0);
  cr_assert_null(CRTS_pldm_malloc(16));
  cr_assert_eq(CRTS_pldm_get_free_size(), -1);
  cr_assert_null(CRTS_get_free_addr());
  size_t n = 7;
  cr_assert_null(ldm_malloc_max(&n));
}

static void bad_free(void *arg)
{
  (void)arg;
  static int main_memory[4];
  int before = CRTS_pldm_get_free_size();
  CRTS_pldm_free(main_memory, sizeof main_memory);
  CRTS_pldm_free(NULL, 16);
  CPE_CHECK(CRTS_pldm_get_free_size() == before);
}

Test(ldm, freeing_foreign_memory_changes_nothing)
{
  crts_test_run(bad_free, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
}

Test(ldm, oversized_stack_reserve_fails_init)
{
  setenv("CRTS_LDM_STACK_SIZE", "300K", 1);
  cr_assert_neq(CRTS_init(), 0);
}
