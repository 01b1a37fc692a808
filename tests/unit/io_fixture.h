/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the unit tests of the I/O path (check_io*.c, check_namespaces.c,
 * check_rdma_sgl.c) share: a controller of the scripted transport with I/O
 * queues, its limits spelled out, completions recorded, the outage's
 * reconnect scripted, and the one main they run.
 */
#ifndef NVMEFS_TESTS_IO_FIXTURE_H
#define NVMEFS_TESTS_IO_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <check.h>
#include <nvme/util.h>

#include "fake_transport.h"
#include "test_util.h"
#include "rdma/rdma_sgl.h"
#include "lifecycle/ctrl.h"
#include "state/ctrl_state.h"
#include "types/ctrl_types.h"
#include "io/ioq.h"
#include "transport/mr.h"
#include "types/transport_ops.h"

#define TRADDR "192.0.2.20"
#define SUBNQN "nqn.2024-01.io.example:io"
#define CNTLID 0x0021
/* CAP by hand from the NVMe base spec: MQES 1023 (0's based, bits 15:0),
 * TO 1 (bits 31:24), MPSMIN 0 (4 KiB). */
#define CAP_MQES_1023 0x00000000010003ffULL
/* MQES 15: queues of at most 16 entries. */
#define CAP_MQES_15 0x000000000100000fULL
/* MDTS in units of 4 KiB (MPSMIN 0): 4096 << 8 = 1 MiB, 4096 << 1 = 8 KiB. */
#define MDTS_1M 8
#define MDTS_8K 1
#define MIB (1u << 20)
/* A starting block above 32 bits, so CDW11 is not 0. */
#define SLBA_HI 0x100000008ULL

/* One namespace of 2^33 512-byte blocks. */
extern const struct fake_ns default_ns[1];

/* CLOCK_MONOTONIC in milliseconds. */
int64_t now_ms(void);

/* A keyed data block, byte by byte: address 0..7, 24-bit length 8..10,
 * key 11..14, type 4 subtype 0 in byte 15. */
#define assert_keyed(sgl, addr, len, key) assert_keyed_at(__LINE__, (sgl), (addr), (len), (key))
void assert_keyed_at(int line, const struct nvmefs_sgl *sgl, const void *addr,
		     uint32_t len, uint32_t key);

/* The null descriptor of a command without data: a keyed block of zeros. */
#define assert_null_sgl(sgl) assert_null_sgl_at(__LINE__, (sgl))
void assert_null_sgl_at(int line, const struct nvmefs_sgl *sgl);

/* In-capsule data: a data block (type 0) with subtype 1 (offset), at offset
 * 0 of the capsule's data, its 32-bit length in bytes 8..11. */
#define assert_inline_sgl(sgl, len) assert_inline_sgl_at(__LINE__, (sgl), (len))
void assert_inline_sgl_at(int line, const struct nvmefs_sgl *sgl, uint32_t len);

/* Completions: how often, with what, in which order. */
struct cb_rec {
	unsigned int calls;
	int status;
	unsigned int order;
};

/* An I/O callback that records its completion in the struct cb_rec @arg. */
void on_io(void *arg, int status);

/* Connect to an NVM subsystem of version @vs: Keep Alive only when
 * @kato_ms is not 0. */
struct nvmefs_ctrl *connect_io_vs(uint8_t mdts, uint64_t cap, uint32_t ioccsz,
				  uint32_t kato_ms, uint32_t vs);

/* The same, NVMe 1.4: no Identify CNS 06h. */
struct nvmefs_ctrl *connect_io(uint8_t mdts, uint64_t cap, uint32_t ioccsz,
			       uint32_t kato_ms);

/* @nr queues of @size entries on namespace 1 (512-byte blocks). */
void create_ioqs(struct nvmefs_ctrl *ctrl, unsigned int nr, unsigned int size,
		 unsigned int timeout_ms);

/* Disconnect with @nr I/O queues; a failed controller is not shut down. */
void disconnect_io(struct nvmefs_ctrl *ctrl, unsigned int nr, bool failed);

/* Page-aligned memory, filled with @fill, registered with @ctrl. */
uint8_t *reg_buf(struct nvmefs_ctrl *ctrl, size_t len, uint8_t fill,
		 struct nvmefs_mr **mr);

/* A read of blocks 0-7 on @ctrl's one new I/O queue, its response held back. */
struct nvmefs_ioq *read_held(struct nvmefs_ctrl *ctrl, struct cb_rec *rec, void **buf);

/* Connect to @t, reconnecting after a failure as @ctrl_loss_s says, admin
 * commands timing out after @timeout_ms (0: the default). */
struct nvmefs_ctrl *connect_recovering_to(const struct fake_target *t, int ctrl_loss_s,
					  unsigned int timeout_ms);

/* Connect as connect_io(), reconnecting after a failure as @ctrl_loss_s says. */
struct nvmefs_ctrl *connect_recovering(int ctrl_loss_s);

/* A reconnect attempt that gets through for @asked I/O queues of @size, of
 * which the controller now grants @granted, namespace 1 identifying as @id;
 * returns its admin Connect's step. */
struct fake_step *script_attempt_queues(unsigned int size, const struct nvme_id_ns *id,
					unsigned int asked, unsigned int granted);

/* The same for the one I/O queue asked for and granted. */
struct fake_step *script_attempt(unsigned int size, const struct nvme_id_ns *id);

/* What the controller's thread does to reconnect one I/O queue of @size,
 * namespace 1 identifying as @id: tear both queues down, then an attempt. */
void script_reconnect(unsigned int size, const struct nvme_id_ns *id);

/* Polls @q as a FUSE worker does, without waiting, until @r is called. */
void poll_until(struct nvmefs_ioq *q, const struct cb_rec *r, int max_ms);

/* The next reconnect attempt finds nothing listening (its port not linked
 * yet): refused at once. */
void script_refused_attempt(void);

/* Runs @s, every case of it, or under ThreadSanitizer only its "races" case
 * (threads sharing a controller's state): the others would only take its
 * time.  Returns the exit status. */
int io_check_main(Suite *s);

#endif /* NVMEFS_TESTS_IO_FIXTURE_H */
