/*
 * `nvmefs list`'s findings (src/cli/list_mounts.c) from a fake mountinfo and
 * fake mounts in a temporary directory: which lines are nvmefs mounts a user
 * may see, what their info and stats files say, and that a mount that does
 * not answer or answers nonsense is listed with its error within the bound.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <check.h>

#include "test_util.h"
#include "../../src/cli/list.h"

static char dir[] = "/tmp/check_list.XXXXXX";
static char mountinfo[PATH_MAX];

#define INFO_ONE_PATH                                                                    \
	"{\"subnqn\":\"nqn.2026-11.io.nvmefs.testbed:sub1\",\"model\":\"Linux\","        \
	"\"serial\":\"s1\",\"firmware\":\"6.12\",\"cntlid\":1,\"trtype\":\"rdma\","      \
	"\"traddr\":\"198.18.0.1\",\"trsvcid\":\"4420\",\"hostnqn\":\"nqn.h\","          \
	"\"io_queues\":2,\"mode\":\"direct\",\"namespaces\":["                            \
	"{\"file\":\"n1\",\"nsid\":1,\"size\":67108864,\"lba_size\":512},"                \
	"{\"file\":\"n2\",\"nsid\":2,\"size\":4096,\"lba_size\":4096}]}\n"

#define STATS_ONE_PATH                                                                   \
	"{\"queues\":[],\"total\":{\"reads\":16,\"writes\":32,\"read_bytes\":1048576,"   \
	"\"write_bytes\":2097152,\"flushes\":0,\"errors\":1},\"controller_failed\":0,"   \
	"\"controller\":{\"state\":\"live\",\"reconnects\":0}}\n"

#define INFO_TWO_PATHS                                                                   \
	"{\"subnqn\":\"nqn.sub2\",\"cntlid\":1,\"trtype\":\"rdma\",\"traddr\":\"10.0.0.1\"," \
	"\"trsvcid\":\"4420\",\"iopolicy\":\"round-robin\",\"paths\":["                  \
	"{\"trtype\":\"rdma\",\"traddr\":\"10.0.0.1\",\"trsvcid\":\"4420\",\"cntlid\":1}," \
	"{\"trtype\":\"tcp\",\"traddr\":\"10.0.0.2\",\"trsvcid\":\"4421\",\"cntlid\":2}]," \
	"\"namespaces\":[{\"file\":\"n1\",\"nsid\":1,\"size\":512}]}"

#define STATS_TWO_PATHS                                                                  \
	"{\"total\":{\"reads\":0,\"writes\":0,\"read_bytes\":0,\"write_bytes\":0,"       \
	"\"errors\":0},\"controller\":{\"state\":\"live\"},\"iopolicy\":\"round-robin\"," \
	"\"paths\":[{\"state\":\"live\"},{\"state\":\"connecting\"}]}"

/* An nvmefs before the info named its single path. */
#define INFO_OLD                                                                         \
	"{\"subnqn\":\"nqn.old\",\"cntlid\":1,\"namespaces\":[]}"

