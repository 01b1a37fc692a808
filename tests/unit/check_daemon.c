/*
 * The daemon of mount and ublk add (src/cli/daemon.c): the parent that
 * waits prints what the live child sends, however long, and exits 0; a
 * child's failure line goes to stderr with exit 1; a child that dies
 * without a word is told as such.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "../../src/cli/daemon.h"

/* What a live daemon prints: ublk add's device lines, past one read. */
static char long_out[10000];

static int serve_ready(void *arg)
{
	daemon_ready(arg, long_out);
	return EXIT_OK;
}

static int serve_fail(void *arg)
{
	daemon_fail(arg, "nvmefs test: the target refused: give another NQN\n");
	return EXIT_FAIL;
}

static int serve_die(void *arg)
{
	(void)arg;
	_exit(3);
}

/* Runs @serve as a daemon with stream @fd (1 or 2) caught: the exit
 * status, and what the stream got in @got. */
static int run_caught(int (*serve)(void *), int fd, char *got, size_t room)
{
	struct daemon_args d;
	FILE *tmp = tmpfile();
	int saved, ret;
	size_t n;

	ck_assert_ptr_nonnull(tmp);
	daemon_args_init(&d, "test");
	fflush(fd == 1 ? stdout : stderr);
	saved = dup(fd);
	dup2(fileno(tmp), fd);
	ret = daemon_run(&d, serve, &d);
	fflush(fd == 1 ? stdout : stderr);
	dup2(saved, fd);
	close(saved);
	rewind(tmp);
	n = fread(got, 1, room - 1, tmp);
	got[n] = '\0';
	fclose(tmp);
	daemon_done(&d);
	return ret;
}

START_TEST(test_ready_output_whole)
{
	static char got[sizeof(long_out) + 16];

	for (size_t i = 0; i < sizeof(long_out) - 1; i++)
		long_out[i] = i % 13 == 12 ? '\n' : (char)('a' + i % 26);
	ck_assert_int_eq(run_caught(serve_ready, 1, got, sizeof(got)), EXIT_OK);
	ck_assert_msg(!strcmp(got, long_out), "the parent printed %zu bytes, not the daemon's %zu",
		      strlen(got), strlen(long_out));
}
END_TEST

START_TEST(test_failure_line)
{
	char got[256];

	ck_assert_int_eq(run_caught(serve_fail, 2, got, sizeof(got)), EXIT_FAIL);
	ck_assert_str_eq(got, "nvmefs test: the target refused: give another NQN\n");
}
END_TEST

START_TEST(test_child_died)
{
	char got[256];

	ck_assert_int_eq(run_caught(serve_die, 2, got, sizeof(got)), EXIT_FAIL);
	ck_assert_msg(strstr(got, "the daemon ended before it was live (exit status 3)"), "got: %s",
		      got);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("daemon");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_ready_output_whole);
	tcase_add_test(tc, test_failure_line);
	tcase_add_test(tc, test_child_died);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	/* The daemon forks: no second fork of Check's around it. */
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
