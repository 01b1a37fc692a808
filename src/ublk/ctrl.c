/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The ublk control device: its commands go through an io_uring of 128-byte
 * entries (the command lives in the entry), one at a time.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <liburing.h>

#include "ublk_priv.h"

int ublk_ctrl_cmd(unsigned int op, int dev_id, void *buf, size_t len, uint64_t data0)
{
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	struct ublksrv_ctrl_cmd *c;
	int fd, ret;

	fd = open("/dev/ublk-control", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = io_uring_queue_init(2, &ring, IORING_SETUP_SQE128);
	if (ret < 0)
		goto out;
	sqe = io_uring_get_sqe(&ring);
	/* The command fills the entry's second half (IORING_SETUP_SQE128). */
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, fd, NULL, 0, 0);
	sqe->cmd_op = op;
	c = (struct ublksrv_ctrl_cmd *)sqe->cmd;
	*c = (struct ublksrv_ctrl_cmd){
		.dev_id = (uint32_t)dev_id,
		.queue_id = (uint16_t)-1,
		.addr = (uint64_t)(uintptr_t)buf,
		.len = (uint16_t)len,
		.data = { data0 },
	};
	ret = io_uring_submit_and_wait(&ring, 1);
	if (ret >= 0)
		ret = io_uring_wait_cqe(&ring, &cqe);
	if (ret >= 0) {
		ret = cqe->res;
		io_uring_cqe_seen(&ring, cqe);
	}
	io_uring_queue_exit(&ring);
out:
	close(fd);
	return ret < 0 ? ret : 0;
}

int nvmefs_ublk_dev_info(int id, struct nvmefs_ublk_info *info)
{
	struct ublksrv_ctrl_dev_info di;
	int ret;

	memset(&di, 0, sizeof(di));
	ret = ublk_ctrl_cmd(UBLK_U_CMD_GET_DEV_INFO, id, &di, sizeof(di), 0);
	if (ret < 0)
		return ret;
	info->id = (int)di.dev_id;
	info->nr_queues = di.nr_hw_queues;
	info->depth = di.queue_depth;
	info->state = di.state;
	info->pid = di.ublksrv_pid;
	info->flags = di.flags;
	return 0;
}

int nvmefs_ublk_dev_del(int id)
{
	int ret = ublk_ctrl_cmd(UBLK_U_CMD_STOP_DEV, id, NULL, 0, 0);

	if (ret < 0 && ret != -ENODEV)
		return ret;
	return ublk_ctrl_cmd(UBLK_U_CMD_DEL_DEV, id, NULL, 0, 0);
}
