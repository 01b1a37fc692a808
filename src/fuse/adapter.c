/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * FUSE as the export engine's front end: loop.c's threads read /dev/fuse
 * through here into the workers' registered buffers and hand each request
 * to libfuse here, which calls fs_ops.c, whose I/O comes back here
 * (fs_io()) to start in the engine with the fuse_req_t as its cookie; the
 * engine completes it through here, where the cookie becomes a FUSE reply
 * again.
 */
#define FUSE_USE_VERSION 34

#include "config.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <fuse_lowlevel.h>
#include <linux/fuse.h>

#include "fs_priv.h"
#include "loop.h"

/* The request this thread is handing to libfuse: libfuse calls fs_ops.c
 * with no word of the buffer it came in, whose I/O fs_io() then starts. */
static _Thread_local struct exp_req *handling;

static ssize_t read_request(void *arg, void *buf, size_t size)
{
	struct fs *fs = arg;
	ssize_t n = read(fuse_session_fd(fs->se), buf, size);

	if (n >= 0)
		return n;
	if (errno == ENODEV) {
		/* Unmounted (fusermount3 -u, umount): time to go. */
		atomic_store(&fs->stopping, true);
		eventfd_write(fs->stop_fd, 1);
	}
	return -errno;
}

/*
 * The namespace whose I/O the request of @n bytes at @buf is: one that
 * would take its buffer past the answer (exp_submit()).  0 for what else
 * comes, which is answered on the spot, from any buffer.
 */
static uint32_t io_nsid(void *arg, const void *buf, size_t n)
{
	struct fs *fs = arg;
	const struct fuse_in_header *in = buf;

	if (n < sizeof(*in) || in->nodeid < INO_NS_BASE ||
	    in->nodeid - INO_NS_BASE >= atomic_load(&fs->nr_ns))
		return 0;
	if (in->opcode != FUSE_READ && in->opcode != FUSE_WRITE && in->opcode != FUSE_FSYNC &&
	    in->opcode != FUSE_FALLOCATE)
		return 0;
	return fs->ns[in->nodeid - INO_NS_BASE].nsid;
}

/*
 * The kernel's INIT went through fs_init(); libfuse may still have refused
 * it (options it cannot meet), and then ended the session: only a session
 * still running is a live mount to tell the caller about.
 */
static void init_answered(struct fs *fs)
{
	if (atomic_exchange(&fs->ready_told, true))
		return;
	if (!fs->init_error && !fuse_session_exited(fs->se))
		fs->init_error = fs_ring_started(fs);
	else if (!fs->init_error)
		fs->init_error = exp_error(-EPROTO, "FUSE refused the mount when the kernel started "
					   "it (INIT): a -o option it cannot meet; mount without the "
					   "FUSE options added, or see the system log");
	if (fs->init_error) {
		atomic_store(&fs->stopping, true);
		eventfd_write(fs->stop_fd, 1);
		return;
	}
	if (fs->opts.ready)
		fs->opts.ready(fs->opts.ready_arg);
}

static void handle(void *arg, struct exp_req *r, void *buf, size_t n)
{
	struct fs *fs = arg;
	struct fuse_buf fb = { .mem = buf, .size = n };

	handling = r;
	fuse_session_process_buf(fs->se, &fb);
	handling = NULL;
	if (atomic_load(&fs->init_called) && !atomic_load(&fs->ready_told))
		init_answered(fs);
}

void fs_io(fuse_req_t req, struct exp_ns *ns, enum exp_op op, uint64_t off, size_t size,
	   const void *data)
{
	if (fs_ring_io(req, ns, op, off, size, data))
		return;
	exp_submit(handling, req, ns, op, off, size, data);
}

static void refuse(void *arg, const void *buf, int err)
{
	struct fs *fs = arg;
	struct fuse_out_header out = {
		.len = sizeof(out), .error = -err,
		.unique = ((const struct fuse_in_header *)buf)->unique,
	};

	if (write(fuse_session_fd(fs->se), &out, sizeof(out)) < 0)
		exp_log("answering a request with %s failed: %s", strerror(err), strerror(errno));
}

static void complete_read(void *cookie, const void *data, size_t len)
{
	fuse_reply_buf(fs_ring_replying(cookie), data, len);
}

static void complete(void *cookie, enum exp_op op, int err, size_t len)
{
	fuse_req_t req = fs_ring_replying(cookie);

	if (!err && op == EXP_WRITE)
		fuse_reply_write(req, len);
	else
		fuse_reply_err(req, err);
}

static int ring_watch(void *arg, unsigned int i, int epfd)
{
	return fs_ring_watch(arg, i, epfd);
}

static bool ring_run(void *arg, unsigned int i)
{
	return fs_ring_run(arg, i);
}

static void ring_flush(void *arg, unsigned int i)
{
	fs_ring_flush(arg, i);
}

const struct fs_loop_ops fs_loop_ops = {
	.read = read_request,
	.io_nsid = io_nsid,
	.handle = handle,
	.watch = ring_watch,
	.run = ring_run,
	.flush = ring_flush,
};

const struct exp_ops fs_exp_ops = {
	.refuse = refuse,
	.complete_read = complete_read,
	.complete = complete,
};
