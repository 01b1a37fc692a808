/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The namespaces an I/O controller serves, as the I/O path needs them:
 * every page of the active list identified when the I/O queues are
 * created (one that cannot be identified is listed, and says why), checked
 * again after a reconnect, and followed after a Namespace Attribute
 * Changed event: a resized namespace takes its new size, a new one is
 * added, one removed or replaced by another identity is gone for good.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvme/util.h>

#include "namespaces.h"
#include "../base/clock.h"
#include "../base/error.h"
#include "../ctrl/admin_cmds.h"
#include "../ctrl/ana.h"
#include "../state/ctrl_state.h"
#include "../types/ctrl_types.h"

/* Logical blocks from 512 bytes to 64 KiB (LBADS 9 to 16). */
#define MIN_LBA_SHIFT 9
#define MAX_LBA_SHIFT 16
/* A rescan without a definite answer is tried again after the controller's
 * Command Retry Delay, and at least this long, doubling, this often. */
#define RESCAN_RETRY_MS 100
#define RESCAN_RETRY_MAX_SHIFT 7
#define RESCAN_TRIES 12

/*
 * Identify Namespace @nsid into @ns: geometry and identity.  The UUID comes
 * from the identification descriptors, which a controller may not offer.
 * As Linux's nvme_validate_ns(), only a definite answer says the namespace
 * is gone (-ENOENT, -EIO: a status with Do Not Retry, or all zeros, which
 * an inactive NSID identifies as; -EPROTO: data it cannot be used with).  A
 * status without DNR (Namespace Not Ready) or a path error is no answer yet:
 * -EAGAIN, with the delay the controller asks for before a retry in
 * *@retry_ms.
 */
static int identify_ns(struct nvmefs_ctrl *ctrl, uint32_t nsid, struct nvmefs_ns_cache *ns,
		       int64_t *retry_ms)
{
	struct nvme_id_ns *id = malloc(NVMEFS_IDENTIFY_DATA_SIZE);
	uint8_t *descs = malloc(NVMEFS_IDENTIFY_DATA_SIZE);
	unsigned int fmt;
	uint16_t status;
	int ret;

	if (!id || !descs) {
		ret = nvmefs_error(-ENOMEM, "out of memory");
		goto out;
	}
	ret = nvmefs_identify_ns_status(ctrl, nsid, id, &status);
	if (ret < 0 && status && (!(status & NVME_SC_DNR) ||
				  nvme_status_code_type(status) == NVME_SCT_PATH)) {
		*retry_ms = nvmefs_crd_delay_ms(ctrl, status);
		ret = -EAGAIN;
	}
	if (ret < 0)
		goto out;
	fmt = (id->flbas & 0xf) | ((id->flbas >> 5 & 0x3) << 4);
	ns->nsid = nsid;
	ns->nlb = nvmefs_le64_to_cpu(id->nsze);
	ns->lba_shift = id->lbaf[fmt].ds;
	ns->dlfeat = id->dlfeat;
	ns->anagrpid = nvmefs_le32_to_cpu(id->anagrpid);
	memcpy(ns->nguid, id->nguid, sizeof(ns->nguid));
	memcpy(ns->eui64, id->eui64, sizeof(ns->eui64));
	memset(ns->uuid, 0, sizeof(ns->uuid));
	if (nvmefs_identify_ns_descs(ctrl, nsid, descs) == 0) {
		for (size_t off = 0; off + 4 <= NVMEFS_IDENTIFY_DATA_SIZE;) {
			uint8_t nidt = descs[off], nidl = descs[off + 1];

			if (!nidt || off + 4 + nidl > NVMEFS_IDENTIFY_DATA_SIZE)
				break;
			if (nidt == NVME_NIDT_UUID && nidl == sizeof(ns->uuid))
				memcpy(ns->uuid, descs + off + 4, sizeof(ns->uuid));
			off += 4 + nidl;
		}
	}
	/* Checked before any of it sizes a shift or a transfer. */
	if (fmt > id->nlbaf)
		ret = nvmefs_error(-EPROTO, "namespace %u of %s is in LBA format %u, but it has only "
				   "%u: its Identify data is wrong; report it to the target's vendor",
				   nsid, ctrl->subnqn, fmt, id->nlbaf + 1);
	else if (ns->lba_shift < MIN_LBA_SHIFT || ns->lba_shift > MAX_LBA_SHIFT)
		ret = nvmefs_error(-EPROTO, "namespace %u of %s has blocks of 2^%u bytes (LBADS %u): "
				   "nvmefs handles 512 bytes to 64 KiB; reformat it (nvme format -l)",
				   nsid, ctrl->subnqn, ns->lba_shift, ns->lba_shift);
	else if (ns->nlb > UINT64_MAX >> ns->lba_shift)
		ret = nvmefs_error(-EPROTO, "namespace %u of %s claims %llu blocks of %u bytes, more "
				   "than 2^64 bytes: its Identify data is wrong",
				   nsid, ctrl->subnqn, (unsigned long long)ns->nlb, 1u << ns->lba_shift);
	else
		ns->lba_size = 1u << ns->lba_shift;
out:
	free(id);
	free(descs);
	return ret;
}

