/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nvmefs_ublk_run(): the namespaces' block devices added, their queues'
 * threads started, the devices started once every tag is fetched, and on
 * the way out stopped (which ends the queues once their I/O is done) and
 * deleted.  Each device is recorded under NVMEFS_UBLK_RUN_DIR for list
 * and del.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "ublk_priv.h"
#include "../common/json.h"

const char *nvmefs_ublk_errmsg(void)
{
	return exp_errmsg();
}

/* Written by a SIGINT, SIGTERM or SIGHUP, whichever thread takes it. */
static int sig_fd = -1;

static void on_signal(int sig)
{
	(void)sig;
	eventfd_write(sig_fd, 1);
}

/* 'ublk del' of one device of several: a real-time signal (each one sent
 * is delivered), queued with the device's id, which the handler passes on
 * to the main thread. */
#define DEL_SIGNAL SIGRTMIN
static int del_pipe[2] = { -1, -1 };

static void on_del(int sig, siginfo_t *si, void *uc)
{
	int id = si->si_value.sival_int;
	ssize_t n;

	(void)sig;
	(void)uc;
	if (si->si_code != SI_QUEUE)
		return;
	n = write(del_pipe[1], &id, sizeof(id));
	(void)n;
}

int nvmefs_ublk_ask_del(pid_t pid, int id)
{
	union sigval v = { .sival_int = id };

	return sigqueue(pid, DEL_SIGNAL, v) < 0 ? -errno : 0;
}

static struct exp_opts engine_opts(const struct nvmefs_ublk_opts *opts)
{
	return (struct exp_opts){ .workers = opts->workers, .depth = opts->depth,
				  .max_io = opts->max_io };
}

void nvmefs_ublk_io_opts(const struct nvmefs_ublk_opts *opts, struct nvmefs_io_opts *io)
{
	struct exp_opts eo = engine_opts(opts);

	exp_io_opts(&eo, opts->queue_size, opts->io_timeout_ms, io);
}

int nvmefs_ublk_check_memlock(const struct nvmefs_ublk_opts *opts, unsigned int rdma_paths)
{
	struct exp_opts eo = engine_opts(opts);
	char sum[200], paths[64] = "";

	if (rdma_paths > 1)
		snprintf(paths, sizeof(paths), " on each of %u RDMA paths", rdma_paths);
	snprintf(sum, sizeof(sum), "%u queues x --iodepth %u x (--max-io %zu KiB + 16 KiB)%s",
		 opts->workers, opts->depth, opts->max_io >> 10, paths);
	return exp_check_memlock(exp_pinned_need(&eo, rdma_paths, 0, 0), sum,
				 "-i, --iodepth, --max-io");
}

/* The namespaces the devices serve: those with a block size the engine
 * serves (the others are told and left out). */
static int scan(struct ublk_server *s, struct nvmefs_ctrl *ctrl)
{
	const uint32_t *nsids;
	unsigned int n = nvmefs_ctrl_ns_list(ctrl, &nsids);
	int ret;

	s->dev = calloc(n ? n : 1, sizeof(*s->dev));
	if (!s->dev)
		return exp_error(-ENOMEM, "out of memory");
	for (unsigned int i = 0; i < n; i++) {
		struct ublk_dev *d = &s->dev[s->nr_dev];

		ret = exp_ns_init(ctrl, &d->ns, nsids[i], "nvmefs ublk");
		if (ret == -EPROTO || ret == -EOPNOTSUPP || ret == -ENODEV) {
			exp_logp(LOG_WARNING, "namespace %u is not served: %s", nsids[i],
				 exp_errmsg());
			continue;
		}
		if (ret < 0)
			return ret;
		d->id = -1;
		d->cdev = -1;
		for (unsigned int k = 0; k < s->opts->nr_takeover; k++)
			if (s->opts->takeover[k].nsid == d->ns.nsid) {
				d->id = s->opts->takeover[k].id;
				d->recovering = true;
			}
		s->nr_dev++;
	}
	for (unsigned int k = 0; k < s->opts->nr_takeover; k++) {
		bool served = false;

		for (unsigned int i = 0; i < s->nr_dev && !served; i++)
			served = s->dev[i].id == s->opts->takeover[k].id;
		if (!served)
			exp_logp(LOG_WARNING, "/dev/ublkb%d is not taken over: %s has no namespace %u "
				 "nvmefs ublk can serve now; its I/O waits until 'nvmefs ublk del' "
				 "deletes it", s->opts->takeover[k].id, s->opts->subnqn,
				 s->opts->takeover[k].nsid);
	}
	if (!s->nr_dev)
		return exp_error(-ENODEV, "%s has no active namespace nvmefs ublk can serve: attach "
				 "one on the target, or check the NQN ('nvmefs identify' lists "
				 "them)", s->opts->subnqn);
	if (s->nr_dev > s->opts->depth)
		return exp_error(-EINVAL, "%u namespaces need --iodepth %u at least (each device's "
				 "queue takes a share of it): raise --iodepth", s->nr_dev,
				 s->nr_dev);
	s->depth = s->opts->depth / s->nr_dev;
	return 0;
}

