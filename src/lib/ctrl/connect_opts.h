/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* struct nvmefs_connect_opts across versions (connect_opts.c). */
#ifndef NVMEFS_CONNECT_OPTS_H
#define NVMEFS_CONNECT_OPTS_H

#include <stddef.h>

#include "nvmefs/nvmefs.h"

struct nvmefs_transport_ops;

/* The size of struct nvmefs_connect_opts in 0.2, the first with a size
 * field: no caller's is smaller.  Fields added later follow trtype. */
#define NVMEFS_CONNECT_OPTS_SIZE_0_2 \
	(offsetof(struct nvmefs_connect_opts, trtype) + sizeof(const char *))
/*
 * The current versions of the functions whose struct nvmefs_connect_opts
 * grew a size in 0.2 (this one, nvmefs_ctrl_connect_0_2() in ctrl.h,
 * nvmefs_discover_0_2() in discovery.h): each binds the public name at
 * NVMEFS_0.2, the default; abi_0_1.c binds it at NVMEFS_0.1 to one taking
 * 0.1's layout.  Callers, in the library or linked with it, use the public
 * names.
 */
#define NVMEFS_SYMVER(impl, name_at_version) \
	__asm__(".symver " #impl ", " name_at_version)
void nvmefs_connect_opts_init_0_2(struct nvmefs_connect_opts *opts);

/*
 * The caller's options @in, of whatever version, as this library's @out:
 * fields past in->size take their defaults, and trtype names the
 * transport, set in *@ops.  Also checks what can be checked without
 * connecting (the form of the addresses, the NQNs, the secrets): -EINVAL
 * saying which is wrong.
 */
int nvmefs_connect_opts_take(const struct nvmefs_connect_opts *in,
			     struct nvmefs_connect_opts *out,
			     const struct nvmefs_transport_ops **ops);

#endif /* NVMEFS_CONNECT_OPTS_H */
