/* <nvmefs/connect_opts.h> must compile first and alone, and survive a second include. */
#include <nvmefs/connect_opts.h>
#include <nvmefs/connect_opts.h>

size_t headers_connect_opts_size(void);

size_t headers_connect_opts_size(void)
{
	return sizeof(struct nvmefs_connect_opts) + NVMEFS_DEFAULT_ADMIN_QUEUE_SIZE;
}
