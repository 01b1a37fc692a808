/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The mount's life: buffers and workers set up, the FUSE session mounted,
 * served until unmounted or signalled, everything written made durable and
 * torn down.
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
#include <nvme/types.h>
#include <nvme/util.h>

#include "fs_priv.h"
#include "../common/histogram.h"
#include "../common/json.h"
#include "../common/text.h"

static struct fs *sig_fs;

static void on_signal(int sig)
{
	(void)sig;
	if (sig_fs) {
		atomic_store(&sig_fs->stopping, true);
		eventfd_write(sig_fs->stop_fd, 1);
	}
}

/* CAP_IPC_LOCK, which lets mlock() and the RDMA device pin past the limit,
 * counts only in the initial user namespace: root of a container's own
 * namespace is held to RLIMIT_MEMLOCK like anyone. */
static bool memlock_unbounded(void)
{
	unsigned long inner, outer, count;
	bool initial = false;
	FILE *f;

	if (geteuid() != 0)
		return false;
	f = fopen("/proc/self/uid_map", "r");
	if (f) {
		initial = fscanf(f, "%lu %lu %lu", &inner, &outer, &count) == 3 && inner == 0 &&
			  outer == 0 && count == 4294967295ul;
		fclose(f);
	}
	return initial;
}

int nvmefs_fs_check_memlock(const struct nvmefs_fs_opts *opts)
{
	size_t need = (size_t)opts->workers * opts->depth * fs_freq_bytes(opts->max_io);
	struct rlimit rl;

	if (memlock_unbounded() || getrlimit(RLIMIT_MEMLOCK, &rl) || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur >= need + (1u << 20))
		return 0;
	return fs_error(-ENOMEM, "the request buffers need %zu KiB of locked memory (%u queues x "
			"--depth %u x max_io %zu KiB), more than RLIMIT_MEMLOCK allows (%llu KiB): "
			"raise it ('ulimit -l %zu'; in a container, --ulimit memlock=%zu) or use fewer "
			"or smaller buffers (-i, --depth, -o max_io)", need >> 10, opts->workers,
			opts->depth, opts->max_io >> 10, (unsigned long long)rl.rlim_cur >> 10,
			(need >> 10) + 1024, need + (1u << 20));
}

/* What every worker sleeps on besides /dev/fuse: the end, and its queue. */
static int watch_worker_fds(struct fs *fs)
{
	for (unsigned int i = 0; i < fs->opts.workers; i++) {
		struct worker *w = &fs->workers[i];
		struct epoll_event stop = { .events = EPOLLIN, .data.u32 = WORKER_EV_STOP };
		struct epoll_event cq = { .events = EPOLLIN, .data.u32 = WORKER_EV_QUEUE };
		struct epoll_event wake = { .events = EPOLLIN, .data.u32 = WORKER_EV_WAKE };

		w->epfd = epoll_create1(EPOLL_CLOEXEC);
		if (w->epfd < 0 || epoll_ctl(w->epfd, EPOLL_CTL_ADD, fs->stop_fd, &stop) ||
		    epoll_ctl(w->epfd, EPOLL_CTL_ADD, worker_fd(w), &cq) ||
		    epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->wake_fd, &wake))
			return fs_error(-errno, "setting up epoll for worker %u failed: %s", i,
					strerror(errno));
	}
	return 0;
}

/* Until the mount is asked to stop. */
static void wait_stopping(struct fs *fs)
{
	struct pollfd pfd = { .fd = fs->stop_fd, .events = POLLIN };
	eventfd_t v;

	while (!atomic_load(&fs->stopping)) {
		if (poll(&pfd, 1, -1) > 0)
			eventfd_read(fs->stop_fd, &v);
	}
}

static void free_workers(struct fs *fs)
{
	for (unsigned int i = 0; fs->workers && i < fs->opts.workers; i++) {
		if (fs->workers[i].epfd >= 0)
			close(fs->workers[i].epfd);
		if (fs->workers[i].wake_fd >= 0)
			close(fs->workers[i].wake_fd);
		nvmefs_subsys_mr_dereg(fs->workers[i].smr);
		free(fs->workers[i].region);
		free(fs->workers[i].freqs);
		free(fs->workers[i].spare.buf);
	}
	free(fs->workers);
}

