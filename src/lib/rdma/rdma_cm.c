/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The NVMe/RDMA transport's connection management: address and route
 * resolution, the protection domain, queue pairs, CQs and buffers,
 * connecting and disconnecting, and the operations table.  rdma.c is the
 * data path, rdma_device.c the devices; these rdma*.c files are the only
 * ones that call libibverbs and librdmacm.
 *
 * Each NVMe queue is one RC queue pair with its own CQ, completion channel
 * and RDMA-CM id.  Its buffers are allocated and registered once, when the
 * queue is created: the command capsules and responses (local access only)
 * and one data slot per request (remote read and write, which the target
 * uses to pull Connect data and to push Identify data and log pages).
 * One receive is posted per response buffer and re-posted as soon as its
 * response has been copied out.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "rdma_priv.h"
#include "../base/clock.h"
#include "../base/error.h"
#include "../types/ctrl_types.h"
#include "../transport/mr.h"
#include "../types/transport_ops.h"

/* IB CM REJ reasons (InfiniBand Architecture, table "REJ reason"), which
 * RoCE uses too: nobody listens on the service id (the port), or the
 * listener itself refused and said why in the private data. */
#define CM_REJ_INVALID_SERVICE_ID 8
#define CM_REJ_CONSUMER_DEFINED 28

/* The kernel's IB_WC_WITH_INVALIDATE.  Soft-RoCE hands the kernel's
 * completion flags to user space untranslated, so a Send with Invalidate
 * shows as this bit (libibverbs' IBV_WC_IP_CSUM_OK), never IBV_WC_WITH_INV;
 * on a reliable-connected receive no device means a checksum by it. */
#define WC_KERNEL_WITH_INV (1u << 2)

/* How long a stopped queue pair may take to flush what was posted before it
 * is destroyed instead (soft-RoCE and HCAs flush at once). */
#define FLUSH_TIMEOUT_MS 2000

static int cm_get_event(struct rdma_queue *rq, int timeout_ms,
			struct rdma_cm_event **evp)
{
	struct pollfd pfd = { .fd = rq->ech->fd, .events = POLLIN };
	int ret;

	do
		ret = poll(&pfd, 1, timeout_ms);
	while (ret < 0 && errno == EINTR);
	if (ret < 0)
		return -errno;
	if (ret == 0)
		return -ETIMEDOUT;
	if (rdma_get_cm_event(rq->ech, evp))
		return -errno;
	return 0;
}

static int reject_error(struct nvmefs_queue *q, const struct rdma_cm_event *ev)
{
	uint16_t sts;

	if (ev->status == CM_REJ_CONSUMER_DEFINED &&
	    nvmefs_rdma_cm_rej_parse(ev->param.conn.private_data,
				     ev->param.conn.private_data_len, &sts) == 0)
		return nvmefs_error(-ECONNREFUSED,
				    "the NVMe/RDMA target at %s rejected queue %u: %s (status %#x)%s",
				    where(q), q->qid, nvmefs_rdma_cm_reject_str(sts), sts,
				    sts == NVMEFS_RDMA_CM_NO_RSC ?
				    ": the target is out of resources; use fewer or smaller queues" :
				    ": this is a host/target mismatch; report it with the target's kernel version");
	if (ev->status == CM_REJ_INVALID_SERVICE_ID)
		return nvmefs_error(-ECONNREFUSED,
				    "nothing is listening at %s (connection refused): check the address and "
				    "the port (-s), e.g. with 'nvmefs discover'", where(q));
	return nvmefs_error(-ECONNREFUSED,
			    "%s rejected the connection (reason %d) and gave no NVMe/RDMA status: "
			    "is it an NVMe/RDMA target? check the address and port", where(q), ev->status);
}

