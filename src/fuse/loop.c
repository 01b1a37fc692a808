/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The threads that serve /dev/fuse, one for each worker of the engine.
 * /dev/fuse is one descriptor for all of them: each reads requests straight
 * into its worker's registered buffers and serves them, I/O and all, on its
 * own thread, so a request's completion comes back where it was read.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "loop.h"

struct loop_thread {
	struct fs_loop *l;
	struct exp_worker *w;
	pthread_t thread;
	int epfd;
	bool fd_watched;	/* the descriptor is in epfd */
	/* epoll said the descriptor is readable, or the last read from it
	 * found a request: reading it may find one.  A read that finds it
	 * empty ends that, so an idle pass costs no system call on it. */
	bool fd_ready;
};

struct fs_loop {
	struct exp *e;
	int fd;
	const struct fs_loop_ops *ops;
	void *arg;
	/* Written by fs_loop_stop(): in every thread's epfd. */
	int stop_fd;
	/* Set by fs_loop_stop(): the threads stop reading and drain. */
	atomic_bool done;
	/* The descriptor said it ended: nothing more comes. */
	atomic_bool ended;
	/* A thread stopped reading (its worker had no buffer) before it found
	 * the descriptor empty: one epoll wake-up may have been all the others
	 * get for what is left, so they read it on their own.  Ended by a read
	 * that finds it empty. */
	atomic_bool unread;
	unsigned int nr, started;
	struct loop_thread th[];
};

/* Event tags of the loop's own descriptors; the engine's are its own. */
static char ev_stop, ev_fd;

static void serve(struct loop_thread *th, struct exp_req *r, size_t n)
{
	struct fs_loop *l = th->l;

	l->ops->handle(l->arg, r, exp_req_buf(r), n);
	exp_req_handled(r);
}

/* Reads one request into the worker's buffer (or its spare) and serves it,
 * unless the engine parks it.  Returns whether one came. */
static bool receive(struct loop_thread *th, struct exp_req *r)
{
	struct fs_loop *l = th->l;
	void *buf = exp_req_buf(r);
	ssize_t n;

	n = l->ops->read(l->arg, buf, exp_req_size(l->e));
	if (n <= 0) {
		if (n == -ENODEV)
			atomic_store(&l->ended, true);
		th->fd_ready = false;
		atomic_store_explicit(&l->unread, false, memory_order_relaxed);
		return false;
	}
	th->fd_ready = true;
	if (exp_req_admit(r, (size_t)n, l->ops->io_nsid(l->arg, buf, (size_t)n)))
		serve(th, r, (size_t)n);
	return true;
}

/* Whether a read may find a request: not after one found the descriptor
 * empty, until epoll says otherwise. */
static bool may_be_readable(const struct loop_thread *th)
{
	return th->fd_ready || atomic_load_explicit(&th->l->unread, memory_order_relaxed);
}

/*
 * Watched with EPOLLEXCLUSIVE, a request wakes one thread, not all (who
 * would then mostly read EAGAIN).  A thread whose worker takes nothing now
 * stops watching, so that requests go to one that does.
 */
static void watch_fd(struct loop_thread *th)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLEXCLUSIVE, .data.ptr = &ev_fd };
	bool on = !atomic_load(&th->l->ended) && exp_worker_req(th->w);

	if (on != th->fd_watched && epoll_ctl(th->epfd, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL,
					       th->l->fd, on ? &ev : NULL) == 0)
		th->fd_watched = on;
}

/* Requests that were parked and can go now, served as ones just read. */
static bool serve_resumed(struct loop_thread *th)
{
	struct exp_req *r;
	bool any = false;
	size_t n;

	while ((r = exp_worker_resumed(th->w, &n))) {
		serve(th, r, n);
		any = true;
	}
	return any;
}

