/* <nvmefs/discovery.h> must compile first and alone, and survive a second include. */
#include <nvmefs/discovery.h>
#include <nvmefs/discovery.h>

#include <stddef.h>

size_t headers_discovery_size(void);

size_t headers_discovery_size(void)
{
	return sizeof(nvmefs_discovery_cb);
}
