/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * FUSE over io_uring (libfuse >= 3.18 built with custom io, a kernel that
 * offers it), served by the workers: each of loop.c's threads has an
 * io_uring of its own holding the FUSE ring entries of its share of the
 * kernel's queues (one queue a CPU, queue q to thread q mod workers), in
 * the same epoll as its worker's NVMe queue.  A request that comes in an
 * entry is handed to libfuse on that thread and its I/O starts on that
 * worker (exp_worker_post()): no thread hop.
 *
 * libfuse has no API for a ring it does not run itself, so the ring's side
 * is ours (ring_msg.c): INIT's reply asks for the ring on its way out,
 * entries are registered and committed here, each request is laid out as
 * /dev/fuse has it in front of its payload for fuse_session_process_buf(),
 * and libfuse's replies come back through the session's writev
 * (fuse_session_custom_io()) into the entry they belong to.
 *
 * The payloads are ours, registered with the controller when the mount
 * starts (what pinned_bytes and the memlock check count): a write goes to
 * the target from where the kernel put it, and a read that starts on a
 * block lands where the reply hands it over.  A request whose namespace is
 * held is parked without a buffer, and I/O that finds no buffer free waits
 * for one, but either keeps its entry until answered, and the kernel gives
 * a request that found no entry free only to an entry that commits (one
 * registered later takes only requests that come after it).  So that held
 * requests do not starve their CPU's queue (stats, ls, the other
 * namespaces), each queue also has spare entries from the start, as many
 * as the mount parks (ring_msg_spares_max()), registered with the kernel
 * but not with the controller: their pages are touched only once used,
 * and their I/O goes through the worker's buffer.  Without libfuse 3.18,
 * /dev/fuse only.
 */
#define FUSE_USE_VERSION 34

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/sysinfo.h>
#include <sys/uio.h>
#include <unistd.h>

#include <fuse_lowlevel.h>

#include "fs_priv.h"
#include "loop.h"
#include "../common/histogram.h"

#if FUSE_VERSION >= FUSE_MAKE_VERSION(3, 18)

#include <liburing.h>

#include "ring_msg.h"

struct ring_thread;

/* One FUSE ring entry: its headers, its payload, the request it holds. */
struct ring_ent {
	struct ring_thread *t;
	struct fuse_uring_req_header *hdr;
	char *payload;
	/* The payload lies in the thread's registered area (else a spare's). */
	bool in_mr;
	uint16_t qid;
	uint32_t cmd;		/* the last command, resent after EAGAIN */
	/* The request it holds until its reply commits it; 0: none. */
	uint64_t commit_id;
	fuse_req_t req;
	struct exp_post post;
	struct iovec iov[2];
	/* The request as /dev/fuse has it, while it waits for a buffer. */
	char *mem;
	size_t len;
	struct ring_ent *wait_next;
	struct ring_ent *next;	/* a spare's, on the thread's list */
};

/* What one of loop.c's threads serves. */
struct ring_thread {
	struct fs *fs;
	struct exp_worker *w;
	struct io_uring uring;
	bool uring_up;
	bool registered;
	/* I/O requests that came while the worker had no buffer free, oldest
	 * first: what comes behind them that needs none is answered meanwhile. */
	struct ring_ent *wait_head, *wait_tail;
	char *area;
	size_t area_len;
	struct nvmefs_subsys_mr *mr;
	struct fuse_uring_req_header *hdrs;
	struct ring_ent *ents;
	unsigned int nr_ents;
	/* Spare entries, not registered with the controller. */
	struct ring_ent *spares;
	unsigned int spares_max;
};

struct fs_ring {
	/* Written once INIT went out asking for the ring: the threads register. */
	int go_fd;
	atomic_bool go;
	atomic_bool refused_told;
	size_t payload_len;
	unsigned int nr_threads;
	struct ring_thread th[];
};

