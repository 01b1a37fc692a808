/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file nvmefs.h
 * @brief nvmefs: a userspace NVMe-over-Fabrics initiator.
 *
 * A controller is an opaque handle reached from userspace over a fabrics
 * transport (RDMA, through librdmacm/libibverbs): connect to a discovery
 * controller or to an NVM subsystem, read what it offers, disconnect.  Identify structures and the
 * discovery log are libnvme's types (<nvme/types.h>); this header only
 * declares them, so it does not pull libnvme in.
 *
 * Every function that can fail returns 0 or a negative errno.  It also
 * leaves a one-line message for the calling thread, readable with
 * nvmefs_errmsg(), that says what failed, why, and what to do.
 *
 * A controller handle is used by one thread at a time.
 *
 * The header must compile on its own as C99 and as C11: a unit test
 * builds it in both modes with -pedantic-errors.
 */
#ifndef NVMEFS_NVMEFS_H
#define NVMEFS_NVMEFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Major version: bumped on incompatible API changes. */
#define NVMEFS_VERSION_MAJOR 0
/** Minor version: bumped on compatible additions. */
#define NVMEFS_VERSION_MINOR 1
/** The version as a string, equal to the package version configure knows. */
#define NVMEFS_VERSION "0.1"
/** The version as one comparable number, e.g. 0x000100 for 0.1. */
#define NVMEFS_VERSION_NUMBER \
	((NVMEFS_VERSION_MAJOR << 16) | (NVMEFS_VERSION_MINOR << 8))

/* libnvme's types, from <nvme/types.h>. */
struct nvme_id_ctrl;
struct nvme_id_ns;
struct nvmf_discovery_log;
struct nvmf_disc_log_entry;

/** A connected controller: its admin queue and what it told us. */
struct nvmefs_ctrl;

/** The NVMe-oF port of I/O controllers, whatever the transport (4420). */
#define NVMEFS_DEFAULT_TRSVCID "4420"
/** NVMe/TCP's discovery port (8009); RDMA's discovery controllers listen
 *  on NVMEFS_DEFAULT_TRSVCID. */
#define NVMEFS_TCP_DISCOVERY_TRSVCID "8009"
/** Default for connect and per-command timeouts, in milliseconds. */
#define NVMEFS_DEFAULT_TIMEOUT_MS 5000
/** The longest timeout, admin or I/O, in milliseconds: an hour. */
#define NVMEFS_MAX_TIMEOUT_MS 3600000
/** Default keep-alive timeout of an NVM subsystem's controller. */
#define NVMEFS_DEFAULT_KATO_MS 5000
/** Longest pause between reconnect attempts, in seconds (nvme-cli's -c). */
#define NVMEFS_DEFAULT_RECONNECT_DELAY_S 10
/** Seconds of outage after which a controller is given up (nvme-cli's -l). */
#define NVMEFS_DEFAULT_CTRL_LOSS_TMO_S 600
/** Entries in the admin queue unless told otherwise (as Linux uses). */
#define NVMEFS_DEFAULT_ADMIN_QUEUE_SIZE 32
/** Entries in an Identify active namespace list. */
#define NVMEFS_NS_LIST_LEN 1024
/** The most namespaces of one controller that its I/O queues serve. */
#define NVMEFS_MAX_NAMESPACES 4096
/** Bytes of Identify data (controller, namespace, lists, descriptors). */
#define NVMEFS_IDENTIFY_DATA_SIZE 4096

/**
 * Where, how and as whom to connect; fill with nvmefs_connect_opts_init().
 * Fields added in later versions go at the end: the library reads only the
 * @size bytes a caller has, so one built against an older header keeps
 * working.  (Callers built against 0.1, before @size, are served by the
 * 0.1 versions of the functions that take this struct.)
 */
