/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The subsystem head (mpath.c sends the I/O): its paths, each a controller
 * of the same subsystem with the same namespaces, and one queue of the
 * head per I/O queue index.  Every caller's I/O goes through a head; a
 * mount of one path is a head of one path.
 *
 * Registered memory is per controller (each has its own protection
 * domain): the pools of the first path's queues and the caller's regions
 * are registered on every other path too.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "mpath_priv.h"
#include "../base/error.h"
#include "../io/ioq.h"
#include "../io/namespaces.h"
#include "../state/ctrl_state.h"
#include "../types/ctrl_types.h"

static int mpq_init(struct nvmefs_subsys *s, struct nvmefs_mpq *mpq, struct nvmefs_ioq *first)
{
	unsigned int nr = first->q.nr_reqs;

	mpq->subsys = s;
	mpq->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (mpq->epfd < 0)
		return nvmefs_error(-errno, "creating a multipath queue's descriptor failed: %s",
				    strerror(errno));
	/* As many as the first path's queue takes: more could not be in flight. */
	mpq->ios = calloc(nr, sizeof(*mpq->ios));
	if (!mpq->ios)
		return nvmefs_error(-ENOMEM, "out of memory");
	for (unsigned int i = 0; i < nr; i++) {
		mpq->ios[i].mpq = mpq;
		mpq->ios[i].next = i + 1 < nr ? &mpq->ios[i + 1] : NULL;
	}
	mpq->free_ios = mpq->ios;
	return 0;
}

/* Watches @ioq's descriptor from the multipath queue's. */
static int mpq_watch(struct nvmefs_mpq *mpq, struct nvmefs_ioq *ioq, bool on)
{
	struct epoll_event ev = { .events = EPOLLIN };

	if (epoll_ctl(mpq->epfd, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, nvmefs_ioq_fd(ioq),
		      on ? &ev : NULL) && on)
		return nvmefs_error(-errno, "watching a path's I/O queue failed: %s", strerror(errno));
	return 0;
}

/* Watches path @ctrl's queue from each of the head's queues; all or none. */
static int watch_path(struct nvmefs_subsys *s, struct nvmefs_ctrl *ctrl)
{
	for (unsigned int i = 0; i < s->nr_mpqs; i++) {
		int ret = mpq_watch(&s->mpqs[i], ctrl->ioqs[i], true);

		if (ret < 0) {
			while (i--)
				mpq_watch(&s->mpqs[i], ctrl->ioqs[i], false);
			return ret;
		}
	}
	return 0;
}

static void unwatch_path(struct nvmefs_subsys *s, struct nvmefs_ctrl *ctrl)
{
	for (unsigned int i = 0; i < s->nr_mpqs; i++)
		mpq_watch(&s->mpqs[i], ctrl->ioqs[i], false);
}

void nvmefs_subsys_destroy(struct nvmefs_subsys *s)
{
	unsigned int p, i;

	if (!s)
		return;
	while (s->regions)
		nvmefs_subsys_mr_dereg(s->regions);
	for (p = 1; p < s->nr_paths; p++) {
		for (i = 0; s->pool_mrs[p] && i < s->nr_mpqs; i++)
			nvmefs_mr_dereg(s->pool_mrs[p][i]);
		free(s->pool_mrs[p]);
	}
	for (i = 0; s->mpqs && i < s->nr_mpqs; i++) {
		if (s->mpqs[i].epfd >= 0)
			close(s->mpqs[i].epfd);
		free(s->mpqs[i].ios);
	}
	free(s->mpqs);
	/* The first path's pools were registered on the others: it goes last. */
	for (p = s->nr_paths; p-- > 0;)
		nvmefs_ctrl_disconnect(s->paths[p]);
	pthread_mutex_destroy(&s->regions_lock);
	free(s);
}

/* A head over @first alone.  A multipath one has its paths give I/O back
 * when they fail, to go along another or be held here; a lone path's head
 * passes each call straight to the path's queue, which holds I/O through
 * an outage itself, as a controller without a multipath head does. */
static int subsys_new(struct nvmefs_ctrl *first, enum nvmefs_iopolicy policy, bool multipath,
		      struct nvmefs_subsys **subsysp)
{
	struct nvmefs_subsys *s;
	int ret;