/* Whether identifying one namespace failed for that namespace alone (an
 * error status, data that cannot be right), not with the connection. */
static bool ns_error_only(const struct nvmefs_ctrl *ctrl, int err)
{
	return (err == -ENOENT || err == -EIO || err == -EPROTO || err == -EAGAIN) &&
	       !ctrl->admin.failed;
}

/*
 * The active NSIDs into @out (NVMEFS_MAX_NAMESPACES of them at most): every
 * page of the list, each asked for from the last NSID of the one before, as
 * a full page (1024) says there may be more.  The list is in increasing
 * order; from an NSID that is not, nothing more is believed, which also
 * ends a target that would answer the same page forever.
 */
static int active_nsids(struct nvmefs_ctrl *ctrl, uint32_t *out, unsigned int *np)
{
	uint32_t *page = malloc(NVMEFS_NS_LIST_LEN * sizeof(*page)), after = 0;
	unsigned int n = 0, i;
	int ret = 0;

	if (!page)
		return nvmefs_error(-ENOMEM, "out of memory");
	for (;;) {
		ret = nvmefs_identify_active_ns(ctrl, after, page);
		if (ret < 0)
			break;
		for (i = 0; i < NVMEFS_NS_LIST_LEN && page[i]; i++) {
			if (page[i] <= after || n == NVMEFS_MAX_NAMESPACES)
				goto out;
			out[n++] = after = page[i];
		}
		if (i < NVMEFS_NS_LIST_LEN)
			break;
	}
out:
	free(page);
	*np = n;
	return ret;
}

/* Caches what the I/O path needs of every active namespace.  One that cannot
 * be identified is kept, unusable, with the reason. */
int nvmefs_io_scan_namespaces(struct nvmefs_ctrl *ctrl)
{
	uint32_t *list;
	unsigned int n = 0, i;
	int ret;

	list = malloc(NVMEFS_MAX_NAMESPACES * sizeof(*list));
	ctrl->ns = calloc(NVMEFS_MAX_NAMESPACES, sizeof(*ctrl->ns));
	if (!list || !ctrl->ns) {
		ret = nvmefs_error(-ENOMEM, "out of memory");
		goto out;
	}
	ret = active_nsids(ctrl, list, &n);
	if (ret < 0)
		goto out;
	for (i = 0; i < n; i++) {
		struct nvmefs_ns_cache *ns = &ctrl->ns[i];
		int64_t retry_ms;

		ret = identify_ns(ctrl, list[i], ns, &retry_ms);
		if (ret < 0 && !ns_error_only(ctrl, ret))
			goto out;
		ns->nsid = list[i];
		if (ret < 0) {
			ns->unusable = strdup(nvmefs_errmsg());
			if (!ns->unusable) {
				ret = nvmefs_error(-ENOMEM, "out of memory");
				goto out;
			}
			atomic_store(&ns->gone, true);
		}
	}
	ret = 0;
	ctrl->nr_ns = n;
	ctrl->nsids = list;
	list = NULL;
out:
	free(list);
	return ret;
}