struct nvmefs_connect_opts {
	/** Since 0.2.  The struct's size as the caller was built: set by
	 *  nvmefs_connect_opts_init(); leave it as that set it. */
	size_t size;
	/** Target address: an IPv4 or IPv6 literal or a host name.  Required. */
	const char *traddr;
	/** Target service id (port); NULL: NVMEFS_TCP_DISCOVERY_TRSVCID for
	 *  the discovery NQN over TCP, else NVMEFS_DEFAULT_TRSVCID, as
	 *  nvme-cli chooses. */
	const char *trsvcid;
	/** Local address to connect from; NULL: chosen by routing. */
	const char *host_traddr;
	/** Subsystem NQN; NULL: the well-known discovery NQN. */
	const char *subnqn;
	/** Host NQN; NULL: /etc/nvme/hostnqn, else one generated for this machine. */
	const char *hostnqn;
	/** Host identifier, a UUID string; NULL: /etc/nvme/hostid, else the
	 *  UUID in the host NQN, else a random one. */
	const char *hostid;
	/** Bound on address resolution, connection and each admin command. */
	unsigned int timeout_ms;
	/** Keep-alive timeout sent in Connect; negative: 0 for a discovery
	 *  controller, NVMEFS_DEFAULT_KATO_MS otherwise. */
	int kato_ms;
	/** Admin queue entries; 0: NVMEFS_DEFAULT_ADMIN_QUEUE_SIZE. */
	unsigned int admin_queue_size;
	/** After a failure the controller reconnects: at once, then backing
	 *  off to at most this many seconds between attempts (at least 1). */
	int reconnect_delay_s;
	/** Seconds of outage after which the controller is deleted and its I/O
	 *  fails for good; negative: reconnect forever; 0: never reconnect. */
	int ctrl_loss_tmo_s;
	/** Seconds of outage after which held and new I/O fails with -EIO while
	 *  reconnecting goes on; negative: off (I/O waits up to ctrl_loss_tmo_s). */
	int fast_io_fail_tmo_s;
	/** DH-HMAC-CHAP: this host's secret, as 'nvme gen-dhchap-key' prints it
	 *  (DHHC-1:NN:base64:); NULL: none, and a subsystem that requires
	 *  authentication refuses the connection.  Parsed into locked memory
	 *  at connect; the caller should wipe its copy afterwards. */
	const char *dhchap_secret;
	/** The controller's secret, to check the controller too (bidirectional
	 *  authentication); needs dhchap_secret.  NULL: not checked. */
	const char *dhchap_ctrl_secret;
	/** Remote keys: 1, each transfer gets a key of its own covering only
	 *  its bytes, which the target invalidates with its response, and
	 *  registered memory has no remote rights (refused on a device without
	 *  type-2 memory windows); 0, every registration keeps a standing
	 *  remote key; negative (the default): per-I/O where the device can. */
	int rkey_per_io;
	/** Since 0.2.  The transport, as nvme-cli's -t names it; NULL: "rdma"
	 *  (nvmefs_transport_name() lists them). */
	const char *trtype;
	/** Since 0.2.  NVMe/TCP: nonzero asks the controller for header
	 *  digests (CRC32C of every PDU header), as nvme-cli's --hdr-digest;
	 *  it may decline.  Other transports ignore it. */
	int hdr_digest;
	/** Since 0.2.  NVMe/TCP: nonzero asks for data digests, as nvme-cli's
	 *  --data-digest. */
	int data_digest;
	/** Since 0.2.  NVMe/TCP: the network interface every queue's socket
	 *  is bound to (SO_BINDTODEVICE), as nvme-cli's --host-iface; NULL:
	 *  routing chooses.  RDMA refuses it, as the kernel's nvme-rdma does. */
	const char *host_iface;
	/** Since 0.2.  Type of service of every queue's connection, 0 to 255,
	 *  as nvme-cli's --tos: IP_TOS (IPV6_TCLASS over IPv6) on NVMe/TCP's
	 *  sockets, the RDMA CM id's TOS over RDMA; negative (the default):
	 *  the system's. */
	int tos;
	/** Since 0.2.  Nonzero: every queue's Connect asks the controller to
	 *  disable SQ flow control (CATTR bit 2), as nvme-cli's
	 *  --disable-sqflow; its completions then carry no SQ head, and the
	 *  host must not fill a queue beyond its size, which it never does. */
	int disable_sqflow;
};

/** Fill @opts with the defaults and its size; the caller then sets traddr and more. */
void nvmefs_connect_opts_init(struct nvmefs_connect_opts *opts);

/**
 * The transports this library connects over, by the names
 * nvmefs_connect_opts.trtype takes: the @i-th from 0, NULL past the last.
 */
const char *nvmefs_transport_name(unsigned int i);
/**
 * The name of the transport that reaches a discovery log entry's
 * controller (its trtype, NVMF_TRTYPE_*), or NULL if this library has none.
 */
const char *nvmefs_transport_by_trtype(unsigned int trtype);

/**
 * The calling thread's message about its last failure: what failed, why,
 * and what to do, on one line without a trailing newline.  Never NULL.
 */
const char *nvmefs_errmsg(void);

/**
 * Since 0.2.  Check @opts as nvmefs_ctrl_connect() and nvmefs_discover()
 * do before they connect, with no network or device touched: the form of
 * the addresses, the NQNs, the secrets.  0, or -EINVAL for a value that
 * cannot be right (another -errno for a failure such as no memory), with
 * nvmefs_errmsg() saying which and what to do.
 */
int nvmefs_connect_opts_check(const struct nvmefs_connect_opts *opts);

/**
 * Since 0.2.  Whether @secret is a DH-HMAC-CHAP secret as
 * 'nvme gen-dhchap-key' prints it (DHHC-1:NN:base64:, its CRC right): 0,
 * or -EINVAL with nvmefs_errmsg() saying what is wrong (another -errno
 * when no memory could be locked to parse it in).
 */
int nvmefs_dhchap_secret_check(const char *secret);

/**
 * Connect to a controller: establish the admin queue's connection over
 * the transport @opts names, send Fabrics Connect, enable the controller and identify it.
 * On success *@ctrlp is a handle to release with nvmefs_ctrl_disconnect().
 */
int nvmefs_ctrl_connect(const struct nvmefs_connect_opts *opts,
			struct nvmefs_ctrl **ctrlp);

/**
 * Shut the controller down in order (CC.SHN, then wait for CSTS.SHST),
 * tear down its queues and free the handle.  A NULL handle is ignored.
 */
void nvmefs_ctrl_disconnect(struct nvmefs_ctrl *ctrl);

/** The controller id the target assigned in Connect. */
uint16_t nvmefs_ctrl_cntlid(const struct nvmefs_ctrl *ctrl);
/** The host NQN the controller was connected with. */
const char *nvmefs_ctrl_hostnqn(const struct nvmefs_ctrl *ctrl);
/** The host identifier the controller was connected with, as a UUID string. */
const char *nvmefs_ctrl_hostid(const struct nvmefs_ctrl *ctrl);
/** The target address and service id the controller was connected to. */
const char *nvmefs_ctrl_traddr(const struct nvmefs_ctrl *ctrl);
const char *nvmefs_ctrl_trsvcid(const struct nvmefs_ctrl *ctrl);
/** Since 0.2.  The transport the controller is connected over, by the name
 *  nvmefs_connect_opts.trtype takes ("rdma", "tcp"). */