	if (first->discovery || !first->nr_ioqs)
		return nvmefs_error(-EINVAL, "%s at %s has no I/O queues: create them before making "
				    "it a path", first->subnqn, nvmefs_ctrl_where(first));
	if ((unsigned int)policy > NVMEFS_IOPOLICY_QUEUE_DEPTH)
		return nvmefs_error(-EINVAL, "I/O policy %d is not one of numa, round-robin and "
				    "queue-depth", (int)policy);
	s = calloc(1, sizeof(*s));
	if (!s)
		return nvmefs_error(-ENOMEM, "out of memory");
	pthread_mutex_init(&s->regions_lock, NULL);
	s->policy = policy;
	s->mpqs = calloc(first->nr_ioqs, sizeof(*s->mpqs));
	if (!s->mpqs) {
		ret = nvmefs_error(-ENOMEM, "out of memory");
		goto fail;
	}
	for (unsigned int i = 0; i < first->nr_ioqs; i++)
		s->mpqs[i].epfd = -1;
	s->nr_mpqs = first->nr_ioqs;
	for (unsigned int i = 0; i < s->nr_mpqs; i++) {
		ret = mpq_init(s, &s->mpqs[i], first->ioqs[i]);
		/* A lone path's head sleeps on the path's own descriptor: no
		 * second one for its completions to wake as well. */
		if (ret == 0 && multipath)
			ret = mpq_watch(&s->mpqs[i], first->ioqs[i], true);
		if (ret < 0)
			goto fail;
		s->mpqs[i].ioqs[0] = first->ioqs[i];
		s->mpqs[i].ops = multipath ? &nvmefs_mpq_multipath_ops : &nvmefs_mpq_single_ops;
	}
	s->multipath = multipath;
	first->failover = multipath;
	s->paths[0] = first;
	s->nr_paths = 1;
	*subsysp = s;
	return 0;
fail:
	/* The caller keeps @first. */
	s->nr_paths = 0;
	nvmefs_subsys_destroy(s);
	return ret;
}

int nvmefs_subsys_create(struct nvmefs_ctrl *first, enum nvmefs_iopolicy policy,
			 struct nvmefs_subsys **subsysp)
{
	return subsys_new(first, policy, true, subsysp);
}

int nvmefs_subsys_create_single(struct nvmefs_ctrl *ctrl, struct nvmefs_subsys **subsysp)
{
	return subsys_new(ctrl, NVMEFS_IOPOLICY_NUMA, false, subsysp);
}

void nvmefs_subsys_give_up(struct nvmefs_subsys *s)
{
	atomic_store(&s->given_up, true);
}

void nvmefs_subsys_give_up_ns(struct nvmefs_subsys *s, uint32_t nsid)
{
	for (unsigned int p = 0; p < s->nr_paths; p++) {
		struct nvmefs_ctrl *ctrl = s->paths[p];
		struct nvmefs_ns_cache *ns = (struct nvmefs_ns_cache *)nvmefs_io_find_ns(ctrl, nsid);

		if (!ns)
			continue;
		atomic_store(&ns->given_up, true);
		/* A queue asleep in its outage looks at what it holds again. */
		nvmefs_io_wake(ctrl);
	}
}

bool nvmefs_subsys_multipath(const struct nvmefs_subsys *s)
{
	return s->multipath;
}

static const char *identity_difference(const struct nvmefs_ns_cache *a,
				       const struct nvmefs_ns_cache *b)
{
	if (memcmp(a->nguid, b->nguid, sizeof(a->nguid)))
		return "NGUID";
	if (memcmp(a->eui64, b->eui64, sizeof(a->eui64)))
		return "EUI-64";
	if (memcmp(a->uuid, b->uuid, sizeof(a->uuid)))
		return "UUID";
	if (a->lba_size != b->lba_size)
		return "block size";
	return NULL;
}