/* Turns an unwanted CM event during connection setup into the error to report. */
static int cm_event_error(struct nvmefs_queue *q, const struct rdma_cm_event *ev)
{
	int status = ev->status < 0 ? ev->status : -EIO;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_ERROR:
		if (status == -ENODEV || status == -EADDRNOTAVAIL)
			return nvmefs_error(-EHOSTUNREACH,
					    "no RDMA device can reach %s (%s): the route to it leaves through "
					    "a network interface without RDMA; bind soft-RoCE to it ('rdma link "
					    "add rxe0 type rxe netdev IFACE') or check the address",
					    where(q), strerror(-status));
		return nvmefs_error(-EHOSTUNREACH,
				    "resolving the address %s failed: %s: check the address and the "
				    "routing table ('ip route get ADDR')", where(q), strerror(-status));
	case RDMA_CM_EVENT_ROUTE_ERROR:
		return nvmefs_error(-EHOSTUNREACH, "finding an RDMA route to %s failed: %s: check the "
				    "address and that the RDMA link is up ('rdma link')",
				    where(q), strerror(-status));
	case RDMA_CM_EVENT_UNREACHABLE:
		return nvmefs_error(-EHOSTUNREACH,
				    "%s did not answer the RDMA connection request (unreachable): check "
				    "the address and that an NVMe/RDMA target runs there", where(q));
	case RDMA_CM_EVENT_REJECTED:
		return reject_error(q, ev);
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		return nvmefs_error(-ENODEV, "the RDMA device went away while connecting to %s: "
				    "check 'rdma link'", where(q));
	default:
		return nvmefs_error(-ECONNREFUSED, "connecting to %s failed: unexpected RDMA CM event "
				    "'%s' (status %d): check the target's kernel log",
				    where(q), rdma_event_str(ev->event), ev->status);
	}
}

/* Waits for the event that moves connection setup on, or reports why not. */
static int cm_expect(struct nvmefs_queue *q, enum rdma_cm_event_type want,
		     unsigned int timeout_ms, const char *step,
		     struct rdma_cm_event **evp)
{
	struct rdma_queue *rq = q->tp;
	struct rdma_cm_event *ev;
	int ret;

	ret = cm_get_event(rq, (int)timeout_ms, &ev);
	if (ret == -ETIMEDOUT)
		return nvmefs_error(-ETIMEDOUT,
				    "%s %s timed out after %u ms: the address is unreachable or no "
				    "NVMe/RDMA target answers there; check the address and port",
				    step, where(q), timeout_ms);
	if (ret < 0)
		return nvmefs_error(ret, "%s %s failed: reading RDMA CM events: %s",
				    step, where(q), strerror(-ret));
	if (ev->event != want) {
		ret = cm_event_error(q, ev);
		rdma_ack_cm_event(ev);
		return ret;
	}
	if (evp) {
		*evp = ev;
		return 0;
	}
	rdma_ack_cm_event(ev);
	return 0;
}

static int resolve(struct nvmefs_queue *q, unsigned int timeout_ms)
{
	struct nvmefs_ctrl *ctrl = q->ctrl;
	struct rdma_queue *rq = q->tp;
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP };
	struct rdma_addrinfo *dst = NULL, *src = NULL;
	int ret;

	if (rdma_getaddrinfo(ctrl->traddr, ctrl->trsvcid, &hints, &dst)) {
		ret = nvmefs_error(-EHOSTUNREACH,
				   "cannot resolve the target address '%s' port '%s': check -a and -s",
				   ctrl->traddr, ctrl->trsvcid);
		goto out;
	}
	if (ctrl->host_traddr[0]) {
		hints.ai_flags = RAI_PASSIVE;
		if (rdma_getaddrinfo(ctrl->host_traddr, NULL, &hints, &src)) {
			ret = nvmefs_error(-EADDRNOTAVAIL,
					   "cannot resolve the host address '%s': check -w",
					   ctrl->host_traddr);
			goto out;
		}
	}
	if (rdma_resolve_addr(rq->id, src ? src->ai_src_addr : NULL, dst->ai_dst_addr,
			      (int)timeout_ms)) {
		ret = -errno;
		if (ret == -ENODEV)
			ret = nvmefs_rdma_no_device_error();
		else
			ret = nvmefs_error(ret, "resolving the address %s failed: %s: check the "
					   "address and the host address (-w)", where(q), strerror(-ret));
		goto out;
	}
	ret = cm_expect(q, RDMA_CM_EVENT_ADDR_RESOLVED, timeout_ms, "resolving the address", NULL);
	if (ret < 0)
		goto out;
	if (rdma_resolve_route(rq->id, (int)timeout_ms)) {
		ret = nvmefs_error(-errno, "finding an RDMA route to %s failed: %s",
				   where(q), strerror(errno));
		goto out;
	}
	ret = cm_expect(q, RDMA_CM_EVENT_ROUTE_RESOLVED, timeout_ms, "finding a route to", NULL);
