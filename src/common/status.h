/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What a failed I/O's status says to a user, for the CLI and the mount alike. */
#ifndef NVMEFS_COMMON_STATUS_H
#define NVMEFS_COMMON_STATUS_H

/*
 * @status: an NVMe status (15 bits without the phase, > 0) or a -errno.
 * libnvme's text of the status, or strerror(); for a status whose usual
 * cause libnvme's text does not tell (Internal Path Error, what nvmet
 * answers for a namespace disabled on it), why and what to do.
 */
const char *status_text(int status);

#endif /* NVMEFS_COMMON_STATUS_H */
