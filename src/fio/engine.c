/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fio-nvmefs.so: an fio external ioengine that runs a job's I/O straight on
 * libnvmefs (ioengine=external:/usr/lib/.../nvmefs/fio-nvmefs.so).  Each fio
 * job (thread or process) connects a controller of its own with one I/O
 * queue, so that jobs share nothing on the I/O path, as nvmefs perf's
 * threads share nothing.  fio's I/O buffers are registered once and used in place: the data
 * moves between them and the target with no copy.  The job's filename only
 * names the job's file: every file is the namespace nsid= names.
 *
 * Built against the headers of the fio that loads it (configure
 * --with-fio=DIR); fio checks FIO_IOOPS_VERSION when it loads the engine.
 */
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fio.h>
#include <optgroup.h>

#include <nvmefs/nvmefs.h>

#define ENGINE "nvmefs"

/* How long one wait for completions sleeps in event mode before getevents
 * looks at fio's own time limit again. */
#define EVENT_WAIT_MS 100

enum completions { COMPLETIONS_AUTO, COMPLETIONS_POLL, COMPLETIONS_EVENT };

struct engine_opts {
	void *pad;	/* fio takes an option at offset 0 for unset */
	char *transport;
	char *traddr;
	char *trsvcid;
	char *host_traddr;
	char *nqn;
	char *hostnqn;
	char *hostid;
	char *dhchap_secret;
	char *dhchap_ctrl_secret;
	unsigned int nsid;
	unsigned int completions;
};

/* One job's controller, its one I/O queue, and the I/O it completed that
 * fio has not yet reaped. */
struct engine {
	struct nvmefs_ctrl *ctrl;
	struct nvmefs_ioq *ioq;
	struct nvmefs_mr *mr;
	uint32_t nsid;
	uint32_t lba_size;
	unsigned int lba_shift;
	bool poll;
	struct io_u **done;
	unsigned int nr_done;
	/* Of done[], how many the last getevents handed to fio. */
	unsigned int reaped;
};

static int engine_connect(struct thread_data *td, struct nvmefs_ctrl **ctrlp)
{
	const struct engine_opts *o = td->eo;
	struct nvmefs_connect_opts opts;
	int ret;

	if (!o->traddr || !o->nqn || !o->nsid) {
		log_err(ENGINE ": job %s: traddr=, nqn= and nsid= are required: give the target's"
			" address, its subsystem NQN and the namespace\n", td->o.name);
		return -EINVAL;
	}
	nvmefs_connect_opts_init(&opts);
	opts.trtype = o->transport;
	opts.traddr = o->traddr;
	opts.trsvcid = o->trsvcid;
	opts.host_traddr = o->host_traddr;
	opts.subnqn = o->nqn;
	opts.hostnqn = o->hostnqn;
	opts.hostid = o->hostid;
	opts.dhchap_secret = o->dhchap_secret;
	opts.dhchap_ctrl_secret = o->dhchap_ctrl_secret;
	ret = nvmefs_ctrl_connect(&opts, ctrlp);
	if (ret)
		log_err(ENGINE ": job %s: connecting to %s: %s\n", td->o.name, o->traddr,
			nvmefs_errmsg());
	return ret;
}

/* Creates @ctrl's one I/O queue, with room for @depth I/Os in flight, and
 * reads the namespace's geometry into @ns. */
static int engine_queue(struct thread_data *td, struct nvmefs_ctrl *ctrl, unsigned int depth,
			struct nvmefs_ns_info *ns)
{
	const struct engine_opts *o = td->eo;
	struct nvmefs_io_opts io;
	int ret;

