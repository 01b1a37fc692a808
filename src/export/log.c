/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The export's failures: why setting it up failed, and the daemon's log. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <syslog.h>

#include "engine.h"

/* Why exp_create() or the front end's setup failed: its own reasons, or the library's. */
static char exp_msg[1100];

int exp_error(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(exp_msg, sizeof(exp_msg), fmt, ap);
	va_end(ap);
	return err;
}

int exp_lib_error(int err)
{
	snprintf(exp_msg, sizeof(exp_msg), "%s", nvmefs_errmsg());
	return err;
}

const char *exp_errmsg(void)
{
	return exp_msg;
}

void exp_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsyslog(LOG_ERR, fmt, ap);
	va_end(ap);
}
