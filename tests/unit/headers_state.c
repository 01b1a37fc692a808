/* <nvmefs/state.h> must compile first and alone, and survive a second include. */
#include <nvmefs/state.h>
#include <nvmefs/state.h>

#include <stddef.h>

size_t headers_state_size(void);

size_t headers_state_size(void)
{
	return sizeof(struct nvmefs_ctrl_status) + sizeof(nvmefs_ctrl_change_cb);
}