	nvmefs_io_opts_init(&io);
	io.nr_queues = 1;
	/* fio's own buffers carry the data: the pool is left as small as it goes. */
	io.bufs_per_queue = 1;
	if (depth + 1 > io.queue_size)
		io.queue_size = depth + 1;
	ret = nvmefs_ctrl_create_io_queues(ctrl, &io);
	if (ret) {
		log_err(ENGINE ": job %s: creating an I/O queue of %u entries: %s\n", td->o.name,
			io.queue_size, nvmefs_errmsg());
		return ret;
	}
	/* The library's message names the namespace and says why it cannot serve. */
	ret = nvmefs_ns_info(ctrl, o->nsid, ns);
	if (ret) {
		log_err(ENGINE ": job %s: %s\n", td->o.name, nvmefs_errmsg());
		return ret;
	}
	if (ns->lba_size < 512 || (ns->lba_size & (ns->lba_size - 1))) {
		log_err(ENGINE ": job %s: namespace %u has %u-byte blocks: only a power of two"
			" from 512 is served: give another namespace\n", td->o.name, o->nsid,
			ns->lba_size);
		return -EINVAL;
	}
	return 0;
}

static void engine_free(struct engine *e)
{
	if (!e)
		return;
	nvmefs_mr_dereg(e->mr);	/* before the controller goes */
	nvmefs_ctrl_disconnect(e->ctrl);
	free(e->done);
	free(e);
}

/*
 * Reads the namespace's geometry over a connection of a child process's own.
 * fio asks for the files' sizes in its main process, then forks each job that
 * runs as a process; an RDMA device opened before the fork is not usable in
 * the job (the verbs descriptor it inherits refuses a process with other
 * credentials than its opener's, EACCES) and librdmacm, which keeps its
 * devices open for the life of the process, would hand it that one.  So the
 * main process never touches RDMA: the child connects, reads, and goes.
 */
static int engine_probe(struct thread_data *td, struct nvmefs_ns_info *ns)
{
	struct nvmefs_ctrl *ctrl = NULL;
	size_t got = 0;
	int fds[2], status = 0, ret;
	pid_t pid = -1;

	if (!pipe(fds)) {
		pid = fork();
		if (pid < 0) {
			ret = errno;
			close(fds[0]);
			close(fds[1]);
			errno = ret;
		}
	}
	if (pid < 0) {
		ret = -errno;
		log_err(ENGINE ": job %s: starting the process that reads the namespace's size: %s:"
			" free memory or processes and run the job again\n", td->o.name, strerror(-ret));
		return ret;
	}
	if (!pid) {
		close(fds[0]);
		ret = engine_connect(td, &ctrl);
		if (!ret)
			ret = engine_queue(td, ctrl, 1, ns);
		nvmefs_ctrl_disconnect(ctrl);
		/* _exit: what fio's stdio holds is the main process's to print. */
		_exit(ret || write(fds[1], ns, sizeof(*ns)) != (ssize_t)sizeof(*ns));
	}
	close(fds[1]);
	while (got < sizeof(*ns)) {
		ssize_t n = read(fds[0], (char *)ns + got, sizeof(*ns) - got);

		if (n > 0)
			got += (size_t)n;
		else if (!n || errno != EINTR)
			break;
	}
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (got == sizeof(*ns))
		return 0;
	/* A child that exited 1 said why; one that a signal ended could not. */
	if (WIFSIGNALED(status))
		log_err(ENGINE ": job %s: the process that reads the namespace's size was killed by"
			" signal %d\n", td->o.name, WTERMSIG(status));
	return -EIO;
}

/* fio asks for the files' sizes before the job starts: in fio's main process
 * (engine_probe), or after init when the job sets create_serialize=0. */
static int engine_setup(struct thread_data *td)
{
	struct engine *e = td->io_ops_data;
	struct nvmefs_ns_info ns;
	struct fio_file *f;
	unsigned int i;
	int ret;

	if (e) {
		ret = nvmefs_ns_info(e->ctrl, e->nsid, &ns);
		if (ret)
			log_err(ENGINE ": job %s: %s\n", td->o.name, nvmefs_errmsg());
	} else {
		ret = engine_probe(td, &ns);
	}
	/* The target's block count, times a block size that engine_queue bounded to 2^31. */
	if (!ret && ns.nlb > UINT64_MAX / ns.lba_size) {
		log_err(ENGINE ": job %s: namespace %u claims %llu blocks of %u bytes, more than"
			" 2^64 bytes: the target is wrong\n", td->o.name, ns.nsid,
			(unsigned long long)ns.nlb, ns.lba_size);
		ret = -EINVAL;
	}
	if (ret)
		return 1;
	for_each_file(td, f, i) {
		f->filetype = FIO_TYPE_BLOCK;
		f->real_file_size = ns.nlb * ns.lba_size;
		fio_file_set_size_known(f);
	}
	return 0;
}

