/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reading discovery logs consistently, and following referrals.
 *
 * The log can change while we read it; the generation counter says when it
 * did.  Like libnvme's nvmf_get_discovery_log(), read the header first, for
 * the log's size, and never ask for more than that (nvmet before 6.12.96
 * copies past the end of its log for a longer read).  Unlike it, read the
 * whole log then in one command where the controller allows, into memory
 * registered for the read (libnvme and Linux take 4 KiB a command: 52
 * commands for 200 records): one command is one snapshot, header and
 * entries together.  A log read in pieces is checked against its header
 * read again after it, until the counter and the record count held still.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctrl.h"
#include "discovery.h"
#include "../base/error.h"
#include "../ctrl/admin_cmds.h"
#include "../ctrl/connect_opts.h"
#include "../state/ctrl_state.h"
#include "../types/ctrl_types.h"
#include "../transport/mr.h"
#include "../transport/transport.h"
#include "../types/transport_ops.h"
#include "../../common/text.h"

/* Bounds on what a target can make us do. */
#define DISC_MAX_RECORDS 1024	/* 1 MiB of entries */
#define DISC_MAX_TRIES 10
#define DISC_MAX_CONTROLLERS 64	/* discovery controllers visited in one walk */

/* An entry that is all zeros where every real record has something was
 * never filled in: the log ended before numrec said it would. */
static bool entry_blank(const struct nvmf_disc_log_entry *e)
{
	return e->subtype == 0 && e->trtype == 0 && e->subnqn[0] == '\0';
}

/*
 * The first @len bytes of the log into @log, as few commands as the
 * controller takes: registered for the read where they do not fit one
 * admin data slot.  Returns how many commands it took, or -errno.
 */
static int read_log(struct nvmefs_ctrl *ctrl, struct nvmf_discovery_log *log, size_t len)
{
	struct nvmefs_mr *mr = NULL;
	int ret;

	if (len > nvmefs_ctrl_admin_max_xfer(ctrl)) {
		ret = nvmefs_mr_new(ctrl, log, len, &mr);
		if (ret < 0)
			return ret;
	}
	ret = nvmefs_get_log_page_mr(ctrl, NVME_LOG_LID_DISCOVER, 0, 0, log, len, mr);
	/* Deregistered before anyone can free or reuse the buffer: the target
	 * cannot reach it any more, even after a timeout. */
	nvmefs_mr_free(mr);
	return ret;
}

int nvmefs_get_discovery_log(struct nvmefs_ctrl *ctrl, struct nvmf_discovery_log **logp)
{
	struct nvmf_discovery_log *log = NULL, *bigger, hdr;
	uint64_t numrec = 0, i;
	int tries, ret;

	if (!ctrl->discovery)
		return nvmefs_error(-EINVAL, "%s is not a discovery controller: discover at the "
				    "discovery NQN (no -n)", ctrl->subnqn);
	for (tries = 0; tries < DISC_MAX_TRIES; tries++) {
		ret = nvmefs_get_log_page(ctrl, NVME_LOG_LID_DISCOVER, 0, 0, &hdr, sizeof(hdr));
		if (ret < 0)
			goto fail;
		numrec = nvmefs_le64_to_cpu(hdr.numrec);
		if (numrec > DISC_MAX_RECORDS) {
			ret = nvmefs_error(-E2BIG, "the discovery log of %s claims %llu records, more "
					   "than the %d nvmefs accepts: the target is misbehaving",
					   nvmefs_ctrl_where(ctrl), (unsigned long long)numrec,
					   DISC_MAX_RECORDS);
			goto fail;
		}
		bigger = realloc(log, sizeof(*log) + numrec * sizeof(log->entries[0]));
		if (!bigger) {
			ret = nvmefs_error(-ENOMEM, "out of memory for %llu discovery records",
					   (unsigned long long)numrec);
			goto fail;
		}
		log = bigger;
		if (!numrec) {
			*log = hdr;
			break;
		}
		ret = read_log(ctrl, log, sizeof(*log) + numrec * sizeof(log->entries[0]));
		if (ret < 0)
			goto fail;
		if (nvmefs_le64_to_cpu(log->numrec) != numrec)
			continue;
		if (ret == 1)
			break;
		ret = nvmefs_get_log_page(ctrl, NVME_LOG_LID_DISCOVER, 0, 0, &hdr, sizeof(hdr));
		if (ret < 0)
			goto fail;
		if (hdr.genctr == log->genctr && nvmefs_le64_to_cpu(hdr.numrec) == numrec)
			break;
	}
	if (tries == DISC_MAX_TRIES) {
		ret = nvmefs_error(-EAGAIN, "the discovery log of %s kept changing while it was read "
				   "(%d tries): the target is being reconfigured; try again",
				   nvmefs_ctrl_where(ctrl), DISC_MAX_TRIES);
		goto fail;
	}
	for (i = 0; i < numrec; i++) {
		if (entry_blank(&log->entries[i])) {
			ret = nvmefs_error(-EPROTO, "the discovery log of %s claims %llu records but "
					   "record %llu is empty: the log is truncated; try again",
					   nvmefs_ctrl_where(ctrl), (unsigned long long)numrec,
					   (unsigned long long)i);
			goto fail;
		}
	}
	*logp = log;
	return 0;
fail:
	free(log);
	return ret;
}

