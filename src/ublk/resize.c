/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A device's size follows its namespace's when the target resizes it (a
 * Namespace Attribute Changed event, what a reconnect finds, or what a
 * daemon taking a device over finds), as the kernel initiator's does.
 * Kernels from 6.16 resize a started ublk device (UBLK_F_UPDATE_SIZE); on
 * older ones the device keeps its size, and the daemon says so.
 */
#include "config.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>

#include "ublk_priv.h"

uint64_t ublk_features(void)
{
	uint64_t f = 0;

	/* Kernels before 6.5 have no GET_FEATURES: they offer none of these. */
	if (ublk_ctrl_cmd(UBLK_U_CMD_GET_FEATURES, -1, &f, sizeof(f), 0) < 0)
		return 0;
	return f;
}

/* Device @d, of @old bytes in the kernel, made its namespace's size where
 * the kernel can resize it; else the daemon says so. */
static void resize_to(struct ublk_server *s, struct ublk_dev *d, uint64_t old)
{
	uint64_t size = atomic_load(&d->ns.size);
	int ret;

	if (size == old)
		return;
	if (!(s->features & UBLK_F_UPDATE_SIZE)) {
		exp_logp(LOG_WARNING, "/dev/ublkb%d keeps %" PRIu64 " bytes while namespace %u now has %"
			 PRIu64 ": this kernel cannot resize a ublk device (UBLK_F_UPDATE_SIZE, Linux "
			 "6.16): delete the device and add it again to see the new size", d->id, old,
			 d->ns.nsid, size);
		return;
	}
	ret = ublk_ctrl_cmd(UBLK_U_CMD_UPDATE_SIZE, d->id, NULL, 0, size >> 9);
	if (ret < 0)
		exp_logp(LOG_WARNING, "resizing /dev/ublkb%d to %" PRIu64 " bytes (namespace %u was "
			 "resized on the target) failed: %s: delete the device and add it again",
			 d->id, size, d->ns.nsid, strerror(-ret));
	else
		exp_logp(LOG_NOTICE, "/dev/ublkb%d: namespace %u resized on the target from %" PRIu64
			 " to %" PRIu64 " bytes", d->id, d->ns.nsid, old, size);
}

static void follow(struct ublk_server *s, struct ublk_dev *d)
{
	uint64_t old;

	/* The engine's size first (exp_ns_follow()), before the kernel's:
	 * once that shrinks no request passes the new end, and until then the
	 * engine fails those that do. */
	switch (exp_ns_follow(s->ctrl, &d->ns, &old)) {
	case EXP_NS_SAME:
		return;
	case EXP_NS_GONE:
		exp_logp(LOG_WARNING, "/dev/ublkb%d: namespace %u was removed or replaced on the target: "
			 "its I/O fails; 'nvmefs ublk del' the device", d->id, d->ns.nsid);
		ublk_record(s, d);
		return;
	case EXP_NS_BACK:
		exp_logp(LOG_NOTICE, "/dev/ublkb%d: namespace %u is back on the target", d->id,
			 d->ns.nsid);
		ublk_record(s, d);
		break;
	case EXP_NS_RESIZED:
		break;
	}
	resize_to(s, d, old);
}

void ublk_size_check(struct ublk_server *s, struct ublk_dev *d)
{
	unsigned long long sectors;
	char path[48];
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/sys/block/ublkb%d/size", d->id);
	f = fopen(path, "re");
	if (!f)
		return;
	n = fscanf(f, "%llu", &sectors);
	fclose(f);
	if (n == 1 && sectors <= UINT64_MAX >> 9)
		resize_to(s, d, (uint64_t)sectors << 9);
}

void ublk_namespaces_changed(void *arg, enum nvmefs_ctrl_change what)
{
	struct ublk_server *s = arg;

	if (what != NVMEFS_CHANGE_NAMESPACES)
		return;
	for (unsigned int i = 0; i < s->nr_dev; i++)
		if (s->dev[i].started)
			follow(s, &s->dev[i]);
}
