/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The FUSE side of `nvmefs mount` (libfuse3 low-level API): the operations
 * on the mount's files, their extended attributes, and the info and stats
 * files.  Their I/O goes to the export engine (src/export: NVMe commands,
 * a worker for each I/O queue) through adapter.c's fs_io(), and comes back
 * through adapter.c; the mount's life is serve.c; the namespace files,
 * namespaces.c.
 *
 * Zero copies in user space: every thread of loop.c reads FUSE requests
 * from /dev/fuse itself, into its worker's buffers, registered once with
 * the controller.  A
 * write's payload therefore already lies in registered memory and goes to
 * the target from there; a read has the target RDMA-write the data into the
 * request's own buffer and is replied from it (an unaligned read just
 * replies from an offset into the block-aligned data).
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

/* ---------------------------------------------------------------------- */
/* FUSE operations                                                          */
/* ---------------------------------------------------------------------- */

static struct fs *fs_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

static struct exp_ns *ns_of(struct fs *fs, fuse_ino_t ino)
{
	if (ino < INO_NS_BASE || ino >= INO_NS_BASE + fs->nr_ns)
		return NULL;
	return &fs->ns[ino - INO_NS_BASE];
}

static int fill_stat(struct fs *fs, fuse_ino_t ino, struct stat *st)
{
	struct exp_ns *ns = ns_of(fs, ino);

	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_uid = fs->uid;
	st->st_gid = fs->gid;
	st->st_nlink = 1;
	st->st_atime = st->st_mtime = st->st_ctime = fs->mounted;
	if (ino == FUSE_ROOT_ID) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
	} else if (ino == INO_INFO) {
		st->st_mode = S_IFREG | 0444;
		st->st_size = (off_t)fs->info_len;
	} else if (ino == INO_STATS) {
		/* Its length changes as it is read: read it to the end. */
		st->st_mode = S_IFREG | 0444;
	} else if (ns) {
		st->st_mode = S_IFREG | 0660;
		st->st_size = (off_t)ns->size;
		st->st_blksize = ns->lba_size;
		st->st_blocks = (blkcnt_t)(ns->size / 512);
	} else {
		return ENOENT;
	}
	return 0;
}

static void fs_init(void *userdata, struct fuse_conn_info *conn)
{
	struct fs *fs = userdata;
	unsigned int inflight = fs->opts.workers * fs->opts.depth;

	atomic_store(&fs->init_called, true);
	/* Requests come into our registered buffers, never through pipes. */
	conn->want &= ~(unsigned int)(FUSE_CAP_SPLICE_READ | FUSE_CAP_SPLICE_WRITE | FUSE_CAP_SPLICE_MOVE);
	conn->want |= conn->capable & (FUSE_CAP_ASYNC_DIO | FUSE_CAP_ASYNC_READ | FUSE_CAP_ATOMIC_O_TRUNC);
	conn->max_write = (unsigned int)fs->opts.max_io;
	conn->max_read = (unsigned int)fs->opts.max_io;
	conn->max_readahead = fs->opts.cached ? (unsigned int)fs->opts.max_io : 0;
	/* Asynchronous direct I/O is background work to FUSE, and held I/O
	 * counts until answered: as much as FUSE lets in, so that a namespace
	 * whose I/O is held (parked, bounded by PARK_MAX_BYTES) leaves room
	 * for the others'.  An unprivileged mount gets the kernel's
	 * max_user_bgreq at most. */
	conn->max_background = UINT16_MAX;
	conn->congestion_threshold = inflight * 3 / 4;
	fs_ring_init(fs, conn);
}

static void fs_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fs *fs = fs_of(req);
	struct fuse_entry_param e = { .attr_timeout = 3600, .entry_timeout = 3600 };
	fuse_ino_t ino = 0;

	if (parent != FUSE_ROOT_ID) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	if (!strcmp(name, "info"))
		ino = INO_INFO;
	else if (!strcmp(name, "stats"))
		ino = INO_STATS;
	for (unsigned int i = 0; !ino && i < fs->nr_ns; i++) {
		if (!strcmp(name, fs->ns[i].name) && !atomic_load(&fs->ns[i].gone))
			ino = INO_NS_BASE + i;
	}
	if (!ino) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	e.ino = ino;
	fill_stat(fs, ino, &e.attr);
	if (ino == INO_STATS)
		e.attr_timeout = 0;
	fuse_reply_entry(req, &e);
}

static void fs_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st;
	int err;

	(void)fi;
	err = fill_stat(fs_of(req), ino, &st);
	if (err)
		fuse_reply_err(req, err);
	else
		fuse_reply_attr(req, &st, ino == INO_STATS ? 0 : 3600);
}

