/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Creating, reconnecting and deleting a controller's I/O queues: each one's
 * transport, Connect, descriptors, registered pool and I/O records, made
 * once (io.c and the io_*.c files beside it are the I/O path over them).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <nvme/util.h>

#include "io_queues.h"
#include "ioq.h"
#include "namespaces.h"
#include "../base/error.h"
#include "../ctrl/admin.h"
#include "../ctrl/admin_cmds.h"
#include "../ctrl/ana.h"
#include "../ctrl/fabrics.h"
#include "../state/ctrl_state.h"
#include "../types/ctrl_types.h"
#include "../transport/mr.h"
#include "../transport/queue.h"
#include "../types/transport_ops.h"

/* Connect data is the largest command payload an I/O queue sends from its
 * own slots (Dataset Management ranges are 16 bytes). */
#define IO_DATA_SLOT_SIZE 1024
/* A keyed SGL describes at most 2^24 - 1 bytes: stay at a power of two. */
#define SGL_MAX_XFER (8u << 20)
#define MAX_IO_QUEUES 256
/* Pauses before a Connect goes again for a qid the controller still has. */
#define HELD_FIRST_PAUSE_MS 10
#define HELD_MAX_PAUSE_MS 500

void nvmefs_io_opts_init(struct nvmefs_io_opts *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->nr_queues = 1;
	opts->queue_size = NVMEFS_DEFAULT_IO_QUEUE_SIZE;
	opts->buf_size = NVMEFS_DEFAULT_IO_BUF_SIZE;
	opts->timeout_ms = NVMEFS_DEFAULT_IO_TIMEOUT_MS;
}

/* Watches the transport's descriptors from the queue's lasting epoll set. */
static int ioq_watch(struct nvmefs_ioq *ioq, bool on)
{
	const struct nvmefs_transport_ops *ops = ioq->ctrl->ops;
	int fds[2] = { ops->queue_fd(&ioq->q), ops->queue_event_fd ? ops->queue_event_fd(&ioq->q) : -1 };
	struct epoll_event ev = { .events = EPOLLIN };

	for (unsigned int i = 0; i < 2; i++) {
		if (fds[i] < 0)
			continue;
		if (epoll_ctl(ioq->epfd, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, fds[i], on ? &ev : NULL) &&
		    on)
			return nvmefs_error(-errno, "I/O queue %u: watching its descriptors failed: %s",
					    ioq->q.qid, strerror(errno));
	}
	return 0;
}

/* Tears down the queue's transport; the queue can be connected again.  Its
 * request slots point into what the transport freed: it stays failed until
 * a Connect on a new transport gets through. */
static void ioq_disconnect(struct nvmefs_ioq *ioq)
{
	if (!ioq->q.tp)
		return;
	ioq_watch(ioq, false);
	ioq->ctrl->ops->queue_destroy(&ioq->q);
	nvmefs_queue_fail(&ioq->q, -ENOTCONN);
	ioq->q.stopped = true;
}

/* Creates the queue's transport and sends Connect, with the controller's
 * current controller id.  A queue being connected again stays failed until
 * its transport exists: only Connect goes out before it is usable. */
static int ioq_connect(struct nvmefs_ioq *ioq)
{
	struct nvmefs_ctrl *ctrl = ioq->ctrl;
	struct nvmefs_queue_params params = {
		.qid = ioq->q.qid,
		.size = ioq->size,
		.cntlid = ctrl->cntlid,
		.data_slot_size = IO_DATA_SLOT_SIZE,
	};
	int ret;

	ioq->q.sq_head = ioq->q.sq_tail = 0;
	ret = ctrl->ops->queue_create(&ioq->q, &params);
	if (ret < 0)
		return ret;
	ioq->q.failed = 0;
	ioq->q.stopped = false;
	ret = ioq_watch(ioq, true);
	if (ret == 0)
		ret = nvmefs_fabrics_connect(ctrl, &ioq->q, 0);
	if (ret < 0)
		ioq_disconnect(ioq);
	return ret;
}

/*
 * ioq_connect() for a queue being created.  Its qid may be one the
 * controller has not let go of yet, if the queues were deleted a moment
 * ago: Linux's target releases a disconnected queue from a work item and
 * until then answers a Connect for its qid with Command Sequence Error.
 * The Connect goes again, on a new transport, after pauses that add up to
 * at most the Connect timeout.  (A reconnect's Connect goes to a new
 * controller, whose qids are all free.)
 */
