/* <nvmefs/transport.h> must compile first and alone, and survive a second include. */
#include <nvmefs/transport.h>
#include <nvmefs/transport.h>

size_t headers_transport_size(void);

size_t headers_transport_size(void)
{
	return sizeof(struct nvmefs_transport_info) + sizeof(NVMEFS_TCP_DISCOVERY_TRSVCID);
}