const char *nvmefs_ctrl_trtype(const struct nvmefs_ctrl *ctrl);
/** The subsystem NQN the controller belongs to. */
const char *nvmefs_ctrl_subnqn(const struct nvmefs_ctrl *ctrl);
/** Whether each transfer gets a remote key of its own (rkey_per_io). */
int nvmefs_ctrl_rkey_per_io(const struct nvmefs_ctrl *ctrl);

/** Since 0.2.  What the per-I/O remote keys of a controller went through
 *  since it connected, over its reconnects; all 0 with standing keys. */
struct nvmefs_rkey_stats {
	/** Whether each transfer gets a key of its own (rkey_per_io). */
	bool per_io;
	/** Keys bound to one transfer's buffer (a memory window bound for
	 *  one command, counted once the command after the bind is sent). */
	uint64_t bound;
	/** Of those, killed by the target with its response (Send with
	 *  Invalidate) ... */
	uint64_t invalidated_by_target;
	/** ... and by us, because the response left the key alive. */
	uint64_t invalidated_locally;
};
/** Since 0.2.  Fill @st with the controller's key counts; safe from any
 *  thread.  With no command in flight, bound equals the two invalidated
 *  counts together, unless a queue failed meanwhile: its keys die with its
 *  connection, uncounted. */
void nvmefs_ctrl_rkey_stats(const struct nvmefs_ctrl *ctrl, struct nvmefs_rkey_stats *st);
/** Whether the controller is a discovery controller. */
int nvmefs_ctrl_is_discovery(const struct nvmefs_ctrl *ctrl);
/** The controller's cached Identify Controller data. */
const struct nvme_id_ctrl *nvmefs_ctrl_id(const struct nvmefs_ctrl *ctrl);

/**
 * Read the controller property at @offset (NVME_REG_CAP, NVME_REG_VS,
 * NVME_REG_CC, NVME_REG_CSTS, ...); 8-byte properties are read whole.
 */
int nvmefs_ctrl_get_property(struct nvmefs_ctrl *ctrl, uint32_t offset,
			     uint64_t *value);

/** Identify Controller, read afresh. */
int nvmefs_identify_ctrl(struct nvmefs_ctrl *ctrl, struct nvme_id_ctrl *id);
/** Identify Namespace @nsid. */
int nvmefs_identify_ns(struct nvmefs_ctrl *ctrl, uint32_t nsid,
		       struct nvme_id_ns *ns);
/**
 * Identify Active Namespace ID list: up to NVMEFS_NS_LIST_LEN NSIDs greater
 * than @after, in increasing order, zero-terminated when shorter.
 */
int nvmefs_identify_active_ns(struct nvmefs_ctrl *ctrl, uint32_t after,
			      uint32_t list[NVMEFS_NS_LIST_LEN]);
/**
 * Identify Namespace Identification Descriptor list of @nsid into @buf
 * (NVMEFS_IDENTIFY_DATA_SIZE bytes, struct nvme_ns_id_desc entries).
 */
int nvmefs_identify_ns_descs(struct nvmefs_ctrl *ctrl, uint32_t nsid,
			     void *buf);
/**
 * Get Log Page @lid for @nsid, @len bytes from byte @offset of the log.
 * @len is a multiple of 4; long reads are split as the controller needs.
 */
int nvmefs_get_log_page(struct nvmefs_ctrl *ctrl, uint8_t lid, uint32_t nsid,
			uint64_t offset, void *buf, size_t len);

/**
 * Read the discovery log of a discovery controller consistently: the
 * header, then the whole log, in one command where the controller allows
 * it, else in pieces followed by the header again; re-read until it holds
 * still (a bounded number of times).  *@logp is allocated; free() it.
 */
int nvmefs_get_discovery_log(struct nvmefs_ctrl *ctrl,
			     struct nvmf_discovery_log **logp);

/**
 * Called by nvmefs_discover() for each discovery log read: @where is the
 * discovery controller it came from, with the host NQN and host ID that
 * were used filled in, @depth 0 for the first and n for one
 * reached through n referrals.  @log is NULL when a referred controller
 * could not be read: nvmefs_errmsg() says why, and returning 0 goes on
 * with the rest of the walk.  A non-zero return stops the walk and is
 * returned by nvmefs_discover().
 */
typedef int (*nvmefs_discovery_cb)(const struct nvmefs_connect_opts *where,
				   const struct nvmf_discovery_log *log,
				   int depth, void *arg);

/**
 * Read the discovery log at @opts (subnqn NULL means the well-known
 * discovery NQN) and, up to @max_depth referrals deep, the logs of the
 * discovery controllers it refers to, each at most once.  Fails only when
 * the first log cannot be read or @cb stops the walk; a referral that
 * cannot be followed is reported to @cb.
 */
int nvmefs_discover(const struct nvmefs_connect_opts *opts, int max_depth,
		    nvmefs_discovery_cb cb, void *arg);

/* ------------------------------------------------------------------------ */
/* I/O queues                                                                */
/* ------------------------------------------------------------------------ */

