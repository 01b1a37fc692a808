/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * struct nvmefs_connect_opts across versions: its defaults, and a caller's
 * copy taken in as this library's own, whatever size the caller was built
 * with (as the kernel's copy_struct_from_user() does).
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "internal.h"

void nvmefs_connect_opts_init_0_2(struct nvmefs_connect_opts *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->size = sizeof(*opts);
	opts->timeout_ms = NVMEFS_DEFAULT_TIMEOUT_MS;
	opts->kato_ms = -1;
	opts->reconnect_delay_s = NVMEFS_DEFAULT_RECONNECT_DELAY_S;
	opts->ctrl_loss_tmo_s = NVMEFS_DEFAULT_CTRL_LOSS_TMO_S;
	opts->fast_io_fail_tmo_s = -1;
	opts->rkey_per_io = -1;
}

int nvmefs_connect_opts_take(const struct nvmefs_connect_opts *in,
			     struct nvmefs_connect_opts *out,
			     const struct nvmefs_transport_ops **ops)
{
	size_t size = in->size;
	int ret;

	if (size < NVMEFS_CONNECT_OPTS_SIZE_0_2)
		return nvmefs_error(-EINVAL, "connect options of %zu bytes, fewer than any version "
				    "has: fill them with nvmefs_connect_opts_init()", size);
	/* A caller built against a newer header may have set options this
	 * library cannot honour: only zeros (their defaults) are taken. */
	for (size_t i = sizeof(*out); i < size; i++)
		if (((const unsigned char *)in)[i])
			return nvmefs_error(-E2BIG, "the connect options set fields this library "
					    "(version %s) does not know: run with the library "
					    "the program was built against", NVMEFS_VERSION);
	nvmefs_connect_opts_init_0_2(out);
	memcpy(out, in, size < sizeof(*out) ? size : sizeof(*out));
	out->size = sizeof(*out);
	ret = nvmefs_transport_find(out->trtype, ops);
	if (ret < 0)
		return ret;
	/* Ours, not the caller's string, which need not outlive the call. */
	out->trtype = nvmefs_transport_name((unsigned int)ret);
	/* libnvme's nvmf_get_default_trsvcid(): NVMe/TCP has a discovery port
	 * of its own; RDMA's discovery controllers listen where its I/O
	 * controllers do. */
	if (!out->trsvcid)
		out->trsvcid = !strcmp(out->trtype, "tcp") &&
			       (!out->subnqn || !strcmp(out->subnqn, NVME_DISC_SUBSYS_NAME))
			       ? NVMEFS_TCP_DISCOVERY_TRSVCID : NVMEFS_DEFAULT_TRSVCID;
	return 0;
}

NVMEFS_SYMVER(nvmefs_connect_opts_init_0_2, "nvmefs_connect_opts_init@@NVMEFS_0.2");