static int ctrl_error(int ret, const char *what)
{
	if (ret == -ENOENT)
		return exp_error(ret, "%s failed: /dev/ublk-control does not exist: load the ublk "
				 "driver (modprobe ublk_drv) and run as root", what);
	if (ret == -EPERM || ret == -EACCES)
		return exp_error(ret, "%s failed: %s: ublk devices need root (CAP_SYS_ADMIN)", what,
				 strerror(-ret));
	return exp_error(ret, "%s failed: %s", what, strerror(-ret));
}

/* The char device appears once ADD_DEV returns (devtmpfs), or a moment
 * later where udev makes it. */
static int open_cdev(struct ublk_dev *d)
{
	char path[32];

	snprintf(path, sizeof(path), "/dev/ublkc%d", d->id);
	for (int i = 0; i < 100; i++) {
		d->cdev = open(path, O_RDWR | O_CLOEXEC);
		if (d->cdev >= 0 || errno != ENOENT)
			break;
		usleep(10000);
	}
	if (d->cdev < 0)
		return exp_error(-errno, "opening %s failed: %s", path, strerror(errno));
	return 0;
}

/* What a device is added with for a daemon that dies to leave it in place:
 * its I/O held, and that in flight reissued to the daemon that takes over. */
static uint64_t recovery_flags(const struct ublk_server *s)
{
	return s->opts->recovery ? UBLK_F_USER_RECOVERY | UBLK_F_USER_RECOVERY_REISSUE : 0;
}

