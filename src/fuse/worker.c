/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The mount's workers.  Each owns one NVMe I/O queue and many requests in
 * flight: it waits on /dev/fuse (shared, non-blocking) and on its queue's
 * descriptor, and replies when the target completes, from the same thread.
 */
#define FUSE_USE_VERSION 34

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/falloc.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <fuse_lowlevel.h>
#include <linux/fuse.h>
#include <nvme/types.h>
#include <nvme/util.h>

#include "fs_priv.h"
#include "../common/histogram.h"
#include "../common/json.h"
#include "../common/text.h"

/* ---------------------------------------------------------------------- */
/* Workers                                                                  */
/* ---------------------------------------------------------------------- */

/*
 * The kernel's INIT went through fs_init(); libfuse may still have refused
 * it (options it cannot meet), and then ended the session: only a session
 * still running is a live mount to tell the caller about.
 */
void fs_init_answered(struct fs *fs)
{
	if (atomic_exchange(&fs->ready_told, true))
		return;
	if (fuse_session_exited(fs->se)) {
		fs->init_error = fs_error(-EPROTO, "FUSE refused the mount when the kernel started "
					  "it (INIT): a -o option it cannot meet; mount without the "
					  "FUSE options added, or see the system log");
		atomic_store(&fs->stopping, true);
		eventfd_write(fs->stop_fd, 1);
		return;
	}
	if (fs->opts.ready)
		fs->opts.ready(fs->opts.ready_arg);
}

/* Hands the request of @n bytes in @f's buffer to libfuse. */
static void dispatch(struct worker *w, struct freq *f, size_t n)
{
	struct fs *fs = w->fs;
	struct fuse_buf fb = { 0 };
	bool spare = f == &w->spare;

	if (!spare) {
		w->free = f->next;
		w->busy++;
		if (!w->free)
			atomic_fetch_sub(&fs->workers_with_free, 1);
	}
	f->busy = false;
	f->taken = false;
	f->start_ns = hist_now_ns();
	fb.mem = f->buf;
	fb.size = n;
	fs_cur_freq = f;
	fuse_session_process_buf(fs->se, &fb);
	fs_cur_freq = NULL;
	if (atomic_load(&fs->init_called) && !atomic_load(&fs->ready_told))
		fs_init_answered(fs);
	/* Answered on the spot (lookup, getattr, ...): the buffer is free again.  A
	 * request fs_take() claimed is returned by freq_put(), even when it finished
	 * before fuse_session_process_buf() returned (a submission that failed). */
	if (!spare && !f->taken) {
		if (!w->free)
			atomic_fetch_add(&fs->workers_with_free, 1);
		f->next = w->free;
		w->free = f;
		w->busy--;
	}
}

void fs_dispatch(struct worker *w, size_t n)
{
	dispatch(w, w->free, n);
}

/*
 * The namespace whose I/O the request of @n bytes at @buf is: one that
 * would take its buffer past the answer (fs_take).  0 for what else comes,
 * which is answered on the spot, from any buffer.
 */
static uint32_t io_nsid(struct fs *fs, const uint8_t *buf, size_t n)
{
	const struct fuse_in_header *in = (const void *)buf;

	if (n < sizeof(*in) || in->nodeid < INO_NS_BASE ||
	    in->nodeid - INO_NS_BASE >= atomic_load(&fs->nr_ns))
		return 0;
	if (in->opcode != FUSE_READ && in->opcode != FUSE_WRITE && in->opcode != FUSE_FSYNC &&
	    in->opcode != FUSE_FALLOCATE)
		return 0;
	return fs->ns[in->nodeid - INO_NS_BASE].nsid;
}

/* Whether the worker's queue would hold I/O to @nsid now (park_release's
 * question). */
static bool ns_held(void *arg, uint32_t nsid)
{
	struct worker *w = arg;

	return nvmefs_mpq_ns_held(w->mpq, nsid);
}

/* Answers the request at @buf, which libfuse never saw, with @err. */
static void refuse(struct worker *w, const uint8_t *buf, int err)
{
	struct fuse_out_header out = {
		.len = sizeof(out), .error = -err,
		.unique = ((const struct fuse_in_header *)(const void *)buf)->unique,
	};

	if (write(fuse_session_fd(w->fs->se), &out, sizeof(out)) < 0)
		fs_log("worker %u: answering a request with %s failed: %s", w->idx, strerror(err),
		       strerror(errno));
}

/* Copies the I/O request of @n bytes just read at @buf out, onto @l. */
static void park(struct worker *w, struct park_list *l, uint32_t nsid, const uint8_t *buf,
		 size_t n)
{
	if (park_add(l, &w->fs->parked_bytes, nsid, buf, n) < 0)
		refuse(w, buf, ENOMEM);
}

