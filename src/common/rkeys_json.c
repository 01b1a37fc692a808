/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include "rkeys_json.h"

void rkeys_json(struct json *j, const struct nvmefs_rkey_stats *st)
{
	json_object_begin(j, "remote_keys");
	json_bool(j, "per_io", st->per_io);
	json_uint(j, "bound", st->bound);
	json_uint(j, "invalidated_by_target", st->invalidated_by_target);
	json_uint(j, "invalidated_locally", st->invalidated_locally);
	json_object_end(j);
}
