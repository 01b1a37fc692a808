/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Private to libnvmefs: DH-HMAC-CHAP in-band authentication of a queue
 * (auth.c), the exchange of AUTH_Send and AUTH_Receive messages over the
 * cryptography of auth_crypto.c.
 */
#ifndef NVMEFS_AUTH_H
#define NVMEFS_AUTH_H

#include <stdint.h>

struct nvmefs_ctrl;
struct nvmefs_queue;
struct nvmefs_cqe;

/*
 * Parse the controller's secrets (DHHC-1 strings; either may be NULL) into
 * @ctrl, in locked memory.  A controller secret needs a host secret.  The
 * strings are not kept.
 */
int nvmefs_auth_init(struct nvmefs_ctrl *ctrl, const char *secret, const char *ctrl_secret);

/*
 * Whether nvmefs_auth_init() would take the secrets, checked without a
 * controller: 0, or -EINVAL for one that is malformed or a controller
 * secret without the host's (another -errno: no memory to parse them in).
 */
int nvmefs_auth_check(const char *secret, const char *ctrl_secret);

/*
 * After queue @q's Connect answered with @cqe: authenticate the queue if
 * the controller asks for it (AUTHREQ), as Linux does on every queue and
 * after every reconnect, or, unasked, if a controller secret is set.  0
 * when the queue may be used.
 */
int nvmefs_auth_connected(struct nvmefs_ctrl *ctrl, struct nvmefs_queue *q,
			  const struct nvmefs_cqe *cqe);

/* Wipe the secrets and free what authentication holds. */
void nvmefs_auth_release(struct nvmefs_ctrl *ctrl);

#endif /* NVMEFS_AUTH_H */