/**
 * An I/O queue of a controller: its own transport queue (an RDMA queue
 * pair and completion queue) and registered buffers.  One thread at a time drives a queue; queues
 * share no lock on the I/O path, so N threads on N queues scale.
 *
 * This is the per-path layer: nvmefs's own mount and perf reach I/O only
 * through a subsystem head (struct nvmefs_subsys, its queues struct
 * nvmefs_mpq), with one path or several, which sits on these queues.
 * The nvmefs_ioq_ functions stay for programs that drive one controller's
 * queues themselves.
 */
struct nvmefs_ioq;

/** Memory registered once with the transport's device, usable on every queue. */
struct nvmefs_mr;

/** Default I/O queue entries (-Q), bounded by the controller's CAP.MQES. */
#define NVMEFS_DEFAULT_IO_QUEUE_SIZE 128
/** queue_size that asks for enough entries to have every pool buffer's I/O
 *  in flight whole (one command per largest transfer the controller takes,
 *  from its MDTS), bounded by CAP.MQES. */
#define NVMEFS_IO_QUEUE_SIZE_AUTO 0
/** Default request timeout: a command not completed by then fails the controller. */
#define NVMEFS_DEFAULT_IO_TIMEOUT_MS 30000
/** Default size of each buffer in a queue's registered pool. */
#define NVMEFS_DEFAULT_IO_BUF_SIZE (128 * 1024)

/** How many I/O queues to create and how; fill with nvmefs_io_opts_init(). */
struct nvmefs_io_opts {
	/** Queues to create (-i); the controller may grant fewer: an error,
	 *  unless take_fewer. */
	unsigned int nr_queues;
	/** Entries per queue (-Q); at most queue_size - 1 commands in flight;
	 *  NVMEFS_IO_QUEUE_SIZE_AUTO: from the pool and the controller's MDTS. */
	unsigned int queue_size;
	/** Bytes per pool buffer (nvmefs_ioq_buf_get()). */
	size_t buf_size;
	/** Pool buffers per queue; 0: queue_size - 1. */
	unsigned int bufs_per_queue;
	/** A command not completed within this fails the controller. */
	unsigned int timeout_ms;
	/** Nonzero: when the controller grants fewer queues than nr_queues,
	 *  create those (nvmefs_ctrl_io_queue_count() says how many) rather
	 *  than fail. */
	int take_fewer;
};

/** Fill @opts with the defaults. */
void nvmefs_io_opts_init(struct nvmefs_io_opts *opts);

/**
 * Negotiate the number of I/O queues (Set Features, Number of Queues),
 * then create, register and connect each one (Fabrics Connect with the
 * admin queue's controller id), and identify the active namespaces.
 * Fails if I/O queues already exist.
 */
int nvmefs_ctrl_create_io_queues(struct nvmefs_ctrl *ctrl,
				 const struct nvmefs_io_opts *opts);
/**
 * Ask the controller for @nr I/O queues (Set Features, Number of Queues)
 * and store in @granted how many it grants, at most @nr, creating none:
 * for a caller that sizes each queue by how many there are, so it creates
 * what is granted once (with nr_queues set to it) rather than creating,
 * deleting and creating again.  Fails if I/O queues already exist.
 */
int nvmefs_ctrl_ask_io_queues(struct nvmefs_ctrl *ctrl, unsigned int nr, unsigned int *granted);
/** Tear the I/O queues down; they can then be created again. */
void nvmefs_ctrl_delete_io_queues(struct nvmefs_ctrl *ctrl);
/** How many I/O queues the controller has. */
unsigned int nvmefs_ctrl_io_queue_count(const struct nvmefs_ctrl *ctrl);
/** I/O queue @idx (0-based), or NULL. */
struct nvmefs_ioq *nvmefs_ctrl_io_queue(struct nvmefs_ctrl *ctrl, unsigned int idx);

/**
 * The controller's failure, if it is not live: a keep-alive or command
 * timeout, a broken connection, a protocol violation.  0 while live, else
 * a negative errno.  While the controller reconnects, I/O is held (see
 * struct nvmefs_connect_opts); once it is deleted, every I/O fails.
 */
int nvmefs_ctrl_failed(const struct nvmefs_ctrl *ctrl);

/**
 * The bytes of memory the controller has registered with its RDMA device
 * now, which the kernel pins (VmPin in /proc/PID/status): its queues'
 * commands, responses and buffer pools, and every region registered
 * through it, each rounded out to whole pages.  What a locked-memory limit
 * has to cover.
 */
uint64_t nvmefs_ctrl_pinned_bytes(const struct nvmefs_ctrl *ctrl);

/** A controller's state, as Linux names them in sysfs. */
enum nvmefs_ctrl_state {
	/** Connected; I/O flows. */
	NVMEFS_CTRL_LIVE,
	/** Failed: its queues are being stopped and drained. */
	NVMEFS_CTRL_RESETTING,
	/** Between and during reconnect attempts. */
	NVMEFS_CTRL_CONNECTING,
	/** Given up (ctrl_loss_tmo, or a target that is no longer the same):
	 *  every I/O fails, no more attempts. */
	NVMEFS_CTRL_DELETED,
};

/** "live", "resetting", "connecting" or "deleted". */
const char *nvmefs_ctrl_state_name(enum nvmefs_ctrl_state state);

