/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A FUSE server with no backend, for benchmarks (not a test): the floor under
 * the nvmefs mount.  Its one file, n1, answers reads with zeros and writes
 * with success, through libfuse's multi-threaded loop and with the mount's
 * defaults (direct I/O, asynchronous direct I/O, requests of up to max_io), so
 * that what the mount costs beyond FUSE's own round trip shows beside it.
 * Like libfuse's null example, but built here against the libfuse nvmefs uses.
 *
 *   fuse-null [--ring] MOUNTPOINT [SIZE_MIB [MAX_IO_KIB]]  (defaults 1024 and 128)
 * Runs in the foreground until unmounted (fusermount3 -u) or signalled.
 *
 * --ring serves FUSE over io_uring with libfuse's own ring threads (libfuse
 * >= 3.18 and a kernel with fuse.enable_uring): the floor under the mount's
 * -o io_uring=on, whose workers serve the ring themselves.  At its end it
 * says on standard error how many reads and writes came over the ring and
 * how many through /dev/fuse, since libfuse falls back to /dev/fuse without
 * a word when the kernel declines the ring.
 */
#define FUSE_USE_VERSION 312

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <fuse_lowlevel.h>

#define FILE_INO 2
#define FILE_NAME "n1"

static uint64_t file_size;
static size_t max_io;
static char *zeros;
static atomic_ulong over_ring, over_dev;

/* libfuse 3.18 added the ring and the means to tell its requests apart. */
#if FUSE_MAKE_VERSION(FUSE_MAJOR_VERSION, FUSE_MINOR_VERSION) >= FUSE_MAKE_VERSION(3, 18)
#define HAVE_FUSE_RING 1
static void count_path(fuse_req_t req)
{
	atomic_fetch_add_explicit(fuse_req_is_uring(req) ? &over_ring : &over_dev, 1,
				  memory_order_relaxed);
}
#else
#define HAVE_FUSE_RING 0
static void count_path(fuse_req_t req)
{
	(void)req;
	atomic_fetch_add_explicit(&over_dev, 1, memory_order_relaxed);
}
#endif

static void null_init(void *data, struct fuse_conn_info *conn)
{
	(void)data;
	conn->max_write = (unsigned int)max_io;
	conn->max_read = (unsigned int)max_io;
	conn->max_readahead = 0;
	conn->want |= conn->capable & (FUSE_CAP_ASYNC_DIO | FUSE_CAP_ASYNC_READ);
	/* Asynchronous direct I/O is background work to FUSE: not capped at
	 * the kernel's default of 12 in flight, as the mount does. */
	conn->max_background = UINT16_MAX;
}

static void fill_attr(fuse_ino_t ino, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	if (ino == FUSE_ROOT_ID) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
	} else {
		st->st_mode = S_IFREG | 0666;
		st->st_nlink = 1;
		st->st_size = (off_t)file_size;
	}
}

static void null_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e = { .ino = FILE_INO, .attr_timeout = 3600, .entry_timeout = 3600 };

	if (parent != FUSE_ROOT_ID || strcmp(name, FILE_NAME)) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	fill_attr(FILE_INO, &e.attr);
	fuse_reply_entry(req, &e);
}

static void null_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st;

	(void)fi;
	if (ino != FUSE_ROOT_ID && ino != FILE_INO) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	fill_attr(ino, &st);
	fuse_reply_attr(req, &st, 3600);
}

static void null_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	if (ino != FILE_INO) {
		fuse_reply_err(req, EISDIR);
		return;
	}
	fi->direct_io = 1;
	fuse_reply_open(req, fi);
}

static void null_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		      struct fuse_file_info *fi)
{
	(void)ino;
	(void)fi;
	count_path(req);
	if ((uint64_t)off >= file_size)
		size = 0;
	else if (size > file_size - (uint64_t)off)
		size = (size_t)(file_size - (uint64_t)off);
	fuse_reply_buf(req, zeros, size > max_io ? max_io : size);
}

static void null_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	(void)ino;
	(void)buf;
	(void)off;
	(void)fi;
	count_path(req);
	fuse_reply_write(req, size);
}

static void null_ok(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	(void)fi;
	fuse_reply_err(req, 0);
}

static void null_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	(void)datasync;
	null_ok(req, ino, fi);
}

static const struct fuse_lowlevel_ops null_ops = {
	.init = null_init,
	.lookup = null_lookup,
	.getattr = null_getattr,
	.open = null_open,
	.read = null_read,
	.write = null_write,
	.flush = null_ok,
	.release = null_ok,
	.fsync = null_fsync,
};

int main(int argc, char **argv)
{
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	struct fuse_loop_config *loop;
	struct fuse_session *se;
	bool ring = argc > 1 && !strcmp(argv[1], "--ring");
	char opts[96];
	int ret = 1;

	argc -= ring;
	argv += ring;
	if (argc < 2 || argc > 4) {
		fprintf(stderr, "usage: fuse-null [--ring] MOUNTPOINT [SIZE_MIB [MAX_IO_KIB]]\n");
		return 2;
	}
	if (ring && !HAVE_FUSE_RING) {
		fprintf(stderr, "fuse-null: --ring needs libfuse 3.18 or later, and this build has %d.%d: "
			"build in make check-ring's ring-build/\n", FUSE_MAJOR_VERSION, FUSE_MINOR_VERSION);
		return 2;
	}
	file_size = (argc > 2 ? strtoull(argv[2], NULL, 10) : 1024) << 20;
	max_io = (argc > 3 ? strtoul(argv[3], NULL, 10) : 128) << 10;
	if (!file_size || max_io < 4096 || max_io > (1u << 20)) {
		fprintf(stderr, "fuse-null: give a size of at least 1 MiB and max_io from 4 to 1024 KiB\n");
		return 2;
	}
	zeros = calloc(1, max_io);
	/* A CPU's ring queue as deep as the mount's own (its workers times
	 * their depth): a QD32 job on one CPU is not held to fewer. */
	snprintf(opts, sizeof(opts), "max_read=%zu%s", max_io, ring ? ",io_uring,io_uring_q_depth=32" : "");
	if (!zeros || fuse_opt_add_arg(&args, "fuse-null") || fuse_opt_add_arg(&args, "-o") ||
	    fuse_opt_add_arg(&args, opts)) {
		fprintf(stderr, "fuse-null: out of memory\n");
		return 1;
	}
	se = fuse_session_new(&args, &null_ops, sizeof(null_ops), NULL);
	if (!se)
		goto out;
	if (fuse_set_signal_handlers(se) || fuse_session_mount(se, argv[1]))
		goto destroy;
	loop = fuse_loop_cfg_create();
	if (loop) {
		ret = fuse_session_loop_mt(se, loop) ? 1 : 0;
		fuse_loop_cfg_destroy(loop);
	}
	fuse_session_unmount(se);
	fuse_remove_signal_handlers(se);
	if (ring)
		fprintf(stderr, "fuse-null: %lu reads and writes over io_uring, %lu through /dev/fuse\n",
			atomic_load(&over_ring), atomic_load(&over_dev));
destroy:
	fuse_session_destroy(se);
out:
	fuse_opt_free_args(&args);
	free(zeros);
	return ret;
}