/* Every namespace of @a is on @b, the same one, and @b has no others. */
static int same_namespaces(const struct nvmefs_ctrl *a, const struct nvmefs_ctrl *b)
{
	unsigned int na = atomic_load(&a->nr_ns), nb = atomic_load(&b->nr_ns);
	char where_a[300], where_b[300];
	const char *diff;

	/* nvmefs_ctrl_where() has one buffer: both go in one message. */
	snprintf(where_a, sizeof(where_a), "%s", nvmefs_ctrl_where(a));
	snprintf(where_b, sizeof(where_b), "%s", nvmefs_ctrl_where(b));

	for (unsigned int i = 0; i < na; i++) {
		const struct nvmefs_ns_cache *ns = &a->ns[i], *other = nvmefs_io_find_ns(b, ns->nsid);

		if (!other)
			return nvmefs_error(-EXDEV, "the path through %s does not have namespace %u, "
					    "which %s has: not the same subsystem's namespaces; "
					    "not joined", where_b, ns->nsid,
					    where_a);
		diff = identity_difference(ns, other);
		if (diff)
			return nvmefs_error(-EXDEV, "namespace %u through %s has another %s than "
					    "through %s: another disk behind the same NSID; the path "
					    "is not joined", ns->nsid, where_b, diff,
					    where_a);
	}
	for (unsigned int i = 0; i < nb; i++)
		if (!nvmefs_io_find_ns(a, b->ns[i].nsid))
			return nvmefs_error(-EXDEV, "the path through %s has namespace %u, which %s "
					    "does not: not joined", where_b,
					    b->ns[i].nsid, where_a);
	return 0;
}

int nvmefs_subsys_add_path(struct nvmefs_subsys *s, struct nvmefs_ctrl *ctrl)
{
	const struct nvmefs_ctrl *first = s->paths[0];
	unsigned int p = s->nr_paths, i = 0;
	bool first_watched = false;
	struct nvmefs_subsys_mr *r;
	int ret;

	if (p == NVMEFS_MAX_PATHS)
		return nvmefs_error(-ENOSPC, "%s already has %u paths, the most nvmefs takes",
				    first->subnqn, NVMEFS_MAX_PATHS);
	for (i = 0; i < p; i++)
		if (s->paths[i] == ctrl)
			return nvmefs_error(-EEXIST, "the path through %s is already one",
					    nvmefs_ctrl_where(ctrl));
	if (ctrl->discovery || strcmp(ctrl->subnqn, first->subnqn))
		return nvmefs_error(-EXDEV, "%s answers as %s, not %s: a path must lead to the same "
				    "subsystem", nvmefs_ctrl_where(ctrl), ctrl->subnqn, first->subnqn);
	if (ctrl->nr_ioqs != s->nr_mpqs)
		return nvmefs_error(-EINVAL, "the path through %s has %u I/O queues, the first path "
				    "%u: create as many on each", nvmefs_ctrl_where(ctrl),
				    ctrl->nr_ioqs, s->nr_mpqs);
	ret = same_namespaces(first, ctrl);
	if (ret < 0)
		return ret;
	s->pool_mrs[p] = calloc(s->nr_mpqs, sizeof(*s->pool_mrs[p]));
	if (!s->pool_mrs[p])
		return nvmefs_error(-ENOMEM, "out of memory");
	for (i = 0; i < s->nr_mpqs; i++) {
		const struct nvmefs_ioq *pool = first->ioqs[i];

		ret = nvmefs_mr_reg(ctrl, pool->pool, pool->buf_size * pool->nr_bufs,
				    &s->pool_mrs[p][i]);
		if (ret < 0)
			goto fail;
	}
	pthread_mutex_lock(&s->regions_lock);
	for (r = s->regions; r; r = r->next) {
		ret = nvmefs_mr_reg(ctrl, r->addr, r->len, &r->mrs[p]);
		if (ret < 0)
			break;
	}
	pthread_mutex_unlock(&s->regions_lock);
	if (ret < 0)
		goto fail;
	if (!s->multipath) {
		ret = watch_path(s, s->paths[0]);
		if (ret < 0)
			goto fail;
		first_watched = true;
	}
	ret = watch_path(s, ctrl);
	if (ret < 0)
		goto fail;
	/* Before any I/O: a lone path's head becomes a multipath one, once. */
	for (i = 0; i < s->nr_mpqs; i++) {
		s->mpqs[i].ioqs[p] = ctrl->ioqs[i];
		s->mpqs[i].ops = &nvmefs_mpq_multipath_ops;
	}
	s->paths[0]->failover = true;
	s->multipath = true;
	ctrl->failover = true;
	s->paths[p] = ctrl;
	s->nr_paths = p + 1;
	return 0;
fail:
	if (first_watched)
		unwatch_path(s, s->paths[0]);
	pthread_mutex_lock(&s->regions_lock);
	for (r = s->regions; r; r = r->next) {
		nvmefs_mr_dereg(r->mrs[p]);
		r->mrs[p] = NULL;
	}
	pthread_mutex_unlock(&s->regions_lock);
	for (i = 0; i < s->nr_mpqs; i++)
		nvmefs_mr_dereg(s->pool_mrs[p][i]);
	free(s->pool_mrs[p]);
	s->pool_mrs[p] = NULL;
	return ret;
}