/** What nvmefs_ctrl_status() tells. */
struct nvmefs_ctrl_status {
	enum nvmefs_ctrl_state state;
	/** The -errno of the failure that @reason tells; 0: none yet. */
	int error;
	/** The failure that began the current or last outage, or the last
	 *  reconnect attempt's, in one line. */
	char reason[512];
	/** Reconnect attempts in the current outage (or the last one, once live). */
	unsigned int attempts;
	/** Outages recovered from since connecting. */
	unsigned int reconnects;
	/** When the state last changed, on the CLOCK_MONOTONIC clock, in ms. */
	int64_t since_ms;
	/** The longest time from a failure to live again, in ms. */
	int64_t longest_outage_ms;
	/** Non-zero when held and new I/O fails (fast_io_fail_tmo, or deleted). */
	int io_failing;
	/**
	 * I/O queues with a connection of their own.  Fewer than were created
	 * while the target grants fewer since a reconnect: the others' I/O then
	 * goes through these, and every I/O queue handle stays usable.
	 */
	unsigned int io_queues;
};

/** Fill @st with the controller's state; safe from any thread. */
void nvmefs_ctrl_status(const struct nvmefs_ctrl *ctrl, struct nvmefs_ctrl_status *st);

/**
 * Called once for every state transition, in order, from the library's own
 * thread for @ctrl (never the thread that noticed the failure, nor the one
 * that keeps the controller alive and reconnects it): @msg is one line
 * saying what happened and what comes next (as the kernel logs
 * "Reconnecting in 10 seconds..."), @st the status the transition led to.
 * No lock of the library is held: the callback may call any function of
 * the library but nvmefs_ctrl_disconnect(), nvmefs_ctrl_stop_reconnect()
 * and the callback setters included.  A callback that blocks delays the
 * callbacks after it, not the controller.
 */
typedef void (*nvmefs_ctrl_event_cb)(void *arg, const struct nvmefs_ctrl_status *st,
				     const char *msg);
/**
 * Set (or with NULL clear) the transition callback of @ctrl.  Once this
 * returns, the old callback is not running and is not called again (unless
 * called from a callback of @ctrl, which does not wait for itself).
 */
void nvmefs_ctrl_set_event_cb(struct nvmefs_ctrl *ctrl, nvmefs_ctrl_event_cb cb, void *arg);

/** What changed on the target, for nvmefs_ctrl_set_change_cb(). */
enum nvmefs_ctrl_change {
	/** Namespaces were added, removed, resized or replaced: see
	 *  nvmefs_ctrl_ns_list() and nvmefs_ns_info() (-ENODEV: gone). */
	NVMEFS_CHANGE_NAMESPACES,
	/** A discovery controller's log changed: read it again. */
	NVMEFS_CHANGE_DISCOVERY_LOG,
	/** Asymmetric Namespace Access states changed: see nvmefs_ns_ana_state(). */
	NVMEFS_CHANGE_ANA,
};

/**
 * Called when the controller reports a change with an Asynchronous Event
 * (Namespace Attribute Changed, Discovery Log Page Change), after the
 * library has taken it in, and after every reconnect (what changed while
 * it was away was not reported); from the same thread as the transition
 * callback, in order with it.  A change not yet told is told once.  No lock
 * of the library is held: the callback may send admin commands, and may
 * block without holding up the controller's Keep Alive, recovery or
 * deadlines.
 */
typedef void (*nvmefs_ctrl_change_cb)(void *arg, enum nvmefs_ctrl_change what);
/**
 * Set (or with NULL clear) the change callback of @ctrl, waiting as
 * nvmefs_ctrl_set_event_cb() does.  Asynchronous Event Requests are kept
 * outstanding on a controller that offers the events and has a keep-alive
 * (its own thread), callback or not.
 */
void nvmefs_ctrl_set_change_cb(struct nvmefs_ctrl *ctrl, nvmefs_ctrl_change_cb cb, void *arg);

/**
 * Stop reconnecting, as when a user gives up on an outage: a controller
 * that is not live is deleted now and its held I/O fails; a live one is
 * deleted at its next failure instead of reconnecting.  For shutting down
 * without waiting up to ctrl_loss_tmo for I/O held by an outage.
 */
void nvmefs_ctrl_stop_reconnect(struct nvmefs_ctrl *ctrl);

/** What I/O needs to know of a namespace. */
struct nvmefs_ns_info {
	uint32_t nsid;
	/** Capacity in logical blocks (NSZE). */
	uint64_t nlb;
	/** Bytes per logical block. */
	uint32_t lba_size;
	/** Blocks one Write Zeroes carries at most, NVMEFS_MAX_ZEROES_BLOCKS or
	 *  the controller's Write Zeroes Size Limit: zeroing or punching N
	 *  blocks takes N / max_zeroes_nlb commands, rounded up. */
	uint32_t max_zeroes_nlb;
};

/**
 * Geometry of active namespace @nsid, as identified when the I/O queues
 * were created, or since, after an asynchronous event or a reconnect.
 * -ENOENT if it is not active; -ENODEV if it was removed or replaced by
 * another namespace since (its I/O fails).
 */
int nvmefs_ns_info(const struct nvmefs_ctrl *ctrl, uint32_t nsid,
		   struct nvmefs_ns_info *info);
/**
 * How this controller reaches namespace @nsid, by its ANA group's state:
 * 1 optimized, 2 non-optimized, 3 inaccessible, 4 persistent loss, 15 in
 * change (enum nvme_ana_state); 1 on a controller without ANA reporting.
 * Negative errno if the namespace is not known.
 */