/* Room for a transport's name in a visited key ("rdma", "tcp"). */
#define DISC_TRTYPE_KEY_SIZE 16

struct walk {
	nvmefs_discovery_cb cb;
	void *arg;
	int max_depth;
	int nr_visited;
	char visited[DISC_MAX_CONTROLLERS][DISC_TRTYPE_KEY_SIZE + NVMF_TRADDR_SIZE +
					   NVMF_TRSVCID_SIZE + 2];
};

/* True the first time a controller is seen; the guard against referral loops.
 * The transport is part of it: nvmet's ports are per transport, RDMA and TCP
 * listening side by side on one address and port are two controllers. */
static bool visit(struct walk *w, const char *trtype, const char *traddr, const char *trsvcid)
{
	char key[sizeof(w->visited[0])];
	int i;

	snprintf(key, sizeof(key), "%s %s %s", trtype ? trtype : nvmefs_transport_name(0), traddr,
		 trsvcid);
	for (i = 0; i < w->nr_visited; i++)
		if (strcmp(w->visited[i], key) == 0)
			return false;
	if (w->nr_visited == DISC_MAX_CONTROLLERS)
		return false;
	strcpy(w->visited[w->nr_visited++], key);
	return true;
}

/* The log the caller asked for is the result; one a referral led to is one
 * of several, and the caller decides whether the walk goes on without it. */
static int unreadable(struct walk *w, const struct nvmefs_connect_opts *where, int depth, int err)
{
	if (depth == 0)
		return err;
	return w->cb(where, NULL, depth, w->arg);
}

