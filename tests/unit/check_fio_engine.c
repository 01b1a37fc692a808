/*
 * The fio engine (src/fio/engine.c) against stand-ins for libnvmefs and for the three functions
 * of fio's that it calls: what it refuses before a job runs (options it needs, sizes and offsets
 * the namespace cannot take, a namespace it cannot serve), its option table as fio reads it, and
 * how getevents waits: never while completions fio has not taken are already there, so that a
 * job at depth reaping one event a call (fio's default) is not held up a sleep per I/O.
 *
 * The engine's file is compiled into this program, as the engine is built, against fio's headers
 * (configure --with-fio), so that its static functions and option struct are in reach.
 */
#include <stdarg.h>

#include "../../src/fio/engine.c"

#include <check.h>

#include "test_util.h"

/* ---- fio's functions ---------------------------------------------------------------------- */

static char logged[4096];
static unsigned int log_lines;

ssize_t log_err(const char *format, ...)
{
	size_t len = strlen(logged);
	va_list ap;
	int n;

	va_start(ap, format);
	n = vsnprintf(logged + len, sizeof(logged) - len, format, ap);
	va_end(ap);
	log_lines++;
	return n;
}

void fio_gettime(struct timespec *ts, void *unused)
{
	(void)unused;
	clock_gettime(CLOCK_MONOTONIC, ts);
}

uint64_t mtime_since_now(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)((now.tv_sec - start->tv_sec) * 1000 + (now.tv_nsec - start->tv_nsec) / 1000000);
}

/* ---- libnvmefs, scripted ------------------------------------------------------------------ */

/* The namespace the stand-in controller serves, and what a test lets it fail. */
static struct nvmefs_ns_info ns_served = { .nsid = 1, .nlb = 1 << 20, .lba_size = 512 };
static int connect_ret, ns_ret;
static struct nvmefs_ctrl *const fake_ctrl = (struct nvmefs_ctrl *)&ns_served;
static struct nvmefs_ioq *const fake_ioq = (struct nvmefs_ioq *)&ns_ret;

/* I/O submitted and not completed: the callbacks poll runs. */
#define MAX_SUBMITTED 64
static struct {
	nvmefs_io_cb cb;
	void *arg;
} submitted[MAX_SUBMITTED];
static unsigned int nr_submitted;
/* How many of the submitted the next poll completes, and the timeouts polls were given. */
static unsigned int complete_next;
static int poll_timeouts[64];
static unsigned int nr_polls;

void nvmefs_connect_opts_init(struct nvmefs_connect_opts *opts)
{
	memset(opts, 0, sizeof(*opts));
}

int nvmefs_ctrl_connect(const struct nvmefs_connect_opts *opts, struct nvmefs_ctrl **ctrl)
{
	(void)opts;
	if (connect_ret)
		return connect_ret;
	*ctrl = fake_ctrl;
	return 0;
}

void nvmefs_ctrl_disconnect(struct nvmefs_ctrl *ctrl)
{
	(void)ctrl;
}

/* A table of three, so that a help text written by hand for two shows. */
const char *nvmefs_transport_name(unsigned int i)
{
	static const char *const names[] = { "rdma", "tcp", "loop" };

	return i < sizeof(names) / sizeof(names[0]) ? names[i] : NULL;
}

const char *nvmefs_errmsg(void)
{
	return "the stand-in says no";
}

void nvmefs_io_opts_init(struct nvmefs_io_opts *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->queue_size = NVMEFS_DEFAULT_IO_QUEUE_SIZE;
}

int nvmefs_ctrl_create_io_queues(struct nvmefs_ctrl *ctrl, const struct nvmefs_io_opts *opts)
{
	(void)ctrl;
	ck_assert_uint_eq(opts->nr_queues, 1);
	return 0;
}

