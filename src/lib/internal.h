/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Private to libnvmefs: controllers, queues, requests and the transport
 * operations table.
 *
 * Layering, as in Linux drivers/nvme/host and SPDK: a transport (rdma.c)
 * only moves capsules and data for a queue; the request slots and command
 * ids (queue.c), Connect, properties and discovery (fabrics.c) and the
 * controller's lifecycle (ctrl.c) know nothing of RDMA.  Unit tests put a
 * scripted transport under the same code.
 */
#ifndef NVMEFS_INTERNAL_H
#define NVMEFS_INTERNAL_H

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <nvme/types.h>

#include "nvmefs/nvmefs.h"
#include "nvmefs/wire.h"
#include "ctrl_state.h"

struct nvmefs_queue;
struct nvmefs_req;

/* Which way a request's data moves. */
enum nvmefs_dir {
	NVMEFS_DIR_NONE,
	NVMEFS_DIR_TO_CTRL,	/* host memory -> controller (writes, Connect data) */
	NVMEFS_DIR_FROM_CTRL,	/* controller -> host memory (reads, Identify) */
};

/* What a request still waits for before its slot may be reused: the HCA
 * owns the capsule until the send completes, whatever the response says. */
enum {
	NVMEFS_REQ_WAIT_SEND = 1 << 0,
	NVMEFS_REQ_WAIT_RESP = 1 << 1,
	/* The target may still hold the request's own remote key (req->rkey):
	 * until it invalidates it with its response, or we do, the data
	 * buffer is within its reach. */
	NVMEFS_REQ_WAIT_KEY = 1 << 2,
};

/* Memory registered with the transport; the controller keeps a list. */
struct nvmefs_mr {
	struct nvmefs_ctrl *ctrl;
	uint8_t *addr;
	size_t len;
	uint32_t lkey;
	uint32_t rkey;
	void *tp;			/* the transport's registration; NULL while released */
	/* The callers' regions, for lookup without a lock (mr.c). */
	_Atomic(struct nvmefs_mr *) next;
	/* Every region of the controller, pools too, under mr_lock (mr.c). */
	struct nvmefs_mr *region_next, *region_prev;
};

struct nvmefs_req {
	struct nvmefs_queue *q;
	/* The command, inside the transport's registered capsule buffer. */
	union nvmefs_cmd *cmd;
	/* Payload: in @mr, or (mr NULL) in this slot's registered data_slot. */
	void *data;
	struct nvmefs_mr *mr;
	int64_t deadline_ms;
	uint32_t len;
	uint8_t dir;		/* enum nvmefs_dir */
	uint8_t wait;		/* NVMEFS_REQ_WAIT_* still outstanding */
	bool inflight;
	/* Ended by nvmefs_queue_stop(), not by the controller: may be sent again. */
	bool aborted;
	uint16_t cid;
	uint16_t slot;
	uint16_t next_free;
	/* The key bound to this request's data alone (NVMEFS_REQ_WAIT_KEY). */
	uint32_t rkey;
	struct nvmefs_cqe cqe;
	/* 0, or the -errno that ended the request without a response. */
	int error;
	void (*done)(struct nvmefs_req *req);
	void *done_arg;
	/* This slot's registered data area and its size. */
	void *data_slot;
	uint32_t data_slot_size;
};

/* What a transport needs to create and connect one queue. */
struct nvmefs_queue_params {
	uint16_t qid;
	uint16_t size;		/* SQ entries; at most size - 1 commands in flight */
	uint16_t cntlid;	/* from the admin Connect; 0 for the admin queue */
	uint32_t data_slot_size;	/* registered data bytes per request slot */
};