out:
	if (src)
		rdma_freeaddrinfo(src);
	if (dst)
		rdma_freeaddrinfo(dst);
	return ret;
}

/* Soft-RoCE's vendor id: its completions carry the kernel's flags. */
#define RXE_VENDOR_ID 0xffffff

/*
 * Per-I/O keys need type-2 memory windows, bound by a work request on the
 * queue pair (Linux's nvme-rdma uses fast registration, which libibverbs
 * does not offer).  Decided once per protection domain: every region of
 * the controller is registered one way or the other.
 */
static int choose_keys(struct nvmefs_ctrl *ctrl, struct rdma_ctrl *rc)
{
	struct ibv_device_attr attr;
	bool can = false;

	if (ctrl->opts.rkey_per_io == 0)
		return 0;
	if (ibv_query_device(rc->verbs, &attr) == 0)
		can = attr.max_mw > 0 && (attr.device_cap_flags & (IBV_DEVICE_MEM_WINDOW_TYPE_2A |
								   IBV_DEVICE_MEM_WINDOW_TYPE_2B));
	if (!can && ctrl->opts.rkey_per_io > 0)
		return nvmefs_error(-EOPNOTSUPP, "RDMA device %s has no type-2 memory windows, which "
				    "per-I/O remote keys need: connect without --rkey-per-io",
				    ibv_get_device_name(rc->verbs->device));
	rc->windows = can;
	rc->with_inv_flags = IBV_WC_WITH_INV;
	if (can && attr.vendor_id == RXE_VENDOR_ID)
		rc->with_inv_flags |= WC_KERNEL_WITH_INV;
	ctrl->rkey_per_io = can;
	return 0;
}

/* One protection domain per controller, so memory registered once can be
 * used on any of its queues. */
static int ctrl_pd(struct nvmefs_queue *q, struct ibv_pd **pdp)
{
	struct nvmefs_ctrl *ctrl = q->ctrl;
	struct rdma_queue *rq = q->tp;
	struct rdma_ctrl *rc = ctrl->tp;
	int ret;

	if (!rc) {
		rc = calloc(1, sizeof(*rc));
		if (!rc)
			return nvmefs_error(-ENOMEM, "out of memory");
		ctrl->tp = rc;
	}
	if (!rc->pd) {
		rc->pd = ibv_alloc_pd(rq->id->verbs);
		if (!rc->pd)
			return nvmefs_error(-errno, "allocating an RDMA protection domain on %s failed: %s",
					    ibv_get_device_name(rq->id->verbs->device), strerror(errno));
		rc->verbs = rq->id->verbs;
		nvmefs_rdma_context_use(rc->verbs);
		ret = choose_keys(ctrl, rc);
		if (ret < 0)
			return ret;
	} else if (rc->verbs != rq->id->verbs) {
		return nvmefs_error(-EXDEV, "queue %u of %s resolved to RDMA device %s, the admin queue "
				    "to %s: all queues of a controller must use one device; pin it with -w",
				    q->qid, where(q), ibv_get_device_name(rq->id->verbs->device),
				    ibv_get_device_name(rc->verbs->device));
	}
	*pdp = rc->pd;
	return 0;
}

static int memlock_error(size_t bytes, int err)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		return nvmefs_error(err,
				    "registering %zu KiB of queue buffers with the RDMA device failed (%s): "
				    "the locked-memory limit (RLIMIT_MEMLOCK) is %llu KiB; raise it with "
				    "'ulimit -l unlimited' (LimitMEMLOCK= / memlock in limits.conf; in a "
				    "container, --ulimit memlock=-1)",
				    bytes >> 10, strerror(-err), (unsigned long long)rl.rlim_cur >> 10);
	return nvmefs_error(err, "registering %zu KiB of queue buffers with the RDMA device failed: %s",
			    bytes >> 10, strerror(-err));
}