/* Whether the mount's controller, or every one of its paths, failed. */
static int fs_failed(const struct fs *fs)
{
	int err = 0;

	for (unsigned int i = 0; i < fs_nr_ctrls(fs); i++) {
		err = nvmefs_ctrl_failed(fs_ctrl(fs, i));
		if (!err)
			return 0;
	}
	return err;
}

struct flush_wait {
	bool done;
	int status;
};

static void flush_done(void *arg, int status)
{
	struct flush_wait *fw = arg;

	fw->done = true;
	fw->status = status;
}

/* Polls the first worker's queue for up to 100 ms.  The mount is going
 * away: a controller that fails meanwhile is given up, and what it holds
 * fails, rather than waiting out ctrl_loss_tmo. */
static int flush_poll(struct fs *fs, struct nvmefs_mpq *mpq)
{
	fs_stop_reconnecting(fs);
	return nvmefs_mpq_poll(mpq, 100);
}

/* Flushes @nsid through the first worker's queue. */
static int flush_sync(struct fs *fs, struct nvmefs_mpq *mpq, uint32_t nsid)
{
	struct flush_wait fw = { 0 };
	int ret;

	while ((ret = nvmefs_mpq_flush(mpq, nsid, flush_done, &fw)) == -EAGAIN)
		if ((ret = flush_poll(fs, mpq)) < 0)
			return ret;
	while (ret >= 0 && !fw.done)
		ret = flush_poll(fs, mpq);
	/* A poll that failed has run every callback first. */
	return fw.done ? fw.status : ret;
}

/* Everything written is made durable before the mount goes away. */
static void flush_all(struct fs *fs)
{
	struct nvmefs_mpq *mpq = nvmefs_subsys_queue(fs->subsys, 0);

	for (unsigned int i = 0; mpq && i < fs->nr_ns && !fs_failed(fs); i++) {
		int ret = flush_sync(fs, mpq, fs->ns[i].nsid);

		if (ret)
			fs_log("flushing %s before unmounting failed: %s", fs->ns[i].name,
			       ret > 0 ? nvme_status_to_string(ret, false) : nvmefs_errmsg());
	}
}

void nvmefs_fs_io_opts(const struct nvmefs_fs_opts *opts, struct nvmefs_io_opts *io)
{
	nvmefs_io_opts_init(io);
	io->nr_queues = opts->workers;
	/* Each request needs up to three commands at once (two edges, the middle). */
	io->queue_size = opts->queue_size ? opts->queue_size : opts->depth * 3 + 1;
	io->bufs_per_queue = 1;
	io->buf_size = 4096;
	io->timeout_ms = opts->io_timeout_ms;
}


