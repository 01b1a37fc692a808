/* <nvmefs/ctrl.h> must compile first and alone, and survive a second include. */
#include <nvmefs/ctrl.h>
#include <nvmefs/ctrl.h>

size_t headers_ctrl_size(void);

size_t headers_ctrl_size(void)
{
	return sizeof(struct nvmefs_connect_opts) + sizeof(struct nvmefs_rkey_stats);
}