static int add_dev(struct ublk_server *s, struct ublk_dev *d)
{
	struct ublksrv_ctrl_dev_info info = {
		.nr_hw_queues = (uint16_t)s->nr_q,
		.queue_depth = (uint16_t)s->depth,
		.max_io_buf_bytes = (uint32_t)s->opts->max_io,
		.dev_id = (uint32_t)-1,
		.ublksrv_pid = getpid(),
		.flags = UBLK_F_USER_COPY | UBLK_F_CMD_IOCTL_ENCODE |
			 (s->features & UBLK_F_UPDATE_SIZE) | recovery_flags(s),
	};
	uint64_t size = atomic_load(&d->ns.size);
	struct ublk_params p = {
		.len = sizeof(p),
		.types = UBLK_PARAM_TYPE_BASIC | UBLK_PARAM_TYPE_DISCARD,
		.basic = {
			/* Writes are acknowledged before they are durable: the
			 * block layer sends flushes, which go to the target. */
			.attrs = UBLK_ATTR_VOLATILE_CACHE,
			.logical_bs_shift = d->ns.lba_shift,
			.physical_bs_shift = d->ns.lba_shift,
			.io_min_shift = d->ns.lba_shift,
			.io_opt_shift = d->ns.lba_shift,
			.max_sectors = (uint32_t)(s->opts->max_io >> 9),
			.dev_sectors = size >> 9,
		},
		.discard = {
			.discard_granularity = d->ns.lba_size,
			.max_discard_sectors = UINT32_MAX >> 9,
			.max_write_zeroes_sectors = UINT32_MAX >> 9,
			.max_discard_segments = 1,
		},
	};
	int ret;

	ret = ublk_ctrl_cmd(UBLK_U_CMD_ADD_DEV, -1, &info, sizeof(info), 0);
	if (ret < 0)
		return ctrl_error(ret, "adding a ublk device");
	d->id = (int)info.dev_id;
	/* The driver gives a device one queue per possible CPU at most, and
	 * says so only in what it copies back; a queue it lacks would fail to
	 * map, with a message that does not say why. */
	if (info.nr_hw_queues != s->nr_q)
		return exp_error(-EINVAL, "this kernel's ublk driver gives /dev/ublkb%d %u queues, "
				 "not the %u asked for (one per CPU at most): add the devices with "
				 "-i %u or fewer", d->id, info.nr_hw_queues, s->nr_q, info.nr_hw_queues);
	/* The driver clears the flags it does not take. */
	if ((info.flags & recovery_flags(s)) != recovery_flags(s))
		return exp_error(-EOPNOTSUPP, "this kernel's ublk driver took /dev/ublkb%d without "
				 "user recovery (UBLK_F_USER_RECOVERY_REISSUE): add the devices "
				 "without --recovery", d->id);
	ret = ublk_ctrl_cmd(UBLK_U_CMD_SET_PARAMS, d->id, &p, sizeof(p), 0);
	if (ret < 0)
		return ctrl_error(ret, "setting the ublk device's size and limits");
	return open_cdev(d);
}

/* The time the kernel takes to quiesce a dead daemon's device and close
 * its char device, which START_USER_RECOVERY waits for. */
#define RECOVERY_WAIT_MS 10000

/*
 * Device @d, whose daemon died, taken over: once the kernel has quiesced
 * it (the I/O held, that in flight requeued to be reissued) and closed the
 * dead daemon's char device, START_USER_RECOVERY lets this daemon open it
 * and fetch every tag; END_USER_RECOVERY (start()) then serves the device.
 */
static int recover_dev(struct ublk_server *s, struct ublk_dev *d)
{
	struct nvmefs_ublk_info info;
	int ret;

	ret = nvmefs_ublk_dev_info(d->id, &info);
	if (ret < 0)
		return ctrl_error(ret, "reading the ublk device's state");
	if (!(info.flags & UBLK_F_USER_RECOVERY))
		return exp_error(-EINVAL, "/dev/ublkb%d was added without --recovery: no daemon can "
				 "take it over; 'nvmefs ublk del' it and add it again", d->id);
	if (info.nr_queues != s->nr_q || info.depth != s->depth)
		return exp_error(-EINVAL, "/dev/ublkb%d has %u queues of %u requests, and this "
				 "daemon would serve %u of %u: recover it with the options it was "
				 "added with (-i, --iodepth)", d->id, info.nr_queues, info.depth,
				 s->nr_q, s->depth);
	for (int waited = 0;; waited += 20) {
		ret = ublk_ctrl_cmd(UBLK_U_CMD_START_USER_RECOVERY, d->id, NULL, 0, 0);
		if (ret != -EBUSY || waited >= RECOVERY_WAIT_MS)
			break;
		usleep(20000);
	}
	if (ret == -EBUSY)
		return exp_error(ret, "taking /dev/ublkb%d over failed: the kernel has not quiesced "
				 "it %d s after its daemon died (or another daemon has it): try "
				 "again, or 'nvmefs ublk del' it", d->id, RECOVERY_WAIT_MS / 1000);
	if (ret < 0)
		return ctrl_error(ret, "starting the ublk device's recovery");
	d->taken = true;
	return open_cdev(d);
}

/* What `ublk add` prints: the devices, a line each, or as JSON (nvme
 * list's keys where they mean the same). */
