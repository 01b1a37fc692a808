/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef NVMEFS_ERROR_H
#define NVMEFS_ERROR_H

/* The calling thread's message for nvmefs_errmsg(). */
__attribute__((format(printf, 1, 2)))
void nvmefs_set_error(const char *fmt, ...);
/* As nvmefs_set_error(), and returns @err (a -errno) for `return ...;`. */
__attribute__((format(printf, 2, 3)))
int nvmefs_error(int err, const char *fmt, ...);

#endif /* NVMEFS_ERROR_H */
