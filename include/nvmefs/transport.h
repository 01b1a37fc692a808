/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file transport.h
 * @brief The transports a controller is reached over: their names, default ports
 * and the connect options each takes.  Part of <nvmefs/nvmefs.h>.
 */
#ifndef NVMEFS_PUBLIC_TRANSPORT_H
#define NVMEFS_PUBLIC_TRANSPORT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The NVMe-oF port of I/O controllers, whatever the transport (4420). */
#define NVMEFS_DEFAULT_TRSVCID "4420"
/** NVMe/TCP's discovery port (8009); RDMA's discovery controllers listen
 *  on NVMEFS_DEFAULT_TRSVCID. */
#define NVMEFS_TCP_DISCOVERY_TRSVCID "8009"

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
	NVMEFS_OPT_TLS = 1 << 5,		/**< tls_key, tls_concat: NVMe/TCP */
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
	/** Nonzero when what a caller registers (nvmefs_mr_reg(), and each
	 *  queue's own buffers) is pinned, counted against RLIMIT_MEMLOCK:
	 *  RDMA; NVMe/TCP registers nothing.  For a memlock check before
	 *  connecting. */
	int pins_memory;
};

/**
 * Since 0.2.  Fill @info, its size set by the caller, with what the
 * transport @trtype is (NULL: the default, nvmefs_transport_name(0)).
 * 0; -EPROTONOSUPPORT for a transport this library has not, or -EINVAL for
 * a size smaller than any version's, with nvmefs_errmsg() saying which.
 */
int nvmefs_transport_info(const char *trtype, struct nvmefs_transport_info *info);

/**
 * The name of the transport that reaches a discovery log entry's
 * controller (its trtype, NVMF_TRTYPE_*), or NULL if this library has none.
 */
const char *nvmefs_transport_by_trtype(unsigned int trtype);

#ifdef __cplusplus
}
#endif

#endif /* NVMEFS_PUBLIC_TRANSPORT_H */