static int ioq_connect_first(struct nvmefs_ioq *ioq)
{
	const struct nvmefs_ctrl *ctrl = ioq->ctrl;
	unsigned int waited = 0, pause = HELD_FIRST_PAUSE_MS;
	int ret;

	while ((ret = ioq_connect(ioq)) == -EADDRINUSE && waited < ctrl->opts.timeout_ms) {
		usleep(pause * 1000);
		waited += pause;
		pause = pause * 2 < HELD_MAX_PAUSE_MS ? pause * 2 : HELD_MAX_PAUSE_MS;
	}
	if (ret == -EADDRINUSE && waited)
		return nvmefs_error(ret, "Connect of queue %u to %s at %s failed: the controller still "
				    "has a queue %u (Command Sequence Error) %u ms later: it has not "
				    "let go of an earlier connection's; try again later",
				    ioq->q.qid, ctrl->subnqn, nvmefs_ctrl_where(ctrl), ioq->q.qid,
				    waited);
	return ret;
}

static void ioq_destroy(struct nvmefs_ioq *ioq)
{
	if (!ioq)
		return;
	ioq_disconnect(ioq);
	nvmefs_queue_fini(&ioq->q);
	nvmefs_mr_free(ioq->pool_mr);
	if (ioq->epfd >= 0)
		close(ioq->epfd);
	if (ioq->wake_fd >= 0)
		close(ioq->wake_fd);
	free(ioq->pool);
	free(ioq->free_bufs);
	free(ioq->ios);
	pthread_mutex_destroy(&ioq->mail_lock);
	free(ioq);
}

static int ioq_create(struct nvmefs_ctrl *ctrl, uint16_t qid, const struct nvmefs_io_opts *opts,
		      struct nvmefs_ioq **ioqp)
{
	struct nvmefs_queue_params params = {
		.qid = qid,
		.size = (uint16_t)opts->queue_size,
	};
	struct epoll_event wake = { .events = EPOLLIN };
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct nvmefs_ioq *ioq;
	unsigned int i;
	int ret;

	ioq = calloc(1, sizeof(*ioq));
	if (!ioq)
		return nvmefs_error(-ENOMEM, "out of memory");
	ioq->ctrl = ctrl;
	ioq->size = params.size;
	pthread_mutex_init(&ioq->mail_lock, NULL);
	ioq->epfd = epoll_create1(EPOLL_CLOEXEC);
	ioq->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	atomic_init(&ioq->stopped_gen, atomic_load(&ctrl->gen));
	ioq->wake_seen = atomic_load(&ctrl->wake_seq);
	if (ioq->epfd < 0 || ioq->wake_fd < 0 ||
	    epoll_ctl(ioq->epfd, EPOLL_CTL_ADD, ioq->wake_fd, &wake)) {
		ret = nvmefs_error(-errno, "I/O queue %u: creating its descriptors failed: %s", qid,
				   strerror(errno));
		goto fail;
	}
	ret = nvmefs_queue_init(&ioq->q, ctrl, &params);
	if (ret < 0)
		goto fail;
	ret = ioq_connect_first(ioq);
	if (ret < 0)
		goto fail;
	ioq->q.timeout_ms = opts->timeout_ms;

