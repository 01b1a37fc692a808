/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file nvmefs.h
 * @brief nvmefs: a userspace NVMe-over-Fabrics RDMA initiator.
 *
 * This is the public entry point of the library.  The controller API
 * (opaque handles, 0/-errno returns) is not there yet; for now the header
 * only carries the version, so that users can already test for it.
 *
 * The header must compile on its own as C99 and as C11: a unit test
 * builds it in both modes with -pedantic-errors.
 */
#ifndef NVMEFS_NVMEFS_H
#define NVMEFS_NVMEFS_H

#ifdef __cplusplus
extern "C" {
#endif

/** Major version: bumped on incompatible API changes. */
#define NVMEFS_VERSION_MAJOR 0
/** Minor version: bumped on compatible additions. */
#define NVMEFS_VERSION_MINOR 1
/** The version as a string, equal to the package version configure knows. */
#define NVMEFS_VERSION "0.1"
/** The version as one comparable number, e.g. 0x000100 for 0.1. */
#define NVMEFS_VERSION_NUMBER \
	((NVMEFS_VERSION_MAJOR << 16) | (NVMEFS_VERSION_MINOR << 8))

#ifdef __cplusplus
}
#endif

#endif /* NVMEFS_NVMEFS_H */
