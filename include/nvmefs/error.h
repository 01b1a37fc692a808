/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file error.h
 * @brief The calling thread's failure message.  Part of <nvmefs/nvmefs.h>.
 *
 * Every function of the library that can fail returns 0 or a negative
 * errno.  It also leaves a one-line message for the calling thread,
 * readable with nvmefs_errmsg(), that says what failed, why, and what to do.
 */
#ifndef NVMEFS_PUBLIC_ERROR_H
#define NVMEFS_PUBLIC_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

/**
 * The calling thread's message about its last failure: what failed, why,
 * and what to do, on one line without a trailing newline.  Never NULL.
 */
const char *nvmefs_errmsg(void);

#ifdef __cplusplus
}
#endif

#endif /* NVMEFS_PUBLIC_ERROR_H */
