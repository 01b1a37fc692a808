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

/* Set before any thread logs, and not after. */
static const char *log_prefix;

void exp_log_stderr(const char *prefix)
{
	log_prefix = prefix;
}

static void vlog(int prio, const char *fmt, va_list ap)
{
	char line[1100];
	va_list copy;

	if (log_prefix) {
		/* One write a line: threads log at once. */
		va_copy(copy, ap);
		vsnprintf(line, sizeof(line), fmt, copy);
		va_end(copy);
		fprintf(stderr, "%s: %s\n", log_prefix, line);
	}
	vsyslog(prio, fmt, ap);
}

void exp_logp(int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(prio, fmt, ap);
	va_end(ap);
}

void exp_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_ERR, fmt, ap);
	va_end(ap);
}