/* The entry whose request libfuse is handling or replying to, on this thread. */
static _Thread_local struct ring_ent *cur_ent;
/* fs_init() asked for the ring: the next reply this thread writes is INIT's. */
static _Thread_local bool init_reply;

/* Whether the running kernel serves FUSE over io_uring (fuse.enable_uring). */
static bool kernel_offers(void)
{
	char c = 0;
	int fd = open("/sys/module/fuse/parameters/enable_uring", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	if (read(fd, &c, 1) != 1)
		c = 0;
	close(fd);
	return c == 'Y' || c == '1';
}

static int setup_thread(struct fs *fs, struct ring_thread *t, unsigned int entries)
{
	size_t slot = RING_HEAD + fs->ring->payload_len;
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 | IORING_SETUP_CQSIZE |
					      IORING_SETUP_CLAMP };
	int ret;

	t->fs = fs;
	t->nr_ents = entries;
	t->spares_max = ring_msg_spares_max(fs->ring->payload_len, fs->ring->nr_threads);
	/* Room for a completion of every entry, spares too. */
	p.cq_entries = entries + t->spares_max;
	t->ents = calloc(entries, sizeof(*t->ents));
	t->hdrs = calloc(entries, sizeof(*t->hdrs));
	t->area_len = entries * slot;
	t->area = aligned_alloc(RING_HEAD, t->area_len);
	if (!t->ents || !t->hdrs || !t->area)
		return exp_error(-ENOMEM, "out of memory for FUSE over io_uring's payloads");
	ret = io_uring_queue_init_params(entries < 256 ? entries : 256, &t->uring, &p);
	if (ret < 0)
		return exp_error(ret, "-o io_uring: setting up an io_uring failed (%s): mount with "
				 "the default, /dev/fuse", strerror(-ret));
	t->uring_up = true;
	if (nvmefs_subsys_mr_reg(fs->subsys, t->area, t->area_len, &t->mr) < 0)
		return exp_error(-ENOMEM, "-o io_uring: registering FUSE over io_uring's payloads "
				 "failed (%s): raise the locked-memory limit, or mount with the "
				 "default, /dev/fuse", nvmefs_errmsg());
	return 0;
}

int fs_ring_setup(struct fs *fs)
{
	unsigned int workers = fs->opts.workers, queues = (unsigned int)get_nprocs_conf();
	unsigned int depth = fs->opts.workers * fs->opts.depth;
	struct fs_ring *r;
	int ret;

	if (fs->opts.io_uring == NVMEFS_FS_RING_OFF)
		return 0;
	if (!kernel_offers()) {
		if (fs->opts.io_uring == NVMEFS_FS_RING_AUTO)
			return 0;
		return exp_error(-EOPNOTSUPP, "-o io_uring=on: this kernel does not offer FUSE over "
				 "io_uring: boot one built with CONFIG_FUSE_IO_URING with "
				 "fuse.enable_uring=1, or mount with the default, /dev/fuse");
	}
	r = calloc(1, sizeof(*r) + workers * sizeof(r->th[0]));
	if (!r)
		return exp_error(-ENOMEM, "out of memory");
	fs->ring = r;
	r->nr_threads = workers;
	r->payload_len = fs_ring_slot_bytes(&fs->opts) - RING_HEAD;
	r->go_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (r->go_fd < 0)
		return exp_error(-errno, "creating an eventfd failed: %s", strerror(errno));
	for (unsigned int i = 0; i < workers && i < queues; i++) {
		/* A CPU's queue takes as many requests as the mount keeps in
		 * flight: they may all come from that CPU. */
		unsigned int mine = queues / workers + (i < queues % workers);

		r->th[i].w = exp_worker(fs->exp, i);
		ret = setup_thread(fs, &r->th[i], mine * depth);
		if (ret < 0)
			return ret;
	}
	return 0;
}

static ssize_t ring_read(int fd, void *buf, size_t len, void *userdata)
{
	(void)userdata;
	return read(fd, buf, len);
}

static ssize_t ring_writev(int fd, struct iovec *iov, int count, void *userdata);

