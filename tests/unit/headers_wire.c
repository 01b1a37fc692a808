/* <nvmefs/wire.h> must compile first and alone, and survive a second include. */
#include <nvmefs/wire.h>
#include <nvmefs/wire.h>

size_t headers_wire_sqe_size(void);

size_t headers_wire_sqe_size(void)
{
	return sizeof(union nvmefs_cmd) + sizeof(struct nvmefs_cqe);
}
