/*
 * The harness of the export engine's unit tests (check_engine.c,
 * check_engine_post.c, check_engine_outage.c): a front end of the test's
 * own sends byte-range requests through a SOCK_SEQPACKET socket (one
 * request a message, as /dev/fuse gives one a read), or posts them as FUSE
 * over io_uring's entries are posted (exp_worker_post(), on the thread
 * serving the worker); the FUSE front end's threads (src/fuse/loop.c) read
 * them into the workers' buffers, or take the posts, and serve them,
 * and the library underneath talks to the scripted transport.  Each
 * request carries a cookie; a test checks what reached the target, the
 * bytes a read completes with, and that each cookie completes exactly once.
 */
#ifndef NVMEFS_TESTS_ENGINE_HARNESS_H
#define NVMEFS_TESTS_ENGINE_HARNESS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <check.h>

#include "fake_transport.h"
#include "../../src/export/engine.h"
#include "../../src/export/export_priv.h"
#include "../../src/fuse/loop.h"

#define TRADDR "192.0.2.20"
#define SUBNQN "nqn.2024-01.io.example:io"
#define CNTLID 0x0021
#define CAP_MQES_1023 0x00000000010003ffULL
/* 2^2 pages of 4 KiB: 16 KiB, 32 blocks of 512 bytes, per command. */
#define MDTS_16K 2
#define MDTS_1M 8
#define MAX_IO (64u << 10)
#define NR_COOKIES 4
/* Workers an engine of the tests may have. */
#define MAX_WORKERS 4
#define POSTS_MAX 4

/* Requests posted to one worker, waiting for its thread to start them. */
struct post_list {
	int fd;			/* eventfd: written for each post */
	struct exp_post *q[POSTS_MAX];
	unsigned int len;	/* under t.lock */
};

extern const struct fake_ns default_ns[1];

/* What the test's front end sends: a header, then a write's payload. */
struct tmsg {
	uint32_t op;		/* enum exp_op */
	uint32_t nsid;
	uint64_t off;
	uint32_t size;
	uint32_t cookie;	/* index into t.done */
};

struct done {
	unsigned int calls;
	int err;
	size_t len;
	uint8_t *data;		/* a read's bytes, copied */
	const void *from;	/* where the engine completed a read from */
};

/* The test's front end, controller and engine. */
struct engine_harness {
	pthread_mutex_t lock;
	struct done done[NR_COOKIES];
	unsigned int dispatched, refused;
	int refused_err;	/* the last refusal's */
	struct exp_ns ns;
	int sock[2];
	struct nvmefs_ctrl *ctrl;
	/* The head of that one path, which the engine sends through. */
	struct nvmefs_subsys *head;
	struct exp *e;
	/* The threads that serve it, from sock[0]. */
	struct fs_loop *loop;
	struct post_list posts[MAX_WORKERS];
	/* Requests completed, and how many of them the last flush of the
	 * front end (fs_loop_ops.flush) came after. */
	unsigned int completed, flushed;
	/* outage_engine()'s controller may go on (ctrl_back()). */
	atomic_bool back;
};
extern struct engine_harness t;
/* The test's front end: the requests of sock[0] served on loop.c's threads. */
extern const struct fs_loop_ops t_loop_ops;

int64_t now_ms(void);
/* A test case @name whose tests each get a fresh script and front end,
 * and 30 s. */
TCase *engine_tcase(const char *name);
/* Connects with @nr I/O queues of 32 (connect_with: one), reconnecting
 * after a failure for @ctrl_loss_s (0: not at all). */
void connect_queues(uint8_t mdts, int ctrl_loss_s, unsigned int nr);
void connect_with(uint8_t mdts, int ctrl_loss_s);
/* @workers workers with @depth buffers each, one I/O queue each
 * (engine_create: one worker). */
void engine_create_workers(unsigned int workers, unsigned int depth);
void engine_create(unsigned int depth);
void engine_start(void);
/* Stops the engine, checks every buffer came back and no reservation is
 * left, and disconnects. */
void finish(void);
/* The front end sends a request for cookie @cookie, with @payload for a write. */
void send_req(enum exp_op op, uint64_t off, uint32_t size, unsigned int cookie,
	      const uint8_t *payload);
/* Waits up to @max_ms for cookie @i's completion; then, a little longer,
 * that no second one comes. */
struct done wait_done(unsigned int i, int max_ms);
/* A pattern of @len bytes from @seed. */
void fill(uint8_t *p, size_t len, uint8_t seed);
/* A request posted to @worker, as FUSE over io_uring's entries are: its
 * thread starts it (exp_worker_post()) once the worker has a buffer free. */
void post(unsigned int worker, struct exp_post *p, enum exp_op op, uint64_t off, size_t size,
	  unsigned int cookie, const void *data, bool copy, void *read_buf, size_t read_room);
/* Posts to @worker its thread has not started yet. */
unsigned int posts_waiting(unsigned int worker);

/* An engine with @depth buffers whose controller reconnects for 10 s when
 * it fails, one attempt refused, then back: the caller scripts the I/O
 * that goes once it is, then calls hold_namespace().  The refused attempt
 * waits for ctrl_back(), so the namespace stays held however slowly a
 * loaded host lets the test look at it.  Returns its queue. */
struct nvmefs_ioq *outage_engine(unsigned int depth);
/* Lets outage_engine()'s controller go on past its refused attempt. */
void ctrl_back(void);
/* Starts the engine and fails the connection: @q holds namespace 1. */
void hold_namespace(struct nvmefs_ioq *q);

/* check_engine_post.c's tests: requests posted on the workers' threads. */
TCase *engine_post_tcase(void);
/* check_engine_outage.c's tests. */
TCase *engine_outage_tcase(void);
/* check_engine_spin.c's tests: whether a worker polls or sleeps. */
TCase *engine_spin_tcase(void);

#endif /* NVMEFS_TESTS_ENGINE_HARNESS_H */