int fs_ring_attach(struct fs *fs)
{
	static const struct fuse_custom_io io = { .read = ring_read, .writev = ring_writev };
	int ret;

	if (!fs->ring)
		return 0;
	fuse_set_log_func(fs_quiet_log);
	ret = fuse_session_custom_io(fs->se, &io, fuse_session_fd(fs->se));
	fuse_set_log_func(NULL);
	if (ret == 0)
		return 0;
	fs_ring_close(fs);
	fs_ring_destroy(fs);
	if (fs->opts.io_uring == NVMEFS_FS_RING_AUTO)
		return 0;
	return exp_error(-EOPNOTSUPP, "-o io_uring=on: this libfuse was built without custom io "
			 "(%s), through which nvmefs serves FUSE over io_uring: rebuild it with "
			 "contrib/build-libfuse, or mount with the default, /dev/fuse",
			 strerror(-ret));
}

void fs_ring_init(struct fs *fs, struct fuse_conn_info *conn)
{
	/* libfuse's own ring threads never start: the workers serve the ring. */
	fuse_unset_feature_flag(conn, FUSE_CAP_OVER_IO_URING);
	if (!fs->ring)
		return;
	if (conn->capable_ext & FUSE_CAP_OVER_IO_URING) {
		init_reply = true;
		return;
	}
	if (fs->opts.io_uring == NVMEFS_FS_RING_ON) {
		fs->init_error = exp_error(-EOPNOTSUPP, "-o io_uring=on: this kernel does not offer "
					   "FUSE over io_uring at INIT; mount with the default, /dev/fuse");
		fuse_session_exit(fs->se);
	}
}

int fs_ring_started(struct fs *fs)
{
	exp_set_io_uring(fs->exp, atomic_load(&fs->ring_asked));
	return 0;
}

/* INIT's reply as libfuse wrote it, asking for the ring. */
static ssize_t init_writev(struct fs *fs, int fd, struct iovec *iov, int count)
{
	struct fuse_out_header out;
	struct fuse_init_out arg;
	struct iovec v[2];
	ssize_t n;

	init_reply = false;
	if (ring_msg_init_reply(iov, count, &out, &arg, v) < 0)
		return writev(fd, iov, count);
	n = writev(fd, v, 2);
	if (n >= 0) {
		atomic_store(&fs->ring_asked, true);
		atomic_store(&fs->ring->go, true);
		eventfd_write(fs->ring->go_fd, 1);
	}
	return n;
}

static void submit_now(struct ring_thread *t)
{
	int ret = io_uring_submit(&t->uring);

	if (ret < 0)
		exp_log("FUSE over io_uring: submitting to the ring failed: %s", strerror(-ret));
}

/* Queues @e's command @cmd (REGISTER, or COMMIT_AND_FETCH of its request).
 * It goes to the kernel with the rest of the thread's pass, in one system
 * call (fs_ring_flush()): at depth a pass's completions commit many
 * entries. */
static void queue_cmd(struct ring_ent *e, uint32_t cmd)
{
	struct ring_thread *t = e->t;
	struct io_uring_sqe *sqe = io_uring_get_sqe(&t->uring);
	struct fuse_uring_cmd_req *req;

	if (!sqe) {
		submit_now(t);
		sqe = io_uring_get_sqe(&t->uring);
	}
	if (!sqe) {
		exp_log("FUSE over io_uring: no room for a command in the ring");
		return;
	}
	e->cmd = cmd;
	memset(sqe, 0, 2 * sizeof(*sqe));
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = fuse_session_fd(t->fs->se);
	sqe->cmd_op = cmd;
	sqe->addr = (uintptr_t)e->iov;
	sqe->len = 2;
	req = (struct fuse_uring_cmd_req *)sqe->cmd;
	req->qid = e->qid;
	req->commit_id = cmd == FUSE_IO_URING_CMD_COMMIT_AND_FETCH ? e->commit_id : 0;
	io_uring_sqe_set_data(sqe, e);
}

