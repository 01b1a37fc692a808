/*
 * A ublk device's record (src/ublk/record_fmt.c): what a daemon writes is
 * what list, del and recover read back, the options ublk recover starts a
 * daemon with included; a record cut short, or holding what no daemon
 * writes, is refused whole.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "test_util.h"

#include "../../src/ublk/devices.h"

/* @text read as a record. */
static int read_text(const char *text, struct nvmefs_ublk_record *r)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int ret;

	ck_assert_ptr_nonnull(f);
	ret = nvmefs_ublk_record_read(f, r);
	fclose(f);
	return ret;
}

/* @r written, in *@text (freed by the caller): 0 or -errno. */
static int write_text(const struct nvmefs_ublk_record *r, char **text)
{
	size_t len;
	FILE *f = open_memstream(text, &len);
	int ret;

	ck_assert_ptr_nonnull(f);
	ret = nvmefs_ublk_record_write(f, r);
	fclose(f);
	return ret;
}

START_TEST(test_round_trip)
{
	char *args[] = { "-t", "tcp", "-a", "192.0.2.1", "--dhchap-secret=DHHC-1:00:a b:",
			 "--recovery", "" };
	struct nvmefs_ublk_record w = { .nqn = "nqn.2026-11.io.nvmefs:disk", .nsid = 4294967295u,
					.pid = 1234, .gone = true, .nr_args = 7, .args = args },
				  r;
	char *text;

	ck_assert_int_eq(write_text(&w, &text), 0);
	ck_assert_int_eq(read_text(text, &r), 0);
	free(text);
	ck_assert_str_eq(r.nqn, w.nqn);
	ck_assert_uint_eq(r.nsid, w.nsid);
	ck_assert_int_eq(r.pid, 1234);
	ck_assert(r.gone);
	ck_assert_uint_eq(r.nr_args, 7);
	for (unsigned int i = 0; i < 7; i++)
		ck_assert_str_eq(r.args[i], args[i]);
	nvmefs_ublk_record_free(&r);
	ck_assert_ptr_null(r.args);
}
END_TEST

/* A device added without --recovery records no option. */
START_TEST(test_no_args)
{
	struct nvmefs_ublk_record r;

	ck_assert_int_eq(read_text("nqn.a:b\n1\n99\nlive\n0\n", &r), 0);
	ck_assert_uint_eq(r.nr_args, 0);
	ck_assert_ptr_null(r.args);
	ck_assert(!r.gone);
	nvmefs_ublk_record_free(&r);
}
END_TEST

/* What no daemon writes: each refused, nothing left allocated. */
START_TEST(test_refused)
{
	static const char *const bad[] = {
		"",
		"nqn.a:b\n1\n99\nlive\n",		/* no count: cut short */
		"nqn.a:b\n1\n99\nlive\n2\n-t\n",	/* fewer options than counted */
		"nqn.a:b\n1\n99\nlive\n1\n-t",		/* the last line unended */
		"nqn.a:b\n0\n99\nlive\n0\n",		/* namespace 0 */
		"nqn.a:b\n4294967296\n99\nlive\n0\n",	/* past 32 bits */
		"nqn.a:b\n1\n0\nlive\n0\n",		/* PID 0 */
		"nqn.a:b\n1\n-5\nlive\n0\n",
		"nqn.a:b\n1\n99\ndead\n0\n",		/* a state no daemon writes */
		"nqn.a:b\n1\n99\nlive\n257\n",		/* more options than recorded at most */
		"nqn.a:b\n1x\n99\nlive\n0\n",
		"nqn a:b\n1\n99\nlive\n0\n",		/* a blank in the NQN */
		"\n1\n99\nlive\n0\n",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct nvmefs_ublk_record r;

		ck_assert_msg(read_text(bad[i], &r) == -EINVAL, "record %zu read", i);
		ck_assert_ptr_null(r.args);
	}
}
END_TEST

/* An NQN of 256 bytes or more has no room in the record's. */
START_TEST(test_long_nqn)
{
	char text[400];
	struct nvmefs_ublk_record r;

	memset(text, 'n', 256);
	strcpy(text + 256, "\n1\n99\nlive\n0\n");
	ck_assert_int_eq(read_text(text, &r), -EINVAL);
	strcpy(text + 255, "\n1\n99\nlive\n0\n");
	ck_assert_int_eq(read_text(text, &r), 0);
	ck_assert_uint_eq(strlen(r.nqn), 255);
}
END_TEST

/* An option with a newline has no line of its own: not written. */
START_TEST(test_write_refused)
{
	char *args[] = { "-n", "nqn.a:b\n1" };
	struct nvmefs_ublk_record w = { .nqn = "nqn.a:b", .nsid = 1, .pid = 2, .nr_args = 2,
					.args = args };
	char *text;

	ck_assert_int_eq(write_text(&w, &text), -EINVAL);
	free(text);
	w.nr_args = NVMEFS_UBLK_MAX_ARGS + 1;
	ck_assert_int_eq(write_text(&w, &text), -EINVAL);
	free(text);
}
END_TEST

/* Where list, del and recover look for a device's record and a daemon's
 * stats: the names the daemon writes them under. */
START_TEST(test_paths)
{
	char path[64];

	nvmefs_ublk_record_path(path, sizeof(path), 3);
	ck_assert_str_eq(path, "/run/nvmefs/ublk/3");
	nvmefs_ublk_stats_path(path, sizeof(path), 4194304);
	ck_assert_str_eq(path, "/run/nvmefs/ublk/4194304.stats");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ublk_record");
	TCase *tc = tcase_create("record");

	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_no_args);
	tcase_add_test(tc, test_refused);
	tcase_add_test(tc, test_long_nqn);
	tcase_add_test(tc, test_write_refused);
	tcase_add_test(tc, test_paths);
	suite_add_tcase(s, tc);
	return run_suite(s, CK_NORMAL);
}