struct nvmefs_ioq *nvmefs_ctrl_io_queue(struct nvmefs_ctrl *ctrl, unsigned int idx)
{
	(void)ctrl;
	return idx ? NULL : fake_ioq;
}

int nvmefs_ns_info(const struct nvmefs_ctrl *ctrl, uint32_t nsid, struct nvmefs_ns_info *info)
{
	(void)ctrl;
	if (ns_ret)
		return ns_ret;
	*info = ns_served;
	info->nsid = nsid;
	return 0;
}

int nvmefs_mr_reg(struct nvmefs_ctrl *ctrl, void *addr, size_t len, struct nvmefs_mr **mr)
{
	(void)ctrl;
	(void)addr;
	(void)len;
	*mr = NULL;
	return 0;
}

void nvmefs_mr_dereg(struct nvmefs_mr *mr)
{
	(void)mr;
}

static int submit(nvmefs_io_cb cb, void *arg)
{
	if (nr_submitted == MAX_SUBMITTED)
		return -EAGAIN;
	submitted[nr_submitted].cb = cb;
	submitted[nr_submitted].arg = arg;
	nr_submitted++;
	return 0;
}

int nvmefs_ioq_read(struct nvmefs_ioq *ioq, uint32_t nsid, uint64_t slba, uint32_t nlb, void *buf,
		    nvmefs_io_cb cb, void *arg)
{
	(void)ioq, (void)nsid, (void)slba, (void)nlb, (void)buf;
	return submit(cb, arg);
}

int nvmefs_ioq_write(struct nvmefs_ioq *ioq, uint32_t nsid, uint64_t slba, uint32_t nlb,
		     const void *buf, nvmefs_io_cb cb, void *arg)
{
	(void)ioq, (void)nsid, (void)slba, (void)nlb, (void)buf;
	return submit(cb, arg);
}

int nvmefs_ioq_deallocate(struct nvmefs_ioq *ioq, uint32_t nsid, uint64_t slba, uint64_t nlb,
			  nvmefs_io_cb cb, void *arg)
{
	(void)ioq, (void)nsid, (void)slba, (void)nlb;
	return submit(cb, arg);
}

int nvmefs_ioq_flush(struct nvmefs_ioq *ioq, uint32_t nsid, nvmefs_io_cb cb, void *arg)
{
	(void)ioq, (void)nsid;
	return submit(cb, arg);
}

/* Completes the oldest complete_next of what is submitted, as the library's poll calls back. */
int nvmefs_ioq_poll(struct nvmefs_ioq *ioq, int timeout_ms)
{
	unsigned int n = complete_next < nr_submitted ? complete_next : nr_submitted, i;

	ck_assert_ptr_eq(ioq, fake_ioq);
	if (nr_polls < sizeof(poll_timeouts) / sizeof(poll_timeouts[0]))
		poll_timeouts[nr_polls] = timeout_ms;
	nr_polls++;
	for (i = 0; i < n; i++)
		submitted[i].cb(submitted[i].arg, 0);
	memmove(submitted, submitted + n, (nr_submitted - n) * sizeof(submitted[0]));
	nr_submitted -= n;
	complete_next -= n;
	return (int)n;
}

/* ---- a job --------------------------------------------------------------------------------- */

static struct thread_data *td;
static struct engine_opts *eo;
static struct io_u ios[MAX_SUBMITTED];

static void setup(void)
{
	td = calloc(1, sizeof(*td));
	eo = calloc(1, sizeof(*eo));
	ck_assert(td && eo);
	td->eo = eo;
	td->o.name = "job";
	td->o.iodepth = 32;
	td->o.td_ddir = TD_DDIR_RANDRW;
	for (unsigned int d = DDIR_READ; d <= DDIR_TRIM; d++)
		td->o.min_bs[d] = td->o.max_bs[d] = td->o.ba[d] = 4096;
	eo->traddr = "198.18.0.1";
	eo->nqn = "nqn.2026-11.io.nvmefs:test";
	eo->nsid = 1;
	ns_served.lba_size = 512;
	ns_served.nlb = 1 << 20;
	connect_ret = ns_ret = 0;
	nr_submitted = complete_next = nr_polls = 0;
	logged[0] = '\0';
	log_lines = 0;
	memset(ios, 0, sizeof(ios));
}

