/*
 * Where the commands take a secret from (src/cli/secret_src.c): an option's
 * value, a file, the environment.  What matters is what is left behind:
 * the option's value overwritten, the variable wiped and unset, a file that
 * others can read refused.
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>

#include "test_util.h"

#include "../../src/cli/cli.h"
#include "../../src/cli/secret_src.h"

#define KEY "NVMeTLSkey-1:01:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwNf9LrZ:"

START_TEST(test_arg_overwritten)
{
	char arg[] = KEY, buf[128];

	ck_assert_int_eq(secret_from_arg("t", "-d", "a key", arg, buf, sizeof(buf)), EXIT_OK);
	ck_assert_str_eq(buf, KEY);
	for (size_t i = 0; i < strlen(KEY); i++)
		ck_assert_int_eq(arg[i], 'x');
}
END_TEST

/* Too long for the buffer: refused, and overwritten all the same. */
START_TEST(test_arg_too_long)
{
	char arg[] = KEY, buf[16];

	ck_assert_int_eq(secret_from_arg("t", "-d", "a key", arg, buf, sizeof(buf)), EXIT_USAGE);
	ck_assert_ptr_null(strstr(arg, "NVMe"));
}
END_TEST

static void write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	ck_assert_int_eq(fchmod(fd, mode), 0);
	close(fd);
}

START_TEST(test_file)
{
	char dir[] = "/tmp/check_secret_src.XXXXXX", path[64], buf[128];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/key", dir);

	write_file(path, KEY "\n", 0600);
	ck_assert_int_eq(secret_from_file("t", "-f", "a key", path, buf, sizeof(buf)), EXIT_OK);
	ck_assert_str_eq(buf, KEY);

	write_file(path, KEY "\n", 0640);
	ck_assert_int_eq(secret_from_file("t", "-f", "a key", path, buf, sizeof(buf)), EXIT_USAGE);
	write_file(path, "\n", 0600);
	ck_assert_int_eq(secret_from_file("t", "-f", "a key", path, buf, sizeof(buf)), EXIT_USAGE);
	write_file(path, KEY, 0600);
	ck_assert_int_eq(secret_from_file("t", "-f", "a key", path, buf, 16), EXIT_USAGE);
	ck_assert_ptr_null(memchr(buf, 'N', 16));
	ck_assert_int_eq(secret_from_file("t", "-f", "a key", dir, buf, sizeof(buf)), EXIT_USAGE);
	ck_assert_int_eq(secret_from_file("t", "-f", "a key", "", buf, sizeof(buf)), EXIT_USAGE);
	unlink(path);
	rmdir(dir);
}
END_TEST

/* putenv() keeps our string, so what is left of it can be looked at. */
static char env[] = "CHECK_SECRET_SRC=" KEY;

START_TEST(test_env_wiped)
{
	char buf[128];
	int found = 0;

	ck_assert_int_eq(putenv(env), 0);
	ck_assert_int_eq(secret_from_env("t", "CHECK_SECRET_SRC", "a key", buf, sizeof(buf), &found),
			 EXIT_OK);
	ck_assert_int_eq(found, 1);
	ck_assert_str_eq(buf, KEY);
	ck_assert_ptr_null(getenv("CHECK_SECRET_SRC"));
	ck_assert_str_eq(env, "CHECK_SECRET_SRC=");

	ck_assert_int_eq(secret_from_env("t", "CHECK_SECRET_SRC", "a key", buf, sizeof(buf), &found),
			 EXIT_OK);
	ck_assert_int_eq(found, 0);
}
END_TEST

/* Another source gave the secret: the variable goes all the same. */
START_TEST(test_env_only_wiped)
{
	static char other[] = "CHECK_SECRET_SRC2=" KEY;
	int found = 0;

	ck_assert_int_eq(putenv(other), 0);
	ck_assert_int_eq(secret_from_env("t", "CHECK_SECRET_SRC2", "a key", NULL, 0, &found),
			 EXIT_OK);
	ck_assert_int_eq(found, 1);
	ck_assert_ptr_null(getenv("CHECK_SECRET_SRC2"));
	ck_assert_str_eq(other, "CHECK_SECRET_SRC2=");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("secret_src");
	TCase *tc = tcase_create("sources");

	tcase_add_test(tc, test_arg_overwritten);
	tcase_add_test(tc, test_arg_too_long);
	tcase_add_test(tc, test_file);
	tcase_add_test(tc, test_env_wiped);
	tcase_add_test(tc, test_env_only_wiped);
	suite_add_tcase(s, tc);
	return run_suite(s, CK_NORMAL);
}
