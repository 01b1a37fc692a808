/*
 * The command line's number, size and CPU-list parsers (src/cli/util_parse.c):
 * what they take, and that everything else is refused rather than read as
 * something the user did not mean.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include <check.h>

#include "test_util.h"
#include "../../src/cli/util_parse.h"

START_TEST(test_uint)
{
	uint64_t v = 7;

	ck_assert_int_eq(parse_uint("42", 0, 100, &v), 0);
	ck_assert_uint_eq(v, 42);
	ck_assert_int_eq(parse_uint("0x1f", 0, 100, &v), 0);
	ck_assert_uint_eq(v, 31);
	ck_assert_int_eq(parse_uint("101", 0, 100, &v), -EINVAL);
	ck_assert_int_eq(parse_uint("0", 1, 100, &v), -EINVAL);
	ck_assert_int_eq(parse_uint("-1", 0, 100, &v), -EINVAL);
	ck_assert_int_eq(parse_uint(" 1", 0, 100, &v), -EINVAL);
	ck_assert_int_eq(parse_uint("1k", 0, 100000, &v), -EINVAL);
	ck_assert_int_eq(parse_uint("", 0, 100, &v), -EINVAL);
	ck_assert_int_eq(parse_uint("0x", 0, 100, &v), -EINVAL);
	ck_assert_int_eq(parse_uint("18446744073709551616", 0, UINT64_MAX, &v), -EINVAL);
	ck_assert_uint_eq(v, 31);
}
END_TEST

/* nvme-cli's timeouts take -1 for "forever" or "off". */
START_TEST(test_int)
{
	int64_t v = 7;

	ck_assert_int_eq(parse_int("42", -5, 100, &v), 0);
	ck_assert_int_eq(v, 42);
	ck_assert_int_eq(parse_int("-1", -5, 100, &v), 0);
	ck_assert_int_eq(v, -1);
	ck_assert_int_eq(parse_int("-0", -5, 100, &v), 0);
	ck_assert_int_eq(v, 0);
	ck_assert_int_eq(parse_int("-0x10", -100, 100, &v), 0);
	ck_assert_int_eq(v, -16);
	ck_assert_int_eq(parse_int("-9223372036854775808", INT64_MIN, 0, &v), 0);
	ck_assert(v == INT64_MIN);
	ck_assert_int_eq(parse_int("9223372036854775807", 0, INT64_MAX, &v), 0);
	ck_assert(v == INT64_MAX);
	v = 7;
	ck_assert_int_eq(parse_int("-6", -5, 100, &v), -EINVAL);
	ck_assert_int_eq(parse_int("101", -5, 100, &v), -EINVAL);
	ck_assert_int_eq(parse_int("-9223372036854775809", INT64_MIN, 0, &v), -EINVAL);
	ck_assert_int_eq(parse_int("9223372036854775808", 0, INT64_MAX, &v), -EINVAL);
	ck_assert_int_eq(parse_int("--1", -5, 100, &v), -EINVAL);
	ck_assert_int_eq(parse_int("+1", -5, 100, &v), -EINVAL);
	ck_assert_int_eq(parse_int("- 1", -5, 100, &v), -EINVAL);
	ck_assert_int_eq(parse_int(" -1", -5, 100, &v), -EINVAL);
	ck_assert_int_eq(parse_int("-", -5, 100, &v), -EINVAL);
	ck_assert_int_eq(parse_int("", -5, 100, &v), -EINVAL);
	ck_assert_int_eq(parse_int("1s", -5, 100, &v), -EINVAL);
	ck_assert_int_eq(parse_int("-1.5", -5, 100, &v), -EINVAL);
	ck_assert_int_eq(v, 7);
}
END_TEST

START_TEST(test_size)
{
	uint64_t v = 0;

	ck_assert_int_eq(parse_size("4096", 0, UINT64_MAX, &v), 0);
	ck_assert_uint_eq(v, 4096);
	ck_assert_int_eq(parse_size("4k", 0, UINT64_MAX, &v), 0);
	ck_assert_uint_eq(v, 4096);
	ck_assert_int_eq(parse_size("128K", 0, UINT64_MAX, &v), 0);
	ck_assert_uint_eq(v, 128 << 10);
	ck_assert_int_eq(parse_size("1GiB", 0, UINT64_MAX, &v), 0);
	ck_assert_uint_eq(v, 1 << 30);
	ck_assert_int_eq(parse_size("2MB", 0, UINT64_MAX, &v), 0);
	ck_assert_uint_eq(v, 2 << 20);
	ck_assert_int_eq(parse_size("1t", 0, UINT64_MAX, &v), 0);
	ck_assert_uint_eq(v, 1ull << 40);
	ck_assert_int_eq(parse_size("511", 512, UINT64_MAX, &v), -ERANGE);
	ck_assert_int_eq(parse_size("-4k", 0, UINT64_MAX, &v), -EINVAL);
	ck_assert_int_eq(parse_size("4x", 0, UINT64_MAX, &v), -EINVAL);
	ck_assert_int_eq(parse_size("4kk", 0, UINT64_MAX, &v), -EINVAL);
	ck_assert_int_eq(parse_size("k", 0, UINT64_MAX, &v), -EINVAL);
	ck_assert_int_eq(parse_size("", 0, UINT64_MAX, &v), -EINVAL);
	/* 2^24 TiB does not fit 64 bits: refused, not wrapped to 0. */
	ck_assert_int_eq(parse_size("16777216t", 0, UINT64_MAX, &v), -EINVAL);
}
END_TEST