struct nvmefs_transport_ops {
	const char *name;
	/*
	 * Connect queue @q at the transport level and allocate and register
	 * its buffers once: capsules, responses, and nr_reqs data slots of
	 * params->data_slot_size.  Sets req->cmd, req->data_slot for every
	 * slot.  On failure sets the error message and returns -errno.
	 */
	int (*queue_create)(struct nvmefs_queue *q,
			    const struct nvmefs_queue_params *params);
	/* Disconnect and free everything queue_create made. */
	void (*queue_destroy)(struct nvmefs_queue *q);
	/*
	 * Describe req->data to the target in req->cmd (SGL) and send the
	 * capsule.  The transport reports the send's completion with
	 * nvmefs_queue_send_done() and the response with
	 * nvmefs_queue_response().
	 */
	int (*submit)(struct nvmefs_queue *q, struct nvmefs_req *req);
	/*
	 * Stop @q for good, after a failure: what was submitted but not yet
	 * handed to the device is never sent, the connection is torn down, and
	 * every work request already handed over has completed (flushed) or
	 * been destroyed with the queue pair.  On return the target can no
	 * longer read or write any buffer of @q's requests.  Send completions
	 * and responses that arrive meanwhile are reported as usual.
	 */
	void (*queue_stop)(struct nvmefs_queue *q);
	/*
	 * Look, without waiting, for connection events (the target closed the
	 * queue, the device went away): -errno with a message if the queue is
	 * lost, else 0.  Cheap enough for every 100 ms, not for every poll.
	 */
	int (*queue_check)(struct nvmefs_queue *q);
	/*
	 * Process completions, waiting up to @timeout_ms (0: don't wait) for
	 * the first one.  Returns how many were processed (0 on timeout), or
	 * -errno when the queue failed.
	 */
	int (*process)(struct nvmefs_queue *q, int timeout_ms);
	/* Release what the transport keeps per controller (protection domain). */
	void (*ctrl_release)(struct nvmefs_ctrl *ctrl);
	/* Register mr->addr/len for local and remote access; set lkey, rkey, tp. */
	int (*mr_reg)(struct nvmefs_ctrl *ctrl, struct nvmefs_mr *mr);
	void (*mr_dereg)(struct nvmefs_mr *mr);
	/*
	 * Invalidate req->rkey locally: the target answered without doing so.
	 * The transport calls nvmefs_queue_key_done() once the key is dead.
	 * Only transports that set NVMEFS_REQ_WAIT_KEY need it.
	 */
	int (*invalidate)(struct nvmefs_queue *q, struct nvmefs_req *req);
	/* A descriptor readable when the queue has completions, once armed. */
	int (*queue_fd)(struct nvmefs_queue *q);
	/* A descriptor readable when queue_check() has something to say. */
	int (*queue_event_fd)(struct nvmefs_queue *q);
	/*
	 * Arm the queue's descriptor.  > 0 if anything already waits for
	 * process(): completions, or bytes a level-triggered descriptor stays
	 * readable for.  Callers process the queue then, and otherwise sleep
	 * on the descriptor.  -errno with a message if the queue is lost: the
	 * caller fails it as it does a failed process().  Every transport the
	 * unit tests reach is checked by tests/unit/arm_contract.h.
	 */
	int (*queue_arm)(struct nvmefs_queue *q);
};

extern const struct nvmefs_transport_ops nvmefs_rdma_ops;
extern const struct nvmefs_transport_ops nvmefs_tcp_ops;

/*
 * The transport @trtype names (NULL: the first, "rdma"): its index among
 * nvmefs_transport_name()'s, with *@ops set; else -EPROTONOSUPPORT and a
 * message naming the supported ones.  transport.c.
 */
int nvmefs_transport_find(const char *trtype, const struct nvmefs_transport_ops **ops);
/* Unit tests: what every connection goes over, once trtype named a
 * supported transport; NULL: that transport. */
extern const struct nvmefs_transport_ops *nvmefs_transport_override;

/* The size of struct nvmefs_connect_opts in 0.2, the first with a size
 * field: no caller's is smaller.  Fields added later follow trtype. */
