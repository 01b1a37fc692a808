/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file ctrl.h
 * @brief Connecting to a controller: the connect options, the transports,
 * the calling thread's failure message, and a controller handle with what
 * it was connected with.  Part of <nvmefs/nvmefs.h>, which programs include.
 *
 * Every function that can fail returns 0 or a negative errno.  It also
 * leaves a one-line message for the calling thread, readable with
 * nvmefs_errmsg(), that says what failed, why, and what to do.
 *
 * A controller handle is used by one thread at a time.
 */
#ifndef NVMEFS_PUBLIC_CTRL_H
#define NVMEFS_PUBLIC_CTRL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* libnvme's types, from <nvme/types.h>. */
struct nvme_id_ctrl;

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
	/** Target service id (port); NULL: the transport's discovery port
	 *  for the discovery NQN (NVMEFS_TCP_DISCOVERY_TRSVCID over TCP),
	 *  else its I/O port (NVMEFS_DEFAULT_TRSVCID), as nvme-cli chooses;
	 *  nvmefs_transport_info() tells both. */
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
	/** RDMA only; other transports refuse it.  Remote keys: 1, each
	 *  transfer gets a key of its own covering only its bytes, which the
	 *  target invalidates with its response, and registered memory has no
	 *  remote rights (refused on a device without type-2 memory windows);
	 *  0, every registration keeps a standing remote key; negative (the
	 *  default): per-I/O where the device can. */
	int rkey_per_io;
	/** Since 0.2.  The transport, as nvme-cli's -t names it; NULL: "rdma"
	 *  (nvmefs_transport_name() lists them). */
	const char *trtype;
	/** Since 0.2.  NVMe/TCP: nonzero asks the controller for header
	 *  digests (CRC32C of every PDU header), as nvme-cli's --hdr-digest;
	 *  it may decline.  Other transports refuse it. */
	int hdr_digest;
	/** Since 0.2.  NVMe/TCP: nonzero asks for data digests, as nvme-cli's
	 *  --data-digest.  Other transports refuse it. */
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
 * Since 0.2.  The connect options that not every transport takes, as bits of
 * nvmefs_transport_info.allowed_opts (Linux's nvmf_transport_ops.allowed_opts).
 * A transport refuses one it does not take when it is given (set to other
 * than its nvmefs_connect_opts_init() default).
 */
enum {
	NVMEFS_OPT_RKEY_PER_IO = 1 << 0,	/**< rkey_per_io: RDMA */
	NVMEFS_OPT_HDR_DIGEST = 1 << 1,		/**< hdr_digest: NVMe/TCP */
	NVMEFS_OPT_DATA_DIGEST = 1 << 2,	/**< data_digest: NVMe/TCP */
	NVMEFS_OPT_HOST_IFACE = 1 << 3,		/**< host_iface: NVMe/TCP */
	NVMEFS_OPT_TOS = 1 << 4,		/**< tos: both */
};

/**
 * Since 0.2.  What a transport is; filled by nvmefs_transport_info().
 * Fields added in later versions go at the end: the library fills only the
 * @size bytes the caller has.
 */
struct nvmefs_transport_info {
	/** The struct's size as the caller was built: set it to sizeof();
	 *  on return, how many bytes the library filled (fields past those,
	 *  of a newer header, stay as the caller left them). */
	size_t size;
	/** Its name, as nvmefs_connect_opts.trtype takes it. */
	const char *name;
	/** The service id (port) of its I/O controllers when none is given. */
	const char *trsvcid;
	/** The service id of its discovery controllers when none is given. */
	const char *discovery_trsvcid;
	/** The NVMEFS_OPT_* it takes. */
	unsigned int allowed_opts;
};

/**
 * Since 0.2.  Fill @info, its size set by the caller, with what the
 * transport @trtype is (NULL: the default, nvmefs_transport_name(0)).
 * 0; -EPROTONOSUPPORT for a transport this library has not, or -EINVAL for
 * a size smaller than any version's, with nvmefs_errmsg() saying which.
 */
int nvmefs_transport_info(const char *trtype, struct nvmefs_transport_info *info);

/**
 * Since 0.2.  Reset to their defaults the options in @opts that its
 * transport (opts->trtype) does not take: for a caller that gives one set
 * of options to paths over several transports, each path getting those of
 * its own.  Only the opts->size bytes the caller has are touched.  The
 * NVMEFS_OPT_* of those that were given (0: none); -EPROTONOSUPPORT for a
 * transport this library has not, or -EINVAL for a size smaller than any
 * version's.
 */
int nvmefs_connect_opts_fit(struct nvmefs_connect_opts *opts);

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

#ifdef __cplusplus
}
#endif

#endif /* NVMEFS_PUBLIC_CTRL_H */