static void teardown(void)
{
	engine_cleanup(td);
	free(eo);
	free(td);
}

/* A new job, for a test that tries several. */
static void again(void)
{
	teardown();
	setup();
}

/* The job's init fails with one line of the engine's that has @needle. */
static void assert_init_refused(const char *needle)
{
	ck_assert_int_eq(engine_init(td), 1);
	ck_assert_ptr_null(td->io_ops_data);
	ck_assert_uint_eq(log_lines, 1);
	ck_assert_msg(strstr(logged, needle) && !strncmp(logged, "nvmefs: job job: ", 17),
		      "the engine said '%s', not one line with '%s'", logged, needle);
}

static void queue_reads(unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		ios[i].ddir = DDIR_READ;
		ios[i].offset = (unsigned long long)i * 4096;
		ios[i].xfer_buflen = 4096;
		ck_assert_int_eq(engine_queue_io(td, &ios[i]), FIO_Q_QUEUED);
	}
}

/* ---- option validation --------------------------------------------------------------------- */

START_TEST(test_init_serves)
{
	ck_assert_int_eq(engine_init(td), 0);
	ck_assert_ptr_nonnull(td->io_ops_data);
	ck_assert_uint_eq(log_lines, 0);
}
END_TEST

START_TEST(test_required_options)
{
	static const char needle[] = "traddr=, nqn= and nsid= are required";

	eo->traddr = NULL;
	assert_init_refused(needle);
	again();
	eo->nqn = NULL;
	assert_init_refused(needle);
	again();
	eo->nsid = 0;
	assert_init_refused(needle);
}
END_TEST

START_TEST(test_connect_and_namespace_refused)
{
	connect_ret = -ECONNREFUSED;
	assert_init_refused("connecting to 198.18.0.1: the stand-in says no");
	again();
	ns_ret = -ENOENT;
	assert_init_refused("the stand-in says no");
	again();
	ns_served.lba_size = 520;
	assert_init_refused("520-byte blocks: only a power of two");
	again();
	ns_served.lba_size = 256;
	assert_init_refused("256-byte blocks");
}
END_TEST

/* Each direction the job does is checked against the block, and only those. */
START_TEST(test_sizes_refused)
{
	ns_served.lba_size = 4096;
	td->o.min_bs[DDIR_WRITE] = 512;
	assert_init_refused("write sizes 512 to 4096 (blockalign 4096) are not whole 4096-byte");
	again();
	ns_served.lba_size = 4096;
	td->o.td_ddir = TD_DDIR_RANDREAD;
	td->o.min_bs[DDIR_WRITE] = 512;
	ck_assert_int_eq(engine_init(td), 0);
	again();
	ns_served.lba_size = 4096;
	td->o.td_ddir = TD_DDIR_RANDTRIM;
	td->o.ba[DDIR_TRIM] = 2048;
	assert_init_refused("trim sizes");
	again();
	ns_served.lba_size = 4096;
	td->o.start_offset = 1024;
	assert_init_refused("offset 1024 (increment 0) is not on a 4096-byte block");
	again();
	ns_served.lba_size = 4096;
	td->o.offset_increment = 6144;
	assert_init_refused("increment 6144");
}
END_TEST