int nvmefs_ns_ana_state(const struct nvmefs_ctrl *ctrl, uint32_t nsid);
/** "optimized", "non-optimized", "inaccessible", "persistent-loss", "change"
 *  or "unknown". */
const char *nvmefs_ana_state_name(int state);

/** The NSIDs of the namespaces identified with the I/O queues or since
 *  (an asynchronous event adds to the list, never removes from it): every
 *  page of the active list, up to NVMEFS_MAX_NAMESPACES.  One that could not
 *  be identified is listed, and nvmefs_ns_info() says why it is not usable. */
unsigned int nvmefs_ctrl_ns_list(const struct nvmefs_ctrl *ctrl,
				 const uint32_t **nsids);

/**
 * Register @len bytes at @addr once, so I/O can move data straight to and
 * from them on any queue of @ctrl.  Release with nvmefs_mr_dereg() before
 * the controller goes.
 */
int nvmefs_mr_reg(struct nvmefs_ctrl *ctrl, void *addr, size_t len,
		  struct nvmefs_mr **mrp);
/**
 * Release a registration; no I/O may be using it.  Other threads may go on
 * doing I/O with other regions, and registering and releasing them,
 * meanwhile: lookups take no lock, so the handle's memory is kept until
 * the controller goes (some 100 bytes a registration).
 */
void nvmefs_mr_dereg(struct nvmefs_mr *mr);

/** A buffer of nvmefs_ioq_buf_size() bytes from @ioq's registered pool, or NULL if all are taken. */
void *nvmefs_ioq_buf_get(struct nvmefs_ioq *ioq);
/** Return a pool buffer to @ioq. */
void nvmefs_ioq_buf_put(struct nvmefs_ioq *ioq, void *buf);
/** Bytes in each pool buffer of @ioq. */
size_t nvmefs_ioq_buf_size(const struct nvmefs_ioq *ioq);

/**
 * Completion of an I/O: @status is 0 on success, a positive NVMe status
 * field (SCT << 8 | SC, as nvme_status_to_string() takes it) when the
 * controller failed the command, or a negative errno when the transport
 * or the controller failed (-ETIMEDOUT, -ECONNRESET, ...).
 */
typedef void (*nvmefs_io_cb)(void *arg, int status);

/*
 * Asynchronous I/O on namespace @nsid: @nlb logical blocks from @slba.
 * @buf must lie in registered memory (a pool buffer or an nvmefs_mr).
 * Transfers larger than the controller takes in one command are split.
 * Returns 0 when the I/O was submitted: @cb is then called exactly once,
 * on the queue's thread, from nvmefs_ioq_poll() or nvmefs_ioq_arm().
 * Returns -EAGAIN when the queue is full (poll
 * and try again), or another negative errno, without calling @cb.
 */
int nvmefs_ioq_read(struct nvmefs_ioq *ioq, uint32_t nsid, uint64_t slba,
		    uint32_t nlb, void *buf, nvmefs_io_cb cb, void *arg);
int nvmefs_ioq_write(struct nvmefs_ioq *ioq, uint32_t nsid, uint64_t slba,
		     uint32_t nlb, const void *buf, nvmefs_io_cb cb, void *arg);
/**
 * Flush: completes once everything written before it is durable: every
 * write completed before it, and every write, Write Zeroes or Deallocate
 * submitted before it on this queue (it goes out once those have completed,
 * after their retries).
 */
int nvmefs_ioq_flush(struct nvmefs_ioq *ioq, uint32_t nsid,
		     nvmefs_io_cb cb, void *arg);
/** Blocks one Write Zeroes command carries at most (its NLB field is 16 bits,
 * 0's based): zeroing and punching take one command per this many blocks. */
#define NVMEFS_MAX_ZEROES_BLOCKS 65536u

/** Write Zeroes over @nlb blocks from @slba, in as many commands as it takes. */
int nvmefs_ioq_write_zeroes(struct nvmefs_ioq *ioq, uint32_t nsid,
			    uint64_t slba, uint64_t nlb,
			    nvmefs_io_cb cb, void *arg);
/**
 * Punch a hole: @nlb blocks from @slba read as zeros afterwards, and the
 * controller may free them.  Write Zeroes, with Deallocate where the
 * namespace says it deallocates that way (DLFEAT bit 3), as Linux does;
 * never Dataset Management alone, which the specification makes advisory.
 */
int nvmefs_ioq_punch(struct nvmefs_ioq *ioq, uint32_t nsid,
		     uint64_t slba, uint64_t nlb,
		     nvmefs_io_cb cb, void *arg);
/** Dataset Management, deallocate @nlb blocks from @slba, in as many
 * commands as it takes.  Advisory: the blocks may still read as before. */
int nvmefs_ioq_deallocate(struct nvmefs_ioq *ioq, uint32_t nsid,
			  uint64_t slba, uint64_t nlb,
			  nvmefs_io_cb cb, void *arg);

/**
 * Process completions, calling their callbacks, waiting up to @timeout_ms
 * for the first (0: don't wait, the busy-polling form; negative: wait as
 * long as it takes, asleep in the kernel).  Also fails requests past their
 * timeout.  Returns the number of I/Os completed, or a negative errno once
 * the queue or its controller failed (after every outstanding callback).
 */
int nvmefs_ioq_poll(struct nvmefs_ioq *ioq, int timeout_ms);
/**
 * A file descriptor for poll()/epoll, readable when a completion arrives
 * after nvmefs_ioq_arm().  The usual verbs pattern: poll until nothing
 * comes, arm, and sleep on the descriptor only if arm returned 0.
 */
