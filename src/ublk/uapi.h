/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The ublk driver's interface as nvmefs uses it.  Debian 12's uapi header
 * (6.1) has the legacy command numbers only (user recovery's flags and
 * states too); the ioctl-encoded commands and user copy (6.5) are defined
 * here as the kernel defines them, and the kernels nvmefs runs on (6.12,
 * 7.x) take them.
 */
#ifndef NVMEFS_UBLK_UAPI_H
#define NVMEFS_UBLK_UAPI_H

#include <sys/ioctl.h>

#include <linux/ublk_cmd.h>

#include "devices.h"

#ifndef UBLK_U_CMD_ADD_DEV
#define UBLK_U_CMD_GET_DEV_INFO _IOR('u', UBLK_CMD_GET_DEV_INFO, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_ADD_DEV _IOWR('u', UBLK_CMD_ADD_DEV, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_DEL_DEV _IOWR('u', UBLK_CMD_DEL_DEV, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_START_DEV _IOWR('u', UBLK_CMD_START_DEV, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_STOP_DEV _IOWR('u', UBLK_CMD_STOP_DEV, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_SET_PARAMS _IOWR('u', UBLK_CMD_SET_PARAMS, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_START_USER_RECOVERY _IOWR('u', UBLK_CMD_START_USER_RECOVERY, \
					     struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_END_USER_RECOVERY _IOWR('u', UBLK_CMD_END_USER_RECOVERY, struct ublksrv_ctrl_cmd)
#define UBLK_U_IO_FETCH_REQ _IOWR('u', UBLK_IO_FETCH_REQ, struct ublksrv_io_cmd)
#define UBLK_U_IO_COMMIT_AND_FETCH_REQ _IOWR('u', UBLK_IO_COMMIT_AND_FETCH_REQ, \
					     struct ublksrv_io_cmd)
#endif
#ifndef UBLK_F_CMD_IOCTL_ENCODE
#define UBLK_F_CMD_IOCTL_ENCODE (1ULL << 6)
#endif
#ifndef UBLK_F_USER_COPY
#define UBLK_F_USER_COPY (1ULL << 7)
#endif
/* GET_FEATURES (6.5): what the running kernel offers.  UPDATE_SIZE
 * (6.16): a started device's size, in sectors, in data[0]. */
#ifndef UBLK_U_CMD_GET_FEATURES
#define UBLK_U_CMD_GET_FEATURES _IOR('u', 0x13, struct ublksrv_ctrl_cmd)
#endif
#ifndef UBLK_U_CMD_UPDATE_SIZE
#define UBLK_U_CMD_UPDATE_SIZE _IOWR('u', 0x15, struct ublksrv_ctrl_cmd)
#endif
#ifndef UBLK_F_UPDATE_SIZE
#define UBLK_F_UPDATE_SIZE (1ULL << 10)
#endif
/* Where user copy reads and writes a request's data on /dev/ublkcN. */
#ifndef UBLK_TAG_OFF
#define UBLK_IO_BUF_BITS 25
#define UBLK_TAG_OFF UBLK_IO_BUF_BITS
#define UBLK_TAG_BITS 16
#define UBLK_QID_OFF (UBLK_TAG_OFF + UBLK_TAG_BITS)
#endif

/* The kernel's numbers, which the definitions above must match. */
_Static_assert(UBLK_U_CMD_ADD_DEV == 0xc0207504, "UBLK_U_CMD_ADD_DEV");
_Static_assert(UBLK_U_CMD_GET_DEV_INFO == 0x80207502, "UBLK_U_CMD_GET_DEV_INFO");
_Static_assert(UBLK_U_CMD_GET_FEATURES == 0x80207513, "UBLK_U_CMD_GET_FEATURES");
_Static_assert(UBLK_U_CMD_UPDATE_SIZE == 0xc0207515, "UBLK_U_CMD_UPDATE_SIZE");
_Static_assert(UBLK_U_CMD_START_USER_RECOVERY == 0xc0207510, "UBLK_U_CMD_START_USER_RECOVERY");
_Static_assert(UBLK_U_CMD_END_USER_RECOVERY == 0xc0207511, "UBLK_U_CMD_END_USER_RECOVERY");
_Static_assert(UBLK_F_USER_RECOVERY == 1ULL << 3 && UBLK_F_USER_RECOVERY_REISSUE == 1ULL << 4,
	       "UBLK_F_USER_RECOVERY");
_Static_assert(UBLK_S_DEV_QUIESCED == 2, "UBLK_S_DEV_QUIESCED");
_Static_assert(UBLK_U_IO_FETCH_REQ == 0xc0107520, "UBLK_U_IO_FETCH_REQ");
_Static_assert(UBLK_U_IO_COMMIT_AND_FETCH_REQ == 0xc0107521, "UBLK_U_IO_COMMIT_AND_FETCH_REQ");
_Static_assert(sizeof(struct ublksrv_ctrl_cmd) == 32, "struct ublksrv_ctrl_cmd");
_Static_assert(sizeof(struct ublksrv_io_cmd) == 16, "struct ublksrv_io_cmd");
_Static_assert(sizeof(struct ublksrv_io_desc) == 24, "struct ublksrv_io_desc");
_Static_assert(UBLK_QID_OFF == 41, "UBLK_QID_OFF");
_Static_assert(NVMEFS_UBLK_MAX_DEPTH == UBLK_MAX_QUEUE_DEPTH, "NVMEFS_UBLK_MAX_DEPTH");

#endif /* NVMEFS_UBLK_UAPI_H */
