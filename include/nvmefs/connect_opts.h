/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file connect_opts.h
 * @brief Where, how and as whom to connect: the connect options, their defaults
 * and their checks.  Part of <nvmefs/nvmefs.h>.
 */
#ifndef NVMEFS_PUBLIC_CONNECT_OPTS_H
#define NVMEFS_PUBLIC_CONNECT_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

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
	/** Since 0.2.  NVMe/TCP: every queue's connection is a TLS 1.3
	 *  channel keyed by this pre-shared key, in the interchange form
	 *  'nvme gen-tls-key' prints (NVMeTLSkey-1:HH:base64:), as nvme-cli's
	 *  --tls with --tls-key; NULL: no TLS, and a port that requires it
	 *  refuses the connection.  Parsed into locked memory at connect;
	 *  the caller should wipe its copy afterwards. */
	const char *tls_key;
	/** Since 0.2.  The PSK identity's version: 1 (with the PSK digest,
	 *  the default: what the kernel's initiator presents first) or 0
	 *  ("NVMe0R0H hostnqn subnqn"), as nvme-cli's -I/--identity. */
	int tls_identity;
	/** Since 0.2.  Nonzero: derive the TLS PSK as libnvme before 1.16 did
	 *  (nvme-cli 2.16's --compat), for keys inserted by those versions. */
	int tls_compat;
	/** Since 0.2.  NVMe/TCP: nonzero asks for secure channel
	 *  concatenation, as nvme-cli's --concat: DH-HMAC-CHAP on the admin
	 *  queue (dhchap_secret, and a DH group on the target) generates the
	 *  TLS PSK every queue then runs TLS 1.3 with, at every (re)connect;
	 *  takes no tls_key. */
	int tls_concat;
};

/** Fill @opts with the defaults and its size; the caller then sets traddr and more. */
void nvmefs_connect_opts_init(struct nvmefs_connect_opts *opts);

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

/** Room for a TLS PSK's interchange form, "NVMeTLSkey-1:HH:<base64>:", its NUL included. */
#define NVMEFS_TLS_KEY_SIZE 90

/** Since 0.2.  What a TLS PSK in interchange form holds ('nvme check-tls-key'). */
struct nvmefs_tls_key_info {
	/** Its HH: 0 (used as the retained PSK), 1 (SHA-256) or 2 (SHA-384). */
	unsigned int hmac;
	/** The key's length in bytes: 32 or 48. */
	unsigned int len;
	/** The CRC-32 the form carries after the key. */
	uint32_t crc;
	/** The hash of the cipher suite it is used with: 1, TLS_AES_128_GCM_SHA256; 2, TLS_AES_256_GCM_SHA384. */
	unsigned int cipher;
};

/**
 * Since 0.2.  Whether @key is a TLS PSK in the NVMe/TCP interchange form
 * ("NVMeTLSkey-1:HH:<base64 of key and CRC-32>:"), and if so what it holds,
 * into @info.  0, or -EINVAL with nvmefs_errmsg() saying what is wrong
 * (another -errno when no memory could be locked to parse it in).
 */
int nvmefs_tls_key_check(const char *key, struct nvmefs_tls_key_info *info);

/**
 * Since 0.2.  The PSK identity a connection as @hostnqn (NULL:
 * /etc/nvme/hostnqn, else the one generated for this machine) to @subnqn
 * presents with the TLS PSK derived from @key: version 0 ("NVMe0R0H
 * hostnqn subnqn") or 1 (with the PSK digest), derived as libnvme 1.16 and
 * the kernel do, or as libnvme before 1.16 did when @compat (nvme-cli's
 * --compat).  *@identity is malloc'd; free it.  0 or a -errno, with
 * nvmefs_errmsg() saying why.
 */
int nvmefs_tls_key_identity(const char *key, const char *hostnqn, const char *subnqn,
			    unsigned int version, bool compat, char **identity);

/**
 * Since 0.2.  A configured PSK in interchange form, as 'nvme gen-tls-key'
 * prints it, into @out (NVMEFS_TLS_KEY_SIZE bytes will do): HH @hmac (1,
 * SHA-256, a 32-byte key; 2, SHA-384, 48 bytes), the key @secret of @len
 * bytes, or when @secret is NULL a random one.  0, -EINVAL for an @hmac
 * or @len that does not fit, or another -errno; nvmefs_errmsg() says why.
 * The caller wipes @out.
 */
int nvmefs_tls_key_make(unsigned int hmac, const uint8_t *secret, size_t len, char *out,
			size_t size);

#ifdef __cplusplus
}
#endif

#endif /* NVMEFS_PUBLIC_CONNECT_OPTS_H */