int nvmefs_ioq_fd(const struct nvmefs_ioq *ioq);
/** Arm the descriptor; > 0 if completions are already waiting (poll first).
 *  Completions found while arming are taken: their callbacks run here. */
int nvmefs_ioq_arm(struct nvmefs_ioq *ioq);
/**
 * After nvmefs_ioq_arm() returned 0: at most how long to sleep on the
 * descriptor before polling again, in ms, because an I/O waits out the
 * controller's command retry delay; -1 when only the descriptor brings work.
 */
int nvmefs_ioq_wait_ms(const struct nvmefs_ioq *ioq);
/**
 * I/Os submitted and not yet completed, and other queues' I/O this queue is
 * carrying.  While the target grants fewer I/O queues than were created
 * (after a reconnect), a queue without a connection of its own has its I/O
 * sent by another queue's owner, who must go on polling for it: a program
 * whose threads each own queues lets none of them stop polling until every
 * queue's count is 0.
 */
unsigned int nvmefs_ioq_inflight(const struct nvmefs_ioq *ioq);
/**
 * 1 if I/O to namespace @nsid submitted now would be held: the controller
 * is reconnecting and its I/O does not fail yet (fast_io_fail_tmo).  0 when
 * it can go, and when it would fail at once.  Cheap; for the queue's owner
 * thread.
 */
int nvmefs_ioq_ns_held(const struct nvmefs_ioq *ioq, uint32_t nsid);

/*
 * Synchronous forms: submit, then poll this queue until done.  Return 0,
 * a positive NVMe status, or a negative errno (with a message).
 */
int nvmefs_ioq_read_sync(struct nvmefs_ioq *ioq, uint32_t nsid, uint64_t slba,
			 uint32_t nlb, void *buf);
int nvmefs_ioq_write_sync(struct nvmefs_ioq *ioq, uint32_t nsid, uint64_t slba,
			  uint32_t nlb, const void *buf);
int nvmefs_ioq_flush_sync(struct nvmefs_ioq *ioq, uint32_t nsid);

/* ------------------------------------------------------------------------ */
/* Multipath                                                                 */
/* ------------------------------------------------------------------------ */

/**
 * A subsystem head: one subsystem reached through one or more controllers,
 * its paths, as the Linux host's native multipath groups them.  The face
 * every I/O of nvmefs's own mount and perf goes through.  A multipath head
 * (nvmefs_subsys_create(), or any head given a second path): each I/O goes along a path
 * that ANA marks optimized (else non-optimized; never inaccessible, lost
 * or in change), and when a path fails, its I/O goes to another one as
 * soon as the failed path's queues are drained, while the failed path
 * reconnects on its own and rejoins.  I/O is held only while no path is
 * usable and some path may still come back (it is not past its
 * fast_io_fail_tmo or ctrl_loss_tmo).
 */
struct nvmefs_subsys;
/**
 * One thread's I/O queue of a head, over every path: I/O queue @idx of each path's
 * controller.  The rules of struct nvmefs_ioq apply to it.
 */
struct nvmefs_mpq;
/** Memory registered on every path of a subsystem. */
struct nvmefs_subsys_mr;

/** The most paths of one subsystem. */
#define NVMEFS_MAX_PATHS 8

/** How a path is picked among the usable ones; Linux's names (iopolicy). */
enum nvmefs_iopolicy {
	/** The first optimized path, in the order the paths were added (Linux
	 *  picks the nearest by NUMA distance; here there is none).  Linux's
	 *  default. */
	NVMEFS_IOPOLICY_NUMA,
	/** The optimized paths in turn, I/O by I/O. */
	NVMEFS_IOPOLICY_ROUND_ROBIN,
	/** The optimized path with the fewest of this queue's I/Os in flight. */
	NVMEFS_IOPOLICY_QUEUE_DEPTH,
};

/** "numa", "round-robin" or "queue-depth". */
const char *nvmefs_iopolicy_name(enum nvmefs_iopolicy policy);
/** The policy named @name; -EINVAL if there is none. */
int nvmefs_iopolicy_parse(const char *name, enum nvmefs_iopolicy *policy);

/**
 * A subsystem whose first path is @first, a controller with its I/O queues
 * created.  On success the subsystem owns @first: nvmefs_subsys_destroy()
 * disconnects it.
 */
int nvmefs_subsys_create(struct nvmefs_ctrl *first, enum nvmefs_iopolicy policy,
			 struct nvmefs_subsys **subsysp);
/**
 * A head with @ctrl, a controller with its I/O queues created, as its one
 * path, for a program that reaches one controller: it is not multipath.
 * Its queues pass every call straight to the path's queue, so I/O behaves
 * as the nvmefs_ioq_ functions say (held while the controller reconnects,
 * failed past fast_io_fail_tmo or ctrl_loss_tmo, with the controller's own
 * errors) and costs nothing more; it counts no nvmefs_path_stats.  A path
 * added with nvmefs_subsys_add_path() makes it multipath.  On success the
 * head owns @ctrl.
 */
int nvmefs_subsys_create_single(struct nvmefs_ctrl *ctrl, struct nvmefs_subsys **subsysp);
/** Whether the head is multipath: made by nvmefs_subsys_create(), or given a second path. */
bool nvmefs_subsys_multipath(const struct nvmefs_subsys *subsys);
/**
 * Add @ctrl as another path, before any I/O: it must be a controller of the
 * same subsystem with as many I/O queues as the first path, and every
 * namespace must be the same on both (NSIDs, NGUID, EUI-64, UUID and block
 * size).  On success the subsystem owns @ctrl; on failure the caller does.
 */
