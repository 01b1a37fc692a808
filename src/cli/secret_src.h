/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Where a command takes a secret from (a DH-HMAC-CHAP secret, a TLS PSK):
 * an option's value, a file only its owner can read, or an environment
 * variable, each copied into memory of its own and wiped at the source
 * where the process can, so that ps no longer shows it.  Each function
 * returns EXIT_OK, or EXIT_USAGE after a one-line message.
 */
#ifndef NVMEFS_CLI_SECRET_SRC_H
#define NVMEFS_CLI_SECRET_SRC_H

#include <stddef.h>

/* @size bytes of memory for secrets: a mapping of their own, locked where
 * the limit allows (never swapped), left out of core dumps.  NULL when
 * there is no memory. */
char *secret_page(size_t size);
/* Wipe and unmap; NULL is fine. */
void secret_page_free(char *page, size_t size);

/* @arg, given by @opt, copied into @buf (@size bytes) and overwritten with
 * 'x': ps showed it while the command started, and shows it no longer.
 * @what names the secret ("a DH-HMAC-CHAP secret") when it is too long. */
int secret_from_arg(const char *cmd, const char *opt, const char *what, char *arg, char *buf,
		    size_t size);

/* The contents of @path, given by @opt, into @buf: a regular file that no
 * one but its owner may read or write (the secret is as safe as that
 * account), less the newline an editor or 'CMD >FILE' leaves. */
int secret_from_file(const char *cmd, const char *opt, const char *what, const char *path,
		     char *buf, size_t size);

/* The environment variable @name into @buf, its value wiped in place and
 * the variable unset, so that neither /proc/PID/environ nor a child sees
 * it.  *@found tells whether it was set.  With @buf NULL, the variable is
 * only wiped: another source gave the secret. */
int secret_from_env(const char *cmd, const char *name, const char *what, char *buf,
		    size_t size, int *found);

#endif /* NVMEFS_CLI_SECRET_SRC_H */