/* Refuses at the start, in one line, the sizes and offsets the namespace cannot take, rather
 * than failing the job's first I/O that has one. */
static int engine_check_sizes(struct thread_data *td, uint32_t nsid, uint32_t lba_size)
{
	static const char *const names[] = { "read", "write", "trim" };
	const struct thread_options *t = &td->o;
	const bool used[] = { td_read(td), td_write(td), td_trim(td) };
	unsigned int d;

	for (d = DDIR_READ; d <= DDIR_TRIM; d++) {
		if (!used[d] || !((t->min_bs[d] | t->max_bs[d] | t->ba[d]) & (lba_size - 1)))
			continue;
		log_err(ENGINE ": job %s: %s sizes %llu to %llu (blockalign %llu) are not whole"
			" %u-byte blocks of namespace %u: give bs and blockalign in multiples of %u\n",
			t->name, names[d], t->min_bs[d], t->max_bs[d], t->ba[d], lba_size, nsid,
			lba_size);
		return -EINVAL;
	}
	if ((t->start_offset | t->offset_increment) & (lba_size - 1)) {
		log_err(ENGINE ": job %s: offset %llu (increment %llu) is not on a %u-byte block of"
			" namespace %u: give offsets in multiples of %u\n", t->name, t->start_offset,
			t->offset_increment, lba_size, nsid, lba_size);
		return -EINVAL;
	}
	return 0;
}

static int engine_init(struct thread_data *td)
{
	const struct engine_opts *o = td->eo;
	struct nvmefs_ns_info ns;
	struct engine *e;

	e = calloc(1, sizeof(*e));
	if (e)
		e->done = calloc(td->o.iodepth, sizeof(*e->done));
	if (!e || !e->done) {
		log_err(ENGINE ": job %s: no memory for %u I/Os: lower iodepth\n", td->o.name,
			td->o.iodepth);
		goto fail;
	}
	if (engine_connect(td, &e->ctrl) || engine_queue(td, e->ctrl, td->o.iodepth, &ns) ||
	    engine_check_sizes(td, o->nsid, ns.lba_size))
		goto fail;
	e->ioq = nvmefs_ctrl_io_queue(e->ctrl, 0);
	e->nsid = o->nsid;
	e->lba_size = ns.lba_size;
	e->lba_shift = (unsigned int)__builtin_ctz(ns.lba_size);
	/* As nvmefs perf: spinning serves one I/O in flight best, sleeping more. */
	e->poll = o->completions == COMPLETIONS_POLL ||
		  (o->completions == COMPLETIONS_AUTO && td->o.iodepth <= 1);
	td->io_ops_data = e;
	return 0;
fail:
	engine_free(e);
	return 1;
}

/* Registers fio's I/O buffers, allocated after init, so every I/O uses them in place. */
static int engine_post_init(struct thread_data *td)
{
	struct engine *e = td->io_ops_data;
	int ret;

	ret = nvmefs_mr_reg(e->ctrl, td->orig_buffer, td->orig_buffer_size, &e->mr);
	if (ret)
		log_err(ENGINE ": job %s: registering fio's %llu bytes of I/O buffers: %s\n",
			td->o.name, (unsigned long long)td->orig_buffer_size, nvmefs_errmsg());
	return ret ? 1 : 0;
}

static void engine_cleanup(struct thread_data *td)
{
	engine_free(td->io_ops_data);
	td->io_ops_data = NULL;
}

static void io_done(void *arg, int status)
{
	struct io_u *io_u = arg;
	struct engine *e = io_u->engine_data;

	/* A positive status is the controller's NVMe status: the data is not there. */
	io_u->error = status < 0 ? -status : status > 0 ? EIO : 0;
	e->done[e->nr_done++] = io_u;
}

static enum fio_q_status engine_queue_io(struct thread_data *td, struct io_u *io_u)
{
	struct engine *e = td->io_ops_data;
	uint64_t slba = io_u->offset >> e->lba_shift;
	unsigned long long nlb = io_u->xfer_buflen >> e->lba_shift;
	int ret;

