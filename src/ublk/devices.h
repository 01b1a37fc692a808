/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The ublk front end of `nvmefs ublk add`: each namespace of a subsystem as
 * a block device /dev/ublkbN, served by the export engine's workers, each
 * on its own thread with one io_uring for the ublk queue's commands and
 * the NVMe queue's completions.  The command (src/cli/ublk.c) connects,
 * then hands the head over to nvmefs_ublk_run().  Also the ublk control
 * commands `nvmefs ublk list` and `del` use.
 */
#ifndef NVMEFS_UBLK_DEVICES_H
#define NVMEFS_UBLK_DEVICES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <nvmefs/nvmefs.h>

/* Where a daemon records each device it serves, for list and del. */
#define NVMEFS_UBLK_RUN_DIR "/run/nvmefs/ublk"
/* The deepest ublk queue (UBLK_MAX_QUEUE_DEPTH). */
#define NVMEFS_UBLK_MAX_DEPTH 4096

/* Options of a daemon made with --recovery, recorded for ublk recover: at
 * most this many. */
#define NVMEFS_UBLK_MAX_ARGS 256

/* A device nvmefs ublk recover takes over from a daemon that died. */
struct nvmefs_ublk_takeover {
	int id;
	uint32_t nsid;
};

struct nvmefs_ublk_opts {
	/* Workers, each with its own I/O queue and ublk queue. */
	unsigned int workers;
	/* Requests each worker keeps in flight, shared by the devices: each
	 * device's queue gets depth / namespaces of them. */
	unsigned int depth;
	/* Largest read or write in one request. */
	size_t max_io;
	/* Entries per I/O queue; 0: enough for depth. */
	unsigned int queue_size;
	unsigned int io_timeout_ms;
	/* The subsystem, recorded for list and del. */
	const char *subnqn;
	/* Devices a daemon that dies leaves in place, quiesced, for another to
	 * take over (UBLK_F_USER_RECOVERY, with the I/O in flight reissued);
	 * without, the kernel stops them.  The options @args, recorded with
	 * each device, start that daemon (ublk recover). */
	bool recovery;
	char *const *args;
	unsigned int nr_args;
	/* ublk recover: the devices of the dead daemon @takeover_pid, which
	 * this one takes over rather than adding (its namespaces' others are
	 * added). */
	const struct nvmefs_ublk_takeover *takeover;
	unsigned int nr_takeover;
	pid_t takeover_pid;
	/* Called once every device exists, with what to print: a line per
	 * device, or JSON with @json. */
	bool json;
	void (*ready)(void *arg, const char *out);
	void *ready_arg;
};

/* The I/O queues the devices need, which the caller creates on each path
 * before it makes the subsystem head. */
void nvmefs_ublk_io_opts(const struct nvmefs_ublk_opts *opts, struct nvmefs_io_opts *io);
/* 0 when the locked-memory limit covers what the devices pin on
 * @rdma_paths paths over RDMA; else -ENOMEM with nvmefs_ublk_errmsg().
 * Before connecting, whose own registrations would fail first. */
int nvmefs_ublk_check_memlock(const struct nvmefs_ublk_opts *opts, unsigned int rdma_paths);

/*
 * Serves each namespace of @ctrl as a ublk block device until a
 * SIGINT/SIGTERM or every device is deleted: on the way out, I/O in
 * flight finishes and the devices go.  All I/O goes through @subsys, its
 * I/O queues made with nvmefs_ublk_io_opts().  0, or -errno with
 * nvmefs_ublk_errmsg().
 */
int nvmefs_ublk_run(struct nvmefs_ctrl *ctrl, struct nvmefs_subsys *subsys,
		    const struct nvmefs_ublk_opts *opts);
const char *nvmefs_ublk_errmsg(void);

/* A ublk device as the driver reports it. */
struct nvmefs_ublk_info {
	int id;
	unsigned int nr_queues, depth, state;
	pid_t pid;
	uint64_t flags;
};

/* A device's record under NVMEFS_UBLK_RUN_DIR, as its daemon wrote it. */
struct nvmefs_ublk_record {
	char nqn[256];
	uint32_t nsid;
	long pid;
	/* Its namespace was removed or replaced on the target. */
	bool gone;
	/* With --recovery: the daemon's options, for ublk recover; else none. */
	unsigned int nr_args;
	char **args;
};

/* Writes @r to @f: 0, or -EINVAL for an option with a newline in it (a
 * line each) or too many, -EIO for a failed write. */
int nvmefs_ublk_record_write(FILE *f, const struct nvmefs_ublk_record *r);
/* Reads a record from @f into @r (its args allocated): 0, -EINVAL for what
 * is not one, -ENOMEM.  nvmefs_ublk_record_free() frees its args. */
int nvmefs_ublk_record_read(FILE *f, struct nvmefs_ublk_record *r);
void nvmefs_ublk_record_free(struct nvmefs_ublk_record *r);
/* Device @id's record, NVMEFS_UBLK_RUN_DIR/ID, in @path: its daemon writes
 * and removes it, list, del and recover read it. */
void nvmefs_ublk_record_path(char *path, size_t len, int id);
/* Daemon @pid's statistics file, NVMEFS_UBLK_RUN_DIR/PID.stats, in @path:
 * the daemon writes and removes it, `ublk stats` reads it, and `ublk del`
 * removes a dead daemon's. */
void nvmefs_ublk_stats_path(char *path, size_t len, long pid);

/* GET_DEV_INFO of device @id: 0 or -errno (-ENODEV: there is none). */
int nvmefs_ublk_dev_info(int id, struct nvmefs_ublk_info *info);
/* Stops and deletes device @id, which its daemon then lets go: 0 or -errno. */
int nvmefs_ublk_dev_del(int id);
/* Asks daemon @pid to delete its device @id alone, giving up the I/O held
 * for it first (an outage, an ANA state) while its other devices serve
 * on: 0 or -errno.  The device's record goes once it is deleted. */
int nvmefs_ublk_ask_del(pid_t pid, int id);

#endif /* NVMEFS_UBLK_DEVICES_H */
