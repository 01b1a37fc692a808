/* <nvmefs/io.h> must compile first and alone, and survive a second include. */
#include <nvmefs/io.h>
#include <nvmefs/io.h>

size_t headers_io_size(void);

size_t headers_io_size(void)
{
	return sizeof(struct nvmefs_io_opts) + sizeof(struct nvmefs_ns_info);
}