/* With per-I/O keys no region is reachable from the target but through
 * a window bound for one transfer. */
static int region_access(bool windows)
{
	return windows ? IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND :
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;
}

static void free_windows(struct nvmefs_queue *q)
{
	struct rdma_queue *rq = q->tp;

	for (uint16_t i = 0; rq->sends && i < q->nr_reqs; i++) {
		if (rq->sends[i].mw)
			ibv_dealloc_mw(rq->sends[i].mw);
		rq->sends[i].mw = NULL;
	}
}

static int reg(struct nvmefs_queue *q, struct ibv_pd *pd, void *buf, size_t len, int access,
	       struct ibv_mr **mrp)
{
	*mrp = ibv_reg_mr(pd, buf, len, access);
	if (!*mrp)
		return memlock_error(len, errno ? -errno : -ENOMEM);
	nvmefs_ctrl_count_pin(q->ctrl, buf, len, true);
	return 0;
}

static void dereg(struct nvmefs_queue *q, struct ibv_mr *mr)
{
	if (!mr)
		return;
	nvmefs_ctrl_count_pin(q->ctrl, mr->addr, mr->length, false);
	ibv_dereg_mr(mr);
}

static int alloc_buffers(struct nvmefs_queue *q, struct ibv_pd *pd, uint32_t data_slot_size)
{
	struct rdma_queue *rq = q->tp;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t capsules_len = (size_t)q->nr_reqs * sizeof(union nvmefs_cmd);
	size_t rsps_len = (size_t)rq->nr_rsps * sizeof(struct nvmefs_cqe);
	uint16_t i;
	int ret;

	rq->data_len = (size_t)q->nr_reqs * data_slot_size;
	rq->sends = calloc(q->nr_reqs, sizeof(*rq->sends));
	if (!rq->sends || posix_memalign((void **)&rq->capsules, page, capsules_len) ||
	    posix_memalign((void **)&rq->rsps, page, rsps_len) ||
	    (rq->data_len && posix_memalign((void **)&rq->data, page, rq->data_len)))
		return nvmefs_error(-ENOMEM, "out of memory for the buffers of queue %u", q->qid);
	memset(rq->capsules, 0, capsules_len);
	memset(rq->rsps, 0, rsps_len);
	ret = reg(q, pd, rq->capsules, capsules_len, 0, &rq->capsule_mr);
	if (ret < 0)
		return ret;
	ret = reg(q, pd, rq->rsps, rsps_len, IBV_ACCESS_LOCAL_WRITE, &rq->rsp_mr);
	if (ret < 0)
		return ret;
	if (rq->data_len) {
		memset(rq->data, 0, rq->data_len);
		ret = reg(q, pd, rq->data, rq->data_len, region_access(rq->windows), &rq->data_mr);
		if (ret < 0)
			return ret;
	}
	for (i = 0; rq->windows && i < q->nr_reqs; i++) {
		rq->sends[i].mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
		if (!rq->sends[i].mw)
			return nvmefs_error(errno ? -errno : -ENOMEM, "allocating %u memory windows for "
					    "queue %u failed: %s: connect with --rkey-per-io=off "
					    "(mount: -o rkey_per_io=off)",
					    q->nr_reqs, q->qid, strerror(errno));
	}
	for (i = 0; i < q->nr_reqs; i++) {
		q->reqs[i].cmd = &rq->capsules[i];
		q->reqs[i].data_slot = rq->data ? rq->data + (size_t)i * data_slot_size : NULL;
		q->reqs[i].data_slot_size = rq->data ? data_slot_size : 0;
	}
	return 0;
}

