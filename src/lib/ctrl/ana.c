/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Asymmetric Namespace Access: how well this controller reaches each
 * namespace (optimized, non-optimized, inaccessible, persistent loss, in
 * change), which decides whether a multipath set sends I/O through it.
 *
 * As the Linux host does, each namespace belongs to the ANA group its
 * Identify Namespace names, and takes that group's state from the ANA log:
 * read with the I/O queues, after every reconnect and rescan, when an ANA
 * Change event comes (reading the log clears it), and when an I/O comes
 * back with an ANA status.  A controller that does not report ANA has every
 * namespace optimized.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <nvme/types.h>

#include "ana.h"
#include "../base/error.h"
#include "../state/ctrl_state.h"
#include "../types/ctrl_types.h"

/* The log is 16 bytes a header, 32 a group and 4 a namespace: a megabyte
 * is room for more groups and namespaces than a controller reports. */
#define ANA_LOG_MAX (1u << 20)
/* Groups a log may describe before the rest is ignored (Linux caps ANAGRPMAX
 * no lower). */
#define ANA_GROUPS_MAX 4096

_Static_assert(sizeof(struct nvme_ana_log) == 16, "the ANA log header is 16 bytes");
_Static_assert(sizeof(struct nvme_ana_group_desc) == 32, "an ANA group descriptor is 32 bytes");

bool nvmefs_ana_reporting(const struct nvmefs_ctrl *ctrl)
{
	return ctrl->id.cmic & NVME_CTRL_CMIC_MULTI_ANA_REPORTING;
}

const char *nvmefs_ana_state_name(int state)
{
	switch (state) {
	case NVME_ANA_STATE_OPTIMIZED: return "optimized";
	case NVME_ANA_STATE_NONOPTIMIZED: return "non-optimized";
	case NVME_ANA_STATE_INACCESSIBLE: return "inaccessible";
	case NVME_ANA_STATE_PERSISTENT_LOSS: return "persistent-loss";
	case NVME_ANA_STATE_CHANGE: return "change";
	default: return "unknown";
	}
}

int nvmefs_ns_ana_state(const struct nvmefs_ctrl *ctrl, uint32_t nsid)
{
	for (unsigned int i = 0; ctrl->ns && i < atomic_load(&ctrl->nr_ns); i++)
		if (ctrl->ns[i].nsid == nsid)
			return atomic_load_explicit(&ctrl->ns[i].ana_state, memory_order_relaxed);
	return nvmefs_error(-ENOENT, "namespace %u is not active on %s", nsid,
			    nvmefs_ctrl_where(ctrl));
}

/* Bytes of the whole log for the controller's groups and namespaces, as
 * Identify Controller sizes them, in dwords and capped. */
static size_t log_size(const struct nvmefs_ctrl *ctrl)
{
	uint32_t groups = nvmefs_le32_to_cpu(ctrl->id.nanagrpid);
	uint32_t nss = nvmefs_le32_to_cpu(ctrl->id.mnan) ? nvmefs_le32_to_cpu(ctrl->id.mnan)
		       : nvmefs_le32_to_cpu(ctrl->id.nn);
	uint64_t size = sizeof(struct nvme_ana_log) +
			(uint64_t)groups * sizeof(struct nvme_ana_group_desc) + (uint64_t)nss * 4;

	return size > ANA_LOG_MAX ? ANA_LOG_MAX : (size_t)size;
}

struct group_state {
	uint32_t grpid;
	uint8_t state;
};

/* The groups of the log in @buf, @size bytes, into @groups (at most
 * ANA_GROUPS_MAX); descriptors cut off by the end are not taken. */
static int parse_log(const struct nvmefs_ctrl *ctrl, const uint8_t *buf, size_t size,
		     struct group_state *groups, unsigned int *np)
{
	const struct nvme_ana_log *log = (const void *)buf;
	unsigned int ngrps = nvmefs_le16_to_cpu(log->ngrps), n = 0;
	size_t off = sizeof(*log);

