/*
 * Built twice, as -std=c99 and -std=c11 with -pedantic-errors, together
 * with one translation unit per public header: passing means the headers
 * are self-contained and strict-C clean in both modes.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <nvmefs/nvmefs.h>

int headers_nvmefs_version(void);
size_t headers_wire_sqe_size(void);
size_t headers_wire_rdma_cm_size(void);
size_t headers_wire_tcp_pdu_size(void);
size_t headers_wire_auth_size(void);
size_t headers_all_wire_size(void);
size_t headers_error_size(void);
size_t headers_transport_size(void);
size_t headers_connect_opts_size(void);
size_t headers_ctrl_size(void);
size_t headers_identify_size(void);
size_t headers_state_size(void);
size_t headers_io_size(void);
size_t headers_subsys_size(void);

int main(void)
{
	char v[32];

	/* The header's version is typed by hand; keep it in step with configure. */
	if (strcmp(NVMEFS_VERSION, PACKAGE_VERSION) != 0) {
		fprintf(stderr, "NVMEFS_VERSION %s != PACKAGE_VERSION %s\n",
			NVMEFS_VERSION, PACKAGE_VERSION);
		return 1;
	}
	snprintf(v, sizeof(v), "%d.%d", headers_nvmefs_version() >> 16,
		 (headers_nvmefs_version() >> 8) & 0xff);
	if (strcmp(v, NVMEFS_VERSION) != 0) {
		fprintf(stderr, "NVMEFS_VERSION_NUMBER says %s, NVMEFS_VERSION %s\n",
			v, NVMEFS_VERSION);
		return 1;
	}
	if (headers_wire_sqe_size() != 64 + 16 || headers_wire_rdma_cm_size() != 32 + 32 ||
	    headers_wire_tcp_pdu_size() != 128 + 72 + 24 || headers_wire_auth_size() != 72 + 8 ||
	    headers_all_wire_size() != 72 + 32 + 128) {
		fprintf(stderr, "wire sizes differ in this language mode\n");
		return 1;
	}
	/* Each part of <nvmefs/nvmefs.h> alone declares what the whole does. */
	if (headers_error_size() != sizeof(&nvmefs_errmsg) ||
	    headers_transport_size() != sizeof(struct nvmefs_transport_info) +
					sizeof(NVMEFS_TCP_DISCOVERY_TRSVCID) ||
	    headers_connect_opts_size() != sizeof(struct nvmefs_connect_opts) +
					   NVMEFS_DEFAULT_ADMIN_QUEUE_SIZE ||
	    headers_ctrl_size() != sizeof(struct nvmefs_connect_opts) + sizeof(struct nvmefs_rkey_stats) ||
	    headers_identify_size() != sizeof(nvmefs_discovery_cb) + NVMEFS_NS_LIST_LEN * sizeof(uint32_t) ||
	    headers_state_size() != sizeof(struct nvmefs_ctrl_status) + sizeof(nvmefs_ctrl_change_cb) ||
	    headers_io_size() != sizeof(struct nvmefs_io_opts) + sizeof(struct nvmefs_ns_info) ||
	    headers_subsys_size() != sizeof(struct nvmefs_path_stats) + sizeof(enum nvmefs_iopolicy)) {
		fprintf(stderr, "a part of nvmefs.h differs alone from within nvmefs.h\n");
		return 1;
	}
	return 0;
}