static void write_file(const char *sub, const char *name, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, sub);
	mkdir(path, 0755);
	if (!name)
		return;
	snprintf(path, sizeof(path), "%s/%s/%s", dir, sub, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

/* A mountinfo line for the mount at DIR/@sub of @fstype, owned by @uid. */
static void add_line(FILE *f, int id, const char *sub, const char *fstype, const char *source,
		     const char *super)
{
	fprintf(f, "%d 1 0:%d / %s/%s rw,nosuid,nodev,relatime shared:%d - %s %s %s\n", id, id, dir,
		sub, id, fstype, source, super);
}

static void setup(void)
{
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(mountinfo, sizeof(mountinfo), "%s/mountinfo", dir);
	f = fopen(mountinfo, "w");
	ck_assert_ptr_nonnull(f);
	fputs("22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n", f);
	add_line(f, 30, "one", "fuse.nvmefs", "nvmefs:nqn.2026-11.io.nvmefs.testbed:sub1",
		 "rw,user_id=1000,group_id=1000");
	add_line(f, 31, "two", "fuse.nvmefs", "nvmefs:nqn.sub2", "rw,user_id=1000,group_id=1000");
	/* Gone: a directory without the files (ENOENT stands in for ENOTCONN). */
	add_line(f, 32, "gone", "fuse.nvmefs", "nvmefs:nqn.gone", "rw,user_id=1000,group_id=1000");
	/* Stuck: open(2) of its info never returns, as with a stopped daemon. */
	add_line(f, 33, "stuck", "fuse.nvmefs", "nvmefs:nqn.stuck", "rw,user_id=1000,group_id=1000");
	add_line(f, 34, "garbage", "fuse.nvmefs", "nvmefs:nqn.garbage", "rw,user_id=1000,group_id=1000");
	add_line(f, 35, "other", "fuse.nvmefs", "nvmefs:nqn.other", "rw,user_id=2000,group_id=2000");
	add_line(f, 36, "shared", "fuse.nvmefs", "nvmefs:nqn.shared",
		 "rw,user_id=2000,group_id=2000,allow_other");
	add_line(f, 37, "sshfs", "fuse.sshfs", "host:/", "rw,user_id=1000,group_id=1000");
	add_line(f, 38, "with\\040space", "fuse.nvmefs", "nvmefs:nqn.old", "rw,user_id=1000,group_id=1000");
	ck_assert_int_eq(fclose(f), 0);

	write_file("one", "info", INFO_ONE_PATH);
	write_file("one", "stats", STATS_ONE_PATH);
	write_file("two", "info", INFO_TWO_PATHS);
	write_file("two", "stats", STATS_TWO_PATHS);
	write_file("gone", NULL, NULL);
	write_file("stuck", NULL, NULL);
	{
		char fifo[PATH_MAX];

		snprintf(fifo, sizeof(fifo), "%s/stuck/info", dir);
		ck_assert_int_eq(mkfifo(fifo, 0644), 0);
	}
	write_file("garbage", "info", "{\"subnqn\":");
	write_file("garbage", "stats", STATS_ONE_PATH);
	write_file("other", "info", INFO_ONE_PATH);
	write_file("other", "stats", STATS_ONE_PATH);
	write_file("shared", "info", INFO_ONE_PATH);
	write_file("shared", "stats", STATS_ONE_PATH);
	write_file("with space", "info", INFO_OLD);
	write_file("with space", "stats", STATS_ONE_PATH);
}

static void teardown(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static const struct list_mount *find(const struct list_mount *m, size_t nr, const char *sub)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, sub);
	for (size_t i = 0; i < nr; i++)
		if (!strcmp(m[i].mountpoint, path))
			return &m[i];
	return NULL;
}

static double seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A user sees its own mounts and allow_other ones, in mountinfo's order, nothing else. */
START_TEST(test_which_mounts)
{
	struct list_mount *m;
	size_t nr;

	ck_assert_int_eq(list_mounts(mountinfo, 1000, 300, &m, &nr), 0);
	ck_assert_uint_eq(nr, 7);
	ck_assert_ptr_eq(find(m, nr, "one"), &m[0]);
	ck_assert_ptr_eq(find(m, nr, "with space"), &m[6]);
	ck_assert_ptr_null(find(m, nr, "other"));
	ck_assert_ptr_null(find(m, nr, "sshfs"));
	ck_assert_ptr_nonnull(find(m, nr, "shared"));
	list_mounts_free(m, nr);

	ck_assert_int_eq(list_mounts(mountinfo, 0, 300, &m, &nr), 0);
	ck_assert_uint_eq(nr, 8);
	ck_assert_ptr_nonnull(find(m, nr, "other"));
	list_mounts_free(m, nr);

	ck_assert_int_eq(list_mounts(mountinfo, 3000, 300, &m, &nr), 0);
	ck_assert_uint_eq(nr, 1);
	ck_assert_ptr_eq(find(m, nr, "shared"), &m[0]);
	list_mounts_free(m, nr);
}
END_TEST

