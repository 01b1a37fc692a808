/* <nvmefs/wire_rdma.h> must compile first and alone, and survive a second include. */
#include <nvmefs/wire_rdma.h>
#include <nvmefs/wire_rdma.h>

size_t headers_wire_rdma_cm_size(void);

size_t headers_wire_rdma_cm_size(void)
{
	return sizeof(struct nvmefs_rdma_cm_req) + sizeof(struct nvmefs_rdma_cm_rep);
}
