/* <nvmefs/subsys.h> must compile first and alone, and survive a second include. */
#include <nvmefs/subsys.h>
#include <nvmefs/subsys.h>

size_t headers_subsys_size(void);

size_t headers_subsys_size(void)
{
	return sizeof(struct nvmefs_path_stats) + sizeof(enum nvmefs_iopolicy);
}