static bool same_identity(const struct nvmefs_ns_cache *a, const struct nvmefs_ns_cache *b)
{
	return !memcmp(a->nguid, b->nguid, sizeof(a->nguid)) &&
	       !memcmp(a->eui64, b->eui64, sizeof(a->eui64)) &&
	       !memcmp(a->uuid, b->uuid, sizeof(a->uuid)) && a->lba_size == b->lba_size;
}

/* @ns as the controller identifies it now (@now NULL: not active).  The
 * same namespace takes its new size, and one that is back as it was is
 * usable again; another one behind the NSID, or none, is gone. */
static void ns_settle(struct nvmefs_ns_cache *ns, const struct nvmefs_ns_cache *now)
{
	if (!now || !same_identity(ns, now)) {
		atomic_store(&ns->gone, true);
		return;
	}
	ns->nlb = now->nlb;
	atomic_store(&ns->gone, false);
}

/*
 * After a reconnect: each namespace must still be the one its I/O was meant
 * for.  One that is gone, or whose NGUID, EUI-64, UUID or block size
 * changed, is another disk behind the same NSID: it is marked gone for good
 * and its held I/O fails instead of being written.  A new size is taken.
 * One without a definite answer yet is neither dropped nor trusted: the
 * attempt fails, and the next one looks again.
 */
int nvmefs_io_recheck_namespaces(struct nvmefs_ctrl *ctrl)
{
	struct nvmefs_ns_cache now;
	int64_t retry_ms;
	int ret;

	for (unsigned int i = 0; i < ctrl->nr_ns; i++) {
		struct nvmefs_ns_cache *ns = &ctrl->ns[i];

		ret = identify_ns(ctrl, ns->nsid, &now, &retry_ms);
		if ((ret < 0 && !ns_error_only(ctrl, ret)) || (ret == -EAGAIN && !ns->unusable))
			return ret;
		ns_settle(ns, ret == 0 && !ns->unusable ? &now : NULL);
	}
	return 0;
}

/* The rescan had no definite answer for some namespace: it is due again
 * after the controller's delay @crd_ms, a doubling pause, or given up. */
static void rescan_later(struct nvmefs_ctrl *ctrl, int64_t crd_ms, const char *why)
{
	unsigned int tries = ctrl->rescan_tries;
	int64_t pause = (int64_t)RESCAN_RETRY_MS << (tries < RESCAN_RETRY_MAX_SHIFT ? tries
						     : RESCAN_RETRY_MAX_SHIFT);

	if (tries >= RESCAN_TRIES) {
		ctrl->rescan_at_ms = 0;
		ctrl->rescan_tries = 0;
		nvmefs_ctrl_emit(ctrl, "%s: no answer after %u tries (%s); its namespaces stay as they "
				 "were until the next change or reconnect", ctrl->subnqn, tries, why);
		return;
	}
	ctrl->rescan_tries++;
	ctrl->rescan_at_ms = nvmefs_now_ms() + (crd_ms > pause ? crd_ms : pause);
}