START_TEST(test_one_path)
{
	const struct list_mount *one;
	struct list_mount *m;
	size_t nr;

	ck_assert_int_eq(list_mounts(mountinfo, 1000, 300, &m, &nr), 0);
	one = find(m, nr, "one");
	ck_assert_ptr_nonnull(one);
	ck_assert_int_eq(one->error, 0);
	ck_assert_str_eq(one->subnqn, "nqn.2026-11.io.nvmefs.testbed:sub1");
	ck_assert_str_eq(one->state, "live");
	ck_assert_ptr_null(one->iopolicy);
	ck_assert_uint_eq(one->nr_paths, 1);
	ck_assert_str_eq(one->paths[0].trtype, "rdma");
	ck_assert_str_eq(one->paths[0].traddr, "198.18.0.1");
	ck_assert_str_eq(one->paths[0].trsvcid, "4420");
	ck_assert_ptr_null(one->paths[0].state);
	ck_assert_uint_eq(one->nr_ns, 2);
	ck_assert_str_eq(one->ns[1].file, "n2");
	ck_assert_uint_eq(one->ns[1].nsid, 2);
	ck_assert_uint_eq(one->ns[0].size, 67108864);
	ck_assert_uint_eq(one->reads, 16);
	ck_assert_uint_eq(one->writes, 32);
	ck_assert_uint_eq(one->read_bytes, 1048576);
	ck_assert_uint_eq(one->write_bytes, 2097152);
	ck_assert_uint_eq(one->errors, 1);
	list_mounts_free(m, nr);
}
END_TEST

START_TEST(test_two_paths)
{
	const struct list_mount *two;
	struct list_mount *m;
	size_t nr;

	ck_assert_int_eq(list_mounts(mountinfo, 1000, 300, &m, &nr), 0);
	two = find(m, nr, "two");
	ck_assert_ptr_nonnull(two);
	ck_assert_int_eq(two->error, 0);
	ck_assert_str_eq(two->iopolicy, "round-robin");
	ck_assert_uint_eq(two->nr_paths, 2);
	ck_assert_str_eq(two->paths[1].trtype, "tcp");
	ck_assert_str_eq(two->paths[1].traddr, "10.0.0.2");
	ck_assert_str_eq(two->paths[1].trsvcid, "4421");
	ck_assert_str_eq(two->paths[0].state, "live");
	ck_assert_str_eq(two->paths[1].state, "connecting");
	list_mounts_free(m, nr);
}
END_TEST

/* An info file of an nvmefs before 0.2: no trtype, no namespaces; still listed. */
START_TEST(test_older_info)
{
	const struct list_mount *old;
	struct list_mount *m;
	size_t nr;

	ck_assert_int_eq(list_mounts(mountinfo, 1000, 300, &m, &nr), 0);
	old = find(m, nr, "with space");
	ck_assert_ptr_nonnull(old);
	ck_assert_int_eq(old->error, 0);
	ck_assert_uint_eq(old->nr_paths, 1);
	ck_assert_ptr_null(old->paths[0].trtype);
	ck_assert_uint_eq(old->nr_ns, 0);
	list_mounts_free(m, nr);
}
END_TEST

/* Mounts that do not answer, or answer nonsense, are listed with why, in bounded time. */
START_TEST(test_errors)
{
	const struct list_mount *gone, *stuck, *garbage;
	struct list_mount *m;
	double t0 = seconds();
	size_t nr;

	ck_assert_int_eq(list_mounts(mountinfo, 1000, 300, &m, &nr), 0);
	ck_assert_double_lt(seconds() - t0, 3.0);
	gone = find(m, nr, "gone");
	stuck = find(m, nr, "stuck");
	garbage = find(m, nr, "garbage");
	ck_assert_ptr_nonnull(gone);
	ck_assert_ptr_nonnull(stuck);
	ck_assert_ptr_nonnull(garbage);
	ck_assert_int_eq(gone->error, -ENOENT);
	ck_assert_int_eq(stuck->error, -ETIMEDOUT);
	ck_assert_int_eq(garbage->error, -EBADMSG);
	/* The NQN comes from the mount's source while its files say nothing. */
	ck_assert_str_eq(stuck->subnqn, "nqn.stuck");
	ck_assert_ptr_null(stuck->state);
	ck_assert_uint_eq(garbage->nr_paths, 0);
	ck_assert_ptr_nonnull(strstr(list_error_text(-ENOTCONN), "fusermount3 -u"));
	list_mounts_free(m, nr);
}
END_TEST

START_TEST(test_no_mountinfo)
{
	struct list_mount *m;
	size_t nr;

	ck_assert_int_eq(list_mounts("/nonexistent/mountinfo", 0, 300, &m, &nr), -ENOENT);
}
END_TEST

static Suite *list_suite(void)
{
	Suite *s = suite_create("list");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_which_mounts);
	tcase_add_test(tc, test_one_path);
	tcase_add_test(tc, test_two_paths);
	tcase_add_test(tc, test_older_info);
	tcase_add_test(tc, test_errors);
	tcase_add_test(tc, test_no_mountinfo);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(list_suite(), CK_NORMAL);
}
