/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Who the host is, as nvme-cli takes it: its NQN and host ID, and the
 * check of an NQN's form.  Below Connect (fabrics.c), the TLS keys'
 * identities (tls_key.c) and the options' checks (connect_opts.c), which
 * all name the host.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <nvme/fabrics.h>
#include <nvme/util.h>

#include "host_id.h"
#include "../base/error.h"
#include "../types/ctrl_types.h"

static int set_hostid(struct nvmefs_ctrl *ctrl, const char *str, const char *source)
{
	char canon[NVME_UUID_LEN_STRING];

	if (nvme_uuid_from_string(str, ctrl->hostid) != 0)
		return nvmefs_error(-EINVAL, "the host ID '%s' from %s is not a UUID: pass one like "
				    "'-I 62af2d5e-7ee0-4e3d-9561-592f59fedc3a'", str, source);
	nvme_uuid_to_string(ctrl->hostid, canon);
	memcpy(ctrl->hostid_str, canon, sizeof(ctrl->hostid_str) - 1);
	ctrl->hostid_str[sizeof(ctrl->hostid_str) - 1] = '\0';
	return 0;
}

int nvmefs_nqn_check(const char *nqn, const char *what, const char *fix)
{
	size_t len = strlen(nqn);

	if (len > NVMF_NQN_SIZE)
		return nvmefs_error(-EINVAL, "the %s NQN is %zu characters long, more than the %d an "
				    "NQN may have: fix %s", what, len, NVMF_NQN_SIZE, fix);
	if (strncmp(nqn, "nqn.", 4))
		return nvmefs_error(-EINVAL, "the %s NQN '%s' is not an NQN: it does not start with "
				    "\"nqn.\": fix %s", what, nqn, fix);
	return 0;
}

char *nvmefs_hostnqn_default(void)
{
	char *nqn = nvmf_hostnqn_from_file();

	if (!nqn)
		nqn = nvmf_hostnqn_generate();
	if (!nqn)
		nvmefs_error(-ENOENT, "no host NQN: pass one with -q, or create /etc/nvme/hostnqn "
			     "('nvme gen-hostnqn > /etc/nvme/hostnqn')");
	return nqn;
}

/*
 * As nvme-cli: the command line first, then /etc/nvme/hostnqn and
 * /etc/nvme/hostid, else a host NQN generated for this machine; the host
 * ID of a "...:uuid:<uuid>" NQN is that UUID, as the kernel expects.
 */
int nvmefs_host_identity(struct nvmefs_ctrl *ctrl, const char *hostnqn, const char *hostid)
{
	char *owned_nqn = NULL, *owned_id = NULL;
	const char *nqn = hostnqn, *uuid;
	int ret;

	if (!nqn)
		nqn = owned_nqn = nvmefs_hostnqn_default();
	if (!nqn) {
		ret = -ENOENT;
		goto out;
	}
	ret = nvmefs_nqn_check(nqn, "host", hostnqn ? "-q" : "/etc/nvme/hostnqn");
	if (ret < 0)
		goto out;
	strcpy(ctrl->hostnqn, nqn);

	if (hostid) {
		ret = set_hostid(ctrl, hostid, "-I");
		goto out;
	}
	owned_id = nvmf_hostid_from_file();
	if (owned_id) {
		ret = set_hostid(ctrl, owned_id, "/etc/nvme/hostid");
		goto out;
	}
	uuid = strstr(nqn, ":uuid:");
	if (uuid && nvme_uuid_from_string(uuid + 6, ctrl->hostid) == 0) {
		ret = set_hostid(ctrl, uuid + 6, "the host NQN");
		goto out;
	}
	if (nvme_uuid_random(ctrl->hostid) != 0) {
		ret = nvmefs_error(-EIO, "generating a host ID failed: pass one with -I");
		goto out;
	}
	{
		char canon[NVME_UUID_LEN_STRING];

		nvme_uuid_to_string(ctrl->hostid, canon);
		memcpy(ctrl->hostid_str, canon, sizeof(ctrl->hostid_str) - 1);
	}
	ret = 0;
out:
	free(owned_nqn);
	free(owned_id);
	return ret;
}