static void fs_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		       struct fuse_file_info *fi)
{
	struct fs *fs = fs_of(req);
	struct exp_ns *ns = ns_of(fs, ino);

	/* A namespace's size is its capacity: no truncating, no growing.
	 * Owner and mode are fixed at mount time (-o uid=, gid=); times are
	 * not kept, so setting them changes nothing. */
	if ((to_set & FUSE_SET_ATTR_SIZE) && (!ns || (uint64_t)attr->st_size != ns->size)) {
		fuse_reply_err(req, ns ? EPERM : EACCES);
		return;
	}
	if (to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID | FUSE_SET_ATTR_MODE)) {
		fuse_reply_err(req, EPERM);
		return;
	}
	fs_getattr(req, ino, fi);
}

static void fs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	struct fs *fs = fs_of(req);
	char *buf;
	size_t used = 0;
	unsigned int n = 4 + fs->nr_ns;

	(void)fi;
	if (ino != FUSE_ROOT_ID) {
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	buf = calloc(1, size);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	for (unsigned int i = (unsigned int)off; i < n; i++) {
		struct stat st = { 0 };
		const char *name;
		size_t len;

		if (i == 0) {
			name = ".";
			st.st_ino = FUSE_ROOT_ID;
		} else if (i == 1) {
			name = "..";
			st.st_ino = FUSE_ROOT_ID;
		} else if (i == 2) {
			name = "info";
			st.st_ino = INO_INFO;
		} else if (i == 3) {
			name = "stats";
			st.st_ino = INO_STATS;
		} else {
			/* A namespace gone from the target keeps its place, unlisted. */
			if (atomic_load(&fs->ns[i - 4].gone))
				continue;
			name = fs->ns[i - 4].name;
			st.st_ino = INO_NS_BASE + i - 4;
		}
		st.st_mode = i < 2 ? S_IFDIR : S_IFREG;
		len = fuse_add_direntry(req, buf + used, size - used, name, &st, (off_t)i + 1);
		if (len > size - used)
			break;
		used += len;
	}
	fuse_reply_buf(req, buf, used);
	free(buf);
}

static void fs_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fs *fs = fs_of(req);

	if (ino == INO_INFO || ino == INO_STATS) {
		if ((fi->flags & O_ACCMODE) != O_RDONLY) {
			fuse_reply_err(req, EACCES);
			return;
		}
		fi->direct_io = 1;
		if (ino == INO_STATS) {
			size_t len;
			char *snap = exp_stats_json(fs->exp, fs->ns, atomic_load(&fs->nr_ns), &len);

			if (!snap) {
				fuse_reply_err(req, ENOMEM);
				return;
			}
			fi->fh = (uint64_t)(uintptr_t)snap;
		}
		fuse_reply_open(req, fi);
		return;
	}
	if (!ns_of(fs, ino)) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	/* O_TRUNC is ignored, as a block device ignores it: the size is fixed. */
	fi->direct_io = !fs->opts.cached;
	fi->keep_cache = fs->opts.cached;
#if FUSE_VERSION >= FUSE_MAKE_VERSION(3, 15)
	/* Direct writes to one file need not wait for each other on the
	 * inode's lock: the engine keeps overlapping ones apart (its write
	 * reservations), as a block device's queue does not serialize them. */
	fi->parallel_direct_writes = !fs->opts.cached;
#endif
	fuse_reply_open(req, fi);
}

static void fs_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	if (ino == INO_STATS)
		free((void *)(uintptr_t)fi->fh);
	fuse_reply_err(req, 0);
}

static void reply_text(fuse_req_t req, const char *text, size_t len, size_t size, off_t off)
{
	if ((size_t)off >= len)
		fuse_reply_buf(req, NULL, 0);
	else
		fuse_reply_buf(req, text + off, len - (size_t)off < size ? len - (size_t)off : size);
}

static void fs_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct fs *fs = fs_of(req);
	struct exp_ns *ns = ns_of(fs, ino);

	if (ino == INO_INFO) {
		reply_text(req, fs->info, fs->info_len, size, off);
		return;
	}
	if (ino == INO_STATS) {
		const char *snap = (const char *)(uintptr_t)fi->fh;

		reply_text(req, snap, strlen(snap), size, off);
		return;
	}
	if (!ns) {
		fuse_reply_err(req, EBADF);
		return;
	}
	/* Reading at or past the end is end of file, as for any file. */
	if ((uint64_t)off >= ns->size || !size) {
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	if (size > ns->size - (uint64_t)off)
		size = ns->size - (uint64_t)off;
	fs_io(req, ns, EXP_READ, (uint64_t)off, size, NULL);
}