/* Held requests whose namespace can go now join the ready ones (all of
 * them once the mount goes: the queue then fails them); ready ones get the
 * buffers that came free, oldest first, unless their namespace lost its
 * paths meanwhile.  Returns whether any went. */
static bool unpark(struct worker *w, bool force)
{
	struct fs *fs = w->fs;
	bool any = false;

	if (w->held.head) {
		uint64_t now = hist_now_ns();

		if (force || now - w->held_checked_ns >= PARK_RECHECK_MS * 1000000ull) {
			w->held_checked_ns = now;
			park_release(&w->held, &w->ready, ns_held, w, force);
		}
	}
	while (w->free && w->ready.head) {
		struct parked *p = park_pop(&w->ready);

		if (!force && ns_held(w, p->nsid)) {
			park_append(&w->held, p);
			continue;
		}
		memcpy(w->free->buf, p->bytes, p->len);
		dispatch(w, w->free, p->len);
		park_free(p, &fs->parked_bytes);
		any = true;
	}
	return any;
}

int fs_setup_workers(struct fs *fs)
{
	size_t per_freq = fs_freq_bytes(fs->opts.max_io);
	int ret;

	fs->workers = calloc(fs->opts.workers, sizeof(*fs->workers));
	if (!fs->workers)
		return fs_error(-ENOMEM, "out of memory");
	for (unsigned int i = 0; i < fs->opts.workers; i++)
		fs->workers[i].epfd = fs->workers[i].wake_fd = -1;
	for (unsigned int i = 0; i < fs->opts.workers; i++) {
		struct worker *w = &fs->workers[i];
		size_t len = per_freq * fs->opts.depth;

		w->fs = fs;
		w->idx = i;
		w->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (w->wake_fd < 0)
			return fs_error(-errno, "creating worker %u's eventfd failed: %s", i,
					strerror(errno));
		w->mpq = nvmefs_subsys_queue(fs->subsys, i);
		w->freqs = calloc(fs->opts.depth, sizeof(*w->freqs));
		w->spare.w = w;
		w->spare.resv = -1;
		w->spare.buf = malloc(fs->bufsize);
		if (!w->freqs || !w->spare.buf || posix_memalign((void **)&w->region, 4096, len))
			return fs_error(-ENOMEM, "out of memory for %zu MiB of request buffers",
					    len >> 20);
		/* Registered once (on every path): requests arrive here and data
		 * moves from here. */
		ret = nvmefs_subsys_mr_reg(fs->subsys, w->region, len, &w->smr);
		if (ret < 0)
			return lib_error(ret);
		for (unsigned int k = 0; k < fs->opts.depth; k++) {
			struct freq *f = &w->freqs[k];

			f->w = w;
			f->buf = w->region + k * per_freq;
			f->edge = f->buf + fs->bufsize;
			f->resv = -1;
			f->next = w->free;
			w->free = f;
		}
		atomic_fetch_add(&fs->workers_with_free, 1);
	}
	return 0;
}

/* Whether every buffer @w has taken holds I/O its queue holds (taken
 * before the namespace lost its paths, or the controller failed): none
 * comes free before a path does. */
static bool buffers_stuck(struct worker *w)
{
	for (unsigned int k = 0; k < w->fs->opts.depth; k++) {
		const struct freq *f = &w->freqs[k];

		if (f->busy && !ns_held(w, f->ns->nsid))
			return false;
	}
	return true;
}

/*
 * Whether @w reads /dev/fuse: with a buffer free, or into its spare once no
 * worker has one, so that the mount answers while its buffers are taken.
 * Not into the spare while I/O it read there waits for a buffer that will
 * come free (the rest waits in the kernel), nor once the mount has parked
 * all it may.
 */
static bool reads_fuse(struct worker *w)
{
	return w->free || (!atomic_load(&w->fs->workers_with_free) &&
			   park_room(&w->fs->parked_bytes) && (!w->ready.head || buffers_stuck(w)));
}

/* Reads one request into a free buffer, else into the spare, and dispatches
 * it.  I/O the queue would hold is parked, keeping the buffer free for I/O
 * that can go; so is I/O that came into the spare.  Returns whether one
 * came. */
static bool receive(struct worker *w)
{
	struct fs *fs = w->fs;
	struct freq *f = w->free ? w->free : &w->spare;
	uint32_t nsid;
	ssize_t n;

	n = read(fuse_session_fd(fs->se), f->buf, fs->bufsize);
	if (n <= 0) {
		if (n < 0 && errno == ENODEV) {
			/* Unmounted (fusermount3 -u, umount): time to go. */
			atomic_store(&fs->unmounted, true);
			atomic_store(&fs->stopping, true);
			eventfd_write(fs->stop_fd, 1);
		}
		return false;
	}
	nsid = io_nsid(fs, f->buf, (size_t)n);
	if (nsid && ns_held(w, nsid) && park_room(&fs->parked_bytes))
		park(w, &w->held, nsid, f->buf, (size_t)n);
	else if (nsid && f == &w->spare)
		park(w, &w->ready, nsid, f->buf, (size_t)n);
	else
		dispatch(w, f, (size_t)n);
	return true;
}