static char *devices_text(const struct ublk_server *s)
{
	char *out = NULL, path[32];
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	struct json j;

	if (!f)
		return NULL;
	json_init(&j, f);
	if (s->opts->json) {
		json_object_begin(&j, NULL);
		json_array_begin(&j, "Devices");
	}
	for (unsigned int i = 0; i < s->nr_dev; i++) {
		const struct ublk_dev *d = &s->dev[i];

		snprintf(path, sizeof(path), "/dev/ublkb%d", d->id);
		if (!s->opts->json) {
			fprintf(f, "%s\n", path);
			continue;
		}
		json_object_begin(&j, NULL);
		json_string(&j, "DevicePath", path);
		json_string(&j, "SubsystemNQN", s->opts->subnqn);
		json_uint(&j, "NameSpace", d->ns.nsid);
		json_uint(&j, "PhysicalSize", atomic_load(&d->ns.size));
		json_uint(&j, "SectorSize", d->ns.lba_size);
		json_object_end(&j);
	}
	if (s->opts->json) {
		json_array_end(&j);
		json_object_end(&j);
		fputc('\n', f);
	}
	if (fclose(f)) {
		free(out);
		return NULL;
	}
	return out;
}

static int start(struct ublk_server *s)
{
	int ret;

	s->features = ublk_features();
	if (recovery_flags(s) & ~s->features)
		return exp_error(-EOPNOTSUPP, "this kernel's ublk driver has no user recovery "
				 "(UBLK_F_USER_RECOVERY_REISSUE): add the devices without --recovery");
	for (unsigned int i = 0; i < s->nr_dev; i++) {
		struct ublk_dev *d = &s->dev[i];

		ret = d->recovering ? recover_dev(s, d) : add_dev(s, d);
		if (ret < 0)
			return ret;
	}
	for (unsigned int i = 0; i < s->nr_q; i++) {
		ret = ublk_queue_start(s, i);
		if (ret < 0)
			return ret;
	}
	/* START_DEV waits until every tag is fetched: a queue that could not
	 * fetch would hold it forever. */
	for (unsigned int i = 0; i < s->nr_q; i++) {
		while (!atomic_load(&s->q[i].fetching))
			usleep(1000);
		if (s->q[i].error)
			return s->q[i].error;
	}
	for (unsigned int i = 0; i < s->nr_dev; i++) {
		struct ublk_dev *d = &s->dev[i];

		/* Recovery's end reissues the I/O the dead daemon had, and
		 * serves what waited meanwhile. */
		ret = ublk_ctrl_cmd(d->recovering ? UBLK_U_CMD_END_USER_RECOVERY
						  : UBLK_U_CMD_START_DEV, d->id, NULL, 0,
				    (uint64_t)getpid());
		if (ret < 0)
			return ctrl_error(ret, d->recovering ? "ending the ublk device's recovery"
							     : "starting the ublk device");
		d->started = true;
		if (d->recovering)
			ublk_size_check(s, d);
		ublk_record(s, d);
	}
	if (s->opts->nr_takeover)
		ublk_unrecord_stats(s->opts->takeover_pid);
	return 0;
}

/*
 * 'ublk del' of device @id alone.  What is held for its namespace fails
 * first, as at the stop: STOP_DEV waits for the device's I/O in flight,
 * which an outage would hold until ctrl_loss_tmo.  The other devices serve
 * on, their I/O held as before.
 */
static void remove_one(struct ublk_server *s, int id)
{
	for (unsigned int i = 0; i < s->nr_dev; i++) {
		struct ublk_dev *d = &s->dev[i];
		int ret;

		if (d->id != id || !d->started)
			continue;
		d->started = false;
		exp_ns_give_up(s->e, d->ns.nsid);
		/* The queues let go of the device once STOP_DEV aborts its
		 * commands, which DEL_DEV waits for. */
		ret = ublk_ctrl_cmd(UBLK_U_CMD_STOP_DEV, id, NULL, 0, 0);
		if (ret == 0)
			ret = ublk_ctrl_cmd(UBLK_U_CMD_DEL_DEV, id, NULL, 0, 0);
		if (ret < 0) {
			exp_logp(LOG_ERR, "deleting /dev/ublkb%d failed: %s: 'nvmefs ublk del' it "
				 "again, or stop the daemon (PID %ld)", id, strerror(-ret),
				 (long)getpid());
			return;
		}
		d->removed = true;
		ublk_unrecord(d);
		exp_logp(LOG_INFO, "/dev/ublkb%d removed", id);
	}
}