	fio_ro_check(td, io_u);
	io_u->engine_data = e;
	if (ddir_rw(io_u->ddir) || io_u->ddir == DDIR_TRIM) {
		if ((io_u->offset | io_u->xfer_buflen) & (e->lba_size - 1) || !nlb ||
		    nlb > UINT32_MAX) {
			log_err(ENGINE ": job %s: %llu bytes at %llu are not whole %u-byte blocks:"
				" set bs and offsets in multiples of the block\n", td->o.name,
				io_u->xfer_buflen, io_u->offset, e->lba_size);
			io_u->error = EINVAL;
			return FIO_Q_COMPLETED;
		}
	}
	switch (io_u->ddir) {
	case DDIR_READ:
		ret = nvmefs_ioq_read(e->ioq, e->nsid, slba, (uint32_t)nlb, io_u->xfer_buf, io_done,
				      io_u);
		break;
	case DDIR_WRITE:
		ret = nvmefs_ioq_write(e->ioq, e->nsid, slba, (uint32_t)nlb, io_u->xfer_buf,
				       io_done, io_u);
		break;
	case DDIR_TRIM:
		ret = nvmefs_ioq_deallocate(e->ioq, e->nsid, slba, nlb, io_done, io_u);
		break;
	case DDIR_SYNC:
	case DDIR_DATASYNC:
		ret = nvmefs_ioq_flush(e->ioq, e->nsid, io_done, io_u);
		break;
	default:
		io_u->error = EINVAL;
		return FIO_Q_COMPLETED;
	}
	if (ret == -EAGAIN)
		return FIO_Q_BUSY;
	if (ret) {
		io_u->error = -ret;
		return FIO_Q_COMPLETED;
	}
	return FIO_Q_QUEUED;
}

static int engine_getevents(struct thread_data *td, unsigned int min, unsigned int max,
			    const struct timespec *t)
{
	struct engine *e = td->io_ops_data;
	struct timespec start;
	long long limit_ms = t ? (long long)t->tv_sec * 1000 + t->tv_nsec / 1000000 : -1;
	int ret = 0;

	/* Completions beyond what fio took last time stay for this call. */
	memmove(e->done, e->done + e->reaped, (e->nr_done - e->reaped) * sizeof(*e->done));
	e->nr_done -= e->reaped;
	e->reaped = 0;
	/* Completions held from an earlier poll are handed over without polling again.  fio
	 * takes one a call unless iodepth_batch_complete_max says more, and queues an I/O after
	 * each: those go out together at the poll after the last held one is taken, one send and
	 * one look at the completion queue for the batch, as iodepth_batch_complete_max=iodepth
	 * would give, not a system call per I/O (over NVMe/TCP in the testbed, fio's default
	 * did 2-9x fewer 4k reads at depth 32 than that option when each call polled). */
	if (e->nr_done && e->nr_done >= min)
		goto out;
	if (limit_ms > 0)
		fio_gettime(&start, NULL);
	do {
		/* It sleeps only for completions fio asks for that the engine does not hold yet:
		 * sleeping with them held cost a wait per I/O (0.2x the kernel at depth 32). */
		bool wait = !e->poll && limit_ms && e->nr_done < min;

		ret = nvmefs_ioq_poll(e->ioq, wait ? EVENT_WAIT_MS : 0);
		if (ret < 0)
			break;
		/* A poller that found nothing lets runnable work have the CPU, as
		 * nvmefs perf's does: with soft-RoCE that is the very I/O it waits for. */
		if (!ret && e->poll)
			sched_yield();
		if (limit_ms > 0 && mtime_since_now(&start) >= (unsigned long long)limit_ms)
			break;
	} while (e->nr_done < min && limit_ms);
	if (ret < 0 && !e->nr_done) {
		log_err(ENGINE ": job %s: the I/O queue failed: %s\n", td->o.name, nvmefs_errmsg());
		return ret;
	}
out:
	e->reaped = e->nr_done < max ? e->nr_done : max;
	return (int)e->reaped;
}