static int walk_from(struct walk *w, const struct nvmefs_connect_opts *opts, int depth)
{
	struct nvmf_discovery_log *log = NULL;
	struct nvmefs_connect_opts used = *opts;
	const struct nvmefs_transport_ops *ops;
	char hostnqn[NVMF_NQN_SIZE + 1], hostid[40];
	struct nvmefs_ctrl *ctrl;
	uint64_t i, numrec;
	int ret;

	ret = nvmefs_transport_find(opts->trtype, &ops);
	if (ret >= 0)
		ret = nvmefs_ctrl_connect_with(ops, opts, &ctrl);
	if (ret < 0)
		return unreadable(w, opts, depth, ret);
	/* Tell the caller who we were, not just who it asked us to be. */
	snprintf(hostnqn, sizeof(hostnqn), "%s", nvmefs_ctrl_hostnqn(ctrl));
	snprintf(hostid, sizeof(hostid), "%s", nvmefs_ctrl_hostid(ctrl));
	used.hostnqn = hostnqn;
	used.hostid = hostid;
	ret = nvmefs_get_discovery_log(ctrl, &log);
	nvmefs_ctrl_disconnect(ctrl);
	if (ret < 0)
		return unreadable(w, &used, depth, ret);
	ret = w->cb(&used, log, depth, w->arg);
	if (ret)
		goto out;
	numrec = nvmefs_le64_to_cpu(log->numrec);
	for (i = 0; i < numrec && depth < w->max_depth; i++) {
		const struct nvmf_disc_log_entry *e = &log->entries[i];
		char traddr[NVMF_TRADDR_SIZE + 1], trsvcid[NVMF_TRSVCID_SIZE + 1];
		struct nvmefs_connect_opts next = *opts;

		/* A referral over a transport we lack is the caller's to see
		 * in the log, not ours to follow. */
		next.trtype = nvmefs_transport_by_trtype(e->trtype);
		if (e->subtype != NVME_NQN_DISC || !next.trtype)
			continue;
		text_field(traddr, sizeof(traddr), e->traddr, sizeof(e->traddr));
		text_field(trsvcid, sizeof(trsvcid), e->trsvcid, sizeof(e->trsvcid));
		if (!visit(w, next.trtype, traddr, trsvcid))
			continue;
		next.traddr = traddr;
		next.trsvcid = trsvcid;
		next.subnqn = NULL;
		/* The caller's options were for the first transport: a
		 * referral over another takes those it can. */
		nvmefs_connect_opts_fit(&next);
		/* TLS with the caller's key where the record says its port runs
		 * it, as libnvme's connect-all; a plain port refuses TLS. */
		if (!nvmefs_disc_entry_tls(e))
			next.tls_key = NULL;
		/* Connecting without the secure channel it requires would only
		 * end in a refusal that says less. */
		if (nvmefs_disc_entry_requires_secure_channel(e) && !next.tls_key) {
			char at[TEXT_WHERE_SIZE];

			nvmefs_error(-ENOKEY, "the discovery controller at %s requires a secure "
				     "channel (its log entry's TREQ): give its TLS pre-shared key "
				     "with --tls-key", text_where(at, sizeof(at), traddr, trsvcid));
			ret = unreadable(w, &next, depth + 1, -ENOKEY);
		} else {
			ret = walk_from(w, &next, depth + 1);
		}
		if (ret)
			goto out;
	}
out:
	free(log);
	return ret;
}

int nvmefs_discover_0_2(const struct nvmefs_connect_opts *caller_opts, int max_depth,
		    nvmefs_discovery_cb cb, void *arg)
{
	const struct nvmefs_transport_ops *ops;
	struct nvmefs_connect_opts taken, *opts = &taken;
	struct walk *w;
	int ret;

	ret = nvmefs_connect_opts_take(caller_opts, &taken, &ops);
	if (ret < 0)
		return ret;
	if (opts->subnqn && strcmp(opts->subnqn, NVME_DISC_SUBSYS_NAME) != 0)
		return nvmefs_error(-EINVAL, "%s is not the discovery NQN: leave the NQN out to discover",
				    opts->subnqn);
	if (!opts->traddr || !opts->traddr[0])
		return nvmefs_error(-EINVAL, "no target address: pass one with -a");
	w = calloc(1, sizeof(*w));
	if (!w)
		return nvmefs_error(-ENOMEM, "out of memory");
	w->cb = cb;
	w->arg = arg;
	w->max_depth = max_depth < 0 ? 0 : max_depth;
	visit(w, opts->trtype, opts->traddr, opts->trsvcid);
	ret = walk_from(w, opts, 0);
	free(w);
	return ret;
}
NVMEFS_SYMVER(nvmefs_discover_0_2, "nvmefs_discover@@NVMEFS_0.2");
