/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nvmefs perf: drive a namespace with a fixed workload and measure it, in
 * the spirit of spdk_nvme_perf and fio.  Each thread keeps --iodepth I/Os in
 * flight over its I/O queues from their registered buffer pools,
 * resubmitting from the completion callback; latencies go into a log-linear
 * histogram.  The command line and the layout it leaves open: perf_args.c.
 *
 * --verify writes self-describing blocks (each names its own offset and a
 * seed that generates the rest, as fio's verify headers do) and checks
 * every block read: a read that returns another block's data, stale bytes
 * or a torn block is caught whatever the workload mix.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "paths.h"
#include "perf.h"
#include "perf_report.h"
#include "../common/histogram.h"
#include "../common/status.h"

static const char *const cmd = "perf";

/* ---------------------------------------------------------------------- */
/* Verify blocks                                                            */
/* ---------------------------------------------------------------------- */

#define VERIFY_MAGIC 0x6e766d6566737631ull	/* "nvmefsv1" */

struct verify_hdr {
	uint64_t magic;
	uint64_t offset;	/* where this block belongs, in bytes */
	uint64_t seed;
};

static uint64_t xorshift64(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

static void verify_fill_block(uint8_t *p, uint32_t len, uint64_t offset, uint64_t seed)
{
	struct verify_hdr hdr = { VERIFY_MAGIC, offset, seed };
	uint64_t s = (offset * 0x9e3779b97f4a7c15ull) ^ seed ^ 1, v;

	memcpy(p, &hdr, sizeof(hdr));
	for (uint32_t i = sizeof(hdr); i < len; i += sizeof(v)) {
		v = xorshift64(&s);
		memcpy(p + i, &v, sizeof(v));
	}
}

static void verify_fill(uint8_t *buf, uint32_t len, uint32_t block, uint64_t offset, uint64_t seed)
{
	for (uint32_t i = 0; i < len; i += block)
		verify_fill_block(buf + i, block, offset + i, seed);
}

/* Counts the bad blocks of @buf, read from @offset; *@first_bad is the first. */
static uint32_t verify_check(const uint8_t *buf, uint32_t len, uint32_t block, uint64_t offset,
			     uint8_t *scratch, uint64_t *first_bad)
{
	uint32_t bad = 0;

	for (uint32_t i = 0; i < len; i += block) {
		struct verify_hdr hdr;

		memcpy(&hdr, buf + i, sizeof(hdr));
		if (hdr.magic == VERIFY_MAGIC && hdr.offset == offset + i) {
			verify_fill_block(scratch, block, hdr.offset, hdr.seed);
			if (!memcmp(scratch, buf + i, block))
				continue;
		}
		if (!bad++)
			*first_bad = offset + i;
	}
	return bad;
}

/* ---------------------------------------------------------------------- */
/* Workers                                                                  */
/* ---------------------------------------------------------------------- */

/* stop ends a run; interrupted remembers that a signal asked, across runs. */
static atomic_bool stop;
static atomic_bool interrupted;
/* Threads still with I/O of their own: until none is, each keeps polling its
 * queues, which may carry another thread's I/O while the target grants
 * fewer queues than there are. */
static atomic_uint threads_left;

static int submit(struct slot *s);

static void io_done(void *arg, int status)
{
	struct slot *s = arg;
	struct worker *w = s->w;
	const struct perf_args *a = w->a;

	hist_add(&w->hist[s->is_read], hist_now_ns() - s->start_ns);
	s->busy = false;
	if (status) {
		if (!w->errors++)
			w->first_status = status;
		/* As fio without continue_on_error: the first failed I/O ends the
		 * run on every queue, rather than failing again for --time. */
		atomic_store(&stop, true);
	} else {
		w->bytes += a->bs;
		w->done[s->is_read]++;
		if (s->is_read && a->verify) {
			uint64_t first_bad = 0;
			uint32_t bad = verify_check(s->buf, a->bs, 1u << w->lba_shift, s->offset,
						    w->scratch, &first_bad);

			w->verified += a->bs >> w->lba_shift;
			if (bad && !w->mismatches)
				w->first_mismatch = first_bad;
			w->mismatches += bad;
		}
	}
	atomic_fetch_add_explicit(&w->ios, 1, memory_order_relaxed);
	if (!atomic_load_explicit(&stop, memory_order_relaxed) && !status)
		submit(s);
}

/* Picks the next I/O of the workload for @s and submits it. */
static int submit(struct slot *s)
{
	struct worker *w = s->w;
	const struct perf_args *a = w->a;
	uint64_t nblocks = (w->seq_end - w->seq_begin) / a->bs;
	uint32_t nlb = a->bs >> w->lba_shift;
	int ret;

	switch (a->rw) {
	case WL_READ:
	case WL_WRITE:
		if (w->seq_next >= w->seq_end) {
			if (w->prefill)
				return 0;
			w->seq_next = w->seq_begin;
		}
		s->offset = w->seq_next;
		w->seq_next += a->bs;
		break;
	default:
		s->offset = w->seq_begin + xorshift64(&w->rng) % nblocks * a->bs;
		break;
	}
	s->is_read = a->rw == WL_READ || a->rw == WL_RANDREAD ||
		     (a->rw == WL_RANDRW && xorshift64(&w->rng) % 100 < a->mix);
	if (!s->is_read && a->verify)
		verify_fill(s->buf, a->bs, 1u << w->lba_shift, s->offset, w->seed++);
	s->start_ns = hist_now_ns();
	s->busy = true;
	if (s->is_read)
		ret = nvmefs_mpq_read(s->mpq, a->nsid, s->offset >> w->lba_shift, nlb, s->buf, io_done, s);
	else
		ret = nvmefs_mpq_write(s->mpq, a->nsid, s->offset >> w->lba_shift, nlb, s->buf, io_done,
				       s);
	if (ret < 0) {
		s->busy = false;
		if (w->prefill || a->rw == WL_READ || a->rw == WL_WRITE)
			w->seq_next -= a->bs;
		if (ret != -EAGAIN && !w->error[0])
			snprintf(w->error, sizeof(w->error), "%s", nvmefs_errmsg());
	}
	return ret;
}

/* The worker's queue @k of the subsystem head. */
static int queue_poll(struct worker *w, unsigned int k, int timeout_ms)
{
	return nvmefs_mpq_poll(w->mpqs[k], timeout_ms);
}

static int queue_arm(struct worker *w, unsigned int k)
{
	return nvmefs_mpq_arm(w->mpqs[k]);
}

static int queue_fd(const struct worker *w, unsigned int k)
{
	return nvmefs_mpq_fd(w->mpqs[k]);
}

static unsigned int queue_inflight(const struct worker *w, unsigned int k)
{
	return nvmefs_mpq_inflight(w->mpqs[k]);
}

/* Sleeps until one of the worker's queues has completions (or 100 ms pass),
 * in the verbs pattern: arm every queue, take what completed meanwhile, and
 * only then wait on their descriptors.  Returns completions or -errno. */
static int wait_queues(struct worker *w)
{
	struct pollfd pfd[MAX_QUEUES_PER_THREAD];
	int n = 0, ret;

	for (unsigned int k = 0; k < w->nr_queues; k++) {
		ret = queue_arm(w, k);
		if (ret < 0)
			return ret;
		n += ret;
		pfd[k] = (struct pollfd){ .fd = queue_fd(w, k), .events = POLLIN };
	}
	if (n)
		return n;
	if (poll(pfd, w->nr_queues, 100) < 0 && errno != EINTR) {
		snprintf(w->error, sizeof(w->error), "waiting for completions failed: %s",
			 strerror(errno));
		return -errno;
	}
	return 0;
}

/* Takes the completions of the worker's queues, sleeping for them in event
 * mode.  Returns their number or -errno. */
static int poll_queues(struct worker *w)
{
	const struct perf_args *a = w->a;
	int n = 0, ret;

	if (w->nr_queues == 1)
		return queue_poll(w, 0, a->event_mode ? 100 : 0);
	for (unsigned int k = 0; k < w->nr_queues; k++) {
		ret = queue_poll(w, k, 0);
		if (ret < 0)
			return ret;
		n += ret;
	}
	if (n || !a->event_mode)
		return n;
	return wait_queues(w);
}

static bool queues_idle(const struct worker *w)
{
	for (unsigned int k = 0; k < w->nr_queues; k++)
		if (queue_inflight(w, k))
			return false;
	return true;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	const struct perf_args *a = w->a;
	bool draining = false, done = false;
	unsigned int i;

	for (i = 0; i < w->nr_slots; i++)
		submit(&w->slots[i]);
	for (;;) {
		unsigned int busy = 0;
		int ret;

		ret = poll_queues(w);
		if (ret == 0 && w->subsys && atomic_load(&interrupted)) {
			/* Held while no path is usable: a user's ^C gives up on the
			 * paths that are down. */
			for (i = 0; i < nvmefs_subsys_path_count(w->subsys); i++)
				if (nvmefs_ctrl_failed(nvmefs_subsys_path(w->subsys, i)))
					nvmefs_ctrl_stop_reconnect(nvmefs_subsys_path(w->subsys, i));
		} else if (ret == 0 && w->ctrl && nvmefs_ctrl_failed(w->ctrl)) {
			/* An outage: the I/O is held until the controller is back.
			 * A user's ^C gives up on it instead. */
			if (atomic_load(&interrupted))
				nvmefs_ctrl_stop_reconnect(w->ctrl);
			usleep(1000);
		} else if (ret == 0 && !a->event_mode) {
			/* A poller that found nothing lets runnable work have the CPU:
			 * with soft-RoCE that work is the very I/O it waits for. */
			sched_yield();
		}
		if (ret < 0) {
			if (!w->error[0])
				snprintf(w->error, sizeof(w->error), "%s", nvmefs_errmsg());
			atomic_store(&stop, true);
			if (!done)
				atomic_fetch_sub(&threads_left, 1);
			break;
		}
		if (w->error[0])
			atomic_store(&stop, true);
		draining = draining || atomic_load_explicit(&stop, memory_order_relaxed) || w->error[0];
		for (i = 0; i < w->nr_slots; i++) {
			if (!w->slots[i].busy && !draining)
				submit(&w->slots[i]);
			busy += w->slots[i].busy;
		}
		if (!busy && (draining || w->prefill)) {
			draining = true;
			if (!done) {
				done = true;
				atomic_fetch_sub(&threads_left, 1);
			}
			if (!atomic_load(&threads_left) && queues_idle(w))
				break;
		}
	}
	return NULL;
}

/* ---------------------------------------------------------------------- */
/* The run                                                                  */
/* ---------------------------------------------------------------------- */


static void on_signal(int sig)
{
	(void)sig;
	atomic_store(&interrupted, true);
	atomic_store(&stop, true);
}

static double cpu_seconds(const struct timeval *tv)
{
	return (double)tv->tv_sec + tv->tv_usec / 1e6;
}

static int setup_workers(const struct perf_args *a, struct nvmefs_ctrl *ctrl,
			 struct nvmefs_subsys *subsys, uint32_t lba_shift, struct worker *workers,
			 bool prefill)
{
	uint64_t slice = a->size / a->threads / a->bs * a->bs;
	bool multipath = nvmefs_subsys_multipath(subsys);

	for (unsigned int t = 0; t < a->threads; t++) {
		struct worker *w = &workers[t];

		memset(w, 0, sizeof(*w));
		w->a = a;
		w->ctrl = multipath ? NULL : ctrl;
		w->subsys = multipath ? subsys : NULL;
		w->nr_queues = (a->queues - t + a->threads - 1) / a->threads;
		w->nr_slots = a->qd;
		w->mpqs = calloc(w->nr_queues, sizeof(*w->mpqs));
		if (!w->mpqs) {
			fprintf(stderr, "nvmefs %s: out of memory\n", cmd);
			return -ENOMEM;
		}
		for (unsigned int k = 0; k < w->nr_queues; k++)
			w->mpqs[k] = nvmefs_subsys_queue(subsys, t + k * a->threads);
		w->lba_shift = lba_shift;
		w->prefill = prefill;
		w->rng = 0x2545f4914f6cdd1dull ^ ((uint64_t)(t + 1) << 32) ^ hist_now_ns();
		w->seed = (uint64_t)(t + 1) << 48 | (prefill ? 0 : 1ull << 40);
		/* Sequential workloads (and the prefill) split the region between
		 * the threads; random ones roam all of it. */
		if (prefill || a->rw == WL_READ || a->rw == WL_WRITE) {
			w->seq_begin = a->offset + t * slice;
			w->seq_end = t + 1 == a->threads ? a->offset + a->size / a->bs * a->bs
							: w->seq_begin + slice;
		} else {
			w->seq_begin = a->offset;
			w->seq_end = a->offset + a->size / a->bs * a->bs;
		}
		w->seq_next = w->seq_begin;
		w->slots = calloc(w->nr_slots, sizeof(*w->slots));
		w->scratch = malloc(1u << lba_shift);
		if (!w->slots || !w->scratch) {
			fprintf(stderr, "nvmefs %s: out of memory\n", cmd);
			return -ENOMEM;
		}
		for (unsigned int i = 0; i < w->nr_slots; i++) {
			struct slot *s = &w->slots[i];

			s->w = w;
			s->mpq = w->mpqs[i % w->nr_queues];
			s->buf = nvmefs_mpq_buf_get(s->mpq);
			if (!s->buf) {
				fprintf(stderr, "nvmefs %s: an I/O queue has fewer pool buffers than its "
					"share of --iodepth\n", cmd);
				return -ENOMEM;
			}
		}
	}
	return 0;
}

static void free_workers(const struct perf_args *a, struct worker *workers)
{
	for (unsigned int t = 0; t < a->threads; t++) {
		struct worker *w = &workers[t];

		for (unsigned int i = 0; w->slots && i < w->nr_slots; i++) {
			if (w->slots[i].buf)
				nvmefs_mpq_buf_put(w->slots[i].mpq, w->slots[i].buf);
		}
		free(w->slots);
		free(w->scratch);
		free(w->mpqs);
	}
}

/* Runs the workers until they stop: for @seconds (with a progress line each
 * second), or, for the prefill, until they have written their slices. */
static int run_workers(const struct perf_args *a, struct worker *workers, unsigned int seconds,
		       double *elapsed)
{
	uint64_t start = hist_now_ns(), last_ios = 0;
	unsigned int t, tick = 0;

	atomic_store(&stop, atomic_load(&interrupted));
	atomic_store(&threads_left, a->threads);
	for (t = 0; t < a->threads; t++) {
		pthread_attr_t attr;
		int ret = pthread_attr_init(&attr);

		if (!ret && a->nr_cpus) {
			cpu_set_t set;

			CPU_ZERO(&set);
			CPU_SET(thread_cpu(a, t), &set);
			ret = pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
		}
		if (!ret) {
			ret = pthread_create(&workers[t].thread, &attr, worker_main, &workers[t]);
			pthread_attr_destroy(&attr);
		}
		if (ret) {
			if (a->nr_cpus)
				fprintf(stderr, "nvmefs %s: starting thread %u on CPU %u failed: %s; pick "
					"another CPU with --cpus\n", cmd, t, thread_cpu(a, t),
					strerror(ret));
			else
				fprintf(stderr, "nvmefs %s: starting thread %u failed: %s\n", cmd, t,
					strerror(ret));
			atomic_store(&stop, true);
			atomic_fetch_sub(&threads_left, a->threads - t);
			while (t--)
				pthread_join(workers[t].thread, NULL);
			return -ret;
		}
	}
	while (seconds && !atomic_load(&stop)) {
		uint64_t ios = 0;

		usleep(1000000 - (unsigned int)((hist_now_ns() - start) / 1000 % 1000000));
		tick++;
		for (t = 0; t < a->threads; t++)
			ios += atomic_load_explicit(&workers[t].ios, memory_order_relaxed);
		if (!a->quiet)
			fprintf(stderr, "[%4us] %10" PRIu64 " IOPS %9.1f MiB/s\n", tick, ios - last_ios,
				(double)(ios - last_ios) * a->bs / (1 << 20));
		last_ios = ios;
		if (tick >= seconds)
			atomic_store(&stop, true);
	}
	for (t = 0; t < a->threads; t++)
		pthread_join(workers[t].thread, NULL);
	*elapsed = (double)(hist_now_ns() - start) / 1e9;
	return 0;
}

/* Each controller state transition as it happens, between the progress lines. */
static void on_ctrl_event(void *arg, const struct nvmefs_ctrl_status *st, const char *msg)
{
	(void)arg;
	(void)st;
	fprintf(stderr, "nvmefs %s: %s\n", cmd, msg);
}

/* Each path's state transitions, as they happen. */
static void setup_path(struct nvmefs_ctrl *ctrl, void *arg)
{
	nvmefs_ctrl_set_event_cb(ctrl, on_ctrl_event, arg);
}

/*
 * The I/O queues of a single path.  A count perf chose is a wish: if the
 * controller grants fewer, the thread's depth is spread over those, whose
 * pools are made for their larger share.  The grant is asked first, as
 * Linux does, so each queue is created once: deleted and created again at
 * once, a queue's Connect could find the target not yet rid of the old
 * one.  Returns 0, -1 with the library's message, or 1 having said why
 * itself.
 */
static int create_queues(struct perf_args *a, struct nvmefs_ctrl *ctrl, struct nvmefs_io_opts *io)
{
	unsigned int granted;

	if (a->queues_chosen) {
		if (nvmefs_ctrl_ask_io_queues(ctrl, a->queues, &granted))
			return -1;
		if (granted < a->threads) {
			fprintf(stderr, "nvmefs %s: %s grants %u I/O queue%s, fewer than the %u threads: "
				"lower --threads\n", cmd, a->conn.opts.subnqn, granted,
				granted == 1 ? "" : "s", a->threads);
			return 1;
		}
		if (granted < a->queues) {
			verbose(&a->conn, cmd, "the controller grants %u I/O queue%s, not the %u chosen: "
				"--iodepth %u goes over those", granted, granted == 1 ? "" : "s", a->queues,
				a->qd);
			a->queues = granted;
			io->nr_queues = granted;
			io->bufs_per_queue = perf_queue_depth_most(a);
		}
	}
	return nvmefs_ctrl_create_io_queues(ctrl, io) ? -1 : 0;
}

int perf_run(struct perf_args *a)
{
	struct nvmefs_subsys *subsys = NULL;
	struct nvmefs_ctrl *ctrl = NULL;
	struct worker *workers = NULL;
	struct nvmefs_io_opts io;
	struct nvmefs_ns_info ns;
	struct nvmefs_ctrl_status cs;
	struct rusage r0, r1;
	uint32_t lba_shift;
	double elapsed;
	int ret = EXIT_FAIL;
	unsigned int t;

	char addr[300];

	nvmefs_io_opts_init(&io);
	io.nr_queues = a->queues;
	io.bufs_per_queue = perf_queue_depth_most(a);
	/* Without -Q, room for every buffer's I/O whole, however many commands
	 * the controller's largest transfer (MDTS) splits it into. */
	io.queue_size = a->queue_size ? a->queue_size : NVMEFS_IO_QUEUE_SIZE_AUTO;
	io.buf_size = a->bs;
	io.timeout_ms = a->io_timeout_ms;
	verbose(&a->conn, cmd, "creating %u I/O queue%s with %u buffers of %u bytes each%s; entries: %s",
		io.nr_queues, io.nr_queues == 1 ? "" : "s", io.bufs_per_queue, a->bs,
		path_args_multipath(&a->paths) ? ", on every path" : "",
		a->queue_size ? "as -Q gives" : "room for each buffer's I/O whole at the controller's "
		"largest transfer (MDTS)");
	if (path_args_multipath(&a->paths)) {
		ret = paths_connect(&a->conn, &a->paths, &io, cmd, setup_path, NULL, &subsys);
		if (ret)
			goto out;
		ctrl = nvmefs_subsys_path(subsys, 0);
	} else {
		verbose(&a->conn, cmd, "connecting to %s at %s, timeout %u ms", a->conn.opts.subnqn,
			connect_args_where(&a->conn.opts, addr, sizeof(addr)), a->conn.opts.timeout_ms);
		ret = nvmefs_ctrl_connect(&a->conn.opts, &ctrl);
		connect_args_forget_secrets(&a->conn);
		if (ret)
			goto failed;
		nvmefs_ctrl_set_event_cb(ctrl, on_ctrl_event, NULL);
		verbose_connected(&a->conn, cmd, ctrl);
		ret = create_queues(a, ctrl, &io);
		if (ret < 0)
			goto failed;
		if (ret > 0) {
			ret = EXIT_FAIL;
			goto out;
		}
		/* A head of this one path, which all I/O goes through. */
		ret = nvmefs_subsys_create_single(ctrl, &subsys);
		if (ret < 0)
			goto failed;
	}
	ret = EXIT_FAIL;
	if (nvmefs_ns_info(ctrl, a->nsid, &ns))
		goto failed;
	lba_shift = (uint32_t)__builtin_ctz(ns.lba_size);
	if (a->bs % ns.lba_size || a->offset % ns.lba_size) {
		fprintf(stderr, "nvmefs %s: --bs %u and --offset %" PRIu64 " must be multiples of the "
			"namespace's %u-byte blocks\n", cmd, a->bs, a->offset, ns.lba_size);
		ret = EXIT_USAGE;
		goto out;
	}
	if (a->offset >= ns.nlb * ns.lba_size ||
	    a->size > ns.nlb * ns.lba_size - a->offset) {
		fprintf(stderr, "nvmefs %s: --offset %" PRIu64 " --size %" PRIu64 " goes past the end of "
			"namespace %u (%" PRIu64 " bytes)\n", cmd, a->offset, a->size, a->nsid,
			ns.nlb * ns.lba_size);
		ret = EXIT_USAGE;
		goto out;
	}
	if (!a->size)
		a->size = ns.nlb * ns.lba_size - a->offset;
	if (a->size < (uint64_t)a->bs * a->threads) {
		fprintf(stderr, "nvmefs %s: the region of %" PRIu64 " bytes is smaller than one --bs "
			"per thread\n", cmd, a->size);
		ret = EXIT_USAGE;
		goto out;
	}
	workers = calloc(a->threads, sizeof(*workers));
	if (!workers) {
		fprintf(stderr, "nvmefs %s: out of memory\n", cmd);
		goto out;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (a->verify) {
		struct perf_args fill = *a;

		fill.rw = WL_WRITE;
		if (!a->quiet)
			fprintf(stderr, "nvmefs %s: writing the %" PRIu64 " MiB region once for --verify\n",
				cmd, a->size >> 20);
		if (setup_workers(&fill, ctrl, subsys, lba_shift, workers, true) < 0 ||
		    run_workers(&fill, workers, 0, &elapsed) < 0)
			goto out;
		for (t = 0; t < a->threads; t++) {
			if (workers[t].error[0] || workers[t].errors) {
				fprintf(stderr, "nvmefs %s: writing the region for --verify failed: %s\n", cmd,
					workers[t].error[0] ? workers[t].error
					: status_text(workers[t].first_status));
				goto out;
			}
		}
		free_workers(&fill, workers);
		if (atomic_load(&interrupted)) {
			fprintf(stderr, "nvmefs %s: interrupted while writing the region for --verify\n", cmd);
			goto out;
		}
	}
	if (setup_workers(a, ctrl, subsys, lba_shift, workers, false) < 0)
		goto out;
	getrusage(RUSAGE_SELF, &r0);
	if (run_workers(a, workers, a->seconds, &elapsed) < 0)
		goto out;
	getrusage(RUSAGE_SELF, &r1);
	nvmefs_ctrl_status(ctrl, &cs);
	perf_report(a, nvmefs_ctrl_subnqn(ctrl), workers, elapsed,
		    cpu_seconds(&r1.ru_utime) - cpu_seconds(&r0.ru_utime),
		    cpu_seconds(&r1.ru_stime) - cpu_seconds(&r0.ru_stime), &cs, subsys);
	ret = EXIT_OK;
	for (t = 0; t < a->threads; t++) {
		struct worker *w = &workers[t];

		if (w->error[0]) {
			fprintf(stderr, "nvmefs %s: thread %u: %s\n", cmd, t, w->error);
			ret = EXIT_FAIL;
		} else if (w->errors) {
			fprintf(stderr, "nvmefs %s: thread %u: %" PRIu64 " I/Os failed, the first with: %s\n",
				cmd, t, w->errors, status_text(w->first_status));
			ret = EXIT_FAIL;
		}
		if (w->mismatches) {
			fprintf(stderr, "nvmefs %s: thread %u: --verify found %" PRIu64 " bad blocks, the "
				"first at byte %" PRIu64 ": data read differs from data written\n",
				cmd, t, w->mismatches, w->first_mismatch);
			ret = EXIT_FAIL;
		}
	}
	ret = finish_output(cmd, ret);
	goto out;
failed:
	fprintf(stderr, "nvmefs %s: %s\n", cmd, nvmefs_errmsg());
out:
	if (workers) {
		free_workers(a, workers);
		free(workers);
	}
	/* Tearing the controllers down after the report is no outage to tell. */
	if (subsys) {
		for (t = 0; t < nvmefs_subsys_path_count(subsys); t++)
			nvmefs_ctrl_set_event_cb(nvmefs_subsys_path(subsys, t), NULL, NULL);
		nvmefs_subsys_destroy(subsys);
	} else {
		if (ctrl)
			nvmefs_ctrl_set_event_cb(ctrl, NULL, NULL);
		nvmefs_ctrl_disconnect(ctrl);
	}
	return ret;
}
