/* <nvmefs/mr.h> must compile first and alone, and survive a second include. */
#include <nvmefs/mr.h>
#include <nvmefs/mr.h>

size_t headers_mr_size(void);

size_t headers_mr_size(void)
{
	return sizeof(&nvmefs_mr_reg) + sizeof(uint64_t);
}