static int establish(struct nvmefs_queue *q, const struct nvmefs_queue_params *params,
		     unsigned int timeout_ms)
{
	struct rdma_queue *rq = q->tp;
	struct nvmefs_rdma_cm_req priv;
	struct nvmefs_rdma_cm_params cm = {
		.qid = q->qid,
		.hrqsize = q->size,
		.hsqsize = (uint16_t)(q->size - 1),
		.cntlid = params->cntlid,
	};
	struct ibv_device_attr attr;
	struct rdma_conn_param param = {
		.private_data = &priv,
		.private_data_len = sizeof(priv),
		.retry_count = 7,
		.rnr_retry_count = 7,
		.flow_control = 1,
	};
	struct rdma_cm_event *ev;
	uint16_t crqsize;
	int ret;

	nvmefs_rdma_cm_req_encode(&priv, &cm);
	/* The target RDMA-reads our write data: let it have as many reads
	 * in flight as the device allows. */
	if (ibv_query_device(rq->id->verbs, &attr) == 0)
		param.responder_resources = (uint8_t)(attr.max_qp_rd_atom > 255 ? 255 : attr.max_qp_rd_atom);
	if (rdma_connect(rq->id, &param))
		return nvmefs_error(-errno, "connecting to %s failed: %s", where(q), strerror(errno));
	ret = cm_expect(q, RDMA_CM_EVENT_ESTABLISHED, timeout_ms, "connecting to", &ev);
	if (ret < 0)
		return ret;
	rq->connected = true;
	ret = nvmefs_rdma_cm_rep_parse(ev->param.conn.private_data,
				       ev->param.conn.private_data_len, &crqsize);
	rdma_ack_cm_event(ev);
	if (ret < 0)
		return nvmefs_error(-EPROTO, "%s accepted queue %u without valid NVMe/RDMA accept data: "
				    "is it an NVMe/RDMA target?", where(q), q->qid);
	if (crqsize < q->size)
		return nvmefs_error(-EPROTO, "%s accepted queue %u with only %u entries, fewer than the "
				    "%u asked for: use a smaller queue size", where(q), q->qid,
				    crqsize, q->size);
	return 0;
}

static void rdma_queue_destroy(struct nvmefs_queue *q)
{
	struct rdma_queue *rq = q->tp;

	if (!rq)
		return;
	if (rq->connected) {
		struct rdma_cm_event *ev;

		/* A clean disconnect lets the target free its queue now
		 * instead of after its own timeout. */
		if (rdma_disconnect(rq->id) == 0 &&
		    cm_get_event(rq, 1000, &ev) == 0)
			rdma_ack_cm_event(ev);
	}
	free_windows(q);
	if (rq->qp_created)
		rdma_destroy_qp(rq->id);
	dereg(q, rq->data_mr);
	dereg(q, rq->rsp_mr);
	dereg(q, rq->capsule_mr);
	if (rq->cq) {
		if (rq->unacked_events)
			ibv_ack_cq_events(rq->cq, rq->unacked_events);
		ibv_destroy_cq(rq->cq);
	}
	if (rq->cch)
		ibv_destroy_comp_channel(rq->cch);
	if (rq->id)
		rdma_destroy_id(rq->id);
	if (rq->ech)
		rdma_destroy_event_channel(rq->ech);
	free(rq->data);
	free(rq->rsps);
	free(rq->capsules);
	free(rq->sends);
	free(rq);
	q->tp = NULL;
}

