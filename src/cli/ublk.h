/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nvmefs ublk's commands, shared by ublk.c (list, del, stats and the
 * devices' records) and ublk_add.c (add and recover, which start a daemon).
 */
#ifndef NVMEFS_CLI_UBLK_H
#define NVMEFS_CLI_UBLK_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon.h"
#include "../ublk/devices.h"

/* A device a daemon recorded (serve.c), still served by it. */
struct rec {
	int id;
	char nqn[256];
	unsigned int nsid;
	long pid;
	/* Its namespace was removed or replaced on the target: its I/O fails. */
	bool gone;
	/* Its daemon died (SIGKILL) without deleting it: the kernel stopped
	 * the device and keeps it, with no server, until DEL_DEV; or, added
	 * with --recovery, @quiesced: keeps it whole, its I/O waiting for a
	 * daemon to take it over (recover). */
	bool dead, quiesced;
};

/* Device @id's record, if the device exists and the daemon that recorded
 * it still serves it, or died: 0, else -ENOENT. */
int rec_read(int id, struct rec *r);
/* Every recorded device, by id; *@nr of them. */
struct rec *rec_all(unsigned int *nr);
/* A device as del, stats and recover take it, /dev/ublkbN or N: 0 and its
 * number in *@id, or -EINVAL. */
int parse_dev(const char *what, int64_t *id);
/* The --help of every ublk subcommand. */
void ublk_help(void);

int ublk_add(int argc, char **argv);
int ublk_recover(int argc, char **argv);

#endif /* NVMEFS_CLI_UBLK_H */