/*
 * /dev/fuse is shared by every worker: watched with EPOLLEXCLUSIVE, a
 * request wakes one of them, not all (who would then mostly read EAGAIN).
 * A worker with no buffer free stops watching while another has one, so
 * that requests go there.
 */
static void watch_fuse(struct worker *w)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLEXCLUSIVE, .data.u32 = WORKER_EV_FUSE };
	bool on = !atomic_load(&w->fs->unmounted) && reads_fuse(w);

	if (on != w->fuse_watched && epoll_ctl(w->epfd, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL,
					       fuse_session_fd(w->fs->se), on ? &ev : NULL) == 0)
		w->fuse_watched = on;
}

void fs_stop_reconnecting(struct fs *fs)
{
	for (unsigned int i = 0; i < fs_nr_ctrls(fs); i++) {
		struct nvmefs_ctrl *ctrl = fs_ctrl(fs, i);

		if (nvmefs_ctrl_failed(ctrl))
			nvmefs_ctrl_stop_reconnect(ctrl);
	}
}

void *fs_worker_main(void *arg)
{
	struct worker *w = arg;
	struct fs *fs = w->fs;

	while (!atomic_load(&fs->serve_done)) {
		struct epoll_event ev[4];
		bool busy = false;
		int wait, n;

		if (w->busy && worker_poll(w, 0) > 0)
			busy = true;
		if (w->retry_head && fs_run_retries(w))
			busy = true;
		if ((w->ready.head || w->held.head) && unpark(w, false))
			busy = true;
		/* Take what has queued up. */
		while (!atomic_load(&fs->unmounted) && reads_fuse(w) && receive(w))
			busy = true;
		watch_fuse(w);
		if (busy)
			continue;
		/* Nothing to do: sleep until a request, a completion or the end.  Arm
		 * even when idle: arming also takes the completion channel's pending
		 * event, which would otherwise keep epoll_wait() returning at once. */
		if (worker_arm(w) > 0) {
			/* Completions, or an outage: a worker with nothing in flight
			 * must still stop its queue for the controller to recover. */
			worker_poll(w, 0);
			continue;
		}
		/* What waits on the retry list is woken by a completion (room on
		 * the queue) or by wake_fd (a reservation released); the library
		 * says how long a command's retry delay has left.  The second's
		 * beat notices a request past its timeout. */
		wait = worker_wait_ms(w);
		if (w->held.head && (wait < 0 || wait > PARK_RECHECK_MS))
			wait = PARK_RECHECK_MS;
		n = epoll_wait(w->epfd, ev, 4, wait >= 0 && wait < 1000 ? wait : 1000);
		for (int i = 0; i < n; i++) {
			eventfd_t v;

			if (ev[i].data.u32 == WORKER_EV_WAKE)
				eventfd_read(w->wake_fd, &v);
		}
	}
	/* Let what is in flight finish; a dead target fails it within the I/O
	 * timeout, and I/O held by an outage fails as the mount goes. */
	while (w->busy || w->ready.head || w->held.head || worker_inflight(w) ||
	       atomic_load(&fs->workers_left)) {
		int ret;

		unpark(w, true);
		if (!w->busy && !worker_inflight(w) && !w->drained) {
			w->drained = true;
			atomic_fetch_sub(&fs->workers_left, 1);
		}

		/* Going away ends an outage's wait: what it holds fails now rather
		 * than at ctrl_loss_tmo, as 'nvme disconnect' does while reconnecting. */
		fs_stop_reconnecting(fs);
		ret = worker_poll(w, 100);

		fs_run_retries(w);
		/* A failed queue has ended all its I/O: what is left waits on nothing. */
		if (ret < 0) {
			if (w->busy)
				fs_log("worker %u: %u requests unanswered after the queue failed", w->idx,
				       w->busy);
			break;
		}
	}
	/* Left only when the queue failed with every buffer unanswered. */
	park_release(&w->held, &w->ready, ns_held, w, true);
	for (struct parked *p; (p = park_pop(&w->ready));) {
		refuse(w, p->bytes, EIO);
		park_free(p, &fs->parked_bytes);
	}
	if (!w->drained)
		atomic_fetch_sub(&fs->workers_left, 1);
	return NULL;
}
