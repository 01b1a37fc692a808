/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fuzz_tcp_tls's target end (tls_pipe.c). */
#ifndef NVMEFS_FUZZ_TLS_PIPE_H
#define NVMEFS_FUZZ_TLS_PIPE_H

#include <stddef.h>
#include <stdint.h>

struct nvmefs_queue;

/* @size bytes from the target to queue @q, in TLS records of @record bytes,
 * received through the host's TLS stream into where @q's receive machine
 * says; @sent after each receive, as fuzz_tcp's send_all.  Ends when every
 * byte was received, or @q failed (the rest is read and dropped). */
void tls_pipe_deliver(struct nvmefs_queue *q, const uint8_t *data, size_t size, size_t record,
		      void (*sent)(struct nvmefs_queue *q));

#endif