/* A namespace whose size in bytes does not fit in 64 bits is the target's error, not a job. */
START_TEST(test_size_overflow_refused)
{
	struct fio_file file = { .file_name = "ns1" }, *files[1] = { &file };

	ck_assert_int_eq(engine_init(td), 0);
	td->files = files;
	td->o.nr_files = td->files_index = 1;
	ck_assert_int_eq(engine_setup(td), 0);
	ck_assert_uint_eq(file.real_file_size, (1ull << 20) * 512);
	ns_served.nlb = UINT64_MAX / 256;
	ck_assert_int_eq(engine_setup(td), 1);
	ck_assert_msg(strstr(logged, "more than 2^64 bytes"), "the engine said '%s'", logged);
	td->files = NULL;
	td->o.nr_files = td->files_index = 0;
}
END_TEST

/* An I/O that is not whole blocks fails alone, with EINVAL, and goes nowhere. */
START_TEST(test_io_not_whole_blocks)
{
	ck_assert_int_eq(engine_init(td), 0);
	ios[0].ddir = DDIR_READ;
	ios[0].offset = 100;
	ios[0].xfer_buflen = 4096;
	ck_assert_int_eq(engine_queue_io(td, &ios[0]), FIO_Q_COMPLETED);
	ck_assert_int_eq(ios[0].error, EINVAL);
	ck_assert_uint_eq(nr_submitted, 0);
}
END_TEST

/* What fio reads of the table: every option is the engine's, with help, inside the struct. */
START_TEST(test_option_table)
{
	static const char *const names[] = { "transport", "traddr", "trsvcid", "host-traddr", "nqn",
		"hostnqn", "hostid", "dhchap-secret", "dhchap-ctrl-secret", "nsid", "completions" };
	unsigned int i;

	for (i = 0; options[i].name; i++) {
		ck_assert_str_eq(options[i].name, names[i]);
		ck_assert_ptr_nonnull(options[i].help);
		ck_assert_int_eq(options[i].category, FIO_OPT_C_ENGINE);
		/* Offset 0 is fio's "unset": no option may sit there. */
		ck_assert_uint_gt(options[i].off1, 0);
		ck_assert_uint_lt(options[i].off1, ioengine.option_struct_size);
	}
	ck_assert_uint_eq(i, sizeof(names) / sizeof(names[0]));
	/* The transports are the library's, the first its default. */
	ck_assert_str_eq(options[0].help,
			 "Transport, as nvme-cli's -t: rdma (the default), tcp or loop");
	ck_assert_ptr_eq(ioengine.options, options);
	ck_assert_uint_eq(ioengine.option_struct_size, sizeof(struct engine_opts));
}
END_TEST

/* ---- completions ---------------------------------------------------------------------------- */

/*
 * fio reaps one event a call by default (iodepth_batch_complete_max is iodepth_batch_complete_min,
 * 1).  Completions a poll brought beyond that wait in the engine, and the next calls hand them
 * over without polling at all: the I/O fio queues in between goes out together at the poll after
 * the last of them is taken, one send for the batch (as iodepth_batch_complete_max=iodepth would
 * give), not a system call per I/O; and never after sleeping for yet another completion.
 */
START_TEST(test_held_completions_handed_without_polling)
{
	eo->completions = COMPLETIONS_EVENT;
	ck_assert_int_eq(engine_init(td), 0);
	queue_reads(8);
	complete_next = 3;
	ck_assert_int_eq(engine_getevents(td, 1, 1, NULL), 1);
	ck_assert_ptr_eq(engine_event(td, 0), &ios[0]);
	ck_assert_uint_eq(nr_polls, 1);
	ck_assert_int_eq(engine_getevents(td, 1, 1, NULL), 1);
	ck_assert_ptr_eq(engine_event(td, 0), &ios[1]);
	ck_assert_int_eq(engine_getevents(td, 1, 1, NULL), 1);
	ck_assert_ptr_eq(engine_event(td, 0), &ios[2]);
	ck_assert_uint_eq(nr_polls, 1);
	/* Nothing held: now the engine polls, and sleeps for the next ones. */
	complete_next = 5;
	ck_assert_int_eq(engine_getevents(td, 2, 5, NULL), 5);
	ck_assert_uint_eq(nr_polls, 2);
	ck_assert_int_gt(poll_timeouts[1], 0);
	for (int i = 0; i < 5; i++)
		ck_assert_ptr_eq(engine_event(td, i), &ios[3 + i]);
}
END_TEST

