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

/* Everything written is made durable before the mount goes away. A controller that failed
 * before the flush could be sent (the link went down just before the stop) leaves the target's
 * write cache as unflushed as a flush that failed: the log says so alike. */
static void flush_all(struct fs *fs)
{
	for (unsigned int i = 0; i < fs->nr_ns; i++) {
		int failed = exp_failed(fs->exp), ret;

		if (failed) {
			exp_log("flushing %s before unmounting failed: the controller failed and was not "
				"reconnected (%s)", fs->ns[i].name, strerror(-failed));
			continue;
		}
		ret = exp_flush_sync(fs->exp, fs->ns[i].nsid);
		if (ret)
			exp_log("flushing %s before unmounting failed: %s", fs->ns[i].name,
				ret > 0 ? nvme_status_to_string(ret, false) : nvmefs_errmsg());
	}
}

void nvmefs_fs_io_opts(const struct nvmefs_fs_opts *opts, struct nvmefs_io_opts *io)
{
	struct exp_opts eo = fs_engine_opts(opts);

	exp_io_opts(&eo, opts->queue_size, opts->io_timeout_ms, io);
}

/* libfuse's own line about an option it refuses: nvmefs_fs_fuse_option_ok()
 * says it in the command's words instead. */
void fs_quiet_log(enum fuse_log_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
}

bool nvmefs_fs_fuse_option_ok(const char *opt)
{
	static const struct fuse_lowlevel_ops no_ops;
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	struct fuse_session *se = NULL;

	/* The session parses the options as the mount will, and mounts nothing. */
	if (!fuse_opt_add_arg(&args, "nvmefs") && !fuse_opt_add_arg(&args, "-o") &&
	    !fuse_opt_add_arg(&args, opt)) {
		fuse_set_log_func(fs_quiet_log);
		se = fuse_session_new(&args, &no_ops, sizeof(no_ops), NULL);
		fuse_set_log_func(NULL);
	}
	if (se)
		fuse_session_destroy(se);
	fuse_opt_free_args(&args);
	return se != NULL;
}

int nvmefs_fs_run(struct nvmefs_ctrl *ctrl, struct nvmefs_subsys *subsys,
		  const struct nvmefs_fs_opts *opts)
{
	struct fs *fs;
	struct sigaction sa = { .sa_handler = on_signal };
	char *mount_opts = NULL, fsname[sizeof("fsname=nvmefs:") + 256], max_read[32];
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	struct exp_opts eo = fs_engine_opts(opts);
	int ret;

	fs = calloc(1, sizeof(*fs));
	if (!fs)
		return exp_error(-ENOMEM, "out of memory");
	fs->ctrl = ctrl;
	fs->subsys = subsys;
	fs->opts = *opts;
	fs->uid = opts->uid >= 0 ? (uid_t)opts->uid : getuid();
	fs->gid = opts->gid >= 0 ? (gid_t)opts->gid : getgid();
	fs->mounted = time(NULL);
	fs->stop_fd = -1;

	ret = fs_scan_namespaces(fs);
	if (ret == 0)
		ret = fs_build_info(fs);
	if (ret < 0)
		goto out;
	fs->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (fs->stop_fd < 0) {
		ret = exp_error(-ENOMEM, "out of memory");
		goto out;
	}
	ret = exp_create(subsys, &eo, &fs_exp_ops, fs, &fs->exp);
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
		ret = exp_error(-ENOMEM, "out of memory");
		goto out;
	}
	ret = fs_ring_setup(fs);
	if (ret < 0)
		goto out;
	fs->se = fuse_session_new(&args, &fs_lowlevel_ops, sizeof(fs_lowlevel_ops), fs);
	if (!fs->se) {
		ret = exp_error(-EINVAL, "setting up FUSE failed (libfuse said why above): check the "
				   "-o options");
		goto out;
	}
	if (fuse_session_mount(fs->se, opts->mountpoint) != 0) {
		ret = exp_error(-EIO, "mounting on %s failed (libfuse said why above): check that it "
				   "is a directory you may mount on, and that /dev/fuse and fusermount3 "
				   "are usable", opts->mountpoint);
		goto out;
	}
	fcntl(fuse_session_fd(fs->se), F_SETFL, fcntl(fuse_session_fd(fs->se), F_GETFL) | O_NONBLOCK);
	ret = fs_ring_attach(fs);
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
	ret = fs_loop_start(fs->exp, fuse_session_fd(fs->se), &fs_loop_ops, fs, &fs->loop);
	if (ret < 0) {
		/* The threads started serve until they are stopped, as usual. */
		atomic_store(&fs->stopping, true);
	}
	/* Ready is told by the thread that sees INIT through (init_answered).
	 * At the end, the change callback goes while the workers still answer:
	 * one under way may wait in a FUSE notify for a request (a lookup
	 * holding the directory) that only they can answer, or, in a cached
	 * mount, for a page that a read held by an outage keeps locked: the
	 * outage is given up first, so that held read fails and lets go. */
	wait_stopping(fs);
	exp_stop_reconnecting(fs->exp);
	nvmefs_ctrl_set_change_cb(ctrl, NULL, NULL);
	fs_loop_stop(fs->loop);
	fs->loop = NULL;
	if (ret == 0 && fs->init_error)
		ret = fs->init_error;
	flush_all(fs);
	fuse_session_unmount(fs->se);
	if (exp_failed(fs->exp) && ret == 0)
		ret = exp_error(exp_failed(fs->exp), "the controller of %s failed while mounted%s and "
				"was not reconnected (%s), so file I/O failed with EIO: check the "
				"target and mount again", nvmefs_ctrl_subnqn(ctrl),
				nvmefs_subsys_multipath(subsys) ? ", on every path," : "",
				strerror(-exp_failed(fs->exp)));
out:
	sig_fs = NULL;
	fs_ring_close(fs);
	if (fs->se)
		fuse_session_destroy(fs->se);
	fs_ring_destroy(fs);
	fuse_opt_free_args(&args);
	free(mount_opts);
	exp_destroy(fs->exp);
	if (fs->stop_fd >= 0)
		close(fs->stop_fd);
	free(fs->ns);
	free(fs->info);
	free(fs);
	return ret;
}

const char *nvmefs_fs_errmsg(void)
{
	return exp_errmsg();
}
