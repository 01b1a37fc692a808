/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The 0.1 ABI of the functions that take struct nvmefs_connect_opts: 0.1's
 * struct had neither a size nor a transport, so programs built against it
 * are bound to these versions (nvmefs_ctrl_connect@NVMEFS_0.1 and so on),
 * which take that layout and hand on to the current ones.
 */
#include <string.h>

#include "abi_0_1.h"
#include "../ctrl/connect_opts.h"
#include "../lifecycle/ctrl.h"
#include "../lifecycle/discovery.h"
#include "../types/ctrl_types.h"

/* struct nvmefs_connect_opts as 0.1 laid it out; never to change. */
struct nvmefs_connect_opts_0_1 {
	const char *traddr;
	const char *trsvcid;
	const char *host_traddr;
	const char *subnqn;
	const char *hostnqn;
	const char *hostid;
	unsigned int timeout_ms;
	int kato_ms;
	unsigned int admin_queue_size;
	int reconnect_delay_s;
	int ctrl_loss_tmo_s;
	int fast_io_fail_tmo_s;
	const char *dhchap_secret;
	const char *dhchap_ctrl_secret;
	int rkey_per_io;
};

#define FIELDS_0_1(X) \
	X(traddr) X(trsvcid) X(host_traddr) X(subnqn) X(hostnqn) X(hostid) \
	X(timeout_ms) X(kato_ms) X(admin_queue_size) X(reconnect_delay_s) \
	X(ctrl_loss_tmo_s) X(fast_io_fail_tmo_s) X(dhchap_secret) X(dhchap_ctrl_secret) \
	X(rkey_per_io)

static void from_0_1(const struct nvmefs_connect_opts_0_1 *old, struct nvmefs_connect_opts *opts)
{
	nvmefs_connect_opts_init_0_2(opts);
#define COPY(f) opts->f = old->f;
	FIELDS_0_1(COPY)
#undef COPY
}

static void to_0_1(const struct nvmefs_connect_opts *opts, struct nvmefs_connect_opts_0_1 *old)
{
#define COPY(f) old->f = opts->f;
	FIELDS_0_1(COPY)
#undef COPY
}

void nvmefs_connect_opts_init_0_1(struct nvmefs_connect_opts_0_1 *old)
{
	struct nvmefs_connect_opts opts;

	nvmefs_connect_opts_init_0_2(&opts);
	to_0_1(&opts, old);
}

int nvmefs_ctrl_connect_0_1(const struct nvmefs_connect_opts_0_1 *old, struct nvmefs_ctrl **ctrlp)
{
	struct nvmefs_connect_opts opts;

	from_0_1(old, &opts);
	return nvmefs_ctrl_connect_0_2(&opts, ctrlp);
}

struct discover_0_1 {
	nvmefs_discovery_cb_0_1 cb;
	void *arg;
};

/* The caller's callback, given where in the layout it was built with. */
static int discovered_0_1(const struct nvmefs_connect_opts *where,
			  const struct nvmf_discovery_log *log, int depth, void *arg)
{
	const struct discover_0_1 *d = arg;
	struct nvmefs_connect_opts_0_1 old;

	to_0_1(where, &old);
	return d->cb(&old, log, depth, d->arg);
}

int nvmefs_discover_0_1(const struct nvmefs_connect_opts_0_1 *old, int max_depth,
			nvmefs_discovery_cb_0_1 cb, void *arg)
{
	struct discover_0_1 d = { .cb = cb, .arg = arg };
	struct nvmefs_connect_opts opts;

	from_0_1(old, &opts);
	return nvmefs_discover_0_2(&opts, max_depth, discovered_0_1, &d);
}

NVMEFS_SYMVER(nvmefs_connect_opts_init_0_1, "nvmefs_connect_opts_init@NVMEFS_0.1");
NVMEFS_SYMVER(nvmefs_ctrl_connect_0_1, "nvmefs_ctrl_connect@NVMEFS_0.1");
NVMEFS_SYMVER(nvmefs_discover_0_1, "nvmefs_discover@NVMEFS_0.1");