/* How often the daemon's stats file is written again. */
#define STATS_EVERY_MS 1000

/* Until a signal, or until every queue ended (every device deleted);
 * meanwhile the stats file kept fresh. */
static void wait_end(struct ublk_server *s)
{
	struct pollfd pfd[3] = { { .fd = sig_fd, .events = POLLIN },
				 { .fd = s->ended_fd, .events = POLLIN },
				 { .fd = del_pipe[0], .events = POLLIN } };
	unsigned int ended = 0;
	uint64_t written_ns = hist_now_ns();
	eventfd_t n;
	int id;

	ublk_write_stats(s);
	while (ended < s->nr_q) {
		int ready = poll(pfd, 3, STATS_EVERY_MS);

		/* A second without events, or a busy one: the stats again. */
		if (ready == 0 || hist_now_ns() - written_ns >= STATS_EVERY_MS * 1000000ull) {
			ublk_write_stats(s);
			written_ns = hist_now_ns();
		}
		if (ready <= 0)
			continue;
		if (pfd[0].revents)
			return;
		if (pfd[1].revents && eventfd_read(s->ended_fd, &n) == 0)
			ended += (unsigned int)n;
		while (pfd[2].revents && read(del_pipe[0], &id, sizeof(id)) == (ssize_t)sizeof(id))
			remove_one(s, id);
	}
}

/* Whether this daemon deletes device @d as it ends: one it added, or took
 * over; one it failed to take over stays as the kernel keeps it, for
 * another try.  (No queue runs then: they start once every device is in.) */
static bool owned(const struct ublk_dev *d)
{
	return d->id >= 0 && !d->removed && (!d->recovering || d->taken);
}

static void stop(struct ublk_server *s)
{
	/* Workers whose thread never started: the others' drain does not
	 * wait for them. */
	for (unsigned int i = 0; i < s->nr_q; i++)
		if (!s->q[i].running)
			exp_worker_abandon(exp_worker(s->e, i));
	/* STOP_DEV lets the I/O in flight end, then aborts the queues'
	 * commands, which ends their threads.  They serve until then, but what
	 * is held for a path fails now, as 'nvme disconnect' fails it: else
	 * STOP_DEV would wait until ctrl_loss_tmo, or for ever under ANA. */
	exp_going(s->e);
	nvmefs_ctrl_set_change_cb(s->ctrl, NULL, NULL);
	for (unsigned int i = 0; i < s->nr_dev; i++)
		if (owned(&s->dev[i]))
			ublk_ctrl_cmd(UBLK_U_CMD_STOP_DEV, s->dev[i].id, NULL, 0, 0);
	for (unsigned int i = 0; i < s->nr_q; i++)
		ublk_queue_join(&s->q[i]);
	for (unsigned int i = 0; i < s->nr_dev; i++) {
		struct ublk_dev *d = &s->dev[i];

		if (d->cdev >= 0)
			close(d->cdev);
		if (!owned(d)) {
			if (d->id >= 0 && !d->removed)
				exp_logp(LOG_WARNING, "/dev/ublkb%d was not taken over: its I/O waits; "
					 "'nvmefs ublk recover' it again, or 'nvmefs ublk del' it",
					 d->id);
			continue;
		}
		ublk_ctrl_cmd(UBLK_U_CMD_DEL_DEV, d->id, NULL, 0, 0);
		ublk_unrecord(d);
		if (d->started)
			exp_logp(LOG_INFO, "/dev/ublkb%d removed", d->id);
	}
	ublk_unrecord_stats(getpid());
}