static struct io_u *engine_event(struct thread_data *td, int i)
{
	struct engine *e = td->io_ops_data;

	return e->done[i];
}

/* The job's files are names only: there is nothing to open or to drop from a cache. */
static int engine_file_noop(struct thread_data *td, struct fio_file *f)
{
	(void)td;
	(void)f;
	return 0;
}

#define STR_OPT(opt, field, text)					\
	{								\
		.name = (opt), .lname = (opt), .type = FIO_OPT_STR_STORE,	\
		.off1 = offsetof(struct engine_opts, field), .help = (text),	\
		.category = FIO_OPT_C_ENGINE, .group = FIO_OPT_G_INVALID,	\
	}

static struct fio_option options[] = {
	STR_OPT("transport", transport, NULL),	/* help: engine_describe_transports() */
	STR_OPT("traddr", traddr, "Target address (required)"),
	STR_OPT("trsvcid", trsvcid, "Target port (default: the transport's I/O port)"),
	STR_OPT("host-traddr", host_traddr, "Local address to connect from"),
	STR_OPT("nqn", nqn, "Subsystem NQN (required)"),
	STR_OPT("hostnqn", hostnqn, "Host NQN (default: /etc/nvme/hostnqn)"),
	STR_OPT("hostid", hostid, "Host identifier (default: /etc/nvme/hostid)"),
	STR_OPT("dhchap-secret", dhchap_secret, "DH-HMAC-CHAP host secret (DHHC-1:NN:...:)"),
	STR_OPT("dhchap-ctrl-secret", dhchap_ctrl_secret,
		"DH-HMAC-CHAP controller secret, to authenticate the controller too"),
	{
		.name = "nsid", .lname = "nsid", .type = FIO_OPT_INT,
		.off1 = offsetof(struct engine_opts, nsid), .minval = 1, .maxval = 0xfffffffe,
		.help = "Namespace ID (required)",
		.category = FIO_OPT_C_ENGINE, .group = FIO_OPT_G_INVALID,
	},
	{
		.name = "completions", .lname = "completions", .type = FIO_OPT_STR,
		.off1 = offsetof(struct engine_opts, completions),
		.help = "Wait for completions by polling or by sleeping on the queue's events",
		.posval = {
			{ .ival = "poll", .oval = COMPLETIONS_POLL,
			  .help = "Spin on the completion queue (the default at iodepth=1)" },
			{ .ival = "event", .oval = COMPLETIONS_EVENT,
			  .help = "Sleep until completions come (the default above iodepth=1)" },
		},
		.category = FIO_OPT_C_ENGINE, .group = FIO_OPT_G_INVALID,
	},
	{ .name = NULL },
};

/* The transport option's help names the library's transports, its default first.  fio reads
 * the table once the engine is loaded, so it is filled when it is: a constructor, as fio's own
 * engines register themselves. */
static void fio_init engine_describe_transports(void)
{
	static char help[160];
	const char *name;
	size_t len;
	unsigned int i;

	len = (size_t)snprintf(help, sizeof(help), "Transport, as nvme-cli's -t:");
	for (i = 0; (name = nvmefs_transport_name(i)) && len < sizeof(help); i++) {
		const char *sep = !i ? " " : nvmefs_transport_name(i + 1) ? ", " : " or ";

		len += (size_t)snprintf(help + len, sizeof(help) - len, "%s%s%s", sep, name,
					!i ? " (the default)" : "");
	}
	options[0].help = help;
}

/* Found by fio with dlsym(..., "ioengine"). */
struct ioengine_ops ioengine = {
	.name = ENGINE,
	.version = FIO_IOOPS_VERSION,
	.flags = FIO_RAWIO | FIO_NOEXTEND | FIO_NODISKUTIL | FIO_MEMALIGN,
	.setup = engine_setup,
	.init = engine_init,
	.post_init = engine_post_init,
	.queue = engine_queue_io,
	.getevents = engine_getevents,
	.event = engine_event,
	.cleanup = engine_cleanup,
	.open_file = engine_file_noop,
	.close_file = engine_file_noop,
	.invalidate = engine_file_noop,
	.options = options,
	.option_struct_size = sizeof(struct engine_opts),
};