static void *loop_main(void *arg)
{
	struct loop_thread *th = arg;
	struct fs_loop *l = th->l;
	struct exp_worker *w = th->w;
	unsigned int idx = (unsigned int)(th - l->th);
	struct exp_req *r;

	while (!atomic_load(&l->done)) {
		struct epoll_event ev[4];
		bool busy = exp_worker_run(w);
		int wait, n;

		if (serve_resumed(th))
			busy = true;
		if (l->ops->run && l->ops->run(l->arg, idx))
			busy = true;
		/* Take what has queued up. */
		while (!atomic_load(&l->ended) && may_be_readable(th) && (r = exp_worker_req(w)) &&
		       receive(th, r))
			busy = true;
		if (th->fd_ready && !atomic_load(&l->ended))
			atomic_store_explicit(&l->unread, true, memory_order_relaxed);
		watch_fd(th);
		if (l->ops->flush)
			l->ops->flush(l->arg, idx);
		if (busy)
			continue;
		/* A worker polling for its one request in flight (or with work
		 * come meanwhile) still looks at /dev/fuse: a request read while
		 * it polls is not left waiting for the poll to end. */
		if (!exp_worker_arm(w, &wait))
			wait = 0;
		n = epoll_wait(th->epfd, ev, 4, wait);
		for (int i = 0; i < n; i++) {
			if (ev[i].data.ptr == &ev_fd)
				th->fd_ready = true;
			else if (ev[i].data.ptr != &ev_stop)
				exp_worker_event(w, &ev[i]);
		}
	}
	for (;;) {
		bool drained = exp_worker_drain(w);

		if (!drained)
			serve_resumed(th);
		if (l->ops->flush)
			l->ops->flush(l->arg, idx);
		if (drained)
			return NULL;
	}
}

static int setup_thread(struct fs_loop *l, unsigned int i)
{
	struct loop_thread *th = &l->th[i];
	struct epoll_event stop = { .events = EPOLLIN, .data.ptr = &ev_stop };
	int ret;

	th->l = l;
	th->w = exp_worker(l->e, i);
	/* A request may wait from before the threads start. */
	th->fd_ready = true;
	th->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (th->epfd < 0 || epoll_ctl(th->epfd, EPOLL_CTL_ADD, l->stop_fd, &stop))
		return exp_error(-errno, "setting up epoll for worker %u failed: %s", i,
				 strerror(errno));
	ret = exp_worker_watch(th->w, th->epfd);
	if (ret == 0 && l->ops->watch)
		ret = l->ops->watch(l->arg, i, th->epfd);
	if (ret < 0)
		return ret;
	ret = pthread_create(&th->thread, NULL, loop_main, th);
	if (ret)
		return exp_error(-ret, "starting worker %u failed: %s", i, strerror(ret));
	/* For top -H and the tests that count what the workers cost. */
	pthread_setname_np(th->thread, "nvmefs-worker");
	return 0;
}

int fs_loop_start(struct exp *e, int fd, const struct fs_loop_ops *ops, void *arg,
		  struct fs_loop **out)
{
	unsigned int nr = exp_nr_workers(e);
	struct fs_loop *l = calloc(1, sizeof(*l) + nr * sizeof(l->th[0]));
	int ret = 0;

	*out = NULL;
	if (!l)
		ret = exp_error(-ENOMEM, "out of memory");
	else
		l->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (l && l->stop_fd < 0) {
		ret = exp_error(-errno, "creating an eventfd failed: %s", strerror(errno));
		free(l);
		l = NULL;
	}
	if (!l) {
		for (unsigned int i = 0; i < nr; i++)
			exp_worker_abandon(exp_worker(e, i));
		return ret;
	}
	l->e = e;
	l->fd = fd;
	l->ops = ops;
	l->arg = arg;
	l->nr = nr;
	for (unsigned int i = 0; i < nr; i++)
		l->th[i].epfd = -1;
	for (; l->started < nr; l->started++) {
		ret = setup_thread(l, l->started);
		if (ret < 0)
			break;
	}
	/* The workers no thread serves take no posts: what was posted to them
	 * is answered as the mount's end answers it, and so is what comes after. */
	for (unsigned int i = l->started; i < nr; i++)
		exp_worker_abandon(exp_worker(e, i));
	*out = l;
	return ret;
}

void fs_loop_stop(struct fs_loop *l)
{
	if (!l)
		return;
	atomic_store(&l->done, true);
	eventfd_write(l->stop_fd, 1);
	for (unsigned int i = 0; i < l->started; i++)
		pthread_join(l->th[i].thread, NULL);
	for (unsigned int i = 0; i < l->nr; i++)
		if (l->th[i].epfd >= 0)
			close(l->th[i].epfd);
	close(l->stop_fd);
	free(l);
}
