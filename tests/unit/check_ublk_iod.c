/*
 * ublk request descriptors read as engine requests (src/ublk/iod.c): the
 * kernel's sectors are bounded by the device before they become byte
 * offsets, so no descriptor wraps around to a range inside the device.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include <check.h>

#include "test_util.h"

#include "../../src/ublk/iod.h"

#define DEV_SIZE ((uint64_t)64 << 20)
#define MAX_IO ((size_t)128 << 10)

static int ask(uint8_t op, uint64_t start_sector, uint32_t nr_sectors, struct ublk_io *io)
{
	struct ublksrv_io_desc iod = { .op_flags = op, .nr_sectors = nr_sectors,
				       .start_sector = start_sector };

	*io = (struct ublk_io){ .off = 1234, .size = 5678 };
	return ublk_iod_request(&iod, DEV_SIZE, MAX_IO, io);
}

START_TEST(test_in_range)
{
	struct ublk_io io;

	ck_assert_int_eq(ask(UBLK_IO_OP_READ, 8, 8, &io), 0);
	ck_assert_int_eq(io.op, EXP_READ);
	ck_assert_uint_eq(io.off, 4096);
	ck_assert_uint_eq(io.size, 4096);
	/* The last sectors of the device. */
	ck_assert_int_eq(ask(UBLK_IO_OP_WRITE, (DEV_SIZE >> 9) - 256, 256, &io), 0);
	ck_assert_int_eq(io.op, EXP_WRITE);
	ck_assert_uint_eq(io.off + io.size, DEV_SIZE);
	/* Discard and write-zeroes are not bounded by the transfer size. */
	ck_assert_int_eq(ask(UBLK_IO_OP_DISCARD, 0, (uint32_t)(DEV_SIZE >> 9), &io), 0);
	ck_assert_int_eq(io.op, EXP_PUNCH);
	ck_assert_uint_eq(io.size, DEV_SIZE);
	ck_assert_int_eq(ask(UBLK_IO_OP_WRITE_ZEROES, 16, 2048, &io), 0);
	ck_assert_int_eq(io.op, EXP_ZERO);
	ck_assert_int_eq(ask(UBLK_IO_OP_FLUSH, 99, 7, &io), 0);
	ck_assert_int_eq(io.op, EXP_FLUSH);
	ck_assert_uint_eq(io.off, 0);
	ck_assert_uint_eq(io.size, 0);
}
END_TEST

START_TEST(test_past_the_end)
{
	struct ublk_io io;

	ck_assert_int_eq(ask(UBLK_IO_OP_READ, (DEV_SIZE >> 9) - 7, 8, &io), -EIO);
	ck_assert_int_eq(ask(UBLK_IO_OP_WRITE, DEV_SIZE >> 9, 1, &io), -EIO);
	ck_assert_int_eq(ask(UBLK_IO_OP_DISCARD, 1, (uint32_t)(DEV_SIZE >> 9), &io), -EIO);
}
END_TEST

/* Sectors whose byte offset does not fit 64 bits, or whose end wraps past
 * zero, are past the device, not somewhere near its start. */
START_TEST(test_wrapping_sectors)
{
	struct ublk_io io;

	/* 2^55 sectors is 2^64 bytes: the offset wraps to 0. */
	ck_assert_int_eq(ask(UBLK_IO_OP_WRITE, (uint64_t)1 << 55, 8, &io), -EIO);
	/* The last sector that fits: its end wraps to 3584. */
	ck_assert_int_eq(ask(UBLK_IO_OP_READ, UINT64_MAX >> 9, 8, &io), -EIO);
	ck_assert_int_eq(ask(UBLK_IO_OP_WRITE_ZEROES, UINT64_MAX, 1, &io), -EIO);
	ck_assert_uint_eq(io.off, 1234);
}
END_TEST

START_TEST(test_too_large_or_unknown)
{
	struct ublk_io io;

	ck_assert_int_eq(ask(UBLK_IO_OP_READ, 0, (uint32_t)(MAX_IO >> 9), &io), 0);
	ck_assert_int_eq(ask(UBLK_IO_OP_READ, 0, (uint32_t)(MAX_IO >> 9) + 1, &io), -EIO);
	ck_assert_int_eq(ask(UBLK_IO_OP_WRITE, 0, UINT32_MAX, &io), -EIO);
	ck_assert_int_eq(ask(0x7f, 0, 8, &io), -EOPNOTSUPP);
}
END_TEST

static Suite *ublk_iod_suite(void)
{
	Suite *s = suite_create("ublk_iod");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_in_range);
	tcase_add_test(tc, test_past_the_end);
	tcase_add_test(tc, test_wrapping_sectors);
	tcase_add_test(tc, test_too_large_or_unknown);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(ublk_iod_suite(), CK_NORMAL);
}
