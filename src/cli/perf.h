/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Running nvmefs perf (perf.c), for its command line (perf_args.c). */
#ifndef NVMEFS_CLI_PERF_H
#define NVMEFS_CLI_PERF_H

#include "perf_types.h"

/* Connects, runs the workload @a describes (perf_args.c checked and
 * completed it) and reports it; an EXIT_ code. */
int perf_run(struct perf_args *a);

#endif /* NVMEFS_CLI_PERF_H */
