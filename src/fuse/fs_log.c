/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The FUSE side's failures: why nvmefs_fs_run() failed, and the daemon's log. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <syslog.h>

#include "fs_priv.h"

/* Why nvmefs_fs_run() failed: its own reasons, or the library's. */
static char fs_msg[1100];

int fs_error(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(fs_msg, sizeof(fs_msg), fmt, ap);
	va_end(ap);
	return err;
}

int lib_error(int err)
{
	snprintf(fs_msg, sizeof(fs_msg), "%s", nvmefs_errmsg());
	return err;
}

const char *nvmefs_fs_errmsg(void)
{
	return fs_msg;
}

void fs_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsyslog(LOG_ERR, fmt, ap);
	va_end(ap);
}
