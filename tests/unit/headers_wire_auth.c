/* <nvmefs/wire_auth.h> must compile first and alone, and survive a second include. */
#include <nvmefs/wire_auth.h>
#include <nvmefs/wire_auth.h>

size_t headers_wire_auth_size(void);

size_t headers_wire_auth_size(void)
{
	return sizeof(struct nvmefs_dhchap_negotiate) + sizeof(struct nvmefs_dhchap_failure);
}
