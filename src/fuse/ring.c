/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * FUSE over io_uring (libfuse >= 3.18, a kernel that offers it): the
 * kernel hands requests to libfuse's ring threads, one per CPU, each with
 * its ring's entries, rather than to the workers reading /dev/fuse.  A
 * ring thread calls the operations in fs_ops.c; their I/O comes here
 * (fs_ring_submit()), which posts it to a worker (exp_post()): the worker owns
 * its NVMe queue, starts the request there and replies from its own thread
 * (libfuse takes the ring's lock for a reply from another thread).
 *
 * Zero copy stays: each ring entry's payload (fuse_req_get_payload()) is
 * registered with the controller the first time a request comes in it, so
 * a write goes to the target from where the kernel put it, and a read
 * that starts on a block has the target write its data there, which the
 * reply then hands over in place.  An entry that cannot be registered
 * (the locked-memory limit) is served through the worker's buffer, with a
 * copy.  Without libfuse 3.18, /dev/fuse only.
 */
#define FUSE_USE_VERSION 34

#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>

#include <fuse_lowlevel.h>

#include "fs_priv.h"
#include "../common/histogram.h"

#if FUSE_VERSION >= FUSE_MAKE_VERSION(3, 18)

/* One ring entry: its payload, registered or not, and the request it
 * carries, which the worker it is posted to completes. */
struct ring_slot {
	_Atomic(char *) payload;	/* set last: a reader that sees it sees the rest */
	size_t len;
	struct nvmefs_subsys_mr *mr;	/* NULL: not registered, served with a copy */
	struct exp_post post;
};

struct fs_ring {
	struct ring_slot *slots;
	size_t nr_slots;
	pthread_mutex_t lock;	/* adding slots, and closed */
	bool closed;		/* torn down: nothing more is registered */
	bool reg_failed_told;
};

/* The mount whose libfuse log is looked at (one a process). */
static struct fs *log_fs;

/*
 * libfuse 3.18 starts its ring while answering INIT and, when that fails,
 * says so in its log and carries on with /dev/fuse: no call tells.  Its
 * message is how -o io_uring=on learns that it did not get the ring.
 */
static void ring_log(enum fuse_log_level level, const char *fmt, va_list ap)
{
	if (log_fs && strstr(fmt, "io-uring") && (strstr(fmt, "fail") || strstr(fmt, "Fail")))
		atomic_store(&log_fs->ring_failed, true);
	/* As libfuse's own logger does. */
	(void)level;
	vfprintf(stderr, fmt, ap);
}

int fs_ring_args(struct fs *fs, struct fuse_args *args)
{
	unsigned int depth = fs->opts.workers * fs->opts.depth;
	struct fs_ring *r;
	char opt[64];

	if (fs->opts.io_uring == NVMEFS_FS_RING_OFF)
		return 0;
	r = calloc(1, sizeof(*r));
	/* The kernel sends a request to the ring of the CPU it comes from: each
	 * ring takes as many as the mount keeps in flight, all of which may
	 * come from one CPU. */
	if (r) {
		r->nr_slots = (size_t)get_nprocs_conf() * depth * 2;
		r->slots = calloc(r->nr_slots, sizeof(*r->slots));
	}
	if (!r || !r->slots) {
		free(r);
		return exp_error(-ENOMEM, "out of memory");
	}
	pthread_mutex_init(&r->lock, NULL);
	fs->ring = r;
	snprintf(opt, sizeof(opt), "io_uring,io_uring_q_depth=%u", depth);
	if (fuse_opt_add_arg(args, "-o") || fuse_opt_add_arg(args, opt))
		return exp_error(-ENOMEM, "out of memory");
	log_fs = fs;
	fuse_set_log_func(ring_log);
	return 0;
}

void fs_ring_init(struct fs *fs, struct fuse_conn_info *conn)
{
	if (fs->opts.io_uring == NVMEFS_FS_RING_OFF) {
		/* Not even when FUSE_URING_ENABLE=1 asks libfuse for it. */
		fuse_unset_feature_flag(conn, FUSE_CAP_OVER_IO_URING);
		return;
	}
	if (conn->capable_ext & FUSE_CAP_OVER_IO_URING) {
		atomic_store(&fs->ring_asked, true);
		return;
	}
	if (fs->opts.io_uring == NVMEFS_FS_RING_ON) {
		fs->init_error = exp_error(-EOPNOTSUPP, "-o io_uring=on: this kernel does not offer "
					   "FUSE over io_uring: boot one built with CONFIG_FUSE_IO_URING "
					   "with fuse.enable_uring=1, or mount with the default, /dev/fuse");
		fuse_session_exit(fs->se);
	}
}

int fs_ring_started(struct fs *fs)
{
	bool on = atomic_load(&fs->ring_asked) && !atomic_load(&fs->ring_failed);

	exp_set_io_uring(fs->exp, on);
	if (!on && atomic_load(&fs->ring_asked) && fs->opts.io_uring == NVMEFS_FS_RING_ON)
		return exp_error(-EIO, "-o io_uring=on: the kernel offers FUSE over io_uring, but "
				 "libfuse could not start its rings (it said why above: often the "
				 "locked-memory limit); mount with the default, /dev/fuse");
	return 0;
}

/* The slot of the ring entry whose payload is @payload (@len bytes),
 * registered when first seen; NULL once torn down. */
static struct ring_slot *slot_of(struct fs *fs, char *payload, size_t len)
{
	struct fs_ring *r = fs->ring;
	size_t start = ((uintptr_t)payload >> 12) % r->nr_slots, i;
	struct ring_slot *s = NULL;
	int ret;

	for (i = 0; i < r->nr_slots; i++) {
		struct ring_slot *c = &r->slots[(start + i) % r->nr_slots];
		char *p = atomic_load_explicit(&c->payload, memory_order_acquire);

		if (p == payload)
			return c;
		if (!p)
			break;
	}
	pthread_mutex_lock(&r->lock);
	for (i = 0; !r->closed && i < r->nr_slots; i++) {
		struct ring_slot *c = &r->slots[(start + i) % r->nr_slots];
		char *p = atomic_load_explicit(&c->payload, memory_order_relaxed);

		if (p == payload) {
			s = c;
			break;
		}
		if (p)
			continue;
		c->len = len;
		ret = nvmefs_subsys_mr_reg(fs->subsys, payload, len, &c->mr);
		if (ret < 0) {
			c->mr = NULL;
			if (!r->reg_failed_told) {
				r->reg_failed_told = true;
				exp_log("registering FUSE over io_uring's buffers failed (%s): their "
					"requests are copied through the workers' buffers; raise the "
					"locked-memory limit to avoid the copy", nvmefs_errmsg());
			}
		}
		atomic_store_explicit(&c->payload, payload, memory_order_release);
		s = c;
		break;
	}
	pthread_mutex_unlock(&r->lock);
	return s;
}

void fs_ring_submit(fuse_req_t req, struct exp_ns *ns, enum exp_op op, uint64_t off, size_t size,
		    const void *data)
{
	struct fs *fs = fuse_req_userdata(req);
	struct ring_slot *s;
	size_t len;
	char *payload;

	if (fuse_req_get_payload(req, &payload, &len, NULL) || !fs->ring ||
	    !(s = slot_of(fs, payload, len))) {
		fuse_reply_err(req, EIO);
		return;
	}
	s->post = (struct exp_post){
		.cookie = req, .ns = ns, .op = op, .off = off, .size = size, .data = data,
		.read_buf = s->mr ? payload : NULL, .read_room = len,
		.copy = !s->mr, .start_ns = hist_now_ns(),
	};
	exp_post(fs->exp, &s->post);
}

void fs_ring_close(struct fs *fs)
{
	struct fs_ring *r = fs->ring;

	if (!r)
		return;
	pthread_mutex_lock(&r->lock);
	r->closed = true;
	pthread_mutex_unlock(&r->lock);
	for (size_t i = 0; i < r->nr_slots; i++) {
		nvmefs_subsys_mr_dereg(r->slots[i].mr);
		r->slots[i].mr = NULL;
	}
}

void fs_ring_destroy(struct fs *fs)
{
	struct fs_ring *r = fs->ring;

	if (log_fs == fs) {
		fuse_set_log_func(NULL);
		log_fs = NULL;
	}
	if (!r)
		return;
	pthread_mutex_destroy(&r->lock);
	free(r->slots);
	free(r);
	fs->ring = NULL;
}

#else /* libfuse < 3.18: /dev/fuse only */

int fs_ring_args(struct fs *fs, struct fuse_args *args)
{
	(void)args;
	if (fs->opts.io_uring != NVMEFS_FS_RING_ON)
		return 0;
	return exp_error(-EOPNOTSUPP, "-o io_uring=on: this nvmefs was built with libfuse %d.%d, "
			 "without FUSE over io_uring: build libfuse 3.18 (contrib/build-libfuse "
			 "PREFIX) and configure --with-libfuse=PREFIX, or mount with the default, /dev/fuse",
			 FUSE_MAJOR_VERSION, FUSE_MINOR_VERSION);
}

void fs_ring_init(struct fs *fs, struct fuse_conn_info *conn)
{
	(void)fs;
	(void)conn;
}

int fs_ring_started(struct fs *fs)
{
	(void)fs;
	return 0;
}

void fs_ring_close(struct fs *fs)
{
	(void)fs;
}

void fs_ring_destroy(struct fs *fs)
{
	(void)fs;
}

#endif