	/* As many I/Os as commands can be in flight: more could not go out. */
	ioq->ios = calloc(ioq->q.nr_reqs, sizeof(*ioq->ios));
	ioq->buf_size = (opts->buf_size + page - 1) / page * page;
	ioq->nr_bufs = opts->bufs_per_queue ? opts->bufs_per_queue : ioq->q.nr_reqs;
	ioq->free_bufs = calloc(ioq->nr_bufs, sizeof(*ioq->free_bufs));
	if (!ioq->ios || !ioq->free_bufs ||
	    posix_memalign((void **)&ioq->pool, page, ioq->buf_size * ioq->nr_bufs)) {
		ret = nvmefs_error(-ENOMEM, "out of memory for %u buffers of %zu bytes on queue %u",
				   ioq->nr_bufs, ioq->buf_size, qid);
		goto fail;
	}
	for (i = 0; i < ioq->q.nr_reqs; i++) {
		ioq->ios[i].next = i + 1 < ioq->q.nr_reqs ? &ioq->ios[i + 1] : NULL;
		ioq->ios[i].owner = ioq;
	}
	ioq->free_ios = ioq->ios;
	ret = nvmefs_mr_new(ctrl, ioq->pool, ioq->buf_size * ioq->nr_bufs, &ioq->pool_mr);
	if (ret < 0)
		goto fail;
	for (i = 0; i < ioq->nr_bufs; i++)
		ioq->free_bufs[i] = ioq->pool + (size_t)(ioq->nr_bufs - 1 - i) * ioq->buf_size;
	ioq->nr_free_bufs = ioq->nr_bufs;
	*ioqp = ioq;
	return 0;
fail:
	ioq_destroy(ioq);
	return ret;
}

/* Asks for @nr I/O queues; the controller may grant fewer, which is an
 * error unless @granted takes the count. */
static int set_nr_queues(struct nvmefs_ctrl *ctrl, unsigned int nr, unsigned int *granted)
{
	union nvmefs_cmd cmd;
	struct nvmefs_cqe cqe;
	unsigned int nsq, ncq;
	int ret;

	nvmefs_sqe_init(&cmd.sqe, nvme_admin_set_features, 0);
	cmd.sqe.cdw10 = nvmefs_cpu_to_le32(NVME_FEAT_FID_NUM_QUEUES);
	cmd.sqe.cdw11 = nvmefs_cpu_to_le32((nr - 1) | (nr - 1) << 16);
	ret = nvmefs_admin_exec(ctrl, &cmd, NULL, 0, NVMEFS_DIR_NONE, &cqe);
	if (ret == -EREMOTEIO)
		return nvmefs_error(-EIO, "asking %s for %u I/O queues failed: %s", ctrl->subnqn, nr,
				    nvme_status_to_string(nvmefs_cqe_status(&cqe), false));
	if (ret < 0)
		return ret;
	nsq = (nvmefs_cqe_dw0(&cqe) & 0xffff) + 1;
	ncq = (nvmefs_cqe_dw0(&cqe) >> 16) + 1;
	if (granted) {
		*granted = nsq < ncq ? nsq : ncq;
		if (*granted > nr)
			*granted = nr;
		return 0;
	}
	if (nsq < nr || ncq < nr)
		return nvmefs_error(-ENOSPC, "%s grants only %u I/O queues, fewer than the %u asked "
				    "for: ask for at most %u (-i/--nr-io-queues)",
				    ctrl->subnqn, nsq < ncq ? nsq : ncq, nr, nsq < ncq ? nsq : ncq);
	return 0;
}

/*
 * Every I/O queue connected again, or, if the target now grants fewer (as
 * Linux remaps its CPUs onto the hardware queues that remain), the first
 * ones, each of the rest sending its I/O through one of those.
 */
int nvmefs_io_reconnect(struct nvmefs_ctrl *ctrl)
{
	unsigned int granted = 0, i;
	int ret = 0;

	pthread_mutex_lock(&ctrl->io_lock);
	if (!ctrl->nr_ioqs)
		goto out;
	ret = set_nr_queues(ctrl, ctrl->nr_ioqs, &granted);
	if (ret == 0)
		ret = nvmefs_io_recheck_namespaces(ctrl);
	for (i = 0; ret == 0 && i < ctrl->nr_ioqs; i++) {
		struct nvmefs_ioq *ioq = ctrl->ioqs[i];

		if (i < granted) {
			ret = ioq_connect(ioq);
			atomic_store(&ioq->host, NULL);
		} else {
			ioq->q.failed = -ENOTCONN;
			atomic_store(&ioq->host, ctrl->ioqs[i % granted]);
		}
	}
	if (ret == 0)
		ctrl->nr_connected_ioqs = granted;
out:
	pthread_mutex_unlock(&ctrl->io_lock);
	return ret;
}

void nvmefs_io_disconnect(struct nvmefs_ctrl *ctrl)
{
	pthread_mutex_lock(&ctrl->io_lock);
	for (unsigned int i = 0; i < ctrl->nr_ioqs; i++)
		ioq_disconnect(ctrl->ioqs[i]);
	pthread_mutex_unlock(&ctrl->io_lock);
}

