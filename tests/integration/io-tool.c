/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * io-tool: drives the library's I/O API the way a real application would,
 * for the integration tests (tests/integration/test-*.sh), which compare
 * what it did with what the kernel initiator sees.
 *
 *   write IMAGE SEED       the file IMAGE to the namespace from offset 0
 *   read IMAGE SEED [LEN]  the namespace's first LEN bytes (default: the
 *                          size of IMAGE as it is) into IMAGE
 *   zeroes OFFSET LENGTH   Write Zeroes over a byte range
 *   dealloc OFFSET LENGTH  Dataset Management (deallocate) over a byte range
 *   flush                  Flush
 *   cycles N               N times connect, create 2 I/O queues, write, read
 *                          back and compare 1 MiB, disconnect; fails if the
 *                          process's open descriptors grew
 *   join TRSVCID READY GO  a multipath subsystem of the first path; once GO
 *                          exists, a second path at TRSVCID tried (joined or
 *                          refused), then a block written and read through it
 *
 * write and read move the data in chunks of random sizes (1 block to 2 MiB,
 * so some exceed the controller's MDTS and get split) in a random order
 * drawn from SEED, spread over every I/O queue (one thread each) with up to
 * --qd in flight per queue, straight from or into ONE buffer registered once
 * with nvmefs_mr_reg(): no per-I/O copy, no per-I/O registration.
 *
 * Exit status: 0 done, 1 failed (one line on stderr says why), 2 usage.
 *
 * One job, kept in one file past 700 lines: one program that the
 * integration tests drive, its commands sharing one connection's setup.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nvme/util.h>

#include <nvmefs/nvmefs.h>

#include "../../src/cli/util_parse.h"

#define MAX_CHUNK (2u << 20)
#define CYCLE_BYTES (1u << 20)

static const char *prog = "io-tool";

struct args {
	struct nvmefs_connect_opts conn;
	uint32_t nsid;
	unsigned int queues;
	unsigned int qd;
	unsigned int io_timeout_ms;
};

/* ---------------------------------------------------------------------- */
/* Messages                                                                 */
/* ---------------------------------------------------------------------- */

__attribute__((format(printf, 1, 2))) static int failf(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

__attribute__((format(printf, 1, 2))) static int usage(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see %s --help)\n", prog);
	return 2;
}

/* A completion status as words: an NVMe status or an errno. */
static const char *status_str(int status)
{
	return status > 0 ? nvme_status_to_string(status, false) : strerror(-status);
}

/* ---------------------------------------------------------------------- */
/* Numbers                                                                  */
/* ---------------------------------------------------------------------- */

/* splitmix64: a seed of 0 is as good as any other. */
static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t rng_below(uint64_t *s, uint64_t n)
{
	return rng_next(s) % n;
}

/* ---------------------------------------------------------------------- */
/* Connecting                                                               */
/* ---------------------------------------------------------------------- */

struct session {
	struct nvmefs_ctrl *ctrl;
	struct nvmefs_ns_info ns;
	unsigned int lba_shift;
};

static int session_open(const struct args *a, unsigned int queues, unsigned int queue_size,
			struct session *s)
{
	struct nvmefs_io_opts io;

	memset(s, 0, sizeof(*s));
	if (nvmefs_ctrl_connect(&a->conn, &s->ctrl))
		return failf("%s", nvmefs_errmsg());
	nvmefs_io_opts_init(&io);
	io.nr_queues = queues;
	io.queue_size = queue_size;
	/* The data moves from the caller's registration: keep the pools small. */
	io.buf_size = 4096;
	io.bufs_per_queue = 1;
	io.timeout_ms = a->io_timeout_ms;
	if (nvmefs_ctrl_create_io_queues(s->ctrl, &io) || nvmefs_ns_info(s->ctrl, a->nsid, &s->ns)) {
		failf("%s", nvmefs_errmsg());
		nvmefs_ctrl_disconnect(s->ctrl);
		s->ctrl = NULL;
		return 1;
	}
	s->lba_shift = (unsigned int)__builtin_ctz(s->ns.lba_size);
	return 0;
}

static void session_close(struct session *s)
{
	nvmefs_ctrl_disconnect(s->ctrl);
	s->ctrl = NULL;
}

/* Checks that [@offset, @offset + @len) is whole blocks inside the namespace. */
static int check_range(const struct session *s, const char *what, uint64_t offset, uint64_t len)
{
	uint64_t ns_bytes = s->ns.nlb << s->lba_shift;

	if ((offset | len) & (s->ns.lba_size - 1))
		return usage("%s: offset %" PRIu64 " and length %" PRIu64 " must be multiples of "
			     "the namespace's %u-byte blocks", what, offset, len, s->ns.lba_size);
	if (!len)
		return usage("%s: nothing to do (length 0)", what);
	if (offset > ns_bytes || len > ns_bytes - offset)
		return usage("%s: %" PRIu64 " bytes from %" PRIu64 " go past the end of namespace "
			     "%u (%" PRIu64 " bytes)", what, len, offset, s->ns.nsid, ns_bytes);
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Waiting for single commands (zeroes, dealloc, flush)                     */
/* ---------------------------------------------------------------------- */

struct one {
	bool done;
	int status;
};

static void one_done(void *arg, int status)
{
	struct one *o = arg;

	o->done = true;
	o->status = status;
}

/* Submits with @submit (which returned @ret), then polls until it completes. */
static int wait_one(struct nvmefs_ioq *q, int ret, struct one *o, const char *what)
{
	if (ret < 0)
		return failf("%s: %s", what, nvmefs_errmsg());
	while (!o->done) {
		ret = nvmefs_ioq_poll(q, -1);
		if (ret < 0 && !o->done)
			return failf("%s: %s", what, nvmefs_errmsg());
	}
	if (o->status)
		return failf("%s failed: %s", what, status_str(o->status));
	return 0;
}

static int cmd_range(const struct args *a, bool dealloc, int argc, char **argv)
{
	const char *what = dealloc ? "dealloc" : "zeroes";
	struct session s;
	struct one o = { 0 };
	struct nvmefs_ioq *q;
	uint64_t offset, len;
	char desc[128];
	int ret;

	if (argc != 2)
		return usage("%s takes OFFSET LENGTH", what);
	if (parse_size(argv[0], 0, UINT64_MAX, &offset) || parse_size(argv[1], 0, UINT64_MAX, &len))
		return usage("%s: '%s %s' is not OFFSET LENGTH in bytes (K, M, G suffixes)", what,
			     argv[0], argv[1]);
	if (session_open(a, 1, 8, &s))
		return 1;
	ret = check_range(&s, what, offset, len);
	if (!ret && (len >> s.lba_shift) > UINT32_MAX)
		ret = usage("%s: %" PRIu64 " bytes is too much for one I/O", what, len);
	if (!ret) {
		q = nvmefs_ctrl_io_queue(s.ctrl, 0);
		snprintf(desc, sizeof(desc), "%s of %" PRIu64 " bytes at %" PRIu64, what, len, offset);
		if (dealloc)
			ret = nvmefs_ioq_deallocate(q, a->nsid, offset >> s.lba_shift,
						    (uint32_t)(len >> s.lba_shift), one_done, &o);
		else
			ret = nvmefs_ioq_write_zeroes(q, a->nsid, offset >> s.lba_shift,
						      (uint32_t)(len >> s.lba_shift), one_done, &o);
		ret = wait_one(q, ret, &o, desc);
	}
	session_close(&s);
	return ret;
}

static int cmd_flush(const struct args *a, int argc, char **argv)
{
	struct session s;
	struct one o = { 0 };
	struct nvmefs_ioq *q;
	int ret;

	(void)argv;
	if (argc)
		return usage("flush takes no arguments");
	if (session_open(a, 1, 8, &s))
		return 1;
	q = nvmefs_ctrl_io_queue(s.ctrl, 0);
	ret = wait_one(q, nvmefs_ioq_flush(q, a->nsid, one_done, &o), &o, "flush");
	session_close(&s);
	return ret;
}

/* ---------------------------------------------------------------------- */
/* Moving a whole image in random chunks over every queue                   */
/* ---------------------------------------------------------------------- */

struct chunk {
	uint64_t offset;	/* bytes, in the namespace and in the buffer */
	uint32_t len;
};

struct mover;

struct mover_slot {
	struct mover *m;
	const struct chunk *c;
};

struct mover {
	const struct args *a;
	const struct session *s;
	struct nvmefs_ioq *q;
	unsigned int idx;
	bool is_write;
	uint8_t *buf;
	struct chunk *chunks;	/* this queue's share, in order */
	size_t nr_chunks;
	struct mover_slot *slots;	/* --qd of them */
	struct mover_slot **free_slots;
	unsigned int nr_free;
	uint64_t bytes;
	pthread_t thread;
	char error[512];
};

static void mover_done(void *arg, int status)
{
	struct mover_slot *sl = arg;
	struct mover *m = sl->m;

	if (status && !m->error[0])
		snprintf(m->error, sizeof(m->error), "%s of %u bytes at %" PRIu64 " on queue %u "
			 "failed: %s", m->is_write ? "write" : "read", sl->c->len, sl->c->offset,
			 m->idx, status_str(status));
	if (!status)
		m->bytes += sl->c->len;
	m->free_slots[m->nr_free++] = sl;
}

static void *mover_main(void *arg)
{
	struct mover *m = arg;
	unsigned int shift = m->s->lba_shift;
	size_t next = 0;

	while (!m->error[0] && (next < m->nr_chunks || m->nr_free < m->a->qd)) {
		int ret;

		while (!m->error[0] && next < m->nr_chunks && m->nr_free) {
			struct mover_slot *sl = m->free_slots[m->nr_free - 1];
			const struct chunk *c = &m->chunks[next];

			sl->c = c;
			if (m->is_write)
				ret = nvmefs_ioq_write(m->q, m->a->nsid, c->offset >> shift,
						       c->len >> shift, m->buf + c->offset,
						       mover_done, sl);
			else
				ret = nvmefs_ioq_read(m->q, m->a->nsid, c->offset >> shift,
						      c->len >> shift, m->buf + c->offset,
						      mover_done, sl);
			if (ret == -EAGAIN)
				break;
			if (ret < 0) {
				snprintf(m->error, sizeof(m->error), "%s", nvmefs_errmsg());
				break;
			}
			m->nr_free--;
			next++;
		}
		ret = nvmefs_ioq_poll(m->q, -1);
		if (ret < 0 && !m->error[0])
			snprintf(m->error, sizeof(m->error), "%s", nvmefs_errmsg());
	}
	/* After a failure, let what is still out come back before the buffer goes. */
	while (m->nr_free < m->a->qd && nvmefs_ioq_poll(m->q, -1) >= 0)
		;
	return NULL;
}

/*
 * Cuts [0, @len) into chunks of 1 block to MAX_CHUNK bytes: a third small
 * (up to 16 blocks), a third medium (up to 256 KiB), a third large (up to
 * 2 MiB, past the 1 MiB MDTS of the Linux target).  Then shuffles them.
 */
static struct chunk *make_chunks(uint64_t len, unsigned int lba_size, uint64_t seed, size_t *nr)
{
	uint64_t rng = seed, off = 0;
	size_t n = 0, cap = 64;
	struct chunk *c = malloc(cap * sizeof(*c));
	static const uint32_t limits[] = { 16, (256u << 10), MAX_CHUNK };

	while (c && off < len) {
		uint32_t max_blocks = limits[rng_below(&rng, 3)], blocks;

		if (max_blocks > 16)
			max_blocks /= lba_size;
		blocks = (uint32_t)rng_below(&rng, max_blocks) + 1;
		if ((uint64_t)blocks * lba_size > len - off)
			blocks = (uint32_t)((len - off) / lba_size);
		if (n == cap) {
			struct chunk *bigger = realloc(c, 2 * cap * sizeof(*c));

			if (!bigger) {
				free(c);
				return NULL;
			}
			c = bigger;
			cap *= 2;
		}
		c[n].offset = off;
		c[n].len = blocks * lba_size;
		off += c[n].len;
		n++;
	}
	for (size_t i = n; c && i > 1; i--) {
		size_t j = (size_t)rng_below(&rng, i);
		struct chunk t = c[i - 1];

		c[i - 1] = c[j];
		c[j] = t;
	}
	*nr = n;
	return c;
}

/* Moves [0, @len) between the namespace and @buf (registered) over every queue. */
static int move_image(const struct args *a, const struct session *s, bool is_write, uint8_t *buf,
		      uint64_t len, uint64_t seed)
{
	size_t nr = 0, i, split = 0;
	struct chunk *chunks = make_chunks(len, s->ns.lba_size, seed, &nr);
	struct mover *movers = calloc(a->queues, sizeof(*movers));
	unsigned int t, started = 0;
	uint64_t moved = 0;
	int ret = 0;

	if (!chunks || !movers) {
		ret = failf("out of memory");
		goto out;
	}
	for (i = 0; i < nr; i++)
		split += chunks[i].len > (1u << 20);
	/* Queue t takes chunks t, t + queues, ...: regroup them so each is contiguous. */
	{
		struct chunk *grouped = malloc(nr * sizeof(*grouped));
		size_t k = 0;

		if (!grouped) {
			ret = failf("out of memory");
			goto out;
		}
		for (t = 0; t < a->queues; t++) {
			movers[t].chunks = grouped + k;
			for (i = t; i < nr; i += a->queues)
				grouped[k++] = chunks[i];
			movers[t].nr_chunks = (size_t)(grouped + k - movers[t].chunks);
		}
		free(chunks);
		chunks = grouped;
	}
	for (t = 0; t < a->queues; t++) {
		struct mover *m = &movers[t];

		m->a = a;
		m->s = s;
		m->q = nvmefs_ctrl_io_queue(s->ctrl, t);
		m->idx = t;
		m->is_write = is_write;
		m->buf = buf;
		m->slots = calloc(a->qd, sizeof(*m->slots));
		m->free_slots = calloc(a->qd, sizeof(*m->free_slots));
		if (!m->slots || !m->free_slots) {
			ret = failf("out of memory");
			goto join;
		}
		for (i = 0; i < a->qd; i++) {
			m->slots[i].m = m;
			m->free_slots[i] = &m->slots[i];
		}
		m->nr_free = a->qd;
		ret = pthread_create(&m->thread, NULL, mover_main, m);
		if (ret) {
			ret = failf("starting a thread failed: %s", strerror(ret));
			goto join;
		}
		started++;
	}
join:
	for (t = 0; t < started; t++)
		pthread_join(movers[t].thread, NULL);
	for (t = 0; t < started && !ret; t++) {
		if (movers[t].error[0])
			ret = failf("%s", movers[t].error);
		moved += movers[t].bytes;
	}
	if (!ret && moved != len)
		ret = failf("moved %" PRIu64 " bytes, not %" PRIu64, moved, len);
	if (!ret)
		fprintf(stderr, "%s: %s %" PRIu64 " bytes in %zu chunks (%zu over 1 MiB) on %u "
			"queues, up to %u in flight each\n", prog, is_write ? "wrote" : "read", len,
			nr, split, a->queues, a->qd);
out:
	for (t = 0; movers && t < a->queues; t++) {
		free(movers[t].slots);
		free(movers[t].free_slots);
	}
	free(movers);
	free(chunks);
	return ret;
}

/* A page-aligned anonymous mapping of @len bytes (at least one page). */
static uint8_t *map_buffer(size_t len)
{
	void *p = mmap(NULL, len ? len : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static int read_all(int fd, uint8_t *buf, size_t len)
{
	while (len) {
		ssize_t n = read(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static int write_all(int fd, const uint8_t *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static int cmd_image(const struct args *a, bool is_write, int argc, char **argv)
{
	const char *what = is_write ? "write" : "read";
	const char *image;
	struct nvmefs_mr *mr = NULL;
	struct session s = { 0 };
	uint64_t seed;
	uint64_t len = 0;
	uint8_t *buf = NULL;
	struct stat st;
	int fd = -1, ret;

	if (argc < 2 || argc > (is_write ? 2 : 3))
		return usage(is_write ? "write takes IMAGE SEED" : "read takes IMAGE SEED [LENGTH]");
	image = argv[0];
	if (parse_uint(argv[1], 0, UINT64_MAX, &seed))
		return usage("%s: SEED '%s' is not a number", what, argv[1]);
	if (argc == 3 && (parse_size(argv[2], 0, UINT64_MAX, &len) || !len))
		return usage("%s: LENGTH '%s' is not a size in bytes (K, M, G suffixes)", what,
			     argv[2]);
	if (is_write || argc == 2) {
		if (stat(image, &st))
			return failf("%s: %s", image, strerror(errno));
		len = (uint64_t)st.st_size;
		if (!len)
			return usage("%s: %s is empty", what, image);
	}
	/* --qd I/Os per queue, each of up to 2 commands (a 2 MiB chunk over a 1 MiB MDTS). */
	ret = session_open(a, a->queues, 2 * a->qd + 1, &s);
	if (ret)
		return ret;
	ret = check_range(&s, what, 0, len);
	if (ret)
		goto out;
	buf = map_buffer(len);
	if (!buf) {
		ret = failf("out of memory for a %" PRIu64 "-byte buffer", len);
		goto out;
	}
	if (is_write) {
		fd = open(image, O_RDONLY);
		if (fd < 0 || (ret = read_all(fd, buf, len)) < 0) {
			ret = failf("reading %s: %s", image, strerror(fd < 0 ? errno : -ret));
			goto out;
		}
		close(fd);
		fd = -1;
	}
	if (nvmefs_mr_reg(s.ctrl, buf, len, &mr)) {
		ret = failf("%s", nvmefs_errmsg());
		goto out;
	}
	ret = move_image(a, &s, is_write, buf, len, seed);
	if (!ret && is_write) {
		struct one o = { 0 };
		struct nvmefs_ioq *q = nvmefs_ctrl_io_queue(s.ctrl, 0);

		ret = wait_one(q, nvmefs_ioq_flush(q, a->nsid, one_done, &o), &o, "flush");
	}
	if (!ret && !is_write) {
		fd = open(image, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || (ret = write_all(fd, buf, len)) < 0 || close(fd)) {
			ret = failf("writing %s: %s", image, strerror(fd < 0 || !ret ? errno : -ret));
			fd = -1;
			goto out;
		}
		fd = -1;
	}
out:
	if (fd >= 0)
		close(fd);
	nvmefs_mr_dereg(mr);
	session_close(&s);
	if (buf)
		munmap(buf, len);
	return ret;
}

/* ---------------------------------------------------------------------- */
/* Connect/disconnect cycles                                                */
/* ---------------------------------------------------------------------- */

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1;	/* the directory's own descriptor */
}

static void list_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	char path[PATH_MAX], target[PATH_MAX];

	if (!d)
		return;
	while ((e = readdir(d))) {
		ssize_t n;

		if (e->d_name[0] == '.' || atoi(e->d_name) == dirfd(d))
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		n = readlink(path, target, sizeof(target) - 1);
		target[n < 0 ? 0 : n] = '\0';
		fprintf(stderr, "%s:   fd %s -> %s\n", prog, e->d_name, target);
	}
	closedir(d);
}

static int one_cycle(const struct args *a, unsigned int i, uint64_t *rng)
{
	struct nvmefs_mr *mr = NULL;
	struct session s;
	uint8_t *buf;
	uint64_t offset;
	int ret;

	if (session_open(a, 2, 8, &s))
		return failf("cycle %u: connecting failed (see above)", i);
	buf = map_buffer(2 * CYCLE_BYTES);
	if (!buf) {
		session_close(&s);
		return failf("cycle %u: out of memory", i);
	}
	for (size_t k = 0; k < CYCLE_BYTES; k += 8) {
		uint64_t v = rng_next(rng);

		memcpy(buf + k, &v, 8);
	}
	memset(buf + CYCLE_BYTES, 0, CYCLE_BYTES);
	offset = ((s.ns.nlb << s.lba_shift) >= 2 * CYCLE_BYTES * 16)
		 ? (uint64_t)(i % 16) * CYCLE_BYTES : 0;
	ret = check_range(&s, "cycles", offset, CYCLE_BYTES);
	if (!ret && nvmefs_mr_reg(s.ctrl, buf, 2 * CYCLE_BYTES, &mr))
		ret = failf("cycle %u: %s", i, nvmefs_errmsg());
	if (!ret) {
		ret = nvmefs_ioq_write_sync(nvmefs_ctrl_io_queue(s.ctrl, 0), a->nsid,
					    offset >> s.lba_shift, CYCLE_BYTES >> s.lba_shift, buf);
		if (!ret)
			ret = nvmefs_ioq_read_sync(nvmefs_ctrl_io_queue(s.ctrl, 1), a->nsid,
						   offset >> s.lba_shift, CYCLE_BYTES >> s.lba_shift,
						   buf + CYCLE_BYTES);
		if (ret)
			ret = failf("cycle %u: %s", i, nvmefs_errmsg());
		else if (memcmp(buf, buf + CYCLE_BYTES, CYCLE_BYTES))
			ret = failf("cycle %u: the 1 MiB read back at %" PRIu64 " differs from what "
				    "was written", i, offset);
	}
	nvmefs_mr_dereg(mr);
	session_close(&s);
	munmap(buf, 2 * CYCLE_BYTES);
	return ret;
}

static int cmd_cycles(const struct args *a, int argc, char **argv)
{
	uint64_t n;
	uint64_t rng = 42;
	int before, after_first = -1, after;

	if (argc != 1 || parse_uint(argv[0], 1, 1000000, &n))
		return usage("cycles takes N, a number of cycles from 1 to 1000000");
	before = count_fds();
	for (unsigned int i = 1; i <= n; i++) {
		if (one_cycle(a, i, &rng))
			return 1;
		/* The first connection may leave what libibverbs and librdmacm keep per
		 * process (device contexts): that is the baseline, not a leak. */
		if (i == 1) {
			after_first = count_fds();
			fprintf(stderr, "%s: descriptors open after the first cycle:\n", prog);
			list_fds();
		}
		if (i % 25 == 0)
			fprintf(stderr, "%s: %u cycles, %d open descriptors\n", prog, i, count_fds());
	}
	after = count_fds();
	printf("fds before %d after-first-cycle %d after %d\n", before, after_first, after);
	if (after > after_first) {
		list_fds();
		return failf("the open file descriptors grew from %d after the first cycle to %d "
			     "after %" PRIu64 " cycles: the library leaks descriptors", after_first, after, n);
	}
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Joining a second path                                                    */
/* ---------------------------------------------------------------------- */

/* Waits up to 60 s for @path to exist. */
static int wait_file(const char *path)
{
	for (int i = 0; i < 600; i++) {
		if (access(path, F_OK) == 0)
			return 0;
		usleep(100000);
	}
	return failf("%s did not appear within 60 s", path);
}

/* One block written through @mpq and read back the same. */
static int mpq_roundtrip(struct nvmefs_mpq *mpq, uint32_t nsid, uint32_t lba_size)
{
	uint8_t *buf = nvmefs_mpq_buf_get(mpq);
	struct one o = { 0 };
	int ret;

	if (!buf)
		return failf("no pool buffer");
	for (uint32_t i = 0; i < lba_size; i++)
		buf[i] = (uint8_t)(i * 7 + 1);
	for (int pass = 0; pass < 2; pass++) {
		o.done = false;
		ret = pass ? nvmefs_mpq_read(mpq, nsid, 0, 1, buf, one_done, &o)
			: nvmefs_mpq_write(mpq, nsid, 0, 1, buf, one_done, &o);
		if (ret < 0)
			return failf("submitting through the paths: %s", nvmefs_errmsg());
		if (pass)
			memset(buf, 0, lba_size);
		while (!o.done)
			if (nvmefs_mpq_poll(mpq, 100) < 0 && !o.done)
				return failf("polling the paths: %s", nvmefs_errmsg());
		if (o.status)
			return failf("I/O through the paths failed: %s", status_str(o.status));
	}
	for (uint32_t i = 0; i < lba_size; i++)
		if (buf[i] != (uint8_t)(i * 7 + 1))
			return failf("the block read back through the paths differs at byte %u", i);
	nvmefs_mpq_buf_put(mpq, buf);
	return 0;
}

/* join TRSVCID READY GO: the first path (-a/-s) as a subsystem, READY
 * created, and once GO exists a second path at TRSVCID tried; prints
 * "joined" or "refused: WHY", then checks I/O through what there is. */
static int cmd_join(const struct args *a, int argc, char **argv)
{
	struct nvmefs_connect_opts second = a->conn;
	struct nvmefs_subsys *subsys = NULL;
	struct nvmefs_ctrl *ctrl = NULL;
	struct nvmefs_io_opts io;
	struct session s;
	int fd, ret = 1;

	if (argc != 3)
		return usage("join takes TRSVCID READY_FILE GO_FILE");
	if (session_open(a, 1, 16, &s))
		return 1;
	if (nvmefs_subsys_create(s.ctrl, NVMEFS_IOPOLICY_NUMA, &subsys)) {
		failf("%s", nvmefs_errmsg());
		session_close(&s);
		return 1;
	}
	fd = open(argv[1], O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	if (fd >= 0)
		close(fd);
	if (wait_file(argv[2]))
		goto out;
	second.trsvcid = argv[0];
	nvmefs_io_opts_init(&io);
	io.queue_size = 16;
	io.buf_size = 4096;
	io.bufs_per_queue = 1;
	if (nvmefs_ctrl_connect(&second, &ctrl) || nvmefs_ctrl_create_io_queues(ctrl, &io)) {
		printf("refused: %s\n", nvmefs_errmsg());
		nvmefs_ctrl_disconnect(ctrl);
	} else if (nvmefs_subsys_add_path(subsys, ctrl)) {
		printf("refused: %s\n", nvmefs_errmsg());
		nvmefs_ctrl_disconnect(ctrl);
	} else {
		printf("joined\n");
	}
	fflush(stdout);
	ret = mpq_roundtrip(nvmefs_subsys_queue(subsys, 0), a->nsid, s.ns.lba_size);
	if (!ret)
		printf("io ok over %u path(s)\n", nvmefs_subsys_path_count(subsys));
out:
	nvmefs_subsys_destroy(subsys);
	return ret;
}

/* ---------------------------------------------------------------------- */
/* Command line                                                             */
/* ---------------------------------------------------------------------- */

static void help(void)
{
	printf("Usage: %s [-t TYPE] -a TRADDR [-s TRSVCID] -n SUBNQN [--nsid=N] [--queues=N] [--qd=N]\n"
	       "               [--timeout=MS] [--io-timeout=MS] COMMAND [ARGS...]\n"
	       "\n"
	       "Commands:\n"
	       "  write IMAGE SEED        write the file IMAGE to the namespace from offset 0\n"
	       "  read IMAGE SEED [LEN]   read the first LEN bytes (default: IMAGE's size) into IMAGE\n"
	       "  zeroes OFFSET LENGTH    Write Zeroes over a byte range\n"
	       "  dealloc OFFSET LENGTH   deallocate a byte range (Dataset Management)\n"
	       "  flush                   Flush\n"
	       "  cycles N                N times connect, 2 I/O queues, 1 MiB write/read/compare,\n"
	       "                          disconnect; fails if open descriptors grew\n"
	       "  join TRSVCID READY GO   the first path as a multipath subsystem; once the file\n"
	       "                          GO exists (READY is made first), a second path at\n"
	       "                          TRSVCID: prints joined or refused: WHY, then checks a\n"
	       "                          block written and read through the paths\n"
	       "\n"
	       "write and read move random-sized chunks (1 block to 2 MiB) in an order drawn\n"
	       "from SEED over every queue (one thread each), --qd in flight per queue, from\n"
	       "one buffer registered once.\n"
	       "\n"
	       "Options:\n"
	       "  -t, --transport=TYPE  rdma (the default) or tcp\n"
	       "  -a, --traddr=TRADDR   target address; required\n"
	       "  -s, --trsvcid=PORT    target port (default 4420)\n"
	       "  -n, --nqn=SUBNQN      subsystem NQN; required\n"
	       "      --nsid=N          namespace (default 1)\n"
	       "      --queues=N        I/O queues for write and read (default 2)\n"
	       "      --qd=N            I/Os in flight per queue (default 8)\n"
	       "      --timeout=MS      connect and admin command timeout (default 5000)\n"
	       "      --io-timeout=MS   I/O timeout (default 30000)\n", prog);
}

enum { OPT_NSID = 256, OPT_QUEUES, OPT_QD, OPT_TIMEOUT, OPT_IO_TIMEOUT };

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "transport", required_argument, NULL, 't' },
		{ "traddr", required_argument, NULL, 'a' },
		{ "trsvcid", required_argument, NULL, 's' },
		{ "nqn", required_argument, NULL, 'n' },
		{ "nsid", required_argument, NULL, OPT_NSID },
		{ "queues", required_argument, NULL, OPT_QUEUES },
		{ "qd", required_argument, NULL, OPT_QD },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "io-timeout", required_argument, NULL, OPT_IO_TIMEOUT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct args a = { .nsid = 1, .queues = 2, .qd = 8,
			  .io_timeout_ms = NVMEFS_DEFAULT_IO_TIMEOUT_MS };
	uint64_t v;
	const char *command;
	int opt;

	nvmefs_connect_opts_init(&a.conn);
	a.conn.timeout_ms = NVMEFS_DEFAULT_TIMEOUT_MS;
	while ((opt = getopt_long(argc, argv, "+t:a:s:n:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 't':
			a.conn.trtype = optarg;
			break;
		case 'a':
			a.conn.traddr = optarg;
			break;
		case 's':
			a.conn.trsvcid = optarg;
			break;
		case 'n':
			a.conn.subnqn = optarg;
			break;
		case OPT_NSID:
			if (parse_uint(optarg, 1, 0xfffffffe, &v))
				return usage("--nsid '%s' is not a namespace ID", optarg);
			a.nsid = (uint32_t)v;
			break;
		case OPT_QUEUES:
			if (parse_uint(optarg, 1, 64, &v))
				return usage("--queues '%s' is not a number from 1 to 64", optarg);
			a.queues = (unsigned int)v;
			break;
		case OPT_QD:
			if (parse_uint(optarg, 1, 256, &v))
				return usage("--qd '%s' is not a number from 1 to 256", optarg);
			a.qd = (unsigned int)v;
			break;
		case OPT_TIMEOUT:
			if (parse_uint(optarg, 1, INT_MAX, &v))
				return usage("--timeout '%s' is not a number of milliseconds", optarg);
			a.conn.timeout_ms = (unsigned int)v;
			break;
		case OPT_IO_TIMEOUT:
			if (parse_uint(optarg, 1, INT_MAX, &v))
				return usage("--io-timeout '%s' is not a number of milliseconds", optarg);
			a.io_timeout_ms = (unsigned int)v;
			break;
		case 'h':
			help();
			return 0;
		default:
			return 2;
		}
	}
	if (!a.conn.traddr || !a.conn.subnqn)
		return usage("-a TRADDR and -n SUBNQN are required");
	if (optind >= argc)
		return usage("a COMMAND is missing");
	command = argv[optind++];
	argc -= optind;
	argv += optind;
	if (!strcmp(command, "write") || !strcmp(command, "read"))
		return cmd_image(&a, command[0] == 'w', argc, argv);
	if (!strcmp(command, "zeroes") || !strcmp(command, "dealloc"))
		return cmd_range(&a, command[0] == 'd', argc, argv);
	if (!strcmp(command, "flush"))
		return cmd_flush(&a, argc, argv);
	if (!strcmp(command, "cycles"))
		return cmd_cycles(&a, argc, argv);
	if (!strcmp(command, "join"))
		return cmd_join(&a, argc, argv);
	return usage("unknown command '%s'", command);
}
