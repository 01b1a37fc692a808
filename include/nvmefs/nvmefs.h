/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file nvmefs.h
 * @brief nvmefs: a userspace NVMe-over-Fabrics initiator.
 *
 * A controller is an opaque handle reached from userspace over a fabrics
 * transport (RDMA, through librdmacm/libibverbs, or NVMe/TCP): connect to
 * a discovery controller or to an NVM subsystem, read what it offers,
 * disconnect.  The one header programs include; its parts, each of one
 * layer of the library and each compiling alone:
 *
 *   <nvmefs/error.h>         the calling thread's failure message
 *   <nvmefs/transport.h>     the transports, their ports and the options each takes
 *   <nvmefs/connect_opts.h>  connect options, their defaults and checks
 *   <nvmefs/ctrl.h>          the controller handle: connect, disconnect, what it has
 *   <nvmefs/identify.h>      Identify, log pages, ANA states, discovery
 *   <nvmefs/state.h>         the controller's state, its transition and change callbacks
 *   <nvmefs/io.h>            I/O queues, namespaces, registered memory, I/O on a queue
 *   <nvmefs/subsys.h>        multipath: the subsystem head and its queues
 *
 * Every function that can fail returns 0 or a negative errno.  It also
 * leaves a one-line message for the calling thread, readable with
 * nvmefs_errmsg(), that says what failed, why, and what to do.
 *
 * A controller handle is used by one thread at a time.
 *
 * The headers must compile on their own as C99 and as C11: a unit test
 * builds each in both modes with -pedantic-errors.
 */
#ifndef NVMEFS_NVMEFS_H
#define NVMEFS_NVMEFS_H

/** Major version: bumped on incompatible API changes. */
#define NVMEFS_VERSION_MAJOR 0
/** Minor version: bumped on compatible additions. */
#define NVMEFS_VERSION_MINOR 1
/** The version as a string, equal to the package version configure knows. */
#define NVMEFS_VERSION "0.1"
/** The version as one comparable number, e.g. 0x000100 for 0.1. */
#define NVMEFS_VERSION_NUMBER \
	((NVMEFS_VERSION_MAJOR << 16) | (NVMEFS_VERSION_MINOR << 8))

#include <nvmefs/error.h>
#include <nvmefs/transport.h>
#include <nvmefs/connect_opts.h>
#include <nvmefs/ctrl.h>
#include <nvmefs/identify.h>
#include <nvmefs/state.h>
#include <nvmefs/io.h>
#include <nvmefs/subsys.h>

#endif /* NVMEFS_NVMEFS_H */
