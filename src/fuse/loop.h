/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The /dev/fuse side of the FUSE front end (loop.c): a thread for each
 * worker of the engine, reading one shared, message-framed descriptor into
 * the worker's buffers and serving them on that thread.  No libfuse here:
 * adapter.c gives it the reading, the sorting and the handing to libfuse,
 * and the engine's unit harness drives it with a socket in place of
 * /dev/fuse.
 */
#ifndef NVMEFS_FUSE_LOOP_H
#define NVMEFS_FUSE_LOOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../export/engine.h"

struct fs_loop_ops {
	/* Reads one request from the descriptor into @buf of @size bytes: its
	 * length, or -errno: -EAGAIN when none waits, -ENODEV once it has
	 * ended (nothing more is read then). */
	ssize_t (*read)(void *arg, void *buf, size_t size);
	/* The namespace whose I/O the request of @len bytes at @buf is (one
	 * that keeps its buffer past the answer), or 0 for one answered on the
	 * spot. */
	uint32_t (*io_nsid)(void *arg, const void *buf, size_t len);
	/* Serves the request of @len bytes at @buf, in @r (admitted): answers
	 * it, or starts its I/O with exp_submit(@r, ...) before returning. */
	void (*handle)(void *arg, struct exp_req *r, void *buf, size_t len);
	/* Optional, a second source of requests that thread @i serves itself
	 * (FUSE over io_uring): its descriptors added to the thread's @epfd
	 * before it starts (0, or -errno with exp_error()), and on each pass of
	 * the thread, its requests served: whether any came. */
	int (*watch)(void *arg, unsigned int i, int epfd);
	bool (*run)(void *arg, unsigned int i);
	/* Optional: what thread @i's pass queued for that source (its replies)
	 * handed over in one go, at the end of each pass and while draining. */
	void (*flush)(void *arg, unsigned int i);
};

struct fs_loop;

/* A thread for each of @e's workers, serving requests read from @fd (non-
 * blocking).  When one cannot start (-errno with exp_error()), the others
 * serve until fs_loop_stop(), and what is posted to the rest is answered at
 * once; *@out is set either way unless out of memory. */
int fs_loop_start(struct exp *e, int fd, const struct fs_loop_ops *ops, void *arg,
		  struct fs_loop **out);
/* Stops reading requests, lets the workers' I/O in flight end, joins the
 * threads and frees @l. */
void fs_loop_stop(struct fs_loop *l);

#endif /* NVMEFS_FUSE_LOOP_H */