/* libfuse's reply to @e's request, into the entry, which takes the next. */
static ssize_t commit(struct ring_ent *e, const struct iovec *iov, int count)
{
	ssize_t n = ring_msg_reply(e->hdr, e->payload, e->t->fs->ring->payload_len, iov, count);

	queue_cmd(e, FUSE_IO_URING_CMD_COMMIT_AND_FETCH);
	e->commit_id = 0;
	cur_ent = NULL;
	return n;
}

static ssize_t ring_writev(int fd, struct iovec *iov, int count, void *userdata)
{
	const struct fuse_out_header *out = iov[0].iov_base;
	struct ring_ent *e = cur_ent;

	if (init_reply)
		return init_writev(userdata, fd, iov, count);
	if (e && e->commit_id && out->unique == e->commit_id)
		return commit(e, iov, count);
	return writev(fd, iov, count);
}

static void ent_init(struct ring_ent *e, struct ring_thread *t, uint16_t qid,
		     struct fuse_uring_req_header *hdr, char *payload, bool in_mr)
{
	e->t = t;
	e->qid = qid;
	e->hdr = hdr;
	e->payload = payload;
	e->in_mr = in_mr;
	e->iov[0] = (struct iovec){ hdr, sizeof(*hdr) };
	e->iov[1] = (struct iovec){ payload, t->fs->ring->payload_len };
}

/* A spare entry for queue @qid of @t, registered with the kernel only;
 * false without memory. */
static bool add_spare(struct ring_thread *t, uint16_t qid)
{
	struct ring_ent *s = calloc(1, sizeof(*s) + sizeof(*s->hdr));
	char *slot = aligned_alloc(RING_HEAD, RING_HEAD + t->fs->ring->payload_len);

	if (!s || !slot) {
		free(s);
		free(slot);
		return false;
	}
	ent_init(s, t, qid, (struct fuse_uring_req_header *)(s + 1), slot + RING_HEAD, false);
	s->next = t->spares;
	t->spares = s;
	queue_cmd(s, FUSE_IO_URING_CMD_REGISTER);
	return true;
}

/* @e's request, laid out, handed to libfuse. */
static void process(struct ring_ent *e)
{
	struct fuse_buf fb = { .mem = e->mem, .size = e->len };

	cur_ent = e;
	fuse_session_process_buf(e->t->fs->se, &fb);
	cur_ent = NULL;
}

/* The request the kernel put in @e, laid out as /dev/fuse has it: handed
 * to libfuse, or, I/O while the worker has no buffer free, kept until one is. */
static void serve(struct ring_ent *e)
{
	struct ring_thread *t = e->t;
	struct fs *fs = t->fs;

	e->commit_id = e->hdr->ring_ent_in_out.commit_id;
	if (ring_msg_request(e->hdr, e->payload, fs->ring->payload_len, &e->mem, &e->len) < 0) {
		struct fuse_out_header out = { .len = sizeof(out), .error = -EIO,
					       .unique = e->commit_id };
		struct iovec v = { &out, sizeof(out) };

		exp_log("FUSE over io_uring: the kernel's request %llu does not add up (%u bytes "
			"of payload): answered with EIO", (unsigned long long)e->commit_id,
			e->hdr->ring_ent_in_out.payload_sz);
		commit(e, &v, 1);
		return;
	}
	if (fs_loop_ops.io_nsid(fs, e->mem, e->len) && (t->wait_head || !exp_worker_can_post(t->w))) {
		e->wait_next = NULL;
		if (t->wait_tail)
			t->wait_tail->wait_next = e;
		else
			t->wait_head = e;
		t->wait_tail = e;
		return;
	}
	process(e);
}

/* The I/O that waited for a buffer, while there are. */
static bool serve_waiting(struct ring_thread *t)
{
	bool any = false;

	while (t->wait_head && exp_worker_can_post(t->w)) {
		struct ring_ent *e = t->wait_head;

		t->wait_head = e->wait_next;
		if (!t->wait_head)
			t->wait_tail = NULL;
		process(e);
		any = true;
	}
	return any;
}

