/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What per-I/O remote keys went through, as the "remote_keys" object that
 * perf's JSON and the mount's stats print alike (doc/JSON.md).
 */
#ifndef NVMEFS_COMMON_RKEYS_JSON_H
#define NVMEFS_COMMON_RKEYS_JSON_H

#include <nvmefs/nvmefs.h>

#include "json.h"

void rkeys_json(struct json *j, const struct nvmefs_rkey_stats *st);

#endif /* NVMEFS_COMMON_RKEYS_JSON_H */