int nvmefs_fs_run(struct nvmefs_ctrl *ctrl, struct nvmefs_subsys *subsys,
		  const struct nvmefs_fs_opts *opts)
{
	struct fs *fs;
	struct sigaction sa = { .sa_handler = on_signal };
	char *mount_opts = NULL, fsname[sizeof("fsname=nvmefs:") + 256], max_read[32];
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	unsigned int started = 0;
	int ret;

	fs = calloc(1, sizeof(*fs));
	if (!fs)
		return fs_error(-ENOMEM, "out of memory");
	fs->ctrl = ctrl;
	fs->subsys = subsys;
	fs->opts = *opts;
	fs->uid = opts->uid >= 0 ? (uid_t)opts->uid : getuid();
	fs->gid = opts->gid >= 0 ? (gid_t)opts->gid : getgid();
	fs->mounted = time(NULL);
	fs->stop_fd = -1;
	pthread_mutex_init(&fs->resv_lock, NULL);
	pthread_mutex_init(&fs->log_lock, NULL);
	/* The request, or the blocks around an unaligned read of max_io bytes. */
	fs->bufsize = opts->max_io + BUF_SLACK;

	ret = fs_scan_namespaces(fs);
	if (ret == 0)
		ret = fs_build_info(fs);
	if (ret < 0)
		goto out;
	fs->nr_resv = opts->workers * opts->depth;
	fs->resv = calloc(fs->nr_resv, sizeof(*fs->resv));
	fs->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (!fs->resv || fs->stop_fd < 0) {
		ret = fs_error(-ENOMEM, "out of memory");
		goto out;
	}
	ret = fs_setup_workers(fs);
	if (ret < 0)
		goto out;

	snprintf(fsname, sizeof(fsname), "fsname=nvmefs:%s", nvmefs_ctrl_subnqn(ctrl));
	snprintf(max_read, sizeof(max_read), "max_read=%zu", opts->max_io);
	/* An NQN may hold a comma (or a backslash): escaped, or libfuse would
	 * split fsname= there and take the rest for an option. */
	if (fuse_opt_add_opt_escaped(&mount_opts, fsname) ||
	    fuse_opt_add_opt(&mount_opts, "subtype=nvmefs,default_permissions") ||
	    fuse_opt_add_opt(&mount_opts, max_read) ||
	    (opts->fuse_options && fuse_opt_add_opt(&mount_opts, opts->fuse_options)) ||
	    fuse_opt_add_arg(&args, "nvmefs") || fuse_opt_add_arg(&args, "-o") ||
	    fuse_opt_add_arg(&args, mount_opts)) {
		ret = fs_error(-ENOMEM, "out of memory");
		goto out;
	}
	fs->se = fuse_session_new(&args, &fs_lowlevel_ops, sizeof(fs_lowlevel_ops), fs);
	if (!fs->se) {
		ret = fs_error(-EINVAL, "setting up FUSE failed (libfuse said why above): check the "
				   "-o options");
		goto out;
	}
	if (fuse_session_mount(fs->se, opts->mountpoint) != 0) {
		ret = fs_error(-EIO, "mounting on %s failed (libfuse said why above): check that it "
				   "is a directory you may mount on, and that /dev/fuse and fusermount3 "
				   "are usable", opts->mountpoint);
		goto out;
	}
	fcntl(fuse_session_fd(fs->se), F_SETFL, fcntl(fuse_session_fd(fs->se), F_GETFL) | O_NONBLOCK);
	ret = watch_worker_fds(fs);
	if (ret < 0) {
		fuse_session_unmount(fs->se);
		goto out;
	}
	/* Files follow the target's namespaces while the mount is live: with
	 * several paths, as the first one sees them (one callback at a time, and
	 * the sizes come from its cache; it reports what changed while it was
	 * away when it reconnects). */
	nvmefs_ctrl_set_change_cb(ctrl, fs_namespaces_changed, fs);
	sig_fs = fs;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	atomic_store(&fs->workers_left, opts->workers);
	for (started = 0; started < opts->workers; started++) {
		ret = pthread_create(&fs->workers[started].thread, NULL, fs_worker_main,
				     &fs->workers[started]);
		if (ret) {
			ret = fs_error(-ret, "starting worker %u failed: %s", started, strerror(ret));
			atomic_fetch_sub(&fs->workers_left, opts->workers - started);
			atomic_store(&fs->stopping, true);
			eventfd_write(fs->stop_fd, 1);
			break;
		}
		/* For top -H and the tests that count what the workers cost. */
		pthread_setname_np(fs->workers[started].thread, "nvmefs-worker");
	}
	/* Ready is told by the worker that sees INIT through (init_answered).
	 * At the end, the change callback goes while the workers still answer:
	 * one under way may wait in a FUSE notify for a request (a lookup
	 * holding the directory) that only they can answer, or, in a cached
	 * mount, for a page that a read held by an outage keeps locked: the
	 * outage is given up first, so that held read fails and lets go. */
	wait_stopping(fs);
	fs_stop_reconnecting(fs);
	nvmefs_ctrl_set_change_cb(ctrl, NULL, NULL);
	atomic_store(&fs->serve_done, true);
	eventfd_write(fs->stop_fd, 1);
	for (unsigned int i = 0; i < started; i++)
		pthread_join(fs->workers[i].thread, NULL);
	if (ret == 0 && fs->init_error)
		ret = fs->init_error;
	flush_all(fs);
	fuse_session_unmount(fs->se);
	if (fs_failed(fs) && ret == 0)
		ret = fs_error(fs_failed(fs), "the controller of %s failed while mounted%s and "
			       "was not reconnected (%s), so file I/O failed with EIO: check the "
			       "target and mount again", nvmefs_ctrl_subnqn(ctrl),
			       nvmefs_subsys_multipath(subsys) ? ", on every path," : "",
			       nvmefs_errmsg());
out:
	sig_fs = NULL;
	if (fs->se)
		fuse_session_destroy(fs->se);
	fuse_opt_free_args(&args);
	free(mount_opts);
	free_workers(fs);
	if (fs->stop_fd >= 0)
		close(fs->stop_fd);
	pthread_mutex_destroy(&fs->resv_lock);
	pthread_mutex_destroy(&fs->log_lock);
	free(fs->resv);
	free(fs->ns);
	free(fs->info);
	free(fs);
	return ret;
}