static void fs_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	struct fs *fs = fs_of(req);
	struct exp_ns *ns = ns_of(fs, ino);

	(void)fi;
	if (!ns) {
		fuse_reply_err(req, EBADF);
		return;
	}
	/* A namespace does not grow: refuse rather than write part of it. */
	if ((uint64_t)off > ns->size || size > ns->size - (uint64_t)off) {
		fuse_reply_err(req, ENOSPC);
		return;
	}
	if (!size) {
		fuse_reply_write(req, 0);
		return;
	}
	/* The payload lies in the engine's registered buffer: sent from there. */
	fs_io(req, ns, EXP_WRITE, (uint64_t)off, size, buf);
}

static void fs_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	struct fs *fs = fs_of(req);
	struct exp_ns *ns = ns_of(fs, ino);

	(void)datasync;
	(void)fi;
	if (!ns) {
		fuse_reply_err(req, ino == INO_INFO || ino == INO_STATS ? 0 : EBADF);
		return;
	}
	/* Always sent: the target's volatile write cache is not ours to judge. */
	fs_io(req, ns, EXP_FLUSH, 0, 0, NULL);
}

static void fs_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len,
			 struct fuse_file_info *fi)
{
	struct fs *fs = fs_of(req);
	struct exp_ns *ns = ns_of(fs, ino);
	enum exp_op op;

	(void)fi;
	if (!ns) {
		fuse_reply_err(req, EBADF);
		return;
	}
	if (mode == (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE)) {
		op = EXP_PUNCH;
	} else if (mode == FALLOC_FL_ZERO_RANGE || mode == (FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE)) {
		op = EXP_ZERO;
	} else if (mode == 0 || mode == FALLOC_FL_KEEP_SIZE) {
		/* Every block is already allocated: within the capacity, done. */
		if (off < 0 || len <= 0)
			fuse_reply_err(req, EINVAL);
		else
			fuse_reply_err(req, (uint64_t)off + (uint64_t)len <= ns->size ? 0 : ENOSPC);
		return;
	} else {
		fuse_reply_err(req, EOPNOTSUPP);
		return;
	}
	if (off < 0 || len <= 0 || (uint64_t)off + (uint64_t)len > ns->size) {
		fuse_reply_err(req, len <= 0 ? EINVAL : ENOSPC);
		return;
	}
	fs_io(req, ns, op, (uint64_t)off, (size_t)len, NULL);
}

static void fs_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct fs *fs = fs_of(req);
	struct statvfs st = { .f_bsize = 4096, .f_frsize = 4096, .f_namemax = 255 };

	(void)ino;
	for (unsigned int i = 0; i < fs->nr_ns; i++)
		st.f_blocks += atomic_load(&fs->ns[i].gone) ? 0 : fs->ns[i].size / 4096;
	st.f_files = 3 + fs->nr_ns;
	fuse_reply_statfs(req, &st);
}

/* ---------------------------------------------------------------------- */
/* Extended attributes: namespace and controller identity                   */
/* ---------------------------------------------------------------------- */

static const char *const xattr_names[] = {
	"user.nvmefs.nsid", "user.nvmefs.nguid", "user.nvmefs.uuid", "user.nvmefs.eui64",
	"user.nvmefs.lba_size", "user.nvmefs.capacity", "user.nvmefs.subnqn", "user.nvmefs.model",
	"user.nvmefs.serial", "user.nvmefs.firmware",
};
#define NR_XATTRS (sizeof(xattr_names) / sizeof(xattr_names[0]))

/* Identify strings are space padded; what the target put in them is
 * escaped, since getfattr prints it on a terminal. */
static void trimmed(char *dst, size_t size, const char *src, size_t len)
{
	while (len && (src[len - 1] == ' ' || !src[len - 1]))
		len--;
	text_escape(dst, size, src, len);
}

static void xattr_value(struct fs *fs, const struct exp_ns *ns, unsigned int i, char *v, size_t size)
{
	const struct nvme_id_ctrl *id = nvmefs_ctrl_id(fs->ctrl);

	switch (i) {
	case 0: snprintf(v, size, "%u", ns->nsid); break;
	case 1: snprintf(v, size, "%s", ns->nguid); break;
	case 2: snprintf(v, size, "%s", ns->uuid); break;
	case 3: snprintf(v, size, "%s", ns->eui64); break;
	case 4: snprintf(v, size, "%u", ns->lba_size); break;
	case 5: snprintf(v, size, "%" PRIu64, ns->size); break;
	case 6: text_escape(v, size, nvmefs_ctrl_subnqn(fs->ctrl), NVMF_NQN_SIZE); break;
	case 7: trimmed(v, size, id->mn, sizeof(id->mn)); break;
	case 8: trimmed(v, size, id->sn, sizeof(id->sn)); break;
	default: trimmed(v, size, id->fr, sizeof(id->fr)); break;
	}
}

