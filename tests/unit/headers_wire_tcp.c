/* <nvmefs/wire_tcp.h> must compile first and alone, and survive a second include. */
#include <nvmefs/wire_tcp.h>
#include <nvmefs/wire_tcp.h>

size_t headers_wire_tcp_pdu_size(void);

size_t headers_wire_tcp_pdu_size(void)
{
	return sizeof(struct nvmefs_tcp_icreq) + sizeof(struct nvmefs_tcp_cmd) +
		sizeof(struct nvmefs_tcp_data);
}