static int rdma_queue_create(struct nvmefs_queue *q, const struct nvmefs_queue_params *params)
{
	unsigned int timeout_ms = q->ctrl->opts.timeout_ms;
	struct rdma_queue *rq;
	struct ibv_pd *pd = NULL;
	unsigned int send_wrs;
	uint16_t i;
	int ret;

	ret = nvmefs_rdma_check_devices();
	if (ret < 0)
		return ret;
	rq = calloc(1, sizeof(*rq));
	if (!rq)
		return nvmefs_error(-ENOMEM, "out of memory");
	q->tp = rq;
	rq->nr_rsps = q->size;
	rq->ech = rdma_create_event_channel();
	if (!rq->ech) {
		ret = nvmefs_error(-errno, "opening the RDMA CM (/dev/infiniband/rdma_cm) failed: %s: "
				   "load the rdma_ucm module and check the device's permissions",
				   strerror(errno));
		goto fail;
	}
	if (rdma_create_id(rq->ech, &rq->id, q, RDMA_PS_TCP)) {
		ret = nvmefs_error(-errno, "creating an RDMA CM id failed: %s", strerror(errno));
		goto fail;
	}
	/* nvme-cli's --tos, as nvme-rdma sets it: before the route is resolved. */
	if (q->ctrl->opts.tos >= 0) {
		uint8_t tos = (uint8_t)q->ctrl->opts.tos;

		if (rdma_set_option(rq->id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, sizeof(tos))) {
			ret = nvmefs_error(-errno, "setting the type of service %u failed: %s: "
					   "check -T", tos, strerror(errno));
			goto fail;
		}
	}
	ret = resolve(q, timeout_ms);
	if (ret < 0)
		goto fail;
	ret = ctrl_pd(q, &pd);
	if (ret < 0)
		goto fail;
	rq->windows = ((struct rdma_ctrl *)q->ctrl->tp)->windows;
	rq->with_inv_flags = ((struct rdma_ctrl *)q->ctrl->tp)->with_inv_flags;
	/* A request's bind, send and local invalidate; flushed, each completes. */
	send_wrs = rq->windows ? 3u * q->nr_reqs : q->nr_reqs;
	rq->cch = ibv_create_comp_channel(rq->id->verbs);
	if (!rq->cch) {
		ret = nvmefs_error(-errno, "creating a completion channel failed: %s", strerror(errno));
		goto fail;
	}
	/* Events are consumed whenever present, never waited for in a read. */
	if (fcntl(rq->cch->fd, F_SETFL, fcntl(rq->cch->fd, F_GETFL) | O_NONBLOCK) < 0) {
		ret = nvmefs_error(-errno, "setting the completion channel non-blocking failed: %s",
				   strerror(errno));
		goto fail;
	}
	rq->cq = ibv_create_cq(rq->id->verbs, (int)(send_wrs + rq->nr_rsps), rq, rq->cch, 0);
	if (!rq->cq) {
		ret = nvmefs_error(-errno, "creating a completion queue of %u entries failed: %s",
				   send_wrs + rq->nr_rsps, strerror(errno));
		goto fail;
	}
	struct ibv_qp_init_attr qp_attr = {
		.send_cq = rq->cq,
		.recv_cq = rq->cq,
		.qp_type = IBV_QPT_RC,
		/* Binds go unsignaled: the send after them reports both. */
		.sq_sig_all = 0,
		.cap = {
			.max_send_wr = send_wrs,
			.max_recv_wr = rq->nr_rsps,
			/* The capsule, and in-capsule write data straight from
			 * the caller's buffer. */
			.max_send_sge = 2,
			.max_recv_sge = 1,
		},
	};
	if (rdma_create_qp(rq->id, pd, &qp_attr)) {
		ret = nvmefs_error(-errno, "creating a queue pair of %u entries failed: %s",
				   q->size, strerror(errno));
		goto fail;
	}
	rq->qp_created = true;
	ret = establish(q, params, timeout_ms);
	if (ret < 0)
		goto fail;
	/*
	 * The buffers only once the target has accepted: a reconnect attempt
	 * against a port that refuses (10 a second) then costs no allocation,
	 * registration or pinning.  The target sends nothing before our first
	 * command, and would be told to retry (RNR) if it did.
	 */
	ret = alloc_buffers(q, pd, params->data_slot_size);
	if (ret < 0)
		goto fail;
	for (i = 0; i < rq->nr_rsps; i++) {
		ret = nvmefs_rdma_post_recv(rq, i);
		if (ret < 0) {
			ret = nvmefs_error(ret, "posting receives on queue %u failed: %s",
					   q->qid, strerror(-ret));
			goto fail;
		}
	}
	/* From now on events are looked for, never waited for, on the I/O path. */
	if (fcntl(rq->ech->fd, F_SETFL, fcntl(rq->ech->fd, F_GETFL) | O_NONBLOCK) < 0) {
		ret = nvmefs_error(-errno, "setting the RDMA CM channel non-blocking failed: %s",
				   strerror(errno));
		goto fail;
	}
	if (ibv_req_notify_cq(rq->cq, 0)) {
		ret = nvmefs_error(-errno, "arming the completion queue failed: %s", strerror(errno));
		goto fail;
	}
	return 0;
fail:
	rdma_queue_destroy(q);
	return ret;
}

/*
 * The order Linux's nvme-rdma keeps on error recovery: stop posting (what
 * was not posted never reaches the target), take the queue pair to the
 * error state (disconnecting does that), and wait until the device has
 * completed every work request it holds, flushed.  A queue pair that does
 * not flush in time is destroyed: once ibv_destroy_qp() returns the device
 * touches none of its buffers.
 */
