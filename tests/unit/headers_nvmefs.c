/* <nvmefs/nvmefs.h> must compile first and alone, and survive a second include. */
#include <nvmefs/nvmefs.h>
#include <nvmefs/nvmefs.h>

int headers_nvmefs_version(void);

int headers_nvmefs_version(void)
{
	return NVMEFS_VERSION_NUMBER;
}