#define NVMEFS_CONNECT_OPTS_SIZE_0_2 \
	(offsetof(struct nvmefs_connect_opts, trtype) + sizeof(const char *))
/*
 * The caller's options @in, of whatever version, as this library's @out:
 * fields past in->size take their defaults, and trtype names the
 * transport, set in *@ops.  connect_opts.c.
 */
/*
 * The current versions of the functions whose struct nvmefs_connect_opts
 * grew a size in 0.2: each binds the public name at NVMEFS_0.2, the
 * default; abi_0_1.c binds it at NVMEFS_0.1 to one taking 0.1's layout.
 * Callers, in the library or linked with it, use the public names.
 */
#define NVMEFS_SYMVER(impl, name_at_version) \
	__asm__(".symver " #impl ", " name_at_version)
void nvmefs_connect_opts_init_0_2(struct nvmefs_connect_opts *opts);
int nvmefs_ctrl_connect_0_2(const struct nvmefs_connect_opts *opts, struct nvmefs_ctrl **ctrlp);
int nvmefs_discover_0_2(const struct nvmefs_connect_opts *opts, int max_depth,
			nvmefs_discovery_cb cb, void *arg);
/* The 0.1 versions, for tests with a copy of that layout of their own. */
struct nvmefs_connect_opts_0_1;
void nvmefs_connect_opts_init_0_1(struct nvmefs_connect_opts_0_1 *old);
int nvmefs_ctrl_connect_0_1(const struct nvmefs_connect_opts_0_1 *old, struct nvmefs_ctrl **ctrlp);
typedef int (*nvmefs_discovery_cb_0_1)(const struct nvmefs_connect_opts_0_1 *where,
				       const struct nvmf_discovery_log *log, int depth, void *arg);
int nvmefs_discover_0_1(const struct nvmefs_connect_opts_0_1 *old, int max_depth,
			nvmefs_discovery_cb_0_1 cb, void *arg);

/* 0, or -EINVAL when @nqn is longer than an NQN may be or does not start
 * with "nqn.": the message names it the @what ("host", "subsystem") NQN
 * and says to fix @fix (the option or file it came from). */
int nvmefs_nqn_check(const char *nqn, const char *what, const char *fix);

/* Also checks what can be checked without connecting (the form of the
 * addresses, the NQNs, the secrets): -EINVAL saying which is wrong. */
int nvmefs_connect_opts_take(const struct nvmefs_connect_opts *in,
			     struct nvmefs_connect_opts *out,
			     const struct nvmefs_transport_ops **ops);

struct nvmefs_queue {
	struct nvmefs_ctrl *ctrl;
	void *tp;			/* the transport's per-queue state */
	uint16_t qid;
	uint16_t size;
	uint16_t nr_reqs;
	uint16_t nr_inflight;
	uint16_t free_head;
	uint16_t sq_tail;		/* SQ slots consumed by our submissions */
	uint16_t sq_head;		/* last SQ head the controller reported */
	uint8_t cid_slot_bits;
	uint16_t cid_gen;
	/* 0 while usable; then the -errno that made it unusable. */
	int failed;
	/* queue_stop() ran: nothing of the transport's is in flight any more. */
	bool stopped;
	/* Requests not completed this long after submission time out; 0: never. */
	uint32_t timeout_ms;
	struct nvmefs_req *reqs;
};

/* What the I/O path caches of an active namespace. */
struct nvmefs_ns_cache {
	uint32_t nsid;
	uint64_t nlb;
	uint32_t lba_size;
	uint8_t lba_shift;
	uint8_t dlfeat;			/* Identify Namespace DLFEAT */
	/* Its identity, checked again after every reconnect. */
	uint8_t nguid[16];
	uint8_t eui64[8];
	uint8_t uuid[16];
	/* After a reconnect it was gone or another namespace: its I/O fails,
	 * nothing is written to it.  Written by the recovery thread while the
	 * I/O queues are stopped, read by their owners. */
	atomic_bool gone;
	/* Why it could not be identified when listed (it is gone from the
	 * start), or NULL. */
	char *unusable;
	/* ana.c: its ANA group (Identify Namespace ANAGRPID), and that group's
	 * state on this controller (enum nvme_ana_state), written by the
	 * controller's thread and read by every path choice. */
	uint32_t anagrpid;
	_Atomic uint8_t ana_state;
	/* The state the log last gave, for telling changes (an ANA status
	 * on an I/O sets ana_state ahead of the log). */
	uint8_t ana_log_state;
};

/* notify.c: the callbacks and the notices queued for them, under lock;
 * the thread that calls them holds no lock while one runs. */
struct nvmefs_notice;
struct nvmefs_notifier {
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* a notice, or stop */
	pthread_cond_t idle;		/* no callback under way */
	struct nvmefs_notice *head, *tail;
	unsigned int queued;
	unsigned int dropped;		/* events dropped since the last told */
	unsigned int changes_queued;	/* 1 << enum nvmefs_ctrl_change */
	unsigned long delivered;	/* callbacks returned, for the setters */
	bool delivering;
	bool running;
	bool stop;
	pthread_t thread;
	nvmefs_ctrl_event_cb event_cb;
	void *event_arg;
	nvmefs_ctrl_change_cb change_cb;
	void *change_arg;
};

struct nvmefs_ctrl {
	const struct nvmefs_transport_ops *ops;
	void *tp;			/* the transport's per-controller state */
	struct nvmefs_connect_opts opts;
	/* Owned copies of the strings in opts; as wide as a discovery log's
	 * fields (referrals and --all-paths hand those over) and a NUL. */
	char traddr[NVMF_TRADDR_SIZE + 1];
	char trsvcid[NVMF_TRSVCID_SIZE + 1];
	char host_traddr[256];
	char host_iface[16];		/* IF_NAMESIZE */
	char subnqn[NVMF_NQN_SIZE + 1];
	char hostnqn[NVMF_NQN_SIZE + 1];
	char hostid_str[37];
	uint8_t hostid[16];
	bool discovery;
	uint16_t cntlid;
	uint64_t cap;
	uint32_t vs;
	uint32_t cc;
	struct nvmefs_queue admin;
	struct nvme_id_ctrl id;

	uint16_t admin_size;

	/* Serializes the admin queue between the caller and the controller's thread. */
	pthread_mutex_t admin_lock;
	uint32_t kato_ms;

	/*
	 * The state (ctrl_state.c, its only writer) and recover.c's policy and
	 * thread, which sends Keep Alive and reconnects.  state_lock guards
	 * what follows up to the I/O part; failed, gen and io_failing, written
	 * with the state, are also read without it on the I/O path (one plain
	 * atomic load per poll).
	 */
	pthread_mutex_t state_lock;
	pthread_cond_t state_cond;
	enum ctrl_state state;
	/* 0 while new or live; the -errno of the failure that began the outage. */
	atomic_int failed;
	/* Bumped by every failure: an I/O queue stopped for gen N is stopped
	 * again when failure N + 1 comes. */
	atomic_uint gen;
	/* Held and new I/O fails (fast_io_fail_tmo passed, or deleted). */
	atomic_int io_failing;
	/* Bumped after the I/O queues' wake descriptors are written: an owner
	 * that saw the last value has nothing to take off its descriptor. */
	atomic_uint wake_seq;
	char fail_msg[512];
	/* What nvmefs_ctrl_status() tells; its state is filled in from state
	 * as it is read. */
	struct nvmefs_ctrl_status status;
	int64_t outage_start_ms;
	/* recover.c: when a failed attempt is worth reporting again. */
	int64_t next_report_ms;
	/* The thread's own life, not the controller's state: svc_stop asks it
	 * to end at teardown, where the state stays as it was for the
	 * callbacks still to be told (a teardown state would have nothing
	 * to refuse, as only the caller's one handle tears down). */
	bool svc_running;
	bool svc_stop;
	/* Reconnect policy, not a state: a live controller stays live, and is
	 * deleted instead of reset when it fails; one that is not is deleted. */
	bool no_reconnect;
	pthread_t svc_thread;
	/* The caller's callbacks and what is waiting to be told (notify.c). */
	struct nvmefs_notifier notify;

	/* aen.c: the events the controller offers and we enabled (OAES bits),
	 * and the Asynchronous Event Request; aer_* under admin_lock. */
	uint32_t aen_mask;
	bool aer_outstanding;
	bool aer_refused;
	bool aen_pending;
	uint32_t aen_result;

	/* I/O: queues, namespaces, registered memory, transfer limits.  The
	 * queue list is published and withdrawn under io_lock, which the
	 * controller's thread holds while it checks or reconnects the queues. */
	pthread_mutex_t io_lock;
	struct nvmefs_ioq **ioqs;
	unsigned int nr_ioqs;
	/* With a connection of their own; fewer than nr_ioqs while the target
	 * grants fewer (io_forward.c). */
	atomic_uint nr_connected_ioqs;
	/* Room for NVMEFS_MAX_NAMESPACES: an asynchronous event appends in place
	 * while the I/O path reads, so the arrays never move. */
	struct nvmefs_ns_cache *ns;
	uint32_t *nsids;
	atomic_uint nr_ns;
	/* namespaces.c, on the controller's thread: a rescan that got no
	 * definite answer for a namespace is tried again at rescan_at_ms (0:
	 * none due), the rescan_tries'th time. */
	int64_t rescan_at_ms;
	unsigned int rescan_tries;
	/* Bytes per I/O command, and in-capsule write data per command: from
	 * Identify at every connect (nvmefs_io_take_limits()), read by every
	 * thread that submits. */
	_Atomic uint32_t max_xfer;
	/* DH-HMAC-CHAP secrets and state (auth.c); NULL without a secret. */
	struct nvmefs_auth *auth;
	/* The NVM command set's limits (Identify CNS 06h), 0 where none:
	 * bytes per Write Zeroes (WZSL), blocks per Deallocate range (DMRSL). */
	uint64_t max_zeroes_bytes;
	uint32_t max_dealloc_blocks;
	_Atomic uint32_t inline_size;
	/* The transport gives each transfer a remote key of its own. */
	bool rkey_per_io;
	/* mpath.c: one path of several.  Its I/O is never held through an
	 * outage: once its queue is stopped, held and new I/O comes back with
	 * -ENOLINK for another path, as does a path error status (SCT 3h). */
	bool failover;
	/* ana.c: an I/O saw an ANA status; the controller's thread reads the
	 * ANA log again. */
	atomic_bool ana_stale;
	/* io.c: with no other path, an I/O saw a path error that names no ANA
	 * state (nvmet's answer for a namespace disabled on it); the
	 * controller's thread reads the namespace list again. */
	atomic_bool ns_stale;
	_Atomic(struct nvmefs_mr *) mrs;
	/* mr.c: every registration, and whether the device was let go of;
	 * the callers' regions deregistered while the controller lives. */
	pthread_mutex_t mr_lock;
	struct nvmefs_mr *regions;
	bool regions_released;
	struct nvmefs_mr *retired;
	/* The bytes the transport's registrations pin now (whole pages, as the
	 * kernel counts them in VmPin): queues' buffers and every region. */
	atomic_uint_fast64_t pinned_bytes;
	/* Per-I/O keys since connecting (nvmefs_ctrl_rkey_stats()), counted by
	 * every queue's thread: queue.c. */
	struct {
		_Atomic uint64_t bound;
		_Atomic uint64_t invalidated_by_target;
		_Atomic uint64_t invalidated_locally;
	} rkeys;
};

/* mr.c */
/* The bytes a registration of @len bytes at @addr pins: the pages it touches. */
size_t nvmefs_pinned_span(uintptr_t addr, size_t len, size_t page);
/* A transport registered (@pin) or deregistered @len bytes at @addr for @ctrl. */
void nvmefs_ctrl_count_pin(struct nvmefs_ctrl *ctrl, const void *addr, size_t len, bool pin);
/* Register @addr/@len without publishing it for lookup (a queue's pool);
 * while the device is released, it is registered at the reconnect. */
int nvmefs_mr_new(struct nvmefs_ctrl *ctrl, void *addr, size_t len, struct nvmefs_mr **mrp);
void nvmefs_mr_free(struct nvmefs_mr *mr);
/* The caller's region that holds @len bytes at @buf, or NULL; safe while
 * other threads register and deregister regions. */
struct nvmefs_mr *nvmefs_mr_find(struct nvmefs_ctrl *ctrl, const void *buf, size_t len);
/* Frees the regions deregistered while the controller lived. */
void nvmefs_mr_free_retired(struct nvmefs_ctrl *ctrl);
/* With no queue left: deregister every region and release the transport's
 * per-controller state (the protection domain), so that a device that is
 * going away can go.  The regions stay known, for nvmefs_ctrl_register_again(). */
void nvmefs_ctrl_release_device(struct nvmefs_ctrl *ctrl);
/* After the admin queue is up again: register every region on its device,
 * all or none; 0 if nothing was released. */
int nvmefs_ctrl_register_again(struct nvmefs_ctrl *ctrl);

/* notify.c: the notifier thread, started once the controller is up and
 * stopped (after telling what is queued) as it goes. */
void nvmefs_notify_init(struct nvmefs_notifier *n);
int nvmefs_notify_start(struct nvmefs_notifier *n);
/* Tells what is queued and joins the thread; nothing is queued after it. */
void nvmefs_notify_stop(struct nvmefs_notifier *n);
void nvmefs_notify_fini(struct nvmefs_notifier *n);
/* Tells the caller's change callback, from the notifier thread; returns
 * at once. */
void nvmefs_ctrl_changed(struct nvmefs_ctrl *ctrl, enum nvmefs_ctrl_change what);

/* recover.c */
/* Start the controller's thread (keep-alive, recovery) if it needs one. */
int nvmefs_ctrl_start_thread(struct nvmefs_ctrl *ctrl);
void nvmefs_ctrl_stop_thread(struct nvmefs_ctrl *ctrl);
/* The pause before reconnect attempt @n (1-based), after one that started
 * @started_ms into the outage, with reconnect_delay @delay_s. */
int64_t nvmefs_reconnect_pause_ms(int delay_s, unsigned int n, int64_t started_ms);

/* The monotonic clock in milliseconds: deadlines and keep-alive. */
static inline int64_t nvmefs_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* error.c: the calling thread's message for nvmefs_errmsg(). */
__attribute__((format(printf, 1, 2)))
void nvmefs_set_error(const char *fmt, ...);
/* As nvmefs_set_error(), and returns @err (a -errno) for `return ...;`. */
__attribute__((format(printf, 2, 3)))
int nvmefs_error(int err, const char *fmt, ...);

/* queue.c */
int nvmefs_queue_init(struct nvmefs_queue *q, struct nvmefs_ctrl *ctrl,
		      const struct nvmefs_queue_params *params);
void nvmefs_queue_fini(struct nvmefs_queue *q);
struct nvmefs_req *nvmefs_req_get(struct nvmefs_queue *q);
/* Whether nvmefs_req_get() would find a free slot. */
bool nvmefs_req_available(const struct nvmefs_queue *q);
void nvmefs_req_put(struct nvmefs_req *req);
int nvmefs_req_submit(struct nvmefs_req *req);
/* For transports: the capsule of @req has left; the HCA is done with it. */
void nvmefs_queue_send_done(struct nvmefs_queue *q, struct nvmefs_req *req);
/* For transports: a response arrived.  -EPROTO for an unknown or stale
 * command id, after which the queue is failed. */
int nvmefs_queue_response(struct nvmefs_queue *q, const struct nvmefs_cqe *cqe);
/* As nvmefs_queue_response(), for a response that came with a Send with
 * Invalidate of @invalidated (NULL: without).  A request waiting on its key
 * ends only once that key is dead: the target invalidated exactly it, or
 * the transport's invalidate() did.  The target invalidating any other key
 * is -EPROTO, and the queue is failed. */
int nvmefs_queue_response_inv(struct nvmefs_queue *q, const struct nvmefs_cqe *cqe,
			      const uint32_t *invalidated);
/* For transports: a window bound for a request's key took effect (the work
 * request after its bind completed). */
void nvmefs_queue_key_bound(struct nvmefs_queue *q);
/* For transports: the local invalidation of req->rkey completed. */
void nvmefs_queue_key_done(struct nvmefs_queue *q, struct nvmefs_req *req);
/* Mark the queue failed with @err (the first error wins): nothing more is
 * submitted on it.  Requests in flight end only in nvmefs_queue_stop(). */
void nvmefs_queue_fail(struct nvmefs_queue *q, int err);
/* Fail the queue, stop its transport (after which the target cannot touch
 * any of its buffers), then end every request still in flight, aborted. */
void nvmefs_queue_stop(struct nvmefs_queue *q, int err);
/* Submit one prepared request and wait for it, up to @timeout_ms. */
int nvmefs_req_exec(struct nvmefs_req *req, unsigned int timeout_ms);

/* fabrics.c */
int nvmefs_host_identity(struct nvmefs_ctrl *ctrl, const char *hostnqn,
			 const char *hostid);
int nvmefs_fabrics_connect(struct nvmefs_ctrl *ctrl, struct nvmefs_queue *q,
			   uint32_t kato_ms);
int nvmefs_prop_get(struct nvmefs_ctrl *ctrl, uint32_t offset, uint64_t *value);
int nvmefs_prop_set(struct nvmefs_ctrl *ctrl, uint32_t offset, uint64_t value);

/* admin.c */
/*
 * Run one admin command built in @cmd (its cid is assigned here) with up
 * to one data slot of payload @buf/@len moving @dir.  The response is
 * copied to @cqe when not NULL.  Returns 0, -errno for a transport failure,
 * or -EREMOTEIO when the controller completed it with an error status.
 */
int nvmefs_admin_exec(struct nvmefs_ctrl *ctrl, const union nvmefs_cmd *cmd,
		      void *buf, uint32_t len, enum nvmefs_dir dir,
		      struct nvmefs_cqe *cqe);
/* The same with the payload in @mr (not NULL: any length) instead of a slot. */
int nvmefs_admin_exec_mr(struct nvmefs_ctrl *ctrl, const union nvmefs_cmd *cmd,
			 void *buf, uint32_t len, struct nvmefs_mr *mr, enum nvmefs_dir dir,
			 struct nvmefs_cqe *cqe);
/* A command without data that fails the controller unless it completes
 * within @timeout_ms rather than --timeout (Keep Alive's is KATO). */
int nvmefs_admin_exec_within(struct nvmefs_ctrl *ctrl, const union nvmefs_cmd *cmd,
			     unsigned int timeout_ms);

/* admin_cmds.c */
/* As nvmefs_identify_ns(), with the status the controller answered (0 if
 * none) in *@status. */
int nvmefs_identify_ns_status(struct nvmefs_ctrl *ctrl, uint32_t nsid, struct nvme_id_ns *ns,
			      uint16_t *status);
/* The Command Retry Delay a status (15 bits, without the phase) asks for:
 * its CRD field indexes Identify Controller's CRDT, in 100 ms. */
static inline int64_t nvmefs_crd_delay_ms(const struct nvmefs_ctrl *ctrl, uint16_t status)
{
	const uint16_t crdt[3] = { ctrl->id.crdt1, ctrl->id.crdt2, ctrl->id.crdt3 };
	unsigned int crd = (status >> 11) & 0x3;

	return crd ? (int64_t)nvmefs_le16_to_cpu(crdt[crd - 1]) * 100 : 0;
}
/* The controller's largest transfer in one command, from MDTS and the
 * admin queue's data slots. */
uint32_t nvmefs_ctrl_admin_max_xfer(const struct nvmefs_ctrl *ctrl);
/* The largest piece of a log read into registered memory: MDTS permitting,
 * as much as nvmet-rdma takes in one command (its MDTS). */
#define NVMEFS_LOG_MR_MAX_XFER (1u << 20)
/*
 * nvmefs_get_log_page() into @buf inside @mr (registered for the read, or
 * NULL: through the admin data slots), in pieces as the controller needs.
 * Returns how many commands it took, or -errno.
 */
int nvmefs_get_log_page_mr(struct nvmefs_ctrl *ctrl, uint8_t lid, uint32_t nsid,
			   uint64_t offset, void *buf, size_t len, struct nvmefs_mr *mr);
/* The NVM command set's Write Zeroes and Deallocate limits of an I/O
 * controller, into max_zeroes_bytes and max_dealloc_blocks. */
int nvmefs_ctrl_read_nvm_limits(struct nvmefs_ctrl *ctrl);
/* @max, or less if the controller's MDTS says so. */
uint32_t nvmefs_ctrl_limit_xfer(const struct nvmefs_ctrl *ctrl, uint32_t max);

/* ctrl.c */
/* The connect path with the transport chosen: unit tests pass a scripted one. */
int nvmefs_ctrl_connect_with(const struct nvmefs_transport_ops *ops,
			     const struct nvmefs_connect_opts *opts,
			     struct nvmefs_ctrl **ctrlp);

/* io_queues.c: the I/O limits Identify Controller @id gives (MDTS, IOCCSZ,
 * ICDOFF), taken before any I/O goes on new queues, at the first connect
 * and at every reconnect. */
void nvmefs_io_take_limits(struct nvmefs_ctrl *ctrl, const struct nvme_id_ctrl *id);

/* io.c, for recovery: bring every I/O queue back with the same geometry and
 * check the namespaces; tear their transports down. */
int nvmefs_io_reconnect(struct nvmefs_ctrl *ctrl);
void nvmefs_io_disconnect(struct nvmefs_ctrl *ctrl);
/* Whether every I/O queue's owner has stopped it for failure @gen. */
bool nvmefs_io_all_stopped(struct nvmefs_ctrl *ctrl, unsigned int gen);
/* After a Namespace Attribute Changed event: new sizes, new namespaces,
 * and the ones gone or replaced.  A namespace without a definite answer
 * stays as it was, and the rescan is due again at ctrl->rescan_at_ms. */
int nvmefs_io_rescan(struct nvmefs_ctrl *ctrl);

/* aen.c, from the controller's thread: enable the events once live (after
 * every reconnect); look at the idle admin queue (connection events, the
 * event request kept outstanding) and act on what comes. */
void nvmefs_aen_enable(struct nvmefs_ctrl *ctrl);
void nvmefs_admin_tick(struct nvmefs_ctrl *ctrl);

/* ana.c: read the ANA log and set every cached namespace's state from its
 * group's (all optimized on a controller without ANA reporting); logs each
 * change through the event callback unless @quiet.  Takes io_lock.  Returns
 * how many namespaces changed state: the caller wakes the I/O queues'
 * owners, whose held I/O may now have a path. */
int nvmefs_ana_update(struct nvmefs_ctrl *ctrl, bool quiet);
/* Whether the controller reports ANA (CMIC bit 3). */
bool nvmefs_ana_reporting(const struct nvmefs_ctrl *ctrl);

#endif /* NVMEFS_INTERNAL_H */
