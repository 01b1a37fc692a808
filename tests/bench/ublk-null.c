/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ublk-null: a ublk block device with no backend, for benchmarks only: reads
 * return zeros, writes and flushes succeed and go nowhere.  What ublk itself
 * costs a request (the floor under `nvmefs ublk add`, as fuse-null is the
 * mount's), served the way nvmefs's devices are: one queue on one thread,
 * its FETCH_REQs and COMMIT_AND_FETCH_REQs from that thread's io_uring, the
 * data moved with user copy (pread/pwrite on /dev/ublkcN, once each way).
 * No CPU pinning: pinning the queue's thread cut QD32 to a sixth in the
 * testbed (issue #37).  The control commands are src/ublk/ctrl.c's.
 *
 *   ublk-null SIZE_MIB [DEPTH [MAX_IO_KIB]]
 *
 * Prints /dev/ublkbN once the device is started; on SIGINT or SIGTERM it
 * stops and deletes the device and exits.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <liburing.h>

#include "../../src/ublk/ublk_priv.h"

static struct {
	int id, cdev;
	unsigned int depth;
	size_t max_io;
	const struct ublksrv_io_desc *iod;
	char *buf;		/* max_io bytes per tag */
	atomic_int fetched;	/* 1 once every tag is fetched; -errno if that failed */
} dev = { .id = -1, .cdev = -1 };

static void io_cmd(struct io_uring *ring, unsigned int op, uint16_t tag, int32_t result)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct ublksrv_io_cmd *c;

	if (!sqe) {
		io_uring_submit(ring);
		sqe = io_uring_get_sqe(ring);
	}
	c = (struct ublksrv_io_cmd *)sqe->cmd;
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, dev.cdev, NULL, 0, 0);
	sqe->cmd_op = op;
	*c = (struct ublksrv_io_cmd){ .q_id = 0, .tag = tag, .result = result };
	io_uring_sqe_set_data64(sqe, tag);
}

/* Request @tag's answer: its bytes, moved as nvmefs's devices move them. */
static int32_t serve(uint16_t tag)
{
	const struct ublksrv_io_desc *d = &dev.iod[tag];
	size_t len = (size_t)d->nr_sectors << 9;
	off_t off = (off_t)(UBLKSRV_IO_BUF_OFFSET + ((uint64_t)tag << UBLK_TAG_OFF));
	char *buf = dev.buf + (size_t)tag * dev.max_io;
	ssize_t n;

	switch (ublksrv_get_op(d)) {
	case UBLK_IO_OP_READ:
		n = len <= dev.max_io ? pwrite(dev.cdev, buf, len, off) : -1;
		break;
	case UBLK_IO_OP_WRITE:
		n = len <= dev.max_io ? pread(dev.cdev, buf, len, off) : -1;
		break;
	case UBLK_IO_OP_FLUSH:
		return 0;
	default:
		return (int32_t)len;
	}
	return n == (ssize_t)len ? (int32_t)len : -EIO;
}

static void *queue_thread(void *arg)
{
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	unsigned int aborted = 0;
	int ret;

	(void)arg;
	ret = io_uring_queue_init(dev.depth, &ring, 0);
	if (ret < 0) {
		atomic_store(&dev.fetched, ret);
		return NULL;
	}
	/* FETCH_REQs come from the thread that commits them. */
	for (unsigned int t = 0; t < dev.depth; t++)
		io_cmd(&ring, UBLK_U_IO_FETCH_REQ, (uint16_t)t, 0);
	ret = io_uring_submit(&ring);
	atomic_store(&dev.fetched, ret < 0 ? ret : 1);
	while (ret >= 0 && aborted < dev.depth) {
		unsigned int head, seen = 0;

		ret = io_uring_submit_and_wait(&ring, 1);
		io_uring_for_each_cqe(&ring, head, cqe) {
			uint16_t tag = (uint16_t)io_uring_cqe_get_data64(cqe);

			seen++;
			if (cqe->res == UBLK_IO_RES_OK)
				io_cmd(&ring, UBLK_U_IO_COMMIT_AND_FETCH_REQ, tag, serve(tag));
			else
				aborted++;	/* UBLK_IO_RES_ABORT: the device is stopping */
		}
		io_uring_cq_advance(&ring, seen);
	}
	io_uring_queue_exit(&ring);
	return NULL;
}

static int fail(const char *what, int err)
{
	fprintf(stderr, "ublk-null: %s failed: %s\n", what, strerror(-err));
	return 1;
}

