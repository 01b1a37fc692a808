/* <nvmefs/identify.h> must compile first and alone, and survive a second include. */
#include <nvmefs/identify.h>
#include <nvmefs/identify.h>

size_t headers_identify_size(void);

size_t headers_identify_size(void)
{
	return NVMEFS_IDENTIFY_DATA_SIZE + NVMEFS_NS_LIST_LEN * sizeof(uint32_t);
}
