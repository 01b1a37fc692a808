/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <string.h>

#include <nvme/types.h>
#include <nvme/util.h>

#include "status.h"

const char *status_text(int status)
{
	if (status < 0)
		return strerror(-status);
	/* libnvme's "internal error specific to the controller" sends the
	 * user to the wrong place: nvmet (nvmet_req_find_ns()) answers it,
	 * without Do Not Retry, for a namespace of the subsystem that is
	 * disabled, for a host with another path to try.  Linux's host holds
	 * the I/O until a rescan finds the namespace gone, then fails it with
	 * EIO ("no available path"). */
	if ((status & 0x7ff) == ((NVME_SCT_PATH << NVME_SCT_SHIFT) | NVME_SC_ANA_INTERNAL_PATH_ERROR))
		return "Internal Path Error (NVMe status 0x300): the target has no path to the "
		       "namespace, as Linux's nvmet answers while the namespace is disabled on it: "
		       "enable the namespace on the target, or give another path";
	return nvme_status_to_string(status, false);
}