int main(int argc, char **argv)
{
	struct ublksrv_ctrl_dev_info info = { .nr_hw_queues = 1, .dev_id = (uint32_t)-1,
					      .flags = UBLK_F_USER_COPY | UBLK_F_CMD_IOCTL_ENCODE };
	struct ublk_params p = { .len = sizeof(p), .types = UBLK_PARAM_TYPE_BASIC };
	unsigned long long mib = argc > 1 ? strtoull(argv[1], NULL, 10) : 0;
	unsigned long depth = argc > 2 ? strtoul(argv[2], NULL, 10) : 64;
	unsigned long max_kib = argc > 3 ? strtoul(argv[3], NULL, 10) : 128;
	char path[32];
	size_t iod_len = 0;
	pthread_t thread;
	sigset_t sigs;
	int ret, sig;

	if (!mib || mib > (1ull << 30) || !depth || depth > UBLK_MAX_QUEUE_DEPTH || max_kib < 4 ||
	    max_kib > 1024 || max_kib % 4) {
		fprintf(stderr, "usage: ublk-null SIZE_MIB [DEPTH (1-%d) [MAX_IO_KIB (4-1024, a "
			"multiple of 4)]]\n", UBLK_MAX_QUEUE_DEPTH);
		return 2;
	}
	dev.depth = (unsigned int)depth;
	dev.max_io = max_kib << 10;
	info.queue_depth = (uint16_t)depth;
	info.max_io_buf_bytes = (uint32_t)dev.max_io;
	info.ublksrv_pid = getpid();
	p.basic = (struct ublk_param_basic){ .logical_bs_shift = 9, .physical_bs_shift = 12,
					     .io_min_shift = 12, .io_opt_shift = 12,
					     .max_sectors = (uint32_t)(dev.max_io >> 9),
					     .dev_sectors = mib << 11 };
	dev.buf = aligned_alloc(4096, depth * dev.max_io);
	if (!dev.buf)
		return fail("allocating the buffers", -ENOMEM);
	memset(dev.buf, 0, depth * dev.max_io);
	ret = ublk_ctrl_cmd(UBLK_U_CMD_ADD_DEV, -1, &info, sizeof(info), 0);
	if (ret < 0)
		return fail("ADD_DEV (modprobe ublk_drv, and run as root)", ret);
	dev.id = (int)info.dev_id;
	ret = ublk_ctrl_cmd(UBLK_U_CMD_SET_PARAMS, dev.id, &p, sizeof(p), 0);
	if (ret < 0)
		goto out;
	snprintf(path, sizeof(path), "/dev/ublkc%d", dev.id);
	for (int i = 0; i < 100 && dev.cdev < 0; i++) {
		dev.cdev = open(path, O_RDWR | O_CLOEXEC);
		if (dev.cdev < 0)
			usleep(10000);
	}
	ret = dev.cdev < 0 ? -errno : 0;
	if (ret < 0)
		goto out;
	iod_len = ((depth * sizeof(struct ublksrv_io_desc)) + 4095) & ~(size_t)4095;
	dev.iod = mmap(NULL, iod_len, PROT_READ, MAP_SHARED | MAP_POPULATE, dev.cdev,
		       UBLKSRV_CMD_BUF_OFFSET);
	if (dev.iod == MAP_FAILED) {
		ret = -errno;
		goto out;
	}
	/* The signals go to sigwait() below, not to the queue's thread. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	ret = -pthread_create(&thread, NULL, queue_thread, NULL);
	if (ret < 0)
		goto out;
	/* START_DEV waits until every tag is fetched, and its partition scan reads through
	 * the queue: it goes from here, once the queue's thread has fetched them. */
	while (!(ret = atomic_load(&dev.fetched)))
		usleep(1000);
	if (ret > 0)
		ret = ublk_ctrl_cmd(UBLK_U_CMD_START_DEV, dev.id, NULL, 0, (uint64_t)getpid());
	if (ret == 0) {
		printf("/dev/ublkb%d\n", dev.id);
		fflush(stdout);
		sigwait(&sigs, &sig);
	}
	/* Stopping aborts the fetches: the thread ends, and with the char device closed the
	 * device can be deleted. */
	ublk_ctrl_cmd(UBLK_U_CMD_STOP_DEV, dev.id, NULL, 0, 0);
	pthread_join(thread, NULL);
out:
	if (ret < 0)
		fprintf(stderr, "ublk-null: serving ublkb%d failed: %s\n", dev.id, strerror(-ret));
	if (dev.iod && dev.iod != MAP_FAILED)
		munmap((void *)dev.iod, iod_len);
	if (dev.cdev >= 0)
		close(dev.cdev);
	ublk_ctrl_cmd(UBLK_U_CMD_DEL_DEV, dev.id, NULL, 0, 0);
	free(dev.buf);
	return ret < 0;
}
