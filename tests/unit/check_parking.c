/*
 * The mount's parked requests (src/export/parking.c): what a worker copies
 * out instead of giving it a request buffer.  Held requests of a namespace
 * without a path stay parked while the others' are released, in order; the
 * mount's bound counts every byte and is given back.
 */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "test_util.h"
#include "../../src/export/parking.h"

/* Namespaces held in this test, and how often park_release() asked. */
static bool held_ns[8];
static unsigned int asked;

static bool is_held(void *arg, uint32_t nsid)
{
	ck_assert_ptr_eq(arg, held_ns);
	asked++;
	return held_ns[nsid];
}

/* Parks a request of @len bytes (at most 8 KiB) for @nsid whose first byte is @tag. */
static void add(struct park_list *l, atomic_size_t *total, uint32_t nsid, uint8_t tag, size_t len)
{
	uint8_t buf[8192];

	memset(buf, 0, len);
	buf[0] = tag;
	ck_assert_int_eq(park_add(l, total, nsid, buf, len), 0);
}

/* Pops @l into @tags (first bytes), freeing each; returns how many. */
static unsigned int drain(struct park_list *l, atomic_size_t *total, uint8_t *tags)
{
	unsigned int n = 0;

	for (struct parked *p; (p = park_pop(l)); n++) {
		tags[n] = p->bytes[0];
		park_free(p, total);
	}
	return n;
}

START_TEST(test_release_keeps_held_namespace)
{
	struct park_list held = { 0 }, ready = { 0 };
	atomic_size_t total = 0;
	uint8_t tags[16];

	memset(held_ns, 0, sizeof(held_ns));
	/* Namespace 1 has no path; namespace 2 had none when its requests
	 * were parked and has one now. */
	held_ns[1] = true;
	add(&held, &total, 1, 10, 80);
	add(&held, &total, 1, 11, 4176);
	add(&held, &total, 2, 20, 80);
	add(&held, &total, 2, 21, 80);
	add(&held, &total, 1, 12, 80);
	add(&held, &total, 2, 22, 80);
	add(&ready, &total, 3, 30, 80);
	ck_assert_uint_gt(total, 4176 + 6 * 80);
	asked = 0;
	ck_assert_uint_eq(park_release(&held, &ready, is_held, held_ns, false), 3);
	/* Once per run of one namespace, not once per request. */
	ck_assert_uint_eq(asked, 4);
	/* What was ready stays first; namespace 2's follow, in order. */
	ck_assert_uint_eq(drain(&ready, &total, tags), 4);
	ck_assert_uint_eq(tags[0], 30);
	ck_assert_uint_eq(tags[1], 20);
	ck_assert_uint_eq(tags[2], 21);
	ck_assert_uint_eq(tags[3], 22);
	ck_assert_ptr_null(ready.tail);
	/* Namespace 1's stay, in order, and nothing more moves while held. */
	ck_assert_uint_eq(park_release(&held, &ready, is_held, held_ns, false), 0);
	ck_assert_ptr_null(ready.head);
	held_ns[1] = false;
	add(&held, &total, 2, 23, 80);
	ck_assert_uint_eq(park_release(&held, &ready, is_held, held_ns, false), 4);
	ck_assert_ptr_null(held.head);
	ck_assert_ptr_null(held.tail);
	ck_assert_uint_eq(drain(&ready, &total, tags), 4);
	ck_assert_uint_eq(tags[0], 10);
	ck_assert_uint_eq(tags[1], 11);
	ck_assert_uint_eq(tags[2], 12);
	ck_assert_uint_eq(tags[3], 23);
	ck_assert_uint_eq(total, 0);
}
END_TEST

/* The mount going away releases everything, held or not, without asking. */
START_TEST(test_release_forced)
{
	struct park_list held = { 0 }, ready = { 0 };
	atomic_size_t total = 0;
	uint8_t tags[4];

	memset(held_ns, 1, sizeof(held_ns));
	add(&held, &total, 1, 1, 80);
	add(&held, &total, 2, 2, 80);
	asked = 0;
	ck_assert_uint_eq(park_release(&held, &ready, is_held, held_ns, true), 2);
	ck_assert_uint_eq(asked, 0);
	ck_assert_uint_eq(drain(&ready, &total, tags), 2);
	ck_assert_uint_eq(tags[0], 1);
	ck_assert_uint_eq(tags[1], 2);
	ck_assert_uint_eq(total, 0);
}
END_TEST

/* The bound: room until PARK_MAX_BYTES are parked, room again once freed. */
START_TEST(test_bound)
{
	struct park_list l = { 0 };
	atomic_size_t total = 0;
	unsigned int n = 0;

	while (park_room(&total)) {
		add(&l, &total, 1, 0, 4096);
		n++;
	}
	ck_assert_uint_ge(total, PARK_MAX_BYTES);
	ck_assert_uint_eq(n, (PARK_MAX_BYTES + sizeof(struct parked) + 4095) /
			  (sizeof(struct parked) + 4096));
	for (struct parked *p; (p = park_pop(&l));)
		park_free(p, &total);
	ck_assert_uint_eq(total, 0);
	ck_assert(park_room(&total));
}
END_TEST

static Suite *parking_suite(void)
{
	Suite *s = suite_create("parking");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_release_keeps_held_namespace);
	tcase_add_test(tc, test_release_forced);
	tcase_add_test(tc, test_bound);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(parking_suite(), CK_NORMAL);
}