bool nvmefs_io_all_stopped(struct nvmefs_ctrl *ctrl, unsigned int gen)
{
	bool all = true;

	pthread_mutex_lock(&ctrl->io_lock);
	for (unsigned int i = 0; all && i < ctrl->nr_ioqs; i++)
		all = atomic_load(&ctrl->ioqs[i]->stopped_gen) == gen;
	pthread_mutex_unlock(&ctrl->io_lock);
	return all;
}

void nvmefs_io_take_limits(struct nvmefs_ctrl *ctrl, const struct nvme_id_ctrl *id)
{
	/* The target's 32-bit count of 16-byte units, in 64 bits. */
	uint64_t capsule = (uint64_t)nvmefs_le32_to_cpu(id->ioccsz) * 16;
	uint32_t max_xfer, inline_size = 0;

	/* A target reconfigured during an outage may take less than before:
	 * the admin queue's transfers follow its MDTS too. */
	ctrl->id.mdts = id->mdts;
	ctrl->id.ioccsz = id->ioccsz;
	ctrl->id.icdoff = id->icdoff;
	max_xfer = nvmefs_ctrl_limit_xfer(ctrl, SGL_MAX_XFER);
	/* In-capsule data starts right after the SQE only when ICDOFF is 0;
	 * no command carries more data than max_xfer. */
	if (!id->icdoff && capsule > sizeof(struct nvmefs_sqe)) {
		capsule -= sizeof(struct nvmefs_sqe);
		inline_size = capsule < max_xfer ? (uint32_t)capsule : max_xfer;
	}
	atomic_store(&ctrl->max_xfer, max_xfer);
	atomic_store(&ctrl->inline_size, inline_size);
}

/* Entries for every pool buffer's I/O in flight whole: one command per
 * largest transfer of it (@opts->buf_size is not 0), and the one entry a
 * full queue keeps free. */
static unsigned int auto_queue_size(const struct nvmefs_ctrl *ctrl,
				    const struct nvmefs_io_opts *opts, unsigned int mqes)
{
	uint64_t cmds = ctrl->max_xfer ? (opts->buf_size + ctrl->max_xfer - 1) / ctrl->max_xfer : 1;
	uint64_t bufs = opts->bufs_per_queue ? opts->bufs_per_queue : NVMEFS_DEFAULT_IO_QUEUE_SIZE - 1;
	uint64_t size = bufs * cmds + 1;

	return size > mqes ? mqes : (unsigned int)size;
}

/* Whether @nr I/O queues can be asked for: the count is set before the
 * first queue is created. */
static int may_ask(const struct nvmefs_ctrl *ctrl, unsigned int nr)
{
	if (ctrl->discovery)
		return nvmefs_error(-EINVAL, "%s is a discovery controller: it has no I/O queues",
				    ctrl->subnqn);
	if (ctrl->nr_ioqs)
		return nvmefs_error(-EBUSY, "the controller already has %u I/O queues", ctrl->nr_ioqs);
	if (!nr || nr > MAX_IO_QUEUES)
		return nvmefs_error(-EINVAL, "%u I/O queues: ask for 1 to %d", nr, MAX_IO_QUEUES);
	return 0;
}

int nvmefs_ctrl_ask_io_queues(struct nvmefs_ctrl *ctrl, unsigned int nr, unsigned int *granted)
{
	int ret = may_ask(ctrl, nr);

	return ret < 0 ? ret : set_nr_queues(ctrl, nr, granted);
}

