/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer harness: the decoders of bytes a target or the RDMA CM hands
 * us: the CM's accept, reject and request private data, an SGL descriptor,
 * and a completion's status.
 */
#include <stdint.h>
#include <string.h>

#include <nvmefs/wire.h>
#include <nvmefs/wire_rdma.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nvmefs_rdma_cm_params params;
	struct nvmefs_sgl_info info;
	struct nvmefs_sgl sgl;
	struct nvmefs_cqe cqe;
	uint16_t v;

	nvmefs_rdma_cm_rep_parse(data, size, &v);
	nvmefs_rdma_cm_rej_parse(data, size, &v);
	nvmefs_rdma_cm_req_parse(data, size, &params);
	if (size >= sizeof(sgl)) {
		memcpy(&sgl, data, sizeof(sgl));
		nvmefs_sgl_decode(&sgl, &info);
	}
	if (size >= sizeof(cqe)) {
		memcpy(&cqe, data, sizeof(cqe));
		(void)nvmefs_cqe_status_str(&cqe);
		(void)nvmefs_cqe_errno(&cqe);
	}
	if (size >= 2) {
		memcpy(&v, data, sizeof(v));
		(void)nvmefs_rdma_cm_reject_str(v);
	}
	return 0;
}
