/*
 * Every public header in one translation unit: a program may include any
 * of them together, so what each declares must not clash with another's
 * (in C99, even the typedefs behind NVMEFS_WIRE_ASSERT()).
 */
#include <nvmefs/nvmefs.h>
#include <nvmefs/wire.h>
#include <nvmefs/wire_auth.h>
#include <nvmefs/wire_rdma.h>
#include <nvmefs/wire_tcp.h>

size_t headers_all_wire_size(void);

size_t headers_all_wire_size(void)
{
	return sizeof(struct nvmefs_dhchap_negotiate) + sizeof(struct nvmefs_rdma_cm_req) +
		sizeof(struct nvmefs_tcp_icreq);
}