bool fs_ring_io(fuse_req_t req, struct exp_ns *ns, enum exp_op op, uint64_t off, size_t size,
		const void *data)
{
	struct ring_ent *e = cur_ent;

	if (!e)
		return false;
	e->req = req;
	/* Tagged: fs_ring_replying() tells it from a fuse_req_t. */
	e->post = (struct exp_post){
		.cookie = (void *)((uintptr_t)e | 1), .ns = ns, .op = op, .off = off,
		.size = size, .data = data, .read_buf = e->in_mr ? e->payload : NULL,
		.read_room = e->t->fs->ring->payload_len, .copy = !e->in_mr,
		.start_ns = hist_now_ns(),
	};
	cur_ent = NULL;
	exp_worker_post(e->t->w, &e->post);
	return true;
}

fuse_req_t fs_ring_replying(void *cookie)
{
	struct ring_ent *e;

	if (!((uintptr_t)cookie & 1))
		return cookie;
	e = (struct ring_ent *)((uintptr_t)cookie & ~(uintptr_t)1);
	cur_ent = e;
	return e->req;
}

static void register_all(struct ring_thread *t)
{
	unsigned int queues = (unsigned int)get_nprocs_conf(), n = t->fs->ring->nr_threads;
	unsigned int idx = (unsigned int)(t - t->fs->ring->th), k = 0;
	unsigned int nq = queues / n + (idx < queues % n), per = t->nr_ents / nq;
	size_t slot = RING_HEAD + t->fs->ring->payload_len;
	bool spares = true;

	/* The spares first: the kernel hands a request to the entry made
	 * available last, so that the registered ones take them while free. */
	for (unsigned int q = idx; q < queues; q += n)
		for (unsigned int j = 0; spares && j < t->spares_max / nq; j++)
			spares = add_spare(t, (uint16_t)q);
	if (!spares)
		exp_log("FUSE over io_uring: out of memory for spare ring entries: held I/O may "
			"hold up other requests");
	for (unsigned int q = idx; q < queues; q += n)
		for (unsigned int j = 0; j < per && k < t->nr_ents; j++, k++) {
			struct ring_ent *e = &t->ents[k];

			ent_init(e, t, (uint16_t)q, &t->hdrs[k], t->area + k * slot + RING_HEAD, true);
			queue_cmd(e, FUSE_IO_URING_CMD_REGISTER);
		}
}

/* The kernel failed @e's command: an entry it would not register leaves the
 * ring to /dev/fuse; a reply it would not take (its request gone, as after
 * an abort) loses that entry only. */
static void refused(struct ring_thread *t, struct ring_ent *e, int err)
{
	struct fs *fs = t->fs;

	if (e->cmd == FUSE_IO_URING_CMD_COMMIT_AND_FETCH) {
		exp_log("FUSE over io_uring: the kernel did not take a reply to request %llu (%s)",
			(unsigned long long)e->hdr->ring_ent_in_out.commit_id, strerror(err));
		return;
	}
	exp_set_io_uring(fs->exp, false);
	if (!atomic_exchange(&fs->ring->refused_told, true))
		exp_log("FUSE over io_uring: the kernel refused the ring's entries (%s): requests "
			"go through /dev/fuse", strerror(err));
}

static struct ring_thread *thread_of(struct fs *fs, unsigned int i)
{
	if (!fs->ring || i >= fs->ring->nr_threads || !fs->ring->th[i].nr_ents)
		return NULL;
	return &fs->ring->th[i];
}

int fs_ring_watch(struct fs *fs, unsigned int i, int epfd)
{
	struct epoll_event go = { .events = EPOLLIN | EPOLLET }, cq = { .events = EPOLLIN };
	struct ring_thread *t = thread_of(fs, i);

	if (!t)
		return 0;
	go.data.ptr = cq.data.ptr = t;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, fs->ring->go_fd, &go) ||
	    epoll_ctl(epfd, EPOLL_CTL_ADD, t->uring.ring_fd, &cq))
		return exp_error(-errno, "watching FUSE over io_uring failed: %s", strerror(errno));
	return 0;
}