int nvmefs_ublk_run(struct nvmefs_ctrl *ctrl, struct nvmefs_subsys *subsys,
		    const struct nvmefs_ublk_opts *opts)
{
	struct ublk_server s = { .ctrl = ctrl, .opts = opts, .ended_fd = -1 };
	struct exp_opts eo = engine_opts(opts);
	struct sigaction sa = { .sa_handler = on_signal },
			 del_sa = { .sa_sigaction = on_del, .sa_flags = SA_SIGINFO };
	sigset_t sigs, old;
	char *out;
	int ret, failed;

	sig_fd = eventfd(0, EFD_CLOEXEC);
	s.ended_fd = eventfd(0, EFD_CLOEXEC);
	if (sig_fd < 0 || s.ended_fd < 0 || pipe2(del_pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
		ret = exp_error(-errno, "setting up the daemon's events failed: %s", strerror(errno));
		goto out;
	}
	ret = scan(&s, ctrl);
	if (ret == 0)
		ret = exp_create(subsys, &eo, &ublk_exp_ops, &s, &s.e);
	if (ret < 0)
		goto out;
	s.nr_q = exp_nr_workers(s.e);
	s.q = calloc(s.nr_q, sizeof(*s.q));
	if (!s.q) {
		ret = exp_error(-ENOMEM, "out of memory");
		goto out;
	}
	for (unsigned int i = 0; i < s.nr_q; i++)
		s.q[i].epfd = -1;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(DEL_SIGNAL, &del_sa, NULL);
	/* The queues' threads take no signal, which would only interrupt their waits. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	sigaddset(&sigs, DEL_SIGNAL);
	pthread_sigmask(SIG_BLOCK, &sigs, &old);
	s.iod_len = ((size_t)s.depth * sizeof(struct ublksrv_io_desc) +
		     (size_t)sysconf(_SC_PAGESIZE) - 1) & ~((size_t)sysconf(_SC_PAGESIZE) - 1);
	ret = start(&s);
	if (ret < 0)
		atomic_store(&s.start_failed, true);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret == 0) {
		out = devices_text(&s);
		for (unsigned int i = 0; i < s.nr_dev; i++)
			exp_logp(LOG_INFO, "serving namespace %u of %s as /dev/ublkb%d",
				 s.dev[i].ns.nsid, opts->subnqn, s.dev[i].id);
		/* Sizes follow the target's, as the first path sees them (see
		 * the mount's src/fuse/serve.c). */
		nvmefs_ctrl_set_change_cb(ctrl, ublk_namespaces_changed, &s);
		if (opts->ready)
			opts->ready(opts->ready_arg, out ? out : "");
		free(out);
		wait_end(&s);
	}
	/* Asked before stop(), which gives an outage up (the library logs
	 * that, and it is what del asked for): a controller that failed for
	 * good while serving is the error. */
	failed = ret == 0 ? exp_lost(s.e) : 0;
	stop(&s);
	if (failed)
		ret = exp_error(failed, "the controller of %s failed while serving%s and was not "
				"reconnected (%s), so block I/O failed with EIO: check the target and "
				"add the devices again", opts->subnqn,
				nvmefs_subsys_multipath(subsys) ? ", on every path," : "",
				strerror(-failed));
out:
	if (s.e) {
		for (unsigned int i = 0; !s.q && i < exp_nr_workers(s.e); i++)
			exp_worker_abandon(exp_worker(s.e, i));
		exp_destroy(s.e);
	}
	free(s.q);
	free(s.dev);
	sa.sa_handler = SIG_DFL;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(DEL_SIGNAL, &sa, NULL);
	for (int i = 0; i < 2; i++) {
		if (del_pipe[i] >= 0)
			close(del_pipe[i]);
		del_pipe[i] = -1;
	}
	if (sig_fd >= 0)
		close(sig_fd);
	sig_fd = -1;
	if (s.ended_fd >= 0)
		close(s.ended_fd);
	return ret;
}