	for (unsigned int g = 0; g < ngrps && n < ANA_GROUPS_MAX; g++) {
		struct nvme_ana_group_desc desc;

		if (size - off < sizeof(desc))
			return nvmefs_error(-EPROTO, "the ANA log of %s names %u groups but ends after "
					    "%u: its log is wrong; report it to the target's vendor",
					    nvmefs_ctrl_where(ctrl), ngrps, g);
		memcpy(&desc, buf + off, sizeof(desc));
		groups[n].grpid = nvmefs_le32_to_cpu(desc.grpid);
		groups[n].state = desc.state & 0xf;
		n++;
		/* The namespaces listed after it are found by their groups. */
		if ((uint64_t)nvmefs_le32_to_cpu(desc.nnsids) * 4 > size - off - sizeof(desc))
			break;
		off += sizeof(desc) + (size_t)nvmefs_le32_to_cpu(desc.nnsids) * 4;
	}
	*np = n;
	return 0;
}

static bool valid_state(uint8_t state)
{
	return (state >= NVME_ANA_STATE_OPTIMIZED && state <= NVME_ANA_STATE_PERSISTENT_LOSS) ||
	       state == NVME_ANA_STATE_CHANGE;
}

/* Changes told per log read: a change of more namespaces at once is told in part. */
#define ANA_TOLD_MAX 8

struct ana_change {
	uint32_t nsid, grpid;
	uint8_t from, to;
};

/*
 * Sets each cached namespace's state from @groups (NULL: no ANA reporting,
 * all optimized), under io_lock, which keeps the cache from going away
 * under us.  Returns how many changed state; the first ANA_TOLD_MAX changes
 * the log made go into @told (*@nr_told).
 */
static int apply(struct nvmefs_ctrl *ctrl, const struct group_state *groups, unsigned int n,
		 struct ana_change *told, unsigned int *nr_told)
{
	int changed = 0;

	pthread_mutex_lock(&ctrl->io_lock);
	for (unsigned int i = 0; ctrl->ns && i < atomic_load(&ctrl->nr_ns); i++) {
		struct nvmefs_ns_cache *ns = &ctrl->ns[i];
		uint8_t old = ns->ana_log_state, state = NVME_ANA_STATE_OPTIMIZED;
		unsigned int g = 0;

		if (groups) {
			for (g = 0; g < n && groups[g].grpid != ns->anagrpid; g++)
				;
			/* A group the log leaves out says nothing new (a namespace
			 * not heard of yet is taken as optimized, as Linux does); a
			 * state the specification does not define is no way to send
			 * I/O. */
			if (g < n)
				state = valid_state(groups[g].state) ? groups[g].state
					: NVME_ANA_STATE_INACCESSIBLE;
			else if (valid_state(old))
				state = old;
		}
		if (atomic_exchange(&ns->ana_state, state) != state)
			changed++;
		ns->ana_log_state = state;
		/* A namespace's first state is no change to tell. */
		if (state != old && old && !atomic_load(&ns->gone) && *nr_told < ANA_TOLD_MAX)
			told[(*nr_told)++] = (struct ana_change){ ns->nsid, ns->anagrpid, old, state };
	}
	pthread_mutex_unlock(&ctrl->io_lock);
	return changed;
}

int nvmefs_ana_update(struct nvmefs_ctrl *ctrl, bool quiet)
{
	struct ana_change told[ANA_TOLD_MAX];
	struct group_state *groups = NULL;
	size_t size = log_size(ctrl);
	uint8_t *buf = NULL;
	unsigned int n = 0, nr_told = 0;
	int ret = 0;

	atomic_store(&ctrl->ana_stale, false);
	if (!nvmefs_ana_reporting(ctrl))
		return apply(ctrl, NULL, 0, told, &nr_told);
	buf = malloc(size);
	groups = calloc(ANA_GROUPS_MAX, sizeof(*groups));
	if (!buf || !groups) {
		ret = nvmefs_error(-ENOMEM, "out of memory");
		goto out;
	}
	/* The admin command goes without io_lock: one that fails takes it to
	 * wake the I/O queues. */
	ret = nvmefs_get_log_page(ctrl, NVME_LOG_LID_ANA, NVME_NSID_ALL, 0, buf, size);
	if (ret == 0)
		ret = parse_log(ctrl, buf, size, groups, &n);
	if (ret < 0)
		goto out;
	ret = apply(ctrl, groups, n, told, &nr_told);
	for (unsigned int i = 0; !quiet && i < nr_told; i++)
		nvmefs_ctrl_emit(ctrl, "%s at %s: namespace %u (ANA group %u) is now %s, was %s",
				 ctrl->subnqn, nvmefs_ctrl_where(ctrl), told[i].nsid, told[i].grpid,
				 nvmefs_ana_state_name(told[i].to), nvmefs_ana_state_name(told[i].from));
out:
	free(buf);
	free(groups);
	return ret;
}