bool fs_ring_run(struct fs *fs, unsigned int i)
{
	struct ring_thread *t = thread_of(fs, i);
	struct io_uring_cqe *cqe;
	bool any = false;

	if (!t)
		return false;
	if (!t->registered) {
		if (!atomic_load(&fs->ring->go))
			return false;
		t->registered = true;
		register_all(t);
	}
	any = serve_waiting(t);
	while (io_uring_peek_cqe(&t->uring, &cqe) == 0) {
		struct ring_ent *e = io_uring_cqe_get_data(cqe);
		int res = cqe->res;

		io_uring_cqe_seen(&t->uring, cqe);
		any = true;
		if (res == 0)
			serve(e);
		else if (res == -EAGAIN || res == -EINTR)
			queue_cmd(e, e->cmd);
		else if (res != -ENOTCONN && res != -ECANCELED && res != -ECONNABORTED)
			refused(t, e, -res);
	}
	return any;
}

void fs_ring_flush(struct fs *fs, unsigned int i)
{
	struct ring_thread *t = thread_of(fs, i);

	if (t && t->uring_up && io_uring_sq_ready(&t->uring))
		submit_now(t);
}

void fs_ring_close(struct fs *fs)
{
	struct fs_ring *r = fs->ring;

	if (!r)
		return;
	for (unsigned int i = 0; i < r->nr_threads; i++) {
		if (r->th[i].uring_up)
			io_uring_queue_exit(&r->th[i].uring);
		r->th[i].uring_up = false;
		nvmefs_subsys_mr_dereg(r->th[i].mr);
		r->th[i].mr = NULL;
	}
}

void fs_ring_destroy(struct fs *fs)
{
	struct fs_ring *r = fs->ring;

	if (!r)
		return;
	for (unsigned int i = 0; i < r->nr_threads; i++) {
		struct ring_thread *t = &r->th[i];

		while (t->spares) {
			struct ring_ent *s = t->spares;

			t->spares = s->next;
			free(s->payload - RING_HEAD);
			free(s);
		}
		free(t->area);
		free(t->hdrs);
		free(t->ents);
	}
	if (r->go_fd >= 0)
		close(r->go_fd);
	free(r);
	fs->ring = NULL;
}

#else /* libfuse < 3.18: /dev/fuse only */

int fs_ring_setup(struct fs *fs)
{
	if (fs->opts.io_uring != NVMEFS_FS_RING_ON)
		return 0;
	return exp_error(-EOPNOTSUPP, "-o io_uring=on: this nvmefs was built with libfuse %d.%d, "
			 "without FUSE over io_uring: build libfuse 3.18 (contrib/build-libfuse "
			 "PREFIX) and configure --with-libfuse=PREFIX, or mount with the default, /dev/fuse",
			 FUSE_MAJOR_VERSION, FUSE_MINOR_VERSION);
}

int fs_ring_attach(struct fs *fs)
{
	(void)fs;
	return 0;
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

bool fs_ring_io(fuse_req_t req, struct exp_ns *ns, enum exp_op op, uint64_t off, size_t size,
		const void *data)
{
	(void)req, (void)ns, (void)op, (void)off, (void)size, (void)data;
	return false;
}

fuse_req_t fs_ring_replying(void *cookie)
{
	return cookie;
}

int fs_ring_watch(struct fs *fs, unsigned int i, int epfd)
{
	(void)fs, (void)i, (void)epfd;
	return 0;
}

bool fs_ring_run(struct fs *fs, unsigned int i)
{
	(void)fs, (void)i;
	return false;
}

void fs_ring_flush(struct fs *fs, unsigned int i)
{
	(void)fs, (void)i;
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