unsigned int nvmefs_subsys_path_count(const struct nvmefs_subsys *s)
{
	return s->nr_paths;
}

struct nvmefs_ctrl *nvmefs_subsys_path(struct nvmefs_subsys *s, unsigned int idx)
{
	return idx < s->nr_paths ? s->paths[idx] : NULL;
}

struct nvmefs_mpq *nvmefs_subsys_queue(struct nvmefs_subsys *s, unsigned int idx)
{
	return idx < s->nr_mpqs ? &s->mpqs[idx] : NULL;
}

enum nvmefs_iopolicy nvmefs_subsys_iopolicy(const struct nvmefs_subsys *s)
{
	return s->policy;
}

void nvmefs_subsys_rkey_stats(struct nvmefs_subsys *s, struct nvmefs_rkey_stats *st)
{
	struct nvmefs_rkey_stats path;

	memset(st, 0, sizeof(*st));
	for (unsigned int i = 0; i < s->nr_paths; i++) {
		nvmefs_ctrl_rkey_stats(s->paths[i], &path);
		st->per_io = st->per_io || path.per_io;
		st->bound += path.bound;
		st->invalidated_by_target += path.invalidated_by_target;
		st->invalidated_locally += path.invalidated_locally;
	}
}

void nvmefs_subsys_path_stats(const struct nvmefs_subsys *s, unsigned int idx,
			      struct nvmefs_path_stats *st)
{
	memset(st, 0, sizeof(*st));
	for (unsigned int i = 0; idx < s->nr_paths && i < s->nr_mpqs; i++) {
		const struct path_counts *c = &s->mpqs[i].counts[idx];

		st->ios += atomic_load_explicit(&c->ios, memory_order_relaxed);
		st->errors += atomic_load_explicit(&c->errors, memory_order_relaxed);
		st->failovers += atomic_load_explicit(&c->failovers, memory_order_relaxed);
	}
}

int nvmefs_subsys_mr_reg(struct nvmefs_subsys *s, void *addr, size_t len,
			 struct nvmefs_subsys_mr **mrp)
{
	struct nvmefs_subsys_mr *r = calloc(1, sizeof(*r));
	unsigned int p;
	int ret = 0;

	if (!r)
		return nvmefs_error(-ENOMEM, "out of memory");
	r->subsys = s;
	r->addr = addr;
	r->len = len;
	pthread_mutex_lock(&s->regions_lock);
	for (p = 0; p < s->nr_paths && ret == 0; p++)
		ret = nvmefs_mr_reg(s->paths[p], addr, len, &r->mrs[p]);
	if (ret == 0) {
		r->next = s->regions;
		if (s->regions)
			s->regions->prev = r;
		s->regions = r;
	}
	pthread_mutex_unlock(&s->regions_lock);
	if (ret < 0) {
		for (p = 0; p < NVMEFS_MAX_PATHS; p++)
			nvmefs_mr_dereg(r->mrs[p]);
		free(r);
		return ret;
	}
	*mrp = r;
	return 0;
}

void nvmefs_subsys_mr_dereg(struct nvmefs_subsys_mr *r)
{
	struct nvmefs_subsys *s;

	if (!r)
		return;
	s = r->subsys;
	pthread_mutex_lock(&s->regions_lock);
	if (r->prev)
		r->prev->next = r->next;
	else
		s->regions = r->next;
	if (r->next)
		r->next->prev = r->prev;
	pthread_mutex_unlock(&s->regions_lock);
	for (unsigned int p = 0; p < NVMEFS_MAX_PATHS; p++)
		nvmefs_mr_dereg(r->mrs[p]);
	free(r);
}