START_TEST(test_cpu_list)
{
	unsigned int cpus[8], n = 99;

	ck_assert_int_eq(parse_cpu_list("0", 1023, cpus, 8, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(cpus[0], 0);

	/* The order given is the order the threads take. */
	ck_assert_int_eq(parse_cpu_list("5,1-3,0,0", 1023, cpus, 8, &n), 0);
	ck_assert_uint_eq(n, 6);
	ck_assert_uint_eq(cpus[0], 5);
	ck_assert_uint_eq(cpus[1], 1);
	ck_assert_uint_eq(cpus[2], 2);
	ck_assert_uint_eq(cpus[3], 3);
	ck_assert_uint_eq(cpus[4], 0);
	ck_assert_uint_eq(cpus[5], 0);

	ck_assert_int_eq(parse_cpu_list("2-2", 1023, cpus, 8, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(cpus[0], 2);
}
END_TEST

START_TEST(test_cpu_list_refused)
{
	static const char *const bad[] = {
		"", ",", "0,", ",0", "0,,1", "a", "0x1", "-1", "1-", "-", "3-1", "1 ", " 1", "1;2",
		"+1", "0-1-2",
	};
	unsigned int cpus[8], n = 99;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(parse_cpu_list(bad[i], 1023, cpus, 8, &n) == -EINVAL,
			      "'%s' was not refused as bad syntax", bad[i]);
	ck_assert_int_eq(parse_cpu_list("1024", 1023, cpus, 8, &n), -ERANGE);
	ck_assert_int_eq(parse_cpu_list("0-1024", 1023, cpus, 8, &n), -ERANGE);
	ck_assert_int_eq(parse_cpu_list("99999999999999999999", 1023, cpus, 8, &n), -ERANGE);
	/* More CPUs than room is refused, not truncated. */
	ck_assert_int_eq(parse_cpu_list("0-8", 1023, cpus, 8, &n), -ERANGE);
	ck_assert_int_eq(parse_cpu_list("0-3,0-4", 1023, cpus, 8, &n), -ERANGE);
	ck_assert_int_eq(parse_cpu_list("0-7", 1023, cpus, 8, &n), 0);
	ck_assert_uint_eq(n, 8);
	ck_assert_uint_eq(cpus[7], 7);
}
END_TEST

/* discovery.conf's lines, as nvme-cli splits them into arguments. */
START_TEST(test_option_line)
{
	char line[] = "-t tcp  --traddr=192.0.2.1\t-s 8009 \n";
	char comment[] = "# -t tcp -a 192.0.2.1\n", blank[] = " \t\r\n", many[] = "a b c";
	char *w[6];

	ck_assert_int_eq(parse_option_line(line, w, 6), 6);
	ck_assert_str_eq(w[0], "-t");
	ck_assert_str_eq(w[1], "tcp");
	ck_assert_str_eq(w[2], "--traddr");
	ck_assert_str_eq(w[3], "192.0.2.1");
	ck_assert_str_eq(w[4], "-s");
	ck_assert_str_eq(w[5], "8009");
	ck_assert_int_eq(parse_option_line(comment, w, 6), 0);
	ck_assert_int_eq(parse_option_line(blank, w, 6), 0);
	ck_assert_int_eq(parse_option_line(many, w, 2), -E2BIG);
}
END_TEST

static Suite *parse_suite(void)
{
	Suite *s = suite_create("parse");
	TCase *tc = tcase_create("numbers");

	tcase_add_test(tc, test_uint);
	tcase_add_test(tc, test_int);
	tcase_add_test(tc, test_size);
	suite_add_tcase(s, tc);

	tc = tcase_create("cpu lists");
	tcase_add_test(tc, test_cpu_list);
	tcase_add_test(tc, test_cpu_list_refused);
	tcase_add_test(tc, test_option_line);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(parse_suite(), CK_NORMAL);
}
