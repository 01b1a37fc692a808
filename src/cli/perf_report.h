/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* nvmefs perf's report (perf_report.c), for perf.c, and its workload names, for perf_args.c. */
#ifndef NVMEFS_CLI_PERF_REPORT_H
#define NVMEFS_CLI_PERF_REPORT_H

#include "perf_types.h"

/* The --rw names, by enum workload. */
extern const char *const workload_names[];

/* The report of a run: text or JSON (a->conn.fmt) on stdout; each path of
 * @subsys when it is multipath, and every path's per-I/O keys. */
void perf_report(const struct perf_args *a, const char *subnqn, struct worker *workers,
		 double elapsed, double user_s, double sys_s, const struct nvmefs_ctrl_status *cs,
		 struct nvmefs_subsys *subsys);

#endif /* NVMEFS_CLI_PERF_REPORT_H */
