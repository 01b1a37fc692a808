/*
 * The harness of check_engine (the export engine without FUSE), shared by
 * its tests of requests read from the source (check_engine.c) and posted
 * from other threads (check_engine_post.c).
 */
#ifndef NVMEFS_TESTS_ENGINE_HARNESS_H
#define NVMEFS_TESTS_ENGINE_HARNESS_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <check.h>
#include <nvme/types.h>

#include "fake_transport.h"
#include "../../src/export/engine.h"
#include "../../src/export/export_priv.h"

#define TRADDR "192.0.2.20"
#define SUBNQN "nqn.2024-01.io.example:io"
#define CNTLID 0x0021
#define CAP_MQES_1023 0x00000000010003ffULL
/* 2^2 pages of 4 KiB: 16 KiB, 32 blocks of 512 bytes, per command. */
#define MDTS_16K 2
#define MDTS_1M 8
#define MAX_IO (64u << 10)
#define NR_COOKIES 4

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

struct engine_test {
	pthread_mutex_t lock;
	struct done done[NR_COOKIES];
	unsigned int dispatched, refused;
	struct exp_ns ns;
	int sock[2];
	struct nvmefs_ctrl *ctrl;
	/* The head of that one path, which the engine sends through. */
	struct nvmefs_subsys *head;
	struct exp *e;
};
extern struct engine_test t;

/* The harness (check_engine.c, which says what each does). */
int64_t now_ms(void);
/* One path to the scripted target, its one I/O queue of 32, and the head;
 * @ctrl_loss_s: reconnect for that long (1 s apart). */
void connect_with(uint8_t mdts, int ctrl_loss_s);
void engine_create(unsigned int depth);
void engine_start(void);
void finish(void);
void send_req(enum exp_op op, uint64_t off, uint32_t size, unsigned int cookie,
	      const uint8_t *payload);
struct done wait_done(unsigned int i, int max_ms);
void fill(uint8_t *p, size_t len, uint8_t seed);
struct nvmefs_ioq *outage_engine(unsigned int depth);
void hold_namespace(struct nvmefs_ioq *q);

/* check_engine_post.c: requests posted from other threads (FUSE over io_uring). */
void engine_post_tests(TCase *tc);

#endif