int nvmefs_ctrl_create_io_queues(struct nvmefs_ctrl *ctrl, const struct nvmefs_io_opts *given)
{
	unsigned int mqes = (unsigned int)NVME_CAP_MQES(ctrl->cap) + 1;
	struct nvmefs_io_opts chosen = *given, *opts = &chosen;
	struct nvmefs_ioq **ioqs = NULL;
	int *wake_fds = NULL;
	unsigned int i, nr = 0;
	int ret;

	ret = may_ask(ctrl, opts->nr_queues);
	if (ret < 0)
		return ret;
	nvmefs_io_take_limits(ctrl, &ctrl->id);
	if (opts->queue_size == NVMEFS_IO_QUEUE_SIZE_AUTO && opts->buf_size)
		opts->queue_size = auto_queue_size(ctrl, opts, mqes);
	if (opts->queue_size < 2 || opts->queue_size > mqes)
		return nvmefs_error(-EINVAL, "an I/O queue of %u entries: %s takes 2 to %u (CAP.MQES)",
				    opts->queue_size, ctrl->subnqn, mqes);
	if (!opts->buf_size)
		return nvmefs_error(-EINVAL, "pool buffers of 0 bytes");
	if (opts->timeout_ms > NVMEFS_MAX_TIMEOUT_MS)
		return nvmefs_error(-EINVAL, "an I/O timeout of %u ms: give at most %u ms",
				    opts->timeout_ms, NVMEFS_MAX_TIMEOUT_MS);

	ret = nvmefs_ctrl_read_nvm_limits(ctrl);
	if (ret < 0)
		return ret;
	ret = set_nr_queues(ctrl, opts->nr_queues, opts->take_fewer ? &opts->nr_queues : NULL);
	if (ret == 0)
		ret = nvmefs_io_scan_namespaces(ctrl);
	if (ret == 0)
		ret = nvmefs_ana_update(ctrl, true);
	if (ret < 0)
		goto fail;
	ioqs = calloc(opts->nr_queues, sizeof(*ioqs));
	wake_fds = calloc(opts->nr_queues, sizeof(*wake_fds));
	if (!ioqs || !wake_fds) {
		ret = nvmefs_error(-ENOMEM, "out of memory");
		goto fail;
	}
	for (nr = 0; nr < opts->nr_queues; nr++) {
		ret = ioq_create(ctrl, (uint16_t)(nr + 1), opts, &ioqs[nr]);
		if (ret < 0)
			goto fail;
		wake_fds[nr] = ioqs[nr]->wake_fd;
	}
	/* Only whole queues are the recovery's to stop and reconnect. */
	pthread_mutex_lock(&ctrl->io_lock);
	ctrl->ioqs = ioqs;
	ctrl->ioq_wake_fds = wake_fds;
	ctrl->nr_ioqs = nr;
	ctrl->nr_connected_ioqs = nr;
	pthread_mutex_unlock(&ctrl->io_lock);
	return 0;
fail:
	for (i = 0; i < nr; i++)
		ioq_destroy(ioqs[i]);
	free(ioqs);
	free(wake_fds);
	nvmefs_ctrl_delete_io_queues(ctrl);
	return ret;
}

void nvmefs_ctrl_delete_io_queues(struct nvmefs_ctrl *ctrl)
{
	struct nvmefs_ioq **ioqs;
	int *wake_fds;
	unsigned int i, nr;

	struct nvmefs_ns_cache *ns;
	uint32_t *nsids;

	pthread_mutex_lock(&ctrl->io_lock);
	ioqs = ctrl->ioqs;
	wake_fds = ctrl->ioq_wake_fds;
	nr = ctrl->nr_ioqs;
	ns = ctrl->ns;
	nsids = ctrl->nsids;
	ctrl->ioqs = NULL;
	ctrl->ioq_wake_fds = NULL;
	ctrl->nr_ioqs = 0;
	ctrl->nr_connected_ioqs = 0;
	ctrl->ns = NULL;
	ctrl->nsids = NULL;
	ctrl->nr_ns = 0;
	pthread_mutex_unlock(&ctrl->io_lock);
	for (i = 0; ioqs && i < nr; i++)
		ioq_destroy(ioqs[i]);
	free(ioqs);
	free(wake_fds);
	/* Every slot, listed or not yet: a scan that failed half-way fills some. */
	for (i = 0; ns && i < NVMEFS_MAX_NAMESPACES; i++)
		free(ns[i].unusable);
	free(ns);
	free(nsids);
}

unsigned int nvmefs_ctrl_io_queue_count(const struct nvmefs_ctrl *ctrl)
{
	return ctrl->nr_ioqs;
}

struct nvmefs_ioq *nvmefs_ctrl_io_queue(struct nvmefs_ctrl *ctrl, unsigned int idx)
{
	return idx < ctrl->nr_ioqs ? ctrl->ioqs[idx] : NULL;
}
