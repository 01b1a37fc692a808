/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A namespace as every front end serves it: its blocks, size and
 * identifiers from the controller, and whether its block size is one the
 * engine serves.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvme/types.h>
#include <nvme/util.h>

#include "engine.h"

static void hex(char *dst, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sprintf(dst + 2 * i, "%02x", p[i]);
}

/* The UUID lives in the identification descriptors (NIDT 3). */
static void ns_uuid(struct nvmefs_ctrl *ctrl, struct exp_ns *ns, uint8_t *descs)
{
	if (nvmefs_identify_ns_descs(ctrl, ns->nsid, descs) != 0)
		return;
	for (size_t off = 0; off + 4 <= NVMEFS_IDENTIFY_DATA_SIZE;) {
		uint8_t nidt = descs[off], nidl = descs[off + 1];

		if (!nidt || off + 4 + nidl > NVMEFS_IDENTIFY_DATA_SIZE)
			break;
		if (nidt == NVME_NIDT_UUID && nidl == 16)
			nvme_uuid_to_string(descs + off + 4, ns->uuid);
		off += 4 + nidl;
	}
}

enum exp_ns_change exp_ns_follow(struct nvmefs_ctrl *ctrl, struct exp_ns *ns, uint64_t *old_size)
{
	struct nvmefs_ns_info info;
	int ret = nvmefs_ns_info(ctrl, ns->nsid, &info);
	uint64_t size;

	*old_size = atomic_load(&ns->size);
	if (ret == 0 && info.lba_size != ns->lba_size)
		ret = -ENODEV;
	if (ret == -ENODEV || ret == -ENOENT) {
		if (atomic_exchange(&ns->gone, true))
			return EXP_NS_SAME;
		return EXP_NS_GONE;
	}
	if (ret < 0 || info.nlb > UINT64_MAX / info.lba_size)
		return EXP_NS_SAME;
	size = info.nlb * info.lba_size;
	if (size != *old_size)
		atomic_store(&ns->size, size);
	if (atomic_exchange(&ns->gone, false))
		return EXP_NS_BACK;
	return size == *old_size ? EXP_NS_SAME : EXP_NS_RESIZED;
}

int exp_ns_init(struct nvmefs_ctrl *ctrl, struct exp_ns *ns, uint32_t nsid, const char *face)
{
	struct nvmefs_ns_info info;
	struct nvme_id_ns *id = malloc(NVMEFS_IDENTIFY_DATA_SIZE);
	uint8_t *descs = malloc(NVMEFS_IDENTIFY_DATA_SIZE);
	int ret;

	if (!id || !descs) {
		ret = exp_error(-ENOMEM, "out of memory");
		goto out;
	}
	ret = nvmefs_ns_info(ctrl, nsid, &info);
	if (ret == 0)
		ret = nvmefs_identify_ns(ctrl, nsid, id);
	if (ret < 0) {
		ret = exp_lib_error(ret);
		goto out;
	}
	if (info.lba_size > EXP_MAX_LBA_SIZE || info.lba_size < 512) {
		ret = exp_error(-EOPNOTSUPP, "namespace %u has %u-byte blocks; %s serves 512 to %d",
				nsid, info.lba_size, face, EXP_MAX_LBA_SIZE);
		goto out;
	}
	memset(ns, 0, sizeof(*ns));
	ns->nsid = info.nsid;
	ns->lba_size = info.lba_size;
	ns->lba_shift = (uint8_t)__builtin_ctz(info.lba_size);
	ns->max_zeroes_nlb = info.max_zeroes_nlb;
	atomic_init(&ns->size, info.nlb * info.lba_size);
	atomic_init(&ns->gone, false);
	snprintf(ns->name, sizeof(ns->name), "n%u", ns->nsid);
	hex(ns->nguid, id->nguid, sizeof(id->nguid));
	hex(ns->eui64, id->eui64, sizeof(id->eui64));
	ns_uuid(ctrl, ns, descs);
out:
	free(id);
	free(descs);
	return ret;
}