/* More held than fio takes: up to max a call, in completion order, with no poll between. */
START_TEST(test_held_completions_up_to_max)
{
	ck_assert_int_eq(engine_init(td), 0);
	queue_reads(6);
	complete_next = 6;
	ck_assert_int_eq(engine_getevents(td, 1, 4, NULL), 4);
	ck_assert_ptr_eq(engine_event(td, 3), &ios[3]);
	ck_assert_int_eq(engine_getevents(td, 0, 4, NULL), 2);
	ck_assert_ptr_eq(engine_event(td, 0), &ios[4]);
	ck_assert_ptr_eq(engine_event(td, 1), &ios[5]);
	ck_assert_uint_eq(nr_polls, 1);
}
END_TEST

/* fio asking for more than the engine holds: it polls for the rest, with what it holds kept. */
START_TEST(test_held_fewer_than_min_polls)
{
	eo->completions = COMPLETIONS_EVENT;
	ck_assert_int_eq(engine_init(td), 0);
	queue_reads(4);
	complete_next = 2;
	ck_assert_int_eq(engine_getevents(td, 1, 1, NULL), 1);
	complete_next = 2;
	ck_assert_int_eq(engine_getevents(td, 3, 3, NULL), 3);
	ck_assert_uint_eq(nr_polls, 2);
	for (int i = 0; i < 3; i++)
		ck_assert_ptr_eq(engine_event(td, i), &ios[1 + i]);
}
END_TEST

/* min 0 with a zero timeout is fio asking what is there: one poll that does not sleep. */
START_TEST(test_zero_timeout_does_not_wait)
{
	const struct timespec zero = { 0, 0 };

	eo->completions = COMPLETIONS_EVENT;
	ck_assert_int_eq(engine_init(td), 0);
	queue_reads(2);
	ck_assert_int_eq(engine_getevents(td, 0, 2, &zero), 0);
	ck_assert_uint_eq(nr_polls, 1);
	ck_assert_int_eq(poll_timeouts[0], 0);
	complete_next = 2;
	ck_assert_int_eq(engine_getevents(td, 0, 2, &zero), 2);
}
END_TEST

/* A completion the target failed is fio's error on that I/O alone. */
START_TEST(test_error_status)
{
	ck_assert_int_eq(engine_init(td), 0);
	queue_reads(2);
	submitted[0].cb(submitted[0].arg, 0x281);
	submitted[1].cb(submitted[1].arg, -ECONNRESET);
	nr_submitted = 0;
	ck_assert_int_eq(engine_getevents(td, 2, 2, NULL), 2);
	ck_assert_int_eq(ios[0].error, EIO);
	ck_assert_int_eq(ios[1].error, ECONNRESET);
}
END_TEST

static Suite *fio_engine_suite(void)
{
	Suite *s = suite_create("fio_engine");
	TCase *tc = tcase_create("options");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_init_serves);
	tcase_add_test(tc, test_required_options);
	tcase_add_test(tc, test_connect_and_namespace_refused);
	tcase_add_test(tc, test_sizes_refused);
	tcase_add_test(tc, test_size_overflow_refused);
	tcase_add_test(tc, test_io_not_whole_blocks);
	tcase_add_test(tc, test_option_table);
	suite_add_tcase(s, tc);

	tc = tcase_create("completions");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_held_completions_handed_without_polling);
	tcase_add_test(tc, test_held_completions_up_to_max);
	tcase_add_test(tc, test_held_fewer_than_min_polls);
	tcase_add_test(tc, test_zero_timeout_does_not_wait);
	tcase_add_test(tc, test_error_status);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(fio_engine_suite(), CK_NORMAL);
}