static void fs_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	struct fs *fs = fs_of(req);
	struct exp_ns *ns = ns_of(fs, ino);
	char v[300];
	size_t len;

	for (unsigned int i = 0; ns && i < NR_XATTRS; i++) {
		if (strcmp(name, xattr_names[i]))
			continue;
		xattr_value(fs, ns, i, v, sizeof(v));
		len = strlen(v);
		if (!size)
			fuse_reply_xattr(req, len);
		else if (size < len)
			fuse_reply_err(req, ERANGE);
		else
			fuse_reply_buf(req, v, len);
		return;
	}
	fuse_reply_err(req, ENODATA);
}

static void fs_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	struct fs *fs = fs_of(req);
	char list[512];
	size_t len = 0;

	if (ns_of(fs, ino)) {
		for (unsigned int i = 0; i < NR_XATTRS; i++) {
			size_t n = strlen(xattr_names[i]) + 1;

			memcpy(list + len, xattr_names[i], n);
			len += n;
		}
	}
	if (!size)
		fuse_reply_xattr(req, len);
	else if (size < len)
		fuse_reply_err(req, ERANGE);
	else
		fuse_reply_buf(req, list, len);
}

const struct fuse_lowlevel_ops fs_lowlevel_ops = {
	.init = fs_init,
	.lookup = fs_lookup,
	.getattr = fs_getattr,
	.setattr = fs_setattr,
	.readdir = fs_readdir,
	.open = fs_open,
	.release = fs_release,
	.read = fs_read,
	.write = fs_write,
	.fsync = fs_fsync,
	.fallocate = fs_fallocate,
	.statfs = fs_statfs,
	.getxattr = fs_getxattr,
	.listxattr = fs_listxattr,
};

/* ---------------------------------------------------------------------- */
/* info (the stats are the engine's: exp_stats_json())                      */
/* ---------------------------------------------------------------------- */

int fs_build_info(struct fs *fs)
{
	const struct nvme_id_ctrl *id = nvmefs_ctrl_id(fs->ctrl);
	char v[64];
	struct json j;
	FILE *out;

	out = open_memstream(&fs->info, &fs->info_len);
	if (!out)
		return exp_error(-ENOMEM, "out of memory");
	json_init(&j, out);
	json_object_begin(&j, NULL);
	json_string(&j, "subnqn", nvmefs_ctrl_subnqn(fs->ctrl));
	trimmed(v, sizeof(v), id->mn, sizeof(id->mn));
	json_string(&j, "model", v);
	trimmed(v, sizeof(v), id->sn, sizeof(id->sn));
	json_string(&j, "serial", v);
	trimmed(v, sizeof(v), id->fr, sizeof(id->fr));
	json_string(&j, "firmware", v);
	json_uint(&j, "cntlid", nvmefs_ctrl_cntlid(fs->ctrl));
	/* Where the mount goes even without several paths: `nvmefs list` shows it. */
	exp_ctrl_address_json(&j, fs->ctrl);
	json_string(&j, "hostnqn", nvmefs_ctrl_hostnqn(fs->ctrl));
	json_uint(&j, "io_queues", fs->opts.workers);
	json_string(&j, "mode", fs->opts.cached ? "cached" : "direct");
	if (nvmefs_subsys_multipath(fs->subsys)) {
		json_string(&j, "iopolicy", nvmefs_iopolicy_name(nvmefs_subsys_iopolicy(fs->subsys)));
		json_array_begin(&j, "paths");
		for (unsigned int i = 0; i < nvmefs_subsys_path_count(fs->subsys); i++) {
			struct nvmefs_ctrl *ctrl = nvmefs_subsys_path(fs->subsys, i);

			json_object_begin(&j, NULL);
			exp_ctrl_address_json(&j, ctrl);
			json_uint(&j, "cntlid", nvmefs_ctrl_cntlid(ctrl));
			json_object_end(&j);
		}
		json_array_end(&j);
	}
	json_array_begin(&j, "namespaces");
	for (unsigned int i = 0; i < fs->nr_ns; i++) {
		const struct exp_ns *ns = &fs->ns[i];

		json_object_begin(&j, NULL);
		json_string(&j, "file", ns->name);
		json_uint(&j, "nsid", ns->nsid);
		json_uint(&j, "size", ns->size);
		json_uint(&j, "lba_size", ns->lba_size);
		json_string(&j, "nguid", ns->nguid);
		json_string(&j, "uuid", ns->uuid);
		json_string(&j, "eui64", ns->eui64);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_object_end(&j);
	fputc('\n', out);
	if (fclose(out))
		return exp_error(-ENOMEM, "out of memory");
	return 0;
}
