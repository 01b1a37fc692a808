/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One message per thread about the last failure, as libnbd does: callers
 * get a -errno to branch on and a sentence to show a person.
 */
#include <stdarg.h>
#include <stdio.h>

#include "error.h"
#include "nvmefs/nvmefs.h"

static _Thread_local char errmsg[1024];

const char *nvmefs_errmsg(void)
{
	return errmsg[0] ? errmsg : "no error";
}

void nvmefs_set_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(errmsg, sizeof(errmsg), fmt, ap);
	va_end(ap);
}

int nvmefs_error(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(errmsg, sizeof(errmsg), fmt, ap);
	va_end(ap);
	return err;
}
