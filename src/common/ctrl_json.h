/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A controller's members that several JSON outputs print alike: where it
 * is, and what per-I/O remote keys went through (doc/JSON.md).
 */
#ifndef NVMEFS_COMMON_CTRL_JSON_H
#define NVMEFS_COMMON_CTRL_JSON_H

#include <nvmefs/nvmefs.h>

#include "json.h"

/* "trtype", "traddr", "trsvcid", and "tls" (its suite) on a secure channel. */
void ctrl_address_json(struct json *j, const struct nvmefs_ctrl *ctrl);
/* The "remote_keys" object of perf's JSON and the mount's stats. */
void rkeys_json(struct json *j, const struct nvmefs_rkey_stats *st);

#endif /* NVMEFS_COMMON_CTRL_JSON_H */