int nvmefs_io_rescan(struct nvmefs_ctrl *ctrl)
{
	struct nvmefs_ns_cache *now = NULL, *cache;
	uint32_t *list = malloc(NVMEFS_MAX_NAMESPACES * sizeof(*list));
	bool *unanswered = calloc(NVMEFS_MAX_NAMESPACES, sizeof(*unanswered));
	unsigned int n = 0, nr, i, k;
	int64_t retry_ms = -1, crd_ms;
	char why[256] = "";
	int ret;

	/* The admin commands go without io_lock: a command that fails takes
	 * it to wake the queues. */
	now = calloc(NVMEFS_MAX_NAMESPACES, sizeof(*now));
	if (!list || !now || !unanswered) {
		ret = nvmefs_error(-ENOMEM, "out of memory");
		goto out;
	}
	ret = active_nsids(ctrl, list, &n);
	if (ret < 0) {
		/* Refused, not lost with the connection: nothing changes, and
		 * the list is asked for again. */
		if (ns_error_only(ctrl, ret)) {
			retry_ms = 0;
			snprintf(why, sizeof(why), "%s", nvmefs_errmsg());
		}
		goto out;
	}
	for (i = 0; i < n; i++) {
		crd_ms = 0;
		ret = identify_ns(ctrl, list[i], &now[i], &crd_ms);
		if (ret == -EAGAIN && ns_error_only(ctrl, ret)) {
			/* No answer yet: it stays as it was, and is asked again. */
			now[i].nsid = list[i];
			unanswered[i] = true;
			if (crd_ms > retry_ms)
				retry_ms = crd_ms;
			snprintf(why, sizeof(why), "%s", nvmefs_errmsg());
		} else if (ret < 0 && ns_error_only(ctrl, ret)) {
			/* Not there after all, or not identifiable: not a new one. */
			now[i].nsid = 0;
		} else if (ret < 0) {
			goto out;
		}
	}
	ret = 0;
	pthread_mutex_lock(&ctrl->io_lock);
	cache = ctrl->ns;
	nr = ctrl->nr_ns;
	for (i = 0; cache && i < nr; i++) {
		struct nvmefs_ns_cache *ns = &cache[i];

		for (k = 0; k < n && now[k].nsid != ns->nsid; k++)
			;
		if (k < n && unanswered[k])
			continue;
		ns_settle(ns, k < n && !ns->unusable ? &now[k] : NULL);
	}
	/* New ones go at the end, whole before they are counted. */
	for (k = 0; cache && k < n && nr < NVMEFS_MAX_NAMESPACES; k++) {
		if (!now[k].nsid || unanswered[k])
			continue;
		for (i = 0; i < nr && cache[i].nsid != now[k].nsid; i++)
			;
		if (i < nr)
			continue;
		memcpy(&cache[nr], &now[k], sizeof(cache[nr]));
		atomic_init(&cache[nr].gone, false);
		ctrl->nsids[nr] = now[k].nsid;
		nr++;
		atomic_store(&ctrl->nr_ns, nr);
	}
	pthread_mutex_unlock(&ctrl->io_lock);
	/* New namespaces need their ANA state, and a group may have moved: a
	 * log that cannot be read now leaves the states as they were. */
	if (nvmefs_ana_update(ctrl, false) > 0)
		nvmefs_io_wake(ctrl);
out:
	if (retry_ms >= 0) {
		rescan_later(ctrl, retry_ms, why);
	} else if (ret == 0) {
		ctrl->rescan_at_ms = 0;
		ctrl->rescan_tries = 0;
	}
	free(unanswered);
	free(now);
	free(list);
	return ret;
}

int nvmefs_ns_info(const struct nvmefs_ctrl *cctrl, uint32_t nsid, struct nvmefs_ns_info *info)
{
	struct nvmefs_ctrl *ctrl = (struct nvmefs_ctrl *)cctrl;
	const struct nvmefs_ns_cache *ns = nvmefs_io_find_ns(ctrl, nsid);

	if (!ns)
		return nvmefs_error(-ENOENT, "namespace %u is not active on %s: see 'nvmefs identify'",
				    nsid, ctrl->subnqn);
	if (ns->unusable)
		return nvmefs_error(-EPROTO, "namespace %u of %s cannot be used: %s", nsid,
				    ctrl->subnqn, ns->unusable);
	if (atomic_load(&ns->gone))
		return nvmefs_error(-ENODEV, "namespace %u of %s was removed or replaced by another",
				    nsid, ctrl->subnqn);
	/* A reconnect's check and a rescan write the size under io_lock, on
	 * the controller's thread, while the caller (the mount's change
	 * callback, a stat) reads it on its own. */
	pthread_mutex_lock(&ctrl->io_lock);
	info->nsid = ns->nsid;
	info->nlb = ns->nlb;
	info->lba_size = ns->lba_size;
	pthread_mutex_unlock(&ctrl->io_lock);
	info->max_zeroes_nlb = nvmefs_io_zeroes_nlb(ctrl, ns->lba_shift);
	return 0;
}

unsigned int nvmefs_ctrl_ns_list(const struct nvmefs_ctrl *ctrl, const uint32_t **nsids)
{
	*nsids = ctrl->nsids;
	return ctrl->nr_ns;
}