static void rdma_queue_stop(struct nvmefs_queue *q)
{
	struct rdma_queue *rq = q->tp;
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	struct pollfd pfd = { .fd = rq->cch->fd, .events = POLLIN };
	int64_t deadline = nvmefs_now_ms() + FLUSH_TIMEOUT_MS;

	rq->post_head = rq->post_tail = NULL;
	rq->stopping = true;
	if (!rq->qp_created)
		return;
	if (rq->connected) {
		rdma_disconnect(rq->id);
		rq->connected = false;
	}
	ibv_modify_qp(rq->id->qp, &attr, IBV_QP_STATE);
	while (rq->posted_sends || rq->posted_recvs) {
		if (nvmefs_rdma_drain(q) > 0)
			continue;
		if (nvmefs_now_ms() >= deadline)
			break;
		if (ibv_req_notify_cq(rq->cq, 0) == 0 && nvmefs_rdma_drain(q) == 0 && poll(&pfd, 1, 10) > 0)
			nvmefs_rdma_consume_cq_events(rq);
	}
	if (rq->posted_sends || rq->posted_recvs) {
		rdma_destroy_qp(rq->id);
		rq->qp_created = false;
	}
	/* Bound windows would keep the callers' regions from being
	 * deregistered while the queue waits to be destroyed. */
	free_windows(q);
}

static int rdma_mr_reg(struct nvmefs_ctrl *ctrl, struct nvmefs_mr *mr)
{
	struct rdma_ctrl *rc = ctrl->tp;
	struct ibv_mr *imr;

	if (!rc || !rc->pd)
		return nvmefs_error(-ENOTCONN, "registering memory needs a connected controller");
	imr = ibv_reg_mr(rc->pd, mr->addr, mr->len, region_access(rc->windows));
	if (!imr)
		return memlock_error(mr->len, errno ? -errno : -ENOMEM);
	nvmefs_ctrl_count_pin(ctrl, mr->addr, mr->len, true);
	mr->tp = imr;
	mr->lkey = imr->lkey;
	/* No standing key goes on the wire with per-I/O keys. */
	mr->rkey = rc->windows ? 0 : imr->rkey;
	return 0;
}

static void rdma_mr_dereg(struct nvmefs_mr *mr)
{
	nvmefs_ctrl_count_pin(mr->ctrl, mr->addr, mr->len, false);
	ibv_dereg_mr(mr->tp);
}

static void rdma_ctrl_release(struct nvmefs_ctrl *ctrl)
{
	struct rdma_ctrl *rc = ctrl->tp;

	if (!rc)
		return;
	if (rc->pd) {
		ibv_dealloc_pd(rc->pd);
		nvmefs_rdma_context_unuse(rc->verbs);
	}
	free(rc);
	ctrl->tp = NULL;
	/* A device being removed can go now, if this was its last user. */
	nvmefs_rdma_list_devices();
}

const struct nvmefs_transport_ops nvmefs_rdma_ops = {
	.name = "rdma",
	/* RDMA's discovery controllers listen where its I/O controllers do. */
	.trsvcid = NVMEFS_DEFAULT_TRSVCID,
	.discovery_trsvcid = NVMEFS_DEFAULT_TRSVCID,
	.allowed_opts = NVMEFS_OPT_RKEY_PER_IO | NVMEFS_OPT_TOS,
	.pins_memory = true,
	.queue_create = rdma_queue_create,
	.queue_destroy = rdma_queue_destroy,
	.submit = nvmefs_rdma_submit,
	.invalidate = nvmefs_rdma_invalidate,
	.queue_stop = rdma_queue_stop,
	.queue_check = nvmefs_rdma_queue_check,
	.process = nvmefs_rdma_process,
	.ctrl_release = rdma_ctrl_release,
	.mr_reg = rdma_mr_reg,
	.mr_dereg = rdma_mr_dereg,
	.queue_fd = nvmefs_rdma_queue_fd,
	.queue_event_fd = nvmefs_rdma_queue_event_fd,
	.queue_arm = nvmefs_rdma_queue_arm,
};

