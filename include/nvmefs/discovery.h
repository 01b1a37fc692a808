/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file discovery.h
 * @brief Discovery logs: one discovery controller's, or a walk through its
 * referrals.  Part of <nvmefs/nvmefs.h>.
 *
 * The discovery log is libnvme's type (<nvme/types.h>); this header only
 * declares it, so it does not pull libnvme in.
 */
#ifndef NVMEFS_PUBLIC_DISCOVERY_H
#define NVMEFS_PUBLIC_DISCOVERY_H

#ifdef __cplusplus
extern "C" {
#endif

/* Declared in <nvmefs/ctrl.h> and <nvmefs/connect_opts.h>; this header
 * needs only pointers to them. */
struct nvmefs_ctrl;
struct nvmefs_connect_opts;

/* libnvme's type, from <nvme/types.h>. */
struct nvmf_discovery_log;

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

#ifdef __cplusplus
}
#endif

#endif /* NVMEFS_PUBLIC_DISCOVERY_H */
