/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The controller as every layer of libnvmefs reaches it: struct nvmefs_ctrl
 * and what it holds by value.  Its functions are declared by the headers
 * of the files that define them.
 */
#ifndef NVMEFS_CTRL_TYPES_H
#define NVMEFS_CTRL_TYPES_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <nvme/types.h>

#include "nvmefs/nvmefs.h"
#include "transport_ops.h"

struct nvmefs_mr;
struct nvmefs_ioq;
struct nvmefs_auth;
struct nvmefs_tls_psk;

/* A controller's states; ctrl_state.c moves between them. */
enum ctrl_state {
	/* Being connected the first time: Connect, enabling and Identify
	 * not done yet.  A failure here is not reconnected from. */
	CTRL_NEW,
	CTRL_LIVE,
	/* Failed: its queues are being stopped and drained. */
	CTRL_RESETTING,
	/* Between and during reconnect attempts. */
	CTRL_CONNECTING,
	/* Given up: every I/O fails, no more attempts; nothing leaves it. */
	CTRL_DELETED,
};
#define CTRL_NR_STATES (CTRL_DELETED + 1)

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
	/* nvmefs_subsys_give_up_ns(): its user waits for this controller no
	 * more; while the controller is not live its I/O fails. */
	atomic_bool given_up;
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
	/* Each queue's wake descriptor, beside the list, so that the state's
	 * owner wakes the queues' owners without knowing what a queue is. */
	int *ioq_wake_fds;
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
	 * Identify at every connect (io_queues.c takes them), read by every
	 * thread that submits. */
	_Atomic uint32_t max_xfer;
	/* DH-HMAC-CHAP secrets and state (auth.c); NULL without a secret. */
	struct nvmefs_auth *auth;
	/* TLS: the identity and TLS PSK every queue presents (tls_key.h),
	 * derived once at connect; NULL without TLS.  With @concat, generated
	 * by the admin queue's DH-HMAC-CHAP at each connect (auth.c), and
	 * NULL while the admin queue connects without TLS to make it. */
	struct nvmefs_tls_psk *tls_psk;
	/* Secure channel concatenation (tls_concat): the controller's thread
	 * (re)connects; set once at connect. */
	bool concat;
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
	/* io_retry.c: with no other path, an I/O saw a path error that names no ANA
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

#endif /* NVMEFS_CTRL_TYPES_H */