int nvmefs_subsys_add_path(struct nvmefs_subsys *subsys, struct nvmefs_ctrl *ctrl);
/** Disconnect every path and free the subsystem.  NULL is ignored. */
void nvmefs_subsys_destroy(struct nvmefs_subsys *subsys);
/** How many paths there are. */
unsigned int nvmefs_subsys_path_count(const struct nvmefs_subsys *subsys);
/** Path @idx's controller (0-based, in the order added), or NULL. */
struct nvmefs_ctrl *nvmefs_subsys_path(struct nvmefs_subsys *subsys, unsigned int idx);
/** The multipath I/O queue @idx, over I/O queue @idx of every path, or NULL. */
struct nvmefs_mpq *nvmefs_subsys_queue(struct nvmefs_subsys *subsys, unsigned int idx);
/** The subsystem's I/O policy. */
enum nvmefs_iopolicy nvmefs_subsys_iopolicy(const struct nvmefs_subsys *subsys);

/** What went through one path, over every queue. */
struct nvmefs_path_stats {
	/** I/Os completed through the path, and of them, failed. */
	uint64_t ios;
	uint64_t errors;
	/** I/Os the path gave back (it failed, or answered with a path
	 *  error) that went to another path or were held. */
	uint64_t failovers;
};
/** Since 0.2.  Every path's per-I/O keys together (nvmefs_ctrl_rkey_stats());
 *  per_io if any path's are.  Safe from any thread. */
void nvmefs_subsys_rkey_stats(struct nvmefs_subsys *subsys, struct nvmefs_rkey_stats *st);
/** Fill @st with path @idx's counts; safe from any thread. */
void nvmefs_subsys_path_stats(const struct nvmefs_subsys *subsys, unsigned int idx,
			      struct nvmefs_path_stats *st);

/** Register @len bytes at @addr on every path (nvmefs_mr_reg() on each). */
int nvmefs_subsys_mr_reg(struct nvmefs_subsys *subsys, void *addr, size_t len,
			 struct nvmefs_subsys_mr **mrp);
/** Release a registration on every path; no I/O may be using it. */
void nvmefs_subsys_mr_dereg(struct nvmefs_subsys_mr *mr);

/* As nvmefs_ioq_buf_get() and nvmefs_ioq_buf_put(): buffers registered on every path. */
void *nvmefs_mpq_buf_get(struct nvmefs_mpq *mpq);
void nvmefs_mpq_buf_put(struct nvmefs_mpq *mpq, void *buf);

/*
 * As the nvmefs_ioq_ forms, along a path the policy picks.  @buf lies in a
 * pool buffer of the queue or in memory from nvmefs_subsys_mr_reg().
 */
int nvmefs_mpq_read(struct nvmefs_mpq *mpq, uint32_t nsid, uint64_t slba,
		    uint32_t nlb, void *buf, nvmefs_io_cb cb, void *arg);
int nvmefs_mpq_write(struct nvmefs_mpq *mpq, uint32_t nsid, uint64_t slba,
		     uint32_t nlb, const void *buf, nvmefs_io_cb cb, void *arg);
int nvmefs_mpq_flush(struct nvmefs_mpq *mpq, uint32_t nsid, nvmefs_io_cb cb, void *arg);
int nvmefs_mpq_write_zeroes(struct nvmefs_mpq *mpq, uint32_t nsid, uint64_t slba,
			    uint64_t nlb, nvmefs_io_cb cb, void *arg);
int nvmefs_mpq_punch(struct nvmefs_mpq *mpq, uint32_t nsid, uint64_t slba,
		     uint64_t nlb, nvmefs_io_cb cb, void *arg);
int nvmefs_mpq_deallocate(struct nvmefs_mpq *mpq, uint32_t nsid, uint64_t slba,
			  uint64_t nlb, nvmefs_io_cb cb, void *arg);
/**
 * As nvmefs_ioq_poll(), over every path; also sends held I/O once a path is
 * usable.  A negative errno once no path can come back (after every
 * outstanding callback).
 */
int nvmefs_mpq_poll(struct nvmefs_mpq *mpq, int timeout_ms);
/** As nvmefs_ioq_fd() and nvmefs_ioq_arm(), over every path. */
int nvmefs_mpq_fd(const struct nvmefs_mpq *mpq);
int nvmefs_mpq_arm(struct nvmefs_mpq *mpq);
/** As nvmefs_ioq_wait_ms(), the soonest over every path. */
int nvmefs_mpq_wait_ms(const struct nvmefs_mpq *mpq);
/** As nvmefs_ioq_inflight(), over every path. */
unsigned int nvmefs_mpq_inflight(const struct nvmefs_mpq *mpq);
/**
 * 1 if I/O to namespace @nsid submitted now would be held: no path reaches
 * it now (optimized or non-optimized), and one may later.  0 when it can
 * go, and when it would fail at once.  Cheap (a look at each path's state);
 * for the queue's owner thread.
 */
int nvmefs_mpq_ns_held(const struct nvmefs_mpq *mpq, uint32_t nsid);

#ifdef __cplusplus
}
#endif

#endif /* NVMEFS_NVMEFS_H */
